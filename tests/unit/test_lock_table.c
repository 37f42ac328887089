/*
** test_lock_table.c -- the per-key locks of pessimistic transactions
** (lib/txn/lock_table.h), with real threads: mutual exclusion, re-entry,
** timeouts that name the key and its holder and leave nothing locked,
** deadlocks of two and three transactions failing the youngest while the
** others go on, no deadlock called in a long chain without a cycle, and
** releases that wake the waiters.
**
** Threads are sequenced by waiting (yielding) until the table shows a
** waiter queued on a key, never by sleeping a guessed time; no test
** asserts how long anything takes, except that a timeout waited at least
** its timeout.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "txn/lock_table.h"
#include "util/clock.h"
#include "util/error.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long enough never to end a wait of these tests that should succeed: a
** test that breaks fails with RV_LOCK_TIMEDOUT instead of hanging. */
#define LONG_NS (30ll * 1000 * 1000 * 1000)

static rv_lock_table *new_table(int stripes, int depth)
{
    rv_lock_table *t;
    assert_int_equal(rv_lock_table_new(stripes, depth, &t), RAVEL_OK);
    return t;
}

static int acquire(rv_lock_table *t, uint64_t txn, const char *key,
                   int64_t timeout_ns, struct rv_lock_wait_info *info)
{
    return rv_lock_table_acquire(t, txn, key, strlen(key), timeout_ns, info);
}

static void release(rv_lock_table *t, uint64_t txn, const char *key)
{
    rv_lock_table_release(t, txn, key, strlen(key));
}

static uint64_t owner(rv_lock_table *t, const char *key)
{
    return rv_lock_table_owner(t, key, strlen(key));
}

/* Yields until N transactions wait for KEY. */
static void await_waiters(rv_lock_table *t, const char *key, uint32_t n)
{
    while (rv_lock_table_waiters(t, key, strlen(key)) != n)
        sched_yield();
}

/* --------------------------------------------------- mutual exclusion */

#define MX_THREADS 8
#define MX_ROUNDS 3000
#define MX_KEYS 3

/* Plain counters: only the lock table's hand-offs order their updates
** (TSan, in the concurrency suite, reports a race if they do not). */
struct mx_state {
    rv_lock_table *t;
    _Atomic uint64_t next_txn;
    long counters[MX_KEYS];
    _Atomic int failures;
};

static void *mx_thread(void *arg)
{
    struct mx_state *st = arg;
    char key[16];
    for (int i = 0; i < MX_ROUNDS; i++) {
        int k = i % MX_KEYS;
        snprintf(key, sizeof key, "counter-%d", k);
        uint64_t txn = atomic_fetch_add(&st->next_txn, 1);
        if (acquire(st->t, txn, key, -1, NULL) != RAVEL_OK) {
            atomic_fetch_add(&st->failures, 1);
            continue;
        }
        long v = st->counters[k];
        if ((i & 15) == 0)
            sched_yield(); /* widen the window a broken lock would show */
        st->counters[k] = v + 1;
        release(st->t, txn, key);
    }
    return NULL;
}

static void run_mutual_exclusion(int stripes)
{
    struct mx_state st = {.t = new_table(stripes, -1)};
    atomic_init(&st.next_txn, 1);
    atomic_init(&st.failures, 0);
    pthread_t th[MX_THREADS];
    for (int i = 0; i < MX_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, mx_thread, &st), 0);
    for (int i = 0; i < MX_THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&st.failures), 0);
    long total = 0;
    for (int k = 0; k < MX_KEYS; k++) {
        char key[16];
        snprintf(key, sizeof key, "counter-%d", k);
        assert_int_equal(owner(st.t, key), 0);
        total += st.counters[k];
    }
    assert_int_equal(total, (long)MX_THREADS * MX_ROUNDS);
    for (int k = 0; k < MX_KEYS; k++)
        assert_int_equal(st.counters[k],
                         (long)MX_THREADS * MX_ROUNDS / MX_KEYS);
    rv_lock_table_free(st.t);
}

static void test_mutual_exclusion(void **state)
{
    (void)state;
    run_mutual_exclusion(0);   /* the default 64 stripes */
    run_mutual_exclusion(1);   /* every key in one stripe */
}

/* ------------------------------------------------------------ re-entry */

