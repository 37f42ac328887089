/*
** test_hostile_rdt.c -- hostile differential test of range tombstones in
** table files: random puts, deletes, range deletes
** (many aligned on the table files' boundary keys, empty and single-key
** ranges), batches, snapshots held across flushes and compactions,
** compact_range of sub-ranges, reopens and read_only handles, over many
** small files (4 KiB memtables, 64 KiB files and level base, level 0
** compacted at 2 files, 256-byte blocks), checked against an in-memory
** model by gets, multi_get, full scans both ways, seeks and
** seek_for_prevs stepped both ways, and iterators bounded at tombstone
** ends, for the latest state and every snapshot.
**
** RAVEL_TEST_SEED, RAVEL_HRDT_STEPS (default 1500), RAVEL_HRDT_KEYS
** (default 500), RAVEL_HRDT_SEEDS (how many seeds from the first, 1).
** RAVEL_HRDT_NO_HELD=1: no held iterators.  Two defects it found are
** tests of test_hostile.c: compact_range_overlap and
** held_iterator_moved_file.
** RAVEL_HRDT_HEAVY=1: more data (more files, deeper levels).
** RAVEL_HRDT_OPTS: more options ("name=value;...").
** On a failure the op log is printed and written to /tmp (with
** RAVEL_HRDT_TRACE=1 the files after each flush and compaction), the
** database copied to /tmp/hrdt-db-SEED; the run is not deterministic
** (background compactions, and range deletes drawn at file bounds), so
** a seed reproduces a failure only sometimes.
*/
#include "testutil.h"
#include "db/db.h"
#include "db/version.h"
#include "db/version_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXK 4000

static int nk;
static uint64_t g_serial;

struct model {
    uint64_t ser[MAXK]; /* 0: absent */
    uint16_t len[MAXK];
};

struct snap {
    ravel_snapshot *s;
    struct model *m;
};

static char *oplog;
static size_t oplog_len, oplog_cap;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (oplog_len + (size_t)n + 1 > oplog_cap) {
        oplog_cap = (oplog_cap + (size_t)n + 1) * 2;
        oplog = realloc(oplog, oplog_cap);
    }
    memcpy(oplog + oplog_len, line, (size_t)n);
    oplog_len += (size_t)n;
    oplog[oplog_len] = 0;
}

static uint64_t cur_seed;
static ravel_db *g_db;
static const char *g_dir;

#define FAIL(...) do { \
        char p_[96]; \
        snprintf(p_, sizeof p_, "/tmp/hrdt-oplog-%llu.txt", \
                 (unsigned long long)cur_seed); \
        FILE *f_ = fopen(p_, "w"); \
        if (f_) { fputs(oplog ? oplog : "", f_); fclose(f_); } \
        size_t l_ = oplog_len; \
        fprintf(stderr, "seed %llu; op log in %s; last ops:\n%s\n", \
                (unsigned long long)cur_seed, p_, \
                oplog + (l_ > 6000 ? l_ - 6000 : 0)); \
        if (g_db) { \
            char *ss_ = NULL; \
            if (ravel_property(g_db, "ravel.sstables", &ss_) == RAVEL_OK) \
                fprintf(stderr, "sstables:\n%s\n", ss_); \
            ravel_free(ss_); \
        } \
        if (g_dir) { \
            char cmd_[512]; \
            snprintf(cmd_, sizeof cmd_, "cp -r %s /tmp/hrdt-db-%llu", \
                     g_dir, (unsigned long long)cur_seed); \
            if (system(cmd_) != 0) \
                fprintf(stderr, "copy failed\n"); \
        } \
        fail_msg(__VA_ARGS__); \
    } while (0)

static void key_of(int i, char *buf)
{
    snprintf(buf, 8, "k%05u", (unsigned)i % 100000u);
}

