/*
** test_ordering_crash.c -- kill -9 in every ordering mode
** (docs/ordering.md): every acknowledged write is there after the reopen,
** and no batch is ever partly there.
**
** Each round, a child process (this program, re-executed: crash_harness.h)
** opens the database in the test's mode with 64K memtables (switches and
** flushes all the time) and some inserts slowed after their first entry
** (rv_test_insert_delay: kills land in the middle of inserts, with
** batches published but half inserted in the unordered mode, inserted but
** not committed with write_prepared).  32 writer threads each write
** batches that set the thread's SET_KEYS keys to one version and put one
** log key of that version (one batch in 16 with RAVEL_SYNC), and report
** each acknowledged batch through a pipe.  The parent kills the child at a
** random moment (one round in five during its start, i.e. its recovery),
** reopens the database in the same mode and checks, per thread:
**   - the set's keys all hold one version, or are all absent;
**   - that version is no older than the newest acknowledged, and its log
**     key is there (the batch is whole);
**   - every acknowledged batch's log key is there;
**   - the one or two batches after the last acknowledged (written, maybe
**     acknowledged, not reported) are whole if there at all, and nothing
**     after them exists.
** Writes without RAVEL_SYNC survive kill -9 too (README, Durability).  The
** rounds share one database; at the end it is reopened in the default
** mode and every round's acknowledged batches are checked again.
**
** RAVEL_TEST_ORDERING_CRASH_ROUNDS (default 8) sets the rounds per mode;
** RAVEL_TEST_SEED replays the kill moments.
*/
#include "crash_harness.h"
#include "util/fault.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRITERS 32
#define SET_KEYS 6
#define MAX_ROUNDS 50
#define MEMTABLES "write_buffer_size=64K;target_file_size_base=64K"

struct mode {
    const char *name;     /* ravel.write-ordering */
    const char *opts;
};

static const struct mode modes[] = {
    {"ordered", ""},
    {"unordered", "unordered_write=true"},
    {"in-order-publication",
     "unordered_write=true;in_order_publication=true"},
    {"write-prepared",
     "unordered_write=true;two_write_queues=true;"
     "write_policy=write_prepared"},
    {"write-prepared", /* the commit table wraps around all the time */
     "unordered_write=true;two_write_queues=true;"
     "write_policy=write_prepared;commit_table_size=16"},
};

/* The child's one message: batch I of THREAD acknowledged.  Its open is
** reported by crash_child_opened (with its ordering mode), a failure by
** crash_child_fail. */
struct msg {
    uint32_t thread;
    uint32_t i;
};

static void set_key(char *buf, size_t n, int t, int k)
{
    snprintf(buf, n, "set-t%02d-k%d", t, k);
}

/* A batch's version: fixed-width numbers, so versions compare as strings
** in the order they were written. */
static void version_of(char *buf, size_t n, int round, uint32_t i)
{
    snprintf(buf, n, "r%03d-i%08u", round, i);
}

static void log_key(char *buf, size_t n, int t, const char *version)
{
    snprintf(buf, n, "log-t%02d-%s", t, version);
}

/* ------------------------------------------------------------ the child */

struct child_args {
    char dir[PATH_MAX];
    int round;
    int mode; /* in modes[] */
};

static int child_round;
static ravel_db *child_db;

static void child_fail(uint32_t t, const char *what, int rc)
{
    crash_child_fail("thread %u: %s: %s: %s", t, what, ravel_errstr(rc),
                     ravel_errmsg());
}

static void *child_writer(void *p)
{
    int t = (int)(intptr_t)p;
    ravel_batch *b = NULL;
    int rc = ravel_batch_new(&b);
    if (rc)
        child_fail((uint32_t)t, "batch_new", rc);
    char key[48], version[24], val[200];
    for (uint32_t i = 1;; i++) {
        version_of(version, sizeof version, child_round, i);
        /* the version, then padding so that records vary in size */
        int vl = snprintf(val, sizeof val, "%s-%0*d", version,
                          (int)(i * 7 % 150), 0);
        ravel_batch_clear(b);
        for (int k = 0; k < SET_KEYS && !rc; k++) {
            set_key(key, sizeof key, t, k);
            rc = ravel_batch_put(b, key, strlen(key), val, (size_t)vl);
        }
        log_key(key, sizeof key, t, version);
        if (!rc)
            rc = ravel_batch_put(b, key, strlen(key), val, (size_t)vl);
        if (rc)
            child_fail((uint32_t)t, "batch_put", rc);
        rc = ravel_write(child_db, i % 16 == 0 ? RAVEL_SYNC : 0, b);
        if (rc)
            child_fail((uint32_t)t, "write", rc);
        struct msg m = {(uint32_t)t, i};
        crash_send(&m, sizeof m);
    }
    return NULL;
}

