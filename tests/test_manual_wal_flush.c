/*
** test_manual_wal_flush.c -- manual_wal_flush=true: what a crash may take
** (only writes acknowledged without RAVEL_SYNC and not yet flushed), what
** it may not (anything before a ravel_flush_wal that returned RAVEL_OK,
** any RAVEL_SYNC write and everything acknowledged before it), and that
** the buffer's hand-off between the leader, flushers and segment switches
** loses, duplicates, reorders and tears nothing.
**
** Child processes (this program re-executed: crash_harness.h) open the
** database with manual_wal_flush=true and write from THREADS threads:
** each put is a batch that sets tTT-IIIIII to a value naming it and
** last-TT to IIIIII, so that after a reopen each thread's puts present
** must be a prefix 0..P-1 and last-TT must read P-1 (no hole, no
** reordering, no half batch).  Every acknowledged put, every RAVEL_SYNC
** put and every ravel_flush_wal that returned RAVEL_OK (with the puts
** acknowledged before the call) is reported through a pipe; the parent
** kills the child with SIGKILL, sometimes also simulates a power loss
** from the library's sync journal (powerloss.h), reopens and checks.
**
**   kill_without_flush       puts that fit in the buffer, then kill -9:
**                            none of them reached the file, and the
**                            database opens; more puts than the buffer
**                            holds: what is there is a whole prefix that
**                            misses at most one buffer's worth
**   flush_before_kill        the same puts, then ravel_flush_wal(db, 0):
**                            all of them survive kill -9
**   sync_survives            RAVEL_SYNC puts among buffered ones survive
**                            kill -9 and power loss, and so does every
**                            put acknowledged before them
**   concurrent_flush_kill    writers and a thread calling ravel_flush_wal
**                            in a loop (small memtables: segment switches
**                            too), killed at random moments
**   concurrent_close_reopen  the same in this process, then close and
**                            reopen: every acknowledged put is there
**   fault_on_buffer_write    a failed buffer write (rv_fault_arm):
**                            RAVEL_IOERR from ravel_flush_wal, from the
**                            put whose group filled the buffer and from a
**                            RAVEL_SYNC put; writes refused afterwards
**   stats                    ravel.stats shows the buffered bytes and the
**                            buffer's writes
**
** RAVEL_TEST_MWF_ROUNDS (default 6) rounds of concurrent_flush_kill;
** RAVEL_TEST_SEED replays a run.
*/
#include "crash_harness.h"
#include "powerloss.h"
#include "util/fault.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8
#define MAX_VAL 2048
/* The WAL writer's buffer (wal_buffered.c): what a crash may take at most. */
#define BUFFER_BYTES (1u << 20)

/* The child's messages (the end of its writes: crash_child_done). */
enum msg_kind {
    MSG_ACK = 1,      /* put I of thread T acknowledged without sync */
    MSG_ACK_SYNC = 2, /* put I of thread T acknowledged with RAVEL_SYNC */
    MSG_FLUSHED = 3,  /* ravel_flush_wal returned RAVEL_OK after COUNT[t]
                      ** puts of each thread were acknowledged */
    MSG_ERROR = 5,    /* in the child: sent as crash_child_fail */
};

struct msg {
    uint32_t kind;
    uint32_t thread;
    uint32_t i;
    int32_t rc;
    uint32_t count[MAX_THREADS];
};

/* What a child does.  Passed on its command line. */
struct plan {
    uint32_t threads;
    uint32_t puts;       /* per thread */
    uint32_t sync_every; /* every Nth put of a thread is RAVEL_SYNC; 0: none */
    uint32_t val_len;
    uint32_t flusher;    /* 0: none, 1: ravel_flush_wal(db, 0) after the
                         ** puts, 2: a thread calling it in a loop */
    uint32_t small_mem;  /* write_buffer_size=256K: segment switches */
};

/* --------------------------------------------------------- keys, values */

static void key_of(char *buf, size_t n, uint32_t t, uint32_t i)
{
    snprintf(buf, n, "t%02u-%06u", t, i);
}

