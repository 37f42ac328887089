/*
** test_api.c -- every call of the public API (include/ravel.h): its round
** trip, and every bad argument getting RAVEL_INVALID with a message of its
** own.  Run once per WAL I/O path (RAVEL_TEST_WAL_IO=uring | sync).
*/
#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int db_counter;

/* A fresh database directory name for one test. */
static char *new_dir(const char *what)
{
    return tu_path("api-%s-%d", what, db_counter++);
}

/* ------------------------------------------------------- version, errors */

static void test_version(void **state)
{
    (void)state;
    assert_non_null(ravel_libversion());
    assert_string_equal(ravel_libversion(), RAVEL_VERSION);
    assert_int_equal(ravel_libversion_number(), RAVEL_VERSION_NUMBER);
}

static void test_errstr(void **state)
{
    (void)state;
    static const int codes[] = {
        RAVEL_OK, RAVEL_NOTFOUND, RAVEL_INVALID, RAVEL_IOERR, RAVEL_CORRUPT,
        RAVEL_NOMEM, RAVEL_BUSY, RAVEL_LOCKED, RAVEL_READONLY,
    };
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        const char *s = ravel_errstr(codes[i]);
        assert_non_null(s);
        assert_true(s[0] != 0);
        assert_string_not_equal(s, "unknown result code");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(s, ravel_errstr(codes[j]));
    }
    assert_string_equal(ravel_errstr(-1), "unknown result code");
    assert_string_equal(ravel_errstr(9999), "unknown result code");
    assert_non_null(ravel_errmsg());
}

struct errmsg_thread_arg {
    char initial[256];
    char after[256];
    int rc;
};

static void *errmsg_thread(void *p)
{
    struct errmsg_thread_arg *a = p;
    snprintf(a->initial, sizeof a->initial, "%s", ravel_errmsg());
    ravel_options *o = NULL;
    if (ravel_options_new(&o) == RAVEL_OK) {
        a->rc = ravel_options_set(o, "write_buffer_size", "not-a-size");
        ravel_options_free(o);
    }
    snprintf(a->after, sizeof a->after, "%s", ravel_errmsg());
    return NULL;
}

/* The message belongs to the calling thread: another thread's failure
** neither shows in it nor replaces it, and a new thread starts with "". */
static void test_errmsg_per_thread(void **state)
{
    (void)state;
    tu_errmsg_prime();
    char mine[512];
    snprintf(mine, sizeof mine, "%s", ravel_errmsg());
    assert_true(mine[0] != 0);

    struct errmsg_thread_arg a;
    memset(&a, 0, sizeof a);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, errmsg_thread, &a), 0);
    pthread_join(t, NULL);
    assert_string_equal(a.initial, "");
    assert_int_equal(a.rc, RAVEL_INVALID);
    assert_non_null(strstr(a.after, "write_buffer_size"));
    assert_string_equal(ravel_errmsg(), mine);
}

/* ravel_errmsg_r copies the calling thread's message, as a binding's shim
** does right after the failing call.  Threads failing at the same time
** with inputs of their own each read back a message naming their own
** input, never another thread's. */
#define ERRMSG_R_THREADS 8
#define ERRMSG_R_ROUNDS 200

static void *errmsg_r_thread(void *p)
{
    int id = (int)(intptr_t)p;
    ravel_options *o = NULL;
    if (ravel_options_new(&o) != RAVEL_OK) {
        tu_thread_fail("thread %d: ravel_options_new failed", id);
        return NULL;
    }
    for (int round = 0; round < ERRMSG_R_ROUNDS; round++) {
        char input[64], msg[512];
        int rc;
        if (round % 2 == 0) {
            snprintf(input, sizeof input, "opt_of_thread_%d_round_%d", id,
                     round);
            rc = ravel_options_set(o, input, "1");
        } else {
            char *dir = tu_path("no-such-db-thread-%d-round-%d", id, round);
            snprintf(input, sizeof input, "%s", strrchr(dir, '/') + 1);
            ravel_db *db = NULL;
            rc = ravel_open(dir, NULL, &db); /* create_if_missing=false */
            free(dir);
        }
        size_t len = ravel_errmsg_r(msg, sizeof msg);
        TU_CHECK(rc == RAVEL_INVALID, "thread %d round %d: rc %d", id, round,
                 rc);
        TU_CHECK(len == strlen(msg), "thread %d round %d: returned %zu for "
                 "a message of %zu bytes", id, round, len, strlen(msg));
        TU_CHECK(strstr(msg, input) != NULL, "thread %d round %d: message "
                 "does not name '%s': %s", id, round, input, msg);
    }
    ravel_options_free(o);
    return NULL;
}

static void test_errmsg_r_concurrent(void **state)
{
    (void)state;
    pthread_t t[ERRMSG_R_THREADS];
    for (int i = 0; i < ERRMSG_R_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, errmsg_r_thread,
                                        (void *)(intptr_t)i), 0);
    for (int i = 0; i < ERRMSG_R_THREADS; i++)
        pthread_join(t[i], NULL);
    tu_assert_no_thread_failures();
}

/* ravel_errmsg_r behaves like snprintf: the whole length is returned
** whatever fits, the copy is cut and NUL-terminated, and (NULL, 0) only
** measures. */
static void test_errmsg_r_truncation(void **state)
{
    (void)state;
    ravel_options *o = NULL;
    TU_OK(ravel_options_new(&o));
    TU_EXPECT_INVALID(ravel_options_set(o, "an_option_name_nobody_set",
                                        "1"));
    const char *full = ravel_errmsg();
    size_t n = strlen(full);
    assert_true(n > 20);

    assert_int_equal(ravel_errmsg_r(NULL, 0), n);
    char buf[512];
    memset(buf, 'X', sizeof buf);
    assert_int_equal(ravel_errmsg_r(buf, 0), n);
    assert_int_equal(buf[0], 'X'); /* SIZE 0: nothing written */
    assert_int_equal(ravel_errmsg_r(buf, 1), n);
    assert_string_equal(buf, "");
    assert_int_equal(ravel_errmsg_r(buf, 11), n);
    assert_int_equal(strlen(buf), 10);
    assert_memory_equal(buf, full, 10);
    assert_int_equal(ravel_errmsg_r(buf, n), n); /* one byte short */
    assert_int_equal(strlen(buf), n - 1);
    assert_int_equal(ravel_errmsg_r(buf, n + 1), n); /* exactly fits */
    assert_string_equal(buf, full);
    assert_int_equal(ravel_errmsg_r(buf, sizeof buf), n);
    assert_string_equal(buf, full);

    /* The longest message the 512-byte per-thread buffer holds is 511
    ** bytes; a larger buffer gets all of it. */
    char name[700];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    TU_EXPECT_INVALID(ravel_options_set(o, name, "1"));
    assert_int_equal(ravel_errmsg_r(NULL, 0), 511);
    char big[1024];
    assert_int_equal(ravel_errmsg_r(big, sizeof big), 511);
    assert_string_equal(big, ravel_errmsg());
    ravel_options_free(o);
}

/* --------------------------------------------------------------- options */

static char *opt_get(const ravel_options *o, const char *name)
{
    char *v = NULL;
    int rc = ravel_options_get(o, name, &v);
    if (rc != RAVEL_OK)
        fail_msg("ravel_options_get(%s): %s: %s", name, ravel_errstr(rc),
                 ravel_errmsg());
    if (!v)
        fail_msg("ravel_options_get(%s): RAVEL_OK with NULL text", name);
    return v;
}

/* 1/0 for the boolean spellings the header lists, -1 otherwise. */
static int bool_of(const char *s)
{
    if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "on"))
        return 1;
    if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "off"))
        return 0;
    return -1;
}

/* A size with an optional K/M/G suffix; UINT64_MAX if it does not parse. */
static uint64_t size_of(const char *s)
{
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return UINT64_MAX;
    uint64_t mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024ull * 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return UINT64_MAX;
    return (uint64_t)v * mult;
}

static void expect_bool(const ravel_options *o, const char *name, int want)
{
    char *v = opt_get(o, name);
    int got = bool_of(v);
    if (got != want)
        fail_msg("option %s is \"%s\", expected %s", name, v,
                 want ? "true" : "false");
    ravel_free(v);
}

static void expect_size(const ravel_options *o, const char *name,
                        uint64_t want)
{
    char *v = opt_get(o, name);
    uint64_t got = size_of(v);
    if (got != want)
        fail_msg("option %s is \"%s\", expected %llu bytes", name, v,
                 (unsigned long long)want);
    ravel_free(v);
}

/* Enum values may be shown by name; RocksDB numbers are accepted too. */
static void expect_enum(const ravel_options *o, const char *name,
                        const char *want_name, const char *want_number)
{
    char *v = opt_get(o, name);
    if (strcmp(v, want_name) != 0
        && !(want_number && strcmp(v, want_number) == 0))
        fail_msg("option %s is \"%s\", expected \"%s\"", name, v, want_name);
    ravel_free(v);
}

/* Setting a value and reading it back; the text read back can be set
** again and reads back the same (a round trip a config tool relies on). */
static void set_and_reset(ravel_options *o, const char *name,
                          const char *value)
{
    TU_OK(ravel_options_set(o, name, value));
    char *v = opt_get(o, name);
    TU_OK(ravel_options_set(o, name, v));
    char *again = opt_get(o, name);
    if (strcmp(v, again) != 0)
        fail_msg("option %s: set \"%s\" reads \"%s\", set back reads \"%s\"",
                 name, value, v, again);
    ravel_free(v);
    ravel_free(again);
}

static void test_options_round_trip(void **state)
{
    (void)state;
    ravel_options *o = NULL;
    TU_OK(ravel_options_new(&o));

    static const struct { const char *text; int value; } bools[] = {
        {"true", 1}, {"false", 0}, {"1", 1}, {"0", 0}, {"on", 1}, {"off", 0},
    };
    static const char *bool_names[] = {
        "create_if_missing", "error_if_exists", "read_only",
        "allow_concurrent_memtable_write", "wal_preallocate",
    };
    for (size_t n = 0; n < sizeof bool_names / sizeof *bool_names; n++) {
        for (size_t i = 0; i < sizeof bools / sizeof *bools; i++) {
            set_and_reset(o, bool_names[n], bools[i].text);
            expect_bool(o, bool_names[n], bools[i].value);
        }
    }

    static const struct { const char *text; uint64_t value; } sizes[] = {
        {"4K", 4096}, {"4096", 4096}, {"64K", 65536}, {"3M", 3u << 20},
        {"1G", 1ull << 30}, {"4G", 4ull << 30}, {"123456", 123456},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        set_and_reset(o, "write_buffer_size", sizes[i].text);
        expect_size(o, "write_buffer_size", sizes[i].value);
    }
    set_and_reset(o, "max_write_batch_group_size_bytes", "1K");
    expect_size(o, "max_write_batch_group_size_bytes", 1024);
    set_and_reset(o, "max_write_batch_group_size_bytes", "16M");
    expect_size(o, "max_write_batch_group_size_bytes", 16u << 20);
    set_and_reset(o, "max_write_batch_group_size_bytes", "1G");
    expect_size(o, "max_write_batch_group_size_bytes", 1u << 30);

    static const char *ios[] = {"auto", "uring", "sync"};
    for (size_t i = 0; i < 3; i++) {
        set_and_reset(o, "wal_io", ios[i]);
        expect_enum(o, "wal_io", ios[i], NULL);
    }

    static const struct { const char *name, *number; } modes[] = {
        {"tolerate_corrupted_tail_records", "0"},
        {"absolute_consistency", "1"},
        {"point_in_time", "2"},
        {"skip_any_corrupted_records", "3"},
    };
    for (size_t i = 0; i < 4; i++) {
        set_and_reset(o, "wal_recovery_mode", modes[i].name);
        expect_enum(o, "wal_recovery_mode", modes[i].name, modes[i].number);
        /* Set as a number, it reads back as the same mode. */
        TU_OK(ravel_options_set(o, "wal_recovery_mode", "0"));
        set_and_reset(o, "wal_recovery_mode", modes[i].number);
        expect_enum(o, "wal_recovery_mode", modes[i].name, modes[i].number);
    }
    ravel_options_free(o);
}