static void test_reentrant(void **state)
{
    (void)state;
    rv_lock_table *t = new_table(4, -1);
    struct rv_lock_wait_info info;
    assert_int_equal(acquire(t, 5, "k", 0, &info), RAVEL_OK);
    assert_int_equal(info.already_held, 0);
    assert_int_equal(acquire(t, 5, "k", 0, &info), RAVEL_OK);
    assert_int_equal(info.already_held, 1);
    assert_int_equal(acquire(t, 5, "k", -1, &info), RAVEL_OK);
    assert_int_equal(info.already_held, 1);
    assert_int_equal(owner(t, "k"), 5);
    assert_int_equal(acquire(t, 6, "k", 0, &info), RV_LOCK_TIMEDOUT);
    assert_int_equal(info.holder, 5);
    /* not counted: one release frees it */
    release(t, 5, "k");
    assert_int_equal(owner(t, "k"), 0);
    assert_int_equal(acquire(t, 6, "k", 0, &info), RAVEL_OK);
    assert_int_equal(info.already_held, 0);
    /* a release by a transaction that does not hold it changes nothing */
    release(t, 5, "k");
    assert_int_equal(owner(t, "k"), 6);
    release(t, 6, "k");
    /* an empty key is a key */
    assert_int_equal(rv_lock_table_acquire(t, 7, "", 0, 0, NULL), RAVEL_OK);
    assert_int_equal(rv_lock_table_acquire(t, 8, "", 0, 0, NULL),
                     RV_LOCK_TIMEDOUT);
    rv_lock_table_release(t, 7, "", 0);
    assert_int_equal(rv_lock_table_acquire(t, 8, "", 0, 0, NULL), RAVEL_OK);
    assert_int_equal(rv_lock_table_acquire(t, 0, "x", 1, 0, NULL),
                     RAVEL_INVALID);
    rv_lock_table_free(t); /* frees what is still locked */
}

/* ------------------------------------------------------------- timeout */

/* A transaction of a thread: waits for WAIT_KEY (holding HELD, if any);
** when it gets it, releases it and HELD; when it fails, releases HELD
** (a rollback).  RC and INFO: the acquire's. */
struct job {
    rv_lock_table *t;
    uint64_t txn;
    const char *wait_key;
    const char *held;
    int64_t timeout_ns;
    int rc;
    struct rv_lock_wait_info info;
    char msg[512];
    pthread_t th;
};

static void *job_thread(void *arg)
{
    struct job *j = arg;
    j->rc = acquire(j->t, j->txn, j->wait_key, j->timeout_ns, &j->info);
    if (j->rc != RAVEL_OK)
        snprintf(j->msg, sizeof j->msg, "%s", rv_errmsg_get());
    else
        release(j->t, j->txn, j->wait_key);
    if (j->held)
        release(j->t, j->txn, j->held);
    return NULL;
}

static void job_start(struct job *j, rv_lock_table *t, uint64_t txn,
                      const char *wait_key, const char *held)
{
    *j = (struct job){.t = t, .txn = txn, .wait_key = wait_key,
                      .held = held, .timeout_ns = LONG_NS};
    assert_int_equal(pthread_create(&j->th, NULL, job_thread, j), 0);
}

static void job_join(struct job *j)
{
    pthread_join(j->th, NULL);
}

