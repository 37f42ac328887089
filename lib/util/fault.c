/*
** fault.c -- test hooks that make the next WAL write or sync, or memtable
** allocation, fail.
**
** Compiled only with RAVEL_TEST_HOOKS (fault.h).  Owns: one countdown per
** fault point.  Does not own: what a failure means
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

#endif /* RAVEL_TEST_HOOKS */
