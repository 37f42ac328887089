/*
** test_hostile_31.c -- hostile review of the moved-file fix (73cfdf2): a
** file moved down a level (a trivial move) gets a new entry that holds the
** entry it was moved from (moved_from) and passes its obsolescence on
** when it goes, so the table file goes only when no version names it at
** any level.
**
** The layout is made deterministic: automatic compactions are off, one
** small file is ingested (it lands in the last level, 6), one memtable of
** "a" keys is flushed to level 0, and ravel_compact_range over the "a"
** keys then moves that file 0 -> 1 -> ... -> 6 (six moves, six entries
** chained through moved_from) and finally rewrites it in level 6.  The
** compaction runs in a worker thread and stops before each step at
** RV_PAUSE_COMPACTION_PICKED, where the test takes an iterator (or a
** checkpoint, a backup, a reader's catch-up) on the version between two
** moves.
**
** Each scenario then checks: every held iterator sees all the keys with
** status OK (no file deleted early), the table file stays on disk while
** any of them lives, and once they are all gone, and after a close and a
** reopen, the directory holds exactly the table files the current version
** names (no orphan left behind).
*/
#include "testutil.h"
#include "db/db.h"
#include "db/version.h"
#include "util/fault.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OPTS "disable_auto_compactions=true;block_size=256"
#define N_A 200
#define STEPS 7 /* six moves and the rewrite */

/* ------------------------------------------------------------- helpers */

/* DIR followed by the formatted suffix (malloc'd). */
static char *sibling(const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static char *sibling(const char *dir, const char *fmt, ...)
{
    char suffix[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(suffix, sizeof suffix, fmt, ap);
    va_end(ap);
    size_t n = strlen(dir) + strlen(suffix) + 1;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s%s", dir, suffix);
    return p;
}

static void ingest_z(ravel_db *db, const char *dir)
{
    char *sst = sibling(dir, "-z.sstin");
    unlink(sst);
    ravel_sst_writer *w;
    TU_OK(ravel_sst_writer_open(sst, NULL, &w));
    TU_OK(ravel_sst_writer_put(w, "z0", 2, "zv", 2));
    TU_OK(ravel_sst_writer_put(w, "z1", 2, "zv", 2));
    TU_OK(ravel_sst_writer_finish(w, NULL));
    ravel_sst_writer_free(w);
    const char *paths[1] = {sst};
    TU_OK(ravel_ingest(db, paths, 1, 0));
    unlink(sst);
    free(sst);
}

/* A database with the "z" file in level 6 and the "a" keys in one level-0
** file, whose number *A_FILE receives. */
static ravel_db *make_db(const char *dir, const char *extra,
                         uint64_t *a_file)
{
    char opts[512];
    snprintf(opts, sizeof opts, "%s%s%s", OPTS, extra ? ";" : "",
             extra ? extra : "");
    tu_rm_rf(dir);
    ravel_db *db = tu_open_ok(dir, opts);
    ingest_z(db, dir);
    char k[16], v[64];
    memset(v, 'v', sizeof v);
    for (int i = 0; i < N_A; i++) {
        snprintf(k, sizeof k, "a%05d", i);
        TU_OK(ravel_put(db, 0, k, 6, v, sizeof v));
    }
    TU_OK(ravel_flush(db, 0));
    struct tu_sst *s;
    int n = tu_sstables(db, &s);
    *a_file = 0;
    int z6 = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].level == 0)
            *a_file = s[i].number;
        if (s[i].level == 6)
            z6 = 1;
    }
    free(s);
    if (n != 2 || !*a_file || !z6)
        fail_msg("unexpected layout: %d files, a file %llu, z in L6 %d", n,
                 (unsigned long long)*a_file, z6);
    return db;
}

/* Counts the keys IT sees from the first; fails on a bad status. */
static int iter_count(ravel_iter *it, const char *what)
{
    int n = 0;
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it))
        n++;
    int st = ravel_iter_status(it);
    if (st != RAVEL_OK)
        fail_msg("%s: iterator status %d (%s) after %d keys", what, st,
                 ravel_errmsg(), n);
    return n;
}