static void test_timeout(void **state)
{
    (void)state;
    rv_lock_table *t = new_table(0, -1);
    const char key[] = "acct\x01'7";
    assert_int_equal(acquire(t, 11, key, 0, NULL), RAVEL_OK);

    struct rv_lock_wait_info info;
    int64_t timeout = 20 * 1000 * 1000;
    uint64_t start = rv_now_nanos();
    assert_int_equal(acquire(t, 12, key, timeout, &info), RV_LOCK_TIMEDOUT);
    assert_true(rv_now_nanos() - start >= (uint64_t)timeout);
    assert_int_equal(info.holder, 11);
    assert_int_equal(info.klen, strlen(key));
    assert_memory_equal(info.key, key, strlen(key));
    const char *msg = rv_errmsg_get();
    assert_non_null(strstr(msg, "acct\\x01\\x277")); /* escaped */
    assert_non_null(strstr(msg, "txn 12"));
    assert_non_null(strstr(msg, "txn 11"));
    assert_non_null(strstr(msg, "timed out"));

    /* no wait at all with 0, the same information */
    assert_int_equal(acquire(t, 12, key, 0, &info), RV_LOCK_TIMEDOUT);
    assert_int_equal(info.holder, 11);
    assert_non_null(strstr(rv_errmsg_get(), "txn 11"));

    /* a waiter queued behind another times out and leaves the queue;
    ** the one before it still gets the key */
    struct job first;
    job_start(&first, t, 13, key, NULL);
    await_waiters(t, key, 1);
    assert_int_equal(acquire(t, 14, key, 1000 * 1000, &info),
                     RV_LOCK_TIMEDOUT);
    assert_int_equal(info.holder, 11);
    assert_int_equal(rv_lock_table_waiters(t, key, strlen(key)), 1);
    release(t, 11, key);
    job_join(&first);
    assert_int_equal(first.rc, RAVEL_OK);

    /* the timed-out transactions hold nothing: another gets it at once */
    assert_int_equal(owner(t, key), 0);
    assert_int_equal(acquire(t, 15, key, 0, &info), RAVEL_OK);
    assert_int_equal(info.already_held, 0);
    release(t, 15, key);
    rv_lock_table_free(t);
}

/* ----------------------------------------------------------- deadlocks */

/* Txn 1 holds A, txn 2 holds B; one of them waits for the other's key,
** then the other asks for the first's: a cycle of two.  The youngest (2)
** fails, whichever closed the cycle; the other gets its key once 2 rolls
** back. */
static void test_deadlock_two(void **state)
{
    (void)state;
    for (int closer_is_young = 0; closer_is_young < 2; closer_is_young++) {
        rv_lock_table *t = new_table(0, -1);
        assert_int_equal(acquire(t, 1, "A", 0, NULL), RAVEL_OK);
        assert_int_equal(acquire(t, 2, "B", 0, NULL), RAVEL_OK);
        struct job waiter, closer;
        if (closer_is_young) {
            job_start(&waiter, t, 1, "B", "A");
            await_waiters(t, "B", 1);
            job_start(&closer, t, 2, "A", "B");
        } else {
            job_start(&waiter, t, 2, "A", "B");
            await_waiters(t, "A", 1);
            job_start(&closer, t, 1, "B", "A");
        }
        job_join(&waiter);
        job_join(&closer);
        struct job *young = closer_is_young ? &closer : &waiter;
        struct job *old = closer_is_young ? &waiter : &closer;
        assert_int_equal(young->rc, RV_LOCK_DEADLOCK);
        assert_int_equal(old->rc, RAVEL_OK);
        assert_int_equal(young->info.holder, 1);
        assert_int_equal(young->info.cycle_len, 2);
        assert_int_equal(young->info.cycle[0], 2);
        assert_int_equal(young->info.cycle[1], 1);
        assert_non_null(strstr(young->msg, "deadlock"));
        assert_non_null(strstr(young->msg, "'A'"));
        assert_non_null(strstr(young->msg, "2 -> 1 -> 2"));
        assert_int_equal(owner(t, "A"), 0);
        assert_int_equal(owner(t, "B"), 0);
        rv_lock_table_free(t);
    }
}

/* Txns 1, 2, 3 hold A, B, C.  ORDER[i] is the i-th to wait: txn x waits
** for the key of the next (1 for B, 2 for C, 3 for A); the last to wait
** closes the cycle.  Txn 3, the youngest, fails; 1 and 2 then go on. */
static void run_deadlock_three(const int order[3])
{
    static const char *held[4] = {NULL, "A", "B", "C"};
    static const char *wants[4] = {NULL, "B", "C", "A"};
    rv_lock_table *t = new_table(0, -1);
    for (uint64_t x = 1; x <= 3; x++)
        assert_int_equal(acquire(t, x, held[x], 0, NULL), RAVEL_OK);
    struct job jobs[4];
    for (int i = 0; i < 3; i++) {
        int x = order[i];
        job_start(&jobs[x], t, (uint64_t)x, wants[x], held[x]);
        if (i < 2)
            await_waiters(t, wants[x], 1);
    }
    for (int x = 1; x <= 3; x++)
        job_join(&jobs[x]);
    assert_int_equal(jobs[1].rc, RAVEL_OK);
    assert_int_equal(jobs[2].rc, RAVEL_OK);
    assert_int_equal(jobs[3].rc, RV_LOCK_DEADLOCK);
    const struct rv_lock_wait_info *in = &jobs[3].info;
    assert_int_equal(in->holder, 1);
    assert_int_equal(in->cycle_len, 3);
    assert_int_equal(in->cycle[0], 3);
    assert_int_equal(in->cycle[1], 1);
    assert_int_equal(in->cycle[2], 2);
    assert_non_null(strstr(jobs[3].msg, "3 -> 1 -> 2 -> 3"));
    for (uint64_t x = 1; x <= 3; x++)
        assert_int_equal(owner(t, held[x]), 0);
    rv_lock_table_free(t);
}

