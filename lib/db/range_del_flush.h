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

#endif /* RAVEL_RANGE_DEL_FLUSH_H */
