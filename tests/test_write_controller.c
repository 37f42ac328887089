/*
** test_write_controller.c -- the write controller (docs/compaction.md):
** writes slowed down to delayed_write_rate, stopped until the cause
** clears, RAVEL_NO_SLOWDOWN refused with RAVEL_BUSY, and one controller
** shared by two databases.
**
** Stalls are made without timing: compactions are disabled and level 0 is
** filled with ravel_flush until it reaches the slowdown or stop trigger;
** ravel_compact_range clears it.  The pacing check counts the bytes
** writers got acknowledged between two instants the test reads from the
** monotonic clock and compares that rate with the one the database
** reports (ravel.actual-delayed-write-rate), with a wide tolerance; no
** single operation's duration is asserted.  A blocked writer is one whose
** "returned" flag stays unset while the test checks the stop is in force;
** it must return once the test clears the stop.
*/
#include "testutil.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Level 0 slows writes down at 2 files, never stops them; a memtable
** holds every write of a test, so nothing but ravel_flush adds a file. */
#define SLOWDOWN "disable_auto_compactions=true;" \
                 "level0_file_num_compaction_trigger=1;" \
                 "level0_slowdown_writes_trigger=2;" \
                 "level0_stop_writes_trigger=1000;write_buffer_size=8M"
/* Level 0 stops writes at 2 files. */
#define STOP "disable_auto_compactions=true;" \
             "level0_file_num_compaction_trigger=1;" \
             "level0_slowdown_writes_trigger=2;" \
             "level0_stop_writes_trigger=2"

static int db_counter;

static char *fresh_dir(void)
{
    return tu_path("wc-%d", db_counter++);
}

static uint64_t now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void nap_ms(int ms)
{
    struct timespec t = {.tv_sec = ms / 1000,
                         .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Adds N files to level 0: one small write and a flush each. */
static void add_level0_files(ravel_db *db, int n)
{
    static int counter;
    char k[32];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof k, "l0-file-%04d", counter++);
        tu_put(db, 0, k, "x");
        TU_OK(ravel_flush(db, 0));
    }
}

/* Polls PROP until it reads WANT (a bound against hanging: the state is
** recomputed when a flush or compaction installs its files). */
static void wait_prop(ravel_db *db, const char *prop, uint64_t want)
{
    uint64_t v = 0;
    for (int i = 0; i < 4000; i++) {
        v = tu_prop_u64(db, prop);
        if (v == want)
            return;
        nap_ms(5);
    }
    fail_msg("%s stayed %" PRIu64 ", expected %" PRIu64, prop, v, want);
}

static uint64_t delayed_rate(ravel_db *db)
{
    return tu_prop_u64(db, "ravel.actual-delayed-write-rate");
}

static void expect_stats_mention(ravel_db *db, const char *what)
{
    char *stats = tu_prop(db, "ravel.stats");
    if (!strstr(stats, what))
        fail_msg("ravel.stats does not mention \"%s\":\n%s", what, stats);
    ravel_free(stats);
}

static void print_controller_stats(ravel_db *db, const char *label)
{
    char *stats = tu_prop(db, "ravel.stats");
    printf("# %s: ravel.stats:\n", label);
    for (char *line = stats; line && *line;) {
        char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        if (memmem(line, (size_t)len, "stall", 5) ||
            memmem(line, (size_t)len, "slow", 4) ||
            memmem(line, (size_t)len, "controller", 10) ||
            memmem(line, (size_t)len, "stop", 4))
            printf("#   %.*s\n", len, line);
        line = nl ? nl + 1 : NULL;
    }
    ravel_free(stats);
}

/* ------------------------------------------------------------ pacing */

#define PACE_VALUE 1000

struct pacer {
    ravel_db *db;
    int id;
    uint64_t budget;            /* bytes this writer writes */
    _Atomic uint64_t *accepted; /* bytes acknowledged, all writers */
};