static void test_deadlock_three(void **state)
{
    (void)state;
    static const int orders[][3] = {
        {1, 2, 3}, /* the youngest closes the cycle: fails at once */
        {3, 1, 2}, /* the youngest waits: marked, woken, fails */
        {2, 3, 1},
    };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
        run_deadlock_three(orders[i]);
}

/* A chain of CHAIN transactions, each waiting for the next one's key,
** the last running: deeper than the detect depth, no cycle, no deadlock;
** it unwinds once the last commits. */
#define CHAIN 60

static void test_long_chain(void **state)
{
    (void)state;
    for (int young_first = 0; young_first < 2; young_first++) {
        rv_lock_table *t = new_table(0, -1);
        char keys[CHAIN][16];
        struct job jobs[CHAIN];
        /* txn ids rise along the chain, or fall */
        uint64_t id[CHAIN];
        for (int i = 0; i < CHAIN; i++) {
            id[i] = young_first ? (uint64_t)(CHAIN - i) : (uint64_t)(i + 1);
            snprintf(keys[i], sizeof keys[i], "k%d", i);
            assert_int_equal(acquire(t, id[i], keys[i], 0, NULL), RAVEL_OK);
        }
        /* from the end, so each new waiter walks the whole chain */
        for (int i = CHAIN - 2; i >= 0; i--) {
            job_start(&jobs[i], t, id[i], keys[i + 1], keys[i]);
            await_waiters(t, keys[i + 1], 1);
        }
        release(t, id[CHAIN - 1], keys[CHAIN - 1]);
        for (int i = 0; i < CHAIN - 1; i++) {
            job_join(&jobs[i]);
            assert_int_equal(jobs[i].rc, RAVEL_OK);
        }
        for (int i = 0; i < CHAIN; i++)
            assert_int_equal(owner(t, keys[i]), 0);
        rv_lock_table_free(t);
    }
}

/* Txn 1 holds A; 2, then 3 (holding B) queue for it.  1's release hands
** A to 2, so 3 now waits for 2; then 2 asks for B: the cycle 2 -> 3 -> 2
** exists only through the hand-off's new edge, and is found: 3, the
** youngest, fails, and 2 gets B. */
struct two_keys {
    rv_lock_table *t;
    int rc_first, rc_second;
};

static void *two_keys_thread(void *arg)
{
    struct two_keys *j = arg;
    j->rc_first = acquire(j->t, 2, "A", LONG_NS, NULL);
    j->rc_second = acquire(j->t, 2, "B", LONG_NS, NULL);
    release(j->t, 2, "B");
    release(j->t, 2, "A");
    return NULL;
}

static void test_deadlock_after_hand_off(void **state)
{
    (void)state;
    rv_lock_table *t = new_table(0, -1);
    assert_int_equal(acquire(t, 1, "A", 0, NULL), RAVEL_OK);
    assert_int_equal(acquire(t, 3, "B", 0, NULL), RAVEL_OK);
    struct two_keys two = {.t = t};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, two_keys_thread, &two), 0);
    await_waiters(t, "A", 1);
    struct job three;
    job_start(&three, t, 3, "A", "B");
    await_waiters(t, "A", 2);
    release(t, 1, "A");
    pthread_join(th, NULL);
    job_join(&three);
    assert_int_equal(two.rc_first, RAVEL_OK);
    assert_int_equal(two.rc_second, RAVEL_OK);
    assert_int_equal(three.rc, RV_LOCK_DEADLOCK);
    assert_int_equal(three.info.holder, 2);
    assert_int_equal(three.info.cycle_len, 2);
    assert_int_equal(three.info.cycle[1], 2);
    assert_int_equal(owner(t, "A"), 0);
    assert_int_equal(owner(t, "B"), 0);
    rv_lock_table_free(t);
}

