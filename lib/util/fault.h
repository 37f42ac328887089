/*
** fault.h -- test hooks that make the next WAL write or WAL sync fail, on
** both I/O paths (io_uring and pwrite), as if the kernel had returned an
** error, or a table file's or the manifest's write or fdatasync, or the
** next memtable entry allocation fail as if memory had run out.  Used by tests to check that a failed write or fdatasync is never
** reported as success and that a failed insert never shows part of a
** batch.  Also pause points: a thread reaching an armed one waits there
** until the test lets it go, so that a test can hold a race window open.
**
** Test builds only (RAVEL_TEST_HOOKS, set for the test library by
** tests/meson.build): there a check costs one relaxed atomic load.  In
** every other build -- the installed library, the amalgamation as users
** compile it -- rv_fault_check is an empty inline that the compiler
** removes, so library code calls it unconditionally; rv_fault_arm, which
** only tests call, does not exist there, so a test built without the
** hooks fails to compile instead of silently injecting nothing.
*/
#ifndef RAVEL_FAULT_H
#define RAVEL_FAULT_H

#include "ravel_int.h"

enum rv_fault_point {
    RV_FAULT_WAL_WRITE = 0, /* a group's WAL write */
    RV_FAULT_WAL_SYNC = 1,  /* an fdatasync of the WAL */
    RV_FAULT_MEMTABLE_ALLOC = 2, /* a memtable entry's allocation (the
                            ** errno is ignored: it fails as NULL) */
    RV_FAULT_TABLE_WRITE = 3, /* a write of a table file being built */
    RV_FAULT_TABLE_SYNC = 4,  /* the fdatasync of a finished table file */
    RV_FAULT_MANIFEST_WRITE = 5, /* a manifest record's write */
    RV_FAULT_MANIFEST_SYNC = 6,  /* a manifest record's fdatasync */
    RV_FAULT_COMPACTION = 7,     /* a compaction's outputs, once written
                                 ** (before the directory fsync): fails
                                 ** the compaction alone, not flushes */
    RV_FAULT_REPAIR_MOVE = 8,    /* a rename of ravel_repair moving an
                                 ** original file aside (db/repair.c):
                                 ** what it leaves is what a kill -9 there
                                 ** leaves, since nothing is undone */
    RV_FAULT_POINTS
};

enum rv_pause_point {
    RV_PAUSE_WAL_WATCHED = 0, /* the io_uring fdatasync watcher saw its
                              ** fdatasync complete and has not yet
                              ** re-taken sync_mu (wal_buffered.c) */
    RV_PAUSE_FLUSH_TABLES_WRITTEN = 1, /* a flush's tables are durable,
                              ** the manifest does not name them yet */
    RV_PAUSE_FLUSH_LOGGED = 2, /* the manifest names a flush's tables; the
                              ** version is not installed and the WAL
                              ** segments are not deleted yet */
    RV_PAUSE_MANIFEST_WRITTEN = 3, /* a new manifest is durable, CURRENT
                              ** does not name it yet (manifest.c) */
    RV_PAUSE_MEMTABLE_INSERT = 4, /* unordered modes: a writer released by
                              ** its group has not inserted its batch yet
                              ** (write_unordered.c) */
    RV_PAUSE_COMMIT = 5,      /* write_prepared: a writer has inserted its
                              ** batch and not joined the commit queue;
                              ** armed with a key (rv_pause_arm_key) */
    RV_PAUSE_GROUP_LEAD = 6,  /* a write-group leader has not formed its
                              ** group yet (db_write.c) */
    RV_PAUSE_COMPACTION_PICKED = 7, /* a compaction is registered as
                              ** running with its inputs; it has read
                              ** nothing yet (compaction.c) */
    RV_PAUSE_COMPACTION_WRITTEN = 8, /* a compaction's output files and
                              ** the directory are durable, the manifest
                              ** does not name them yet */
    RV_PAUSE_COMPACTION_LOGGED = 9, /* the manifest names a compaction's
                              ** outputs; the version is not installed
                              ** and the inputs are not deleted yet */
    RV_PAUSE_INGEST_FILE_COPIED = 10, /* an ingest has copied one of its
                              ** files (db/ingest.c); writes wait */
    RV_PAUSE_INGEST_BEFORE_EDIT = 11, /* an ingest's files are durable
                              ** and placed, its manifest edit not
                              ** written yet */
    RV_PAUSE_INGEST_LOGGED = 12, /* the manifest names an ingest's files;
                              ** the version is not installed yet */
    RV_PAUSE_CHECKPOINT_ITEM = 13, /* a checkpoint into a directory has
                              ** written one file of its plan into
                              ** DIR.partial (its table files held) */
    RV_PAUSE_FEED_END = 14,   /* a change feed read its segment to the end
                              ** of its data and has not looked at the
                              ** next segment yet (db/updates.c) */
    RV_PAUSE_POINTS
};