static size_t val_of(uint64_t ser, unsigned len, char *buf)
{
    int n = snprintf(buf, 400, "v%llu-", (unsigned long long)ser);
    for (unsigned i = (unsigned)n; i < len; i++)
        buf[i] = (char)('a' + (ser + i) % 26);
    return len > (unsigned)n ? len : (unsigned)n;
}

static int eq_model(const struct model *m, int i, const void *v, size_t vl)
{
    char buf[400];
    size_t l = val_of(m->ser[i], m->len[i], buf);
    return l == vl && memcmp(buf, v, l) == 0;
}

/* ------------------------------------------------------- checks */

static void check_gets(ravel_db *db, const ravel_snapshot *snap,
                       const struct model *m, const char *what)
{
    ravel_readoptions *ro = NULL;
    TU_OK(ravel_readoptions_new(&ro));
    if (snap)
        ravel_readoptions_set_snapshot(ro, snap);
    for (int i = 0; i < nk; i++) {
        char k[8];
        key_of(i, k);
        void *v = NULL;
        size_t vl = 0;
        int rc = ravel_get_opt(db, ro, k, 6, &v, &vl);
        if (m->ser[i]) {
            if (rc != RAVEL_OK)
                FAIL("%s: get %s: rc %d, expected v%llu (lost live value)",
                     what, k, rc, (unsigned long long)m->ser[i]);
            if (!eq_model(m, i, v, vl))
                FAIL("%s: get %s: %.*s, expected v%llu", what, k,
                     (int)(vl < 20 ? vl : 20), (char *)v,
                     (unsigned long long)m->ser[i]);
            ravel_free(v);
        } else if (rc != RAVEL_NOTFOUND) {
            FAIL("%s: get %s: rc %d value %.*s, expected not found "
                 "(resurrection)", what, k, rc,
                 (int)(vl < 20 ? vl : 20), v ? (char *)v : "");
        }
    }
    ravel_readoptions_free(ro);
}

static void check_multi_get(ravel_db *db, const ravel_snapshot *snap,
                            const struct model *m, uint64_t *rng,
                            const char *what)
{
    int n = 1 + (int)(tu_rand(rng) % 64);
    char (*keys)[8] = malloc((size_t)n * 8);
    const void **kp = malloc((size_t)n * sizeof *kp);
    size_t *kl = malloc((size_t)n * sizeof *kl);
    size_t *vl = malloc((size_t)n * sizeof *vl);
    void **vals = malloc((size_t)n * sizeof *vals);
    int *rcs = malloc((size_t)n * sizeof *rcs);
    int *idx = malloc((size_t)n * sizeof *idx);
    int start = (int)(tu_rand(rng) % (uint64_t)nk);
    for (int j = 0; j < n; j++) {
        idx[j] = tu_rand(rng) % 2 ? (int)(tu_rand(rng) % (uint64_t)nk)
                                  : (start + j) % nk;
        key_of(idx[j], keys[j]);
        kp[j] = keys[j];
        kl[j] = 6;
    }
    ravel_readoptions *ro = NULL;
    TU_OK(ravel_readoptions_new(&ro));
    if (snap)
        ravel_readoptions_set_snapshot(ro, snap);
    TU_OK(ravel_multi_get(db, ro, (size_t)n, kp, kl, vals, vl, rcs));
    for (int j = 0; j < n; j++) {
        int i = idx[j];
        if (m->ser[i] && (rcs[j] != RAVEL_OK || !eq_model(m, i, vals[j],
                                                           vl[j])))
            FAIL("%s: multi_get %s rc %d, expected v%llu", what, keys[j],
                 rcs[j], (unsigned long long)m->ser[i]);
        if (!m->ser[i] && rcs[j] != RAVEL_NOTFOUND)
            FAIL("%s: multi_get %s rc %d, expected not found "
                 "(resurrection)", what, keys[j], rcs[j]);
        if (rcs[j] == RAVEL_OK)
            ravel_free(vals[j]);
    }
    ravel_readoptions_free(ro);
    free(keys); free(kp); free(kl); free(vl); free(vals); free(rcs);
    free(idx);
}

