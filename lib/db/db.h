/*
** db.h -- the database handle, shared by the files of lib/db/:
**   db.c          the handle: open, close, checking a handle
**   db_dir.c      the directory: creating it, IDENTITY
**   recovery.c    reading the manifest and replaying the WAL on open
**   version.c     the memtables and files reads see (version.h)
**   table_cache.c the open table files
**   bg.c          the background threads and the jobs they run
**   flush.c       writing an immutable memtable to table files
**   db_write.c    the write path; write_group.c forms the groups
**   db_read.c     gets, snapshots, iterators
**   properties.c  ravel_property
**
** Visibility: last_visible_seq is the sequence number reads and snapshots
** use.  In the default (ordered) mode it advances only when a whole write
** group has been inserted, so a batch is all-or-nothing to readers and a
** snapshot never changes.  A group one of whose inserts failed is never
** published (writes stop with it, so no later group publishes past it).
*/
#ifndef RAVEL_DB_H
#define RAVEL_DB_H

#include "ravel_int.h"
#include "util/mutex.h"
#include "base/commit_table.h"
#include "db/compaction_picker.h"
#include "db/manifest.h"
#include "db/order_ring.h"
#include "db/read_epoch.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "db/visibility.h"
#include "util/lockfile.h"
#include "util/write_controller.h"
#include "db/write_group.h"
#include "memtable/memtable.h"
#include "base/options.h"
#include "util/stop.h"
#include "wal/wal_writer.h"

#include <pthread.h>

#define RV_DB_MAGIC 0x7261766c64624f4bull  /* alive */
#define RV_DB_DEAD 0x7261766c64624445ull   /* closed */

struct ravel_db {
    uint64_t magic;                 /* RV_DB_MAGIC while open */
    char *dir;
    struct ravel_options options;
    struct rv_lockfile lock;        /* DIR/LOCK, held while open */
    int log_fd;                     /* LOG file, -1 if it could not open */

    /* API calls in progress, plus a closing flag in the top bit (db.c,
    ** "the gate"); also the futex word ravel_close sleeps on.  Atomic:
    ** rv_db_enter/rv_db_leave and ravel_close. */
    _Atomic uint32_t gate;

    /* Write path. */
    struct rv_write_queue queue;
    rv_wal *wal;                    /* NULL when read_only */
    /* The last sequence assigned: by the write-group leader, and with
    ** write_prepared also by the commit-queue leader (compare-and-swap).
    ** Others read it for statistics and the manifest. */
    _Atomic uint64_t last_seq;
    uint64_t next_segment;          /* leader only */
    uint64_t wal_prev_end;          /* set by recovery: where the data of
                                    ** the last replayed segment ends, the
                                    ** first new segment's prev_end */
    /* The sequence reads and snapshots use: published (release) by the
    ** group completer (ordered), the leader (unordered), the batch poppers
    ** (in-order publication) or the commit-queue leader (write_prepared,
    ** where it is RocksDB's last_published_seq). */
    _Atomic uint64_t last_visible_seq;

    /* Ordering modes (docs/ordering.md, db_write.c). */
    enum rv_write_ordering ordering;
    /* Released members still inserting (unordered modes): a memtable
    ** switch waits for 0 (RocksDB's pending_memtable_writes and
    ** switch_cv_); a futex word, with switch_waiting set while the
    ** leader sleeps on it. */
    _Atomic uint32_t pending_inserts;
    _Atomic uint32_t switch_waiting;
    /* Batches in sequence order until published (in-order publication)
    ** or committed (write_prepared). */
    struct rv_order_ring order_ring;
    _Atomic int publish_failed;     /* in-order: an insert failed, nothing
                                    ** past it is ever published */
    /* write_prepared: the second write queue (commits), the commit table,
    ** and the commit watermark: every batch prepared at or below it has
    ** committed, at or below last_visible_seq (raised after it). */
    struct rv_write_queue commit_queue;
    struct rv_commit_table commit_table;
    _Atomic uint64_t commit_watermark;

    /* Writes stopped by a failure (util/stop.h): the one record of it,
    ** shared with the WAL writer, which records its I/O failures there. */
    struct rv_stop stop;
    _Atomic int stop_logged;        /* 1 once the LOG has the stop; xchg */

