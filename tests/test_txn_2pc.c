/*
** test_txn_2pc.c -- two-phase commit: a prepared transaction is invisible,
** keeps its keys locked and is listed; commit makes it visible, rollback
** makes it gone; it survives a reopen, kill -9 and power loss, and after
** one is listed, locked again, recovered and resolved.
**
**   basics         in one process: prepare, invisibility, locks, names,
**                  a spill to a file when a flush passes the prepare,
**                  commit, rollback, a handle freed while prepared and
**                  recovered again, an optimistic prepare that conflicts.
**   reopen         prepared transactions across a close: listed, locked,
**                  one committed and one rolled back; the committed one's
**                  file goes with the flush that covers its commit.
**   replayed       a prepare found by the replay (no file), recovered
**                  and spilled from its handle's batch, committed; one
**                  spilled after its handle was freed, rolled back.
**   faults         a commit whose WAL write fails leaves nothing visible,
**                  before and after a reopen; a prepared one stays
**                  prepared, refuses a rollback until the reopen decides
**                  (its record may have reached the WAL), then is listed
**                  and rolls back; a prepared transaction
**                  flushed past and rolled back stays invisible.
**   large          a transaction 32 times the write buffer commits whole
**                  and survives a reopen.
**   kill9 / powerloss  a child runs transfers between accounts as
**                  prepare + commit (RAVEL_SYNC), leaving some prepared,
**                  reporting each step, and is killed with SIGKILL (and,
**                  in powerloss, every byte no fsync covered is dropped
**                  or torn).  After the reopen: every transaction reported
**                  prepared and not committed is listed, none reported
**                  committed is; the parent commits the listed ones; then
**                  every balance is what the transfers that committed
**                  give, and the total is unchanged.
*/
#include "crash_harness.h"
#include "powerloss.h"
#include "util/fault.h"

#include <errno.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dirs;

static char *new_dir(const char *what)
{
    return tu_path("txn2pc-%s-%d", what, dirs++);
}

static void tput(ravel_txn *t, const char *k, const char *v)
{
    TU_OK(ravel_txn_put(t, k, strlen(k), v, strlen(v)));
}

/* The property ravel.prepared-transactions. */
static char *prepared_names(ravel_db *db)
{
    char *text = NULL;
    TU_OK(ravel_property(db, "ravel.prepared-transactions", &text));
    char *copy = strdup(text);
    ravel_free(text);
    return copy;
}

static void expect_prepared(ravel_db *db, const char *want)
{
    char *names = prepared_names(db);
    assert_string_equal(names, want);
    free(names);
}

/* Prepared files in DIR. */
static int count_prepared_files(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strncmp(de->d_name, "prepared-", 9) == 0;
    closedir(d);
    return n;
}

