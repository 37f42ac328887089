/*
** fault.c -- test hooks that make the next WAL write or sync, or memtable
** allocation, fail.
**
** Compiled only with RAVEL_TEST_HOOKS (fault.h).  Owns: one countdown per
** fault point, one state per pause point.  Does not own: what a failure means
** (the WAL writer reports the injected errno exactly as a kernel error; the
** memtable reports an allocation failure).
**
** Each point is a signed countdown: -1 disarmed, N >= 0 "let N more
** operations succeed, then fail one".  A fault fires once and disarms
** itself; concurrent callers decrement with compare-and-swap, so exactly
** one of them sees the failure.  The disarmed path is a single relaxed
** load, so production writes pay nothing measurable for the hook.
*/
#include "util/fault.h"

#ifdef RAVEL_TEST_HOOKS

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

struct fault_point {
    /* Written by rv_fault_arm (any thread) and by rv_fault_check when it
    ** counts down or fires; atomic, see the orders below. */
    _Atomic long long countdown;
    /* The errno to inject; written before countdown is armed (release),
    ** read after an acquire load that saw it armed. */
    _Atomic int err;
};

static struct fault_point fault_points[RV_FAULT_POINTS] = {
    [RV_FAULT_WAL_WRITE] = {-1, 0},
    [RV_FAULT_WAL_SYNC] = {-1, 0},
    [RV_FAULT_MEMTABLE_ALLOC] = {-1, 0},
    [RV_FAULT_TABLE_WRITE] = {-1, 0},
    [RV_FAULT_TABLE_SYNC] = {-1, 0},
    [RV_FAULT_MANIFEST_WRITE] = {-1, 0},
    [RV_FAULT_MANIFEST_SYNC] = {-1, 0},
    [RV_FAULT_COMPACTION] = {-1, 0},
    [RV_FAULT_REPAIR_MOVE] = {-1, 0},
};