/* An option error names the option. */
static void expect_bad_option(ravel_options *o, const char *name,
                              const char *value)
{
    char *before = opt_get(o, name);
    TU_EXPECT_INVALID(ravel_options_set(o, name, value));
    if (!strstr(ravel_errmsg(), name))
        fail_msg("%s=%s: message does not name the option: %s", name, value,
                 ravel_errmsg());
    char *after = opt_get(o, name);
    if (strcmp(before, after) != 0)
        fail_msg("%s=%s was rejected but changed the option from %s to %s",
                 name, value, before, after);
    ravel_free(before);
    ravel_free(after);
}

static void test_options_bad_values(void **state)
{
    (void)state;
    ravel_options *o = NULL;
    TU_OK(ravel_options_new(&o));
    expect_bad_option(o, "create_if_missing", "maybe");
    expect_bad_option(o, "create_if_missing", "");
    expect_bad_option(o, "create_if_missing", "2");
    expect_bad_option(o, "read_only", "yes please");
    expect_bad_option(o, "write_buffer_size", "");
    expect_bad_option(o, "write_buffer_size", "abc");
    expect_bad_option(o, "write_buffer_size", "-1");
    expect_bad_option(o, "write_buffer_size", "12Q");
    expect_bad_option(o, "write_buffer_size", "1K");    /* < 4K */
    expect_bad_option(o, "write_buffer_size", "4095");
    expect_bad_option(o, "write_buffer_size", "5G");    /* > 4G */
    expect_bad_option(o, "write_buffer_size", "99999999999999999999999");
    expect_bad_option(o, "max_write_batch_group_size_bytes", "512");
    expect_bad_option(o, "max_write_batch_group_size_bytes", "2G");
    expect_bad_option(o, "wal_io", "io_uring_please");
    expect_bad_option(o, "wal_io", "");
    expect_bad_option(o, "wal_recovery_mode", "4");
    expect_bad_option(o, "wal_recovery_mode", "-1");
    expect_bad_option(o, "wal_recovery_mode", "tolerate");
    expect_bad_option(o, "wal_preallocate", "truee");
    ravel_options_free(o);
}

/* The ordering modes: each valid combination opens and names its mode;
** each invalid one is refused at open naming the option that is wrong. */
static void test_options_ordering_modes(void **state)
{
    (void)state;
    static const struct {
        const char *opts, *mode;
    } good[] = {
        {NULL, "ordered"},
        {"unordered_write=true", "unordered"},
        {"unordered_write=true;two_write_queues=true;"
         "write_policy=write_prepared", "write-prepared"},
        {"unordered_write=true;two_write_queues=true;"
         "write_policy=WRITE_PREPARED;commit_table_size=16",
         "write-prepared"},
        {"unordered_write=true;in_order_publication=true",
         "in-order-publication"},
    };
    static const struct {
        const char *opts, *named;
    } bad[] = {
        {"write_policy=write_prepared;two_write_queues=true",
         "unordered_write"},
        {"write_policy=write_prepared;unordered_write=true",
         "two_write_queues"},
        {"two_write_queues=true;unordered_write=true", "write_policy"},
        {"in_order_publication=true", "unordered_write"},
        {"unordered_write=true;in_order_publication=true;"
         "two_write_queues=true;write_policy=write_prepared", "choose one"},
        {"unordered_write=true;two_write_queues=true;"
         "write_policy=write_prepared;commit_table_size=1000",
         "commit_table_size=1000"},
        {"unordered_write=true;allow_concurrent_memtable_write=false",
         "allow_concurrent_memtable_write"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char *dir = tu_path("ordering-good-%zu", i);
        ravel_db *db = tu_open_ok(dir, good[i].opts);
        char *mode = tu_prop(db, "ravel.write-ordering");
        assert_string_equal(mode, good[i].mode);
        ravel_free(mode);
        TU_OK(ravel_put(db, 0, "k", 1, "v", 1));
        tu_expect(db, NULL, "k", "v");
        TU_OK(ravel_close(db));
        /* read-only in the same mode: the data, no writes */
        char ro[512];
        snprintf(ro, sizeof ro, "%s%sread_only=true",
                 good[i].opts ? good[i].opts : "", good[i].opts ? ";" : "");
        db = tu_open_ok(dir, ro);
        tu_expect(db, NULL, "k", "v");
        ravel_snapshot *s = NULL;
        TU_OK(ravel_snapshot_acquire(db, &s));
        tu_expect(db, s, "k", "v");
        TU_OK(ravel_snapshot_release(db, s));
        TU_EXPECT_RC(RAVEL_READONLY, ravel_put(db, 0, "k", 1, "w", 1));
        TU_OK(ravel_close(db));
        tu_rm_rf(dir);
        free(dir);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *dir = tu_path("ordering-bad-%zu", i);
        ravel_db *db = NULL;
        TU_EXPECT_INVALID(tu_open(dir, bad[i].opts, &db));
        assert_null(db);
        if (!strstr(ravel_errmsg(), bad[i].named))
            fail_msg("%s: the message should name %s: %s", bad[i].opts,
                     bad[i].named, ravel_errmsg());
        tu_rm_rf(dir);
        free(dir);
    }
}

static void test_options_unknown_and_not_built(void **state)
{
    (void)state;
    ravel_options *o = NULL;
    TU_OK(ravel_options_new(&o));
    TU_EXPECT_INVALID(ravel_options_set(o, "no_such_option", "1"));
    assert_non_null(strstr(ravel_errmsg(), "no_such_option"));
    TU_EXPECT_INVALID(ravel_options_set(o, "", "1"));
    /* RocksDB options for features not built yet are refused, saying so. */
    static const char *not_built[] = {
        "enable_pipelined_write", "max_subcompactions",
    };
    for (size_t i = 0; i < 2; i++) {
        TU_EXPECT_INVALID(ravel_options_set(o, not_built[i], "1"));
        if (!strstr(ravel_errmsg(), not_built[i])
            || !strcasestr(ravel_errmsg(), "built"))
            fail_msg("%s: message should name it and say it is not built "
                     "yet: %s", not_built[i], ravel_errmsg());
    }
    char *v = NULL;
    TU_EXPECT_INVALID(ravel_options_get(o, "no_such_option", &v));
    assert_null(v);
    ravel_options_free(o);
}

static void test_options_parse(void **state)
{
    (void)state;
    ravel_options *o = NULL;
    TU_OK(ravel_options_new(&o));
    TU_OK(ravel_options_parse(o, "write_buffer_size=128K;create_if_missing="
                                 "true"));
    expect_size(o, "write_buffer_size", 128 << 10);
    expect_bool(o, "create_if_missing", 1);

    /* Whitespace around names and values, empty items. */
    TU_OK(ravel_options_parse(o, "  write_buffer_size = 256K ; ;"
                                 "\twal_preallocate= off ;wal_io =sync;"));
    expect_size(o, "write_buffer_size", 256 << 10);
    expect_bool(o, "wal_preallocate", 0);
    expect_enum(o, "wal_io", "sync", NULL);
    TU_OK(ravel_options_parse(o, ""));
    TU_OK(ravel_options_parse(o, ";;"));

    /* Stops at the first error, which is named; earlier items stay set. */
    TU_EXPECT_INVALID(ravel_options_parse(o, "wal_io=uring;bogus_name=1;"
                                             "wal_preallocate=on"));
    assert_non_null(strstr(ravel_errmsg(), "bogus_name"));
    expect_enum(o, "wal_io", "uring", NULL);
    expect_bool(o, "wal_preallocate", 0);

    TU_EXPECT_INVALID(ravel_options_parse(o, "write_buffer_size=lots"));
    assert_non_null(strstr(ravel_errmsg(), "write_buffer_size"));
    expect_size(o, "write_buffer_size", 256 << 10);
    TU_EXPECT_INVALID(ravel_options_parse(o, "create_if_missing"));
    TU_EXPECT_INVALID(ravel_options_parse(o, "=1"));
    ravel_options_free(o);
}

static void test_options_bad_args(void **state)
{
    (void)state;
    ravel_options *o = NULL;
    TU_EXPECT_INVALID(ravel_options_new(NULL));
    TU_OK(ravel_options_new(&o));
    char *v = NULL;
    TU_EXPECT_INVALID(ravel_options_set(NULL, "read_only", "1"));
    TU_EXPECT_INVALID(ravel_options_set(o, NULL, "1"));
    TU_EXPECT_INVALID(ravel_options_set(o, "read_only", NULL));
    TU_EXPECT_INVALID(ravel_options_parse(NULL, "read_only=1"));
    TU_EXPECT_INVALID(ravel_options_parse(o, NULL));
    TU_EXPECT_INVALID(ravel_options_get(NULL, "read_only", &v));
    TU_EXPECT_INVALID(ravel_options_get(o, NULL, &v));
    TU_EXPECT_INVALID(ravel_options_get(o, "read_only", NULL));
    assert_null(v);
    ravel_options_free(o);
    ravel_options_free(NULL);
}

/* A block cache handle: made, described, set in options (which then hold
** it past the caller's ravel_cache_free: ASan reports a use after free
** otherwise), cleared; and its bad arguments. */
static void test_cache_handle(void **state)
{
    (void)state;
    ravel_cache *c = NULL, *c2 = NULL;
    TU_EXPECT_INVALID(ravel_cache_new(1 << 20, NULL));
    TU_OK(ravel_cache_new(8u << 20, &c));
    assert_non_null(c);
    assert_int_equal(ravel_cache_capacity(c), 8u << 20);
    assert_int_equal(ravel_cache_usage(c), 0);
    TU_OK(ravel_cache_new(0, &c2));
    assert_int_equal(ravel_cache_capacity(c2), 0);
    assert_int_equal(ravel_cache_usage(NULL), 0);
    assert_int_equal(ravel_cache_capacity(NULL), 0);
    ravel_cache_free(NULL);

    ravel_options *o = NULL, *o2 = NULL;
    TU_OK(ravel_options_new(&o));
    TU_OK(ravel_options_new(&o2));
    TU_EXPECT_INVALID(ravel_options_set_cache(NULL, c));
    TU_OK(ravel_options_set_cache(o, c));
    TU_OK(ravel_options_set_cache(o2, c));
    TU_OK(ravel_options_set_cache(o2, c2)); /* replaces: drops c's ref */
    ravel_cache_free(c);
    ravel_cache_free(c2);
    /* o still holds c (and o2 holds c2) */
    assert_int_equal(ravel_cache_capacity(c), 8u << 20);
    assert_int_equal(ravel_cache_capacity(c2), 0);
    TU_OK(ravel_options_set_cache(o2, NULL));
    ravel_options_free(o2);
    ravel_options_free(o);
}

/* -------------------------------------------------------- open and close */

static void test_open_close(void **state)
{
    (void)state;
    char *dir = new_dir("open");
    ravel_db *db = tu_open_ok(dir, NULL);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    tu_put(db, 0, "k", "v");
    TU_OK(ravel_close(db));
    assert_int_equal(ravel_close(NULL), RAVEL_OK);

    /* Existing database, default options (NULL). */
    db = NULL;
    int rc = ravel_open(dir, NULL, &db);
    tu_skip_if_no_uring(rc);
    if (rc)
        fail_msg("open with NULL options: %s: %s", ravel_errstr(rc),
                 ravel_errmsg());
    tu_expect(db, NULL, "k", "v");
    TU_OK(ravel_close(db));

    /* The options are copied: freeing them after the open is fine. */
    ravel_options *o = tu_options("write_buffer_size=64K");
    db = NULL;
    TU_OK(ravel_open(dir, o, &db));
    ravel_options_free(o);
    tu_put(db, 0, "k2", "v2");
    tu_expect(db, NULL, "k", "v");
    TU_OK(ravel_close(db));

    /* error_if_exists on a new database is fine. */
    char *dir2 = new_dir("open-new");
    db = tu_open_ok(dir2, "error_if_exists=true");
    TU_OK(ravel_close(db));
    free(dir2);
    free(dir);
}

static void test_open_bad_args(void **state)
{
    (void)state;
    ravel_options *o = tu_options(NULL);
    ravel_db *db = NULL;
    char *dir = new_dir("badopen");
    TU_EXPECT_INVALID(ravel_open(NULL, o, &db));
    TU_EXPECT_INVALID(ravel_open(dir, o, NULL));
    assert_null(db);
    ravel_options_free(o);

    /* Missing database without create_if_missing: RAVEL_INVALID, and the
    ** directory is not created behind the caller's back. */
    o = tu_options("create_if_missing=false");
    TU_EXPECT_INVALID(ravel_open(dir, o, &db));
    assert_null(db);
    assert_int_not_equal(access(dir, F_OK), 0);

    /* An existing directory that does not hold a database. */
    assert_int_equal(mkdir(dir, 0755), 0);
    TU_EXPECT_INVALID(ravel_open(dir, o, &db));
    assert_null(db);
    ravel_options_free(o);

    /* error_if_exists on an existing database; the database is intact. */
    db = tu_open_ok(dir, NULL);
    tu_put(db, RAVEL_SYNC, "kept", "yes");
    TU_OK(ravel_close(db));
    o = tu_options("error_if_exists=true");
    db = NULL;
    TU_EXPECT_INVALID(ravel_open(dir, o, &db));
    assert_null(db);
    ravel_options_free(o);
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "kept", "yes");
    TU_OK(ravel_close(db));

    /* A path that is a regular file cannot be a database. */
    char *file = new_dir("plainfile");
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("not a database\n", f);
    fclose(f);
    o = tu_options(NULL);
    db = NULL;
    tu_errmsg_prime();
    int rc = ravel_open(file, o, &db);
    assert_int_not_equal(rc, RAVEL_OK);
    assert_true(tu_errmsg_is_fresh());
    assert_null(db);
    ravel_options_free(o);
    free(file);
    free(dir);
}

