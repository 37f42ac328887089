/*
** test_readers.c -- readers in other processes (lib/db/reader.c): read_only
** handles that take no lock, follow a live writer by ravel_catch_up or by
** themselves, and never see a state the writer never had.
**
** The live test: a writer process runs 8 threads with small memtables
** (flushes, compactions and WAL deletions all the time); thread t writes
** batches {t-i = value, t-last = i} for i = 0, 1, 2, ...  Four reader
** processes read in a loop -- two iterate, two get at a snapshot; two
** catch up by ravel_catch_up, two by the automatic thread -- and check
** every view is a prefix state: for each t exactly the keys t-0 .. t-(n-1)
** and t-last = n-1.  Each reports its view's total; the parent checks a
** reader's totals never go back and advance.  Midway a reader is killed
** with SIGKILL mid-read (a new one takes its place); later the writer is
** killed, the readers keep serving, and a new writer opens beside them
** and goes on.  At the end every reader checks it holds no descriptor of a
** deleted table file, and the parent that the directory holds exactly the
** table files the manifest names.
**
** Smaller tests: a reader with no writer; a writer that opens while a
** reader is open; promotion (a reader's snapshot and iterator survive a
** new writer in the same process that compacts their files away); a
** prepared transaction invisible to a reader until its commit; the
** manual_wal_flush exception; the lag property; damage named at open and
** at a catch-up.
**
** RAVEL_TEST_READERS_SECONDS sets the live test's length (8 s in CI; the issue's
** long form is 60).
*/
#include "crash_harness.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RD_THREADS 8
#define RD_READERS 4
#define RD_WRITER_OPTIONS "write_buffer_size=64K;target_file_size_base=64K;" \
                          "max_bytes_for_level_base=256K"

/* --------------------------------------------------------- the writer */

struct rd_args {
    char dir[PATH_MAX];
    int id;             /* a reader's number */
    int seconds;        /* how long to run; then report done */
    int auto_ms;        /* a reader's catch_up_interval_ms (0: by call) */
    int use_gets;       /* a reader: gets at a snapshot, not an iterator */
};

/* A reader's report of one view. */
struct rd_msg {
    int id;
    int final;          /* the last one, after the checks at the end */
    uint64_t round;
    uint64_t total;     /* keys t-i seen, over every t */
    uint64_t seq;
};

struct rd_writer_thread {
    ravel_db *db;
    int t;
    uint64_t next;      /* the next index to write */
    uint64_t until_ms;
};

/* The number a value of VLEN bytes at V spells (values are not
** NUL-terminated). */
static long long rd_number(const void *v, size_t vlen)
{
    char text[32];
    snprintf(text, sizeof text, "%.*s", (int)(vlen < 31 ? vlen : 31),
             (const char *)v);
    return strtoll(text, NULL, 10);
}

static void rd_key(char *buf, size_t n, int t, uint64_t i)
{
    snprintf(buf, n, "t%02d-%08llu", t, (unsigned long long)i);
}

static void rd_last_key(char *buf, size_t n, int t)
{
    snprintf(buf, n, "t%02d-last", t);
}

static void *rd_writer_thread_main(void *arg)
{
    struct rd_writer_thread *w = arg;
    ravel_batch *b = NULL;
    if (ravel_batch_new(&b))
        crash_child_fail("batch: %s", ravel_errmsg());
    char key[32], last[32], val[128], idx[32];
    rd_last_key(last, sizeof last, w->t);
    while (tu_now_ms() < w->until_ms) {
        rd_key(key, sizeof key, w->t, w->next);
        snprintf(val, sizeof val, "value of %s, padded to make the "
                 "memtables fill: ...........................", key);
        snprintf(idx, sizeof idx, "%llu", (unsigned long long)w->next);
        ravel_batch_clear(b);
        if (ravel_batch_put(b, key, strlen(key), val, strlen(val)) ||
            ravel_batch_put(b, last, strlen(last), idx, strlen(idx)))
            crash_child_fail("batch put: %s", ravel_errmsg());
        int rc = ravel_write(w->db, 0, b);
        if (rc)
            crash_child_fail("write %s: %s: %s", key, ravel_errstr(rc),
                             ravel_errmsg());
        w->next++;
    }
    ravel_batch_free(b);
    return NULL;
}

