/*
** test_ordering.c -- the guarantees of each ordering mode
** (docs/ordering.md), checked with real threads.
**
** The checker: 32 writer threads, each owning a set of K keys, write
** batches that set all K keys of their set to one value (writer, counter);
** after each write the writer reads one of its keys back and must find
** exactly its value (read-your-own-writes).  Reader threads meanwhile take
** a snapshot, read one set's K keys through it (all equal: atomic reads),
** read them again later through the same snapshot (unchanged: immutable
** snapshots), walk a set with an iterator (all equal), and read a set's
** keys in order without a snapshot: a later get never shows an older
** batch than an earlier one did (atomic reads: a batch seen through one
** key is visible through all, and what is visible only grows).  Some
** snapshots are held for the whole run, each with what it showed of every
** set; readers re-read them while writes go on (and evict the commit
** table's entries) and once more at the end.  Each guarantee counts its
** checks and its violations.  Modes that promise a guarantee
** must show 0 violations over thousands of checks; unordered_write, which
** does not promise atomic reads and immutable snapshots, must show
** violations of them (a test hook slows some inserts) -- the proof that
** the checker sees what it checks.  Small memtables make switches and
** flushes happen under load; at the end the database is reopened and every
** set must hold its writer's last value.
**
** The publication check: a snapshot at sequence V shows, of every writer,
** exactly its last batch at or below V in the WAL's order, whole (ordered
** and in-order publication; unordered_write must fail it).
**
** Also: the restart anomaly of write_prepared, a memtable switch waiting
** for an insert held open, and a 16-entry commit table evicting
** constantly under long-lived snapshots.
**
** RAVEL_TEST_ORDERING_BATCHES scales the batches per writer (default 300).
*/
#include "testutil.h"
#include "db/db.h"
#include "util/fault.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WRITERS 32
#define READERS 2
#define SET_KEYS 8
#define HELD_SNAPSHOTS 16
#define CHECKER_MIN_CHECKS 1000 /* per guarantee the readers check */
#define HOLD_EVERY 32 /* a reader holds one snapshot in this many */

#define MODE_UNORDERED "unordered_write=true"
#define MODE_IN_ORDER "unordered_write=true;in_order_publication=true"
#define MODE_PREPARED "unordered_write=true;two_write_queues=true;" \
                      "write_policy=write_prepared"

enum { G_ATOMIC, G_RYOW, G_IMMUTABLE, G_COUNT };
static const char *const guarantee_names[G_COUNT] = {
    "atomic reads", "read-your-own-writes", "immutable snapshots",
};

/* A long-lived snapshot and what it showed of every set when taken. */
struct held_snapshot {
    char vals[WRITERS][SET_KEYS][32];
    /* set (release) once VALS is filled in; NULL until then */
    _Atomic(ravel_snapshot *) snap;
};

struct checker {
    ravel_db *db;
    int batches;
    _Atomic int writers_done;
    _Atomic uint64_t checks[G_COUNT];
    _Atomic uint64_t violations[G_COUNT];
    struct held_snapshot held[HELD_SNAPSHOTS];
    _Atomic int n_held; /* slots claimed */
    char mode[32];        /* ravel.write-ordering */
    uint64_t evictions;   /* of the commit table, at the end */
};

static void set_key(char *buf, size_t n, int set, int k)
{
    snprintf(buf, n, "set%02d-key%d", set, k);
}

static void set_value(char *buf, size_t n, int set, int counter)
{
    snprintf(buf, n, "w%02d-%08d", set, counter);
}

static void count(struct checker *c, int g, int violated)
{
    atomic_fetch_add(&c->checks[g], 1);
    if (violated)
        atomic_fetch_add(&c->violations[g], 1);
}

/* Reads KEY through SNAP into BUF (32 bytes): "" when absent. */
static void read_value(ravel_db *db, const ravel_snapshot *snap,
                       const char *key, char *buf)
{
    size_t vlen = 0;
    int rc = ravel_get_into(db, snap, key, strlen(key), buf, 31, &vlen);
    TU_CHECK(rc == RAVEL_OK || rc == RAVEL_NOTFOUND, "get %s: %s", key,
             ravel_errmsg());
    buf[rc == RAVEL_OK && vlen < 32 ? vlen : 0] = '\0';
}

static void read_set(ravel_db *db, const ravel_snapshot *snap, int set,
                     char vals[SET_KEYS][32])
{
    char key[32];
    memset(vals, 0, SET_KEYS * sizeof vals[0]); /* compared whole */
    for (int k = 0; k < SET_KEYS; k++) {
        set_key(key, sizeof key, set, k);
        read_value(db, snap, key, vals[k]);
    }
}

static int set_is_uniform(char vals[SET_KEYS][32])
{
    for (int k = 1; k < SET_KEYS; k++)
        if (strcmp(vals[k], vals[0]) != 0)
            return 0;
    return 1;
}

struct writer_arg {
    struct checker *c;
    int set;
};

static void *writer_main(void *p)
{
    struct writer_arg *a = p;
    struct checker *c = a->c;
    ravel_batch *b = NULL;
    TU_CHECK(ravel_batch_new(&b) == RAVEL_OK, "batch_new");
    char key[32], val[32], got[32];
    for (int i = 1; i <= c->batches && b; i++) {
        ravel_batch_clear(b);
        set_value(val, sizeof val, a->set, i);
        for (int k = 0; k < SET_KEYS; k++) {
            set_key(key, sizeof key, a->set, k);
            ravel_batch_put(b, key, strlen(key), val, strlen(val));
        }
        int rc = ravel_write(c->db, 0, b);
        if (rc != RAVEL_OK) {
            tu_thread_fail("write: %s", ravel_errmsg());
            break;
        }
        set_key(key, sizeof key, a->set, i % SET_KEYS);
        read_value(c->db, NULL, key, got);
        count(c, G_RYOW, strcmp(got, val) != 0);
    }
    ravel_batch_free(b);
    atomic_fetch_add(&c->writers_done, 1);
    return NULL;
}

