/*
** test_txn.c -- transactions through the public API: reads through their
** own writes over the snapshot, commit and rollback, conflicts in both
** modes, savepoints, lost updates impossible under many threads, a bank
** of accounts whose sum never changes while transfers commit and readers
** sum it through snapshots, and a deadlock that fails the youngest.
*/
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dirs;

static char *new_dir(const char *what)
{
    return tu_path("txn-%s-%d", what, dirs++);
}

/* The value of KEY through T as a string (NULL: not found). */
static char *tget(ravel_txn *t, const char *key, int for_update, int *rc)
{
    void *v = NULL;
    size_t n = 0;
    *rc = for_update ? ravel_txn_get_for_update(t, key, strlen(key), &v, &n)
                     : ravel_txn_get(t, key, strlen(key), &v, &n);
    if (*rc != RAVEL_OK)
        return NULL;
    char *s = malloc(n + 1);
    memcpy(s, v, n);
    s[n] = '\0';
    ravel_free(v);
    return s;
}

static void tput(ravel_txn *t, const char *k, const char *v)
{
    TU_OK(ravel_txn_put(t, k, strlen(k), v, strlen(v)));
}

static void test_basics(void **state)
{
    (void)state;
    char *dir = new_dir("basics");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "0");
    for (int mode = 0; mode < 2; mode++) {
        int flags = mode ? RAVEL_TXN_OPTIMISTIC : 0;
        ravel_txn *t = NULL;
        TU_OK(ravel_txn_begin(db, flags, &t));
        int rc;
        char *v = tget(t, "a", 0, &rc);
        assert_string_equal(v, mode ? "1" : "0");
        free(v);
        tput(t, "a", mode ? "2" : "1");
        tput(t, "new", "x");
        TU_OK(ravel_txn_delete(t, "gone", 4));
        v = tget(t, "a", 0, &rc);
        assert_string_equal(v, mode ? "2" : "1"); /* its own write */
        free(v);
        tu_expect(db, NULL, "a", mode ? "1" : "0"); /* not yet visible */
        tu_expect(db, NULL, "new", mode ? "x" : NULL);
        TU_OK(ravel_txn_commit(t));
        tu_expect(db, NULL, "a", mode ? "2" : "1");
        tu_expect(db, NULL, "new", "x");
        TU_EXPECT_INVALID(ravel_txn_put(t, "a", 1, "z", 1)); /* over */
        ravel_txn_free(t);
    }
    /* rollback and free discard */
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "a", "rolled back");
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "a", "freed");
    ravel_txn_free(t);
    tu_expect(db, NULL, "a", "2");
    /* savepoints: writes after one are undone, before it kept */
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "s1", "1");
    TU_OK(ravel_txn_savepoint(t));
    tput(t, "s1", "changed");
    tput(t, "s2", "2");
    TU_OK(ravel_txn_rollback_to_savepoint(t));
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_txn_rollback_to_savepoint(t));
    int rc;
    char *v = tget(t, "s1", 0, &rc);
    assert_string_equal(v, "1");
    free(v);
    assert_null(tget(t, "s2", 0, &rc));
    assert_int_equal(rc, RAVEL_NOTFOUND);
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "s1", "1");
    tu_expect(db, NULL, "s2", NULL);
    TU_OK(ravel_close(db));
    free(dir);
}