/* The next index of thread T in DB: one past its last key. */
static uint64_t rd_next_index(ravel_db *db, int t)
{
    char last[32];
    rd_last_key(last, sizeof last, t);
    void *v = NULL;
    size_t vlen = 0;
    int rc = ravel_get(db, NULL, last, strlen(last), &v, &vlen);
    if (rc == RAVEL_NOTFOUND)
        return 0;
    if (rc)
        crash_child_fail("get %s: %s", last, ravel_errmsg());
    uint64_t n = (uint64_t)rd_number(v, vlen) + 1;
    ravel_free(v);
    return n;
}

/* Writes for A->seconds (going on from what the database holds), reports
** done, and closes; a kill may end it any time. */
static int rd_writer_main(const void *arg)
{
    const struct rd_args *a = arg;
    ravel_options *o = NULL;
    /* wal_io=direct: flushed segments recycled under the readers too */
    const char *io = tu_wal_io();
    int direct = io && strcmp(io, "direct") == 0;
    if (tu_options_try(direct ? RD_WRITER_OPTIONS ";recycle_log_file_num=4"
                              : RD_WRITER_OPTIONS, &o))
        crash_child_fail("options: %s", ravel_errmsg());
    ravel_db *db = NULL;
    int rc = ravel_open(a->dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("writer open: %s: %s", ravel_errstr(rc),
                         ravel_errmsg());
    crash_child_opened(db);
    struct rd_writer_thread w[RD_THREADS];
    pthread_t th[RD_THREADS];
    uint64_t until = tu_now_ms() + (uint64_t)a->seconds * 1000;
    for (int t = 0; t < RD_THREADS; t++) {
        w[t] = (struct rd_writer_thread){.db = db, .t = t,
                                         .next = rd_next_index(db, t),
                                         .until_ms = until};
        pthread_create(&th[t], NULL, rd_writer_thread_main, &w[t]);
    }
    for (int t = 0; t < RD_THREADS; t++)
        pthread_join(th[t], NULL);
    rc = ravel_close(db);
    if (rc)
        crash_child_fail("writer close: %s", ravel_errmsg());
    crash_child_done();
    crash_child_park();
}

/* --------------------------------------------------------- the readers */

/* Checks one prefix state, given per thread the indices seen (a bitmap
** by count: SEEN[t] keys in a row from 0, EXTRA[t] seen out of order) and
** the last value (-1: none).  Returns the total, or fails the child. */
static const char *rd_phase = "";

static uint64_t rd_check_state(int id, const uint64_t *seen,
                               const int *holes, const int64_t *last)
{
    uint64_t total = 0;
    for (int t = 0; t < RD_THREADS; t++) {
        if (holes[t])
            crash_child_fail("reader %d: thread %d's keys are not "
                             "contiguous: %llu in a row from 0, then a "
                             "gap (%s)", id, t, (unsigned long long)seen[t],
                             rd_phase);
        if ((int64_t)seen[t] - 1 != last[t])
            crash_child_fail("reader %d: thread %d: %llu keys but t-last "
                             "= %lld: not a state the writer had (%s)", id, t,
                             (unsigned long long)seen[t], (long long)last[t],
                             rd_phase);
        total += seen[t];
    }
    return total;
}

/* A view by an iterator (at SNAP): the total. */
static uint64_t rd_view_iter(int id, ravel_db *db, const ravel_snapshot *snap)
{
    ravel_iter *it = NULL;
    if (ravel_iter_new(db, snap, &it))
        crash_child_fail("reader %d: iter: %s", id, ravel_errmsg());
    uint64_t seen[RD_THREADS] = {0};
    int holes[RD_THREADS] = {0};
    int64_t last[RD_THREADS];
    for (int t = 0; t < RD_THREADS; t++)
        last[t] = -1;
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t klen, vlen;
        const char *k = ravel_iter_key(it, &klen);
        const char *v = ravel_iter_value(it, &vlen);
        char key[64], val[64];
        if (klen < 5 || klen >= sizeof key)
            crash_child_fail("reader %d: unexpected key of %zu bytes", id,
                             klen);
        memcpy(key, k, klen);
        key[klen] = 0;
        int t = atoi(key + 1);
        if (t < 0 || t >= RD_THREADS)
            crash_child_fail("reader %d: unexpected key %s", id, key);
        if (strcmp(key + 4, "last") == 0) {
            snprintf(val, sizeof val, "%.*s", (int)vlen, v);
            last[t] = strtoll(val, NULL, 10);
        } else if ((uint64_t)strtoull(key + 4, NULL, 10) == seen[t]) {
            seen[t]++;
        } else {
            holes[t] = 1;
        }
    }
    if (ravel_iter_status(it))
        crash_child_fail("reader %d: iterator: %s", id, ravel_errmsg());
    ravel_iter_free(it);
    return rd_check_state(id, seen, holes, last);
}

