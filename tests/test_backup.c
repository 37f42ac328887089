/*
** test_backup.c -- checkpoints, incremental backups and one-file backups
** (ravel_checkpoint, ravel_backup_*): under load, checked in another
** process against what the writers had acknowledged; across file systems;
** killed (kill -9, and a simulated power loss) in the middle; damaged;
** through a pipe.
**
** The load: writer threads each write keys "wI:N" for N = 0, 1, 2, ...
** in order, recording the count begun and the count acknowledged.  A copy
** taken while they run must show, for each thread, exactly the keys 0 ..
** K-1 (a prefix: nothing lost in the middle, nothing partial), with K at
** least the count acknowledged before the call began and at most the
** count begun when it returned.  A child process (the "checker" role)
** opens the copy and checks that.
*/
#include "crash_harness.h"
#include "powerloss.h"
#include "testutil.h"
#include "db/checkpoint.h"
#include "db/db_write.h"
#include "util/fault.h"
#include "util/lockfile.h"

#include <xxhash.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define WRITERS 4
#define BASE_KEYS 2000
#define LOAD_OPTS "write_buffer_size=256K"

/* ------------------------------------------------------------ helpers */

static void base_key(char *k, size_t n, int i)
{
    snprintf(k, n, "base%06d", i);
}

static void base_val(char *v, size_t n, int i)
{
    snprintf(v, n, "value-%06d-%080d", i, i);
}

static void write_base(ravel_db *db)
{
    char k[32], v[128];
    for (int i = 0; i < BASE_KEYS; i++) {
        base_key(k, sizeof k, i);
        base_val(v, sizeof v, i);
        TU_OK(ravel_put(db, 0, k, strlen(k), v, strlen(v)));
    }
}

/* Opens an existing database (never creates one). */
static int open_existing(const char *dir, ravel_db **db)
{
    return tu_open(dir, "create_if_missing=false", db);
}

