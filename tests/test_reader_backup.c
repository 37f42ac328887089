/*
** test_reader_backup.c -- checkpoints and backups made from a reader
** handle (read_only=true; lib/db/checkpoint_reader.c): the operator's
** copy of a database an application has open, taken from another
** process.
**
** Under load: this process writes with 8 threads and small memtables
** (flushes and compactions delete files all the time), thread t writing
** "wT:N" for N = 0, 1, ... and recording the count begun and the count
** acknowledged.  A child process ("copier") opens a reader and makes a
** checkpoint, an incremental backup or a one-file backup; another child
** ("checker") opens the copy and checks that each thread shows exactly
** the keys 0 .. K-1 (a prefix) with K at least the count acknowledged
** before the copier was started and at most the count begun after it
** ended.
**
** Smaller tests: the writer deleting the reader's files in the middle of
** a checkpoint (a pause point holds the checkpoint after its first file;
** a compaction deletes the rest; the copy must come from the reader's
** descriptors, counted); a reader on a directory whose writer was killed
** (its data partly only in the WAL): every copy holds every write, and
** the source's listing and every file's bytes are unchanged; kill -9 of a
** reader in the middle of a checkpoint: DIR.partial (with its marker),
** no DIR, the source unchanged, and the next checkpoint succeeds; a
** simulated power loss (powerloss.h, each pattern in turn) after a reader
** taking checkpoints in a loop is killed at a random point: every
** checkpoint it reported is there and whole, any other is DIR.partial,
** the source unchanged.
**
** RAVEL_TEST_READER_BACKUP_ROUNDS sets the rounds under load (2),
** RAVEL_TEST_READER_BACKUP_POWER_ROUNDS the power-loss rounds (4).
*/
#include "crash_harness.h"
#include "powerloss.h"
#include "db/checkpoint.h"
#include "util/copy.h"
#include "util/fault.h"

#include <xxhash.h>

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RB_THREADS 8
#define RB_OPTIONS "write_buffer_size=64K;target_file_size_base=64K;" \
                   "max_bytes_for_level_base=256K"
#define RB_KEYS 3000

enum rb_kind { RB_CHECKPOINT = 0, RB_BACKUP = 1, RB_ONE_FILE = 2 };

struct rb_args {
    char dir[PATH_MAX];
    char target[PATH_MAX];  /* the checkpoint, the root or the file */
    int kind;
    int pause;              /* park at RV_PAUSE_CHECKPOINT_ITEM */
    int threads;            /* the checker: writer threads to check */
    char journal[PATH_MAX]; /* the sync journal to write ("": none) */
    uint64_t lo[RB_THREADS], hi[RB_THREADS];
};

/* The copier's report. */
struct rb_msg {
    uint64_t sequence;
    uint64_t deleted_copies;
};

/* ------------------------------------------------------------ the copier */

struct rb_copy_job {
    ravel_db *db;
    const struct rb_args *a;
    int rc;
};

static int rb_copy(ravel_db *db, const struct rb_args *a)
{
    uint64_t id = 0;
    switch (a->kind) {
    case RB_BACKUP:
        return ravel_backup_create(db, a->target, &id);
    case RB_ONE_FILE:
        return ravel_backup_write_file(db, a->target);
    default:
        return ravel_checkpoint(db, a->target);
    }
}

static void *rb_copy_thread(void *arg)
{
    struct rb_copy_job *j = arg;
    j->rc = rb_copy(j->db, j->a);
    return NULL;
}

