/*
** commit_table.h -- write_prepared's prepare -> commit map (RocksDB's
** CommitCache).
**
** With write_policy=write_prepared, a batch is inserted at its prepare
** sequences and becomes visible at a commit sequence given later by the
** commit queue (db_write.c).  The commit table records, for each prepared
** sequence p, its commit sequence c: an array of 2^bits words indexed by
** p modulo its size, one 64-bit word per entry, so that writing and
** reading an entry are single atomic stores and loads, no lock.
**
** Entry layout (64 bits, 0 = empty):
**     bits 63 .. 8+bits   p >> bits   (p's low bits are the index)
**     bits 8+bits-1 .. 0  c - p       (>= 1: a commit follows its prepare)
** Sequences are below 2^56 (dbformat.h), so p >> bits takes 56 - bits
** bits and the delta keeps 8 + bits.  The write path keeps the delta
** small: no group spans more than half the table, and no sequence is
** prepared 2^bits or more beyond the commit watermark (every prepare at or
** below it is committed), so a batch's commit follows its prepare by less
** than twice the table's size.  (A single batch larger than that is
** prepared alone, once nothing is in flight.)  A delta that does not fit
** anyway is stored as all ones: "committed, at a sequence not recorded",
** which a lookup reports as evicted.
**
** An entry is overwritten (evicted) by the commit of p + k * 2^bits, never
** by an older sequence's.  The same bound makes every evicted entry lie at
** or below the commit watermark, so no read that holds a commit watermark
** view needs an evicted entry (visibility.h); only a read that stalled
** while a whole table of sequences went by meets one, and starts again.
**
** Owns: the array and its counters.  Does not own: when entries are added
** (the commit queue) or what a lookup means for a read (visibility.c).
*/
#ifndef RAVEL_COMMIT_TABLE_H
#define RAVEL_COMMIT_TABLE_H

#include "ravel_int.h"

enum rv_commit_lookup {
    RV_COMMIT_ABSENT = 0,   /* P is not committed (its slot holds nothing
                            ** or an older sequence's entry) */
    RV_COMMIT_FOUND = 1,    /* P committed at *COMMIT */
    RV_COMMIT_EVICTED = 2,  /* P's entry was overwritten by a newer one:
                            ** P committed, at a sequence no longer known */
};

struct rv_commit_table {
    _Atomic uint64_t *slots;
    unsigned bits;
    uint64_t mask;
    /* Written by the commit-queue leader alone (one at a time), read by
    ** ravel.stats: relaxed. */
    _Atomic uint64_t evictions;       /* entries overwritten */
    _Atomic uint64_t max_evicted_seq; /* the newest prepare evicted */
};

/* A table of SIZE entries (a power of two, >= 16). */
RAVEL_PRIVATE int rv_commit_table_init(struct rv_commit_table *t,
                                       uint64_t size);
RAVEL_PRIVATE void rv_commit_table_destroy(struct rv_commit_table *t);

/* Records that prepared sequence PREPARE committed at COMMIT (> PREPARE),
** unless its slot holds a newer sequence's entry.  Commit-queue leader
** only. */
RAVEL_PRIVATE void rv_commit_table_add(struct rv_commit_table *t,
                                       uint64_t prepare, uint64_t commit);

/* What the table knows of PREPARE; *COMMIT set when FOUND. */
RAVEL_PRIVATE enum rv_commit_lookup
rv_commit_table_lookup(const struct rv_commit_table *t, uint64_t prepare,
                       uint64_t *commit);

#endif /* RAVEL_COMMIT_TABLE_H */
