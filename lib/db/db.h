/*
** db.h -- the database handle (struct ravel_db) and the few functions
** every file of lib/db/ shares: the call gate, versions, the manifest
** edit, stopping writes, the LOG.
**
** The handle's state is grouped by what protects it (the comment on
** struct ravel_db); each group's type is declared field by field, saying
** who writes it and what protects it, in its subsystem's header:
** db_write.h (the write path), db_read.h (what reads load, the
** snapshots), version.h (the file numbering), bg.h, compaction.h,
** write_stall.h, db_stats.h.  Every file of lib/db/ that defines an rv_
** function has its header; docs/design.md maps them all.
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
#include "base/options.h"
#include "db/bg.h"
#include "db/compaction.h"
#include "db/compaction_stats.h"
#include "db/db_dir.h"
#include "db/db_read.h"
#include "db/prepared.h"
#include "db/updates.h"
#include "db/db_stats.h"
#include "db/db_write.h"
#include "db/flush.h"
#include "db/manifest.h"
#include "db/reader.h"
#include "db/recovery.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "db/visibility.h"
#include "db/write_stall.h"
#include "util/cache.h"
#include "util/lockfile.h"
#include "util/mutex.h"
#include "util/stop.h"
#include "util/write_controller.h"

#include <pthread.h>

#define RV_DB_MAGIC 0x7261766c64624f4bull  /* alive */
#define RV_DB_DEAD 0x7261766c64624445ull   /* closed */

/* The database handle.  Its state is grouped by what protects it, so that
** every use names the lock or the rule: db->mu.bg.flush_running is read
** and written with db->mu.lock held, db->write.next_segment by the
** write-group leader alone, db->stats.flushes with relaxed atomics.  Each
** group's type is declared, field by field, in its subsystem's header. */
struct ravel_db {
    /* Fixed after open: set by ravel_open before any other thread exists,
    ** read by everyone without a lock, released by close. */
    uint64_t magic;                 /* RV_DB_MAGIC while open */
    char *dir;
    struct ravel_options options;
    struct rv_lockfile lock;        /* DIR/LOCK, held while open for
                                    ** writing (fd -1 in a reader) */
    int log_fd;                     /* LOG file, -1 if it could not open */
    uint64_t session_id;            /* random, drawn at each open: every
                                    ** table file this handle writes holds
                                    ** it (ravel.session_id, table_format.h) */
    rv_table_cache *tables;         /* has its own locks (table_cache.h) */
    struct rv_cache *block_cache;   /* NULL when block_cache_size is 0;
                                    ** its own locks (util/cache.h) */
    /* This database's membership of its write controller: attached at
    ** open, detached at close; what it asks and is granted are the
    ** controller's, under its own lock (util/write_controller.h). */
    struct rv_wc_member wc_member;

    /* API calls in progress, plus a closing flag in the top bit (db.c,
    ** "the gate"); also the futex word ravel_close sleeps on.  Atomic:
    ** rv_db_enter/rv_db_leave and ravel_close. */
    _Atomic uint32_t gate;

    /* The write path: the leader's and the ordering modes' state
    ** (db_write.h). */
    struct rv_db_write write;

    /* Writes stopped by a failure (util/stop.h): the one record of it,
    ** shared with the WAL writer, which records its I/O failures there. */
    struct rv_stop stop;
    _Atomic int stop_logged;        /* 1 once the LOG has the stop; xchg */

    /* What reads load without a lock (db_read.h). */
    struct rv_db_read read;

    /* Everything below mu.lock is read and written with it held. */
    struct {
        rv_mutex lock;
        struct rv_db_snapshot_list snapshots; /* db_read.h */
        struct rv_db_files files;             /* version.h */
        struct rv_db_bg bg;                   /* bg.h */
        struct rv_db_compactions compact;     /* compaction.h */
        struct rv_db_stall stall;             /* write_stall.h */
    } mu;

    /* The manifest takes one edit at a time: flushes, compactions and
    ** close append under manifest.lock, which is taken inside no other
    ** lock (mu.lock is never held while waiting for it). */
    struct {
        rv_mutex lock;
        rv_manifest *log;
    } manifest;

    /* Close sets it: running compactions give up.  Atomic. */
    _Atomic int compaction_abort;

    /* Statistics: relaxed atomic counters (db_stats.h). */
    struct rv_db_stats stats;

    /* Transactions (lib/txn/, a layer above this one): their shared state,
    ** made by the first ravel_txn_begin under MAKE (published with
    ** release, read with acquire), and the function close frees it with
    ** (written under MAKE before STATE is published). */
    struct {
        rv_mutex make;
        _Atomic(void *) state;
        void (*destroy)(void *state);
        /* A plain write (ravel_write, ravel_put, ravel_delete) once STATE
        ** exists: locks the keys of B as a transaction would (waiting for
        ** the transactions that hold them), *HELD receiving what unlock
        ** releases; the code (RAVEL_TIMEDOUT, RAVEL_DEADLOCK, ...) and
        ** nothing held on failure.  Set with DESTROY. */
        int (*lock_batch)(void *state, ravel_db *db,
                          const struct ravel_batch *b, void **held);
        void (*unlock_batch)(void *state, void *held);
    } txn;

