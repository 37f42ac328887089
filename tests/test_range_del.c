/*
** test_range_del.c -- range deletes (ravel_delete_range and its batch and
** transaction forms, issue 24 part 1).
**
**   api        argument checks (BEGIN after END is RAVEL_INVALID with a
**              message, BEGIN == END a no-op), the batch form read back
**              with ravel_batch_next_op (RAVEL_OP_DELETE_RANGE, begin as
**              key, end as value), the transaction form refused, and a
**              plain range delete refused once a transaction has begun.
**   model_*    random puts, deletes and range deletes (one op or a batch of
**              up to four) against an in-memory model, with up to three
**              snapshots held (each with the model's copy of its moment)
**              and released, flushes, compactions and reopens; after every
**              few ops, for the latest state and every snapshot: a get of
**              every key, a full forward and a full reverse iteration,
**              and random seeks and seek_for_prevs followed by a step each
**              way.  In every ordering mode (default, unordered_write,
**              in_order_publication, write_prepared).
**   kill9      a child writes synced batches holding range deletes and is
**              killed with SIGKILL; after the reopen the database is the
**              model after every acknowledged batch (or one more: the one
**              in flight), checked by gets and a scan.
**   powerloss  the same with a power loss after the kill, in every pattern
**              of powerloss.h (unsynced bytes taken away as a power loss
**              may): every acknowledged (synced) batch survives.
**   kill9_busy, powerloss_busy  the same with a child that flushes every
**              seven batches and compacts level 0 at two files, so the
**              kill (and the power loss) lands in flushes writing range
**              tombstones into table files and compactions carrying,
**              cutting and dropping them.
**   reader     a read_only handle in another process (a child) beside the
**              live writer sees a range delete written after it opened
**              (ravel_catch_up replays it from the WAL), in gets and its
**              iterator, and the change feed hands it out as
**              RAVEL_OP_DELETE_RANGE.
**   concurrent two writers each fill a group of ten keys in one batch and
**              delete it with one range delete, over and over, with small
**              memtables (flushes write the range deletes into table
**              files meanwhile); two readers check through snapshots,
**              gets and iterators that a group is always whole or gone.
**              (Not with unordered_write alone: a batch is not atomic to
**              readers there, docs/ordering.md.)
**   ingest     a file ingested over keys a memtable range delete covers
**              keeps its keys (it is newer), the rest stay deleted, across
**              a flush, a compaction and a reopen.
**   repair     ravel_repair of a database killed with a range delete in its
**              WAL only: the salvaged range delete still hides the table
**              keys it covers, a later put stays.
**   tables_reads  (range tombstones in table files: flushes write them
**              into the range-deletion block; here nothing compacts) a
**              file holding
**              only a tombstone over an older file's keys: gets (its filter
**              holds no key, so the tombstone must be seen before the
**              filter skips the file), multi_get, both iterator directions,
**              a snapshot from before it; a put after it; a file holding
**              puts older and newer than its own tombstone; a reopen; a
**              read_only handle.
**   model_tables the model check again with 64 KiB files
**              (target_file_size_base); with the model_* tests above,
**              whose flushes and compactions write range tombstones into
**              table files too, it checks that compactions carry them down
**              and drop what they hide from every reader, gets and
**              iterators read them at every level; again with
**              write_prepared (model_tables_prepared: versions some
**              reader may not see are neither dropped nor hide).
**   tables_cut (step 2) 6,000 keys over files of 64 KiB
**              (target_file_size_base), range deletes spanning many of
**              them, puts after one over more than a file, a snapshot
**              before them, compacted
**              to the last level twice: the tombstones are cut into
**              several files, a level's files stay disjoint (internal
**              keys: a cut tombstone ends at the sentinel of the next
**              file's first key), and every get, both full scans and the
**              snapshot agree with the model, before and after a reopen;
**              with the snapshot held nothing it needs is dropped, once
**              released the last compaction drops the covered versions
**              and the tombstones (the files hold the live keys alone).
**   tables_repair (step 3) ravel_repair of a database whose newest file
**              holds a tombstone (a version-2 file) over an older file's
**              keys: the tombstone still hides them after the repair, a
**              put after it stays; with its range-deletion block damaged,
**              the report says the tombstones are lost.
**   tables_ingest (step 3) a file ingested over keys a table's tombstone
**              covers keeps its keys (it is newer), the rest stay deleted,
**              across a flush, a compaction and a reopen.
**   feed_flush after a flush wrote the range delete into a table (over
**              keys already in a table), gets, iterators,
**              a snapshot taken before it (across compactions) and a
**              reopen agree with the model; a put after the range delete
**              survives it.
*/
#include "testutil.h"
#include "crash_harness.h"
#include "powerloss.h"
#include "db/db.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "table/sst_writer.h"
#include "table/table_builder.h"
#include "util/coding.h"

#include <fcntl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>

#define NK 40

#define MODE_UNORDERED "unordered_write=true"
#define MODE_IN_ORDER "unordered_write=true;in_order_publication=true"
#define MODE_PREPARED "unordered_write=true;two_write_queues=true;" \
                      "write_policy=write_prepared"

struct model {
    int has[NK];
    char val[NK][24];
};

static void key_of(int i, char *buf)
{
    snprintf(buf, 8, "k%03d", i);
}

/* ------------------------------------------------------- the ops */

/* One op of a batch, drawn from the generator. */
struct op {
    int kind; /* 0 put, 1 delete, 2 range delete */
    int a, b; /* key, or [a, b) */
    char val[24];
};

static void op_draw(uint64_t *rng, uint64_t serial, struct op *o)
{
    uint64_t r = tu_rand(rng) % 10;
    o->kind = r < 6 ? 0 : r < 8 ? 1 : 2;
    o->a = (int)(tu_rand(rng) % NK);
    o->b = o->a + (int)(tu_rand(rng) % 12); /* may be == a: empty */
    if (o->b > NK)
        o->b = NK;
    snprintf(o->val, sizeof o->val, "v%llu", (unsigned long long)serial);
}

static void model_apply(struct model *m, const struct op *o)
{
    if (o->kind == 0) {
        m->has[o->a] = 1;
        memcpy(m->val[o->a], o->val, sizeof o->val);
    } else if (o->kind == 1) {
        m->has[o->a] = 0;
    } else {
        for (int i = o->a; i < o->b; i++)
            m->has[i] = 0;
    }
}

static int batch_add(ravel_batch *b, const struct op *o)
{
    char k[8], e[8];
    key_of(o->a, k);
    if (o->kind == 0)
        return ravel_batch_put(b, k, 4, o->val, strlen(o->val));
    if (o->kind == 1)
        return ravel_batch_delete(b, k, 4);
    key_of(o->b, e); /* NK itself: "k040", past every key */
    return ravel_batch_delete_range(b, k, 4, e, 4);
}

static int op_write(ravel_db *db, int flags, const struct op *o)
{
    char k[8], e[8];
    key_of(o->a, k);
    if (o->kind == 0)
        return ravel_put(db, flags, k, 4, o->val, strlen(o->val));
    if (o->kind == 1)
        return ravel_delete(db, flags, k, 4);
    key_of(o->b, e);
    return ravel_delete_range(db, flags, k, 4, e, 4);
}

/* ------------------------------------------------------ the checks */

