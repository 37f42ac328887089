/*
** txn-compare.c -- one transaction workload through the C APIs of ravel,
** RocksDB (TransactionDB and OptimisticTransactionDB), LMDB and SQLite,
** so that the comparison is of the engines, not of harnesses
** (bench/bench-txn.sh runs it; docs/performance.md, "Transactions", has
** the results).
**
** The workload, the same for each engine: a bank of --accounts accounts
** (default 100,000; keys 8 bytes, the account's number big-endian;
** balances 8 bytes, a signed integer, 1000 each at the start), loaded in
** one transaction into a fresh database in --dir.  Then --threads threads
** for --seconds seconds each move a random amount (1 .. 100) between two
** random distinct accounts: read both for update, write both, commit.  A
** retriable failure (ravel: RAVEL_CONFLICT, RAVEL_TIMEDOUT,
** RAVEL_DEADLOCK; RocksDB: Busy, TimedOut, TryAgain; SQLite: SQLITE_BUSY)
** rolls the transfer back and runs it again at once, and is counted as a
** retry.  At the end the balances are summed: the total must be what was
** loaded, or txn-compare says so and exits 1.
**
** Engines:
**   ravel-pessimistic  ravel_txn_begin, get_for_update (locks the key)
**   ravel-optimistic   ravel_txn_begin(RAVEL_TXN_OPTIMISTIC), validated at
**                      commit
**   rocksdb-txn        rocksdb_transactiondb_*, get_for_update exclusive,
**                      deadlock detection on, lock timeout 1000 ms as
**                      ravel's (RocksDB's default TransactionOptions
**                      otherwise: no snapshot, so a locked read is never a
**                      conflict -- RocksDB's cheapest correct transfer)
**   rocksdb-occ        rocksdb_optimistictransactiondb_*, validated at
**                      commit
**   lmdb               one write transaction per transfer (LMDB runs one
**                      writer at a time: that is its model)
**   sqlite             WAL mode, one connection per thread, BEGIN
**                      IMMEDIATE, two SELECTs, two UPDATEs, COMMIT,
**                      busy_timeout 1000 ms
** Without --sync a commit is written to the log (WAL; LMDB's data file)
** and not synced: ravel and RocksDB without sync, LMDB with MDB_NOSYNC,
** SQLite with synchronous=NORMAL.  With --sync each commit is durable
** when it returns: RAVEL_SYNC, WriteOptions.sync, LMDB's default,
** SQLite's synchronous=FULL.  Caches: ravel and RocksDB 32 MiB of block
** cache and 64 MiB write buffers, SQLite 32 MiB of page cache; LMDB reads
** its memory map.  The whole bank fits in each.
**
** Output, one line, for bench-txn.sh to collect:
**   engine=E threads=N sync=0|1 seconds=S transfers=T ops_per_s=R
**   retries=X retries_per_op=Y txns_per_fsync=Z total=ok
** txns_per_fsync is ravel's, from ravel.stats ("sync writers acknowledged"
** over "fsync issued" during the run), "-" for the others.
*/
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ravel.h"
#ifdef HAVE_ROCKSDB
# include <rocksdb/c.h>
#endif
#ifdef HAVE_LMDB
# include <lmdb.h>
#endif
#ifdef HAVE_SQLITE
# include <sqlite3.h>
#endif

#define INITIAL_BALANCE 1000
#define LOCK_TIMEOUT_MS 1000
#define CACHE_BYTES (32u << 20)
#define WRITE_BUFFER_BYTES (64u << 20)

/* ------------------------------------------------------------ the run */

struct run {
    const struct engine *engine;
    const char *dir;
    uint64_t accounts;
    int threads, sync;
    double seconds;
    _Atomic int stop;
    void *db; /* the engine's handle */
};

/* One thread's state: its engine context (an SQLite connection), its
** random numbers and counts. */
struct worker {
    pthread_t handle;
    struct run *run;
    void *ctx;
    uint64_t rng;
    uint64_t transfers, retries;
};

/* Each engine: OPEN creates a fresh database in run->dir and loads the
** bank; THREAD_OPEN/THREAD_CLOSE make and drop a thread's context (NULL:
** none); TRANSFER moves AMOUNT from account A to B, retrying on the
** engine's retriable failures and counting them in *RETRIES, and returns
** 0, or -1 on any other failure (message printed); TOTAL sums the
** balances; STATS_BEGIN/TXNS_PER_FSYNC (NULL: not measured) say how many
** transactions shared an fdatasync during the run; CLOSE closes. */
struct engine {
    const char *name;
    int (*open)(struct run *r);
    void *(*thread_open)(struct run *r);
    void (*thread_close)(void *ctx);
    int (*transfer)(struct run *r, void *ctx, uint64_t a, uint64_t b,
                    int64_t amount, uint64_t *retries);
    int (*total)(struct run *r, int64_t *sum);
    void (*stats_begin)(struct run *r);
    double (*txns_per_fsync)(struct run *r);
    void (*close)(struct run *r);
};