/* A value of LEN bytes whose bytes say which put it belongs to. */
static void val_of(char *buf, uint32_t len, uint32_t t, uint32_t i)
{
    int n = snprintf(buf, len, "v%02u-%06u:", t, i);
    for (uint32_t k = (uint32_t)n; k < len; k++)
        buf[k] = (char)('a' + (k + i + t) % 26);
}

/* One put: tTT-IIIIII and last-TT in one batch. */
static int put_one(ravel_db *db, ravel_batch *b, uint32_t t, uint32_t i,
                   uint32_t val_len, int flags)
{
    char key[32], last[16], idx[16], val[MAX_VAL];
    key_of(key, sizeof key, t, i);
    val_of(val, val_len, t, i);
    snprintf(last, sizeof last, "last-%02u", t);
    snprintf(idx, sizeof idx, "%06u", i);
    int rc = ravel_batch_clear(b);
    if (!rc)
        rc = ravel_batch_put(b, key, strlen(key), val, val_len);
    if (!rc)
        rc = ravel_batch_put(b, last, strlen(last), idx, strlen(idx));
    if (!rc)
        rc = ravel_write(db, flags, b);
    return rc;
}

static int is_sync_put(const struct plan *p, uint32_t i)
{
    return p->sync_every && i % p->sync_every == p->sync_every - 1;
}

static const char *open_extra(const struct plan *p)
{
    return p->small_mem ? "manual_wal_flush=true;write_buffer_size=256K"
                        : "manual_wal_flush=true";
}

/* ------------------------------------------------------------ the writers
** Shared by the child and the in-process test: THREADS writers, and with
** flusher == 2 one more thread calling ravel_flush_wal until they finish.
** REPORT (may be NULL) receives every message. */

struct run {
    ravel_db *db;
    const struct plan *plan;
    void (*report)(const struct msg *m);
    _Atomic uint32_t acked[MAX_THREADS]; /* puts acknowledged, per thread */
    _Atomic int writers_left;
    _Atomic uint32_t flushes;            /* ravel_flush_wal calls that
                                         ** returned RAVEL_OK */
};

struct writer_arg {
    struct run *run;
    uint32_t t;
};

static void run_report(struct run *r, const struct msg *m)
{
    if (r->report)
        r->report(m);
}

static void run_fail(struct run *r, const char *what, int rc)
{
    struct msg m = {.kind = MSG_ERROR, .rc = rc};
    fprintf(stderr, "%s: %s: %s\n", what, ravel_errstr(rc), ravel_errmsg());
    run_report(r, &m);
    TU_CHECK(0, "%s: %s: %s", what, ravel_errstr(rc), ravel_errmsg());
}

static void *writer_main(void *p)
{
    struct writer_arg *a = p;
    struct run *r = a->run;
    const struct plan *pl = r->plan;
    ravel_batch *b = NULL;
    if (ravel_batch_new(&b) != RAVEL_OK) {
        run_fail(r, "ravel_batch_new", RAVEL_NOMEM);
        goto out;
    }
    for (uint32_t i = 0; i < pl->puts; i++) {
        int sync = is_sync_put(pl, i);
        int rc = put_one(r->db, b, a->t, i, pl->val_len,
                         sync ? RAVEL_SYNC : 0);
        if (rc) {
            run_fail(r, "put", rc);
            break;
        }
        struct msg m = {.kind = sync ? MSG_ACK_SYNC : MSG_ACK,
                        .thread = a->t, .i = i};
        run_report(r, &m);
        /* release: a flusher that reads the count reads it after the ack */
        atomic_store_explicit(&r->acked[a->t], i + 1, memory_order_release);
    }
out:
    ravel_batch_free(b);
    atomic_fetch_sub_explicit(&r->writers_left, 1, memory_order_release);
    return NULL;
}

/* ravel_flush_wal after taking the acknowledged counts; reports them. */
static int run_flush(struct run *r, int sync)
{
    struct msg m = {.kind = MSG_FLUSHED};
    for (uint32_t t = 0; t < r->plan->threads; t++)
        m.count[t] = atomic_load_explicit(&r->acked[t],
                                          memory_order_acquire);
    int rc = ravel_flush_wal(r->db, sync);
    if (rc) {
        run_fail(r, "ravel_flush_wal", rc);
        return rc;
    }
    atomic_fetch_add_explicit(&r->flushes, 1, memory_order_relaxed);
    run_report(r, &m);
    return RAVEL_OK;
}