static int model_next(const struct model *m, int i, int hi)
{
    while (i < hi && !m->ser[i])
        i++;
    return i < hi ? i : -1;
}

static int model_prev(const struct model *m, int i, int lo)
{
    while (i >= lo && !m->ser[i])
        i--;
    return i >= lo ? i : -1;
}

static void expect_at(ravel_iter *it, const struct model *m, int want,
                      const char *what, const char *how)
{
    if (want < 0) {
        if (ravel_iter_valid(it)) {
            size_t kl;
            const char *k = ravel_iter_key(it, &kl);
            FAIL("%s: %s: at %.*s, expected the end", what, how, (int)kl, k);
        }
        TU_OK(ravel_iter_status(it));
        return;
    }
    char wk[8];
    key_of(want, wk);
    if (!ravel_iter_valid(it))
        FAIL("%s: %s: at the end (status %d), expected %s", what, how,
             ravel_iter_status(it), wk);
    size_t kl, vl;
    const char *k = ravel_iter_key(it, &kl);
    const char *v = ravel_iter_value(it, &vl);
    if (kl != 6 || memcmp(k, wk, 6) != 0)
        FAIL("%s: %s: at %.*s, expected %s", what, how, (int)kl, k, wk);
    if (!eq_model(m, want, v, vl))
        FAIL("%s: %s: %s has %.*s, expected v%llu", what, how, wk,
             (int)(vl < 20 ? vl : 20), v, (unsigned long long)m->ser[want]);
}

static int recent_ends[32];
static int n_recent;

static int pick_key(uint64_t *rng)
{
    if (n_recent && tu_rand(rng) % 2)
        return recent_ends[tu_rand(rng) % (uint64_t)n_recent];
    return (int)(tu_rand(rng) % (uint64_t)(nk + 1));
}

#define IT_OK(call) do { \
        int it_rc_ = (call); \
        if (it_rc_ != RAVEL_OK) \
            FAIL("%s: %s: returned %d: %s", what, #call, it_rc_, \
                 ravel_errmsg()); \
    } while (0)

