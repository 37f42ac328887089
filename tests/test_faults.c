/*
** test_faults.c -- a failed WAL write or fdatasync is never reported as
** success.  Through the fault hook of lib/fault.h (rv_fault_arm, in the
** static library), the next WAL write or sync fails with EIO on either I/O
** path.  Then: the writers concerned get RAVEL_IOERR (never RAVEL_OK), later
** writes get RAVEL_READONLY, reads still work, ravel.read_only_reason says
** why, and after close + reopen everything acknowledged before is there.
*/
#include "testutil.h"
#include "util/fault.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int db_counter;

static void disarm(void)
{
    rv_fault_arm(RV_FAULT_WAL_WRITE, -1, 0);
    rv_fault_arm(RV_FAULT_WAL_SYNC, -1, 0);
}

static int teardown(void **state)
{
    (void)state;
    disarm();
    return 0;
}

static void expect_read_only_reason(ravel_db *db)
{
    char *why = tu_prop(db, "ravel.read_only_reason");
    if (!why[0])
        fail_msg("writes are refused but ravel.read_only_reason is empty");
    printf("# ravel.read_only_reason: %s\n", why);
    ravel_free(why);
}

static void expect_writable(ravel_db *db)
{
    char *why = tu_prop(db, "ravel.read_only_reason");
    assert_string_equal(why, "");
    ravel_free(why);
}

/* The message of the writer whose I/O failed names the error. */
static void expect_eio_message(void)
{
    const char *m = ravel_errmsg();
    if (!strstr(m, "Input/output error") && !strstr(m, "errno 5")
        && !strstr(m, "EIO"))
        fail_msg("the I/O error message does not name the errno: %s", m);
}

/* Every write is refused with RAVEL_READONLY; reads are served. */
static void expect_read_only(ravel_db *db, const char *present_key,
                             const char *present_val)
{
    TU_EXPECT_RC(RAVEL_READONLY, ravel_put(db, 0, "later", 5, "x", 1));
    TU_EXPECT_RC(RAVEL_READONLY,
                 ravel_put(db, RAVEL_SYNC, "later", 5, "x", 1));
    TU_EXPECT_RC(RAVEL_READONLY,
                 ravel_put(db, RAVEL_NO_WAL, "later", 5, "x", 1));
    TU_EXPECT_RC(RAVEL_READONLY, ravel_delete(db, 0, present_key,
                                              strlen(present_key)));
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "later2", 6, "y", 1));
    TU_EXPECT_RC(RAVEL_READONLY, ravel_write(db, RAVEL_SYNC, b));
    ravel_batch_free(b);

    /* Flushing reports the failure too. */
    int rc = ravel_flush_wal(db, 0);
    if (rc != RAVEL_IOERR && rc != RAVEL_READONLY)
        fail_msg("ravel_flush_wal(db, 0) after a failure: %s",
                 ravel_errstr(rc));
    rc = ravel_flush_wal(db, 1);
    if (rc != RAVEL_IOERR && rc != RAVEL_READONLY)
        fail_msg("ravel_flush_wal(db, 1) after a failure: %s",
                 ravel_errstr(rc));

    tu_expect(db, NULL, present_key, present_val);
    tu_expect(db, NULL, "later", NULL);
    tu_expect(db, NULL, "later2", NULL);
    ravel_snapshot *s = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s));
    tu_expect(db, s, present_key, present_val);
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, s, &it));
    TU_OK(ravel_iter_seek(it, present_key, strlen(present_key)));
    assert_int_equal(ravel_iter_valid(it), 1);
    ravel_iter_free(it);
    TU_OK(ravel_snapshot_release(db, s));
    expect_read_only_reason(db);
}

/* After a fault, close may report the I/O error again; either way the
** handle is gone (the reopen that follows checks the LOCK was released). */
static void close_after_fault(ravel_db *db)
{
    int rc = ravel_close(db);
    if (rc != RAVEL_OK && rc != RAVEL_IOERR)
        fail_msg("close after an I/O error: %s: %s", ravel_errstr(rc),
                 ravel_errmsg());
}

