/*
** test_close.c -- ravel_close while writes are in flight.
**
** ravel.h promises that close waits for the writes in progress.  Here a
** writer applies a batch of tens of MB (so its write group lasts long),
** small writers queue behind it, and close is called while they are all
** inside their calls (some waiting for an fdatasync).  Every write that
** began before close must complete (RAVEL_OK), close must not crash or
** hang, and after reopening every acknowledged write is there.  One test
** holds sync writers inside the WAL, waiting for an fdatasync, with a pause
** point (io_uring path), so that close surely starts while they wait.
**
** A call made after close has begun is the caller's bug (the handle may be
** freed), so the test must know that every writer is inside its call
** before it closes: it waits for the count of calls in progress that the
** database keeps (rv_db_calls_in_progress, from the static library).
*/
#include "testutil.h"
#include "db/db.h"
#include "util/fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SMALL_WRITERS 6
#define BIG_VALUES 512
#define BIG_VALUE_SIZE (64 * 1024) /* 512 x 64 KiB = 32 MiB */

static int db_counter;

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

struct round {
    ravel_db *db;
    int big_flags, small_flags;
    ravel_batch *big;
    atomic_int go_small;   /* main lets the small writers start */
    atomic_int returned;   /* writers whose call has returned */
    int big_rc;
    int small_rc[SMALL_WRITERS];
};

struct small_arg {
    struct round *r;
    int t;
};

static void *big_writer(void *p)
{
    struct round *r = p;
    r->big_rc = ravel_write(r->db, r->big_flags, r->big);
    atomic_fetch_add(&r->returned, 1);
    return NULL;
}

static void small_key(char *key, size_t n, int t)
{
    snprintf(key, n, "small-%02d", t);
}

static void *small_writer(void *p)
{
    struct small_arg *a = p;
    struct round *r = a->r;
    while (!atomic_load(&r->go_small))
        sleep_ms(1);
    char key[32];
    small_key(key, sizeof key, a->t);
    r->small_rc[a->t] = ravel_put(r->db, r->small_flags, key, strlen(key),
                                  key, strlen(key));
    atomic_fetch_add(&r->returned, 1);
    return NULL;
}

/* Waits until N writers are each inside their call or returned from it. */
static void wait_entered(struct round *r, int n)
{
    while ((int)rv_db_calls_in_progress(r->db, NULL) +
               atomic_load(&r->returned) < n)
        sleep_ms(1);
}

static ravel_batch *big_batch(void)
{
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    char *val = malloc(BIG_VALUE_SIZE);
    assert_non_null(val);
    for (int i = 0; i < BIG_VALUES; i++) {
        char key[32];
        snprintf(key, sizeof key, "big-%04d", i);
        memset(val, 'a' + i % 26, BIG_VALUE_SIZE);
        TU_OK(ravel_batch_put(b, key, strlen(key), val, BIG_VALUE_SIZE));
    }
    free(val);
    return b;
}

static void expect_big(ravel_db *db)
{
    for (int i = 0; i < BIG_VALUES; i++) {
        char key[32];
        snprintf(key, sizeof key, "big-%04d", i);
        void *v = NULL;
        size_t vlen = 0;
        TU_OK(ravel_get(db, NULL, key, strlen(key), &v, &vlen));
        assert_int_equal(vlen, BIG_VALUE_SIZE);
        assert_int_equal(((char *)v)[0], 'a' + i % 26);
        assert_int_equal(((char *)v)[vlen - 1], 'a' + i % 26);
        ravel_free(v);
    }
}

