/*
** db.c -- the database handle: allocating and checking it, the gate every
** API call passes, ravel_open, ravel_close, stopping writes after a
** failure, the LOG.
**
** Files in a database directory (docs/formats.md has their bytes):
**   IDENTITY            "ravel-db 1\n": marks the directory as a database
**   LOCK                held with an OFD lock while open for writing
**                       (util/lockfile.c); readers take none (reader.c)
**   LOG                 human-readable events (util/log.c)
**   wal-NNNNNNNN.log    WAL segments (wal/wal_format.h); each open starts a
**                       new one, and so does each memtable switch
**   NNNNNN.sst          table files (table/table_format.h)
**   MANIFEST-NNNNNN     the log of version edits (db/manifest.h)
**   CURRENT             names the manifest in use
**
** Open, in order: the directory, IDENTITY and LOCK (db_dir.c), the LOG,
** the block cache and the cache of open tables, the manifest and WAL
** replay into the active memtable, a new manifest and the deletion of
** obsolete files (recovery.c), the WAL writer's first segment, then the
** background threads (bg.c), which flush a large recovered memtable at
** once.  Close, after the gate: the background threads finish their
** running job, then the WAL is sealed.
*/
#include "db/db.h"
#include "db/write_unordered.h"
#include "util/error.h"
#include "util/filename.h"
#include "util/lockfile.h"
#include "util/log.h"
#include "util/random.h"
#include "util/futex.h"

#include <errno.h>
#include <limits.h>
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

/* ------------------------------------------------------------ the gate */

/*
** Every API call that takes a ravel_db (other than ravel_close) runs
** between rv_db_enter and rv_db_leave, which count it in db->gate.
** ravel_close sets DB_GATE_CLOSING in the same word, then sleeps on it (a
** futex) until the count is zero.  Because the count and the flag share
** one atomic word, the fetch_add of a call and the fetch_or of close are
** ordered by that word's modification order: either the call's increment
** comes first, and close waits for its decrement, or the call sees the
** flag and returns "closing" without touching anything but db->dir (which
** its own increment keeps alive).  So once close sees the bare flag, no
** call is in progress and none can start: the write queue is empty, no
** sync waiter is inside the WAL, and the handle can be torn down.
**
** The leaver that brings the count to zero under the flag wakes close.
** Close may already have seen the zero and freed the handle when that
** FUTEX_WAKE reaches the kernel: waking a dead address is harmless (EFAULT,
** or a spurious wake-up, which every futex waiter tolerates -- glibc makes
** the same argument for a mutex destroyed right after its unlock).
*/
#define DB_GATE_CLOSING 0x80000000u

int rv_db_enter(ravel_db *db, const char *fn)
{
    int rc = rv_db_check(db, fn);
    if (rc)
        return rc;
    /* relaxed: the increment publishes nothing; its place before or after
    ** close's fetch_or in the word's modification order is what counts. */
    uint32_t old = atomic_fetch_add_explicit(&db->gate, 1,
                                             memory_order_relaxed);
    if (old & DB_GATE_CLOSING) {
        rc = rv_error(RAVEL_INVALID, "%s: database %s is closing", fn,
                      db->dir);
        rv_db_leave(db);
    }
    return rc;
}

void rv_db_leave(ravel_db *db)
{
    /* release: everything the call did to the handle happens before
    ** close's acquire load that sees the count reach zero. */
    uint32_t old = atomic_fetch_sub_explicit(&db->gate, 1,
                                             memory_order_release);
    if (old == (DB_GATE_CLOSING | 1))
        rv_futex_wake_all(&db->gate);
}

#ifdef RAVEL_TEST_HOOKS
uint32_t rv_db_calls_in_progress(ravel_db *db, int *closing)
{
    /* relaxed: a snapshot of the count for tests */
    uint32_t v = atomic_load_explicit(&db->gate, memory_order_relaxed);
    if (closing)
        *closing = (v & DB_GATE_CLOSING) != 0;
    return v & ~DB_GATE_CLOSING;
}

