/*
** rangedel-bench.c -- what range deletions cost reads of unrelated keys
** (issue 24, part 1: readrandom with 1,000 range tombstones present
** within 5% of none).
**
**   rangedel-bench [--num N] [--reads R] [--rounds K] [--tombstones T]
**                  [--in memtable|l0|last] [--dir D]
**
** Two databases hold the same N keys (16-byte keys "%016llu" of the even
** numbers 0, 2, ..., 2N-2; 100-byte values), flushed and compacted into
** table files.  Database B then gets T range deletions, each over one odd
** key [2j+1, 2j+1 followed by a zero byte): spread over the whole key
** space, they delete nothing, so both databases answer every read alike.
** Where they are read from (--in): B's memtable (memtable, the default);
** a level-0 table file of their own, which every read of B visits (its
** range spans the key space), written by a flush (l0); or the last
** level's files beside the keys, written by a flush and a compaction
** while a snapshot from before them keeps them (last).  So each read of
** B searches them.  Then K rounds alternate A and
** B (the order flipped every round), each R ravel_get_into of random
** present keys from one thread with the same seed; prints each round's
** reads per second of the thread's CPU time (CLOCK_THREAD_CPUTIME_ID:
** what other programs take of a loaded machine is left out) and the
** median ratio B/A.
*/
#include "ravel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static long long opt_num = 200000, opt_reads = 400000, opt_rounds = 7,
                 opt_tombs = 1000;
static const char *opt_dir = "/tmp/rangedel-bench";
static const char *opt_in = "memtable";

static void die(const char *what, int rc)
{
    fprintf(stderr, "rangedel-bench: %s: %d %s\n", what, rc, ravel_errmsg());
    exit(1);
}

/* The thread's CPU time: on a machine other programs load, a wall clock
** measures them too. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static ravel_db *open_db(const char *dir, int create)
{
    ravel_options *o;
    int rc = ravel_options_new(&o);
    if (rc)
        die("options", rc);
    char text[256];
    snprintf(text, sizeof text, "create_if_missing=%s;"
             "write_buffer_size=268435456", create ? "true" : "false");
    if ((rc = ravel_options_parse(o, text)))
        die("options_parse", rc);
    ravel_db *db;
    if ((rc = ravel_open(dir, o, &db)))
        die("open", rc);
    ravel_options_free(o);
    return db;
}

static void fill(ravel_db *db)
{
    char k[32], v[100];
    memset(v, 'v', sizeof v);
    ravel_batch *b;
    ravel_batch_new(&b);
    for (long long i = 0; i < opt_num; i++) {
        snprintf(k, sizeof k, "%016llu", 2 * (unsigned long long)i);
        ravel_batch_put(b, k, 16, v, sizeof v);
        if (ravel_batch_count(b) == 1000 || i == opt_num - 1) {
            int rc = ravel_write(db, 0, b);
            if (rc)
                die("write", rc);
            ravel_batch_clear(b);
        }
    }
    ravel_batch_free(b);
    int rc = ravel_flush(db, 0);
    if (rc == RAVEL_OK)
        rc = ravel_compact_range(db, NULL, 0, NULL, 0);
    if (rc)
        die("flush/compact", rc);
}

static void tombstones(ravel_db *db)
{
    for (long long t = 0; t < opt_tombs; t++) {
        char b[32], e[33];
        unsigned long long j = (unsigned long long)(t * (opt_num / opt_tombs));
        snprintf(b, sizeof b, "%016llu", 2 * j + 1);
        memcpy(e, b, 16);
        e[16] = 0; /* [b, b + "\0"): b alone, which holds nothing */
        int rc = ravel_delete_range(db, 0, b, 16, e, 17);
        if (rc)
            die("delete_range", rc);
    }
}

/* Moves B's tombstones where --in says. */
static void place(ravel_db *db, ravel_snapshot *before)
{
    int rc = RAVEL_OK;
    if (strcmp(opt_in, "memtable") != 0)
        rc = ravel_flush(db, 0);
    if (rc == RAVEL_OK && strcmp(opt_in, "last") == 0)
        rc = ravel_compact_range(db, NULL, 0, NULL, 0);
    if (rc)
        die("flush/compact", rc);
    if ((rc = ravel_snapshot_release(db, before)))
        die("snapshot_release", rc);
}

