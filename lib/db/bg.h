/*
** bg.h -- the background threads (bg.c) and their state in the handle
** (db->mu.bg, read and written with db->mu.lock held).
*/
#ifndef RAVEL_BG_H
#define RAVEL_BG_H

#include "ravel_int.h"

#include <pthread.h>

struct rv_db_bg {
    pthread_cond_t cv;              /* a job may be ready, or shutdown */
    pthread_cond_t flush_cv;        /* a flush finished, or failed */
    pthread_t *threads;             /* started at open, joined at close */
    int n_threads;
    int shutdown;                   /* close: start no other job */
    int flush_running;              /* one flush at a time, oldest first */
};

/* Starts the background threads; stops them, letting a running job
** finish and starting no other. */
RAVEL_PRIVATE int rv_bg_start(ravel_db *db);
RAVEL_PRIVATE void rv_bg_stop(ravel_db *db);

#endif /* RAVEL_BG_H */
