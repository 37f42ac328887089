/*
** range_del.h -- a memtable's range deletions (RV_TYPE_RANGE_DELETE),
** kept beside its skiplist the way RocksDB keeps a separate range-del
** memtable: a list of tombstones [begin, end) @ sequence, and for readers
** a fragmented form (base/range_frags.h; RocksDB's
** FragmentedRangeTombstoneList, Pebble's keyspan fragments): the key space cut at every begin and end into
** disjoint, sorted fragments, each with the sequences of the tombstones
** covering it, newest first, so that "which tombstones cover key K" is one
** binary search.
**
** Concurrency: adds take the list's mutex; readers take a fragmented
** snapshot without it once it is built (an atomic pointer, rebuilt under
** the mutex when an add made it stale).  A fragmented snapshot lives as
** long as its memtable (replaced ones are kept until the memtable is
** freed: a reader may still be searching one), so a reader holding a
** reference on the memtable may use it without one of its own.  What the
** replaced ones take counts in the memtable's memory usage
** (rv_range_dels_bytes): reads interleaved with many range deletes fill
** the memtable sooner, and its flush frees them.
*/
#ifndef RAVEL_RANGE_DEL_H
#define RAVEL_RANGE_DEL_H

#include "ravel_int.h"
#include "base/range_frags.h"

struct rv_range_dels;

/* A new empty list; NULL on allocation failure. */
RAVEL_PRIVATE struct rv_range_dels *rv_range_dels_new(void);
RAVEL_PRIVATE void rv_range_dels_free(struct rv_range_dels *r);

/* Adds [BEGIN, END) @ SEQ (copies the keys).  RAVEL_OK or RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_dels_add(struct rv_range_dels *r, uint64_t seq,
                                    const void *begin, size_t blen,
                                    const void *end, size_t elen);

/* Bytes the tombstones take (keys and list; relaxed, an estimate that
** only grows). */
RAVEL_PRIVATE size_t rv_range_dels_bytes(const struct rv_range_dels *r);

/* Tombstones added so far (acquire: a reader that sees N sees the first
** N tombstones). */
RAVEL_PRIVATE int rv_range_dels_count(const struct rv_range_dels *r);

/* The fragmented snapshot of every tombstone added so far (built if
** stale); NULL if there is none or on allocation failure (*NOMEM set). */
RAVEL_PRIVATE const struct rv_range_frags *
rv_range_dels_frags(struct rv_range_dels *r, int *nomem);

/* The tombstones in the order added (for a flush: the memtable no longer
** changes); *N receives their number. */
RAVEL_PRIVATE const struct rv_range_tomb *
rv_range_dels_list(struct rv_range_dels *r, int *n);

/* 1 if a tombstone of R overlaps the user keys [SMALLEST, LARGEST]. */
RAVEL_PRIVATE int rv_range_dels_overlap(struct rv_range_dels *r,
                                        const void *smallest, size_t slen,
                                        const void *largest, size_t llen);

#endif /* RAVEL_RANGE_DEL_H */