static int count_entries(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    size_t sl = strlen(suffix);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        n += e->d_name[0] != '.' && len >= sl &&
             strcmp(e->d_name + len - sl, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* -------------------------------------------- the checker (a child) */

struct check_args {
    char dir[512];
    int writers;
    uint64_t lo[WRITERS], hi[WRITERS];
};

/* Opens ARG's directory and checks the base keys and the writers'
** prefixes against the bounds; exits 0 when all hold. */
static int checker_main(const void *arg)
{
    const struct check_args *a = arg;
    ravel_db *db;
    int rc = open_existing(a->dir, &db);
    if (rc)
        crash_child_fail("open %s: %s", a->dir, ravel_errmsg());
    char k[32], v[128];
    for (int i = 0; i < BASE_KEYS; i++) {
        base_key(k, sizeof k, i);
        base_val(v, sizeof v, i);
        void *got = NULL;
        size_t len = 0;
        rc = ravel_get(db, NULL, k, strlen(k), &got, &len);
        if (rc || len != strlen(v) || memcmp(got, v, len) != 0)
            crash_child_fail("%s: base key %s %s", a->dir, k,
                             rc ? "missing" : "has a wrong value");
        ravel_free(got);
    }
    uint64_t next[WRITERS] = {0};
    ravel_iter *it;
    if (ravel_iter_new(db, NULL, &it))
        crash_child_fail("iter: %s", ravel_errmsg());
    for (ravel_iter_seek(it, "w", 1); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t kl;
        const char *key = ravel_iter_key(it, &kl);
        int t;
        unsigned long long n;
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(kl < 63 ? kl : 63), key);
        if (buf[0] != 'w')
            break;
        if (sscanf(buf, "w%d:%llu", &t, &n) != 2 || t < 0 ||
            t >= a->writers)
            crash_child_fail("%s: unexpected key %s", a->dir, buf);
        /* keys sort by number within a thread (fixed width) */
        if (n != next[t])
            crash_child_fail("%s: writer %d's keys jump from %" PRIu64
                             " to %llu: not a prefix", a->dir, t, next[t],
                             n);
        next[t]++;
    }
    if (ravel_iter_status(it))
        crash_child_fail("iterating %s: %s", a->dir, ravel_errmsg());
    ravel_iter_free(it);
    for (int t = 0; t < a->writers; t++)
        if (next[t] < a->lo[t] || next[t] > a->hi[t])
            crash_child_fail("%s: writer %d shows %" PRIu64 " writes; "
                             "acknowledged before the call: %" PRIu64
                             ", begun when it returned: %" PRIu64, a->dir, t,
                             next[t], a->lo[t], a->hi[t]);
    if (ravel_verify(db))
        crash_child_fail("verify %s: %s", a->dir, ravel_errmsg());
    if (ravel_close(db))
        crash_child_fail("close %s: %s", a->dir, ravel_errmsg());
    return 0;
}

static void check_in_child(const struct check_args *a)
{
    struct crash_child c = {.on_msg = NULL};
    const char *base = strrchr(a->dir, '/');
    snprintf(c.label, sizeof c.label, "checker of %.80s", base ? base + 1
                                                                : a->dir);
    int status = crash_run(&c, "checker", a, sizeof *a, 120000);
    if (status != 0)
        fail_msg("the checker of %s exited with %d", a->dir, status);
}

/* ------------------------------------------------------------ the load */

struct load {
    ravel_db *db;
    _Atomic uint64_t begun[WRITERS], acked[WRITERS];
    _Atomic int stop;
    pthread_t th[WRITERS];
    int idx[WRITERS];
};

static struct load *load_of_thread[WRITERS];

static void *load_writer(void *arg)
{
    int t = *(int *)arg;
    struct load *l = load_of_thread[t];
    char k[32], v[120];
    memset(v, 'v', sizeof v);
    for (uint64_t n = 0; !atomic_load(&l->stop); n++) {
        snprintf(k, sizeof k, "w%d:%010" PRIu64, t, n);
        atomic_store(&l->begun[t], n + 1);
        int rc = ravel_put(l->db, 0, k, strlen(k), v, sizeof v);
        if (rc) {
            tu_thread_fail("writer %d: put %s: %s", t, k, ravel_errmsg());
            break;
        }
        atomic_store(&l->acked[t], n + 1);
    }
    return NULL;
}

static void load_start(struct load *l, ravel_db *db)
{
    memset(l, 0, sizeof *l);
    l->db = db;
    for (int t = 0; t < WRITERS; t++) {
        l->idx[t] = t;
        load_of_thread[t] = l;
        assert_int_equal(pthread_create(&l->th[t], NULL, load_writer,
                                        &l->idx[t]), 0);
    }
    /* let them get going: some writes acknowledged by every thread */
    for (int t = 0; t < WRITERS; t++)
        while (atomic_load(&l->acked[t]) < 100 && !tu_thread_failures())
            usleep(1000);
}

static void load_stop(struct load *l)
{
    atomic_store(&l->stop, 1);
    for (int t = 0; t < WRITERS; t++)
        pthread_join(l->th[t], NULL);
    tu_assert_no_thread_failures();
}

static void bounds_before(struct load *l, struct check_args *a)
{
    a->writers = WRITERS;
    for (int t = 0; t < WRITERS; t++)
        a->lo[t] = atomic_load(&l->acked[t]);
}

static void bounds_after(struct load *l, struct check_args *a)
{
    for (int t = 0; t < WRITERS; t++)
        a->hi[t] = atomic_load(&l->begun[t]);
}

/* --------------------------------------------------------- under load */

static void test_under_load(void **state)
{
    (void)state;
    char *src = tu_path("load-src");
    ravel_db *db = tu_open_ok(src, LOAD_OPTS);
    write_base(db);
    struct load l;
    load_start(&l, db);
    int rounds = (int)tu_env_u64("RAVEL_TEST_BACKUP_ROUNDS", 3);
    char *root = tu_path("load-root");
    for (int r = 0; r < rounds; r++) {
        struct check_args a = {0};
        /* a checkpoint */
        char *cp = tu_path("load-cp-%d", r);
        bounds_before(&l, &a);
        TU_OK(ravel_checkpoint(db, cp));
        bounds_after(&l, &a);
        snprintf(a.dir, sizeof a.dir, "%s", cp);
        check_in_child(&a);
        /* a backup, restored */
        uint64_t id = 0;
        bounds_before(&l, &a);
        TU_OK(ravel_backup_create(db, root, &id));
        bounds_after(&l, &a);
        assert_int_equal(id, (uint64_t)r + 1);
        TU_OK(ravel_backup_verify(root, id));
        char *rs = tu_path("load-restored-%d", r);
        TU_OK(ravel_backup_restore(root, id, rs));
        snprintf(a.dir, sizeof a.dir, "%s", rs);
        check_in_child(&a);
        /* a one-file backup, restored */
        char *file = tu_path("load-%d.rvbk", r);
        char *rf = tu_path("load-fromfile-%d", r);
        bounds_before(&l, &a);
        TU_OK(ravel_backup_write_file(db, file));
        bounds_after(&l, &a);
        TU_OK(ravel_backup_restore_file(file, rf));
        snprintf(a.dir, sizeof a.dir, "%s", rf);
        check_in_child(&a);
        printf("# round %d: writer 0 at %" PRIu64 " writes, %" PRIu64
               " table files at level 0\n", r, atomic_load(&l.acked[0]),
               tu_prop_u64(db, "ravel.num-files-at-level0"));
        free(cp);
        free(rs);
        free(file);
        free(rf);
    }
    load_stop(&l);
    /* the source still works, and lost nothing */
    TU_OK(ravel_close(db));
    db = tu_open_ok(src, LOAD_OPTS);
    struct check_args a = {.writers = WRITERS};
    snprintf(a.dir, sizeof a.dir, "%s", src);
    for (int t = 0; t < WRITERS; t++)
        a.lo[t] = a.hi[t] = atomic_load(&l.acked[t]);
    TU_OK(ravel_close(db));
    check_in_child(&a);
    free(src);
    free(root);
}

/* The checkpoint of a database is equal to it, and refuses a target that
** exists. */
static void test_checkpoint_basic(void **state)
{
    (void)state;
    char *src = tu_path("basic-src");
    ravel_db *db = tu_open_ok(src, "write_buffer_size=64K");
    write_base(db);
    TU_OK(ravel_flush(db, 0));
    tu_put(db, 0, "after-flush", "in the memtable");
    tu_put(db, RAVEL_NO_WAL, "nowal", "only in a memtable");
    char *cp = tu_path("basic-cp");
    TU_OK(ravel_checkpoint(db, cp));
    tu_put(db, 0, "later", "not in the checkpoint");
    TU_EXPECT_INVALID(ravel_checkpoint(db, cp));
    TU_EXPECT_INVALID(ravel_checkpoint(db, ""));
    ravel_db *c;
    TU_OK(open_existing(cp, &c));
    tu_expect(c, NULL, "after-flush", "in the memtable");
    tu_expect(c, NULL, "nowal", "only in a memtable");
    tu_expect(c, NULL, "later", NULL);
    char k[32], v[128];
    for (int i = 0; i < BASE_KEYS; i += 97) {
        base_key(k, sizeof k, i);
        base_val(v, sizeof v, i);
        tu_expect(c, NULL, k, v);
    }
    /* a checkpoint is a database of its own */
    tu_put(c, 0, "own", "write");
    TU_OK(ravel_close(c));
    tu_expect(db, NULL, "own", NULL);
    /* a backup root in use by another backup is refused */
    char *root = tu_path("basic-root");
    uint64_t id;
    TU_OK(ravel_backup_create(db, root, &id));
    struct rv_lockfile held = {.fd = -1};
    TU_OK(rv_lockfile_acquire(root, &held));
    TU_EXPECT_RC(RAVEL_LOCKED, ravel_backup_create(db, root, &id));
    TU_EXPECT_RC(RAVEL_LOCKED, ravel_backup_purge(root, 1));
    TU_OK(ravel_backup_verify(root, 1)); /* reads need no lock */
    rv_lockfile_release(&held);
    TU_OK(ravel_backup_create(db, root, &id));
    assert_int_equal(id, 2);
    /* a directory that is not a backup root is not made one */
    TU_EXPECT_INVALID(ravel_backup_create(db, src, &id));
    TU_OK(ravel_close(db));
    TU_EXPECT_INVALID(ravel_backup_list(src, NULL, NULL));
    /* a read-only handle copies the state it reads (test_reader_backup.c
    ** tests it further) */
    TU_OK(tu_open(src, "read_only=true", &db));
    char *cp2 = tu_path("basic-cp2");
    TU_OK(ravel_checkpoint(db, cp2));
    TU_OK(ravel_close(db));
    TU_OK(open_existing(cp2, &c));
    tu_expect(c, NULL, "after-flush", "in the memtable");
    tu_expect(c, NULL, "later", "not in the checkpoint");
    TU_OK(ravel_close(c));
    free(cp2);
    free(root);
    free(src);
    free(cp);
}

/* Prepares TXN NAME writing KEY=VAL; the handle is freed, the
** transaction stays prepared. */
static void prepare_one(ravel_db *db, const char *name, const char *key,
                        const char *val)
{
    ravel_txn *t;
    TU_OK(ravel_txn_begin(db, 0, &t));
    TU_OK(ravel_txn_set_name(t, name));
    TU_OK(ravel_txn_put(t, key, strlen(key), val, strlen(val)));
    TU_OK(ravel_txn_prepare(t));
    ravel_txn_free(t);
}

/* Prepared (two-phase) transactions are part of the state: one whose
** prepare a flush moved into its own file, and one still in the WAL, are
** both prepared in the checkpoint and commit there. */
static void test_checkpoint_prepared(void **state)
{
    (void)state;
    char *src = tu_path("prep-src");
    ravel_db *db = tu_open_ok(src, "write_buffer_size=64K");
    write_base(db);
    prepare_one(db, "spilled", "p1", "one");
    TU_OK(ravel_flush(db, 0)); /* moves the log number past its prepare */
    assert_true(count_entries(src, ".txn") >= 1);
    prepare_one(db, "in-wal", "p2", "two");
    char *cp = tu_path("prep-cp");
    TU_OK(ravel_checkpoint(db, cp));
    TU_OK(ravel_close(db));
    ravel_db *c;
    TU_OK(open_existing(cp, &c));
    char *names = tu_prop(c, "ravel.prepared-transactions");
    if (!strstr(names, "spilled") || !strstr(names, "in-wal"))
        fail_msg("the checkpoint's prepared transactions: \"%s\"", names);
    ravel_free(names);
    tu_expect(c, NULL, "p1", NULL);
    const char *which[] = {"spilled", "in-wal"};
    for (int i = 0; i < 2; i++) {
        ravel_txn *t;
        TU_OK(ravel_txn_recover(c, which[i], &t));
        TU_OK(ravel_txn_commit(t));
        ravel_txn_free(t);
    }
    tu_expect(c, NULL, "p1", "one");
    tu_expect(c, NULL, "p2", "two");
    TU_OK(ravel_close(c));
    free(src);
    free(cp);
}

/* ---------------------------------------- the memtable switch request */

struct switch_job {
    ravel_db *db;
    const char *key;    /* a put of KEY, or (NULL) a switch request */
    uint64_t segment;
    int rc;
    _Atomic int done;
};

static void *switch_job_main(void *arg)
{
    struct switch_job *j = arg;
    j->rc = j->key ? ravel_put(j->db, 0, j->key, strlen(j->key), "v", 1)
                   : rv_write_switch_memtable(j->db, &j->segment);
    atomic_store(&j->done, 1);
    return NULL;
}

static int lead_paused(void)
{
    return rv_pause_waiting(RV_PAUSE_GROUP_LEAD);
}

static void wait_for(int (*cond)(ravel_db *), ravel_db *db, const char *what)
{
    for (int i = 0; i < 20000; i++) {
        if (cond(db))
            return;
        usleep(1000);
    }
    fail_msg("timed out waiting for %s", what);
}

static int queued_two(ravel_db *db)
{
    return rv_db_writers_queued(db) >= 2;
}

static int queued_one(ravel_db *db)
{
    return rv_db_writers_queued(db) >= 1;
}

static int paused_lead(ravel_db *db)
{
    (void)db;
    return lead_paused();
}

/* A switch request (what ravel_flush and a checkpoint send through the
** write queue) in one group with WAL writes still learns the new active
** segment, not the WAL's logical offset after the group's records (a
** ravel_flush then waited for every later memtable too). */
static void test_switch_request_segment(void **state)
{
    (void)state;
    char *dir = tu_path("switch-req");
    ravel_db *db = tu_open_ok(dir, NULL);
    write_base(db); /* the WAL's logical offset is far above any segment */
    struct switch_job lead = {.db = db, .key = "lead"};
    struct switch_job req = {.db = db, .key = NULL};
    struct switch_job tail = {.db = db, .key = "tail"};
    pthread_t t1, t2, t3;
    rv_pause_arm(RV_PAUSE_GROUP_LEAD);
    assert_int_equal(pthread_create(&t1, NULL, switch_job_main, &lead), 0);
    wait_for(paused_lead, db, "the leader to pause");
    assert_int_equal(pthread_create(&t2, NULL, switch_job_main, &req), 0);
    wait_for(queued_one, db, "the switch request to queue");
    assert_int_equal(pthread_create(&t3, NULL, switch_job_main, &tail), 0);
    wait_for(queued_two, db, "the put to queue behind it");
    rv_pause_release(RV_PAUSE_GROUP_LEAD);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_join(t3, NULL);
    TU_OK(lead.rc);
    TU_OK(req.rc);
    TU_OK(tail.rc);
    char *wal = tu_path("switch-req/wal-%08" PRIu64 ".log", req.segment);
    if (access(wal, F_OK) != 0)
        fail_msg("the switch request learned %" PRIu64 ", which is no WAL "
                 "segment of the database", req.segment);
    free(wal);
    TU_OK(ravel_close(db));
    free(dir);
}

/* --------------------------------------------------- file systems */

static nlink_t links_of(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_nlink;
}

/* Table files: hard links on one file system, copies across (forced by
** the hook, and for real to /dev/shm when that is another one). */
static void test_cross_filesystem(void **state)
{
    (void)state;
    char *src = tu_path("xfs-src");
    /* no compaction: a file it replaced would be deleted from the source
    ** once the checkpoint lets go of it, leaving one link */
    ravel_db *db = tu_open_ok(src, "write_buffer_size=64K;"
                              "disable_auto_compactions=true");
    write_base(db);
    TU_OK(ravel_flush(db, 0));
    uint64_t *nums;
    int n = tu_dir_sst_numbers(src, &nums);
    assert_true(n > 0);
    char name[32];
    snprintf(name, sizeof name, "%06" PRIu64 ".sst", nums[0]);

    char *linked = tu_path("xfs-linked");
    TU_OK(ravel_checkpoint(db, linked));
    assert_true(links_of(linked, name) >= 2);

    rv_test_checkpoint_no_links(1); /* link() fails as with EXDEV */
    char *copied = tu_path("xfs-copied");
    int rc = ravel_checkpoint(db, copied);
    rv_test_checkpoint_no_links(0);
    TU_OK(rc);
    assert_int_equal(links_of(copied, name), 1);
    ravel_db *c;
    TU_OK(open_existing(copied, &c));
    size_t la, lb;
    char *a = tu_scan_all(db, NULL, &la), *b = tu_scan_all(c, NULL, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(b);
    TU_OK(ravel_close(c));

    struct stat s1, s2;
    char shm[256];
    snprintf(shm, sizeof shm, "/dev/shm/ravel-test-cp-%d", (int)getpid());
    if (stat("/dev/shm", &s1) == 0 && stat(src, &s2) == 0 &&
        s1.st_dev != s2.st_dev) {
        tu_rm_rf(shm);
        TU_OK(ravel_checkpoint(db, shm));
        assert_int_equal(links_of(shm, name), 1);
        TU_OK(open_existing(shm, &c));
        char *d = tu_scan_all(c, NULL, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, d, la);
        free(d);
        TU_OK(ravel_close(c));
        tu_rm_rf(shm);
        printf("# a real checkpoint across file systems: %s\n", shm);
    } else {
        printf("# /dev/shm is on the test directory's file system (or "
               "absent): the real cross-device copy was not exercised\n");
    }
    free(a);
    free(nums);
    TU_OK(ravel_close(db));
    free(src);
    free(linked);
    free(copied);
}

/* ------------------------------------------------- incremental backups */

static int collect_id(void *ctx, uint64_t id)
{
    uint64_t *ids = ctx;
    ids[++ids[0]] = id;
    return 0;
}

static uint64_t info(const char *root, uint64_t id, int what)
{
    uint64_t v = 0;
    TU_OK(ravel_backup_info(root, id, what, &v));
    return v;
}

static void put_numbered(ravel_db *db, int i, int version)
{
    char k[32], v[256];
    snprintf(k, sizeof k, "key%07d", i);
    snprintf(v, sizeof v, "%d-%0200d", version, i);
    TU_OK(ravel_put(db, 0, k, strlen(k), v, strlen(v)));
}

/* A backup after 1% of the keys changed copies about 1%; both backups
** verify and restore to their own state; purge keeps the newest. */
static void test_incremental(void **state)
{
    (void)state;
    const int keys = 20000;
    char *src = tu_path("inc-src");
    char *root = tu_path("inc-root");
    ravel_db *db = tu_open_ok(src, "write_buffer_size=512K;"
                              "disable_auto_compactions=true");
    for (int i = 0; i < keys; i++)
        put_numbered(db, i, 1);
    TU_OK(ravel_flush(db, 0));
    uint64_t id1, id2, id3;
    TU_OK(ravel_backup_create(db, root, &id1));
    size_t len1;
    char *state1 = tu_scan_all(db, NULL, &len1);
    for (int i = 0; i < keys; i += 100) /* 1% */
        put_numbered(db, i, 2);
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_backup_create(db, root, &id2));
    size_t len2;
    char *state2 = tu_scan_all(db, NULL, &len2);
    uint64_t b1 = info(root, id1, RAVEL_BACKUP_BYTES);
    uint64_t c1 = info(root, id1, RAVEL_BACKUP_COPIED);
    uint64_t b2 = info(root, id2, RAVEL_BACKUP_BYTES);
    uint64_t c2 = info(root, id2, RAVEL_BACKUP_COPIED);
    printf("# full backup: %" PRIu64 " bytes, %" PRIu64 " copied; after 1%% "
           "changed: %" PRIu64 " bytes, %" PRIu64 " copied (%.2f%%)\n", b1,
           c1, b2, c2, 100.0 * (double)c2 / (double)b2);
    assert_int_equal(b1, c1);
    assert_true(c2 > 0);
    assert_true(c2 * 100 < b2 * 5); /* about 1%: under 5% */
    assert_true(info(root, id2, RAVEL_BACKUP_SEQUENCE) >
                info(root, id1, RAVEL_BACKUP_SEQUENCE));
    assert_true(info(root, id2, RAVEL_BACKUP_FILES) > 0);
    assert_true(info(root, id2, RAVEL_BACKUP_TIME) > 1000000000);
    TU_EXPECT_INVALID(ravel_backup_info(root, id2, 99, &(uint64_t){0}));
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_backup_info(root, 77, 1,
                                                   &(uint64_t){0}));
    TU_OK(ravel_backup_verify(root, id1));
    TU_OK(ravel_backup_verify(root, id2));

    const char *names[2] = {"inc-r1", "inc-r2"};
    char *states[2] = {state1, state2};
    size_t lens[2] = {len1, len2};
    uint64_t ids[2] = {id1, id2};
    for (int k = 0; k < 2; k++) {
        char *dir = tu_path("%s", names[k]);
        TU_OK(ravel_backup_restore(root, ids[k], dir));
        TU_EXPECT_INVALID(ravel_backup_restore(root, ids[k], dir));
        ravel_db *r;
        TU_OK(open_existing(dir, &r));
        size_t len;
        char *s = tu_scan_all(r, NULL, &len);
        assert_int_equal(len, lens[k]);
        assert_memory_equal(s, states[k], len);
        free(s);
        TU_OK(ravel_close(r));
        free(dir);
    }

    /* purge: three backups, keep the newest two, then one */
    for (int i = 1; i < keys; i += 100)
        put_numbered(db, i, 3);
    TU_OK(ravel_backup_create(db, root, &id3));
    uint64_t list[8] = {0};
    TU_OK(ravel_backup_list(root, collect_id, list));
    assert_int_equal(list[0], 3);
    TU_EXPECT_INVALID(ravel_backup_purge(root, 0));
    TU_OK(ravel_backup_purge(root, 2));
    memset(list, 0, sizeof list);
    TU_OK(ravel_backup_list(root, collect_id, list));
    assert_int_equal(list[0], 2);
    assert_int_equal(list[1], id2);
    assert_int_equal(list[2], id3);
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_backup_verify(root, id1));
    TU_OK(ravel_backup_verify(root, id2));
    TU_OK(ravel_backup_purge(root, 1));
    TU_OK(ravel_backup_verify(root, id3));
    /* every shared file left is one backup 3 names */
    char *shared = tu_path("inc-root/shared");
    char *priv3 = tu_path("inc-root/private/%" PRIu64, id3);
    assert_int_equal((uint64_t)count_entries(shared, ".sst"),
                     info(root, id3, RAVEL_BACKUP_FILES) -
                         (uint64_t)count_entries(priv3, ""));
    free(priv3);
    char *r0 = tu_path("inc-r0");
    TU_OK(ravel_backup_restore(root, 0, r0)); /* 0: the newest */
    ravel_db *r;
    TU_OK(open_existing(r0, &r));
    size_t la, lb;
    char *a = tu_scan_all(db, NULL, &la), *b = tu_scan_all(r, NULL, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
    TU_OK(ravel_close(r));
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_backup_list(src, collect_id, list));
    TU_OK(ravel_close(db));
    free(state1);
    free(state2);
    free(shared);
    free(r0);
    free(src);
    free(root);
}

