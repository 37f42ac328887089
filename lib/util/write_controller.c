/*
** write_controller.c -- the write controller (write_controller.h): the
** members' requirements, the one enforced, and the queue of leaders it
** admits in arrival order through a token bucket.
*/
#include "util/write_controller.h"
#include "util/error.h"
#include "util/mutex.h"
#include "util/clock.h"

#include <stdlib.h>
#include <time.h>

/* A leader waiting for admission, on its own stack, in wc's queue. */
struct wc_waiter {
    struct wc_waiter *next;
};

struct ravel_write_controller {
    _Atomic int refs;
    uint64_t max_rate;          /* bytes/s delays start at */
    rv_mutex mu;
    pthread_cond_t cv;          /* the queue's head changed, or what is
                                ** enforced did */
    struct rv_wc_member *members;
    /* What is enforced, recomputed at every change (mu); the state is
    ** also an atomic, so admission without a requirement takes no lock. */
    _Atomic int enforced;
    uint64_t rate;              /* with RV_WC_DELAY: the lowest asked */
    struct rv_wc_member *culprit; /* the member whose requirement it is */
    uint64_t next_slot;         /* monotonic micros: the token bucket's
                                ** next free slot */
    struct wc_waiter *head, *tail; /* leaders waiting, in arrival order */
};

const char *rv_stall_cause_name(enum rv_stall_cause c)
{
    switch (c) {
    case RV_CAUSE_MEMTABLES:
        return "memtables";
    case RV_CAUSE_LEVEL0:
        return "level0";
    case RV_CAUSE_PENDING_BYTES:
        return "pending-compaction-bytes";
    case RV_CAUSE_OTHER_DB:
        return "other-database";
    case RV_CAUSE_NONE:
    case RV_CAUSE_COUNT:
        break;
    }
    return "none";
}

int rv_write_controller_new(uint64_t rate, struct ravel_write_controller **out)
{
    struct ravel_write_controller *wc = calloc(1, sizeof *wc);
    if (!wc)
        return rv_error(RAVEL_NOMEM, "out of memory for a write controller");
    atomic_init(&wc->refs, 1);
    atomic_init(&wc->enforced, RV_WC_NONE);
    wc->max_rate = rate;
    rv_mutex_init(&wc->mu);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wc->cv, &attr);
    pthread_condattr_destroy(&attr);
    *out = wc;
    return RAVEL_OK;
}

int ravel_write_controller_new(uint64_t delayed_write_rate,
                               ravel_write_controller **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_write_controller_new: out is "
                        "NULL");
    *out = NULL;
    if (delayed_write_rate < 1024 || delayed_write_rate > (1ull << 40))
        return rv_error(RAVEL_INVALID, "ravel_write_controller_new: "
                        "delayed_write_rate %llu is out of range (1024 .. "
                        "2^40 bytes per second)",
                        (unsigned long long)delayed_write_rate);
    return rv_write_controller_new(delayed_write_rate, out);
}

void rv_write_controller_ref(struct ravel_write_controller *wc)
{
    atomic_fetch_add_explicit(&wc->refs, 1, memory_order_relaxed);
}