/* Releases the versions retired since the readers that could use them
** left (read_epoch.h): a replaced version is dropped only by a later
** retire or advance, so a file can outlive its last reader by a little. */
static void settle(ravel_db *db)
{
    for (int i = 0; i < 3; i++) {
        rv_mutex_lock(&db->mu.lock);
        struct rv_version *l = rv_read_epoch_advance_locked(&db->read.epoch);
        rv_mutex_unlock(&db->mu.lock);
        rv_read_epoch_release(l);
    }
}

/* Fails unless DIR holds exactly the table files DB's current version
** names. */
static void expect_no_orphans(ravel_db *db, const char *dir,
                              const char *what)
{
    settle(db);
    struct tu_sst *s;
    int n = tu_sstables(db, &s);
    uint64_t *on_disk;
    int m = tu_dir_sst_numbers(dir, &on_disk);
    for (int i = 0; i < m; i++) {
        int named = 0;
        for (int j = 0; j < n; j++)
            named |= s[j].number == on_disk[i];
        if (!named)
            fail_msg("%s: %06llu.sst is on disk but the current version "
                     "does not name it (leaked)", what,
                     (unsigned long long)on_disk[i]);
    }
    for (int j = 0; j < n; j++)
        if (!tu_sst_exists(dir, s[j].number))
            fail_msg("%s: the current version names %06llu.sst, which is "
                     "missing", what, (unsigned long long)s[j].number);
    free(s);
    free(on_disk);
}

/* Closes DB, then fails unless DIR holds exactly the table files its
** last version named: a file no version names any more must be gone once
** close has released every version (else the next open has to find it). */
static void close_checked(ravel_db *db, const char *dir, const char *what)
{
    struct tu_sst *s;
    int n = tu_sstables(db, &s);
    TU_OK(ravel_close(db));
    uint64_t *on_disk;
    int m = tu_dir_sst_numbers(dir, &on_disk);
    for (int i = 0; i < m; i++) {
        int named = 0;
        for (int j = 0; j < n; j++)
            named |= s[j].number == on_disk[i];
        if (!named)
            fail_msg("%s: %06llu.sst is left on disk after close, but the "
                     "last version did not name it (leaked)", what,
                     (unsigned long long)on_disk[i]);
    }
    for (int j = 0; j < n; j++)
        if (!tu_sst_exists(dir, s[j].number))
            fail_msg("%s: %06llu.sst was deleted by close", what,
                     (unsigned long long)s[j].number);
    free(s);
    free(on_disk);
}

static void expect_all(ravel_db *db, const char *what)
{
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, NULL, &it));
    int n = iter_count(it, what);
    ravel_iter_free(it);
    if (n != N_A + 2)
        fail_msg("%s: %d keys, %d expected", what, n, N_A + 2);
}

/* The worker: ravel_compact_range over the "a" keys. */
struct worker {
    ravel_db *db;
    int rc;
};

static void *compact_worker(void *arg)
{
    struct worker *w = arg;
    w->rc = ravel_compact_range(w->db, "a", 1, "b", 1);
    return NULL;
}

/* Waits for a thread at POINT; 0 if the worker ended first (DONE set)
** and nobody waits there. */
static int wait_at(enum rv_pause_point point, const _Atomic int *done)
{
    for (uint64_t i = 0; i < 600000; i++) { /* a bound, not a timing */
        if (rv_pause_waiting(point))
            return 1;
        if (atomic_load(done))
            return rv_pause_waiting(point);
        usleep(100);
    }
    fail_msg("no compaction reached pause point %d", (int)point);
    return 0;
}

struct run {
    ravel_db *db;
    pthread_t th;
    struct worker w;
    _Atomic int done;
};

static void *run_thread(void *arg)
{
    struct run *r = arg;
    compact_worker(&r->w);
    atomic_store(&r->done, 1);
    return NULL;
}

