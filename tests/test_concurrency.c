/*
** test_concurrency.c -- many writers and readers on one database:
**   - 32 threads writing thousands of batches with mixed flags (RAVEL_SYNC,
**     none, RAVEL_NO_WAL) while memtables switch: afterwards every key
**     reads back, sequence numbers are dense (last_sequence equals the
**     number of operations), and the WAL'd writes survive a reopen;
**   - atomic batches and immutable snapshots: writers set K keys to one
**     value per batch; readers (snapshot gets, iterators on snapshots and
**     on the latest state) never see a mix of two batches, and re-reading a
**     snapshot or an iterator gives the same answers, even after many
**     memtable switches.
** Sized by RAVEL_TEST_SCALE (percent; default 100, 15 under sanitizers).  Suite 'concurrency',
** which CI also runs under TSan.
*/
#include "testutil.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sanitizers make every operation many times slower: smaller runs. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
# define DEFAULT_SCALE 15
#else
# define DEFAULT_SCALE 100
#endif

static uint64_t scale(uint64_t n)
{
    uint64_t pct = tu_env_u64("RAVEL_TEST_SCALE", DEFAULT_SCALE);
    uint64_t v = n * pct / 100;
    return v ? v : 1;
}

/* ------------------------------------------------------- many writers */

#define MW_THREADS 32

struct mw_ctx {
    ravel_db *db;
    int batches;          /* per thread */
    atomic_uint_fast64_t ops;
};

static int mw_batch_size(int t, int i)
{
    return 1 + (t * 7 + i * 13) % 8;
}

static int mw_flags(int i)
{
    if (i % 50 == 0)
        return RAVEL_SYNC;
    if (i % 7 == 3)
        return RAVEL_NO_WAL;
    return 0;
}

/* Batch I of thread T deletes key (T, I-1, 0) after it when I % 10 == 5. */
static int mw_deletes_prev(int i)
{
    return i % 10 == 5;
}

static int mw_key(char *buf, size_t size, int t, int i, int j)
{
    return snprintf(buf, size, "t%02d-b%06d-o%d", t, i, j);
}

static int mw_val(char *buf, size_t size, int t, int i, int j)
{
    return snprintf(buf, size, "value-%d-%d-%d-%0*d", t, i, j,
                    (t + i + j) % 48, 0);
}

struct mw_arg {
    struct mw_ctx *ctx;
    int t;
};

static void *mw_writer(void *p)
{
    struct mw_arg *a = p;
    struct mw_ctx *c = a->ctx;
    ravel_batch *b = NULL;
    if (ravel_batch_new(&b) != RAVEL_OK) {
        tu_thread_fail("batch_new: %s", ravel_errmsg());
        return NULL;
    }
    char key[64], val[128];
    uint64_t ops = 0;
    for (int i = 0; i < c->batches; i++) {
        int n = mw_batch_size(a->t, i);
        int flags = mw_flags(i);
        int rc;
        if (n == 1) {
            int kl = mw_key(key, sizeof key, a->t, i, 0);
            int vl = mw_val(val, sizeof val, a->t, i, 0);
            rc = ravel_put(c->db, flags, key, (size_t)kl, val, (size_t)vl);
        } else {
            ravel_batch_clear(b);
            for (int j = 0; j < n; j++) {
                int kl = mw_key(key, sizeof key, a->t, i, j);
                int vl = mw_val(val, sizeof val, a->t, i, j);
                if (ravel_batch_put(b, key, (size_t)kl, val, (size_t)vl)) {
                    tu_thread_fail("batch_put: %s", ravel_errmsg());
                    goto out;
                }
            }
            rc = ravel_write(c->db, flags, b);
        }
        if (rc != RAVEL_OK) {
            tu_thread_fail("thread %d batch %d (flags %d): %s: %s", a->t, i,
                           flags, ravel_errstr(rc), ravel_errmsg());
            goto out;
        }
        ops += (uint64_t)n;
        if (mw_deletes_prev(i)) {
            int kl = mw_key(key, sizeof key, a->t, i - 1, 0);
            rc = ravel_delete(c->db, 0, key, (size_t)kl);
            if (rc != RAVEL_OK) {
                tu_thread_fail("thread %d delete: %s: %s", a->t,
                               ravel_errstr(rc), ravel_errmsg());
                goto out;
            }
            ops++;
        }
    }
out:
    atomic_fetch_add_explicit(&c->ops, ops, memory_order_relaxed);
    ravel_batch_free(b);
    return NULL;
}