/* ----------------------------------------------------------------- writes */

static void test_put_get_delete(void **state)
{
    (void)state;
    char *dir = new_dir("pgd");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "a", NULL);
    tu_put(db, 0, "a", "1");
    tu_expect(db, NULL, "a", "1");
    tu_put(db, RAVEL_SYNC, "a", "22");
    tu_expect(db, NULL, "a", "22");
    tu_put(db, RAVEL_NO_WAL, "b", "3");
    tu_expect(db, NULL, "b", "3");
    TU_OK(ravel_delete(db, 0, "a", 1));
    tu_expect(db, NULL, "a", NULL);
    TU_OK(ravel_delete(db, RAVEL_SYNC, "b", 1));
    tu_expect(db, NULL, "b", NULL);
    /* Deleting an absent key succeeds. */
    TU_OK(ravel_delete(db, 0, "never", 5));
    tu_expect(db, NULL, "never", NULL);
    /* Put after delete brings the key back. */
    tu_put(db, 0, "a", "again");
    tu_expect(db, NULL, "a", "again");

    /* A NOTFOUND get leaves no value to free. */
    void *val = (void *)1;
    size_t vlen = 7;
    assert_int_equal(ravel_get(db, NULL, "zz", 2, &val, &vlen),
                     RAVEL_NOTFOUND);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_empty_keys_and_values(void **state)
{
    (void)state;
    char *dir = new_dir("empty");
    ravel_db *db = tu_open_ok(dir, NULL);
    void *val = NULL;
    size_t vlen = 99;
    assert_int_equal(ravel_get(db, NULL, NULL, 0, &val, &vlen),
                     RAVEL_NOTFOUND);
    TU_OK(ravel_put(db, 0, NULL, 0, "empty-key", 9));
    TU_OK(ravel_put(db, 0, "k", 1, NULL, 0));
    TU_OK(ravel_put(db, 0, "k2", 2, "", 0));

    TU_OK(ravel_get(db, NULL, "", 0, &val, &vlen));
    assert_int_equal(vlen, 9);
    assert_memory_equal(val, "empty-key", 9);
    ravel_free(val);

    val = NULL;
    vlen = 99;
    TU_OK(ravel_get(db, NULL, "k", 1, &val, &vlen));
    assert_non_null(val); /* non-NULL even for an empty value */
    assert_int_equal(vlen, 0);
    ravel_free(val);

    val = NULL;
    vlen = 99;
    TU_OK(ravel_get(db, NULL, "k2", 2, &val, &vlen));
    assert_non_null(val);
    assert_int_equal(vlen, 0);
    ravel_free(val);

    TU_OK(ravel_delete(db, 0, NULL, 0));
    assert_int_equal(ravel_get(db, NULL, NULL, 0, &val, &vlen),
                     RAVEL_NOTFOUND);

    /* Empty key and value in a batch, and after a reopen. */
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, NULL, 0, NULL, 0));
    TU_OK(ravel_write(db, RAVEL_SYNC, b));
    ravel_batch_free(b);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    val = NULL;
    vlen = 99;
    TU_OK(ravel_get(db, NULL, "", 0, &val, &vlen));
    assert_non_null(val);
    assert_int_equal(vlen, 0);
    ravel_free(val);
    tu_expect(db, NULL, "k", "");
    TU_OK(ravel_close(db));
    ravel_free(NULL);
    free(dir);
}

static void test_binary_and_large(void **state)
{
    (void)state;
    char *dir = new_dir("binary");
    ravel_db *db = tu_open_ok(dir, "write_buffer_size=4M");
    const char k1[] = {'a', 0, 'b', 0};
    const char v1[] = {0, 0, (char)0xff, 1};
    TU_OK(ravel_put(db, 0, k1, sizeof k1, v1, sizeof v1));
    /* "a\0b" is a different key from "a\0b\0" and from "a". */
    tu_expect(db, NULL, "a", NULL);
    void *val = NULL;
    size_t vlen = 0;
    assert_int_equal(ravel_get(db, NULL, k1, 3, &val, &vlen),
                     RAVEL_NOTFOUND);
    TU_OK(ravel_get(db, NULL, k1, sizeof k1, &val, &vlen));
    assert_int_equal(vlen, sizeof v1);
    assert_memory_equal(val, v1, sizeof v1);
    ravel_free(val);

    /* A 3 MiB value and the largest allowed key. */
    size_t big = 3u << 20;
    char *bv = malloc(big);
    assert_non_null(bv);
    for (size_t i = 0; i < big; i++)
        bv[i] = (char)(i * 131 + (i >> 12));
    char *bk = malloc(RAVEL_MAX_KEY_SIZE);
    assert_non_null(bk);
    memset(bk, 'K', RAVEL_MAX_KEY_SIZE);
    TU_OK(ravel_put(db, RAVEL_SYNC, "bigval", 6, bv, big));
    TU_OK(ravel_put(db, 0, bk, RAVEL_MAX_KEY_SIZE, "maxkey", 6));
    for (int round = 0; round < 2; round++) {
        TU_OK(ravel_get(db, NULL, "bigval", 6, &val, &vlen));
        assert_int_equal(vlen, big);
        assert_memory_equal(val, bv, big);
        ravel_free(val);
        TU_OK(ravel_get(db, NULL, bk, RAVEL_MAX_KEY_SIZE, &val, &vlen));
        assert_int_equal(vlen, 6);
        assert_memory_equal(val, "maxkey", 6);
        ravel_free(val);
        if (round == 0) {
            TU_OK(ravel_close(db));
            db = tu_open_ok(dir, "write_buffer_size=4M");
        }
    }
    TU_OK(ravel_close(db));
    free(bk);
    free(bv);
    free(dir);
}