static void put_keys(ravel_db *db, const char *prefix, int n, int flags)
{
    char key[32], val[32];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s-%03d", prefix, i);
        snprintf(val, sizeof val, "val-%s-%d", prefix, i);
        tu_put(db, (i % 2) ? flags : flags & ~RAVEL_SYNC, key, val);
    }
}

static void expect_keys(ravel_db *db, const char *prefix, int n)
{
    char key[32], val[32];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s-%03d", prefix, i);
        snprintf(val, sizeof val, "val-%s-%d", prefix, i);
        tu_expect(db, NULL, key, val);
    }
}

/* Reopens and checks the acknowledged keys, and that writes work again. */
static void reopen_and_check(const char *dir, const char *prefix, int n)
{
    disarm();
    ravel_db *db = tu_open_ok(dir, NULL);
    expect_keys(db, prefix, n);
    expect_writable(db);
    tu_put(db, RAVEL_SYNC, "after-reopen", "ok");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    expect_keys(db, prefix, n);
    tu_expect(db, NULL, "after-reopen", "ok");
    TU_OK(ravel_close(db));
}

/* ------------------------------------------------------ single writer */

static void test_wal_write_fault(void **state)
{
    (void)state;
    for (int flags = 0; flags <= RAVEL_SYNC; flags += RAVEL_SYNC) {
        char *dir = tu_path("write-fault-%d", db_counter++);
        ravel_db *db = tu_open_ok(dir, NULL);
        put_keys(db, "acked", 20, RAVEL_SYNC);
        expect_writable(db);
        uint64_t seq = tu_prop_u64(db, "ravel.last_sequence");

        rv_fault_arm(RV_FAULT_WAL_WRITE, 0, EIO);
        TU_EXPECT_RC(RAVEL_IOERR, ravel_put(db, flags, "failed", 6, "x", 1));
        expect_eio_message();
        disarm();
        /* Read-only until reopened, even with the fault gone. */
        expect_read_only(db, "acked-005", "val-acked-5");
        expect_keys(db, "acked", 20);
        assert_true(tu_prop_u64(db, "ravel.last_sequence") >= seq);
        close_after_fault(db);
        reopen_and_check(dir, "acked", 20);
        free(dir);
    }
}

/* The fault strikes later: after SKIP successful writes. */
static void test_wal_write_fault_after_skip(void **state)
{
    (void)state;
    char *dir = tu_path("write-fault-skip-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, NULL);
    rv_fault_arm(RV_FAULT_WAL_WRITE, 10, EIO);
    char key[32], val[32];
    int ok = 0, rc = RAVEL_OK;
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "acked-%03d", i);
        snprintf(val, sizeof val, "val-acked-%d", i);
        rc = ravel_put(db, i % 3 == 0 ? RAVEL_SYNC : 0, key, strlen(key),
                       val, strlen(val));
        if (rc != RAVEL_OK)
            break;
        ok++;
    }
    assert_int_equal(rc, RAVEL_IOERR);
    assert_int_equal(ok, 10);
    expect_read_only(db, "acked-003", "val-acked-3");
    close_after_fault(db);
    reopen_and_check(dir, "acked", ok);
    free(dir);
}

static void test_wal_sync_fault(void **state)
{
    (void)state;
    char *dir = tu_path("sync-fault-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, NULL);
    put_keys(db, "acked", 20, RAVEL_SYNC);

    rv_fault_arm(RV_FAULT_WAL_SYNC, 0, EIO);
    /* A write without sync waits for no fdatasync: it succeeds. */
    tu_put(db, 0, "nosync", "acknowledged");
    TU_EXPECT_RC(RAVEL_IOERR,
                 ravel_put(db, RAVEL_SYNC, "failed", 6, "x", 1));
    expect_eio_message();
    disarm();
    expect_read_only(db, "acked-007", "val-acked-7");
    tu_expect(db, NULL, "nosync", "acknowledged");
    close_after_fault(db);
    reopen_and_check(dir, "acked", 20);
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "nosync", "acknowledged");
    TU_OK(ravel_close(db));
    free(dir);
}

