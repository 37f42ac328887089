/*
** range_del_flush.h -- what a flush writes for a memtable's range
** deletions: table files hold no range tombstones, so each tombstone
** [begin, end) @ T becomes a point deletion (key, T) for every user key of
** the range that the version's data holds with an older sequence (the
** memtable itself, the others, every table file).  Those deletions are
** merged with the memtable's entries into one iterator in internal-key
** order, which the flush writes as it writes a memtable's (keep.h decides
** what survives, snapshots included).
*/
#ifndef RAVEL_RANGE_DEL_FLUSH_H
#define RAVEL_RANGE_DEL_FLUSH_H

#include "ravel_int.h"
#include "iter/iterator.h"
#include "memtable/memtable.h"

struct rv_version;

/* An iterator over MEM's entries and the point deletions its range
** deletions stand for, against the data of V (referenced by the caller
** while the iterator lives, as is MEM).  Without range deletions, MEM's
** own iterator.  NULL with *RC set on failure. */
RAVEL_PRIVATE struct rv_iter *rv_range_del_flush_iter(ravel_db *db,
                                                      struct rv_version *v,
                                                      rv_memtable *mem,
                                                      int *rc);

/* Step 4 of range tombstones in table files (docs/design.md), not yet
** on: whether this flush writes MEM's range tombstones into its table
** files' range-deletion blocks and MEM's own
** entries alone (range_del_out.h cuts them at the files' bounds),
** instead of rv_range_del_flush_iter's point deletions.
** Only a test build can turn it on (rv_range_del_flush_test_tables):
** repair and ingest do not know a table's tombstones yet (steps 3), so a
** database that holds them must not meet either.  In every other build it
** is always 0. */
#ifdef RAVEL_TEST_HOOKS
RAVEL_PRIVATE int rv_range_del_flush_to_tables(void);
RAVEL_PRIVATE void rv_range_del_flush_test_tables(int on);
#else
static inline int rv_range_del_flush_to_tables(void)
{
    return 0;
}
#endif

#endif /* RAVEL_RANGE_DEL_FLUSH_H */