    rv_mutex mu;             /* guards current and the fields
                                    ** below, up to the statistics */
    struct rv_version *_Atomic current; /* written under mu; readers load
                                    ** it inside the read epoch */
    struct rv_read_epoch epoch;     /* what keeps replaced versions alive
                                    ** for the readers that loaded them */
    /* current->mem and current->mem_wal, written under mu by the leader
    ** that switches memtables, read by leaders alone without the lock. */
    rv_memtable *active_mem;
    uint64_t active_mem_wal;
    int live_snapshots;
    _Atomic int live_iterators;     /* atomic, not under mu */
    struct ravel_snapshot *snapshots; /* live snapshots, a list */

    /* Table files (mu).  log_number: WAL segments below it hold only
    ** flushed data (the manifest says so); next_file_number: the next
    ** table or manifest number. */
    uint64_t log_number;
    uint64_t next_file_number;
    rv_manifest *manifest;          /* flushes, compactions and close
                                    ** append, one edit at a time
                                    ** (manifest_mu) */
    rv_table_cache *tables;
    struct rv_cache *block_cache;   /* NULL when block_cache_size is 0 */

    /* Background jobs (bg.c; mu).  bg_cv: a job may be ready (or
    ** shutdown); flush_cv: a flush finished, or failed. */
    pthread_cond_t bg_cv;
    pthread_cond_t flush_cv;
    pthread_t *bg_threads;
    int n_bg_threads;
    int bg_shutdown;
    int flush_running;              /* one flush at a time, oldest first */

    /* Compactions (compaction.c, compaction_picker.h; mu).  The manifest
    ** takes one edit at a time (manifest_mu, inside no other lock);
    ** compact_cv: a compaction ended. */
    rv_mutex manifest_mu;
    pthread_cond_t compact_cv;
    struct rv_compaction *running_compactions;
    int n_running_compactions;
    struct rv_key_pointer compact_pointer[RV_NUM_LEVELS];
    int compaction_failures;        /* in a row; writes stop at 5 */
    uint64_t compaction_retry_at;   /* monotonic micros: no automatic
                                    ** compaction before, after a failure */
    _Atomic int compaction_abort;   /* close: running ones give up */

    /* The write controller (write_stall.c): this database's membership,
    ** and what it asks for now (mu). */
    struct rv_wc_member wc_member;
    enum rv_wc_state stall_state;
    enum rv_stall_cause stall_cause;
    uint64_t stall_rate;            /* bytes/s asked while delaying */
    uint64_t stall_prev_debt;       /* pending bytes at the last update */
    int stall_prev_l0;              /* level 0 files at the last update */
    int memtables_full;             /* a leader waits for a flush to make
                                    ** room for a memtable */
    uint64_t stall_since;           /* monotonic micros the state began */

    /* Statistics (relaxed). */
    _Atomic uint64_t stat_memtable_switches;
    _Atomic uint64_t stat_nowal_writes;
    _Atomic uint64_t stat_flushes;
    _Atomic uint64_t stat_flush_bytes;     /* table bytes written */
    _Atomic uint64_t stat_flush_entries;   /* entries written */
    _Atomic uint64_t stat_flush_dropped;   /* versions no reader can see */
    _Atomic uint64_t stat_flush_micros;
    _Atomic uint64_t stat_stalls;          /* groups that waited for room */
    _Atomic uint64_t stat_stall_micros;
    _Atomic uint64_t stat_bg_errors;
    _Atomic uint64_t stat_filter_useful;   /* table lookups a filter saved */
    _Atomic uint64_t stat_wal_deleted;     /* obsolete segments deleted */
    _Atomic uint64_t stat_switch_waits;    /* switches that waited for
                                           ** released inserts */
    _Atomic uint64_t stat_publish_waits;   /* writers that waited for an
                                           ** earlier batch to publish */
    _Atomic uint64_t stat_window_waits;    /* leaders that waited for room
                                           ** in the order ring or the
                                           ** commit window */
    _Atomic uint64_t stat_stale_reads;     /* gets started again (an
                                           ** evicted commit entry) */
    _Atomic uint64_t stat_user_bytes;      /* batch bytes written */
    /* compactions, by output level */
    _Atomic uint64_t stat_compactions[RV_NUM_LEVELS];
    _Atomic uint64_t stat_compact_read[RV_NUM_LEVELS];
    _Atomic uint64_t stat_compact_written[RV_NUM_LEVELS];
    _Atomic uint64_t stat_compact_micros[RV_NUM_LEVELS];
    _Atomic uint64_t stat_compact_moves;
    _Atomic uint64_t stat_compact_dropped;  /* versions and deletions */
    /* the write controller: micros writers waited, by cause */
    _Atomic uint64_t stat_stop_micros[RV_CAUSE_COUNT];
    _Atomic uint64_t stat_delay_micros[RV_CAUSE_COUNT];
    _Atomic uint64_t stat_busy;            /* writes refused: RAVEL_BUSY */
};

