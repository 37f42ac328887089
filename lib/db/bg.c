/*
** bg.c -- the background threads of a database and the jobs they run.
**
** max_background_jobs threads wait on db->mu.bg.cv for work: flushes
** (flush.c) -- one at a time, oldest immutable memtable first -- and
** compactions (compaction.c), picked by score (compaction_picker.h).
** Flushes go first, and with two threads or more at most all but one run
** compactions, so a flush never waits for a thread.  No job starts once
** writes are stopped (a failed job must not be retried into a reported
** success; the WAL and the inputs still hold everything), and no
** automatic compaction with disable_auto_compactions or before the pause
** that follows a failed one.
**
** rv_bg_stop (close) lets a running flush finish -- it completes or fails
** whole -- aborts running compactions (their inputs stay) and starts no
** other job: memtables not yet flushed stay in their WAL segments, which
** the next open replays.
**
** Whoever waits for a flush (a write-group leader with no room, ravel_flush)
** waits on db->mu.bg.flush_cv, broadcast after every flush, failed or not.
*/
#include "db/db.h"
#include "util/error.h"
#include "util/clock.h"

#include <stdlib.h>
#include <time.h>

/* Compactions that may run at once: all threads but one (kept for
** flushes), or the only one. */
static int bg_max_compactions(const ravel_db *db)
{
    int n = db->options.max_background_jobs;
    return n > 1 ? n - 1 : 1;
}

/* The next automatic compaction, marked and ready to run, or NULL. */
static struct rv_compaction *bg_pick_compaction_locked(ravel_db *db)
    RV_REQUIRES(db->mu.lock);
static struct rv_compaction *bg_pick_compaction_locked(ravel_db *db)
{
    if (db->options.disable_auto_compactions || rv_stop_code(&db->stop) ||
        db->mu.compact.n_running >= bg_max_compactions(db))
        return NULL;
    if (db->mu.compact.failures && rv_now_micros() < db->mu.compact.retry_at)
        return NULL;
    return rv_compaction_pick(&db->options, db->read.current->files,
                              db->mu.compact.running, db->mu.compact.pointer);
}

/* Runs one job if one is due: 1 if it ran one. */
static int bg_run_one_locked(ravel_db *db)
    RV_REQUIRES(db->mu.lock);
static int bg_run_one_locked(ravel_db *db)
{
    if (db->read.current->n_imm > 0 && !db->mu.bg.flush_running &&
        !rv_stop_code(&db->stop)) {
        db->mu.bg.flush_running = 1;
        rv_flush_run_locked(db);
        db->mu.bg.flush_running = 0;
        pthread_cond_broadcast(&db->mu.bg.flush_cv);
        pthread_cond_broadcast(&db->mu.bg.cv); /* a compaction may be due */
        return 1;
    }
    struct rv_compaction *c = bg_pick_compaction_locked(db);
    if (!c)
        return 0;
    rv_compaction_run_locked(db, c);
    return 1;
}

/* How long an idle thread sleeps: short while versions wait for readers
** (read_epoch.h), or until a failed compaction's retry is due. */
static void bg_idle_locked(ravel_db *db)
    RV_REQUIRES(db->mu.lock);
static void bg_idle_locked(ravel_db *db)
{
    uint64_t micros = 0;
    if (rv_read_epoch_pending_locked(&db->read.epoch))
        micros = 20 * 1000;
    else if (db->mu.compact.failures && !rv_stop_code(&db->stop))
        micros = 100 * 1000;
    if (!micros) {
        rv_cond_wait(&db->mu.bg.cv, &db->mu.lock);
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)micros * 1000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    rv_cond_timedwait(&db->mu.bg.cv, &db->mu.lock, &until);
    /* Versions wait for readers: nudge the epoch now and then, so a
    ** replaced memtable is freed even when no write comes. */
    rv_read_epoch_release(rv_read_epoch_advance_locked(&db->read.epoch));
}

static void *bg_main(void *arg)
{
    ravel_db *db = arg;
    rv_mutex_lock(&db->mu.lock);
    while (!db->mu.bg.shutdown)
        if (!bg_run_one_locked(db))
            bg_idle_locked(db);
    rv_mutex_unlock(&db->mu.lock);
    return NULL;
}

int rv_bg_start(ravel_db *db)
{
    int n = db->options.max_background_jobs;
    db->mu.bg.threads = calloc((size_t)n, sizeof *db->mu.bg.threads);
    if (!db->mu.bg.threads)
        return rv_error(RAVEL_NOMEM, "out of memory for background threads");
    for (int i = 0; i < n; i++) {
        int err = pthread_create(&db->mu.bg.threads[i], NULL, bg_main, db);
        if (err) {
            rv_bg_stop(db);
            return rv_error_errno(RAVEL_IOERR, err, "cannot start background "
                                  "thread %d of %d", i + 1, n);
        }
        db->mu.bg.n_threads++;
    }
    /* a flush may be due already (recovered data) */
    rv_mutex_lock(&db->mu.lock);
    pthread_cond_broadcast(&db->mu.bg.cv);
    rv_mutex_unlock(&db->mu.lock);
    return RAVEL_OK;
}

void rv_bg_stop(ravel_db *db)
{
    rv_mutex_lock(&db->mu.lock);
    db->mu.bg.shutdown = 1;
    atomic_store_explicit(&db->compaction_abort, 1, memory_order_relaxed);
    pthread_cond_broadcast(&db->mu.bg.cv);
    pthread_cond_broadcast(&db->mu.bg.flush_cv);
    rv_mutex_unlock(&db->mu.lock);
    for (int i = 0; i < db->mu.bg.n_threads; i++)
        pthread_join(db->mu.bg.threads[i], NULL);
    db->mu.bg.n_threads = 0;
    free(db->mu.bg.threads);
    db->mu.bg.threads = NULL;
}
