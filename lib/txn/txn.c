/*
** txn.c -- transactions (ravel.h "transactions"): begin, reads through
** the transaction's own writes over its snapshot, pessimistic locking or
** optimistic validation, savepoints, commit and rollback.
**
** A transaction holds a ravel_snapshot (so compaction keeps what it
** sees), its writes in a write index (write_index.h: kept once, as the
** batch commit hands to ravel_write), and the keys it locked.  Whether a
** key changed since the snapshot is rv_db_key_changed_since's answer,
** which looks in memtables and table files alike.
**
** Pessimistic: get_for_update and every write lock the key in the
** database's lock table (lock_table.h), then check it -- once, when first
** taken: plain writes lock their keys too once transactions exist
** (txn_lock_plain, db.h's txn hooks), so no one writes a held key.
** Optimistic: the
** keys read for update are remembered; commit locks them and the written
** keys in key order (so two committers never deadlock), checks them all,
** writes, and unlocks.  Either way the locks are released only after the
** write returned, when it is visible (read-your-own-writes holds in every
** ordering mode), so a later transaction's check sees it.
**
** Two-phase commit (db/prepared.h): prepare writes the transaction's
** batch with a prepare marker to the WAL only, and keeps its keys locked
** (an optimistic transaction is validated and locks them there); commit
** writes the batch with a commit marker; rollback writes a rollback
** marker.  After a restart the first transaction of the database locks
** the keys of every prepared one again, and ravel_txn_recover hands one
** out.
*/
#include "base/dbformat.h"
#include "db/batch.h"
#include "db/db.h"
#include "db/db_iter.h"
#include "db/db_read.h"
#include "db/db_write.h"
#include "db/prepared.h"
#include "txn/lock_table.h"
#include "txn/txn_iter.h"
#include "txn/write_index.h"
#include "util/clock.h"
#include "util/error.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int txn_commit_prepared(ravel_txn *t);
static void txn_leave_prepared(ravel_txn *t);
static int txn_check_writable(ravel_db *db, const char *fn);
static int txn_rollback_prepared(ravel_txn *t);
static void txn_drop_held(ravel_txn *t, int unlock);
static int txn_lock_code(int rc);

/* The database's transaction state (db->txn.state). */
struct txn_state {
    rv_lock_table *locks;
    _Atomic uint64_t next_id; /* fetch-add: ids grow with age */
};

/* A key the transaction holds locked, or read for update (optimistic). */
struct txn_key {
    char *key;
    size_t klen;
};

struct ravel_txn {
    ravel_db *db;
    struct txn_state *st;
    int flags;
    uint64_t id;
    ravel_snapshot *snap;
    rv_write_index *writes;
    struct txn_key *keys; /* locked (pessimistic), read for update (opt.) */
    size_t nkeys, capkeys;
    size_t *savepoint_keys; /* nkeys at each savepoint */
    int nsavepoints, capsavepoints;
    int open;
    int64_t lock_timeout_ns;  /* txn_lock_timeout; negative: forever */
    uint64_t max_bytes;       /* txn_max_write_batch_size */
    /* T and its iterators: ravel_txn_free and each iterator's free drop
    ** one; the last frees T (an iterator reads T's write index).  Owned by
    ** the one thread using T. */
    int refs;
    char *name;               /* ravel_txn_set_name, or NULL */
    int prepared;             /* ravel_txn_prepare (or recover) done: its
                              ** keys are locked, its record written */
    /* Optimistic: the keys its commit or prepare locked, sorted, each
    ** once (copies), held until its write is visible or it ends. */
    struct txn_key *held;
    size_t nheld;
    uint64_t prepared_file;   /* ... that file's number */
};

static void txn_state_destroy(void *p)
{
    struct txn_state *st = p;
    rv_lock_table_free(st->locks);
    free(st);
}

/* rv_prepared_for_each: locks the keys of prepared transaction E (found
** at open) under a new id, unless done. */
static void txn_relock_prepared(void *ctx, struct rv_prepared_txn *e)
{
    struct txn_state *st = ctx;
    if (e->owner || !e->rep)
        return;
    e->owner = atomic_fetch_add_explicit(&st->next_id, 1,
                                         memory_order_relaxed);
    size_t off = RV_BATCH_HEADER_SIZE;
    uint32_t count = rv_batch_rep_count(e->rep);
    for (uint32_t i = 0; i < count; i++) {
        struct rv_batch_op op;
        if (rv_batch_decode_op(e->rep, e->len, &off, i, &op) != RAVEL_OK)
            break; /* checked when its file was read */
        if (op.type == RV_TYPE_PUT || op.type == RV_TYPE_DELETE)
            (void)rv_lock_table_acquire(st->locks, e->owner, op.key, op.klen,
                                        0, NULL); /* a new table: free */
    }
}

/* DB's txn_lock_timeout in nanoseconds (negative: forever). */
static int64_t txn_lock_timeout_ns(const ravel_db *db)
{
    int ms = db->options.txn_lock_timeout;
    return ms == INT_MAX ? -1 : (int64_t)ms * 1000000;
}

/* ------------------------------------------------------- plain writes */

/* A plain write's locks (db.h, txn.lock_batch): its keys, pointing into
** its batch, sorted, each once, under an id of its own. */
struct txn_plain_locks {
    uint64_t id;
    size_t n;
    struct rv_lock_key keys[];
};

static int txn_plain_key_cmp(const void *a, const void *b)
{
    const struct rv_lock_key *x = a, *y = b;
    return rv_user_key_compare(x->key, x->klen, y->key, y->klen);
}

