/*
** test_wal_inflight.c -- wal_io=direct keeps several group writes in
** flight and acknowledges writers strictly in log order.
**
** The test hook rv_test_wal_hold_* (util/fault.h) holds back the
** completion of one write while later writes complete.  Then:
**   - no writer whose record comes after the held write returns, sync or
**     not, though the WAL has seen their writes complete (ravel.stats
**     counts them);
**   - releasing it with its real result lets every one of them return
**     RAVEL_OK, and a reopen finds them all;
**   - releasing it as a failure (EIO) fails it and every later writer with
**     RAVEL_IOERR, stops writes with the reason, and never acknowledges
**     past the hole; writers before it keep their RAVEL_OK; after reopen
**     the earlier writes are all there and what is there is a prefix of
**     the log.
** And recycled segments (recycle_log_file_num): reused constantly, their
** earlier lives' records are never replayed, in any recovery mode; and a
** segment no record reached still gets its header.
** Runs with wal_io=direct only (skipped, 77, where O_DIRECT is refused).
*/
#include "crash_harness.h"
#include "util/fault.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LATER 6 /* writers after the held one */

static int db_counter;

struct writer {
    ravel_db *db;
    char key[32];
    int sync;
    pthread_t thread;
    _Atomic int done;
    int rc;
    char msg[512];  /* its ravel_errmsg() when it failed */
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    w->rc = ravel_put(w->db, w->sync ? RAVEL_SYNC : 0, w->key, strlen(w->key),
                      w->key, strlen(w->key));
    if (w->rc != RAVEL_OK)
        snprintf(w->msg, sizeof w->msg, "%s", ravel_errmsg());
    atomic_store(&w->done, 1);
    return NULL;
}

static void writer_start(struct writer *w, ravel_db *db, const char *key,
                         int sync)
{
    memset(w, 0, sizeof *w);
    w->db = db;
    w->sync = sync;
    snprintf(w->key, sizeof w->key, "%s", key);
    assert_int_equal(pthread_create(&w->thread, NULL, writer_main, w), 0);
}

