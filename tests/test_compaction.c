/*
** test_compaction.c -- leveled compaction (docs/compaction.md): what a
** user relies on while files are merged and rewritten under them.
**
**   - the model check: 4 writer threads, each owning a disjoint quarter of
**     the keys and keeping its exact model of them, put, overwrite and
**     delete (alone and in batches) with tiny memtables, files and level
**     targets, so that compactions run all the time; reader threads take
**     snapshots, check every entry is well formed, that the iterator and
**     gets through the snapshot agree and (in the modes that promise
**     immutable snapshots) that a snapshot re-read later is unchanged; at
**     quiescent points and after a reopen, every get and a full scan match
**     the model, and compactions must have run;
**   - a snapshot held across many compactions reads identically, by get
**     and by iterator;
**   - a version a live snapshot can see is never dropped; released, it is
**     dropped and its space reclaimed; deletions of every key leave no
**     entry in any file;
**   - ravel_compact_range with bounds rewrites only the files of its range;
**   - the files a compaction replaced stay on disk while an iterator reads
**     them, and are deleted once it is freed;
**   - after random writes, every level is within its target;
**   - output files cut at the next level's boundaries
**     (level_compaction_dynamic_file_size) or by max_compaction_bytes:
**     every key and a held snapshot match the model, files stay within
**     their size bound;
**   - a compaction whose table write fails keeps its inputs, is counted in
**     ravel.background-errors, and is retried;
**   - the options' checks.
**
** tests/meson.build runs this program in every ordering mode.  With
** unordered_write alone (no immutable snapshots while writes are in
** flight, docs/ordering.md), the readers' re-read and get-against-scan
** checks are skipped during concurrent writes; every quiescent check
** still applies.
**
** RAVEL_TEST_COMPACTION_OPS scales the model check (operations per writer
** per phase, default 5000); RAVEL_TEST_SEED replays a run.
*/
#include "testutil.h"
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

/* Tiny buffers, files and targets: compactions run all the time. */
#define SMALL "write_buffer_size=64K;target_file_size_base=64K;" \
              "max_bytes_for_level_base=256K;" \
              "level0_file_num_compaction_trigger=2;" \
              "max_bytes_for_level_multiplier=4"
/* The same with compactions only when asked for. */
#define MANUAL SMALL ";disable_auto_compactions=true"

static int db_counter;

static char *fresh_dir(void)
{
    return tu_path("compaction-%d", db_counter++);
}

static int teardown(void **state)
{
    (void)state;
    rv_fault_arm(RV_FAULT_TABLE_WRITE, -1, 0);
    rv_fault_arm(RV_FAULT_TABLE_SYNC, -1, 0);
    rv_fault_arm(RV_FAULT_MANIFEST_WRITE, -1, 0);
    rv_fault_arm(RV_FAULT_MANIFEST_SYNC, -1, 0);
    rv_fault_arm(RV_FAULT_COMPACTION, -1, 0);
    return 0;
}