/* A failed sync of a batch: the whole batch is reported failed. */
static void test_wal_sync_fault_batch(void **state)
{
    (void)state;
    char *dir = tu_path("sync-fault-batch-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, NULL);
    put_keys(db, "acked", 5, RAVEL_SYNC);
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    for (int i = 0; i < 50; i++) {
        char key[16];
        snprintf(key, sizeof key, "batch-%02d", i);
        TU_OK(ravel_batch_put(b, key, strlen(key), "v", 1));
    }
    rv_fault_arm(RV_FAULT_WAL_SYNC, 0, EIO);
    TU_EXPECT_RC(RAVEL_IOERR, ravel_write(db, RAVEL_SYNC, b));
    TU_EXPECT_RC(RAVEL_READONLY, ravel_write(db, RAVEL_SYNC, b));
    ravel_batch_free(b);
    expect_read_only(db, "acked-001", "val-acked-1");
    close_after_fault(db);
    reopen_and_check(dir, "acked", 5);
    free(dir);
}

/* Writes without sync, then ravel_flush_wal(db, 1) whose fdatasync fails:
** the flush reports RAVEL_IOERR, and writes are refused after it. */
static void test_flush_wal_sync_fault(void **state)
{
    (void)state;
    char *dir = tu_path("flush-fault-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, NULL);
    put_keys(db, "acked", 20, 0);
    TU_OK(ravel_flush_wal(db, 1));
    tu_put(db, 0, "unsynced", "acknowledged");
    rv_fault_arm(RV_FAULT_WAL_SYNC, 0, EIO);
    TU_EXPECT_RC(RAVEL_IOERR, ravel_flush_wal(db, 1));
    expect_eio_message();
    disarm();
    expect_read_only(db, "acked-010", "val-acked-10");
    close_after_fault(db);
    reopen_and_check(dir, "acked", 20);
    free(dir);
}

/* ---------------------------------------------- concurrent writers */

#define NTHREADS 8

struct conc {
    ravel_db *db;
    pthread_barrier_t start, armed;
    int point;            /* the fault point armed between the barriers */
    int round;
    int rc[NTHREADS][2];  /* after arming: first write, second write */
};

struct conc_arg {
    struct conc *c;
    int t;
};

static void *conc_writer(void *p)
{
    struct conc_arg *a = p;
    struct conc *c = a->c;
    char key[48], val[48];
    /* Before the fault: acknowledged, synced writes. */
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof key, "pre-r%d-t%d-%d", c->round, a->t, i);
        int rc = ravel_put(c->db, RAVEL_SYNC, key, strlen(key), key,
                           strlen(key));
        TU_CHECK(rc == RAVEL_OK, "pre-fault write: %s: %s", ravel_errstr(rc),
                 ravel_errmsg());
    }
    pthread_barrier_wait(&c->start);
    pthread_barrier_wait(&c->armed);
    /* All at once, after the fault was armed: none of these can be
    ** covered by a WAL write / fdatasync that succeeded. */
    for (int w = 0; w < 2; w++) {
        snprintf(key, sizeof key, "post-r%d-t%d-%d", c->round, a->t, w);
        snprintf(val, sizeof val, "%d", w);
        int flags = c->point == RV_FAULT_WAL_SYNC || a->t % 2 ? RAVEL_SYNC
                                                               : 0;
        c->rc[a->t][w] = ravel_put(c->db, flags, key, strlen(key), val,
                                   strlen(val));
    }
    return NULL;
}