static void test_basics(void **state)
{
    (void)state;
    char *dir = new_dir("basics");
    ravel_db *db = tu_open_ok(dir, "txn_lock_timeout=0");
    tu_put(db, 0, "k", "old");
    ravel_txn *t = NULL, *u = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "k", "new");
    tput(t, "k2", "v2");
    TU_EXPECT_INVALID(ravel_txn_prepare(t)); /* no name */
    TU_EXPECT_INVALID(ravel_txn_set_name(t, ""));
    TU_EXPECT_INVALID(ravel_txn_set_name(t, "two\nlines"));
    TU_OK(ravel_txn_set_name(t, "xa-1"));
    TU_EXPECT_INVALID(ravel_txn_set_name(t, "again"));
    TU_OK(ravel_txn_prepare(t));
    TU_EXPECT_INVALID(ravel_txn_put(t, "k3", 2, "x", 1)); /* prepared */
    tu_expect(db, NULL, "k", "old"); /* invisible */
    tu_expect(db, NULL, "k2", NULL);
    expect_prepared(db, "xa-1\n");
    assert_int_equal(count_prepared_files(dir), 0); /* in the WAL */
    TU_OK(ravel_flush(db, 0)); /* the log number passes it: spilled */
    assert_int_equal(count_prepared_files(dir), 1);
    tu_expect(db, NULL, "k2", NULL);
    /* its keys are locked; its name is taken */
    TU_OK(ravel_txn_begin(db, 0, &u));
    TU_EXPECT_RC(RAVEL_TIMEDOUT, ravel_txn_put(u, "k", 1, "u", 1));
    TU_EXPECT_INVALID(ravel_txn_set_name(u, "xa-1"));
    ravel_txn_free(u);
    /* a freed handle leaves it prepared; recover hands it back */
    ravel_txn_free(t);
    expect_prepared(db, "xa-1\n");
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_txn_recover(db, "nope", &t));
    TU_OK(ravel_txn_recover(db, "xa-1", &t));
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_txn_recover(db, "xa-1", &u));
    void *v = NULL;
    size_t n = 0;
    TU_OK(ravel_txn_get(t, "k2", 2, &v, &n)); /* its own writes */
    assert_int_equal(n, 2);
    ravel_free(v);
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "k", "new");
    tu_expect(db, NULL, "k2", "v2");
    expect_prepared(db, "");
    /* rollback of a prepared transaction */
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "k", "rolled back");
    TU_OK(ravel_txn_set_name(t, "xa-2"));
    TU_OK(ravel_txn_prepare(t));
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "k", "new");
    expect_prepared(db, "");
    TU_OK(ravel_txn_begin(db, 0, &u)); /* the lock is free again */
    tput(u, "k", "u");
    TU_OK(ravel_txn_commit(u));
    ravel_txn_free(u);
    /* an optimistic prepare validates: a conflict leaves it open */
    TU_OK(ravel_txn_begin(db, RAVEL_TXN_OPTIMISTIC, &t));
    tput(t, "k", "opt");
    tu_put(db, 0, "k", "meanwhile");
    TU_OK(ravel_txn_set_name(t, "xa-3"));
    TU_EXPECT_RC(RAVEL_CONFLICT, ravel_txn_prepare(t));
    expect_prepared(db, "");
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "k", "meanwhile");
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_close(db));
    assert_int_equal(count_prepared_files(dir), 0);
    free(dir);
}