static void nap_ms(int ms)
{
    struct timespec t = {.tv_sec = ms / 1000,
                         .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Table files at levels 1 and below. */
static uint64_t files_below_level0(ravel_db *db)
{
    uint64_t n = 0;
    for (int l = 1; l < 7; l++)
        n += tu_files_at_level(db, l);
    return n;
}

/* Whether the run's ordering mode promises immutable snapshots while
** writes are in flight (all but unordered_write alone). */
static int snapshots_immutable(ravel_db *db)
{
    char *mode = tu_prop(db, "ravel.write-ordering");
    int yes = strcmp(mode, "unordered") != 0;
    ravel_free(mode);
    return yes;
}

/* Sum of the sizes and entries of the files ravel.sstables names. */
static void table_totals(ravel_db *db, uint64_t *bytes, uint64_t *entries,
                         int *files)
{
    struct tu_sst *s;
    int n = tu_sstables(db, &s);
    uint64_t b = 0, e = 0;
    for (int i = 0; i < n; i++) {
        b += s[i].size;
        e += s[i].entries;
    }
    free(s);
    if (bytes)
        *bytes = b;
    if (entries)
        *entries = e;
    if (files)
        *files = n;
}

static void print_levels(ravel_db *db, const char *when)
{
    char *ls = tu_prop(db, "ravel.levelstats");
    printf("# %s:\n%s", when, ls);
    ravel_free(ls);
}

/* ------------------------------------------------- keys and values */

#define MC_WRITERS 4
#define MC_KEYS_PER_WRITER 1000
#define MC_KEYS (MC_WRITERS * MC_KEYS_PER_WRITER)
#define MC_PHASES 4
#define MC_READERS 2
#define VAL_MAX 320

/* Key G of the model: writer G % MC_WRITERS owns it, so every file holds
** keys of every writer. */
static void mc_key(char *buf, size_t n, int g)
{
    snprintf(buf, n, "key%06d", g);
}

/* The value of version VER of key G: it names both, and its length
** (40 .. 299) follows from them, so a reader can check any value it meets
** without knowing the model. */
static size_t mc_value(char *buf, int g, uint32_t ver)
{
    uint64_t h = ((uint64_t)g * 0x9E3779B97F4A7C15ull) ^
                 ((uint64_t)ver * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 29;
    size_t len = 40 + (size_t)(h % 260);
    int n = snprintf(buf, VAL_MAX, "g%06d-v%08" PRIu32 "-", g, ver);
    for (size_t i = (size_t)n; i < len; i++)
        buf[i] = (char)('a' + (g + ver + i) % 26);
    buf[len] = '\0';
    return len;
}

/* Checks that VAL (VLEN bytes) is a version of key KEY (KLEN bytes) as
** mc_value writes it; *VER gets the version. */
static int mc_value_valid(const char *key, size_t klen, const char *val,
                          size_t vlen, uint32_t *ver)
{
    int g;
    unsigned v;
    char kbuf[32], vbuf[VAL_MAX];
    if (klen != 9 || vlen >= VAL_MAX)
        return 0;
    memcpy(kbuf, key, klen);
    kbuf[klen] = '\0';
    if (sscanf(kbuf, "key%6d", &g) != 1)
        return 0;
    memcpy(vbuf, val, vlen);
    vbuf[vlen] = '\0';
    if (sscanf(vbuf, "g%*6d-v%8u-", &v) != 1)
        return 0;
    char want[VAL_MAX];
    size_t wlen = mc_value(want, g, v);
    if (wlen != vlen || memcmp(want, val, vlen) != 0)
        return 0;
    *ver = v;
    return 1;
}

/* ------------------------------------------------- the model check */

struct mc_writer {
    ravel_db *db;
    int id;
    int ops;
    uint64_t rng;
    uint32_t next_ver;
    /* Version of each owned key now, 0 when absent.  Only this writer
    ** touches it while the writers run; the main thread reads it at
    ** quiescent points (after pthread_join). */
    uint32_t ver[MC_KEYS_PER_WRITER];
    uint64_t puts, deletes, batches;
};

struct mc_reader {
    ravel_db *db;
    _Atomic int *stop;
    int immutable;
    uint64_t rng;
    int snapshots, rereads;
};

static int mc_key_of(const struct mc_writer *w, int i)
{
    return i * MC_WRITERS + w->id;
}

/* Reads key index I back and compares with the writer's model. */
static void mc_check_own(struct mc_writer *w, int i)
{
    char k[32], want[VAL_MAX];
    int g = mc_key_of(w, i);
    mc_key(k, sizeof k, g);
    void *got = NULL;
    size_t glen = 0;
    int rc = ravel_get(w->db, NULL, k, strlen(k), &got, &glen);
    if (w->ver[i] == 0) {
        TU_CHECK(rc == RAVEL_NOTFOUND, "writer %d: %s was deleted, get "
                 "returned %s", w->id, k, ravel_errstr(rc));
    } else {
        size_t wlen = mc_value(want, g, w->ver[i]);
        TU_CHECK(rc == RAVEL_OK && glen == wlen &&
                 memcmp(got, want, wlen) == 0,
                 "writer %d: %s should be version %" PRIu32 ": get returned "
                 "%s, %zu bytes '%.24s'", w->id, k, w->ver[i],
                 ravel_errstr(rc), glen, got ? (char *)got : "");
    }
    ravel_free(got);
}

/* One operation: a put, a delete, or a batch of a few of both. */
static void mc_step(struct mc_writer *w)
{
    char k[32], v[VAL_MAX];
    unsigned r = (unsigned)(tu_rand(&w->rng) % 100);
    int i = (int)(tu_rand(&w->rng) % MC_KEYS_PER_WRITER);
    int rc;
    if (r < 60) {
        uint32_t ver = w->next_ver++;
        mc_key(k, sizeof k, mc_key_of(w, i));
        size_t vl = mc_value(v, mc_key_of(w, i), ver);
        rc = ravel_put(w->db, 0, k, strlen(k), v, vl);
        TU_CHECK(rc == RAVEL_OK, "put %s: %s", k, ravel_errmsg());
        w->ver[i] = ver;
        w->puts++;
    } else if (r < 80) {
        mc_key(k, sizeof k, mc_key_of(w, i));
        rc = ravel_delete(w->db, 0, k, strlen(k));
        TU_CHECK(rc == RAVEL_OK, "delete %s: %s", k, ravel_errmsg());
        w->ver[i] = 0;
        w->deletes++;
    } else {
        /* a batch: its model changes apply only once it is acknowledged */
        ravel_batch *b;
        if (ravel_batch_new(&b) != RAVEL_OK) {
            tu_thread_fail("ravel_batch_new: %s", ravel_errmsg());
            return;
        }
        int n = 2 + (int)(tu_rand(&w->rng) % 5), idx[8];
        uint32_t vers[8];
        for (int j = 0; j < n; j++) {
            idx[j] = (int)(tu_rand(&w->rng) % MC_KEYS_PER_WRITER);
            mc_key(k, sizeof k, mc_key_of(w, idx[j]));
            if (tu_rand(&w->rng) % 4 == 0) {
                vers[j] = 0;
                ravel_batch_delete(b, k, strlen(k));
            } else {
                vers[j] = w->next_ver++;
                size_t vl = mc_value(v, mc_key_of(w, idx[j]), vers[j]);
                ravel_batch_put(b, k, strlen(k), v, vl);
            }
        }
        rc = ravel_write(w->db, 0, b);
        ravel_batch_free(b);
        TU_CHECK(rc == RAVEL_OK, "batch: %s", ravel_errmsg());
        for (int j = 0; j < n; j++)
            w->ver[idx[j]] = vers[j];
        i = idx[n - 1];
        w->batches++;
    }
    mc_check_own(w, i); /* read-your-own-writes, while compactions run */
}

static void *mc_writer_main(void *p)
{
    struct mc_writer *w = p;
    for (int n = 0; n < w->ops && !tu_thread_failures(); n++)
        mc_step(w);
    return NULL;
}

/* Checks a scan's text (tu_scan_all's "key=value\n" lines): keys in
** strictly increasing order, every value well formed for its key.  Sets
** *COUNT to the number of entries. */
static int mc_check_scan_text(const char *text, size_t len, int *count)
{
    const char *p = text, *end = text + len;
    char prev[32] = "";
    int n = 0;
    while (p < end) {
        const char *eq = memchr(p, '=', (size_t)(end - p));
        const char *nl = eq ? memchr(eq, '\n', (size_t)(end - eq)) : NULL;
        if (!nl) {
            tu_thread_fail("scan: a malformed line");
            return 0;
        }
        size_t kl = (size_t)(eq - p);
        uint32_t ver;
        if (!mc_value_valid(p, kl, eq + 1, (size_t)(nl - eq - 1), &ver)) {
            tu_thread_fail("scan: '%.*s' has a value that is not one of its "
                           "versions: '%.40s'", (int)kl, p, eq + 1);
            return 0;
        }
        if (kl >= sizeof prev || (n > 0 && (strlen(prev) > kl ||
            memcmp(prev, p, kl) >= 0))) {
            tu_thread_fail("scan: '%.*s' follows '%s': not in order",
                           (int)kl, p, prev);
            return 0;
        }
        memcpy(prev, p, kl);
        prev[kl] = '\0';
        n++;
        p = nl + 1;
    }
    *count = n;
    return 1;
}

/* Gets through SNAP of a few keys agree with its scan TEXT. */
static void mc_check_gets_agree(ravel_db *db, const ravel_snapshot *snap,
                                const char *text, size_t len, uint64_t *rng)
{
    for (int j = 0; j < 16; j++) {
        int g = (int)(tu_rand(rng) % MC_KEYS);
        char k[32], line[48];
        mc_key(k, sizeof k, g);
        int ll = snprintf(line, sizeof line, "%s=", k);
        /* the scan's line for K, if any: "\nK=" or K= at the start */
        const char *at = NULL;
        if (len >= (size_t)ll && memcmp(text, line, (size_t)ll) == 0) {
            at = text;
        } else {
            char nline[48];
            snprintf(nline, sizeof nline, "\n%s=", k);
            at = memmem(text, len, nline, strlen(nline));
            if (at)
                at++;
        }
        void *got = NULL;
        size_t glen = 0;
        int rc = ravel_get(db, snap, k, strlen(k), &got, &glen);
        if (!at) {
            TU_CHECK(rc == RAVEL_NOTFOUND, "snapshot get of %s: %s, but the "
                     "snapshot's scan did not show it", k, ravel_errstr(rc));
        } else {
            const char *v = at + ll;
            const char *nl = memchr(v, '\n', len - (size_t)(v - text));
            size_t vl = nl ? (size_t)(nl - v) : 0;
            TU_CHECK(rc == RAVEL_OK && glen == vl &&
                     memcmp(got, v, vl) == 0, "snapshot get of %s (%s) "
                     "differs from the snapshot's scan", k, ravel_errstr(rc));
        }
        ravel_free(got);
    }
}

static void *mc_reader_main(void *p)
{
    struct mc_reader *r = p;
    while (!atomic_load(r->stop) && !tu_thread_failures()) {
        ravel_snapshot *s;
        if (ravel_snapshot_acquire(r->db, &s) != RAVEL_OK) {
            tu_thread_fail("snapshot: %s", ravel_errmsg());
            return NULL;
        }
        size_t l1 = 0;
        char *a = tu_scan_all(r->db, s, &l1);
        int n = 0;
        /* gets through the snapshot agree with its scan only where
        ** snapshots are immutable while writes are in flight */
        if (a && mc_check_scan_text(a, l1, &n) && r->immutable)
            mc_check_gets_agree(r->db, s, a, l1, &r->rng);
        if (a && r->immutable) {
            /* again, after the compactions that ran meanwhile */
            nap_ms(20);
            size_t l2 = 0;
            char *b = tu_scan_all(r->db, s, &l2);
            TU_CHECK(b && l1 == l2 && memcmp(a, b, l1) == 0,
                     "a snapshot read twice changed (%zu then %zu bytes of "
                     "entries)", l1, l2);
            free(b);
            r->rereads++;
        }
        free(a);
        ravel_snapshot_release(r->db, s);
        r->snapshots++;
    }
    return NULL;
}

/* Every key reads as the model says, and a full scan (forward, then
** backward) shows exactly the model's keys and values. */
static void mc_check_model(ravel_db *db, struct mc_writer *w)
{
    char k[32], want[VAL_MAX];
    int live = 0;
    for (int g = 0; g < MC_KEYS; g++) {
        uint32_t ver = w[g % MC_WRITERS].ver[g / MC_WRITERS];
        mc_key(k, sizeof k, g);
        if (ver) {
            mc_value(want, g, ver);
            tu_expect(db, NULL, k, want);
            live++;
        } else {
            tu_expect(db, NULL, k, NULL);
        }
    }
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, NULL, &it));
    int g = 0, seen = 0;
    TU_OK(ravel_iter_seek_to_first(it));
    for (; ravel_iter_valid(it); ravel_iter_next(it), seen++) {
        size_t kl, vl;
        const char *ik = ravel_iter_key(it, &kl);
        const char *iv = ravel_iter_value(it, &vl);
        while (g < MC_KEYS && w[g % MC_WRITERS].ver[g / MC_WRITERS] == 0)
            g++;
        if (g == MC_KEYS)
            fail_msg("scan: '%.*s' after the model's last live key",
                     (int)kl, ik);
        mc_key(k, sizeof k, g);
        size_t wl = mc_value(want, g, w[g % MC_WRITERS].ver[g / MC_WRITERS]);
        if (kl != strlen(k) || memcmp(ik, k, kl) != 0)
            fail_msg("scan: entry %d is '%.*s', the model says '%s'", seen,
                     (int)kl, ik, k);
        if (vl != wl || memcmp(iv, want, wl) != 0)
            fail_msg("scan: '%s' is '%.30s', the model says '%.30s'", k,
                     iv, want);
        g++;
    }
    TU_OK(ravel_iter_status(it));
    assert_int_equal(seen, live);
    seen = 0;
    TU_OK(ravel_iter_seek_to_last(it));
    for (; ravel_iter_valid(it); ravel_iter_prev(it))
        seen++;
    TU_OK(ravel_iter_status(it));
    assert_int_equal(seen, live);
    ravel_iter_free(it);
}

static void test_model_concurrent_writers(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    uint64_t seed = tu_seed();
    int ops = (int)tu_env_u64("RAVEL_TEST_COMPACTION_OPS", 5000);
    static struct mc_writer w[MC_WRITERS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < MC_WRITERS; i++) {
        w[i].db = db;
        w[i].id = i;
        w[i].ops = ops;
        w[i].rng = seed + 1000003u * (uint64_t)(i + 1);
        w[i].next_ver = 1;
    }
    struct mc_reader rd[MC_READERS];
    int immutable = snapshots_immutable(db);
    int snaps = 0, rereads = 0;
    uint64_t max_l0 = 0;
    for (int phase = 0; phase < MC_PHASES; phase++) {
        _Atomic int stop = 0;
        pthread_t wt[MC_WRITERS], rt[MC_READERS];
        for (int i = 0; i < MC_READERS; i++) {
            rd[i] = (struct mc_reader){.db = db, .stop = &stop,
                                       .immutable = immutable,
                                       .rng = seed ^ (uint64_t)(77 + i)};
            pthread_create(&rt[i], NULL, mc_reader_main, &rd[i]);
        }
        for (int i = 0; i < MC_WRITERS; i++)
            pthread_create(&wt[i], NULL, mc_writer_main, &w[i]);
        for (int i = 0; i < MC_WRITERS; i++)
            pthread_join(wt[i], NULL);
        atomic_store(&stop, 1);
        for (int i = 0; i < MC_READERS; i++) {
            pthread_join(rt[i], NULL);
            snaps += rd[i].snapshots;
            rereads += rd[i].rereads;
        }
        tu_assert_no_thread_failures();
        uint64_t l0 = tu_files_at_level(db, 0);
        if (l0 > max_l0)
            max_l0 = l0;
        /* quiescent for writes; compactions may still be running */
        mc_check_model(db, w);
        printf("# phase %d: model holds; %" PRIu64 " files at level 0, %"
               PRIu64 " below\n", phase, l0, files_below_level0(db));
    }
    uint64_t puts = 0, dels = 0, batches = 0;
    for (int i = 0; i < MC_WRITERS; i++) {
        puts += w[i].puts;
        dels += w[i].deletes;
        batches += w[i].batches;
    }
    printf("# %" PRIu64 " puts, %" PRIu64 " deletes, %" PRIu64 " batches; "
           "%d snapshots checked, %d re-read\n", puts, dels, batches, snaps,
           rereads);
    assert_true(snaps > 0);
    if (immutable)
        assert_true(rereads > 0);

    /* Compactions really ran: files moved below level 0, and once they
    ** settle level 0 is under its trigger (about a hundred memtables were
    ** flushed, so without compactions it would hold about a hundred). */
    tu_wait_background_idle(db);
    print_levels(db, "after the writers");
    assert_true(files_below_level0(db) > 0);
    assert_true(tu_files_at_level(db, 0) < 2);
    mc_check_model(db, w);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, SMALL);
    mc_check_model(db, w);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------ snapshots and compactions */

static void key_n(char *buf, size_t n, int i)
{
    snprintf(buf, n, "key%06d", i);
}

static void put_n(ravel_db *db, int i, int version)
{
    char k[32], v[VAL_MAX];
    key_n(k, sizeof k, i);
    mc_value(v, i, (uint32_t)version);
    tu_put(db, 0, k, v);
}

/* A snapshot taken after its data was compacted to level 1 and below,
** then held while every key is overwritten or deleted over and over and
** every file is rewritten by compactions: its reads never change. */
static void test_snapshot_held_across_compactions(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    uint64_t rng = tu_seed();
    const int n = 3000;
    for (int i = 0; i < n; i++)
        put_n(db, i, 1);
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    for (int i = 0; i < n; i += 3) /* some of it newer, in level 0 */
        put_n(db, i, 2);
    TU_OK(ravel_flush(db, 0));

    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    size_t len0;
    char *scan0 = tu_scan_all(db, snap, &len0);
    tu_assert_no_thread_failures();
    struct tu_sst *before;
    int n_before = tu_sstables(db, &before);

    for (int round = 0; round < 16; round++) {
        for (int j = 0; j < n / 2; j++) {
            int i = (int)(tu_rand(&rng) % (uint64_t)n);
            if (tu_rand(&rng) % 4 == 0) {
                char k[32];
                key_n(k, sizeof k, i);
                TU_OK(ravel_delete(db, 0, k, strlen(k)));
            } else {
                put_n(db, i, 10 + round);
            }
        }
        if (round % 4 == 3)
            TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
        /* the snapshot by get, now and then, while compactions run */
        if (round % 5 == 0) {
            size_t l;
            char *s = tu_scan_all(db, snap, &l);
            tu_assert_no_thread_failures();
            assert_int_equal(l, len0);
            assert_memory_equal(s, scan0, len0);
            free(s);
        }
    }
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    tu_wait_background_idle(db);

    /* every file named when the snapshot was taken has been rewritten */
    struct tu_sst *after;
    int n_after = tu_sstables(db, &after), kept = 0;
    for (int i = 0; i < n_before; i++)
        for (int j = 0; j < n_after; j++)
            kept += before[i].number == after[j].number;
    printf("# %d files when the snapshot was taken, %d of them still named "
           "after the rounds (%d files now)\n", n_before, kept, n_after);
    assert_true(kept < n_before / 2 + 1);
    free(before);
    free(after);

    /* by iterator: identical */
    size_t len1;
    char *scan1 = tu_scan_all(db, snap, &len1);
    tu_assert_no_thread_failures();
    assert_int_equal(len1, len0);
    assert_memory_equal(scan1, scan0, len0);
    /* by get: every key as the snapshot's first scan showed it */
    char k[32], v[VAL_MAX];
    for (int i = 0; i < n; i++) {
        key_n(k, sizeof k, i);
        mc_value(v, i, i % 3 == 0 ? 2 : 1);
        tu_expect(db, snap, k, v);
    }
    free(scan0);
    free(scan1);
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    free(dir);
}

#define BIG_VALUE (200 * 1024)

/* put k=v1, snapshot, put k=v2, delete k, compact to the last level: the
** snapshot still reads v1 (by get and iterator), the latest state none.
** Released and compacted again: no entry of k is left and its space is
** reclaimed. */
static void test_snapshot_versions_never_dropped(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    char k[32];
    for (int i = 0; i < 100; i++) { /* neighbours, written once */
        snprintf(k, sizeof k, "filler%03d", i);
        tu_put(db, 0, k, "x");
    }
    char *v1 = malloc(BIG_VALUE + 1);
    assert_non_null(v1);
    memset(v1, '1', BIG_VALUE);
    v1[BIG_VALUE] = '\0';
    tu_put(db, 0, "k", v1);
    TU_OK(ravel_flush(db, 0));
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    tu_put(db, 0, "k", "v2");
    TU_OK(ravel_delete(db, 0, "k", 1));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0)); /* and once more */
    assert_int_equal(tu_files_at_level(db, 0), 0);

    tu_expect(db, snap, "k", v1);
    tu_expect(db, NULL, "k", NULL);
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, snap, &it));
    TU_OK(ravel_iter_seek(it, "k", 1));
    assert_true(ravel_iter_valid(it));
    size_t kl, vl;
    const char *ik = ravel_iter_key(it, &kl);
    const char *iv = ravel_iter_value(it, &vl);
    assert_int_equal(kl, 1);
    assert_memory_equal(ik, "k", 1);
    assert_int_equal(vl, BIG_VALUE);
    assert_memory_equal(iv, v1, BIG_VALUE);
    ravel_iter_free(it);
    uint64_t bytes_held, entries_held;
    table_totals(db, &bytes_held, &entries_held, NULL);
    printf("# with the snapshot: %" PRIu64 " bytes, %" PRIu64 " entries in "
           "files\n", bytes_held, entries_held);
    assert_true(bytes_held >= BIG_VALUE);

    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    tu_expect(db, NULL, "k", NULL);
    uint64_t bytes, entries;
    table_totals(db, &bytes, &entries, NULL);
    printf("# released: %" PRIu64 " bytes, %" PRIu64 " entries in files\n",
           bytes, entries);
    /* the 100 neighbours, once each: no version of k, no tombstone */
    assert_int_equal(entries, 100);
    assert_true(bytes < BIG_VALUE / 4);
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof k, "filler%03d", i);
        tu_expect(db, NULL, k, "x");
    }
    free(v1);
    TU_OK(ravel_close(db));
    free(dir);
}