/* A view by gets at SNAP: each thread's last, its key and the next. */
static uint64_t rd_view_gets(int id, ravel_db *db, const ravel_snapshot *snap)
{
    uint64_t seen[RD_THREADS] = {0};
    int holes[RD_THREADS] = {0};
    int64_t last[RD_THREADS];
    for (int t = 0; t < RD_THREADS; t++) {
        char key[32];
        void *v = NULL;
        size_t vlen;
        rd_last_key(key, sizeof key, t);
        int rc = ravel_get(db, snap, key, strlen(key), &v, &vlen);
        if (rc && rc != RAVEL_NOTFOUND)
            crash_child_fail("reader %d: get %s: %s", id, key,
                             ravel_errmsg());
        last[t] = rc ? -1 : rd_number(v, vlen);
        ravel_free(v);
        uint64_t n = (uint64_t)(last[t] + 1);
        /* t-(n-1) must be there, t-n must not */
        for (uint64_t i = n ? n - 1 : 0; i <= n; i++) {
            rd_key(key, sizeof key, t, i);
            rc = ravel_get(db, snap, key, strlen(key), &v, &vlen);
            if (rc && rc != RAVEL_NOTFOUND)
                crash_child_fail("reader %d: get %s: %s", id, key,
                                 ravel_errmsg());
            ravel_free(v);
            v = NULL;
            if ((rc == RAVEL_OK) != (i < n)) {
                holes[t] = 1;
            }
        }
        seen[t] = n;
    }
    return rd_check_state(id, seen, holes, last);
}