int rv_db_writers_queued(ravel_db *db)
{
    return rv_write_queue_waiting(&db->write.queue);
}
#endif

/* Refuses new calls and waits, asleep, until none is in progress.
** Returns RAVEL_INVALID if another close is already under way. */
static int db_gate_close(ravel_db *db)
{
    /* acquire: if no call is in progress, their effects are visible. */
    uint32_t v = atomic_fetch_or_explicit(&db->gate, DB_GATE_CLOSING,
                                          memory_order_acquire);
    if (v & DB_GATE_CLOSING)
        return rv_error(RAVEL_INVALID, "ravel_close: the database is "
                        "already being closed by another thread");
    v |= DB_GATE_CLOSING;
    while (v != DB_GATE_CLOSING) {
        rv_futex_wait(&db->gate, v, NULL);
        /* acquire: pairs with rv_db_leave's release */
        v = atomic_load_explicit(&db->gate, memory_order_acquire);
    }
    return RAVEL_OK;
}

/* Lets calls in again after a close that was refused. */
static void db_gate_reopen(ravel_db *db)
{
    /* release: nothing close did must be hidden from later calls */
    atomic_fetch_and_explicit(&db->gate, ~DB_GATE_CLOSING,
                              memory_order_release);
}

/* ------------------------------------------------------------- helpers */

void rv_db_log(ravel_db *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_log_vprintf(db->log_fd, fmt, ap);
    va_end(ap);
}

void rv_db_stop_writes(ravel_db *db, int rc, const char *reason)
{
    rv_stop_set(&db->stop, rc, reason);
    /* wake writers waiting for room and ravel_flush callers; withdraw
    ** what the database asked of its write controller */
    rv_mutex_lock(&db->mu.lock);
    pthread_cond_broadcast(&db->mu.bg.flush_cv);
    rv_write_stall_update_locked(db);
    rv_mutex_unlock(&db->mu.lock);
    /* The first to get here logs the recorded reason, which may be one the
    ** WAL recorded before.  relaxed: the flag only elects the logger. */
    if (atomic_exchange_explicit(&db->stop_logged, 1, memory_order_relaxed))
        return;
    char why[RV_STOP_REASON_MAX];
    rv_stop_reason(&db->stop, why, sizeof why);
    rv_db_log(db, "writes stopped until reopen: %s", why);
}

/* ------------------------------------------------------------ open */

