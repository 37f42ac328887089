/*
** table.h -- reading a table file (table_format.h): opening it (footer,
** index, filter and properties read and checked once, and kept in memory
** while the table is open), asking its filter, and iterating over it.
**
** Every block read is checked against its checksum (unless
** verify_checksums is off, as RocksDB's option) and then decoded with
** bounds checks; damage gives RAVEL_CORRUPT naming the file and the byte
** offset, never wrong data.  A table is immutable and may be read by any
** number of threads at once; each iterator is used by one thread.
*/
#ifndef RAVEL_TABLE_H
#define RAVEL_TABLE_H

#include "ravel_int.h"
#include "iter/iterator.h"
#include "table/table_format.h"

typedef struct rv_table rv_table;

struct rv_cache;
struct rv_table_read_options {
    int verify_checksums;
    struct rv_cache *block_cache; /* NULL: blocks are read for each use */
};

typedef int (*rv_table_get_fn)(void *ctx, const char *ikey, size_t klen,
                               const char *val, size_t vlen);
RAVEL_PRIVATE int rv_table_get(rv_table *t, const char *ikey, size_t klen,
                               rv_table_get_fn fn, void *ctx);

/* Opens the table of FILE_SIZE bytes on FD (taking ownership of FD:
** rv_table_close closes it), whose file number is FILE_NUMBER; PATH names
** it in messages. */
RAVEL_PRIVATE int rv_table_open(int fd, const char *path,
                                uint64_t file_number, uint64_t file_size,
                                const struct rv_table_read_options *ro,
                                rv_table **out);
RAVEL_PRIVATE void rv_table_close(rv_table *t);

RAVEL_PRIVATE const struct rv_table_props *rv_table_props(const rv_table *t);

/* The smallest and largest internal keys in the table. */
RAVEL_PRIVATE const char *rv_table_smallest_key(const rv_table *t,
                                                size_t *len);
RAVEL_PRIVATE const char *rv_table_largest_key(const rv_table *t,
                                               size_t *len);

/* 0 if the filter says the table holds no entry for USER_KEY, 1 if it may
** (always 1 for a table without a filter). */
RAVEL_PRIVATE int rv_table_may_contain(const rv_table *t, const void *user_key,
                                       size_t klen);

/* An iterator over every entry in internal-key order.  The table must stay
** open while it exists.  NULL on allocation failure. */
RAVEL_PRIVATE struct rv_iter *rv_table_iter_new(rv_table *t);

/* Reads and checks every block of the table (whatever verify_checksums
** says): RAVEL_OK, or the first damage found. */
RAVEL_PRIVATE int rv_table_verify(rv_table *t);

#endif /* RAVEL_TABLE_H */