static void txn_unlock_plain(void *state, void *held)
{
    struct txn_state *st = state;
    struct txn_plain_locks *h = held;
    rv_lock_table_release_all(st->locks, h->id, h->keys, h->n);
    free(h);
}

/* Locks the keys of plain write B, in key order (a plain write never
** waits for itself), with the database's txn_lock_timeout. */
static int txn_lock_plain(void *state, ravel_db *db,
                          const struct ravel_batch *b, void **held)
{
    struct txn_state *st = state;
    *held = NULL;
    struct txn_plain_locks *h =
        malloc(sizeof *h + (size_t)b->count * sizeof h->keys[0]);
    if (!h)
        return rv_error(RAVEL_NOMEM, "out of memory locking a write's %u "
                        "keys", b->count);
    h->id = atomic_fetch_add_explicit(&st->next_id, 1, memory_order_relaxed);
    h->n = 0;
    size_t off = RV_BATCH_HEADER_SIZE;
    for (uint32_t i = 0; i < b->count; i++) {
        struct rv_batch_op op;
        if (rv_batch_decode_op(b->rep, b->len, &off, i, &op) != RAVEL_OK)
            break; /* built by rv_batch_add: well formed */
        h->keys[h->n].key = op.key;
        h->keys[h->n++].klen = op.klen;
    }
    qsort(h->keys, h->n, sizeof h->keys[0], txn_plain_key_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < h->n; i++)
        if (kept == 0 || txn_plain_key_cmp(&h->keys[kept - 1],
                                           &h->keys[i]) != 0)
            h->keys[kept++] = h->keys[i];
    h->n = kept;
    int64_t timeout = txn_lock_timeout_ns(db);
    int rc = RAVEL_OK;
    size_t locked = 0;
    for (; locked < h->n; locked++) {
        rc = txn_lock_code(rv_lock_table_acquire(
            st->locks, h->id, h->keys[locked].key, h->keys[locked].klen,
            timeout, NULL));
        if (rc)
            break;
    }
    if (rc) {
        rv_lock_table_release_all(st->locks, h->id, h->keys, locked);
        free(h);
        return rc;
    }
    *held = h;
    return RAVEL_OK;
}

/* Makes and publishes DB's transaction state; under db->txn.make. */
static struct txn_state *txn_state_make(ravel_db *db)
    RV_REQUIRES(db->txn.make);
static struct txn_state *txn_state_make(ravel_db *db)
{
    struct txn_state *st = calloc(1, sizeof *st);
    if (!st || rv_lock_table_new(0, -1, &st->locks) != RAVEL_OK) {
        free(st);
        return NULL;
    }
    atomic_init(&st->next_id, 1);
    /* the keys of the transactions left prepared by an earlier run, locked
    ** again before any transaction can run */
    rv_prepared_for_each(&db->prepared, txn_relock_prepared, st);
    db->txn.destroy = txn_state_destroy;
    db->txn.lock_batch = txn_lock_plain;
    db->txn.unlock_batch = txn_unlock_plain;
    atomic_store_explicit(&db->txn.state, st, memory_order_release);
    return st;
}

/* The database's transaction state, made by the first transaction. */
static struct txn_state *txn_state_get(ravel_db *db)
{
    struct txn_state *st =
        atomic_load_explicit(&db->txn.state, memory_order_acquire);
    if (st)
        return st;
    /* one maker: the keys of prepared transactions are locked again in
    ** the one table that is published */
    rv_mutex_lock(&db->txn.make);
    st = atomic_load_explicit(&db->txn.state, memory_order_acquire);
    if (!st)
        st = txn_state_make(db);
    rv_mutex_unlock(&db->txn.make);
    return st;
}

static int txn_check_open(const ravel_txn *t, const char *fn)
{
    if (!t)
        return rv_error(RAVEL_INVALID, "%s: transaction is NULL", fn);
    if (!t->open)
        return rv_error(RAVEL_INVALID, "%s: the transaction is over "
                        "(committed or rolled back)", fn);
    return RAVEL_OK;
}

/* Adds KEY to T's keys. */
static int txn_key_list_add(struct txn_key **list, size_t *n, size_t *cap,
                            const void *key, size_t klen);

static int txn_keep_key(ravel_txn *t, const void *key, size_t klen)
{
    return txn_key_list_add(&t->keys, &t->nkeys, &t->capkeys, key, klen);
}

/* The lock table's result as a public code. */
static int txn_lock_code(int rc)
{
    return rc == RV_LOCK_TIMEDOUT   ? RAVEL_TIMEDOUT
           : rc == RV_LOCK_DEADLOCK ? RAVEL_DEADLOCK
                                    : rc;
}

static int txn_validate(ravel_txn *t, const void *key, size_t klen);

/* Pessimistic: locks KEY for T and checks it has not changed since T's
** snapshot -- once: a key T holds was checked when T took it, and no one
** can write it while T holds it (transactions and plain writes alike
** take its lock).  A check that fails releases the lock just taken, so T
** is as it was before the call. */
static int txn_lock_checked(ravel_txn *t, const void *key, size_t klen)
{
    struct rv_lock_wait_info info;
    memset(&info, 0, sizeof info);
    int rc = rv_lock_table_acquire(t->st->locks, t->id, key, klen,
                                   t->lock_timeout_ns, &info);
    if (rc)
        return txn_lock_code(rc);
    if (info.already_held)
        return RAVEL_OK;
    rc = txn_validate(t, key, klen);
    if (rc == RAVEL_OK)
        rc = txn_keep_key(t, key, klen);
    if (rc)
        rv_lock_table_release(t->st->locks, t->id, key, klen);
    return rc;
}