static void *pacer_main(void *p)
{
    struct pacer *w = p;
    char k[32], v[PACE_VALUE];
    memset(v, 'p', sizeof v);
    uint64_t done = 0;
    for (int i = 0; done < w->budget && !tu_thread_failures(); i++) {
        snprintf(k, sizeof k, "pace-%d-%06d", w->id, i);
        int rc = ravel_put(w->db, 0, k, strlen(k), v, sizeof v);
        TU_CHECK(rc == RAVEL_OK, "put %s: %s", k, ravel_errmsg());
        done += strlen(k) + sizeof v;
        atomic_fetch_add(w->accepted, strlen(k) + sizeof v);
    }
    return NULL;
}

/* Waits until *ACCEPTED reaches AT_LEAST; returns the clock then. */
static uint64_t wait_accepted(_Atomic uint64_t *accepted, uint64_t at_least,
                              uint64_t *seen)
{
    for (int i = 0; i < 120000; i++) { /* 2 minutes: against a hang */
        uint64_t v = atomic_load(accepted);
        if (v >= at_least) {
            *seen = v;
            return now_micros();
        }
        nap_ms(1);
    }
    fail_msg("writers stuck at %" PRIu64 " bytes, waiting for %" PRIu64,
             atomic_load(accepted), at_least);
    return 0;
}

/* With level 0 at its slowdown trigger, two writers' acknowledged bytes
** per second, counted over a window, are those ravel reports it paces
** them to, within a factor of 1.5, and that rate is at most
** delayed_write_rate. */
static void test_pacing(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SLOWDOWN ";delayed_write_rate=1M");
    assert_int_equal(delayed_rate(db), 0);
    add_level0_files(db, 1);
    assert_int_equal(delayed_rate(db), 0); /* one file: no slowdown */
    add_level0_files(db, 1);
    assert_int_equal(tu_files_at_level(db, 0), 2);
    assert_true(delayed_rate(db) > 0);
    assert_true(delayed_rate(db) <= 1024 * 1024);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    expect_stats_mention(db, "level0");

    _Atomic uint64_t accepted = 0;
    struct pacer w[2];
    pthread_t th[2];
    const uint64_t warmup = 128 * 1024, window = 1024 * 1024;
    for (int i = 0; i < 2; i++) {
        w[i] = (struct pacer){.db = db, .id = i, .accepted = &accepted,
                              .budget = (warmup + window) / 2 + 64 * 1024};
        pthread_create(&th[i], NULL, pacer_main, &w[i]);
    }
    uint64_t b0, b1;
    uint64_t t0 = wait_accepted(&accepted, warmup, &b0);
    uint64_t r0 = delayed_rate(db);
    uint64_t t1 = wait_accepted(&accepted, b0 + window, &b1);
    uint64_t r1 = delayed_rate(db);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    double measured = (double)(b1 - b0) * 1e6 / (double)(t1 - t0);
    uint64_t lo = r0 < r1 ? r0 : r1, hi = r0 < r1 ? r1 : r0;
    printf("# %" PRIu64 " bytes in %.3f s: %.0f bytes/s; ravel reports %"
           PRIu64 " .. %" PRIu64 " bytes/s\n", b1 - b0,
           (double)(t1 - t0) / 1e6, measured, lo, hi);
    print_controller_stats(db, "paced");
    assert_true(lo > 0);
    if (measured < 0.5 * (double)lo || measured > 1.5 * (double)hi)
        fail_msg("writes were accepted at %.0f bytes/s, paced to %" PRIu64
                 " .. %" PRIu64 " bytes/s by ravel's account", measured, lo,
                 hi);
    /* the slowdown ends with its cause */
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    assert_int_equal(delayed_rate(db), 0);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ---------------------------------------------------- RAVEL_NO_SLOWDOWN */

/* A write of 64 KiB at 64 KiB/s takes the token bucket's next second:
** a write right after it would have to wait. */
#define PRIMER_BYTES (64 * 1024)

static void prime_bucket(ravel_db *db, const char *key)
{
    static char v[PRIMER_BYTES];
    memset(v, 'q', sizeof v);
    TU_OK(ravel_put(db, 0, key, strlen(key), v, sizeof v));
}