/* Walks SET with an iterator through SNAP: 1 if every key it shows holds
** the same value. */
static int iterate_set_uniform(ravel_db *db, const ravel_snapshot *snap,
                               int set)
{
    ravel_iter *it = NULL;
    if (ravel_iter_new(db, snap, &it) != RAVEL_OK) {
        tu_thread_fail("iter_new: %s", ravel_errmsg());
        return 1;
    }
    char prefix[16], first[32] = "";
    snprintf(prefix, sizeof prefix, "set%02d-", set);
    size_t plen = strlen(prefix);
    int n = 0, uniform = 1;
    for (ravel_iter_seek(it, prefix, plen); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t klen, vlen;
        const char *k = ravel_iter_key(it, &klen);
        const char *v = ravel_iter_value(it, &vlen);
        if (klen < plen || memcmp(k, prefix, plen) != 0)
            break;
        char cur[32];
        snprintf(cur, sizeof cur, "%.*s", (int)vlen, v);
        if (n++ == 0)
            strcpy(first, cur);
        else if (strcmp(first, cur) != 0)
            uniform = 0;
    }
    TU_CHECK(ravel_iter_status(it) == RAVEL_OK, "iterator: %s",
             ravel_errmsg());
    ravel_iter_free(it);
    return uniform;
}

/* Reads SET's keys in key order without a snapshot: each get reads at
** least as late as the one before, so it must show the same batch of the
** set's writer or a newer one (values are fixed-width: they compare as
** strings, and absent, "", sorts first). */
static int latest_gets_never_go_back(ravel_db *db, int set)
{
    char vals[SET_KEYS][32];
    read_set(db, NULL, set, vals);
    for (int k = 1; k < SET_KEYS; k++)
        if (strcmp(vals[k], vals[k - 1]) < 0)
            return 0;
    return 1;
}

/* Re-reads one set through a held snapshot, if one is ready. */
static void recheck_held(struct checker *c, uint64_t *rng)
{
    int n = atomic_load(&c->n_held);
    if (n == 0)
        return;
    struct held_snapshot *h = &c->held[tu_rand(rng) % (uint64_t)n];
    ravel_snapshot *s = atomic_load_explicit(&h->snap, memory_order_acquire);
    if (!s)
        return; /* still being filled in */
    int set = (int)(tu_rand(rng) % WRITERS);
    char now[SET_KEYS][32];
    read_set(c->db, s, set, now);
    count(c, G_IMMUTABLE, memcmp(now, h->vals[set], sizeof now) != 0);
    count(c, G_ATOMIC, !set_is_uniform(now));
}

/* Keeps S for the whole run if a slot is free (1), recording what it
** shows of every set. */
static int hold_snapshot(struct checker *c, ravel_snapshot *s)
{
    int h = atomic_load(&c->n_held);
    if (h >= HELD_SNAPSHOTS ||
        !atomic_compare_exchange_strong(&c->n_held, &h, h + 1))
        return 0;
    for (int set = 0; set < WRITERS; set++) {
        read_set(c->db, s, set, c->held[h].vals[set]);
        count(c, G_ATOMIC, !set_is_uniform(c->held[h].vals[set]));
    }
    atomic_store_explicit(&c->held[h].snap, s, memory_order_release);
    return 1;
}

static void *reader_main(void *p)
{
    struct checker *c = p;
    uint64_t rng = tu_seed() ^ (uint64_t)(uintptr_t)p;
    /* While the writers run, and then until the minimum number of checks
    ** is reached (a slow machine, a sanitizer, may starve the readers
    ** while the writers run: the minimum must not depend on timing). */
    for (uint64_t round = 1;
         atomic_load(&c->writers_done) < WRITERS ||
         atomic_load(&c->checks[G_ATOMIC]) < CHECKER_MIN_CHECKS ||
         atomic_load(&c->checks[G_IMMUTABLE]) < CHECKER_MIN_CHECKS;
         round++) {
        int set = (int)(tu_rand(&rng) % WRITERS);
        ravel_snapshot *s = NULL;
        if (ravel_snapshot_acquire(c->db, &s) != RAVEL_OK) {
            tu_thread_fail("snapshot: %s", ravel_errmsg());
            return NULL;
        }
        char first[SET_KEYS][32], again[SET_KEYS][32];
        read_set(c->db, s, set, first);
        count(c, G_ATOMIC, !set_is_uniform(first));
        count(c, G_ATOMIC, !iterate_set_uniform(c->db, NULL, set));
        count(c, G_ATOMIC, !iterate_set_uniform(c->db, s, set));
        count(c, G_ATOMIC, !latest_gets_never_go_back(c->db, set));
        sched_yield();
        read_set(c->db, s, set, again);
        count(c, G_IMMUTABLE, memcmp(first, again, sizeof first) != 0);
        recheck_held(c, &rng);
        if (round % HOLD_EVERY != 0 || !hold_snapshot(c, s))
            ravel_snapshot_release(c->db, s);
    }
    return NULL;
}