/* Oversize keys and values are refused before their bytes are read:
** the buffers are read-only zero pages, never written. */
static void test_size_limits(void **state)
{
    (void)state;
    char *dir = new_dir("limits");
    ravel_db *db = tu_open_ok(dir, NULL);
    size_t vmax = (size_t)RAVEL_MAX_VALUE_SIZE + 1;
    void *huge = mmap(NULL, vmax, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS
                      | MAP_NORESERVE, -1, 0);
    assert_true(huge != MAP_FAILED);
    size_t kmax = (size_t)RAVEL_MAX_KEY_SIZE + 1;

    uint64_t seq = tu_prop_u64(db, "ravel.last-sequence");
    TU_EXPECT_INVALID(ravel_put(db, 0, huge, kmax, "v", 1));
    TU_EXPECT_INVALID(ravel_put(db, 0, "k", 1, huge, vmax));
    TU_EXPECT_INVALID(ravel_delete(db, 0, huge, kmax));
    void *val = NULL;
    size_t vlen = 0;
    TU_EXPECT_INVALID(ravel_get(db, NULL, huge, kmax, &val, &vlen));

    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    TU_EXPECT_INVALID(ravel_batch_put(b, huge, kmax, "v", 1));
    TU_EXPECT_INVALID(ravel_batch_put(b, "k", 1, huge, vmax));
    TU_EXPECT_INVALID(ravel_batch_delete(b, huge, kmax));
    /* A refused op leaves the batch as it was. */
    assert_int_equal(ravel_batch_count(b), 0);
    TU_OK(ravel_batch_put(b, "ok", 2, "v", 1));
    assert_int_equal(ravel_batch_count(b), 1);
    TU_OK(ravel_write(db, 0, b));
    ravel_batch_free(b);

    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_EXPECT_INVALID(ravel_iter_seek(it, huge, kmax));
    ravel_iter_free(it);

    /* Nothing refused consumed a sequence number or changed the data. */
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), seq + 1);
    tu_expect(db, NULL, "k", NULL);
    tu_expect(db, NULL, "ok", "v");
    munmap(huge, vmax);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_write_bad_args(void **state)
{
    (void)state;
    char *dir = new_dir("badwrite");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "x", 1, "y", 1));

    TU_EXPECT_INVALID(ravel_put(NULL, 0, "k", 1, "v", 1));
    TU_EXPECT_INVALID(ravel_put(db, 0, NULL, 1, "v", 1));
    TU_EXPECT_INVALID(ravel_put(db, 0, "k", 1, NULL, 1));
    TU_EXPECT_INVALID(ravel_delete(NULL, 0, "k", 1));
    TU_EXPECT_INVALID(ravel_delete(db, 0, NULL, 1));
    TU_EXPECT_INVALID(ravel_write(NULL, 0, b));
    TU_EXPECT_INVALID(ravel_write(db, 0, NULL));
    /* Flags other than RAVEL_SYNC and RAVEL_NO_WAL. */
    TU_EXPECT_INVALID(ravel_put(db, 0x100, "k", 1, "v", 1));
    TU_EXPECT_INVALID(ravel_write(db, 0x80, b));
    /* A sync of a write that skips the WAL cannot be honoured. */
    TU_EXPECT_INVALID(ravel_put(db, RAVEL_SYNC | RAVEL_NO_WAL, "k", 1, "v",
                                1));
    TU_EXPECT_INVALID(ravel_write(db, RAVEL_SYNC | RAVEL_NO_WAL, b));

    void *val = NULL;
    size_t vlen = 0;
    TU_EXPECT_INVALID(ravel_get(NULL, NULL, "k", 1, &val, &vlen));
    TU_EXPECT_INVALID(ravel_get(db, NULL, NULL, 1, &val, &vlen));
    TU_EXPECT_INVALID(ravel_get(db, NULL, "k", 1, NULL, &vlen));
    TU_EXPECT_INVALID(ravel_get(db, NULL, "k", 1, &val, NULL));

    /* None of it wrote anything. */
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 0);
    tu_expect(db, NULL, "k", NULL);
    tu_expect(db, NULL, "x", NULL);
    ravel_batch_free(b);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_flush_wal(void **state)
{
    (void)state;
    char *dir = new_dir("flush");
    ravel_db *db = tu_open_ok(dir, NULL);
    TU_OK(ravel_flush_wal(db, 0));
    TU_OK(ravel_flush_wal(db, 1));
    tu_put(db, 0, "a", "1");
    TU_OK(ravel_flush_wal(db, 0));
    tu_put(db, RAVEL_NO_WAL, "b", "2");
    TU_OK(ravel_flush_wal(db, 1));
    tu_expect(db, NULL, "a", "1");
    TU_EXPECT_INVALID(ravel_flush_wal(NULL, 0));
    TU_EXPECT_INVALID(ravel_flush_wal(NULL, 1));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "read_only=true");
    TU_OK(ravel_flush_wal(db, 0));
    TU_OK(ravel_flush_wal(db, 1));
    tu_expect(db, NULL, "a", "1");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ---------------------------------------------------------------- batches */

static void test_batches(void **state)
{
    (void)state;
    char *dir = new_dir("batch");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    assert_non_null(b);
    assert_int_equal(ravel_batch_count(b), 0);
    assert_int_equal(ravel_batch_count(NULL), 0);

    /* An empty batch is a no-op that succeeds. */
    TU_OK(ravel_write(db, 0, b));
    TU_OK(ravel_write(db, RAVEL_SYNC, b));
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 0);

    tu_put(db, 0, "gone", "soon");
    TU_OK(ravel_batch_put(b, "a", 1, "1", 1));
    TU_OK(ravel_batch_put(b, "b", 1, "2", 1));
    TU_OK(ravel_batch_delete(b, "gone", 4));
    /* Later ops of a batch win over earlier ones on the same key. */
    TU_OK(ravel_batch_put(b, "c", 1, "first", 5));
    TU_OK(ravel_batch_put(b, "c", 1, "second", 6));
    TU_OK(ravel_batch_put(b, "d", 1, "x", 1));
    TU_OK(ravel_batch_delete(b, "d", 1));
    TU_OK(ravel_batch_delete(b, "e", 1));
    TU_OK(ravel_batch_put(b, "e", 1, "back", 4));
    assert_int_equal(ravel_batch_count(b), 9);
    TU_OK(ravel_write(db, RAVEL_SYNC, b));
    /* The batch is not modified by the write. */
    assert_int_equal(ravel_batch_count(b), 9);
    tu_expect(db, NULL, "a", "1");
    tu_expect(db, NULL, "b", "2");
    tu_expect(db, NULL, "gone", NULL);
    tu_expect(db, NULL, "c", "second");
    tu_expect(db, NULL, "d", NULL);
    tu_expect(db, NULL, "e", "back");
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 10);

    /* It may be reused: written again, it applies again. */
    tu_put(db, 0, "a", "changed");
    TU_OK(ravel_write(db, 0, b));
    tu_expect(db, NULL, "a", "1");
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 20);

    TU_OK(ravel_batch_clear(b));
    assert_int_equal(ravel_batch_count(b), 0);
    TU_OK(ravel_write(db, 0, b));
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 20);
    TU_OK(ravel_batch_put(b, "after-clear", 11, "v", 1));
    assert_int_equal(ravel_batch_count(b), 1);
    TU_OK(ravel_write(db, RAVEL_NO_WAL, b));
    tu_expect(db, NULL, "after-clear", "v");
    tu_expect(db, NULL, "b", "2");

    /* A large batch (many ops, more than the inline buffer). */
    TU_OK(ravel_batch_clear(b));
    char key[32], val[64];
    for (int i = 0; i < 5000; i++) {
        int kl = snprintf(key, sizeof key, "many-%05d", i);
        int vl = snprintf(val, sizeof val, "value-%d-%0*d", i, i % 40, 0);
        TU_OK(ravel_batch_put(b, key, (size_t)kl, val, (size_t)vl));
    }
    assert_int_equal(ravel_batch_count(b), 5000);
    TU_OK(ravel_write(db, RAVEL_SYNC, b));
    ravel_batch_free(b);
    ravel_batch_free(NULL);
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, NULL);
    for (int i = 0; i < 5000; i += 7) {
        snprintf(key, sizeof key, "many-%05d", i);
        snprintf(val, sizeof val, "value-%d-%0*d", i, i % 40, 0);
        tu_expect(db, NULL, key, val);
    }
    tu_expect(db, NULL, "c", "second");
    tu_expect(db, NULL, "gone", NULL);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_batch_bad_args(void **state)
{
    (void)state;
    ravel_batch *b = NULL;
    TU_EXPECT_INVALID(ravel_batch_new(NULL));
    TU_OK(ravel_batch_new(&b));
    TU_EXPECT_INVALID(ravel_batch_put(NULL, "k", 1, "v", 1));
    TU_EXPECT_INVALID(ravel_batch_put(b, NULL, 1, "v", 1));
    TU_EXPECT_INVALID(ravel_batch_put(b, "k", 1, NULL, 1));
    TU_EXPECT_INVALID(ravel_batch_delete(NULL, "k", 1));
    TU_EXPECT_INVALID(ravel_batch_delete(b, NULL, 1));
    TU_EXPECT_INVALID(ravel_batch_clear(NULL));
    assert_int_equal(ravel_batch_count(b), 0);
    TU_OK(ravel_batch_put(b, NULL, 0, NULL, 0));
    TU_OK(ravel_batch_delete(b, NULL, 0));
    assert_int_equal(ravel_batch_count(b), 2);
    ravel_batch_free(b);
}

/* Every operation takes one sequence number, in order; a batch of N takes
** N; NO_WAL writes are numbered too; refused writes take none. */
static void test_sequence_numbers(void **state)
{
    (void)state;
    char *dir = new_dir("seq");
    ravel_db *db = tu_open_ok(dir, NULL);
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.last-visible-sequence"), 0);
    tu_put(db, 0, "a", "1");
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 1);
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "b", 1, "1", 1));
    TU_OK(ravel_batch_put(b, "c", 1, "1", 1));
    TU_OK(ravel_batch_delete(b, "a", 1));
    TU_OK(ravel_write(db, 0, b));
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 4);
    TU_OK(ravel_delete(db, RAVEL_SYNC, "b", 1));
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 5);
    TU_OK(ravel_put(db, RAVEL_NO_WAL, "d", 1, "1", 1));
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 6);
    TU_EXPECT_INVALID(ravel_put(db, 0, NULL, 3, "x", 1));
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 6);
    assert_int_equal(tu_prop_u64(db, "ravel.last-visible-sequence"), 6);

    ravel_snapshot *s = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s));
    assert_int_equal(ravel_snapshot_sequence(s), 6);
    TU_OK(ravel_snapshot_release(db, s));
    ravel_batch_free(b);

    /* After a reopen numbering goes on; no number is handed out twice. */
    TU_OK(ravel_put(db, 0, "e", 1, "1", 1));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    uint64_t last = tu_prop_u64(db, "ravel.last-sequence");
    assert_true(last >= 7);
    assert_int_equal(tu_prop_u64(db, "ravel.last-visible-sequence"), last);
    tu_put(db, 0, "f", "1");
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), last + 1);
    TU_OK(ravel_snapshot_acquire(db, &s));
    assert_int_equal(ravel_snapshot_sequence(s), last + 1);
    TU_OK(ravel_snapshot_release(db, s));
    TU_OK(ravel_close(db));
    free(dir);
}

/* -------------------------------------------------------------- iterators */

struct kv {
    const char *k;
    size_t klen;
    const char *v;
};

/* In the iteration order the header promises: bytewise, unsigned, a
** shorter key first on a common prefix. */
static const struct kv iter_data[] = {
    {"", 0, "empty"},
    {"a", 1, "v-a"},
    {"a\0", 2, "v-a0"},
    {"ab", 2, "v-ab"},
    {"b", 1, "v-b"},
    {"b\x7f", 2, "v-b7f"},
    {"b\x80", 2, "v-b80"},
    {"\xff", 1, "v-ff"},
};
#define ITER_N ((int)(sizeof iter_data / sizeof iter_data[0]))

/* Small memtables, so that the later writes of a test switch them. */
#define ITER_OPTS "write_buffer_size=64K"

