/*
** visibility.h -- which versions of a key a read sees: the one home of
** that rule.
**
** A read (ravel_get, an iterator) carries a read view taken when it
** starts (from a snapshot, or from last_visible_seq).  Today writes become
** visible in sequence order, so a view is one sequence number and a
** version is visible if and only if its sequence is <= it.  Every reader
** that decides whether a version is visible (the memtable lookup, the user
** iterator) asks rv_read_view_sees, and seeks no higher than
** rv_read_view_max_seq.  An ordering mode that makes writes visible out of
** sequence order (WritePrepared: visible once committed, by a commit
** table) changes this struct and these functions, not the readers.
**
** Owns: the visibility rule.  Does not own: how a view is taken
** (db_read.c) or the order of versions (dbformat.h).
*/
#ifndef RAVEL_VISIBILITY_H
#define RAVEL_VISIBILITY_H

#include "ravel_int.h"

struct rv_read_view {
    uint64_t seq; /* every version with sequence <= seq is visible */
};

/* The view of a read at sequence SEQ (a snapshot's, or the latest
** visible one). */
static inline struct rv_read_view rv_read_view_at(uint64_t seq)
{
    struct rv_read_view v = {seq};
    return v;
}

/* 1 if a version written with sequence SEQ is visible to V. */
static inline int rv_read_view_sees(const struct rv_read_view *v,
                                    uint64_t seq)
{
    return seq <= v->seq;
}

/* No version above this sequence is visible to V: readers seek to a key's
** versions from here (newest first) and still ask rv_read_view_sees of
** each one they meet. */
static inline uint64_t rv_read_view_max_seq(const struct rv_read_view *v)
{
    return v->seq;
}

#endif /* RAVEL_VISIBILITY_H */
