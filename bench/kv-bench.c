/*
** kv-bench.c -- one harness, five engines: issue 23's side-by-side table,
** measured by the same code for every engine, through each engine's own C
** API (ravel, LevelDB leveldb/c.h, RocksDB rocksdb/c.h, LMDB lmdb.h,
** SQLite sqlite3.h; each peer is built in only where its -dev package was
** found at build time, bench/meson.build).
**
**   kv-bench --engine=NAME --db=DIR [flags]      (--help lists them)
**
** One run of one engine, in this order (every engine gets the same keys in
** the same order and the same random seeds):
**
**   1. load --num keys (decimal numbers zero-padded to --key_size bytes,
**      as db_bench's) with --value_size-byte values, in a random order
**      drawn from --seed, in batches of --batch keys (one write batch /
**      write transaction each, not synced);
**   2. compact with the engine's own compact-range call over everything
**      (ravel_compact_range, leveldb_compact_range, rocksdb_compact_range;
**      LMDB has none, SQLite gets a WAL checkpoint);
**   3. warm with one full scan;
**   4. each workload for --seconds of random operations on N threads,
**      threads counted from a common start, ops/s over the wall time:
**        get       point get, the value returned the way a C program gets
**                  it: ravel_get, leveldb_get, rocksdb_get allocate a copy
**                  (freed at once); mdb_get and sqlite3_column_blob return
**                  a pointer into the engine and copy nothing
**        get_into  ravel only: ravel_get_into into a caller's buffer
**        seek      a new iterator (cursor, statement) per operation, seek
**                  to a random key, then --seek_nexts nexts
**        put       one key per write, not synced (LMDB: MDB_NOSYNC; SQLite:
**                  synchronous=OFF), random keys over the loaded range
**        syncput   the same, each write durable before it returns
**                  (RAVEL_SYNC, sync=true, LMDB's and SQLite's durable
**                  commit: synchronous=FULL)
**      reads first (at --read_threads), then put (--write_threads), then
**      syncput (--sync_threads);
**   5. scan, if asked: a second database of --scan_num keys with
**      --scan_value_size-byte values, opened with a block cache of
**      --scan_cache_size bytes (smaller than the data), loaded, compacted
**      and warmed the same way, then seek + --scan_nexts nexts per
**      operation on --scan_threads threads, each latency recorded (p50,
**      p99) and the time of the nexts alone reported per next (next_ns).
**
** Every engine: no compression, 10-bit bloom filters (LevelDB, RocksDB,
** ravel), one block cache of --cache_size bytes (LevelDB, RocksDB, ravel;
** SQLite: a page cache of that size per connection; LMDB has none: the
** page cache is its cache), otherwise the engine's defaults.  SQLite: a
** WITHOUT ROWID table (k BLOB PRIMARY KEY, v BLOB), WAL mode, prepared
** statements, one connection per thread, writers queued on a mutex of the
** harness (SQLite has one writer at a time; its busy handler's sleeps of
** milliseconds would be measured otherwise).
**
** Output: one line per (engine, workload, threads), key=value fields, for
** scripts (scripts/bench-kv-compare.sh):
**   result engine=ravel workload=get threads=1 ops=N seconds=S
**          ops_per_sec=N p50_us=X p99_us=Y found=N [next_ns=Z]
** and "load engine=... keys=N seconds=S" for the load + compaction.
** Every latency is timed (two clock reads per operation, for every engine
** alike).
*/
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "ravel.h"
#ifdef HAVE_LEVELDB
#include <leveldb/c.h>
#endif
#ifdef HAVE_ROCKSDB
#include <rocksdb/c.h>
#endif
#ifdef HAVE_LMDB
#include <lmdb.h>
#endif
#ifdef HAVE_SQLITE
#include <sqlite3.h>
#endif

#define KVB_MAX_THREADS 256
#define KVB_KEY_MAX 64

/* ---------------------------------------------------------------- flags */

static struct {
    const char *engine, *db, *workloads;
    const char *ravel_options; /* more ravel options, "name=value;..." */
    const char *read_threads, *write_threads, *sync_threads, *scan_threads;
    long long num, key_size, value_size, batch, seek_nexts, cache_size;
    long long scan_num, scan_value_size, scan_nexts, scan_cache_size;
    long long seed;
    double seconds;
} F = {
    .engine = "ravel", .workloads = "get,get_into,seek,put,syncput",
    .read_threads = "1,4", .write_threads = "1,4,32", .sync_threads = "32",
    .scan_threads = "1",
    .num = 1000000, .key_size = 16, .value_size = 100, .batch = 1000,
    .seek_nexts = 10, .cache_size = 1LL << 30,
    .scan_num = 200000, .scan_value_size = 1024, .scan_nexts = 100,
    .scan_cache_size = 16LL << 20, .seed = 301, .seconds = 5,
};

static const char kvb_usage[] =
    "usage: kv-bench --engine=NAME --db=DIR [flags]\n"
    "  --engine=ravel|leveldb|rocksdb|lmdb|sqlite   (built in: %s)\n"
    "  --workloads=LIST     get,get_into,seek,put,syncput,scan\n"
    "                       (default get,get_into,seek,put,syncput)\n"
    "  --num=1000000 --key_size=16 --value_size=100 --batch=1000\n"
    "  --cache_size=1073741824   block cache bytes, every engine\n"
    "  --seconds=5          timed run of each workload\n"
    "  --read_threads=1,4 --write_threads=1,4,32 --sync_threads=32\n"
    "  --seek_nexts=10 --seed=301\n"
    "  --scan_num=200000 --scan_value_size=1024 --scan_nexts=100\n"
    "  --scan_cache_size=16777216 --scan_threads=1\n"
    "  (the scan database is DIR-scan)\n"
    "  --ravel_options=\"name=value;...\"   more ravel options (e.g.\n"
    "                       allow_mmap_reads=true), set after the above\n";