/* Where SNAP's reads differ from M, fails the test naming WHAT. */
static void check_gets(ravel_db *db, const ravel_snapshot *snap,
                       const struct model *m, const char *what)
{
    for (int i = 0; i < NK; i++) {
        char k[8];
        key_of(i, k);
        void *v = NULL;
        size_t vl = 0;
        int rc = ravel_get(db, snap, k, 4, &v, &vl);
        if (m->has[i]) {
            if (rc != RAVEL_OK)
                fail_msg("%s: get %s returned %d (%s), expected %s", what, k,
                         rc, ravel_errmsg(), m->val[i]);
            if (vl != strlen(m->val[i]) || memcmp(v, m->val[i], vl) != 0)
                fail_msg("%s: get %s = %.*s, expected %s", what, k, (int)vl,
                         (char *)v, m->val[i]);
        } else if (rc != RAVEL_NOTFOUND) {
            fail_msg("%s: get %s returned %d (%.*s), expected not found "
                     "(deleted)", what, k, rc, rc ? 0 : (int)vl,
                     rc ? "" : (char *)v);
        }
        ravel_free(v);
    }
}

/* The key index of IT's key, checking its value against M. */
static int iter_index(ravel_iter *it, const struct model *m, const char *what)
{
    size_t kl, vl;
    const char *k = ravel_iter_key(it, &kl);
    const char *v = ravel_iter_value(it, &vl);
    if (kl != 4 || k[0] != 'k')
        fail_msg("%s: iterator shows a foreign key", what);
    char digits[4] = {k[1], k[2], k[3], 0}; /* K is not NUL-terminated */
    int i = atoi(digits);
    if (i < 0 || i >= NK || !m->has[i])
        fail_msg("%s: iterator shows k%03d, which is deleted", what, i);
    if (vl != strlen(m->val[i]) || memcmp(v, m->val[i], vl) != 0)
        fail_msg("%s: iterator shows k%03d = %.*s, expected %s", what, i,
                 (int)vl, v, m->val[i]);
    return i;
}

/* The first present key at or after I (NK: none) and at or before I (-1). */
static int model_next(const struct model *m, int i)
{
    while (i < NK && !m->has[i])
        i++;
    return i;
}
static int model_prev(const struct model *m, int i)
{
    while (i >= 0 && !m->has[i])
        i--;
    return i;
}

static void expect_at(ravel_iter *it, const struct model *m, int want,
                      const char *what, const char *move)
{
    if (want < 0 || want >= NK) {
        if (ravel_iter_valid(it))
            fail_msg("%s: after %s the iterator is valid, expected at the "
                     "end", what, move);
        TU_OK(ravel_iter_status(it));
        return;
    }
    if (!ravel_iter_valid(it))
        fail_msg("%s: after %s the iterator is not valid, expected "
                 "k%03d (%s)", what, move, want, ravel_errmsg());
    int got = iter_index(it, m, what);
    if (got != want)
        fail_msg("%s: after %s the iterator is at k%03d, expected k%03d",
                 what, move, got, want);
}

static void check_iter(ravel_db *db, const ravel_snapshot *snap,
                       const struct model *m, uint64_t *rng,
                       const char *what)
{
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, snap, &it));
    int want = model_next(m, 0);
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        expect_at(it, m, want, what, "a forward step");
        want = model_next(m, want + 1);
    }
    expect_at(it, m, want, what, "the forward scan");
    want = model_prev(m, NK - 1);
    for (ravel_iter_seek_to_last(it); ravel_iter_valid(it);
         ravel_iter_prev(it)) {
        expect_at(it, m, want, what, "a reverse step");
        want = model_prev(m, want - 1);
    }
    expect_at(it, m, want, what, "the reverse scan");
    for (int s = 0; s < 6; s++) {
        int t = (int)(tu_rand(rng) % NK);
        char k[8];
        key_of(t, k);
        TU_OK(ravel_iter_seek(it, k, 4));
        int at = model_next(m, t);
        expect_at(it, m, at, what, "a seek");
        if (at < NK) {
            ravel_iter_prev(it);
            expect_at(it, m, model_prev(m, at - 1), what, "seek then prev");
        }
        TU_OK(ravel_iter_seek_for_prev(it, k, 4));
        at = model_prev(m, t);
        expect_at(it, m, at, what, "a seek_for_prev");
        if (at >= 0) {
            ravel_iter_next(it);
            expect_at(it, m, model_next(m, at + 1), what,
                      "seek_for_prev then next");
        }
    }
    ravel_iter_free(it);
}

/* ------------------------------------------------------------ api */