/* Runs compact_range in a thread; before each of its steps calls AT(ctx,
** step) with the compaction paused at RV_PAUSE_COMPACTION_PICKED.  The
** pause points are used in alternation (PICKED, then LOGGED of the same
** step) so that a point is re-armed only once its waiter has left it.
** Returns the number of steps. */
static int run_chain(ravel_db *db, void (*at)(void *, int), void *ctx,
                     int *rc)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.db = db;
    r.w.db = db;
    atomic_init(&r.done, 0);
    rv_pause_arm(RV_PAUSE_COMPACTION_PICKED);
    TU_OK(pthread_create(&r.th, NULL, run_thread, &r));
    int steps = 0;
    while (wait_at(RV_PAUSE_COMPACTION_PICKED, &r.done)) {
        at(ctx, steps);
        steps++;
        rv_pause_arm(RV_PAUSE_COMPACTION_LOGGED);
        rv_pause_release(RV_PAUSE_COMPACTION_PICKED);
        int logged = wait_at(RV_PAUSE_COMPACTION_LOGGED, &r.done);
        /* the waiter has left PICKED (it is at LOGGED, or done) */
        rv_pause_arm(RV_PAUSE_COMPACTION_PICKED);
        rv_pause_release(RV_PAUSE_COMPACTION_LOGGED);
        if (!logged)
            break;
    }
    pthread_join(r.th, NULL);
    rv_pause_release(RV_PAUSE_COMPACTION_PICKED);
    rv_pause_release(RV_PAUSE_COMPACTION_LOGGED);
    *rc = r.w.rc;
    return steps;
}

/* ---------------------------------------------- iterators along a chain */

struct iters {
    ravel_db *db;
    ravel_iter *it[STEPS + 2];
    int n;
};

static void take_iter(void *ctx, int step)
{
    (void)step;
    struct iters *s = ctx;
    TU_OK(ravel_iter_new(s->db, NULL, &s->it[s->n]));
    s->n++;
}

/* ORDER: 0 oldest first, 1 newest first, 2 middle out. */
static void chain_with_iterators(int order)
{
    char *dir = tu_path("chain-%d", order);
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    struct iters s;
    memset(&s, 0, sizeof s);
    s.db = db;
    TU_OK(ravel_iter_new(db, NULL, &s.it[s.n++])); /* before any move */
    int rc;
    int steps = run_chain(db, take_iter, &s, &rc);
    TU_OK(rc);
    if (steps != STEPS)
        fail_msg("compact_range ran %d steps, %d expected (six moves and "
                 "a rewrite)", steps, STEPS);
    /* the versions the compaction replaced are released (only those the
    ** iterators hold stay) */
    settle(db);
    if (tu_sst_exists(dir, a_file) != 1)
        fail_msg("order %d: %06llu.sst deleted while %d iterators hold "
                 "versions naming it", order, (unsigned long long)a_file,
                 s.n);
    /* Free them in ORDER; each is read for the first time just before it
    ** is freed (a read pins the open table in the version's entry, which
    ** would hide a deleted file from later reads of that iterator). */
    int idx[STEPS + 2], k = 0;
    if (order == 0)
        for (int i = 0; i < s.n; i++)
            idx[k++] = i;
    else if (order == 1)
        for (int i = s.n - 1; i >= 0; i--)
            idx[k++] = i;
    else
        for (int d = 0; k < s.n; d++) {
            int m = s.n / 2;
            if (m + d < s.n)
                idx[k++] = m + d;
            if (d && m - d >= 0)
                idx[k++] = m - d;
        }
    for (int j = 0; j < k; j++) {
        char what[80];
        snprintf(what, sizeof what, "order %d, iterator %d (freed %d of "
                 "%d)", order, idx[j], j, s.n);
        int n = iter_count(s.it[idx[j]], what);
        if (n != N_A + 2)
            fail_msg("%s: %d keys, %d expected", what, n, N_A + 2);
        ravel_iter_free(s.it[idx[j]]);
        s.it[idx[j]] = NULL;
        settle(db);
        if (j + 1 < k && tu_sst_exists(dir, a_file) != 1)
            fail_msg("order %d: %06llu.sst deleted while %d iterators "
                     "still hold versions naming it", order,
                     (unsigned long long)a_file, k - j - 1);
    }
    if (tu_sst_exists(dir, a_file))
        fail_msg("order %d: %06llu.sst (moved six times, then rewritten) "
                 "is still on disk once every iterator is gone (leaked)",
                 order, (unsigned long long)a_file);
    expect_no_orphans(db, dir, "after the iterators");
    expect_all(db, "after the iterators");
    close_checked(db, dir, __func__);
    db = tu_open_ok(dir, OPTS);
    expect_no_orphans(db, dir, "after a reopen");
    expect_all(db, "after a reopen");
    close_checked(db, dir, __func__);
    tu_rm_rf(dir);
    free(dir);
}