static void db_free(ravel_db *db)
{
    rv_reader_close(db); /* its thread, if open got that far */
    /* a stall this database caused must not outlive it */
    rv_wc_detach(&db->wc_member);
    void *txn_state = atomic_load_explicit(&db->txn.state,
                                           memory_order_acquire);
    if (txn_state)
        db->txn.destroy(txn_state);
    rv_read_epoch_drain(&db->read.epoch);
    if (db->read.current)
        rv_version_unref(db->read.current);
    rv_manifest_close(db->manifest.log);
    rv_table_cache_free(db->tables);
    if (db->block_cache)
        rv_cache_unref(db->block_cache);
    rv_options_release(&db->options);
    rv_lockfile_release(&db->lock);
    if (db->log_fd >= 0)
        close(db->log_fd);
    rv_write_queue_destroy(&db->write.queue);
    rv_write_queue_destroy(&db->write.commit_queue);
    rv_write_ordering_destroy(db);
    rv_stop_destroy(&db->stop);
    pthread_cond_destroy(&db->mu.bg.cv);
    pthread_cond_destroy(&db->mu.bg.flush_cv);
    pthread_cond_destroy(&db->mu.compact.cv);
    rv_mutex_destroy(&db->manifest.lock);
    rv_prepared_destroy(&db->prepared);
    rv_feed_destroy(&db->feed);
    rv_mutex_destroy(&db->txn.make);
    rv_mutex_destroy(&db->reader.catch_up);
    pthread_mutex_destroy(&db->reader.wake_mu);
    pthread_cond_destroy(&db->reader.wake);
    rv_mutex_destroy(&db->mu.lock);
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        free(db->mu.compact.pointer[l].key);
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
        rv_options_copy(&db->options, opts);
    else
        rv_options_init_defaults(&db->options);
    db->dir = strdup(dir);
    rv_memtable *mem = rv_memtable_new(db->options.write_buffer_size);
    struct rv_files *files = rv_files_new_empty();
    db->read.current = mem && files ? rv_version_new(mem, 0, 0, files) : NULL;
    if (mem)
        rv_memtable_unref(mem); /* the version holds it */
    if (files)
        rv_files_unref(files);
    if (!db->dir || !db->read.current) {
        if (db->read.current)
            rv_version_unref(db->read.current);
        rv_options_release(&db->options);
        free(db->dir);
        free(db);
        return NULL;
    }
    rv_read_epoch_init(&db->read.epoch);
    db->magic = RV_DB_MAGIC;
    db->lock.fd = -1;
    db->log_fd = -1;
    db->session_id = rv_random_id();
    rv_mutex_init(&db->mu.lock);
    pthread_cond_init(&db->mu.bg.cv, NULL);
    pthread_cond_init(&db->mu.bg.flush_cv, NULL);
    pthread_cond_init(&db->mu.compact.cv, NULL);
    rv_mutex_init(&db->manifest.lock);
    rv_prepared_init(&db->prepared);
    rv_feed_init(&db->feed);
    rv_mutex_init(&db->txn.make);
    rv_mutex_init(&db->reader.catch_up);
    pthread_mutex_init(&db->reader.wake_mu, NULL);
    pthread_cond_init(&db->reader.wake, NULL);
    rv_stop_init(&db->stop);
    rv_write_queue_init(&db->write.queue);
    rv_write_queue_init(&db->write.commit_queue);
    return db;
}

/* ------------------------------------------------------------ files */

/* The last reference to table file F is gone: unpin its open table, and
** if it is obsolete (or F is a reader's: reader.c), close it, and if it
** is obsolete delete it. */
static void db_file_release(void *ctx, struct rv_file *f)
{
    ravel_db *db = ctx;
    rv_table_cache_unpin(db->tables, f);
    /* A reader's table may be a file the writer deleted: its descriptor
    ** (a dup of the one F held) must not keep the space in the cache. */
    if (f->hold_fd >= 0)
        rv_table_cache_evict(db->tables, f->meta.number);
    if (!atomic_load_explicit(&f->obsolete, memory_order_acquire))
        return;
    rv_table_cache_evict(db->tables, f->meta.number);
    char path[RV_PATH_MAX];
    if (rv_table_file_path(path, db->dir, f->meta.number) == 0 &&
        unlink(path) != 0 && errno != ENOENT)
        rv_db_log(db, "could not delete obsolete table file %s: %s", path,
                  strerror(errno));
}

struct rv_file *rv_db_new_file(ravel_db *db, const struct rv_file_meta *m)
{
    return rv_file_new(m, db_file_release, db);
}

/* The block cache (the options' shared one, or one of its own) and the
** cache of open tables. */
static int db_open_caches(ravel_db *db)
{
    int rc = RAVEL_OK;
    if (db->options.block_cache) {
        db->block_cache = db->options.block_cache;
        rv_cache_ref(db->block_cache);
    } else if (db->options.block_cache_size > 0) {
        rc = rv_cache_new((size_t)db->options.block_cache_size,
                          &db->block_cache);
    }
    if (rc)
        return rc;
    struct rv_table_read_options ro = {
        .verify_checksums = db->options.verify_checksums,
        .block_cache = db->block_cache,
        .allow_mmap_reads = db->options.allow_mmap_reads,
    };
    return rv_table_cache_new(db->dir, db->options.max_open_files, &ro,
                              &db->tables);
}