/* ------------------------------------------------------------ fairness */

/* Waiters get a key in the order they came: each appends its id to a
** list only the key's lock protects. */
#define FIFO_WAITERS 5

struct fifo_state {
    rv_lock_table *t;
    uint64_t order[FIFO_WAITERS];
    int n;
};

struct fifo_job {
    struct fifo_state *st;
    uint64_t txn;
    int rc;
};

static void *fifo_thread(void *arg)
{
    struct fifo_job *j = arg;
    j->rc = acquire(j->st->t, j->txn, "K", LONG_NS, NULL);
    if (j->rc == RAVEL_OK) {
        j->st->order[j->st->n++] = j->txn;
        release(j->st->t, j->txn, "K");
    }
    return NULL;
}

static void test_fifo(void **state)
{
    (void)state;
    struct fifo_state st = {.t = new_table(0, -1)};
    assert_int_equal(acquire(st.t, 100, "K", 0, NULL), RAVEL_OK);
    struct fifo_job jobs[FIFO_WAITERS];
    pthread_t th[FIFO_WAITERS];
    /* ids not in arrival order: arrival decides, not age */
    static const uint64_t ids[FIFO_WAITERS] = {7, 3, 9, 1, 5};
    for (int i = 0; i < FIFO_WAITERS; i++) {
        jobs[i] = (struct fifo_job){.st = &st, .txn = ids[i]};
        assert_int_equal(pthread_create(&th[i], NULL, fifo_thread, &jobs[i]),
                         0);
        await_waiters(st.t, "K", (uint32_t)i + 1);
    }
    release(st.t, 100, "K");
    for (int i = 0; i < FIFO_WAITERS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].rc, RAVEL_OK);
    }
    assert_int_equal(st.n, FIFO_WAITERS);
    for (int i = 0; i < FIFO_WAITERS; i++)
        assert_int_equal(st.order[i], ids[i]);
    rv_lock_table_free(st.t);
}

/* ---------------------------------------------------------- release_all */