/* Opens a reader on the directory and makes the copy; with PAUSE, parks
** once the checkpoint wrote its first file (for the kill). */
static int copier_main(const void *arg)
{
    const struct rb_args *a = arg;
    ravel_options *o;
    if (tu_options_try("read_only=true", &o))
        crash_child_fail("options: %s", ravel_errmsg());
    ravel_db *db;
    int rc = ravel_open(a->dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("open a reader on %s: %s", a->dir, ravel_errmsg());
    crash_child_opened(db);
    if (a->pause) {
        rv_pause_arm(RV_PAUSE_CHECKPOINT_ITEM);
        static struct rb_copy_job j;
        j.db = db;
        j.a = a;
        pthread_t th;
        pthread_create(&th, NULL, rb_copy_thread, &j);
        crash_child_park_at(RV_PAUSE_CHECKPOINT_ITEM);
    }
    if (rb_copy(db, a))
        crash_child_fail("copy (kind %d) of reader %s into %s: %s", a->kind,
                         a->dir, a->target, ravel_errmsg());
    struct rb_msg m = {
        .sequence = tu_prop_u64(db, "ravel.last-visible-sequence"),
        .deleted_copies = rv_test_checkpoint_deleted_copies(),
    };
    crash_send(&m, sizeof m);
    if (ravel_close(db))
        crash_child_fail("close: %s", ravel_errmsg());
    return 0;
}

/* With the sync journal on: checkpoints into TARGET/cp-0, cp-1, ... from
** a reader until killed, each reported once complete. */
static int loop_copier_main(const void *arg)
{
    const struct rb_args *a = arg;
    tu_sync_journal_start(a->journal);
    ravel_db *db;
    if (tu_open(a->dir, "read_only=true", &db))
        crash_child_fail("open a reader on %s: %s", a->dir, ravel_errmsg());
    mkdir(a->target, 0755);
    crash_child_opened(db);
    for (uint64_t n = 0;; n++) {
        char cp[PATH_MAX + 32];
        snprintf(cp, sizeof cp, "%s/cp-%" PRIu64, a->target, n);
        if (ravel_checkpoint(db, cp))
            crash_child_fail("checkpoint %s: %s", cp, ravel_errmsg());
        struct rb_msg m = {.sequence = n + 1};
        crash_send(&m, sizeof m);
    }
}

struct rb_record {
    struct rb_msg last;
    int n;
};

static void rb_on_msg(struct crash_child *c, const void *msg)
{
    struct rb_record *r = c->ctx;
    memcpy(&r->last, msg, sizeof r->last);
    r->n++;
}

/* Runs a copier to its end; its report into *OUT. */
static void rb_run_copier(const struct rb_args *a, struct rb_msg *out)
{
    struct rb_record r = {0};
    struct crash_child c = {.on_msg = rb_on_msg,
                            .msg_size = sizeof(struct rb_msg), .ctx = &r};
    snprintf(c.label, sizeof c.label, "copier (kind %d)", a->kind);
    int status = crash_run(&c, "copier", a, sizeof *a, 120000);
    if (status != 0)
        fail_msg("the copier of %s exited with %d", a->target, status);
    assert_int_equal(r.n, 1);
    *out = r.last;
}

/* ----------------------------------------------------------- the checker */

static void rb_key(char *k, size_t n, int t, uint64_t i)
{
    snprintf(k, n, "w%d:%010" PRIu64, t, i);
}

/* Opens the copy at A->dir and checks every writer thread's keys are a
** prefix within [lo, hi]. */
static int checker_main(const void *arg)
{
    const struct rb_args *a = arg;
    ravel_db *db;
    if (tu_open(a->dir, "create_if_missing=false", &db))
        crash_child_fail("open the copy %s: %s", a->dir, ravel_errmsg());
    uint64_t next[RB_THREADS] = {0};
    ravel_iter *it;
    if (ravel_iter_new(db, NULL, &it))
        crash_child_fail("iter: %s", ravel_errmsg());
    for (ravel_iter_seek(it, "w", 1); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t kl;
        const char *key = ravel_iter_key(it, &kl);
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(kl < 63 ? kl : 63), key);
        int t;
        unsigned long long n;
        if (buf[0] != 'w')
            break;
        if (sscanf(buf, "w%d:%llu", &t, &n) != 2 || t < 0 ||
            t >= a->threads)
            crash_child_fail("%s: unexpected key %s", a->dir, buf);
        if (n != next[t])
            crash_child_fail("%s: thread %d's keys jump from %" PRIu64
                             " to %llu: not a prefix", a->dir, t, next[t], n);
        next[t]++;
    }
    if (ravel_iter_status(it))
        crash_child_fail("iterating %s: %s", a->dir, ravel_errmsg());
    ravel_iter_free(it);
    for (int t = 0; t < a->threads; t++)
        if (next[t] < a->lo[t] || next[t] > a->hi[t])
            crash_child_fail("%s: thread %d shows %" PRIu64 " writes; "
                             "acknowledged before the copier started: %"
                             PRIu64 ", begun after it ended: %" PRIu64,
                             a->dir, t, next[t], a->lo[t], a->hi[t]);
    if (ravel_verify(db))
        crash_child_fail("verify %s: %s", a->dir, ravel_errmsg());
    if (ravel_close(db))
        crash_child_fail("close %s: %s", a->dir, ravel_errmsg());
    return 0;
}