/* ------------------------------------------------------------- damage */

static void flip_byte(const char *path, long at)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    off_t off = at >= 0 ? at : st.st_size + at;
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, off), 1);
    c ^= 0x20;
    assert_int_equal(pwrite(fd, &c, 1, off), 1);
    close(fd);
}

static char *first_file(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *out = NULL;
    size_t sl = strlen(suffix);
    for (struct dirent *e; !out && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] != '.' && len >= sl &&
            strcmp(e->d_name + len - sl, suffix) == 0) {
            out = malloc(strlen(dir) + len + 2);
            sprintf(out, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    assert_non_null(out);
    return out;
}

static int dir_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* A damaged shared file fails verify and restore; a cut meta file hides
** its backup; purge deletes nothing while a meta file is damaged.  No
** compaction runs: both backups must hold every table file, whichever
** one is damaged (a compaction between them gave the second backup other
** files, and the damaged one was then the first backup's alone). */
static void test_damaged_root(void **state)
{
    (void)state;
    char *src = tu_path("dmg-src");
    char *root = tu_path("dmg-root");
    ravel_db *db = tu_open_ok(src, "write_buffer_size=64K;"
                                   "disable_auto_compactions=true");
    write_base(db);
    TU_OK(ravel_flush(db, 0));
    uint64_t id1, id2;
    TU_OK(ravel_backup_create(db, root, &id1));
    tu_put(db, 0, "more", "data");
    TU_OK(ravel_backup_create(db, root, &id2));
    TU_OK(ravel_close(db));

    char *shared = tu_path("dmg-root/shared");
    char *victim = first_file(shared, ".sst");
    flip_byte(victim, 100);
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_verify(root, id1));
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_verify(root, id2));
    char *out = tu_path("dmg-out");
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_restore(root, id2, out));
    assert_false(dir_exists(out));
    flip_byte(victim, 100); /* repaired */
    TU_OK(ravel_backup_verify(root, id2));

    /* a shared file gone */
    char *moved = tu_path("dmg-moved.sst");
    assert_int_equal(rename(victim, moved), 0);
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_verify(root, id1));
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_restore(root, id1, out));
    assert_false(dir_exists(out));
    assert_int_equal(rename(moved, victim), 0);

    /* a private file damaged */
    char *priv = tu_path("dmg-root/private/%" PRIu64, id2);
    char *wal = first_file(priv, "CURRENT");
    flip_byte(wal, 0);
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_verify(root, id2));
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_restore(root, id2, out));
    flip_byte(wal, 0);

    /* the meta file of backup 1 cut short: it is no longer a backup */
    char *meta = tu_path("dmg-root/meta/%" PRIu64, id1);
    struct stat st;
    assert_int_equal(stat(meta, &st), 0);
    assert_int_equal(truncate(meta, st.st_size - 10), 0);
    uint64_t list[8] = {0};
    TU_OK(ravel_backup_list(root, collect_id, list));
    assert_int_equal(list[0], 1);
    assert_int_equal(list[1], id2);
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_verify(root, id1));
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_restore(root, id1, out));
    assert_false(dir_exists(out));
    /* ... and one damaged in the middle */
    assert_int_equal(truncate(meta, 0), 0);
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_verify(root, id1));
    /* purge keeps the damaged backup and every shared file */
    int before = count_entries(shared, ".sst");
    TU_OK(ravel_backup_purge(root, 1));
    assert_int_equal(count_entries(shared, ".sst"), before);
    assert_true(dir_exists(meta));
    TU_OK(ravel_backup_restore(root, id2, out));
    ravel_db *r;
    TU_OK(open_existing(out, &r));
    tu_expect(r, NULL, "more", "data");
    TU_OK(ravel_close(r));
    /* a meta file that verifies but names a path outside the root */
    char *outside = tu_path("dmg-outside");
    assert_int_equal(tu_file_write(outside, "abcd", 4), 0);
    char evil_body[256];
    snprintf(evil_body, sizeof evil_body, "ravel-backup 1\nid 9\ntime 1\n"
             "sequence 1\ncopied 0\nfile shared/../../dmg-outside 4 "
             "%016llx\n", (unsigned long long)XXH3_64bits("abcd", 4));
    char evil[512];
    int len = snprintf(evil, sizeof evil, "%send 1 %016llx\n", evil_body,
                       (unsigned long long)XXH3_64bits(evil_body,
                                                       strlen(evil_body)));
    free(outside);
    char *meta9 = tu_path("dmg-root/meta/9");
    assert_int_equal(tu_file_write(meta9, evil, (size_t)len), 0);
    char *out9 = tu_path("dmg-out9");
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_verify(root, 9));
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_restore(root, 9, out9));
    assert_false(dir_exists(out9));
    memset(list, 0, sizeof list);
    TU_OK(ravel_backup_list(root, collect_id, list));
    assert_int_equal(list[0], 1);
    free(meta9);
    free(out9);
    /* not a root */
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_backup_verify(src, 1));
    free(src);
    free(root);
    free(shared);
    free(victim);
    free(out);
    free(moved);
    free(priv);
    free(wal);
    free(meta);
}