/* Runs the checker on a fresh database opened with OPTS; on return C
** holds the counts.  The database is reopened at the end and every set
** must hold its writer's last value. */
static void run_checker(struct checker *c, const char *name, const char *opts,
                        int batches)
{
    memset(c, 0, sizeof *c);
    char *dir = tu_path("%s", name);
    c->db = tu_open_ok(dir, opts);
    c->batches = batches;
    pthread_t w[WRITERS], r[READERS];
    struct writer_arg args[WRITERS];
    for (int i = 0; i < READERS; i++)
        assert_int_equal(pthread_create(&r[i], NULL, reader_main, c), 0);
    for (int i = 0; i < WRITERS; i++) {
        args[i].c = c;
        args[i].set = i;
        assert_int_equal(pthread_create(&w[i], NULL, writer_main, &args[i]),
                         0);
    }
    for (int i = 0; i < WRITERS; i++)
        pthread_join(w[i], NULL);
    for (int i = 0; i < READERS; i++)
        pthread_join(r[i], NULL);
    tu_assert_no_thread_failures();

    /* the long-lived snapshots still see what they saw, of every set */
    for (int h = 0; h < atomic_load(&c->n_held); h++) {
        ravel_snapshot *s = atomic_load(&c->held[h].snap);
        for (int set = 0; set < WRITERS; set++) {
            char now[SET_KEYS][32];
            read_set(c->db, s, set, now);
            count(c, G_IMMUTABLE,
                  memcmp(now, c->held[h].vals[set], sizeof now) != 0);
            count(c, G_ATOMIC, !set_is_uniform(now));
        }
        TU_OK(ravel_snapshot_release(c->db, s));
    }
    char *mode = tu_prop(c->db, "ravel.write-ordering");
    snprintf(c->mode, sizeof c->mode, "%s", mode);
    char *stats = tu_prop(c->db, "ravel.stats");
    const char *line = strstr(stats, "ordering:");
    const char *table = strstr(stats, "commit table:");
    unsigned long long entries = 0, evictions = 0;
    assert_non_null(table);
    assert_int_equal(sscanf(table, "commit table: %llu entries, %llu "
                            "evictions", &entries, &evictions), 2);
    c->evictions = evictions;
    /* under load: the 64K memtables were switched out and flushed, many
    ** times */
    const char *mem = strstr(stats, "memtables: ");
    const char *flush = strstr(stats, "flush: ");
    unsigned long long switches = 0, flushes = 0;
    size_t active = 0;
    int immutable = 0;
    assert_non_null(mem);
    assert_non_null(flush);
    assert_int_equal(sscanf(mem, "memtables: active %zu bytes, %d immutable, "
                            "%llu switches", &active, &immutable, &switches),
                     3);
    assert_int_equal(sscanf(flush, "flush: %llu flushes", &flushes), 1);
    if (switches < 10 || flushes < 10)
        fail_msg("%s: %llu memtable switches and %llu flushes: the run "
                 "was not under switches and flushes", name, switches,
                 flushes);
    printf("# %s (%s):", name, mode);
    for (int g = 0; g < G_COUNT; g++)
        printf(" %s %" PRIu64 "/%" PRIu64 ";", guarantee_names[g],
               (uint64_t)atomic_load(&c->violations[g]),
               (uint64_t)atomic_load(&c->checks[g]));
    printf(" (violations/checks)\n# %s", line ? line : "\n");
    ravel_free(stats);
    ravel_free(mode);
    TU_OK(ravel_close(c->db));

    /* nothing lost across the switches, flushes and the reopen */
    c->db = tu_open_ok(dir, opts);
    for (int set = 0; set < WRITERS; set++) {
        char vals[SET_KEYS][32], want[32];
        read_set(c->db, NULL, set, vals);
        set_value(want, sizeof want, set, batches);
        for (int k = 0; k < SET_KEYS; k++)
            if (strcmp(vals[k], want) != 0)
                fail_msg("%s: after reopen set %d key %d holds '%s', want "
                         "'%s'", name, set, k, vals[k], want);
    }
    TU_OK(ravel_close(c->db));
    tu_rm_rf(dir);
    free(dir);
}

static int batches_per_writer(void)
{
    return (int)tu_env_u64("RAVEL_TEST_ORDERING_BATCHES", 300);
}

/* A mode that promises all three guarantees (MODE, as ravel.write-ordering
** names it): none is ever violated.  Returns the checker's counts (free
** them). */
static struct checker *expect_all_guarantees(const char *name,
                                             const char *opts,
                                             const char *mode)
{
    struct checker *c = calloc(1, sizeof *c);
    assert_non_null(c);
    run_checker(c, name, opts, batches_per_writer());
    assert_string_equal(c->mode, mode);
    for (int g = 0; g < G_COUNT; g++) {
        if (atomic_load(&c->violations[g]))
            fail_msg("%s: %" PRIu64 " violations of %s", name,
                     (uint64_t)atomic_load(&c->violations[g]),
                     guarantee_names[g]);
    }
    /* enough checks to mean something: the held snapshots alone give
    ** thousands */
    assert_true(atomic_load(&c->checks[G_RYOW]) ==
                (uint64_t)WRITERS * (uint64_t)batches_per_writer());
    assert_true(atomic_load(&c->checks[G_ATOMIC]) >= CHECKER_MIN_CHECKS);
    assert_true(atomic_load(&c->checks[G_IMMUTABLE]) >= CHECKER_MIN_CHECKS);
    return c;
}

#define SMALL_MEMTABLES ";write_buffer_size=64K;target_file_size_base=64K"

static void test_ordered(void **state)
{
    (void)state;
    free(expect_all_guarantees("ordered", "write_buffer_size=64K",
                               "ordered"));
}

static void test_in_order_publication(void **state)
{
    (void)state;
    free(expect_all_guarantees("in-order", MODE_IN_ORDER SMALL_MEMTABLES,
                               "in-order-publication"));
}

static void test_write_prepared(void **state)
{
    (void)state;
    free(expect_all_guarantees("prepared", MODE_PREPARED SMALL_MEMTABLES,
                               "write-prepared"));
}

/* A 16-entry commit table: every commit evicts, the leader constantly
** waits for the commit window, long-lived snapshots taken early are
** re-read while thousands of evictions go by; still no violation.  Then
** the same with slowed inserts, which keep batches uncommitted longer. */
static void test_write_prepared_tiny_commit_table(void **state)
{
    (void)state;
    const char *opts = MODE_PREPARED SMALL_MEMTABLES ";commit_table_size=16";
    struct checker *c = expect_all_guarantees("prepared-16", opts,
                                              "write-prepared");
    /* the table did wrap around, many times over */
    assert_true(c->evictions >= 100 * 16);
    free(c);
    rv_test_insert_delay(5, 200);
    c = expect_all_guarantees("prepared-16-slow", opts, "write-prepared");
    rv_test_insert_delay(0, 0);
    assert_true(c->evictions >= 100 * 16);
    free(c);
}

/* unordered_write alone: read-your-own-writes holds, and the checker must
** see atomic reads or snapshot immutability violated (some inserts slowed
** after their first entry make the window wide). */
static void test_unordered_relaxed(void **state)
{
    (void)state;
    struct checker *c = calloc(1, sizeof *c);
    assert_non_null(c);
    rv_test_insert_delay(5, 200);
    uint64_t relaxed = 0;
    for (int round = 0; round < 5 && relaxed == 0; round++) {
        run_checker(c, "unordered", MODE_UNORDERED SMALL_MEMTABLES,
                    batches_per_writer());
        assert_string_equal(c->mode, "unordered");
        assert_int_equal(atomic_load(&c->violations[G_RYOW]), 0);
        relaxed = atomic_load(&c->violations[G_ATOMIC]) +
                  atomic_load(&c->violations[G_IMMUTABLE]);
    }
    rv_test_insert_delay(0, 0);
    if (relaxed == 0)
        fail_msg("unordered_write: no violation of atomic reads or snapshot "
                 "immutability seen in 5 runs: the checker cannot see what "
                 "it checks");
    free(c);
}

