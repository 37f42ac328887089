/*
** reader-backup-bench.c -- what a checkpoint or backup taken from a reader
** handle costs (issue 22: a copy of a database an application has open):
** the time and bytes of a checkpoint, of a full backup, of an incremental
** one after 1% of the keys changed and of a one-file backup, all from a
** reader, beside the writer's own checkpoint; and the writer's put
** latency while the reader copies, against a window of the same length
** with no copy running.
**
**   reader-backup-bench DIR [--keys N] [--value-size B]
**
** DIR must not exist; everything is made below it and left for a look.
** The writer and the reader are two handles of this process (the reader
** takes no lock and shares nothing with the writer but the directory, as
** in another process); one writer thread puts random keys throughout.
*/
#include "ravel.h"

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t rbb_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void rbb_die(const char *what, int rc)
{
    fprintf(stderr, "reader-backup-bench: %s: %s (%s)\n", what,
            ravel_errmsg(), ravel_errstr(rc));
    exit(1);
}

#define RBB_CHECK(what, call) do { int rc_ = (call); \
        if (rc_) rbb_die(what, rc_); } while (0)

/* Put latencies of the writer thread, in power-of-two buckets (us). */
#define RBB_BUCKETS 40
struct rbb_lat {
    _Atomic uint64_t n, max, bucket[RBB_BUCKETS];
};

static void rbb_lat_add(struct rbb_lat *l, uint64_t us)
{
    int b = 0;
    while (b < RBB_BUCKETS - 1 && (1ull << b) <= us)
        b++;
    atomic_fetch_add(&l->bucket[b], 1);
    atomic_fetch_add(&l->n, 1);
    uint64_t m = atomic_load(&l->max);
    while (us > m && !atomic_compare_exchange_weak(&l->max, &m, us))
        ;
}

/* The upper bound (us) of the bucket holding quantile Q. */
static uint64_t rbb_lat_quantile(struct rbb_lat *l, double q)
{
    uint64_t n = atomic_load(&l->n), want = (uint64_t)(q * (double)n), seen = 0;
    for (int b = 0; b < RBB_BUCKETS; b++) {
        seen += atomic_load(&l->bucket[b]);
        if (seen > want)
            return 1ull << b;
    }
    return atomic_load(&l->max);
}

struct rbb_writer {
    ravel_db *db;
    uint64_t keys;
    int value_size;
    _Atomic int stop;
    struct rbb_lat *_Atomic window; /* where latencies go now (NULL: none) */
};

static void rbb_key(char *k, size_t n, uint64_t i)
{
    snprintf(k, n, "key%012" PRIu64, i);
}

static void *rbb_writer_main(void *arg)
{
    struct rbb_writer *w = arg;
    char k[32], *v = malloc((size_t)w->value_size);
    memset(v, 'w', (size_t)w->value_size);
    uint64_t x = 88172645463325252ull;
    while (!atomic_load(&w->stop)) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rbb_key(k, sizeof k, x % w->keys);
        uint64_t t0 = rbb_now_us();
        RBB_CHECK("writer put", ravel_put(w->db, 0, k, strlen(k), v,
                                          (size_t)w->value_size));
        struct rbb_lat *l = atomic_load(&w->window);
        if (l)
            rbb_lat_add(l, rbb_now_us() - t0);
    }
    free(v);
    return NULL;
}

/* Waits until DB has no compaction pending or running (bounded). */
static void rbb_wait_idle(ravel_db *db)
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

/* Bytes of the regular files in DIR, and of those with more than one
** link (hard-linked, shared with the source). */
static void rbb_dir_bytes(const char *dir, uint64_t *all, uint64_t *linked)
{
    *all = *linked = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char p[4096];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        *all += (uint64_t)st.st_size;
        if (st.st_nlink > 1)
            *linked += (uint64_t)st.st_size;
    }
    if (d)
        closedir(d);
}