static void rb_check_in_child(struct rb_args *a, const char *dir)
{
    snprintf(a->dir, sizeof a->dir, "%s", dir);
    struct crash_child c = {.on_msg = NULL};
    snprintf(c.label, sizeof c.label, "checker");
    int status = crash_run(&c, "checker", a, sizeof *a, 120000);
    if (status != 0)
        fail_msg("the checker of %s exited with %d", dir, status);
}

/* -------------------------------------------------------------- the load */

struct rb_load {
    ravel_db *db;
    _Atomic uint64_t begun[RB_THREADS], acked[RB_THREADS];
    _Atomic int stop;
    pthread_t th[RB_THREADS];
};

struct rb_load_thread {
    struct rb_load *l;
    int t;
};

static struct rb_load_thread rb_threads[RB_THREADS];

static void *rb_load_main(void *arg)
{
    struct rb_load_thread *lt = arg;
    struct rb_load *l = lt->l;
    char k[32], v[100];
    memset(v, 'v', sizeof v);
    for (uint64_t n = 0; !atomic_load(&l->stop); n++) {
        rb_key(k, sizeof k, lt->t, n);
        atomic_store(&l->begun[lt->t], n + 1);
        if (ravel_put(l->db, 0, k, strlen(k), v, sizeof v)) {
            tu_thread_fail("writer %d: put %s: %s", lt->t, k,
                           ravel_errmsg());
            break;
        }
        atomic_store(&l->acked[lt->t], n + 1);
        if (n % 64 == 63)
            usleep(200); /* leave the copier some of the machine */
    }
    return NULL;
}

static void rb_load_start(struct rb_load *l, ravel_db *db)
{
    memset(l, 0, sizeof *l);
    l->db = db;
    for (int t = 0; t < RB_THREADS; t++) {
        rb_threads[t] = (struct rb_load_thread){l, t};
        assert_int_equal(pthread_create(&l->th[t], NULL, rb_load_main,
                                        &rb_threads[t]), 0);
    }
    for (int t = 0; t < RB_THREADS; t++)
        while (atomic_load(&l->acked[t]) < 200 && !tu_thread_failures())
            usleep(1000);
}

static void rb_load_stop(struct rb_load *l)
{
    atomic_store(&l->stop, 1);
    for (int t = 0; t < RB_THREADS; t++)
        pthread_join(l->th[t], NULL);
    tu_assert_no_thread_failures();
}

static void rb_bounds_before(struct rb_load *l, struct rb_args *a)
{
    a->threads = RB_THREADS;
    for (int t = 0; t < RB_THREADS; t++)
        a->lo[t] = atomic_load(&l->acked[t]);
}

static void rb_bounds_after(struct rb_load *l, struct rb_args *a)
{
    for (int t = 0; t < RB_THREADS; t++)
        a->hi[t] = atomic_load(&l->begun[t]);
}