static void check_iter_held(ravel_db *db, const ravel_snapshot *snap,
                            const struct model *m, uint64_t *rng,
                            const char *what, ravel_iter *held)
{
    ravel_iter *it = held;
    if (!it)
        IT_OK(ravel_iter_new(db, snap, &it));
    char w[160];
    /* full forward */
    IT_OK(ravel_iter_seek_to_first(it));
    int i = model_next(m, 0, nk);
    snprintf(w, sizeof w, "%s fwd", what);
    for (;;) {
        expect_at(it, m, i, w, "scan");
        if (i < 0)
            break;
        IT_OK(ravel_iter_next(it));
        i = model_next(m, i + 1, nk);
    }
    IT_OK(ravel_iter_seek_to_last(it));
    i = model_prev(m, nk - 1, 0);
    snprintf(w, sizeof w, "%s rev", what);
    for (;;) {
        expect_at(it, m, i, w, "scan");
        if (i < 0)
            break;
        IT_OK(ravel_iter_prev(it));
        i = model_prev(m, i - 1, 0);
    }
    /* seeks */
    for (int s = 0; s < 24; s++) {
        int t = pick_key(rng);
        char k[8];
        key_of(t, k);
        char how[64];
        if (tu_rand(rng) % 2) {
            IT_OK(ravel_iter_seek(it, k, 6));
            int at = model_next(m, t, nk);
            snprintf(how, sizeof how, "seek %s", k);
            expect_at(it, m, at, what, how);
            int steps = (int)(tu_rand(rng) % 4);
            for (int j = 0; j < steps && at >= 0; j++) {
                int fwd = (int)(tu_rand(rng) % 2);
                if (fwd) {
                    IT_OK(ravel_iter_next(it));
                    at = model_next(m, at + 1, nk);
                } else {
                    IT_OK(ravel_iter_prev(it));
                    at = model_prev(m, at - 1, 0);
                }
                snprintf(how, sizeof how, "seek %s then %d %s", k, j,
                         fwd ? "next" : "prev");
                expect_at(it, m, at, what, how);
            }
        } else {
            IT_OK(ravel_iter_seek_for_prev(it, k, 6));
            int at = model_prev(m, t < nk ? t : nk - 1, 0);
            snprintf(how, sizeof how, "seek_for_prev %s", k);
            expect_at(it, m, at, what, how);
            int steps = (int)(tu_rand(rng) % 4);
            for (int j = 0; j < steps && at >= 0; j++) {
                int fwd = (int)(tu_rand(rng) % 2);
                if (fwd) {
                    IT_OK(ravel_iter_next(it));
                    at = model_next(m, at + 1, nk);
                } else {
                    IT_OK(ravel_iter_prev(it));
                    at = model_prev(m, at - 1, 0);
                }
                snprintf(how, sizeof how, "seek_for_prev %s then %d %s", k,
                         j, fwd ? "next" : "prev");
                expect_at(it, m, at, what, how);
            }
        }
    }
    if (held)
        return;
    ravel_iter_free(it);
    /* bounded iterators at tombstone ends */
    for (int s = 0; s < 3; s++) {
        int lo = pick_key(rng), hi = pick_key(rng);
        if (lo > hi) {
            int t = lo; lo = hi; hi = t;
        }
        char lk[8], hk[8];
        key_of(lo, lk);
        key_of(hi, hk);
        IT_OK(ravel_iter_new(db, snap, &it));
        IT_OK(ravel_iter_set_bounds(it, lk, 6, hk, 6));
        char how[64];
        snprintf(how, sizeof how, "bounded [%s,%s) fwd", lk, hk);
        IT_OK(ravel_iter_seek_to_first(it));
        int at = model_next(m, lo, hi);
        for (;;) {
            expect_at(it, m, at, what, how);
            if (at < 0)
                break;
            IT_OK(ravel_iter_next(it));
            at = model_next(m, at + 1, hi);
        }
        snprintf(how, sizeof how, "bounded [%s,%s) rev", lk, hk);
        IT_OK(ravel_iter_seek_to_last(it));
        at = model_prev(m, hi - 1, lo);
        for (;;) {
            expect_at(it, m, at, what, how);
            if (at < 0)
                break;
            IT_OK(ravel_iter_prev(it));
            at = model_prev(m, at - 1, lo);
        }
        ravel_iter_free(it);
    }
}

static void check_iter(ravel_db *db, const ravel_snapshot *snap,
                       const struct model *m, uint64_t *rng, const char *what)
{
    check_iter_held(db, snap, m, rng, what, NULL);
}

/* Iterators kept open across writes, flushes, compactions, with the
** model of their moment. */
struct held {
    ravel_iter *it;
    struct model *m;
};
static struct held helds[2];

static void check_helds(uint64_t *rng, const char *what)
{
    char w[128];
    for (int i = 0; i < 2; i++)
        if (helds[i].it) {
            snprintf(w, sizeof w, "%s held iterator %d", what, i);
            check_iter_held(NULL, NULL, helds[i].m, rng, w, helds[i].it);
        }
}

static void drop_helds(void)
{
    for (int i = 0; i < 2; i++)
        if (helds[i].it) {
            ravel_iter_free(helds[i].it);
            free(helds[i].m);
            helds[i].it = NULL;
        }
}

static void check_all(ravel_db *db, const struct model *m, struct snap *snaps,
                      int nsnaps, uint64_t *rng, const char *what)
{
    char w[128];
    g_db = db;
    check_gets(db, NULL, m, what);
    check_multi_get(db, NULL, m, rng, what);
    check_iter(db, NULL, m, rng, what);
    for (int s = 0; s < nsnaps; s++) {
        if (!snaps[s].s)
            continue;
        snprintf(w, sizeof w, "%s snap%d", what, s);
        check_gets(db, snaps[s].s, snaps[s].m, w);
        check_multi_get(db, snaps[s].s, snaps[s].m, rng, w);
        check_iter(db, snaps[s].s, snaps[s].m, rng, w);
    }
}