/* Calls CALL right after priming the bucket of PRIMED and expects
** RAVEL_BUSY; a pass where more than half the primed second went by
** between the two (the test thread was descheduled) is tried again. */
#define EXPECT_BUSY_AFTER_PRIMER(primed, call) do { \
        int tries_ = 0; \
        for (;;) { \
            prime_bucket((primed), "primer"); \
            uint64_t t_ = now_micros(); \
            tu_errmsg_prime(); \
            int rc_ = (call); \
            if (rc_ == RAVEL_BUSY) { \
                if (!tu_errmsg_is_fresh()) \
                    fail_msg("%s: RAVEL_BUSY without a message", #call); \
                break; \
            } \
            if (now_micros() - t_ < 500000 || ++tries_ == 5) \
                fail_msg("%s during a slowdown returned %s, not " \
                         "RAVEL_BUSY: %s", #call, ravel_errstr(rc_), \
                         ravel_errmsg()); \
        } \
    } while (0)

static void test_no_slowdown_in_slowdown(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    const char *opts = SLOWDOWN ";delayed_write_rate=64K";
    ravel_db *db = tu_open_ok(dir, opts);
    /* no slowdown yet: RAVEL_NO_SLOWDOWN writes go through */
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "free", 4, "1", 1));
    add_level0_files(db, 2);
    assert_true(delayed_rate(db) > 0);

    EXPECT_BUSY_AFTER_PRIMER(db, ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3,
                                           "v", 1));
    EXPECT_BUSY_AFTER_PRIMER(db, ravel_delete(db, RAVEL_NO_SLOWDOWN, "free",
                                              4));
    ravel_batch *b;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "nos-batch-1", 11, "v", 1));
    TU_OK(ravel_batch_put(b, "nos-batch-2", 11, "v", 1));
    EXPECT_BUSY_AFTER_PRIMER(db, ravel_write(db, RAVEL_NO_SLOWDOWN |
                                             RAVEL_SYNC, b));
    ravel_batch_free(b);
    /* nothing of them was written */
    tu_expect(db, NULL, "nos", NULL);
    tu_expect(db, NULL, "free", "1");
    tu_expect(db, NULL, "nos-batch-1", NULL);
    tu_expect(db, NULL, "nos-batch-2", NULL);
    /* without the flag, the same write waits its turn and succeeds */
    prime_bucket(db, "primer");
    tu_put(db, 0, "nos", "v");
    tu_expect(db, NULL, "nos", "v");
    print_controller_stats(db, "after RAVEL_BUSY");

    /* nor is anything of them in the WAL */
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    tu_expect(db, NULL, "nos", "v");
    tu_expect(db, NULL, "free", "1");
    tu_expect(db, NULL, "nos-batch-1", NULL);
    tu_expect(db, NULL, "nos-batch-2", NULL);
    /* the reopened database is slowed down again: its level 0 is full */
    assert_true(delayed_rate(db) > 0);
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    assert_int_equal(delayed_rate(db), 0);
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "nos-after", 9, "v", 1));
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------------- stops */

struct blocked_writer {
    ravel_db *db;
    const char *key;
    _Atomic int returned;
    int rc;
};

static void *blocked_writer_main(void *p)
{
    struct blocked_writer *w = p;
    w->rc = ravel_put(w->db, 0, w->key, strlen(w->key), "waited", 6);
    atomic_store(&w->returned, 1);
    return NULL;
}

/* While STOPPED reports a stop, W has not returned (checked a few times
** over a while; a return at any point before the release is the bug). */
static void expect_blocked(struct blocked_writer *w, ravel_db *stopped)
{
    for (int i = 0; i < 5; i++) {
        nap_ms(40);
        assert_int_equal(tu_prop_u64(stopped, "ravel.is-write-stopped"), 1);
        if (atomic_load(&w->returned))
            fail_msg("a write returned %s while writes were stopped",
                     ravel_errstr(w->rc));
    }
}

