/*
** ingest-load.c -- loading sorted keys into an empty database two ways,
** to compare them (issue 22, bulk ingest):
**
**   batch   ravel_write of batches of --batch puts (1000), then
**           ravel_flush and a wait until no flush or compaction is due or
**           running (ravel.compaction-pending, ravel.num-running-
**           compactions, ravel.num-immutable-mem-table all 0);
**   ingest  ravel_sst_writer into --files files (the keys cut in equal
**           ranges), then one ravel_ingest of them all (RAVEL_INGEST_MOVE),
**           then the same wait.
**
** Both end with every key in table files and nothing due, so their times
** compare.  Keys are 16 bytes ("%016llu" of the key's number), values
** --value-size bytes (100) that vary with the key.  Each load gets a new
** database under --dir (removed before and after); a sample of keys is
** read back from each.  Prints one line per load and the ratio.
**
** usage: ingest-load [--keys N] [--value-size N] [--batch N] [--files N]
**                    [--dir DIR] [--only batch|ingest] [--options TEXT]
*/
#include <ravel.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct load_args {
    uint64_t keys;
    size_t value_size;
    uint64_t batch;
    int files;
    const char *dir;
    const char *only;
    const char *options;
};

static double load_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void load_die(const char *what, int rc)
{
    fprintf(stderr, "ingest-load: %s: %s (%s)\n", what, ravel_errmsg(),
            ravel_errstr(rc));
    exit(1);
}

/* "%016llu" of I, without printf (the loads are timed, not printf). */
static void load_key(char *k, uint64_t i)
{
    for (int d = 15; d >= 0; d--) {
        k[d] = (char)('0' + i % 10);
        i /= 10;
    }
}

/* Values are cut from a pool of random letters (made once), at an offset
** that varies with the key: cheap to make, so the loads are timed and
** not the data's generation. */
#define LOAD_POOL (1u << 20)
static char load_pool[LOAD_POOL];

static void load_pool_fill(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t j = 0; j < LOAD_POOL; j++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        load_pool[j] = (char)('a' + x % 26);
    }
}

static void load_value(char *v, size_t n, uint64_t i)
{
    memcpy(v, load_pool + (i * 7919) % (LOAD_POOL - n), n);
}

static uint64_t load_prop(ravel_db *db, const char *name)
{
    char *text = NULL;
    int rc = ravel_property(db, name, &text);
    if (rc)
        load_die(name, rc);
    uint64_t v = strtoull(text, NULL, 10);
    ravel_free(text);
    return v;
}