static void test_under_load(void **state)
{
    (void)state;
    char *src = tu_path("load-src");
    char *root = tu_path("load-root");
    ravel_db *db = tu_open_ok(src, RB_OPTIONS);
    struct rb_load l;
    rb_load_start(&l, db);
    int rounds = (int)tu_env_u64("RAVEL_TEST_READER_BACKUP_ROUNDS", 2);
    uint64_t deleted = 0;
    for (int r = 0; r < rounds; r++) {
        for (int kind = RB_CHECKPOINT; kind <= RB_ONE_FILE; kind++) {
            struct rb_args a = {.kind = kind};
            snprintf(a.dir, sizeof a.dir, "%s", src);
            char *target = kind == RB_CHECKPOINT ? tu_path("load-cp-%d", r)
                           : kind == RB_BACKUP ? tu_path("load-root")
                                               : tu_path("load-%d.rvbk", r);
            snprintf(a.target, sizeof a.target, "%s", target);
            struct rb_msg m;
            rb_bounds_before(&l, &a);
            rb_run_copier(&a, &m);
            rb_bounds_after(&l, &a);
            deleted += m.deleted_copies;
            char *copy = target;
            if (kind == RB_BACKUP) {
                copy = tu_path("load-restored-%d", r);
                TU_OK(ravel_backup_verify(root, (uint64_t)r + 1));
                TU_OK(ravel_backup_restore(root, (uint64_t)r + 1, copy));
            } else if (kind == RB_ONE_FILE) {
                copy = tu_path("load-fromfile-%d", r);
                TU_OK(ravel_backup_restore_file(target, copy));
            }
            rb_check_in_child(&a, copy);
            if (copy != target)
                free(copy);
            free(target);
        }
        printf("# round %d: thread 0 at %" PRIu64 " writes\n", r,
               atomic_load(&l.acked[0]));
    }
    printf("# table files copied from a reader's descriptor after the "
           "writer deleted them: %" PRIu64 "\n", deleted);
    rb_load_stop(&l);
    TU_OK(ravel_close(db));
    free(root);
    free(src);
}

/* ------------------------------------- files deleted during the copy */

static void rb_put_range(ravel_db *db, const char *prefix, int from, int to)
{
    char k[32], v[64];
    for (int i = from; i < to; i++) {
        snprintf(k, sizeof k, "%s%06d", prefix, i);
        snprintf(v, sizeof v, "value of %s", k);
        TU_OK(ravel_put(db, 0, k, strlen(k), v, strlen(v)));
    }
}

static void rb_expect_range(ravel_db *db, const char *prefix, int from,
                            int to, int present)
{
    char k[32], v[64];
    for (int i = from; i < to; i++) {
        snprintf(k, sizeof k, "%s%06d", prefix, i);
        snprintf(v, sizeof v, "value of %s", k);
        tu_expect(db, NULL, k, present ? v : NULL);
    }
}

static void test_deleted_during_copy(void **state)
{
    (void)state;
    char *src = tu_path("del-src");
    char *cp = tu_path("del-cp");
    ravel_db *w = tu_open_ok(src, "disable_auto_compactions=true");
    for (int f = 0; f < 4; f++) { /* four level-0 files */
        rb_put_range(w, "k", f * 500, (f + 1) * 500);
        TU_OK(ravel_flush(w, 0));
    }
    rb_put_range(w, "m", 0, 300); /* only in the WAL */
    uint64_t *numbers = NULL;
    int n_files = tu_dir_sst_numbers(src, &numbers);
    assert_int_equal(n_files, 4);
    ravel_db *r = tu_open_ok(src, "read_only=true");
    uint64_t before = rv_test_checkpoint_deleted_copies();
    rv_pause_arm(RV_PAUSE_CHECKPOINT_ITEM);
    struct rb_args a = {.kind = RB_CHECKPOINT};
    snprintf(a.target, sizeof a.target, "%s", cp);
    struct rb_copy_job j = {.db = r, .a = &a};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, rb_copy_thread, &j), 0);
    uint64_t deadline = tu_now_ms() + 60000 * tu_timeout_multiplier();
    while (!rv_pause_waiting(RV_PAUSE_CHECKPOINT_ITEM) &&
           tu_now_ms() < deadline)
        usleep(1000);
    assert_true(rv_pause_waiting(RV_PAUSE_CHECKPOINT_ITEM));
    /* the writer compacts every file away and writes on */
    TU_OK(ravel_compact_range(w, NULL, 0, NULL, 0));
    for (int i = 0; i < n_files; i++) /* its files deleted by name */
        while (tu_sst_exists(src, numbers[i]) && tu_now_ms() < deadline)
            usleep(1000);
    for (int i = 0; i < n_files; i++)
        assert_false(tu_sst_exists(src, numbers[i]));
    free(numbers);
    rb_put_range(w, "later", 0, 100);
    TU_OK(ravel_flush(w, 0));
    rv_pause_release(RV_PAUSE_CHECKPOINT_ITEM);
    pthread_join(th, NULL);
    TU_OK(j.rc);
    /* the three files not linked before the pause were gone by name */
    assert_true(rv_test_checkpoint_deleted_copies() - before >= 3);
    TU_OK(ravel_close(r));
    TU_OK(ravel_close(w));
    ravel_db *c;
    TU_OK(tu_open(cp, "create_if_missing=false", &c));
    rb_expect_range(c, "k", 0, 2000, 1);
    rb_expect_range(c, "m", 0, 300, 1);
    rb_expect_range(c, "later", 0, 100, 0);
    TU_OK(ravel_verify(c));
    TU_OK(ravel_close(c));
    free(cp);
    free(src);
}