/* The same slowed inserts do not break the modes that keep the
** guarantees. */
static void test_slow_inserts_keep_guarantees(void **state)
{
    (void)state;
    rv_test_insert_delay(5, 200);
    free(expect_all_guarantees("ordered-slow", "write_buffer_size=64K",
                               "ordered"));
    free(expect_all_guarantees("in-order-slow",
                               MODE_IN_ORDER SMALL_MEMTABLES,
                               "in-order-publication"));
    free(expect_all_guarantees("prepared-slow",
                               MODE_PREPARED SMALL_MEMTABLES,
                               "write-prepared"));
    rv_test_insert_delay(0, 0);
}

/* ---------------------------------------------------- restart anomaly */

struct put_job {
    ravel_db *db;
    const char *k1, *v1, *k2, *v2; /* k2 NULL: one put */
    _Atomic int done;
};

static void *put_job_main(void *p)
{
    struct put_job *j = p;
    ravel_batch *b = NULL;
    TU_CHECK(ravel_batch_new(&b) == RAVEL_OK, "batch_new");
    if (b) {
        ravel_batch_put(b, j->k1, strlen(j->k1), j->v1, strlen(j->v1));
        if (j->k2)
            ravel_batch_put(b, j->k2, strlen(j->k2), j->v2, strlen(j->v2));
        TU_CHECK(ravel_write(j->db, 0, b) == RAVEL_OK, "write: %s",
                 ravel_errmsg());
        ravel_batch_free(b);
    }
    atomic_store(&j->done, 1);
    return NULL;
}

static void wait_until(int (*cond)(void *), void *arg, const char *what)
{
    for (int i = 0; i < 20000; i++) {
        if (cond(arg))
            return;
        usleep(1000);
    }
    fail_msg("timed out waiting for %s", what);
}

static int group_lead_paused(void *arg)
{
    (void)arg;
    return rv_pause_waiting(RV_PAUSE_GROUP_LEAD);
}

static int commit_paused(void *arg)
{
    (void)arg;
    return rv_pause_waiting(RV_PAUSE_COMMIT);
}

static ravel_db *queued_db;
static int queued_want;
static int writers_queued(void *arg)
{
    (void)arg;
    return rv_db_writers_queued(queued_db) >= queued_want;
}

/* What an iterator through SNAP shows, as "key=value;..." in BUF. */
static const char *iter_dump(ravel_db *db, const ravel_snapshot *snap,
                             char *buf, size_t cap)
{
    ravel_iter *it = NULL;
    TU_OK(ravel_iter_new(db, snap, &it));
    size_t n = 0;
    buf[0] = '\0';
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t klen, vlen;
        const char *k = ravel_iter_key(it, &klen);
        const char *v = ravel_iter_value(it, &vlen);
        int w = snprintf(buf + n, cap - n, "%.*s=%.*s;", (int)klen, k,
                         (int)vlen, v);
        assert_true(w > 0 && (size_t)w < cap - n);
        n += (size_t)w;
    }
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);
    return buf;
}

static int job_done(void *arg)
{
    return atomic_load(&((struct put_job *)arg)->done);
}

/* t1 = {K'=V1, K=V1} then t2 = {K=V2}, in one group, WAL order t1, t2;
** t1's commit held while t2 commits.  docs/ordering.md: a snapshot then
** sees K=V2 and no K'; after t1 commits K=V2, K'=V1; after a restart the
** same. */
static void test_restart_anomaly(void **state)
{
    (void)state;
    char *dir = tu_path("anomaly");
    ravel_db *db = tu_open_ok(dir, MODE_PREPARED);
    struct put_job lead = {db, "lead", "x", NULL, NULL, 0};
    struct put_job t1 = {db, "K'", "V1", "K", "V1", 0};
    struct put_job t2 = {db, "K", "V2", NULL, NULL, 0};
    pthread_t th_lead, th1, th2;

    /* the leader stops before forming its group: t1, then t2 queue */
    rv_pause_arm(RV_PAUSE_GROUP_LEAD);
    assert_int_equal(pthread_create(&th_lead, NULL, put_job_main, &lead), 0);
    wait_until(group_lead_paused, NULL, "the leader to pause");
    queued_db = db;
    queued_want = 1;
    assert_int_equal(pthread_create(&th1, NULL, put_job_main, &t1), 0);
    wait_until(writers_queued, NULL, "t1 to queue");
    queued_want = 2;
    assert_int_equal(pthread_create(&th2, NULL, put_job_main, &t2), 0);
    wait_until(writers_queued, NULL, "t2 to queue");
    /* t1 (first key K') will wait before its commit */
    rv_pause_arm_key(RV_PAUSE_COMMIT, "K'", 2);
    rv_pause_release(RV_PAUSE_GROUP_LEAD);
    wait_until(commit_paused, NULL, "t1 to reach its commit");
    wait_until(job_done, &t2, "t2 to commit");
    pthread_join(th2, NULL);
    wait_until(job_done, &lead, "the leader's write");
    pthread_join(th_lead, NULL);

    /* t2 committed, t1 not: K=V2 and no K', through a snapshot, a get
    ** and an iterator */
    ravel_snapshot *between = NULL;
    TU_OK(ravel_snapshot_acquire(db, &between));
    tu_expect(db, between, "K", "V2");
    tu_expect(db, between, "K'", NULL);
    tu_expect(db, NULL, "K'", NULL);
    char dump[256];
    assert_string_equal(iter_dump(db, between, dump, sizeof dump),
                        "K=V2;lead=x;");
    assert_string_equal(iter_dump(db, NULL, dump, sizeof dump),
                        "K=V2;lead=x;");
    assert_int_equal(tu_prop_u64(db, "ravel.num-files-at-level0"), 0);

    rv_pause_release(RV_PAUSE_COMMIT);
    pthread_join(th1, NULL);
    tu_assert_no_thread_failures();

    /* t1 committed: versions of K are in WAL order, V2 stays newest */
    tu_expect(db, NULL, "K", "V2");
    tu_expect(db, NULL, "K'", "V1");
    /* the snapshot taken between the commits does not change */
    tu_expect(db, between, "K", "V2");
    tu_expect(db, between, "K'", NULL);
    assert_string_equal(iter_dump(db, between, dump, sizeof dump),
                        "K=V2;lead=x;");
    assert_string_equal(iter_dump(db, NULL, dump, sizeof dump),
                        "K=V2;K'=V1;lead=x;");
    TU_OK(ravel_snapshot_release(db, between));

    /* after a restart, WAL order: the same state */
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, MODE_PREPARED);
    tu_expect(db, NULL, "K", "V2");
    tu_expect(db, NULL, "K'", "V1");
    assert_string_equal(iter_dump(db, NULL, dump, sizeof dump),
                        "K=V2;K'=V1;lead=x;");
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* write_prepared: a batch inserted but not committed is flushed to a
** table file; it stays invisible there (to a get, a snapshot and an
** iterator) until its commit, then becomes visible from the file. */
static void test_prepared_value_flushed_before_commit(void **state)
{
    (void)state;
    char *dir = tu_path("flushed-before-commit");
    ravel_db *db = tu_open_ok(dir, MODE_PREPARED);
    tu_put(db, 0, "X", "old");
    rv_pause_arm_key(RV_PAUSE_COMMIT, "X", 1);
    struct put_job held = {db, "X", "new", "Y", "new", 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, put_job_main, &held), 0);
    wait_until(commit_paused, NULL, "the batch to reach its commit");
    TU_OK(ravel_flush(db, 0)); /* the switch waits for inserts, not commits */
    assert_int_equal(tu_prop_u64(db, "ravel.num-files-at-level0"), 1);
    assert_int_equal(tu_prop_u64(db, "ravel.estimate-num-keys"), 3);
    ravel_snapshot *before = NULL;
    TU_OK(ravel_snapshot_acquire(db, &before));
    tu_expect(db, NULL, "X", "old");
    tu_expect(db, NULL, "Y", NULL);
    tu_expect(db, before, "X", "old");
    assert_true(iterate_set_uniform(db, NULL, 0)); /* no set keys: vacuous */

    rv_pause_release(RV_PAUSE_COMMIT);
    pthread_join(th, NULL);
    tu_assert_no_thread_failures();
    tu_expect(db, NULL, "X", "new");
    tu_expect(db, NULL, "Y", "new");
    tu_expect(db, before, "X", "old");
    tu_expect(db, before, "Y", NULL);
    TU_OK(ravel_snapshot_release(db, before));
    /* a flush after the commit keeps what each reader needs */
    TU_OK(ravel_flush(db, 0));
    tu_expect(db, NULL, "X", "new");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, MODE_PREPARED);
    tu_expect(db, NULL, "X", "new");
    tu_expect(db, NULL, "Y", "new");
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* ------------------------------------- the switch waits for inserts */

