/*
** clock.h -- the monotonic clock, the one home of reading it: in
** microseconds for timing statistics, pauses and the write controller's
** token bucket; in nanoseconds for the WAL's timings (the probe, the
** sync waits).
*/
#ifndef RAVEL_CLOCK_H
#define RAVEL_CLOCK_H

#include "ravel_int.h"

#include <time.h>

static inline uint64_t rv_now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline uint64_t rv_now_nanos(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* RAVEL_CLOCK_H */
