/*
** test_read_options.c -- read options (ravel_readoptions): an iterator's
** bounds against a model of the data, in the memtable and in table files,
** with deletions and several versions, through a snapshot and at the
** latest state; a bounded scan reading nothing past its bound;
** fill_cache=false leaving the block cache as it was; verify_checksums
** deciding whether a damaged block is reported; NULL options reading as
** the calls without options; and misuse getting RAVEL_INVALID with a
** message.  Run once per WAL I/O path (RAVEL_TEST_WAL_IO).
*/
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int db_counter;

static char *new_dir(const char *what)
{
    return tu_path("ro-%s-%d", what, db_counter++);
}

/* ------------------------------------------------------------- the model */

#define MODEL_KEYS 100 /* "k000" .. "k099" */

/* The value of key I, or NULL if absent or deleted. */
struct model {
    char *val[MODEL_KEYS];
};

static void model_key(int i, char key[8])
{
    snprintf(key, 8, "k%03d", i % 1000);
}

static void model_put(ravel_db *db, struct model *m, int i, const char *tag)
{
    char key[8], val[32];
    model_key(i, key);
    snprintf(val, sizeof val, "%s-%d", tag, i);
    tu_put(db, 0, key, val);
    free(m->val[i]);
    m->val[i] = strdup(val);
}

static void model_delete(ravel_db *db, struct model *m, int i)
{
    char key[8];
    model_key(i, key);
    TU_OK(ravel_delete(db, 0, key, strlen(key)));
    free(m->val[i]);
    m->val[i] = NULL;
}

static void model_copy(struct model *dst, const struct model *src)
{
    for (int i = 0; i < MODEL_KEYS; i++)
        dst->val[i] = src->val[i] ? strdup(src->val[i]) : NULL;
}

static void model_free(struct model *m)
{
    for (int i = 0; i < MODEL_KEYS; i++)
        free(m->val[i]);
}

/* 1 if model key I is in the range [LO, HI) (NULL: unbounded). */
static int model_in_range(int i, const char *lo, const char *hi)
{
    char key[8];
    model_key(i, key);
    return (!lo || strcmp(key, lo) >= 0) && (!hi || strcmp(key, hi) < 0);
}

/* The first present key in [LO, HI) that is >= T (T NULL: any), or -1. */
static int model_first_from(const struct model *m, const char *lo,
                            const char *hi, const char *t)
{
    for (int i = 0; i < MODEL_KEYS; i++) {
        char key[8];
        model_key(i, key);
        if (m->val[i] && model_in_range(i, lo, hi) &&
            (!t || strcmp(key, t) >= 0))
            return i;
    }
    return -1;
}

/* The last present key in [LO, HI) that is <= T (T NULL: any), or -1. */
static int model_last_upto(const struct model *m, const char *lo,
                           const char *hi, const char *t)
{
    for (int i = MODEL_KEYS - 1; i >= 0; i--) {
        char key[8];
        model_key(i, key);
        if (m->val[i] && model_in_range(i, lo, hi) &&
            (!t || strcmp(key, t) <= 0))
            return i;
    }
    return -1;
}

/* ------------------------------------------------------------ the checks */

/* Fails unless IT is at model key I (-1: not valid, with no error). */
static void expect_at(ravel_iter *it, const struct model *m, int i,
                      const char *what, const char *lo, const char *hi)
{
    if (i < 0) {
        if (ravel_iter_valid(it)) {
            size_t kl;
            const char *k = ravel_iter_key(it, &kl);
            fail_msg("%s [%s, %s): at \"%.*s\", expected the end", what,
                     lo ? lo : "-", hi ? hi : "-", (int)kl, k);
        }
        TU_OK(ravel_iter_status(it));
        return;
    }
    char key[8];
    model_key(i, key);
    if (!ravel_iter_valid(it))
        fail_msg("%s [%s, %s): not valid, expected \"%s\"", what,
                 lo ? lo : "-", hi ? hi : "-", key);
    size_t kl, vl;
    const char *k = ravel_iter_key(it, &kl);
    const char *v = ravel_iter_value(it, &vl);
    if (kl != strlen(key) || memcmp(k, key, kl) != 0)
        fail_msg("%s [%s, %s): at \"%.*s\", expected \"%s\"", what,
                 lo ? lo : "-", hi ? hi : "-", (int)kl, k, key);
    assert_int_equal(vl, strlen(m->val[i]));
    assert_memory_equal(v, m->val[i], vl);
}