/* Checks every key of the run, in one pass of an iterator in key order
** (the keys are generated in that order), and every 13th key with a get
** too.  AFTER_REOPEN: after a clean close, which flushes RAVEL_NO_WAL
** writes, every key must be there all the same. */
static void mw_verify(ravel_db *db, int batches, int after_reopen)
{
    char key[64], val[128];
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_OK(ravel_iter_seek_to_first(it));
    uint64_t n_checked = 0;
    for (int t = 0; t < MW_THREADS; t++) {
        for (int i = 0; i < batches; i++) {
            int n = mw_batch_size(t, i);
            int no_wal = mw_flags(i) & RAVEL_NO_WAL;
            int deleted = i + 1 < batches && mw_deletes_prev(i + 1);
            for (int j = 0; j < n; j++) {
                int kl = mw_key(key, sizeof key, t, i, j);
                int vl = mw_val(val, sizeof val, t, i, j);
                int gone = deleted && j == 0;
                int optional = 0;
                (void)no_wal;
                (void)after_reopen;
                size_t ikl = 0, ivl = 0;
                const char *ik = ravel_iter_key(it, &ikl);
                const char *iv = ravel_iter_value(it, &ivl);
                int here = ik && ikl == (size_t)kl && !memcmp(ik, key, ikl);
                if (gone && here)
                    fail_msg("deleted key %s is still there", key);
                if (!gone && !here && !optional)
                    fail_msg("expected key %s next, the iterator is at "
                             "%.*s", key, (int)ikl, ik ? ik : "(end)");
                if (here) {
                    if (ivl != (size_t)vl || memcmp(iv, val, ivl) != 0)
                        fail_msg("key %s: wrong value %.*s", key, (int)ivl,
                                 iv);
                    TU_OK(ravel_iter_next(it));
                }
                if (n_checked++ % 13 == 0 && !optional)
                    tu_expect(db, NULL, key, gone ? NULL : val);
            }
        }
    }
    if (ravel_iter_valid(it)) {
        size_t ikl = 0;
        const char *ik = ravel_iter_key(it, &ikl);
        fail_msg("unexpected key %.*s after all written keys", (int)ikl, ik);
    }
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);
}

/* 1 if DB runs with write_prepared (RAVEL_TEST_OPTIONS), whose commits
** take sequence numbers too. */
static int prepared_mode(ravel_db *db)
{
    char *mode = tu_prop(db, "ravel.write-ordering");
    int prepared = strcmp(mode, "write-prepared") == 0;
    ravel_free(mode);
    return prepared;
}

static void many_writers(const char *name, const char *opts, int batches)
{
    char *dir = tu_path("%s", name);
    ravel_db *db = tu_open_ok(dir, opts);
    struct mw_ctx c = {.db = db, .batches = batches};
    atomic_init(&c.ops, 0);
    pthread_t th[MW_THREADS];
    struct mw_arg args[MW_THREADS];
    for (int t = 0; t < MW_THREADS; t++) {
        args[t].ctx = &c;
        args[t].t = t;
        assert_int_equal(pthread_create(&th[t], NULL, mw_writer, &args[t]),
                         0);
    }
    for (int t = 0; t < MW_THREADS; t++)
        pthread_join(th[t], NULL);
    tu_assert_no_thread_failures();

    /* Dense and unique: one sequence number per operation, no gaps --
    ** but for write_prepared, whose commit groups take one each. */
    uint64_t ops = atomic_load(&c.ops);
    if (prepared_mode(db)) {
        assert_true(tu_prop_u64(db, "ravel.last-sequence") > ops);
        assert_int_equal(tu_prop_u64(db, "ravel.last-visible-sequence"),
                         tu_prop_u64(db, "ravel.last-sequence"));
    } else {
        assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), ops);
        assert_int_equal(tu_prop_u64(db, "ravel.last-visible-sequence"),
                         ops);
    }
    char *stats = tu_prop(db, "ravel.stats");
    printf("# %s: %" PRIu64 " operations; ravel.stats:\n%s\n", name, ops,
           stats);
    ravel_free(stats);
    mw_verify(db, batches, 0);
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, opts);
    mw_verify(db, batches, 1);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