static void test_api(void **state)
{
    (void)state;
    char *dir = tu_path("api");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    tu_put(db, 0, "b", "2");
    tu_put(db, 0, "c", "3");
    TU_EXPECT_INVALID(ravel_delete_range(db, 0, "c", 1, "a", 1));
    TU_EXPECT_INVALID(ravel_delete_range(db, 0, NULL, 3, "a", 1));
    uint64_t before = tu_prop_u64(db, "ravel.last-sequence");
    TU_OK(ravel_delete_range(db, 0, "b", 1, "b", 1)); /* empty: no-op */
    assert_int_equal(tu_prop_u64(db, "ravel.last-sequence"), before);
    tu_expect(db, NULL, "b", "2");
    TU_OK(ravel_delete_range(db, 0, "a", 1, "c", 1));
    tu_expect(db, NULL, "a", NULL);
    tu_expect(db, NULL, "b", NULL);
    tu_expect(db, NULL, "c", "3");
    /* an empty begin is the smallest key */
    TU_OK(ravel_delete_range(db, 0, "", 0, "d", 1));
    tu_expect(db, NULL, "c", NULL);

    ravel_batch *b;
    TU_OK(ravel_batch_new(&b));
    TU_EXPECT_INVALID(ravel_batch_delete_range(b, "z", 1, "y", 1));
    TU_OK(ravel_batch_delete_range(b, "x", 1, "x", 1));
    assert_int_equal(ravel_batch_count(b), 0);
    TU_OK(ravel_batch_put(b, "p", 1, "v", 1));
    TU_OK(ravel_batch_delete_range(b, "m", 1, "q", 1));
    size_t pos = 0, kl, vl;
    int op;
    const void *k, *v;
    TU_OK(ravel_batch_next_op(b, &pos, &op, &k, &kl, &v, &vl));
    assert_int_equal(op, RAVEL_OP_PUT);
    TU_OK(ravel_batch_next_op(b, &pos, &op, &k, &kl, &v, &vl));
    assert_int_equal(op, RAVEL_OP_DELETE_RANGE);
    assert_true(kl == 1 && memcmp(k, "m", 1) == 0);
    assert_true(vl == 1 && memcmp(v, "q", 1) == 0);
    assert_int_equal(ravel_batch_next_op(b, &pos, &op, &k, &kl, &v, &vl),
                     RAVEL_NOTFOUND);
    /* through bytes and back */
    size_t len;
    const void *data = ravel_batch_data(b, &len);
    ravel_batch *copy;
    TU_OK(ravel_batch_from_data(data, len, &copy));
    TU_OK(ravel_write(db, 0, copy));
    tu_expect(db, NULL, "p", NULL); /* put, then range */
    ravel_batch_free(copy);
    ravel_batch_free(b);

    /* transactions: refused, and plain range deletes once one began */
    ravel_txn *t;
    TU_OK(ravel_txn_begin(db, 0, &t));
    TU_EXPECT_INVALID(ravel_txn_delete_range(t, "a", 1, "b", 1));
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    tu_put(db, 0, "r", "1");
    TU_EXPECT_INVALID(ravel_delete_range(db, 0, "a", 1, "z", 1));
    tu_expect(db, NULL, "r", "1");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ---------------------------------------------------------- model */

static int tables_with_tombstones(ravel_db *db);

/* With range tombstones in table files (the test hook). */
#define TABLES_OPTIONS ";target_file_size_base=65536"

struct snap_slot {
    ravel_snapshot *s;
    struct model m;
};

static void check_all(ravel_db *db, const struct model *m,
                      struct snap_slot *snaps, uint64_t *rng, int step)
{
    char what[96];
    snprintf(what, sizeof what, "step %d, latest", step);
    check_gets(db, NULL, m, what);
    check_iter(db, NULL, m, rng, what);
    for (int i = 0; i < 3; i++)
        if (snaps[i].s) {
            snprintf(what, sizeof what, "step %d, snapshot %d", step, i);
            check_gets(db, snaps[i].s, &snaps[i].m, what);
            check_iter(db, snaps[i].s, &snaps[i].m, rng, what);
        }
}

static void release_all(ravel_db *db, struct snap_slot *snaps)
{
    for (int i = 0; i < 3; i++)
        if (snaps[i].s) {
            TU_OK(ravel_snapshot_release(db, snaps[i].s));
            snaps[i].s = NULL;
        }
}

/* 1 (after a note) if the run's RAVEL_TEST_OPTIONS already choose an
** ordering mode: the variants run this program once per mode, and the
** default run is then that mode. */
static int mode_set_by_run(const char *name, const char *mode)
{
    const char *run = getenv("RAVEL_TEST_OPTIONS");
    if (!mode || !run || !*run)
        return 0;
    printf("%s: skipped, RAVEL_TEST_OPTIONS (%s) chose the mode\n", name,
           run);
    return 1;
}

/* TABLES: files of 64 KiB (target_file_size_base). */
static void model_run_in(const char *name, const char *mode, int tables)
{
    if (mode_set_by_run(name, mode))
        return;
    char *dir = tu_path("model-%s", name);
    /* small memtables: flushes come on their own too */
    char opts[384];
    snprintf(opts, sizeof opts, "write_buffer_size=65536%s%s%s",
             mode ? ";" : "", mode ? mode : "",
             tables ? TABLES_OPTIONS : "");
    ravel_db *db = tu_open_ok(dir, opts);
    uint64_t seed = tu_seed();
    uint64_t rng = seed;
    struct model m;
    memset(&m, 0, sizeof m);
    struct snap_slot snaps[3];
    memset(snaps, 0, sizeof snaps);
    int steps = (int)tu_env_u64("RAVEL_TEST_RANGE_DEL_STEPS", 3000);
    uint64_t serial = 0;
    int in_tables = 0; /* checks made with tombstones in table files */
    for (int step = 0; step < steps; step++) {
        uint64_t r = tu_rand(&rng) % 1000;
        if (r < 700) {
            struct op o;
            op_draw(&rng, ++serial, &o);
            TU_OK(op_write(db, 0, &o));
            model_apply(&m, &o);
        } else if (r < 850) {
            ravel_batch *b;
            TU_OK(ravel_batch_new(&b));
            int n = 1 + (int)(tu_rand(&rng) % 4);
            struct model next = m;
            for (int i = 0; i < n; i++) {
                struct op o;
                op_draw(&rng, ++serial, &o);
                TU_OK(batch_add(b, &o));
                model_apply(&next, &o);
            }
            TU_OK(ravel_write(db, 0, b));
            ravel_batch_free(b);
            m = next;
        } else if (r < 900) {
            int i = (int)(tu_rand(&rng) % 3);
            if (snaps[i].s) {
                TU_OK(ravel_snapshot_release(db, snaps[i].s));
                snaps[i].s = NULL;
            } else {
                TU_OK(ravel_snapshot_acquire(db, &snaps[i].s));
                snaps[i].m = m;
            }
        } else if (r < 940) {
            TU_OK(ravel_flush(db, 0));
        } else if (r < 970) {
            TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
        } else if (r < 980) {
            release_all(db, snaps);
            TU_OK(ravel_close(db));
            db = tu_open_ok(dir, opts);
        }
        if (step % 25 == 24) {
            check_all(db, &m, snaps, &rng, step);
            in_tables += tables_with_tombstones(db) > 0;
        }
    }
    check_all(db, &m, snaps, &rng, steps);
    /* the checks read tombstones in tables, not only in memtables (they
    ** come and go: compaction drops them at the bottom) */
    assert_true(in_tables > 0);
    release_all(db, snaps);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    check_all(db, &m, snaps, &rng, steps + 1);
    TU_OK(ravel_close(db));
    printf("model %s: %d steps, seed %llu\n", name, steps,
           (unsigned long long)seed);
    free(dir);
}

static void model_run(const char *name, const char *mode)
{
    model_run_in(name, mode, 0);
}

static void test_model_default(void **state)
{
    (void)state;
    model_run("default", NULL);
}
static void test_model_unordered(void **state)
{
    (void)state;
    model_run("unordered", MODE_UNORDERED);
}
static void test_model_in_order(void **state)
{
    (void)state;
    model_run("in-order", MODE_IN_ORDER);
}
static void test_model_prepared(void **state)
{
    (void)state;
    model_run("prepared", MODE_PREPARED);
}

static void test_model_tables(void **state)
{
    (void)state;
    model_run_in("tables", NULL, 1);
}
static void test_model_tables_prepared(void **state)
{
    (void)state;
    model_run_in("tables-prepared", MODE_PREPARED, 1);
}

/* ------------------------------------------------- tombstones in tables */

/* Table files of DB whose range-deletion block holds tombstones. */
static int tables_with_tombstones(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    int n = 0;
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < v->files->n[l]; i++) {
            const struct rv_range_frags *f;
            rv_cache_handle *h;
            TU_OK(rv_table_cache_range_frags(db->tables, v->files->level[l][i],
                                             &f, &h));
            n += f != NULL;
            if (h)
                rv_table_cache_release(db->tables, h);
        }
    rv_version_unref(v);
    return n;
}

/* multi_get of every key against M. */
static void check_multi_get(ravel_db *db, const struct model *m,
                            const char *what)
{
    char keys[NK][8];
    const void *kp[NK];
    size_t kl[NK], vl[NK];
    void *vals[NK];
    int rcs[NK];
    for (int i = 0; i < NK; i++) {
        key_of(i, keys[i]);
        kp[i] = keys[i];
        kl[i] = 4;
    }
    TU_OK(ravel_multi_get(db, NULL, NK, kp, kl, vals, vl, rcs));
    for (int i = 0; i < NK; i++) {
        if (m->has[i] && (rcs[i] != RAVEL_OK || vl[i] != strlen(m->val[i]) ||
                          memcmp(vals[i], m->val[i], vl[i]) != 0))
            fail_msg("%s: multi_get k%03d returned %d, expected %s", what, i,
                     rcs[i], m->val[i]);
        if (!m->has[i] && rcs[i] != RAVEL_NOTFOUND)
            fail_msg("%s: multi_get k%03d returned %d, expected not found",
                     what, i, rcs[i]);
        if (rcs[i] == RAVEL_OK)
            ravel_free(vals[i]);
    }
}

static void tables_check(ravel_db *db, const struct model *m,
                         const ravel_snapshot *snap, const struct model *sm,
                         uint64_t *rng, const char *what)
{
    check_gets(db, NULL, m, what);
    check_iter(db, NULL, m, rng, what);
    check_multi_get(db, m, what);
    if (snap) {
        check_gets(db, snap, sm, what);
        check_iter(db, snap, sm, rng, what);
    }
}