static void test_chain_oldest_first(void **state)
{
    (void)state;
    chain_with_iterators(0);
}

static void test_chain_newest_first(void **state)
{
    (void)state;
    chain_with_iterators(1);
}

static void test_chain_middle_out(void **state)
{
    (void)state;
    chain_with_iterators(2);
}

/* ----------------------- close refused while a chain is held, then reopen */

static void take_iter_at_3(void *ctx, int step)
{
    if (step == 3)
        take_iter(ctx, step);
}

static void test_close_with_chain(void **state)
{
    (void)state;
    char *dir = tu_path("close");
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    struct iters s;
    memset(&s, 0, sizeof s);
    s.db = db;
    int rc;
    run_chain(db, take_iter_at_3, &s, &rc);
    TU_OK(rc);
    assert_int_equal(s.n, 1);
    /* refused: the iterator holds a version with the file at level 3 */
    assert_int_equal(ravel_close(db), RAVEL_INVALID);
    settle(db);
    assert_int_equal(iter_count(s.it[0], "close refused"), N_A + 2);
    assert_int_equal(tu_sst_exists(dir, a_file), 1);
    ravel_iter_free(s.it[0]);
    assert_int_equal(tu_sst_exists(dir, a_file), 0);
    close_checked(db, dir, __func__);
    db = tu_open_ok(dir, OPTS);
    expect_no_orphans(db, dir, "reopen");
    expect_all(db, "reopen");
    close_checked(db, dir, __func__);
    tu_rm_rf(dir);
    free(dir);
}

/* A chain that is not rewritten at the end (the moves only, the file is
** live): closing must not delete it, and a reopen finds it. */
static void at_stop_before_rewrite(void *ctx, int step)
{
    struct iters *s = ctx;
    if (step == 0)
        take_iter(ctx, step);
    if (step == STEPS - 1) /* the rewrite: make it fail */
        rv_fault_arm(RV_FAULT_COMPACTION, 0, 5 /* EIO */);
    (void)s;
}

static void test_moves_then_failed_rewrite(void **state)
{
    (void)state;
    char *dir = tu_path("failrw");
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    struct iters s;
    memset(&s, 0, sizeof s);
    s.db = db;
    int rc;
    run_chain(db, at_stop_before_rewrite, &s, &rc);
    rv_fault_arm(RV_FAULT_COMPACTION, -1, 0);
    assert_int_not_equal(rc, RAVEL_OK);
    /* the file moved to level 6 and is still current */
    assert_int_equal(tu_files_at_level(db, 6), 2);
    assert_int_equal(tu_sst_exists(dir, a_file), 1);
    settle(db);
    assert_int_equal(iter_count(s.it[0], "held"), N_A + 2);
    ravel_iter_free(s.it[0]);
    assert_int_equal(tu_sst_exists(dir, a_file), 1);
    expect_no_orphans(db, dir, "after a failed rewrite");
    expect_all(db, "after a failed rewrite");
    close_checked(db, dir, __func__);
    assert_int_equal(tu_sst_exists(dir, a_file), 1);
    db = tu_open_ok(dir, OPTS);
    expect_no_orphans(db, dir, "reopen after a failed rewrite");
    expect_all(db, "reopen after a failed rewrite");
    /* now the rewrite, with nothing holding the chain */
    TU_OK(ravel_compact_range(db, "a", 1, "b", 1));
    settle(db);
    assert_int_equal(tu_sst_exists(dir, a_file), 0);
    expect_no_orphans(db, dir, "rewritten after the reopen");
    expect_all(db, "rewritten after the reopen");
    close_checked(db, dir, __func__);
    tu_rm_rf(dir);
    free(dir);
}