static void test_reopen(void **state)
{
    (void)state;
    char *dir = new_dir("reopen");
    const char *opts = "txn_lock_timeout=0";
    ravel_db *db = tu_open_ok(dir, opts);
    tu_put(db, 0, "a", "a0");
    tu_put(db, 0, "b", "b0");
    const char *names[2] = {"commit-me", "roll-me-back"};
    const char *keys[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        ravel_txn *t = NULL;
        TU_OK(ravel_txn_begin(db, i ? RAVEL_TXN_OPTIMISTIC : 0, &t));
        tput(t, keys[i], "prepared");
        tput(t, i ? "b-extra" : "a-extra", "x");
        TU_OK(ravel_txn_set_name(t, names[i]));
        TU_OK(ravel_txn_prepare(t));
        ravel_txn_free(t);
    }
    TU_OK(ravel_flush(db, 0)); /* a flush keeps prepared files */
    TU_OK(ravel_close(db));
    assert_int_equal(count_prepared_files(dir), 2);

    db = tu_open_ok(dir, opts);
    char *list = prepared_names(db);
    assert_non_null(strstr(list, "commit-me\n"));
    assert_non_null(strstr(list, "roll-me-back\n"));
    free(list);
    tu_expect(db, NULL, "a", "a0");
    tu_expect(db, NULL, "b-extra", NULL);
    ravel_txn *u = NULL, *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &u)); /* keys locked again */
    TU_EXPECT_RC(RAVEL_TIMEDOUT, ravel_txn_put(u, "a", 1, "u", 1));
    TU_EXPECT_RC(RAVEL_TIMEDOUT, ravel_txn_delete(u, "b-extra", 7));
    ravel_txn_free(u);
    TU_OK(ravel_txn_recover(db, "commit-me", &t));
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    TU_OK(ravel_txn_recover(db, "roll-me-back", &t));
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    expect_prepared(db, "");
    tu_expect(db, NULL, "a", "prepared");
    tu_expect(db, NULL, "a-extra", "x");
    tu_expect(db, NULL, "b", "b0");
    tu_expect(db, NULL, "b-extra", NULL);
    assert_int_equal(count_prepared_files(dir), 1); /* until a flush */
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, opts); /* the commit marker found again */
    expect_prepared(db, "");
    tu_expect(db, NULL, "a", "prepared");
    tu_expect(db, NULL, "b", "b0");
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(count_prepared_files(dir), 0);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    expect_prepared(db, "");
    tu_expect(db, NULL, "a", "prepared");
    tu_expect(db, NULL, "a-extra", "x");
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_faults(void **state)
{
    (void)state;
    char *dir = new_dir("faults");
    ravel_db *db = tu_open_ok(dir, "wal_io=sync");
    tu_put(db, 0, "k", "old");
    /* a prepared transaction, flushed past, then rolled back */
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "k", "prepared then rolled back");
    TU_OK(ravel_txn_set_name(t, "flushed-past"));
    TU_OK(ravel_txn_prepare(t));
    for (int i = 0; i < 3; i++) {
        tu_put(db, 0, "other", "x");
        TU_OK(ravel_flush(db, 0));
    }
    tu_expect(db, NULL, "k", "old");
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "k", "old");
    /* a prepared transaction whose commit write fails stays prepared */
    TU_OK(ravel_txn_begin(db, 0, &t));
    tput(t, "k", "prepared, commit failed");
    TU_OK(ravel_txn_set_name(t, "commit-fails"));
    TU_OK(ravel_txn_prepare(t));
    /* a plain transaction whose commit write fails too */
    ravel_txn *u = NULL;
    TU_OK(ravel_txn_begin(db, 0, &u));
    tput(u, "u", "commit failed");
    rv_fault_arm(RV_FAULT_WAL_WRITE, 0, EIO);
    int rc = ravel_txn_commit(t);
    rv_fault_arm(RV_FAULT_WAL_WRITE, -1, 0);
    assert_int_not_equal(rc, RAVEL_OK);
    expect_prepared(db, "commit-fails\n");
    tu_expect(db, NULL, "k", "old");
    rc = ravel_txn_commit(u); /* writes are stopped now */
    assert_int_not_equal(rc, RAVEL_OK);
    ravel_txn_free(u);
    tu_expect(db, NULL, "u", NULL);
    /* whether the failed write reached the WAL is known at the next open:
    ** no rollback until then */
    TU_EXPECT_RC(RAVEL_READONLY, ravel_txn_rollback(t));
    ravel_txn_free(t);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    expect_prepared(db, "commit-fails\n"); /* its record never got there */
    tu_expect(db, NULL, "k", "old");
    tu_expect(db, NULL, "u", NULL);
    TU_OK(ravel_txn_recover(db, "commit-fails", &t));
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    expect_prepared(db, "");
    tu_expect(db, NULL, "k", "old");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    expect_prepared(db, "");
    tu_expect(db, NULL, "k", "old");
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_large(void **state)
{
    (void)state;
    char *dir = new_dir("large");
    ravel_db *db = tu_open_ok(dir, "write_buffer_size=256K");
    enum { N = 2048, VLEN = 4096 }; /* 8 MiB: 32 write buffers */
    char *val = malloc(VLEN);
    char key[32];
    for (int named = 0; named < 2; named++) {
        ravel_txn *t = NULL;
        TU_OK(ravel_txn_begin(db, named ? RAVEL_TXN_OPTIMISTIC : 0, &t));
        for (int i = 0; i < N; i++) {
            snprintf(key, sizeof key, "big%d-%05d", named, i);
            memset(val, 'a' + i % 26, VLEN);
            TU_OK(ravel_txn_put(t, key, strlen(key), val, VLEN));
        }
        if (named) {
            TU_OK(ravel_txn_set_name(t, "big"));
            TU_OK(ravel_txn_prepare(t));
        }
        TU_OK(ravel_txn_commit(t));
        ravel_txn_free(t);
    }
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "write_buffer_size=256K");
    for (int named = 0; named < 2; named++)
        for (int i = 0; i < N; i += 97) {
            snprintf(key, sizeof key, "big%d-%05d", named, i);
            void *v = NULL;
            size_t n = 0;
            TU_OK(ravel_get(db, NULL, key, strlen(key), &v, &n));
            assert_int_equal(n, VLEN);
            assert_int_equal(((char *)v)[VLEN - 1], 'a' + i % 26);
            ravel_free(v);
        }
    TU_OK(ravel_close(db));
    free(val);
    free(dir);
}