static int child_main(const void *arg)
{
    const struct child_args *ca = arg;
    const char *dir = ca->dir;
    int mode = ca->mode;
    child_round = ca->round;
    char extra[300];
    snprintf(extra, sizeof extra, "%s;" MEMTABLES, modes[mode].opts);
    ravel_options *o = NULL;
    int rc = tu_options_try(extra, &o);
    if (rc)
        child_fail(0, "options", rc);
    /* one insert in 7 sleeps 300 us after its first entry */
    rv_test_insert_delay(7, 300);
    rc = ravel_open(dir, o, &child_db);
    if (rc)
        child_fail(0, "open", rc);
    ravel_options_free(o);
    crash_child_opened(child_db);
    pthread_t th;
    for (int t = 0; t < WRITERS; t++)
        if (pthread_create(&th, NULL, child_writer, (void *)(intptr_t)t))
            child_fail(0, "pthread_create", 0);
    crash_child_park();
}

/* ----------------------------------------------------------- the parent */

/* What the parent knows: per round and thread, the newest batch
** acknowledged (batches 1..acked were all acknowledged: a thread writes
** one at a time). */
struct acked {
    uint32_t acked[MAX_ROUNDS][WRITERS];
    char child_mode[64]; /* the note of its open: ravel.write-ordering */
    uint64_t total;
    int round; /* the child's */
};

static void handle_msg(struct crash_child *c, const void *msg)
{
    struct acked *a = c->ctx;
    int round = a->round;
    const struct msg *m = msg;
    if (m->thread >= WRITERS || m->i != a->acked[round][m->thread] + 1)
        fail_msg("round %d: garbled message from the child (thread %u, "
                 "batch %u)", round, m->thread, m->i);
    a->acked[round][m->thread] = m->i;
    a->total++;
}

/* KEY's value into BUF (CAP bytes), "" if absent. */
static void read_value(ravel_db *db, const char *key, char *buf, size_t cap)
{
    size_t vlen = 0;
    int rc = ravel_get_into(db, NULL, key, strlen(key), buf, cap - 1, &vlen);
    if (rc == RAVEL_NOTFOUND) {
        buf[0] = '\0';
        return;
    }
    if (rc != RAVEL_OK)
        fail_msg("get %s: %s: %s", key, ravel_errstr(rc), ravel_errmsg());
    assert_true(vlen < cap);
    buf[vlen] = '\0';
}

/* Thread T's set: all its keys hold one value (returned in VAL), or all
** are absent (VAL ""). */
static void read_whole_set(ravel_db *db, int t, char *val, size_t cap)
{
    char key[48], other[200];
    set_key(key, sizeof key, t, 0);
    read_value(db, key, val, cap);
    for (int k = 1; k < SET_KEYS; k++) {
        set_key(key, sizeof key, t, k);
        read_value(db, key, other, sizeof other);
        if (strcmp(other, val) != 0)
            fail_msg("thread %d's batch is partial: key 0 holds '%.14s', key "
                     "%d '%.14s'", t, val, k, other);
    }
}

/* The newest version acknowledged for thread T in rounds 0..ROUND, or ""
** (into VERSION, 24 bytes). */
static void newest_acked(const struct acked *a, int round, int t,
                         char *version)
{
    version[0] = '\0';
    for (int r = round; r >= 0; r--) {
        if (a->acked[r][t]) {
            version_of(version, 24, r, a->acked[r][t]);
            return;
        }
    }
}

/* Every acknowledged batch of ROUND has its log key, with its value. */
static void check_round_logged(ravel_db *db, const struct acked *a,
                               int round)
{
    char version[24], key[48], val[200];
    for (int t = 0; t < WRITERS; t++) {
        for (uint32_t i = 1; i <= a->acked[round][t]; i++) {
            version_of(version, sizeof version, round, i);
            log_key(key, sizeof key, t, version);
            read_value(db, key, val, sizeof val);
            if (strncmp(val, version, strlen(version)) != 0)
                fail_msg("round %d, thread %d: acknowledged batch %s is "
                         "missing (log key holds '%s')", round, t, version,
                         val);
        }
    }
}