static void nap(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

/* The number of appends the WAL has submitted (ravel.stats "wal:" line). */
static uint64_t wal_appends(ravel_db *db)
{
    char *s = tu_prop(db, "ravel.stats");
    const char *p = strstr(s, " appends, ");
    assert_non_null(p);
    while (p > s && p[-1] != ' ')
        p--;
    uint64_t n = strtoull(p, NULL, 10);
    ravel_free(s);
    return n;
}

/* Opens a fresh database with wal_io=direct, or exits 77. */
static ravel_db *open_direct(char **dir_out)
{
    char *dir = tu_path("inflight-%d", db_counter++);
    ravel_db *db = NULL;
    int rc = tu_open(dir, "wal_io=direct", &db);
    if (rc != RAVEL_OK) {
        /* tu_skip_if_no_uring knows only the run's own wal_io */
        if (strstr(ravel_errmsg(), "O_DIRECT") ||
            strstr(ravel_errmsg(), "io_uring")) {
            printf("SKIP: wal_io=direct cannot be used here: %s\n",
                   ravel_errmsg());
            exit(77);
        }
        fail_msg("open %s: %s", dir, ravel_errmsg());
    }
    char *io = tu_prop(db, "ravel.wal-io");
    assert_true(strncmp(io, "direct", 6) == 0);
    ravel_free(io);
    *dir_out = dir;
    return db;
}

/* Holds the next write's completion, starts the writer A whose write it
** is, waits until it is held, then starts LATER more writers (sync and
** not, alternating) and waits until the WAL has submitted all of them.
** Returns with none of A and the later ones done. */
static void hold_and_queue(ravel_db *db, struct writer *a,
                           struct writer *later)
{
    rv_test_wal_hold_arm();
    writer_start(a, db, "held", 1);
    while (!rv_test_wal_hold_waiting())
        nap();
    uint64_t before = wal_appends(db);
    for (int i = 0; i < LATER; i++) {
        char key[16];
        snprintf(key, sizeof key, "later%d", i);
        writer_start(&later[i], db, key, i % 2 == 0);
        /* one at a time: each in a write of its own, after the held one */
        while (wal_appends(db) < before + (uint64_t)i + 1)
            nap();
    }
    /* Their writes were submitted; let them complete and be reaped. */
    for (int k = 0; k < 200; k++)
        nap();
    assert_false(atomic_load(&a->done));
    for (int i = 0; i < LATER; i++)
        if (atomic_load(&later[i].done))
            fail_msg("writer %s returned (rc %d) while the write before "
                     "it is still in flight", later[i].key, later[i].rc);
}

static void expect_key(ravel_db *db, const char *key, int present)
{
    void *val = NULL;
    size_t len = 0;
    int rc = ravel_get(db, NULL, key, strlen(key), &val, &len);
    if (present) {
        if (rc != RAVEL_OK)
            fail_msg("%s is missing after reopen: %s", key, ravel_errstr(rc));
        assert_memory_equal(val, key, len);
        ravel_free(val);
    } else {
        TU_EXPECT_RC(RAVEL_NOTFOUND, rc);
    }
}

static void expect_key_value(ravel_db *db, const char *key, const char *want)
{
    void *val = NULL;
    size_t len = 0;
    int rc = ravel_get(db, NULL, key, strlen(key), &val, &len);
    if (rc != RAVEL_OK || len != strlen(want) || memcmp(val, want, len) != 0)
        fail_msg("%s: %s, want %s", key, ravel_errstr(rc), want);
    ravel_free(val);
}

static void test_held_write_orders_acknowledgements(void **state)
{
    (void)state;
    char *dir;
    ravel_db *db = open_direct(&dir);
    TU_OK(ravel_put(db, RAVEL_SYNC, "before", 6, "before", 6));
    struct writer a, later[LATER];
    hold_and_queue(db, &a, later);

    rv_test_wal_hold_release(0); /* the kernel's own result */
    pthread_join(a.thread, NULL);
    TU_OK(a.rc);
    for (int i = 0; i < LATER; i++) {
        pthread_join(later[i].thread, NULL);
        TU_OK(later[i].rc);
    }
    char *st = tu_prop(db, "ravel.stats");
    printf("# %s", strstr(st, "wal direct:"));
    ravel_free(st);
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, "wal_io=direct");
    expect_key(db, "before", 1);
    expect_key(db, "held", 1);
    for (int i = 0; i < LATER; i++)
        expect_key(db, later[i].key, 1);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_held_write_failure_fails_later_writers(void **state)
{
    (void)state;
    char *dir;
    ravel_db *db = open_direct(&dir);
    TU_OK(ravel_put(db, RAVEL_SYNC, "before", 6, "before", 6));
    TU_OK(ravel_put(db, 0, "before2", 7, "before2", 7));
    struct writer a, later[LATER];
    hold_and_queue(db, &a, later);

    rv_test_wal_hold_release(-EIO); /* as if the device had failed it */
    pthread_join(a.thread, NULL);
    assert_int_equal(a.rc, RAVEL_IOERR);
    printf("# the held writer: %s\n", a.msg);
    assert_non_null(strstr(a.msg, "Input/output error"));
    for (int i = 0; i < LATER; i++) {
        pthread_join(later[i].thread, NULL);
        if (later[i].rc != RAVEL_IOERR)
            fail_msg("%s, written after the failed write, got %s",
                     later[i].key, ravel_errstr(later[i].rc));
        assert_non_null(strstr(later[i].msg, "Input/output error"));
    }
    char *why = tu_prop(db, "ravel.read-only-reason");
    printf("# ravel.read-only-reason: %s\n", why);
    assert_non_null(strstr(why, "direct write"));
    ravel_free(why);
    int rc = ravel_put(db, 0, "after", 5, "after", 5);
    assert_true(rc == RAVEL_READONLY || rc == RAVEL_IOERR);
    /* reads go on */
    void *val = NULL;
    size_t len;
    TU_OK(ravel_get(db, NULL, "before", 6, &val, &len));
    ravel_free(val);
    ravel_close(db); /* the failure was reported already */

    /* The held write never reached the file as far as the WAL knows; the
    ** later ones did.  Whatever replay keeps must be a prefix: a later
    ** key present means every key before it is present too. */
    db = tu_open_ok(dir, "wal_io=direct");
    expect_key(db, "before", 1);
    expect_key(db, "before2", 1);
    int seen_gap = 0;
    void *v = NULL;
    int held = ravel_get(db, NULL, "held", 4, &v, &len) == RAVEL_OK;
    if (held)
        ravel_free(v);
    seen_gap = !held;
    for (int i = 0; i < LATER; i++) {
        int here = ravel_get(db, NULL, later[i].key, strlen(later[i].key), &v,
                             &len) == RAVEL_OK;
        if (here)
            ravel_free(v);
        if (here && seen_gap)
            fail_msg("%s is there after reopen, but a write before it is "
                     "not: not a prefix of the log", later[i].key);
        seen_gap |= !here;
    }
    printf("# after reopen: held write %s\n", held ? "present" : "absent");
    TU_OK(ravel_close(db));
    free(dir);
}

/* A number in ravel.stats' "wal direct:" line: the one before WORD. */
static uint64_t direct_stat(ravel_db *db, const char *word)
{
    char *s = tu_prop(db, "ravel.stats");
    const char *line = strstr(s, "wal direct:");
    assert_non_null(line);
    const char *p = strstr(line, word);
    assert_non_null(p);
    while (p > line && p[-1] == ' ')
        p--;
    while (p > line && p[-1] >= '0' && p[-1] <= '9')
        p--;
    uint64_t n = strtoull(p, NULL, 10);
    ravel_free(s);
    return n;
}

/* Recycled segments: with small memtables and recycle_log_file_num, the
** WAL reuses flushed segments (ravel.stats counts them), whose earlier
** lives' records lie past the new data.  Keys are overwritten and deleted
** so that replaying one of those would show: after a reopen in every
** recovery mode each key holds its last value or is deleted. */
static void test_recycled_segments_replay_only_their_own(void **state)
{
    (void)state;
    static const char *modes[] = {
        "tolerate_corrupted_tail_records", "absolute_consistency",
        "point_in_time", "skip_any_corrupted_records",
    };
    char *dir = tu_path("recycle-%d", db_counter++);
    const char *opts = "wal_io=direct;recycle_log_file_num=3;"
                       "write_buffer_size=16K";
    ravel_db *db = NULL;
    int rc = tu_open(dir, opts, &db);
    if (rc != RAVEL_OK && strstr(ravel_errmsg(), "O_DIRECT")) {
        printf("SKIP: %s\n", ravel_errmsg());
        exit(77);
    }
    TU_OK(rc);
    enum { KEYS = 64, ROUNDS = 60 };
    int last[KEYS]; /* last round written, -1: deleted */
    for (int k = 0; k < KEYS; k++)
        last[k] = -1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < KEYS; k++) {
            char key[16], val[64];
            snprintf(key, sizeof key, "k%03d", k);
            if ((k + r) % 7 == 0) {
                TU_OK(ravel_delete(db, r % 2 ? RAVEL_SYNC : 0, key,
                                   strlen(key)));
                last[k] = -1;
            } else {
                snprintf(val, sizeof val, "round-%03d-key-%03d", r, k);
                TU_OK(ravel_put(db, r % 2 ? RAVEL_SYNC : 0, key, strlen(key),
                                val, strlen(val)));
                last[k] = r;
            }
        }
    }
    uint64_t recycled = direct_stat(db, " recycled");
    printf("# %" PRIu64 " segments recycled\n", recycled);
    assert_true(recycled > 0);
    TU_OK(ravel_close(db));
    for (int m = 0; m < 4; m++) {
        char o[256];
        snprintf(o, sizeof o, "%s;wal_recovery_mode=%s", opts, modes[m]);
        db = tu_open_ok(dir, o);
        for (int k = 0; k < KEYS; k++) {
            char key[16], want[64];
            snprintf(key, sizeof key, "k%03d", k);
            void *val = NULL;
            size_t len = 0;
            rc = ravel_get(db, NULL, key, strlen(key), &val, &len);
            if (last[k] < 0) {
                if (rc != RAVEL_NOTFOUND)
                    fail_msg("%s: %s is back after its delete (%.*s)",
                             modes[m], key, (int)len, (char *)val);
                continue;
            }
            snprintf(want, sizeof want, "round-%03d-key-%03d", last[k], k);
            if (rc != RAVEL_OK || len != strlen(want) ||
                memcmp(val, want, len) != 0)
                fail_msg("%s: %s is %.*s, want %s", modes[m], key,
                         (int)len, val ? (char *)val : "", want);
            ravel_free(val);
        }
        TU_OK(ravel_close(db));
    }
    free(dir);
}