/* RAVEL_CONFLICT if KEY changed since T's snapshot. */
static int txn_validate(ravel_txn *t, const void *key, size_t klen)
{
    int changed = 0;
    int rc = rv_db_key_changed_since(t->db, &t->snap->view, key, klen,
                                     &changed);
    if (rc == RAVEL_OK && changed)
        rc = rv_error(RAVEL_CONFLICT, "transaction %llu: key '%.*s' was "
                      "written by another after this transaction's "
                      "snapshot (sequence %llu)", (unsigned long long)t->id,
                      (int)(klen > 64 ? 64 : klen), (const char *)key,
                      (unsigned long long)ravel_snapshot_sequence(t->snap));
    return rc;
}

/* Releases the locks T holds on its keys (pessimistic) and forgets them
** (optimistic: the keys read for update, never locked here). */
static void txn_release_keys(ravel_txn *t, size_t from)
{
    for (size_t i = t->nkeys; i-- > from;) {
        if (!(t->flags & RAVEL_TXN_OPTIMISTIC))
            rv_lock_table_release(t->st->locks, t->id, t->keys[i].key,
                                  t->keys[i].klen);
        free(t->keys[i].key);
    }
    t->nkeys = from;
}

/* Ends T: its keys released, its snapshot released, its writes gone. */
static void txn_end(ravel_txn *t)
{
    if (!t->open)
        return;
    txn_release_keys(t, 0);
    txn_drop_held(t, 1); /* an optimistic prepared T's */
    t->prepared = 0;
    rv_write_index_clear(t->writes);
    t->nsavepoints = 0;
    if (t->snap)
        (void)ravel_snapshot_release(t->db, t->snap);
    t->snap = NULL;
    t->open = 0;
}

int ravel_txn_begin(ravel_db *db, int flags, ravel_txn **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_txn_begin: out is NULL");
    *out = NULL;
    if (flags & ~(RAVEL_SYNC | RAVEL_TXN_OPTIMISTIC))
        return rv_error(RAVEL_INVALID, "ravel_txn_begin: unknown flags "
                        "0x%x", (unsigned)flags);
    int rc = rv_db_enter(db, "ravel_txn_begin");
    if (rc)
        return rc;
    ravel_txn *t = calloc(1, sizeof *t);
    struct txn_state *st = t ? txn_state_get(db) : NULL;
    if (!t || !st || !(t->writes = rv_write_index_new())) {
        rc = rv_error(RAVEL_NOMEM, "out of memory beginning a transaction");
        goto fail;
    }
    t->db = db;
    t->st = st;
    t->flags = flags;
    t->refs = 1;
    t->lock_timeout_ns = txn_lock_timeout_ns(db);
    t->max_bytes = db->options.txn_max_write_batch_size;
    t->id = atomic_fetch_add_explicit(&st->next_id, 1, memory_order_relaxed);
    rc = ravel_snapshot_acquire(db, &t->snap);
    if (rc)
        goto fail;
    t->open = 1;
    rv_db_leave(db);
    *out = t;
    return RAVEL_OK;
fail:
    if (t)
        rv_write_index_free(t->writes);
    free(t);
    rv_db_leave(db);
    return rc;
}

/* Reads KEY as T sees it: its own write, else its snapshot. */
static int txn_read(ravel_txn *t, const void *key, size_t klen, void **val,
                    size_t *vlen)
{
    int type;
    const char *v;
    size_t n;
    if (rv_write_index_get(t->writes, key, klen, &type, &v, &n) ==
        RV_WINDEX_FOUND) {
        if (type != RV_TYPE_PUT)
            return RAVEL_NOTFOUND;
        char *copy = malloc(n ? n : 1);
        if (!copy)
            return rv_error(RAVEL_NOMEM, "out of memory for a %zu-byte "
                            "value", n);
        if (n)
            memcpy(copy, v, n);
        *val = copy;
        *vlen = n;
        return RAVEL_OK;
    }
    return ravel_get(t->db, t->snap, key, klen, val, vlen);
}

static int txn_get(ravel_txn *t, const void *key, size_t klen, void **val,
                   size_t *vlen, int for_update, const char *fn)
{
    if (val)
        *val = NULL;
    if (vlen)
        *vlen = 0;
    int rc = txn_check_open(t, fn);
    if (rc)
        return rc;
    if (!val || !vlen)
        return rv_error(RAVEL_INVALID, "%s: %s is NULL", fn,
                        !val ? "val" : "vlen");
    if (for_update) {
        if (t->flags & RAVEL_TXN_OPTIMISTIC)
            rc = txn_keep_key(t, key, klen);
        else
            rc = txn_lock_checked(t, key, klen);
        if (rc)
            return rc;
    }
    return txn_read(t, key, klen, val, vlen);
}

int ravel_txn_get(ravel_txn *t, const void *key, size_t klen, void **val,
                  size_t *vlen)
{
    return txn_get(t, key, klen, val, vlen, 0, "ravel_txn_get");
}

int ravel_txn_get_for_update(ravel_txn *t, const void *key, size_t klen,
                             void **val, size_t *vlen)
{
    return txn_get(t, key, klen, val, vlen, 1, "ravel_txn_get_for_update");
}

