/*
** kv-readbench.c -- one harness, several engines: the same point reads and
** seeks against ravel and, where it was built with it, LevelDB (through
** its C API), so that the two are compared by the same code on the same
** machine in the same run.
**
**   kv-readbench --engine=ravel|leveldb --db=DIR [--num=1000000]
**       [--reads=N] [--threads=1] [--key_size=16] [--value_size=100]
**       [--seek_nexts=10] [--cache_size=BYTES] [--bloom_bits=10]
**       [--use_existing_db] [--benchmarks=readrandom,seekrandom]
**
** Unless --use_existing_db, it first loads --num keys in random order (keys
** are decimal numbers zero-padded to key_size, as db_bench's; values are
** value_size bytes), then compacts everything into the last level the
** same way for both: ravel_compact_range and leveldb_compact_range, each
** over the whole key range.  Then each benchmark
** runs --threads threads of --reads operations each (default: num /
** threads) on uniformly random keys and prints ops/sec.  ravel reads with
** ravel_get_into (no allocation per value); LevelDB's C API allocates each
** value (leveldb_get), which is how a C program uses it.
*/
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ravel.h"
#ifdef HAVE_LEVELDB
#include <leveldb/c.h>
#endif

static struct {
    const char *engine, *db, *benchmarks;
    long long num, reads, threads, key_size, value_size, seek_nexts;
    long long cache_size, bloom_bits;
    int use_existing_db;
} F = {
    .engine = "ravel", .benchmarks = "readrandom,seekrandom",
    .num = 1000000, .reads = -1, .threads = 1, .key_size = 16,
    .value_size = 100, .seek_nexts = 10, .cache_size = 32 << 20,
    .bloom_bits = 10,
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                      noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kv-readbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static long long parse_num(const char *name, const char *v)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < 0)
        die("--%s=%s: not a non-negative integer", name, v);
    return n;
}

static void parse_flags(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0)
            die("unexpected argument '%s'", a);
        a += 2;
        const char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        const char *v = eq ? eq + 1 : NULL;
#define NAME_IS(s) (n == strlen(s) && strncmp(a, s, n) == 0)
        if (NAME_IS("use_existing_db")) {
            F.use_existing_db = !v || strcmp(v, "0") != 0;
            continue;
        }
        if (!v)
            die("--%.*s needs a value", (int)n, a);
        if (NAME_IS("engine")) F.engine = v;
        else if (NAME_IS("db")) F.db = v;
        else if (NAME_IS("benchmarks")) F.benchmarks = v;
        else if (NAME_IS("num")) F.num = parse_num("num", v);
        else if (NAME_IS("reads")) F.reads = parse_num("reads", v);
        else if (NAME_IS("threads")) F.threads = parse_num("threads", v);
        else if (NAME_IS("key_size")) F.key_size = parse_num("key_size", v);
        else if (NAME_IS("value_size")) F.value_size = parse_num("value_size", v);
        else if (NAME_IS("seek_nexts")) F.seek_nexts = parse_num("seek_nexts", v);
        else if (NAME_IS("cache_size")) F.cache_size = parse_num("cache_size", v);
        else if (NAME_IS("bloom_bits")) F.bloom_bits = parse_num("bloom_bits", v);
        else die("unknown flag --%.*s", (int)n, a);
#undef NAME_IS
    }
    if (!F.db)
        die("--db=DIR is required");
    if (F.num < 1 || F.threads < 1 || F.key_size < 8 || F.key_size > 64)
        die("need --num >= 1, --threads >= 1, 8 <= --key_size <= 64");
    if (F.reads < 0)
        F.reads = F.num / F.threads;
}

/* ------------------------------------------------------------- engines */

/* What a benchmark needs of an engine.  get returns 1 if found. */
struct engine {
    const char *name;
    int (*open)(int create);
    void (*put)(const char *k, size_t kl, const char *v, size_t vl);
    void (*compact)(void);
    int (*get)(const char *k, size_t kl);
    /* seek to K, then step up to N times; returns entries seen */
    int (*seek)(const char *k, size_t kl, int n);
    void (*close)(void);
};

static ravel_db *ravel_handle;

static void ravel_check(int rc, const char *what)
{
    if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
        die("ravel %s: %s", what, ravel_errmsg());
}