/* After recovery: a large recovered memtable is switched out at once, so
** a background flush writes it and the WAL it came from can go. */
static int db_flush_recovered(ravel_db *db, uint64_t segment)
{
    rv_memtable *mem = db->read.current->mem;
    if (rv_memtable_memory_usage(mem) < db->options.write_buffer_size / 4 ||
        rv_memtable_is_empty(mem))
        return RAVEL_OK;
    rv_memtable *fresh = rv_memtable_new(db->options.write_buffer_size);
    if (!fresh)
        return rv_error(RAVEL_NOMEM, "out of memory creating a memtable");
    int rc = rv_db_install_memtable(db, fresh, segment);
    rv_memtable_unref(fresh);
    return rc;
}

/* Attaches the database to the options' shared write controller, or to
** one of its own, and registers what it asks for already (recovered
** level 0 files may call for a slowdown). */
static int db_attach_write_controller(ravel_db *db)
{
    struct ravel_write_controller *wc = db->options.write_controller;
    int rc = RAVEL_OK;
    if (wc)
        rv_write_controller_ref(wc);
    else
        rc = rv_write_controller_new(db->options.delayed_write_rate, &wc);
    if (rc)
        return rc;
    rv_wc_attach(wc, &db->wc_member);
    rv_write_controller_unref(wc); /* the membership holds it */
    rv_mutex_lock(&db->mu.lock);
    rv_write_stall_update_locked(db);
    rv_mutex_unlock(&db->mu.lock);
    return RAVEL_OK;
}

static void db_log_open(ravel_db *db)
{
    char why[RV_WAL_IO_WHY_MAX] = "";
    const char *io = db->write.wal
        ? rv_wal_io_mode(db->write.wal, why, sizeof why) : "none";
    rv_db_log(db, "opened %s%s; WAL I/O: %s%s%s; write ordering: %s",
              db->dir, db->options.read_only ? " read-only" : "", io,
              *why ? " -- " : "", why,
              rv_write_ordering_name(db->write.ordering));
}

int ravel_open(const char *dir, const ravel_options *opts, ravel_db **out)
{
    if (!dir || !*dir || !out)
        return rv_error(RAVEL_INVALID, "ravel_open: %s",
                        !out ? "out is NULL" : "directory name is empty or "
                        "NULL");
    *out = NULL;
    ravel_db *db = db_alloc(dir, opts);
    if (!db)
        return rv_error(RAVEL_NOMEM, "out of memory opening %s", dir);

    int rc = rv_options_check(&db->options);
    if (rc == RAVEL_OK)
        rc = rv_db_prepare_dir(db);
    if (rc)
        goto out;
    if (!db->options.read_only)
        db->log_fd = rv_log_open(db->dir);
    rc = db_open_caches(db);
    if (rc == RAVEL_OK)
        rc = db->options.read_only ? rv_reader_open(db) : rv_db_recover(db);
    if (rc == RAVEL_OK)
        rc = rv_write_ordering_init(db);
    db->write.active_mem = db->read.current->mem;
    db->write.active_mem_wal = db->read.current->mem_wal;
    uint64_t segment = db->write.next_segment;
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = rv_wal_open(db->dir, db->write.next_segment++,
                         db->write.wal_prev_end,
                         &db->options, &db->stop, &db->write.wal);
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = db_flush_recovered(db, segment);
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = db_attach_write_controller(db);
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = rv_bg_start(db);
    if (rc)
        goto out;
    atomic_store_explicit(&db->write.last_visible_seq, db->write.last_seq,
                          memory_order_relaxed);
    db_log_open(db);
    *out = db;
out:
    if (rc) {
        if (db->write.wal)
            rv_wal_close(db->write.wal);
        db_free(db);
    }
    return rc;
}

/* Below this many bytes of memtables, close leaves them to the WAL: the
** next open replays them in a few milliseconds... */
#define DB_CLOSE_FLUSH_MIN (1u << 20)
/* ... unless the WAL they hold has grown to this many segments: each open
** starts a segment, so a small database opened again and again (a
** shell's scripts) would otherwise gather one per session, every one
** replayed by every open, without end. */
#define DB_CLOSE_FLUSH_SEGMENTS 4

