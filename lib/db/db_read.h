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
    /* Iterators not yet freed: added by ravel_iter_new (and the change
    ** feed's ravel_updates_since, db/updates.c) inside the gate, released
    ** by ravel_iter_free (ravel_updates_free) outside it; close reads it
    ** after the gate closed.  Atomic. */
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
struct rv_db_iter;

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

/* A user iterator of another layer stacked on a database iterator (a
** transaction's, lib/txn/): ravel_iter calls it through these.  Keys and
** values as rv_db_iter's; destroy frees the layer and the base it took. */
struct rv_user_iter_ops {
    int (*valid)(void *it);
    void (*seek_to_first)(void *it);
    void (*seek_to_last)(void *it);
    void (*seek)(void *it, const void *key, size_t klen);
    void (*seek_for_prev)(void *it, const void *key, size_t klen);
    void (*next)(void *it);
    void (*prev)(void *it);
    const char *(*key)(void *it, size_t *klen);
    const char *(*value)(void *it, size_t *vlen);
    int (*status)(void *it);
    int (*set_bounds)(void *it, const void *lower, size_t llen,
                      const void *upper, size_t ulen);
    void (*destroy)(void *it);
};

/* Stacks a layer on BASE (the database's iterator at the view asked for):
** the layer's iterator in *LAYER, which owns BASE from then on; on failure
** (the code returned, message set) BASE is freed too. */
typedef int (*rv_iter_layer_fn)(void *arg, struct rv_db_iter *base,
                                void **layer);

/* A ravel_iter at SNAP's view (NULL: now) whose entries are those of the
** layer MAKE stacks (given ARG) on the database's iterator, called
** through OPS.  Inside the caller's gate. */
RAVEL_PRIVATE int rv_iter_new_layered(ravel_db *db, const ravel_snapshot *snap,
                                      const struct rv_user_iter_ops *ops,
                                      rv_iter_layer_fn make, void *arg,
                                      ravel_iter **out);

#endif /* RAVEL_DB_READ_H */