/* The seek targets: every key, a key between two, and the ends. */
static const char *const targets[] = {
    "", "a", "k", "k000", "k0000", "k001", "k005", "k012", "k0125", "k013",
    "k049", "k050", "k0500", "k051", "k097", "k098", "k099", "k0990", "k1",
    "z",
};
#define N_TARGETS (int)(sizeof targets / sizeof targets[0])

/* The present key of [LO, HI) after model key I (I -1: the first), or
** -1. */
static int model_next(const struct model *m, const char *lo, const char *hi,
                      int i)
{
    for (int j = i + 1; j < MODEL_KEYS; j++)
        if (m->val[j] && model_in_range(j, lo, hi))
            return j;
    return -1;
}

/* The present key of [LO, HI) before model key I (I MODEL_KEYS: the
** last), or -1. */
static int model_prev(const struct model *m, const char *lo, const char *hi,
                      int i)
{
    for (int j = i - 1; j >= 0; j--)
        if (m->val[j] && model_in_range(j, lo, hi))
            return j;
    return -1;
}

/* Every move of IT (bounded by [LO, HI)) against model M: whole scans both
** ways, seeks and seek_for_prevs to every target, and a turn after each. */
static void check_bounded(ravel_iter *it, const struct model *m,
                          const char *lo, const char *hi)
{
    TU_OK(ravel_iter_seek_to_first(it));
    for (int i = model_next(m, lo, hi, -1); i >= 0;
         i = model_next(m, lo, hi, i)) {
        expect_at(it, m, i, "forward scan", lo, hi);
        TU_OK(ravel_iter_next(it));
    }
    expect_at(it, m, -1, "forward scan end", lo, hi);

    TU_OK(ravel_iter_seek_to_last(it));
    for (int i = model_prev(m, lo, hi, MODEL_KEYS); i >= 0;
         i = model_prev(m, lo, hi, i)) {
        expect_at(it, m, i, "backward scan", lo, hi);
        TU_OK(ravel_iter_prev(it));
    }
    expect_at(it, m, -1, "backward scan end", lo, hi);

    for (int t = 0; t < N_TARGETS; t++) {
        const char *k = targets[t];
        int i = model_first_from(m, lo, hi, k);
        TU_OK(ravel_iter_seek(it, k, strlen(k)));
        expect_at(it, m, i, "seek", lo, hi);
        if (i >= 0) { /* turn back */
            TU_OK(ravel_iter_prev(it));
            expect_at(it, m, model_prev(m, lo, hi, i), "prev after seek",
                      lo, hi);
        }
        i = model_last_upto(m, lo, hi, k);
        TU_OK(ravel_iter_seek_for_prev(it, k, strlen(k)));
        expect_at(it, m, i, "seek_for_prev", lo, hi);
        if (i >= 0) { /* turn forward */
            TU_OK(ravel_iter_next(it));
            expect_at(it, m, model_next(m, lo, hi, i),
                      "next after seek_for_prev", lo, hi);
        }
    }
}

/* The bounds tried, each as lower and as upper bound (NULL: none): outside
** the data, on keys, between keys, equal to each other. */
static const char *const bounds[] = {
    NULL, "", "a", "k000", "k001", "k012", "k0125", "k013", "k050",
    "k098", "k099", "k0995", "z",
};
#define N_BOUNDS (int)(sizeof bounds / sizeof bounds[0])

static size_t bound_len(const char *b)
{
    return b ? strlen(b) : 0;
}

