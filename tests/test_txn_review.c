/*
** test_txn_review.c -- the defects a hostile review of the transaction
** layer found, each as the test that showed it (all now pass):
**   number_reuse           a prepared transaction's number given out
**                          again after a restart, while a rollback marker
**                          of it is still replayed: a durable prepare lost
**   committed_resurrected  a committed transaction's spill file outliving
**                          the flush's manifest edit: listed as prepared
**                          after a crash, and a second commit overwriting
**                          newer data
**   unordered_partial      a commit whose insert fails, unordered_write:
**                          part of it published
**   spill_race             a flush spilling a prepare in the middle of its
**                          registration: the flush failed
**   failed_prepare_spilled a prepare spilled while its failed write was
**                          held: its file left behind
**   plain_write_lost       a plain write between a transaction's lock of a
**                          key and its commit: overwritten (now it waits
**                          for the lock)
**   opt_savepoint_after_failed_prepare  a failed optimistic prepare sorted
**                          the key list the savepoints index
**   spill_in_flight_count  a spill during an in-flight commit wrote a batch
**                          header counting the marker
*/
#include "testutil.h"
#include "util/fault.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int dirs;
static char *new_dir(const char *what)
{
    return tu_path("review-%s-%d", what, dirs++);
}

static void tput(ravel_txn *t, const char *k, const char *v)
{
    TU_OK(ravel_txn_put(t, k, strlen(k), v, strlen(v)));
}

static char *names(ravel_db *db)
{
    char *text = NULL;
    TU_OK(ravel_property(db, "ravel.prepared-transactions", &text));
    char *copy = strdup(text);
    ravel_free(text);
    return copy;
}

static void list_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    printf("#   files:");
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            printf(" %s", de->d_name);
    printf("\n");
    closedir(d);
}

static void disarm(void)
{
    rv_fault_arm(RV_FAULT_MANIFEST_WRITE, -1, 0);
    rv_fault_arm(RV_FAULT_MEMTABLE_ALLOC, -1, 0);
}

/* F1: the prepared-transaction number is not persisted; after a restart a
** number is reused while an older marker with that number is still in a
** replayed WAL segment.  A later open applies the stale rollback marker to
** the new transaction: a durable prepared transaction vanishes. */
static void test_number_reuse(void **state)
{
    (void)state;
    char *dir = new_dir("reuse");
    const char *opts = "avoid_flush_during_shutdown=true";
    ravel_db *db = tu_open_ok(dir, opts);
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, RAVEL_SYNC, &t));
    tput(t, "a", "A");
    TU_OK(ravel_txn_set_name(t, "A"));
    TU_OK(ravel_txn_prepare(t)); /* number 1 */
    tu_put(db, 0, "x", "1");
    TU_OK(ravel_flush(db, 0)); /* spilled: prepared-000001.txn */
    TU_OK(ravel_txn_rollback(t)); /* rollback marker #1 in the new segment;
                                  ** the file goes */
    ravel_txn_free(t);
    tu_put(db, RAVEL_SYNC, "y", "2"); /* the segment has data */
    TU_OK(ravel_close(db));
    list_dir(dir);

    db = tu_open_ok(dir, opts);
    TU_OK(ravel_txn_begin(db, RAVEL_SYNC, &t));
    tput(t, "b", "B");
    TU_OK(ravel_txn_set_name(t, "B"));
    TU_OK(ravel_txn_prepare(t)); /* number 1 again */
    ravel_txn_free(t);
    {
        char *n = names(db);
        printf("# before: prepared = '%s'\n", n);
        free(n);
    }
    /* a flush that spills B and then fails at the manifest (any flush
    ** failure; a crash between the spill and the manifest edit is the same) */
    rv_fault_arm(RV_FAULT_MANIFEST_WRITE, 0, EIO);
    int rc = ravel_flush(db, 0);
    disarm();
    printf("# flush: %d %s\n", rc, ravel_errmsg());
    list_dir(dir);
    (void)ravel_close(db);

    db = tu_open_ok(dir, opts);
    char *n = names(db);
    printf("# after reopen: prepared = '%s'\n", n);
    list_dir(dir);
    assert_string_equal(n, "B\n"); /* B was prepared durably */
    free(n);
    TU_OK(ravel_close(db));
    free(dir);
}