static const char kvb_built[] = "ravel"
#ifdef HAVE_LEVELDB
    ",leveldb"
#endif
#ifdef HAVE_ROCKSDB
    ",rocksdb"
#endif
#ifdef HAVE_LMDB
    ",lmdb"
#endif
#ifdef HAVE_SQLITE
    ",sqlite"
#endif
    ;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                      noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kv-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static long long kvb_parse_num(const char *name, const char *v)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < 0)
        die("--%s=%s: not a non-negative integer", name, v);
    return n;
}

static void kvb_parse_flags(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0) {
            printf(kvb_usage, kvb_built);
            exit(0);
        }
        if (strncmp(a, "--", 2) != 0 || !strchr(a, '='))
            die("unexpected argument '%s' (--help)", a);
        a += 2;
        const char *v = strchr(a, '=') + 1;
        size_t n = (size_t)(v - 1 - a);
#define NAME_IS(s) (n == strlen(s) && strncmp(a, s, n) == 0)
#define NUM(s) else if (NAME_IS(#s)) F.s = kvb_parse_num(#s, v)
        if (NAME_IS("engine")) F.engine = v;
        else if (NAME_IS("db")) F.db = v;
        else if (NAME_IS("workloads")) F.workloads = v;
        else if (NAME_IS("ravel_options")) F.ravel_options = v;
        else if (NAME_IS("read_threads")) F.read_threads = v;
        else if (NAME_IS("write_threads")) F.write_threads = v;
        else if (NAME_IS("sync_threads")) F.sync_threads = v;
        else if (NAME_IS("scan_threads")) F.scan_threads = v;
        else if (NAME_IS("seconds")) F.seconds = atof(v);
        NUM(num); NUM(key_size); NUM(value_size); NUM(batch);
        NUM(seek_nexts); NUM(cache_size); NUM(scan_num);
        NUM(scan_value_size); NUM(scan_nexts); NUM(scan_cache_size);
        NUM(seed);
        else die("unknown flag --%.*s (--help)", (int)n, a);
#undef NUM
#undef NAME_IS
    }
    if (!F.db)
        die("--db=DIR is required (--help)");
    if (F.num < 1 || F.scan_num < 1 || F.batch < 1 || F.key_size < 8 ||
        F.key_size > KVB_KEY_MAX || F.seconds <= 0)
        die("need --num, --scan_num, --batch >= 1, 8 <= --key_size <= %d, "
            "--seconds > 0", KVB_KEY_MAX);
}

/* ------------------------------------------------------------- helpers */

static uint64_t kvb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t kvb_rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static size_t kvb_key(char *buf, long long i)
{
    char tmp[32];
    int d = snprintf(tmp, sizeof tmp, "%lld", i);
    size_t pad = (size_t)F.key_size - (size_t)d;
    memset(buf, '0', pad);
    memcpy(buf + pad, tmp, (size_t)d);
    return (size_t)F.key_size;
}

/* The loaded database's size, so that random keys fall inside it. */
static long long kvb_keys;
/* Values: one buffer of random letters, the largest value size. */
static char *kvb_value;
static size_t kvb_value_len;

/* ------------------------------------------------------------- engines */

/* What the workloads need of an engine.  A thread context (tctx) is made
** per thread per workload: SQLite's connection and statements, LMDB's
** read transaction; the others need none.  SYNC says whether the thread's
** writes must be durable when they return. */
struct engine {
    const char *name;
    void (*open)(const char *dir, long long cache);
    void (*close)(void);
    void *(*thread_open)(int sync);
    void (*thread_close)(void *t);
    void (*load_batch)(void *t, const long long *ids, long long n,
                       size_t vlen);
    void (*compact)(void);
    int (*get)(void *t, const char *k, size_t kl);
    int (*get_into)(void *t, const char *k, size_t kl);
    /* seek to K, then up to N nexts, reading each key and value; sets
    ** *seeked to the clock after the seek; returns entries read */
    long long (*scan)(void *t, const char *k, size_t kl, long long n,
                      uint64_t *seeked);
    void (*put)(void *t, const char *k, size_t kl, int sync);
    /* before a workload's threads start: whether its writes are synced
    ** (LMDB's MDB_NOSYNC belongs to the environment); NULL: nothing */
    void (*set_sync)(int sync);
};

/* Reads every byte's worth of an entry the way a program would look at it:
** one byte of key and value, so that no engine is credited for an entry
** it never produced. */
static unsigned kvb_touch(const void *k, size_t kl, const void *v, size_t vl)
{
    return (kl ? ((const unsigned char *)k)[kl - 1] : 0) +
           (vl ? ((const unsigned char *)v)[vl - 1] : 0);
}
static _Atomic unsigned kvb_sink;

/* ------------------------------------------------------------ ravel */

static ravel_db *rv_h;

static void rvb_check(int rc, const char *what)
{
    if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
        die("ravel %s: %s", what, ravel_errmsg());
}

static void rvb_open(const char *dir, long long cache)
{
    ravel_options *o;
    char v[32];
    rvb_check(ravel_options_new(&o), "options");
    snprintf(v, sizeof v, "%lld", cache);
    rvb_check(ravel_options_set(o, "block_cache_size", v), "options");
    rvb_check(ravel_options_set(o, "bloom_bits_per_key", "10"), "options");
    rvb_check(ravel_options_set(o, "compression", "none"), "options");
    rvb_check(ravel_options_set(o, "create_if_missing", "true"), "options");
    if (F.ravel_options)
        rvb_check(ravel_options_parse(o, F.ravel_options), "options");
    rvb_check(ravel_open(dir, o, &rv_h), "open");
    ravel_options_free(o);
}

static void rvb_close(void) { rvb_check(ravel_close(rv_h), "close"); }
static void *rvb_thread_open(int sync) { (void)sync; return NULL; }
static void rvb_thread_close(void *t) { (void)t; }