/* A key written by another after the snapshot: pessimistic
** get_for_update fails at once, optimistic commit fails; nothing of the
** transaction is written. */
static void test_conflicts(void **state)
{
    (void)state;
    char *dir = new_dir("conflicts");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "k", "0");
    ravel_txn *t = NULL;
    int rc;
    TU_OK(ravel_txn_begin(db, 0, &t));
    tu_put(db, 0, "k", "1");
    assert_null(tget(t, "k", 1, &rc));
    assert_int_equal(rc, RAVEL_CONFLICT);
    assert_non_null(strstr(ravel_errmsg(), "'k'"));
    ravel_txn_free(t);

    TU_OK(ravel_txn_begin(db, RAVEL_TXN_OPTIMISTIC, &t));
    char *v = tget(t, "k", 1, &rc);
    assert_string_equal(v, "1");
    free(v);
    tput(t, "other", "x");
    tu_put(db, 0, "k", "2");
    TU_EXPECT_RC(RAVEL_CONFLICT, ravel_txn_commit(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "other", NULL);

    /* a blind write conflicts too (write-write) */
    TU_OK(ravel_txn_begin(db, RAVEL_TXN_OPTIMISTIC, &t));
    tput(t, "k", "mine");
    tu_put(db, 0, "k", "3");
    TU_EXPECT_RC(RAVEL_CONFLICT, ravel_txn_commit(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "k", "3");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ----------------------------------------------------- many threads */

struct worker {
    ravel_db *db;
    int flags, id, rounds;
    long committed, retried;
};

/* Adds 1 to counter "n" in a transaction, retrying on the retriable
** codes; counts the commits. */
static void *increment_run(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < w->rounds && !tu_thread_failures(); i++) {
        for (;;) {
            ravel_txn *t = NULL;
            if (ravel_txn_begin(w->db, w->flags, &t) != RAVEL_OK) {
                tu_thread_fail("begin: %s", ravel_errmsg());
                return NULL;
            }
            int rc;
            char *v = tget(t, "n", 1, &rc);
            long n = v ? atol(v) : 0;
            free(v);
            if (rc == RAVEL_OK || rc == RAVEL_NOTFOUND) {
                char buf[32];
                snprintf(buf, sizeof buf, "%ld", n + 1);
                rc = ravel_txn_put(t, "n", 1, buf, strlen(buf));
            }
            if (rc == RAVEL_OK)
                rc = ravel_txn_commit(t);
            ravel_txn_free(t);
            if (rc == RAVEL_OK) {
                w->committed++;
                break;
            }
            if (rc != RAVEL_CONFLICT && rc != RAVEL_TIMEDOUT &&
                rc != RAVEL_DEADLOCK) {
                tu_thread_fail("increment: %s: %s", ravel_errstr(rc),
                               ravel_errmsg());
                return NULL;
            }
            w->retried++;
        }
    }
    return NULL;
}

static void test_no_lost_update(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        char *dir = new_dir("counter");
        ravel_db *db = tu_open_ok(dir, "write_buffer_size=64K");
        enum { N = 8 };
        struct worker w[N];
        pthread_t th[N];
        for (int i = 0; i < N; i++) {
            w[i] = (struct worker){.db = db, .id = i, .rounds = 200,
                                   .flags = mode ? RAVEL_TXN_OPTIMISTIC : 0};
            pthread_create(&th[i], NULL, increment_run, &w[i]);
        }
        long committed = 0, retried = 0;
        for (int i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            committed += w[i].committed;
            retried += w[i].retried;
        }
        tu_assert_no_thread_failures();
        char want[32];
        snprintf(want, sizeof want, "%ld", committed);
        printf("# %s: %ld increments committed, %ld retries\n",
               mode ? "optimistic" : "pessimistic", committed, retried);
        tu_expect(db, NULL, "n", want);
        assert_int_equal(committed, N * 200);
        TU_OK(ravel_close(db));
        free(dir);
    }
}

/* The bank: ACCOUNTS accounts of 1000 each; transfers move money between
** two random accounts; readers sum every account through a snapshot: the
** sum never changes. */
#define ACCOUNTS 100

static void account_key(int i, char key[16])
{
    snprintf(key, 16, "acct%03d", i);
}

static void *transfer_run(void *arg)
{
    struct worker *w = arg;
    unsigned seed = 12345u + (unsigned)w->id;
    for (int i = 0; i < w->rounds && !tu_thread_failures(); i++) {
        int a = rand_r(&seed) % ACCOUNTS, b = rand_r(&seed) % ACCOUNTS;
        if (a == b)
            continue;
        long amount = rand_r(&seed) % 50;
        for (;;) {
            ravel_txn *t = NULL;
            if (ravel_txn_begin(w->db, w->flags, &t) != RAVEL_OK) {
                tu_thread_fail("begin: %s", ravel_errmsg());
                return NULL;
            }
            char ka[16], kb[16], buf[32];
            account_key(a, ka);
            account_key(b, kb);
            int rc;
            char *va = tget(t, ka, 1, &rc);
            char *vb = rc == RAVEL_OK ? tget(t, kb, 1, &rc) : NULL;
            if (rc == RAVEL_OK) {
                snprintf(buf, sizeof buf, "%ld", atol(va) - amount);
                rc = ravel_txn_put(t, ka, strlen(ka), buf, strlen(buf));
            }
            if (rc == RAVEL_OK) {
                snprintf(buf, sizeof buf, "%ld", atol(vb) + amount);
                rc = ravel_txn_put(t, kb, strlen(kb), buf, strlen(buf));
            }
            free(va);
            free(vb);
            if (rc == RAVEL_OK)
                rc = ravel_txn_commit(t);
            ravel_txn_free(t);
            if (rc == RAVEL_OK) {
                w->committed++;
                break;
            }
            if (rc != RAVEL_CONFLICT && rc != RAVEL_TIMEDOUT &&
                rc != RAVEL_DEADLOCK) {
                tu_thread_fail("transfer: %s: %s", ravel_errstr(rc),
                               ravel_errmsg());
                return NULL;
            }
            w->retried++;
        }
    }
    return NULL;
}