static void test_many_writers(void **state)
{
    (void)state;
    many_writers("many-writers", "write_buffer_size=1M",
                 (int)scale(2000));
}

/* The leader inserting the whole group, small group caps, tiny memtables. */
static void test_many_writers_leader_inserts(void **state)
{
    (void)state;
    many_writers("many-writers-leader",
                 "allow_concurrent_memtable_write=false;"
                 "unordered_write=false;two_write_queues=false;"
                 "write_policy=write_committed;in_order_publication=false;"
                 /* a leader inserts: the ordered mode */
                 "max_write_batch_group_size_bytes=4K;"
                 "write_buffer_size=128K", (int)scale(300));
}

/* ------------------------------------------- atomic batches, snapshots */

#define AT_GROUPS 4
#define AT_KEYS 8
#define AT_WRITERS 6
#define AT_READERS 4
#define AT_VAL_MAX 160

struct at_ctx {
    ravel_db *db;
    int batches;                  /* per writer */
    atomic_int writers_done;
    atomic_uint_fast64_t reads;   /* consistent group reads, for the log */
};

/* One group's state as one reader saw it. */
struct at_view {
    int present;                  /* 1: all keys present, 0: all absent */
    char val[AT_VAL_MAX];
    size_t len;
};

static int at_key(char *buf, size_t size, int g, int k)
{
    return snprintf(buf, size, "group%d-key%d", g, k);
}

static int at_val(char *buf, size_t size, int w, int i)
{
    /* ~110 bytes, so that a 64K memtable switches every ~60 batches. */
    return snprintf(buf, size, "w%02d-%06d-%090d", w, i, i);
}

static void *at_writer(void *p)
{
    struct at_ctx *c = ((void **)p)[0];
    int w = (int)(intptr_t)((void **)p)[1];
    ravel_batch *b = NULL;
    if (ravel_batch_new(&b)) {
        tu_thread_fail("batch_new: %s", ravel_errmsg());
        return NULL;
    }
    char key[32], val[AT_VAL_MAX];
    for (int i = 1; i <= c->batches && !tu_thread_failures(); i++) {
        int g = (w + i) % AT_GROUPS;
        int vl = at_val(val, sizeof val, w, i);
        ravel_batch_clear(b);
        for (int k = 0; k < AT_KEYS; k++) {
            int kl = at_key(key, sizeof key, g, k);
            int rc = i % 17 == 0 ? ravel_batch_delete(b, key, (size_t)kl)
                     : ravel_batch_put(b, key, (size_t)kl, val, (size_t)vl);
            if (rc)
                tu_thread_fail("batch op: %s", ravel_errmsg());
        }
        int flags = i % 40 == 0 ? RAVEL_SYNC : i % 5 == 2 ? RAVEL_NO_WAL : 0;
        int rc = ravel_write(c->db, flags, b);
        if (rc) {
            tu_thread_fail("writer %d batch %d: %s: %s", w, i,
                           ravel_errstr(rc), ravel_errmsg());
            break;
        }
    }
    ravel_batch_free(b);
    atomic_fetch_add(&c->writers_done, 1);
    return NULL;
}