/* RAVEL_INVALID if a write of KLEN + VLEN bytes would take T's batch past
** txn_max_write_batch_size (an op's encoding: type, two varints, the
** bytes). */
static int txn_check_size(const ravel_txn *t, size_t klen, size_t vlen,
                          const char *fn)
{
    const struct ravel_batch *b =
        rv_write_index_batch((rv_write_index *)t->writes);
    uint64_t after = (uint64_t)b->len + 1 + 5 + klen + 5 + vlen;
    if (after <= t->max_bytes)
        return RAVEL_OK;
    return rv_error(RAVEL_INVALID, "%s: the transaction's writes would take "
                    "%llu bytes, past txn_max_write_batch_size (%llu); it is "
                    "still open, without this write", fn,
                    (unsigned long long)after,
                    (unsigned long long)t->max_bytes);
}

/* A write of T: locked and checked first when pessimistic. */
static int txn_write(ravel_txn *t, const void *key, size_t klen,
                     const void *val, size_t vlen, int is_put,
                     const char *fn)
{
    int rc = txn_check_open(t, fn);
    if (rc)
        return rc;
    if (!key && klen)
        return rv_error(RAVEL_INVALID, "%s: key is NULL with length %zu", fn,
                        klen);
    if (t->prepared)
        return rv_error(RAVEL_INVALID, "%s: the transaction is prepared: "
                        "commit or roll it back", fn);
    rc = txn_check_size(t, klen, vlen, fn);
    if (rc)
        return rc;
    if (!(t->flags & RAVEL_TXN_OPTIMISTIC)) {
        rc = txn_lock_checked(t, key, klen);
        if (rc)
            return rc;
    }
    return is_put ? rv_write_index_put(t->writes, key, klen, val, vlen)
                  : rv_write_index_delete(t->writes, key, klen);
}

int ravel_txn_put(ravel_txn *t, const void *key, size_t klen,
                  const void *val, size_t vlen)
{
    if (!val && vlen)
        return rv_error(RAVEL_INVALID, "ravel_txn_put: value is NULL with "
                        "length %zu", vlen);
    return txn_write(t, key, klen, val, vlen, 1, "ravel_txn_put");
}

int ravel_txn_delete(ravel_txn *t, const void *key, size_t klen)
{
    return txn_write(t, key, klen, NULL, 0, 0, "ravel_txn_delete");
}

/* Refused: see ravel.h.  A correct range delete inside a transaction
** would need range locks in the lock table (pessimistic) and a range
** check against every write since the snapshot (optimistic), and the
** write index and the transaction's iterator would have to hide the
** range; RocksDB's TransactionDB refuses DeleteRange for the same
** reason. */
int ravel_txn_delete_range(ravel_txn *t, const void *begin, size_t blen,
                           const void *end, size_t elen)
{
    (void)begin, (void)blen, (void)end, (void)elen;
    int rc = txn_check_open(t, "ravel_txn_delete_range");
    if (rc)
        return rc;
    return rv_error(RAVEL_INVALID, "ravel_txn_delete_range: range deletes "
                    "are not supported in transactions (the lock table "
                    "locks keys, not ranges); write them with "
                    "ravel_delete_range when no transaction is in use");
}

int ravel_txn_savepoint(ravel_txn *t)
{
    int rc = txn_check_open(t, "ravel_txn_savepoint");
    if (rc)
        return rc;
    if (t->nsavepoints == t->capsavepoints) {
        int cap = t->capsavepoints ? 2 * t->capsavepoints : 8;
        size_t *k = realloc(t->savepoint_keys, (size_t)cap * sizeof *k);
        if (!k)
            return rv_error(RAVEL_NOMEM, "out of memory for a savepoint");
        t->savepoint_keys = k;
        t->capsavepoints = cap;
    }
    rc = rv_write_index_savepoint(t->writes);
    if (rc == RAVEL_OK)
        t->savepoint_keys[t->nsavepoints++] = t->nkeys;
    return rc;
}

int ravel_txn_rollback_to_savepoint(ravel_txn *t)
{
    int rc = txn_check_open(t, "ravel_txn_rollback_to_savepoint");
    if (rc)
        return rc;
    if (t->prepared)
        return rv_error(RAVEL_INVALID, "ravel_txn_rollback_to_savepoint: "
                        "the transaction is prepared");
    if (t->nsavepoints == 0)
        return rv_error(RAVEL_NOTFOUND, "ravel_txn_rollback_to_savepoint: "
                        "no savepoint is set");
    rc = rv_write_index_rollback_to_savepoint(t->writes);
    if (rc == RAVEL_OK) /* the keys locked since are released, as RocksDB */
        txn_release_keys(t, t->savepoint_keys[--t->nsavepoints]);
    return rc;
}

/* Optimistic commit's locks: every key read for update or written, in key
** order, so that two committers never wait for each other in a cycle. */
static int txn_key_cmp(const void *a, const void *b)
{
    const struct txn_key *x = a, *y = b;
    return rv_user_key_compare(x->key, x->klen, y->key, y->klen);
}

/* Releases (UNLOCK) and frees the keys T's optimistic commit or prepare
** holds. */
static void txn_drop_held(ravel_txn *t, int unlock)
{
    for (size_t i = 0; i < t->nheld; i++) {
        if (unlock)
            rv_lock_table_release(t->st->locks, t->id, t->held[i].key,
                                  t->held[i].klen);
        free(t->held[i].key);
    }
    free(t->held);
    t->held = NULL;
    t->nheld = 0;
}

