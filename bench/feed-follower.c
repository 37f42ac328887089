/*
** feed-follower.c -- what a continuous change-feed follower costs the
** writers: the seed workload (db_bench's fillrandom --threads=32
** --batch_size=8 --writes=30000, 16-byte keys, 100-byte values, WAL on,
** no sync; --writes keys per thread, as db_bench counts them, in batches
** of --batch) run in rounds without and with a follower thread that tails
** the database with ravel_updates_since / ravel_updates_next (pausing
** --poll_us when it is at the end), alternating, each round on a fresh
** database.  Prints each round's ops/s, the follower's CPU time, the
** medians and their ratio, and checks that the follower read every batch
** the writers wrote.
**
**   feed-follower [--dir=/dev/shm/feed-bench] [--threads=32] [--batch=8]
**       [--writes=30000] [--num=10000000] [--rounds=5] [--poll_us=1000]
**       [--options="name=value;..."]
**
** Both arms open with the same options: wal_size_limit_mb=4096 (flushed
** segments kept, so a follower that falls behind is never cut off) and
** --options.
*/
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ravel.h"

static struct {
    const char *dir, *options;
    long threads, batch, writes, num, rounds, poll_us;
} fb_args = {"/dev/shm/feed-bench", "", 32, 8, 30000, 10000000, 5, 1000};

static ravel_db *fb_db;
static atomic_int fb_writers_done;
static double fb_follower_cpu; /* the last round's follower CPU seconds */

static double fb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fb_die(const char *what, int rc)
{
    fprintf(stderr, "feed-follower: %s: %s: %s\n", what, ravel_errstr(rc),
            ravel_errmsg());
    exit(1);
}

static void *fb_writer(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
    ravel_batch *b;
    char key[24], val[100];
    memset(val, 'v', sizeof val);
    if (ravel_batch_new(&b))
        fb_die("batch", RAVEL_NOMEM);
    for (long i = 0; i < fb_args.writes / fb_args.batch; i++) {
        ravel_batch_clear(b);
        for (long j = 0; j < fb_args.batch; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            snprintf(key, sizeof key, "%016" PRIu64,
                     x % (uint64_t)fb_args.num);
            memcpy(val, &x, sizeof x);
            ravel_batch_put(b, key, 16, val, sizeof val);
        }
        int rc = ravel_write(fb_db, 0, b);
        if (rc)
            fb_die("write", rc);
    }
    ravel_batch_free(b);
    atomic_fetch_add(&fb_writers_done, 1);
    return NULL;
}

/* Tails the feed until the writers are done and it has read everything;
** returns the batches read. */
static void *fb_follower(void *arg)
{
    uint64_t *batches = arg;
    ravel_updates *u;
    int rc = ravel_updates_since(fb_db, 1, 0, &u);
    if (rc)
        fb_die("updates_since", rc);
    for (;;) {
        rc = ravel_updates_next(u);
        if (rc == RAVEL_OK) {
            (*batches)++;
            continue;
        }
        if (rc != RAVEL_NOTFOUND)
            fb_die("updates_next", rc);
        if (atomic_load(&fb_writers_done) == fb_args.threads) {
            /* one more look: what the last writers wrote is there now */
            while ((rc = ravel_updates_next(u)) == RAVEL_OK)
                (*batches)++;
            break;
        }
        usleep((useconds_t)fb_args.poll_us);
    }
    ravel_updates_free(u);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    fb_follower_cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return NULL;
}