/* Every pair of bounds, through new iterators made with the bounds in the
** read options and through one iterator whose bounds are set again and
** again; SNAP NULL: the latest state. */
static void check_all_bounds(ravel_db *db, const ravel_snapshot *snap,
                             const struct model *m)
{
    ravel_readoptions *ro;
    TU_OK(ravel_readoptions_new(&ro));
    TU_OK(ravel_readoptions_set_snapshot(ro, snap));
    ravel_iter *reused;
    TU_OK(ravel_iter_new_opt(db, ro, &reused));
    for (int l = 0; l < N_BOUNDS; l++) {
        for (int u = 0; u < N_BOUNDS; u++) {
            const char *lo = bounds[l], *hi = bounds[u];
            /* copies of the bounds, freed before use: the options and the
            ** iterator must keep their own */
            char *lcopy = lo ? strdup(lo) : NULL;
            char *hcopy = hi ? strdup(hi) : NULL;
            TU_OK(ravel_readoptions_set_iterate_lower_bound(ro, lcopy,
                                                            bound_len(lo)));
            TU_OK(ravel_readoptions_set_iterate_upper_bound(ro, hcopy,
                                                            bound_len(hi)));
            ravel_iter *it;
            TU_OK(ravel_iter_new_opt(db, ro, &it));
            TU_OK(ravel_iter_set_bounds(reused, lcopy, bound_len(lo), hcopy,
                                        bound_len(hi)));
            assert_int_equal(ravel_iter_valid(reused), 0);
            free(lcopy);
            free(hcopy);
            check_bounded(it, m, lo, hi);
            ravel_iter_free(it);
            check_bounded(reused, m, lo, hi);
        }
    }
    ravel_iter_free(reused);
    ravel_readoptions_free(ro);
}

/* Bounds over data in the memtable, in level 0 and in the last level,
** with overwrites and deletions, at the latest state and through a
** snapshot that keeps older versions; flushed and compacted in between. */
static void test_bounds_against_model(void **state)
{
    (void)state;
    char *dir = new_dir("model");
    ravel_db *db = tu_open_ok(dir, "disable_auto_compactions=true");
    struct model m = {0}, at_snap = {0};

    for (int i = 0; i < MODEL_KEYS; i += 2)
        model_put(db, &m, i, "v1");
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    for (int i = 0; i < MODEL_KEYS; i += 2) {
        if (i % 6 == 0)
            model_delete(db, &m, i);
        else if (i % 4 == 0)
            model_put(db, &m, i, "v2");
    }
    TU_OK(ravel_flush(db, 0));
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    model_copy(&at_snap, &m);
    for (int i = 0; i < MODEL_KEYS; i++) {
        if (i % 10 == 0)
            model_delete(db, &m, i);
        else if (i % 12 == 0 || (i % 2 && i % 7 == 0))
            model_put(db, &m, i, "v3");
    }
    check_all_bounds(db, NULL, &m); /* the memtable over two levels */
    check_all_bounds(db, snap, &at_snap);

    TU_OK(ravel_flush(db, 0));
    check_all_bounds(db, NULL, &m); /* two level-0 files and the last level */
    check_all_bounds(db, snap, &at_snap);

    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    check_all_bounds(db, NULL, &m); /* one level, snapshot versions kept */
    check_all_bounds(db, snap, &at_snap);

    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_close(db));
    model_free(&m);
    model_free(&at_snap);
    tu_rm_rf(dir);
    free(dir);
}

