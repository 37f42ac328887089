/*
** range_frags.h -- range tombstones fragmented for readers (RocksDB's
** FragmentedRangeTombstoneList, Pebble's keyspan fragments): the key
** space cut at every begin and end into disjoint, sorted fragments, each
** with the sequences of the tombstones covering it, newest first, so that
** "which tombstones cover key K" is one binary search.  Shared by the
** memtables' range deletions (memtable/range_del.h) and the table files'
** range-deletion blocks (table/range_del_block.h).  A snapshot is
** immutable once built: any number of threads may search it.
*/
#ifndef RAVEL_RANGE_FRAGS_H
#define RAVEL_RANGE_FRAGS_H

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
    struct rv_range_frags *older; /* replaced snapshots: a memtable's
                                  ** (its list's mutex); NULL in a
                                  ** table's */
};

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

/* The fragment of F covering KEY (its sequences: every tombstone over
** KEY), or NULL. */
RAVEL_PRIVATE const struct rv_range_frag *
rv_range_frags_find(const struct rv_range_frags *f, const void *key,
                    size_t klen);

#endif /* RAVEL_RANGE_FRAGS_H */