/* ------------------------------------------ a directory with no writer */

/* A child writes RB_KEYS keys with small memtables (some in table files,
** the rest only in the WAL) and waits for its kill. */
static int dead_writer_main(const void *arg)
{
    const struct rb_args *a = arg;
    if (a->journal[0])
        tu_sync_journal_start(a->journal);
    ravel_db *db;
    if (tu_open(a->dir, RB_OPTIONS, &db))
        crash_child_fail("open %s: %s", a->dir, ravel_errmsg());
    crash_child_opened(db);
    char k[32], v[64];
    for (int i = 0; i < RB_KEYS; i++) {
        snprintf(k, sizeof k, "d%06d", i);
        snprintf(v, sizeof v, "value of %s", k);
        if (ravel_put(db, 0, k, strlen(k), v, strlen(v)))
            crash_child_fail("put: %s", ravel_errmsg());
    }
    crash_child_done();
    crash_child_park();
}

/* DIR's files, names and contents, as one text (malloc'd). */
static char *rb_listing(const char *dir)
{
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX], *data = NULL;
        size_t dlen = 0;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        struct stat st;
        if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 &&
            S_ISREG(st.st_mode) && tu_file_read(path, &data, &dlen) == 0) {
            if (len + 200 > cap)
                out = realloc(out, cap *= 2);
            len += (size_t)snprintf(out + len, cap - len, "%s %zu %016"
                                    PRIx64 "\n", names[i]->d_name, dlen,
                                    (uint64_t)XXH3_64bits(data, dlen));
            free(data);
        } else if (names[i]->d_name[0] != '.') {
            if (len + 200 > cap)
                out = realloc(out, cap *= 2);
            len += (size_t)snprintf(out + len, cap - len, "%s (dir)\n",
                                    names[i]->d_name);
        }
        free(names[i]);
    }
    free(names);
    return out;
}

/* A source directory whose writer was killed after writing RB_KEYS keys
** (its syncs recorded in the sync journal JOURNAL unless NULL). */
static char *rb_dead_source(const char *name, const char *journal)
{
    char *src = tu_path("%s", name);
    struct rb_args a = {0};
    snprintf(a.dir, sizeof a.dir, "%s", src);
    if (journal)
        snprintf(a.journal, sizeof a.journal, "%s", journal);
    struct crash_child c = {.on_msg = NULL};
    snprintf(c.label, sizeof c.label, "writer of %s", name);
    crash_spawn(&c, "dead_writer", &a, sizeof a);
    crash_wait(&c, crash_done, 120000, "the end of its writes");
    crash_kill(&c);
    return src;
}

static void rb_expect_dead_keys(const char *dir)
{
    ravel_db *db;
    TU_OK(tu_open(dir, "create_if_missing=false", &db));
    rb_expect_range(db, "d", 0, RB_KEYS, 1);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
}