void rv_write_controller_unref(struct ravel_write_controller *wc)
{
    if (!wc)
        return;
    /* acq_rel: the last owner sees every use before freeing */
    if (atomic_fetch_sub_explicit(&wc->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_cond_destroy(&wc->cv);
    rv_mutex_destroy(&wc->mu);
    free(wc);
}

void ravel_write_controller_free(ravel_write_controller *wc)
{
    rv_write_controller_unref(wc);
}

uint64_t rv_write_controller_max_rate(const struct ravel_write_controller *wc)
{
    return wc->max_rate;
}

/* Recomputes what is enforced from the members (mu held); wakes the
** waiters if it was relaxed. */
static void wc_recompute_locked(struct ravel_write_controller *wc)
    RV_REQUIRES(wc->mu);
static void wc_recompute_locked(struct ravel_write_controller *wc)
{
    enum rv_wc_state state = RV_WC_NONE;
    uint64_t rate = 0;
    struct rv_wc_member *culprit = NULL;
    for (struct rv_wc_member *m = wc->members; m; m = m->next) {
        if (m->state == RV_WC_STOP && state != RV_WC_STOP) {
            state = RV_WC_STOP;
            culprit = m;
        } else if (m->state == RV_WC_DELAY && state != RV_WC_STOP &&
                   (state == RV_WC_NONE || m->rate < rate)) {
            state = RV_WC_DELAY;
            rate = m->rate;
            culprit = m;
        }
    }
    enum rv_wc_state was = (enum rv_wc_state)atomic_load_explicit(
        &wc->enforced, memory_order_relaxed);
    if (state == RV_WC_DELAY && was == RV_WC_NONE)
        wc->next_slot = rv_now_micros(); /* no credit from before */
    wc->rate = rate;
    wc->culprit = culprit;
    /* relaxed: the fast path only decides whether to take the lock */
    atomic_store_explicit(&wc->enforced, state, memory_order_relaxed);
    pthread_cond_broadcast(&wc->cv);
}

void rv_wc_attach(struct ravel_write_controller *wc, struct rv_wc_member *m)
{
    rv_write_controller_ref(wc);
    rv_mutex_lock(&wc->mu);
    m->wc = wc;
    m->state = RV_WC_NONE;
    m->cause = RV_CAUSE_NONE;
    m->rate = 0;
    m->prev = NULL;
    m->next = wc->members;
    if (wc->members)
        wc->members->prev = m;
    wc->members = m;
    rv_mutex_unlock(&wc->mu);
}

void rv_wc_detach(struct rv_wc_member *m)
{
    struct ravel_write_controller *wc = m->wc;
    if (!wc)
        return;
    rv_mutex_lock(&wc->mu);
    if (m->prev)
        m->prev->next = m->next;
    else
        wc->members = m->next;
    if (m->next)
        m->next->prev = m->prev;
    wc_recompute_locked(wc);
    rv_mutex_unlock(&wc->mu);
    m->wc = NULL;
    rv_write_controller_unref(wc);
}

int rv_wc_set(struct rv_wc_member *m, enum rv_wc_state state,
              enum rv_stall_cause cause, uint64_t rate)
{
    struct ravel_write_controller *wc = m->wc;
    rv_mutex_lock(&wc->mu);
    int changed = m->state != state || m->cause != cause;
    uint64_t asked = state == RV_WC_DELAY ? (rate ? rate : 1) : 0;
    if (changed || m->rate != asked) {
        m->state = state;
        m->cause = state == RV_WC_NONE ? RV_CAUSE_NONE : cause;
        m->rate = asked;
        wc_recompute_locked(wc);
    }
    rv_mutex_unlock(&wc->mu);
    return changed;
}

enum rv_wc_state rv_wc_enforced(struct rv_wc_member *m, uint64_t *rate)
{
    struct ravel_write_controller *wc = m->wc;
    rv_mutex_lock(&wc->mu);
    enum rv_wc_state s = (enum rv_wc_state)atomic_load_explicit(
        &wc->enforced, memory_order_relaxed);
    *rate = s == RV_WC_DELAY ? wc->rate : 0;
    rv_mutex_unlock(&wc->mu);
    return s;
}

/* The cause M's statistics charge a wait for the enforced requirement. */
static enum rv_stall_cause wc_cause_for(const struct ravel_write_controller
                                        *wc, const struct rv_wc_member *m)
{
    if (!wc->culprit)
        return RV_CAUSE_NONE;
    return wc->culprit == m ? wc->culprit->cause : RV_CAUSE_OTHER_DB;
}

static void wc_note(struct rv_wc_wait *w, enum rv_wc_state s,
                    enum rv_stall_cause cause)
{
    if (s > w->state) {
        w->state = s;
        w->cause = cause;
    }
}

/* Waits on the controller's condition for at most 100 ms (a failure
** recorded in a database's stop does not signal it). */
static void wc_wait_locked(struct ravel_write_controller *wc)
    RV_REQUIRES(wc->mu);
static void wc_wait_locked(struct ravel_write_controller *wc)
{
    rv_cond_wait_ms(&wc->cv, &wc->mu, CLOCK_MONOTONIC, 100);
}

static void wc_dequeue_locked(struct ravel_write_controller *wc,
                              struct wc_waiter *me)
    RV_REQUIRES(wc->mu);
static void wc_dequeue_locked(struct ravel_write_controller *wc,
                              struct wc_waiter *me)
{
    struct wc_waiter **p = &wc->head;
    struct wc_waiter *prev = NULL;
    while (*p && *p != me) {
        prev = *p;
        p = &(*p)->next;
    }
    if (*p)
        *p = me->next;
    if (wc->tail == me)
        wc->tail = prev;
    pthread_cond_broadcast(&wc->cv); /* a new head, maybe */
}

/* Sleeps until monotonic time UNTIL (micros), or until what is enforced
** is relaxed to none. */
static void wc_sleep_until(struct ravel_write_controller *wc, uint64_t until)
{
    struct timespec ts = {(time_t)(until / 1000000u),
                          (long)(until % 1000000u) * 1000};
    rv_mutex_lock(&wc->mu);
    while (rv_now_micros() < until &&
           atomic_load_explicit(&wc->enforced, memory_order_relaxed) !=
               RV_WC_NONE)
        rv_cond_timedwait(&wc->cv, &wc->mu, &ts);
    rv_mutex_unlock(&wc->mu);
}

enum rv_wc_state rv_wc_enforced_hint(const struct rv_wc_member *m)
{
    /* relaxed: a hint; admission decides under the lock */
    return (enum rv_wc_state)atomic_load_explicit(&m->wc->enforced,
                                                  memory_order_relaxed);
}

int rv_wc_admit(struct rv_wc_member *m, uint64_t bytes, int no_slowdown,
                struct rv_stop *stop, struct rv_wc_wait *w,
                rv_wc_wait_fn before_wait, void *ctx)
{
    struct ravel_write_controller *wc = m->wc;
    w->state = RV_WC_NONE;
    w->cause = RV_CAUSE_NONE;
    w->micros = 0;
    /* relaxed: a requirement registered just now is seen by the next
    ** group; the controller's lock orders the rest */
    if (atomic_load_explicit(&wc->enforced, memory_order_relaxed) ==
        RV_WC_NONE)
        return RAVEL_OK;

    uint64_t start = rv_now_micros(), slot = 0;
    int rc = RAVEL_OK;
    struct wc_waiter me = {NULL};
    rv_mutex_lock(&wc->mu);
    if (wc->tail)
        wc->tail->next = &me;
    else
        wc->head = &me;
    wc->tail = &me;
    for (;;) {
        enum rv_wc_state s = (enum rv_wc_state)atomic_load_explicit(
            &wc->enforced, memory_order_relaxed);
        if (rv_stop_code(stop)) {
            rc = RAVEL_READONLY;
            break;
        }
        if (s == RV_WC_NONE)
            break;
        if (no_slowdown && (s == RV_WC_STOP || wc->head != &me ||
                            wc->next_slot > rv_now_micros())) {
            /* it would have to wait */
            wc_note(w, s, wc_cause_for(wc, m));
            rc = RAVEL_BUSY;
            break;
        }
        if (s == RV_WC_STOP || wc->head != &me) {
            if (s == RV_WC_STOP)
                wc_note(w, s, wc_cause_for(wc, m));
            if (before_wait)
                before_wait(ctx);
            wc_wait_locked(wc);
            continue;
        }
        /* delayed, at the head: take the next slot */
        uint64_t now = rv_now_micros();
        slot = wc->next_slot > now ? wc->next_slot : now;
        wc->next_slot = slot + bytes * 1000000u / wc->rate;
        if (slot > now) {
            wc_note(w, s, wc_cause_for(wc, m));
            if (before_wait)
                before_wait(ctx);
        }
        break;
    }
    wc_dequeue_locked(wc, &me);
    rv_mutex_unlock(&wc->mu);
    if (rc == RAVEL_OK && slot > rv_now_micros())
        wc_sleep_until(wc, slot);
    if (w->state != RV_WC_NONE)
        w->micros = rv_now_micros() - start;
    return rc;
}
