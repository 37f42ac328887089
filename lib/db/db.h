/*
** db.h -- the database handle shared by db.c (open, close, recovery,
** properties), db_write.c (the write path) and db_read.c (gets, snapshots,
** iterators).
**
** Visibility: last_visible_seq is the sequence number reads and snapshots
** use.  In the default (ordered) mode it advances only when a whole write
** group has been inserted, so a batch is all-or-nothing to readers and a
** snapshot never changes.
*/
#ifndef RAVEL_DB_H
#define RAVEL_DB_H

#include "ravel_int.h"
#include "memtable/memtable.h"
#include "util/options.h"
#include "wal/wal_writer.h"
#include "db/write_group.h"

#include <pthread.h>

#define RV_DB_MAGIC 0x7261766c64624f4bull  /* alive */
#define RV_DB_DEAD 0x7261766c64624445ull   /* closed */

/* The memtables a read sees: the active one and the immutable ones,
** newest first.  Immutable; replaced (not changed) when the leader
** switches memtables; readers hold a reference while they use it. */
struct rv_version {
    _Atomic int refs;
    rv_memtable *mem;
    int n_imm;
    rv_memtable **imm;      /* newest first */
    uint64_t *imm_wal;      /* the first WAL segment each imm needs (seam
                            ** for flushing: segments older than the oldest
                            ** unflushed memtable's can be deleted) */
};

struct ravel_db {
    uint64_t magic;                 /* RV_DB_MAGIC while open */
    char *dir;
    struct ravel_options options;
    int lock_fd;
    int log_fd;                     /* LOG file, -1 if it could not open */

    /* Write path. */
    struct rv_write_queue queue;
    rv_wal *wal;                    /* NULL when read_only */
    rv_memtable *mem;               /* active memtable; leader only */
    uint64_t mem_wal_segment;       /* first segment mem's data is in */
    uint64_t last_seq;              /* last assigned sequence; leader only */
    uint64_t next_segment;          /* leader only */
    _Atomic uint64_t last_seq_stat; /* copy of last_seq for properties */
    _Atomic uint64_t last_visible_seq; /* release by group completer */

    /* Refusal of writes after a failure; under mu, flag also atomic. */
    _Atomic int read_only;          /* 0, or the RAVEL_ code writes get */
    char read_only_reason[512];     /* under mu */

    pthread_mutex_t mu;             /* guards current, readers, the above */
    struct rv_version *current;
    int live_snapshots;
    int live_iterators;

    /* Statistics (relaxed). */
    _Atomic uint64_t stat_memtable_switches;
    _Atomic uint64_t stat_nowal_writes;
};

/* Checks that DB is a live handle; sets the message otherwise. */
RAVEL_PRIVATE int rv_db_check(ravel_db *db, const char *fn);

/* The current version with a reference taken. */
RAVEL_PRIVATE struct rv_version *rv_db_ref_version(ravel_db *db);
RAVEL_PRIVATE void rv_version_unref(struct rv_version *v);

/* Installs a version whose active memtable is MEM (a fresh one), moving
** the previous active memtable to the immutable list.  Leader only. */
RAVEL_PRIVATE int rv_db_install_memtable(ravel_db *db, rv_memtable *mem,
                                         uint64_t wal_segment);

/* Stops writes: every later write returns RC (RAVEL_READONLY) and the
** reason is kept for ravel.read_only_reason.  First reason wins. */
RAVEL_PRIVATE void rv_db_stop_writes(ravel_db *db, const char *reason);

/* Appends a timestamped line to the LOG file of the database. */
RAVEL_PRIVATE void rv_db_log(ravel_db *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* RAVEL_DB_H */
