/*
** put-scaling.c -- how write throughput and latency move with the number
** of writer threads, for ravel and (when libleveldb-dev is installed)
** LevelDB, through each engine's C API with the same harness.
**
**   put-scaling --engine=ravel|leveldb --db=DIR [--threads=32] [--batch=1]
**               [--sync=0] [--seconds=5] [--key_size=16] [--value_size=100]
**               [--stats=0] [--options=name=value,...]
**
** Each thread writes batches of --batch random keys (ravel_write with a
** ravel_batch, leveldb_write with a leveldb_writebatch; one key is the
** same call shape on both sides: a batch of one) for --seconds, synced
** when --sync=1 (RAVEL_SYNC, leveldb_writeoptions_set_sync), and times
** every write.  Prints one line:
**
**   engine=ravel threads=32 batch=1 sync=0 ops/s=... writes/s=...
**       p50_us=... p99_us=... p999_us=... max_us=...
**
** ops/s counts keys, writes/s calls.  Latencies are per call (a batch),
** over all threads; cpu_us/write is the process's CPU time (user +
** system, getrusage) per call and csw/write its context switches per
** call -- what the harness pays per write, which moves less than
** throughput when other processes load the machine.  The database is created empty (DIR must not exist
** or be empty); default options on both sides except a 64 MiB write
** buffer for LevelDB (ravel's default).  With --stats=1, ravel's
** "ravel.stats" property is printed after the run (write groups, fsyncs);
** --options sets ravel options by name (ravel_options_set).
** scripts/bench-put-scaling.sh alternates engines and thread counts.
*/
#include <ravel.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef HAVE_LEVELDB
# include <leveldb/c.h>
#endif

static struct {
    const char *engine;
    const char *db;
    long threads;
    long batch;
    long sync;
    double seconds;
    long key_size;
    long value_size;
    long stats;
    const char *options; /* ravel options, "name=value,name=value" */
} F = {"ravel", NULL, 32, 1, 0, 5.0, 16, 100, 0, ""};

static void die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "put-scaling: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(1);
}

static uint64_t ps_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ps_parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) != 0 || !eq)
            die("unexpected argument '%s'%s", a, "");
        size_t n = (size_t)(eq - a - 2);
        const char *v = eq + 1;
#define IS(name) (n == strlen(name) && strncmp(a + 2, name, n) == 0)
        if (IS("engine"))
            F.engine = v;
        else if (IS("db"))
            F.db = v;
        else if (IS("threads"))
            F.threads = atol(v);
        else if (IS("batch"))
            F.batch = atol(v);
        else if (IS("sync"))
            F.sync = atol(v);
        else if (IS("seconds"))
            F.seconds = atof(v);
        else if (IS("key_size"))
            F.key_size = atol(v);
        else if (IS("value_size"))
            F.value_size = atol(v);
        else if (IS("stats"))
            F.stats = atol(v);
        else if (IS("options"))
            F.options = v;
        else
            die("unknown flag '%s'%s", a, "");
#undef IS
    }
    if (!F.db)
        die("--db=DIR is required%s%s", "", "");
    if (F.threads < 1 || F.batch < 1 || F.key_size < 8 || F.key_size > 64 ||
        F.value_size < 0 || F.value_size > 65536 || F.seconds <= 0)
        die("need --threads >= 1, --batch >= 1, 8 <= --key_size <= 64, "
            "0 <= --value_size <= 65536, --seconds > 0%s%s", "", "");
}

/* ------------------------------------------------------------- engines */

/* One thread's writer: fills a batch of F.batch entries, writes it. */
struct ps_engine {
    void (*open)(void);
    void *(*batch_new)(void);
    void (*batch_put)(void *b, const char *k, size_t kl, const char *v,
                      size_t vl);
    void (*write)(void *b);
    void (*batch_free)(void *b);
    void (*report)(void);
    void (*close)(void);
};

static ravel_db *ps_ravel;

static void ps_ravel_check(int rc, const char *what)
{
    if (rc != RAVEL_OK)
        die("ravel %s: %s", what, ravel_errmsg());
}