/* A segment switched away from before any record reached it -- a flush
** whose memtable held only RAVEL_NO_WAL writes -- gets its header anyway:
** otherwise it stays a spare (all zeros) in the middle of the log and the
** next open refuses the hole.  Each round ends the child with _exit, no
** close; the race it needs (the flush's switch before the next write)
** comes in about one round of five. */
struct unwritten_args {
    char dir[PATH_MAX];
};

static void test_unwritten_segment_gets_its_header(void **state)
{
    (void)state;
    for (int round = 0; round < 12; round++) {
        char *dir = tu_path("unwritten-%d", db_counter++);
        /* a fresh process (exec, not a bare fork: sanitizers refuse
        ** threads in a child forked from a threaded process) */
        struct unwritten_args ua;
        snprintf(ua.dir, sizeof ua.dir, "%s", dir);
        struct crash_child c = {.on_msg = NULL};
        snprintf(c.label, sizeof c.label, "round %d", round);
        int status = crash_run(&c, "unwritten", &ua, sizeof ua, 120000);
        if (status == 77) {
            printf("SKIP: wal_io=direct cannot be used here\n");
            exit(77);
        }
        assert_int_equal(status, 0);
        ravel_db *db = NULL;
        int rc = tu_open(dir, "wal_io=direct", &db);
        if (rc != RAVEL_OK)
            fail_msg("round %d: reopen: %s", round, ravel_errmsg());
        expect_key_value(db, "a", "1");
        expect_key_value(db, "d", "4");
        TU_OK(ravel_close(db));
        free(dir);
    }
}