static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void key_of(uint64_t account, unsigned char key[8])
{
    for (int i = 7; i >= 0; i--, account >>= 8)
        key[i] = (unsigned char)account;
}

static int64_t balance_of(const void *val)
{
    int64_t v;
    memcpy(&v, val, sizeof v);
    return v;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- ravel */

struct ravel_run {
    ravel_db *db;
    uint64_t fsyncs, acks; /* at the run's start */
};

static int ravel_open_bank(struct run *r)
{
    struct ravel_run *rr = calloc(1, sizeof *rr);
    ravel_options *o = NULL;
    ravel_batch *b = NULL;
    int rc = rr ? ravel_options_new(&o) : RAVEL_NOMEM;
    if (!rc)
        rc = ravel_options_set(o, "create_if_missing", "true");
    if (!rc)
        rc = ravel_options_set(o, "block_cache_size", "32M");
    if (!rc)
        rc = ravel_options_set(o, "write_buffer_size", "64M");
    if (!rc)
        rc = ravel_options_set(o, "txn_lock_timeout", "1000");
    if (!rc)
        rc = ravel_open(r->dir, o, &rr->db);
    if (!rc)
        rc = ravel_batch_new(&b);
    for (uint64_t i = 0; !rc && i < r->accounts; i++) {
        unsigned char key[8];
        int64_t v = INITIAL_BALANCE;
        key_of(i, key);
        rc = ravel_batch_put(b, key, 8, &v, 8);
    }
    if (!rc)
        rc = ravel_write(rr->db, RAVEL_SYNC, b);
    ravel_batch_free(b);
    ravel_options_free(o);
    if (rc) {
        fprintf(stderr, "ravel: %s: %s\n", ravel_errstr(rc), ravel_errmsg());
        return -1;
    }
    r->db = rr;
    return 0;
}

static int ravel_retriable(int rc)
{
    return rc == RAVEL_CONFLICT || rc == RAVEL_TIMEDOUT ||
           rc == RAVEL_DEADLOCK;
}

/* One attempt: RAVEL_OK, a retriable code, or another failure. */
static int ravel_transfer_once(ravel_db *db, int flags, uint64_t a,
                               uint64_t b, int64_t amount)
{
    ravel_txn *t = NULL;
    unsigned char ka[8], kb[8];
    void *va = NULL, *vb = NULL;
    size_t la, lb;
    key_of(a, ka);
    key_of(b, kb);
    int rc = ravel_txn_begin(db, flags, &t);
    if (!rc)
        rc = ravel_txn_get_for_update(t, ka, 8, &va, &la);
    if (!rc)
        rc = ravel_txn_get_for_update(t, kb, 8, &vb, &lb);
    if (!rc && (la != 8 || lb != 8))
        rc = RAVEL_CORRUPT;
    if (!rc) {
        int64_t na = balance_of(va) - amount, nb = balance_of(vb) + amount;
        rc = ravel_txn_put(t, ka, 8, &na, 8);
        if (!rc)
            rc = ravel_txn_put(t, kb, 8, &nb, 8);
    }
    if (!rc)
        rc = ravel_txn_commit(t);
    ravel_free(va);
    ravel_free(vb);
    ravel_txn_free(t); /* rolls back what did not commit */
    return rc;
}

static int ravel_transfer(struct run *r, void *ctx, uint64_t a, uint64_t b,
                          int64_t amount, uint64_t *retries, int flags)
{
    struct ravel_run *rr = r->db;
    (void)ctx;
    for (;;) {
        int rc = ravel_transfer_once(rr->db, flags | (r->sync ? RAVEL_SYNC : 0),
                                     a, b, amount);
        if (rc == RAVEL_OK)
            return 0;
        if (!ravel_retriable(rc)) {
            fprintf(stderr, "ravel: transfer: %s: %s\n", ravel_errstr(rc),
                    ravel_errmsg());
            return -1;
        }
        ++*retries;
    }
}

static int ravel_transfer_pessimistic(struct run *r, void *ctx, uint64_t a,
                                      uint64_t b, int64_t amount,
                                      uint64_t *retries)
{
    return ravel_transfer(r, ctx, a, b, amount, retries, 0);
}

static int ravel_transfer_optimistic(struct run *r, void *ctx, uint64_t a,
                                     uint64_t b, int64_t amount,
                                     uint64_t *retries)
{
    return ravel_transfer(r, ctx, a, b, amount, retries,
                          RAVEL_TXN_OPTIMISTIC);
}

static int ravel_total(struct run *r, int64_t *sum)
{
    struct ravel_run *rr = r->db;
    ravel_iter *it = NULL;
    uint64_t n = 0;
    int rc = ravel_iter_new(rr->db, NULL, &it);
    *sum = 0;
    for (rc = rc ? rc : ravel_iter_seek_to_first(it); !rc && ravel_iter_valid(it);
         rc = ravel_iter_next(it), n++) {
        size_t vlen;
        const void *v = ravel_iter_value(it, &vlen);
        *sum += vlen == 8 ? balance_of(v) : 0;
    }
    if (!rc)
        rc = ravel_iter_status(it);
    ravel_iter_free(it);
    if (rc || n != r->accounts) {
        fprintf(stderr, "ravel: summing: %s (%" PRIu64 " accounts)\n",
                rc ? ravel_errmsg() : "wrong count", n);
        return -1;
    }
    return 0;
}

/* "fsync: N issued, M sync writers acknowledged" from ravel.stats. */
static void ravel_fsync_counts(ravel_db *db, uint64_t *fsyncs, uint64_t *acks)
{
    char *text = NULL;
    *fsyncs = *acks = 0;
    if (ravel_property(db, "ravel.stats", &text) != RAVEL_OK)
        return;
    const char *p = strstr(text, "fsync: ");
    unsigned long long f = 0, a = 0;
    if (p && sscanf(p, "fsync: %llu issued, %llu sync writers", &f, &a) == 2) {
        *fsyncs = f;
        *acks = a;
    }
    ravel_free(text);
}

static void ravel_stats_begin(struct run *r)
{
    struct ravel_run *rr = r->db;
    ravel_fsync_counts(rr->db, &rr->fsyncs, &rr->acks);
}

static double ravel_txns_per_fsync(struct run *r)
{
    struct ravel_run *rr = r->db;
    uint64_t f, a;
    ravel_fsync_counts(rr->db, &f, &a);
    return f > rr->fsyncs ? (double)(a - rr->acks) / (double)(f - rr->fsyncs)
                          : 0.0;
}

static void ravel_close_bank(struct run *r)
{
    struct ravel_run *rr = r->db;
    int rc = ravel_close(rr->db);
    if (rc)
        fprintf(stderr, "ravel_close: %s\n", ravel_errmsg());
    free(rr);
}

/* -------------------------------------------------------------- RocksDB */

#ifdef HAVE_ROCKSDB
struct rocks_run {
    int optimistic;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *table;
    rocksdb_cache_t *cache;
    rocksdb_transactiondb_options_t *tdb_opts;
    rocksdb_transactiondb_t *tdb;
    rocksdb_optimistictransactiondb_t *odb;
    rocksdb_transaction_options_t *txn_opts;
    rocksdb_optimistictransaction_options_t *otxn_opts;
    rocksdb_writeoptions_t *wo;
    rocksdb_readoptions_t *ro;
};

static int rocks_failed(const char *what, char *err)
{
    if (!err)
        return 0;
    fprintf(stderr, "rocksdb: %s: %s\n", what, err);
    rocksdb_free(err);
    return -1;
}

/* RocksDB's retriable statuses, as its C API spells them. */
static int rocks_retriable(const char *err)
{
    return strncmp(err, "Resource busy", 13) == 0 ||
           strncmp(err, "Operation timed out", 19) == 0 ||
           strncmp(err, "Operation failed. Try again", 27) == 0;
}

static rocksdb_transaction_t *rocks_begin(struct rocks_run *rr,
                                          rocksdb_transaction_t *old)
{
    return rr->optimistic
               ? rocksdb_optimistictransaction_begin(rr->odb, rr->wo,
                                                     rr->otxn_opts, old)
               : rocksdb_transaction_begin(rr->tdb, rr->wo, rr->txn_opts, old);
}

static int rocks_open_bank(struct run *r, int optimistic)
{
    struct rocks_run *rr = calloc(1, sizeof *rr);
    char *err = NULL;
    if (!rr)
        return -1;
    rr->optimistic = optimistic;
    rr->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(rr->opts, 1);
    rocksdb_options_set_write_buffer_size(rr->opts, WRITE_BUFFER_BYTES);
    rr->cache = rocksdb_cache_create_lru(CACHE_BYTES);
    rr->table = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_block_cache(rr->table, rr->cache);
    rocksdb_options_set_block_based_table_factory(rr->opts, rr->table);
    rr->wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(rr->wo, (unsigned char)r->sync);
    rr->ro = rocksdb_readoptions_create();
    if (optimistic) {
        rr->odb = rocksdb_optimistictransactiondb_open(rr->opts, r->dir, &err);
        rr->otxn_opts = rocksdb_optimistictransaction_options_create();
    } else {
        rr->tdb_opts = rocksdb_transactiondb_options_create();
        rocksdb_transactiondb_options_set_transaction_lock_timeout(
            rr->tdb_opts, LOCK_TIMEOUT_MS);
        rr->tdb = rocksdb_transactiondb_open(rr->opts, rr->tdb_opts, r->dir,
                                             &err);
        rr->txn_opts = rocksdb_transaction_options_create();
        rocksdb_transaction_options_set_deadlock_detect(rr->txn_opts, 1);
        rocksdb_transaction_options_set_lock_timeout(rr->txn_opts,
                                                     LOCK_TIMEOUT_MS);
    }
    r->db = rr;
    if (rocks_failed("open", err))
        return -1;
    rocksdb_transaction_t *t = rocks_begin(rr, NULL);
    for (uint64_t i = 0; i < r->accounts && !err; i++) {
        unsigned char key[8];
        int64_t v = INITIAL_BALANCE;
        key_of(i, key);
        rocksdb_transaction_put(t, (const char *)key, 8, (const char *)&v, 8,
                                &err);
    }
    if (!err)
        rocksdb_transaction_commit(t, &err);
    rocksdb_transaction_destroy(t);
    return rocks_failed("load", err);
}

static int rocks_open_pessimistic(struct run *r)
{
    return rocks_open_bank(r, 0);
}

static int rocks_open_optimistic(struct run *r)
{
    return rocks_open_bank(r, 1);
}

/* A reusable transaction per thread, as RocksDB's users keep one
** (rocksdb_transaction_begin's OLD_TXN). */
struct rocks_thread {
    rocksdb_transaction_t *txn;
};

static void *rocks_thread_open(struct run *r)
{
    (void)r;
    return calloc(1, sizeof(struct rocks_thread));
}

static void rocks_thread_close(void *ctx)
{
    struct rocks_thread *rt = ctx;
    if (rt->txn)
        rocksdb_transaction_destroy(rt->txn);
    free(rt);
}

/* One attempt: 0 committed, 1 retriable (rolled back), -1 failed. */
static int rocks_transfer_once(struct rocks_run *rr, struct rocks_thread *rt,
                               uint64_t a, uint64_t b, int64_t amount)
{
    unsigned char ka[8], kb[8];
    char *err = NULL, *va = NULL, *vb = NULL;
    size_t la = 0, lb = 0;
    key_of(a, ka);
    key_of(b, kb);
    rocksdb_transaction_t *t = rt->txn = rocks_begin(rr, rt->txn);
    va = rocksdb_transaction_get_for_update(t, rr->ro, (const char *)ka, 8,
                                            &la, 1, &err);
    if (!err)
        vb = rocksdb_transaction_get_for_update(t, rr->ro, (const char *)kb,
                                                8, &lb, 1, &err);
    if (!err && (!va || !vb || la != 8 || lb != 8))
        err = strdup("Corruption: an account is missing");
    if (!err) {
        int64_t na = balance_of(va) - amount, nb = balance_of(vb) + amount;
        rocksdb_transaction_put(t, (const char *)ka, 8, (const char *)&na, 8,
                                &err);
        if (!err)
            rocksdb_transaction_put(t, (const char *)kb, 8,
                                    (const char *)&nb, 8, &err);
    }
    if (!err)
        rocksdb_transaction_commit(t, &err);
    rocksdb_free(va);
    rocksdb_free(vb);
    if (!err)
        return 0;
    char *rb = NULL;
    rocksdb_transaction_rollback(t, &rb);
    rocksdb_free(rb);
    int retry = rocks_retriable(err);
    if (!retry)
        fprintf(stderr, "rocksdb: transfer: %s\n", err);
    rocksdb_free(err);
    return retry ? 1 : -1;
}

static int rocks_transfer(struct run *r, void *ctx, uint64_t a, uint64_t b,
                          int64_t amount, uint64_t *retries)
{
    for (;;) {
        int rc = rocks_transfer_once(r->db, ctx, a, b, amount);
        if (rc <= 0)
            return rc;
        ++*retries;
    }
}

static int rocks_total(struct run *r, int64_t *sum)
{
    struct rocks_run *rr = r->db;
    rocksdb_iterator_t *it;
    uint64_t n = 0;
    char *err = NULL;
    if (rr->optimistic) {
        rocksdb_t *base = rocksdb_optimistictransactiondb_get_base_db(rr->odb);
        it = rocksdb_create_iterator(base, rr->ro);
        rocksdb_optimistictransactiondb_close_base_db(base);
    } else {
        it = rocksdb_transactiondb_create_iterator(rr->tdb, rr->ro);
    }
    *sum = 0;
    for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it);
         rocksdb_iter_next(it), n++) {
        size_t vlen;
        const char *v = rocksdb_iter_value(it, &vlen);
        *sum += vlen == 8 ? balance_of(v) : 0;
    }
    rocksdb_iter_get_error(it, &err);
    rocksdb_iter_destroy(it);
    if (rocks_failed("summing", err))
        return -1;
    if (n != r->accounts) {
        fprintf(stderr, "rocksdb: %" PRIu64 " accounts, not %" PRIu64 "\n",
                n, r->accounts);
        return -1;
    }
    return 0;
}