/* ---------------------------------------------------- one-file backups */

struct pipe_writer {
    ravel_db *db;
    int fd, rc;
    char msg[512];
};

static void *pipe_writer_main(void *arg)
{
    struct pipe_writer *w = arg;
    w->rc = ravel_backup_write_fd(w->db, w->fd);
    if (w->rc)
        snprintf(w->msg, sizeof w->msg, "%s", ravel_errmsg());
    close(w->fd); /* the reader sees the end */
    return NULL;
}

/* Through a pipe (64 KiB of buffer, the backup is larger): one thread
** writes the backup into it while the other restores from it. */
static void test_archive_pipe(void **state)
{
    (void)state;
    char *src = tu_path("pipe-src");
    ravel_db *db = tu_open_ok(src, "write_buffer_size=64K");
    write_base(db);
    TU_OK(ravel_flush(db, 0));
    tu_put(db, 0, "tail", "in the WAL");
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct pipe_writer w = {.db = db, .fd = p[1]};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, pipe_writer_main, &w), 0);
    char *out = tu_path("pipe-out");
    int rc = ravel_backup_restore_fd(p[0], out);
    if (rc) /* let the writer finish: nobody reads any more */
        close(p[0]);
    pthread_join(th, NULL);
    if (w.rc)
        fail_msg("ravel_backup_write_fd: %s", w.msg);
    TU_OK(rc);
    close(p[0]);
    ravel_db *r;
    TU_OK(open_existing(out, &r));
    size_t la, lb;
    char *a = tu_scan_all(db, NULL, &la), *b = tu_scan_all(r, NULL, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    tu_expect(r, NULL, "tail", "in the WAL");
    free(a);
    free(b);
    TU_OK(ravel_close(r));
    TU_OK(ravel_close(db));
    free(src);
    free(out);
}

