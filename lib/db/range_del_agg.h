/*
** range_del_agg.h -- what range deletions hide from a read: the newest
** tombstone covering a key that the read's view sees (RocksDB's
** RangeDelAggregator).  A version entry (a put) of sequence S is deleted
** when such a tombstone has a sequence above S, wherever either is: a
** tombstone of a newer memtable or file hides older versions anywhere
** below it, and one in a file hides only the versions of that file with
** smaller sequences (the LSM order puts a key's newer versions above its
** older ones, so a tombstone found below a version is older than it).
**
** A get asks the memtables directly (rv_range_del_seq) and each table
** file it visits through rv_table_cache_get (db_read.c keeps the
** maximum).  An iterator takes an aggregator when it is made
** (rv_range_del_agg_new): the memtables' fragment snapshots of that moment,
** which hold every tombstone its view can see (a tombstone added later
** has a sequence above the view, or is hidden from it, as any later write
** is); then each table file's fragments as the iterator opens the file
** (rv_range_del_agg_add_file: level 0's files at once, a deeper level's
** as its level iterator reaches them, RocksDB's LevelIterator), kept
** until the iterator is freed.  Keeping them is always right (a tombstone
** is a fact about every older version of its keys) and enough: a file
** whose key range (widened over its tombstones) holds the key an iterator
** is at has been opened by its level's iterator by then, in either
** direction.
*/
#ifndef RAVEL_RANGE_DEL_AGG_H
#define RAVEL_RANGE_DEL_AGG_H

#include "ravel_int.h"
#include "base/read_view.h"

#include "db/table_cache.h"

struct rv_version;
struct rv_range_frags;

/* One iterator's: its thread alone reads and writes it. */
struct rv_range_del_agg {
    int n, cap;
    const struct rv_range_frags **frags; /* owned by the memtables of the
                                         ** version the reader holds, or
                                         ** by open tables */
    rv_cache_handle **hold;  /* per fragment list: the open table holding
                             ** it when not pinned in its file, or NULL */
    rv_table_cache *tc;      /* where HOLD's handles go back */
};

/* The newest sequence of a range deletion in V's memtables covering KEY
** that VIEW sees; 0 if none.  RAVEL_NOMEM in *RC when a fragment snapshot
** could not be built (*RC untouched otherwise). */
RAVEL_PRIVATE uint64_t rv_range_del_seq(struct rv_version *v,
                                        const void *key, size_t klen,
                                        const struct rv_read_view *view,
                                        int *rc);

/* An aggregator of V's memtables' range deletions as they are now, in
** *OUT, to which table files of TC add theirs.  RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_agg_new(struct rv_version *v,
                                       rv_table_cache *tc,
                                       struct rv_range_del_agg **out);

/* Adds the range deletions of table file F (referenced by the version the
** reader holds), if it has any and they are not in A yet: opens its table
** if needed.  An error of the open, or RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_agg_add_file(struct rv_range_del_agg *a,
                                            struct rv_file *f);
RAVEL_PRIVATE void rv_range_del_agg_free(struct rv_range_del_agg *a);

/* As rv_range_del_seq, over A. */
RAVEL_PRIVATE uint64_t rv_range_del_agg_seq(const struct rv_range_del_agg *a,
                                            const void *key, size_t klen,
                                            const struct rv_read_view *view);

#endif /* RAVEL_RANGE_DEL_AGG_H */