/* Several snapshots at several versions of one key, with the versions
** between them that nobody sees: after compactions down to the last level
** each snapshot reads its own, and the latest state the newest. */
static void test_snapshot_chain_through_compactions(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    ravel_snapshot *s[4];
    const char *seen[4] = {"v1", "v3", NULL, "v5"};
    tu_put(db, 0, "k", "v0");
    tu_put(db, 0, "k", "v1");
    TU_OK(ravel_snapshot_acquire(db, &s[0]));
    TU_OK(ravel_flush(db, 0));
    tu_put(db, 0, "k", "v2");
    tu_put(db, 0, "k", "v3");
    TU_OK(ravel_snapshot_acquire(db, &s[1]));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    TU_OK(ravel_delete(db, 0, "k", 1));
    TU_OK(ravel_snapshot_acquire(db, &s[2]));
    TU_OK(ravel_flush(db, 0));
    tu_put(db, 0, "k", "v4");
    tu_put(db, 0, "k", "v5");
    TU_OK(ravel_snapshot_acquire(db, &s[3]));
    tu_put(db, 0, "k", "v6");
    for (int round = 0; round < 3; round++) {
        TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
        for (int i = 0; i < 4; i++)
            tu_expect(db, s[i], "k", seen[i]);
        tu_expect(db, NULL, "k", "v6");
    }
    /* released one by one, from the middle: the others still read theirs */
    int order[4] = {1, 3, 0, 2};
    for (int j = 0; j < 4; j++) {
        TU_OK(ravel_snapshot_release(db, s[order[j]]));
        s[order[j]] = NULL;
        TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
        for (int i = 0; i < 4; i++)
            if (s[i])
                tu_expect(db, s[i], "k", seen[i]);
        tu_expect(db, NULL, "k", "v6");
    }
    uint64_t entries;
    table_totals(db, NULL, &entries, NULL);
    assert_int_equal(entries, 1); /* v6 alone */
    TU_OK(ravel_close(db));
    free(dir);
}