/* Appends a copy of KEY to LIST (*N entries, room for *CAP). */
static int txn_key_list_add(struct txn_key **list, size_t *n, size_t *cap,
                            const void *key, size_t klen)
{
    if (*n == *cap) {
        size_t grown = *cap ? 2 * *cap : 16;
        struct txn_key *more = realloc(*list, grown * sizeof *more);
        if (!more)
            return rv_error(RAVEL_NOMEM, "out of memory in a transaction");
        *list = more;
        *cap = grown;
    }
    char *copy = malloc(klen ? klen : 1);
    if (!copy)
        return rv_error(RAVEL_NOMEM, "out of memory in a transaction");
    if (klen)
        memcpy(copy, key, klen);
    (*list)[(*n)++] = (struct txn_key){copy, klen};
    return RAVEL_OK;
}

/* For an optimistic commit or prepare: the keys T read for update and
** wrote, sorted, each once, into T->held (T's own list untouched, so its
** savepoints stay right). */
static int txn_collect_held(ravel_txn *t)
{
    size_t cap = 0;
    int rc = RAVEL_OK;
    for (size_t i = 0; i < t->nkeys && rc == RAVEL_OK; i++)
        rc = txn_key_list_add(&t->held, &t->nheld, &cap, t->keys[i].key,
                          t->keys[i].klen);
    struct rv_windex_iter it;
    rv_windex_iter_init(&it, t->writes);
    for (rv_windex_iter_seek_to_first(&it);
         rc == RAVEL_OK && rv_windex_iter_valid(&it);
         rv_windex_iter_next(&it)) {
        const char *k, *v;
        size_t kl, vl;
        rv_windex_iter_entry(&it, &k, &kl, &v, &vl);
        rc = txn_key_list_add(&t->held, &t->nheld, &cap, k, kl);
    }
    if (rc)
        return rc;
    qsort(t->held, t->nheld, sizeof *t->held, txn_key_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < t->nheld; i++) {
        if (kept > 0 && txn_key_cmp(&t->held[kept - 1], &t->held[i]) == 0)
            free(t->held[i].key);
        else
            t->held[kept++] = t->held[i];
    }
    t->nheld = kept;
    return RAVEL_OK;
}

/* Locks and checks, for an optimistic commit or prepare, the keys T read
** for update and wrote, in key order (two committers never wait for each
** other in a cycle).  On failure T holds none of them, as before. */
static int txn_lock_for_commit(ravel_txn *t)
{
    int rc = txn_collect_held(t);
    size_t locked = 0;
    for (; rc == RAVEL_OK && locked < t->nheld; locked++) {
        struct rv_lock_wait_info info;
        memset(&info, 0, sizeof info);
        rc = txn_lock_code(rv_lock_table_acquire(
            t->st->locks, t->id, t->held[locked].key, t->held[locked].klen,
            t->lock_timeout_ns, &info));
        if (rc == RAVEL_OK)
            rc = txn_validate(t, t->held[locked].key, t->held[locked].klen);
        else
            break; /* not taken */
    }
    if (rc) {
        for (size_t i = 0; i < locked; i++) /* what was taken */
            rv_lock_table_release(t->st->locks, t->id, t->held[i].key,
                                  t->held[i].klen);
        txn_drop_held(t, 0);
    }
    return rc;
}

int ravel_txn_commit(ravel_txn *t)
{
    int rc = txn_check_open(t, "ravel_txn_commit");
    if (rc)
        return rc;
    if (t->prepared)
        return txn_commit_prepared(t);
    int optimistic = (t->flags & RAVEL_TXN_OPTIMISTIC) != 0;
    rc = rv_db_enter(t->db, "ravel_txn_commit");
    if (rc) {
        txn_end(t);
        return rc;
    }
    if (optimistic)
        rc = txn_lock_for_commit(t);
    /* the write returns once visible (atomically, in every ordering mode:
    ** RV_WRITE_ATOMIC): then a later check sees it */
    uint64_t segment;
    if (rc == RAVEL_OK && rv_write_index_count(t->writes) > 0)
        rc = rv_write_batch_in_segment(t->db, t->flags & RAVEL_SYNC,
                                       RV_WRITE_ATOMIC,
                                       rv_write_index_batch(t->writes),
                                       &segment);
    txn_drop_held(t, 1);
    rv_db_leave(t->db);
    txn_end(t); /* (an optimistic T's keys are freed, not unlocked) */
    return rc;
}

int ravel_txn_rollback(ravel_txn *t)
{
    int rc = txn_check_open(t, "ravel_txn_rollback");
    if (rc)
        return rc;
    if (t->prepared) { /* on failure it stays prepared */
        rc = txn_rollback_prepared(t);
        if (rc)
            return rc;
    }
    txn_end(t);
    return RAVEL_OK;
}

/* Drops one reference to T (its own or an iterator's); the last frees it. */
static void txn_unref(ravel_txn *t)
{
    if (--t->refs > 0)
        return;
    rv_write_index_free(t->writes);
    free(t->keys);
    free(t->savepoint_keys);
    free(t->name);
    free(t);
}

void ravel_txn_free(ravel_txn *t)
{
    if (!t)
        return;
    if (t->open && t->prepared)
        txn_leave_prepared(t);
    txn_end(t);
    txn_unref(t);
}

/* ------------------------------------------------------------ iterators */