/* A live snapshot (db_read.c), in db->snapshots.  Its view never
** changes (visibility.h); HIDDEN is the view's own copy of what it
** hides (write_prepared), or NULL. */
struct ravel_snapshot {
    ravel_db *db;
    struct rv_read_view view;
    struct rv_seq_range *hidden;
    struct ravel_snapshot *prev, *next;
};

/* What a flush must know of a live snapshot's view: every version at or
** below ALL_BELOW is visible to it, none above SEQ; between the two
** (write_prepared only) it depends. */
struct rv_snapshot_bounds {
    uint64_t all_below, seq;
};

/* Checks that DB is a live handle; sets the message otherwise. */
RAVEL_PRIVATE int rv_db_check(ravel_db *db, const char *fn);

/* Every API call taking a ravel_db begins with rv_db_enter (FN names it
** in messages) and, if that returned RAVEL_OK, ends with rv_db_leave.
** rv_db_enter checks the handle and returns RAVEL_INVALID "closing" once
** ravel_close has begun; ravel_close waits until every call that entered
** before it has left. */
RAVEL_PRIVATE int rv_db_enter(ravel_db *db, const char *fn);
RAVEL_PRIVATE void rv_db_leave(ravel_db *db);

#ifdef RAVEL_TEST_HOOKS
/* For tests: the number of calls between rv_db_enter and rv_db_leave, and
** in *CLOSING (if not NULL) whether ravel_close has begun. */
RAVEL_PRIVATE uint32_t rv_db_calls_in_progress(ravel_db *db, int *closing);

/* For tests: the writers waiting in the main write queue behind its
** leader. */
RAVEL_PRIVATE int rv_db_writers_queued(ravel_db *db);
#endif

/* The current version with a reference taken (version.c). */
RAVEL_PRIVATE struct rv_version *rv_db_ref_version(ravel_db *db);

/* The current version without a reference, for a short read: valid until
** rv_db_unpin_version(db, *TOKEN).  No lock (read_epoch.h). */
RAVEL_PRIVATE struct rv_version *rv_db_pin_version(ravel_db *db,
                                                   unsigned *token);
RAVEL_PRIVATE void rv_db_unpin_version(ravel_db *db, unsigned token);

/* The memtable the write-group leader inserts into.  Leader only. */
RAVEL_PRIVATE rv_memtable *rv_db_active_memtable(ravel_db *db);

/* 1 if MEM holds no entry. */
RAVEL_PRIVATE int rv_db_memtable_is_empty(rv_memtable *mem);

/* Installs a version whose active memtable is MEM (a fresh one), moving
** the previous active memtable to the immutable list.  Leader only. */
RAVEL_PRIVATE int rv_db_install_memtable(ravel_db *db, rv_memtable *mem,
                                         uint64_t wal_segment);

/* Appends E to the manifest, with the next file number and the last
** sequence as of now, and makes it durable (version.c).  Flushes and
** compactions append one at a time (db->manifest_mu). */
RAVEL_PRIVATE int rv_db_log_edit(ravel_db *db, struct rv_version_edit *e);

/* Under db->mu: installs a version whose files are the current ones with
** E applied (its files added, its deleted ones removed) and, if FLUSHED is
** not NULL, without that immutable memtable; then updates the write
** controller's view of the database (version.c). */
RAVEL_PRIVATE int rv_db_install_edit_locked(ravel_db *db,
                                            rv_memtable *flushed,
                                            const struct rv_version_edit *e)
    RV_REQUIRES(db->mu);

/* ravel_flush without the gate (db_write.c): close calls it. */
RAVEL_PRIVATE int rv_db_flush(ravel_db *db, int flags);

/* Starts the background threads (bg.c); stops them, letting a running
** job finish and starting no other. */
RAVEL_PRIVATE int rv_bg_start(ravel_db *db);
RAVEL_PRIVATE void rv_bg_stop(ravel_db *db);

/* Runs compaction C, picked under db->mu (compaction.c): registers it
** as running, drops the lock while it merges, retakes it to install the
** result, and releases C.  On failure the inputs stay; a failed manifest
** append stops writes, other failures stop them after 5 in a row. */
RAVEL_PRIVATE int rv_compaction_run_locked(ravel_db *db,
                                           struct rv_compaction *c)
    RV_REQUIRES(db->mu);

