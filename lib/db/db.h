/*
** db.h -- the database handle, shared by the files of lib/db/:
**   db.c          the handle: open, close, checking a handle
**   db_dir.c      the directory: creating it, IDENTITY
**   recovery.c    replaying the WAL on open
**   version.c     the memtables reads see (version.h)
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
#include "db/version.h"
#include "db/write_group.h"
#include "memtable/memtable.h"
#include "util/options.h"
#include "util/stop.h"
#include "wal/wal_writer.h"

#include <pthread.h>

#define RV_DB_MAGIC 0x7261766c64624f4bull  /* alive */
#define RV_DB_DEAD 0x7261766c64624445ull   /* closed */

struct ravel_db {
    uint64_t magic;                 /* RV_DB_MAGIC while open */
    char *dir;
    struct ravel_options options;
    int lock_fd;
    int log_fd;                     /* LOG file, -1 if it could not open */

    /* API calls in progress, plus a closing flag in the top bit (db.c,
    ** "the gate"); also the futex word ravel_close sleeps on.  Atomic:
    ** rv_db_enter/rv_db_leave and ravel_close. */
    _Atomic uint32_t gate;

    /* Write path. */
    struct rv_write_queue queue;
    rv_wal *wal;                    /* NULL when read_only */
    uint64_t last_seq;              /* last assigned sequence; leader only */
    uint64_t next_segment;          /* leader only */
    uint64_t wal_prev_end;          /* set by recovery: where the data of
                                    ** the last replayed segment ends, the
                                    ** first new segment's prev_end */
    _Atomic uint64_t last_seq_stat; /* copy of last_seq for properties */
    _Atomic uint64_t last_visible_seq; /* release by group completer */

    /* Writes stopped by a failure (util/stop.h): the one record of it,
    ** shared with the WAL writer, which records its I/O failures there. */
    struct rv_stop stop;
    _Atomic int stop_logged;        /* 1 once the LOG has the stop; xchg */

    pthread_mutex_t mu;             /* guards current and the counts below */
    struct rv_version *current;
    int live_snapshots;
    int live_iterators;

    /* Statistics (relaxed). */
    _Atomic uint64_t stat_memtable_switches;
    _Atomic uint64_t stat_nowal_writes;
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
#endif

/* The current version with a reference taken (version.c). */
RAVEL_PRIVATE struct rv_version *rv_db_ref_version(ravel_db *db);

/* The memtable the write-group leader inserts into.  Leader only. */
RAVEL_PRIVATE rv_memtable *rv_db_active_memtable(ravel_db *db);

/* Installs a version whose active memtable is MEM (a fresh one), moving
** the previous active memtable to the immutable list.  Leader only. */
RAVEL_PRIVATE int rv_db_install_memtable(ravel_db *db, rv_memtable *mem,
                                         uint64_t wal_segment);

/* Stops writes after a failure with result code RC (RAVEL_IOERR,
** RAVEL_NOMEM, ...) and message REASON: every later write returns
** RAVEL_READONLY naming the reason, kept for ravel.read_only_reason.
** The first failure wins (the WAL may have recorded it already). */
RAVEL_PRIVATE void rv_db_stop_writes(ravel_db *db, int rc,
                                     const char *reason);

/* Prepares the directory (db_dir.c): creates it and IDENTITY when asked
** and allowed, or checks they are there; takes the LOCK. */
RAVEL_PRIVATE int rv_db_prepare_dir(ravel_db *db);

/* Replays the WAL into the active memtable (recovery.c). */
RAVEL_PRIVATE int rv_db_recover(ravel_db *db);

/* Appends a timestamped line to the LOG file of the database. */
RAVEL_PRIVATE void rv_db_log(ravel_db *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* RAVEL_DB_H */