static ravel_db *iter_db(char **dirp)
{
    char *dir = new_dir("iter");
    ravel_db *db = tu_open_ok(dir, ITER_OPTS);
    /* Written out of order, with overwrites and deleted keys in between. */
    for (int i = ITER_N - 1; i >= 0; i -= 2)
        TU_OK(ravel_put(db, 0, iter_data[i].k, iter_data[i].klen, "old", 3));
    tu_put(db, 0, "aa", "deleted");
    tu_put(db, 0, "zzz", "deleted");
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    for (int i = 0; i < ITER_N; i++)
        TU_OK(ravel_batch_put(b, iter_data[i].k, iter_data[i].klen,
                              iter_data[i].v, strlen(iter_data[i].v)));
    TU_OK(ravel_batch_delete(b, "aa", 2));
    TU_OK(ravel_write(db, 0, b));
    ravel_batch_free(b);
    TU_OK(ravel_delete(db, 0, "zzz", 3));
    *dirp = dir;
    return db;
}

/* Fails unless IT is at iter_data[i] (i < 0: not valid). */
static void expect_at(ravel_iter *it, int i, const char *where)
{
    size_t kl = 99, vl = 99;
    const void *k = ravel_iter_key(it, &kl);
    const void *v = ravel_iter_value(it, &vl);
    if (i < 0) {
        if (ravel_iter_valid(it))
            fail_msg("%s: expected an invalid iterator, at a key of %zu "
                     "bytes", where, kl);
        if (k != NULL || kl != 0 || v != NULL || vl != 0)
            fail_msg("%s: invalid iterator: key/value should be NULL/0",
                     where);
        return;
    }
    if (!ravel_iter_valid(it))
        fail_msg("%s: expected entry %d, iterator not valid (status %d)",
                 where, i, ravel_iter_status(it));
    if (kl != iter_data[i].klen || (kl && memcmp(k, iter_data[i].k, kl)))
        fail_msg("%s: expected key #%d (%zu bytes), got another of %zu bytes",
                 where, i, iter_data[i].klen, kl);
    size_t want = strlen(iter_data[i].v);
    if (vl != want || memcmp(v, iter_data[i].v, want))
        fail_msg("%s: key #%d: wrong value", where, i);
    assert_non_null(k);
}

static void test_iter_forward_backward(void **state)
{
    (void)state;
    char *dir;
    ravel_db *db = iter_db(&dir);
    for (int round = 0; round < 2; round++) {
        ravel_iter *it = NULL;
        TU_OK(ravel_iter_new(db, NULL, &it));
        assert_non_null(it);
        expect_at(it, -1, "new iterator");
        TU_OK(ravel_iter_seek_to_first(it));
        for (int i = 0; i < ITER_N; i++) {
            expect_at(it, i, "forward");
            TU_OK(ravel_iter_next(it));
        }
        expect_at(it, -1, "past the end");
        TU_OK(ravel_iter_status(it));

        TU_OK(ravel_iter_seek_to_last(it));
        for (int i = ITER_N - 1; i >= 0; i--) {
            expect_at(it, i, "backward");
            TU_OK(ravel_iter_prev(it));
        }
        expect_at(it, -1, "before the start");

        /* Changing direction in the middle. */
        TU_OK(ravel_iter_seek_to_first(it));
        TU_OK(ravel_iter_next(it));
        TU_OK(ravel_iter_next(it));
        TU_OK(ravel_iter_next(it));
        expect_at(it, 3, "fwd 3");
        TU_OK(ravel_iter_prev(it));
        expect_at(it, 2, "back 1");
        TU_OK(ravel_iter_prev(it));
        expect_at(it, 1, "back 2");
        TU_OK(ravel_iter_next(it));
        expect_at(it, 2, "fwd again");
        TU_OK(ravel_iter_status(it));
        ravel_iter_free(it);
        /* Same answers after a reopen (read from the recovered WAL). */
        TU_OK(ravel_close(db));
        db = tu_open_ok(dir, ITER_OPTS);
    }
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_iter_seek(void **state)
{
    (void)state;
    char *dir;
    ravel_db *db = iter_db(&dir);
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, NULL, &it));

    TU_OK(ravel_iter_seek(it, "a", 1));
    expect_at(it, 1, "seek a");
    TU_OK(ravel_iter_seek(it, "aa", 2)); /* deleted: the next one */
    expect_at(it, 3, "seek aa");
    TU_OK(ravel_iter_seek(it, "a\0", 2));
    expect_at(it, 2, "seek a\\0");
    TU_OK(ravel_iter_seek(it, NULL, 0));
    expect_at(it, 0, "seek empty");
    TU_OK(ravel_iter_seek(it, "c", 1));
    expect_at(it, 7, "seek c");
    TU_OK(ravel_iter_seek(it, "\xff\xff", 2));
    expect_at(it, -1, "seek past all");
    TU_OK(ravel_iter_seek(it, "b\x7f\x01", 3));
    expect_at(it, 6, "seek b7f01");
    TU_OK(ravel_iter_prev(it));
    expect_at(it, 5, "prev after seek");

    TU_OK(ravel_iter_seek_for_prev(it, "aa", 2));
    expect_at(it, 2, "seek_for_prev aa");
    TU_OK(ravel_iter_next(it));
    expect_at(it, 3, "next after seek_for_prev");
    TU_OK(ravel_iter_seek_for_prev(it, "ab", 2));
    expect_at(it, 3, "seek_for_prev ab");
    TU_OK(ravel_iter_seek_for_prev(it, "", 0));
    expect_at(it, 0, "seek_for_prev empty");
    TU_OK(ravel_iter_seek_for_prev(it, "zzz", 3)); /* deleted */
    expect_at(it, 6, "seek_for_prev zzz");
    TU_OK(ravel_iter_seek_for_prev(it, "\xff\xff", 2));
    expect_at(it, 7, "seek_for_prev ffff");
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);

    /* Without the empty key, seek_for_prev before the first key. */
    TU_OK(ravel_delete(db, 0, NULL, 0));
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_OK(ravel_iter_seek_for_prev(it, "", 0));
    expect_at(it, -1, "seek_for_prev before first");
    TU_OK(ravel_iter_seek_for_prev(it, "0", 1));
    expect_at(it, -1, "seek_for_prev 0");
    TU_OK(ravel_iter_seek(it, "", 0));
    expect_at(it, 1, "seek empty after delete");
    ravel_iter_free(it);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_iter_empty_db(void **state)
{
    (void)state;
    char *dir = new_dir("iterempty");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_OK(ravel_iter_seek_to_first(it));
    assert_int_equal(ravel_iter_valid(it), 0);
    TU_OK(ravel_iter_seek_to_last(it));
    assert_int_equal(ravel_iter_valid(it), 0);
    TU_OK(ravel_iter_seek(it, "a", 1));
    assert_int_equal(ravel_iter_valid(it), 0);
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_iter_bad_args(void **state)
{
    (void)state;
    char *dir;
    ravel_db *db = iter_db(&dir);
    ravel_iter *it = NULL;
    TU_EXPECT_INVALID(ravel_iter_new(NULL, NULL, &it));
    TU_EXPECT_INVALID(ravel_iter_new(db, NULL, NULL));
    assert_null(it);
    TU_OK(ravel_iter_new(db, NULL, &it));

    /* next/prev on an iterator that is not valid. */
    TU_EXPECT_INVALID(ravel_iter_next(it));
    TU_EXPECT_INVALID(ravel_iter_prev(it));
    TU_OK(ravel_iter_seek_to_last(it));
    TU_OK(ravel_iter_next(it));
    assert_int_equal(ravel_iter_valid(it), 0);
    TU_EXPECT_INVALID(ravel_iter_next(it));
    TU_EXPECT_INVALID(ravel_iter_prev(it));
    /* An invalid iterator can be positioned again. */
    TU_OK(ravel_iter_seek_to_first(it));
    expect_at(it, 0, "reseek");

    TU_EXPECT_INVALID(ravel_iter_seek(NULL, "a", 1));
    TU_EXPECT_INVALID(ravel_iter_seek(it, NULL, 1));
    TU_EXPECT_INVALID(ravel_iter_seek_for_prev(NULL, "a", 1));
    TU_EXPECT_INVALID(ravel_iter_seek_for_prev(it, NULL, 1));
    TU_EXPECT_INVALID(ravel_iter_seek_to_first(NULL));
    TU_EXPECT_INVALID(ravel_iter_seek_to_last(NULL));
    TU_EXPECT_INVALID(ravel_iter_next(NULL));
    TU_EXPECT_INVALID(ravel_iter_prev(NULL));
    TU_EXPECT_INVALID(ravel_iter_status(NULL));
    assert_int_equal(ravel_iter_valid(NULL), 0);
    size_t len = 5;
    assert_null(ravel_iter_key(NULL, &len));
    assert_int_equal(len, 0);
    len = 5;
    assert_null(ravel_iter_value(NULL, &len));
    assert_int_equal(len, 0);
    ravel_iter_free(NULL);
    ravel_iter_free(it);
    TU_OK(ravel_close(db));
    free(dir);
}

/* An iterator reads the state of its creation, whatever is written after. */
static void test_iter_fixed_state(void **state)
{
    (void)state;
    char *dir;
    ravel_db *db = iter_db(&dir);
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, NULL, &it));
    tu_put(db, 0, "zz-new", "x");
    tu_put(db, 0, "a", "changed");
    TU_OK(ravel_delete(db, 0, "b", 1));
    for (int pass = 0; pass < 2; pass++) {
        TU_OK(ravel_iter_seek_to_first(it));
        for (int i = 0; i < ITER_N; i++) {
            expect_at(it, i, "fixed state");
            TU_OK(ravel_iter_next(it));
        }
        expect_at(it, -1, "fixed state end");
        TU_OK(ravel_iter_seek(it, "zz", 2));
        expect_at(it, 7, "new key not seen"); /* "zz-new" < "zz" < "\xff" */
        /* Many writes later, including enough to fill memtables. */
        char key[32];
        for (int i = 0; i < 2000; i++) {
            snprintf(key, sizeof key, "zz-%04d", i);
            tu_put(db, 0, key, "later");
        }
    }
    ravel_iter_free(it);

    /* A new iterator sees the new state. */
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_OK(ravel_iter_seek(it, "a", 1));
    size_t vl = 0;
    const void *v = ravel_iter_value(it, &vl);
    assert_int_equal(vl, 7);
    assert_memory_equal(v, "changed", 7);
    TU_OK(ravel_iter_seek(it, "b", 1));
    size_t kl = 0;
    const void *k = ravel_iter_key(it, &kl);
    assert_int_equal(kl, 2);
    assert_memory_equal(k, "b\x7f", 2);
    ravel_iter_free(it);
    TU_OK(ravel_close(db));
    free(dir);
}

/* -------------------------------------------------------------- snapshots */