static void ps_ravel_open(void)
{
    ravel_options *o;
    ps_ravel_check(ravel_options_new(&o), "options");
    ps_ravel_check(ravel_options_set(o, "create_if_missing", "true"),
                   "options");
    char list[1024];
    snprintf(list, sizeof list, "%s", F.options);
    for (char *save = NULL, *kv = strtok_r(list, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            die("--options: '%s' is not name=value%s", kv, "");
        *eq = '\0';
        ps_ravel_check(ravel_options_set(o, kv, eq + 1), "options");
    }
    ps_ravel_check(ravel_open(F.db, o, &ps_ravel), "open");
    ravel_options_free(o);
}

static void *ps_ravel_batch_new(void)
{
    ravel_batch *b;
    ps_ravel_check(ravel_batch_new(&b), "batch");
    return b;
}

static void ps_ravel_batch_put(void *b, const char *k, size_t kl,
                               const char *v, size_t vl)
{
    ps_ravel_check(ravel_batch_put(b, k, kl, v, vl), "batch_put");
}

static void ps_ravel_write(void *b)
{
    ps_ravel_check(ravel_write(ps_ravel, F.sync ? RAVEL_SYNC : 0, b),
                   "write");
    ps_ravel_check(ravel_batch_clear(b), "batch_clear");
}

static void ps_ravel_batch_free(void *b)
{
    ravel_batch_free(b);
}

static void ps_ravel_report(void)
{
    char *s = NULL;
    if (ravel_property(ps_ravel, "ravel.stats", &s) == RAVEL_OK && s) {
        fputs(s, stdout);
        ravel_free(s);
    }
}

static void ps_ravel_close(void)
{
    ps_ravel_check(ravel_close(ps_ravel), "close");
}

static const struct ps_engine ps_ravel_engine = {
    ps_ravel_open, ps_ravel_batch_new, ps_ravel_batch_put, ps_ravel_write,
    ps_ravel_batch_free, ps_ravel_report, ps_ravel_close,
};

#ifdef HAVE_LEVELDB
static leveldb_t *ps_ldb;
static leveldb_options_t *ps_ldb_opts;
static leveldb_writeoptions_t *ps_ldb_wo;

static void ps_ldb_check(char *err, const char *what)
{
    if (err)
        die("leveldb %s: %s", what, err);
}

static void ps_ldb_open(void)
{
    ps_ldb_opts = leveldb_options_create();
    leveldb_options_set_create_if_missing(ps_ldb_opts, 1);
    leveldb_options_set_write_buffer_size(ps_ldb_opts, 64u << 20);
    char *err = NULL;
    ps_ldb = leveldb_open(ps_ldb_opts, F.db, &err);
    ps_ldb_check(err, "open");
    ps_ldb_wo = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(ps_ldb_wo, (unsigned char)(F.sync != 0));
}

static void *ps_ldb_batch_new(void)
{
    return leveldb_writebatch_create();
}

static void ps_ldb_batch_put(void *b, const char *k, size_t kl,
                             const char *v, size_t vl)
{
    leveldb_writebatch_put(b, k, kl, v, vl);
}

static void ps_ldb_write(void *b)
{
    char *err = NULL;
    leveldb_write(ps_ldb, ps_ldb_wo, b, &err);
    ps_ldb_check(err, "write");
    leveldb_writebatch_clear(b);
}

static void ps_ldb_batch_free(void *b)
{
    leveldb_writebatch_destroy(b);
}

static void ps_ldb_report(void)
{
}

static void ps_ldb_close(void)
{
    leveldb_close(ps_ldb);
    leveldb_writeoptions_destroy(ps_ldb_wo);
    leveldb_options_destroy(ps_ldb_opts);
}

static const struct ps_engine ps_ldb_engine = {
    ps_ldb_open, ps_ldb_batch_new, ps_ldb_batch_put, ps_ldb_write,
    ps_ldb_batch_free, ps_ldb_report, ps_ldb_close,
};
#endif

/* ------------------------------------------------------------- threads */

/* Latencies are kept in log-spaced buckets: 64 per power of two of
** nanoseconds, so a percentile is within about 1%. */
#define PS_SUB 64
#define PS_BUCKETS (64 * PS_SUB)

struct ps_thread {
    pthread_t tid;
    unsigned seed;
    uint64_t writes;
    uint64_t max_ns;
    uint32_t *hist; /* PS_BUCKETS */
};

static const struct ps_engine *ps_eng;
static uint64_t ps_deadline;
static pthread_barrier_t ps_start;

static unsigned ps_bucket(uint64_t ns)
{
    if (ns < PS_SUB)
        return (unsigned)ns;
    unsigned lg = 63u - (unsigned)__builtin_clzll(ns); /* >= 6 */
    unsigned sub = (unsigned)(ns >> (lg - 6)) & (PS_SUB - 1);
    return (lg - 5) * PS_SUB + sub;
}

static double ps_bucket_ns(unsigned b)
{
    if (b < PS_SUB)
        return b;
    unsigned lg = b / PS_SUB + 5, sub = b % PS_SUB;
    return (double)((uint64_t)(PS_SUB + sub) << (lg - 6));
}

static uint64_t ps_rand(unsigned *s)
{
    /* xorshift, twice for 64 bits */
    uint64_t r = 0;
    for (int i = 0; i < 2; i++) {
        *s ^= *s << 13;
        *s ^= *s >> 17;
        *s ^= *s << 5;
        r = (r << 32) | *s;
    }
    return r;
}

static void *ps_run(void *arg)
{
    struct ps_thread *t = arg;
    char key[64], val[65536];
    memset(val, 'v', (size_t)F.value_size);
    void *b = ps_eng->batch_new();
    pthread_barrier_wait(&ps_start);
    while (ps_now_ns() < __atomic_load_n(&ps_deadline, __ATOMIC_RELAXED)) {
        for (long i = 0; i < F.batch; i++) {
            uint64_t r = ps_rand(&t->seed);
            snprintf(key, sizeof key, "%0*llu", (int)F.key_size,
                     (unsigned long long)(r % 100000000000000ull));
            memcpy(val, &r, sizeof r < (size_t)F.value_size
                                ? sizeof r : (size_t)F.value_size);
            ps_eng->batch_put(b, key, (size_t)F.key_size, val,
                              (size_t)F.value_size);
        }
        uint64_t t0 = ps_now_ns();
        ps_eng->write(b);
        uint64_t ns = ps_now_ns() - t0;
        t->hist[ps_bucket(ns)]++;
        if (ns > t->max_ns)
            t->max_ns = ns;
        t->writes++;
    }
    ps_eng->batch_free(b);
    return NULL;
}

static double ps_percentile(const uint64_t *hist, uint64_t total, double p)
{
    uint64_t want = (uint64_t)(p * (double)total), seen = 0;
    for (unsigned b = 0; b < PS_BUCKETS; b++) {
        seen += hist[b];
        if (seen > want)
            return ps_bucket_ns(b) / 1000.0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    ps_parse(argc, argv);
    if (strcmp(F.engine, "ravel") == 0)
        ps_eng = &ps_ravel_engine;
#ifdef HAVE_LEVELDB
    else if (strcmp(F.engine, "leveldb") == 0)
        ps_eng = &ps_ldb_engine;
#endif
    else
        die("--engine=%s: not built in (ravel%s)", F.engine,
#ifdef HAVE_LEVELDB
            ", leveldb"
#else
            ""
#endif
        );
    ps_eng->open();

    struct ps_thread *t = calloc((size_t)F.threads, sizeof *t);
    if (!t)
        die("out of memory%s%s", "", "");
    pthread_barrier_init(&ps_start, NULL, (unsigned)F.threads + 1);
    for (long i = 0; i < F.threads; i++) {
        t[i].seed = 2463534242u + (unsigned)i * 7919u;
        t[i].hist = calloc(PS_BUCKETS, sizeof *t[i].hist);
        if (!t[i].hist)
            die("out of memory%s%s", "", "");
    }
    ps_deadline = UINT64_MAX;
    for (long i = 0; i < F.threads; i++)
        if (pthread_create(&t[i].tid, NULL, ps_run, &t[i]) != 0)
            die("pthread_create: %s%s", strerror(errno), "");
    uint64_t start = ps_now_ns();
    __atomic_store_n(&ps_deadline, start + (uint64_t)(F.seconds * 1e9),
                     __ATOMIC_RELAXED);
    pthread_barrier_wait(&ps_start);
    start = ps_now_ns();
    static uint64_t hist[PS_BUCKETS];
    uint64_t writes = 0, max_ns = 0;
    for (long i = 0; i < F.threads; i++) {
        pthread_join(t[i].tid, NULL);
        for (unsigned b = 0; b < PS_BUCKETS; b++)
            hist[b] += t[i].hist[b];
        writes += t[i].writes;
        if (t[i].max_ns > max_ns)
            max_ns = t[i].max_ns;
        free(t[i].hist);
    }
    double secs = (double)(ps_now_ns() - start) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu_us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
                    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    printf("engine=%s threads=%ld batch=%ld sync=%ld ops/s=%.0f "
           "writes/s=%.0f p50_us=%.1f p99_us=%.1f p999_us=%.1f "
           "max_us=%.1f cpu_us/write=%.2f csw/write=%.3f\n",
           F.engine, F.threads, F.batch, F.sync,
           (double)(writes * (uint64_t)F.batch) / secs,
           (double)writes / secs, ps_percentile(hist, writes, 0.50),
           ps_percentile(hist, writes, 0.99),
           ps_percentile(hist, writes, 0.999), (double)max_ns / 1000.0,
           cpu_us / (double)writes,
           (double)(ru.ru_nvcsw + ru.ru_nivcsw) / (double)writes);
    if (F.stats)
        ps_eng->report();
    ps_eng->close();
    free(t);
    return 0;
}