static void rvb_load_batch(void *t, const long long *ids, long long n,
                           size_t vlen)
{
    (void)t;
    ravel_batch *b;
    char k[KVB_KEY_MAX];
    rvb_check(ravel_batch_new(&b), "batch");
    for (long long i = 0; i < n; i++)
        rvb_check(ravel_batch_put(b, k, kvb_key(k, ids[i]), kvb_value, vlen),
                  "batch_put");
    rvb_check(ravel_write(rv_h, 0, b), "write");
    ravel_batch_free(b);
}

static void rvb_compact(void)
{
    rvb_check(ravel_compact_range(rv_h, NULL, 0, NULL, 0), "compact_range");
}

static int rvb_get(void *t, const char *k, size_t kl)
{
    (void)t;
    void *v;
    size_t vl;
    int rc = ravel_get(rv_h, NULL, k, kl, &v, &vl);
    rvb_check(rc, "get");
    ravel_free(v);
    return rc == RAVEL_OK;
}

static int rvb_get_into(void *t, const char *k, size_t kl)
{
    (void)t;
    char buf[4096];
    size_t vl;
    int rc = ravel_get_into(rv_h, NULL, k, kl, buf, sizeof buf, &vl);
    rvb_check(rc, "get_into");
    return rc == RAVEL_OK;
}

static long long rvb_scan(void *t, const char *k, size_t kl, long long n,
                          uint64_t *seeked)
{
    (void)t;
    ravel_iter *it;
    unsigned sum = 0;
    long long seen = 0;
    rvb_check(ravel_iter_new(rv_h, NULL, &it), "iter");
    ravel_iter_seek(it, k, kl);
    *seeked = kvb_now_ns();
    for (; ravel_iter_valid(it); ravel_iter_next(it)) {
        size_t a, b;
        const void *ik = ravel_iter_key(it, &a), *iv = ravel_iter_value(it, &b);
        sum += kvb_touch(ik, a, iv, b);
        if (++seen > n)
            break;
    }
    rvb_check(ravel_iter_status(it), "iterate");
    ravel_iter_free(it);
    kvb_sink += sum;
    return seen;
}

static void rvb_put(void *t, const char *k, size_t kl, int sync)
{
    (void)t;
    rvb_check(ravel_put(rv_h, sync ? RAVEL_SYNC : 0, k, kl, kvb_value,
                        (size_t)F.value_size), "put");
}

static const struct engine rvb_engine = {
    "ravel", rvb_open, rvb_close, rvb_thread_open, rvb_thread_close,
    rvb_load_batch, rvb_compact, rvb_get, rvb_get_into, rvb_scan, rvb_put,
    NULL,
};

/* ---------------------------------------------------------- LevelDB */
#ifdef HAVE_LEVELDB
static struct {
    leveldb_t *db;
    leveldb_options_t *opts;
    leveldb_cache_t *cache;
    leveldb_filterpolicy_t *filter;
    leveldb_readoptions_t *ro;
    leveldb_writeoptions_t *wo, *wo_sync;
} ldb;

static void ldbb_check(char *err, const char *what)
{
    if (err)
        die("leveldb %s: %s", what, err);
}

static void ldbb_open(const char *dir, long long cache)
{
    char *err = NULL;
    ldb.opts = leveldb_options_create();
    leveldb_options_set_create_if_missing(ldb.opts, 1);
    ldb.cache = leveldb_cache_create_lru((size_t)cache);
    leveldb_options_set_cache(ldb.opts, ldb.cache);
    ldb.filter = leveldb_filterpolicy_create_bloom(10);
    leveldb_options_set_filter_policy(ldb.opts, ldb.filter);
    leveldb_options_set_compression(ldb.opts, leveldb_no_compression);
    ldb.ro = leveldb_readoptions_create();
    ldb.wo = leveldb_writeoptions_create();
    ldb.wo_sync = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(ldb.wo_sync, 1);
    ldb.db = leveldb_open(ldb.opts, dir, &err);
    ldbb_check(err, "open");
}

static void ldbb_close(void)
{
    leveldb_close(ldb.db);
    leveldb_readoptions_destroy(ldb.ro);
    leveldb_writeoptions_destroy(ldb.wo);
    leveldb_writeoptions_destroy(ldb.wo_sync);
    leveldb_options_destroy(ldb.opts);
    leveldb_cache_destroy(ldb.cache);
    leveldb_filterpolicy_destroy(ldb.filter);
}

static void ldbb_load_batch(void *t, const long long *ids, long long n,
                            size_t vlen)
{
    (void)t;
    char k[KVB_KEY_MAX], *err = NULL;
    leveldb_writebatch_t *b = leveldb_writebatch_create();
    for (long long i = 0; i < n; i++)
        leveldb_writebatch_put(b, k, kvb_key(k, ids[i]), kvb_value, vlen);
    leveldb_write(ldb.db, ldb.wo, b, &err);
    ldbb_check(err, "write");
    leveldb_writebatch_destroy(b);
}

static void ldbb_compact(void) { leveldb_compact_range(ldb.db, NULL, 0, NULL, 0); }

static int ldbb_get(void *t, const char *k, size_t kl)
{
    (void)t;
    char *err = NULL;
    size_t vl;
    char *v = leveldb_get(ldb.db, ldb.ro, k, kl, &vl, &err);
    ldbb_check(err, "get");
    leveldb_free(v);
    return v != NULL;
}