/* Every key written, then every key deleted: compacted to the last level,
** no file holds an entry, the iterator is empty and the space is gone. */
static void test_tombstones_reclaimed(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    const int n = 5000;
    for (int i = 0; i < n; i++)
        put_n(db, i, 1);
    TU_OK(ravel_flush(db, 0));
    tu_wait_background_idle(db);
    uint64_t bytes_full;
    table_totals(db, &bytes_full, NULL, NULL);
    assert_true(files_below_level0(db) > 0);
    char k[32];
    for (int i = 0; i < n; i++) {
        key_n(k, sizeof k, i);
        TU_OK(ravel_delete(db, 0, k, strlen(k)));
    }
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    uint64_t bytes, entries;
    int files;
    table_totals(db, &bytes, &entries, &files);
    print_levels(db, "every key deleted, compacted");
    printf("# %" PRIu64 " bytes in files before the deletions, %" PRIu64
           " bytes, %" PRIu64 " entries in %d files after\n", bytes_full,
           bytes, entries, files);
    assert_int_equal(entries, 0);
    assert_true(bytes < bytes_full / 20);
    assert_int_equal(tu_prop_u64(db, "ravel.estimate-num-keys"), 0);
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_OK(ravel_iter_seek_to_first(it));
    assert_false(ravel_iter_valid(it));
    TU_OK(ravel_iter_seek_to_last(it));
    assert_false(ravel_iter_valid(it));
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);
    for (int i = 0; i < n; i += 97) {
        key_n(k, sizeof k, i);
        tu_expect(db, NULL, k, NULL);
    }
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, SMALL);
    table_totals(db, NULL, &entries, NULL);
    assert_int_equal(entries, 0);
    key_n(k, sizeof k, 1);
    tu_expect(db, NULL, k, NULL);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------- compact_range bounds */

static void put_prefixed(ravel_db *db, char prefix, int n, int version)
{
    char k[32], v[VAL_MAX];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof k, "%c%05d", prefix, i);
        mc_value(v, i, (uint32_t)version);
        tu_put(db, 0, k, v);
    }
}

static void expect_prefixed(ravel_db *db, char prefix, int n, int version)
{
    char k[32], v[VAL_MAX];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof k, "%c%05d", prefix, i);
        mc_value(v, i, (uint32_t)version);
        tu_expect(db, NULL, k, v);
    }
}

/* The first character of the keys of file NUMBER (its smallest key's),
** from ravel.sstables; 0 if the file is not named. */
static char file_prefix(ravel_db *db, uint64_t number, int *level)
{
    char *text = tu_prop(db, "ravel.sstables");
    char pat[32];
    snprintf(pat, sizeof pat, " %06" PRIu64 ".sst ", number);
    char *at = strstr(text, pat);
    char c = 0;
    if (at) {
        char *line = at;
        while (line > text && line[-1] != '\n')
            line--;
        *level = atoi(line + strlen("level "));
        char *keys = strstr(at, "keys '");
        c = keys ? keys[6] : 0;
    }
    ravel_free(text);
    return c;
}

