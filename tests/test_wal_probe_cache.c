/*
** test_wal_probe_cache.c -- the WAL probe's result kept beside the
** database (lib/wal/wal_probe_cache.c): measured at the first wal_io=auto
** open and reused by the next, measured again when the file is damaged,
** keyed by another file system or kernel, too old or from the future;
** never copied by a checkpoint, left alone by repair, removed by
** ravel_destroy.  The mode the adaptive WAL settled on (version 2's
** "settled" line) is where the next open starts; a run that moves on its
** own keeps its new mode there at close; a version 1 file is still read.
** Forces wal_io=auto itself; skipped (77) where io_uring
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
#include <fcntl.h>
#include <sys/stat.h>
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

/* The cache file with line PREFIX replaced by LINE (NULL: untouched; "":
** the line dropped) and the checksum recomputed (RESUM) or not. */
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
        if (line && !*line && strncmp(s, prefix, strlen(prefix)) == 0)
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

/* The cache's line starting with PREFIX, into LINE (SIZE bytes). */
static void cache_line(const char *dir, const char *prefix, char *line,
                       size_t size)
{
    char *path = cache_path(dir), *text = NULL;
    size_t len = 0;
    assert_int_equal(tu_file_read(path, &text, &len), 0);
    const char *at = strstr(text, prefix);
    assert_non_null(at);
    snprintf(line, size, "%.*s", (int)(strchr(at, '\n') - at), at);
    free(text);
    free(path);
}

/* ravel.wal-io of DIR opened with wal_io=auto and OPTS; skips (77) where
** wal_io=auto does not adapt here (no O_DIRECT, no io_uring). */
static char *open_adaptive(const char *dir)
{
    char *why = open_auto(dir);
    if (!strstr(why, "adaptive")) {
        printf("# skipped: wal_io=auto does not adapt here: %s\n", why);
        exit(77);
    }
    return why;
}

static void expect_in(const char *why, const char *want)
{
    if (!strstr(why, want))
        fail_msg("expected \"%s\" in ravel.wal-io: %s", want, why);
}

/* The settled line says where an open starts: direct, or buffered where
** the probe would start direct; "none" and version 1 start where the
** probe's numbers say; a settled word no writer writes is damage. */
static void test_settled_mode_is_where_an_open_starts(void **state)
{
    (void)state;
    char *dir = tu_path("settled");
    expect_measured(dir);
    char line[256];
    cache_line(dir, "settled ", line, sizeof line);
    assert_string_equal(line, "settled none");
    cache_line(dir, "ravel-wal-probe ", line, sizeof line);
    assert_string_equal(line, "ravel-wal-probe 2");

    rewrite_cache(dir, "settled ", "settled direct", 1);
    char *why = open_adaptive(dir);
    expect_in(why, "reused");
    expect_in(why, "starts direct, the mode it settled on last time");
    expect_in(why, "now direct from the start (the mode it settled on");
    ravel_free(why);
    /* nothing decided in that run: the file is left as it was */
    cache_line(dir, "settled ", line, sizeof line);
    assert_string_equal(line, "settled direct");

    rewrite_cache(dir, "settled ", "settled buffered", 1);
    why = open_adaptive(dir);
    expect_in(why, "reused");
    expect_in(why, "from the start (the mode it settled on last time)");
    if (!strstr(why, "not direct (")) /* the probe picks direct here */
        expect_in(why, "starts buffered, the mode it settled on last time");
    if (strstr(why, "now direct"))
        fail_msg("settled buffered, started direct: %s", why);
    ravel_free(why);

    /* damage in the new line, with or without a right checksum */
    rewrite_cache(dir, "settled ", "settled sideways", 1);
    expect_measured(dir);
    rewrite_cache(dir, "settled ", "settled direct", 0);
    expect_measured(dir);
    rewrite_cache(dir, "settled ", "settled direct\nsettled direct", 1);
    expect_measured(dir);

    /* version 1 (no settled line) is still read, and starts as the probe
    ** says; version 2's line in a version 1 file is damage */
    rewrite_cache(dir, "ravel-wal-probe ", "ravel-wal-probe 1", 1);
    expect_measured(dir); /* a version 1 file with a settled line */
    rewrite_cache(dir, "ravel-wal-probe ", "ravel-wal-probe 1", 0);
    rewrite_cache(dir, "settled ", "", 1);
    why = open_adaptive(dir);
    expect_in(why, "reused");
    if (strstr(why, "settled on last time"))
        fail_msg("a version 1 file started in a settled mode: %s", why);
    ravel_free(why);
    /* version 3 is foreign */
    char *path = cache_path(dir);
    assert_int_equal(unlink(path), 0);
    free(path);
    expect_measured(dir);
    rewrite_cache(dir, "ravel-wal-probe ", "ravel-wal-probe 3", 1);
    expect_measured(dir);
    free(dir);
}