/* A prepare found by the replay (no file): recovered, spilled by a flush
** from the handle's batch, committed; another left to a flush after its
** handle was freed, then rolled back after a reopen from its file. */
static void test_replayed(void **state)
{
    (void)state;
    char *dir = new_dir("replayed");
    ravel_db *db = tu_open_ok(dir, NULL);
    const char *names[2] = {"from-wal", "from-file"};
    for (int i = 0; i < 2; i++) {
        ravel_txn *t = NULL;
        TU_OK(ravel_txn_begin(db, RAVEL_SYNC, &t));
        tput(t, names[i], "v");
        TU_OK(ravel_txn_set_name(t, names[i]));
        TU_OK(ravel_txn_prepare(t));
        ravel_txn_free(t);
    }
    TU_OK(ravel_close(db)); /* little in the memtable: no flush */
    assert_int_equal(count_prepared_files(dir), 0);
    db = tu_open_ok(dir, NULL);
    char *list = prepared_names(db);
    assert_non_null(strstr(list, "from-wal\n"));
    assert_non_null(strstr(list, "from-file\n"));
    free(list);
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_recover(db, "from-wal", &t));
    tu_put(db, 0, "filler", "x");
    TU_OK(ravel_flush(db, 0)); /* spills both: one from T's batch */
    assert_int_equal(count_prepared_files(dir), 2);
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    tu_expect(db, NULL, "from-wal", "v");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    expect_prepared(db, "from-file\n");
    tu_expect(db, NULL, "from-wal", "v");
    tu_expect(db, NULL, "from-file", NULL);
    TU_OK(ravel_txn_recover(db, "from-file", &t));
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    expect_prepared(db, "");
    tu_put(db, 0, "filler", "y");
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(count_prepared_files(dir), 0);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    expect_prepared(db, "");
    tu_expect(db, NULL, "from-file", NULL);
    tu_expect(db, NULL, "from-wal", "v");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------ kill -9, power loss */

#define ACCOUNTS 16
#define START 1000

enum { MSG_INTENT = 1, MSG_PREPARED = 2, MSG_COMMITTED = 3, MSG_LEFT = 4 };

struct msg {
    uint32_t kind, i, from, to, amount;
};

struct child_args {
    char dir[512];
    char journal[512];
    uint64_t seed;
};

static void account_key(int i, char key[16])
{
    snprintf(key, 16, "acct%02d", i);
}

static long balance_of(ravel_db *db, ravel_txn *t, int i)
{
    char key[16];
    account_key(i, key);
    void *v = NULL;
    size_t n = 0;
    int rc = t ? ravel_txn_get_for_update(t, key, strlen(key), &v, &n)
               : ravel_get(db, NULL, key, strlen(key), &v, &n);
    if (rc)
        return -1000000 - rc;
    char buf[32];
    snprintf(buf, sizeof buf, "%.*s", (int)n, (const char *)v);
    ravel_free(v);
    return atol(buf);
}