/* --------------------------------------------------- file boundaries */

static int key_index(const char *ik, size_t len)
{
    if (len < 8 + 6 || ik[0] != 'k')
        return -1;
    size_t ul = len - 8;
    if (ul != 6)
        return -1;
    return atoi(ik + 1);
}

/* A user key that is some table file's smallest or largest (+0 or +1),
** or -1. */
static int boundary_key(ravel_db *db, uint64_t *rng)
{
    struct rv_version *v = rv_db_ref_version(db);
    int cand[512];
    int n = 0;
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < v->files->n[l] && n < 510; i++) {
            const struct rv_file_meta *fm = &v->files->level[l][i]->meta;
            int a = key_index(fm->smallest, fm->smallest_len);
            int b = key_index(fm->largest, fm->largest_len);
            if (a >= 0)
                cand[n++] = a;
            if (b >= 0)
                cand[n++] = b;
        }
    rv_version_unref(v);
    if (!n)
        return -1;
    int k = cand[tu_rand(rng) % (uint64_t)n] + (int)(tu_rand(rng) % 3) - 1;
    if (k < 0)
        k = 0;
    if (k > nk)
        k = nk;
    return k;
}

/* Levels 1 and below must hold files disjoint by internal key. */
static void check_disjoint(ravel_db *db, const char *what)
{
    struct rv_version *v = rv_db_ref_version(db);
    int bad = 0;
    for (int l = 1; l < RV_NUM_LEVELS && !bad; l++)
        for (int i = 1; i < v->files->n[l] && !bad; i++) {
            const struct rv_file_meta *a = &v->files->level[l][i - 1]->meta;
            const struct rv_file_meta *b = &v->files->level[l][i]->meta;
            if (rv_ikey_compare(a->largest, a->largest_len, b->smallest,
                                b->smallest_len) >= 0)
                bad = 1;
        }
    rv_version_unref(v);
    if (bad) {
        g_db = db;
        FAIL("%s: a level's files overlap", what);
    }
}

static void log_tables(ravel_db *db)
{
    if (!tu_env_u64("RAVEL_HRDT_TRACE", 0))
        return;
    char *ss = NULL;
    if (ravel_property(db, "ravel.sstables", &ss) == RAVEL_OK)
        logf_("%s", ss);
    ravel_free(ss);
}

/* Bytewise, shorter first on a common prefix. */
static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

/* ------------------------------------------------------- the run */

static void model_put(struct model *m, int i, uint64_t ser, unsigned len)
{
    m->ser[i] = ser;
    m->len[i] = (uint16_t)len;
}

static char OPTS[1024];
static const char *OPTS_BASE =
    "write_buffer_size=4096;target_file_size_base=65536;"
    "max_bytes_for_level_base=65536;level0_file_num_compaction_trigger=2;"
    "block_size=256";