static void test_tables_reads(void **state)
{
    (void)state;
    char *dir = tu_path("tables-reads");
    /* level 0 only: no compaction may merge the files it looks at */
    const char *opts = "bloom_bits_per_key=10;disable_auto_compactions=true";
    ravel_db *db = tu_open_ok(dir, opts);
    uint64_t rng = tu_seed();
    struct model m;
    memset(&m, 0, sizeof m);
    /* an older file of every key */
    for (int i = 0; i < NK; i++) {
        struct op o = {.kind = 0, .a = i};
        snprintf(o.val, sizeof o.val, "old%d", i);
        TU_OK(op_write(db, 0, &o));
        model_apply(&m, &o);
    }
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(tables_with_tombstones(db), 0);
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    struct model before = m;
    /* a file holding nothing but a tombstone over keys 10..29 */
    struct op o = {.kind = 2, .a = 10, .b = 30};
    TU_OK(op_write(db, 0, &o));
    model_apply(&m, &o);
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(tables_with_tombstones(db), 1);
    tables_check(db, &m, snap, &before, &rng, "a tombstone-only file");
    /* a put after the tombstone, in a newer file */
    o = (struct op){.kind = 0, .a = 15};
    strcpy(o.val, "after");
    TU_OK(op_write(db, 0, &o));
    model_apply(&m, &o);
    TU_OK(ravel_flush(db, 0));
    tables_check(db, &m, snap, &before, &rng, "a put after the tombstone");
    /* one file: a put older than its tombstone and one newer */
    o = (struct op){.kind = 0, .a = 35};
    strcpy(o.val, "older");
    TU_OK(op_write(db, 0, &o));
    model_apply(&m, &o);
    o = (struct op){.kind = 2, .a = 33, .b = 38};
    TU_OK(op_write(db, 0, &o));
    model_apply(&m, &o);
    o = (struct op){.kind = 0, .a = 36};
    strcpy(o.val, "newer");
    TU_OK(op_write(db, 0, &o));
    model_apply(&m, &o);
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(tables_with_tombstones(db), 2);
    tables_check(db, &m, snap, &before, &rng, "puts around a tombstone");
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    assert_int_equal(tables_with_tombstones(db), 2);
    tables_check(db, &m, NULL, NULL, &rng, "after a reopen");
    TU_OK(ravel_close(db));
    /* a read_only handle (readers in other processes read as it does:
    ** tables opened from the descriptors it holds) */
    db = tu_open_ok(dir, "read_only=true");
    assert_int_equal(tables_with_tombstones(db), 2);
    tables_check(db, &m, NULL, NULL, &rng, "read_only");
    TU_OK(ravel_close(db));
    free(dir);
}

/* The entries (puts and deletions) of DB's table files. */
static uint64_t table_entries(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    uint64_t n = 0;
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < v->files->n[l]; i++)
            n += v->files->level[l][i]->meta.entries;
    rv_version_unref(v);
    return n;
}

/* 1 if the files of every level >= 1 of DB are sorted and disjoint by
** internal key (the sentinel of a cut tombstone included). */
static int levels_disjoint(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    int ok = 1;
    for (int l = 1; l < RV_NUM_LEVELS; l++)
        for (int i = 1; i < v->files->n[l]; i++) {
            const struct rv_file_meta *a = &v->files->level[l][i - 1]->meta;
            const struct rv_file_meta *b = &v->files->level[l][i]->meta;
            if (rv_ikey_compare(a->largest, a->largest_len, b->smallest,
                                b->smallest_len) >= 0)
                ok = 0;
        }
    rv_version_unref(v);
    return ok;
}

#define CUT_N 6000

static void cut_key(int i, char k[static 8])
{
    snprintf(k, 8, "t%05d", i % 100000);
}

/* Every key of the cut test against HAS (0: deleted, 1: its first value,
** 2: "after", put after the range deletes), by gets and both full scans. */
static void cut_check(ravel_db *db, const ravel_snapshot *snap,
                      const unsigned char *has, const char *what)
{
    for (int i = 0; i < CUT_N; i++) {
        char k[8];
        cut_key(i, k);
        void *v = NULL;
        size_t vl = 0;
        int rc = ravel_get(db, snap, k, 6, &v, &vl);
        if (has[i] && rc != RAVEL_OK)
            fail_msg("%s: get %s returned %d, expected a value", what, k, rc);
        if (!has[i] && rc != RAVEL_NOTFOUND)
            fail_msg("%s: get %s returned %d, expected not found", what, k,
                     rc);
        if (rc == RAVEL_OK &&
            (has[i] == 2) != (vl == 5 && memcmp(v, "after", 5) == 0))
            fail_msg("%s: get %s = %.5s, expected %s", what, k, (char *)v,
                     has[i] == 2 ? "the put after the range delete"
                                 : "the first put");
        ravel_free(v);
    }
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, snap, &it));
    int want = 0;
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        while (want < CUT_N && !has[want])
            want++;
        size_t kl;
        const char *k = ravel_iter_key(it, &kl);
        char e[8];
        cut_key(want, e);
        if (want >= CUT_N || kl != 6 || memcmp(k, e, 6) != 0)
            fail_msg("%s: the forward scan shows %.*s, expected %s", what,
                     (int)kl, k, want < CUT_N ? e : "the end");
        want++;
    }
    TU_OK(ravel_iter_status(it));
    while (want < CUT_N && !has[want])
        want++;
    if (want != CUT_N)
        fail_msg("%s: the forward scan ended before t%05d", what, want);
    want = CUT_N - 1;
    for (ravel_iter_seek_to_last(it); ravel_iter_valid(it);
         ravel_iter_prev(it)) {
        while (want >= 0 && !has[want])
            want--;
        size_t kl;
        const char *k = ravel_iter_key(it, &kl);
        char e[8];
        cut_key(want < 0 ? 0 : want, e);
        if (want < 0 || kl != 6 || memcmp(k, e, 6) != 0)
            fail_msg("%s: the reverse scan shows %.*s, expected %s", what,
                     (int)kl, k, want >= 0 ? e : "the end");
        want--;
    }
    TU_OK(ravel_iter_status(it));
    while (want >= 0 && !has[want])
        want--;
    if (want != -1)
        fail_msg("%s: the reverse scan ended after t%05d", what, want);
    ravel_iter_free(it);
}