static void test_release_all(void **state)
{
    (void)state;
    rv_lock_table *t = new_table(2, -1);
    const char *names[3] = {"k1", "k2", "k3"};
    struct rv_lock_key keys[3];
    for (int i = 0; i < 3; i++) {
        keys[i] = (struct rv_lock_key){names[i], strlen(names[i])};
        assert_int_equal(acquire(t, 1, names[i], 0, NULL), RAVEL_OK);
    }
    struct job jobs[4];
    job_start(&jobs[0], t, 2, "k1", NULL);
    await_waiters(t, "k1", 1);
    job_start(&jobs[1], t, 3, "k2", NULL);
    job_start(&jobs[2], t, 4, "k3", NULL);
    job_start(&jobs[3], t, 5, "k1", NULL); /* queued behind txn 2 */
    await_waiters(t, "k1", 2);
    await_waiters(t, "k2", 1);
    await_waiters(t, "k3", 1);
    rv_lock_table_release_all(t, 1, keys, 3);
    for (int i = 0; i < 4; i++) {
        job_join(&jobs[i]);
        assert_int_equal(jobs[i].rc, RAVEL_OK);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(owner(t, names[i]), 0);
    rv_lock_table_free(t);
}

/* --------------------------------------------------- random deadlocks */

/* Threads run transactions that lock 2..4 of a few keys in random order,
** waiting forever: only the deadlock detection ends a cycle (a missed one
** hangs the test, which its timeout fails).  A transaction that fails
** with RV_LOCK_DEADLOCK releases its keys and retries under its id (so it
** grows older than the newer ones, and gets through); one that gets them
** all adds 1 to the plain counter of each.  The counters must sum to what
** the committed transactions added. */
#define RD_THREADS 6
#define RD_TXNS 400
#define RD_KEYS 6

struct rd_state {
    rv_lock_table *t;
    _Atomic uint64_t next_txn;
    long counters[RD_KEYS];
    _Atomic long added;
    _Atomic long deadlocks;
    _Atomic int errors;
};

static void *rd_thread(void *arg)
{
    struct rd_state *st = arg;
    unsigned seed = (unsigned)(uintptr_t)&seed;
    char names[RD_KEYS][8];
    for (int k = 0; k < RD_KEYS; k++)
        snprintf(names[k], sizeof names[k], "r%d", k);
    for (int n = 0; n < RD_TXNS; n++) {
        uint64_t txn = atomic_fetch_add(&st->next_txn, 1);
        int want = 2 + (int)(rand_r(&seed) % 3), picked[4], got = 0;
        for (int i = 0; i < want; i++)
            picked[i] = (int)(rand_r(&seed) % RD_KEYS); /* repeats: re-entry */
        struct rv_lock_key held[4];
        int held_index[4];
        for (;;) {
            got = 0;
            int rc = RAVEL_OK;
            for (int i = 0; i < want && rc == RAVEL_OK; i++) {
                const char *name = names[picked[i]];
                struct rv_lock_wait_info info;
                rc = acquire(st->t, txn, name, -1, &info);
                sched_yield(); /* let others take keys meanwhile */
                if (rc == RAVEL_OK && !info.already_held) {
                    held_index[got] = picked[i];
                    held[got++] = (struct rv_lock_key){name, strlen(name)};
                }
            }
            if (rc == RAVEL_OK)
                break;
            if (rc != RV_LOCK_DEADLOCK)
                atomic_fetch_add(&st->errors, 1);
            atomic_fetch_add(&st->deadlocks, 1);
            rv_lock_table_release_all(st->t, txn, held, (size_t)got);
            sched_yield();
        }
        for (int i = 0; i < got; i++)
            st->counters[held_index[i]]++;
        atomic_fetch_add(&st->added, got);
        rv_lock_table_release_all(st->t, txn, held, (size_t)got);
    }
    return NULL;
}

static void test_random_deadlocks(void **state)
{
    (void)state;
    struct rd_state st = {.t = new_table(4, -1)};
    atomic_init(&st.next_txn, 1);
    atomic_init(&st.added, 0);
    atomic_init(&st.deadlocks, 0);
    atomic_init(&st.errors, 0);
    pthread_t th[RD_THREADS];
    for (int i = 0; i < RD_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, rd_thread, &st), 0);
    for (int i = 0; i < RD_THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&st.errors), 0);
    long total = 0;
    for (int k = 0; k < RD_KEYS; k++)
        total += st.counters[k];
    assert_int_equal(total, atomic_load(&st.added));
    print_message("random deadlocks: %ld retries in %d transactions\n",
                  atomic_load(&st.deadlocks), RD_THREADS * RD_TXNS);
    rv_lock_table_free(st.t);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    rv_lock_table *t;
    assert_int_equal(rv_lock_table_new(-1, -1, &t), RAVEL_INVALID);
    assert_null(t);
    assert_int_equal(rv_lock_table_new(RV_LOCK_STRIPES_MAX + 1, -1, &t),
                     RAVEL_INVALID);
    assert_int_equal(rv_lock_table_new(0, RV_LOCK_DETECT_DEPTH_MAX + 1, &t),
                     RAVEL_INVALID);
    /* detection off: a cycle ends by the timeout */
    t = new_table(3, 0);
    assert_int_equal(acquire(t, 1, "A", 0, NULL), RAVEL_OK);
    assert_int_equal(acquire(t, 2, "B", 0, NULL), RAVEL_OK);
    struct job waiter;
    job_start(&waiter, t, 1, "B", "A");
    await_waiters(t, "B", 1);
    assert_int_equal(acquire(t, 2, "A", 1000 * 1000, NULL), RV_LOCK_TIMEDOUT);
    release(t, 2, "B");
    job_join(&waiter);
    assert_int_equal(waiter.rc, RAVEL_OK);
    rv_lock_table_free(t);
    rv_lock_table_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutual_exclusion),
        cmocka_unit_test(test_reentrant),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_deadlock_two),
        cmocka_unit_test(test_deadlock_three),
        cmocka_unit_test(test_deadlock_after_hand_off),
        cmocka_unit_test(test_long_chain),
        cmocka_unit_test(test_fifo),
        cmocka_unit_test(test_release_all),
        cmocka_unit_test(test_random_deadlocks),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
