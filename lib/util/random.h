/*
** random.h -- random 64-bit identifiers (a table writer's session id,
** table_format.h): from the kernel's random source, or, should it fail,
** from the clock, the process id and a counter mixed together.
*/
#ifndef RAVEL_UTIL_RANDOM_H
#define RAVEL_UTIL_RANDOM_H

#include "ravel_int.h"

/* A random 64-bit value, never 0 (0 stands for "none" where it is kept). */
RAVEL_PRIVATE uint64_t rv_random_id(void);

#endif /* RAVEL_UTIL_RANDOM_H */
