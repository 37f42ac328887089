/*
** read_view.h -- a read view and the visibility rule: which versions of a
** key a read sees (the one home of that rule; db/visibility.h says how a
** view is taken from a database, and why the rule is what it is).
**
** Every reader that decides whether a version is visible (the memtable
** lookup, the table lookup, the user iterator, a flush deciding what to
** keep) asks rv_read_view_sees, and seeks no higher than
** rv_read_view_max_seq.  In base/ because the memtable and the table
** reader apply the rule without knowing what a database is.
*/
#ifndef RAVEL_READ_VIEW_H
#define RAVEL_READ_VIEW_H

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

#endif /* RAVEL_READ_VIEW_H */