/* One round: the big write starts, after SMALL_DELAY ms the small writers
** start, once all are inside their calls close waits CLOSE_DELAY ms more
** and closes. */
static void close_round(ravel_batch *big, int big_flags, int small_flags,
                        unsigned small_delay, unsigned close_delay)
{
    char *dir = tu_path("close-%d", db_counter++);
    struct round r;
    memset(&r, 0, sizeof r);
    r.db = tu_open_ok(dir, NULL);
    r.big = big;
    r.big_flags = big_flags;
    r.small_flags = small_flags;
    atomic_init(&r.go_small, 0);
    atomic_init(&r.returned, 0);

    pthread_t big_th, small_th[SMALL_WRITERS];
    struct small_arg args[SMALL_WRITERS];
    for (int t = 0; t < SMALL_WRITERS; t++) {
        args[t].r = &r;
        args[t].t = t;
        assert_int_equal(pthread_create(&small_th[t], NULL, small_writer,
                                        &args[t]), 0);
    }
    assert_int_equal(pthread_create(&big_th, NULL, big_writer, &r), 0);
    wait_entered(&r, 1);
    sleep_ms(small_delay);
    atomic_store(&r.go_small, 1);
    wait_entered(&r, 1 + SMALL_WRITERS);
    sleep_ms(close_delay);
    uint32_t in_flight = rv_db_calls_in_progress(r.db, NULL);
    int close_rc = ravel_close(r.db);
    pthread_join(big_th, NULL);
    for (int t = 0; t < SMALL_WRITERS; t++)
        pthread_join(small_th[t], NULL);
    printf("# big %s, small %s, delays %u+%u ms: close with %u call(s) in "
           "flight returned %d\n", big_flags & RAVEL_SYNC ? "sync" : "async",
           small_flags & RAVEL_SYNC ? "sync" : "async", small_delay,
           close_delay, (unsigned)in_flight, close_rc);
    if (close_rc != RAVEL_OK)
        fail_msg("ravel_close with writers in flight: %s: %s",
                 ravel_errstr(close_rc), ravel_errmsg());

    /* Every one of them began before close: close waited for it. */
    if (r.big_rc != RAVEL_OK)
        fail_msg("the big write, in progress when close was called, "
                 "returned %s", ravel_errstr(r.big_rc));
    for (int t = 0; t < SMALL_WRITERS; t++)
        if (r.small_rc[t] != RAVEL_OK)
            fail_msg("small writer %d, in progress when close was called, "
                     "returned %s", t, ravel_errstr(r.small_rc[t]));

    ravel_db *db = tu_open_ok(dir, NULL);
    expect_big(db);
    for (int t = 0; t < SMALL_WRITERS; t++) {
        char key[32];
        small_key(key, sizeof key, t);
        tu_expect(db, NULL, key, key);
    }
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

static void test_close_with_queued_writers(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    ravel_batch *big = big_batch();
    for (int round = 0; round < 6; round++) {
        unsigned small_delay = (unsigned)(tu_rand(&rng) % 25);
        unsigned close_delay = (unsigned)(tu_rand(&rng) % 8);
        close_round(big, 0, 0, small_delay, close_delay);
    }
    ravel_batch_free(big);
}

/* Close while sync writers wait for their fdatasync. */
static void test_close_with_sync_writers(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    ravel_batch *big = big_batch();
    for (int round = 0; round < 4; round++) {
        unsigned small_delay = (unsigned)(tu_rand(&rng) % 25);
        unsigned close_delay = (unsigned)(tu_rand(&rng) % 8);
        close_round(big, round % 2 ? RAVEL_SYNC : 0, RAVEL_SYNC,
                    small_delay, close_delay);
    }
    ravel_batch_free(big);
}

/* Close while sync writers are inside the WAL waiting for an fdatasync,
** held there: on the io_uring path the first sync writer watches its
** fdatasync and is stopped, once it completed, at the pause point
** RV_PAUSE_WAL_WATCHED (util/fault.h) before it takes the WAL's lock; the
** sync writers after it append, start the next fdatasync and wait, the
** watcher being still registered.  Close is called then and must wait:
** the paused writer is a call in progress.  Once it goes on, every writer
** returns RAVEL_OK, close succeeds, and every write is there after reopen.
** The pwrite path has no watcher to hold: skipped there. */
#define SYNC_WAITERS 4

struct sync_waiter {
    ravel_db *db;
    int t;
    int rc;
    atomic_int *returned; /* writers whose call has returned */
};

static void *sync_waiter_put(void *p)
{
    struct sync_waiter *s = p;
    char key[32];
    snprintf(key, sizeof key, "sync-%02d", s->t);
    s->rc = ravel_put(s->db, RAVEL_SYNC, key, strlen(key), key, strlen(key));
    atomic_fetch_add(s->returned, 1);
    return NULL;
}

/* The "N issued" of ravel.stats' fsync line. */
static unsigned long long fsyncs_issued(ravel_db *db)
{
    char *text = tu_prop(db, "ravel.stats");
    const char *line = strstr(text, "fsync: ");
    unsigned long long n = 0;
    int ok = line && sscanf(line, "fsync: %llu issued", &n) == 1;
    ravel_free(text);
    if (!ok)
        fail_msg("ravel.stats has no \"fsync: N issued\" line");
    return n;
}

struct closer {
    ravel_db *db;
    atomic_int done;
    int rc;
};

static void *closer_thread(void *p)
{
    struct closer *c = p;
    c->rc = ravel_close(c->db);
    atomic_store(&c->done, 1);
    return NULL;
}

static void test_close_with_sync_waiters_held(void **state)
{
    (void)state;
    char *dir = tu_path("close-sync-held-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, NULL);
    char *io = tu_prop(db, "ravel.wal-io");
    int uring = strncmp(io, "uring", 5) == 0;
    ravel_free(io);
    if (!uring) {
        TU_OK(ravel_close(db));
        free(dir);
        skip(); /* no fdatasync watcher on the pwrite path */
    }
    unsigned long long fsyncs0 = fsyncs_issued(db);

    struct sync_waiter w[SYNC_WAITERS];
    pthread_t th[SYNC_WAITERS];
    atomic_int returned;
    atomic_init(&returned, 0);
    for (int t = 0; t < SYNC_WAITERS; t++)
        w[t] = (struct sync_waiter){.db = db, .t = t, .rc = -1,
                                    .returned = &returned};

    /* The first sync writer watches its fdatasync and stops once it
    ** completed. */
    for (int attempt = 0;; attempt++) {
        rv_pause_arm(RV_PAUSE_WAL_WATCHED);
        assert_int_equal(pthread_create(&th[0], NULL, sync_waiter_put,
                                        &w[0]), 0);
        while (!rv_pause_waiting(RV_PAUSE_WAL_WATCHED) &&
               !atomic_load(&returned))
            sleep_ms(1);
        if (rv_pause_waiting(RV_PAUSE_WAL_WATCHED))
            break;
        /* The fdatasync linked behind the write completed before the
        ** writer came to watch it (its completion was reaped with the
        ** write's, as happens on a busy machine): nobody watched, so try
        ** again. */
        pthread_join(th[0], NULL);
        rv_pause_release(RV_PAUSE_WAL_WATCHED); /* disarm */
        atomic_store(&returned, 0);
        fsyncs0 = fsyncs_issued(db);
        if (attempt == 1000)
            fail_msg("no sync writer watched its fdatasync in 1000 tries");
    }

    /* The others append and start the next fdatasync, which nobody
    ** watches while the first is held.  Close must begin only once every
    ** writer is inside its call (a call made after it is the caller's
    ** bug). */
    for (int t = 1; t < SYNC_WAITERS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, sync_waiter_put,
                                        &w[t]), 0);
    while (fsyncs_issued(db) < fsyncs0 + 2 ||
           (int)rv_db_calls_in_progress(db, NULL) +
                   atomic_load(&returned) < SYNC_WAITERS)
        sleep_ms(1);

    struct closer c = {.db = db, .rc = -1};
    atomic_init(&c.done, 0);
    pthread_t cth;
    assert_int_equal(pthread_create(&cth, NULL, closer_thread, &c), 0);
    int closing = 0;
    uint32_t in_progress;
    while (in_progress = rv_db_calls_in_progress(db, &closing), !closing)
        sleep_ms(1);
    /* The held writer is a call in progress: close may not return (the
    ** WAL's own wait for the fdatasync in flight would also hold it). */
    assert_true(in_progress >= 1);
    sleep_ms(20);
    if (atomic_load(&c.done))
        fail_msg("ravel_close returned (%s) while a sync writer was held "
                 "inside the WAL", ravel_errstr(c.rc));
    printf("# close waits for %u call(s) in progress\n",
           (unsigned)in_progress);

    rv_pause_release(RV_PAUSE_WAL_WATCHED);
    pthread_join(cth, NULL);
    for (int t = 0; t < SYNC_WAITERS; t++)
        pthread_join(th[t], NULL);
    if (c.rc != RAVEL_OK)
        fail_msg("ravel_close with sync writers waiting: %s",
                 ravel_errstr(c.rc));
    for (int t = 0; t < SYNC_WAITERS; t++)
        if (w[t].rc != RAVEL_OK)
            fail_msg("sync writer %d, in progress when close was called, "
                     "returned %s", t, ravel_errstr(w[t].rc));

    db = tu_open_ok(dir, NULL);
    for (int t = 0; t < SYNC_WAITERS; t++) {
        char key[32];
        snprintf(key, sizeof key, "sync-%02d", t);
        tu_expect(db, NULL, key, key);
    }
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* A call that arrives once close has begun (while the handle is still
** alive because close waits for a call in progress) is refused with
** RAVEL_INVALID "closing"; close then completes. */

static void test_call_during_close_is_refused(void **state)
{
    (void)state;
    char *dir = tu_path("close-gate-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "k", "v");

    /* Stand for a call in progress, so close must wait. */
    TU_OK(rv_db_enter(db, "test"));
    struct closer c = {.db = db, .rc = -1};
    atomic_init(&c.done, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, closer_thread, &c), 0);
    int closing = 0;
    while (rv_db_calls_in_progress(db, &closing), !closing)
        sleep_ms(1);
    /* Close may not return while the call is in progress, however long it
    ** is given (a close that did would have freed the handle). */
    sleep_ms(20);
    if (atomic_load(&c.done))
        fail_msg("ravel_close returned (%s) while a call was in progress",
                 ravel_errstr(c.rc));

    TU_EXPECT_INVALID(ravel_put(db, 0, "k2", 2, "v", 1));
    if (!strstr(ravel_errmsg(), "closing"))
        fail_msg("a write during close: the message does not say the "
                 "database is closing: %s", ravel_errmsg());
    void *v = (void *)1;
    size_t vlen = 1;
    TU_EXPECT_INVALID(ravel_get(db, NULL, "k", 1, &v, &vlen));
    assert_null(v);
    assert_int_equal(vlen, 0);
    ravel_snapshot *snap = NULL;
    TU_EXPECT_INVALID(ravel_snapshot_acquire(db, &snap));
    char *text = NULL;
    TU_EXPECT_INVALID(ravel_property(db, "ravel.stats", &text));
    TU_EXPECT_INVALID(ravel_flush_wal(db, 1));
    /* The refused calls left the count as it was. */
    assert_int_equal(rv_db_calls_in_progress(db, NULL), 1);

    rv_db_leave(db);
    pthread_join(th, NULL);
    if (c.rc != RAVEL_OK)
        fail_msg("close: %s", ravel_errstr(c.rc));

    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "k", "v");
    tu_expect(db, NULL, "k2", NULL);
    TU_OK(ravel_close(db));
    free(dir);
}

/* A close refused because a snapshot is open leaves the database fully
** usable. */
static void test_refused_close_keeps_db_open(void **state)
{
    (void)state;
    char *dir = tu_path("close-refused-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    ravel_snapshot *snap = NULL;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    TU_EXPECT_INVALID(ravel_close(db));
    tu_put(db, RAVEL_SYNC, "b", "2");
    tu_expect(db, snap, "b", NULL);
    tu_expect(db, NULL, "b", "2");
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "a", "1");
    tu_expect(db, NULL, "b", "2");
    TU_OK(ravel_close(db));
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_with_queued_writers),
        cmocka_unit_test(test_close_with_sync_writers),
        cmocka_unit_test(test_close_with_sync_waiters_held),
        cmocka_unit_test(test_call_during_close_is_refused),
        cmocka_unit_test(test_refused_close_keeps_db_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