/* A transaction's iterator: the merged view, and the transaction it reads
** (referenced, so that freeing T first is safe).  Its base is the database
** iterator at T's snapshot. */
struct txn_user_iter {
    rv_txn_iter *merged;
    ravel_txn *t;
};

static int txn_ui_valid(void *p)
{
    return rv_txn_iter_valid(((struct txn_user_iter *)p)->merged);
}
static void txn_ui_first(void *p)
{
    rv_txn_iter_seek_to_first(((struct txn_user_iter *)p)->merged);
}
static void txn_ui_last(void *p)
{
    rv_txn_iter_seek_to_last(((struct txn_user_iter *)p)->merged);
}
static void txn_ui_seek(void *p, const void *k, size_t n)
{
    rv_txn_iter_seek(((struct txn_user_iter *)p)->merged, k, n);
}
static void txn_ui_seek_for_prev(void *p, const void *k, size_t n)
{
    rv_txn_iter_seek_for_prev(((struct txn_user_iter *)p)->merged, k, n);
}
static void txn_ui_next(void *p)
{
    rv_txn_iter_next(((struct txn_user_iter *)p)->merged);
}
static void txn_ui_prev(void *p)
{
    rv_txn_iter_prev(((struct txn_user_iter *)p)->merged);
}
static const char *txn_ui_key(void *p, size_t *n)
{
    return rv_txn_iter_key(((struct txn_user_iter *)p)->merged, n);
}
static const char *txn_ui_value(void *p, size_t *n)
{
    return rv_txn_iter_value(((struct txn_user_iter *)p)->merged, n);
}
static int txn_ui_status(void *p)
{
    return rv_txn_iter_status(((struct txn_user_iter *)p)->merged);
}
static int txn_ui_set_bounds(void *p, const void *lo, size_t ll,
                             const void *hi, size_t hl)
{
    return rv_txn_iter_set_bounds(((struct txn_user_iter *)p)->merged, lo, ll,
                                  hi, hl);
}
static void txn_ui_destroy(void *p)
{
    struct txn_user_iter *ui = p;
    rv_txn_iter_free(ui->merged); /* and the database's iterator */
    txn_unref(ui->t);
    free(ui);
}

static const struct rv_user_iter_ops txn_user_iter_ops = {
    .valid = txn_ui_valid,
    .seek_to_first = txn_ui_first,
    .seek_to_last = txn_ui_last,
    .seek = txn_ui_seek,
    .seek_for_prev = txn_ui_seek_for_prev,
    .next = txn_ui_next,
    .prev = txn_ui_prev,
    .key = txn_ui_key,
    .value = txn_ui_value,
    .status = txn_ui_status,
    .set_bounds = txn_ui_set_bounds,
    .destroy = txn_ui_destroy,
};

/* rv_iter_layer_fn: T's writes merged over BASE. */
static int txn_iter_layer(void *arg, struct rv_db_iter *base, void **layer)
{
    ravel_txn *t = arg;
    struct txn_user_iter *ui = malloc(sizeof *ui);
    if (!ui) {
        rv_db_iter_free(base);
        return rv_error(RAVEL_NOMEM, "out of memory creating a transaction "
                        "iterator");
    }
    ui->merged = rv_txn_iter_new(t->writes, rv_txn_db_iter_base(), base);
    if (!ui->merged) { /* it freed BASE */
        free(ui);
        return RAVEL_NOMEM;
    }
    ui->t = t;
    t->refs++;
    *layer = ui;
    return RAVEL_OK;
}

int ravel_txn_iter_new(ravel_txn *t, ravel_iter **out)
{
    if (out)
        *out = NULL;
    int rc = txn_check_open(t, "ravel_txn_iter_new");
    if (rc)
        return rc;
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_txn_iter_new: out is NULL");
    rc = rv_db_enter(t->db, "ravel_txn_iter_new");
    if (rc)
        return rc;
    rc = rv_iter_new_layered(t->db, t->snap, &txn_user_iter_ops,
                             txn_iter_layer, t, out);
    rv_db_leave(t->db);
    return rc;
}

/* ------------------------------------------------------------ retries */

/* 1 for the codes after which running the transaction again may succeed. */
static int txn_retriable(int rc)
{
    return rc == RAVEL_CONFLICT || rc == RAVEL_TIMEDOUT ||
           rc == RAVEL_DEADLOCK;
}