/* Table files this process holds open that were deleted. */
static int rd_deleted_tables_held(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char link[PATH_MAX + 32], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = 0;
        if (strstr(target, ".sst (deleted)"))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static uint64_t rd_seq(ravel_db *db)
{
    char *text = NULL;
    if (ravel_property(db, "ravel.reader-lag", &text))
        crash_child_fail("ravel.reader-lag: %s", ravel_errmsg());
    const char *s = strstr(text, "sequence=");
    uint64_t seq = s ? strtoull(s + 9, NULL, 10) : 0;
    if (!s)
        crash_child_fail("ravel.reader-lag has no sequence: %s", text);
    ravel_free(text);
    return seq;
}

/* Reads in a loop for A->seconds, reporting each view; at the end checks
** it holds no deleted table file once caught up with nothing open. */
static int rd_reader_main(const void *arg)
{
    const struct rd_args *a = arg;
    ravel_options *o = NULL;
    char extra[96];
    snprintf(extra, sizeof extra, "read_only=true;catch_up_interval_ms=%d",
             a->auto_ms);
    if (tu_options_try(extra, &o))
        crash_child_fail("options: %s", ravel_errmsg());
    ravel_db *db = NULL;
    int rc = ravel_open(a->dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("reader %d open: %s: %s", a->id, ravel_errstr(rc),
                         ravel_errmsg());
    crash_child_opened(db);
    uint64_t until = tu_now_ms() + (uint64_t)a->seconds * 1000;
    struct rd_msg m = {.id = a->id};
    while (tu_now_ms() < until) {
        if (!a->auto_ms && (rc = ravel_catch_up(db)) != RAVEL_OK)
            crash_child_fail("reader %d: catch-up: %s: %s", a->id,
                             ravel_errstr(rc), ravel_errmsg());
        ravel_snapshot *snap = NULL;
        if (ravel_snapshot_acquire(db, &snap))
            crash_child_fail("reader %d: snapshot: %s", a->id,
                             ravel_errmsg());
        m.seq = ravel_snapshot_sequence(snap);
        rd_phase = "a snapshot's first view";
        m.total = a->use_gets ? rd_view_gets(a->id, db, snap)
                              : rd_view_iter(a->id, db, snap);
        /* the same snapshot read again after a catch-up: unchanged */
        if (!a->auto_ms && (rc = ravel_catch_up(db)) != RAVEL_OK)
            crash_child_fail("reader %d: catch-up: %s", a->id,
                             ravel_errmsg());
        rd_phase = "the snapshot's view after a catch-up";
        uint64_t again = a->use_gets ? rd_view_iter(a->id, db, snap)
                                     : rd_view_gets(a->id, db, snap);
        if (again != m.total)
            crash_child_fail("reader %d: a snapshot showed %llu keys, then "
                             "%llu after a catch-up", a->id,
                             (unsigned long long)m.total,
                             (unsigned long long)again);
        ravel_snapshot_release(db, snap);
        m.round++;
        crash_send(&m, sizeof m);
    }
    /* Caught up, nothing open: the deleted files it held are let go.  The
    ** writer may still delete files of the version just caught up with,
    ** until it ends: catch up until none is held (bounded). */
    int held = 1;
    for (int i = 0; i < 3000 && held; i++) {
        rc = ravel_catch_up(db);
        if (rc)
            crash_child_fail("reader %d: final catch-up: %s", a->id,
                             ravel_errmsg());
        held = rd_deleted_tables_held();
        if (held)
            usleep(10000);
    }
    if (held)
        crash_child_fail("reader %d: holds %d deleted table file(s) open "
                         "after catching up with nothing open", a->id, held);
    rd_phase = "the final view";
    m.total = rd_view_iter(a->id, db, NULL);
    m.seq = rd_seq(db);
    m.final = 1;
    crash_send(&m, sizeof m);
    if (ravel_close(db))
        crash_child_fail("reader %d: close: %s", a->id, ravel_errmsg());
    crash_child_done();
    crash_child_park();
}

/* ------------------------------------------------------------- parent */

struct rd_seen {
    uint64_t first, last, rounds, last_seq;
    int any, final;
};

struct rd_run {
    struct rd_seen seen[RD_READERS];
};

static void rd_on_msg(struct crash_child *c, const void *msg)
{
    struct rd_run *run = c->ctx;
    const struct rd_msg *m = msg;
    if (m->id < 0 || m->id >= RD_READERS)
        fail_msg("a message from reader %d", m->id);
    struct rd_seen *s = &run->seen[m->id];
    if (s->any && (m->total < s->last || m->seq < s->last_seq))
        fail_msg("reader %d went back: %llu keys at sequence %llu after "
                 "%llu at %llu", m->id, (unsigned long long)m->total,
                 (unsigned long long)m->seq, (unsigned long long)s->last,
                 (unsigned long long)s->last_seq);
    if (!s->any)
        s->first = m->total;
    s->any = 1;
    s->last = m->total;
    s->last_seq = m->seq;
    s->rounds++;
    s->final |= m->final;
}

static void rd_spawn(struct crash_child *c, struct rd_run *run,
                     const char *role, const struct rd_args *a)
{
    memset(c, 0, sizeof *c);
    c->on_msg = rd_on_msg;
    c->msg_size = sizeof(struct rd_msg);
    c->ctx = run;
    snprintf(c->label, sizeof c->label, "%s %d", role, a->id);
    crash_spawn(c, role, a, sizeof *a);
}

/* Pumps every live child for MS milliseconds. */
static void rd_pump_all(struct crash_child *cs, int n, uint64_t ms)
{
    uint64_t end = tu_now_ms() + ms;
    while (tu_now_ms() < end)
        for (int i = 0; i < n; i++)
            if (cs[i].fd >= 0)
                crash_pump(&cs[i], tu_now_ms() + 5);
}

/* Descriptors of deleted table files of DIR open in any process this
** one can look into (/proc/PID/fd): the pins a reader leaves. */
static int rd_deleted_held_anywhere(const char *dir)
{
    DIR *procs = opendir("/proc");
    int n = 0;
    struct dirent *p;
    size_t dlen = strlen(dir);
    while (procs && (p = readdir(procs)) != NULL) {
        if (p->d_name[0] < '0' || p->d_name[0] > '9')
            continue;
        char fds[300];
        snprintf(fds, sizeof fds, "/proc/%s/fd", p->d_name);
        DIR *d = opendir(fds);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char link[600], target[PATH_MAX];
            snprintf(link, sizeof link, "%s/%s", fds, e->d_name);
            ssize_t len = readlink(link, target, sizeof target - 1);
            if (len <= 0)
                continue;
            target[len] = 0;
            if (strncmp(target, dir, dlen) == 0 &&
                strstr(target, ".sst (deleted)"))
                n++;
        }
        if (d)
            closedir(d);
    }
    if (procs)
        closedir(procs);
    return n;
}

/* After every process closed: a writer's open and close (which delete
** what its recovery proves obsolete, and what its own compactions made
** obsolete), then the directory's table files must be exactly the ones
** the manifest names -- read by a reader, which deletes nothing. */
static void rd_check_dir_is_live_set(const char *dir)
{
    ravel_db *db = tu_open_ok(dir, RD_WRITER_OPTIONS);
    tu_wait_background_idle(db);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "read_only=true");
    struct tu_sst *live = NULL;
    int n_live = tu_sstables(db, &live);
    uint64_t *files = NULL;
    int n_files = tu_dir_sst_numbers(dir, &files);
    for (int i = 0; i < n_files; i++) {
        int named = 0;
        for (int j = 0; j < n_live && !named; j++)
            named = live[j].number == files[i];
        if (!named)
            fail_msg("%06llu.sst is in the directory but not in the "
                     "manifest: leaked", (unsigned long long)files[i]);
    }
    assert_int_equal(n_files, n_live);
    free(live);
    free(files);
    TU_OK(ravel_close(db));
    int held = rd_deleted_held_anywhere(dir);
    if (held)
        fail_msg("%d descriptor(s) of deleted table files of %s are still "
                 "open in some process after every reader ended (one was "
                 "killed)", held, dir);
}

