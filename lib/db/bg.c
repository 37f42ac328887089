/*
** bg.c -- the background threads of a database and the jobs they run.
**
** max_background_jobs threads wait on db->bg_cv for work.  Work today is a
** flush (flush.c): one at a time, oldest immutable memtable first, and none
** once writes are stopped (a failed flush must not be retried into a
** reported success, and the WAL still holds everything).  Compaction, the
** next kind of job, joins the choice in bg_pick_locked (flushes first).
**
** rv_bg_stop (close) lets a running job finish -- a flush completes or
** fails whole -- and starts no other: memtables not yet flushed stay in
** their WAL segments, which the next open replays.
**
** Whoever waits for a flush (a write-group leader with no room, ravel_flush)
** waits on db->flush_cv, broadcast after every flush, failed or not.
*/
#include "db/db.h"
#include "util/error.h"

#include <stdlib.h>
#include <time.h>

enum bg_job { BG_NONE, BG_FLUSH };

static enum bg_job bg_pick_locked(ravel_db *db)
{
    if (db->current->n_imm > 0 && !db->flush_running &&
        !rv_stop_code(&db->stop))
        return BG_FLUSH;
    return BG_NONE;
}

static void *bg_main(void *arg)
{
    ravel_db *db = arg;
    pthread_mutex_lock(&db->mu);
    while (!db->bg_shutdown) {
        if (bg_pick_locked(db) == BG_FLUSH) {
            db->flush_running = 1;
            rv_flush_run_locked(db);
            db->flush_running = 0;
            pthread_cond_broadcast(&db->flush_cv);
            continue;
        }
        if (!rv_read_epoch_pending_locked(&db->epoch)) {
            pthread_cond_wait(&db->bg_cv, &db->mu);
            continue;
        }
        /* Versions wait for readers: nudge the epoch now and then, so a
        ** replaced memtable is freed even when no write comes. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 20 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&db->bg_cv, &db->mu, &until);
        rv_read_epoch_release(rv_read_epoch_advance_locked(&db->epoch));
    }
    pthread_mutex_unlock(&db->mu);
    return NULL;
}

int rv_bg_start(ravel_db *db)
{
    int n = db->options.max_background_jobs;
    db->bg_threads = calloc((size_t)n, sizeof *db->bg_threads);
    if (!db->bg_threads)
        return rv_error(RAVEL_NOMEM, "out of memory for background threads");
    for (int i = 0; i < n; i++) {
        int err = pthread_create(&db->bg_threads[i], NULL, bg_main, db);
        if (err) {
            rv_bg_stop(db);
            return rv_error_errno(RAVEL_IOERR, err, "cannot start background "
                                  "thread %d of %d", i + 1, n);
        }
        db->n_bg_threads++;
    }
    /* a flush may be due already (recovered data) */
    pthread_mutex_lock(&db->mu);
    pthread_cond_broadcast(&db->bg_cv);
    pthread_mutex_unlock(&db->mu);
    return RAVEL_OK;
}

void rv_bg_stop(ravel_db *db)
{
    pthread_mutex_lock(&db->mu);
    db->bg_shutdown = 1;
    pthread_cond_broadcast(&db->bg_cv);
    pthread_cond_broadcast(&db->flush_cv);
    pthread_mutex_unlock(&db->mu);
    for (int i = 0; i < db->n_bg_threads; i++)
        pthread_join(db->bg_threads[i], NULL);
    db->n_bg_threads = 0;
    free(db->bg_threads);
    db->bg_threads = NULL;
}