static void test_tables_cut(void **state)
{
    (void)state;
    char *dir = tu_path("tables-cut");
    const char *opts = "target_file_size_base=65536;write_buffer_size=4194304";
    ravel_db *db = tu_open_ok(dir, opts);
    static unsigned char has[CUT_N], then[CUT_N];
    char val[100];
    memset(val, 'x', sizeof val);
    for (int i = 0; i < CUT_N; i++) {
        char k[8];
        cut_key(i, k);
        int n = snprintf(val, sizeof val, "v%d", i);
        val[n] = 'x';
        TU_OK(ravel_put(db, 0, k, 6, val, sizeof val));
        has[i] = 1;
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    memcpy(then, has, sizeof has);
    static const int ranges[][2] = {{100, 2500}, {3000, 3001}, {2400, 2600},
                                    {4000, 5990}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        char b[8], e[8];
        cut_key(ranges[r][0], b);
        cut_key(ranges[r][1], e);
        TU_OK(ravel_delete_range(db, 0, b, 6, e, 6));
        for (int i = ranges[r][0]; i < ranges[r][1]; i++)
            has[i] = 0;
    }
    /* puts after the range delete over a stretch of it bigger than a file,
    ** so that the compactions cut files at keys put after the tombstone
    ** (the file before ends at the sentinel of that key) */
    for (int i = 5000; i < 5990; i++) {
        char k[8];
        cut_key(i, k);
        TU_OK(ravel_put(db, 0, k, 6, "after", 5));
        has[i] = 2;
    }
    TU_OK(ravel_flush(db, 0));
    cut_check(db, NULL, has, "flushed");
    cut_check(db, snap, then, "flushed, the snapshot");
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    assert_true(tables_with_tombstones(db) >= 2); /* cut into pieces */
    assert_true(levels_disjoint(db));
    cut_check(db, NULL, has, "compacted");
    cut_check(db, snap, then, "compacted, the snapshot");
    /* the snapshot held what the tombstones cover: nothing dropped */
    assert_true(table_entries(db) > CUT_N);
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    assert_true(levels_disjoint(db));
    cut_check(db, NULL, has, "compacted again");
    /* no snapshot: at the last level the covered versions and the
    ** tombstones are dropped (step 2's dropping) */
    uint64_t live = 0;
    for (int i = 0; i < CUT_N; i++)
        live += has[i] != 0;
    assert_int_equal(tables_with_tombstones(db), 0);
    assert_int_equal(table_entries(db), live);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    cut_check(db, NULL, has, "reopened");
    TU_OK(ravel_close(db));
    free(dir);
}

/* A database in DIR: k000..k039 = "old" compacted to the last level, then
** a file (level 0) holding the tombstone [k010, k030) and k015 = "after";
** closed.  Its model in *M. */
static void tables_build_tombstoned(const char *dir, struct model *m)
{
    ravel_db *db = tu_open_ok(dir, NULL);
    memset(m, 0, sizeof *m);
    for (int i = 0; i < NK; i++) {
        struct op o = {.kind = 0, .a = i};
        strcpy(o.val, "old");
        TU_OK(op_write(db, 0, &o));
        model_apply(m, &o);
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    struct op o = {.kind = 2, .a = 10, .b = 30};
    TU_OK(op_write(db, 0, &o));
    model_apply(m, &o);
    o = (struct op){.kind = 0, .a = 15};
    strcpy(o.val, "after");
    TU_OK(op_write(db, 0, &o));
    model_apply(m, &o);
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(tables_with_tombstones(db), 1);
    TU_OK(ravel_close(db));
}

/* Deletes the CURRENT and manifests of scratch directory NAME: repair must rebuild from the
** table files (a database that needs nothing is left as it is). */
static void drop_manifest(const char *name)
{
    for (int n = 1; n < 100; n++) {
        char *p = tu_path("%s/MANIFEST-%06d", name, n);
        unlink(p);
        free(p);
    }
    char *c = tu_path("%s/CURRENT", name);
    unlink(c);
    free(c);
}

static void test_tables_repair(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    struct model m;
    char *dir = tu_path("tables-repair");
    tables_build_tombstoned(dir, &m);
    drop_manifest("tables-repair");
    char *report = NULL;
    TU_OK(ravel_repair(dir, NULL, NULL, NULL, &report));
    if (!strstr(report, "range tombstone fragments read"))
        fail_msg("the repair report does not say it read the tombstones:\n%s",
                 report);
    ravel_free(report);
    ravel_db *db = tu_open_ok(dir, NULL);
    check_gets(db, NULL, &m, "repaired");
    check_iter(db, NULL, &m, &rng, "repaired");
    TU_OK(ravel_close(db));
    free(dir);

    /* the range-deletion block damaged: the first "k030" of the newest
    ** table file is its end key (the file's data block holds k015 only,
    ** its properties come after the block) */
    dir = tu_path("tables-repair-damaged");
    tables_build_tombstoned(dir, &m);
    char *newest = NULL;
    for (int n = 1; n < 100; n++) {
        char *p = tu_path("tables-repair-damaged/%06d.sst", n);
        if (access(p, F_OK) == 0) {
            free(newest);
            newest = p;
        } else {
            free(p);
        }
    }
    assert_non_null(newest);
    FILE *f = fopen(newest, "r+b");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    char *at = memmem(buf, len, "k030", 4);
    assert_non_null(at);
    assert_int_equal(fseek(f, at - buf, SEEK_SET), 0);
    assert_int_equal(fputc('K', f), 'K');
    assert_int_equal(fclose(f), 0);
    free(newest);
    drop_manifest("tables-repair-damaged");
    TU_OK(ravel_repair(dir, NULL, NULL, NULL, &report));
    if (!strstr(report, "range-deletion block is lost"))
        fail_msg("the repair report does not say the tombstones are "
                 "lost:\n%s", report);
    ravel_free(report);
    free(dir);
}

static void test_tables_ingest(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    struct model m;
    char *dir = tu_path("tables-ingest");
    tables_build_tombstoned(dir, &m);
    ravel_db *db = tu_open_ok(dir, NULL);
    char *sst = tu_path("tables-ingest.sst");
    ravel_sst_writer *w;
    TU_OK(ravel_sst_writer_open(sst, NULL, &w));
    TU_OK(ravel_sst_writer_put(w, "k020", 4, "ingested", 8));
    TU_OK(ravel_sst_writer_finish(w, NULL));
    ravel_sst_writer_free(w);
    const char *paths[] = {sst};
    TU_OK(ravel_ingest(db, paths, 1, 0));
    m.has[20] = 1;
    strcpy(m.val[20], "ingested");
    check_gets(db, NULL, &m, "ingested");
    check_iter(db, NULL, &m, &rng, "ingested");
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    check_gets(db, NULL, &m, "ingested, compacted");
    check_iter(db, NULL, &m, &rng, "ingested, compacted");
    /* an external file holding a tombstone (no ravel_sst_writer writes
    ** one: the builder does) is refused, and changes nothing */
    char *ext = tu_path("tables-ingest-tombstone.sst");
    int fd = open(ext, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    struct rv_table_options to = {.block_size = 4096,
                                  .block_restart_interval = 16,
                                  .bloom_bits_per_key = 10};
    rv_table_builder *tb;
    TU_OK(rv_table_builder_new(fd, ext, RV_SST_EXTERNAL_NUMBER, &to, &tb));
    char ik[12];
    memcpy(ik, "k001", 4);
    rv_put_fixed64(ik + 4, rv_pack_tag(0, RV_TYPE_PUT));
    TU_OK(rv_table_builder_add(tb, ik, sizeof ik, "x", 1));
    TU_OK(rv_table_builder_add_range_del(tb, "k000", 4, "k005", 4, 0));
    struct rv_table_props props;
    uint64_t size;
    TU_OK(rv_table_builder_finish(tb, &props, &size));
    rv_table_builder_free(tb);
    close(fd);
    const char *ext_paths[] = {ext};
    TU_EXPECT_INVALID(ravel_ingest(db, ext_paths, 1, 0));
    check_gets(db, NULL, &m, "a file with a tombstone refused");
    free(ext);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    check_gets(db, NULL, &m, "ingested, reopened");
    TU_OK(ravel_close(db));
    free(sst);
    free(dir);
}

/* ---------------------------------------------------------- kill -9 */

struct writer_args {
    char dir[512];
    char journal[512]; /* the sync journal of a power-loss round, or "" */
    uint64_t seed;
    int busy;          /* a flush every few batches and compactions after
                       ** every second flush: the kill lands in them */
};

/* A busy writer's options: level 0 compacted at two files, into one
** level (the data is small), so tombstones are carried and dropped at
** the bottom while the writer goes on. */
#define BUSY_OPTIONS "write_buffer_size=65536;" \
    "level0_file_num_compaction_trigger=2;target_file_size_base=65536"

/* Batch I of the stream seeded with SEED: 1 to 3 ops, with a range
** delete in one batch in three. */
static int stream_batch(uint64_t seed, uint64_t i, struct op *ops)
{
    uint64_t rng = seed ^ (i * 0x9e3779b97f4a7c15ull);
    int n = 1 + (int)(tu_rand(&rng) % 3);
    for (int j = 0; j < n; j++) {
        op_draw(&rng, i * 4 + (uint64_t)j, &ops[j]);
        if (j == 0 && i % 3 == 0) {
            ops[j].kind = 2;
            if (ops[j].b == ops[j].a && ops[j].b < NK)
                ops[j].b++;
        }
    }
    return n;
}

static int child_writer(const void *arg)
{
    const struct writer_args *a = arg;
    if (a->journal[0])
        tu_sync_journal_start(a->journal);
    ravel_db *db;
    if (tu_open(a->dir, a->busy ? BUSY_OPTIONS : "write_buffer_size=65536",
                &db))
        crash_child_fail("open: %s", ravel_errmsg());
    crash_child_opened(db);
    for (uint64_t i = 0;; i++) {
        struct op ops[4];
        int n = stream_batch(a->seed, i, ops);
        ravel_batch *b;
        if (ravel_batch_new(&b))
            crash_child_fail("batch_new");
        for (int j = 0; j < n; j++)
            if (batch_add(b, &ops[j]))
                crash_child_fail("batch: %s", ravel_errmsg());
        if (ravel_write(db, RAVEL_SYNC, b))
            crash_child_fail("write %llu: %s", (unsigned long long)i,
                             ravel_errmsg());
        ravel_batch_free(b);
        if (i % (a->busy ? 7 : 97) == (a->busy ? 6 : 96) &&
            ravel_flush(db, RAVEL_FLUSH_NO_WAIT))
            crash_child_fail("flush: %s", ravel_errmsg());
        uint64_t acked = i + 1;
        crash_send(&acked, sizeof acked);
    }
}

struct acked {
    uint64_t n;
};

static void on_ack(struct crash_child *c, const void *msg)
{
    struct acked *a = c->ctx;
    memcpy(&a->n, msg, sizeof a->n);
}

static int acked_enough(struct crash_child *c)
{
    const struct acked *a = c->ctx;
    return a->n >= 250;
}

/* 1 if DB holds exactly M (gets and a scan), without failing. */
static int db_matches(ravel_db *db, const struct model *m)
{
    for (int i = 0; i < NK; i++) {
        char k[8];
        key_of(i, k);
        void *v = NULL;
        size_t vl = 0;
        int rc = ravel_get(db, NULL, k, 4, &v, &vl);
        int ok = m->has[i] ? rc == RAVEL_OK && vl == strlen(m->val[i]) &&
                                 memcmp(v, m->val[i], vl) == 0
                           : rc == RAVEL_NOTFOUND;
        ravel_free(v);
        if (!ok)
            return 0;
    }
    return 1;
}

/* One round: a child writes synced batches until killed (then, with
** PATTERN >= 0, a power loss of that pattern); the reopened database must
** hold every acknowledged batch, and at most the one in flight besides.
** BUSY: the child flushes and compacts all along (writer_args). */
static void crash_round(int round, int pattern, uint64_t *plrng, int busy)
{
    {
        char *dir = tu_path("%s%s-%d", pattern < 0 ? "kill9" : "powerloss",
                            busy ? "-busy" : "", round);
        struct writer_args wa = {.seed = tu_seed() + (uint64_t)round,
                                 .busy = busy};
        snprintf(wa.dir, sizeof wa.dir, "%s", dir);
        char *journal = pattern < 0 ? NULL : tu_path("journal-%d", round);
        if (journal)
            snprintf(wa.journal, sizeof wa.journal, "%s", journal);
        struct acked a = {0};
        struct crash_child c = {.on_msg = on_ack,
                                .msg_size = sizeof(uint64_t), .ctx = &a};
        snprintf(c.label, sizeof c.label, "%s round %d",
                 pattern < 0 ? "kill -9"
                             : tu_power_loss_name(
                                   (enum tu_power_loss_pattern)pattern),
                 round);
        crash_spawn(&c, "writer", &wa, sizeof wa);
        crash_wait(&c, acked_enough, 120000, "250 synced batches");
        crash_kill_after(&c, CRASH_FROM_OPEN,
                         (busy ? 7 : 5) * (uint64_t)(round % 4));
        if (journal)
            tu_power_loss(dir, journal, (enum tu_power_loss_pattern)pattern,
                          plrng);
        ravel_db *db = tu_open_ok(dir, NULL);
        struct model m, next;
        memset(&m, 0, sizeof m);
        for (uint64_t i = 0; i < a.n; i++) {
            struct op ops[4];
            int n = stream_batch(wa.seed, i, ops);
            for (int j = 0; j < n; j++)
                model_apply(&m, &ops[j]);
        }
        next = m;
        struct op ops[4];
        int n = stream_batch(wa.seed, a.n, ops);
        for (int j = 0; j < n; j++)
            model_apply(&next, &ops[j]);
        int which = db_matches(db, &m) ? 0 : db_matches(db, &next) ? 1 : -1;
        if (which < 0) {
            check_gets(db, NULL, &m, "after kill -9 (acknowledged state)");
            fail_msg("after kill -9: neither state matched");
        }
        uint64_t rng = wa.seed;
        check_iter(db, NULL, which ? &next : &m, &rng, "after kill -9");
        printf("%s: %llu batches acknowledged, the database holds %s "
               "(%d table files with range tombstones)\n",
               c.label, (unsigned long long)a.n,
               which ? "one more (in flight)" : "exactly them",
               tables_with_tombstones(db));
        TU_OK(ravel_close(db));
        free(journal);
        free(dir);
    }
}

static void test_kill9(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++)
        crash_round(round, -1, NULL, 0);
}

static void test_powerloss(void **state)
{
    (void)state;
    uint64_t rng = tu_seed() | 1;
    for (int p = 0; p < TU_PL_PATTERNS; p++)
        crash_round(p, p, &rng, 0);
}

static void test_kill9_busy(void **state)
{
    (void)state;
    for (int round = 0; round < 4; round++)
        crash_round(round, -1, NULL, 1);
}

static void test_powerloss_busy(void **state)
{
    (void)state;
    uint64_t rng = tu_seed() | 1;
    for (int p = 0; p < TU_PL_PATTERNS; p++)
        crash_round(p, p, &rng, 1);
}

/* ------------------------------------------------ reader and feed */

struct reader_args {
    char dir[512];
};

/* A read_only handle: waits for the writer's range delete, then checks
** gets, the iterator and the feed; reports done. */
static int child_reader(const void *arg)
{
    const struct reader_args *a = arg;
    ravel_db *db;
    int rc = tu_open(a->dir, "read_only=true", &db);
    if (rc)
        crash_child_fail("open read_only: %d %s", rc, ravel_errmsg());
    crash_child_opened(db);
    /* the writer writes r0..r9, then deletes [r2, r7): wait for it */
    for (int tries = 0;; tries++) {
        if (ravel_catch_up(db))
            crash_child_fail("catch_up: %s", ravel_errmsg());
        void *v = NULL;
        size_t vl;
        int g9 = ravel_get(db, NULL, "r9", 2, &v, &vl);
        ravel_free(v);
        int g3 = ravel_get(db, NULL, "r3", 2, &v, &vl);
        ravel_free(v);
        if (g9 == RAVEL_OK && g3 == RAVEL_NOTFOUND)
            break;
        if (tries > 20000)
            crash_child_fail("the range delete never showed (r9 %d, r3 %d)",
                             g9, g3);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < 10; i++) {
        char k[4];
        snprintf(k, sizeof k, "r%d", i);
        void *v = NULL;
        size_t vl;
        rc = ravel_get(db, NULL, k, 2, &v, &vl);
        ravel_free(v);
        if ((i >= 2 && i < 7) != (rc == RAVEL_NOTFOUND))
            crash_child_fail("reader: get %s returned %d", k, rc);
    }
    ravel_iter *it;
    if (ravel_iter_new(db, NULL, &it))
        crash_child_fail("iter: %s", ravel_errmsg());
    int n = 0;
    for (ravel_iter_seek_to_last(it); ravel_iter_valid(it);
         ravel_iter_prev(it))
        n++;
    ravel_iter_free(it);
    if (n != 5)
        crash_child_fail("reader: reverse scan shows %d keys, expected 5",
                         n);
    ravel_updates *u;
    if (ravel_updates_since(db, 1, 0, &u))
        crash_child_fail("feed: %s", ravel_errmsg());
    int ranges = 0;
    while (ravel_updates_next(u) == RAVEL_OK) {
        const ravel_batch *b = ravel_updates_batch(u);
        size_t pos = 0, kl, vl;
        int op;
        const void *k, *v;
        while (ravel_batch_next_op(b, &pos, &op, &k, &kl, &v, &vl) ==
               RAVEL_OK)
            if (op == RAVEL_OP_DELETE_RANGE && kl == 2 && vl == 2 &&
                memcmp(k, "r2", 2) == 0 && memcmp(v, "r7", 2) == 0)
                ranges++;
    }
    ravel_updates_free(u);
    if (ranges != 1)
        crash_child_fail("feed: %d range deletes [r2, r7), expected 1",
                         ranges);
    ravel_close(db);
    crash_child_done();
    crash_child_park();
}

static void test_reader(void **state)
{
    (void)state;
    char *dir = tu_path("reader");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "r0", "x");
    ravel_db *probe;
    int rc = tu_open(dir, "read_only=true", &probe);
    if (rc == RAVEL_LOCKED) {
        printf("note: a read_only open beside the writer is refused here: "
               "the reader test is skipped\n");
        TU_OK(ravel_close(db));
        free(dir);
        return;
    }
    TU_OK(rc);
    TU_OK(ravel_close(probe));
    struct reader_args ra;
    snprintf(ra.dir, sizeof ra.dir, "%s", dir);
    struct crash_child c = {0};
    crash_spawn(&c, "reader", &ra, sizeof ra);
    crash_wait(&c, crash_opened, 60000, "the reader's open");
    for (int i = 1; i < 10; i++) {
        char k[4];
        snprintf(k, sizeof k, "r%d", i);
        tu_put(db, RAVEL_SYNC, k, "x");
    }
    TU_OK(ravel_delete_range(db, RAVEL_SYNC, "r2", 2, "r7", 2));
    crash_wait(&c, crash_done, 60000, "the reader's checks");
    crash_kill(&c);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_feed_flush(void **state)
{
    (void)state;
    char *dir = tu_path("feed-flush");
    ravel_db *db = tu_open_ok(dir, NULL);
    struct model m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < NK; i++) {
        struct op o = {.kind = 0, .a = i};
        snprintf(o.val, sizeof o.val, "old%d", i);
        TU_OK(op_write(db, 0, &o));
        model_apply(&m, &o);
    }
    TU_OK(ravel_flush(db, 0));
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    struct model at_snap = m;
    struct op o = {.kind = 2, .a = 5, .b = 30};
    TU_OK(op_write(db, 0, &o));
    model_apply(&m, &o);
    struct op p = {.kind = 0, .a = 10};
    snprintf(p.val, sizeof p.val, "new");
    TU_OK(op_write(db, 0, &p)); /* after the range: it stays */
    model_apply(&m, &p);
    uint64_t rng = 7;
    check_gets(db, NULL, &m, "before the flush");
    check_iter(db, NULL, &m, &rng, "before the flush");
    TU_OK(ravel_flush(db, 0));
    check_gets(db, NULL, &m, "after the flush");
    check_iter(db, NULL, &m, &rng, "after the flush");
    check_gets(db, snap, &at_snap, "snapshot, after the flush");
    check_iter(db, snap, &at_snap, &rng, "snapshot, after the flush");
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    check_gets(db, snap, &at_snap, "snapshot, after compaction");
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    check_gets(db, NULL, &m, "after compaction");
    check_iter(db, NULL, &m, &rng, "after compaction");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    check_gets(db, NULL, &m, "after reopen");
    check_iter(db, NULL, &m, &rng, "after reopen");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------ concurrent */

/* Writer W fills its group "gW-0" .. "gW-9" with one generation in one
** batch, then deletes the group with one range delete, over and over,
** while readers check through snapshots and iterators that a group is
** always whole (one generation, ten keys) or gone: a range delete is
** atomic, and flushes (small memtables) write it into table files
** without a reader ever seeing half of it. */
#define CW_WRITERS 2
#define CW_READERS 2

struct cw {
    ravel_db *db;
    _Atomic int stop;
    _Atomic long long checks;
};

struct cw_arg {
    struct cw *cw;
    int id;
};

static void *cw_writer(void *p)
{
    struct cw_arg *a = p;
    char k[16], e[16], v[24];
    for (long long gen = 0; !atomic_load(&a->cw->stop); gen++) {
        ravel_batch *b;
        if (ravel_batch_new(&b))
            return NULL;
        snprintf(v, sizeof v, "%lld", gen);
        for (int i = 0; i < 10; i++) {
            snprintf(k, sizeof k, "g%d-%d", a->id, i);
            TU_CHECK(ravel_batch_put(b, k, strlen(k), v, strlen(v)) == 0,
                     "batch put");
        }
        TU_CHECK(ravel_write(a->cw->db, 0, b) == 0, "write: %s",
                 ravel_errmsg());
        ravel_batch_free(b);
        snprintf(k, sizeof k, "g%d-", a->id);
        snprintf(e, sizeof e, "g%d.", a->id); /* '.' follows '-' */
        TU_CHECK(ravel_delete_range(a->cw->db, 0, k, strlen(k), e,
                                    strlen(e)) == 0,
                 "delete_range: %s", ravel_errmsg());
    }
    return NULL;
}

/* Checks group G through SNAP: whole or gone. */
static void cw_check_group(ravel_db *db, const ravel_snapshot *snap, int g)
{
    char first[24] = "";
    int present = 0;
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof k, "g%d-%d", g, i);
        void *v = NULL;
        size_t vl = 0;
        int rc = ravel_get(db, snap, k, strlen(k), &v, &vl);
        if (rc == RAVEL_OK) {
            present++;
            if (!first[0])
                snprintf(first, sizeof first, "%.*s", (int)vl, (char *)v);
            else
                TU_CHECK(strlen(first) == vl && memcmp(first, v, vl) == 0,
                         "group %d: generations %s and %.*s at once", g,
                         first, (int)vl, (char *)v);
        } else {
            TU_CHECK(rc == RAVEL_NOTFOUND, "get: %s", ravel_errmsg());
        }
        ravel_free(v);
    }
    TU_CHECK(present == 0 || present == 10,
             "group %d: %d of its 10 keys through a snapshot", g, present);
    ravel_iter *it;
    if (ravel_iter_new(db, snap, &it))
        return;
    char lo[16];
    snprintf(lo, sizeof lo, "g%d-", g);
    int n = 0;
    for (ravel_iter_seek(it, lo, strlen(lo)); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t kl;
        const char *k = ravel_iter_key(it, &kl);
        if (kl < strlen(lo) || memcmp(k, lo, strlen(lo)) != 0)
            break;
        n++;
    }
    ravel_iter_free(it);
    TU_CHECK(n == present, "group %d: gets saw %d keys, the iterator %d", g,
             present, n);
}

