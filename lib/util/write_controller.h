/*
** write_controller.h -- the write controller: what slows down or stops
** the writers of one or several databases when their flushes and
** compactions fall behind (ravel.h's ravel_write_controller).
**
** Each attached database is a member that registers its requirement --
** none, delay at a rate, or stop -- with the cause (write_stall.c decides
** it from the database's state).  The controller enforces the most
** restrictive requirement of all its members on every member's writers:
** a stop if any member stops, else the lowest rate of those that delay.
** A database alone has a controller of its own; several can share one
** (Speedb's "global delayed write").
**
** A write group's leader asks once per group (rv_wc_admit),
** charging the group's bytes.  Without a requirement this is one atomic
** load.  Otherwise the leaders of every member queue in arrival order
** (first come, first served, whichever database they write to): the head
** of the queue waits while writes are stopped, then, while they are
** delayed, takes the next slot of a token bucket at the enforced rate --
** the slot's length is its bytes divided by the rate -- and waits for
** the slot's start outside the lock.  So the accepted bytes per second of
** all members together never exceed the rate, and a stop's release lets
** the queue go in its order.
**
** Locks: the controller's mutex is taken inside db->mu.lock (write_stall.c
** registers requirements under it), never the other way round.
*/
#ifndef RAVEL_WRITE_CONTROLLER_H
#define RAVEL_WRITE_CONTROLLER_H

#include "ravel_int.h"
#include "util/stop.h"

#include <pthread.h>

enum rv_wc_state { RV_WC_NONE = 0, RV_WC_DELAY = 1, RV_WC_STOP = 2 };

/* Why a database asks for a delay or a stop.  RV_CAUSE_OTHER_DB: the
** requirement enforced came from another database on the same
** controller. */
enum rv_stall_cause {
    RV_CAUSE_NONE = 0,
    RV_CAUSE_MEMTABLES,      /* max_write_buffer_number */
    RV_CAUSE_LEVEL0,         /* level0_*_writes_trigger */
    RV_CAUSE_PENDING_BYTES,  /* *_pending_compaction_bytes_limit */
    RV_CAUSE_OTHER_DB,
    RV_CAUSE_COUNT
};

/* "memtables", "level0", "pending-compaction-bytes", "other-database",
** "none". */
RAVEL_PRIVATE const char *rv_stall_cause_name(enum rv_stall_cause c);

/* One attached database (embedded in ravel_db). */
struct rv_wc_member {
    struct ravel_write_controller *wc;
    /* under wc->mu */
    enum rv_wc_state state;
    enum rv_stall_cause cause;
    uint64_t rate;
    struct rv_wc_member *prev, *next;
};

/* What one admission did, for the member's statistics. */
struct rv_wc_wait {
    enum rv_wc_state state;         /* the worst it waited for */
    enum rv_stall_cause cause;      /* of that wait, RV_CAUSE_OTHER_DB if
                                    ** another member's requirement */
    uint64_t micros;                /* time it waited */
};

/* A new controller whose delays start at RATE bytes/s, one reference
** held by the caller. */
RAVEL_PRIVATE int rv_write_controller_new(uint64_t rate,
                                          struct ravel_write_controller **out);
RAVEL_PRIVATE void rv_write_controller_ref(struct ravel_write_controller *wc);
/* NULL is a no-op. */
RAVEL_PRIVATE void rv_write_controller_unref(
    struct ravel_write_controller *wc);

/* The rate delays start at (and never exceed). */
RAVEL_PRIVATE uint64_t rv_write_controller_max_rate(
    const struct ravel_write_controller *wc);

/* Attaches M (requirement none) to WC, taking a reference; detaching
** withdraws M's requirement (releasing the writers it held) and drops it. */
RAVEL_PRIVATE void rv_wc_attach(struct ravel_write_controller *wc,
                                struct rv_wc_member *m);
RAVEL_PRIVATE void rv_wc_detach(struct rv_wc_member *m);

/* Registers M's requirement: STATE, CAUSE, and with RV_WC_DELAY the RATE
** it asks for (bytes/s, at least 1).  Returns 1 if this changed what M
** asked before (state or cause), else 0. */
RAVEL_PRIVATE int rv_wc_set(struct rv_wc_member *m, enum rv_wc_state state,
                            enum rv_stall_cause cause, uint64_t rate);

/* What the controller enforces now on every member, and at which rate
** (0 unless delayed). */
RAVEL_PRIVATE enum rv_wc_state rv_wc_enforced(struct rv_wc_member *m,
                                              uint64_t *rate);

/* Called, with the controller's lock held, each time an admission is
** about to wait (the caller's writers that must not wait are failed
** then); it may take only leaf locks. */
typedef void (*rv_wc_wait_fn)(void *ctx);

/* Admits a write group of BYTES bytes of member M: returns RAVEL_OK once
** it may go; RAVEL_BUSY at once (nothing waited) if it would have to wait
** and NO_SLOWDOWN is set; RAVEL_READONLY if STOP records a failure while
** it waits (the caller reports the stop).  *W says what it waited for.
** BEFORE_WAIT (may be NULL) is called with CTX before every wait. */
RAVEL_PRIVATE int rv_wc_admit(struct rv_wc_member *m, uint64_t bytes,
                              int no_slowdown, struct rv_stop *stop,
                              struct rv_wc_wait *w, rv_wc_wait_fn before_wait,
                              void *ctx);

/* What is enforced now, without the lock (a hint: it may change at
** once). */
RAVEL_PRIVATE enum rv_wc_state rv_wc_enforced_hint(
    const struct rv_wc_member *m);

#endif /* RAVEL_WRITE_CONTROLLER_H */
