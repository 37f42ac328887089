/*
** compaction.h -- running compactions (compaction.c, compact_range.c) and
** their state in the handle (db->mu.compact, read and written with
** db->mu.lock held).  What to compact is compaction_picker.h's.
*/
#ifndef RAVEL_COMPACTION_H
#define RAVEL_COMPACTION_H

#include "ravel_int.h"
#include "util/mutex.h"
#include "base/dbformat.h"
#include "db/compaction_picker.h"

#include <pthread.h>

/* Automatic compactions that fail this many times in a row stop writes
** (each failure is retried after a pause, 1 s doubling up to 60 s). */
#define RV_COMPACTION_MAX_FAILURES 5

struct rv_db_compactions {
    pthread_cond_t cv;              /* a compaction ended */
    struct rv_compaction *running;  /* a list, through ->next */
    int n_running;
    /* each level's round-robin pointer (compaction_pri=round_robin) */
    struct rv_key_pointer pointer[RV_NUM_LEVELS];
    int failures;                   /* in a row */
    uint64_t retry_at;              /* monotonic micros: no automatic
                                    ** compaction before, after a failure */
};

#endif /* RAVEL_COMPACTION_H */