/* A move whose manifest record fails to be written: the new entry (with
** its moved_from) is never installed; writes stop.  The held iterator, the
** current version and a reopen must all still find the file. */
static void at_fail_move_3(void *ctx, int step)
{
    if (step == 1)
        take_iter(ctx, step);
    if (step == 3)
        rv_fault_arm(RV_FAULT_MANIFEST_WRITE, 0, 5 /* EIO */);
}

static void test_failed_move_edit(void **state)
{
    (void)state;
    char *dir = tu_path("failmv");
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    struct iters s;
    memset(&s, 0, sizeof s);
    s.db = db;
    int rc;
    run_chain(db, at_fail_move_3, &s, &rc);
    rv_fault_arm(RV_FAULT_MANIFEST_WRITE, -1, 0);
    assert_int_not_equal(rc, RAVEL_OK);
    assert_int_equal(tu_sst_exists(dir, a_file), 1);
    settle(db);
    assert_int_equal(iter_count(s.it[0], "held"), N_A + 2);
    expect_all(db, "after the failed move");
    ravel_iter_free(s.it[0]);
    assert_int_equal(tu_sst_exists(dir, a_file), 1);
    expect_all(db, "after the failed move, iterator gone");
    ravel_close(db); /* writes stopped: its result may be the failure */
    assert_int_equal(tu_sst_exists(dir, a_file), 1);
    db = tu_open_ok(dir, OPTS);
    expect_no_orphans(db, dir, "reopen after a failed move");
    expect_all(db, "reopen after a failed move");
    TU_OK(ravel_compact_range(db, "a", 1, "b", 1));
    expect_no_orphans(db, dir, "compacted after the reopen");
    expect_all(db, "compacted after the reopen");
    close_checked(db, dir, __func__);
    tu_rm_rf(dir);
    free(dir);
}

/* ------------------------------------ checkpoints and backups mid-chain */

struct copies {
    ravel_db *db;
    const char *dir;
    ravel_iter *it;
    int n_cp;
    uint64_t backup[STEPS + 1];
    int n_backup;
};

static void at_copy(void *ctx, int step)
{
    struct copies *c = ctx;
    if (step == 0)
        TU_OK(ravel_iter_new(c->db, NULL, &c->it));
    char *cp = sibling(c->dir, "-cp%d", step);
    tu_rm_rf(cp);
    TU_OK(ravel_checkpoint(c->db, cp));
    free(cp);
    c->n_cp++;
    char *root = sibling(c->dir, "-backups");
    TU_OK(ravel_backup_create(c->db, root, &c->backup[c->n_backup++]));
    free(root);
}

static void check_copy(const char *dir, const char *what)
{
    ravel_db *db = tu_open_ok(dir, OPTS);
    expect_no_orphans(db, dir, what);
    expect_all(db, what);
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    expect_no_orphans(db, dir, what);
    expect_all(db, what);
    close_checked(db, dir, __func__);
}

