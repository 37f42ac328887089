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
** Owns: taking a view of a database.  Does not own: the rule itself and
** the view's layout (base/read_view.h, below everything that reads), the
** order of versions (base/dbformat.h), the commit table
** (base/commit_table.h).
*/
#ifndef RAVEL_VISIBILITY_H
#define RAVEL_VISIBILITY_H

#include "ravel_int.h"

#include "base/read_view.h"

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