/* F2: a crash after a flush's manifest edit and before
** rv_prepared_release_flushed: the committed transaction's file stays, its
** commit record is in a segment below the log number (never replayed), so
** it comes back as prepared; recovering and committing it again writes
** its old values over newer ones. */
static void test_committed_resurrected(void **state)
{
    (void)state;
    char *dir = new_dir("resurrect");
    pid_t pid = fork();
    if (pid == 0) {
        ravel_db *db = NULL;
        if (tu_open(dir, NULL, &db) != RAVEL_OK)
            _exit(2);
        ravel_txn *t = NULL;
        ravel_txn_begin(db, RAVEL_SYNC, &t);
        ravel_txn_put(t, "acct", 4, "old", 3);
        ravel_txn_set_name(t, "X");
        if (ravel_txn_prepare(t))
            _exit(3);
        ravel_put(db, 0, "pad", 3, "p", 1);
        if (ravel_flush(db, 0)) /* spilled */
            _exit(4);
        if (ravel_txn_commit(t)) /* committed, sync */
            _exit(5);
        ravel_txn_free(t);
        ravel_put(db, RAVEL_SYNC, "acct", 4, "newer", 5);
        rv_pause_arm(RV_PAUSE_FLUSH_LOGGED);
        ravel_flush(db, RAVEL_FLUSH_NO_WAIT);
        for (int i = 0; i < 5000 && !rv_pause_waiting(RV_PAUSE_FLUSH_LOGGED);
             i++)
            usleep(1000);
        if (!rv_pause_waiting(RV_PAUSE_FLUSH_LOGGED))
            _exit(6);
        kill(getpid(), SIGKILL); /* crash: manifest edit done */
        _exit(7);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    list_dir(dir);
    ravel_db *db = tu_open_ok(dir, "txn_lock_timeout=0");
    char *n = names(db);
    printf("# after crash: prepared = '%s'\n", n);
    tu_expect(db, NULL, "acct", "newer");
    ravel_txn *t = NULL;
    if (ravel_txn_recover(db, "X", &t) == RAVEL_OK) {
        TU_OK(ravel_txn_commit(t)); /* commits a second time */
        ravel_txn_free(t);
        void *v = NULL;
        size_t vl = 0;
        TU_OK(ravel_get(db, NULL, "acct", 4, &v, &vl));
        printf("# after recovering and committing 'X' again: acct = %.*s\n",
               (int)vl, (char *)v);
        ravel_free(v);
    }
    assert_string_equal(n, ""); /* X was committed (RAVEL_SYNC) */
    free(n);
    TU_OK(ravel_close(db));
    free(dir);
}

/* F3: unordered_write: a commit's batch inserted by the leader fails part
** way; the group is published anyway, so part of the transaction is
** visible. */
static void test_unordered_partial(void **state)
{
    (void)state;
    char *dir = new_dir("unordered");
    ravel_db *db = tu_open_ok(dir, "unordered_write=true");
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "k1", "v1");
    tput(t, "k2", "v2");
    tput(t, "k3", "v3");
    rv_fault_arm(RV_FAULT_MEMTABLE_ALLOC, 1, ENOMEM);
    int rc = ravel_txn_commit(t);
    disarm();
    printf("# commit: %d %s\n", rc, ravel_errmsg());
    ravel_txn_free(t);
    int seen = 0;
    const char *keys[] = {"k1", "k2", "k3"};
    for (int i = 0; i < 3; i++) {
        void *v = NULL;
        size_t vl = 0;
        if (ravel_get(db, NULL, keys[i], 2, &v, &vl) == RAVEL_OK) {
            seen++;
            ravel_free(v);
        }
    }
    printf("# keys of the failed commit visible: %d of 3\n", seen);
    assert_true(rc != RAVEL_OK);
    assert_true(seen == 0 || seen == 3);
    (void)ravel_close(db);
    free(dir);
}

/* F4: a flush that ran between a prepare's registration and its marker
** found a waiting entry with neither rep nor live batch: the spill failed,
** the flush failed and writes stopped. */
struct race {
    ravel_db *db;
    _Atomic int stop;
};

static void *preparer(void *arg)
{
    struct race *r = arg;
    char name[32];
    for (int i = 0; !atomic_load(&r->stop); i++) {
        ravel_txn *t = NULL;
        if (ravel_txn_begin(r->db, 0, &t))
            break;
        ravel_txn_put(t, "pk", 2, "v", 1);
        snprintf(name, sizeof name, "p%d", i);
        ravel_txn_set_name(t, name);
        int rc = ravel_txn_prepare(t);
        if (rc == RAVEL_OK)
            rc = ravel_txn_rollback(t);
        ravel_txn_free(t);
        if (rc)
            break;
    }
    return NULL;
}