static void test_live_readers(void **state)
{
    (void)state;
    int seconds = (int)tu_env_u64("RAVEL_TEST_READERS_SECONDS", 8);
    char *dir = tu_path("live");
    ravel_db *db = tu_open_ok(dir, RD_WRITER_OPTIONS);
    TU_OK(ravel_close(db));

    struct rd_run run;
    memset(&run, 0, sizeof run);
    /* children 0..3: readers; 4: the writer */
    struct crash_child cs[RD_READERS + 1];
    struct rd_args wa = {.id = 0, .seconds = seconds * 2 / 3 + 2};
    snprintf(wa.dir, sizeof wa.dir, "%s", dir);
    rd_spawn(&cs[RD_READERS], &run, "writer", &wa);
    crash_wait(&cs[RD_READERS], crash_opened, 60000, "the writer's open");
    struct rd_args ra[RD_READERS];
    for (int i = 0; i < RD_READERS; i++) {
        ra[i] = (struct rd_args){.id = i, .seconds = seconds,
                                 .auto_ms = i % 2 ? 10 : 0,
                                 .use_gets = i >= 2};
        snprintf(ra[i].dir, sizeof ra[i].dir, "%s", dir);
        rd_spawn(&cs[i], &run, "reader", &ra[i]);
    }
    uint64_t third = (uint64_t)seconds * 1000 / 3;
    rd_pump_all(cs, RD_READERS + 1, third);

    /* kill -9 a reader mid-read; another takes its place */
    crash_kill(&cs[0]);
    uint64_t before_kill = run.seen[0].rounds;
    assert_true(before_kill > 0);
    memset(&run.seen[0], 0, sizeof run.seen[0]);
    ra[0].seconds = seconds - (int)(third / 1000) - 1;
    rd_spawn(&cs[0], &run, "reader", &ra[0]);
    rd_pump_all(cs, RD_READERS + 1, third);

    /* kill -9 the writer: the readers go on; a new writer opens beside
    ** them and goes on writing */
    crash_kill(&cs[RD_READERS]);
    uint64_t rounds[RD_READERS];
    for (int i = 0; i < RD_READERS; i++)
        rounds[i] = run.seen[i].rounds;
    rd_pump_all(cs, RD_READERS + 1, 500);
    wa.seconds = (int)(third / 1000) + 1;
    rd_spawn(&cs[RD_READERS], &run, "writer", &wa);
    crash_wait(&cs[RD_READERS], crash_opened, 60000, "the new writer's "
               "open beside the readers");
    for (int i = 0; i < RD_READERS; i++)
        crash_wait(&cs[i], crash_done, (uint64_t)seconds * 2000 + 60000,
                   "the reader's end");
    crash_wait(&cs[RD_READERS], crash_done, (uint64_t)seconds * 2000 + 60000,
               "the writer's end");
    for (int i = 0; i <= RD_READERS; i++)
        crash_kill(&cs[i]);
    for (int i = 0; i < RD_READERS; i++) {
        struct rd_seen *s = &run.seen[i];
        printf("# reader %d: %llu rounds, %llu -> %llu keys\n", i,
               (unsigned long long)s->rounds, (unsigned long long)s->first,
               (unsigned long long)s->last);
        assert_true(s->final);
        assert_true(run.seen[i].rounds > rounds[i] || i == 0);
        if (s->last <= s->first)
            fail_msg("reader %d's view did not advance (%llu keys)", i,
                     (unsigned long long)s->last);
    }
    rd_check_dir_is_live_set(dir);
    free(dir);
}

