/*
** table.h -- reading a table file (table_format.h): opening it (footer,
** index, filter, properties and range deletions read and checked once,
** and kept in memory
** while the table is open), asking its filter, point lookups, and
** iterating over it (table_iter.c).
**
** Data blocks go through the block cache when one is given: keyed by an id
** the table takes from the cache at open and the block's offset, charged
** by their decoded size, read, verified and decompressed once per cache
** fill; readers pin a block's handle while they use it.  Without a cache,
** each use reads the block.
**
** Every block read from the file is checked against its checksum (unless
** the read's flags say otherwise: RocksDB's verify_checksums, the
** database's option or a read's) and then decoded with bounds checks;
** damage gives RAVEL_CORRUPT naming the file and the byte offset, never
** wrong data.  A block read without its checksum checked is put in the
** cache only when the table's own reads do not check either, so that a
** database that verifies never serves a block nobody verified.  A table is immutable and may be read by any
** number of threads at once; each iterator is used by one thread.
*/
#ifndef RAVEL_TABLE_H
#define RAVEL_TABLE_H

#include "ravel_int.h"
#include "iter/iterator.h"
#include "table/table_format.h"
#include "util/cache.h"

typedef struct rv_table rv_table;

struct rv_table_read_options {
    int verify_checksums;
    struct rv_cache *block_cache; /* NULL: blocks are read for each use */
    /* Map the file and serve its uncompressed data blocks in place
    ** (allow_mmap_reads, table.c); a file shorter than FILE_SIZE is then
    ** refused at open, and a map that fails falls back to pread. */
    int allow_mmap_reads;
};

/* Opens the table of FILE_SIZE bytes on FD (taking ownership of FD:
** rv_table_close closes it, and so does a failed open), whose file number
** is FILE_NUMBER; PATH names it in messages.  The table holds a reference
** on RO's block cache while it is open. */
RAVEL_PRIVATE int rv_table_open(int fd, const char *path,
                                uint64_t file_number, uint64_t file_size,
                                const struct rv_table_read_options *ro,
                                rv_table **out);
/* The ravel.session_id of the table of FILE_SIZE bytes on FD (not taken:
** the caller closes it), numbered FILE_NUMBER, into *ID: 0 if the file
** has none (written before the property existed).  Reads only the footer
** and the properties block, both verified; RAVEL_CORRUPT if either is
** damaged.  PATH names the file in messages. */
RAVEL_PRIVATE int rv_table_file_session_id(int fd, const char *path,
                                           uint64_t file_number,
                                           uint64_t file_size, uint64_t *id);
/* Closes the table, removing its blocks from the block cache (its id is
** never used again, so they could only take room).  NULL is a no-op. */
RAVEL_PRIVATE void rv_table_close(rv_table *t);

RAVEL_PRIVATE const struct rv_table_props *rv_table_props(const rv_table *t);

/* The smallest and largest internal keys in the table. */
RAVEL_PRIVATE const char *rv_table_smallest_key(const rv_table *t,
                                                size_t *len);
RAVEL_PRIVATE const char *rv_table_largest_key(const rv_table *t,
                                               size_t *len);

/* The table's range tombstones, fragmented (memtable/range_del.h; read and
** checked once at open, kept while the table is open): NULL when the file
** has none (every file of format version 1).  A get asks
** rv_range_frags_seq, one binary search. */
struct rv_range_frags;
RAVEL_PRIVATE const struct rv_range_frags *
rv_table_range_frags(const rv_table *t);

/* 0 if the filter says the table holds no entry for USER_KEY, 1 if it may
** (always 1 for a table without a filter). */
RAVEL_PRIVATE int rv_table_may_contain(const rv_table *t, const void *user_key,
                                       size_t klen);

/* Calls FN for the entries of T in internal-key order, beginning at the
** first whose internal key is >= IKEY, for as long as FN returns 1 (0
** stops); also stops at the table's end.  Blocks are read as FLAGS
** (RV_TABLE_READ_*, below) say.  Does not ask the filter
** (rv_table_may_contain does).  No heap allocation when the blocks are in
** the cache (stack iterators), one block buffer otherwise.  RAVEL_OK, or
** RAVEL_CORRUPT/RAVEL_IOERR/RAVEL_NOMEM naming file and offset.  The key
** and value given to FN are valid only during the call. */
typedef int (*rv_table_get_fn)(void *ctx, const char *ikey, size_t klen,
                               const char *val, size_t vlen);
