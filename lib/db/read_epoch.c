/*
** read_epoch.c -- epoch-based reclamation of versions (read_epoch.h).
*/
#include "db/read_epoch.h"
#include "db/version.h"

#include <pthread.h>
#include <stdint.h>

void rv_read_epoch_init(struct rv_read_epoch *e)
{
    atomic_init(&e->epoch, 0);
    for (int i = 0; i < RV_EPOCH_STRIPES; i++) {
        atomic_init(&e->stripes[i].count[0], 0);
        atomic_init(&e->stripes[i].count[1], 0);
    }
    e->retired_cur = e->retired_prev = NULL;
}

/* The calling thread's stripe: a hash of its thread id, fixed for the
** thread's life. */
static unsigned read_epoch_stripe(void)
{
    static _Thread_local unsigned stripe_plus_one;
    if (!stripe_plus_one) {
        uint64_t id = (uint64_t)(uintptr_t)pthread_self();
        id ^= id >> 33;
        id *= 0xff51afd7ed558ccdull;
        id ^= id >> 33;
        stripe_plus_one = (unsigned)(id % RV_EPOCH_STRIPES) + 1;
    }
    return stripe_plus_one - 1;
}

unsigned rv_read_epoch_enter(struct rv_read_epoch *e)
{
    unsigned stripe = read_epoch_stripe();
    unsigned parity = (unsigned)(atomic_load(&e->epoch) & 1);
    atomic_fetch_add(&e->stripes[stripe].count[parity], 1);
    return stripe << 1 | parity;
}

void rv_read_epoch_exit(struct rv_read_epoch *e, unsigned token)
{
    atomic_fetch_sub(&e->stripes[token >> 1].count[token & 1], 1);
}

static int read_epoch_drained(struct rv_read_epoch *e, unsigned parity)
{
    int64_t n = 0;
    for (int i = 0; i < RV_EPOCH_STRIPES; i++)
        n += atomic_load(&e->stripes[i].count[parity]);
    return n == 0;
}

struct rv_version *rv_read_epoch_advance_locked(struct rv_read_epoch *e)
{
    uint64_t epoch = atomic_load(&e->epoch);
    if (!read_epoch_drained(e, (unsigned)((epoch + 1) & 1)))
        return NULL;
    struct rv_version *free_now = e->retired_prev;
    e->retired_prev = e->retired_cur;
    e->retired_cur = NULL;
    atomic_store(&e->epoch, epoch + 1);
    return free_now;
}

struct rv_version *rv_read_epoch_retire_locked(struct rv_read_epoch *e,
                                               struct rv_version *v)
{
    v->retired_next = e->retired_cur;
    e->retired_cur = v;
    return rv_read_epoch_advance_locked(e);
}

int rv_read_epoch_pending_locked(const struct rv_read_epoch *e)
{
    return e->retired_cur || e->retired_prev;
}

void rv_read_epoch_release(struct rv_version *v)
{
    while (v) {
        struct rv_version *next = v->retired_next;
        rv_version_unref(v);
        v = next;
    }
}

void rv_read_epoch_drain(struct rv_read_epoch *e)
{
    rv_read_epoch_release(e->retired_prev);
    rv_read_epoch_release(e->retired_cur);
    e->retired_prev = e->retired_cur = NULL;
}