#ifdef RAVEL_TEST_HOOKS

/* Arms POINT: after SKIP more successful operations there, the next one
** fails with -ERR (e.g. EIO).  A negative SKIP disarms. */
RAVEL_PRIVATE void rv_fault_arm(enum rv_fault_point point, int skip, int err);

/* Called at POINT before issuing the operation: returns 0 to proceed, or a
** negative errno the operation must report as its result. */
RAVEL_PRIVATE int rv_fault_check(enum rv_fault_point point);

/* Arms POINT: the next thread to reach it waits there until
** rv_pause_release.  One thread at a time; arming again re-arms. */
RAVEL_PRIVATE void rv_pause_arm(enum rv_pause_point point);

/* Whether a thread is waiting at POINT. */
RAVEL_PRIVATE int rv_pause_waiting(enum rv_pause_point point);

/* Lets the thread waiting at POINT go (or, if none arrived, disarms). */
RAVEL_PRIVATE void rv_pause_release(enum rv_pause_point point);

/* Called by library code at POINT: waits there if POINT is armed. */
RAVEL_PRIVATE void rv_pause_here(enum rv_pause_point point);

/* Arms POINT for one key: only a thread reaching it with KEY (KLEN bytes,
** copied; at most 64) waits (rv_pause_here_key). */
RAVEL_PRIVATE void rv_pause_arm_key(enum rv_pause_point point,
                                    const void *key, size_t klen);

/* Like rv_pause_here, for a thread carrying KEY: waits only if POINT is
** armed for no key or for KEY. */
RAVEL_PRIVATE void rv_pause_here_key(enum rv_pause_point point,
                                     const void *key, size_t klen);

/* Every EVERY-th batch inserted into a memtable sleeps MICROS
** microseconds after its first entry (0 disables): makes the relaxed
** guarantees of unordered_write observable. */
RAVEL_PRIVATE void rv_test_insert_delay(unsigned every, unsigned micros);

/* Called by the write path between a batch's first and second entry. */
RAVEL_PRIVATE void rv_test_insert_delay_here(void);

/* wal_io=direct: holds back the completion of one group write.  Once
** armed, the next write completion the WAL reaps is not applied: the
** write stays "in flight" for the WAL while later ones complete, until
** rv_test_wal_hold_release delivers it -- with the kernel's result when
** RES is 0, else with RES (a negative errno) as if the write had failed.
** One held write at a time. */
RAVEL_PRIVATE void rv_test_wal_hold_arm(void);
/* Whether a completion is held now. */
RAVEL_PRIVATE int rv_test_wal_hold_waiting(void);
RAVEL_PRIVATE void rv_test_wal_hold_release(int res);
/* Called by the WAL with a reaped completion RES of the write CTX: 1 if
** the hook keeps it (and hands CTX and the result to DELIVER from
** rv_test_wal_hold_release), 0 if the WAL applies it now. */
RAVEL_PRIVATE int rv_test_wal_hold(void (*deliver)(void *ctx, int res),
                                   void *ctx, int res);

/* wal_io=direct: when ON, WALs opened afterwards make RAVEL_SYNC writes
** durable with an fdatasync (linked behind the write where it can be)
** instead of RWF_DSYNC, whatever the probe found: the path a device
** whose DSYNC writes are slow takes, tested on any device. */
RAVEL_PRIVATE void rv_test_wal_direct_fdatasync(int on);
RAVEL_PRIVATE int rv_test_wal_direct_fdatasync_forced(void);

#else

static inline int rv_fault_check(enum rv_fault_point point)
{
    (void)point;
    return 0;
}

static inline void rv_pause_here(enum rv_pause_point point)
{
    (void)point;
}

static inline void rv_pause_here_key(enum rv_pause_point point,
                                     const void *key, size_t klen)
{
    (void)point;
    (void)key;
    (void)klen;
}

static inline void rv_test_insert_delay_here(void)
{
}

static inline int rv_test_wal_hold(void (*deliver)(void *ctx, int res),
                                   void *ctx, int res)
{
    (void)deliver;
    (void)ctx;
    (void)res;
    return 0;
}

static inline int rv_test_wal_direct_fdatasync_forced(void)
{
    return 0;
}

#endif /* RAVEL_TEST_HOOKS */

#endif /* RAVEL_FAULT_H */