struct flush_job {
    ravel_db *db;
    int flags;
    _Atomic int done;
    int rc;
};

static void *flush_job_main(void *p)
{
    struct flush_job *j = p;
    j->rc = ravel_flush(j->db, j->flags);
    atomic_store(&j->done, 1);
    return NULL;
}

static int insert_paused(void *arg)
{
    (void)arg;
    return rv_pause_waiting(RV_PAUSE_MEMTABLE_INSERT);
}

/* The "switches waited for inserts" count of ravel.stats. */
static uint64_t switch_waits(ravel_db *db)
{
    char *stats = tu_prop(db, "ravel.stats");
    const char *p = strstr(stats, "inserts pending, ");
    uint64_t n = p ? strtoull(p + strlen("inserts pending, "), NULL, 10)
                   : UINT64_MAX;
    ravel_free(stats);
    assert_true(n != UINT64_MAX);
    return n;
}

static int switch_waiting(void *db)
{
    return switch_waits(db) >= 1;
}

/* The switch waits, or the write that needed it returned (a failure). */
static ravel_db *switch_watch_db;
static struct put_job *switch_watch_job;
static int switch_waiting_or_done(void *arg)
{
    (void)arg;
    return atomic_load(&switch_watch_job->done) ||
           switch_waits(switch_watch_db) >= 1;
}

static int one_table_file(void *db)
{
    return tu_prop_u64(db, "ravel.num-files-at-level0") == 1;
}

static int active_memtable_full(void *db)
{
    return tu_prop_u64(db, "ravel.cur-size-active-mem-table") >= 64 << 10;
}

/* Holds the insert of a put of "held" (MODE's writer waits at
** RV_PAUSE_MEMTABLE_INSERT); *TH is its thread. */
static void hold_insert(ravel_db *db, struct put_job *job, pthread_t *th)
{
    *job = (struct put_job){db, "held", "2", NULL, NULL, 0};
    rv_pause_arm(RV_PAUSE_MEMTABLE_INSERT);
    assert_int_equal(pthread_create(th, NULL, put_job_main, job), 0);
    wait_until(insert_paused, NULL, "the insert to be held");
}