/* ------------------------------------------------- in-process scenarios */

static ravel_db *rd_open_reader(const char *dir, const char *extra)
{
    char opts[128];
    snprintf(opts, sizeof opts, "read_only=true%s%s", extra ? ";" : "",
             extra ? extra : "");
    return tu_open_ok(dir, opts);
}

/* No writer: a reader opens a closed database, and a writer opens while
** it is open; another writer is still refused. */
static void test_reader_without_writer(void **state)
{
    (void)state;
    char *dir = tu_path("alone");
    ravel_db *w = tu_open_ok(dir, NULL);
    tu_put(w, 0, "a", "1");
    TU_OK(ravel_flush(w, 0));
    tu_put(w, 0, "b", "2");
    TU_OK(ravel_close(w));

    ravel_db *r = rd_open_reader(dir, NULL);
    ravel_db *r2 = rd_open_reader(dir, NULL);
    tu_expect(r, NULL, "a", "1");
    tu_expect(r, NULL, "b", "2");
    TU_OK(ravel_catch_up(r));
    TU_EXPECT_RC(RAVEL_READONLY, ravel_put(r, 0, "c", 1, "3", 1));

    w = tu_open_ok(dir, NULL);
    ravel_db *w2 = NULL;
    ravel_options *o = tu_options(NULL);
    TU_EXPECT_RC(RAVEL_LOCKED, ravel_open(dir, o, &w2));
    ravel_options_free(o);
    tu_put(w, 0, "c", "3");
    tu_expect(r, NULL, "c", NULL);
    TU_OK(ravel_catch_up(r));
    tu_expect(r, NULL, "c", "3");
    tu_expect(r2, NULL, "c", NULL);
    TU_OK(ravel_close(w));
    TU_OK(ravel_catch_up(r2));
    tu_expect(r2, NULL, "c", "3");
    TU_OK(ravel_close(r));
    TU_OK(ravel_close(r2));
    free(dir);
}

