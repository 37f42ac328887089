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

/* The sum of every account through an iterator: a plain one at the
** latest state (KIND 1) or a transaction's (KIND 2), which must see the
** same; -1 on failure (reported). */
static long audit_by_iterator(ravel_db *db, int kind)
{
    ravel_txn *t = NULL;
    ravel_iter *it = NULL;
    int rc = kind == 1 ? ravel_iter_new(db, NULL, &it)
                       : ravel_txn_begin(db, 0, &t);
    if (rc == RAVEL_OK && kind == 2)
        rc = ravel_txn_iter_new(t, &it);
    long sum = 0, n = 0;
    if (rc == RAVEL_OK)
        rc = ravel_iter_seek(it, "acct", 4);
    while (rc == RAVEL_OK && ravel_iter_valid(it)) {
        size_t vl;
        const char *v = ravel_iter_value(it, &vl);
        char buf[32];
        snprintf(buf, sizeof buf, "%.*s", (int)vl, v);
        sum += atol(buf);
        n++;
        rc = ravel_iter_next(it);
    }
    if (rc == RAVEL_OK)
        rc = ravel_iter_status(it);
    ravel_iter_free(it);
    ravel_txn_free(t);
    if (rc != RAVEL_OK) {
        tu_thread_fail("audit iterator: %s", ravel_errmsg());
        return -1;
    }
    if (n != ACCOUNTS)
        tu_thread_fail("audit iterator: %ld accounts, not %d", n, ACCOUNTS);
    return sum;
}