static void rocks_close_bank(struct run *r)
{
    struct rocks_run *rr = r->db;
    if (rr->odb)
        rocksdb_optimistictransactiondb_close(rr->odb);
    if (rr->tdb)
        rocksdb_transactiondb_close(rr->tdb);
    if (rr->otxn_opts)
        rocksdb_optimistictransaction_options_destroy(rr->otxn_opts);
    if (rr->txn_opts)
        rocksdb_transaction_options_destroy(rr->txn_opts);
    if (rr->tdb_opts)
        rocksdb_transactiondb_options_destroy(rr->tdb_opts);
    rocksdb_writeoptions_destroy(rr->wo);
    rocksdb_readoptions_destroy(rr->ro);
    rocksdb_options_destroy(rr->opts);
    rocksdb_block_based_options_destroy(rr->table);
    rocksdb_cache_destroy(rr->cache);
    free(rr);
}
#endif /* HAVE_ROCKSDB */

/* ----------------------------------------------------------------- LMDB */

#ifdef HAVE_LMDB
struct lmdb_run {
    MDB_env *env;
    MDB_dbi dbi;
};

static int lmdb_failed(const char *what, int rc)
{
    if (rc == MDB_SUCCESS)
        return 0;
    fprintf(stderr, "lmdb: %s: %s\n", what, mdb_strerror(rc));
    return -1;
}

