/*
** backup-bench.c -- what checkpoints and backups cost (issue 22, part 2):
** the pause writers see while a checkpoint is taken, and the time and
** bytes of a full backup, of an incremental one after 1% of the keys
** changed, of a one-file backup, and of a restore.
**
**   backup-bench DIR [--keys N] [--value-size B] [--rounds R]
**
** DIR must not exist; everything is made below it and left for a look.
** Writers: two threads putting random keys without pause while R
** checkpoints are taken, their put latencies recorded in two windows of
** the same length: with no checkpoint running, and while one runs.  The
** pause the checkpoint itself measured (the memtable switch writers wait
** for) is read from the database's LOG ("writers paused N us").
*/
#include "ravel.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "backup-bench: %s: %s (%s)\n", what, ravel_errmsg(),
            ravel_errstr(rc));
    exit(1);
}

#define CHECK(what, call) do { int rc_ = (call); \
        if (rc_) die(what, rc_); } while (0)

/* ------------------------------------------------------------ latency */

#define LAT_BUCKETS 64 /* power-of-two microsecond buckets */

struct lat {
    _Atomic uint64_t n, max, bucket[LAT_BUCKETS];
};

static void lat_add(struct lat *l, uint64_t us)
{
    int b = 0;
    while (b < LAT_BUCKETS - 1 && (1ull << b) <= us)
        b++;
    atomic_fetch_add(&l->bucket[b], 1);
    atomic_fetch_add(&l->n, 1);
    uint64_t m = atomic_load(&l->max);
    while (us > m && !atomic_compare_exchange_weak(&l->max, &m, us))
        ;
}

/* The bucket bound below which a fraction Q of the samples lie. */
static uint64_t lat_quantile(struct lat *l, double q)
{
    uint64_t n = atomic_load(&l->n), seen = 0;
    for (int b = 0; b < LAT_BUCKETS; b++) {
        seen += atomic_load(&l->bucket[b]);
        if ((double)seen >= q * (double)n)
            return 1ull << b;
    }
    return 0;
}

/* ------------------------------------------------------------ writers */

static ravel_db *db;
static int value_size = 100;
static uint64_t keys = 400000;
static _Atomic int stop;
static struct lat *_Atomic window; /* where latencies go now, or NULL */

static void key_of(char *k, size_t n, uint64_t i)
{
    snprintf(k, n, "key%012" PRIu64, i);
}

static void *writer(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
    char k[32], *v = malloc((size_t)value_size);
    memset(v, 'w', (size_t)value_size);
    while (!atomic_load(&stop)) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        key_of(k, sizeof k, x % keys);
        uint64_t t0 = now_us();
        CHECK("put", ravel_put(db, 0, k, strlen(k), v, (size_t)value_size));
        struct lat *w = atomic_load(&window);
        if (w)
            lat_add(w, now_us() - t0);
    }
    free(v);
    return NULL;
}

/* -------------------------------------------------------------- steps */

static void load(void)
{
    char k[32], *v = malloc((size_t)value_size);
    ravel_batch *b;
    CHECK("batch", ravel_batch_new(&b));
    for (uint64_t i = 0; i < keys; i++) {
        key_of(k, sizeof k, i);
        memset(v, 'a' + (int)(i % 26), (size_t)value_size);
        CHECK("batch put", ravel_batch_put(b, k, strlen(k), v,
                                           (size_t)value_size));
        if (i % 1000 == 999 || i + 1 == keys) {
            CHECK("write", ravel_write(db, 0, b));
            ravel_batch_clear(b);
        }
    }
    ravel_batch_free(b);
    free(v);
    CHECK("flush", ravel_flush(db, 0));
}

/* Waits until no compaction is pending or running (bounded). */
static void wait_idle(void)
{
    for (int i = 0; i < 6000; i++) {
        char *p = NULL, *r = NULL;
        ravel_property(db, "ravel.compaction-pending", &p);
        ravel_property(db, "ravel.num-running-compactions", &r);
        int idle = p && r && strcmp(p, "0") == 0 && strcmp(r, "0") == 0;
        ravel_free(p);
        ravel_free(r);
        if (idle)
            return;
        usleep(10000);
    }
}

/* The mean and max of the "writers paused N us" values in the LOG. */
static void log_pauses(const char *dir, double *mean, uint64_t *max)
{
    char path[1100], line[2048];
    snprintf(path, sizeof path, "%s/LOG", dir);
    FILE *f = fopen(path, "r");
    uint64_t sum = 0, n = 0;
    *max = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, "writers paused ");
        unsigned long long us;
        if (p && sscanf(p, "writers paused %llu us", &us) == 1) {
            sum += us;
            n++;
            if (us > *max)
                *max = us;
        }
    }
    if (f)
        fclose(f);
    *mean = n ? (double)sum / (double)n : 0;
}

static void report_window(const char *name, struct lat *l)
{
    printf("  writers' put latency %-22s %8" PRIu64 " puts  p50 <%6" PRIu64
           " us  p99 <%7" PRIu64 " us  max %7" PRIu64 " us\n", name,
           atomic_load(&l->n), lat_quantile(l, 0.5), lat_quantile(l, 0.99),
           atomic_load(&l->max));
}

static uint64_t info(const char *root, uint64_t id, int what)
{
    uint64_t v = 0;
    CHECK("backup info", ravel_backup_info(root, id, what, &v));
    return v;
}

