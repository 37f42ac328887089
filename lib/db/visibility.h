/*
** visibility.h -- which versions of a key a read sees: the one home of
** that rule.
**
** A read (ravel_get, an iterator, a snapshot) carries a read view taken
** when it starts.  Every reader that decides whether a version is visible
** (the memtable lookup, the table lookup, the user iterator, a flush
** deciding what to keep) asks rv_read_view_sees, and seeks no higher than
** rv_read_view_max_seq.
**
** In the ordered, unordered and in-order-publication modes writes become
** visible in sequence order: a view is one sequence number (ALL_BELOW ==
** SEQ) and a version is visible if and only if its sequence is <= it.
**
** With write_prepared (docs/ordering.md) a version carries its batch's
** prepare sequence and becomes visible when the batch commits, in commit
** order.  A view then has three parts:
**   SEQ        the commit sequence it reads at (last_published_seq): no
**              version prepared above it is visible;
**   ALL_BELOW  the commit watermark when the view was taken: every batch
**              prepared at or below it had committed, at or below SEQ;
**   between the two, either the commit table is asked (a get: TABLE set,
**   and STALE set if it met an evicted entry -- the get starts again), or
**   the view carries the sequences hidden from it, captured when it was
**   taken (a snapshot, an iterator: HIDDEN), so that it never changes
**   whatever the commit table forgets later.
** Versions of one key are ordered by prepare sequence: a read returns the
** newest visible one.
**
** Owns: the visibility rule and taking a view.  Does not own: the order
** of versions (dbformat.h), the commit table (commit_table.h).
*/
#ifndef RAVEL_VISIBILITY_H
#define RAVEL_VISIBILITY_H

#include "ravel_int.h"

struct rv_commit_table;

/* Sequences LO..HI (inclusive). */
struct rv_seq_range {
    uint64_t lo, hi;
};

struct rv_read_view {
    uint64_t seq;       /* nothing prepared above it is visible */
    uint64_t all_below; /* everything at or below it is visible */
    const struct rv_commit_table *table; /* ask it between the two */
    const struct rv_seq_range *hidden;   /* or: hidden between the two,
                                         ** ascending, disjoint */
    int n_hidden;
    int *stale;         /* with TABLE: set to 1 when an entry needed was
                        ** evicted (the read must start again) */
};

/* The view of a read at sequence SEQ where writes are visible in
** sequence order. */
static inline struct rv_read_view rv_read_view_at(uint64_t seq)
{
    struct rv_read_view v = {seq, seq, NULL, NULL, 0, NULL};
    return v;
}

/* write_prepared: whether V sees sequence SEQ, ALL_BELOW < SEQ <= V->seq. */
RAVEL_PRIVATE int rv_read_view_sees_between(const struct rv_read_view *v,
                                            uint64_t seq);

/* 1 if a version written with sequence SEQ is visible to V. */
static inline int rv_read_view_sees(const struct rv_read_view *v,
                                    uint64_t seq)
{
    if (seq <= v->all_below)
        return 1;
    if (seq > v->seq)
        return 0;
    return rv_read_view_sees_between(v, seq);
}

/* No version above this sequence is visible to V: readers seek to a key's
** versions from here (newest first) and still ask rv_read_view_sees of
** each one they meet. */
static inline uint64_t rv_read_view_max_seq(const struct rv_read_view *v)
{
    return v->seq;
}

/* The view a get takes now (after pinning its version): STALE receives
** the commit table's "start again" (write_prepared). */
RAVEL_PRIVATE struct rv_read_view rv_db_current_view(ravel_db *db,
                                                     int *stale);

/* A view that never changes, for a snapshot or an iterator: with
** write_prepared the sequences hidden from it are captured into *HIDDEN
** (malloc'd, freed by the caller; NULL when none).  RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_db_capture_view(ravel_db *db, struct rv_read_view *v,
                                     struct rv_seq_range **hidden);

#endif /* RAVEL_VISIBILITY_H */