struct auditor {
    ravel_db *db;
    _Atomic int stop;
    long audits;
};

static void *audit_run(void *arg)
{
    struct auditor *a = arg;
    do { /* at least once: the final audit runs it with STOP set */
        ravel_snapshot *s = NULL;
        if (ravel_snapshot_acquire(a->db, &s) != RAVEL_OK) {
            tu_thread_fail("snapshot: %s", ravel_errmsg());
            return NULL;
        }
        long sum = 0;
        for (int i = 0; i < ACCOUNTS; i++) {
            char k[16];
            account_key(i, k);
            void *v = NULL;
            size_t n = 0;
            int rc = ravel_get(a->db, s, k, strlen(k), &v, &n);
            if (rc) {
                tu_thread_fail("audit get %s: %s", k, ravel_errmsg());
                break;
            }
            char buf[32];
            snprintf(buf, sizeof buf, "%.*s", (int)n, (char *)v);
            sum += atol(buf);
            ravel_free(v);
        }
        ravel_snapshot_release(a->db, s);
        if (sum != ACCOUNTS * 1000L)
            tu_thread_fail("audit %ld: the accounts sum to %ld, not %ld",
                           a->audits, sum, ACCOUNTS * 1000L);
        a->audits++;
    } while (!atomic_load(&a->stop) && !tu_thread_failures());
    return NULL;
}

static void test_bank(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        char *dir = new_dir("bank");
        ravel_db *db = tu_open_ok(dir, "write_buffer_size=64K");
        for (int i = 0; i < ACCOUNTS; i++) {
            char k[16];
            account_key(i, k);
            tu_put(db, 0, k, "1000");
        }
        enum { N = 16 };
        struct worker w[N];
        pthread_t th[N], ath;
        struct auditor a = {.db = db};
        pthread_create(&ath, NULL, audit_run, &a);
        for (int i = 0; i < N; i++) {
            w[i] = (struct worker){.db = db, .id = i, .rounds = 300,
                                   .flags = mode ? RAVEL_TXN_OPTIMISTIC : 0};
            pthread_create(&th[i], NULL, transfer_run, &w[i]);
        }
        long committed = 0, retried = 0;
        for (int i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            committed += w[i].committed;
            retried += w[i].retried;
        }
        atomic_store(&a.stop, 1);
        pthread_join(ath, NULL);
        tu_assert_no_thread_failures();
        printf("# bank, %s: %ld transfers, %ld retries, %ld audits\n",
               mode ? "optimistic" : "pessimistic", committed, retried,
               a.audits);
        audit_run(&a); /* once more, after everything (STOP is set) */
        tu_assert_no_thread_failures();
        TU_OK(ravel_close(db));
        free(dir);
    }
}

/* Two pessimistic transactions lock a and b in opposite orders: the
** younger one fails with RAVEL_DEADLOCK, the older one commits. */
struct deadlocker {
    ravel_db *db;
    ravel_txn *t;
    const char *first, *second;
    pthread_barrier_t *both;
    int rc;
};

static void *deadlock_run(void *arg)
{
    struct deadlocker *d = arg;
    int rc = ravel_txn_put(d->t, d->first, 1, "x", 1);
    pthread_barrier_wait(d->both);
    if (rc == RAVEL_OK)
        rc = ravel_txn_put(d->t, d->second, 1, "y", 1);
    if (rc == RAVEL_OK)
        rc = ravel_txn_commit(d->t);
    else
        ravel_txn_rollback(d->t);
    d->rc = rc;
    return NULL;
}

static void test_deadlock(void **state)
{
    (void)state;
    char *dir = new_dir("deadlock");
    ravel_db *db = tu_open_ok(dir, NULL);
    pthread_barrier_t both;
    pthread_barrier_init(&both, NULL, 2);
    struct deadlocker d[2] = {{.db = db, .first = "a", .second = "b"},
                              {.db = db, .first = "b", .second = "a"}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        TU_OK(ravel_txn_begin(db, 0, &d[i].t)); /* d[1] is younger */
        d[i].both = &both;
    }
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, deadlock_run, &d[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(d[0].rc, RAVEL_OK);
    assert_int_equal(d[1].rc, RAVEL_DEADLOCK);
    for (int i = 0; i < 2; i++)
        ravel_txn_free(d[i].t);
    tu_expect(db, NULL, "a", "x");
    tu_expect(db, NULL, "b", "y");
    pthread_barrier_destroy(&both);
    TU_OK(ravel_close(db));
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basics),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_no_lost_update),
        cmocka_unit_test(test_bank),
        cmocka_unit_test(test_deadlock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