/* Promotion: the writer gone, the reader's process opens read-write beside
** the reader handle; the reader's snapshot and iterator keep their state
** though the new writer compacts their files away. */
static void test_promotion(void **state)
{
    (void)state;
    char *dir = tu_path("promote");
    ravel_db *w = tu_open_ok(dir, NULL);
    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%03d", i);
        tu_put(w, 0, k, "old");
    }
    TU_OK(ravel_flush(w, 0));
    ravel_db *r = rd_open_reader(dir, NULL);
    TU_OK(ravel_close(w)); /* the writer is gone */

    ravel_snapshot *snap = NULL;
    TU_OK(ravel_snapshot_acquire(r, &snap));
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(r, NULL, &it));
    ravel_iter_seek_to_first(it);

    w = tu_open_ok(dir, NULL); /* promoted: the same process writes */
    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%03d", i);
        tu_put(w, 0, k, "new");
    }
    TU_OK(ravel_compact_range(w, NULL, 0, NULL, 0));
    /* the reader's files were deleted by the compaction: it still reads
    ** and checks them, through the descriptors it holds */
    TU_OK(ravel_verify(r));
    tu_expect(r, NULL, "k050", "old");
    TU_OK(ravel_catch_up(r));
    tu_expect(r, NULL, "k050", "new");
    tu_expect(r, snap, "k050", "old");
    int n = 0;
    for (; ravel_iter_valid(it); ravel_iter_next(it), n++) {
        size_t vlen;
        const char *v = ravel_iter_value(it, &vlen);
        assert_int_equal(vlen, 3);
        assert_memory_equal(v, "old", 3);
    }
    TU_OK(ravel_iter_status(it));
    assert_int_equal(n, 100);
    ravel_iter_free(it);
    TU_OK(ravel_snapshot_release(r, snap));
    TU_OK(ravel_close(r));
    TU_OK(ravel_close(w));
    free(dir);
}

/* A prepared transaction is invisible to a reader, through a flush that
** spills it, until its commit. */
static void test_prepared_invisible(void **state)
{
    (void)state;
    char *dir = tu_path("prepared");
    ravel_db *w = tu_open_ok(dir, NULL);
    tu_put(w, 0, "before", "1");
    ravel_db *r = rd_open_reader(dir, NULL);
    ravel_txn *t = NULL;
    TU_OK(ravel_txn_begin(w, 0, &t));
    TU_OK(ravel_txn_set_name(t, "xa-1"));
    TU_OK(ravel_txn_put(t, "p", 1, "prepared", 8));
    TU_OK(ravel_txn_prepare(t));
    tu_put(w, 0, "after", "2");
    TU_OK(ravel_catch_up(r));
    tu_expect(r, NULL, "after", "2");
    tu_expect(r, NULL, "p", NULL);
    TU_OK(ravel_flush(w, 0)); /* spills it; the log moves past it */
    tu_put(w, 0, "later", "3");
    TU_OK(ravel_catch_up(r));
    tu_expect(r, NULL, "later", "3");
    tu_expect(r, NULL, "p", NULL);
    ravel_db *r2 = rd_open_reader(dir, NULL);
    tu_expect(r2, NULL, "p", NULL);
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    TU_OK(ravel_catch_up(r));
    tu_expect(r, NULL, "p", "prepared");
    TU_OK(ravel_catch_up(r2));
    tu_expect(r2, NULL, "p", "prepared");
    TU_OK(ravel_close(r2));
    TU_OK(ravel_close(r));
    TU_OK(ravel_close(w));
    free(dir);
}