static long long ldbb_scan(void *t, const char *k, size_t kl, long long n,
                           uint64_t *seeked)
{
    (void)t;
    leveldb_iterator_t *it = leveldb_create_iterator(ldb.db, ldb.ro);
    unsigned sum = 0;
    long long seen = 0;
    char *err = NULL;
    leveldb_iter_seek(it, k, kl);
    *seeked = kvb_now_ns();
    for (; leveldb_iter_valid(it); leveldb_iter_next(it)) {
        size_t a, b;
        const char *ik = leveldb_iter_key(it, &a);
        const char *iv = leveldb_iter_value(it, &b);
        sum += kvb_touch(ik, a, iv, b);
        if (++seen > n)
            break;
    }
    leveldb_iter_get_error(it, &err);
    ldbb_check(err, "iterate");
    leveldb_iter_destroy(it);
    kvb_sink += sum;
    return seen;
}

static void ldbb_put(void *t, const char *k, size_t kl, int sync)
{
    (void)t;
    char *err = NULL;
    leveldb_put(ldb.db, sync ? ldb.wo_sync : ldb.wo, k, kl, kvb_value,
                (size_t)F.value_size, &err);
    ldbb_check(err, "put");
}

static const struct engine ldbb_engine = {
    "leveldb", ldbb_open, ldbb_close, rvb_thread_open, rvb_thread_close,
    ldbb_load_batch, ldbb_compact, ldbb_get, NULL, ldbb_scan, ldbb_put,
    NULL,
};
#endif

/* ---------------------------------------------------------- RocksDB */
#ifdef HAVE_ROCKSDB
static struct {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *table;
    rocksdb_cache_t *cache;
    rocksdb_readoptions_t *ro;
    rocksdb_writeoptions_t *wo, *wo_sync;
} rdb;

static void rdbb_check(char *err, const char *what)
{
    if (err)
        die("rocksdb %s: %s", what, err);
}

static void rdbb_open(const char *dir, long long cache)
{
    char *err = NULL;
    rdb.opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(rdb.opts, 1);
    rocksdb_options_set_compression(rdb.opts, rocksdb_no_compression);
    rdb.cache = rocksdb_cache_create_lru((size_t)cache);
    rdb.table = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_block_cache(rdb.table, rdb.cache);
    rocksdb_block_based_options_set_filter_policy(
        rdb.table, rocksdb_filterpolicy_create_bloom(10));
    rocksdb_options_set_block_based_table_factory(rdb.opts, rdb.table);
    rdb.ro = rocksdb_readoptions_create();
    rdb.wo = rocksdb_writeoptions_create();
    rdb.wo_sync = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(rdb.wo_sync, 1);
    rdb.db = rocksdb_open(rdb.opts, dir, &err);
    rdbb_check(err, "open");
}

static void rdbb_close(void)
{
    rocksdb_close(rdb.db);
    rocksdb_readoptions_destroy(rdb.ro);
    rocksdb_writeoptions_destroy(rdb.wo);
    rocksdb_writeoptions_destroy(rdb.wo_sync);
    rocksdb_options_destroy(rdb.opts);
    rocksdb_block_based_options_destroy(rdb.table);
    rocksdb_cache_destroy(rdb.cache);
}

static void rdbb_load_batch(void *t, const long long *ids, long long n,
                            size_t vlen)
{
    (void)t;
    char k[KVB_KEY_MAX], *err = NULL;
    rocksdb_writebatch_t *b = rocksdb_writebatch_create();
    for (long long i = 0; i < n; i++)
        rocksdb_writebatch_put(b, k, kvb_key(k, ids[i]), kvb_value, vlen);
    rocksdb_write(rdb.db, rdb.wo, b, &err);
    rdbb_check(err, "write");
    rocksdb_writebatch_destroy(b);
}

static void rdbb_compact(void) { rocksdb_compact_range(rdb.db, NULL, 0, NULL, 0); }

static int rdbb_get(void *t, const char *k, size_t kl)
{
    (void)t;
    char *err = NULL;
    size_t vl;
    char *v = rocksdb_get(rdb.db, rdb.ro, k, kl, &vl, &err);
    rdbb_check(err, "get");
    rocksdb_free(v);
    return v != NULL;
}

static long long rdbb_scan(void *t, const char *k, size_t kl, long long n,
                           uint64_t *seeked)
{
    (void)t;
    rocksdb_iterator_t *it = rocksdb_create_iterator(rdb.db, rdb.ro);
    unsigned sum = 0;
    long long seen = 0;
    char *err = NULL;
    rocksdb_iter_seek(it, k, kl);
    *seeked = kvb_now_ns();
    for (; rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
        size_t a, b;
        const char *ik = rocksdb_iter_key(it, &a);
        const char *iv = rocksdb_iter_value(it, &b);
        sum += kvb_touch(ik, a, iv, b);
        if (++seen > n)
            break;
    }
    rocksdb_iter_get_error(it, &err);
    rdbb_check(err, "iterate");
    rocksdb_iter_destroy(it);
    kvb_sink += sum;
    return seen;
}

static void rdbb_put(void *t, const char *k, size_t kl, int sync)
{
    (void)t;
    char *err = NULL;
    rocksdb_put(rdb.db, sync ? rdb.wo_sync : rdb.wo, k, kl, kvb_value,
                (size_t)F.value_size, &err);
    rdbb_check(err, "put");
}

static const struct engine rdbb_engine = {
    "rocksdb", rdbb_open, rdbb_close, rvb_thread_open, rvb_thread_close,
    rdbb_load_batch, rdbb_compact, rdbb_get, NULL, rdbb_scan, rdbb_put,
    NULL,
};
#endif

/* ------------------------------------------------------------- LMDB */
#ifdef HAVE_LMDB
static MDB_env *lm_env;
static MDB_dbi lm_dbi;

/* A reading thread keeps one read transaction and one cursor, reset
** between operations and renewed at the next (LMDB's way to read often). */
struct lmb_thread {
    MDB_txn *rtxn;
    MDB_cursor *cur;
};

static void lmb_check(int rc, const char *what)
{
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        die("lmdb %s: %s", what, mdb_strerror(rc));
}