static int lmdb_open_bank(struct run *r)
{
    struct lmdb_run *lr = calloc(1, sizeof *lr);
    MDB_txn *t = NULL;
    if (!lr)
        return -1;
    r->db = lr;
    if (mkdir(r->dir, 0755) != 0 && errno != EEXIST) {
        perror(r->dir);
        return -1;
    }
    int rc = mdb_env_create(&lr->env);
    if (!rc)
        rc = mdb_env_set_mapsize(lr->env, (size_t)1 << 30);
    if (!rc)
        rc = mdb_env_set_maxreaders(lr->env, 1024);
    if (!rc)
        rc = mdb_env_open(lr->env, r->dir, r->sync ? 0 : MDB_NOSYNC, 0644);
    if (!rc)
        rc = mdb_txn_begin(lr->env, NULL, 0, &t);
    if (!rc)
        rc = mdb_dbi_open(t, NULL, 0, &lr->dbi);
    for (uint64_t i = 0; !rc && i < r->accounts; i++) {
        unsigned char key[8];
        int64_t v = INITIAL_BALANCE;
        key_of(i, key);
        MDB_val k = {8, key}, val = {8, &v};
        rc = mdb_put(t, lr->dbi, &k, &val, MDB_APPEND);
    }
    if (!rc) {
        rc = mdb_txn_commit(t);
        t = NULL;
    }
    if (t)
        mdb_txn_abort(t);
    return lmdb_failed("load", rc);
}