/* The child of test_unwritten_segment_gets_its_header: the writes, then
** _exit without a close. */
static int unwritten_child(const void *arg)
{
    const char *dir = ((const struct unwritten_args *)arg)->dir;
    ravel_db *db = NULL;
    if (tu_open(dir, "wal_io=direct", &db) != RAVEL_OK)
        _exit(77);
    int rc = ravel_put(db, 0, "a", 1, "1", 1);
    rc |= ravel_put(db, RAVEL_NO_WAL, "b", 1, "2", 1);
    rc |= ravel_flush(db, RAVEL_FLUSH_NO_WAIT);
    rc |= ravel_put(db, RAVEL_NO_WAL, "c", 1, "3", 1);
    rc |= ravel_flush(db, RAVEL_FLUSH_NO_WAIT);
    rc |= ravel_put(db, RAVEL_SYNC, "d", 1, "4", 1);
    _exit(rc == RAVEL_OK ? 0 : 1);
}

static const struct crash_role roles[] = {
    {"unwritten", unwritten_child, sizeof(struct unwritten_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_write_orders_acknowledgements),
        cmocka_unit_test(test_held_write_failure_fails_later_writers),
        cmocka_unit_test(test_recycled_segments_replay_only_their_own),
        cmocka_unit_test(test_unwritten_segment_gets_its_header),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
