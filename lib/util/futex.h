/*
** futex.h -- sleeping on a 32-bit atomic word until another thread changes
** it (Linux futexes, process-private): the write queue's writers, the
** unordered modes' switch wait, the WAL's sync waiters and ravel_close.
*/
#ifndef RAVEL_FUTEX_H
#define RAVEL_FUTEX_H

#include "ravel_int.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *WORD holds EXPECTED, at most TIMEOUT (NULL: no limit);
** may return early (a wake-up, a signal): callers re-check. */
static inline void rv_futex_wait(_Atomic uint32_t *word, uint32_t expected,
                                 const struct timespec *timeout)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected,
            timeout, NULL, 0);
}

/* Wakes every thread sleeping on WORD. */
static inline void rv_futex_wake_all(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
            NULL, 0);
}

#endif /* RAVEL_FUTEX_H */
