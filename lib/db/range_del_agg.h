/*
** range_del_agg.h -- what range deletions hide from a read: the newest
** tombstone covering a key that the read's view sees, over every memtable
** of a version (RocksDB's RangeDelAggregator).  A version entry (a put)
** of sequence S is deleted when such a tombstone has a sequence above S.
** Table files hold no range deletions (a flush turns them into point
** deletions: range_del_flush.h), so the memtables are every source.
**
** A get asks the version directly (rv_range_del_seq); an iterator takes
** an aggregator when it is made (rv_range_del_agg_new): the memtables'
** fragment snapshots of that moment, which hold every tombstone its view
** can see (a tombstone added later has a sequence above the view, or is
** hidden from it, as any later write is).
*/
#ifndef RAVEL_RANGE_DEL_AGG_H
#define RAVEL_RANGE_DEL_AGG_H

#include "ravel_int.h"
#include "base/read_view.h"

struct rv_version;
struct rv_range_frags;

struct rv_range_del_agg {
    int n;
    const struct rv_range_frags **frags; /* owned by the memtables of the
                                         ** version the reader holds */
};

/* The newest sequence of a range deletion in V's memtables covering KEY
** that VIEW sees; 0 if none.  RAVEL_NOMEM in *RC when a fragment snapshot
** could not be built (*RC untouched otherwise). */
RAVEL_PRIVATE uint64_t rv_range_del_seq(struct rv_version *v,
                                        const void *key, size_t klen,
                                        const struct rv_read_view *view,
                                        int *rc);

/* An aggregator of V's range deletions as they are now, in *OUT: NULL
** (and RAVEL_OK) when V has none.  RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_agg_new(struct rv_version *v,
                                       struct rv_range_del_agg **out);
RAVEL_PRIVATE void rv_range_del_agg_free(struct rv_range_del_agg *a);

/* As rv_range_del_seq, over A. */
RAVEL_PRIVATE uint64_t rv_range_del_agg_seq(const struct rv_range_del_agg *a,
                                            const void *key, size_t klen,
                                            const struct rv_read_view *view);

#endif /* RAVEL_RANGE_DEL_AGG_H */