/* A reader that goes away: the writer gets RAVEL_IOERR, and the process
** lives on (the SIGPIPE it raised is taken back). */
static void test_archive_pipe_closed(void **state)
{
    (void)state;
    char *src = tu_path("pipe-closed-src");
    ravel_db *db = tu_open_ok(src, "write_buffer_size=64K");
    write_base(db);
    TU_OK(ravel_flush(db, 0));
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    TU_EXPECT_RC(RAVEL_IOERR, ravel_backup_write_fd(db, p[1]));
    close(p[1]);
    TU_EXPECT_INVALID(ravel_backup_write_fd(db, -1));
    TU_OK(ravel_close(db));
    free(src);
}

/* A symlink left at the one-file backup's temporary name (FILE.partial)
** is replaced, never written through: its target keeps its bytes. */
static void test_archive_partial_symlink(void **state)
{
    (void)state;
    char *src = tu_path("archsym-src");
    ravel_db *db = tu_open_ok(src, NULL);
    write_base(db);
    char *file = tu_path("archsym.rvbk");
    char *partial = tu_path("archsym.rvbk.partial");
    char *victim = tu_path("archsym-victim");
    assert_int_equal(tu_file_write(victim, "keep me", 7), 0);
    assert_int_equal(symlink(victim, partial), 0);
    TU_OK(ravel_backup_write_file(db, file));
    TU_OK(ravel_close(db));
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(victim, &data, &len), 0);
    assert_int_equal(len, 7);
    assert_memory_equal(data, "keep me", 7);
    free(data);
    struct stat st;
    assert_int_equal(lstat(partial, &st), -1); /* renamed into place */
    assert_int_equal(lstat(file, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    char *out = tu_path("archsym-out");
    TU_OK(ravel_backup_restore_file(file, out));
    free(out);
    free(victim);
    free(partial);
    free(file);
    free(src);
}

/* Every truncation and damaged byte (sampled) is refused, leaving no
** directory. */
static void test_archive_damage(void **state)
{
    (void)state;
    char *src = tu_path("arch-src");
    ravel_db *db = tu_open_ok(src, "write_buffer_size=64K");
    write_base(db);
    TU_OK(ravel_flush(db, 0));
    char *file = tu_path("arch.rvbk");
    TU_OK(ravel_backup_write_file(db, file));
    TU_EXPECT_INVALID(ravel_backup_write_file(db, file));
    TU_OK(ravel_close(db));
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(file, &data, &len), 0);
    char *cut = tu_path("arch-cut.rvbk");
    char *out = tu_path("arch-out");
    uint64_t rng = tu_seed();
    int tries = 0;
    for (size_t at = 0; at < len; at += 1 + tu_rand(&rng) % (len / 40 + 1)) {
        assert_int_equal(tu_file_write(cut, data, at), 0);
        TU_EXPECT_RC(RAVEL_CORRUPT, ravel_backup_restore_file(cut, out));
        assert_false(dir_exists(out));
        tries++;
    }
    for (int i = 0; i < 60; i++) {
        size_t at = (size_t)(tu_rand(&rng) % len);
        data[at] ^= 1;
        assert_int_equal(tu_file_write(cut, data, len), 0);
        data[at] ^= 1;
        int rc = ravel_backup_restore_file(cut, out);
        if (rc != RAVEL_CORRUPT)
            fail_msg("a flipped bit at byte %zu of %zu: restore returned "
                     "%d (%s)", at, len, rc, ravel_errmsg());
        assert_false(dir_exists(out));
    }
    assert_int_equal(tu_file_write(cut, data, len), 0);
    TU_OK(ravel_backup_restore_file(cut, out));
    char *missing = tu_path("arch-missing.rvbk");
    char *out2 = tu_path("arch-out2");
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_backup_restore_file(missing, out2));
    free(missing);
    free(out2);
    printf("# %d truncations and 60 flipped bits refused (%zu bytes)\n",
           tries, len);
    free(data);
    free(src);
    free(file);
    free(cut);
    free(out);
}

