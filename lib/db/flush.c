/*
** flush.c -- writing the oldest immutable memtable to table files.
**
** A flush, run by a background thread (bg.c), one at a time, oldest
** memtable first:
**   1. under db->mu.lock: picks the memtable, the WAL segment that becomes the
**      log number once it is flushed (the first segment of the next newer
**      memtable), and the live snapshots;
**   2. writes the memtable's entries to one or more table files (cut at
**      target_file_size_base, never inside one user key's versions),
**      keeping every version a live snapshot or a new reader can see and
**      dropping the others; each file is fdatasynced by its builder;
**   3. fsyncs the directory, so the new names survive a power loss;
**   4. appends one version edit to the manifest (fdatasynced,
**      rv_db_log_edit): the files at level 0, the new log number, the next
**      file number, the last sequence;
**   5. under db->mu.lock: installs a version in which the files replace the
**      memtable, and wakes writers waiting for room;
**   6. deletes the WAL segments below the new log number (unless a
**      checkpoint is copying them: it deletes them when done; with WAL
**      retention, both move them to archive/ for the change feed instead).
** A crash before 4 leaves table files no manifest names: the next open
** deletes them and replays the WAL.  A crash after 4 leaves WAL segments
** below the log number: the next open deletes them.
**
** Which versions are kept is keep.h's question: the newest of each
** snapshot stripe, and with write_prepared every version whose visibility
** some reader cannot yet decide (a version may reach a table file before
** its commit, and reads ask the commit table about it there as in a
** memtable).  Deletions are kept: only a compaction knows when nothing
** older exists below them.
**
** A failure (a write, an fdatasync, the manifest, memory) deletes the
** files written (unless the manifest append was attempted: the next open
** decides by what the manifest holds), leaves the memtable in the version and its WAL segments
** in place, and stops writes with the reason (as a failed WAL write
** does): nothing acknowledged is lost, and the next open starts again.
*/
#include "db/db.h"
#include "base/dbformat.h"
#include "db/checkpoint.h"
#include "db/keep.h"
#include "db/range_del_out.h"
#include "memtable/range_del.h"
#include "db/table_output.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/clock.h"
#include "wal/wal_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Step 2: writes MEM's entries that must be kept into table files, and
** its range tombstones into their range-deletion blocks (each file given
** the part inside it: range_del_out.h).  *DROPPED counts the entries
** dropped. */
static int flush_write_tables(ravel_db *db, rv_memtable *mem,
                              struct rv_keep *keep,
                              struct rv_table_output *out,
                              uint64_t *dropped)
{
    struct rv_iter *it = rv_memtable_iter_new(mem);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory for a flush iterator");
    struct rv_range_del_out tombs;
    rv_range_del_out_init(&tombs, db->tables);
    int n = 0;
    const struct rv_range_tomb *t =
        rv_range_dels_list(rv_memtable_range_dels(mem), &n);
    int rc = rv_range_del_out_add(&tombs, t, n);
    for (it->ops->seek_to_first(it); rc == RAVEL_OK && it->ops->valid(it);
         it->ops->next(it)) {
        size_t klen, vlen;
        const char *k = it->ops->key(it, &klen);
        const char *v = it->ops->value(it, &vlen);
        int kept = rv_keep_entry(keep, k, klen);
        if (kept < 0) {
            rc = RAVEL_NOMEM;
            break;
        }
        if (!kept) {
            (*dropped)++;
            continue;
        }
        /* A new user key may start a new file once this one is big
        ** enough. */
        if (rv_table_output_file_size(out) >=
                db->options.target_file_size_base &&
            rv_table_output_new_user_key(out, k, klen)) {
            rc = rv_range_del_out_give(&tombs, out, k, klen - RV_TAG_SIZE);
            if (rc == RAVEL_OK)
                rc = rv_table_output_cut(out);
        }
        if (rc == RAVEL_OK)
            rc = rv_table_output_add(out, k, klen, v, vlen);
    }
    if (rc == RAVEL_OK)
        rc = it->ops->status(it);
    it->ops->destroy(it);
    if (rc == RAVEL_OK)
        rc = rv_range_del_out_give(&tombs, out, NULL, 0);
    rv_range_del_out_free(&tombs);
    if (rc == RAVEL_OK)
        rc = rv_table_output_cut(out);
    return rc;
}