/* One write is held between its release and its insert; a flush asked
** for meanwhile (FLAGS: 0 or RAVEL_FLUSH_NO_WAIT, which still waits for
** the switch) must not switch the memtable out (and flush it) until the
** insert is done: it is seen waiting for inserts, does not return while
** the insert is held, and the flushed file holds the write. */
static void switch_waits_for_insert(const char *mode, int flags)
{
    static int runs;
    char *dir = tu_path("switch-wait-%d", runs++);
    ravel_db *db = tu_open_ok(dir, mode);
    tu_put(db, 0, "before", "1");
    struct put_job held;
    pthread_t th_put, th_flush;
    hold_insert(db, &held, &th_put);

    struct flush_job fj = {db, flags, 0, -1};
    assert_int_equal(pthread_create(&th_flush, NULL, flush_job_main, &fj),
                     0);
    /* the flush's leader waits for the held insert, and stays waiting */
    wait_until(switch_waiting, db, "the switch to wait for the insert");
    usleep(100 * 1000);
    assert_int_equal(atomic_load(&fj.done), 0);
    assert_int_equal(atomic_load(&held.done), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.num-immutable-mem-table"), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.num-files-at-level0"), 0);

    rv_pause_release(RV_PAUSE_MEMTABLE_INSERT);
    pthread_join(th_put, NULL);
    pthread_join(th_flush, NULL);
    tu_assert_no_thread_failures();
    TU_OK(fj.rc);
    wait_until(one_table_file, db, "the flush's table file");
    /* both writes are in the file, none in the fresh memtable */
    assert_int_equal(tu_prop_u64(db, "ravel.estimate-num-keys"), 2);
    tu_expect(db, NULL, "held", "2");
    tu_expect(db, NULL, "before", "1");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, mode);
    tu_expect(db, NULL, "held", "2");
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* The same, with the switch asked for by a full memtable: "held" is held
** before its insert, a put of 80K fills the 64K memtable, and the next
** write's leader, which must switch the memtable out, waits for the held
** insert: that write does not return, and no memtable is switched out,
** until the insert is released.  Then the full memtable (with "held") is
** flushed, the WAL segments it covered are deleted, and every write is
** still there after a reopen. */
static void full_memtable_switch_waits_for_insert(const char *mode)
{
    static int runs;
    char *dir = tu_path("full-switch-wait-%d", runs++);
    char opts[200];
    snprintf(opts, sizeof opts, "%s;write_buffer_size=64K", mode);
    ravel_db *db = tu_open_ok(dir, opts);
    tu_put(db, 0, "before", "1");
    struct put_job held;
    pthread_t th_held, th_big, th_next;
    hold_insert(db, &held, &th_held);

    /* in-order publication: this writer inserts, then waits behind
    ** "held" to be published; the other modes return */
    static char big[80 << 10];
    memset(big, 'b', sizeof big - 1);
    struct put_job filler = {db, "big", big, NULL, NULL, 0};
    assert_int_equal(pthread_create(&th_big, NULL, put_job_main, &filler),
                     0);
    wait_until(active_memtable_full, db, "the memtable to fill up");
    assert_int_equal(switch_waits(db), 0);

    struct put_job next = {db, "next", "3", NULL, NULL, 0};
    assert_int_equal(pthread_create(&th_next, NULL, put_job_main, &next), 0);
    switch_watch_db = db;
    switch_watch_job = &next;
    wait_until(switch_waiting_or_done, NULL,
               "the switch to wait for the insert");
    if (atomic_load(&next.done))
        fail_msg("%s: a write that had to switch the full memtable out "
                 "returned while an insert into it was held", mode);
    usleep(100 * 1000);
    assert_int_equal(atomic_load(&next.done), 0);
    assert_int_equal(atomic_load(&held.done), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.num-immutable-mem-table"), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.num-files-at-level0"), 0);

    rv_pause_release(RV_PAUSE_MEMTABLE_INSERT);
    pthread_join(th_held, NULL);
    pthread_join(th_big, NULL);
    pthread_join(th_next, NULL);
    tu_assert_no_thread_failures();
    /* the full memtable was switched out and flushed; "next" is alone in
    ** the new one */
    wait_until(one_table_file, db, "the full memtable's table file");
    assert_int_equal(tu_prop_u64(db, "ravel.estimate-num-keys"), 4);
    tu_expect(db, NULL, "held", "2");
    tu_expect(db, NULL, "next", "3");
    tu_expect(db, NULL, "big", big);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    tu_expect(db, NULL, "before", "1");
    tu_expect(db, NULL, "held", "2");
    tu_expect(db, NULL, "next", "3");
    tu_expect(db, NULL, "big", big);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

static void test_switch_waits_unordered(void **state)
{
    (void)state;
    switch_waits_for_insert(MODE_UNORDERED, 0);
    switch_waits_for_insert(MODE_UNORDERED, RAVEL_FLUSH_NO_WAIT);
    full_memtable_switch_waits_for_insert(MODE_UNORDERED);
}

static void test_switch_waits_in_order(void **state)
{
    (void)state;
    switch_waits_for_insert(MODE_IN_ORDER, 0);
    switch_waits_for_insert(MODE_IN_ORDER, RAVEL_FLUSH_NO_WAIT);
    full_memtable_switch_waits_for_insert(MODE_IN_ORDER);
}

static void test_switch_waits_prepared(void **state)
{
    (void)state;
    switch_waits_for_insert(MODE_PREPARED, 0);
    switch_waits_for_insert(MODE_PREPARED, RAVEL_FLUSH_NO_WAIT);
    full_memtable_switch_waits_for_insert(MODE_PREPARED);
}

/* An insert that runs out of memory in the middle of the run: writes
** stop; in the modes that keep atomic reads no set is ever seen half
** written -- nothing past the failed batch is published (in-order) or
** committed past the watermark (write_prepared) -- and after a reopen every
** set is whole again (the WAL holds each batch whole). */
struct fail_writer {
    ravel_db *db;
    int set;
    _Atomic int *stop;
};

static void *fail_writer_main(void *p)
{
    struct fail_writer *a = p;
    ravel_batch *b = NULL;
    TU_CHECK(ravel_batch_new(&b) == RAVEL_OK, "batch_new");
    char key[32], val[32];
    for (int i = 1; b && !atomic_load(a->stop); i++) {
        ravel_batch_clear(b);
        set_value(val, sizeof val, a->set, i);
        for (int k = 0; k < SET_KEYS; k++) {
            set_key(key, sizeof key, a->set, k);
            ravel_batch_put(b, key, strlen(key), val, strlen(val));
        }
        int rc = ravel_write(a->db, 0, b);
        if (rc == RAVEL_OK)
            continue;
        TU_CHECK(rc == RAVEL_NOMEM || rc == RAVEL_READONLY,
                 "write failed with %d: %s", rc, ravel_errmsg());
        break;
    }
    ravel_batch_free(b);
    return NULL;
}