/* Whether a file named by ravel.sstables holds keys of PREFIX only. */
static int file_only_prefix(ravel_db *db, uint64_t number, char prefix)
{
    char *text = tu_prop(db, "ravel.sstables");
    char pat[32];
    snprintf(pat, sizeof pat, " %06" PRIu64 ".sst ", number);
    char *at = strstr(text, pat);
    int only = 0;
    if (at) {
        char *keys = strstr(at, "keys '");
        char *hi = keys ? strstr(keys, "' .. '") : NULL;
        only = keys && hi && keys[6] == prefix && hi[6] == prefix;
    }
    ravel_free(text);
    return only;
}

/* Checks that the files of SNAP holding only keys of PREFIX are all still
** named, with their numbers and levels; returns how many. */
static int expect_untouched(ravel_db *db, const struct tu_sst *snap, int n,
                            const int *only, char prefix)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (only[i] != prefix)
            continue;
        int level = -1;
        if (!file_prefix(db, snap[i].number, &level))
            fail_msg("file %06" PRIu64 " (keys '%c...' only, outside the "
                     "compacted range) was rewritten", snap[i].number,
                     prefix);
        if (level != snap[i].level)
            fail_msg("file %06" PRIu64 " (outside the compacted range) moved "
                     "from level %d to %d", snap[i].number, snap[i].level,
                     level);
        count++;
    }
    return count;
}

static void test_compact_range_bounds(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, MANUAL);
    const int n = 1000;
    /* three level-0 files (or a few each) of disjoint ranges */
    put_prefixed(db, 'a', n, 1);
    TU_OK(ravel_flush(db, 0));
    put_prefixed(db, 'm', n, 1);
    TU_OK(ravel_flush(db, 0));
    put_prefixed(db, 'z', n, 1);
    TU_OK(ravel_flush(db, 0));
    for (int step = 0; step < 2; step++) {
        struct tu_sst *s;
        int nf = tu_sstables(db, &s);
        int *only = calloc((size_t)nf, sizeof *only);
        assert_non_null(only);
        for (int i = 0; i < nf; i++) {
            const char *prefixes = "amz";
            for (int p = 0; p < 3; p++)
                if (file_only_prefix(db, s[i].number, prefixes[p]))
                    only[i] = prefixes[p];
        }
        TU_OK(ravel_compact_range(db, "m", 1, "m\xff", 2));
        int kept = expect_untouched(db, s, nf, only, 'a') +
                   expect_untouched(db, s, nf, only, 'z');
        printf("# step %d: %d files, %d outside the range kept as they "
               "were\n", step, nf, kept);
        assert_true(kept >= 2);
        /* the range's keys are now at level 1 or below */
        struct tu_sst *now;
        int nn = tu_sstables(db, &now);
        for (int i = 0; i < nn; i++) {
            int level = -1;
            char c = file_prefix(db, now[i].number, &level);
            if (c == 'm' && level == 0)
                fail_msg("file %06" PRIu64 " of the compacted range is "
                         "still at level 0", now[i].number);
        }
        free(now);
        free(s);
        free(only);
        expect_prefixed(db, 'a', n, 1);
        expect_prefixed(db, 'm', n, step + 1);
        expect_prefixed(db, 'z', n, 1);
        if (step == 0) {
            /* everything to level 1 and below, then a new version of m in
            ** level 0: the next range compaction must leave a and z's
            ** files of the lower levels alone */
            TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
            assert_int_equal(tu_files_at_level(db, 0), 0);
            put_prefixed(db, 'm', n, 2);
            TU_OK(ravel_flush(db, 0));
        }
    }
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    free(dir);
}

/* --------------------------------------- files pinned by an iterator */

static void test_iterator_pins_compacted_files(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, MANUAL);
    const int n = 2000;
    for (int version = 1; version <= 3; version++) {
        for (int i = 0; i < n; i++)
            put_n(db, i, version);
        TU_OK(ravel_flush(db, 0));
    }
    struct tu_sst *old;
    int n_old = tu_sstables(db, &old);
    assert_true(n_old >= 3);

    ravel_iter *it;
    TU_OK(ravel_iter_new(db, NULL, &it));
    for (int i = 0; i < n; i += 2) /* newer than the iterator */
        put_n(db, i, 4);
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    assert_int_equal(tu_files_at_level(db, 0), 0);

    /* the overlapping level-0 files were merged: none is named any more,
    ** and every one of them is still on disk for the iterator */
    struct tu_sst *now;
    int n_now = tu_sstables(db, &now);
    for (int i = 0; i < n_old; i++) {
        for (int j = 0; j < n_now; j++)
            if (old[i].number == now[j].number)
                fail_msg("file %06" PRIu64 " is still named after merging "
                         "the overlapping level-0 files", old[i].number);
        if (!tu_sst_exists(dir, old[i].number))
            fail_msg("file %06" PRIu64 " was deleted while an iterator "
                     "created before the compaction still reads it",
                     old[i].number);
    }
    free(now);

    /* the iterator reads every key, as of its creation */
    char k[32], v[VAL_MAX];
    int i = 0;
    TU_OK(ravel_iter_seek_to_first(it));
    for (; ravel_iter_valid(it); ravel_iter_next(it), i++) {
        key_n(k, sizeof k, i);
        size_t vl0 = mc_value(v, i, 3);
        size_t kl, vl;
        const char *ik = ravel_iter_key(it, &kl);
        const char *iv = ravel_iter_value(it, &vl);
        if (kl != strlen(k) || memcmp(ik, k, kl) != 0 || vl != vl0 ||
            memcmp(iv, v, vl) != 0)
            fail_msg("iterator entry %d: '%.*s', expected %s version 3", i,
                     (int)kl, ik, k);
    }
    TU_OK(ravel_iter_status(it));
    assert_int_equal(i, n);
    ravel_iter_free(it);

    /* freed: the replaced files go (a bound on the polls, not a timing
    ** assertion: deletion may be left to a background thread) */
    int left = n_old;
    for (int tries = 0; tries < 2000 && left; tries++) {
        left = 0;
        for (int j = 0; j < n_old; j++)
            left += tu_sst_exists(dir, old[j].number);
        if (left)
            nap_ms(5);
    }
    if (left)
        fail_msg("%d of the %d replaced files are still on disk after the "
                 "iterator that used them was freed", left, n_old);
    uint64_t *on_disk;
    int n_disk = tu_dir_sst_numbers(dir, &on_disk);
    n_now = tu_sstables(db, &now);
    assert_int_equal(n_disk, n_now);
    free(on_disk);
    free(now);
    free(old);
    for (int j = 0; j < n; j++) {
        key_n(k, sizeof k, j);
        mc_value(v, j, j % 2 ? 3 : 4);
        tu_expect(db, NULL, k, v);
    }
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------- levels in targets */