/* Sleeps a random time below 2^ATTEMPT * 50 microseconds (at most 50 ms),
** so that transactions that conflicted do not meet again in step. */
static void txn_backoff(int attempt, uint64_t *rng)
{
    uint64_t cap_us = 50ull << (attempt < 10 ? attempt : 10);
    if (cap_us > 50000)
        cap_us = 50000;
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    uint64_t us = *rng % cap_us;
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Runs FN with T and CTX, with the message of its failure: the one the failing call
** inside it set, else one naming the code FN returned of its own. */
static int txn_run_body(ravel_txn *t, ravel_txn_fn fn, void *ctx)
{
    rv_errmsg_clear();
    int rc = fn(t, ctx);
    if (rc == RAVEL_OK)
        return RAVEL_OK;
    if (rv_errmsg_get()[0] == '\0')
        return rv_error(rc, "ravel_txn_run: the transaction function "
                        "returned %d (%s)", rc, ravel_errstr(rc));
    return rv_error(rc, "%s", rv_errmsg_get()); /* set again, as ours */
}

int ravel_txn_run(ravel_db *db, int flags, ravel_txn_fn fn, void *ctx,
                  int max_attempts)
{
    if (!fn)
        return rv_error(RAVEL_INVALID, "ravel_txn_run: fn is NULL");
    if (max_attempts < 0)
        return rv_error(RAVEL_INVALID, "ravel_txn_run: max_attempts is %d "
                        "(0 means 10)", max_attempts);
    if (max_attempts == 0)
        max_attempts = 10;
    uint64_t rng = rv_now_nanos() ^ (uint64_t)(uintptr_t)&rng;
    rng |= 1;
    int rc = RAVEL_OK;
    for (int attempt = 0; attempt < max_attempts; attempt++) {
        if (attempt > 0)
            txn_backoff(attempt, &rng);
        ravel_txn *t = NULL;
        rc = ravel_txn_begin(db, flags, &t);
        if (rc)
            return rc;
        rc = txn_run_body(t, fn, ctx);
        if (rc == RAVEL_OK)
            rc = ravel_txn_commit(t);
        ravel_txn_free(t); /* rolls back if FN failed */
        if (!txn_retriable(rc))
            return rc;
    }
    return rc; /* the last retriable failure, its message kept */
}

/* ---------------------------------------------------- two-phase commit */

int ravel_txn_set_name(ravel_txn *t, const char *name)
{
    int rc = txn_check_open(t, "ravel_txn_set_name");
    if (rc)
        return rc;
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 255)
        return rv_error(RAVEL_INVALID, "ravel_txn_set_name: a name is 1 to "
                        "255 bytes (got %s)", !name ? "NULL"
                        : n ? "a longer one" : "an empty one");
    if (t->name)
        return rv_error(RAVEL_INVALID, "ravel_txn_set_name: the transaction "
                        "is named '%s' already", t->name);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return rv_error(RAVEL_INVALID, "ravel_txn_set_name: the name has "
                            "a control byte (0x%02x) at offset %zu: names are "
                            "listed one per line", (unsigned char)name[i], i);
    if (rv_prepared_name_taken(&t->db->prepared, name))
        return rv_error(RAVEL_INVALID, "ravel_txn_set_name: a prepared "
                        "transaction is named '%s' already", name);
    t->name = strdup(name);
    return t->name ? RAVEL_OK
                   : rv_error(RAVEL_NOMEM, "out of memory naming a "
                              "transaction");
}

/* RAVEL_READONLY when DB takes no writes: a prepared file is a write. */
static int txn_check_writable(ravel_db *db, const char *fn)
{
    if (db->options.read_only)
        return rv_error(RAVEL_READONLY, "%s: database %s was opened with "
                        "read_only=true", fn, db->dir);
    if (rv_stop_code(&db->stop))
        return rv_write_refusal(db);
    return RAVEL_OK;
}

/* The WAL segment a record written now goes to at the earliest: the log
** number (every segment from it on is kept). */
static uint64_t txn_segment_floor(ravel_db *db)
{
    rv_mutex_lock(&db->mu.lock);
    uint64_t floor = db->mu.files.log_number;
    rv_mutex_unlock(&db->mu.lock);
    return floor;
}

/* Writes T's prepare record: its batch and a prepare marker, to the WAL
** only (db/prepared.h). */
static int txn_write_prepare(ravel_txn *t)
{
    struct ravel_batch *b = rv_write_index_batch(t->writes);
    size_t len = 0;
    uint32_t count = 0;
    int rc = rv_prepared_begin(&t->db->prepared, t->name,
                               txn_segment_floor(t->db), b,
                               &t->prepared_file, &len, &count);
    if (rc)
        return rc;
    uint64_t segment;
    rc = rv_write_batch_in_segment(t->db, t->flags & RAVEL_SYNC,
                                   RV_WRITE_WAL_ONLY, b, &segment);
    rv_prepared_unmark(&t->db->prepared, b, len, count);
    if (rc)
        rv_prepared_abort(&t->db->prepared, t->db->dir, t->prepared_file);
    return rc;
}

int ravel_txn_prepare(ravel_txn *t)
{
    int rc = txn_check_open(t, "ravel_txn_prepare");
    if (rc)
        return rc;
    if (t->prepared)
        return rv_error(RAVEL_INVALID, "ravel_txn_prepare: transaction '%s' "
                        "is prepared already", t->name);
    if (!t->name)
        return rv_error(RAVEL_INVALID, "ravel_txn_prepare: a transaction "
                        "needs a name (ravel_txn_set_name) to be prepared");
    rc = rv_db_enter(t->db, "ravel_txn_prepare");
    if (rc)
        return rc;
    rc = txn_check_writable(t->db, "ravel_txn_prepare");
    int optimistic = (t->flags & RAVEL_TXN_OPTIMISTIC) != 0;
    if (rc == RAVEL_OK && optimistic) /* validated now, locked from here */
        rc = txn_lock_for_commit(t);
    if (rc == RAVEL_OK)
        rc = txn_write_prepare(t);
    if (rc == RAVEL_OK)
        t->prepared = 1;
    else if (optimistic) /* as before: nothing held */
        txn_drop_held(t, 1);
    rv_db_leave(t->db);
    return rc;
}