static void failed_insert(const char *name, const char *mode)
{
    char *dir = tu_path("%s", name);
    ravel_db *db = tu_open_ok(dir, mode);
    _Atomic int stop = 0;
    struct fail_writer args[WRITERS];
    pthread_t th[WRITERS];
    rv_test_insert_delay(3, 100);
    rv_fault_arm(RV_FAULT_MEMTABLE_ALLOC, 3000, ENOMEM);
    for (int i = 0; i < WRITERS; i++) {
        args[i] = (struct fail_writer){db, i, &stop};
        assert_int_equal(pthread_create(&th[i], NULL, fail_writer_main,
                                        &args[i]), 0);
    }
    /* readers' view while the failure lands and after */
    int half = 0;
    for (int round = 0; round < 400; round++) {
        for (int set = 0; set < WRITERS; set++) {
            char vals[SET_KEYS][32];
            ravel_snapshot *s = NULL;
            TU_OK(ravel_snapshot_acquire(db, &s));
            read_set(db, s, set, vals);
            TU_OK(ravel_snapshot_release(db, s));
            half += !set_is_uniform(vals);
        }
        char *reason = tu_prop(db, "ravel.read-only-reason");
        int stopped = reason[0] != '\0';
        ravel_free(reason);
        if (stopped && round > 20)
            break;
        usleep(1000);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    rv_fault_arm(RV_FAULT_MEMTABLE_ALLOC, -1, 0);
    rv_test_insert_delay(0, 0);
    tu_assert_no_thread_failures();
    char *reason = tu_prop(db, "ravel.read-only-reason");
    if (!reason[0])
        fail_msg("%s: the insert failure did not stop writes", name);
    ravel_free(reason);
    TU_EXPECT_RC(RAVEL_READONLY, ravel_put(db, 0, "after", 5, "x", 1));
    for (int set = 0; set < WRITERS; set++) {
        char vals[SET_KEYS][32];
        read_set(db, NULL, set, vals);
        half += !set_is_uniform(vals);
    }
    if (half)
        fail_msg("%s: %d reads saw a set half written", name, half);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, mode);
    for (int set = 0; set < WRITERS; set++) {
        char vals[SET_KEYS][32];
        read_set(db, NULL, set, vals);
        if (!set_is_uniform(vals))
            fail_msg("%s: after reopen set %d is half written", name, set);
    }
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

static void test_failed_insert_ordered(void **state)
{
    (void)state;
    failed_insert("fail-ordered", "");
}

static void test_failed_insert_in_order(void **state)
{
    (void)state;
    failed_insert("fail-in-order", MODE_IN_ORDER);
}

static void test_failed_insert_prepared(void **state)
{
    (void)state;
    failed_insert("fail-prepared", MODE_PREPARED ";commit_table_size=16");
}

/* After each test, passed or failed: no hook left on for the next one.  A
** failed test may have left a writer held at a pause point; releasing it
** lets it finish (its database is leaked, not closed under it). */
/* The publication invariant, checked against the WAL's order: writer
** threads each write PUB_BATCHES batches of PUB_KEYS keys ("pub<w>-<k>"
** = its counter) while reader threads take snapshots and read every
** writer's keys through each, recording what they saw.  After the run the
** change feed gives every batch's sequence; a snapshot at sequence V must
** then show, of every writer, exactly its last batch at or below V, whole:
** never a batch above V, never a later batch without every earlier one
** (a batch at or below V missing), never part of a batch. */
#define PUB_WRITERS 16
#define PUB_READERS 2
#define PUB_KEYS 4
#define PUB_BATCHES 1000
#define PUB_OBSERVATIONS 1500 /* per reader */

struct pub_observation {
    uint64_t seq;                       /* the snapshot's */
    int32_t seen[PUB_WRITERS];          /* counter, 0: none yet */
};

struct pub_run {
    ravel_db *db;
    _Atomic int writers_done;
    struct pub_observation *obs[PUB_READERS];
    int n_obs[PUB_READERS];
    _Atomic uint64_t torn; /* reads that saw part of a batch */
};

struct pub_arg {
    struct pub_run *run;
    int id;
};

static void pub_key(char *buf, size_t n, int w, int k)
{
    snprintf(buf, n, "pub%02d-%d", w, k);
}

static void *pub_writer_main(void *p)
{
    struct pub_arg *a = p;
    ravel_batch *b = NULL;
    TU_CHECK(ravel_batch_new(&b) == RAVEL_OK, "batch_new");
    char key[32], val[32];
    for (int i = 1; b && i <= PUB_BATCHES; i++) {
        ravel_batch_clear(b);
        snprintf(val, sizeof val, "%d", i);
        for (int k = 0; k < PUB_KEYS; k++) {
            pub_key(key, sizeof key, a->id, k);
            ravel_batch_put(b, key, strlen(key), val, strlen(val));
        }
        int rc = ravel_write(a->run->db, 0, b);
        TU_CHECK(rc == RAVEL_OK, "write: %s", ravel_errmsg());
        if (rc)
            break;
    }
    ravel_batch_free(b);
    atomic_fetch_add(&a->run->writers_done, 1);
    return NULL;
}

/* Reads writer W's keys through SNAP: its counter, or -1 if the keys
** disagree (a torn batch). */
static int32_t pub_read_writer(ravel_db *db, const ravel_snapshot *snap,
                               int w)
{
    int32_t first = 0;
    for (int k = 0; k < PUB_KEYS; k++) {
        char key[32], buf[32];
        pub_key(key, sizeof key, w, k);
        read_value(db, snap, key, buf);
        int32_t v = buf[0] ? (int32_t)atoi(buf) : 0;
        if (k == 0)
            first = v;
        else if (v != first)
            return -1;
    }
    return first;
}

static void *pub_reader_main(void *p)
{
    struct pub_arg *a = p;
    struct pub_run *run = a->run;
    struct pub_observation *obs = run->obs[a->id];
    int n = 0;
    while (n < PUB_OBSERVATIONS &&
           atomic_load(&run->writers_done) < PUB_WRITERS) {
        ravel_snapshot *s = NULL;
        if (ravel_snapshot_acquire(run->db, &s) != RAVEL_OK) {
            tu_thread_fail("snapshot: %s", ravel_errmsg());
            break;
        }
        obs[n].seq = ravel_snapshot_sequence(s);
        for (int w = 0; w < PUB_WRITERS; w++) {
            obs[n].seen[w] = pub_read_writer(run->db, s, w);
            if (obs[n].seen[w] < 0)
                atomic_fetch_add(&run->torn, 1);
        }
        ravel_snapshot_release(run->db, s);
        n++;
    }
    run->n_obs[a->id] = n;
    return NULL;
}

/* Fills SEQ_OF[w][c] with the sequence of writer w's batch c (1-based)
** from the change feed. */
static void pub_read_feed(ravel_db *db, uint64_t seq_of[][PUB_BATCHES + 1])
{
    ravel_updates *u = NULL;
    TU_OK(ravel_updates_since(db, 0, 0, &u));
    int rc;
    size_t batches = 0;
    while ((rc = ravel_updates_next(u)) == RAVEL_OK) {
        const ravel_batch *b = ravel_updates_batch(u);
        size_t pos = 0, klen = 0, vlen = 0;
        int op = 0;
        const void *k = NULL, *v = NULL;
        assert_int_equal(ravel_batch_next_op(b, &pos, &op, &k, &klen, &v,
                                             &vlen), RAVEL_OK);
        int w = -1;
        char vbuf[16];
        assert_true(klen > 3 && memcmp(k, "pub", 3) == 0);
        assert_int_equal(sscanf((const char *)k + 3, "%2d", &w), 1);
        assert_true(w >= 0 && w < PUB_WRITERS && vlen < sizeof vbuf);
        memcpy(vbuf, v, vlen);
        vbuf[vlen] = '\0';
        int c = atoi(vbuf);
        assert_true(c >= 1 && c <= PUB_BATCHES);
        seq_of[w][c] = ravel_updates_sequence(u);
        batches++;
    }
    assert_int_equal(rc, RAVEL_NOTFOUND);
    ravel_updates_free(u);
    assert_int_equal(batches, (size_t)PUB_WRITERS * PUB_BATCHES);
}

/* The counter of writer W's last batch at or below sequence V. */
static int32_t pub_expected(uint64_t seq_of[][PUB_BATCHES + 1], int w,
                            uint64_t v)
{
    int32_t c = 0;
    while (c < PUB_BATCHES && seq_of[w][c + 1] <= v)
        c++;
    return c;
}

/* Runs the publication check on a fresh database opened with OPTS:
** returns the snapshots' writer states that differ from the WAL's order
** plus the torn batches seen. */
static uint64_t publication_violations(const char *name, const char *opts)
{
    char *dir = tu_path("%s", name);
    struct pub_run *run = calloc(1, sizeof *run);
    assert_non_null(run);
    run->db = tu_open_ok(dir, opts);
    pthread_t wt[PUB_WRITERS], rt[PUB_READERS];
    struct pub_arg wa[PUB_WRITERS], ra[PUB_READERS];
    for (int i = 0; i < PUB_READERS; i++) {
        run->obs[i] = calloc(PUB_OBSERVATIONS, sizeof *run->obs[i]);
        assert_non_null(run->obs[i]);
        ra[i] = (struct pub_arg){run, i};
        assert_int_equal(pthread_create(&rt[i], NULL, pub_reader_main,
                                        &ra[i]), 0);
    }
    for (int i = 0; i < PUB_WRITERS; i++) {
        wa[i] = (struct pub_arg){run, i};
        assert_int_equal(pthread_create(&wt[i], NULL, pub_writer_main,
                                        &wa[i]), 0);
    }
    for (int i = 0; i < PUB_WRITERS; i++)
        pthread_join(wt[i], NULL);
    for (int i = 0; i < PUB_READERS; i++)
        pthread_join(rt[i], NULL);
    tu_assert_no_thread_failures();

    uint64_t (*seq_of)[PUB_BATCHES + 1] =
        calloc(PUB_WRITERS, sizeof *seq_of);
    assert_non_null(seq_of);
    pub_read_feed(run->db, seq_of);
    size_t checked = 0, wrong = 0, mid_run = 0;
    for (int r = 0; r < PUB_READERS; r++)
        for (int i = 0; i < run->n_obs[r]; i++) {
            const struct pub_observation *o = &run->obs[r][i];
            int partial = 0;
            for (int w = 0; w < PUB_WRITERS; w++) {
                int32_t want = pub_expected(seq_of, w, o->seq);
                partial |= want > 0 && want < PUB_BATCHES;
                if (o->seen[w] != want) {
                    if (wrong++ < 5)
                        printf("# %s: snapshot at %" PRIu64 " saw writer %d"
                               " at batch %d, want %d\n", name, o->seq, w,
                               (int)o->seen[w], (int)want);
                }
                checked++;
            }
            mid_run += partial;
        }
    printf("# %s: %zu writer states checked in %zu snapshots taken while "
           "writes ran (%zu mid-run), %zu wrong, %" PRIu64 " torn\n", name,
           checked, checked / PUB_WRITERS, mid_run, wrong,
           (uint64_t)atomic_load(&run->torn));
    uint64_t violations = wrong + atomic_load(&run->torn);
    free(seq_of);
    for (int i = 0; i < PUB_READERS; i++)
        free(run->obs[i]);
    TU_OK(ravel_close(run->db));
    free(run);
    tu_rm_rf(dir);
    free(dir);
    return violations;
}

static void publication_in_sequence_order(const char *name, const char *opts)
{
    uint64_t v = publication_violations(name, opts);
    if (v)
        fail_msg("%s: %" PRIu64 " writer states seen through snapshots "
                 "differ from the WAL's order of batches, or were torn",
                 name, v);
}

static void test_publication_order_ordered(void **state)
{
    (void)state;
    publication_in_sequence_order("pub-ordered", "");
    /* the leader inserts every batch of its group */
    publication_in_sequence_order("pub-ordered-serial",
                                  "allow_concurrent_memtable_write=false");
}

static void test_publication_order_in_order(void **state)
{
    (void)state;
    publication_in_sequence_order("pub-in-order", MODE_IN_ORDER);
}

/* unordered_write publishes a group before its inserts: with some inserts
** slowed, the check must see it -- the proof that it sees what it checks. */
static void test_publication_order_checker_sees_unordered(void **state)
{
    (void)state;
    rv_test_insert_delay(5, 200);
    uint64_t seen = 0;
    for (int round = 0; round < 5 && seen == 0; round++)
        seen = publication_violations("pub-unordered", MODE_UNORDERED);
    rv_test_insert_delay(0, 0);
    if (seen == 0)
        fail_msg("unordered_write: no snapshot out of the WAL's order in 5 "
                 "runs: the publication check cannot see what it checks");
}

static int hooks_off(void **state)
{
    (void)state;
    rv_test_insert_delay(0, 0);
    for (int p = 0; p < RV_PAUSE_POINTS; p++) {
        if (p != RV_PAUSE_MEMTABLE_INSERT && p != RV_PAUSE_COMMIT &&
            p != RV_PAUSE_GROUP_LEAD)
            continue;
        rv_pause_release((enum rv_pause_point)p);
        for (int i = 0; i < 5000 && rv_pause_waiting((enum rv_pause_point)p);
             i++)
            usleep(1000);
    }
    return 0;
}

#define ORDERING_TEST(f) cmocka_unit_test_teardown(f, hooks_off)

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        ORDERING_TEST(test_ordered),
        ORDERING_TEST(test_in_order_publication),
        ORDERING_TEST(test_write_prepared),
        ORDERING_TEST(test_write_prepared_tiny_commit_table),
        ORDERING_TEST(test_unordered_relaxed),
        ORDERING_TEST(test_slow_inserts_keep_guarantees),
        ORDERING_TEST(test_restart_anomaly),
        ORDERING_TEST(test_prepared_value_flushed_before_commit),
        ORDERING_TEST(test_switch_waits_unordered),
        ORDERING_TEST(test_switch_waits_in_order),
        ORDERING_TEST(test_switch_waits_prepared),
        ORDERING_TEST(test_failed_insert_ordered),
        ORDERING_TEST(test_failed_insert_in_order),
        ORDERING_TEST(test_failed_insert_prepared),
        ORDERING_TEST(test_publication_order_ordered),
        ORDERING_TEST(test_publication_order_in_order),
        ORDERING_TEST(test_publication_order_checker_sees_unordered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