static void concurrent_fault(int point)
{
    for (int round = 0; round < 4; round++) {
        char *dir = tu_path("conc-fault-%d", db_counter++);
        struct conc c;
        memset(&c, 0, sizeof c);
        c.db = tu_open_ok(dir, NULL);
        c.point = point;
        c.round = round;
        pthread_barrier_init(&c.start, NULL, NTHREADS + 1);
        pthread_barrier_init(&c.armed, NULL, NTHREADS + 1);
        pthread_t th[NTHREADS];
        struct conc_arg args[NTHREADS];
        for (int t = 0; t < NTHREADS; t++) {
            args[t].c = &c;
            args[t].t = t;
            assert_int_equal(pthread_create(&th[t], NULL, conc_writer,
                                            &args[t]), 0);
        }
        pthread_barrier_wait(&c.start);
        rv_fault_arm((enum rv_fault_point)point, 0, EIO);
        pthread_barrier_wait(&c.armed);
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&c.start);
        pthread_barrier_destroy(&c.armed);
        disarm();
        tu_assert_no_thread_failures();

        int ioerr = 0;
        for (int t = 0; t < NTHREADS; t++) {
            for (int w = 0; w < 2; w++) {
                int rc = c.rc[t][w];
                if (rc == RAVEL_OK)
                    fail_msg("round %d: thread %d's write %d after the %s "
                             "fault returned RAVEL_OK", round, t, w,
                             point == RV_FAULT_WAL_SYNC ? "fdatasync"
                                                        : "WAL write");
                if (rc != RAVEL_IOERR && rc != RAVEL_READONLY)
                    fail_msg("round %d: thread %d: unexpected %s", round, t,
                             ravel_errstr(rc));
                if (w == 1 && rc != RAVEL_READONLY)
                    fail_msg("round %d: thread %d: a write after a failed "
                             "one returned %s, not RAVEL_READONLY", round, t,
                             ravel_errstr(rc));
                ioerr += rc == RAVEL_IOERR;
            }
        }
        assert_true(ioerr >= 1);
        printf("# round %d: %d of %d writers got RAVEL_IOERR, the rest "
               "RAVEL_READONLY\n", round, ioerr, NTHREADS);
        char key[48];
        snprintf(key, sizeof key, "pre-r%d-t0-0", round);
        expect_read_only(c.db, key, key);
        close_after_fault(c.db);

        ravel_db *db = tu_open_ok(dir, NULL);
        for (int t = 0; t < NTHREADS; t++)
            for (int i = 0; i < 5; i++) {
                snprintf(key, sizeof key, "pre-r%d-t%d-%d", round, t, i);
                tu_expect(db, NULL, key, key);
            }
        TU_OK(ravel_close(db));
        tu_rm_rf(dir);
        free(dir);
    }
}

static void test_concurrent_sync_fault(void **state)
{
    (void)state;
    concurrent_fault(RV_FAULT_WAL_SYNC);
}

static void test_concurrent_write_fault(void **state)
{
    (void)state;
    concurrent_fault(RV_FAULT_WAL_WRITE);
}

/* Writers running when the fault strikes.  Which writes fail depends on
** timing, but: once any writer has been told of the failure, a write that
** starts later never succeeds; a writer's writes after its own failure are
** RAVEL_READONLY; and every acknowledged write is there after reopen. */
#define RUN_MAX 4000

struct run {
    ravel_db *db;
    atomic_int error_seen; /* some writer got IOERR or READONLY */
    int point;
    unsigned char ok[NTHREADS][RUN_MAX];
    int n[NTHREADS];
    atomic_int ioerr;
};

struct run_arg {
    struct run *r;
    int t;
};