static int lmdb_transfer(struct run *r, void *ctx, uint64_t a, uint64_t b,
                         int64_t amount, uint64_t *retries)
{
    struct lmdb_run *lr = r->db;
    unsigned char ka[8], kb[8];
    MDB_txn *t = NULL;
    MDB_val k1 = {8, ka}, k2 = {8, kb}, v1, v2;
    (void)ctx;
    (void)retries; /* LMDB's writers wait for each other: nothing to retry */
    key_of(a, ka);
    key_of(b, kb);
    int rc = mdb_txn_begin(lr->env, NULL, 0, &t);
    if (!rc)
        rc = mdb_get(t, lr->dbi, &k1, &v1);
    if (!rc)
        rc = mdb_get(t, lr->dbi, &k2, &v2);
    if (!rc) {
        int64_t na = balance_of(v1.mv_data) - amount;
        int64_t nb = balance_of(v2.mv_data) + amount;
        MDB_val n1 = {8, &na}, n2 = {8, &nb};
        rc = mdb_put(t, lr->dbi, &k1, &n1, 0);
        if (!rc)
            rc = mdb_put(t, lr->dbi, &k2, &n2, 0);
    }
    if (!rc)
        return lmdb_failed("commit", mdb_txn_commit(t));
    mdb_txn_abort(t);
    return lmdb_failed("transfer", rc);
}

static int lmdb_total(struct run *r, int64_t *sum)
{
    struct lmdb_run *lr = r->db;
    MDB_txn *t = NULL;
    MDB_cursor *c = NULL;
    MDB_val k, v;
    uint64_t n = 0;
    int rc = mdb_txn_begin(lr->env, NULL, MDB_RDONLY, &t);
    if (!rc)
        rc = mdb_cursor_open(t, lr->dbi, &c);
    *sum = 0;
    for (int op = MDB_FIRST; !rc; op = MDB_NEXT, n++) {
        rc = mdb_cursor_get(c, &k, &v, op);
        if (!rc)
            *sum += v.mv_size == 8 ? balance_of(v.mv_data) : 0;
    }
    n--; /* the last step found nothing */
    if (c)
        mdb_cursor_close(c);
    if (t)
        mdb_txn_abort(t);
    if (rc != MDB_NOTFOUND)
        return lmdb_failed("summing", rc);
    if (n != r->accounts) {
        fprintf(stderr, "lmdb: %" PRIu64 " accounts, not %" PRIu64 "\n", n,
                r->accounts);
        return -1;
    }
    return 0;
}