static void test_stop_until_compacted(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, STOP);
    add_level0_files(db, 1);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    add_level0_files(db, 1);
    wait_prop(db, "ravel.is-write-stopped", 1);
    expect_stats_mention(db, "level0");

    TU_EXPECT_RC(RAVEL_BUSY, ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3, "v",
                                       1));
    tu_expect(db, NULL, "nos", NULL);
    /* reads are served during the stop */
    tu_expect(db, NULL, "l0-file-0000", "x");

    struct blocked_writer w = {.db = db, .key = "blocked"};
    pthread_t th;
    pthread_create(&th, NULL, blocked_writer_main, &w);
    expect_blocked(&w, db);
    tu_expect(db, NULL, "blocked", NULL);
    print_controller_stats(db, "stopped");

    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    pthread_join(th, NULL);
    assert_int_equal(w.rc, RAVEL_OK);
    assert_int_equal(tu_files_at_level(db, 0), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    tu_expect(db, NULL, "blocked", "waited");
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3, "v", 1));
    tu_expect(db, NULL, "nos", "v");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------- a shared controller */

static ravel_db *open_with(const char *dir, const char *extra,
                           ravel_write_controller *wc)
{
    ravel_options *o = tu_options(extra);
    TU_OK(ravel_options_set_write_controller(o, wc));
    ravel_db *db = NULL;
    int rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc) {
        tu_skip_if_no_uring(rc);
        fail_msg("open %s: %s: %s", dir, ravel_errstr(rc), ravel_errmsg());
    }
    return db;
}

/* A is pushed into a slowdown: B, which has no cause of its own, is
** slowed too (RAVEL_NO_SLOWDOWN refused, a rate reported); compacting A
** releases both.  A is pushed into a stop: a writer of B blocks, and
** closing A releases it. */
static void test_shared_controller(void **state)
{
    (void)state;
    char *dir_a = fresh_dir(), *dir_b = fresh_dir();
    ravel_write_controller *wc;
    TU_OK(ravel_write_controller_new(64 * 1024, &wc));
    ravel_db *a = open_with(dir_a, "disable_auto_compactions=true;"
                            "level0_file_num_compaction_trigger=1;"
                            "level0_slowdown_writes_trigger=2;"
                            "level0_stop_writes_trigger=3;"
                            "write_buffer_size=8M", wc);
    ravel_db *b = open_with(dir_b, "write_buffer_size=8M", wc);
    ravel_write_controller_free(wc); /* the databases hold theirs */

    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b-free", 6, "1", 1));
    add_level0_files(a, 2);
    assert_true(delayed_rate(a) > 0);
    assert_true(delayed_rate(b) > 0);
    assert_int_equal(tu_files_at_level(b, 0), 0);
    /* the bucket is shared: B's primer makes B's next write wait */
    EXPECT_BUSY_AFTER_PRIMER(b, ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos", 5,
                                          "v", 1));
    tu_expect(b, NULL, "b-nos", NULL);
    /* and A's primer does too */
    EXPECT_BUSY_AFTER_PRIMER(a, ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos", 5,
                                          "v", 1));
    tu_expect(b, NULL, "b-nos", NULL);
    print_controller_stats(b, "database B, slowed by A");
    expect_stats_mention(b, "other-database");

    TU_OK(ravel_compact_range(a, NULL, 0, NULL, 0));
    assert_int_equal(delayed_rate(a), 0);
    assert_int_equal(delayed_rate(b), 0);
    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos", 5, "v", 1));
    TU_OK(ravel_put(a, RAVEL_NO_SLOWDOWN, "a-nos", 5, "v", 1));
    tu_expect(b, NULL, "b-nos", "v");

    add_level0_files(a, 3);
    wait_prop(a, "ravel.is-write-stopped", 1);
    assert_int_equal(tu_prop_u64(b, "ravel.is-write-stopped"), 1);
    TU_EXPECT_RC(RAVEL_BUSY, ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos2", 6,
                                       "v", 1));
    struct blocked_writer w = {.db = b, .key = "b-blocked"};
    pthread_t th;
    pthread_create(&th, NULL, blocked_writer_main, &w);
    expect_blocked(&w, a);
    tu_expect(b, NULL, "b-blocked", NULL);

    /* closing the stalled database withdraws its stop */
    TU_OK(ravel_close(a));
    pthread_join(th, NULL);
    assert_int_equal(w.rc, RAVEL_OK);
    tu_expect(b, NULL, "b-blocked", "waited");
    tu_expect(b, NULL, "b-nos2", NULL);
    assert_int_equal(tu_prop_u64(b, "ravel.is-write-stopped"), 0);
    assert_int_equal(delayed_rate(b), 0);
    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b-after", 7, "v", 1));
    TU_OK(ravel_close(b));
    free(dir_a);
    free(dir_b);
}