static void test_snapshots(void **state)
{
    (void)state;
    char *dir;
    ravel_db *db = iter_db(&dir);
    ravel_snapshot *s = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s));
    assert_non_null(s);
    assert_int_equal(ravel_snapshot_sequence(s),
                     tu_prop_u64(db, "ravel.last-sequence"));
    assert_int_equal(ravel_snapshot_sequence(NULL), 0);

    tu_put(db, 0, "a", "after");
    TU_OK(ravel_delete(db, 0, "b", 1));
    tu_put(db, 0, "new", "x");
    tu_put(db, 0, "aa", "resurrected");
    /* Enough writes to switch memtables under the snapshot. */
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "fill-%04d", i);
        tu_put(db, 0, key, "................................................");
    }

    tu_expect(db, s, "a", "v-a");
    tu_expect(db, s, "b", "v-b");
    tu_expect(db, s, "new", NULL);
    tu_expect(db, s, "aa", NULL);
    tu_expect(db, s, "fill-0000", NULL);
    tu_expect(db, NULL, "a", "after");
    tu_expect(db, NULL, "b", NULL);
    tu_expect(db, NULL, "new", "x");
    tu_expect(db, NULL, "aa", "resurrected");

    /* An iterator on the snapshot sees the snapshot's state. */
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, s, &it));
    TU_OK(ravel_iter_seek_to_first(it));
    for (int i = 0; i < ITER_N; i++) {
        expect_at(it, i, "snapshot iterator");
        TU_OK(ravel_iter_next(it));
    }
    expect_at(it, -1, "snapshot iterator end");
    ravel_iter_free(it);

    /* Two snapshots at different points. */
    ravel_snapshot *s2 = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s2));
    assert_true(ravel_snapshot_sequence(s2) > ravel_snapshot_sequence(s));
    tu_put(db, 0, "a", "third");
    tu_expect(db, s, "a", "v-a");
    tu_expect(db, s2, "a", "after");
    tu_expect(db, NULL, "a", "third");
    TU_OK(ravel_snapshot_release(db, s));
    tu_expect(db, s2, "a", "after");
    TU_OK(ravel_snapshot_release(db, s2));
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_snapshot_bad_args(void **state)
{
    (void)state;
    char *dir = new_dir("snapbad");
    char *dir2 = new_dir("snapbad2");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_db *db2 = tu_open_ok(dir2, NULL);
    ravel_snapshot *s = NULL;
    TU_EXPECT_INVALID(ravel_snapshot_acquire(NULL, &s));
    TU_EXPECT_INVALID(ravel_snapshot_acquire(db, NULL));
    assert_null(s);
    TU_OK(ravel_snapshot_acquire(db, &s));
    TU_EXPECT_INVALID(ravel_snapshot_release(NULL, s));
    TU_EXPECT_INVALID(ravel_snapshot_release(db, NULL));
    /* A snapshot of another database. */
    TU_EXPECT_INVALID(ravel_snapshot_release(db2, s));
    TU_OK(ravel_snapshot_release(db, s));
    TU_OK(ravel_close(db2));
    TU_OK(ravel_close(db));
    free(dir2);
    free(dir);
}

/* Close refuses while snapshots or iterators are live, and the database
** stays open and usable. */
static void test_close_with_live_handles(void **state)
{
    (void)state;
    char *dir = new_dir("closelive");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "k", "v");
    ravel_snapshot *s = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s));
    TU_EXPECT_INVALID(ravel_close(db));
    tu_expect(db, s, "k", "v");
    tu_put(db, 0, "k2", "v2");
    TU_OK(ravel_snapshot_release(db, s));

    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_EXPECT_INVALID(ravel_close(db));
    TU_OK(ravel_iter_seek_to_first(it));
    assert_int_equal(ravel_iter_valid(it), 1);
    tu_expect(db, NULL, "k2", "v2");
    ravel_iter_free(it);

    /* An iterator on a snapshot: both must go. */
    TU_OK(ravel_snapshot_acquire(db, &s));
    TU_OK(ravel_iter_new(db, s, &it));
    TU_OK(ravel_snapshot_release(db, s));
    TU_EXPECT_INVALID(ravel_close(db));
    ravel_iter_free(it);

    TU_OK(ravel_close(db));
    /* The LOCK was released by the successful close only. */
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "k2", "v2");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------------- properties */

static void test_properties(void **state)
{
    (void)state;
    char *dir = new_dir("props");
    ravel_db *db = tu_open_ok(dir, NULL);
    char *t = tu_prop(db, "ravel.read-only-reason");
    assert_string_equal(t, "");
    ravel_free(t);
    assert_int_equal(tu_prop_u64(db, "ravel.num-immutable-mem-table"), 0);
    uint64_t size0 = tu_prop_u64(db, "ravel.cur-size-active-mem-table");

    /* 100 writes of 20 KiB: the memtable holds at least their bytes. */
    char key[32];
    char *val = malloc(20 << 10);
    assert_non_null(val);
    memset(val, 'v', 20 << 10);
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "key-%03d", i);
        TU_OK(ravel_put(db, i % 10 == 0 ? RAVEL_SYNC : 0, key, strlen(key),
                        val, 20 << 10));
    }
    free(val);
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), 100);
    assert_int_equal(tu_prop_u64(db, "ravel.last-visible-sequence"), 100);
    uint64_t size1 = tu_prop_u64(db, "ravel.cur-size-active-mem-table");
    assert_true(size1 > size0);
    assert_true(size1 >= 100 * (20 << 10));

    const char *io = tu_wal_io();
    t = tu_prop(db, "ravel.wal-io");
    if (io && strncmp(t, io, strlen(io)) != 0)
        fail_msg("ravel.wal-io is \"%s\", opened with wal_io=%s", t, io);
    if (strncmp(t, "uring (", 7) != 0 && strncmp(t, "sync (", 6) != 0 &&
        strncmp(t, "direct (", 8) != 0)
        fail_msg("ravel.wal-io is \"%s\"", t);
    ravel_free(t);

    t = tu_prop(db, "ravel.stats");
    assert_true(strlen(t) > 20);
    if (io && !strstr(t, io))
        fail_msg("ravel.stats does not show the WAL I/O path %s:\n%s", io, t);
    printf("# ravel.stats:\n%s\n", t);
    /* Flushes and the stall of a full set of memtables are measured. */
    if (!strstr(t, "\nflush: ") || !strstr(t, "\nstall: "))
        fail_msg("ravel.stats has no flush or stall line:\n%s", t);
    ravel_free(t);

    t = (char *)"untouched";
    TU_EXPECT_RC(RAVEL_NOTFOUND,
                 ravel_property(db, "ravel.no_such_property", &t));
    /* The message lists the known names, and each of them reads. */
    const char *msg = ravel_errmsg();
    if (!strstr(msg, "'ravel.no_such_property'"))
        fail_msg("message does not name the property: %s", msg);
    const char *known = strstr(msg, "; known: ravel.{");
    if (!known || !strchr(known, '}'))
        fail_msg("message does not list the known properties: %s", msg);
    char names[1024];
    snprintf(names, sizeof names, "%s", known + strlen("; known: ravel.{"));
    *strchr(names, '}') = '\0';
    int n_known = 0;
    for (char *save = NULL, *name = strtok_r(names, ", ", &save); name;
         name = strtok_r(NULL, ", ", &save)) {
        /* "num-files-at-level0..6" stands for seven names */
        char full[128];
        size_t len = strlen(name);
        int levels = len > 4 && strcmp(name + len - 4, "0..6") == 0;
        for (int l = 0; l < (levels ? 7 : 1); l++, n_known++) {
            snprintf(full, sizeof full, "ravel.%.*s%.*d",
                     (int)(levels ? len - 4 : len), name, levels ? 1 : 0,
                     levels ? l : 0);
            if (!levels)
                snprintf(full, sizeof full, "ravel.%s", name);
            ravel_free(tu_prop(db, full));
        }
    }
    assert_int_equal(n_known, 29);
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_property(db, "", &t));
    assert_non_null(strstr(ravel_errmsg(), "known: ravel.{stats,"));
    t = NULL;
    TU_EXPECT_INVALID(ravel_property(NULL, "ravel.stats", &t));
    TU_EXPECT_INVALID(ravel_property(db, NULL, &t));
    TU_EXPECT_INVALID(ravel_property(db, "ravel.stats", NULL));
    assert_null(t);
    TU_OK(ravel_close(db));
    free(dir);
}

/* Every alias ravel.h lists reads the text of the property it names:
** RocksDB's spelling and the deprecated underscore one. */
static void test_property_aliases(void **state)
{
    (void)state;
    static const char *const aliases[][2] = {
        {"rocksdb.stats", NULL},
        {"ravel.last_sequence", "ravel.last-sequence"},
        {"ravel.last_visible_sequence", "ravel.last-visible-sequence"},
        {"ravel.num_immutable_mem_table", "ravel.num-immutable-mem-table"},
        {"rocksdb.num-immutable-mem-table", "ravel.num-immutable-mem-table"},
        {"ravel.cur_size_active_mem_table", "ravel.cur-size-active-mem-table"},
        {"rocksdb.cur-size-active-mem-table",
         "ravel.cur-size-active-mem-table"},
        {"ravel.wal_io", "ravel.wal-io"},
        {"ravel.read_only_reason", "ravel.read-only-reason"},
        {"rocksdb.num-files-at-level0", "ravel.num-files-at-level0"},
        {"rocksdb.num-files-at-level6", "ravel.num-files-at-level6"},
        {"rocksdb.sstables", "ravel.sstables"},
        {"rocksdb.estimate-num-keys", "ravel.estimate-num-keys"},
        {"rocksdb.cur-size-all-mem-tables", "ravel.cur-size-all-mem-tables"},
        {"rocksdb.block-cache-usage", "ravel.block-cache-usage"},
        {"rocksdb.background-errors", "ravel.background-errors"},
        {"rocksdb.levelstats", "ravel.levelstats"},
        {"rocksdb.compaction-pending", "ravel.compaction-pending"},
        {"rocksdb.num-running-compactions", "ravel.num-running-compactions"},
        {"rocksdb.estimate-pending-compaction-bytes",
         "ravel.estimate-pending-compaction-bytes"},
        {"rocksdb.actual-delayed-write-rate",
         "ravel.actual-delayed-write-rate"},
        {"rocksdb.is-write-stopped", "ravel.is-write-stopped"},
    };
    char *dir = new_dir("prop-aliases");
    ravel_db *db = tu_open_ok(dir, NULL);
    TU_OK(ravel_put(db, 0, "a", 1, "1", 1));
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_put(db, 0, "b", 1, "2", 1));
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        char *alias = tu_prop(db, aliases[i][0]);
        if (aliases[i][1]) {
            char *name = tu_prop(db, aliases[i][1]);
            if (strcmp(alias, name) != 0)
                fail_msg("%s is \"%s\", %s \"%s\"", aliases[i][0], alias,
                         aliases[i][1], name);
            ravel_free(name);
        } else {
            assert_non_null(strstr(alias, "\nwal: io="));
        }
        ravel_free(alias);
    }
    char *t = tu_prop(db, "rocksdb.num-files-at-level0");
    assert_string_equal(t, "1");
    ravel_free(t);
    /* RocksDB names ravel does not have, and near misses, are unknown. */
    static const char *const unknown[] = {
        "rocksdb.num-snapshots", "rocksdb.options", "rocksdb.last-sequence",
        "ravel.num-files-at-level7", "rocksdb.num-files-at-level",
        "ravel.num_files_at_level0", "RAVEL.STATS", "ravel.stats ",
        /* the longest name the message quotes: the list still fits */
        "rocksdb.a-property-name-long-enough-to-be-cut-in-the-message-xyz",
    };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        t = (char *)"untouched";
        TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_property(db, unknown[i], &t));
        assert_non_null(strstr(ravel_errmsg(), "known: ravel.{stats,"));
        assert_non_null(strstr(ravel_errmsg(), "reader-lag}"));
    }
    TU_OK(ravel_close(db));
    free(dir);
}