/* ------------------------------------------------- kill -9, power loss */

struct crash_args {
    char dir[512], target[512], journal[512];
    int backup; /* 0: checkpoints into TARGET/cp-N; 1: backups in
                ** TARGET; 2: one-file backups TARGET/one-N.rvbk */
};

struct crash_msg {
    uint64_t done; /* a checkpoint's N + 1, or a backup's id */
};

static void *crash_writer(void *arg)
{
    ravel_db *db = arg;
    char k[32], v[100];
    memset(v, 'x', sizeof v);
    for (uint64_t n = 0;; n++) {
        snprintf(k, sizeof k, "x%010" PRIu64, n);
        if (ravel_put(db, 0, k, strlen(k), v, sizeof v))
            break;
    }
    return NULL;
}

static int copier_main(const void *arg)
{
    const struct crash_args *a = arg;
    if (a->journal[0])
        tu_sync_journal_start(a->journal);
    ravel_db *db;
    ravel_options *o;
    if (tu_options_try(LOAD_OPTS, &o))
        crash_child_fail("options");
    int rc = ravel_open(a->dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("open: %s", ravel_errmsg());
    char k[32], v[128];
    for (int i = 0; i < BASE_KEYS; i++) {
        base_key(k, sizeof k, i);
        base_val(v, sizeof v, i);
        if (ravel_put(db, 0, k, strlen(k), v, strlen(v)))
            crash_child_fail("put: %s", ravel_errmsg());
    }
    if (ravel_flush_wal(db, 1))
        crash_child_fail("flush_wal: %s", ravel_errmsg());
    mkdir(a->target, 0755);
    crash_child_opened(db);
    pthread_t th;
    pthread_create(&th, NULL, crash_writer, db);
    for (uint64_t n = 0;; n++) {
        struct crash_msg m = {0};
        if (a->backup == 1) {
            rc = ravel_backup_create(db, a->target, &m.done);
        } else if (a->backup == 2) {
            char f[600];
            snprintf(f, sizeof f, "%s/one-%" PRIu64 ".rvbk", a->target, n);
            rc = ravel_backup_write_file(db, f);
            m.done = n + 1;
        } else {
            char cp[600];
            snprintf(cp, sizeof cp, "%s/cp-%" PRIu64, a->target, n);
            rc = ravel_checkpoint(db, cp);
            m.done = n + 1;
        }
        if (rc)
            crash_child_fail("copy %" PRIu64 ": %s", n, ravel_errmsg());
        crash_send(&m, sizeof m);
    }
}

struct crash_record {
    uint64_t done[4096];
    int n;
};

static void on_copy(struct crash_child *c, const void *msg)
{
    struct crash_record *r = c->ctx;
    const struct crash_msg *m = msg;
    if (r->n < 4096)
        r->done[r->n++] = m->done;
}

/* The journal JOURNAL with the directory fsyncs of DIR.partial named
** DIR, into a new file (returned, malloc'd): a directory's entries belong
** to it, not to its name, so those made durable before the rename to DIR
** stay durable (the simulation matches directories by name). */
static char *journal_renamed(const char *journal, const char *dir)
{
    char *text;
    size_t len;
    char *out = malloc(strlen(journal) + 16);
    sprintf(out, "%s.renamed", journal);
    if (tu_file_read(journal, &text, &len) != 0) {
        unlink(out);
        return out;
    }
    char from[1100], to[1100];
    snprintf(from, sizeof from, "D %s.partial ", dir);
    snprintf(to, sizeof to, "D %s ", dir);
    size_t cap = len * 2 + 1, n = 0;
    char *res = malloc(cap);
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line + 1) : strlen(line);
        if (strncmp(line, from, strlen(from)) == 0) {
            memcpy(res + n, to, strlen(to));
            n += strlen(to);
            memcpy(res + n, line + strlen(from), ll - strlen(from));
            n += ll - strlen(from);
        } else {
            memcpy(res + n, line, ll);
            n += ll;
        }
        line += ll;
    }
    assert_int_equal(tu_file_write(out, res, n), 0);
    free(res);
    free(text);
    return out;
}

