/*
** test_manifest.c -- the manifest and CURRENT (lib/db/manifest.c): edits
** replay in order; a torn last record is the end (its header included);
** damage with data after
** it, a missing or garbled CURRENT, a missing manifest are reported;
** switching to a new manifest is all or nothing.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/manifest.h"
#include "util/coding.h"
#include "wal/wal_format.h"

static char g_dir[] = "/tmp/ravel-manifest-XXXXXX";

struct seen {
    uint64_t log_numbers[16];
    int n;
};

static int collect(void *ctx, struct rv_version_edit *e)
{
    struct seen *s = ctx;
    assert_true(e->has_log_number);
    assert_true(s->n < 16);
    s->log_numbers[s->n++] = e->log_number;
    return 0;
}

static void edit_with_log(struct rv_version_edit *e, uint64_t log)
{
    rv_version_edit_init(e);
    e->has_log_number = 1;
    e->log_number = log;
}

static char *path(const char *name)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    return p;
}

static void clean(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/*", g_dir);
    assert_int_equal(system(cmd), 0);
}

/* Manifest 1 with edits of log numbers 10, 11, 12; returns the offsets of
** the records. */
static void build(size_t off[3])
{
    clean();
    struct rv_version_edit e;
    rv_manifest *m;
    edit_with_log(&e, 10);
    assert_int_equal(rv_manifest_create(g_dir, 1, &e, &m), RAVEL_OK);
    off[0] = RV_MANIFEST_HEADER_SIZE;
    struct stat st;
    for (int i = 1; i < 3; i++) {
        assert_int_equal(stat(path("MANIFEST-000001"), &st), 0);
        off[i] = (size_t)st.st_size;
        edit_with_log(&e, 10 + (uint64_t)i);
        assert_int_equal(rv_manifest_append(m, &e), RAVEL_OK);
    }
    rv_manifest_close(m);
}

static struct rv_manifest_tail g_tail; /* of the last replay */

static int replay(struct seen *s, uint64_t *number)
{
    memset(s, 0, sizeof *s);
    return rv_manifest_replay(g_dir, collect, s, number, &g_tail);
}