int main(int argc, char **argv)
{
    int rounds = 10;
    if (argc < 2) {
        fprintf(stderr, "usage: backup-bench DIR [--keys N] [--value-size "
                "B] [--rounds R]\n");
        return 2;
    }
    const char *top = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--keys") == 0)
            keys = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--value-size") == 0)
            value_size = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
    }
    if (mkdir(top, 0755) != 0) {
        perror(top);
        return 1;
    }
    char dir[1024], root[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/db", top);
    snprintf(root, sizeof root, "%s/backups", top);
    ravel_options *o;
    CHECK("options", ravel_options_new(&o));
    CHECK("options", ravel_options_set(o, "create_if_missing", "true"));
    CHECK("open", ravel_open(dir, o, &db));
    ravel_options_free(o);

    uint64_t t0 = now_us();
    load();
    wait_idle();
    printf("loaded %" PRIu64 " keys of %d bytes in %.2f s\n", keys,
           value_size, (double)(now_us() - t0) / 1e6);

    /* checkpoints under two writers */
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, writer, (void *)(uintptr_t)(i + 1));
    static struct lat base, during;
    uint64_t cp_total = 0, cp_max = 0;
    for (int r = 0; r < rounds; r++) {
        snprintf(path, sizeof path, "%s/cp-%d", top, r);
        atomic_store(&window, &during);
        uint64_t s = now_us();
        CHECK("checkpoint", ravel_checkpoint(db, path));
        uint64_t took = now_us() - s;
        atomic_store(&window, &base); /* as long without a checkpoint */
        usleep((useconds_t)took);
        atomic_store(&window, NULL);
        cp_total += took;
        if (took > cp_max)
            cp_max = took;
        usleep(100000);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    double pause_mean;
    uint64_t pause_max;
    log_pauses(dir, &pause_mean, &pause_max);
    printf("checkpoint (%d rounds, 2 writers running): %.1f ms mean, %.1f "
           "ms max per checkpoint\n", rounds,
           (double)cp_total / rounds / 1000.0, (double)cp_max / 1000.0);
    printf("  pause writers waited for (memtable switch, from LOG): %.0f us "
           "mean, %" PRIu64 " us max\n", pause_mean, pause_max);
    report_window("(no checkpoint)", &base);
    report_window("(during checkpoints)", &during);

    /* backups: full (after a flush: the writers' WAL would be copied
    ** too), then after 1% of the keys changed -- a contiguous range, then
    ** random keys -- each after its flush and the compactions it set off
    ** (the level-0 file it adds sets off none until there are four) */
    CHECK("flush", ravel_flush(db, 0));
    /* settled: the writers' overwrites compacted away, so that the
    ** compactions the checkpoint phase left pending do not rewrite the
    ** files between the full backup and the next */
    CHECK("compact", ravel_compact_range(db, NULL, 0, NULL, 0));
    wait_idle();
    uint64_t id1, id2, id3;
    t0 = now_us();
    CHECK("backup 1", ravel_backup_create(db, root, &id1));
    uint64_t full_us = now_us() - t0;
    char k[32], *v = malloc((size_t)value_size);
    memset(v, 'y', (size_t)value_size);
    for (uint64_t i = keys / 2; i < keys / 2 + keys / 100; i++) {
        key_of(k, sizeof k, i);
        CHECK("put", ravel_put(db, 0, k, strlen(k), v, (size_t)value_size));
    }
    CHECK("flush", ravel_flush(db, 0));
    wait_idle();
    t0 = now_us();
    CHECK("backup 2", ravel_backup_create(db, root, &id2));
    uint64_t range_us = now_us() - t0;
    memset(v, 'z', (size_t)value_size);
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < keys / 100; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        key_of(k, sizeof k, x % keys);
        CHECK("put", ravel_put(db, 0, k, strlen(k), v, (size_t)value_size));
    }
    free(v);
    CHECK("flush", ravel_flush(db, 0));
    wait_idle();
    t0 = now_us();
    CHECK("backup 3", ravel_backup_create(db, root, &id3));
    uint64_t rand_us = now_us() - t0;
    const char *what[3] = {"full backup:", "1% changed, a range:",
                           "1% changed, random:"};
    uint64_t ids[3] = {id1, id2, id3}, us[3] = {full_us, range_us, rand_us};
    for (int i = 0; i < 3; i++)
        printf("%-22s %8.1f ms  %12" PRIu64 " bytes  %12" PRIu64
               " copied (%.2f%%)\n", what[i], (double)us[i] / 1000.0,
               info(root, ids[i], RAVEL_BACKUP_BYTES),
               info(root, ids[i], RAVEL_BACKUP_COPIED),
               100.0 * (double)info(root, ids[i], RAVEL_BACKUP_COPIED) /
                   (double)info(root, ids[i], RAVEL_BACKUP_BYTES));
    uint64_t newest = id3;
    t0 = now_us();
    CHECK("verify", ravel_backup_verify(root, newest));
    printf("verify:                %8.1f ms\n", (double)(now_us() - t0) / 1e3);
    snprintf(path, sizeof path, "%s/restored", top);
    t0 = now_us();
    CHECK("restore", ravel_backup_restore(root, newest, path));
    printf("restore:               %8.1f ms\n", (double)(now_us() - t0) / 1e3);

    snprintf(path, sizeof path, "%s/one.rvbk", top);
    t0 = now_us();
    CHECK("one-file backup", ravel_backup_write_file(db, path));
    uint64_t one_us = now_us() - t0;
    struct stat st;
    stat(path, &st);
    printf("one-file backup:       %8.1f ms  %12lld bytes\n",
           (double)one_us / 1000.0, (long long)st.st_size);
    snprintf(root, sizeof root, "%s/from-file", top);
    t0 = now_us();
    CHECK("one-file restore", ravel_backup_restore_file(path, root));
    printf("one-file restore:      %8.1f ms\n", (double)(now_us() - t0) / 1e3);
    CHECK("close", ravel_close(db));
    return 0;
}