static void lmdb_close_bank(struct run *r)
{
    struct lmdb_run *lr = r->db;
    mdb_env_close(lr->env);
    free(lr);
}
#endif /* HAVE_LMDB */

/* --------------------------------------------------------------- SQLite */

#ifdef HAVE_SQLITE
/* A thread's connection and its prepared statements. */
struct sqlite_thread {
    sqlite3 *db;
    sqlite3_stmt *begin, *select, *update, *commit, *rollback;
};

static char sqlite_path[4200];

static int sqlite_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "sqlite: %s: %s\n", sql, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return rc == SQLITE_OK ? 0 : -1;
}

/* A connection with the run's settings. */
static sqlite3 *sqlite_connect(struct run *r)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(sqlite_path, &db, SQLITE_OPEN_READWRITE |
                        SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        fprintf(stderr, "sqlite: open %s: %s\n", sqlite_path,
                db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, LOCK_TIMEOUT_MS);
    if (sqlite_exec(db, "PRAGMA journal_mode=WAL") ||
        sqlite_exec(db, r->sync ? "PRAGMA synchronous=FULL"
                                : "PRAGMA synchronous=NORMAL") ||
        sqlite_exec(db, "PRAGMA cache_size=-32768")) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static int sqlite_open_bank(struct run *r)
{
    if (mkdir(r->dir, 0755) != 0 && errno != EEXIST) {
        perror(r->dir);
        return -1;
    }
    snprintf(sqlite_path, sizeof sqlite_path, "%s/bank.db", r->dir);
    sqlite3 *db = sqlite_connect(r);
    sqlite3_stmt *ins = NULL;
    if (!db)
        return -1;
    r->db = db;
    if (sqlite_exec(db, "CREATE TABLE accounts(id INTEGER PRIMARY KEY, "
                        "balance INTEGER NOT NULL)") ||
        sqlite_exec(db, "BEGIN") ||
        sqlite3_prepare_v2(db, "INSERT INTO accounts VALUES(?, ?)", -1, &ins,
                           NULL) != SQLITE_OK)
        return -1;
    for (uint64_t i = 0; i < r->accounts; i++) {
        sqlite3_bind_int64(ins, 1, (sqlite3_int64)i);
        sqlite3_bind_int64(ins, 2, INITIAL_BALANCE);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            fprintf(stderr, "sqlite: insert: %s\n", sqlite3_errmsg(db));
            sqlite3_finalize(ins);
            return -1;
        }
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    return sqlite_exec(db, "COMMIT");
}

static void sqlite_thread_close(void *ctx)
{
    struct sqlite_thread *st = ctx;
    if (!st)
        return;
    sqlite3_finalize(st->begin);
    sqlite3_finalize(st->select);
    sqlite3_finalize(st->update);
    sqlite3_finalize(st->commit);
    sqlite3_finalize(st->rollback);
    sqlite3_close(st->db);
    free(st);
}

static void *sqlite_thread_open(struct run *r)
{
    struct sqlite_thread *st = calloc(1, sizeof *st);
    if (!st || !(st->db = sqlite_connect(r)))
        goto fail;
    const struct {
        sqlite3_stmt **stmt;
        const char *sql;
    } stmts[] = {
        {&st->begin, "BEGIN IMMEDIATE"},
        {&st->select, "SELECT balance FROM accounts WHERE id = ?"},
        {&st->update, "UPDATE accounts SET balance = ? WHERE id = ?"},
        {&st->commit, "COMMIT"},
        {&st->rollback, "ROLLBACK"},
    };
    for (size_t i = 0; i < sizeof stmts / sizeof *stmts; i++)
        if (sqlite3_prepare_v2(st->db, stmts[i].sql, -1, stmts[i].stmt,
                               NULL) != SQLITE_OK) {
            fprintf(stderr, "sqlite: %s: %s\n", stmts[i].sql,
                    sqlite3_errmsg(st->db));
            goto fail;
        }
    return st;
fail:
    sqlite_thread_close(st);
    return NULL;
}

/* Steps STMT once to its end: SQLITE_DONE or SQLITE_ROW, else the code. */
static int sqlite_step(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc;
}

static int sqlite_balance(struct sqlite_thread *st, uint64_t id, int64_t *out)
{
    sqlite3_bind_int64(st->select, 1, (sqlite3_int64)id);
    int rc = sqlite3_step(st->select);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st->select, 0);
    sqlite3_reset(st->select);
    return rc == SQLITE_ROW ? SQLITE_OK : rc == SQLITE_DONE ? SQLITE_NOTFOUND
                                                            : rc;
}