static void *flusher_main(void *p)
{
    struct run *r = p;
    uint32_t n = 0;
    while (atomic_load_explicit(&r->writers_left, memory_order_acquire) > 0) {
        if (run_flush(r, n++ % 4 == 3))
            break;
        /* pacing only: let the writers buffer something between flushes */
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Runs the plan's writers (and flusher) on DB to the end. */
static void run_writers(struct run *r)
{
    const struct plan *pl = r->plan;
    pthread_t th[MAX_THREADS], fl;
    struct writer_arg args[MAX_THREADS];
    atomic_store(&r->writers_left, (int)pl->threads);
    for (uint32_t t = 0; t < pl->threads; t++) {
        args[t] = (struct writer_arg){r, t};
        if (pthread_create(&th[t], NULL, writer_main, &args[t]))
            abort();
    }
    if (pl->flusher == 2 && pthread_create(&fl, NULL, flusher_main, r))
        abort();
    for (uint32_t t = 0; t < pl->threads; t++)
        pthread_join(th[t], NULL);
    if (pl->flusher == 2)
        pthread_join(fl, NULL);
    if (pl->flusher == 1)
        run_flush(r, 0);
}

/* ------------------------------------------------------------ the child */

static void child_report(const struct msg *m)
{
    if (m->kind == MSG_ERROR) /* run_fail printed what failed */
        crash_child_fail("a call failed: %s", ravel_errstr(m->rc));
    crash_send(m, sizeof *m);
}

struct child_args {
    char dir[PATH_MAX];
    char journal[PATH_MAX]; /* the sync journal, or "" */
    struct plan plan;
};

static int child_main(const void *arg)
{
    const struct child_args *ca = arg;
    if (ca->journal[0])
        tu_sync_journal_start(ca->journal);
    struct run r = {.plan = &ca->plan, .report = child_report};
    int rc = tu_open(ca->dir, open_extra(&ca->plan), &r.db);
    if (rc)
        run_fail(&r, "ravel_open", rc);
    run_writers(&r);
    crash_child_done();
    crash_child_park();
}

/* ----------------------------------------------------------- the parent */

/* What the parent learnt from a child's messages. */
struct acked {
    uint32_t acked[MAX_THREADS];   /* puts acknowledged (a prefix) */
    uint32_t durable[MAX_THREADS]; /* puts that must survive: those before
                                   ** a flush that returned OK, or up to a
                                   ** RAVEL_SYNC put */
    uint32_t flushes;
};

static void acked_apply(struct crash_child *c, const void *msg)
{
    struct acked *a = c->ctx;
    const struct msg *m = msg;
    switch (m->kind) {
    case MSG_ACK:
    case MSG_ACK_SYNC:
        assert_true(m->thread < MAX_THREADS);
        if (m->i + 1 > a->acked[m->thread])
            a->acked[m->thread] = m->i + 1;
        /* A sync put makes everything buffered before it durable. */
        if (m->kind == MSG_ACK_SYNC && m->i + 1 > a->durable[m->thread])
            a->durable[m->thread] = m->i + 1;
        break;
    case MSG_FLUSHED:
        a->flushes++;
        for (int t = 0; t < MAX_THREADS; t++)
            if (m->count[t] > a->durable[t])
                a->durable[t] = m->count[t];
        break;
    default:
        fail_msg("garbled message from the child (kind %u)", m->kind);
    }
}

/* Runs a child on DIR with plan PL (JOURNAL NULL: no sync journal) and
** kills it once it is done (KILL_AFTER_MS < 0) or after KILL_AFTER_MS. */
static void run_child(const char *dir, const char *journal,
                      const struct plan *pl, struct acked *a,
                      int64_t kill_after_ms)
{
    struct child_args ca = {.plan = *pl};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    snprintf(ca.journal, sizeof ca.journal, "%s", journal ? journal : "");
    struct crash_child c = {.on_msg = acked_apply,
                            .msg_size = sizeof(struct msg), .ctx = a};
    crash_spawn(&c, "writer", &ca, sizeof ca);
    if (kill_after_ms < 0)
        crash_kill_after(&c, CRASH_FROM_DONE, 0);
    else
        crash_kill_after(&c, CRASH_FROM_SPAWN, (uint64_t)kill_after_ms);
}

/* Thread T's puts present in DB: a prefix 0..P-1 with the right values
** and last-TT = P-1, or the test fails.  Returns P. */
static uint32_t present_prefix(ravel_db *db, const struct plan *pl,
                               uint32_t t, const char *what)
{
    char key[32], val[MAX_VAL];
    uint32_t p = 0;
    int hole = 0;
    for (uint32_t i = 0; i < pl->puts; i++) {
        key_of(key, sizeof key, t, i);
        void *v = NULL;
        size_t got = 0;
        int rc = ravel_get(db, NULL, key, strlen(key), &v, &got);
        if (rc == RAVEL_OK) {
            val_of(val, pl->val_len, t, i);
            if (got != pl->val_len || memcmp(v, val, got) != 0)
                fail_msg("%s: %s has a wrong value", what, key);
            if (hole)
                fail_msg("%s: %s is present but put %u of thread %u is "
                         "not: a hole in the WAL", what, key, p, t);
            p = i + 1;
        } else if (rc == RAVEL_NOTFOUND) {
            hole = 1;
        } else {
            fail_msg("%s: get %s: %s: %s", what, key, ravel_errstr(rc),
                     ravel_errmsg());
        }
        ravel_free(v);
    }
    char last[16], want[16];
    snprintf(last, sizeof last, "last-%02u", t);
    snprintf(want, sizeof want, "%06u", p ? p - 1 : 0);
    void *v = NULL;
    size_t got = 0;
    int rc = ravel_get(db, NULL, last, strlen(last), &v, &got);
    if (p == 0 && rc != RAVEL_NOTFOUND)
        fail_msg("%s: %s is there but no put of thread %u is", what, last, t);
    if (p > 0 && (rc != RAVEL_OK || got != strlen(want) ||
                  memcmp(v, want, got) != 0))
        fail_msg("%s: %s is %s%.*s, expected %s (the last put present)",
                 what, last, rc == RAVEL_OK ? "" : ravel_errstr(rc),
                 rc == RAVEL_OK ? (int)got : 0,
                 rc == RAVEL_OK ? (const char *)v : "", want);
    ravel_free(v);
    return p;
}

/* Reopens DIR (it must open) and checks every thread: a whole prefix,
** everything durable there.  Returns the puts present in all. */
static uint32_t reopen_and_check(const char *dir, const char *extra,
                                 const struct plan *pl, const struct acked *a,
                                 const char *what)
{
    ravel_db *db = NULL;
    int rc = tu_open(dir, extra, &db);
    if (rc)
        fail_msg("%s: the database does not open: %s: %s", what,
                 ravel_errstr(rc), ravel_errmsg());
    uint32_t total = 0;
    for (uint32_t t = 0; t < pl->threads; t++) {
        uint32_t p = present_prefix(db, pl, t, what);
        if (p < a->durable[t])
            fail_msg("%s: thread %u: %u puts present, but %u were flushed "
                     "or synced", what, t, p, a->durable[t]);
        printf("#   %s: thread %u: %u present, %u acknowledged, %u "
               "flushed or synced\n", what, t, p, a->acked[t],
               a->durable[t]);
        total += p;
    }
    TU_OK(ravel_close(db));
    return total;
}

/* The bytes of one put's WAL record at least: its two keys and values. */
static uint32_t put_bytes_min(const struct plan *pl)
{
    return pl->val_len + 9 + 7 + 6;
}

static void test_kill_without_flush(void **state)
{
    (void)state;
    /* About 250 KB of records: all of them stay in the 1 MiB buffer. */
    struct plan small = {1, 2000, 0, 100, 0, 0};
    char *dir = tu_path("unflushed-small");
    struct acked a = {0};
    run_child(dir, NULL, &small, &a, -1);
    assert_int_equal(a.acked[0], small.puts);
    uint32_t n = reopen_and_check(dir, NULL, &small, &a, "small, no flush");
    if (n != 0)
        fail_msg("%u of the %u puts survived kill -9 though none was "
                 "flushed: manual_wal_flush did not buffer them", n,
                 small.puts);

    /* About 3 MB: the buffer filled and was written several times. */
    struct plan big = {1, 12000, 0, 240, 0, 0};
    char *dir2 = tu_path("unflushed-big");
    struct acked b = {0};
    run_child(dir2, NULL, &big, &b, -1);
    n = reopen_and_check(dir2, NULL, &big, &b, "big, no flush");
    uint32_t lost_max = BUFFER_BYTES / put_bytes_min(&big) + 1;
    if (n + lost_max < big.puts)
        fail_msg("%u of %u puts survived: more than one buffer (%u puts) "
                 "was lost", n, big.puts, lost_max);
    if (n == big.puts)
        fail_msg("all %u puts survived kill -9 without a flush: nothing "
                 "was buffered", n);
    tu_rm_rf(dir);
    tu_rm_rf(dir2);
    free(dir);
    free(dir2);
}

static void test_flush_before_kill(void **state)
{
    (void)state;
    struct plan pl = {2, 1000, 0, 100, 1, 0};
    char *dir = tu_path("flushed");
    struct acked a = {0};
    run_child(dir, NULL, &pl, &a, -1);
    assert_int_equal(a.flushes, 1);
    for (uint32_t t = 0; t < pl.threads; t++)
        assert_int_equal(a.durable[t], pl.puts);
    uint32_t n = reopen_and_check(dir, NULL, &pl, &a, "flushed");
    assert_int_equal(n, pl.threads * pl.puts);
    tu_rm_rf(dir);
    free(dir);
}

/* Sync puts among buffered ones: kill -9 (the database as left), then a
** power loss on a copy; both must keep every sync put and everything
** acknowledged before it. */
static void test_sync_survives(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    struct plan pl = {2, 400, 7, 300, 0, 1};
    for (int p = 0; p < TU_PL_PATTERNS; p++) {
        char *dir = tu_path("sync-%d", p);
        char *journal = tu_path("sync-%d.journal", p);
        struct acked a = {0};
        int64_t kill_ms = p % 2 ? -1 : 5 + (int64_t)(tu_rand(&rng) % 80);
        printf("# sync_survives, %s: kill %s%" PRId64 "\n",
               tu_power_loss_name((enum tu_power_loss_pattern)p),
               kill_ms < 0 ? "when done" : "after ms ",
               kill_ms < 0 ? 0 : kill_ms);
        run_child(dir, journal, &pl, &a, kill_ms);
        tu_power_loss(dir, journal, (enum tu_power_loss_pattern)p, &rng);
        reopen_and_check(dir, NULL, &pl, &a, "sync, power loss");
        tu_rm_rf(dir);
        unlink(journal);
        free(dir);
        free(journal);
    }
    /* kill -9 alone: the page cache keeps what was written */
    char *dir = tu_path("sync-kill");
    struct acked a = {0};
    run_child(dir, NULL, &pl, &a, -1);
    reopen_and_check(dir, NULL, &pl, &a, "sync, kill -9");
    tu_rm_rf(dir);
    free(dir);
}

static void test_concurrent_flush_kill(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    struct plan pl = {4, 3000, 0, 120, 2, 1};
    int rounds = (int)tu_env_u64("RAVEL_TEST_MWF_ROUNDS", 6);
    char *dir = tu_path("concurrent-kill");
    for (int r = 0; r < rounds; r++) {
        /* a fresh database each round: the keys are the same */
        tu_rm_rf(dir);
        struct acked a = {0};
        int64_t kill_ms = r == rounds - 1 ? -1
                          : 10 + (int64_t)(tu_rand(&rng) % 300);
        printf("# concurrent_flush_kill, round %d: kill %s%" PRId64 "\n", r,
               kill_ms < 0 ? "when done" : "after ms ",
               kill_ms < 0 ? 0 : kill_ms);
        run_child(dir, NULL, &pl, &a, kill_ms);
        reopen_and_check(dir, NULL, &pl, &a, "concurrent, kill -9");
        if (kill_ms < 0 && a.flushes == 0)
            fail_msg("the flusher thread never flushed");
    }
    tu_rm_rf(dir);
    free(dir);
}

static void test_concurrent_close_reopen(void **state)
{
    (void)state;
    struct plan pl = {4, 3000, 50, 120, 2, 1};
    char *dir = tu_path("concurrent-close");
    struct run r = {.plan = &pl};
    r.db = tu_open_ok(dir, open_extra(&pl));
    run_writers(&r);
    tu_assert_no_thread_failures();
    printf("# %u ravel_flush_wal calls during the writes\n",
           atomic_load(&r.flushes));
    assert_true(atomic_load(&r.flushes) > 0);
    TU_OK(ravel_close(r.db));
    struct acked a = {0};
    for (uint32_t t = 0; t < pl.threads; t++)
        a.acked[t] = a.durable[t] = pl.puts;
    uint32_t n = reopen_and_check(dir, open_extra(&pl), &pl, &a,
                                  "concurrent, close");
    assert_int_equal(n, pl.threads * pl.puts);
    tu_rm_rf(dir);
    free(dir);
}

static int put_i(ravel_db *db, int flags, uint32_t i, uint32_t val_len)
{
    ravel_batch *b = NULL;
    TU_OK(ravel_batch_new(&b));
    int rc = put_one(db, b, 0, i, val_len, flags);
    ravel_batch_free(b);
    return rc;
}

/* After the failure: writes refused, ravel_flush_wal reports it, close
** does not report it again, and the database opens with a whole prefix of
** the puts (none of those the failed write held). */
static void expect_failed_state(ravel_db *db, const char *dir,
                                uint32_t written_before)
{
    TU_EXPECT_RC(RAVEL_READONLY, put_i(db, 0, 999999, 10));
    TU_EXPECT_RC(RAVEL_IOERR, ravel_flush_wal(db, 0));
    TU_EXPECT_RC(RAVEL_IOERR, ravel_flush_wal(db, 1));
    char *reason = tu_prop(db, "ravel.read-only-reason");
    assert_non_null(strstr(reason, "write"));
    ravel_free(reason);
    TU_OK(ravel_close(db));
    rv_fault_arm(RV_FAULT_WAL_WRITE, -1, 0);
    ravel_db *db2 = tu_open_ok(dir, NULL);
    char key[32];
    for (uint32_t i = 0; i < written_before + 2; i++) {
        key_of(key, sizeof key, 0, i);
        void *v = NULL;
        size_t got;
        int rc = ravel_get(db2, NULL, key, strlen(key), &v, &got);
        ravel_free(v);
        if ((rc == RAVEL_OK) != (i < written_before))
            fail_msg("after the failed buffer write, %s is %s", key,
                     ravel_errstr(rc));
    }
    TU_OK(ravel_close(db2));
}

static void test_fault_on_buffer_write(void **state)
{
    (void)state;
    /* 1. ravel_flush_wal's write fails. */
    char *dir = tu_path("fault-flush");
    ravel_db *db = tu_open_ok(dir, "manual_wal_flush=true");
    for (uint32_t i = 0; i < 10; i++)
        TU_OK(put_i(db, 0, i, 100));
    TU_OK(ravel_flush_wal(db, 0));
    rv_fault_arm(RV_FAULT_WAL_WRITE, 0, EIO);
    /* Buffered: no write is attempted, so the armed fault waits. */
    for (uint32_t i = 10; i < 20; i++)
        TU_OK(put_i(db, 0, i, 100));
    TU_EXPECT_RC(RAVEL_IOERR, ravel_flush_wal(db, 0));
    expect_failed_state(db, dir, 10);

    /* 2. The write of a group with a RAVEL_SYNC member fails. */
    char *dir2 = tu_path("fault-sync");
    db = tu_open_ok(dir2, "manual_wal_flush=true");
    for (uint32_t i = 0; i < 10; i++)
        TU_OK(put_i(db, 0, i, 100));
    TU_OK(ravel_flush_wal(db, 1));
    rv_fault_arm(RV_FAULT_WAL_WRITE, 0, EIO);
    TU_OK(put_i(db, 0, 10, 100));
    TU_EXPECT_RC(RAVEL_IOERR, put_i(db, RAVEL_SYNC, 11, 100));
    expect_failed_state(db, dir2, 10);

    /* 3. The buffer fills up and its write fails: the put whose group did
    ** not fit gets RAVEL_IOERR, none before it fails. */
    char *dir3 = tu_path("fault-full");
    db = tu_open_ok(dir3, "manual_wal_flush=true");
    rv_fault_arm(RV_FAULT_WAL_WRITE, 0, EIO);
    uint32_t i = 0;
    int rc = RAVEL_OK;
    for (; i < 100000 && rc == RAVEL_OK; i++)
        rc = put_i(db, 0, i, 1000);
    if (rc != RAVEL_IOERR)
        fail_msg("filling the buffer: put %u returned %s, expected "
                 "RAVEL_IOERR", i - 1, ravel_errstr(rc));
    /* I-1 puts of 1022 to 1100 bytes of record were buffered, and the
    ** I-th did not fit. */
    if (i * 1100u < BUFFER_BYTES || (i - 1) * 1022u > BUFFER_BYTES)
        fail_msg("the buffer write failed at put %u of 1000 bytes: the "
                 "1 MiB buffer was not full then", i - 1);
    expect_failed_state(db, dir3, 0);

    tu_rm_rf(dir);
    tu_rm_rf(dir2);
    tu_rm_rf(dir3);
    free(dir);
    free(dir2);
    free(dir3);
}

/* The number after PREFIX in the stats TEXT's "wal buffer:" line. */
static uint64_t stat_after(const char *text, const char *prefix)
{
    const char *line = strstr(text, "wal buffer: ");
    assert_non_null(line);
    const char *p = strstr(line, prefix);
    if (!p)
        fail_msg("no '%s' in the stats:\n%s", prefix, text);
    return strtoull(p + strlen(prefix), NULL, 10);
}

static void test_stats(void **state)
{
    (void)state;
    char *dir = tu_path("stats");
    ravel_db *db = tu_open_ok(dir, "manual_wal_flush=true");
    for (uint32_t i = 0; i < 10; i++)
        TU_OK(put_i(db, 0, i, 100));
    char *s = tu_prop(db, "ravel.stats");
    uint64_t buffered = stat_after(s, "manual_wal_flush=true, ");
    if (buffered < 10 * 100)
        fail_msg("%" PRIu64 " bytes buffered after 10 puts of 100 bytes:\n%s",
                 buffered, s);
    ravel_free(s);
    TU_OK(ravel_flush_wal(db, 0));
    TU_OK(put_i(db, RAVEL_SYNC, 10, 100));
    s = tu_prop(db, "ravel.stats");
    assert_int_equal(stat_after(s, "manual_wal_flush=true, "), 0);
    assert_int_equal(stat_after(s, "sync, "), 1);
    assert_int_equal(stat_after(s, "sync, 1 ravel_flush_wal"), 0);
    assert_non_null(strstr(s, ", 1 ravel_flush_wal"));
    ravel_free(s);
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, NULL);
    s = tu_prop(db, "ravel.stats");
    assert_non_null(strstr(s, "wal buffer: none (manual_wal_flush=false"));
    ravel_free(s);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

static const struct crash_role roles[] = {
    {"writer", child_main, sizeof(struct child_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_without_flush),
        cmocka_unit_test(test_flush_before_kill),
        cmocka_unit_test(test_sync_survives),
        cmocka_unit_test(test_concurrent_flush_kill),
        cmocka_unit_test(test_concurrent_close_reopen),
        cmocka_unit_test(test_fault_on_buffer_write),
        cmocka_unit_test(test_stats),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