static int child_main(const void *arg)
{
    const struct child_args *ca = arg;
    if (ca->journal[0])
        tu_sync_journal_start(ca->journal);
    ravel_db *db = NULL;
    ravel_options *o = NULL;
    int rc = tu_options_try("write_buffer_size=64K;txn_lock_timeout=0", &o);
    if (!rc)
        rc = ravel_open(ca->dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("open: %s: %s", ravel_errstr(rc), ravel_errmsg());
    crash_child_opened(db);
    uint64_t rng = ca->seed | 1;
    int locked[ACCOUNTS] = {0}; /* accounts a prepared transaction holds */
    int left = 0;               /* transactions left prepared */
    for (uint32_t i = 0;; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t from = (uint32_t)(rng % ACCOUNTS);
        uint32_t to = (uint32_t)((rng >> 8) % ACCOUNTS);
        if (from == to || locked[from] || locked[to])
            continue;
        uint32_t amount = (uint32_t)((rng >> 16) % 50);
        struct msg m = {MSG_INTENT, i, from, to, amount};
        crash_send(&m, sizeof m);
        ravel_txn *t = NULL;
        char name[32], key[16], val[32];
        snprintf(name, sizeof name, "t%u", i);
        rc = ravel_txn_begin(db, RAVEL_SYNC, &t);
        long bf = rc ? 0 : balance_of(db, t, (int)from);
        long bt = rc ? 0 : balance_of(db, t, (int)to);
        if (!rc && (bf < 0 || bt < 0))
            crash_child_fail("read: %s", ravel_errmsg());
        account_key((int)from, key);
        snprintf(val, sizeof val, "%ld", bf - amount);
        if (!rc)
            rc = ravel_txn_put(t, key, strlen(key), val, strlen(val));
        account_key((int)to, key);
        snprintf(val, sizeof val, "%ld", bt + amount);
        if (!rc)
            rc = ravel_txn_put(t, key, strlen(key), val, strlen(val));
        if (!rc)
            rc = ravel_txn_set_name(t, name);
        if (!rc)
            rc = ravel_txn_prepare(t);
        if (rc)
            crash_child_fail("transfer %u: %s: %s", i, ravel_errstr(rc),
                             ravel_errmsg());
        m.kind = MSG_PREPARED;
        crash_send(&m, sizeof m);
        if (i % 5 == 4 && left < 4) { /* left prepared */
            locked[from] = locked[to] = 1;
            left++;
            ravel_txn_free(t);
            m.kind = MSG_LEFT;
            crash_send(&m, sizeof m);
            continue;
        }
        rc = ravel_txn_commit(t);
        if (rc)
            crash_child_fail("commit %u: %s: %s", i, ravel_errstr(rc),
                             ravel_errmsg());
        ravel_txn_free(t);
        m.kind = MSG_COMMITTED;
        crash_send(&m, sizeof m);
        if (i % 7 == 0)
            (void)ravel_flush(db, 0); /* commits flushed, files deleted */
    }
}

#define MAX_TRANSFERS 100000

struct record {
    struct msg m[MAX_TRANSFERS];
    int state[MAX_TRANSFERS]; /* the last kind reported (not LEFT) */
    char left[MAX_TRANSFERS];  /* reported left prepared */
    uint32_t n;
};

static struct record rec;

static void parent_msg(struct crash_child *c, const void *p)
{
    (void)c;
    const struct msg *m = p;
    assert_true(m->i < MAX_TRANSFERS);
    if (m->kind == MSG_INTENT)
        rec.m[m->i] = *m;
    if (m->kind == MSG_LEFT)
        rec.left[m->i] = 1;
    else
        rec.state[m->i] = (int)m->kind;
    if (m->i + 1 > rec.n)
        rec.n = m->i + 1;
}

static int enough(struct crash_child *c)
{
    (void)c;
    uint32_t committed = 0;
    for (uint32_t i = 0; i < rec.n; i++)
        committed += rec.state[i] == MSG_COMMITTED;
    return committed >= 40 && tu_now_ms() % 3 == 0;
}

/* One round: a child killed mid-run (a power loss after it, with JOURNAL),
** then the checks of the top of this file. */
static void run_round(const char *dir, const char *journal, uint64_t *rng,
                      int pattern)
{
    memset(&rec, 0, sizeof rec);
    if (journal) /* the parent's setup is synced too: journaled */
        tu_sync_journal_start(journal);
    ravel_db *db = tu_open_ok(dir, NULL);
    char key[16];
    for (int i = 0; i < ACCOUNTS; i++) {
        account_key(i, key);
        TU_OK(ravel_put(db, RAVEL_SYNC, key, strlen(key), "1000", 4));
    }
    TU_OK(ravel_close(db));
    struct child_args ca;
    memset(&ca, 0, sizeof ca);
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    if (journal)
        snprintf(ca.journal, sizeof ca.journal, "%s", journal);
    ca.seed = *rng;
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    struct crash_child c;
    memset(&c, 0, sizeof c);
    c.on_msg = parent_msg;
    c.msg_size = sizeof(struct msg);
    crash_spawn(&c, "transfers", &ca, sizeof ca);
    crash_wait(&c, enough, 120000, "40 committed transfers");
    crash_kill(&c);
    if (journal)
        tu_power_loss(dir, journal, (enum tu_power_loss_pattern)pattern, rng);

    db = tu_open_ok(dir, "txn_lock_timeout=0");
    char *names = prepared_names(db);
    long model[ACCOUNTS];
    for (int i = 0; i < ACCOUNTS; i++)
        model[i] = START;
    int listed = 0, committed = 0;
    for (uint32_t i = 0; i < rec.n; i++) {
        char name[40], line[42];
        snprintf(name, sizeof name, "t%u\n", i);
        snprintf(line, sizeof line, "\nt%u\n", i);
        int is_listed = strncmp(names, name, strlen(name)) == 0 ||
                        strstr(names, line) != NULL;
        int st = rec.state[i];
        if (st == MSG_COMMITTED && is_listed)
            fail_msg("t%u was committed, but is listed as prepared", i);
        if (st == MSG_PREPARED && rec.left[i] && !is_listed)
            fail_msg("t%u was left prepared, but is not listed", i);
        int applied = is_listed || st == MSG_COMMITTED ||
                      (st == MSG_PREPARED && !is_listed);
        if (is_listed) {
            ravel_txn *t = NULL;
            snprintf(name, sizeof name, "t%u", i);
            TU_OK(ravel_txn_recover(db, name, &t));
            TU_OK(ravel_txn_commit(t));
            ravel_txn_free(t);
            listed++;
        }
        if (applied) {
            model[rec.m[i].from] -= rec.m[i].amount;
            model[rec.m[i].to] += rec.m[i].amount;
            committed += !is_listed;
        }
    }
    free(names);
    expect_prepared(db, "");
    long sum = 0;
    for (int i = 0; i < ACCOUNTS; i++) {
        long b = balance_of(db, NULL, i);
        if (b != model[i])
            fail_msg("account %d holds %ld, the committed transfers give "
                     "%ld", i, b, model[i]);
        sum += b;
    }
    assert_int_equal(sum, ACCOUNTS * START);
    printf("# %s: %u transfers begun, %d found committed, %d prepared "
           "(recovered and committed)\n",
           journal ? tu_power_loss_name((enum tu_power_loss_pattern)pattern)
                   : "kill -9", rec.n, committed, listed);
    TU_OK(ravel_close(db));
}

static void test_kill9(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    for (int round = 0; round < 3; round++) {
        char *dir = new_dir("kill9");
        run_round(dir, NULL, &rng, 0);
        free(dir);
    }
}

static void test_powerloss(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    for (int p = 0; p < TU_PL_PATTERNS; p++) {
        char *dir = new_dir("powerloss");
        char *journal = tu_path("txn2pc-journal-%d", dirs++);
        run_round(dir, journal, &rng, p);
        free(journal);
        free(dir);
    }
}

int main(int argc, char **argv)
{
    static const struct crash_role roles[] = {
        {"transfers", child_main, sizeof(struct child_args)},
        {NULL, NULL, 0},
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basics),
        cmocka_unit_test(test_reopen),
        cmocka_unit_test(test_replayed),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_kill9),
        cmocka_unit_test(test_powerloss),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
