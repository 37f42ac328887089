/*
** read_epoch.h -- how readers use the current version without a lock:
** epoch-based reclamation of versions.
**
** A reader enters the epoch (one atomic increment on a counter of its own
** stripe, so readers on different threads touch different cache lines),
** loads db->read.current, uses it -- a whole point lookup, or just long enough
** to take a reference for an iterator -- and exits (one decrement).  A
** version replaced by a newer one is not dropped at once but retired: it
** stays alive until every reader that could have loaded it has exited.
**
** Two epochs alternate, E and E-1 (parities).  A reader enters with the
** parity of the epoch it read.  Retiring happens under db->mu.lock; each time,
** if no reader of the previous parity remains, the versions retired two
** epochs ago are released and the epoch advances.  Why that suffices: a
** reader loads the current version after it has entered, so what it holds
** was retired in its entry epoch or later; an advance past the epoch after
** that waits for its parity to drain.  Every access to the epoch, the
** counters and db->read.current is seq_cst: the reader's increment-then-load
** and the retirer's store-then-check are the two sides of Dekker's
** pattern.  Nothing a reader does waits for a writer, and nothing a
** writer does waits for a reader (a version held by a slow reader is
** released by a later retire, or by a background thread's nudge).
*/
#ifndef RAVEL_READ_EPOCH_H
#define RAVEL_READ_EPOCH_H

#include "ravel_int.h"

#define RV_EPOCH_STRIPES 16

struct rv_version;

struct rv_read_epoch {
    _Atomic uint64_t epoch;
    struct {
        _Atomic int64_t count[2];
        char pad[64 - 2 * sizeof(int64_t)];
    } stripes[RV_EPOCH_STRIPES];
    /* Retired versions, under db->mu.lock: since the last advance (cur) and
    ** during the epoch before (prev), chained through retired_next. */
    struct rv_version *retired_cur, *retired_prev;
};

RAVEL_PRIVATE void rv_read_epoch_init(struct rv_read_epoch *e);

/* Enters: returns the token to exit with. */
RAVEL_PRIVATE unsigned rv_read_epoch_enter(struct rv_read_epoch *e);
RAVEL_PRIVATE void rv_read_epoch_exit(struct rv_read_epoch *e,
                                      unsigned token);

/* Under db->mu.lock: V (whose reference the caller gives up) has just been
** replaced as current.  Returns the versions now safe to release, chained
** through retired_next; the caller unrefs them (outside the lock if it
** likes). */
RAVEL_PRIVATE struct rv_version *rv_read_epoch_retire_locked(
    struct rv_read_epoch *e, struct rv_version *v);

/* Under db->mu.lock: tries to advance without retiring anything; returns what
** became safe to release, as above. */
RAVEL_PRIVATE struct rv_version *rv_read_epoch_advance_locked(
    struct rv_read_epoch *e);

/* Unrefs every version of LIST (chained through retired_next). */
RAVEL_PRIVATE void rv_read_epoch_release(struct rv_version *list);

/* 1 if retired versions wait for readers. */
RAVEL_PRIVATE int rv_read_epoch_pending_locked(const struct rv_read_epoch *e);

/* Releases every retired version (close: no reader is left). */
RAVEL_PRIVATE void rv_read_epoch_drain(struct rv_read_epoch *e);

#endif /* RAVEL_READ_EPOCH_H */
