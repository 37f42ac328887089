/*
** table_format.h -- the layout of a table file (a sorted, immutable file of
** internal keys and values), shared by its writer (table_builder.c) and
** reader (table.c).  docs/formats.md describes the same bytes.
**
**   table   := block(data)*  block(filter)  [block(range_del)]
**              block(properties)  block(index)  footer
**   block   := contents  type:u8  checksum:fixed64         (on disk)
**   footer  := index:handle  filter:handle  properties:handle
**              file_number:fixed64  version:fixed32  zero:fixed32
**              checksum:fixed64  magic:fixed64              (80 bytes)
**   handle  := offset:fixed64  size:fixed64   (size: contents only)
**
** Block contents are blocks as block_builder.h lays them out: data blocks
** map internal keys to values; the index block maps, for each data block,
** its last internal key to its handle; the properties block maps property
** names (bytewise order) to values.  ravel.session_id is a random value
** drawn by the handle that wrote the file (each ravel_open, each
** ravel_sst_writer, each repair): with the file number it tells apart
** files of different databases (backup.c names shared files by it);
** files written before it existed lack it, and readers accept that.  The filter block is a bloom filter
** (bloom.h) over the user keys of the file; its handle has size 0 when
** the file has none.
**
** type is the block's compression: 0 = none, 1 = lz4, 2 = zstd (enum
** rv_compression, base/options.h).  Only data blocks are ever compressed,
** and only when that saves at least 1/8 of the block; compress.h lays
** out the contents of a compressed block.  A block's checksum is
** XXH3_64bits_withSeed over its contents as stored (compressed, if so),
** seeded with file_number ^ (type << 56): a block copied from another
** file, or with its type byte damaged, never verifies.  The footer's
** checksum is XXH3_64bits_withSeed of its first 64 bytes, seeded with the
** file number.  The file number is the one in the file's name, or 0 for
** an external table (sst_writer.h) that an ingest linked in as it is.  Values
** marked on disk here: DO NOT CHANGE THEM.
**
** Version 2 (RocksDB's range_del meta block): a file holding range
** tombstones has a range-deletion block and says version 2; its
** properties name the block (ravel.range_del_block: a handle).  The block
** is laid out as block_builder.h lays out any block, its entries the
** file's tombstones fragmented (sorted, disjoint fragments, each once per
** sequence covering it, newest first): key = begin user key + tag (that
** sequence, RV_TYPE_RANGE_DELETE), value = the fragment's end user key
** (exclusive).  A file without range tombstones is written as before,
** byte for byte, with version 1; both versions are read.  A reader older
** than version 2 refuses a version-2 file rather than ignore its
** tombstones.  The bounds (ravel.smallest_key, ravel.largest_key) cover
** the tombstones too: the smallest is at most the first fragment's begin
** at its newest sequence, the largest at least the last fragment's end at
** RV_MAX_SEQUENCE, type RV_TYPE_RANGE_DELETE (RocksDB's sentinel: sorts
** before every real version of that user key, so a file whose last
** tombstone ends at K is not searched for K).
*/
#ifndef RAVEL_TABLE_FORMAT_H
#define RAVEL_TABLE_FORMAT_H

#include "ravel_int.h"

#include <xxhash.h>

#define RV_TABLE_MAGIC 0x4c4241544c564152ull /* "RAVLTABL" little-endian */
#define RV_TABLE_VERSION 2         /* the newest version read */
#define RV_TABLE_VERSION_PLAIN 1   /* a file without range tombstones */
#define RV_TABLE_FOOTER_SIZE 80
#define RV_TABLE_BLOCK_TRAILER 9
#define RV_TABLE_NO_COMPRESSION 0

struct rv_table_handle {
    uint64_t offset;
    uint64_t size;
};

#define RV_TABLE_HANDLE_SIZE 16

/* What the properties block records (names are "ravel.<field>"). */
struct rv_table_props {
    uint64_t entries;        /* puts and deletes */
    uint64_t deletions;
    uint64_t smallest_seq, largest_seq;
    uint64_t data_size;      /* bytes of data blocks, trailers included */
    uint64_t index_size, filter_size;
    uint64_t data_blocks;
    uint64_t creation_time;  /* seconds since the epoch */
    uint64_t bloom_bits_per_key;
    uint64_t session_id;     /* random, of the handle that wrote the file
                             ** (ravel.session_id); 0: a file written
                             ** before the property existed */
};

/* The checksum of a block's CONTENTS (LEN bytes) of compression TYPE in
** file FILE_NUMBER. */
static inline uint64_t rv_table_block_checksum(const char *contents,
                                               size_t len, int type,
                                               uint64_t file_number)
{
    return XXH3_64bits_withSeed(contents, len,
                                file_number ^ ((uint64_t)(type & 0xff) << 56));
}

#endif /* RAVEL_TABLE_FORMAT_H */