static void test_spill_race(void **state)
{
    (void)state;
    char *dir = new_dir("race");
    ravel_db *db = tu_open_ok(dir, NULL);
    struct race r = {.db = db};
    pthread_t th;
    pthread_create(&th, NULL, preparer, &r);
    int rc = RAVEL_OK, i;
    /* the race was met within 33 to 1025 flushes */
    for (i = 0; rc == RAVEL_OK && i < 3000; i++) {
        rc = ravel_put(db, 0, "x", 1, "y", 1);
        if (rc == RAVEL_OK)
            rc = ravel_flush(db, 0);
    }
    atomic_store(&r.stop, 1);
    pthread_join(th, NULL);
    printf("# %d flushes; rc %d: %s\n", i, rc, rc ? ravel_errmsg() : "");
    (void)ravel_close(db);
    assert_int_equal(rc, RAVEL_OK);
    free(dir);
}

/* F5: a flush spills a transaction whose prepare record is still being
** written; the write then fails, rv_prepared_abort forgets the entry but
** leaves the file: after a reopen the transaction the caller was told
** failed (and then rolled back) is listed as prepared, its keys locked. */
struct preparer_args {
    ravel_db *db;
    int rc;
    ravel_txn *t;
};

static void *prepare_one(void *arg)
{
    struct preparer_args *a = arg;
    ravel_txn_begin(a->db, RAVEL_SYNC, &a->t);
    ravel_txn_put(a->t, "q", 1, "Q", 1);
    ravel_txn_set_name(a->t, "F");
    a->rc = ravel_txn_prepare(a->t);
    return NULL;
}

static int count_prep(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)) != NULL)
        n += strncmp(de->d_name, "prepared-", 9) == 0;
    closedir(d);
    return n;
}

static void test_failed_prepare_spilled(void **state)
{
    (void)state;
    char *dir = new_dir("failprep");
    ravel_db *db = NULL;
    int rc = tu_open(dir, "wal_io=direct;write_buffer_size=64K", &db);
    if (rc) {
        printf("# SKIP: direct: %s\n", ravel_errmsg());
        skip();
    }
    char big[1024];
    memset(big, 'b', sizeof big);
    for (int i = 0; tu_prop_u64(db, "ravel.cur-size-active-mem-table") <
                    64 * 1024; i++) {
        char k[16];
        snprintf(k, sizeof k, "fill%05d", i);
        TU_OK(ravel_put(db, 0, k, strlen(k), big, sizeof big));
    }
    /* the prepare's group switches the memtable, then its write is held
    ** while the old memtable is flushed (spilling F) */
    rv_test_wal_hold_arm();
    struct preparer_args a = {db, 0, NULL};
    pthread_t th;
    pthread_create(&th, NULL, prepare_one, &a);
    while (!rv_test_wal_hold_waiting())
        usleep(1000);
    for (int i = 0; i < 5000 && count_prep(dir) == 0; i++)
        usleep(1000);
    printf("# prepared files while the prepare is in flight: %d\n",
           count_prep(dir));
    rv_test_wal_hold_release(-EIO);
    pthread_join(th, NULL);
    printf("# prepare: %d\n", a.rc);
    assert_true(a.rc != RAVEL_OK);
    TU_OK(ravel_txn_rollback(a.t)); /* not prepared: nothing to undo */
    ravel_txn_free(a.t);
    (void)ravel_close(db);
    list_dir(dir);
    assert_int_equal(count_prep(dir), 0); /* the spill went with it */
    /* the failed write may have reached the WAL: the next open decides,
    ** and a prepare it finds is listed, to be rolled back */
    db = tu_open_ok(dir, "wal_io=direct");
    char *n = names(db);
    printf("# after reopen: prepared = '%s'\n", n);
    if (strcmp(n, "") != 0) {
        assert_string_equal(n, "F\n");
        ravel_txn *t = NULL;
        TU_OK(ravel_txn_recover(db, "F", &t));
        TU_OK(ravel_txn_rollback(t));
        ravel_txn_free(t);
    }
    free(n);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "wal_io=direct");
    n = names(db);
    assert_string_equal(n, "");
    free(n);
    TU_OK(ravel_close(db));
    free(dir);
}



static char *getv(ravel_db *db, const char *k)
{
    void *v = NULL;
    size_t n = 0;
    if (ravel_get(db, NULL, k, strlen(k), &v, &n) != RAVEL_OK)
        return strdup("(none)");
    char *s = strndup(v, n);
    ravel_free(v);
    return s;
}

