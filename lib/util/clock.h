/*
** clock.h -- the monotonic clock in microseconds, for timing statistics,
** pauses and the write controller's token bucket.
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

#endif /* RAVEL_CLOCK_H */
