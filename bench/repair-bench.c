/*
** repair-bench.c -- how long ravel_repair takes, and how fast it reads:
**
**   repair-bench [DIR [KEYS [VALUE_SIZE]]]     (defaults: a temporary
**                                               directory, 1000000, 100)
**
** Writes KEYS keys in random order (flushes and compactions as the
** options decide), closes, then times three repairs of that database:
**   whole     nothing damaged: every block read and checked, nothing
**             written ("nothing to repair");
**   manifest  the manifest removed: every block read, merged and written
**             again as new table files;
**   index     every table file's index damaged: the data blocks found by
**             walking each file (the checksum searched at every byte),
**             then merged and written.
** Each prints its time and the table bytes read per second.  One run,
** no warm-up: the page cache holds the files after the first.
*/
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ravel.h"

static double repairbench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void repairbench_check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "repair-bench: %s: %s\n", what, ravel_errmsg());
        exit(1);
    }
}

/* The bytes of DIR's table files; with DAMAGE_INDEX, each one's index
** block is damaged (one byte flipped). */
static uint64_t repairbench_tables(const char *dir, int damage_index)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        exit(1);
    }
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".sst") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDWR);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            perror(path);
            exit(1);
        }
        total += (uint64_t)st.st_size;
        unsigned char footer[80], c;
        if (damage_index && st.st_size > 80 &&
            pread(fd, footer, 80, st.st_size - 80) == 80) {
            uint64_t off = 0;
            for (int i = 7; i >= 0; i--)
                off = off << 8 | footer[i];
            if (pread(fd, &c, 1, (off_t)off + 1) == 1) {
                c ^= 0x5a;
                if (pwrite(fd, &c, 1, (off_t)off + 1) != 1)
                    perror(path);
            }
        }
        close(fd);
    }
    closedir(d);
    return total;
}

static void repairbench_remove_manifests(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "MANIFEST-", 9) == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
}

/* The report's summary line. */
static void repairbench_line(void *ctx, int kind, const char *line)
{
    (void)kind;
    if (strncmp(line, "summary:", 8) == 0 ||
        strncmp(line, "nothing to repair", 17) == 0)
        snprintf(ctx, 512, "%s", line);
}

static void repairbench_run(const char *dir, const char *name)
{
    uint64_t bytes = repairbench_tables(dir, 0);
    char summary[512] = "";
    double t0 = repairbench_now();
    repairbench_check(ravel_repair(dir, NULL, repairbench_line, summary,
                                   NULL), name);
    double s = repairbench_now() - t0;
    printf("%-9s %8.3f s  %8.1f MB/s of %.1f MB of table files\n"
           "          %s\n", name, s, (double)bytes / 1e6 / s,
           (double)bytes / 1e6, summary);
}

int main(int argc, char **argv)
{
    char tmp[] = "/tmp/repair-bench-XXXXXX";
    const char *dir = argc > 1 ? argv[1] : mkdtemp(tmp);
    long keys = argc > 2 ? atol(argv[2]) : 1000000;
    size_t vsize = argc > 3 ? (size_t)atol(argv[3]) : 100;
    if (!dir || keys <= 0 || vsize == 0 || vsize > 65536) {
        fprintf(stderr, "usage: repair-bench [DIR [KEYS [VALUE_SIZE]]]\n");
        return 1;
    }
    ravel_options *o;
    ravel_db *db;
    repairbench_check(ravel_options_new(&o), "options");
    repairbench_check(ravel_options_set(o, "create_if_missing", "true"),
                      "options");
    repairbench_check(ravel_open(dir, o, &db), "open");
    ravel_options_free(o);
    char *val = malloc(vsize);
    uint64_t x = 88172645463325252ull;
    double t0 = repairbench_now();
    for (long i = 0; i < keys; i++) {
        char k[32];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int n = snprintf(k, sizeof k, "key%016" PRIx64, x % (uint64_t)keys);
        memset(val, 'a' + (int)(i % 26), vsize);
        repairbench_check(ravel_put(db, 0, k, (size_t)n, val, vsize), "put");
    }
    repairbench_check(ravel_flush(db, 0), "flush");
    repairbench_check(ravel_close(db), "close");
    printf("loaded %ld keys of %zu bytes in %.1f s into %s\n", keys, vsize,
           repairbench_now() - t0, dir);
    free(val);
    repairbench_run(dir, "whole");
    repairbench_remove_manifests(dir);
    repairbench_run(dir, "manifest");
    repairbench_tables(dir, 1);
    repairbench_run(dir, "index");
    return 0;
}