static void test_checkpoint_backup_mid_chain(void **state)
{
    (void)state;
    char *dir = tu_path("copies");
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    struct copies c;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.dir = dir;
    int rc;
    run_chain(db, at_copy, &c, &rc);
    TU_OK(rc);
    settle(db);
    assert_int_equal(iter_count(c.it, "held"), N_A + 2);
    ravel_iter_free(c.it);
    expect_no_orphans(db, dir, "source");
    close_checked(db, dir, __func__);
    for (int i = 0; i < c.n_cp; i++) {
        char *cp = sibling(dir, "-cp%d", i);
        char what[64];
        snprintf(what, sizeof what, "checkpoint %d", i);
        check_copy(cp, what);
        tu_rm_rf(cp);
        free(cp);
    }
    char *root = sibling(dir, "-backups");
    for (int i = 0; i < c.n_backup; i++) {
        char *to = sibling(dir, "-restored%d", i);
        tu_rm_rf(to);
        TU_OK(ravel_backup_verify(root, c.backup[i]));
        TU_OK(ravel_backup_restore(root, c.backup[i], to));
        char what[64];
        snprintf(what, sizeof what, "backup %d", i);
        check_copy(to, what);
        tu_rm_rf(to);
        free(to);
    }
    tu_rm_rf(root);
    free(root);
    tu_rm_rf(dir);
    free(dir);
}

/* ----------------------------------------- a reader in the same process */

struct reader_ctx {
    ravel_db *ro;
    ravel_iter *it[STEPS + 1];
    int n;
};

static void at_reader(void *ctx, int step)
{
    (void)step;
    struct reader_ctx *r = ctx;
    TU_OK(ravel_catch_up(r->ro));
    TU_OK(ravel_iter_new(r->ro, NULL, &r->it[r->n++]));
}

static void test_reader_along_chain(void **state)
{
    (void)state;
    char *dir = tu_path("reader");
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    struct reader_ctx r;
    memset(&r, 0, sizeof r);
    r.ro = tu_open_ok(dir, OPTS ";read_only=true");
    int rc;
    run_chain(db, at_reader, &r, &rc);
    TU_OK(rc);
    settle(db);
    TU_OK(ravel_catch_up(r.ro));
    expect_all(r.ro, "reader caught up");
    for (int i = 0; i < r.n; i++) {
        char what[64];
        snprintf(what, sizeof what, "reader iterator %d", i);
        assert_int_equal(iter_count(r.it[i], what), N_A + 2);
    }
    /* the writer no longer needs the file: the reader holds it open */
    assert_int_equal(tu_sst_exists(dir, a_file), 0);
    for (int i = 0; i < r.n; i++)
        ravel_iter_free(r.it[i]);
    TU_OK(ravel_close(r.ro));
    expect_no_orphans(db, dir, "writer after the reader");
    close_checked(db, dir, __func__);
    db = tu_open_ok(dir, OPTS);
    expect_no_orphans(db, dir, "reopen after the reader");
    expect_all(db, "reopen after the reader");
    close_checked(db, dir, __func__);
    tu_rm_rf(dir);
    free(dir);
}

/* --------------------------------------- a reader in another process */