/* F6: a pessimistic transaction checks a key only when it locks or writes
** it; a plain write after its last write of the key is overwritten by the
** commit without RAVEL_CONFLICT (docs: "No lost update"). */
static void test_plain_write_lost(void **state)
{
    (void)state;
    char *dir = new_dir("lost");
    ravel_db *db = tu_open_ok(dir, "txn_lock_timeout=50");
    tu_put(db, 0, "bal", "100");
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    void *v;
    size_t n;
    TU_OK(ravel_txn_get_for_update(t, "bal", 3, &v, &n));
    ravel_free(v);
    tput(t, "bal", "90"); /* 100 - 10 */
    /* a deposit of 50, a plain write: it waits for T's lock, in vain */
    TU_EXPECT_RC(RAVEL_TIMEDOUT, ravel_put(db, 0, "bal", 3, "150", 3));
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    char *b = getv(db, "bal");
    assert_string_equal(b, "90"); /* the deposit was refused, not lost */
    free(b);
    TU_OK(ravel_put(db, 0, "bal", 3, "140", 3)); /* the lock is free */
    TU_OK(ravel_close(db));
    free(dir);
}

/* F7: a failed optimistic prepare sorts T's key list in place; the
** savepoints' key counts then cut the wrong keys: a key read for update
** before the savepoint is no longer validated at commit. */
static void test_opt_savepoint_after_failed_prepare(void **state)
{
    (void)state;
    char *dir = new_dir("optsp");
    ravel_db *db = tu_open_ok(dir, "txn_lock_timeout=0");
    tu_put(db, 0, "z", "1");
    tu_put(db, 0, "c", "1");
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, RAVEL_TXN_OPTIMISTIC, &t));
    void *v;
    size_t n;
    TU_OK(ravel_txn_get_for_update(t, "z", 1, &v, &n)); /* keys: z */
    ravel_free(v);
    TU_OK(ravel_txn_savepoint(t));
    TU_OK(ravel_txn_get_for_update(t, "c", 1, &v, &n)); /* keys: z c */
    ravel_free(v);
    ravel_txn *u = NULL; /* holds c's lock: the prepare times out */
    TU_OK(ravel_txn_begin(db, 0, &u));
    tput(u, "c", "u");
    TU_OK(ravel_txn_set_name(t, "o"));
    TU_EXPECT_RC(RAVEL_TIMEDOUT, ravel_txn_prepare(t)); /* keys: c z */
    TU_OK(ravel_txn_rollback(u));
    ravel_txn_free(u);
    TU_OK(ravel_txn_rollback_to_savepoint(t)); /* should drop c, keep z */
    tu_put(db, 0, "z", "2"); /* z changes after T's snapshot */
    tput(t, "out", "x");
    int rc = ravel_txn_commit(t);
    ravel_txn_free(t);
    printf("# commit after z changed: %d (want CONFLICT 9)\n", rc);
    assert_int_equal(rc, RAVEL_CONFLICT);
    TU_OK(ravel_close(db));
    free(dir);
}


/* F8: a spill while the prepare (or commit) record is in flight copies the
** handle's batch with the marker's op already counted in its header but
** not in its bytes: the file's batch claims one op more than it holds.
** After a reopen the transaction is listed but cannot be recovered. */
static void test_spill_in_flight_count(void **state)
{
    (void)state;
    char *dir = new_dir("inflight");
    ravel_db *db = NULL;
    int rc = tu_open(dir, "wal_io=direct;write_buffer_size=64K", &db);
    if (rc) {
        printf("# SKIP: direct: %s\n", ravel_errmsg());
        skip();
    }
    char big[1024];
    memset(big, 'b', sizeof big);
    for (int i = 0; tu_prop_u64(db, "ravel.cur-size-active-mem-table") <
                    64 * 1024; i++) {
        char k[16];
        snprintf(k, sizeof k, "fill%05d", i);
        TU_OK(ravel_put(db, 0, k, strlen(k), big, sizeof big));
    }
    rv_test_wal_hold_arm();
    struct preparer_args a = {db, 0, NULL};
    pthread_t th;
    pthread_create(&th, NULL, prepare_one, &a);
    while (!rv_test_wal_hold_waiting())
        usleep(1000);
    for (int i = 0; i < 5000 && count_prep(dir) == 0; i++)
        usleep(1000);
    printf("# prepared files while the prepare is in flight: %d\n",
           count_prep(dir));
    rv_test_wal_hold_release(0); /* the write succeeds */
    pthread_join(th, NULL);
    TU_OK(a.rc);
    ravel_txn_free(a.t); /* stays prepared */
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, "wal_io=direct;write_buffer_size=64K");
    char *n = names(db);
    printf("# after reopen: prepared = '%s'\n", n);
    free(n);
    ravel_txn *t = NULL;
    rc = ravel_txn_recover(db, "F", &t);
    printf("# recover: %d %s\n", rc, rc ? ravel_errmsg() : "");
    TU_OK(rc);
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "q", "Q");
    TU_OK(ravel_close(db));
    free(dir);
}


