/*
** range_del.h -- a memtable's range deletions (RV_TYPE_RANGE_DELETE),
** kept beside its skiplist the way RocksDB keeps a separate range-del
** memtable: a list of tombstones [begin, end) @ sequence, and for readers
** a fragmented form (RocksDB's FragmentedRangeTombstoneList, Pebble's
** keyspan fragments): the key space cut at every begin and end into
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
#include "base/read_view.h"

/* One tombstone: every key in [begin, end) deleted at SEQ. */
struct rv_range_tomb {
    const char *begin, *end;
    size_t blen, elen;
    uint64_t seq;
};

/* One fragment [begin, end) and the sequences of the tombstones covering
** it, descending. */
struct rv_range_frag {
    const char *begin, *end;
    size_t blen, elen;
    const uint64_t *seqs;
    int n_seqs;
};

/* A fragmented snapshot: fragments sorted by begin, disjoint. */
struct rv_range_frags {
    int n;                       /* fragments */
    int n_tombs;                 /* tombstones it was built from */
    struct rv_range_frag *frag;
    /* For the search: every begin and end starts with the same LCP
    ** bytes (PREFIX, in the first fragment's begin); PFX[i] is the 8
    ** bytes of fragment i's begin after them, big-endian, zero-padded:
    ** ordered as the begins are, and contiguous, so a search touches a
    ** few cache lines instead of a key per step. */
    size_t lcp;
    char *lcp_bytes;             /* a copy of those bytes */
    uint64_t *pfx;
    uint64_t *epfx;              /* the same of each fragment's end */
    uint64_t *seqs;              /* every fragment's sequences */
    struct rv_range_frags *older; /* replaced snapshots (the mutex) */
};

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

/* Builds the fragments of TOMBS (N of them) into a new malloc'd snapshot
** (its keys point into TOMBS); NULL on allocation failure. */
RAVEL_PRIVATE struct rv_range_frags *
rv_range_frags_build(const struct rv_range_tomb *tombs, int n);
RAVEL_PRIVATE void rv_range_frags_free(struct rv_range_frags *f);

/* The newest sequence of a tombstone in F covering KEY that VIEW sees (0:
** none). */
RAVEL_PRIVATE uint64_t rv_range_frags_seq(const struct rv_range_frags *f,
                                          const void *key, size_t klen,
                                          const struct rv_read_view *view);

#endif /* RAVEL_RANGE_DEL_H */