/* Waits until nothing is due or running (twice in a row). */
static void load_settle(ravel_db *db)
{
    int rc = ravel_flush(db, 0);
    if (rc)
        load_die("ravel_flush", rc);
    int in_a_row = 0;
    while (in_a_row < 2) {
        int idle = load_prop(db, "ravel.num-immutable-mem-table") == 0 &&
                   load_prop(db, "ravel.compaction-pending") == 0 &&
                   load_prop(db, "ravel.num-running-compactions") == 0;
        in_a_row = idle ? in_a_row + 1 : 0;
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

static ravel_db *load_open(const struct load_args *a, const char *dir)
{
    ravel_options *o = NULL;
    int rc = ravel_options_new(&o);
    if (!rc)
        rc = ravel_options_set(o, "create_if_missing", "true");
    if (!rc && a->options)
        rc = ravel_options_parse(o, a->options);
    if (rc)
        load_die("options", rc);
    ravel_db *db = NULL;
    rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc)
        load_die(dir, rc);
    return db;
}

/* Reads back every 997th key. */
static void load_check(ravel_db *db, const struct load_args *a)
{
    char k[16], *want = malloc(a->value_size);
    for (uint64_t i = 0; i < a->keys; i += 997) {
        load_key(k, i);
        load_value(want, a->value_size, i);
        void *v = NULL;
        size_t vl = 0;
        int rc = ravel_get(db, NULL, k, 16, &v, &vl);
        if (rc || vl != a->value_size || memcmp(v, want, vl) != 0) {
            fprintf(stderr, "ingest-load: key %" PRIu64 " reads back "
                    "wrong (rc %d)\n", i, rc);
            exit(1);
        }
        ravel_free(v);
    }
    free(want);
}

static void load_levels(ravel_db *db, char *buf, size_t n)
{
    size_t used = 0;
    for (int l = 0; l < 7 && used < n; l++) {
        char name[40];
        snprintf(name, sizeof name, "ravel.num-files-at-level%d", l);
        used += (size_t)snprintf(buf + used, n - used, "%s%" PRIu64,
                                 l ? "/" : "", load_prop(db, name));
    }
}

static double load_batch(const struct load_args *a, const char *dir)
{
    ravel_destroy(dir);
    ravel_db *db = load_open(a, dir);
    ravel_batch *b = NULL;
    if (ravel_batch_new(&b))
        load_die("batch", RAVEL_NOMEM);
    char k[16], *v = malloc(a->value_size);
    double start = load_now();
    for (uint64_t i = 0; i < a->keys; i++) {
        load_key(k, i);
        load_value(v, a->value_size, i);
        int rc = ravel_batch_put(b, k, 16, v, a->value_size);
        if (!rc && (i + 1) % a->batch == 0) {
            rc = ravel_write(db, 0, b);
            if (!rc)
                rc = ravel_batch_clear(b);
        }
        if (rc)
            load_die("ravel_write", rc);
    }
    int rc = ravel_batch_count(b) ? ravel_write(db, 0, b) : RAVEL_OK;
    if (rc)
        load_die("ravel_write", rc);
    double written = load_now() - start;
    load_settle(db);
    double took = load_now() - start;
    char levels[128];
    load_levels(db, levels, sizeof levels);
    printf("batch:  %" PRIu64 " keys in %.2f s (writes %.2f s, then %.2f s "
           "until compactions settled), %.0f keys/s; files per level "
           "0..6: %s\n", a->keys, took, written, took - written,
           (double)a->keys / took, levels);
    load_check(db, a);
    ravel_batch_free(b);
    free(v);
    if ((rc = ravel_close(db)))
        load_die("close", rc);
    ravel_destroy(dir);
    return took;
}

static double load_ingest(const struct load_args *a, const char *dir,
                          const char *src)
{
    ravel_destroy(dir);
    mkdir(src, 0755);
    ravel_db *db = load_open(a, dir);
    char k[16], *v = malloc(a->value_size);
    char **paths = calloc((size_t)a->files, sizeof *paths);
    double start = load_now();
    uint64_t per = (a->keys + (uint64_t)a->files - 1) / (uint64_t)a->files;
    for (int f = 0; f < a->files; f++) {
        paths[f] = malloc(4096);
        if (snprintf(paths[f], 4096, "%s/%04d.sst", src, f) >= 4096)
            load_die("source path too long", RAVEL_INVALID);
        unlink(paths[f]);
        ravel_sst_writer *w = NULL;
        int rc = ravel_sst_writer_open(paths[f], NULL, &w);
        if (rc)
            load_die("ravel_sst_writer_open", rc);
        for (uint64_t i = (uint64_t)f * per;
             i < a->keys && i < (uint64_t)(f + 1) * per; i++) {
            load_key(k, i);
            load_value(v, a->value_size, i);
            if ((rc = ravel_sst_writer_put(w, k, 16, v, a->value_size)))
                load_die("ravel_sst_writer_put", rc);
        }
        if ((rc = ravel_sst_writer_finish(w, NULL)))
            load_die("ravel_sst_writer_finish", rc);
        ravel_sst_writer_free(w);
    }
    double written = load_now() - start;
    int rc = ravel_ingest(db, (const char *const *)paths, (size_t)a->files,
                          RAVEL_INGEST_MOVE);
    if (rc)
        load_die("ravel_ingest", rc);
    double ingested = load_now() - start;
    load_settle(db);
    double took = load_now() - start;
    char levels[128];
    load_levels(db, levels, sizeof levels);
    printf("ingest: %" PRIu64 " keys in %.2f s (sst writer %.2f s, "
           "ravel_ingest %.2f s, then %.2f s until compactions settled), "
           "%.0f keys/s; files per level 0..6: %s\n", a->keys, took,
           written, ingested - written, took - ingested,
           (double)a->keys / took, levels);
    load_check(db, a);
    for (int f = 0; f < a->files; f++)
        free(paths[f]);
    free(paths);
    free(v);
    if ((rc = ravel_close(db)))
        load_die("close", rc);
    ravel_destroy(dir);
    rmdir(src);
    return took;
}

static uint64_t load_number(const char *flag, const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v ? v : "", &end, 10);
    if (!v || errno || *end || n == 0) {
        fprintf(stderr, "ingest-load: %s needs a positive number\n", flag);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    struct load_args a = {10000000, 100, 1000, 16, "ingest-load.tmp", NULL,
                          NULL};
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(f, "--keys") == 0)
            a.keys = load_number(f, v);
        else if (strcmp(f, "--value-size") == 0)
            a.value_size = (size_t)load_number(f, v);
        else if (strcmp(f, "--batch") == 0)
            a.batch = load_number(f, v);
        else if (strcmp(f, "--files") == 0)
            a.files = (int)load_number(f, v);
        else if (strcmp(f, "--dir") == 0 && v)
            a.dir = v;
        else if (strcmp(f, "--only") == 0 && v)
            a.only = v;
        else if (strcmp(f, "--options") == 0 && v)
            a.options = v;
        else {
            fprintf(stderr, "usage: ingest-load [--keys N] [--value-size N] "
                    "[--batch N] [--files N] [--dir DIR] "
                    "[--only batch|ingest] [--options TEXT]\n");
            return 2;
        }
        i++;
    }
    if (a.value_size >= LOAD_POOL / 2) {
        fprintf(stderr, "ingest-load: --value-size must be below %u\n",
                LOAD_POOL / 2);
        return 2;
    }
    load_pool_fill();
    char db[4096], src[4096];
    snprintf(db, sizeof db, "%s/db", a.dir);
    snprintf(src, sizeof src, "%s/src", a.dir);
    mkdir(a.dir, 0755);
    double tb = 0, ti = 0;
    if (!a.only || strcmp(a.only, "batch") == 0)
        tb = load_batch(&a, db);
    if (!a.only || strcmp(a.only, "ingest") == 0)
        ti = load_ingest(&a, db, src);
    if (tb > 0 && ti > 0)
        printf("ingest is %.1fx faster than batches of %" PRIu64 "\n",
               tb / ti, a.batch);
    rmdir(a.dir);
    return 0;
}