static void rbb_report(const char *what, uint64_t us, uint64_t bytes,
                       uint64_t copied)
{
    printf("%-40s %9.1f ms  %12" PRIu64 " bytes  %12" PRIu64 " copied\n",
           what, (double)us / 1000.0, bytes, copied);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: reader-backup-bench DIR [--keys N] "
                "[--value-size B]\n");
        return 2;
    }
    const char *top = argv[1];
    uint64_t keys = 300000;
    int value_size = 100;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--keys") == 0)
            keys = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--value-size") == 0)
            value_size = atoi(argv[i + 1]);
    }
    if (mkdir(top, 0755) != 0) {
        perror(top);
        return 1;
    }
    char src[4096], path[4096];
    snprintf(src, sizeof src, "%s/db", top);
    ravel_options *o;
    RBB_CHECK("options", ravel_options_new(&o));
    RBB_CHECK("options", ravel_options_set(o, "create_if_missing", "true"));
    ravel_db *db;
    RBB_CHECK("open", ravel_open(src, o, &db));
    char k[32], *v = malloc((size_t)value_size);
    memset(v, 'v', (size_t)value_size);
    for (uint64_t i = 0; i < keys; i++) {
        rbb_key(k, sizeof k, i);
        RBB_CHECK("load", ravel_put(db, 0, k, strlen(k), v,
                                    (size_t)value_size));
    }
    RBB_CHECK("flush", ravel_flush(db, 0));
    RBB_CHECK("reader options", ravel_options_set(o, "create_if_missing",
                                                  "false"));
    RBB_CHECK("reader options", ravel_options_set(o, "read_only", "true"));
    ravel_db *reader;
    RBB_CHECK("open the reader", ravel_open(src, o, &reader));

    struct rbb_writer w = {.db = db, .keys = keys, .value_size = value_size};
    pthread_t th;
    pthread_create(&th, NULL, rbb_writer_main, &w);
    usleep(200000);

    /* the reader's checkpoint, the writer's latencies meanwhile */
    static struct rbb_lat during, idle;
    uint64_t all, linked;
    snprintf(path, sizeof path, "%s/reader-cp", top);
    atomic_store(&w.window, &during);
    uint64_t t0 = rbb_now_us();
    RBB_CHECK("reader checkpoint", ravel_checkpoint(reader, path));
    uint64_t cp_us = rbb_now_us() - t0;
    atomic_store(&w.window, &idle);
    usleep((useconds_t)(cp_us > 100000 ? cp_us : 100000));
    atomic_store(&w.window, NULL);
    rbb_dir_bytes(path, &all, &linked);
    rbb_report("checkpoint from the reader", cp_us, all, all - linked);

    snprintf(path, sizeof path, "%s/writer-cp", top);
    t0 = rbb_now_us();
    RBB_CHECK("writer checkpoint", ravel_checkpoint(db, path));
    uint64_t us = rbb_now_us() - t0;
    rbb_dir_bytes(path, &all, &linked);
    rbb_report("checkpoint from the writer", us, all, all - linked);

    /* backups: the writer thread stopped and its overwrites compacted
    ** away first, so that the compactions it left pending do not rewrite
    ** files between the full backup and the incremental one (as
    ** backup-bench does) */
    atomic_store(&w.stop, 1);
    pthread_join(th, NULL);
    RBB_CHECK("flush", ravel_flush(db, 0));
    RBB_CHECK("compact", ravel_compact_range(db, NULL, 0, NULL, 0));
    rbb_wait_idle(db);
    char root[4096];
    snprintf(root, sizeof root, "%s/backups", top);
    uint64_t id, bytes, copied;
    t0 = rbb_now_us();
    RBB_CHECK("full backup", ravel_backup_create(reader, root, &id));
    us = rbb_now_us() - t0;
    RBB_CHECK("info", ravel_backup_info(root, id, RAVEL_BACKUP_BYTES,
                                        &bytes));
    RBB_CHECK("info", ravel_backup_info(root, id, RAVEL_BACKUP_COPIED,
                                        &copied));
    rbb_report("full backup from the reader", us, bytes, copied);

    /* 1% of the keys changed (a contiguous range), flushed, and the
    ** compactions it set off done */
    for (uint64_t i = keys / 2; i < keys / 2 + keys / 100; i++) {
        rbb_key(k, sizeof k, i);
        RBB_CHECK("update", ravel_put(db, 0, k, strlen(k), v,
                                      (size_t)value_size));
    }
    RBB_CHECK("flush", ravel_flush(db, 0));
    rbb_wait_idle(db);
    t0 = rbb_now_us();
    RBB_CHECK("incremental backup", ravel_backup_create(reader, root, &id));
    us = rbb_now_us() - t0;
    RBB_CHECK("info", ravel_backup_info(root, id, RAVEL_BACKUP_BYTES,
                                        &bytes));
    RBB_CHECK("info", ravel_backup_info(root, id, RAVEL_BACKUP_COPIED,
                                        &copied));
    rbb_report("1% (a range) incremental backup, reader", us, bytes,
               copied);

    snprintf(path, sizeof path, "%s/one.rvbk", top);
    t0 = rbb_now_us();
    RBB_CHECK("one-file backup", ravel_backup_write_file(reader, path));
    us = rbb_now_us() - t0;
    struct stat st;
    stat(path, &st);
    rbb_report("one-file backup from the reader", us, (uint64_t)st.st_size,
               (uint64_t)st.st_size);

    printf("writer put latency (us, bucket upper bounds): during the "
           "reader's checkpoint p50 %" PRIu64 " p99 %" PRIu64 " max %"
           PRIu64 " (%" PRIu64 " puts); with no copy p50 %" PRIu64
           " p99 %" PRIu64 " max %" PRIu64 " (%" PRIu64 " puts)\n",
           rbb_lat_quantile(&during, 0.5), rbb_lat_quantile(&during, 0.99),
           atomic_load(&during.max), atomic_load(&during.n),
           rbb_lat_quantile(&idle, 0.5), rbb_lat_quantile(&idle, 0.99),
           atomic_load(&idle.max), atomic_load(&idle.n));
    RBB_CHECK("close reader", ravel_close(reader));
    RBB_CHECK("close", ravel_close(db));
    ravel_options_free(o);
    free(v);
    return 0;
}