/* Under db->mu: recomputes what the database asks of the write
** controller from its current version (write_stall.c). */
RAVEL_PRIVATE void rv_write_stall_update_locked(ravel_db *db)
    RV_REQUIRES(db->mu);

/* Admits a write group of BYTES whose last member is LAST
** (write_stall.c): waits as the write controller says, or returns
** RAVEL_BUSY (no message: the writers refused report it) for
** NO_SLOWDOWN; RAVEL_READONLY (message set) if writes stop meanwhile.
** Before waiting, fails the RAVEL_NO_SLOWDOWN writers queued behind LAST
** (rv_write_stall_fail_no_slowdown). */
RAVEL_PRIVATE int rv_write_stall_admit(ravel_db *db, uint64_t bytes,
                                       int no_slowdown,
                                       struct rv_writer *last);
RAVEL_PRIVATE void rv_write_stall_fail_no_slowdown(ravel_db *db,
                                                   struct rv_writer *last);

/* 1 if the write controller holds writes back now (a slowdown or a stop;
** one relaxed load, a hint): a group is admitted only then, and a
** RAVEL_NO_SLOWDOWN write is refused before it queues. */
RAVEL_PRIVATE int rv_write_stall_active(ravel_db *db);

/* Text of the compaction properties (compaction_stats.c), malloc'd or
** NULL on OOM: ravel.levelstats, the compaction and write-controller
** lines of ravel.stats. */
RAVEL_PRIVATE char *rv_levelstats_text(ravel_db *db);
RAVEL_PRIVATE char *rv_compaction_stats_text(ravel_db *db);
RAVEL_PRIVATE uint64_t rv_db_pending_compaction_bytes(ravel_db *db);
RAVEL_PRIVATE int rv_db_compaction_pending(ravel_db *db);
RAVEL_PRIVATE int rv_db_running_compactions(ravel_db *db);
/* The write controller's enforced state and rate (0 unless delayed). */
RAVEL_PRIVATE enum rv_wc_state rv_db_write_controller_state(ravel_db *db,
                                                            uint64_t *rate);

/* Flushes the oldest immutable memtable of the current version (flush.c).
** Called by a background thread with db->mu held and flush_running set;
** drops and retakes the lock.  On failure writes are stopped. */
RAVEL_PRIVATE void rv_flush_run_locked(ravel_db *db)
    RV_REQUIRES(db->mu);

/* Makes a version-edit file of META and the callbacks that delete its
** file once obsolete and unused (db.c; used by recovery, flushes and
** compactions). */
RAVEL_PRIVATE struct rv_file *rv_db_new_file(ravel_db *db,
                                             const struct rv_file_meta *m);

/* The bounds of the live snapshots' views, ascending by ALL_BELOW, in a
** new array (*N of them); under db->mu.  NULL with *N = 0 when there are
** none or memory ran out (*NOMEM set then). */
RAVEL_PRIVATE struct rv_snapshot_bounds *
rv_db_snapshot_list_locked(ravel_db *db, int *n, int *nomem)
    RV_REQUIRES(db->mu);

/* Stops writes after a failure with result code RC (RAVEL_IOERR,
** RAVEL_NOMEM, ...) and message REASON: every later write returns
** RAVEL_READONLY naming the reason, kept for ravel.read_only_reason.
** The first failure wins (the WAL may have recorded it already). */
RAVEL_PRIVATE void rv_db_stop_writes(ravel_db *db, int rc,
                                     const char *reason);

/* Prepares the directory (db_dir.c): creates it and IDENTITY when asked
** and allowed, or checks they are there; takes the LOCK. */
RAVEL_PRIVATE int rv_db_prepare_dir(ravel_db *db);

/* Reads the manifest and replays the WAL segments it does not cover
** into the active memtable; then, unless read-only, starts a new manifest
** and deletes obsolete files (recovery.c). */
RAVEL_PRIVATE int rv_db_recover(ravel_db *db);

/* Deletes WAL segments FROM .. TO-1 (flushed: their data is in table
** files the manifest names).  Best effort: a segment left behind is
** deleted by the next open. */
RAVEL_PRIVATE void rv_db_delete_wal_segments(ravel_db *db, uint64_t from,
                                             uint64_t to);

/* Appends a timestamped line to the LOG file of the database. */
RAVEL_PRIVATE void rv_db_log(ravel_db *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* RAVEL_DB_H */