/* ravel.stats is lines of at most 80 columns (a long one continued on
** indented lines), with the WAL's counters on its wal: line. */
static void test_stats_width(void **state)
{
    (void)state;
    char *dir = new_dir("stats-width");
    ravel_db *db = tu_open_ok(dir, NULL);
    TU_OK(ravel_put(db, RAVEL_SYNC, "a", 1, "1", 1));
    char *t = NULL;
    TU_OK(ravel_property(db, "ravel.stats", &t)); /* not joined: tu_prop */
    for (const char *line = t; *line;) {
        size_t len = strcspn(line, "\n");
        if (len > 80)
            fail_msg("a line of %zu columns in ravel.stats: %.*s", len,
                     (int)len, line);
        line += len + (line[len] == '\n');
    }
    const char *wal = strstr(t, "\nwal: io=");
    assert_non_null(wal);
    assert_non_null(strstr(wal, " appends, 1 segments created\n"
                                "  why io="));
    ravel_free(t);
    TU_OK(ravel_close(db));
    free(dir);
}

/* Writes that fill several memtables stay readable, newest version first,
** through gets and iterators, and survive a reopen. */
static void test_memtable_switch(void **state)
{
    (void)state;
    char *dir = new_dir("switch");
    const char *opts = "write_buffer_size=64K";
    ravel_db *db = tu_open_ok(dir, opts);
    char key[32], val[128];
    const int n = 1500, rounds = 3;
    uint64_t bytes = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = r; i < n; i++) {
            snprintf(key, sizeof key, "k%05d", i);
            snprintf(val, sizeof val, "round-%d-%05d-%060d", r, i, 0);
            tu_put(db, 0, key, val);
            bytes += strlen(key) + strlen(val);
        }
    }
    for (int i = 0; i < n; i += 3) {
        snprintf(key, sizeof key, "k%05d", i);
        TU_OK(ravel_delete(db, 0, key, strlen(key)));
        bytes += strlen(key);
    }
    /* Switched when full: more than once, but a memtable holds about
    ** write_buffer_size of data, not one write (generous bounds: per-entry
    ** overhead may double the bytes). */
    /* Each switched-out memtable is waiting for its flush, or was flushed
    ** into one table file. */
    uint64_t imm = tu_prop_u64(db, "ravel.num-immutable-mem-table") +
                   tu_prop_u64(db, "ravel.num-files-at-level0");
    uint64_t full = bytes / (64 << 10);
    if (imm < 1 || imm > 4 * full + 4)
        fail_msg("%llu bytes written into 64K memtables made %llu switched "
                 "memtables (expected about %llu)", (unsigned long long)bytes,
                 (unsigned long long)imm, (unsigned long long)full);

    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            snprintf(key, sizeof key, "k%05d", i);
            int r = i < rounds ? i : rounds - 1;
            snprintf(val, sizeof val, "round-%d-%05d-%060d", r, i, 0);
            tu_expect(db, NULL, key, i % 3 == 0 ? NULL : val);
        }
        ravel_iter *it = NULL;
        TU_OK(ravel_iter_new(db, NULL, &it));
        TU_OK(ravel_iter_seek_to_first(it));
        int seen = 0, expect_i = 1;
        while (ravel_iter_valid(it)) {
            size_t kl;
            const char *k = ravel_iter_key(it, &kl);
            snprintf(key, sizeof key, "k%05d", expect_i);
            if (kl != strlen(key) || memcmp(k, key, kl) != 0)
                fail_msg("iterator: expected %s, got %.*s", key, (int)kl, k);
            seen++;
            expect_i += expect_i % 3 == 1 ? 1 : 2;
            TU_OK(ravel_iter_next(it));
        }
        TU_OK(ravel_iter_status(it));
        assert_int_equal(seen, n - (n + 2) / 3);
        /* and backwards */
        TU_OK(ravel_iter_seek_to_last(it));
        int back = 0;
        while (ravel_iter_valid(it)) {
            back++;
            TU_OK(ravel_iter_prev(it));
        }
        assert_int_equal(back, seen);
        ravel_iter_free(it);
        TU_OK(ravel_close(db));
        db = tu_open_ok(dir, opts);
    }
    TU_OK(ravel_close(db));
    free(dir);
}

/* --------------------------------------------------------------- reopen */

/* How many entries of DIR have names starting with PREFIX. */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* A small database opened and closed again and again (what a shell's
** scripts do) keeps a bounded number of WAL segments, not one per open
** (each open starts a segment; close flushes small memtables once the WAL
** spans several), and everything written stays readable. */
static void test_many_reopens_bound_the_wal(void **state)
{
    (void)state;
    char *dir = new_dir("reopens");
    for (int i = 0; i < 40; i++) {
        ravel_db *db = tu_open_ok(dir, NULL);
        char key[16];
        snprintf(key, sizeof key, "k%02d", i);
        if (i % 2 == 0)
            tu_put(db, 0, key, "v");
        for (int j = 0; j < i; j += 2) {
            snprintf(key, sizeof key, "k%02d", j);
            tu_expect(db, NULL, key, "v");
        }
        TU_OK(ravel_close(db));
    }
    int segments = count_entries(dir, "wal-");
    printf("# 40 opens: %d WAL segments left\n", segments);
    if (segments > 6)
        fail_msg("%d WAL segments after 40 small sessions: one kept per "
                 "open", segments);
    free(dir);
}

/* A LOG grown past 1 MiB is set aside as LOG.old by the next open, which
** starts a new one: a database opened thousands of times keeps a bounded
** log. */
static void test_log_rotates(void **state)
{
    (void)state;
    char *dir = new_dir("logrotate");
    ravel_db *db = tu_open_ok(dir, NULL);
    TU_OK(ravel_close(db));
    char log[4096], old[4096];
    snprintf(log, sizeof log, "%s/LOG", dir);
    snprintf(old, sizeof old, "%s/LOG.old", dir);
    size_t big = (1u << 20) + 4096;
    char *junk = malloc(big);
    assert_non_null(junk);
    memset(junk, 'x', big);
    assert_int_equal(tu_file_write(log, junk, big), 0);
    free(junk);
    db = tu_open_ok(dir, NULL);
    TU_OK(ravel_close(db));
    struct stat st;
    assert_int_equal(stat(old, &st), 0);
    assert_int_equal((size_t)st.st_size, big);
    assert_int_equal(stat(log, &st), 0);
    assert_true(st.st_size > 0 && st.st_size < 65536);
    free(dir);
}

/* ravel_destroy deletes a database no one has open, and only its files;
** an open one is refused with RAVEL_LOCKED and keeps every key. */
static void test_destroy(void **state)
{
    (void)state;
    char *dir = new_dir("destroy");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    TU_OK(ravel_flush(db, 1));
    tu_put(db, 0, "b", "2");
    TU_EXPECT_RC(RAVEL_LOCKED, ravel_destroy(dir));
    tu_expect(db, NULL, "a", "1");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "create_if_missing=false");
    tu_expect(db, NULL, "a", "1");
    tu_expect(db, NULL, "b", "2");
    TU_OK(ravel_close(db));

    /* a file of another name stays, and so does the directory */
    char foreign[4096];
    snprintf(foreign, sizeof foreign, "%s/notes.txt", dir);
    assert_int_equal(tu_file_write(foreign, "mine", 4), 0);
    TU_OK(ravel_destroy(dir));
    struct stat st;
    assert_int_equal(stat(foreign, &st), 0);
    assert_int_equal(count_entries(dir, ""), 3); /* ., .., notes.txt */
    ravel_options *o = NULL;
    TU_OK(ravel_options_new(&o));
    TU_OK(ravel_options_set(o, "create_if_missing", "false"));
    TU_EXPECT_INVALID(ravel_open(dir, o, &db)); /* no database left */
    ravel_options_free(o);
    unlink(foreign);

    /* a whole database: the directory goes too; a missing one is OK */
    db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "c", "3");
    TU_OK(ravel_close(db));
    TU_OK(ravel_destroy(dir));
    assert_int_equal(stat(dir, &st), -1);
    assert_int_equal(errno, ENOENT);
    TU_OK(ravel_destroy(dir));
    TU_EXPECT_INVALID(ravel_destroy(""));
    TU_EXPECT_INVALID(ravel_destroy(NULL));
    free(dir);
}

static void test_reopen_keeps_data(void **state)
{
    (void)state;
    char *dir = new_dir("reopen");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "plain", "1");
    tu_put(db, RAVEL_SYNC, "synced", "2");
    tu_put(db, 0, "overwritten", "old");
    tu_put(db, 0, "overwritten", "new");
    tu_put(db, 0, "deleted", "x");
    TU_OK(ravel_delete(db, 0, "deleted", 7));
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "batch-1", 7, "b1", 2));
    TU_OK(ravel_batch_put(b, "batch-2", 7, "b2", 2));
    TU_OK(ravel_batch_delete(b, "plain", 5));
    TU_OK(ravel_batch_put(b, "plain", 5, "from-batch", 10));
    TU_OK(ravel_write(db, 0, b));
    ravel_batch_free(b);
    TU_OK(ravel_close(db));

    for (int i = 0; i < 3; i++) {
        db = tu_open_ok(dir, "create_if_missing=false");
        tu_expect(db, NULL, "plain", "from-batch");
        tu_expect(db, NULL, "synced", "2");
        tu_expect(db, NULL, "overwritten", "new");
        tu_expect(db, NULL, "deleted", NULL);
        tu_expect(db, NULL, "batch-1", "b1");
        tu_expect(db, NULL, "batch-2", "b2");
        char key[16];
        snprintf(key, sizeof key, "open-%d", i);
        tu_put(db, 0, key, "here");
        for (int j = 0; j <= i; j++) {
            snprintf(key, sizeof key, "open-%d", j);
            tu_expect(db, NULL, key, "here");
        }
        TU_OK(ravel_close(db));
    }
    free(dir);
}

/* ---------------------------------------------------------- read-only open */

