/*
** table_builder.h -- writes a table file (table_format.h) from entries
** given in internal-key order.
**
** Sequential and buffered: blocks are appended to a write buffer that goes
** out in large writes.  rv_table_builder_finish writes the filter, the
** properties, the index and the footer, then fdatasyncs the file: a table
** is durable before anyone names it (the manifest, a later piece of this
** issue).  A builder that fails keeps failing with the first error.
*/
#ifndef RAVEL_TABLE_BUILDER_H
#define RAVEL_TABLE_BUILDER_H

#include "ravel_int.h"
#include "table/table_format.h"
#include "base/options.h"

struct rv_table_options {
    size_t block_size;          /* target data block size (4K) */
    int block_restart_interval; /* 16 */
    int bloom_bits_per_key;     /* 10; 0: no filter */
    enum rv_compression compression; /* of data blocks (none); one this
                                     ** build lacks is RAVEL_INVALID */
    uint64_t session_id;        /* ravel.session_id: the writing handle's
                                ** (random.h); 0: the builder draws one */
};

typedef struct rv_table_builder rv_table_builder;

/* A builder writing to FD (opened for writing, empty) for the table whose
** file number is FILE_NUMBER; PATH is used in messages. */
RAVEL_PRIVATE int rv_table_builder_new(int fd, const char *path,
                                       uint64_t file_number,
                                       const struct rv_table_options *o,
                                       rv_table_builder **out);

/* Adds an entry; IKEY (an internal key, base/dbformat.h) must sort after the
** previous one. */
RAVEL_PRIVATE int rv_table_builder_add(rv_table_builder *tb, const char *ikey,
                                       size_t klen, const char *val,
                                       size_t vlen);

/* Adds the range tombstone [BEGIN, END) @ SEQ (user keys, copied; BEGIN
** before END, else RAVEL_INVALID), in any order and overlapping as they
** may: the finish fragments them into the file's range-deletion block
** (table_format.h, version 2) and widens the file's bounds to cover them.
** The caller truncates a tombstone to the file it writes. */
RAVEL_PRIVATE int rv_table_builder_add_range_del(rv_table_builder *tb,
                                                 const char *begin,
                                                 size_t blen,
                                                 const char *end,
                                                 size_t elen, uint64_t seq);

/* Bytes written so far plus the current block: to cut files at a size. */
RAVEL_PRIVATE uint64_t rv_table_builder_size(const rv_table_builder *tb);

/* Writes the rest of the file and fdatasyncs it; fills *PROPS and
** *FILE_SIZE.  The fd is left open (the caller closes it). */
RAVEL_PRIVATE int rv_table_builder_finish(rv_table_builder *tb,
                                          struct rv_table_props *props,
                                          uint64_t *file_size);

/* After a successful finish: the file's smallest and largest internal
** keys, widened over its range tombstones (the largest then RocksDB's
** sentinel); owned by TB.  Both NULL for a file with nothing. */
RAVEL_PRIVATE void rv_table_builder_bounds(const rv_table_builder *tb,
                                           const char **smallest,
                                           size_t *slen,
                                           const char **largest,
                                           size_t *llen);

/* Frees the builder (after finish, or to give up). */
RAVEL_PRIVATE void rv_table_builder_free(rv_table_builder *tb);

#endif /* RAVEL_TABLE_BUILDER_H */