static void *audit_run(void *arg)
{
    struct auditor *a = arg;
    do { /* at least once: the final audit runs it with STOP set */
        if (a->audits % 3 != 0) {
            long sum = audit_by_iterator(a->db, (int)(a->audits % 3));
            if (sum != ACCOUNTS * 1000L)
                tu_thread_fail("audit %ld (%s iterator): the accounts sum "
                               "to %ld, not %ld", a->audits,
                               a->audits % 3 == 1 ? "plain" : "transaction",
                               sum, ACCOUNTS * 1000L);
            a->audits++;
            continue;
        }
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
        enum { N = 32 };
        struct worker w[N];
        pthread_t th[N], ath;
        struct auditor a = {.db = db};
        pthread_create(&ath, NULL, audit_run, &a);
        for (int i = 0; i < N; i++) {
            w[i] = (struct worker){.db = db, .id = i, .rounds = 150,
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

/* A pessimistic key is checked once, when first locked; a check that
** fails leaves it unlocked, so a careless caller that writes it anyway
** after RAVEL_CONFLICT meets the conflict again, never a lost update. */
static void test_conflict_not_held(void **state)
{
    (void)state;
    char *dir = new_dir("notheld");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "c", "1");
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    tu_put(db, 0, "c", "2"); /* after T's snapshot */
    int rc;
    char *v = tget(t, "c", 1, &rc);
    assert_null(v);
    assert_int_equal(rc, RAVEL_CONFLICT);
    TU_EXPECT_RC(RAVEL_CONFLICT, ravel_txn_put(t, "c", 1, "3", 1));
    TU_OK(ravel_put(db, 0, "c", 1, "4", 1)); /* not locked by T */
    TU_OK(ravel_txn_commit(t)); /* nothing to write */
    ravel_txn_free(t);
    tu_expect(db, NULL, "c", "4");
    /* a key held: written again without a second check */
    TU_OK(ravel_txn_begin(db, 0, &t));
    v = tget(t, "c", 1, &rc);
    free(v);
    tput(t, "c", "5");
    tput(t, "c", "6");
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "c", "6");
    TU_OK(ravel_close(db));
    free(dir);
}

/* Write skew: two doctors on call, each transaction takes one off if the
** other is still on.  Read with ravel_txn_get both commit (no doctor
** left: snapshot isolation allows it); read for update, the second
** fails with RAVEL_CONFLICT (pessimistic: at its lock; optimistic: at
** commit). */
static void test_write_skew(void **state)
{
    (void)state;
    char *dir = new_dir("skew");
    ravel_db *db = tu_open_ok(dir, "txn_lock_timeout=0");
    for (int variant = 0; variant < 3; variant++) {
        int for_update = variant > 0;
        int flags = variant == 2 ? RAVEL_TXN_OPTIMISTIC : 0;
        tu_put(db, 0, "alice", "on");
        tu_put(db, 0, "bob", "on");
        ravel_txn *t[2];
        const char *me[2] = {"alice", "bob"}, *other[2] = {"bob", "alice"};
        TU_OK(ravel_txn_begin(db, flags, &t[0]));
        TU_OK(ravel_txn_begin(db, flags, &t[1]));
        int rc[2] = {RAVEL_OK, RAVEL_OK};
        for (int i = 0; i < 2; i++) {
            char *v = tget(t[i], other[i], for_update, &rc[i]);
            if (rc[i] == RAVEL_OK) {
                assert_string_equal(v, "on");
                free(v);
                v = tget(t[i], me[i], for_update, &rc[i]);
                free(v);
            }
            if (rc[i] == RAVEL_OK)
                rc[i] = ravel_txn_put(t[i], me[i], strlen(me[i]), "off", 3);
        }
        for (int i = 0; i < 2; i++) {
            if (rc[i] == RAVEL_OK)
                rc[i] = ravel_txn_commit(t[i]);
            ravel_txn_free(t[i]);
        }
        int offs = 0;
        for (int i = 0; i < 2; i++) {
            void *v = NULL;
            size_t n = 0;
            TU_OK(ravel_get(db, NULL, me[i], strlen(me[i]), &v, &n));
            offs += n == 3;
            ravel_free(v);
        }
        if (!for_update) {
            assert_int_equal(rc[0], RAVEL_OK); /* the anomaly, shown */
            assert_int_equal(rc[1], RAVEL_OK);
            assert_int_equal(offs, 2);
        } else {
            assert_int_equal(offs, 1); /* one doctor stays on call */
            assert_true((rc[0] == RAVEL_OK) != (rc[1] == RAVEL_OK));
            int failed = rc[0] == RAVEL_OK ? rc[1] : rc[0];
            assert_true(failed == RAVEL_CONFLICT || failed == RAVEL_TIMEDOUT);
        }
    }
    TU_OK(ravel_close(db));
    free(dir);
}

/* The keys and values an iterator shows from its first entry, as
** "k=v,k=v" (forward) or backward. */
static void iter_dump(ravel_iter *it, int backward, char *out, size_t cap)
{
    out[0] = '\0';
    TU_OK(backward ? ravel_iter_seek_to_last(it) : ravel_iter_seek_to_first(it));
    while (ravel_iter_valid(it)) {
        size_t kl, vl;
        const char *k = ravel_iter_key(it, &kl);
        const char *v = ravel_iter_value(it, &vl);
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%.*s=%.*s", n ? "," : "", (int)kl, k,
                 (int)vl, v);
        TU_OK(backward ? ravel_iter_prev(it) : ravel_iter_next(it));
    }
    TU_OK(ravel_iter_status(it));
}

/* A transaction's iterator: its snapshot with its own puts and deletes
** merged in, both directions, bounds; writes made while it is open are
** shown ahead of it; freeing the transaction first is safe. */
static void test_iterator(void **state)
{
    (void)state;
    char *dir = new_dir("iter");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    tu_put(db, 0, "c", "3");
    tu_put(db, 0, "e", "5");
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    tu_put(db, 0, "d", "after-begin"); /* not in the snapshot */
    tput(t, "b", "own");
    tput(t, "c", "changed");
    TU_OK(ravel_txn_delete(t, "e", 1));
    ravel_iter *it = NULL;
    TU_OK(ravel_txn_iter_new(t, &it));
    char buf[256];
    iter_dump(it, 0, buf, sizeof buf);
    assert_string_equal(buf, "a=1,b=own,c=changed");
    iter_dump(it, 1, buf, sizeof buf);
    assert_string_equal(buf, "c=changed,b=own,a=1");
    TU_OK(ravel_iter_set_bounds(it, "b", 1, "c", 1));
    iter_dump(it, 0, buf, sizeof buf);
    assert_string_equal(buf, "b=own");
    TU_OK(ravel_iter_set_bounds(it, NULL, 0, NULL, 0));
    /* read, modify, write while scanning: a key written ahead is shown */
    TU_OK(ravel_iter_seek(it, "a", 1));
    tput(t, "bb", "ahead");
    TU_OK(ravel_iter_next(it));
    size_t kl;
    const char *k = ravel_iter_key(it, &kl);
    assert_int_equal(kl, 1);
    assert_memory_equal(k, "b", 1);
    TU_OK(ravel_iter_next(it));
    k = ravel_iter_key(it, &kl);
    assert_int_equal(kl, 2);
    assert_memory_equal(k, "bb", 2);
    /* the transaction freed before its iterator */
    ravel_txn_free(t);
    ravel_iter_free(it);
    tu_expect(db, NULL, "b", NULL);
    TU_OK(ravel_close(db));
    free(dir);
}

struct run_ctx {
    long calls;
    int fail_with; /* returned by the body on its first call, then OK */
};

static int run_body(ravel_txn *t, void *arg)
{
    struct run_ctx *c = arg;
    c->calls++;
    if (c->calls == 1 && c->fail_with)
        return c->fail_with;
    int rc;
    char *v = tget(t, "n", 1, &rc);
    if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
        return rc; /* a retriable code passed on */
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", (v ? atol(v) : 0) + 1);
    free(v);
    return ravel_txn_put(t, "n", 1, buf, strlen(buf));
}

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    struct run_ctx c = {0, 0};
    for (int i = 0; i < w->rounds; i++) {
        int rc = ravel_txn_run(w->db, w->flags, run_body, &c, 1000);
        if (rc) {
            tu_thread_fail("ravel_txn_run: %s: %s", ravel_errstr(rc),
                           ravel_errmsg());
            return NULL;
        }
        w->committed++;
    }
    w->retried = c.calls - w->committed;
    return NULL;
}

