/*
** random.c -- random 64-bit identifiers (random.h).
*/
#include "util/random.h"

#include <xxhash.h>

#include <errno.h>
#include <stdatomic.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Distinct for each fallback in this process: atomic, no lock. */
static _Atomic uint64_t random_fallback_counter;

/* The value when the kernel gives none: the clock, the process id and a
** counter hashed together. */
static uint64_t random_fallback(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t mix[4] = {(uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec,
                       (uint64_t)getpid(),
                       atomic_fetch_add(&random_fallback_counter, 1)};
    return XXH3_64bits(mix, sizeof mix);
}

uint64_t rv_random_id(void)
{
    uint64_t v = 0;
    ssize_t got;
    do
        got = getrandom(&v, sizeof v, 0);
    while (got < 0 && errno == EINTR);
    if (got != (ssize_t)sizeof v)
        v = random_fallback();
    return v ? v : 1;
}
