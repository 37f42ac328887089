/*
** test_wal_probe_cache.c -- the WAL probe's result kept beside the
** database (lib/wal/wal_probe_cache.c): measured at the first wal_io=auto
** open and reused by the next, measured again when the file is damaged,
** keyed by another file system or kernel, too old or from the future;
** never copied by a checkpoint, left alone by repair, removed by
** ravel_destroy.  Forces wal_io=auto itself; skipped (77) where io_uring
** cannot be set up (auto then never probes).
*/
#include "testutil.h"
#include "ravel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <xxhash.h>

#define CACHE "wal-probe.cache"

/* Opens DIR with wal_io=auto, writes a synced key, returns ravel.wal-io
** (malloc'd by ravel) and closes. */
static char *open_auto(const char *dir)
{
    ravel_db *db = NULL;
    int rc = tu_open(dir, "wal_io=auto", &db);
    assert_int_equal(rc, RAVEL_OK);
    tu_put(db, RAVEL_SYNC, "k", "v");
    char *why = tu_prop(db, "ravel.wal-io");
    assert_int_equal(ravel_close(db), RAVEL_OK);
    if (strstr(why, "io_uring cannot") || !strstr(why, "probe")) {
        printf("# skipped: wal_io=auto did not probe here: %s\n", why);
        exit(77);
    }
    return why;
}

static void expect_measured(const char *dir)
{
    char *why = open_auto(dir);
    if (!strstr(why, "measured at this open, cached"))
        fail_msg("expected a fresh probe: %s", why);
    ravel_free(why);
}

static void expect_reused(const char *dir)
{
    char *why = open_auto(dir);
    if (!strstr(why, "reused"))
        fail_msg("expected the cached probe: %s", why);
    ravel_free(why);
}

static char *cache_path(const char *dir)
{
    return tu_path("%s/%s", strrchr(dir, '/') + 1, CACHE);
}

/* The cache file with line PREFIX replaced by LINE (NULL: untouched) and
** the checksum recomputed (RESUM) or not. */
static void rewrite_cache(const char *dir, const char *prefix,
                          const char *line, int resum)
{
    char *path = cache_path(dir), *text = NULL;
    size_t len = 0;
    assert_int_equal(tu_file_read(path, &text, &len), 0);
    char out[4096];
    size_t n = 0;
    for (char *s = text, *eol; *s && (eol = strchr(s, '\n')); s = eol + 1) {
        size_t l = (size_t)(eol - s) + 1;
        if (strncmp(s, "checksum ", 9) == 0 && resum)
            continue;
        if (line && strncmp(s, prefix, strlen(prefix)) == 0)
            n += (size_t)snprintf(out + n, sizeof out - n, "%s\n", line);
        else
            n += (size_t)snprintf(out + n, sizeof out - n, "%.*s", (int)l, s);
    }
    if (resum)
        n += (size_t)snprintf(out + n, sizeof out - n, "checksum %016llx\n",
                              (unsigned long long)XXH3_64bits(out, n));
    assert_true(n < sizeof out);
    assert_int_equal(tu_file_write(path, out, n), 0);
    free(text);
    free(path);
}

static void test_measured_once_then_reused(void **state)
{
    (void)state;
    char *dir = tu_path("reuse");
    expect_measured(dir);
    char *path = cache_path(dir);
    assert_int_equal(access(path, F_OK), 0);
    expect_reused(dir);
    expect_reused(dir);
    free(path);
    free(dir);
}

static void test_damage_and_foreign_keys_measure_again(void **state)
{
    (void)state;
    char *dir = tu_path("again");
    expect_measured(dir);
    expect_reused(dir);
    /* a byte changed, checksum left: damaged */
    rewrite_cache(dir, "result ", "result 1 1 1 1 1 1 1 4096", 0);
    expect_measured(dir);
    expect_reused(dir);
    /* a whole file of another kernel, checksum right */
    rewrite_cache(dir, "key ", "key 1 ef53 0.0.0-other", 1);
    expect_measured(dir);
    expect_reused(dir);
    /* measured eight days ago, then in an hour */
    char line[64];
    snprintf(line, sizeof line, "measured %lld",
             (long long)time(NULL) - 8 * 24 * 3600);
    rewrite_cache(dir, "measured ", line, 1);
    expect_measured(dir);
    snprintf(line, sizeof line, "measured %lld",
             (long long)time(NULL) + 3600);
    rewrite_cache(dir, "measured ", line, 1);
    expect_measured(dir);
    expect_reused(dir);
    /* truncated, and empty */
    char *path = cache_path(dir);
    assert_int_equal(truncate(path, 20), 0);
    expect_measured(dir);
    assert_int_equal(truncate(path, 0), 0);
    expect_measured(dir);
    /* removed */
    assert_int_equal(unlink(path), 0);
    expect_measured(dir);
    expect_reused(dir);
    free(path);
    free(dir);
}

static void test_not_part_of_the_database(void **state)
{
    (void)state;
    char *dir = tu_path("db");
    char *copy = tu_path("db-checkpoint");
    expect_measured(dir);
    ravel_db *db = tu_open_ok(dir, "wal_io=auto");
    assert_int_equal(ravel_checkpoint(db, copy), RAVEL_OK);
    assert_int_equal(ravel_close(db), RAVEL_OK);
    char *copied = cache_path(copy);
    assert_int_not_equal(access(copied, F_OK), 0);

    /* repair neither sets it aside nor fails on it */
    ravel_options *o = tu_options("wal_io=auto");
    assert_int_equal(ravel_repair(dir, o, NULL, NULL, NULL), RAVEL_OK);
    ravel_options_free(o);
    char *path = cache_path(dir);
    assert_int_equal(access(path, F_OK), 0);
    expect_reused(dir);

    assert_int_equal(ravel_destroy(dir), RAVEL_OK);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_not_equal(access(dir, F_OK), 0);
    free(path);
    free(copied);
    free(copy);
    free(dir);
}

/* A "measured" time so far in the past that "now - measured" overflows
** (hostile review of issue 23): the age check wrapped and took a result
** from the year -292277022657 for a fresh one, reused at every open. */
static void test_ancient_timestamp_measures_again(void **state)
{
    (void)state;
    char *dir = tu_path("ancient");
    expect_measured(dir);
    rewrite_cache(dir, "measured ", "measured -9223372036854775807", 1);
    expect_measured(dir);
    expect_reused(dir);
    rewrite_cache(dir, "measured ", "measured -1", 1);
    expect_measured(dir);
    free(dir);
}

/* A result no probe could give -- a direct I/O block size that is not a
** power of two of at least 512 bytes -- with a right checksum (hostile
** review of issue 23): the open must measure again, not run the direct
** WAL with that alignment. */
static void test_impossible_block_measures_again(void **state)
{
    (void)state;
    char *dir = tu_path("block");
    expect_measured(dir);
    rewrite_cache(dir, "result ", "result 1 0 1 1 1 1000000 1000000 3", 1);
    expect_measured(dir);
    rewrite_cache(dir, "result ", "result 1 0 1 1 1 1000000 1000000 4000",
                  1);
    expect_measured(dir);
    expect_reused(dir);
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured_once_then_reused),
        cmocka_unit_test(test_damage_and_foreign_keys_measure_again),
        cmocka_unit_test(test_not_part_of_the_database),
        cmocka_unit_test(test_ancient_timestamp_measures_again),
        cmocka_unit_test(test_impossible_block_measures_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
