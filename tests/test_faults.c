/*
** test_faults.c -- a failed WAL write or fdatasync is never reported as
** success, and a failed memtable insert never shows part of a batch.
** Through the fault hook of util/fault.h (rv_fault_arm, in the static
** library), the next WAL write or sync fails with EIO on either I/O path,
** or the k-th memtable entry allocation fails.  Then: the writers concerned
** get RAVEL_IOERR or RAVEL_NOMEM (never RAVEL_OK), later writes get
** RAVEL_READONLY, reads still work, ravel.read-only-reason says why, and
** after close + reopen everything acknowledged before is there.
*/
#include "testutil.h"
#include "db/db.h"
#include "util/fault.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int db_counter;

static void disarm(void)
{
    rv_fault_arm(RV_FAULT_WAL_WRITE, -1, 0);
    rv_fault_arm(RV_FAULT_WAL_SYNC, -1, 0);
    rv_fault_arm(RV_FAULT_MEMTABLE_ALLOC, -1, 0);
}

static int teardown(void **state)
{
    (void)state;
    disarm();
    return 0;
}

static void expect_read_only_reason(ravel_db *db)
{
    char *why = tu_prop(db, "ravel.read-only-reason");
    if (!why[0])
        fail_msg("writes are refused but ravel.read-only-reason is empty");
    printf("# ravel.read-only-reason: %s\n", why);
    ravel_free(why);
}

static void expect_writable(ravel_db *db)
{
    char *why = tu_prop(db, "ravel.read-only-reason");
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
        uint64_t seq = tu_prop_u64(db, "ravel.last-sequence");

        rv_fault_arm(RV_FAULT_WAL_WRITE, 0, EIO);
        TU_EXPECT_RC(RAVEL_IOERR, ravel_put(db, flags, "failed", 6, "x", 1));
        expect_eio_message();
        disarm();
        /* Read-only until reopened, even with the fault gone. */
        expect_read_only(db, "acked-005", "val-acked-5");
        expect_keys(db, "acked", 20);
        assert_true(tu_prop_u64(db, "ravel.last-sequence") >= seq);
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

/* ------------------------------------------------ memtable insert faults */

#define BATCH_OPS 10

static void op_key(char *key, size_t n, const char *prefix, int i)
{
    snprintf(key, n, "%s-%05d", prefix, i);
}

static ravel_batch *prefix_batch(const char *prefix, int n)
{
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    char key[48];
    for (int i = 0; i < n; i++) {
        op_key(key, sizeof key, prefix, i);
        TU_OK(ravel_batch_put(b, key, strlen(key), key, strlen(key)));
    }
    return b;
}

/* How many of the N keys of PREFIX a get through SNAP finds. */
static int keys_found(ravel_db *db, const ravel_snapshot *snap,
                      const char *prefix, int n)
{
    int found = 0;
    char key[48];
    for (int i = 0; i < n; i++) {
        op_key(key, sizeof key, prefix, i);
        void *v = NULL;
        size_t vlen = 0;
        int rc = ravel_get(db, snap, key, strlen(key), &v, &vlen);
        if (rc == RAVEL_OK)
            found++;
        else if (rc != RAVEL_NOTFOUND)
            fail_msg("get %s: %s: %s", key, ravel_errstr(rc),
                     ravel_errmsg());
        ravel_free(v);
    }
    return found;
}

/* How many keys starting with "PREFIX-" an iterator through SNAP shows. */
static int keys_iterated(ravel_db *db, const ravel_snapshot *snap,
                         const char *prefix)
{
    char start[48];
    snprintf(start, sizeof start, "%s-", prefix);
    size_t plen = strlen(start);
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, snap, &it));
    int n = 0;
    TU_OK(ravel_iter_seek(it, start, plen));
    while (ravel_iter_valid(it)) {
        size_t klen;
        const char *k = ravel_iter_key(it, &klen);
        if (klen < plen || memcmp(k, start, plen) != 0)
            break;
        n++;
        TU_OK(ravel_iter_next(it));
    }
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);
    return n;
}

/* Whether the N keys of PREFIX are seen all (1) or not at all (0) by get,
** by an iterator and through a snapshot taken now; fails the test if any
** of them shows part of the batch. */
static int batch_seen(ravel_db *db, const char *prefix, int n)
{
    ravel_snapshot *s = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s));
    int counts[4] = {
        keys_found(db, NULL, prefix, n), keys_found(db, s, prefix, n),
        keys_iterated(db, NULL, prefix), keys_iterated(db, s, prefix),
    };
    TU_OK(ravel_snapshot_release(db, s));
    static const char *how[4] = {"get", "get through a snapshot",
                                 "an iterator",
                                 "an iterator on a snapshot"};
    for (int i = 0; i < 4; i++)
        if (counts[i] != counts[0] || (counts[i] != 0 && counts[i] != n))
            fail_msg("batch %s (%d ops): %s sees %d of its keys (get sees "
                     "%d): a batch must be seen all or nothing", prefix, n,
                     how[i], counts[i], counts[0]);
    return counts[0] == n;
}