/* The checks of the file comment, after the kill of ROUND. */
static void verify_after_kill(ravel_db *db, const struct acked *a, int round)
{
    char val[200], newest[24], version[24], key[48], logged[200];
    check_round_logged(db, a, round);
    for (int t = 0; t < WRITERS; t++) {
        read_whole_set(db, t, val, sizeof val);
        newest_acked(a, round, t, newest);
        if (strncmp(val, newest, strlen(newest)) < 0 || (newest[0] && !val[0]))
            fail_msg("round %d, thread %d: the set holds '%.14s', older than "
                     "the acknowledged %s", round, t, val, newest);
        if (val[0]) {
            snprintf(version, sizeof version, "%.14s", val);
            log_key(key, sizeof key, t, version);
            read_value(db, key, logged, sizeof logged);
            if (strcmp(logged, val) != 0)
                fail_msg("round %d, thread %d: the set holds %s but that "
                         "batch's log key holds '%s': partial batch", round,
                         t, version, logged);
        }
        /* beyond the last reported batch: whole if there, and at most
        ** two (acknowledged but not reported; in flight) */
        for (uint32_t d = 1; d <= 3; d++) {
            version_of(version, sizeof version, round,
                       a->acked[round][t] + d);
            log_key(key, sizeof key, t, version);
            read_value(db, key, logged, sizeof logged);
            if (!logged[0])
                continue;
            if (d == 3)
                fail_msg("round %d, thread %d: batch %s exists, but the "
                         "child reported only up to %u", round, t, version,
                         a->acked[round][t]);
            if (strncmp(val, version, strlen(version)) < 0)
                fail_msg("round %d, thread %d: batch %s's log key is there "
                         "but its set holds the older '%.14s': partial batch",
                         round, t, version, val);
        }
    }
}

/* Runs the child of ROUND in mode MODE, kills it at a random moment;
** returns whether it had opened the database. */
static int run_child(const char *dir, int round, int mode, struct acked *a,
                     uint64_t *rng)
{
    struct child_args ca = {.round = round, .mode = mode};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    struct crash_child c = {.on_msg = handle_msg,
                            .msg_size = sizeof(struct msg), .ctx = a};
    snprintf(c.label, sizeof c.label, "round %d", round);
    a->round = round;
    uint64_t r = tu_rand(rng);
    int early = r % 5 == 0;
    uint64_t delay = early ? (r >> 8) % 40 : 10 + (r >> 8) % 150;
    crash_spawn(&c, "writer", &ca, sizeof ca);
    crash_kill_after(&c, early ? CRASH_FROM_SPAWN : CRASH_FROM_OPEN, delay);
    snprintf(a->child_mode, sizeof a->child_mode, "%s", c.note);
    printf("# round %d: killed %" PRIu64 " ms after %s\n", round, delay,
           early ? "the start" : "the open");
    return c.opened;
}

static void kill_rounds(int mode)
{
    int rounds = (int)tu_env_u64("RAVEL_TEST_ORDERING_CRASH_ROUNDS", 8);
    if (rounds > MAX_ROUNDS)
        rounds = MAX_ROUNDS;
    uint64_t rng = tu_seed();
    char *dir = tu_path("kill-mode%d", mode);
    char opts[300];
    snprintf(opts, sizeof opts, "%s;" MEMTABLES, modes[mode].opts);
    struct acked *a = calloc(1, sizeof *a);
    assert_non_null(a);
    int opened_rounds = 0;
    for (int round = 0; round < rounds; round++) {
        uint64_t before = a->total;
        int opened = run_child(dir, round, mode, a, &rng);
        opened_rounds += opened;
        ravel_db *db = tu_open_ok(dir, opts);
        char *name = tu_prop(db, "ravel.write-ordering");
        assert_string_equal(name, modes[mode].name);
        if (opened)
            assert_string_equal(a->child_mode, modes[mode].name);
        ravel_free(name);
        verify_after_kill(db, a, round);
        printf("#   %" PRIu64 " batches acknowledged, all there, none "
               "partial\n", a->total - before);
        TU_OK(ravel_close(db));
    }
    printf("# %s: %" PRIu64 " acknowledged batches over %d rounds (%d "
           "opened)\n", modes[mode].opts, a->total, rounds, opened_rounds);
    assert_true(a->total > 0);

    /* the default mode reads what every mode wrote */
    ravel_db *db = tu_open_ok(dir, MEMTABLES);
    for (int round = 0; round < rounds; round++)
        check_round_logged(db, a, round);
    char val[200];
    for (int t = 0; t < WRITERS; t++)
        read_whole_set(db, t, val, sizeof val);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
    free(a);
}

static void test_kill_ordered(void **state)
{
    (void)state;
    kill_rounds(0);
}

static void test_kill_unordered(void **state)
{
    (void)state;
    kill_rounds(1);
}

static void test_kill_in_order_publication(void **state)
{
    (void)state;
    kill_rounds(2);
}

static void test_kill_write_prepared(void **state)
{
    (void)state;
    kill_rounds(3);
}

static void test_kill_write_prepared_tiny_commit_table(void **state)
{
    (void)state;
    kill_rounds(4);
}

static const struct crash_role roles[] = {
    {"writer", child_main, sizeof(struct child_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_ordered),
        cmocka_unit_test(test_kill_unordered),
        cmocka_unit_test(test_kill_in_order_publication),
        cmocka_unit_test(test_kill_write_prepared),
        cmocka_unit_test(test_kill_write_prepared_tiny_commit_table),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