/* One round: ops/s of the writers. */
static double fb_round(int follow, uint64_t *followed)
{
    if (ravel_destroy(fb_args.dir))
        fb_die("destroy", RAVEL_IOERR);
    ravel_options *o;
    ravel_options_new(&o);
    int rc = ravel_options_parse(o, "create_if_missing=true;"
                                    "wal_size_limit_mb=4096");
    if (!rc && fb_args.options[0])
        rc = ravel_options_parse(o, fb_args.options);
    if (!rc)
        rc = ravel_open(fb_args.dir, o, &fb_db);
    ravel_options_free(o);
    if (rc)
        fb_die("open", rc);
    atomic_store(&fb_writers_done, 0);
    pthread_t *th = calloc((size_t)fb_args.threads, sizeof *th), ft;
    *followed = 0;
    if (follow)
        pthread_create(&ft, NULL, fb_follower, followed);
    double t0 = fb_now();
    for (long i = 0; i < fb_args.threads; i++)
        pthread_create(&th[i], NULL, fb_writer, (void *)(uintptr_t)(i + 1));
    for (long i = 0; i < fb_args.threads; i++)
        pthread_join(th[i], NULL);
    double took = fb_now() - t0;
    if (follow)
        pthread_join(ft, NULL);
    free(th);
    if ((rc = ravel_close(fb_db)))
        fb_die("close", rc);
    return (double)(fb_args.threads * (fb_args.writes / fb_args.batch) *
                    fb_args.batch) / took;
}

static int fb_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double fb_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, fb_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int fb_flag(const char *a, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0 || a[n] != '=')
        return 0;
    *val = a + n + 1;
    return 1;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (fb_flag(argv[i], "--dir", &v)) fb_args.dir = v;
        else if (fb_flag(argv[i], "--options", &v)) fb_args.options = v;
        else if (fb_flag(argv[i], "--threads", &v)) fb_args.threads = atol(v);
        else if (fb_flag(argv[i], "--batch", &v)) fb_args.batch = atol(v);
        else if (fb_flag(argv[i], "--writes", &v)) fb_args.writes = atol(v);
        else if (fb_flag(argv[i], "--num", &v)) fb_args.num = atol(v);
        else if (fb_flag(argv[i], "--rounds", &v)) fb_args.rounds = atol(v);
        else if (fb_flag(argv[i], "--poll_us", &v)) fb_args.poll_us = atol(v);
        else {
            fprintf(stderr, "usage: feed-follower [--dir=D] [--threads=N] "
                    "[--batch=N] [--writes=N] [--num=N] [--rounds=N] "
                    "[--poll_us=N] [--options=...]\n");
            return 2;
        }
    }
    if (fb_args.threads < 1 || fb_args.batch < 1 ||
        fb_args.writes < fb_args.batch ||
        fb_args.num < 1 || fb_args.rounds < 1) {
        fprintf(stderr, "feed-follower: counts must be at least 1, and "
                "--writes at least --batch\n");
        return 2;
    }
    double *off = calloc((size_t)fb_args.rounds, sizeof *off);
    double *on = calloc((size_t)fb_args.rounds, sizeof *on);
    uint64_t want = (uint64_t)(fb_args.threads *
                               (fb_args.writes / fb_args.batch));
    for (long r = 0; r < fb_args.rounds; r++) {
        uint64_t followed;
        off[r] = fb_round(0, &followed);
        on[r] = fb_round(1, &followed);
        printf("round %ld: without follower %.0f ops/s, with %.0f ops/s "
               "(follower read %" PRIu64 " of %" PRIu64 " batches, %.3f s "
               "of CPU, %.2f us a batch)\n", r + 1, off[r], on[r], followed,
               want, fb_follower_cpu,
               followed ? fb_follower_cpu * 1e6 / (double)followed : 0.0);
        if (followed != want) {
            fprintf(stderr, "feed-follower: the follower read %" PRIu64
                    " batches, the writers wrote %" PRIu64 "\n", followed,
                    want);
            return 1;
        }
    }
    double m_off = fb_median(off, (int)fb_args.rounds);
    double m_on = fb_median(on, (int)fb_args.rounds);
    printf("median: without follower %.0f ops/s, with %.0f ops/s: %.3fx\n",
           m_off, m_on, m_on / m_off);
    ravel_destroy(fb_args.dir);
    free(off);
    free(on);
    return 0;
}