static void expect_nomem_reason(ravel_db *db)
{
    char *why = tu_prop(db, "ravel.read-only-reason");
    printf("# ravel.read-only-reason: %s\n", why);
    if (!strstr(why, "out of memory"))
        fail_msg("ravel.read-only-reason does not name the failed "
                 "allocation: \"%s\"", why);
    ravel_free(why);
}

/* One writer's batch: its 5th insert fails.  The writer gets RAVEL_NOMEM,
** none of the batch is visible, writes stop; after reopen the batch (whose
** WAL record was written) is all there or not at all. */
static void test_memtable_insert_fault(void **state)
{
    (void)state;
    for (int conc = 0; conc <= 1; conc++) {
        char *dir = tu_path("insert-fault-%d", db_counter++);
        const char *opt = conc ? "allow_concurrent_memtable_write=true"
                               : "allow_concurrent_memtable_write=false";
        ravel_db *db = tu_open_ok(dir, opt);
        put_keys(db, "acked", 20, RAVEL_SYNC);
        ravel_batch *b = prefix_batch("torn", BATCH_OPS);

        rv_fault_arm(RV_FAULT_MEMTABLE_ALLOC, 4, ENOMEM);
        TU_EXPECT_RC(RAVEL_NOMEM, ravel_write(db, 0, b));
        disarm();
        printf("# %s: %s\n", opt, ravel_errmsg());
        if (batch_seen(db, "torn", BATCH_OPS))
            fail_msg("the failed batch is visible");
        expect_nomem_reason(db);
        TU_EXPECT_RC(RAVEL_READONLY, ravel_write(db, 0, b));
        /* No I/O failed: flushing says writes are refused, no more. */
        TU_EXPECT_RC(RAVEL_READONLY, ravel_flush_wal(db, 1));
        expect_read_only(db, "acked-004", "val-acked-4");
        expect_keys(db, "acked", 20);
        if (batch_seen(db, "torn", BATCH_OPS))
            fail_msg("the failed batch became visible");
        /* The failure was reported to the writer: close does not repeat
        ** it, and nothing else failed. */
        TU_OK(ravel_close(db));
        ravel_batch_free(b);

        db = tu_open_ok(dir, opt);
        printf("# after reopen the failed batch is %s\n",
               batch_seen(db, "torn", BATCH_OPS) ? "all there" : "absent");
        TU_OK(ravel_close(db));
        reopen_and_check(dir, "acked", 20);
        tu_rm_rf(dir);
        free(dir);
    }
}

/* Several writers: a large batch leads a group alone while small batches
** queue behind it; the fault strikes a few inserts after the large batch,
** in the next group.  Every member of the failing group gets RAVEL_NOMEM,
** none of their keys is visible, later groups get RAVEL_READONLY. */
#define GROUP_WRITERS 6
#define LEAD_OPS 100000
#define SMALL_OPS 5

struct insert_run {
    ravel_db *db;
    ravel_batch *lead_batch;
    ravel_batch *small[GROUP_WRITERS];
    pthread_barrier_t go;
    int lead_rc;
    atomic_int lead_done; /* set by the lead thread once its write returned */
    int rc[GROUP_WRITERS];
};

struct insert_arg {
    struct insert_run *r;
    int t;
};

static void *insert_lead(void *p)
{
    struct insert_run *r = p;
    r->lead_rc = ravel_write(r->db, 0, r->lead_batch);
    atomic_store(&r->lead_done, 1);
    return NULL;
}

static void *insert_small(void *p)
{
    struct insert_arg *a = p;
    pthread_barrier_wait(&a->r->go);
    a->r->rc[a->t] = ravel_write(a->r->db, a->t % 2 ? RAVEL_SYNC : 0,
                                 a->r->small[a->t]);
    return NULL;
}

static void small_prefix(char *buf, size_t n, int t)
{
    snprintf(buf, n, "small%d", t);
}

static const char *rc_name(int rc)
{
    return rc == RAVEL_OK ? "OK" : rc == RAVEL_NOMEM ? "NOMEM"
         : rc == RAVEL_READONLY ? "READONLY" : ravel_errstr(rc);
}

/* Checks one batch after the failure: OK visible, the others not. */
static void check_outcome(ravel_db *db, const char *prefix, int n, int rc)
{
    if (rc != RAVEL_OK && rc != RAVEL_NOMEM && rc != RAVEL_READONLY)
        fail_msg("batch %s: unexpected %s", prefix, ravel_errstr(rc));
    int seen = batch_seen(db, prefix, n);
    if (rc == RAVEL_OK && !seen)
        fail_msg("batch %s was acknowledged but is not visible", prefix);
    if (rc != RAVEL_OK && seen)
        fail_msg("batch %s failed (%s) but is visible", prefix, rc_name(rc));
}