RAVEL_PRIVATE int rv_table_get(rv_table *t, int flags, const char *ikey,
                               size_t klen, rv_table_get_fn fn, void *ctx);

/* An iterator over every entry in internal-key order, reading its blocks
** as FLAGS say.  The table must stay open while it exists.  NULL on
** allocation failure. */
RAVEL_PRIVATE struct rv_iter *rv_table_iter_new(rv_table *t, int flags);

/* Reads every block of the table from the file, past the block cache, and
** checks it (whatever verify_checksums says): RAVEL_OK, or the first
** damage found. */
RAVEL_PRIVATE int rv_table_verify(rv_table *t);

/* ------------------------------------------- inside the table reader
** (table.c reads blocks, table_iter.c walks them) */

/* A data block in memory, decoded (decompressed, rv_block_check passed):
** the value of a block cache entry, or owned by one reader. */
struct rv_table_block {
    size_t len;
    char data[];
};

/* A data block held by a reader: pinned in the cache, or owned. */
struct rv_table_block_ref {
    const char *data;               /* the block's contents; NULL: none */
    size_t len;
    struct rv_table_block *block;   /* NULL: none held (or DATA is in the
                                    ** table's map, which outlives it) */
    rv_cache_handle *handle;        /* NULL: BLOCK is the reader's own */
};

/* How a block is read (flags of rv_table_load_block, rv_table_get and
** rv_table_iter_new). */
#define RV_TABLE_READ_VERIFY   0x1 /* check the checksum */
#define RV_TABLE_READ_NO_CACHE 0x2 /* from the file, the cache untouched */
#define RV_TABLE_READ_NO_FILL  0x4 /* a cached block is used, but a block
                                   ** read from the file is not put in the
                                   ** cache (RocksDB's fill_cache=false) */

/* The flags of T's ordinary reads (from its read options: VERIFY or 0). */
RAVEL_PRIVATE int rv_table_read_flags(const rv_table *t);

/* The index block (checked at open), and *H, where it is in the file. */
RAVEL_PRIVATE const char *rv_table_index(const rv_table *t, size_t *len,
                                         struct rv_table_handle *h);

/* Positions INDEX, a cursor over T's index block, at the first entry
** whose internal key is >= TARGET, as rv_block_cursor_seek does, through
** the slice array built at open (index_search.h). */
struct rv_block_cursor;
RAVEL_PRIVATE void rv_table_index_seek(const rv_table *t,
                                       struct rv_block_cursor *index,
                                       const char *target, size_t tlen);

/* The path given at open, for messages. */
RAVEL_PRIVATE const char *rv_table_path(const rv_table *t);

/* Decodes the block handle of the index entry VAL (VLEN bytes) into *H:
** RAVEL_CORRUPT naming the file if it is not one. */
RAVEL_PRIVATE int rv_table_index_handle(const rv_table *t, const char *val,
                                        size_t vlen,
                                        struct rv_table_handle *h);

/* Gets the data block at H into *REF (released by rv_table_release_block):
** from the cache, or read, checked and decoded (and put in the cache,
** unless FLAGS says RV_TABLE_READ_NO_CACHE or RV_TABLE_READ_NO_FILL, or
** it was read without RV_TABLE_READ_VERIFY from a table whose ordinary
** reads verify). */
RAVEL_PRIVATE int rv_table_load_block(rv_table *t,
                                      const struct rv_table_handle *h,
                                      int flags,
                                      struct rv_table_block_ref *ref);
RAVEL_PRIVATE void rv_table_release_block(rv_table *t,
                                          struct rv_table_block_ref *ref);

/* Prefixes the calling thread's message (the complaint of a block cursor)
** with the file and the block: "PATH: WHAT block at byte offset N: ...".
** Returns RC (the cursor's status: RAVEL_CORRUPT, or RAVEL_NOMEM). */
RAVEL_PRIVATE int rv_table_block_error(const rv_table *t, const char *what,
                                       const struct rv_table_handle *h,
                                       int rc);

#endif /* RAVEL_TABLE_H */