/* Reads the K keys of group G through SNAP; returns 0 and fills *V if they
** agree, -1 (after reporting) if they are a mix. */
static int at_read_group(ravel_db *db, const ravel_snapshot *snap, int g,
                         struct at_view *v, const char *how)
{
    char key[32];
    for (int k = 0; k < AT_KEYS; k++) {
        int kl = at_key(key, sizeof key, g, k);
        void *val = NULL;
        size_t vlen = 0;
        int rc = ravel_get(db, snap, key, (size_t)kl, &val, &vlen);
        if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND) {
            tu_thread_fail("%s: get %s: %s: %s", how, key, ravel_errstr(rc),
                           ravel_errmsg());
            return -1;
        }
        int present = rc == RAVEL_OK;
        if (k == 0) {
            v->present = present;
            v->len = present ? vlen : 0;
            if (present && vlen <= AT_VAL_MAX)
                memcpy(v->val, val, vlen);
        } else if (present != v->present
                   || (present && (vlen != v->len
                                   || memcmp(val, v->val, vlen) != 0))) {
            tu_thread_fail("%s: group %d is a mix of batches: key0 %s "
                           "\"%.12s\", key%d %s \"%.12s\"", how, g,
                           v->present ? "=" : "absent", v->val, k,
                           present ? "=" : "absent",
                           present ? (char *)val : "");
            ravel_free(val);
            return -1;
        }
        ravel_free(val);
    }
    return 0;
}

static int at_view_equal(const struct at_view *a, const struct at_view *b)
{
    return a->present == b->present && a->len == b->len
           && memcmp(a->val, b->val, a->len) == 0;
}

/* Reads every group through an iterator, forward or backward, checking
** that each group's K keys agree.  Returns 0 or -1. */
static int at_scan(ravel_iter *it, int backward, struct at_view *views,
                   const char *how)
{
    int seen[AT_GROUPS] = {0};
    for (int g = 0; g < AT_GROUPS; g++)
        views[g].present = 0, views[g].len = 0;
    int rc = backward ? ravel_iter_seek_to_last(it)
                      : ravel_iter_seek_to_first(it);
    while (rc == RAVEL_OK && ravel_iter_valid(it)) {
        size_t kl, vl;
        const char *k = ravel_iter_key(it, &kl);
        const char *v = ravel_iter_value(it, &vl);
        int g = -1;
        if (kl > 5 && memcmp(k, "group", 5) == 0)
            g = k[5] - '0';
        if (g < 0 || g >= AT_GROUPS || vl > AT_VAL_MAX) {
            tu_thread_fail("%s: unexpected key %.*s", how, (int)kl, k);
            return -1;
        }
        if (seen[g]++ == 0) {
            views[g].present = 1;
            views[g].len = vl;
            memcpy(views[g].val, v, vl);
        } else if (vl != views[g].len || memcmp(v, views[g].val, vl) != 0) {
            tu_thread_fail("%s: group %d is a mix of batches (%.12s vs "
                           "%.12s)", how, g, views[g].val, v);
            return -1;
        }
        rc = backward ? ravel_iter_prev(it) : ravel_iter_next(it);
    }
    if (rc == RAVEL_OK)
        rc = ravel_iter_status(it);
    if (rc) {
        tu_thread_fail("%s: iterator: %s: %s", how, ravel_errstr(rc),
                       ravel_errmsg());
        return -1;
    }
    for (int g = 0; g < AT_GROUPS; g++) {
        if (seen[g] != 0 && seen[g] != AT_KEYS) {
            tu_thread_fail("%s: group %d has %d of its %d keys", how, g,
                           seen[g], AT_KEYS);
            return -1;
        }
    }
    return 0;
}

/* Per reader: for each group and writer, the newest counter seen.  Reads
** at later states must never go back to an older batch of that writer. */
struct at_progress {
    int last[AT_GROUPS][AT_WRITERS];
};

static int at_check_progress(struct at_progress *pr,
                             const struct at_view *views, const char *how)
{
    for (int g = 0; g < AT_GROUPS; g++) {
        if (!views[g].present)
            continue;
        int w = -1, i = -1;
        if (sscanf(views[g].val, "w%d-%d", &w, &i) != 2 || w < 0
            || w >= AT_WRITERS) {
            tu_thread_fail("%s: bad value %.20s", how, views[g].val);
            return -1;
        }
        if (i < pr->last[g][w]) {
            tu_thread_fail("%s: group %d went back from writer %d's batch %d "
                           "to its batch %d", how, g, w, pr->last[g][w], i);
            return -1;
        }
        pr->last[g][w] = i;
    }
    return 0;
}