static void test_levels_within_targets(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    uint64_t rng = tu_seed();
    enum { KEYS = 8000, WRITES = 50000 };
    static uint32_t ver[KEYS];
    memset(ver, 0, sizeof ver);
    char k[32], v[VAL_MAX];
    uint64_t written = 0;
    for (int n = 0; n < WRITES; n++) {
        int i = (int)(tu_rand(&rng) % KEYS);
        ver[i] = (uint32_t)n + 1;
        key_n(k, sizeof k, i);
        size_t vl = mc_value(v, i, ver[i]);
        TU_OK(ravel_put(db, 0, k, strlen(k), v, vl));
        written += strlen(k) + vl;
    }
    TU_OK(ravel_flush(db, 0));
    tu_wait_background_idle(db);
    print_levels(db, "after random writes");
    assert_int_equal(tu_prop_u64(db, "ravel.compaction-pending"), 0);

    uint64_t live = 0;
    for (int i = 0; i < KEYS; i++) {
        key_n(k, sizeof k, i);
        if (ver[i]) {
            live += strlen(k) + mc_value(v, i, ver[i]);
            tu_expect(db, NULL, k, v);
        } else {
            tu_expect(db, NULL, k, NULL);
        }
    }
    struct tu_sst *s;
    int nf = tu_sstables(db, &s);
    uint64_t level_bytes[7] = {0}, total = 0;
    int level_files[7] = {0};
    for (int i = 0; i < nf; i++) {
        assert_true(s[i].level >= 0 && s[i].level < 7);
        level_bytes[s[i].level] += s[i].size;
        level_files[s[i].level]++;
        total += s[i].size;
    }
    free(s);
    /* level 0 under its trigger, every level from 1 to the one above the
    ** last within its target: 256K * 4^(L-1) */
    assert_true(level_files[0] < 2);
    uint64_t target = 256 * 1024;
    for (int l = 1; l < 6; l++, target *= 4) {
        printf("# level %d: %d files, %" PRIu64 " bytes, target %" PRIu64
               "\n", l, level_files[l], level_bytes[l], target);
        if (level_bytes[l] > target)
            fail_msg("level %d holds %" PRIu64 " bytes, over its target %"
                     PRIu64 ", with no compaction pending", l,
                     level_bytes[l], target);
    }
    /* space is reclaimed from overwrites: the files are not much larger
    ** than the live data (written was about 6 times it) */
    printf("# %" PRIu64 " bytes written, %" PRIu64 " live, %" PRIu64
           " in files\n", written, live, total);
    assert_true(written > 5 * live);
    assert_true(total < live * 3);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------- where compaction outputs are cut */

/* Random puts and deletes over KEYS keys with OPTS, a snapshot taken
** halfway and held (with a copy of the model at that point) while
** compactions rewrite everything; then every key, now and through the
** snapshot, matches its model, and no file of level 1 or below is larger
** than MAX_FILE.  Returns the files of levels 1 and below. */
static int cut_model_run(const char *opts, uint64_t max_file)
{
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, opts);
    uint64_t rng = tu_seed();
    enum { KEYS = 6000, WRITES = 60000 };
    static uint32_t ver[KEYS], snap_ver[KEYS];
    memset(ver, 0, sizeof ver);
    char k[32], v[VAL_MAX];
    ravel_snapshot *snap = NULL;
    for (int n = 0; n < WRITES; n++) {
        int i = (int)(tu_rand(&rng) % KEYS);
        key_n(k, sizeof k, i);
        if (tu_rand(&rng) % 5 == 0) {
            TU_OK(ravel_delete(db, 0, k, strlen(k)));
            ver[i] = 0;
        } else {
            ver[i] = (uint32_t)n + 1;
            size_t vl = mc_value(v, i, ver[i]);
            TU_OK(ravel_put(db, 0, k, strlen(k), v, vl));
        }
        if (n == WRITES / 2) {
            TU_OK(ravel_snapshot_acquire(db, &snap));
            memcpy(snap_ver, ver, sizeof ver);
        }
        if (n == WRITES / 3) /* everything through every level once */
            TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    }
    TU_OK(ravel_flush(db, 0));
    tu_wait_background_idle(db);
    print_levels(db, "after random writes");
    uint64_t moves = 0;
    char *st = tu_prop(db, "ravel.stats");
    const char *m = strstr(st, "compaction: ");
    if (m)
        moves = strtoull(m + strlen("compaction: "), NULL, 10);
    ravel_free(st);
    for (int i = 0; i < KEYS; i++) {
        key_n(k, sizeof k, i);
        if (ver[i])
            mc_value(v, i, ver[i]);
        tu_expect(db, NULL, k, ver[i] ? v : NULL);
        if (snap_ver[i])
            mc_value(v, i, snap_ver[i]);
        tu_expect(db, snap, k, snap_ver[i] ? v : NULL);
    }
    struct tu_sst *s;
    int nf = tu_sstables(db, &s), below = 0;
    for (int i = 0; i < nf; i++) {
        if (s[i].level == 0)
            continue;
        below++;
        if (s[i].size > max_file)
            fail_msg("file %" PRIu64 " of level %d holds %" PRIu64
                     " bytes, more than %" PRIu64, s[i].number, s[i].level,
                     s[i].size, max_file);
    }
    free(s);
    printf("# %s: %d files below level 0, %" PRIu64 " moves\n", opts, below,
           moves);
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    /* and after a reopen */
    db = tu_open_ok(dir, opts);
    for (int i = 0; i < KEYS; i++) {
        key_n(k, sizeof k, i);
        if (ver[i])
            mc_value(v, i, ver[i]);
        tu_expect(db, NULL, k, ver[i] ? v : NULL);
    }
    TU_OK(ravel_close(db));
    free(dir);
    return below;
}

/* Output files cut at the next level's file boundaries
** (level_compaction_dynamic_file_size, the default) or at the target
** size, and where an output spans more than max_compaction_bytes with
** the level below: whatever the cuts, no entry is lost or resurrected,
** a held snapshot reads what it read, and files stay within twice the
** target (the target without alignment; 64K here, plus one entry and the
** table's index, filter and footer). */
static void test_output_cuts_keep_data(void **state)
{
    (void)state;
    const uint64_t slack = 24 * 1024;
    int aligned = cut_model_run(SMALL, 2 * 65536 + slack);
    int plain = cut_model_run(SMALL ";level_compaction_dynamic_file_size="
                              "false", 65536 + slack);
    /* a tiny max_compaction_bytes: an output is cut at every grandparent
    ** boundary once it spans one file's worth (how many files that makes
    ** depends on when the background compactions ran: printed, not
    ** checked) */
    int tight = cut_model_run(SMALL ";level_compaction_dynamic_file_size="
                              "false;max_compaction_bytes=80K",
                              65536 + slack);
    printf("# files below level 0: %d aligned, %d cut at the target, %d "
           "with max_compaction_bytes=80K\n", aligned, plain, tight);
    assert_true(aligned > 0 && plain > 0 && tight > 0);
}

/* max_compaction_bytes: RocksDB's default (0: 25 target files), any size;
** the dynamic file size a boolean. */
static void test_cut_options(void **state)
{
    (void)state;
    ravel_options *o;
    TU_OK(ravel_options_new(&o));
    char *val;
    TU_OK(ravel_options_get(o, "max_compaction_bytes", &val));
    assert_string_equal(val, "0");
    ravel_free(val);
    TU_OK(ravel_options_get(o, "level_compaction_dynamic_file_size", &val));
    assert_string_equal(val, "true");
    ravel_free(val);
    TU_OK(ravel_options_set(o, "max_compaction_bytes", "1G"));
    assert_int_equal(ravel_options_set(o, "max_compaction_bytes", "-1"),
                     RAVEL_INVALID);
    assert_int_equal(ravel_options_set(o, "level_compaction_dynamic_file_size",
                                       "maybe"), RAVEL_INVALID);
    ravel_options_free(o);
}

/* ------------------------------------------------- a failed compaction */

/* Level-0 files of KEYS keys in ROUNDS overlapping flushes. */
static void make_level0(ravel_db *db, int keys, int rounds)
{
    for (int r = 1; r <= rounds; r++) {
        for (int i = 0; i < keys; i++)
            put_n(db, i, r);
        TU_OK(ravel_flush(db, 0));
    }
}

static void expect_versions(ravel_db *db, int keys, int version)
{
    char k[32], v[VAL_MAX];
    for (int i = 0; i < keys; i++) {
        key_n(k, sizeof k, i);
        mc_value(v, i, (uint32_t)version);
        tu_expect(db, NULL, k, v);
    }
}

