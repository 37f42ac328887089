/*
** archive-retention.c -- how far back the change feed reaches under WAL
** retention (wal_size_limit_mb), and what archive/ costs: the hostile
** review of issue 22 found that wal_io=direct archived each segment with
** its whole preallocation, so a size limit kept almost nothing.
**
**   archive-retention DIR [wal_io] [limit_mb] [write_buffer_size] [mib]
**
** Writes MIB MiB of 100-byte values in 10-operation batches into a new
** database at DIR (removed first if it holds a database) with
** wal_io (default direct), wal_size_limit_mb (default 64) and
** write_buffer_size (default 4M), then reports: the batches written, the
** segments and bytes archive/ holds (ravel.stats' archive line), the
** oldest sequence the feed still gives (ravel_updates_since(1): its
** RAVEL_EXPIRED message names it), and the write rate.  Run by hand.
*/
#include "ravel.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double ar_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void ar_check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "archive-retention: %s: %s\n", what, ravel_errmsg());
        exit(1);
    }
}

/* The oldest sequence the feed gives from 1 (1 if nothing expired). */
static uint64_t ar_oldest(ravel_db *db)
{
    ravel_updates *u = NULL;
    int rc = ravel_updates_since(db, 1, 0, &u);
    ravel_updates_free(u);
    if (rc == RAVEL_OK)
        return 1;
    const char *m = strstr(ravel_errmsg(), "oldest available is ");
    return m ? strtoull(m + 20, NULL, 10) : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: archive-retention DIR [wal_io] [limit_mb] "
                "[write_buffer_size] [mib]\n");
        return 2;
    }
    const char *dir = argv[1];
    const char *io = argc > 2 ? argv[2] : "direct";
    const char *limit = argc > 3 ? argv[3] : "64";
    const char *wbs = argc > 4 ? argv[4] : "4M";
    uint64_t mib = argc > 5 ? strtoull(argv[5], NULL, 10) : 256;
    ravel_destroy(dir);
    ravel_options *o;
    ar_check(ravel_options_new(&o), "options");
    ar_check(ravel_options_set(o, "create_if_missing", "true"), "option");
    ar_check(ravel_options_set(o, "wal_io", io), "wal_io");
    ar_check(ravel_options_set(o, "wal_size_limit_mb", limit), "limit");
    ar_check(ravel_options_set(o, "write_buffer_size", wbs), "buffer");
    ravel_db *db;
    ar_check(ravel_open(dir, o, &db), "open");
    ravel_batch *b;
    ar_check(ravel_batch_new(&b), "batch");
    char key[32], val[100];
    memset(val, 'v', sizeof val);
    uint64_t batches = mib * 1024 * 1024 / (10 * (sizeof val + 16));
    double t0 = ar_now();
    for (uint64_t i = 0; i < batches; i++) {
        ravel_batch_clear(b);
        for (int j = 0; j < 10; j++) {
            snprintf(key, sizeof key, "k%012" PRIu64, i * 10 + (uint64_t)j);
            ar_check(ravel_batch_put(b, key, strlen(key), val, sizeof val),
                     "put");
        }
        ar_check(ravel_write(db, 0, b), "write");
    }
    ar_check(ravel_flush(db, 0), "flush");
    double took = ar_now() - t0;
    char *stats = NULL;
    ar_check(ravel_property(db, "ravel.stats", &stats), "ravel.stats");
    const char *line = strstr(stats, "archive");
    const char *end = line ? strchr(line, '\n') : NULL;
    uint64_t last = 0;
    char *s = NULL;
    if (ravel_property(db, "ravel.last-sequence", &s) == RAVEL_OK)
        last = strtoull(s, NULL, 10);
    ravel_free(s);
    printf("wal_io=%s wal_size_limit_mb=%s write_buffer_size=%s: %" PRIu64
           " batches (%" PRIu64 " MiB) in %.2f s, %.0f batches/s\n", io,
           limit, wbs, batches, mib, took, (double)batches / took);
    printf("%.*s\n", line ? (int)(end ? end - line : (long)strlen(line)) : 0,
           line ? line : "");
    uint64_t oldest = ar_oldest(db);
    printf("the feed reaches back to sequence %" PRIu64 " of %" PRIu64
           " (%.1f%% of the writes)\n", oldest, last,
           last ? 100.0 * (double)(last - oldest + 1) / (double)last : 0.0);
    ravel_free(stats);
    ravel_batch_free(b);
    ar_check(ravel_close(db), "close");
    ravel_options_free(o);
    return 0;
}