/* Applies the power loss to every directory below TOP (one level of
** subdirectories, and two for a backup root's private/ID). */
static void power_loss_tree(const char *top, const char *journal,
                            enum tu_power_loss_pattern pat, uint64_t *rng)
{
    char *renamed = journal_renamed(journal, top);
    tu_power_loss(top, renamed, pat, rng);
    unlink(renamed);
    free(renamed);
    DIR *d = opendir(top);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", top, e->d_name);
        struct stat st;
        if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            power_loss_tree(sub, journal, pat, rng);
    }
    closedir(d);
}

static void check_base_in(const char *dir)
{
    ravel_db *db;
    TU_OK(open_existing(dir, &db));
    char k[32], v[128];
    for (int i = 0; i < BASE_KEYS; i++) {
        base_key(k, sizeof k, i);
        base_val(v, sizeof v, i);
        tu_expect(db, NULL, k, v);
    }
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
}

static void crash_round(int round, int backup, int power)
{
    char *dir = tu_path("crash-%d-src", round);
    char *target = tu_path("crash-%d-target", round);
    char *journal = tu_path("crash-%d.journal", round);
    struct crash_args a = {.backup = backup};
    snprintf(a.dir, sizeof a.dir, "%s", dir);
    snprintf(a.target, sizeof a.target, "%s", target);
    if (power)
        snprintf(a.journal, sizeof a.journal, "%s", journal);
    struct crash_record rec = {.n = 0};
    struct crash_child c = {.on_msg = on_copy,
                            .msg_size = sizeof(struct crash_msg),
                            .ctx = &rec};
    static const char *const kinds[] = {"checkpoints", "backups",
                                        "one-file backups"};
    snprintf(c.label, sizeof c.label, "round %d (%s%s)", round,
             kinds[backup], power ? ", power loss" : "");
    crash_spawn(&c, "copier", &a, sizeof a);
    uint64_t rng = tu_seed() + (uint64_t)round;
    crash_kill_after(&c, CRASH_FROM_OPEN, 50 + tu_rand(&rng) % 400);
    if (power) {
        enum tu_power_loss_pattern pat = (enum tu_power_loss_pattern)
            (round % TU_PL_PATTERNS);
        tu_power_loss(dir, journal, pat, &rng);
        power_loss_tree(target, journal, pat, &rng);
    }
    /* the source is intact */
    check_base_in(dir);
    int complete = 0, partial = 0;
    if (backup == 2) {
        for (int i = 0; i < rec.n; i++) {
            char *f = tu_path("crash-%d-target/one-%" PRIu64 ".rvbk", round,
                              rec.done[i] - 1);
            assert_true(dir_exists(f));
            free(f);
        }
        DIR *d = opendir(target);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            size_t len = strlen(e->d_name);
            if (e->d_name[0] == '.')
                continue;
            if (len > 8 && strcmp(e->d_name + len - 8, ".partial") == 0) {
                partial++;
                continue;
            }
            char sub[1024], out[1100];
            snprintf(sub, sizeof sub, "%s/%s", target, e->d_name);
            snprintf(out, sizeof out, "%s.restored", sub);
            TU_OK(ravel_backup_restore_file(sub, out));
            check_base_in(out);
            tu_rm_rf(out);
            complete++;
        }
        closedir(d);
    } else if (!backup) {
        for (int i = 0; i < rec.n; i++) {
            char *cp = tu_path("crash-%d-target/cp-%" PRIu64, round,
                               rec.done[i] - 1);
            assert_true(dir_exists(cp));
            free(cp);
        }
        DIR *d = opendir(target);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.')
                continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", target, e->d_name);
            size_t len = strlen(e->d_name);
            if (len > 8 && strcmp(e->d_name + len - 8, ".partial") == 0) {
                partial++;
                continue; /* never opened as a database: not named cp-N */
            }
            check_base_in(sub);
            complete++;
        }
        closedir(d);
    } else {
        uint64_t list[4096] = {0};
        struct stat st;
        if (rec.n > 0 || stat(target, &st) == 0) {
            int rc = ravel_backup_list(target, collect_id, list);
            if (rc == RAVEL_NOTFOUND && rec.n == 0)
                list[0] = 0; /* killed before the root was made */
            else
                TU_OK(rc);
        }
        for (int i = 0; i < rec.n; i++) {
            int found = 0;
            for (uint64_t j = 1; j <= list[0]; j++)
                found |= list[j] == rec.done[i];
            if (!found)
                fail_msg("backup %" PRIu64 " was reported complete and is "
                         "not listed", rec.done[i]);
        }
        for (uint64_t j = 1; j <= list[0]; j++) {
            TU_OK(ravel_backup_verify(target, list[j]));
            char *out = tu_path("crash-%d-restored-%" PRIu64, round,
                                list[j]);
            TU_OK(ravel_backup_restore(target, list[j], out));
            check_base_in(out);
            free(out);
            complete++;
        }
        char *p0 = tu_path("crash-%d-target/private", round);
        char *m0 = tu_path("crash-%d-target/meta", round);
        partial = count_entries(p0, "") - count_entries(m0, "") +
                  count_entries(m0, ".tmp");
        free(p0);
        free(m0);
        /* the next backup cleans up after the crash */
        if (list[0] > 0 || rec.n > 0) {
            ravel_db *db;
            TU_OK(open_existing(dir, &db));
            uint64_t id;
            TU_OK(ravel_backup_create(db, target, &id));
            TU_OK(ravel_close(db));
            TU_OK(ravel_backup_verify(target, id));
            char *priv = tu_path("crash-%d-target/private", round);
            char *meta = tu_path("crash-%d-target/meta", round);
            char *shared = tu_path("crash-%d-target/shared", round);
            assert_int_equal(count_entries(priv, ""),
                             count_entries(meta, ""));
            assert_int_equal(count_entries(meta, ".tmp"), 0);
            assert_int_equal(count_entries(shared, ".tmp"), 0);
            free(priv);
            free(meta);
            free(shared);
        }
    }
    printf("# round %d (%s%s): %d reported, %d complete, %d partial\n",
           round, kinds[backup], power ? ", power loss" : "", rec.n,
           complete, partial);
    free(dir);
    free(target);
    free(journal);
}

static void test_kill_mid_copy(void **state)
{
    (void)state;
    int rounds = (int)tu_env_u64("RAVEL_TEST_BACKUP_CRASH_ROUNDS", 12);
    for (int r = 0; r < rounds; r++)
        crash_round(r, r % 3, (r / 3) % 2);
}

static const struct crash_role roles[] = {
    {"checker", checker_main, sizeof(struct check_args)},
    {"copier", copier_main, sizeof(struct crash_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoint_basic),
        cmocka_unit_test(test_checkpoint_prepared),
        cmocka_unit_test(test_switch_request_segment),
        cmocka_unit_test(test_cross_filesystem),
        cmocka_unit_test(test_incremental),
        cmocka_unit_test(test_damaged_root),
        cmocka_unit_test(test_archive_pipe),
        cmocka_unit_test(test_archive_pipe_closed),
        cmocka_unit_test(test_archive_damage),
        cmocka_unit_test(test_archive_partial_symlink),
        cmocka_unit_test(test_under_load),
        cmocka_unit_test(test_kill_mid_copy),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