static void test_reader_process(void **state)
{
    (void)state;
    char *dir = tu_path("rproc");
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    int to_child[2], to_parent[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(to_parent), 0);
    tu_child_prepare();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char c;
        close(to_child[1]);
        close(to_parent[0]);
        ravel_db *ro;
        int code = 0;
        if (tu_open(dir, OPTS ";read_only=true", &ro) != RAVEL_OK)
            _exit(10);
        ravel_iter *it;
        if (ravel_iter_new(ro, NULL, &it) != RAVEL_OK)
            _exit(11);
        /* load the file's table before the writer moves it */
        ravel_iter_seek_to_first(it);
        if (write(to_parent[1], "r", 1) != 1 ||
            read(to_child[0], &c, 1) != 1)
            _exit(12);
        int n = 0;
        for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
             ravel_iter_next(it))
            n++;
        if (ravel_iter_status(it) != RAVEL_OK || n != N_A + 2)
            code = 13;
        ravel_iter_free(it);
        if (!code && ravel_catch_up(ro) != RAVEL_OK)
            code = 14;
        if (!code) {
            ravel_iter *it2;
            if (ravel_iter_new(ro, NULL, &it2) != RAVEL_OK)
                code = 15;
            else {
                n = 0;
                for (ravel_iter_seek_to_first(it2); ravel_iter_valid(it2);
                     ravel_iter_next(it2))
                    n++;
                if (ravel_iter_status(it2) != RAVEL_OK || n != N_A + 2)
                    code = 16;
                ravel_iter_free(it2);
            }
        }
        ravel_close(ro);
        _exit(code);
    }
    close(to_child[0]);
    close(to_parent[1]);
    char c;
    if (read(to_parent[0], &c, 1) != 1) {
        int status;
        waitpid(pid, &status, 0);
        fail_msg("the reader process failed before reading: status %d",
                 status);
    }
    TU_OK(ravel_compact_range(db, "a", 1, "b", 1));
    settle(db);
    assert_int_equal(tu_sst_exists(dir, a_file), 0);
    assert_int_equal(write(to_child[1], "g", 1), 1);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the reader process failed: status %d", status);
    expect_no_orphans(db, dir, "writer");
    close_checked(db, dir, __func__);
    close(to_child[1]);
    close(to_parent[0]);
    tu_rm_rf(dir);
    free(dir);
}

/* -------------------------------------------- concurrent (for TSan) */

struct churn {
    ravel_db *db;
    _Atomic int stop;
    _Atomic int expect_min;
};

static void *churn_reader(void *arg)
{
    struct churn *c = arg;
    while (!atomic_load(&c->stop)) {
        ravel_iter *it[3];
        int min = atomic_load(&c->expect_min);
        for (int i = 0; i < 3; i++)
            if (ravel_iter_new(c->db, NULL, &it[i]) != RAVEL_OK) {
                tu_thread_fail("iter_new: %s", ravel_errmsg());
                return NULL;
            }
        for (int i = 2; i >= 0; i--) {
            int n = 0;
            for (ravel_iter_seek_to_first(it[i]); ravel_iter_valid(it[i]);
                 ravel_iter_next(it[i]))
                n++;
            if (ravel_iter_status(it[i]) != RAVEL_OK || n < min)
                tu_thread_fail("churn iterator: %d keys (>= %d expected), "
                               "status %d: %s", n, min,
                               ravel_iter_status(it[i]), ravel_errmsg());
            ravel_iter_free(it[i]);
        }
    }
    return NULL;
}