/* Two databases with controllers of their own (the default): one's stall
** does not touch the other. */
static void test_own_controllers_independent(void **state)
{
    (void)state;
    char *dir_a = fresh_dir(), *dir_b = fresh_dir();
    ravel_db *a = tu_open_ok(dir_a, STOP);
    ravel_db *b = tu_open_ok(dir_b, STOP);
    add_level0_files(a, 2);
    wait_prop(a, "ravel.is-write-stopped", 1);
    assert_int_equal(tu_prop_u64(b, "ravel.is-write-stopped"), 0);
    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b", 1, "v", 1));
    TU_OK(ravel_close(a));
    TU_OK(ravel_close(b));
    free(dir_a);
    free(dir_b);
}

/* ---------------------------------------------------------------- API */

static void test_controller_api(void **state)
{
    (void)state;
    ravel_write_controller *wc = NULL;
    TU_EXPECT_INVALID(ravel_write_controller_new(0, &wc));
    assert_null(wc);
    TU_EXPECT_INVALID(ravel_write_controller_new(1023, &wc));
    TU_EXPECT_INVALID(ravel_write_controller_new((1ull << 40) + 1, &wc));
    TU_EXPECT_INVALID(ravel_write_controller_new(1024 * 1024, NULL));
    TU_OK(ravel_write_controller_new(1024, &wc));
    ravel_write_controller_free(wc);
    TU_OK(ravel_write_controller_new(1ull << 40, &wc));
    ravel_write_controller_free(NULL);
    TU_EXPECT_INVALID(ravel_options_set_write_controller(NULL, wc));

    /* the options keep the controller alive after the caller's free */
    ravel_options *o = tu_options(NULL);
    TU_OK(ravel_options_set_write_controller(o, wc));
    ravel_write_controller_free(wc);
    char *dir = fresh_dir();
    ravel_db *db = NULL;
    int rc = ravel_open(dir, o, &db);
    if (rc)
        tu_skip_if_no_uring(rc);
    TU_OK(rc);
    tu_put(db, 0, "k", "v");
    TU_OK(ravel_close(db));
    /* cleared again: the database gets one of its own */
    TU_OK(ravel_options_set_write_controller(o, NULL));
    TU_OK(ravel_open(dir, o, &db));
    tu_expect(db, NULL, "k", "v");
    TU_OK(ravel_close(db));
    ravel_options_free(o);

    /* the options of the controller */
    TU_OK(ravel_options_new(&o));
    TU_EXPECT_INVALID(ravel_options_set(o, "delayed_write_rate", "0"));
    TU_OK(ravel_options_set(o, "delayed_write_rate", "1K"));
    TU_OK(ravel_options_set(o, "use_dynamic_delay", "true"));
    TU_OK(ravel_options_set(o, "soft_pending_compaction_bytes_limit", "0"));
    ravel_options_free(o);
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_api),
        cmocka_unit_test(test_stop_until_compacted),
        cmocka_unit_test(test_no_slowdown_in_slowdown),
        cmocka_unit_test(test_own_controllers_independent),
        cmocka_unit_test(test_shared_controller),
        cmocka_unit_test(test_pacing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