/* ------------------------------------------------------- the job */

/* The edit of a flush: OUT's files at level 0 and the new log number. */
static int flush_edit(const struct rv_table_output *out, uint64_t log_number,
                      struct rv_version_edit *e)
{
    int rc = RAVEL_OK;
    for (int i = 0; i < out->n && rc == RAVEL_OK; i++)
        rc = rv_version_edit_add_file(e, &out->files[i]);
    e->has_log_number = 1;
    e->log_number = log_number;
    return rc;
}

/* Stops writes after the failure RC of a flush. */
static void flush_fail(ravel_db *db, int rc)
{
    char why[RV_STOP_REASON_MAX];
    snprintf(why, sizeof why, "a flush failed: %.450s", rv_errmsg_get());
    atomic_fetch_add_explicit(&db->stats.bg_errors, 1, memory_order_relaxed);
    rv_db_stop_writes(db, rc, why);
}

void rv_flush_run_locked(ravel_db *db)
{
    struct rv_version *v = db->read.current;
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    rv_memtable *mem = v->imm[v->n_imm - 1];
    uint64_t log_number = v->n_imm >= 2 ? v->imm_wal[v->n_imm - 2]
                                        : v->mem_wal;
    uint64_t old_log_number = db->mu.files.log_number;
    struct rv_keep keep;
    memset(&keep, 0, sizeof keep);
    int rc = rv_keep_init_locked(&keep, db);
    rv_mutex_unlock(&db->mu.lock);

    uint64_t start = rv_now_micros();
    struct rv_table_output out;
    rv_table_output_init(&out, db, 0);
    struct rv_version_edit edit;
    rv_version_edit_init(&edit);
    uint64_t dropped = 0;
    if (rc == RAVEL_OK)
        rc = flush_write_tables(db, mem, &keep, &out, &dropped);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(db->dir);
    /* before the log number passes their records: the waiting
    ** transactions' files written, the committed ones' deleted */
    if (rc == RAVEL_OK)
        rc = rv_prepared_spill(&db->prepared, db->dir, log_number);
    if (rc == RAVEL_OK)
        rc = rv_prepared_release_flushed(&db->prepared, db->dir, log_number);
    if (rc == RAVEL_OK)
        rc = flush_edit(&out, log_number, &edit);
    if (rc != RAVEL_OK) {
        rv_table_output_discard(&out);
    } else {
        rv_pause_here(RV_PAUSE_FLUSH_TABLES_WRITTEN);
        /* If the append fails, the edit may still have reached the disk:
        ** the files stay, and the next open keeps or deletes them as the
        ** manifest it reads says. */
        rc = rv_db_log_edit(db, &edit);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_FLUSH_LOGGED);
    }

    int wal_held = 0;
    rv_mutex_lock(&db->mu.lock);
    if (rc == RAVEL_OK)
        rc = rv_db_install_edit_locked(db, mem, &edit);
    if (rc == RAVEL_OK) {
        db->mu.files.log_number = log_number;
        wal_held = rv_checkpoint_defer_wal_locked(db, old_log_number,
                                                  log_number);
    }
    rv_mutex_unlock(&db->mu.lock);
    if (rc != RAVEL_OK) {
        /* The manifest may name the files (a failed install): they stay
        ** for the next open, which the stop makes the only way on. */
        flush_fail(db, rc);
    } else {
        if (!wal_held) /* else the checkpoint's release deletes them */
            rv_db_delete_wal_segments(db, old_log_number, log_number);
        atomic_fetch_add_explicit(&db->stats.flushes, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stats.flush_bytes, out.bytes,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stats.flush_entries, out.entries,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stats.flush_dropped, dropped,
                                  memory_order_relaxed);
        uint64_t took = rv_now_micros() - start;
        atomic_fetch_add_explicit(&db->stats.flush_micros, took,
                                  memory_order_relaxed);
        rv_db_log(db, "flushed a memtable into %d table file(s), %llu "
                  "bytes, %llu entries (%llu versions dropped) in %.3f s; "
                  "log number %llu", out.n, (unsigned long long)out.bytes,
                  (unsigned long long)out.entries,
                  (unsigned long long)dropped, (double)took / 1e6,
                  (unsigned long long)log_number);
    }
    rv_version_edit_clear(&edit);
    rv_table_output_free(&out);
    rv_keep_free(&keep);
    rv_version_unref(v);
    rv_mutex_lock(&db->mu.lock);
}