/* One round; returns the number of writers that got RAVEL_NOMEM. */
static int insert_fault_round(const char *opt, ravel_batch *lead)
{
    char *dir = tu_path("insert-group-%d", db_counter++);
    struct insert_run r;
    memset(&r, 0, sizeof r);
    r.db = tu_open_ok(dir, opt);
    r.lead_batch = lead;
    char prefix[32];
    for (int t = 0; t < GROUP_WRITERS; t++) {
        small_prefix(prefix, sizeof prefix, t);
        r.small[t] = prefix_batch(prefix, SMALL_OPS);
    }
    pthread_barrier_init(&r.go, NULL, GROUP_WRITERS + 1);
    pthread_t lead_th, th[GROUP_WRITERS];
    struct insert_arg args[GROUP_WRITERS];
    for (int t = 0; t < GROUP_WRITERS; t++) {
        args[t].r = &r;
        args[t].t = t;
        assert_int_equal(pthread_create(&th[t], NULL, insert_small,
                                        &args[t]), 0);
    }
    rv_fault_arm(RV_FAULT_MEMTABLE_ALLOC, LEAD_OPS + 2, ENOMEM);
    assert_int_equal(pthread_create(&lead_th, NULL, insert_lead, &r), 0);
    /* Let the large write lead its own group, then queue the others.  It
    ** may also have finished already (this thread was descheduled). */
    while (rv_db_calls_in_progress(r.db, NULL) < 1 &&
           !atomic_load(&r.lead_done))
        nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
    nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
    pthread_barrier_wait(&r.go);
    pthread_join(lead_th, NULL);
    for (int t = 0; t < GROUP_WRITERS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&r.go);
    disarm();

    int nomem = r.lead_rc == RAVEL_NOMEM;
    printf("# %s: lead %s, small:", opt, rc_name(r.lead_rc));
    for (int t = 0; t < GROUP_WRITERS; t++) {
        printf(" %s", rc_name(r.rc[t]));
        nomem += r.rc[t] == RAVEL_NOMEM;
    }
    printf("\n");
    if (nomem == 0)
        fail_msg("the armed allocation fault failed no writer");
    check_outcome(r.db, "lead", LEAD_OPS, r.lead_rc);
    for (int t = 0; t < GROUP_WRITERS; t++) {
        small_prefix(prefix, sizeof prefix, t);
        check_outcome(r.db, prefix, SMALL_OPS, r.rc[t]);
    }
    expect_nomem_reason(r.db);
    TU_EXPECT_RC(RAVEL_READONLY, ravel_write(r.db, 0, r.small[0]));
    TU_OK(ravel_close(r.db));

    /* After reopen: acknowledged batches are there, refused ones are not,
    ** and the failed group's batches (their WAL records were written) are
    ** each all there or absent. */
    ravel_db *db = tu_open_ok(dir, opt);
    int seen = batch_seen(db, "lead", LEAD_OPS);
    if (r.lead_rc == RAVEL_OK ? !seen : r.lead_rc == RAVEL_READONLY && seen)
        fail_msg("after reopen, lead batch (%s) is %s", rc_name(r.lead_rc),
                 seen ? "there" : "absent");
    for (int t = 0; t < GROUP_WRITERS; t++) {
        small_prefix(prefix, sizeof prefix, t);
        seen = batch_seen(db, prefix, SMALL_OPS);
        if (r.rc[t] == RAVEL_OK ? !seen : r.rc[t] == RAVEL_READONLY && seen)
            fail_msg("after reopen, batch %s (%s) is %s", prefix,
                     rc_name(r.rc[t]), seen ? "there" : "absent");
    }
    expect_writable(db);
    TU_OK(ravel_close(db));
    for (int t = 0; t < GROUP_WRITERS; t++)
        ravel_batch_free(r.small[t]);
    tu_rm_rf(dir);
    free(dir);
    return nomem;
}

/* With the default group cap the six small batches fit in one group;
** with a 2K cap (a small leader then gathers about one more small batch)
** they form groups of two, and the groups after the failed one are
** refused. */
static void insert_fault_in_group(const char *concurrent)
{
    static const char *caps[] = {"", ";max_write_batch_group_size_bytes=2K"};
    ravel_batch *lead = prefix_batch("lead", LEAD_OPS);
    for (int c = 0; c < 2; c++) {
        char opt[128];
        snprintf(opt, sizeof opt, "allow_concurrent_memtable_write=%s%s",
                 concurrent, caps[c]);
        /* Rounds until the fault has struck a group of several members
        ** (the first, unless the machine is very slow to start threads). */
        int multi = 0;
        for (int round = 0; round < 10 && !multi; round++)
            multi = insert_fault_round(opt, lead) > 1;
        if (!multi)
            fail_msg("%s: in 10 rounds the allocation fault never struck a "
                     "write group of more than one member", opt);
    }
    ravel_batch_free(lead);
}

static void test_memtable_insert_fault_group_concurrent(void **state)
{
    (void)state;
    insert_fault_in_group("true");
}

static void test_memtable_insert_fault_group_leader(void **state)
{
    (void)state;
    insert_fault_in_group("false");
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
        cmocka_unit_test_teardown(test_memtable_insert_fault, teardown),
        cmocka_unit_test_teardown(test_memtable_insert_fault_group_concurrent,
                                  teardown),
        cmocka_unit_test_teardown(test_memtable_insert_fault_group_leader,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