void rv_fault_arm(enum rv_fault_point point, int skip, int err)
{
    if ((unsigned)point >= RV_FAULT_POINTS)
        return;
    struct fault_point *f = &fault_points[point];
    if (skip < 0) {
        /* Relaxed: disarming publishes nothing. */
        atomic_store_explicit(&f->countdown, -1, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&f->err, err, memory_order_relaxed);
    /* Release: a checker that sees the countdown also sees err. */
    atomic_store_explicit(&f->countdown, skip, memory_order_release);
}

int rv_fault_check(enum rv_fault_point point)
{
    struct fault_point *f = &fault_points[point];
    /* Relaxed: the common, disarmed case needs no ordering. */
    long long v = atomic_load_explicit(&f->countdown, memory_order_relaxed);
    if (v < 0)
        return 0;
    /* Acquire on success pairs with the release in rv_fault_arm. */
    while (v >= 0) {
        long long next = v > 0 ? v - 1 : -1;
        if (atomic_compare_exchange_weak_explicit(&f->countdown, &v, next,
                                                  memory_order_acquire,
                                                  memory_order_relaxed)) {
            if (v > 0)
                return 0;
            int err = atomic_load_explicit(&f->err, memory_order_relaxed);
            /* ERR is a positive errno; 0 (or a stray negative) is EIO. */
            return err > 0 ? -err : -EIO;
        }
    }
    return 0;
}

/* Pause points.  A test-only rendezvous, so the waiting thread simply
** naps until released: no futex, no condition variable. */
enum { PAUSE_OFF, PAUSE_ARMED, PAUSE_WAITING, PAUSE_RELEASED };

/* Written by the test (arm, release) and by the thread at the point
** (ARMED -> WAITING, RELEASED -> OFF); seq_cst: rare, and simplest. */
static _Atomic int pause_states[RV_PAUSE_POINTS];

/* The key a point is armed for (rv_pause_arm_key); length -1: any.
** Written before the state is armed (seq_cst), read after seeing it. */
#define PAUSE_KEY_MAX 64
static char pause_keys[RV_PAUSE_POINTS][PAUSE_KEY_MAX];
static _Atomic int pause_key_lens[RV_PAUSE_POINTS];

void rv_pause_arm(enum rv_pause_point point)
{
    if ((unsigned)point < RV_PAUSE_POINTS) {
        atomic_store(&pause_key_lens[point], -1);
        atomic_store(&pause_states[point], PAUSE_ARMED);
    }
}

void rv_pause_arm_key(enum rv_pause_point point, const void *key,
                      size_t klen)
{
    if ((unsigned)point >= RV_PAUSE_POINTS || klen > PAUSE_KEY_MAX)
        return;
    memcpy(pause_keys[point], key, klen);
    atomic_store(&pause_key_lens[point], (int)klen);
    atomic_store(&pause_states[point], PAUSE_ARMED);
}

int rv_pause_waiting(enum rv_pause_point point)
{
    return (unsigned)point < RV_PAUSE_POINTS &&
           atomic_load(&pause_states[point]) == PAUSE_WAITING;
}

void rv_pause_release(enum rv_pause_point point)
{
    if ((unsigned)point >= RV_PAUSE_POINTS)
        return;
    int armed = PAUSE_ARMED;
    if (!atomic_compare_exchange_strong(&pause_states[point], &armed,
                                        PAUSE_OFF))
        atomic_store(&pause_states[point], PAUSE_RELEASED);
}

void rv_pause_here_key(enum rv_pause_point point, const void *key,
                       size_t klen)
{
    if (atomic_load_explicit(&pause_states[point], memory_order_relaxed) !=
        PAUSE_ARMED)
        return;
    int want = atomic_load(&pause_key_lens[point]);
    if (want >= 0 && ((size_t)want != klen ||
                      memcmp(pause_keys[point], key, klen) != 0))
        return;
    rv_pause_here(point);
}

static _Atomic unsigned insert_delay_every, insert_delay_micros;
static _Atomic unsigned insert_delay_count;

void rv_test_insert_delay(unsigned every, unsigned micros)
{
    atomic_store(&insert_delay_micros, micros);
    atomic_store(&insert_delay_every, every);
}

void rv_test_insert_delay_here(void)
{
    unsigned every = atomic_load_explicit(&insert_delay_every,
                                          memory_order_relaxed);
    if (every == 0 || atomic_fetch_add(&insert_delay_count, 1) % every)
        return;
    unsigned us = atomic_load(&insert_delay_micros);
    struct timespec t = {.tv_sec = us / 1000000,
                         .tv_nsec = (long)(us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* The held write completion (rv_test_wal_hold): armed, then held with
** what to call to deliver it.  Under fault_hold_mu. */
static pthread_mutex_t fault_hold_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int armed;
    int held;
    void (*deliver)(void *ctx, int res);
    void *ctx;
    int res;
} fault_hold;

void rv_test_wal_hold_arm(void)
{
    pthread_mutex_lock(&fault_hold_mu);
    fault_hold.armed = 1;
    pthread_mutex_unlock(&fault_hold_mu);
}

int rv_test_wal_hold_waiting(void)
{
    pthread_mutex_lock(&fault_hold_mu);
    int held = fault_hold.held;
    pthread_mutex_unlock(&fault_hold_mu);
    return held;
}

void rv_test_wal_hold_release(int res)
{
    pthread_mutex_lock(&fault_hold_mu);
    int held = fault_hold.held;
    void (*deliver)(void *, int) = fault_hold.deliver;
    void *ctx = fault_hold.ctx;
    int real = fault_hold.res;
    fault_hold.armed = fault_hold.held = 0;
    pthread_mutex_unlock(&fault_hold_mu);
    if (held)
        deliver(ctx, res ? res : real);
}

int rv_test_wal_hold(void (*deliver)(void *ctx, int res), void *ctx, int res)
{
    pthread_mutex_lock(&fault_hold_mu);
    int take = fault_hold.armed && !fault_hold.held;
    if (take) {
        fault_hold.armed = 0;
        fault_hold.held = 1;
        fault_hold.deliver = deliver;
        fault_hold.ctx = ctx;
        fault_hold.res = res;
    }
    pthread_mutex_unlock(&fault_hold_mu);
    return take;
}

static _Atomic int fault_direct_fdatasync;

void rv_test_wal_direct_fdatasync(int on)
{
    atomic_store_explicit(&fault_direct_fdatasync, on, memory_order_relaxed);
}

int rv_test_wal_direct_fdatasync_forced(void)
{
    return atomic_load_explicit(&fault_direct_fdatasync, memory_order_relaxed);
}

void rv_pause_here(enum rv_pause_point point)
{
    int armed = PAUSE_ARMED;
    if (!atomic_compare_exchange_strong(&pause_states[point], &armed,
                                        PAUSE_WAITING))
        return;
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 1000000};
    for (;;) {
        int released = PAUSE_RELEASED;
        if (atomic_compare_exchange_strong(&pause_states[point], &released,
                                           PAUSE_OFF))
            return;
        nanosleep(&nap, NULL);
    }
}

#endif /* RAVEL_TEST_HOOKS */
