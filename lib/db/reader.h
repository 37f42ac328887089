/*
** reader.h -- a read-only handle that follows a live writer in another
** process (reader.c): its state, catching up, the automatic catch-up
** thread, the lag.
*/
#ifndef RAVEL_READER_H
#define RAVEL_READER_H

#include "ravel_int.h"
#include "util/mutex.h"

#include <pthread.h>

/* Where the reader's state came from and how far it has read.  CATCH_UP
** serializes catch-ups (the automatic thread's and ravel_catch_up's);
** the fields under it are read and written with it held.  The counters
** for the property are relaxed atomics, written under CATCH_UP, read by
** anyone. */
struct rv_db_reader {
    rv_mutex catch_up;
    int have_state;             /* catch_up: a state was built */
    uint64_t manifest_number;   /* catch_up: the manifest it was built
                                ** from (0: none yet) ... */
    uint64_t manifest_size;     /* catch_up: ... its size then ... */
    uint64_t log_number;        /* catch_up: ... and its log number */
    uint64_t tail_segment;      /* catch_up: the WAL was read up to here:
                                ** segment ... */
    uint64_t tail_offset;       /* catch_up: ... and byte offset in it */
    uint64_t tail_seq;          /* catch_up: the last sequence replayed
                                ** from the WAL (the one published may be
                                ** a table file's, above it) */

    _Atomic uint64_t last_ok_us;   /* rv_now_micros of the last catch-up
                                   ** that succeeded */
    _Atomic uint64_t catch_ups;    /* successful catch-ups */
    _Atomic uint64_t rebuilds;     /* ... that rebuilt the state */
    _Atomic uint64_t retries;      /* attempts given up: the writer moved
                                   ** the log under them */
    _Atomic uint64_t failures;     /* catch-ups that returned an error */

    /* The automatic catch-up thread (catch_up_interval_ms > 0): started
    ** by open, stopped by close.  STOP under WAKE_MU. */
    pthread_t thread;
    int thread_started;             /* written by open and close only */
    pthread_mutex_t wake_mu;
    pthread_cond_t wake;
    int stop;                       /* wake_mu */
};

/* ravel_open of a read_only database: builds its state from the manifest
** and the WAL (the first catch-up) and starts the automatic thread if
** asked.  Replaces rv_db_recover for readers. */
RAVEL_PRIVATE int rv_reader_open(ravel_db *db);

/* ravel_close of a read_only database: stops the thread. */
RAVEL_PRIVATE void rv_reader_close(ravel_db *db);

/* Catches up (as ravel_catch_up); then, if that succeeded, calls THEN
** with DB and CTX while no other catch-up can run, so the state THEN
** sees is the one the catch-up made (a checkpoint's plan:
** checkpoint_reader.c).
** Returns the catch-up's error, else THEN's result. */
RAVEL_PRIVATE int rv_reader_catch_up_then(ravel_db *db,
                                          int (*then)(ravel_db *db,
                                                      void *ctx),
                                          void *ctx);

/* rv_reader_top_number_locked: declared in db.h (its lock is a field of
** ravel_db). */

/* The value of property ravel.reader-lag (malloc'd), NULL when out of
** memory. */
RAVEL_PRIVATE char *rv_reader_lag_property(ravel_db *db);

#endif /* RAVEL_READER_H */