/* The directory holds the table files the database names, no more (the
** files a compaction replaced may be deleted a little later, by another
** thread: polled, with a bound against hanging). */
static void expect_no_leaked_file(ravel_db *db, const char *dir)
{
    int n_disk = 0, n_named = 0;
    for (int tries = 0; tries < 2000; tries++) {
        uint64_t *on_disk;
        n_disk = tu_dir_sst_numbers(dir, &on_disk);
        struct tu_sst *named;
        n_named = tu_sstables(db, &named);
        free(on_disk);
        free(named);
        if (n_disk == n_named)
            return;
        nap_ms(5);
    }
    fail_msg("%d table files in %s, the database names %d: files left "
             "behind", n_disk, dir, n_named);
}

/* ravel_compact_range whose first table write fails: RAVEL_IOERR, the
** inputs are still the database, reads and ravel_verify are right, writes
** still accepted; the next call succeeds. */
static void test_compact_range_write_fault(void **state)
{
    (void)state;
    static const enum rv_fault_point points[] = {RV_FAULT_TABLE_WRITE,
                                                 RV_FAULT_TABLE_SYNC};
    for (int p = 0; p < 2; p++) {
        char *dir = fresh_dir();
        ravel_db *db = tu_open_ok(dir, MANUAL);
        make_level0(db, 1500, 3);
        struct tu_sst *before;
        int n_before = tu_sstables(db, &before);
        uint64_t errors = tu_prop_u64(db, "ravel.background-errors");

        rv_fault_arm(points[p], 0, EIO);
        int rc = ravel_compact_range(db, NULL, 0, NULL, 0);
        rv_fault_arm(points[p], -1, 0);
        if (rc != RAVEL_IOERR)
            fail_msg("ravel_compact_range with a failing table %s returned "
                     "%s", p ? "sync" : "write", ravel_errstr(rc));
        printf("# compact_range: %s\n", ravel_errmsg());
        struct tu_sst *after;
        int n_after = tu_sstables(db, &after);
        assert_int_equal(n_after, n_before);
        for (int i = 0; i < n_before; i++) {
            assert_int_equal(after[i].number, before[i].number);
            assert_int_equal(after[i].level, before[i].level);
        }
        free(before);
        free(after);
        assert_true(tu_prop_u64(db, "ravel.background-errors") > errors);
        expect_versions(db, 1500, 3);
        TU_OK(ravel_verify(db));
        expect_no_leaked_file(db, dir);
        /* one failed compaction does not stop writes */
        tu_put(db, 0, "after-failure", "ok");

        TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
        assert_int_equal(tu_files_at_level(db, 0), 0);
        assert_true(files_below_level0(db) > 0);
        expect_versions(db, 1500, 3);
        tu_expect(db, NULL, "after-failure", "ok");
        expect_no_leaked_file(db, dir);
        TU_OK(ravel_close(db));
        db = tu_open_ok(dir, MANUAL);
        expect_versions(db, 1500, 3);
        TU_OK(ravel_verify(db));
        TU_OK(ravel_close(db));
        free(dir);
    }
}

/* A background compaction whose table write fails: level 0 is left as it
** was (reads right, ravel_verify OK), ravel.background-errors counts it,
** writes go on, and the compaction is retried and succeeds once the fault
** is gone (a fault fires once). */
static void test_background_compaction_write_fault(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, MANUAL);
    make_level0(db, 1500, 3);
    TU_OK(ravel_close(db)); /* every memtable flushed: the open flushes
                            ** nothing, so the first table written after
                            ** it is a compaction's */
    uint64_t l0 = 0;
    rv_fault_arm(RV_FAULT_TABLE_WRITE, 0, EIO);
    db = tu_open_ok(dir, SMALL); /* auto compactions on: due at once */
    uint64_t errors = 0;
    for (int i = 0; i < 6000 && errors == 0; i++) {
        errors = tu_prop_u64(db, "ravel.background-errors");
        if (!errors)
            nap_ms(5);
    }
    if (!errors)
        fail_msg("a compaction was due at open, its table write failed, but "
                 "ravel.background-errors stayed 0");
    l0 = tu_files_at_level(db, 0);
    printf("# after the failure: %" PRIu64 " level-0 files, %" PRIu64
           " below\n", l0, files_below_level0(db));
    expect_versions(db, 1500, 3);
    TU_OK(ravel_verify(db));
    char *why = tu_prop(db, "ravel.read-only-reason");
    assert_string_equal(why, "");
    ravel_free(why);
    tu_put(db, 0, "after-failure", "ok");

    tu_wait_background_idle(db);
    print_levels(db, "retried");
    assert_true(tu_files_at_level(db, 0) < 2);
    assert_true(files_below_level0(db) > 0);
    expect_versions(db, 1500, 3);
    tu_expect(db, NULL, "after-failure", "ok");
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, MANUAL);
    expect_versions(db, 1500, 3);
    expect_no_leaked_file(db, dir);
    TU_OK(ravel_close(db));
    free(dir);
}

/* A compaction that keeps failing stops writes, with the reason, after
** its fifth failure in a row (RV_FAULT_COMPACTION fails a compaction
** alone, after its outputs are written); reads go on; a reopen writes. */
static void test_persistent_compaction_failure(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, MANUAL);
    make_level0(db, 1500, 2);
    int failures = 0;
    for (; failures < 10; failures++) {
        rv_fault_arm(RV_FAULT_COMPACTION, 0, EIO);
        int rc = ravel_compact_range(db, NULL, 0, NULL, 0);
        rv_fault_arm(RV_FAULT_COMPACTION, -1, 0);
        if (rc == RAVEL_READONLY)
            break;
        if (rc != RAVEL_IOERR)
            fail_msg("compaction %d with a fault: %s", failures,
                     ravel_errstr(rc));
        expect_no_leaked_file(db, dir);
        char *why = tu_prop(db, "ravel.read-only-reason");
        int stopped = why[0] != 0;
        ravel_free(why);
        if (stopped)
            break;
        tu_put(db, 0, "still-writable", "yes");
    }
    printf("# writes stopped after %d failed compactions\n", failures + 1);
    assert_int_equal(failures + 1, 5);
    char *why = tu_prop(db, "ravel.read-only-reason");
    printf("# ravel.read-only-reason: %s\n", why);
    assert_non_null(strstr(why, "compaction"));
    ravel_free(why);
    TU_EXPECT_RC(RAVEL_READONLY, ravel_put(db, 0, "x", 1, "y", 1));
    expect_versions(db, 1500, 2);
    assert_true(tu_prop_u64(db, "ravel.background-errors") >= 5);
    int rc = ravel_close(db);
    assert_true(rc == RAVEL_OK || rc == RAVEL_IOERR);
    db = tu_open_ok(dir, MANUAL);
    expect_versions(db, 1500, 2);
    tu_expect(db, NULL, "still-writable", "yes");
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    tu_put(db, 0, "x", "y");
    TU_OK(ravel_verify(db));
    expect_no_leaked_file(db, dir);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------ write_prepared, evictions */

struct wp_writer {
    ravel_db *db;
    int id;
    _Atomic int *stop;
    int batches;
};

static void *wp_writer_main(void *p)
{
    struct wp_writer *w = p;
    char k[32], v[VAL_MAX];
    uint64_t rng = 0x1234567ull + (uint64_t)w->id;
    while (!atomic_load(w->stop) && !tu_thread_failures()) {
        ravel_batch *b;
        if (ravel_batch_new(&b) != RAVEL_OK)
            break;
        for (int j = 0; j < 4; j++) {
            int i = (int)(tu_rand(&rng) % 500) * 4 + w->id;
            key_n(k, sizeof k, i);
            size_t vl = mc_value(v, i, (uint32_t)(w->batches + 100));
            ravel_batch_put(b, k, strlen(k), v, vl);
        }
        int rc = ravel_write(w->db, 0, b);
        ravel_batch_free(b);
        TU_CHECK(rc == RAVEL_OK, "write: %s", ravel_errmsg());
        w->batches++;
    }
    return NULL;
}