static void lmb_open(const char *dir, long long cache)
{
    (void)cache; /* no block cache: the memory map is read through */
    MDB_txn *txn;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        die("mkdir %s: %s", dir, strerror(errno));
    lmb_check(mdb_env_create(&lm_env), "env_create");
    lmb_check(mdb_env_set_mapsize(lm_env, (size_t)64 << 30), "mapsize");
    lmb_check(mdb_env_set_maxreaders(lm_env, 1024), "maxreaders");
    lmb_check(mdb_env_open(lm_env, dir, MDB_NOSYNC | MDB_NOTLS, 0644),
              "env_open");
    lmb_check(mdb_txn_begin(lm_env, NULL, 0, &txn), "txn_begin");
    lmb_check(mdb_dbi_open(txn, NULL, 0, &lm_dbi), "dbi_open");
    lmb_check(mdb_txn_commit(txn), "commit");
}

static void lmb_close(void)
{
    lmb_check(mdb_env_sync(lm_env, 1), "env_sync");
    mdb_env_close(lm_env);
}

/* MDB_NOSYNC is the environment's: set for unsynced workloads and the
** load, cleared for syncput (each commit then syncs the map). */
static void lmb_set_sync(int sync)
{
    lmb_check(mdb_env_set_flags(lm_env, MDB_NOSYNC, !sync), "set_flags");
}

static void *lmb_thread_open(int sync)
{
    (void)sync;
    struct lmb_thread *t = calloc(1, sizeof *t);
    if (!t)
        die("out of memory");
    lmb_check(mdb_txn_begin(lm_env, NULL, MDB_RDONLY, &t->rtxn), "txn_begin");
    lmb_check(mdb_cursor_open(t->rtxn, lm_dbi, &t->cur), "cursor_open");
    mdb_txn_reset(t->rtxn);
    return t;
}

static void lmb_thread_close(void *p)
{
    struct lmb_thread *t = p;
    mdb_cursor_close(t->cur);
    mdb_txn_abort(t->rtxn);
    free(t);
}

static void lmb_load_batch(void *t, const long long *ids, long long n,
                           size_t vlen)
{
    (void)t;
    MDB_txn *txn;
    char k[KVB_KEY_MAX];
    lmb_check(mdb_txn_begin(lm_env, NULL, 0, &txn), "txn_begin");
    for (long long i = 0; i < n; i++) {
        MDB_val key = {kvb_key(k, ids[i]), k}, val = {vlen, kvb_value};
        lmb_check(mdb_put(txn, lm_dbi, &key, &val, 0), "put");
    }
    lmb_check(mdb_txn_commit(txn), "commit");
}

static void lmb_compact(void) { lmb_check(mdb_env_sync(lm_env, 1), "env_sync"); }

static int lmb_get(void *p, const char *k, size_t kl)
{
    struct lmb_thread *t = p;
    MDB_val key = {kl, (void *)k}, val;
    lmb_check(mdb_txn_renew(t->rtxn), "txn_renew");
    int rc = mdb_get(t->rtxn, lm_dbi, &key, &val);
    lmb_check(rc, "get");
    mdb_txn_reset(t->rtxn);
    return rc == MDB_SUCCESS;
}

static long long lmb_scan(void *p, const char *k, size_t kl, long long n,
                          uint64_t *seeked)
{
    struct lmb_thread *t = p;
    MDB_val key = {kl, (void *)k}, val;
    unsigned sum = 0;
    long long seen = 0;
    lmb_check(mdb_txn_renew(t->rtxn), "txn_renew");
    lmb_check(mdb_cursor_renew(t->rtxn, t->cur), "cursor_renew");
    int rc = kl ? mdb_cursor_get(t->cur, &key, &val, MDB_SET_RANGE)
                : mdb_cursor_get(t->cur, &key, &val, MDB_FIRST);
    *seeked = kvb_now_ns();
    while (rc == MDB_SUCCESS) {
        sum += kvb_touch(key.mv_data, key.mv_size, val.mv_data, val.mv_size);
        if (++seen > n)
            break;
        rc = mdb_cursor_get(t->cur, &key, &val, MDB_NEXT);
    }
    lmb_check(rc, "cursor_get");
    mdb_txn_reset(t->rtxn);
    kvb_sink += sum;
    return seen;
}

static void lmb_put(void *t, const char *k, size_t kl, int sync)
{
    (void)t;
    (void)sync; /* the environment's MDB_NOSYNC, set by lmb_set_sync */
    MDB_txn *txn;
    MDB_val key = {kl, (void *)k}, val = {(size_t)F.value_size, kvb_value};
    lmb_check(mdb_txn_begin(lm_env, NULL, 0, &txn), "txn_begin");
    lmb_check(mdb_put(txn, lm_dbi, &key, &val, 0), "put");
    lmb_check(mdb_txn_commit(txn), "commit");
}

static const struct engine lmb_engine = {
    "lmdb", lmb_open, lmb_close, lmb_thread_open, lmb_thread_close,
    lmb_load_batch, lmb_compact, lmb_get, NULL, lmb_scan, lmb_put,
    lmb_set_sync,
};
#endif

/* ----------------------------------------------------------- SQLite */
#ifdef HAVE_SQLITE
static char sq_path[4096];
static long long sq_cache;
static void *sq_main; /* the loading thread's connection */
/* SQLite admits one writer at a time; a second one gets SQLITE_BUSY and
** its busy handler sleeps 1 to 100 ms before trying again, which would
** measure the back-off, not the engine.  Writers queue on this mutex
** instead, as a program with several writing threads would. */
static pthread_mutex_t sq_write_mu = PTHREAD_MUTEX_INITIALIZER;

struct sqb_thread {
    sqlite3 *db;
    sqlite3_stmt *get, *scan, *put, *begin, *commit;
};