/* ravel_iter_set_bounds keeps the state the iterator reads: writes made
** after it was created stay invisible whatever its bounds. */
static void test_set_bounds_keeps_state(void **state)
{
    (void)state;
    char *dir = new_dir("keep");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    tu_put(db, 0, "c", "3");
    ravel_iter *it;
    TU_OK(ravel_iter_new_opt(db, NULL, &it));
    tu_put(db, 0, "b", "2");
    TU_OK(ravel_delete(db, 0, "c", 1));
    TU_OK(ravel_iter_seek_to_first(it));
    assert_true(ravel_iter_valid(it));
    TU_OK(ravel_iter_set_bounds(it, "b", 1, NULL, 0));
    assert_int_equal(ravel_iter_valid(it), 0); /* unpositioned */
    TU_OK(ravel_iter_seek_to_first(it));
    size_t kl;
    const char *k = ravel_iter_key(it, &kl);
    assert_int_equal(kl, 1);
    assert_memory_equal(k, "c", 1); /* not "b": written after */
    TU_OK(ravel_iter_next(it));
    assert_int_equal(ravel_iter_valid(it), 0);
    /* back to no bounds */
    TU_OK(ravel_iter_set_bounds(it, NULL, 0, NULL, 0));
    TU_OK(ravel_iter_seek_to_last(it));
    k = ravel_iter_key(it, &kl);
    assert_memory_equal(k, "c", 1);
    TU_OK(ravel_iter_prev(it));
    k = ravel_iter_key(it, &kl);
    assert_memory_equal(k, "a", 1);
    ravel_iter_free(it);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* ------------------------------------------------------ reading no further */

#define SCAN_KEYS 2000

static void scan_key(int i, char key[8])
{
    snprintf(key, 8, "k%04d", i % 10000);
}

/* Keys k0000 .. k1999 in the last level, then all but the first and last
** hundred deleted in level 0 (with automatic compactions off, so the
** deletions stay above what they delete).  Closed. */
static void build_mostly_deleted(const char *dir)
{
    ravel_db *db = tu_open_ok(dir, "disable_auto_compactions=true");
    char val[200];
    memset(val, 'v', sizeof val);
    for (int i = 0; i < SCAN_KEYS; i++) {
        char key[8];
        scan_key(i, key);
        TU_OK(ravel_put(db, 0, key, strlen(key), val, sizeof val));
    }
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    for (int i = 100; i < SCAN_KEYS - 100; i++) {
        char key[8];
        scan_key(i, key);
        TU_OK(ravel_delete(db, 0, key, strlen(key)));
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_close(db));
}

/* Counts the entries a whole scan of IT shows, forward or backward. */
static int scan_count(ravel_iter *it, int backward)
{
    int n = 0;
    TU_OK(backward ? ravel_iter_seek_to_last(it) : ravel_iter_seek_to_first(it));
    while (ravel_iter_valid(it)) {
        n++;
        TU_OK(backward ? ravel_iter_prev(it) : ravel_iter_next(it));
    }
    TU_OK(ravel_iter_status(it));
    return n;
}

/* A scan bounded just past the last live key before a long run of
** deletions stops at the bound: it reads the blocks up to it, not the
** deletions and the values they hide after it (which a scan looking for
** the next visible key would read, all of them), as the block cache,
** empty after the reopen, shows. */
static void test_bounded_scan_reads_no_further(void **state)
{
    (void)state;
    char *dir = new_dir("nofurther");
    build_mostly_deleted(dir);
    for (int backward = 0; backward < 2; backward++) {
        ravel_db *db = tu_open_ok(dir, "disable_auto_compactions=true");
        uint64_t before = tu_prop_u64(db, "ravel.block-cache-usage");
        ravel_readoptions *ro;
        TU_OK(ravel_readoptions_new(&ro));
        if (backward)
            TU_OK(ravel_readoptions_set_iterate_lower_bound(ro, "k1900", 5));
        else
            TU_OK(ravel_readoptions_set_iterate_upper_bound(ro, "k0100", 5));
        ravel_iter *it;
        TU_OK(ravel_iter_new_opt(db, ro, &it));
        assert_int_equal(scan_count(it, backward), 100);
        ravel_iter_free(it);
        uint64_t bounded = tu_prop_u64(db, "ravel.block-cache-usage") - before;
        /* the same scan unbounded reads every block */
        TU_OK(ravel_iter_new(db, NULL, &it));
        assert_int_equal(scan_count(it, backward), 200);
        ravel_iter_free(it);
        uint64_t all = tu_prop_u64(db, "ravel.block-cache-usage") - before;
        print_message("%s: the bounded scan cached %llu bytes of blocks, "
                      "the whole scan %llu\n",
                      backward ? "backward" : "forward",
                      (unsigned long long)bounded, (unsigned long long)all);
        /* 100 live keys of 200-byte values: about 20 KiB of the ~400 */
        assert_true(bounded > 0);
        assert_true(bounded * 5 < all);
        ravel_readoptions_free(ro);
        TU_OK(ravel_close(db));
    }
    tu_rm_rf(dir);
    free(dir);
}

/* fill_cache=false: gets and scans read their blocks from the files and
** leave the block cache as it was; the default fills it. */
static void test_fill_cache(void **state)
{
    (void)state;
    char *dir = new_dir("fill");
    build_mostly_deleted(dir);
    ravel_db *db = tu_open_ok(dir, "disable_auto_compactions=true");
    uint64_t before = tu_prop_u64(db, "ravel.block-cache-usage");
    ravel_readoptions *ro;
    TU_OK(ravel_readoptions_new(&ro));
    TU_OK(ravel_readoptions_set_fill_cache(ro, 0));
    ravel_iter *it;
    TU_OK(ravel_iter_new_opt(db, ro, &it));
    assert_int_equal(scan_count(it, 0), 200);
    assert_int_equal(scan_count(it, 1), 200);
    ravel_iter_free(it);
    char buf[256];
    size_t vl;
    void *val;
    TU_OK(ravel_get_into_opt(db, ro, "k0005", 5, buf, sizeof buf, &vl));
    assert_int_equal(vl, 200);
    TU_OK(ravel_get_opt(db, ro, "k1995", 5, &val, &vl));
    ravel_free(val);
    assert_int_equal(ravel_get_opt(db, ro, "k0500", 5, &val, &vl),
                     RAVEL_NOTFOUND);
    assert_int_equal(tu_prop_u64(db, "ravel.block-cache-usage"), before);

    /* the default fills it */
    TU_OK(ravel_readoptions_set_fill_cache(ro, 1));
    TU_OK(ravel_get_opt(db, ro, "k1995", 5, &val, &vl));
    ravel_free(val);
    uint64_t after_get = tu_prop_u64(db, "ravel.block-cache-usage");
    assert_true(after_get > before);
    TU_OK(ravel_iter_new(db, NULL, &it));
    assert_int_equal(scan_count(it, 0), 200);
    ravel_iter_free(it);
    uint64_t after_scan = tu_prop_u64(db, "ravel.block-cache-usage");
    assert_true(after_scan > after_get);
    /* and a scan without filling still uses what is there */
    TU_OK(ravel_readoptions_set_fill_cache(ro, 0));
    TU_OK(ravel_iter_new_opt(db, ro, &it));
    assert_int_equal(scan_count(it, 0), 200);
    ravel_iter_free(it);
    assert_int_equal(tu_prop_u64(db, "ravel.block-cache-usage"), after_scan);
    ravel_readoptions_free(ro);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* --------------------------------------------------------- verify_checksums */

#define MARKER "MARKER-abcdefghijklmnop"

/* A database whose one table file holds MARKER as the value of "victim",
** one byte of it changed on disk (not its block's checksum). */
static void build_damaged_value(const char *dir)
{
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "before", "x");
    tu_put(db, 0, "victim", MARKER);
    tu_put(db, 0, "zafter", "y");
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_close(db));
    uint64_t *numbers;
    assert_int_equal(tu_dir_sst_numbers(dir, &numbers), 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/%06llu.sst", dir,
             (unsigned long long)numbers[0]);
    free(numbers);
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    char *at = memmem(data, len, MARKER, strlen(MARKER));
    assert_non_null(at);
    at[7] = 'A'; /* MARKER-Abcdef... */
    assert_int_equal(tu_file_write(path, data, len), 0);
    free(data);
}