/* With WritePrepared ordering and a 16-entry commit table (constant
** evictions), snapshots taken while 4 threads commit batches read the
** same after compact_range has rewritten everything under them. */
static void test_write_prepared_snapshots_compacted(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL ";unordered_write=true;"
                              "in_order_publication=false;"
                              "two_write_queues=true;"
                              "write_policy=write_prepared;"
                              "commit_table_size=16");
    for (int i = 0; i < 2000; i++)
        put_n(db, i, 1);
    _Atomic int stop = 0;
    struct wp_writer w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct wp_writer){.db = db, .id = i, .stop = &stop};
        pthread_create(&th[i], NULL, wp_writer_main, &w[i]);
    }
    enum { SNAPS = 6 };
    ravel_snapshot *s[SNAPS];
    char *scan[SNAPS];
    size_t len[SNAPS];
    for (int j = 0; j < SNAPS; j++) {
        nap_ms(30);
        TU_OK(ravel_snapshot_acquire(db, &s[j]));
        scan[j] = tu_scan_all(db, s[j], &len[j]);
        TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    char *stats = tu_prop(db, "ravel.stats");
    const char *ct = strstr(stats, "commit table: ");
    unsigned long long entries = 0, evictions = 0;
    assert_non_null(ct);
    assert_int_equal(sscanf(ct, "commit table: %llu entries, %llu evictions",
                            &entries, &evictions), 2);
    ravel_free(stats);
    printf("# %d+%d+%d+%d batches; %llu evictions\n", w[0].batches,
           w[1].batches, w[2].batches, w[3].batches, evictions);
    assert_true(evictions > 16);
    for (int j = 0; j < SNAPS; j++) {
        size_t l;
        char *again = tu_scan_all(db, s[j], &l);
        tu_assert_no_thread_failures();
        if (l != len[j] || memcmp(again, scan[j], l) != 0)
            fail_msg("snapshot %d read differently after compactions", j);
        int n = 0;
        assert_true(mc_check_scan_text(again, l, &n));
        assert_int_equal(n, 2000);
        free(again);
        free(scan[j]);
        TU_OK(ravel_snapshot_release(db, s[j]));
    }
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------------ options */

static void test_options_checked(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = NULL;
    tu_errmsg_prime();
    int rc = tu_open(dir, "level0_slowdown_writes_trigger=10;"
                     "level0_stop_writes_trigger=5", &db);
    assert_int_equal(rc, RAVEL_INVALID);
    assert_null(db);
    const char *m = ravel_errmsg();
    printf("# %s\n", m);
    if (!strstr(m, "level0_stop_writes_trigger") ||
        !strstr(m, "level0_slowdown_writes_trigger"))
        fail_msg("the message does not name both options: %s", m);

    tu_errmsg_prime();
    rc = tu_open(dir, "level0_file_num_compaction_trigger=8;"
                 "level0_slowdown_writes_trigger=4", &db);
    assert_int_equal(rc, RAVEL_INVALID);
    m = ravel_errmsg();
    if (!strstr(m, "level0_file_num_compaction_trigger") ||
        !strstr(m, "level0_slowdown_writes_trigger"))
        fail_msg("the message does not name both options: %s", m);

    ravel_options *o;
    TU_OK(ravel_options_new(&o));
    TU_EXPECT_INVALID(ravel_options_set(o, "num_levels", "8"));
    assert_non_null(strstr(ravel_errmsg(), "num_levels"));
    TU_EXPECT_INVALID(ravel_options_set(o, "num_levels", "1"));
    TU_EXPECT_INVALID(ravel_options_set(o, "max_bytes_for_level_multiplier",
                                        "1"));
    TU_EXPECT_INVALID(ravel_options_set(o, "level0_stop_writes_trigger",
                                        "0"));
    TU_OK(ravel_options_set(o, "num_levels", "7"));
    TU_OK(ravel_options_set(o, "disable_auto_compactions", "true"));
    ravel_options_free(o);

    /* data below the last level num_levels allows: refused at open */
    db = tu_open_ok(dir, SMALL);
    for (int i = 0; i < 6000; i++)
        put_n(db, i, 1);
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    tu_wait_background_idle(db);
    int deepest = 0;
    for (int l = 1; l < 7; l++)
        if (tu_files_at_level(db, l))
            deepest = l;
    printf("# deepest level with files: %d\n", deepest);
    assert_true(deepest >= 2);
    TU_OK(ravel_close(db));
    char opt[64];
    snprintf(opt, sizeof opt, "num_levels=%d", deepest);
    tu_errmsg_prime();
    rc = tu_open(dir, opt, &db);
    assert_int_equal(rc, RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "num_levels"));
    db = tu_open_ok(dir, SMALL);
    put_n(db, 0, 1);
    expect_versions(db, 6000, 1);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ravel_compact_range: argument checks and a read-only database. */
static void test_compact_range_api(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    TU_EXPECT_INVALID(ravel_compact_range(NULL, NULL, 0, NULL, 0));
    ravel_db *db = tu_open_ok(dir, MANUAL);
    TU_EXPECT_INVALID(ravel_compact_range(db, NULL, 3, NULL, 0));
    TU_EXPECT_INVALID(ravel_compact_range(db, NULL, 0, NULL, 3));
    /* an empty database, an empty range, a reversed range: nothing to do */
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    put_n(db, 5, 1);
    TU_OK(ravel_compact_range(db, "x", 1, "y", 1));
    /* a reversed range compacts nothing: done, or refused */
    int rc = ravel_compact_range(db, "y", 1, "a", 1);
    assert_true(rc == RAVEL_OK || rc == RAVEL_INVALID);
    /* the range compaction flushes the memtable first */
    TU_OK(ravel_compact_range(db, "key000005", 9, "key000005", 9));
    assert_int_equal(tu_files_at_level(db, 0), 0);
    assert_true(files_below_level0(db) == 1);
    char v[VAL_MAX];
    mc_value(v, 5, 1);
    tu_expect(db, NULL, "key000005", v);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "read_only=true");
    TU_EXPECT_RC(RAVEL_READONLY, ravel_compact_range(db, NULL, 0, NULL, 0));
    TU_OK(ravel_close(db));
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_options_checked, teardown),
        cmocka_unit_test_teardown(test_compact_range_api, teardown),
        cmocka_unit_test_teardown(test_snapshot_versions_never_dropped,
                                  teardown),
        cmocka_unit_test_teardown(test_snapshot_chain_through_compactions,
                                  teardown),
        cmocka_unit_test_teardown(test_tombstones_reclaimed, teardown),
        cmocka_unit_test_teardown(test_compact_range_bounds, teardown),
        cmocka_unit_test_teardown(test_iterator_pins_compacted_files,
                                  teardown),
        cmocka_unit_test_teardown(test_compact_range_write_fault, teardown),
        cmocka_unit_test_teardown(test_background_compaction_write_fault,
                                  teardown),
        cmocka_unit_test_teardown(test_persistent_compaction_failure,
                                  teardown),
        cmocka_unit_test_teardown(test_snapshot_held_across_compactions,
                                  teardown),
        cmocka_unit_test_teardown(test_levels_within_targets, teardown),
        cmocka_unit_test_teardown(test_cut_options, teardown),
        cmocka_unit_test_teardown(test_output_cuts_keep_data, teardown),
        cmocka_unit_test_teardown(test_write_prepared_snapshots_compacted,
                                  teardown),
        cmocka_unit_test_teardown(test_model_concurrent_writers, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