static void *at_reader(void *p)
{
    struct at_ctx *c = ((void **)p)[0];
    int r = (int)(intptr_t)((void **)p)[1];
    ravel_db *db = c->db;
    struct at_progress pr;
    memset(&pr, 0, sizeof pr);
    uint64_t last_seq = 0;
    ravel_snapshot *held = NULL; /* kept for the whole run */
    struct at_view held_views[AT_GROUPS];
    ravel_iter *held_it = NULL;
    struct at_view held_it_views[AT_GROUPS];
    uint64_t reads = 0;

    for (int round = 0; !tu_thread_failures(); round++) {
        int done = atomic_load(&c->writers_done) == AT_WRITERS;
        if (done && round > 20)
            break;
        struct at_view v1[AT_GROUPS], v2[AT_GROUPS], v3[AT_GROUPS];
        ravel_snapshot *s = NULL;
        int rc = ravel_snapshot_acquire(db, &s);
        if (rc) {
            tu_thread_fail("snapshot: %s", ravel_errmsg());
            break;
        }
        uint64_t seq = ravel_snapshot_sequence(s);
        TU_CHECK(seq >= last_seq, "snapshot sequence went back from %" PRIu64
                 " to %" PRIu64, last_seq, seq);
        last_seq = seq;

        /* Snapshot gets; the same again; an iterator on the snapshot. */
        int bad = 0;
        for (int g = 0; g < AT_GROUPS && !bad; g++)
            bad = at_read_group(db, s, g, &v1[g], "snapshot get");
        if (!bad)
            bad = at_check_progress(&pr, v1, "snapshot get");
        for (int g = 0; g < AT_GROUPS && !bad; g++) {
            bad = at_read_group(db, s, g, &v2[g], "snapshot re-read");
            if (!bad && !at_view_equal(&v1[g], &v2[g])) {
                tu_thread_fail("snapshot %" PRIu64 ": group %d read "
                               "\"%.12s\", then \"%.12s\"", seq, g,
                               v1[g].val, v2[g].val);
                bad = 1;
            }
        }
        if (!bad && (round + r) % 2 == 0) {
            ravel_iter *it = NULL;
            if (ravel_iter_new(db, s, &it)) {
                tu_thread_fail("iter_new: %s", ravel_errmsg());
                bad = 1;
            } else {
                bad = at_scan(it, round % 4 == 0, v3, "snapshot iterator");
                for (int g = 0; g < AT_GROUPS && !bad; g++) {
                    if (!at_view_equal(&v1[g], &v3[g])) {
                        tu_thread_fail("snapshot %" PRIu64 ": group %d: get "
                                       "\"%.12s\", iterator \"%.12s\"", seq,
                                       g, v1[g].val, v3[g].val);
                        bad = 1;
                    }
                }
                ravel_iter_free(it);
            }
        }
        if (!bad && !held && round == 10 + r) {
            held = s;
            memcpy(held_views, v1, sizeof v1);
            s = NULL;
        }
        if (s)
            ravel_snapshot_release(db, s);
        if (bad)
            break;

        /* An iterator on the latest state, scanned twice both ways. */
        if ((round + r) % 3 == 0) {
            ravel_iter *it = NULL;
            if (ravel_iter_new(db, NULL, &it)) {
                tu_thread_fail("iter_new: %s", ravel_errmsg());
                break;
            }
            bad = at_scan(it, 0, v1, "latest iterator");
            if (!bad)
                bad = at_check_progress(&pr, v1, "latest iterator");
            sched_yield();
            if (!bad)
                bad = at_scan(it, 1, v2, "latest iterator backward");
            for (int g = 0; g < AT_GROUPS && !bad; g++) {
                if (!at_view_equal(&v1[g], &v2[g])) {
                    tu_thread_fail("iterator changed under writes: group %d "
                                   "\"%.12s\" then \"%.12s\"", g, v1[g].val,
                                   v2[g].val);
                    bad = 1;
                }
            }
            if (!bad && !held_it && round == 30 + r) {
                held_it = it;
                memcpy(held_it_views, v1, sizeof v1);
                it = NULL;
            }
            ravel_iter_free(it);
            if (bad)
                break;
        }
        if (r == 0 && round % 16 == 0) {
            char *t = NULL;
            if (ravel_property(db, "ravel.stats", &t) == RAVEL_OK)
                ravel_free(t);
            else
                tu_thread_fail("ravel.stats: %s", ravel_errmsg());
        }
        reads += AT_GROUPS;
        /* Leave the writers some CPU on small machines. */
        sched_yield();
    }

    /* After the writers are done, the held snapshot and iterator still read
    ** what they read at the start. */
    if (held) {
        struct at_view now[AT_GROUPS];
        for (int g = 0; g < AT_GROUPS; g++) {
            if (at_read_group(db, held, g, &now[g], "held snapshot"))
                break;
            TU_CHECK(at_view_equal(&now[g], &held_views[g]),
                     "held snapshot %" PRIu64 ": group %d was \"%.12s\", now "
                     "\"%.12s\"", ravel_snapshot_sequence(held), g,
                     held_views[g].val, now[g].val);
        }
        ravel_snapshot_release(db, held);
    }
    if (held_it) {
        struct at_view now[AT_GROUPS];
        if (!at_scan(held_it, 0, now, "held iterator")) {
            for (int g = 0; g < AT_GROUPS; g++)
                TU_CHECK(at_view_equal(&now[g], &held_it_views[g]),
                         "held iterator: group %d was \"%.12s\", now "
                         "\"%.12s\"", g, held_it_views[g].val, now[g].val);
        }
        ravel_iter_free(held_it);
    }
    atomic_fetch_add(&c->reads, reads);
    return NULL;
}

