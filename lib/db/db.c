/*
** db.c -- the database handle: allocating and checking it, ravel_open,
** ravel_close, stopping writes after a failure, the LOG.
**
** Files in a database directory (docs/formats.md has their bytes):
**   IDENTITY            "ravel-db 1\n": marks the directory as a database
**   LOCK                held with an OFD lock while open (util/lockfile.c)
**   LOG                 human-readable events (util/log.c)
**   wal-NNNNNNNN.log    WAL segments (wal/wal_format.h); each open starts a
**                       new one, and so does each memtable switch
**
** Open, in order: the directory, IDENTITY and LOCK (db_dir.c), the LOG,
** WAL replay into the active memtable (recovery.c), then the WAL writer's
** first segment.
*/
#include "db/db.h"
#include "util/error.h"
#include "util/lockfile.h"
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *ravel_libversion(void)
{
    return RAVEL_VERSION;
}

int ravel_libversion_number(void)
{
    return RAVEL_VERSION_NUMBER;
}

void ravel_free(void *p)
{
    free(p);
}

int rv_db_check(ravel_db *db, const char *fn)
{
    if (!db)
        return rv_error(RAVEL_INVALID, "%s: database handle is NULL", fn);
    if (db->magic == RV_DB_DEAD)
        return rv_error(RAVEL_INVALID, "%s: database handle is closed", fn);
    if (db->magic != RV_DB_MAGIC)
        return rv_error(RAVEL_INVALID, "%s: not a database handle", fn);
    return RAVEL_OK;
}

void rv_db_log(ravel_db *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_log_vprintf(db->log_fd, fmt, ap);
    va_end(ap);
}

void rv_db_stop_writes(ravel_db *db, const char *reason)
{
    pthread_mutex_lock(&db->mu);
    int first = !atomic_load_explicit(&db->read_only, memory_order_relaxed);
    if (first) {
        snprintf(db->read_only_reason, sizeof db->read_only_reason, "%s",
                 reason);
        /* release: a writer that sees the flag reads the reason under mu
        ** anyway; the flag itself is the fast-path check. */
        atomic_store_explicit(&db->read_only, RAVEL_READONLY,
                              memory_order_release);
    }
    pthread_mutex_unlock(&db->mu);
    if (first)
        rv_db_log(db, "writes stopped until reopen: %s", reason);
}

/* ------------------------------------------------------------ open */

static void db_free(ravel_db *db)
{
    if (db->current)
        rv_version_unref(db->current);
    rv_lockfile_release(db->lock_fd);
    if (db->log_fd >= 0)
        close(db->log_fd);
    rv_write_queue_destroy(&db->queue);
    pthread_mutex_destroy(&db->mu);
    db->magic = RV_DB_DEAD;
    free(db->dir);
    free(db);
}

static ravel_db *db_alloc(const char *dir, const ravel_options *opts)
{
    ravel_db *db = calloc(1, sizeof *db);
    if (!db)
        return NULL;
    if (opts)
        db->options = *opts;
    else
        rv_options_init_defaults(&db->options);
    db->dir = strdup(dir);
    rv_memtable *mem = rv_memtable_new(db->options.write_buffer_size);
    db->current = mem ? rv_version_new(mem, 0, 0) : NULL;
    if (mem)
        rv_memtable_unref(mem); /* the version holds it */
    if (!db->dir || !db->current) {
        if (db->current)
            rv_version_unref(db->current);
        free(db->dir);
        free(db);
        return NULL;
    }
    db->magic = RV_DB_MAGIC;
    db->lock_fd = -1;
    db->log_fd = -1;
    pthread_mutex_init(&db->mu, NULL);
    rv_write_queue_init(&db->queue);
    return db;
}

static void db_log_open(ravel_db *db)
{
    const char *why = "";
    int uring = db->wal && rv_wal_uses_uring(db->wal, &why);
    rv_db_log(db, "opened %s%s; WAL I/O: %s%s%s", db->dir,
              db->options.read_only ? " read-only" : "",
              db->wal ? (uring ? "io_uring" : "pwrite+fdatasync") : "none",
              uring || !db->wal ? "" : " -- ", uring || !db->wal ? "" : why);
}

int ravel_open(const char *dir, const ravel_options *opts, ravel_db **out)
{
    if (!dir || !*dir || !out)
        return rv_error(RAVEL_INVALID, "ravel_open: %s",
                        !out ? "out is NULL" : "directory name is empty or "
                        "NULL");
    ravel_db *db = db_alloc(dir, opts);
    if (!db)
        return rv_error(RAVEL_NOMEM, "out of memory opening %s", dir);

    int rc = rv_db_prepare_dir(db);
    if (rc)
        goto out;
    if (!db->options.read_only)
        db->log_fd = rv_log_open(db->dir);
    rc = rv_db_recover(db);
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = rv_wal_open(db->dir, db->next_segment++, db->wal_prev_end,
                         &db->options, &db->wal);
    if (rc)
        goto out;
    atomic_store_explicit(&db->last_seq_stat, db->last_seq,
                          memory_order_relaxed);
    atomic_store_explicit(&db->last_visible_seq, db->last_seq,
                          memory_order_relaxed);
    db_log_open(db);
    *out = db;
out:
    if (rc) {
        if (db->wal)
            rv_wal_close(db->wal);
        db_free(db);
    }
    return rc;
}

int ravel_close(ravel_db *db)
{
    if (!db)
        return RAVEL_OK;
    int rc = rv_db_check(db, "ravel_close");
    if (rc)
        return rc;
    pthread_mutex_lock(&db->mu);
    int snaps = db->live_snapshots, iters = db->live_iterators;
    pthread_mutex_unlock(&db->mu);
    if (snaps || iters)
        return rv_error(RAVEL_INVALID, "ravel_close: %d snapshot(s) and %d "
                        "iterator(s) are still open; release them first",
                        snaps, iters);

    /* Wait for the write in progress, if any: queue up and lead nothing. */
    struct rv_writer closer;
    memset(&closer, 0, sizeof closer);
    rv_write_queue_join(&db->queue, &closer);

    rc = rv_wal_close(db->wal);
    rv_db_log(db, "closed%s%s", rc ? ": " : "", rc ? rv_errmsg_get() : "");
    db_free(db);
    return rc;
}