/* A run whose writes move the WAL to direct on its own keeps "direct" in
** the cache at close, and the next open starts there.  The probe's
** numbers are rewritten so that a synced write costs a second buffered
** and a nanosecond direct: the counts then vote for direct whatever this
** disk is like, and the switch waits only for the spare segment. */
static void test_a_run_that_switches_keeps_its_mode(void **state)
{
    (void)state;
    char *dir = tu_path("keeps");
    char *why = open_adaptive(dir);
    ravel_free(why);
    char line[256];
    cache_line(dir, "result ", line, sizeof line);
    unsigned long long v[7];
    unsigned block;
    assert_int_equal(sscanf(line, "result %llu %llu %llu %llu %llu %llu "
                            "%llu %u", &v[0], &v[1], &v[2], &v[3], &v[4],
                            &v[5], &v[6], &block), 8);
    /* direct sync and plain far cheaper than pwrite + fdatasync, but a
    ** plain direct write more than twice a pwrite: the probe alone starts
    ** buffered */
    snprintf(line, sizeof line, "result 1 0 1 1000 1 1000000000 1 %u",
             block);
    rewrite_cache(dir, "result ", line, 1);
    rewrite_cache(dir, "settled ", "settled none", 1);

    ravel_db *db = NULL;
    assert_int_equal(tu_open(dir, "wal_io=auto;write_buffer_size=64K", &db),
                     RAVEL_OK);
    why = tu_prop(db, "ravel.wal-io");
    expect_in(why, "now sync from the start");
    ravel_free(why);
    char k[32], val[200];
    memset(val, 'v', sizeof val - 1);
    val[sizeof val - 1] = '\0';
    int direct = 0;
    for (int i = 0; i < 200000 && !direct; i++) {
        snprintf(k, sizeof k, "k%08d", i);
        tu_put(db, RAVEL_SYNC, k, val);
        if (i % 500 == 0) {
            why = tu_prop(db, "ravel.wal-io");
            direct = strstr(why, "now direct since segment") != NULL;
            ravel_free(why);
        }
    }
    if (!direct)
        fail_msg("200,000 synced puts priced 1 ns direct against 1 s "
                 "buffered never moved the WAL to direct");
    assert_int_equal(ravel_close(db), RAVEL_OK);
    cache_line(dir, "settled ", line, sizeof line);
    assert_string_equal(line, "settled direct");
    why = open_auto(dir);
    expect_in(why, "reused");
    expect_in(why, "now direct from the start (the mode it settled on");
    ravel_free(why);
    free(dir);
}