static void expect_victim(ravel_db *db, const ravel_readoptions *ro,
                         const char *want)
{
    void *val;
    size_t vl;
    TU_OK(ravel_get_opt(db, ro, "victim", 6, &val, &vl));
    assert_int_equal(vl, strlen(want));
    assert_memory_equal(val, want, vl);
    ravel_free(val);
}

/* verify_checksums: on, the damaged block is RAVEL_CORRUPT; off, it is
** read unchecked (the byte changed inside a value passes the decoding's
** own checks: the damaged value is returned) and not cached, so reads
** that verify still see the damage. */
static void test_verify_checksums(void **state)
{
    (void)state;
    char *dir = new_dir("verify");
    build_damaged_value(dir);
    char damaged[] = MARKER;
    damaged[7] = 'A';

    ravel_db *db = tu_open_ok(dir, NULL); /* verify_checksums=true */
    void *val;
    size_t vl;
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_get(db, NULL, "victim", 6, &val, &vl));
    ravel_readoptions *off;
    TU_OK(ravel_readoptions_new(&off));
    TU_OK(ravel_readoptions_set_verify_checksums(off, 0));
    expect_victim(db, off, damaged);
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_get_opt(db, NULL, "victim", 6, &val,
                                              &vl));
    ravel_iter *it;
    TU_OK(ravel_iter_new_opt(db, off, &it));
    assert_int_equal(scan_count(it, 0), 3);
    ravel_iter_free(it);
    TU_OK(ravel_iter_new_opt(db, NULL, &it));
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_iter_seek_to_first(it));
    ravel_iter_free(it);
    TU_OK(ravel_close(db));

    /* a database that does not verify: a read asking to still does */
    db = tu_open_ok(dir, "verify_checksums=false");
    ravel_readoptions *on;
    TU_OK(ravel_readoptions_new(&on));
    TU_OK(ravel_readoptions_set_verify_checksums(on, 1));
    TU_OK(ravel_readoptions_set_fill_cache(on, 0));
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_get_opt(db, on, "victim", 6, &val,
                                              &vl));
    expect_victim(db, NULL, damaged);
    ravel_readoptions_free(on);
    ravel_readoptions_free(off);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* ------------------------------------------------ NULL options and misuse */

