/*
** read_options.h -- ravel_readoptions, the options of one read (RocksDB's
** ReadOptions): the snapshot read, an iterator's bounds, and how table
** blocks are read (verify_checksums, fill_cache).  read_options.c makes
** and sets them; db_read.c reads them.
*/
#ifndef RAVEL_READ_OPTIONS_H
#define RAVEL_READ_OPTIONS_H

#include "ravel_int.h"

/* "Use the database's option" (verify_checksums). */
#define RV_READ_OPTION_DEFAULT (-1)

/* Only the setters of ravel.h write it; reads only read it, so any number
** of them may share one while nobody sets it. */
struct ravel_readoptions {
    const ravel_snapshot *snapshot; /* NULL: the latest state */
    char *lower, *upper;            /* copies of the bounds; NULL: none */
    size_t lower_len, upper_len;
    int verify_checksums;           /* 0, 1 or RV_READ_OPTION_DEFAULT */
    int fill_cache;                 /* 0 or 1 */
};

#endif /* RAVEL_READ_OPTIONS_H */