static int ravel_engine_open(int create)
{
    ravel_options *o;
    ravel_check(ravel_options_new(&o), "options");
    char v[32];
    snprintf(v, sizeof v, "%lld", F.cache_size);
    ravel_check(ravel_options_set(o, "block_cache_size", v), "options");
    snprintf(v, sizeof v, "%lld", F.bloom_bits);
    ravel_check(ravel_options_set(o, "bloom_bits_per_key", v), "options");
    if (create)
        ravel_check(ravel_options_set(o, "create_if_missing", "true"),
                    "options");
    ravel_check(ravel_open(F.db, o, &ravel_handle), "open");
    ravel_options_free(o);
    return 0;
}

static void ravel_engine_put(const char *k, size_t kl, const char *v,
                             size_t vl)
{
    ravel_check(ravel_put(ravel_handle, 0, k, kl, v, vl), "put");
}

static void ravel_engine_compact(void)
{
    ravel_check(ravel_compact_range(ravel_handle, NULL, 0, NULL, 0),
                "compact_range");
}

static int ravel_engine_get(const char *k, size_t kl)
{
    char buf[4096];
    size_t n;
    int rc = ravel_get_into(ravel_handle, NULL, k, kl, buf, sizeof buf, &n);
    ravel_check(rc, "get");
    return rc == RAVEL_OK;
}

static int ravel_engine_seek(const char *k, size_t kl, int n)
{
    ravel_iter *it;
    ravel_check(ravel_iter_new(ravel_handle, NULL, &it), "iter");
    int seen = 0;
    ravel_iter_seek(it, k, kl);
    for (; ravel_iter_valid(it) && seen <= n; ravel_iter_next(it))
        seen++;
    ravel_check(ravel_iter_status(it), "iterate");
    ravel_iter_free(it);
    return seen;
}

static void ravel_engine_close(void)
{
    ravel_check(ravel_close(ravel_handle), "close");
}

static const struct engine ravel_engine = {
    "ravel", ravel_engine_open, ravel_engine_put, ravel_engine_compact,
    ravel_engine_get, ravel_engine_seek, ravel_engine_close,
};

#ifdef HAVE_LEVELDB
static leveldb_t *ldb;
static leveldb_options_t *ldb_opts;
static leveldb_cache_t *ldb_cache;
static leveldb_filterpolicy_t *ldb_filter;
static leveldb_readoptions_t *ldb_ro;
static leveldb_writeoptions_t *ldb_wo;

static void leveldb_check(char *err, const char *what)
{
    if (err)
        die("leveldb %s: %s", what, err);
}

static int leveldb_engine_open(int create)
{
    ldb_opts = leveldb_options_create();
    leveldb_options_set_create_if_missing(ldb_opts, create);
    ldb_cache = leveldb_cache_create_lru((size_t)F.cache_size);
    leveldb_options_set_cache(ldb_opts, ldb_cache);
    if (F.bloom_bits > 0) {
        ldb_filter = leveldb_filterpolicy_create_bloom((int)F.bloom_bits);
        leveldb_options_set_filter_policy(ldb_opts, ldb_filter);
    }
    leveldb_options_set_max_open_files(ldb_opts, 1000);
    ldb_ro = leveldb_readoptions_create();
    ldb_wo = leveldb_writeoptions_create();
    char *err = NULL;
    ldb = leveldb_open(ldb_opts, F.db, &err);
    leveldb_check(err, "open");
    return 0;
}

static void leveldb_engine_put(const char *k, size_t kl, const char *v,
                               size_t vl)
{
    char *err = NULL;
    leveldb_put(ldb, ldb_wo, k, kl, v, vl, &err);
    leveldb_check(err, "put");
}

static void leveldb_engine_compact(void)
{
    leveldb_compact_range(ldb, NULL, 0, NULL, 0);
}

static int leveldb_engine_get(const char *k, size_t kl)
{
    char *err = NULL;
    size_t n;
    char *v = leveldb_get(ldb, ldb_ro, k, kl, &n, &err);
    leveldb_check(err, "get");
    leveldb_free(v);
    return v != NULL;
}

static int leveldb_engine_seek(const char *k, size_t kl, int n)
{
    leveldb_iterator_t *it = leveldb_create_iterator(ldb, ldb_ro);
    int seen = 0;
    for (leveldb_iter_seek(it, k, kl); leveldb_iter_valid(it) && seen <= n;
         leveldb_iter_next(it))
        seen++;
    leveldb_iter_destroy(it);
    return seen;
}