/* The cache is written through a temporary file (CACHE ".tmp") renamed
** over it.  Whatever sits at that name -- a symbolic link to another
** file, a FIFO -- is replaced, never written through: a symlink's target
** keeps its bytes, a FIFO gets nothing (and a FIFO without a reader must
** not block the open forever), and the cache is written all the same. */
static void test_hostile_temporary_file(void **state)
{
    (void)state;
    char *dir = tu_path("hostile-tmp");
    assert_int_equal(mkdir(dir, 0755), 0);
    char *tmp = tu_path("hostile-tmp/%s.tmp", CACHE);
    char *victim = tu_path("hostile-victim");
    assert_int_equal(tu_file_write(victim, "precious\n", 9), 0);
    assert_int_equal(symlink(victim, tmp), 0);
    expect_measured(dir);
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(tu_file_read(victim, &got, &len), 0);
    if (len != 9 || memcmp(got, "precious\n", 9) != 0)
        fail_msg("the probe cache was written through the symlink %s: "
                 "its target now holds %zu bytes \"%.40s\"", tmp, len, got);
    free(got);
    char *path = cache_path(dir);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    if (!S_ISREG(st.st_mode))
        fail_msg("%s is not a regular file after the store", path);
    expect_reused(dir);

    /* a FIFO at the temporary name, a reader holding it open (so that
    ** writing through it does not block this test): nothing written */
    assert_int_equal(unlink(path), 0);
    unlink(tmp);
    assert_int_equal(mkfifo(tmp, 0644), 0);
    int reader = open(tmp, O_RDONLY | O_NONBLOCK);
    assert_true(reader >= 0);
    expect_measured(dir);
    char buf[64];
    ssize_t n = read(reader, buf, sizeof buf);
    if (n > 0)
        fail_msg("the probe cache was written into the FIFO %s", tmp);
    close(reader);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    expect_reused(dir);
    free(path);
    free(victim);
    free(tmp);
    free(dir);
}

/* A read_only open beside a live writer (and one alone) never writes the
** cache, whatever its settled line says, nor leaves a temporary file; the
** cache at the cache's name being a directory or a symlink to another
** file fails no open, and the symlink's target is never written. */
static void test_readers_and_odd_cache_files_write_nothing(void **state)
{
    (void)state;
    char *dir = tu_path("ro-settled");
    expect_measured(dir);
    rewrite_cache(dir, "settled ", "settled direct", 1);
    char *path = cache_path(dir);
    char *before = NULL, *after = NULL;
    size_t blen = 0, alen = 0;
    assert_int_equal(tu_file_read(path, &before, &blen), 0);
    ravel_db *w = NULL, *r = NULL;
    assert_int_equal(tu_open(dir, "wal_io=auto", &w), RAVEL_OK);
    tu_put(w, RAVEL_SYNC, "k", "v");
    assert_int_equal(tu_open(dir, "read_only=true", &r), RAVEL_OK);
    assert_int_equal(ravel_close(r), RAVEL_OK);
    assert_int_equal(ravel_close(w), RAVEL_OK);
    assert_int_equal(tu_open(dir, "read_only=true;wal_io=auto", &r),
                     RAVEL_OK);
    assert_int_equal(ravel_close(r), RAVEL_OK);
    assert_int_equal(tu_file_read(path, &after, &alen), 0);
    if (alen != blen || memcmp(before, after, blen) != 0)
        fail_msg("the probe cache changed across read_only opens");
    free(before);
    free(after);
    char *tmp = tu_path("ro-settled/%s.tmp", CACHE);
    struct stat st;
    assert_true(lstat(tmp, &st) != 0);

    /* a directory at the cache's name: measured every time, opens work */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    char *why = open_auto(dir);
    expect_in(why, "measured at this open");
    ravel_free(why);
    assert_int_equal(rmdir(path), 0);
    /* a symlink to another file: read maybe, never written through */
    char *victim = tu_path("ro-victim");
    assert_int_equal(tu_file_write(victim, "precious\n", 9), 0);
    assert_int_equal(symlink(victim, path), 0);
    why = open_auto(dir);
    ravel_free(why);
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(tu_file_read(victim, &got, &len), 0);
    if (len != 9 || memcmp(got, "precious\n", 9) != 0)
        fail_msg("the symlink at the cache's name had its target written");
    free(got);
    free(victim);
    free(tmp);
    free(path);
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
        cmocka_unit_test(test_settled_mode_is_where_an_open_starts),
        cmocka_unit_test(test_a_run_that_switches_keeps_its_mode),
        cmocka_unit_test(test_hostile_temporary_file),
        cmocka_unit_test(test_readers_and_odd_cache_files_write_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