static void *run_writer(void *p)
{
    struct run_arg *a = p;
    struct run *r = a->r;
    char key[32];
    int failed_at = -1;
    int i;
    for (i = 0; i < RUN_MAX; i++) {
        if (failed_at >= 0 && i > failed_at + 3)
            break;
        snprintf(key, sizeof key, "run-t%d-%05d", a->t, i);
        int flags = (r->point == RV_FAULT_WAL_SYNC || i % 3 == 0)
                    ? RAVEL_SYNC : 0;
        int seen_before = atomic_load(&r->error_seen);
        int rc = ravel_put(r->db, flags, key, strlen(key), key, strlen(key));
        r->ok[a->t][i] = rc == RAVEL_OK;
        if (rc == RAVEL_OK) {
            TU_CHECK(!seen_before, "thread %d: write %d began after another "
                     "writer was told of the failure, and succeeded", a->t,
                     i);
            TU_CHECK(failed_at < 0, "thread %d: write %d succeeded after "
                     "this thread's write %d failed", a->t, i, failed_at);
            continue;
        }
        TU_CHECK(rc == RAVEL_IOERR || rc == RAVEL_READONLY,
                 "thread %d: unexpected %s: %s", a->t, ravel_errstr(rc),
                 ravel_errmsg());
        TU_CHECK(failed_at < 0 || rc == RAVEL_READONLY, "thread %d: write %d "
                 "after a failed one returned %s", a->t, i, ravel_errstr(rc));
        if (rc == RAVEL_IOERR)
            atomic_fetch_add(&r->ioerr, 1);
        atomic_store(&r->error_seen, 1);
        if (failed_at < 0)
            failed_at = i;
    }
    r->n[a->t] = i;
    return NULL;
}

static void running_fault(int point)
{
    uint64_t rng = tu_seed();
    for (int round = 0; round < 3; round++) {
        char *dir = tu_path("run-fault-%d", db_counter++);
        struct run *r = calloc(1, sizeof *r);
        assert_non_null(r);
        r->db = tu_open_ok(dir, NULL);
        r->point = point;
        atomic_init(&r->error_seen, 0);
        atomic_init(&r->ioerr, 0);
        int skip = 5 + (int)(tu_rand(&rng) % 60);
        rv_fault_arm((enum rv_fault_point)point, skip, EIO);
        pthread_t th[NTHREADS];
        struct run_arg args[NTHREADS];
        for (int t = 0; t < NTHREADS; t++) {
            args[t].r = r;
            args[t].t = t;
            assert_int_equal(pthread_create(&th[t], NULL, run_writer,
                                            &args[t]), 0);
        }
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
        disarm();
        tu_assert_no_thread_failures();
        int oks = 0;
        for (int t = 0; t < NTHREADS; t++)
            for (int i = 0; i < r->n[t]; i++)
                oks += r->ok[t][i];
        printf("# %s fault after %d: %d writes acknowledged, %d got "
               "RAVEL_IOERR\n", point == RV_FAULT_WAL_SYNC ? "sync" : "write",
               skip, oks, atomic_load(&r->ioerr));
        assert_true(atomic_load(&r->ioerr) >= 1);
        expect_read_only_reason(r->db);
        close_after_fault(r->db);

        ravel_db *db = tu_open_ok(dir, NULL);
        char key[32];
        for (int t = 0; t < NTHREADS; t++)
            for (int i = 0; i < r->n[t]; i++) {
                if (!r->ok[t][i])
                    continue;
                snprintf(key, sizeof key, "run-t%d-%05d", t, i);
                tu_expect(db, NULL, key, key);
            }
        expect_writable(db);
        TU_OK(ravel_close(db));
        tu_rm_rf(dir);
        free(dir);
        free(r);
    }
}

static void test_running_writers_sync_fault(void **state)
{
    (void)state;
    running_fault(RV_FAULT_WAL_SYNC);
}

static void test_running_writers_write_fault(void **state)
{
    (void)state;
    running_fault(RV_FAULT_WAL_WRITE);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_wal_write_fault, teardown),
        cmocka_unit_test_teardown(test_wal_write_fault_after_skip, teardown),
        cmocka_unit_test_teardown(test_wal_sync_fault, teardown),
        cmocka_unit_test_teardown(test_wal_sync_fault_batch, teardown),
        cmocka_unit_test_teardown(test_flush_wal_sync_fault, teardown),
        cmocka_unit_test_teardown(test_concurrent_sync_fault, teardown),
        cmocka_unit_test_teardown(test_concurrent_write_fault, teardown),
        cmocka_unit_test_teardown(test_running_writers_sync_fault, teardown),
        cmocka_unit_test_teardown(test_running_writers_write_fault,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