static void run_seed(uint64_t seed, int steps)
{
    cur_seed = seed;
    const char *extra = getenv("RAVEL_HRDT_OPTS");
    snprintf(OPTS, sizeof OPTS, "%s%s%s", OPTS_BASE,
             extra && *extra ? ";" : "", extra ? extra : "");
    oplog_len = 0;
    if (oplog)
        oplog[0] = 0;
    n_recent = 0;
    char *dir = tu_path("hrdt-%llu", (unsigned long long)seed);
    tu_rm_rf(dir);
    g_dir = dir;
    ravel_db *db = tu_open_ok(dir, OPTS);
    ravel_db *rdb = tu_open_ok(dir, "read_only=true");
    uint64_t rng = seed;
    struct model *m = calloc(1, sizeof *m);
    struct snap snaps[4];
    memset(snaps, 0, sizeof snaps);
    int nrd = 0, nbound = 0, nsub = 0, nreopen = 0, nlive = 0;
    /* RAVEL_HRDT_HEAVY: long runs of puts, no range delete over half the
    ** keys: more data, more files per level, deeper levels */
    int heavy = (int)tu_env_u64("RAVEL_HRDT_HEAVY", 0);
    int no_held = (int)tu_env_u64("RAVEL_HRDT_NO_HELD", 0);
    for (int step = 0; step < steps; step++) {
        uint64_t r = tu_rand(&rng) % 1000;
        char what[64];
        snprintf(what, sizeof what, "step %d", step);
        if (r < 520) {
            /* put, often a run of keys */
            int i = (int)(tu_rand(&rng) % (uint64_t)nk);
            int run = tu_rand(&rng) % 4 ? 1 : 1 + (int)(tu_rand(&rng) % 40);
            if (heavy && tu_rand(&rng) % 2)
                run = 1 + (int)(tu_rand(&rng) % 150);
            for (int j = 0; j < run && i + j < nk; j++) {
                uint64_t ser = ++g_serial;
                unsigned len = 10 + (unsigned)(tu_rand(&rng) % 300);
                char k[8], v[400];
                key_of(i + j, k);
                size_t vl = val_of(ser, len, v);
                TU_OK(ravel_put(db, 0, k, 6, v, vl));
                model_put(m, i + j, ser, (unsigned)vl);
                logf_("%d put %s v%llu/%zu\n", step, k,
                      (unsigned long long)ser, vl);
            }
        } else if (r < 580) {
            int i = (int)(tu_rand(&rng) % (uint64_t)nk);
            char k[8];
            key_of(i, k);
            TU_OK(ravel_delete(db, 0, k, 6));
            m->ser[i] = 0;
            logf_("%d del %s\n", step, k);
        } else if (r < 720) {
            int a, b;
            uint64_t kind = tu_rand(&rng) % 6;
            if (kind <= 1) {
                a = boundary_key(db, &rng);
                if (a < 0)
                    a = (int)(tu_rand(&rng) % (uint64_t)nk);
                if (kind == 0) {
                    b = boundary_key(db, &rng);
                    if (b < 0)
                        b = a + 1 + (int)(tu_rand(&rng) % 50);
                } else {
                    b = a + (int)(tu_rand(&rng) % 3);
                }
                nbound++;
            } else if (kind == 2) {
                a = (int)(tu_rand(&rng) % (uint64_t)nk);
                b = a + (int)(tu_rand(&rng) % 2); /* empty or single */
            } else if (kind == 3 && !heavy) {
                a = (int)(tu_rand(&rng) % (uint64_t)nk);
                b = a + (int)(tu_rand(&rng) % (uint64_t)nk);
            } else {
                a = (int)(tu_rand(&rng) % (uint64_t)nk);
                b = a + 1 + (int)(tu_rand(&rng) % 30);
            }
            if (b > nk)
                b = nk;
            if (a > b) {
                int t = a; a = b; b = t;
            }
            char ka[8], kb[8];
            key_of(a, ka);
            key_of(b, kb);
            size_t al = 6, bl = 6;
            /* ends that are no key: a prefix, the key and a NUL after it,
            ** or the empty key */
            uint64_t mut = tu_rand(&rng) % 16;
            if (mut == 0)
                al = 1 + (size_t)(tu_rand(&rng) % 5);
            else if (mut == 1)
                ka[al++] = 0;
            else if (mut == 2)
                al = 0;
            mut = tu_rand(&rng) % 16;
            if (mut == 0)
                bl = 1 + (size_t)(tu_rand(&rng) % 5);
            else if (mut == 1)
                kb[bl++] = 0;
            if (bytes_cmp(ka, al, kb, bl) > 0) {
                char t[8];
                size_t tl = al;
                memcpy(t, ka, 8); memcpy(ka, kb, 8); memcpy(kb, t, 8);
                al = bl; bl = tl;
            }
            TU_OK(ravel_delete_range(db, 0, ka, al, kb, bl));
            for (int i = 0; i < nk; i++) {
                char k[8];
                key_of(i, k);
                if (bytes_cmp(ka, al, k, 6) <= 0 && bytes_cmp(k, 6, kb, bl) < 0)
                    m->ser[i] = 0;
            }            nrd++;
            logf_("%d delete_range [%.*s|%zu,%.*s|%zu)\n", step, (int)al, ka,
                  al, (int)bl, kb, bl);
        } else if (r < 770) {
            /* a batch: puts inside a range it deletes, newer */
            ravel_batch *bt;
            TU_OK(ravel_batch_new(&bt));
            int a = (int)(tu_rand(&rng) % (uint64_t)nk);
            int b = a + 1 + (int)(tu_rand(&rng) % 20);
            if (b > nk)
                b = nk;
            char ka[8], kb[8];
            key_of(a, ka);
            key_of(b, kb);
            struct model *next = malloc(sizeof *next);
            *next = *m;
            int pre = (int)(tu_rand(&rng) % 2);
            logf_("%d batch{", step);
            if (pre) {
                int i = a + (int)(tu_rand(&rng) % (uint64_t)(b - a));
                char k[8], v[400];
                key_of(i, k);
                uint64_t ser = ++g_serial;
                size_t vl = val_of(ser, 30, v);
                TU_OK(ravel_batch_put(bt, k, 6, v, vl));
                model_put(next, i, ser, (unsigned)vl);
                logf_(" put %s v%llu;", k, (unsigned long long)ser);
            }
            TU_OK(ravel_batch_delete_range(bt, ka, 6, kb, 6));
            for (int i = a; i < b; i++)
                next->ser[i] = 0;
            logf_(" delete_range [%s,%s);", ka, kb);
            int np = (int)(tu_rand(&rng) % 3);
            for (int j = 0; j < np; j++) {
                int i = a + (int)(tu_rand(&rng) % (uint64_t)(b - a));
                char k[8], v[400];
                key_of(i, k);
                uint64_t ser = ++g_serial;
                size_t vl = val_of(ser, 50, v);
                TU_OK(ravel_batch_put(bt, k, 6, v, vl));
                model_put(next, i, ser, (unsigned)vl);
                logf_(" put %s v%llu;", k, (unsigned long long)ser);
            }
            logf_(" }\n");
            TU_OK(ravel_write(db, 0, bt));
            ravel_batch_free(bt);
            *m = *next;
            free(next);
        } else if (r < 830) {
            int i = (int)(tu_rand(&rng) % 4);
            if (snaps[i].s) {
                TU_OK(ravel_snapshot_release(db, snaps[i].s));
                snaps[i].s = NULL;
                free(snaps[i].m);
                logf_("%d snap%d release\n", step, i);
            } else {
                TU_OK(ravel_snapshot_acquire(db, &snaps[i].s));
                snaps[i].m = malloc(sizeof *m);
                *snaps[i].m = *m;
                logf_("%d snap%d acquire\n", step, i);
            }
        } else if (r < 845) {
            int i = (int)(tu_rand(&rng) % 2);
            if (no_held)
                continue; /* the moved-file defect would mask the rest */
            if (helds[i].it) {
                snprintf(what, sizeof what, "step %d", step);
                check_helds(&rng, what);
                ravel_iter_free(helds[i].it);
                free(helds[i].m);
                helds[i].it = NULL;
                logf_("%d iter%d free\n", step, i);
            } else {
                TU_OK(ravel_iter_new(db, NULL, &helds[i].it));
                helds[i].m = malloc(sizeof *m);
                *helds[i].m = *m;
                logf_("%d iter%d new\n", step, i);
            }
        } else if (r < 870) {
            TU_OK(ravel_flush(db, 0));
            logf_("%d flush\n", step);
            log_tables(db);
        } else if (r < 900) {
            TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
            logf_("%d compact all\n", step);
            log_tables(db);
        } else if (r < 960) {
            int a = pick_key(&rng), b = pick_key(&rng);
            if (tu_rand(&rng) % 2) {
                int x = boundary_key(db, &rng);
                if (x >= 0)
                    a = x;
            }
            if (a > b) {
                int t = a; a = b; b = t;
            }
            if (b >= nk)
                b = nk - 1;
            if (a > b)
                a = b;
            char ka[8], kb[8];
            key_of(a, ka);
            key_of(b, kb);
            TU_OK(ravel_compact_range(db, ka, 6, kb, 6));
            nsub++;
            logf_("%d compact [%s,%s]\n", step, ka, kb);
            log_tables(db);
        } else if (r < 975) {
            /* reopen, with a read_only look between */
            for (int i = 0; i < 4; i++)
                if (snaps[i].s) {
                    TU_OK(ravel_snapshot_release(db, snaps[i].s));
                    snaps[i].s = NULL;
                    free(snaps[i].m);
                }
            check_helds(&rng, what);
            drop_helds();
            TU_OK(ravel_close(rdb));
            tu_wait_background_idle(db);
            TU_OK(ravel_close(db));
            logf_("%d reopen\n", step);
            if (tu_rand(&rng) % 2) {
                db = tu_open_ok(dir, "read_only=true");
                snprintf(what, sizeof what, "step %d read_only", step);
                check_all(db, m, snaps, 0, &rng, what);
                TU_OK(ravel_close(db));
            }
            db = tu_open_ok(dir, OPTS);
            rdb = tu_open_ok(dir, "read_only=true");
            nreopen++;
        } else {
            check_all(db, m, snaps, 4, &rng, what);
        }
        check_disjoint(db, what);
        if (step % 40 == 39) {
            check_all(db, m, snaps, 4, &rng, what);
            check_helds(&rng, what);
            int crc = ravel_catch_up(rdb);
            if (crc == RAVEL_OK) {
                char w2[96];
                snprintf(w2, sizeof w2, "%s live reader", what);
                check_all(rdb, m, snaps, 0, &rng, w2);
                nlive++;
            } else if (crc != RAVEL_BUSY) {
                FAIL("%s: catch_up: %d %s", what, crc, ravel_errmsg());
            }
            g_db = db;
        }
    }
    check_all(db, m, snaps, 4, &rng, "end");
    check_helds(&rng, "end");
    drop_helds();
    TU_OK(ravel_close(rdb));
    {
        struct tu_sst *ss;
        int nf = tu_sstables(db, &ss);
        int per[8] = {0};
        for (int i = 0; i < nf; i++)
            per[ss[i].level & 7]++;
        printf("files per level:");
        for (int l = 0; l < 8; l++)
            printf(" %d", per[l]);
        printf("\n");
        free(ss);
    }
    for (int i = 0; i < 4; i++)
        if (snaps[i].s) {
            TU_OK(ravel_snapshot_release(db, snaps[i].s));
            free(snaps[i].m);
        }
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    check_all(db, m, snaps, 0, &rng, "end compacted");
    tu_wait_background_idle(db);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "read_only=true");
    check_all(db, m, snaps, 0, &rng, "end read_only");
    TU_OK(ravel_close(db));
    printf("seed %llu: %d steps, %d range deletes (%d at file bounds), "
           "%d sub-range compactions, %d reopens, %d live reader checks\n",
           (unsigned long long)seed, steps, nrd, nbound, nsub, nreopen,
           nlive);
    free(m);
    tu_rm_rf(dir);
    free(dir);
}

static void test_differential(void **state)
{
    (void)state;
    nk = (int)tu_env_u64("RAVEL_HRDT_KEYS", 500);
    if (nk > MAXK)
        nk = MAXK;
    int steps = (int)tu_env_u64("RAVEL_HRDT_STEPS", 1500);
    int seeds = (int)tu_env_u64("RAVEL_HRDT_SEEDS", 1);
    uint64_t seed = tu_seed();
    for (int s = 0; s < seeds; s++)
        run_seed(seed + (uint64_t)s * 7919, steps);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