/* ravel_txn_run: commits the body's writes, passes a non-retriable code on
** without retrying, retries a retriable one, and under threads loses no
** increment in either mode. */
static void test_run(void **state)
{
    (void)state;
    char *dir = new_dir("run");
    ravel_db *db = tu_open_ok(dir, "write_buffer_size=64K");
    struct run_ctx c = {0, RAVEL_NOTFOUND};
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_txn_run(db, 0, run_body, &c, 5));
    assert_int_equal(c.calls, 1); /* not retriable: run once */
    c = (struct run_ctx){0, RAVEL_CONFLICT};
    TU_OK(ravel_txn_run(db, 0, run_body, &c, 5));
    assert_int_equal(c.calls, 2); /* retried once, then committed */
    tu_expect(db, NULL, "n", "1");
    c = (struct run_ctx){0, RAVEL_DEADLOCK};
    TU_EXPECT_RC(RAVEL_DEADLOCK, ravel_txn_run(db, 0, run_body, &c, 1));
    TU_EXPECT_INVALID(ravel_txn_run(db, 0, NULL, &c, 1));
    TU_EXPECT_INVALID(ravel_txn_run(db, 0, run_body, &c, -1));
    for (int mode = 0; mode < 2; mode++) {
        enum { N = 6 };
        struct worker w[N];
        pthread_t th[N];
        for (int i = 0; i < N; i++) {
            w[i] = (struct worker){.db = db, .id = i, .rounds = 100,
                                   .flags = mode ? RAVEL_TXN_OPTIMISTIC : 0};
            pthread_create(&th[i], NULL, run_worker, &w[i]);
        }
        for (int i = 0; i < N; i++)
            pthread_join(th[i], NULL);
        tu_assert_no_thread_failures();
    }
    tu_expect(db, NULL, "n", "1201");
    TU_OK(ravel_close(db));
    free(dir);
}

/* txn_max_write_batch_size refuses the write that passes it and leaves
** the transaction open; txn_lock_timeout=0 fails a lock wait at once,
** naming the key. */
static void test_limits(void **state)
{
    (void)state;
    char *dir = new_dir("limits");
    ravel_db *db = tu_open_ok(dir, "txn_max_write_batch_size=4K;"
                                   "txn_lock_timeout=0");
    ravel_txn *t = NULL, *u = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    char big[1024];
    memset(big, 'v', sizeof big);
    int i = 0, rc;
    char key[16];
    for (;; i++) {
        snprintf(key, sizeof key, "k%d", i);
        rc = ravel_txn_put(t, key, strlen(key), big, sizeof big);
        if (rc)
            break;
    }
    assert_int_equal(rc, RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "txn_max_write_batch_size"));
    assert_int_equal(i, 3);
    TU_OK(ravel_txn_put(t, "small", 5, "x", 1)); /* still open */
    TU_OK(ravel_txn_begin(db, 0, &u));
    TU_EXPECT_RC(RAVEL_TIMEDOUT, ravel_txn_put(u, "small", 5, "y", 1));
    assert_non_null(strstr(ravel_errmsg(), "small"));
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    /* the lock is free now, but T wrote the key after U's snapshot */
    TU_EXPECT_RC(RAVEL_CONFLICT, ravel_txn_put(u, "small", 5, "y", 1));
    ravel_txn_free(u);
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
        cmocka_unit_test(test_conflict_not_held),
        cmocka_unit_test(test_write_skew),
        cmocka_unit_test(test_iterator),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