static void atomic_batches(const char *name, const char *opts, int batches)
{
    char *dir = tu_path("%s", name);
    ravel_db *db = tu_open_ok(dir, opts);
    struct at_ctx c = {.db = db, .batches = batches};
    atomic_init(&c.writers_done, 0);
    atomic_init(&c.reads, 0);
    pthread_t wt[AT_WRITERS], rt[AT_READERS];
    void *wargs[AT_WRITERS][2], *rargs[AT_READERS][2];
    for (int r = 0; r < AT_READERS; r++) {
        rargs[r][0] = &c;
        rargs[r][1] = (void *)(intptr_t)r;
        assert_int_equal(pthread_create(&rt[r], NULL, at_reader, rargs[r]),
                         0);
    }
    for (int w = 0; w < AT_WRITERS; w++) {
        wargs[w][0] = &c;
        wargs[w][1] = (void *)(intptr_t)w;
        assert_int_equal(pthread_create(&wt[w], NULL, at_writer, wargs[w]),
                         0);
    }
    for (int w = 0; w < AT_WRITERS; w++)
        pthread_join(wt[w], NULL);
    for (int r = 0; r < AT_READERS; r++)
        pthread_join(rt[r], NULL);
    tu_assert_no_thread_failures();

    /* The point of the small write buffer: switches happened mid-test. */
    char *stats = tu_prop(db, "ravel.stats");
    unsigned long long switches = 0;
    const char *at = strstr(stats, " immutable, ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, " immutable, %llu switches", &switches), 1);
    ravel_free(stats);
    uint64_t imm = switches;
    printf("# %s: %" PRIu64 " group reads, %" PRIu64 " memtables switched "
           "out (waiting for their flush, or flushed)\n",
           name, (uint64_t)atomic_load(&c.reads), imm);
    assert_true(imm >= 2);
    if (!prepared_mode(db)) /* commits take sequences of their own */
        assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"),
                         (uint64_t)AT_WRITERS * (uint64_t)batches * AT_KEYS);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

static void test_atomic_batches_and_snapshots(void **state)
{
    (void)state;
    atomic_batches("atomic", "write_buffer_size=64K", (int)scale(2000));
}

static void test_atomic_batches_leader_inserts(void **state)
{
    (void)state;
    atomic_batches("atomic-leader", "write_buffer_size=64K;"
                   "allow_concurrent_memtable_write=false;"
                   "unordered_write=false;two_write_queues=false;"
                   "write_policy=write_committed;in_order_publication=false",
                   (int)scale(1000));
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_writers),
        cmocka_unit_test(test_many_writers_leader_inserts),
        cmocka_unit_test(test_atomic_batches_and_snapshots),
        cmocka_unit_test(test_atomic_batches_leader_inserts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