/* smoke: freed prepared handle + close, read-only reopen, name reuse. */
static void test_smoke(void **state)
{
    (void)state;
    char *dir = new_dir("smoke");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, RAVEL_SYNC, &t));
    tput(t, "k", "A1");
    TU_OK(ravel_txn_set_name(t, "A"));
    TU_OK(ravel_txn_prepare(t));
    ravel_txn_free(t);
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, "read_only=true");
    char *n = names(db);
    printf("# read-only: prepared = '%s'\n", n);
    free(n);
    int rc = ravel_txn_recover(db, "A", &t);
    printf("# read-only recover: %d %s\n", rc, rc ? ravel_errmsg() : "");
    if (rc == RAVEL_OK) {
        rc = ravel_txn_commit(t);
        printf("# read-only commit: %d %s\n", rc, rc ? ravel_errmsg() : "");
        rc = ravel_txn_rollback(t);
        printf("# read-only rollback: %d %s\n", rc, rc ? ravel_errmsg() : "");
        ravel_txn_free(t);
    }
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, NULL);
    TU_OK(ravel_txn_recover(db, "A", &t));
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    for (int round = 0; round < 3; round++) {
        TU_OK(ravel_txn_begin(db, RAVEL_SYNC, &t));
        char v[8];
        snprintf(v, sizeof v, "A%d", round + 2);
        tput(t, "k", v);
        TU_OK(ravel_txn_set_name(t, "A"));
        TU_OK(ravel_txn_prepare(t));
        tu_put(db, 0, "pad", v);
        TU_OK(ravel_flush(db, 0));
        if (round < 2) {
            TU_OK(ravel_txn_commit(t));
        }
        ravel_txn_free(t);
    }
    TU_OK(ravel_close(db));
    list_dir(dir);
    db = tu_open_ok(dir, NULL);
    n = names(db);
    printf("# reopen: prepared = '%s'\n", n);
    assert_string_equal(n, "A\n");
    free(n);
    tu_expect(db, NULL, "k", "A3");
    TU_OK(ravel_txn_recover(db, "A", &t));
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "k", "A3");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    n = names(db);
    assert_string_equal(n, "");
    free(n);
    tu_expect(db, NULL, "k", "A3");
    TU_OK(ravel_close(db));
    list_dir(dir);
    free(dir);
}


static void test_prepare_only_flush(void **state)
{
    (void)state;
    char *dir = new_dir("ponly");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%03d", i);
        tput(t, k, "v");
    }
    TU_OK(ravel_txn_set_name(t, "P"));
    TU_OK(ravel_txn_prepare(t));
    printf("# estimate-num-keys after prepare only: %llu\n",
           (unsigned long long)tu_prop_u64(db, "ravel.estimate-num-keys"));
    TU_OK(ravel_flush(db, 0));
    printf("# L0 files: %llu, keys %llu\n",
           (unsigned long long)tu_prop_u64(db, "ravel.num-files-at-level0"),
           (unsigned long long)tu_prop_u64(db, "ravel.estimate-num-keys"));
    list_dir(dir);
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    TU_OK(ravel_close(db));
    free(dir);
}

int main(void)
{
    tu_init();
    if (getenv("F"))
        cmocka_set_test_filter(getenv("F"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_number_reuse, NULL),
        cmocka_unit_test(test_committed_resurrected),
        cmocka_unit_test(test_unordered_partial),
        cmocka_unit_test(test_spill_race),
        cmocka_unit_test(test_failed_prepare_spilled),
        cmocka_unit_test(test_plain_write_lost),
        cmocka_unit_test(test_smoke),
        cmocka_unit_test(test_prepare_only_flush),
        cmocka_unit_test(test_spill_in_flight_count),
        cmocka_unit_test(test_opt_savepoint_after_failed_prepare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