/* Commits prepared T: its batch and a commit marker, in one record.  On
** failure T stays prepared (the marker taken off again). */
static int txn_commit_prepared(ravel_txn *t)
{
    int rc = rv_db_enter(t->db, "ravel_txn_commit");
    if (rc)
        return rc;
    struct ravel_batch *b = rv_write_index_batch(t->writes);
    size_t len = 0;
    uint32_t count = 0;
    rc = rv_prepared_mark(&t->db->prepared, t->prepared_file, t->name, b,
                          RV_TYPE_TXN_COMMIT, &len, &count);
    uint64_t segment = 0;
    if (rc == RAVEL_OK)
        rc = rv_write_batch_in_segment(t->db, t->flags & RAVEL_SYNC,
                                       RV_WRITE_ATOMIC, b, &segment);
    if (rc == RAVEL_OK)
        rv_prepared_committed(&t->db->prepared, t->prepared_file, segment);
    else if (len != b->len) /* the marker went on: off again */
        rv_prepared_unmark(&t->db->prepared, b, len, count);
    rv_db_leave(t->db);
    if (rc == RAVEL_OK)
        txn_end(t);
    return rc;
}

/* Rolls prepared T back: a record holding only its rollback marker, then
** its file (if a flush wrote one) goes.  On failure T stays prepared. */
static int txn_rollback_prepared(ravel_txn *t)
{
    int rc = rv_db_enter(t->db, "ravel_txn_rollback");
    if (rc)
        return rc;
    rc = txn_check_writable(t->db, "ravel_txn_rollback");
    struct ravel_batch b;
    rv_batch_init(&b);
    char number[8];
    rv_put_fixed64(number, t->prepared_file);
    if (rc == RAVEL_OK)
        rc = rv_batch_add(&b, RV_TYPE_TXN_ROLLBACK, t->name, strlen(t->name),
                          number, sizeof number);
    uint64_t segment;
    if (rc == RAVEL_OK)
        rc = rv_write_batch_in_segment(t->db, t->flags & RAVEL_SYNC,
                                       RV_WRITE_WAL_ONLY, &b, &segment);
    rv_batch_release(&b);
    if (rc == RAVEL_OK)
        rc = rv_prepared_rolled_back(&t->db->prepared, t->db->dir,
                                     t->prepared_file);
    rv_db_leave(t->db);
    return rc;
}

/* Frees prepared T's hold on its transaction, which stays prepared: its
** keys stay locked (under T's id) and ravel_txn_recover can hand it out
** again. */
static void txn_leave_prepared(ravel_txn *t)
{
    const struct ravel_batch *b = rv_write_index_batch(t->writes);
    char *rep = malloc(b->len);
    if (rep)
        memcpy(rep, b->rep, b->len);
    /* one step: the list never finds neither (a spill needs one); out of
    ** memory, it is recovered at the next open */
    rv_prepared_unclaim(&t->db->prepared, t->prepared_file, t->id, rep,
                        rep ? b->len : 0);
    for (size_t i = 0; i < t->nkeys; i++)
        free(t->keys[i].key);
    t->nkeys = 0;
    txn_drop_held(t, 0); /* its locks stay, under T's id */
    t->prepared = 0;
    t->flags |= RAVEL_TXN_OPTIMISTIC; /* so txn_end unlocks nothing */
}

/* Fills recovered T's write index and key list from REP (LEN bytes). */
static int txn_load_prepared(ravel_txn *t, const char *rep, size_t len)
{
    size_t off = RV_BATCH_HEADER_SIZE;
    uint32_t count = rv_batch_rep_count(rep);
    int rc = RAVEL_OK;
    for (uint32_t i = 0; i < count && rc == RAVEL_OK; i++) {
        struct rv_batch_op op;
        rc = rv_batch_decode_op(rep, len, &off, i, &op);
        if (rc == RAVEL_OK && op.type == RV_TYPE_PUT)
            rc = rv_write_index_put(t->writes, op.key, op.klen, op.val,
                                    op.vlen);
        else if (rc == RAVEL_OK && op.type == RV_TYPE_DELETE)
            rc = rv_write_index_delete(t->writes, op.key, op.klen);
        else
            continue;
        if (rc == RAVEL_OK)
            rc = txn_keep_key(t, op.key, op.klen);
    }
    return rc;
}

int ravel_txn_recover(ravel_db *db, const char *name, ravel_txn **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_txn_recover: out is NULL");
    *out = NULL;
    if (!name)
        return rv_error(RAVEL_INVALID, "ravel_txn_recover: name is NULL");
    ravel_txn *t = NULL;
    /* state made: keys relocked.  Its commit is durable when it returns:
    ** the flags it was begun with are not kept */
    int rc = ravel_txn_begin(db, RAVEL_SYNC, &t);
    if (rc)
        return rc;
    struct rv_prepared_txn e;
    rc = rv_prepared_claim(&db->prepared, name, &e);
    if (rc) {
        ravel_txn_free(t);
        return rc;
    }
    t->id = e.owner; /* its keys are locked under this id */
    t->name = e.name;
    t->prepared_file = e.number;
    rc = txn_load_prepared(t, e.rep, e.len); /* E.REP: lent by the list */
    if (rc) { /* handed back, still prepared */
        rv_prepared_unclaim(&db->prepared, e.number, e.owner, NULL, 0);
        for (size_t i = 0; i < t->nkeys; i++)
            free(t->keys[i].key);
        t->nkeys = 0;
        t->flags |= RAVEL_TXN_OPTIMISTIC; /* unlock nothing */
        ravel_txn_free(t);
        return rc;
    }
    t->prepared = 1;
    /* the list reads its writes from T's batch now */
    rv_prepared_attach(&db->prepared, t->prepared_file,
                       rv_write_index_batch(t->writes));
    *out = t;
    return RAVEL_OK;
}
