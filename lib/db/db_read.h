/*
** db_read.h -- what reads load from the handle without a lock (db->read),
** and the live snapshots (db->mu.snapshots), for db_read.c, version.c and
** the flushes and compactions that must keep what a snapshot sees.
*/
#ifndef RAVEL_DB_READ_H
#define RAVEL_DB_READ_H

#include "ravel_int.h"
#include "db/read_epoch.h"
#include "db/version.h"

struct rv_db_read {
    /* The version reads see: replaced with db->mu.lock held (version.c),
    ** loaded by readers inside the read epoch with no lock. */
    struct rv_version *_Atomic current;
    /* What keeps replaced versions alive for the readers that loaded them
    ** (read_epoch.h: striped reader counters; its retired list under
    ** db->mu.lock). */
    struct rv_read_epoch epoch;
    /* Iterators not yet freed: added by ravel_iter_new inside the gate,
    ** released by ravel_iter_free (outside it); close reads it after the
    ** gate closed.  Atomic. */
    _Atomic int live_iterators;
};

/* The live snapshots (db->mu.snapshots; with db->mu.lock held): their
** sequences are read when they are taken, so that a flush keeps every
** version one of them can see. */
struct rv_db_snapshot_list {
    struct ravel_snapshot *list;    /* a doubly linked list */
    int live;
};

struct rv_read_view;

/* Whether KEY has a version newer than the one VIEW (a transaction's
** snapshot) sees: the newest entry of KEY the latest visible state sees is
** not the newest entry VIEW sees (another sequence, or one found and the
** other not).  Looks in the memtables and every level's table files, so
** it never needs memtable history (RocksDB's TryAgain cannot happen);
** with write_prepared the views decide what is committed.  RAVEL_OK with
** *CHANGED, or an error from a table file.  For transactions' conflict
** checks (lib/txn/). */
RAVEL_PRIVATE int rv_db_key_changed_since(ravel_db *db,
                                          const struct rv_read_view *view,
                                          const void *key, size_t klen,
                                          int *changed);

#endif /* RAVEL_DB_READ_H */