static int sqlite_set(struct sqlite_thread *st, uint64_t id, int64_t v)
{
    sqlite3_bind_int64(st->update, 1, v);
    sqlite3_bind_int64(st->update, 2, (sqlite3_int64)id);
    int rc = sqlite_step(st->update);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* One attempt: SQLITE_OK, SQLITE_BUSY (rolled back), or another code. */
static int sqlite_transfer_once(struct sqlite_thread *st, uint64_t a,
                                uint64_t b, int64_t amount)
{
    int64_t ba = 0, bb = 0;
    int rc = sqlite_step(st->begin);
    if (rc != SQLITE_DONE)
        return rc;
    rc = sqlite_balance(st, a, &ba);
    if (!rc)
        rc = sqlite_balance(st, b, &bb);
    if (!rc)
        rc = sqlite_set(st, a, ba - amount);
    if (!rc)
        rc = sqlite_set(st, b, bb + amount);
    if (!rc) {
        rc = sqlite_step(st->commit);
        if (rc == SQLITE_DONE)
            return SQLITE_OK;
    }
    sqlite_step(st->rollback);
    return rc;
}

static int sqlite_transfer(struct run *r, void *ctx, uint64_t a, uint64_t b,
                           int64_t amount, uint64_t *retries)
{
    struct sqlite_thread *st = ctx;
    (void)r;
    for (;;) {
        int rc = sqlite_transfer_once(st, a, b, amount);
        if (rc == SQLITE_OK)
            return 0;
        if ((rc & 0xff) != SQLITE_BUSY) {
            fprintf(stderr, "sqlite: transfer: %s (%s)\n", sqlite3_errstr(rc),
                    sqlite3_errmsg(st->db));
            return -1;
        }
        ++*retries;
    }
}

static int sqlite_total(struct run *r, int64_t *sum)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(r->db, "SELECT count(*), sum(balance) FROM "
                                "accounts", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        uint64_t n = (uint64_t)sqlite3_column_int64(s, 0);
        *sum = sqlite3_column_int64(s, 1);
        sqlite3_finalize(s);
        if (n == r->accounts)
            return 0;
        fprintf(stderr, "sqlite: %" PRIu64 " accounts, not %" PRIu64 "\n",
                n, r->accounts);
        return -1;
    }
    fprintf(stderr, "sqlite: summing: %s\n", sqlite3_errmsg(r->db));
    sqlite3_finalize(s);
    return -1;
}

static void sqlite_close_bank(struct run *r)
{
    sqlite3_close(r->db);
}
#endif /* HAVE_SQLITE */

/* -------------------------------------------------------------- engines */

static const struct engine engines[] = {
    {"ravel-pessimistic", ravel_open_bank, NULL, NULL,
     ravel_transfer_pessimistic, ravel_total, ravel_stats_begin,
     ravel_txns_per_fsync, ravel_close_bank},
    {"ravel-optimistic", ravel_open_bank, NULL, NULL,
     ravel_transfer_optimistic, ravel_total, ravel_stats_begin,
     ravel_txns_per_fsync, ravel_close_bank},
#ifdef HAVE_ROCKSDB
    {"rocksdb-txn", rocks_open_pessimistic, rocks_thread_open,
     rocks_thread_close, rocks_transfer, rocks_total, NULL, NULL,
     rocks_close_bank},
    {"rocksdb-occ", rocks_open_optimistic, rocks_thread_open,
     rocks_thread_close, rocks_transfer, rocks_total, NULL, NULL,
     rocks_close_bank},
#endif
#ifdef HAVE_LMDB
    {"lmdb", lmdb_open_bank, NULL, NULL, lmdb_transfer, lmdb_total, NULL,
     NULL, lmdb_close_bank},
#endif
#ifdef HAVE_SQLITE
    {"sqlite", sqlite_open_bank, sqlite_thread_open, sqlite_thread_close,
     sqlite_transfer, sqlite_total, NULL, NULL, sqlite_close_bank},
#endif
};

/* ------------------------------------------------------------- threads */

static void *worker_run(void *arg)
{
    struct worker *w = arg;
    struct run *r = w->run;
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        uint64_t a = rng_next(&w->rng) % r->accounts;
        uint64_t b = rng_next(&w->rng) % (r->accounts - 1);
        b += b >= a; /* distinct from a, uniform over the others */
        int64_t amount = (int64_t)(rng_next(&w->rng) % 100) + 1;
        if (r->engine->transfer(r, w->ctx, a, b, amount, &w->retries) != 0)
            exit(1);
        w->transfers++;
    }
    return NULL;
}