/* NULL read options read as the calls without options. */
static void test_null_options(void **state)
{
    (void)state;
    char *dir = new_dir("null");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    tu_put(db, 0, "b", "2");
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    tu_put(db, 0, "b", "22");
    TU_OK(ravel_delete(db, 0, "a", 1));

    void *val;
    size_t vl;
    TU_OK(ravel_get_opt(db, NULL, "b", 1, &val, &vl));
    assert_int_equal(vl, 2);
    assert_memory_equal(val, "22", 2);
    ravel_free(val);
    assert_int_equal(ravel_get_opt(db, NULL, "a", 1, &val, &vl),
                     RAVEL_NOTFOUND);
    assert_null(val);
    char buf[4];
    TU_OK(ravel_get_into_opt(db, NULL, "b", 1, buf, sizeof buf, &vl));
    assert_int_equal(vl, 2);

    /* and options holding only a snapshot read as the snapshot */
    ravel_readoptions *ro;
    TU_OK(ravel_readoptions_new(&ro));
    TU_OK(ravel_readoptions_set_snapshot(ro, snap));
    TU_OK(ravel_get_opt(db, ro, "a", 1, &val, &vl));
    assert_memory_equal(val, "1", 1);
    ravel_free(val);
    TU_OK(ravel_get_into_opt(db, ro, "b", 1, buf, sizeof buf, &vl));
    assert_int_equal(vl, 1);
    assert_memory_equal(buf, "2", 1);

    size_t la, lb;
    ravel_iter *it;
    TU_OK(ravel_iter_new_opt(db, NULL, &it));
    ravel_iter_free(it);
    char *plain = tu_scan_all(db, NULL, &la);
    TU_OK(ravel_iter_new_opt(db, NULL, &it));
    assert_int_equal(scan_count(it, 0), 1);
    ravel_iter_free(it);
    char *at_snap = tu_scan_all(db, snap, &lb);
    TU_OK(ravel_iter_new_opt(db, ro, &it));
    assert_int_equal(scan_count(it, 0), 2);
    TU_OK(ravel_iter_seek_to_first(it));
    size_t kl;
    assert_memory_equal(ravel_iter_key(it, &kl), "a", 1);
    ravel_iter_free(it);
    assert_int_equal(la, 5);
    assert_memory_equal(plain, "b=22\n", la);
    assert_int_equal(lb, 8);
    assert_memory_equal(at_snap, "a=1\nb=2\n", lb);
    free(plain);
    free(at_snap);

    ravel_readoptions_free(ro);
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

static void test_misuse(void **state)
{
    (void)state;
    char *dir = new_dir("misuse");
    char *other_dir = new_dir("misuse-other");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_db *other = tu_open_ok(other_dir, NULL);
    ravel_readoptions *ro;
    TU_EXPECT_INVALID(ravel_readoptions_new(NULL));
    TU_OK(ravel_readoptions_new(&ro));
    ravel_readoptions_free(NULL);

    TU_EXPECT_INVALID(ravel_readoptions_set_snapshot(NULL, NULL));
    TU_EXPECT_INVALID(ravel_readoptions_set_iterate_lower_bound(NULL, "a",
                                                                1));
    TU_EXPECT_INVALID(ravel_readoptions_set_iterate_upper_bound(NULL, "a",
                                                                1));
    TU_EXPECT_INVALID(ravel_readoptions_set_iterate_lower_bound(ro, NULL,
                                                                1));
    TU_EXPECT_INVALID(ravel_readoptions_set_iterate_upper_bound(ro, NULL,
                                                                1));
    TU_EXPECT_INVALID(ravel_readoptions_set_iterate_upper_bound(
        ro, "", (size_t)RAVEL_MAX_KEY_SIZE + 1));
    TU_EXPECT_INVALID(ravel_readoptions_set_verify_checksums(NULL, 1));
    TU_EXPECT_INVALID(ravel_readoptions_set_fill_cache(NULL, 0));

    void *val = (void *)1;
    size_t vl = 7;
    TU_EXPECT_INVALID(ravel_get_opt(NULL, ro, "a", 1, &val, &vl));
    assert_null(val);
    assert_int_equal(vl, 0);
    TU_EXPECT_INVALID(ravel_get_opt(db, ro, NULL, 1, &val, &vl));
    TU_EXPECT_INVALID(ravel_get_opt(db, ro, "a", 1, NULL, &vl));
    TU_EXPECT_INVALID(ravel_get_opt(db, ro, "a", 1, &val, NULL));
    char buf[4];
    TU_EXPECT_INVALID(ravel_get_into_opt(NULL, ro, "a", 1, buf, 4, &vl));
    TU_EXPECT_INVALID(ravel_get_into_opt(db, ro, "a", 1, NULL, 4, &vl));
    TU_EXPECT_INVALID(ravel_get_into_opt(db, ro, "a", 1, buf, 4, NULL));
    ravel_iter *it = (ravel_iter *)1;
    TU_EXPECT_INVALID(ravel_iter_new_opt(NULL, ro, &it));
    TU_EXPECT_INVALID(ravel_iter_new_opt(db, ro, NULL));

    /* a snapshot of another database */
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(other, &snap));
    TU_OK(ravel_readoptions_set_snapshot(ro, snap));
    TU_EXPECT_INVALID(ravel_get_opt(db, ro, "a", 1, &val, &vl));
    TU_EXPECT_INVALID(ravel_get_into_opt(db, ro, "a", 1, buf, 4, &vl));
    it = (ravel_iter *)1;
    TU_EXPECT_INVALID(ravel_iter_new_opt(db, ro, &it));
    assert_null(it);
    TU_OK(ravel_readoptions_set_snapshot(ro, NULL));
    TU_OK(ravel_snapshot_release(other, snap));

    TU_OK(ravel_iter_new_opt(db, ro, &it));
    TU_EXPECT_INVALID(ravel_iter_set_bounds(NULL, NULL, 0, NULL, 0));
    TU_EXPECT_INVALID(ravel_iter_set_bounds(it, NULL, 1, NULL, 0));
    TU_EXPECT_INVALID(ravel_iter_set_bounds(it, NULL, 0, NULL, 1));
    TU_EXPECT_INVALID(ravel_iter_set_bounds(it, "",
                                            (size_t)RAVEL_MAX_KEY_SIZE + 1,
                                            NULL, 0));
    ravel_iter_free(it);

    ravel_readoptions_free(ro);
    TU_OK(ravel_close(other));
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    tu_rm_rf(other_dir);
    free(dir);
    free(other_dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_against_model),
        cmocka_unit_test(test_set_bounds_keeps_state),
        cmocka_unit_test(test_bounded_scan_reads_no_further),
        cmocka_unit_test(test_fill_cache),
        cmocka_unit_test(test_verify_checksums),
        cmocka_unit_test(test_null_options),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