static char *dir_listing(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        assert_int_equal(stat(path, &st), 0);
        char line[512];
        if (!strcmp(e->d_name, "LOCK")) { /* taking the lock may touch it */
            snprintf(line, sizeof line, "LOCK\n");
            names[n++] = strdup(line);
            continue;
        }
        snprintf(line, sizeof line, "%s %lld %lld.%09ld\n", e->d_name,
                 (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                 st.st_mtim.tv_nsec);
        names[n++] = strdup(line);
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    size_t total = 1;
    for (int i = 0; i < n; i++)
        total += strlen(names[i]);
    char *out = calloc(1, total);
    for (int i = 0; i < n; i++) {
        strcat(out, names[i]);
        free(names[i]);
    }
    return out;
}

/* A program started with stdin, stdout and stderr closed must not get a
** database descriptor on 0, 1 or 2: its printf()s would land in the WAL.
** Each way of writing the WAL makes different descriptors (the io_uring
** ring and its eventfd among them), so each is tried: a child closes 0-2,
** opens with wal_io=IO, writes with a sync, and checks 0-2 hold nothing
** of the database.  Exit 77 when this machine cannot use IO. */
/* Writes what descriptor FD is (its /proc link) to DIR/stdio-fd, for the
** parent to print. */
static void stdio_child_name_fd(const char *dir, int fd)
{
    char link[64], target[512], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    target[n > 0 ? n : 0] = 0;
    snprintf(path, sizeof path, "%s/stdio-fd", dir);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out >= 0 && out <= 2) { /* keep 0-2 as the check saw them */
        int moved = fcntl(out, F_DUPFD_CLOEXEC, 3);
        close(out);
        out = moved;
    }
    if (out < 0)
        return;
    dprintf(out, "descriptor %d is %s", fd, n > 0 ? target : "(unnamed)");
    close(out);
}

static int stdio_child(const char *dir, const char *io)
{
    close(0);
    close(1);
    close(2);
    char spec[128];
    snprintf(spec, sizeof spec, "create_if_missing=true;wal_io=%s", io);
    ravel_options *o = NULL;
    ravel_db *db = NULL;
    if (ravel_options_new(&o) || ravel_options_parse(o, spec))
        return 10;
    int rc = ravel_open(dir, o, &db);
    if (rc != RAVEL_OK)
        return strcmp(io, "sync") != 0 && (strcasestr(ravel_errmsg(), "uring")
               || strstr(ravel_errmsg(), "O_DIRECT")) ? 77 : 10;
    if (ravel_put(db, RAVEL_SYNC, "k", 1, "v", 1))
        return 11;
    /* ravel parks /dev/null on a free slot it was given (util/file.h),
    ** and a directory a background thread lists for a moment (opendir)
    ** may sit there; a file, a ring or an eventfd may not */
    struct stat st, null_st;
    if (stat("/dev/null", &null_st) != 0)
        return 10;
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) != -1 &&
            !(fstat(fd, &st) == 0 &&
              (S_ISDIR(st.st_mode) || (S_ISCHR(st.st_mode) &&
                                       st.st_rdev == null_st.st_rdev)))) {
            stdio_child_name_fd(dir, fd);
            return 12 + fd;
        }
    return ravel_close(db) ? 15 : 0;
}

static void test_files_avoid_stdio_descriptors(void **state)
{
    (void)state;
    static const char *const modes[] = {"sync", "uring", "direct"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "stdio-%s", modes[i]);
        char *dir = new_dir(name);
        fflush(stdout);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(stdio_child(dir, modes[i]));
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77) {
            printf("# wal_io=%s cannot be used here: not checked\n", modes[i]);
            free(dir);
            continue;
        }
        if (WEXITSTATUS(status) != 0) {
            char path[4096], what[600] = "";
            snprintf(path, sizeof path, "%s/stdio-fd", dir);
            FILE *f = fopen(path, "r");
            if (f) {
                if (!fgets(what, sizeof what, f))
                    what[0] = 0;
                fclose(f);
            }
            fail_msg("wal_io=%s: child exited %d (12-14: a database "
                     "descriptor on 0-2) %s", modes[i], WEXITSTATUS(status),
                     what);
        }
        ravel_db *db = tu_open_ok(dir, NULL);
        tu_expect(db, NULL, "k", "v");
        TU_OK(ravel_close(db));
        free(dir);
    }
}

/* Forks a child that holds what it inherited (the LOCK among it) without
** touching the database, until it is killed or every write end of the
** pipe HOLD is closed (the test keeps one: the child cannot outlive it).
** Returns its pid, or -1 if fork failed. */
static pid_t fork_holder(const int hold[2])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(hold[1]);
        char c;
        while (read(hold[0], &c, 1) < 0)
            ;
        _exit(0);
    }
    return pid;
}

/* Opens DIR, retrying while it is RAVEL_LOCKED, for up to 10 s: the lock
** of a killed process is dropped as it exits, shortly after the kill. */
static ravel_db *open_when_unlocked(const char *dir)
{
    ravel_db *db = NULL;
    int rc = RAVEL_LOCKED;
    for (int i = 0; i < 1000 && rc == RAVEL_LOCKED; i++) {
        rc = tu_open(dir, NULL, &db);
        if (rc == RAVEL_LOCKED)
            usleep(10000);
    }
    if (rc)
        fail_msg("open %s: %s: %s", dir, ravel_errstr(rc), ravel_errmsg());
    return db;
}

/* A child forked while the database is open shares its LOCK (an open file
** description lock).  ravel_close in the parent releases it for the child
** too, so the parent can reopen at once; a parent that ends without
** ravel_close leaves it to the child, and opens are RAVEL_LOCKED, with a
** message that points at the fork, until the child is gone. */
static void test_fork_and_lock(void **state)
{
    (void)state;
    char *dir = new_dir("fork");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, RAVEL_SYNC, "k", "v");
    int hold[2];
    assert_int_equal(pipe(hold), 0);
    pid_t child = fork_holder(hold);
    assert_true(child > 0);
    TU_OK(ravel_close(db));
    db = NULL;
    int rc = tu_open(dir, NULL, &db);
    if (rc)
        fail_msg("reopen after ravel_close with a forked child alive: %s: "
                 "%s", ravel_errstr(rc), ravel_errmsg());
    tu_expect(db, NULL, "k", "v");
    kill(child, SIGKILL);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    TU_OK(ravel_close(db));

    /* The parent dies with the database open: the child keeps the lock. */
    int pid_pipe[2];
    assert_int_equal(pipe(pid_pipe), 0);
    fflush(stdout);
    pid_t parent = fork();
    assert_true(parent >= 0);
    if (parent == 0) {
        close(pid_pipe[0]);
        ravel_db *pdb = NULL;
        if (tu_open(dir, NULL, &pdb))
            _exit(10);
        pid_t held = fork_holder(hold);
        if (held < 0)
            _exit(11);
        if (write(pid_pipe[1], &held, sizeof held) != sizeof held)
            _exit(12);
        _exit(0); /* no ravel_close: as if it crashed */
    }
    close(pid_pipe[1]);
    pid_t holder = 0;
    assert_int_equal(read(pid_pipe[0], &holder, sizeof holder),
                     sizeof holder);
    close(pid_pipe[0]);
    assert_int_equal(waitpid(parent, &status, 0), parent);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    db = NULL;
    rc = tu_open(dir, NULL, &db);
    if (rc != RAVEL_LOCKED)
        fail_msg("open while a forked child holds the LOCK: %s (%s), want "
                 "RAVEL_LOCKED", ravel_errstr(rc), ravel_errmsg());
    assert_null(db);
    if (!strstr(ravel_errmsg(), "forked") || !strstr(ravel_errmsg(), dir))
        fail_msg("RAVEL_LOCKED message does not name both the fork and "
                 "the directory: %s", ravel_errmsg());
    kill(holder, SIGKILL); /* not our child: its exit drops the lock */
    close(hold[0]);
    close(hold[1]);
    db = open_when_unlocked(dir);
    tu_expect(db, NULL, "k", "v");
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_read_only_open(void **state)
{
    (void)state;
    char *dir = new_dir("ro");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "k", "v");
    tu_put(db, RAVEL_SYNC, "k2", "v2");
    TU_OK(ravel_close(db));

    char *before = dir_listing(dir);
    db = tu_open_ok(dir, "read_only=true;create_if_missing=false");
    tu_expect(db, NULL, "k", "v");
    tu_expect(db, NULL, "k2", "v2");
    TU_EXPECT_RC(RAVEL_READONLY, ravel_put(db, 0, "k3", 2, "v", 1));
    TU_EXPECT_RC(RAVEL_READONLY, ravel_put(db, RAVEL_NO_WAL, "k3", 2, "v", 1));
    TU_EXPECT_RC(RAVEL_READONLY, ravel_delete(db, RAVEL_SYNC, "k", 1));
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "k4", 2, "v", 1));
    TU_EXPECT_RC(RAVEL_READONLY, ravel_write(db, 0, b));
    ravel_batch_free(b);
    tu_expect(db, NULL, "k", "v");
    tu_expect(db, NULL, "k3", NULL);
    char *reason = tu_prop(db, "ravel.read-only-reason");
    assert_true(reason[0] != 0);
    ravel_free(reason);
    ravel_snapshot *s = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s));
    tu_expect(db, s, "k2", "v2");
    TU_OK(ravel_snapshot_release(db, s));
    TU_OK(ravel_close(db));
    /* Nothing in the directory was created or modified. */
    char *after = dir_listing(dir);
    assert_string_equal(before, after);
    free(before);
    free(after);

    db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "k3", "v3");
    tu_expect(db, NULL, "k", "v");
    TU_OK(ravel_close(db));

    /* read_only on a missing database. */
    char *missing = new_dir("ro-missing");
    ravel_options *o = tu_options("read_only=true;create_if_missing=false");
    TU_EXPECT_INVALID(ravel_open(missing, o, &db));
    ravel_options_free(o);
    free(missing);
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_errstr),
        cmocka_unit_test(test_errmsg_per_thread),
        cmocka_unit_test(test_errmsg_r_concurrent),
        cmocka_unit_test(test_errmsg_r_truncation),
        cmocka_unit_test(test_options_round_trip),
        cmocka_unit_test(test_options_bad_values),
        cmocka_unit_test(test_options_unknown_and_not_built),
        cmocka_unit_test(test_options_ordering_modes),
        cmocka_unit_test(test_options_parse),
        cmocka_unit_test(test_options_bad_args),
        cmocka_unit_test(test_cache_handle),
        cmocka_unit_test(test_open_close),
        cmocka_unit_test(test_open_bad_args),
        cmocka_unit_test(test_put_get_delete),
        cmocka_unit_test(test_empty_keys_and_values),
        cmocka_unit_test(test_binary_and_large),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_write_bad_args),
        cmocka_unit_test(test_flush_wal),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_batch_bad_args),
        cmocka_unit_test(test_sequence_numbers),
        cmocka_unit_test(test_iter_forward_backward),
        cmocka_unit_test(test_iter_seek),
        cmocka_unit_test(test_iter_empty_db),
        cmocka_unit_test(test_iter_bad_args),
        cmocka_unit_test(test_iter_fixed_state),
        cmocka_unit_test(test_snapshots),
        cmocka_unit_test(test_snapshot_bad_args),
        cmocka_unit_test(test_close_with_live_handles),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_property_aliases),
        cmocka_unit_test(test_stats_width),
        cmocka_unit_test(test_memtable_switch),
        cmocka_unit_test(test_reopen_keeps_data),
        cmocka_unit_test(test_many_reopens_bound_the_wal),
        cmocka_unit_test(test_destroy),
        cmocka_unit_test(test_log_rotates),
        cmocka_unit_test(test_files_avoid_stdio_descriptors),
        cmocka_unit_test(test_fork_and_lock),
        cmocka_unit_test(test_read_only_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