static void sqb_check(sqlite3 *db, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
        die("sqlite %s: %s", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

static void sqb_exec(sqlite3 *db, const char *sql)
{
    sqb_check(db, sqlite3_exec(db, sql, NULL, NULL, NULL), sql);
}

static sqlite3_stmt *sqb_prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    sqb_check(db, sqlite3_prepare_v2(db, sql, -1, &s, NULL), sql);
    return s;
}

static void *sqb_thread_open(int sync)
{
    struct sqb_thread *t = calloc(1, sizeof *t);
    char sql[96];
    if (!t)
        die("out of memory");
    sqb_check(NULL, sqlite3_open_v2(sq_path, &t->db,
                                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                    SQLITE_OPEN_NOMUTEX, NULL), "open");
    sqlite3_busy_timeout(t->db, 600000);
    sqb_exec(t->db, "PRAGMA journal_mode=WAL");
    sqb_exec(t->db, sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF");
    snprintf(sql, sizeof sql, "PRAGMA cache_size=-%lld", sq_cache / 1024);
    sqb_exec(t->db, sql);
    sqb_exec(t->db, "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, "
                    "v BLOB) WITHOUT ROWID");
    t->get = sqb_prepare(t->db, "SELECT v FROM kv WHERE k = ?1");
    t->scan = sqb_prepare(t->db, "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k");
    t->put = sqb_prepare(t->db, "INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)");
    t->begin = sqb_prepare(t->db, "BEGIN IMMEDIATE");
    t->commit = sqb_prepare(t->db, "COMMIT");
    return t;
}

static void sqb_thread_close(void *p)
{
    struct sqb_thread *t = p;
    sqlite3_finalize(t->get);
    sqlite3_finalize(t->scan);
    sqlite3_finalize(t->put);
    sqlite3_finalize(t->begin);
    sqlite3_finalize(t->commit);
    sqb_check(t->db, sqlite3_close(t->db), "close");
    free(t);
}

static void sqb_open(const char *dir, long long cache)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        die("mkdir %s: %s", dir, strerror(errno));
    snprintf(sq_path, sizeof sq_path, "%s/kv.sqlite", dir);
    sq_cache = cache;
    sq_main = sqb_thread_open(0);
}

static void sqb_close(void) { sqb_thread_close(sq_main); }

static void sqb_step_reset(sqlite3 *db, sqlite3_stmt *s, const char *what)
{
    sqb_check(db, sqlite3_step(s), what);
    sqlite3_reset(s);
}

static void sqb_load_batch(void *p, const long long *ids, long long n,
                           size_t vlen)
{
    struct sqb_thread *t = p ? p : sq_main;
    char k[KVB_KEY_MAX];
    sqb_step_reset(t->db, t->begin, "begin");
    for (long long i = 0; i < n; i++) {
        sqlite3_bind_blob(t->put, 1, k, (int)kvb_key(k, ids[i]), SQLITE_STATIC);
        sqlite3_bind_blob(t->put, 2, kvb_value, (int)vlen, SQLITE_STATIC);
        sqb_step_reset(t->db, t->put, "insert");
    }
    sqb_step_reset(t->db, t->commit, "commit");
}

static void sqb_compact(void)
{
    struct sqb_thread *t = sq_main;
    sqb_exec(t->db, "PRAGMA wal_checkpoint(TRUNCATE)");
}

static int sqb_get(void *p, const char *k, size_t kl)
{
    struct sqb_thread *t = p;
    sqlite3_bind_blob(t->get, 1, k, (int)kl, SQLITE_STATIC);
    int rc = sqlite3_step(t->get), found = 0;
    sqb_check(t->db, rc, "select");
    if (rc == SQLITE_ROW) {
        const void *v = sqlite3_column_blob(t->get, 0);
        kvb_sink += kvb_touch(NULL, 0, v, (size_t)sqlite3_column_bytes(t->get, 0));
        found = 1;
    }
    sqlite3_reset(t->get);
    return found;
}

static long long sqb_scan(void *p, const char *k, size_t kl, long long n,
                          uint64_t *seeked)
{
    struct sqb_thread *t = p;
    unsigned sum = 0;
    long long seen = 0;
    sqlite3_bind_blob(t->scan, 1, k, (int)kl, SQLITE_STATIC);
    int rc = sqlite3_step(t->scan);
    *seeked = kvb_now_ns();
    while (rc == SQLITE_ROW) {
        const void *ik = sqlite3_column_blob(t->scan, 0);
        size_t a = (size_t)sqlite3_column_bytes(t->scan, 0);
        const void *iv = sqlite3_column_blob(t->scan, 1);
        size_t b = (size_t)sqlite3_column_bytes(t->scan, 1);
        sum += kvb_touch(ik, a, iv, b);
        if (++seen > n)
            break;
        rc = sqlite3_step(t->scan);
    }
    sqb_check(t->db, rc, "scan");
    sqlite3_reset(t->scan);
    kvb_sink += sum;
    return seen;
}

static void sqb_put(void *p, const char *k, size_t kl, int sync)
{
    (void)sync; /* the connection's synchronous=, set by thread_open */
    struct sqb_thread *t = p;
    sqlite3_bind_blob(t->put, 1, k, (int)kl, SQLITE_STATIC);
    sqlite3_bind_blob(t->put, 2, kvb_value, (int)F.value_size, SQLITE_STATIC);
    pthread_mutex_lock(&sq_write_mu);
    sqb_step_reset(t->db, t->put, "insert");
    pthread_mutex_unlock(&sq_write_mu);
}

static const struct engine sqb_engine = {
    "sqlite", sqb_open, sqb_close, sqb_thread_open, sqb_thread_close,
    sqb_load_batch, sqb_compact, sqb_get, NULL, sqb_scan, sqb_put,
    NULL,
};
#endif

/* ---------------------------------------------------------- latencies */

/* A log-linear histogram of nanoseconds: 8 buckets per power of two
** (within 12.5%), exact below 16 ns. */
#define KVB_BUCKETS (16 + 60 * 8)

static int kvb_bucket(uint64_t ns)
{
    if (ns < 16)
        return (int)ns;
    int e = 63 - __builtin_clzll(ns);
    return 16 + (e - 4) * 8 + (int)((ns >> (e - 3)) & 7);
}

static double kvb_bucket_mid_ns(int b)
{
    if (b < 16)
        return b;
    int e = (b - 16) / 8 + 4, sub = (b - 16) % 8;
    double lo = (double)((uint64_t)(8 + sub) << (e - 3));
    return lo + (double)((uint64_t)1 << (e - 3)) / 2;
}

static double kvb_percentile_us(const uint64_t *h, double p)
{
    uint64_t total = 0, seen = 0;
    for (int b = 0; b < KVB_BUCKETS; b++)
        total += h[b];
    if (!total)
        return 0;
    uint64_t want = (uint64_t)(p * (double)total);
    for (int b = 0; b < KVB_BUCKETS; b++) {
        seen += h[b];
        if (seen > want)
            return kvb_bucket_mid_ns(b) / 1000;
    }
    return 0;
}

/* ---------------------------------------------------------- workloads */

enum kvb_op { OP_GET, OP_GET_INTO, OP_SEEK, OP_PUT, OP_SYNCPUT, OP_SCAN };

struct kvb_worker {
    const struct engine *e;
    enum kvb_op op;
    int index;
    pthread_t th;
    long long ops, found, nexts;
    uint64_t next_ns;
    uint64_t hist[KVB_BUCKETS];
};

static atomic_int kvb_stop;
/* The start line: every worker has opened its thread context before the
** clock starts. */
static pthread_mutex_t kvb_gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kvb_gate_cv = PTHREAD_COND_INITIALIZER;
static int kvb_gate_ready; /* workers at the gate; under kvb_gate_mu */
static int kvb_gate_open;  /* set by the main thread; under kvb_gate_mu */

static void kvb_gate_wait(void)
{
    pthread_mutex_lock(&kvb_gate_mu);
    kvb_gate_ready++;
    pthread_cond_broadcast(&kvb_gate_cv);
    while (!kvb_gate_open)
        pthread_cond_wait(&kvb_gate_cv, &kvb_gate_mu);
    pthread_mutex_unlock(&kvb_gate_mu);
}

static void kvb_gate_release_when(int threads)
{
    pthread_mutex_lock(&kvb_gate_mu);
    while (kvb_gate_ready < threads)
        pthread_cond_wait(&kvb_gate_cv, &kvb_gate_mu);
    kvb_gate_open = 1;
    pthread_cond_broadcast(&kvb_gate_cv);
    pthread_mutex_unlock(&kvb_gate_mu);
}

static long long kvb_op_once(struct kvb_worker *w, void *t, const char *k,
                             size_t kl)
{
    uint64_t seeked, t1;
    long long n;
    switch (w->op) {
    case OP_GET: return w->e->get(t, k, kl);
    case OP_GET_INTO: return w->e->get_into(t, k, kl);
    case OP_PUT: w->e->put(t, k, kl, 0); return 1;
    case OP_SYNCPUT: w->e->put(t, k, kl, 1); return 1;
    case OP_SEEK:
    case OP_SCAN:
        n = w->e->scan(t, k, kl, w->op == OP_SEEK ? F.seek_nexts : F.scan_nexts,
                       &seeked);
        t1 = kvb_now_ns();
        if (n > 1) {
            w->next_ns += t1 - seeked;
            w->nexts += n - 1;
        }
        return n > 0;
    }
    return 0;
}

static void *kvb_worker_main(void *p)
{
    struct kvb_worker *w = p;
    void *t = w->e->thread_open(w->op == OP_SYNCPUT);
    uint64_t seed = (uint64_t)F.seed * 0x9e3779b97f4a7c15ull +
                    (uint64_t)(w->index + 1) * 0xbf58476d1ce4e5b9ull;
    char k[KVB_KEY_MAX];
    kvb_gate_wait();
    while (!atomic_load_explicit(&kvb_stop, memory_order_relaxed)) {
        size_t kl = kvb_key(k, (long long)(kvb_rng(&seed) % (uint64_t)kvb_keys));
        uint64_t t0 = kvb_now_ns();
        w->found += kvb_op_once(w, t, k, kl);
        w->hist[kvb_bucket(kvb_now_ns() - t0)]++;
        w->ops++;
    }
    w->e->thread_close(t);
    return NULL;
}

static const char *const kvb_op_names[] = {
    "get", "get_into", "seek", "put", "syncput", "scan",
};

static void kvb_run(const struct engine *e, enum kvb_op op, int threads)
{
    static struct kvb_worker w[KVB_MAX_THREADS];
    memset(w, 0, sizeof w);
    kvb_gate_ready = 0;
    kvb_gate_open = 0;
    atomic_store(&kvb_stop, 0);
    if (e->set_sync)
        e->set_sync(op == OP_SYNCPUT);
    for (int i = 0; i < threads; i++) {
        w[i].e = e;
        w[i].op = op;
        w[i].index = i;
        if (pthread_create(&w[i].th, NULL, kvb_worker_main, &w[i]))
            die("pthread_create");
    }
    kvb_gate_release_when(threads);
    uint64_t t0 = kvb_now_ns();
    struct timespec ts = {(time_t)F.seconds,
                          (long)((F.seconds - (double)(time_t)F.seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    atomic_store(&kvb_stop, 1);
    static uint64_t hist[KVB_BUCKETS];
    memset(hist, 0, sizeof hist);
    long long ops = 0, found = 0, nexts = 0;
    uint64_t next_ns = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].th, NULL);
        ops += w[i].ops;
        found += w[i].found;
        nexts += w[i].nexts;
        next_ns += w[i].next_ns;
        for (int b = 0; b < KVB_BUCKETS; b++)
            hist[b] += w[i].hist[b];
    }
    double secs = (double)(kvb_now_ns() - t0) / 1e9;
    printf("result engine=%s workload=%s threads=%d ops=%lld seconds=%.3f "
           "ops_per_sec=%.0f p50_us=%.2f p99_us=%.2f found=%lld",
           e->name, kvb_op_names[op], threads, ops, secs, (double)ops / secs,
           kvb_percentile_us(hist, 0.50), kvb_percentile_us(hist, 0.99), found);
    if (op == OP_SEEK || op == OP_SCAN)
        printf(" next_ns=%.0f", nexts ? (double)next_ns / (double)nexts : 0.0);
    printf("\n");
    fflush(stdout);
}

/* Opens DIR, loads N keys of VLEN-byte values in the shared random order,
** compacts, warms with a full scan. */
static void kvb_prepare(const struct engine *e, const char *dir, long long n,
                        size_t vlen, long long cache)
{
    long long *order = malloc((size_t)n * sizeof *order);
    if (!order)
        die("out of memory");
    for (long long i = 0; i < n; i++)
        order[i] = i;
    uint64_t s = (uint64_t)F.seed * 0x2545F4914F6CDD1Dull + 1;
    for (long long i = n - 1; i > 0; i--) {
        long long j = (long long)(kvb_rng(&s) % (uint64_t)(i + 1));
        long long x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    e->open(dir, cache);
    uint64_t t0 = kvb_now_ns();
    void *t = e->thread_open(0);
    for (long long i = 0; i < n; i += F.batch)
        e->load_batch(t, order + i, i + F.batch <= n ? F.batch : n - i, vlen);
    e->thread_close(t);
    uint64_t t1 = kvb_now_ns();
    e->compact();
    uint64_t t2 = kvb_now_ns();
    t = e->thread_open(0);
    uint64_t seeked;
    long long seen = e->scan(t, "", 0, n + 1, &seeked);
    e->thread_close(t);
    uint64_t t3 = kvb_now_ns();
    if (seen != n)
        die("%s: the warming scan read %lld entries of %lld", e->name, seen, n);
    printf("load engine=%s keys=%lld value_size=%zu load_s=%.2f compact_s=%.2f "
           "warm_s=%.2f\n", e->name, n, vlen, (double)(t1 - t0) / 1e9,
           (double)(t2 - t1) / 1e9, (double)(t3 - t2) / 1e9);
    fflush(stdout);
    kvb_keys = n;
    free(order);
}

static int kvb_wants(const char *name)
{
    size_t n = strlen(name);
    for (const char *p = F.workloads; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && strncmp(p, name, n) == 0)
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

static void kvb_run_threads(const struct engine *e, enum kvb_op op,
                            const char *list)
{
    if (!kvb_wants(kvb_op_names[op]))
        return;
    if (op == OP_GET_INTO && !e->get_into)
        return;
    for (const char *p = list; p && *p;) {
        long long t = atoll(p);
        if (t < 1 || t > KVB_MAX_THREADS)
            die("thread count %lld: 1 .. %d", t, KVB_MAX_THREADS);
        kvb_run(e, op, (int)t);
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
}

static const struct engine *kvb_find_engine(const char *name)
{
    static const struct engine *const all[] = {
        &rvb_engine,
#ifdef HAVE_LEVELDB
        &ldbb_engine,
#endif
#ifdef HAVE_ROCKSDB
        &rdbb_engine,
#endif
#ifdef HAVE_LMDB
        &lmb_engine,
#endif
#ifdef HAVE_SQLITE
        &sqb_engine,
#endif
    };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    die("--engine=%s: not built in (built in: %s)", name, kvb_built);
}

int main(int argc, char **argv)
{
    kvb_parse_flags(argc, argv);
    const struct engine *e = kvb_find_engine(F.engine);
    for (const char *p = F.workloads; *p;) {
        size_t l = strcspn(p, ",");
        int known = 0;
        for (size_t i = 0; i < sizeof kvb_op_names / sizeof *kvb_op_names; i++)
            known |= strlen(kvb_op_names[i]) == l &&
                     strncmp(kvb_op_names[i], p, l) == 0;
        if (!known)
            die("unknown workload '%.*s' (--help)", (int)l, p);
        p += l + (p[l] == ',');
    }
    kvb_value_len = (size_t)(F.value_size > F.scan_value_size
                                 ? F.value_size : F.scan_value_size);
    kvb_value = malloc(kvb_value_len + 1);
    if (!kvb_value)
        die("out of memory");
    uint64_t s = (uint64_t)F.seed;
    for (size_t i = 0; i < kvb_value_len; i++)
        kvb_value[i] = (char)('a' + kvb_rng(&s) % 26);

    if (kvb_wants("get") || kvb_wants("get_into") || kvb_wants("seek") ||
        kvb_wants("put") || kvb_wants("syncput")) {
        kvb_prepare(e, F.db, F.num, (size_t)F.value_size, F.cache_size);
        kvb_run_threads(e, OP_GET, F.read_threads);
        kvb_run_threads(e, OP_GET_INTO, F.read_threads);
        kvb_run_threads(e, OP_SEEK, F.read_threads);
        kvb_run_threads(e, OP_PUT, F.write_threads);
        kvb_run_threads(e, OP_SYNCPUT, F.sync_threads);
        e->close();
    }
    if (kvb_wants("scan")) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s-scan", F.db);
        kvb_prepare(e, dir, F.scan_num, (size_t)F.scan_value_size,
                    F.scan_cache_size);
        kvb_run_threads(e, OP_SCAN, F.scan_threads);
        e->close();
    }
    free(kvb_value);
    return 0;
}