    /* Prepared transactions' files and list (prepared.h; its own lock). */
    struct rv_db_prepared prepared;

    /* A read_only handle's following of the writer (reader.h; its own
    ** locks). */
    struct rv_db_reader reader;

    /* The change feed's segment index (updates.h; its own lock). */
    struct rv_db_feed feed;
};

/* The functions of the subsystems that run with db->mu.lock held are
** declared here, after struct ravel_db, because clang reads the lock named
** in their attribute (util/mutex.h) where they are declared. */

/* Runs compaction C, picked under db->mu.lock (compaction.c): registers it
** as running, drops the lock while it merges, retakes it to install the
** result, and releases C.  On failure the inputs stay; a failed manifest
** append stops writes, other failures stop them after
** RV_COMPACTION_MAX_FAILURES in a row (compaction.h). */
RAVEL_PRIVATE int rv_compaction_run_locked(ravel_db *db,
                                           struct rv_compaction *c)
    RV_REQUIRES(db->mu.lock);

/* Flushes the oldest immutable memtable of the current version (flush.c).
** Called by a background thread with db->mu.lock held and flush_running set;
** drops and retakes the lock.  On failure writes are stopped. */
RAVEL_PRIVATE void rv_flush_run_locked(ravel_db *db)
    RV_REQUIRES(db->mu.lock);

/* Under db->mu.lock: recomputes what the database asks of the write
** controller from its current version (write_stall.c). */
RAVEL_PRIVATE void rv_write_stall_update_locked(ravel_db *db)
    RV_REQUIRES(db->mu.lock);

/* A live snapshot (db_read.c), in db->mu.snapshots.list.  Its view never
** changes (visibility.h); HIDDEN is the view's own copy of what it
** hides (write_prepared), or NULL. */
struct ravel_snapshot {
    ravel_db *db;
    struct rv_read_view view;
    struct rv_seq_range *hidden;
    /* A reader's (read_only, db/reader.c): the version current when it
    ** was taken, referenced, which its reads use -- a catch-up installs
    ** versions whose files the writer compacted without knowing of this
    ** snapshot.  NULL in a writer, whose flushes keep what snapshots see.
    ** Set at acquire, fixed. */
    struct rv_version *version;
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

/* Under db->mu.lock: installs a version whose files are the current ones with
** E applied (its files added, its deleted ones removed) and, if FLUSHED is
** not NULL, without that immutable memtable; then updates the write
** controller's view of the database (version.c). */
RAVEL_PRIVATE int rv_db_install_edit_locked(ravel_db *db,
                                            rv_memtable *flushed,
                                            const struct rv_version_edit *e)
    RV_REQUIRES(db->mu.lock);

/* Under db->mu.lock: makes V (a reference handed over) the current
** version, retiring the old one until no read holds it (a reader's
** catch-up, reader.c; version.c). */
RAVEL_PRIVATE void rv_db_install_version_locked(ravel_db *db,
                                                struct rv_version *v)
    RV_REQUIRES(db->mu.lock);

/* Under db->reader.catch_up (a reader's, from the callback of
** rv_reader_catch_up_then): the highest file number the reader knows of
** besides its table files' (its manifest's, its log number, the last WAL
** segment it read) (reader.c). */
RAVEL_PRIVATE uint64_t rv_reader_top_number_locked(ravel_db *db)
    RV_REQUIRES(db->reader.catch_up);

/* Makes a version-edit file of META and the callbacks that delete its
** file once obsolete and unused (db.c; used by recovery, flushes and
** compactions). */
RAVEL_PRIVATE struct rv_file *rv_db_new_file(ravel_db *db,
                                             const struct rv_file_meta *m);

/* The bounds of the live snapshots' views, ascending by ALL_BELOW, in a
** new array (*N of them); with db->mu.lock held.  NULL with *N = 0 when
** there are none or memory ran out (*NOMEM set then). */
RAVEL_PRIVATE struct rv_snapshot_bounds *
rv_db_snapshot_list_locked(ravel_db *db, int *n, int *nomem)
    RV_REQUIRES(db->mu.lock);

/* Stops writes after a failure with result code RC (RAVEL_IOERR,
** RAVEL_NOMEM, ...) and message REASON: every later write returns
** RAVEL_READONLY naming the reason, kept for ravel.read-only-reason.
** The first failure wins (the WAL may have recorded it already). */
RAVEL_PRIVATE void rv_db_stop_writes(ravel_db *db, int rc,
                                     const char *reason);

/* Appends a timestamped line to the LOG file of the database. */
RAVEL_PRIVATE void rv_db_log(ravel_db *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* RAVEL_DB_H */