static void test_replay_in_order(void **state)
{
    (void)state;
    size_t off[3];
    build(off);
    struct seen s;
    uint64_t number;
    assert_int_equal(replay(&s, &number), RAVEL_OK);
    assert_int_equal(number, 1);
    assert_int_equal(s.n, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(s.log_numbers[i], 10 + (uint64_t)i);
    char cur[64] = {0};
    int fd = open(path("CURRENT"), O_RDONLY);
    assert_true(read(fd, cur, sizeof cur - 1) > 0);
    close(fd);
    assert_string_equal(cur, "MANIFEST-000001\n");
}

static void test_torn_last_record_is_the_end(void **state)
{
    (void)state;
    size_t off[3];
    build(off);
    struct stat st;
    assert_int_equal(stat(path("MANIFEST-000001"), &st), 0);
    char h[RV_WAL_RECORD_HEADER_SIZE];
    int fd = open(path("MANIFEST-000001"), O_RDONLY);
    assert_int_equal(pread(fd, h, sizeof h, (off_t)off[2]), (ssize_t)sizeof h);
    close(fd);
    /* the last record is whole once its payload is (padding is not
    ** checksummed) */
    size_t whole = off[2] + RV_WAL_RECORD_HEADER_SIZE + rv_get_fixed32(h + 8);
    for (size_t cut = off[2] + 1; cut < (size_t)st.st_size; cut++) {
        build(off);
        assert_int_equal(truncate(path("MANIFEST-000001"), (off_t)cut), 0);
        struct seen s;
        uint64_t number;
        assert_int_equal(replay(&s, &number), RAVEL_OK);
        assert_int_equal(s.n, cut >= whole ? 3 : 2);
        assert_int_equal(g_tail.records, s.n);
        /* a dropped record is reported, for recovery to check */
        assert_int_equal(g_tail.dropped_at, cut >= whole ? 0 : off[2]);
    }
}

/* A power loss can lose the unsynced last append's first bytes (its header,
** in another page than its payload) and keep the rest: the end, with the
** records before it, as long as no good record follows. */
static void test_torn_last_header_is_the_end(void **state)
{
    (void)state;
    static const char patterns[][RV_WAL_RECORD_HEADER_SIZE] = {
        {0},                                             /* zeros */
        {'g', 'a', 'r', 'b', 'a', 'g', 'e', '!', 3, 0, 0, 0, 1, 0, 0, 0},
        {1, 2, 3, 4, 5, 6, 7, 8, (char)0xff, (char)0xff, 0, 0, 1, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
        size_t off[3];
        build(off);
        int fd = open(path("MANIFEST-000001"), O_RDWR);
        assert_int_equal(pwrite(fd, patterns[i], RV_WAL_RECORD_HEADER_SIZE,
                                (off_t)off[2]),
                         RV_WAL_RECORD_HEADER_SIZE);
        close(fd);
        struct seen s;
        uint64_t number;
        if (replay(&s, &number) != RAVEL_OK)
            fail_msg("pattern %zu over the last header: %s", i,
                     ravel_errmsg());
        assert_int_equal(s.n, 2);
        assert_int_equal(g_tail.dropped_at, off[2]);
    }
}

/* Appends leave no zeros behind them: zeros after the last record are an
** append a power loss took (a page that never reached the disk), reported
** as a dropped record like any torn append, so that recovery holds it to
** the same rule. */
static void test_zero_tail_is_a_dropped_append(void **state)
{
    (void)state;
    size_t off[3];
    build(off);
    struct stat st;
    assert_int_equal(stat(path("MANIFEST-000001"), &st), 0);
    char zeros[4096] = {0};
    int fd = open(path("MANIFEST-000001"), O_WRONLY | O_APPEND);
    assert_int_equal(write(fd, zeros, sizeof zeros), (ssize_t)sizeof zeros);
    close(fd);
    struct seen s;
    uint64_t number;
    assert_int_equal(replay(&s, &number), RAVEL_OK);
    assert_int_equal(s.n, 3);
    assert_int_equal(g_tail.dropped_at, (uint64_t)st.st_size);
}

/* CURRENT names a manifest only once its first record is durable: damage
** to that record, cut or flipped, alone or with records after it, is never
** a torn append (it was once: manifest damage taken for a torn tail let
** the open delete the tables the lost record named). */
static void test_first_record_is_never_torn(void **state)
{
    (void)state;
    size_t off[3];
    struct seen s;
    uint64_t number;
    build(off);
    /* the bytes the checksum covers: header and payload, not padding */
    char h[RV_WAL_RECORD_HEADER_SIZE];
    int hfd = open(path("MANIFEST-000001"), O_RDONLY);
    assert_int_equal(pread(hfd, h, sizeof h, (off_t)off[0]), (ssize_t)sizeof h);
    close(hfd);
    size_t end = off[0] + RV_WAL_RECORD_HEADER_SIZE + rv_get_fixed32(h + 8);
    for (int only = 0; only < 2; only++) {
        for (size_t at = off[0]; at < end; at += 3) {
            build(off);
            if (only)
                assert_int_equal(truncate(path("MANIFEST-000001"),
                                          (off_t)off[1]), 0);
            int fd = open(path("MANIFEST-000001"), O_RDWR);
            char b;
            assert_int_equal(pread(fd, &b, 1, (off_t)at), 1);
            b ^= 0x10;
            assert_int_equal(pwrite(fd, &b, 1, (off_t)at), 1);
            close(fd);
            if (replay(&s, &number) != RAVEL_CORRUPT)
                fail_msg("a flipped bit at %zu of the first record%s was "
                         "taken for a torn tail", at,
                         only ? " (the only one)" : "");
            assert_non_null(strstr(ravel_errmsg(), "MANIFEST-000001"));
            assert_non_null(strstr(ravel_errmsg(), "byte offset 32"));
        }
    }
    /* cut inside the first record, or right after the header */
    for (size_t cut = off[0]; cut < end; cut += 3) {
        build(off);
        assert_int_equal(truncate(path("MANIFEST-000001"), (off_t)cut), 0);
        if (replay(&s, &number) != RAVEL_CORRUPT)
            fail_msg("a manifest cut at %zu, in its first record, was "
                     "accepted", cut);
        assert_non_null(strstr(ravel_errmsg(), "MANIFEST-000001"));
    }
}

static void test_damage_before_data_refused(void **state)
{
    (void)state;
    size_t off[3];
    build(off);
    int fd = open(path("MANIFEST-000001"), O_RDWR);
    char b;
    assert_int_equal(pread(fd, &b, 1, (off_t)off[1] + 17), 1);
    b ^= 1;
    assert_int_equal(pwrite(fd, &b, 1, (off_t)off[1] + 17), 1);
    close(fd);
    struct seen s;
    uint64_t number;
    assert_int_equal(replay(&s, &number), RAVEL_CORRUPT);
    char want[64];
    snprintf(want, sizeof want, "byte offset %zu", off[1]);
    assert_non_null(strstr(ravel_errmsg(), "MANIFEST-000001"));
    assert_non_null(strstr(ravel_errmsg(), want));

    build(off);
    fd = open(path("MANIFEST-000001"), O_RDWR);
    assert_int_equal(pwrite(fd, "X", 1, 3), 1); /* the header */
    close(fd);
    assert_int_equal(replay(&s, &number), RAVEL_CORRUPT);
}

static void write_file(const char *name, const char *text)
{
    int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void test_current(void **state)
{
    (void)state;
    size_t off[3];
    struct seen s;
    uint64_t number;
    clean();
    assert_int_equal(replay(&s, &number), RAVEL_NOTFOUND);
    build(off);
    write_file("CURRENT", "MANIFEST-000007\n");
    assert_int_equal(replay(&s, &number), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "MANIFEST-000007"));
    write_file("CURRENT", "MANIFEST-000001");
    assert_int_equal(replay(&s, &number), RAVEL_CORRUPT);
    write_file("CURRENT", "wal-00000001.log\n");
    assert_int_equal(replay(&s, &number), RAVEL_CORRUPT);
}

/* A new manifest replaces the old one only once CURRENT names it; a crash
** before that leaves the old one in force. */
static void test_switch(void **state)
{
    (void)state;
    size_t off[3];
    build(off);
    struct rv_version_edit e;
    rv_manifest *m;
    edit_with_log(&e, 99);
    assert_int_equal(rv_manifest_create(g_dir, 2, &e, &m), RAVEL_OK);
    rv_manifest_close(m);
    struct seen s;
    uint64_t number;
    assert_int_equal(replay(&s, &number), RAVEL_OK);
    assert_int_equal(number, 2);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.log_numbers[0], 99);
    /* a crash before the rename: CURRENT still names manifest 2, while a
    ** whole manifest 3 sits beside it */
    edit_with_log(&e, 123);
    assert_int_equal(rv_manifest_create(g_dir, 3, &e, &m), RAVEL_OK);
    rv_manifest_close(m);
    write_file("CURRENT", "MANIFEST-000002\n");
    assert_int_equal(replay(&s, &number), RAVEL_OK);
    assert_int_equal(number, 2);
    assert_int_equal(s.log_numbers[0], 99);
    /* creating a manifest that exists fails and changes nothing */
    assert_int_equal(rv_manifest_create(g_dir, 2, &e, &m), RAVEL_IOERR);
    assert_int_equal(replay(&s, &number), RAVEL_OK);
    assert_int_equal(number, 2);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_in_order),
        cmocka_unit_test(test_torn_last_record_is_the_end),
        cmocka_unit_test(test_torn_last_header_is_the_end),
        cmocka_unit_test(test_damage_before_data_refused),
        cmocka_unit_test(test_first_record_is_never_torn),
        cmocka_unit_test(test_zero_tail_is_a_dropped_append),
        cmocka_unit_test(test_current),
        cmocka_unit_test(test_switch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