/* Runs the transfers on r->threads threads for r->seconds; the counts into
** *TRANSFERS and *RETRIES, the time they took into *ELAPSED. */
static void run_transfers(struct run *r, uint64_t *transfers,
                          uint64_t *retries, double *elapsed)
{
    struct worker *w = calloc((size_t)r->threads, sizeof *w);
    if (!w)
        exit(1);
    for (int i = 0; i < r->threads; i++) {
        w[i].run = r;
        w[i].rng = (uint64_t)time(NULL) * 1000003u + (uint64_t)i * 7919u;
        if (r->engine->thread_open && !(w[i].ctx = r->engine->thread_open(r)))
            exit(1);
    }
    double start = now_seconds();
    for (int i = 0; i < r->threads; i++)
        if (pthread_create(&w[i].handle, NULL, worker_run, &w[i]) != 0)
            exit(1);
    struct timespec ts = {(time_t)r->seconds,
                          (long)((r->seconds - (double)(time_t)r->seconds) *
                                 1e9)};
    nanosleep(&ts, NULL);
    atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
    *transfers = *retries = 0;
    for (int i = 0; i < r->threads; i++) {
        pthread_join(w[i].handle, NULL);
        *transfers += w[i].transfers;
        *retries += w[i].retries;
    }
    *elapsed = now_seconds() - start;
    for (int i = 0; i < r->threads; i++)
        if (r->engine->thread_close)
            r->engine->thread_close(w[i].ctx);
    free(w);
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
    fprintf(stderr, "usage: txn-compare ENGINE --dir=DIR [--threads=N] "
            "[--seconds=S] [--sync] [--accounts=N]\nengines:");
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++)
        fprintf(stderr, " %s", engines[i].name);
    fprintf(stderr, "\nDIR must not exist: the run's database is made there "
            "and left for the caller to remove.\n");
    exit(2);
}

static void parse_args(int argc, char **argv, struct run *r)
{
    if (argc < 2)
        usage();
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++)
        if (strcmp(argv[1], engines[i].name) == 0)
            r->engine = &engines[i];
    if (!r->engine) {
        fprintf(stderr, "txn-compare: no engine '%s' in this build\n",
                argv[1]);
        usage();
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--dir=", 6) == 0)
            r->dir = a + 6;
        else if (strncmp(a, "--threads=", 10) == 0)
            r->threads = atoi(a + 10);
        else if (strncmp(a, "--seconds=", 10) == 0)
            r->seconds = atof(a + 10);
        else if (strncmp(a, "--accounts=", 11) == 0)
            r->accounts = strtoull(a + 11, NULL, 10);
        else if (strcmp(a, "--sync") == 0)
            r->sync = 1;
        else
            usage();
    }
    if (!r->dir || r->threads < 1 || r->seconds <= 0 || r->accounts < 2)
        usage();
    struct stat sb;
    if (stat(r->dir, &sb) == 0) {
        fprintf(stderr, "txn-compare: %s exists: give a new directory\n",
                r->dir);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    struct run r = {.threads = 1, .seconds = 5, .accounts = 100000};
    uint64_t transfers, retries;
    double elapsed, per_fsync = -1;
    int64_t before, after;
    parse_args(argc, argv, &r);
    if (r.engine->open(&r) != 0 || r.engine->total(&r, &before) != 0)
        return 1;
    if (before != (int64_t)r.accounts * INITIAL_BALANCE) {
        fprintf(stderr, "%s: loaded %" PRId64 ", not %" PRId64 "\n",
                r.engine->name, before, (int64_t)r.accounts * INITIAL_BALANCE);
        return 1;
    }
    if (r.engine->stats_begin)
        r.engine->stats_begin(&r);
    run_transfers(&r, &transfers, &retries, &elapsed);
    if (r.engine->txns_per_fsync && r.sync)
        per_fsync = r.engine->txns_per_fsync(&r);
    if (r.engine->total(&r, &after) != 0)
        return 1;
    r.engine->close(&r);
    if (after != before) {
        fprintf(stderr, "%s: THE TOTAL CHANGED: %" PRId64 " before, %" PRId64
                " after %" PRIu64 " transfers\n", r.engine->name, before,
                after, transfers);
        printf("engine=%s threads=%d sync=%d total=CHANGED\n", r.engine->name,
               r.threads, r.sync);
        return 1;
    }
    char fs[32] = "-";
    if (per_fsync >= 0)
        snprintf(fs, sizeof fs, "%.2f", per_fsync);
    printf("engine=%s threads=%d sync=%d seconds=%.3f transfers=%" PRIu64
           " ops_per_s=%.0f retries=%" PRIu64 " retries_per_op=%.5f "
           "txns_per_fsync=%s total=ok\n", r.engine->name, r.threads, r.sync,
           elapsed, transfers, (double)transfers / elapsed, retries,
           transfers ? (double)retries / (double)transfers : 0.0, fs);
    return 0;
}