/* Unless avoid_flush_during_shutdown, flushes the memtables before close
** when they are large, so that the next open replays almost nothing (a
** flush writes sorted data sequentially: several times faster than the
** replay it saves), when the WAL spans DB_CLOSE_FLUSH_SEGMENTS segments,
** or when RAVEL_NO_WAL writes were made since the open: the WAL does not
** hold those.  A failure is logged: the WAL still holds the rest. */
static void db_flush_at_close(ravel_db *db)
{
    if (db->options.read_only || db->options.avoid_flush_during_shutdown ||
        rv_stop_code(&db->stop))
        return;
    struct rv_version *v = rv_db_ref_version(db);
    size_t bytes = rv_memtable_memory_usage(v->mem);
    for (int i = 0; i < v->n_imm; i++)
        bytes += rv_memtable_memory_usage(v->imm[i]);
    rv_version_unref(v);
    /* relaxed: written by leaders that completed before the gate closed */
    int nowal = atomic_load_explicit(&db->stats.nowal_writes,
                                     memory_order_relaxed) > 0;
    /* next_segment: no write-group leader is left once the gate closed */
    rv_mutex_lock(&db->mu.lock);
    uint64_t segments = db->write.next_segment - db->mu.files.log_number;
    rv_mutex_unlock(&db->mu.lock);
    if (bytes < DB_CLOSE_FLUSH_MIN && !nowal &&
        segments < DB_CLOSE_FLUSH_SEGMENTS)
        return;
    if (rv_db_flush(db, 0) != RAVEL_OK)
        rv_db_log(db, "the flush at close failed (the WAL keeps the data "
                  "for the next open): %s", rv_errmsg_get());
}

/* After the WAL was sealed: records in the manifest that the database
** closed cleanly with its log ending in SEGMENT, so that an open can tell
** that segment's loss -- deleted, or cut at a record boundary, which takes
** its seal -- from a crash (docs/formats.md, "Replay and the recovery
** modes").  The seal is durable before the record is written. */
static int db_record_clean_close(ravel_db *db, uint64_t segment)
{
    struct rv_version_edit e;
    rv_version_edit_init(&e);
    e.closed_segment = segment;
    int rc = rv_db_log_edit(db, &e);
    rv_version_edit_clear(&e);
    return rc;
}

int ravel_close(ravel_db *db)
{
    if (!db)
        return RAVEL_OK;
    int rc = rv_db_check(db, "ravel_close");
    if (rc == RAVEL_OK)
        rc = db_gate_close(db);
    if (rc)
        return rc;
    /* No call is in progress now, so the counts are stable; and no write
    ** is queued or waiting for an fdatasync. */
    rv_mutex_lock(&db->mu.lock);
    int snaps = db->mu.snapshots.live;
    int iters = atomic_load_explicit(&db->read.live_iterators,
                                     memory_order_acquire);
    rv_mutex_unlock(&db->mu.lock);
    if (snaps || iters) {
        rc = rv_error(RAVEL_INVALID, "ravel_close: %d snapshot(s) and %d "
                      "iterator(s) are still open; release them first",
                      snaps, iters);
        db_gate_reopen(db);
        return rc;
    }

    db_flush_at_close(db);
    /* A running flush finishes; memtables not yet flushed stay in their
    ** WAL segments for the next open. */
    rv_bg_stop(db);
    rv_reader_close(db);
    uint64_t segment = db->write.wal ? rv_wal_segment_number(db->write.wal) : 0;
    rc = rv_wal_close(db->write.wal);
    if (rc == RAVEL_OK && segment && db->manifest.log &&
        !db->options.read_only && !rv_stop_code(&db->stop))
        rc = db_record_clean_close(db, segment);
    rv_db_log(db, "closed%s%s", rc ? ": " : "", rc ? rv_errmsg_get() : "");
    db_free(db);
    return rc;
}