static void test_no_writer(void **state)
{
    (void)state;
    char *src = rb_dead_source("nw-src", NULL);
    char *before = rb_listing(src);
    assert_non_null(strstr(before, "wal-")); /* data only in the WAL too */
    char *cp = tu_path("nw-cp"), *root = tu_path("nw-root");
    char *file = tu_path("nw.rvbk"), *rs = tu_path("nw-restored");
    char *rf = tu_path("nw-fromfile");
    ravel_db *r = tu_open_ok(src, "read_only=true");
    TU_OK(ravel_checkpoint(r, cp));
    uint64_t id = 0;
    TU_OK(ravel_backup_create(r, root, &id));
    assert_int_equal(id, 1);
    TU_OK(ravel_backup_create(r, root, &id)); /* nothing new to copy */
    uint64_t copied = 0;
    TU_OK(ravel_backup_info(root, 2, RAVEL_BACKUP_COPIED, &copied));
    uint64_t total = 0;
    TU_OK(ravel_backup_info(root, 2, RAVEL_BACKUP_BYTES, &total));
    printf("# second backup from the reader: %" PRIu64 " of %" PRIu64
           " bytes copied\n", copied, total);
    TU_OK(ravel_backup_write_file(r, file));
    TU_EXPECT_INVALID(ravel_checkpoint(r, cp)); /* the target exists */
    TU_OK(ravel_close(r));
    char *after = rb_listing(src);
    assert_string_equal(before, after);
    TU_OK(ravel_backup_verify(root, id));
    TU_OK(ravel_backup_restore(root, id, rs));
    TU_OK(ravel_backup_restore_file(file, rf));
    rb_expect_dead_keys(cp);
    rb_expect_dead_keys(rs);
    rb_expect_dead_keys(rf);
    /* and the source still opens as a database of its own */
    rb_expect_dead_keys(src);
    free(before);
    free(after);
    free(cp);
    free(root);
    free(file);
    free(rs);
    free(rf);
    free(src);
}

/* ------------------------------------------- kill -9 mid-checkpoint */

static void test_kill_mid_checkpoint(void **state)
{
    (void)state;
    char *src = rb_dead_source("kill-src", NULL);
    char *before = rb_listing(src);
    char *cp = tu_path("kill-cp");
    struct rb_args a = {.kind = RB_CHECKPOINT, .pause = 1};
    snprintf(a.dir, sizeof a.dir, "%s", src);
    snprintf(a.target, sizeof a.target, "%s", cp);
    struct crash_child c = {.on_msg = rb_on_msg,
                            .msg_size = sizeof(struct rb_msg)};
    struct rb_record rec = {0};
    c.ctx = &rec;
    snprintf(c.label, sizeof c.label, "copier to be killed");
    crash_spawn(&c, "copier", &a, sizeof a);
    crash_wait(&c, crash_paused, 120000, "its checkpoint's first file");
    crash_kill(&c);
    /* detectably incomplete: no DIR, DIR.partial with its marker */
    struct stat st;
    assert_int_not_equal(stat(cp, &st), 0);
    char marker[PATH_MAX];
    snprintf(marker, sizeof marker, "%s.partial/%s", cp,
             RV_COPY_PARTIAL_MARKER);
    assert_int_equal(stat(marker, &st), 0);
    char *after = rb_listing(src);
    assert_string_equal(before, after);
    /* the next checkpoint into the same name replaces the partial one */
    ravel_db *r = tu_open_ok(src, "read_only=true");
    TU_OK(ravel_checkpoint(r, cp));
    TU_OK(ravel_close(r));
    rb_expect_dead_keys(cp);
    free(after);
    after = rb_listing(src);
    assert_string_equal(before, after);
    free(before);
    free(after);
    free(cp);
    free(src);
}

/* ------------------------------------- power loss mid-checkpoint */

