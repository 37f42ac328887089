/*
** table_cache.h -- the open table files of a database: a bounded cache
** (max_open_files) of rv_table objects, keyed by file number, through
** which every read of a table file goes.
**
** Opening a table reads and checks its footer, index, filter and
** properties once; those stay in memory while it is open (the index and
** filter blocks are "pinned", RocksDB's cache_index_and_filter_blocks=false).
** A table evicted while a reader uses it stays open until the reader
** releases it.  Data blocks go through the block cache the tables are
** opened with (table.h).
*/
#ifndef RAVEL_TABLE_CACHE_H
#define RAVEL_TABLE_CACHE_H

#include "ravel_int.h"
#include "iter/iterator.h"
#include "db/version.h"
#include "table/table.h"
#include "util/cache.h"
#include "base/read_view.h"

struct rv_range_frags;

typedef struct rv_table_cache rv_table_cache;

/* A cache of at most MAX_OPEN tables of directory DIR, read with RO (its
** block cache, if any, gains a reference). */
RAVEL_PRIVATE int rv_table_cache_new(const char *dir, int max_open,
                                     const struct rv_table_read_options *ro,
                                     rv_table_cache **out);
RAVEL_PRIVATE void rv_table_cache_free(rv_table_cache *tc);

/* The open table of file F (opening it if needed, from the descriptor a
** reader holds when it has one: version.h): *H pins it until
** rv_table_cache_release. */
RAVEL_PRIVATE int rv_table_cache_find(rv_table_cache *tc,
                                      const struct rv_file *f,
                                      rv_cache_handle **h);
RAVEL_PRIVATE rv_table *rv_table_cache_table(rv_cache_handle *h);
RAVEL_PRIVATE void rv_table_cache_release(rv_table_cache *tc,
                                          rv_cache_handle *h);

/* Closes table NUMBER once no reader uses it (its file is being deleted). */
RAVEL_PRIVATE void rv_table_cache_evict(rv_table_cache *tc, uint64_t number);

/* Releases the open table pinned in F (the file is going away). */
RAVEL_PRIVATE void rv_table_cache_unpin(rv_table_cache *tc, struct rv_file *f);

/* The RV_TABLE_READ_* flags of the database's ordinary reads (its
** verify_checksums): what a read gives when its read options say
** nothing else. */
RAVEL_PRIVATE int rv_table_cache_read_flags(const rv_table_cache *tc);

/* An iterator over file F, which must stay referenced (by a version)
** while the iterator exists, reading blocks as FLAGS (RV_TABLE_READ_*)
** say.  NULL with the error in *RC on failure. */
RAVEL_PRIVATE struct rv_iter *rv_table_cache_iter(rv_table_cache *tc,
                                                  struct rv_file *f,
                                                  int flags, int *rc);

/* Point lookup in file F (referenced by the caller): first, when
** RANGE_SEQ is not NULL, raises *RANGE_SEQ to the newest sequence of a
** range tombstone of F over the user key of IKEY that VIEW sees (a filter
** says nothing about tombstones, so before it); then, if its filter may
** hold the user key, calls rv_table_get(FLAGS, IKEY, FN, CTX).
** *FILTERED is set to 1 when the filter ruled the table out.  Once a
** file's table is open, it is pinned in the file (while fewer than
** max_open_files are), so a lookup takes no lock. */
RAVEL_PRIVATE int rv_table_cache_get(rv_table_cache *tc, struct rv_file *f,
                                     int flags, const char *ikey,
                                     size_t klen, rv_table_get_fn fn,
                                     void *ctx, int *filtered,
                                     const struct rv_read_view *view,
                                     uint64_t *range_seq);

/* The range tombstones of file F (rv_table_range_frags) in *FRAGS, NULL
** when it has none.  When they are not NULL and the table is not pinned
** in F, *H holds the table open (the fragments live in it) until
** rv_table_cache_release; otherwise *H is NULL. */
RAVEL_PRIVATE int rv_table_cache_range_frags(rv_table_cache *tc,
                                             struct rv_file *f,
                                             const struct rv_range_frags
                                             **frags,
                                             rv_cache_handle **h);

#endif /* RAVEL_TABLE_CACHE_H */