static double readrandom(ravel_db *db, uint64_t seed)
{
    char k[32], buf[128];
    uint64_t s = seed | 1;
    long long found = 0;
    double t0 = now_s();
    for (long long i = 0; i < opt_reads; i++) {
        snprintf(k, sizeof k, "%016llu",
                 2 * (unsigned long long)(rng_next(&s) % (uint64_t)opt_num));
        size_t vl;
        int rc = ravel_get_into(db, NULL, k, 16, buf, sizeof buf, &vl);
        if (rc == RAVEL_OK)
            found++;
        else
            die("get", rc);
    }
    double dt = now_s() - t0;
    return found / dt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--num=", 6))
            opt_num = atoll(argv[i] + 6);
        else if (!strncmp(argv[i], "--reads=", 8))
            opt_reads = atoll(argv[i] + 8);
        else if (!strncmp(argv[i], "--rounds=", 9))
            opt_rounds = atoll(argv[i] + 9);
        else if (!strncmp(argv[i], "--tombstones=", 13))
            opt_tombs = atoll(argv[i] + 13);
        else if (!strncmp(argv[i], "--dir=", 6))
            opt_dir = argv[i] + 6;
        else if (!strncmp(argv[i], "--in=", 5) &&
                 (!strcmp(argv[i] + 5, "memtable") ||
                  !strcmp(argv[i] + 5, "l0") || !strcmp(argv[i] + 5, "last")))
            opt_in = argv[i] + 5;
        else {
            fprintf(stderr, "usage: rangedel-bench [--num=N] [--reads=R] "
                    "[--rounds=K] [--tombstones=T] "
                    "[--in=memtable|l0|last] [--dir=D]\n");
            return 2;
        }
    }
    if (opt_tombs < 1 || opt_tombs > opt_num)
        opt_tombs = opt_num;
    char da[512], dbp[512];
    snprintf(da, sizeof da, "%s/none", opt_dir);
    snprintf(dbp, sizeof dbp, "%s/tombstones", opt_dir);
    ravel_destroy(da);
    ravel_destroy(dbp);
    mkdir(opt_dir, 0755); /* its parent must exist */
    ravel_db *a = open_db(da, 1), *b = open_db(dbp, 1);
    fill(a);
    fill(b);
    ravel_snapshot *before;
    int src = ravel_snapshot_acquire(b, &before);
    if (src)
        die("snapshot_acquire", src);
    tombstones(b);
    place(b, before);
    /* where B's tombstones are: its files (a table holding them is
    ** larger than A's by their block) */
    char *files = NULL;
    for (int i = 0; i < 2; i++)
        if (ravel_property(i ? b : a, "ravel.sstables", &files) == RAVEL_OK) {
            printf("%s, tombstones in %s:\n%s", i ? "B" : "A", opt_in,
                   files);
            ravel_free(files);
        }
    double *ratio = calloc((size_t)opt_rounds, sizeof *ratio);
    for (long long r = 0; r < opt_rounds; r++) {
        uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1);
        double ra, rb;
        if (r % 2) {
            rb = readrandom(b, seed);
            ra = readrandom(a, seed);
        } else {
            ra = readrandom(a, seed);
            rb = readrandom(b, seed);
        }
        ratio[r] = rb / ra;
        printf("round %lld: none %.0f reads/s, %lld tombstones %.0f "
               "reads/s, ratio %.3f\n", r, ra, opt_tombs, rb, ratio[r]);
    }
    qsort(ratio, (size_t)opt_rounds, sizeof *ratio, cmp_double);
    printf("median ratio (with / without): %.3f over %lld rounds\n",
           ratio[opt_rounds / 2], opt_rounds);
    free(ratio);
    ravel_close(a);
    ravel_close(b);
    ravel_destroy(da);
    ravel_destroy(dbp);
    return 0;
}