/* The journal JOURNAL with the directory fsyncs of DIR.partial named
** DIR, into a new file (returned, malloc'd): a directory's entries belong
** to it, not to its name (as test_backup.c's). */
static char *rb_journal_renamed(const char *journal, const char *dir)
{
    char *text;
    size_t len;
    char *out = malloc(strlen(journal) + 16);
    sprintf(out, "%s.renamed", journal);
    assert_int_equal(tu_file_read(journal, &text, &len), 0);
    char from[PATH_MAX + 16], to[PATH_MAX + 16];
    snprintf(from, sizeof from, "D %s.partial ", dir);
    snprintf(to, sizeof to, "D %s ", dir);
    size_t n = 0;
    char *res = malloc(len * 2 + 1);
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

static void test_power_loss_mid_checkpoint(void **state)
{
    (void)state;
    char *journal = tu_path("pl-src.journal");
    char *src = rb_dead_source("pl-src", journal);
    char *before = rb_listing(src);
    int rounds = (int)tu_env_u64("RAVEL_TEST_READER_BACKUP_POWER_ROUNDS", 4);
    uint64_t rng = tu_seed();
    for (int r = 0; r < rounds; r++) {
        /* the source's syncs, then the copier's */
        char *j = tu_path("pl-%d.journal", r);
        char *text;
        size_t len;
        assert_int_equal(tu_file_read(journal, &text, &len), 0);
        assert_int_equal(tu_file_write(j, text, len), 0);
        free(text);
        char *target = tu_path("pl-%d-target", r);
        struct rb_args a = {.kind = RB_CHECKPOINT};
        snprintf(a.dir, sizeof a.dir, "%s", src);
        snprintf(a.target, sizeof a.target, "%s", target);
        snprintf(a.journal, sizeof a.journal, "%s", j);
        struct rb_record rec = {0};
        struct crash_child c = {.on_msg = rb_on_msg,
                                .msg_size = sizeof(struct rb_msg),
                                .ctx = &rec};
        snprintf(c.label, sizeof c.label, "power-loss round %d", r);
        crash_spawn(&c, "loop_copier", &a, sizeof a);
        crash_kill_after(&c, CRASH_FROM_OPEN, 20 + tu_rand(&rng) % 300);
        enum tu_power_loss_pattern pat = (enum tu_power_loss_pattern)
            (r % TU_PL_PATTERNS);
        /* the target's entries, then each checkpoint directory's, the
        ** fsyncs of X.partial counted for X once renamed */
        char *renamed = rb_journal_renamed(j, target);
        tu_power_loss(target, renamed, pat, &rng);
        unlink(renamed);
        free(renamed);
        int complete = 0, partial = 0;
        DIR *d = opendir(target);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.')
                continue;
            char sub[PATH_MAX + 300];
            snprintf(sub, sizeof sub, "%s/%s", target, e->d_name);
            renamed = rb_journal_renamed(j, sub);
            tu_power_loss(sub, renamed, pat, &rng);
            unlink(renamed);
            free(renamed);
        }
        rewinddir(d);
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.')
                continue;
            size_t nl = strlen(e->d_name);
            if (nl > 8 && strcmp(e->d_name + nl - 8, ".partial") == 0) {
                partial++; /* never opened: not named cp-N */
                continue;
            }
            char sub[PATH_MAX + 300];
            snprintf(sub, sizeof sub, "%s/%s", target, e->d_name);
            rb_expect_dead_keys(sub);
            complete++;
        }
        closedir(d);
        for (int i = 0; i < rec.n; i++) { /* every one reported is there */
            char *cp = tu_path("pl-%d-target/cp-%d", r, i);
            struct stat st;
            assert_int_equal(stat(cp, &st), 0);
            free(cp);
        }
        /* the reader wrote nothing into the source */
        char *after = rb_listing(src);
        assert_string_equal(before, after);
        free(after);
        printf("# round %d (%s): %d reported, %d complete, %d partial\n", r,
               tu_power_loss_name(pat), rec.n, complete, partial);
        free(target);
        free(j);
    }
    free(before);
    free(src);
    free(journal);
}

static const struct crash_role roles[] = {
    {"copier", copier_main, sizeof(struct rb_args)},
    {"checker", checker_main, sizeof(struct rb_args)},
    {"dead_writer", dead_writer_main, sizeof(struct rb_args)},
    {"loop_copier", loop_copier_main, sizeof(struct rb_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deleted_during_copy),
        cmocka_unit_test(test_no_writer),
        cmocka_unit_test(test_kill_mid_checkpoint),
        cmocka_unit_test(test_power_loss_mid_checkpoint),
        cmocka_unit_test(test_under_load),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