static void *cw_reader(void *p)
{
    struct cw_arg *a = p;
    while (!atomic_load(&a->cw->stop)) {
        ravel_snapshot *s;
        if (ravel_snapshot_acquire(a->cw->db, &s))
            continue;
        for (int g = 0; g < CW_WRITERS; g++)
            cw_check_group(a->cw->db, s, g);
        ravel_snapshot_release(a->cw->db, s);
        atomic_fetch_add(&a->cw->checks, 1);
    }
    return NULL;
}

static void concurrent_run(const char *name, const char *mode)
{
    if (mode_set_by_run(name, mode))
        return;
    char *dir = tu_path("concurrent-%s", name);
    char opts[256];
    snprintf(opts, sizeof opts, "write_buffer_size=32768%s%s",
             mode ? ";" : "", mode ? mode : "");
    struct cw cw = {.db = tu_open_ok(dir, opts)};
    char *ordering = tu_prop(cw.db, "ravel.write-ordering");
    int torn = strcmp(ordering, "unordered") == 0;
    ravel_free(ordering);
    if (torn) { /* RAVEL_TEST_OPTIONS made it unordered_write alone */
        printf("concurrent %s: skipped, unordered_write alone does not "
               "make a batch atomic to readers\n", name);
        TU_OK(ravel_close(cw.db));
        free(dir);
        return;
    }
    pthread_t t[CW_WRITERS + CW_READERS];
    struct cw_arg args[CW_WRITERS + CW_READERS];
    for (int i = 0; i < CW_WRITERS + CW_READERS; i++) {
        args[i] = (struct cw_arg){&cw, i};
        pthread_create(&t[i], NULL, i < CW_WRITERS ? cw_writer : cw_reader,
                       &args[i]);
    }
    uint64_t until = tu_now_ms() +
                     tu_env_u64("RAVEL_TEST_RANGE_DEL_MS", 3000);
    while (tu_now_ms() < until && tu_thread_failures() == 0) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&cw.stop, 1);
    for (int i = 0; i < CW_WRITERS + CW_READERS; i++)
        pthread_join(t[i], NULL);
    tu_assert_no_thread_failures();
    printf("concurrent %s: %lld snapshot checks\n", name,
           (long long)atomic_load(&cw.checks));
    TU_OK(ravel_close(cw.db));
    free(dir);
}

