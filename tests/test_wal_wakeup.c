/*
** test_wal_wakeup.c -- a RAVEL_SYNC writer waiting for an fdatasync is woken
** once its write is durable, whatever the order in which the waiters come
** and go.
**
** On the io_uring path one sync waiter (the "watcher") waits for the
** fdatasync in flight; the others sleep until it is applied.  The case
** tested: the watcher has seen its fdatasync complete but not yet taken
** the WAL's lock (held there by the pause point RV_PAUSE_WAL_WATCHED of
** util/fault.h) when another writer applies that fdatasync, starts the
** next one and goes to sleep, counting on the watcher; the watcher, its own
** write durable, then leaves.  The sleeper must be woken to watch the new
** fdatasync itself.  The pwrite path has no watcher: the test is skipped
** there.
*/
#include "testutil.h"
#include "util/fault.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Bound on each wait below; what is awaited takes microseconds. */
#define WAIT_LIMIT_MS 30000

static void nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The "N issued" of ravel.stats' fsync line. */
static uint64_t fsyncs_issued(ravel_db *db)
{
    char *text = tu_prop(db, "ravel.stats");
    const char *line = strstr(text, "fsync: ");
    unsigned long long n = 0;
    if (!line || sscanf(line, "fsync: %llu issued", &n) != 1) {
        char copy[512];
        snprintf(copy, sizeof copy, "%s", text);
        ravel_free(text);
        fail_msg("ravel.stats has no \"fsync: N issued\": %s", copy);
    }
    ravel_free(text);
    return (uint64_t)n;
}

/* Whether thread TID of this process is asleep (state S in /proc). */
static int thread_sleeping(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

struct waiter {
    ravel_db *db;
    atomic_int tid;
    atomic_int done;
    int rc;
    char msg[256];
};

/* The watcher-to-be: the fdatasync it starts has nothing in flight
** before it, so it watches it itself. */
static void *flusher(void *p)
{
    struct waiter *w = p;
    w->rc = ravel_flush_wal(w->db, 1);
    snprintf(w->msg, sizeof w->msg, "%s", ravel_errmsg());
    atomic_store(&w->done, 1);
    return NULL;
}

static void *sync_writer(void *p)
{
    struct waiter *w = p;
    atomic_store(&w->tid, (int)syscall(SYS_gettid));
    w->rc = ravel_put(w->db, RAVEL_SYNC, "b", 1, "2", 1);
    snprintf(w->msg, sizeof w->msg, "%s", ravel_errmsg());
    atomic_store(&w->done, 1);
    return NULL;
}

static void test_sleeper_woken_when_watcher_leaves(void **state)
{
    (void)state;
    char *dir = tu_path("wakeup");
    ravel_db *db = tu_open_ok(dir, NULL);
    char *io = tu_prop(db, "ravel.wal-io");
    int uring = strncmp(io, "uring", 5) == 0;
    ravel_free(io);
    if (!uring) {
        TU_OK(ravel_close(db));
        free(dir);
        skip(); /* no fdatasync watcher on the pwrite path */
    }
    tu_put(db, 0, "a", "1"); /* something for the flusher's fdatasync */
    uint64_t fsyncs0 = fsyncs_issued(db);

    /* 1. The flusher starts fdatasync #1, watches it, sees it complete and
    **    stops at the pause point, before taking the WAL's lock. */
    rv_pause_arm(RV_PAUSE_WAL_WATCHED);
    struct waiter a = {.db = db};
    pthread_t ath, bth;
    assert_int_equal(pthread_create(&ath, NULL, flusher, &a), 0);
    uint64_t limit = tu_now_ms() + WAIT_LIMIT_MS;
    while (!rv_pause_waiting(RV_PAUSE_WAL_WATCHED)) {
        if (atomic_load(&a.done) || tu_now_ms() > limit)
            fail_msg("the flusher did not stop at the pause point (%s)",
                     atomic_load(&a.done) ? "it returned" : "timed out");
        nap_ms(1);
    }

    /* 2. A sync writer appends, applies #1 (complete, not yet applied),
    **    which does not cover it, starts #2 and -- the watcher being still
    **    registered -- goes to sleep. */
    struct waiter b = {.db = db};
    assert_int_equal(pthread_create(&bth, NULL, sync_writer, &b), 0);
    while (fsyncs_issued(db) < fsyncs0 + 2 || !atomic_load(&b.tid) ||
           !thread_sleeping((pid_t)atomic_load(&b.tid))) {
        if (atomic_load(&b.done) || tu_now_ms() > limit)
            fail_msg("the sync writer did not start fdatasync #2 and sleep "
                     "(%s)", atomic_load(&b.done) ? "it returned"
                                                  : "timed out");
        nap_ms(1);
    }

    /* 3. The watcher goes on: its write is durable, it returns. */
    rv_pause_release(RV_PAUSE_WAL_WATCHED);
    pthread_join(ath, NULL);
    if (a.rc != RAVEL_OK)
        fail_msg("flush: %s: %s", ravel_errstr(a.rc), a.msg);

    /* 4. Nobody else will come: the sleeper must have been woken to watch
    **    #2.  If it is still asleep, wake it the way the next writer would
    **    (by watching #2), so the test can end, and fail. */
    limit = tu_now_ms() + WAIT_LIMIT_MS;
    while (!atomic_load(&b.done) && tu_now_ms() < limit)
        nap_ms(1);
    int lost = !atomic_load(&b.done);
    if (lost)
        TU_OK(ravel_flush_wal(db, 1));
    pthread_join(bth, NULL);
    if (lost)
        fail_msg("a RAVEL_SYNC writer slept on after the fdatasync watcher "
                 "left with the next fdatasync unwatched (lost wake-up); it "
                 "returned only when another thread synced");
    if (b.rc != RAVEL_OK)
        fail_msg("sync put: %s: %s", ravel_errstr(b.rc), b.msg);
    tu_expect(db, NULL, "a", "1");
    tu_expect(db, NULL, "b", "2");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "b", "2");
    TU_OK(ravel_close(db));
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sleeper_woken_when_watcher_leaves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