/* ------------------------------------------------ WAL segments let go */

int rv_db_wal_retained(const ravel_db *db)
{
    return db->options.wal_ttl_seconds > 0 ||
           db->options.wal_size_limit_mb > 0;
}

void rv_db_purge_wal_archive(ravel_db *db)
{
    uint64_t deleted = 0;
    int rc = rv_wal_archive_purge(
        db->dir, (uint64_t)db->options.wal_ttl_seconds,
        (uint64_t)db->options.wal_size_limit_mb << 20, &deleted);
    if (rc)
        rv_db_log(db, "could not purge the WAL archive: %s",
                  rv_errmsg_get());
    if (deleted)
        atomic_fetch_add_explicit(&db->stats.wal_deleted, deleted,
                                  memory_order_relaxed);
}

/* Retention (wal_archive.h): flushed segments FROM .. TO - 1 moved to
** archive/, never recycled, then the archive purged. */
static void flush_archive_wal_segments(ravel_db *db, uint64_t from,
                                       uint64_t to)
{
    for (uint64_t n = from; n < to; n++) {
        int rc = rv_wal_archive_segment(db->dir, n);
        if (rc && rc != RAVEL_NOTFOUND)
            rv_db_log(db, "could not archive flushed WAL segment %llu: %s",
                      (unsigned long long)n, rv_errmsg_get());
    }
    rv_db_purge_wal_archive(db);
}

void rv_db_delete_wal_segments(ravel_db *db, uint64_t from, uint64_t to)
{
    if (rv_db_wal_retained(db)) {
        flush_archive_wal_segments(db, from, to);
        return;
    }
    for (uint64_t n = from; n < to; n++) {
        char path[RV_PATH_MAX];
        if (db->write.wal && rv_wal_recycle(db->write.wal, n))
            continue; /* kept for reuse (recycle_log_file_num) */
        if (rv_wal_segment_path(path, db->dir, n) != 0)
            continue;
        if (unlink(path) == 0)
            atomic_fetch_add_explicit(&db->stats.wal_deleted, 1,
                                      memory_order_relaxed);
        else if (errno != ENOENT)
            rv_db_log(db, "could not delete flushed WAL segment %s: %s",
                      path, strerror(errno));
    }
}

/* ------------------------------------------------------------ ravel_flush */

/* 1 if an immutable memtable whose data begins before WAL segment TARGET
** is still waiting for its flush. */
static int flush_pending_locked(ravel_db *db, uint64_t target)
    RV_REQUIRES(db->mu.lock);
static int flush_pending_locked(ravel_db *db, uint64_t target)
{
    const struct rv_version *v = db->read.current;
    for (int i = 0; i < v->n_imm; i++)
        if (v->imm_wal[i] < target)
            return 1;
    return 0;
}

int rv_db_flush(ravel_db *db, int flags)
{
    if (flags & ~RAVEL_FLUSH_NO_WAIT)
        return rv_error(RAVEL_INVALID, "ravel_flush: unknown flags 0x%x",
                        (unsigned)(flags & ~RAVEL_FLUSH_NO_WAIT));
    if (db->options.read_only)
        return rv_error(RAVEL_READONLY, "ravel_flush: database %s was "
                        "opened with read_only=true", db->dir);
    if (rv_stop_code(&db->stop))
        return rv_write_refusal(db);
    uint64_t target = 0; /* the new active memtable's segment */
    int rc = rv_write_switch_memtable(db, &target);
    if (rc || (flags & RAVEL_FLUSH_NO_WAIT))
        return rc;

    int stopped = 0;
    rv_mutex_lock(&db->mu.lock);
    while (flush_pending_locked(db, target)) {
        if (rv_stop_code(&db->stop)) {
            stopped = 1;
            break;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        rv_cond_timedwait(&db->mu.bg.flush_cv, &db->mu.lock, &until);
    }
    rv_mutex_unlock(&db->mu.lock);
    return stopped ? rv_write_refusal(db) : RAVEL_OK;
}

int ravel_flush(ravel_db *db, int flags)
{
    int rc = rv_db_enter(db, "ravel_flush");
    if (rc)
        return rc;
    rc = rv_db_flush(db, flags);
    rv_db_leave(db);
    return rc;
}