static void test_concurrent(void **state)
{
    (void)state;
    concurrent_run("default", NULL);
    concurrent_run("in-order", MODE_IN_ORDER);
    concurrent_run("prepared", MODE_PREPARED);
}

/* ------------------------------------------------------------ repair */

struct repair_args {
    char dir[512];
};

/* Puts a..z, flushes them into a table, deletes [b, y) (synced, in the
** WAL only) and waits for its kill. */
static int child_repair_writer(const void *arg)
{
    const struct repair_args *a = arg;
    ravel_db *db;
    if (tu_open(a->dir, NULL, &db))
        crash_child_fail("open: %s", ravel_errmsg());
    crash_child_opened(db);
    for (char c = 'a'; c <= 'z'; c++) {
        char k[2] = {c, 0};
        if (ravel_put(db, 0, k, 1, "old", 3))
            crash_child_fail("put: %s", ravel_errmsg());
    }
    if (ravel_flush(db, 0) ||
        ravel_delete_range(db, RAVEL_SYNC, "b", 1, "y", 1) ||
        ravel_put(db, RAVEL_SYNC, "m", 1, "new", 3))
        crash_child_fail("write: %s", ravel_errmsg());
    crash_child_done();
    crash_child_park();
}

/* Repair salvages the WAL's range delete over the tables' keys: the keys
** it covers stay deleted, the put after it stays. */
static void test_repair(void **state)
{
    (void)state;
    char *dir = tu_path("repair");
    struct repair_args ra;
    snprintf(ra.dir, sizeof ra.dir, "%s", dir);
    struct crash_child c = {0};
    snprintf(c.label, sizeof c.label, "repair writer");
    crash_spawn(&c, "repair_writer", &ra, sizeof ra);
    crash_wait(&c, crash_done, 60000, "its writes");
    crash_kill(&c);
    /* without its manifest, repair rebuilds the database from the tables
    ** and the WAL (repair_output.c merges them) */
    char *m = tu_path("repair/MANIFEST-000001"), *cur = tu_path("repair/CURRENT");
    assert_int_equal(unlink(m), 0);
    unlink(cur);
    free(m);
    free(cur);
    char *report = NULL;
    TU_OK(ravel_repair(dir, NULL, NULL, NULL, &report));
    if (getenv("RAVEL_TEST_VERBOSE"))
        printf("%s\n", report);
    ravel_free(report);
    ravel_db *db = tu_open_ok(dir, NULL);
    for (char c2 = 'a'; c2 <= 'z'; c2++) {
        char k[2] = {c2, 0};
        const char *want = c2 == 'm'                  ? "new"
                           : c2 >= 'b' && c2 < 'y' ? NULL
                                                     : "old";
        tu_expect(db, NULL, k, want);
    }
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------------ ingest */

/* A file ingested over keys a range delete in the memtable covers: the
** ingest is newer than the range delete, so its keys stay, the others
** stay deleted -- at once, after a flush, a compaction and a reopen. */
static void test_ingest(void **state)
{
    (void)state;
    char *dir = tu_path("ingest");
    char *sst = tu_path("ingest.sst");
    ravel_db *db = tu_open_ok(dir, NULL);
    for (char c = 'a'; c <= 'z'; c++) {
        char k[2] = {c, 0};
        tu_put(db, 0, k, "old");
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_delete_range(db, 0, "b", 1, "y", 1)); /* in the memtable */
    ravel_sst_writer *w;
    TU_OK(ravel_sst_writer_open(sst, NULL, &w));
    TU_OK(ravel_sst_writer_put(w, "m", 1, "new", 3));
    TU_OK(ravel_sst_writer_put(w, "n", 1, "new", 3));
    TU_OK(ravel_sst_writer_finish(w, NULL));
    ravel_sst_writer_free(w);
    const char *paths[] = {sst};
    TU_OK(ravel_ingest(db, paths, 1, 0));
    for (int round = 0; round < 4; round++) {
        for (char c = 'a'; c <= 'z'; c++) {
            char k[2] = {c, 0};
            const char *want = c == 'm' || c == 'n' ? "new"
                               : c >= 'b' && c < 'y' ? NULL
                                                     : "old";
            tu_expect(db, NULL, k, want);
        }
        if (round == 0)
            TU_OK(ravel_flush(db, 0));
        else if (round == 1)
            TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
        else if (round == 2) {
            TU_OK(ravel_close(db));
            db = tu_open_ok(dir, NULL);
        }
    }
    /* over a range nothing holds: were the file placed below the
    ** memtable as it is, the older-looking range delete would hide it */
    TU_OK(ravel_delete_range(db, 0, "M0", 2, "M9", 2));
    char *sst2 = tu_path("ingest2.sst");
    TU_OK(ravel_sst_writer_open(sst2, NULL, &w));
    TU_OK(ravel_sst_writer_put(w, "M5", 2, "ingested", 8));
    TU_OK(ravel_sst_writer_finish(w, NULL));
    ravel_sst_writer_free(w);
    const char *paths2[] = {sst2};
    TU_OK(ravel_ingest(db, paths2, 1, 0));
    tu_expect(db, NULL, "M5", "ingested");
    TU_OK(ravel_flush(db, 0));
    tu_expect(db, NULL, "M5", "ingested");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "M5", "ingested");
    TU_OK(ravel_close(db));
    free(sst2);
    free(sst);
    free(dir);
}

int main(int argc, char **argv)
{
    static const struct crash_role roles[] = {
        {"writer", child_writer, sizeof(struct writer_args)},
        {"reader", child_reader, sizeof(struct reader_args)},
        {"repair_writer", child_repair_writer, sizeof(struct repair_args)},
        {NULL, NULL, 0},
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_feed_flush),
        cmocka_unit_test(test_model_default),
        cmocka_unit_test(test_model_unordered),
        cmocka_unit_test(test_model_in_order),
        cmocka_unit_test(test_model_prepared),
        cmocka_unit_test(test_tables_reads),
        cmocka_unit_test(test_model_tables),
        cmocka_unit_test(test_model_tables_prepared),
        cmocka_unit_test(test_tables_cut),
        cmocka_unit_test(test_tables_repair),
        cmocka_unit_test(test_tables_ingest),
        cmocka_unit_test(test_kill9),
        cmocka_unit_test(test_powerloss),
        cmocka_unit_test(test_kill9_busy),
        cmocka_unit_test(test_powerloss_busy),
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_ingest),
        cmocka_unit_test(test_repair),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