static void test_concurrent_chains(void **state)
{
    (void)state;
    char *dir = tu_path("churn");
    uint64_t a_file;
    ravel_db *db = make_db(dir, NULL, &a_file);
    struct churn c;
    c.db = db;
    atomic_init(&c.stop, 0);
    atomic_init(&c.expect_min, N_A + 2);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        TU_OK(pthread_create(&th[i], NULL, churn_reader, &c));
    char k[16], v[64];
    memset(v, 'w', sizeof v);
    for (int round = 0; round < 12; round++) {
        /* a new level-0 file of new keys in "b", moved down to 6 and
        ** rewritten, with the readers' iterators coming and going */
        for (int i = 0; i < 20; i++) {
            snprintf(k, sizeof k, "b%02d%03d", round, i);
            TU_OK(ravel_put(db, 0, k, 6, v, sizeof v));
        }
        TU_OK(ravel_flush(db, 0));
        atomic_store(&c.expect_min, N_A + 2 + 20 * (round + 1));
        TU_OK(ravel_compact_range(db, "b", 1, "c", 1));
        if (round % 3 == 0)
            TU_OK(ravel_compact_range(db, "a", 1, "b", 1));
    }
    atomic_store(&c.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    expect_no_orphans(db, dir, "after the churn");
    close_checked(db, dir, __func__);
    db = tu_open_ok(dir, OPTS);
    expect_no_orphans(db, dir, "reopen after the churn");
    close_checked(db, dir, __func__);
    tu_rm_rf(dir);
    free(dir);
}

/* Automatic compactions (the options that make moves likely) under a
** writer, with readers holding a ring of iterators across many
** compactions and reading each for the first time only when it leaves
** the ring: every one must see at least the keys written before it was
** made, with status OK. */
struct auto_ctx {
    ravel_db *db;
    _Atomic int written;
    _Atomic int stop;
};

static void *auto_reader(void *arg)
{
    struct auto_ctx *c = arg;
    enum { RING = 6 };
    ravel_iter *ring[RING] = {0};
    int want[RING] = {0};
    for (unsigned i = 0; !atomic_load(&c->stop); i++) {
        int slot = (int)(i % RING);
        if (ring[slot]) {
            int n = 0;
            for (ravel_iter_seek_to_first(ring[slot]);
                 ravel_iter_valid(ring[slot]); ravel_iter_next(ring[slot]))
                n++;
            int st = ravel_iter_status(ring[slot]);
            if (st != RAVEL_OK || n < want[slot])
                tu_thread_fail("held iterator: %d keys (>= %d expected), "
                               "status %d: %s", n, want[slot], st,
                               ravel_errmsg());
            ravel_iter_free(ring[slot]);
        }
        want[slot] = atomic_load(&c->written);
        if (ravel_iter_new(c->db, NULL, &ring[slot]) != RAVEL_OK) {
            tu_thread_fail("iter_new: %s", ravel_errmsg());
            ring[slot] = NULL;
        }
        usleep(2000); /* let compactions happen while held: no assertion */
    }
    for (int i = 0; i < RING; i++)
        if (ring[i])
            ravel_iter_free(ring[i]);
    return NULL;
}

static void test_auto_compactions_held_iterators(void **state)
{
    (void)state;
    char *dir = tu_path("auto");
    tu_rm_rf(dir);
    ravel_db *db = tu_open_ok(dir, "write_buffer_size=4096;"
                              "target_file_size_base=65536;"
                              "max_bytes_for_level_base=65536;"
                              "level0_file_num_compaction_trigger=2;"
                              "block_size=256");
    struct auto_ctx c;
    c.db = db;
    atomic_init(&c.written, 0);
    atomic_init(&c.stop, 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        TU_OK(pthread_create(&th[i], NULL, auto_reader, &c));
    char k[16], v[200];
    memset(v, 'x', sizeof v);
    int total = (int)tu_env_u64("HOSTILE31_KEYS", 6000);
    for (int i = 0; i < total; i++) {
        /* runs of keys in separate ranges: whole files move down */
        snprintf(k, sizeof k, "%c%06d", 'a' + (i / 500) % 20, i);
        TU_OK(ravel_put(db, 0, k, 7, v, 100 + i % 100));
        atomic_store(&c.written, i + 1);
        if (i % 1500 == 1499)
            TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    }
    tu_wait_background_idle(db);
    atomic_store(&c.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    uint64_t moves = atomic_load(&db->stats.compact_moves);
    printf("auto: %llu moves\n", (unsigned long long)moves);
    expect_no_orphans(db, dir, "auto");
    close_checked(db, dir, __func__);
    db = tu_open_ok(dir, "");
    expect_no_orphans(db, dir, "auto, reopened");
    close_checked(db, dir, __func__);
    tu_rm_rf(dir);
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_oldest_first),
        cmocka_unit_test(test_chain_newest_first),
        cmocka_unit_test(test_chain_middle_out),
        cmocka_unit_test(test_close_with_chain),
        cmocka_unit_test(test_moves_then_failed_rewrite),
        cmocka_unit_test(test_failed_move_edit),
        cmocka_unit_test(test_checkpoint_backup_mid_chain),
        cmocka_unit_test(test_reader_along_chain),
        cmocka_unit_test(test_reader_process),
        cmocka_unit_test(test_concurrent_chains),
        cmocka_unit_test(test_auto_compactions_held_iterators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