static void leveldb_engine_close(void)
{
    leveldb_close(ldb);
    leveldb_readoptions_destroy(ldb_ro);
    leveldb_writeoptions_destroy(ldb_wo);
    leveldb_options_destroy(ldb_opts);
    leveldb_cache_destroy(ldb_cache);
    if (ldb_filter)
        leveldb_filterpolicy_destroy(ldb_filter);
}

static const struct engine leveldb_engine = {
    "leveldb", leveldb_engine_open, leveldb_engine_put,
    leveldb_engine_compact, leveldb_engine_get, leveldb_engine_seek,
    leveldb_engine_close,
};
#endif

/* ---------------------------------------------------------- workload */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static size_t make_key(char *buf, long long i)
{
    snprintf(buf, 72, "%0*lld", (int)F.key_size, i);
    return (size_t)F.key_size;
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void load(const struct engine *e)
{
    /* random order: a permutation of 0..num-1 */
    long long *order = malloc((size_t)F.num * sizeof *order);
    char *val = malloc((size_t)F.value_size + 1);
    if (!order || !val)
        die("out of memory");
    for (long long i = 0; i < F.num; i++)
        order[i] = i;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (long long i = F.num - 1; i > 0; i--) {
        long long j = (long long)(rng_next(&s) % (uint64_t)(i + 1));
        long long t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (long long i = 0; i < F.value_size; i++)
        val[i] = (char)('a' + rng_next(&s) % 26);
    double t0 = now_sec();
    char key[72];
    for (long long i = 0; i < F.num; i++)
        e->put(key, make_key(key, order[i]), val, (size_t)F.value_size);
    e->compact();
    printf("%-8s load+compact: %lld keys in %.2f s\n", e->name, F.num,
           now_sec() - t0);
    free(order);
    free(val);
}

struct worker {
    const struct engine *e;
    int seek;
    uint64_t seed;
    long long found;
};

static void *worker_main(void *p)
{
    struct worker *w = p;
    char key[72];
    for (long long i = 0; i < F.reads; i++) {
        long long k = (long long)(rng_next(&w->seed) % (uint64_t)F.num);
        size_t kl = make_key(key, k);
        w->found += w->seek ? w->e->seek(key, kl, (int)F.seek_nexts) > 0
                            : w->e->get(key, kl);
    }
    return NULL;
}

static void run(const struct engine *e, const char *bench)
{
    int seek = strcmp(bench, "seekrandom") == 0;
    if (!seek && strcmp(bench, "readrandom") != 0)
        die("unknown benchmark '%s' (readrandom, seekrandom)", bench);
    pthread_t th[256];
    struct worker w[256];
    if (F.threads > 256)
        die("--threads: at most 256");
    double t0 = now_sec();
    for (long long t = 0; t < F.threads; t++) {
        w[t] = (struct worker){.e = e, .seek = seek,
                               .seed = 0x1234567ull * (uint64_t)(t + 1)};
        if (pthread_create(&th[t], NULL, worker_main, &w[t]))
            die("pthread_create");
    }
    long long found = 0;
    for (long long t = 0; t < F.threads; t++) {
        pthread_join(th[t], NULL);
        found += w[t].found;
    }
    double secs = now_sec() - t0;
    long long ops = F.reads * F.threads;
    printf("%-8s %-11s: %10.0f ops/sec, %lld threads, %lld of %lld found\n",
           e->name, bench, (double)ops / secs, F.threads, found, ops);
}

int main(int argc, char **argv)
{
    parse_flags(argc, argv);
    const struct engine *e = NULL;
    if (strcmp(F.engine, "ravel") == 0)
        e = &ravel_engine;
#ifdef HAVE_LEVELDB
    else if (strcmp(F.engine, "leveldb") == 0)
        e = &leveldb_engine;
#endif
    else
        die("--engine=%s: not built in (ravel%s)", F.engine,
#ifdef HAVE_LEVELDB
            ", leveldb"
#else
            "; leveldb needs libleveldb-dev at build time"
#endif
            );
    e->open(!F.use_existing_db);
    if (!F.use_existing_db)
        load(e);
    char *list = strdup(F.benchmarks);
    for (char *save = NULL, *b = strtok_r(list, ",", &save); b;
         b = strtok_r(NULL, ",", &save))
        run(e, b);
    free(list);
    e->close();
    return 0;
}