/* manual_wal_flush: buffered writes are not in the WAL, so a reader sees
** them only once flushed to it (ravel.h says so). */
static void test_manual_wal_flush(void **state)
{
    (void)state;
    const char *io = tu_wal_io();
    if (io && strcmp(io, "direct") == 0)
        skip(); /* manual_wal_flush cannot be combined with direct */
    char *dir = tu_path("manual");
    ravel_db *w = tu_open_ok(dir, "manual_wal_flush=true");
    ravel_db *r = rd_open_reader(dir, NULL);
    tu_put(w, 0, "buffered", "1");
    TU_OK(ravel_catch_up(r));
    tu_expect(r, NULL, "buffered", NULL);
    TU_OK(ravel_flush_wal(w, 0));
    TU_OK(ravel_catch_up(r));
    tu_expect(r, NULL, "buffered", "1");
    TU_OK(ravel_close(r));
    TU_OK(ravel_close(w));
    free(dir);
}

/* The automatic catch-up and the lag property: a write becomes visible
** without a call; the property names the sequence. */
static void test_auto_catch_up(void **state)
{
    (void)state;
    char *dir = tu_path("auto");
    ravel_db *w = tu_open_ok(dir, NULL);
    ravel_db *r = rd_open_reader(dir, "catch_up_interval_ms=5");
    tu_put(w, 0, "k", "v");
    int seen = 0;
    for (int i = 0; i < 20000 && !seen; i++) { /* a bound, not a timing */
        void *v = NULL;
        size_t vlen;
        int rc = ravel_get(r, NULL, "k", 1, &v, &vlen);
        seen = rc == RAVEL_OK;
        ravel_free(v);
        if (!seen)
            usleep(1000);
    }
    assert_true(seen);
    char *lag = tu_prop(r, "ravel.reader-lag");
    assert_non_null(strstr(lag, "sequence=1\n"));
    assert_non_null(strstr(lag, "interval_ms=5\n"));
    ravel_free(lag);
    lag = tu_prop(w, "ravel.reader-lag");
    /* the writer's visible sequence: 1, or with write_prepared the commit
    ** sequence of the put */
    char *visible = tu_prop(w, "ravel.last-visible-sequence"), want[64];
    snprintf(want, sizeof want, "writer: sequence=%llu\n",
             strtoull(visible, NULL, 10));
    ravel_free(visible);
    assert_non_null(strstr(lag, want));
    ravel_free(lag);
    TU_OK(ravel_close(r));
    TU_OK(ravel_close(w));
    free(dir);
}

/* Damage a reader cannot explain by the writer's moving is an error
** naming the file, at open and at a catch-up (the reader keeps its state
** then). */
static void test_reader_damage(void **state)
{
    (void)state;
    char *dir = tu_path("damage");
    ravel_db *w = tu_open_ok(dir, NULL);
    tu_put(w, 0, "a", "1");
    TU_OK(ravel_flush(w, 0));
    ravel_db *r = rd_open_reader(dir, NULL);
    tu_put(w, 0, "b", "2");
    TU_OK(ravel_flush(w, 0));
    TU_OK(ravel_close(w));
    uint64_t *numbers = NULL;
    int n = tu_dir_sst_numbers(dir, &numbers);
    assert_true(n >= 2);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%06llu.sst", dir,
             (unsigned long long)numbers[n - 1]); /* the newest: b's */
    assert_int_equal(truncate(path, 100), 0);
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_catch_up(r));
    assert_non_null(strstr(ravel_errmsg(), path));
    tu_expect(r, NULL, "a", "1"); /* its state as it was */
    tu_expect(r, NULL, "b", NULL);
    ravel_db *r2 = NULL;
    ravel_options *o = tu_options("read_only=true");
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_open(dir, o, &r2));
    assert_non_null(strstr(ravel_errmsg(), path));
    ravel_options_free(o);
    TU_OK(ravel_close(r));
    free(numbers);
    free(dir);
}

static const struct crash_role roles[] = {
    {"writer", rd_writer_main, sizeof(struct rd_args)},
    {"reader", rd_reader_main, sizeof(struct rd_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_without_writer),
        cmocka_unit_test(test_promotion),
        cmocka_unit_test(test_prepared_invisible),
        cmocka_unit_test(test_manual_wal_flush),
        cmocka_unit_test(test_auto_catch_up),
        cmocka_unit_test(test_reader_damage),
        cmocka_unit_test(test_live_readers),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
