/*
** test_db_iter.c -- the user's view through rv_db_iter, over one memtable
** or several merged with rv_merging_iter_new, against a reference model.
**
** The model is the list of operations; for a snapshot it is reduced to a
** sorted array of (user key, value) -- the newest put with sequence <= the
** snapshot, keys whose newest visible operation is a delete left out.  A
** random walk of seeks and steps in both directions must agree with it at
** every step.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "db/db_iter.h"
#include "base/dbformat.h"
#include "memtable/memtable.h"
#include "../testutil.h" /* tu_rand */

/* ------------------------------------------------------------ the model */

/* Keys of 0..3 bytes over { 0x00, 'a', 0xff }: 40 keys, including the
** empty key, prefixes of each other and bytes that sort differently as
** signed and unsigned. */
#define KEY_SPACE 40

struct key {
    char b[3];
    size_t len;
};

static struct key key_of(int i)
{
    static const char alphabet[3] = { 0x00, 'a', (char)0xff };
    struct key k = { { 0 }, 0 };
    int len = i == 0 ? 0 : i < 4 ? 1 : i < 13 ? 2 : 3;
    int base = len == 0 ? 0 : len == 1 ? 1 : len == 2 ? 4 : 13;
    int v = i - base;
    k.len = (size_t)len;
    for (int j = len - 1; j >= 0; j--) {
        k.b[j] = alphabet[v % 3];
        v /= 3;
    }
    return k;
}

struct op {
    int key;
    uint64_t seq;
    int type;
    char val[24]; /* "v" and any size_t */
};

struct entry {
    struct key key;
    const char *val;
};

static int entry_cmp(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return rv_user_key_compare(x->key.b, x->key.len, y->key.b, y->key.len);
}

/* The visible state at SNAP, sorted; returns the number of entries. */
static size_t model_view(const struct op *ops, size_t nops, uint64_t snap,
                         struct entry *out)
{
    size_t n = 0;
    for (int k = 0; k < KEY_SPACE; k++) {
        const struct op *newest = NULL;
        for (size_t i = 0; i < nops; i++)
            if (ops[i].key == k && ops[i].seq <= snap &&
                (!newest || ops[i].seq > newest->seq))
                newest = &ops[i];
        if (newest && newest->type == RV_TYPE_PUT) {
            out[n].key = key_of(k);
            out[n].val = newest->val;
            n++;
        }
    }
    qsort(out, n, sizeof *out, entry_cmp);
    return n;
}

/* First index with key >= K (N if none). */
static long model_lower_bound(const struct entry *v, size_t n,
                              const struct key *k)
{
    size_t i = 0;
    while (i < n && rv_user_key_compare(v[i].key.b, v[i].key.len, k->b,
                                        k->len) < 0)
        i++;
    return (long)i;
}

/* Last index with key <= K (-1 if none). */
static long model_upper_floor(const struct entry *v, size_t n,
                              const struct key *k)
{
    long i = (long)n - 1;
    while (i >= 0 && rv_user_key_compare(v[i].key.b, v[i].key.len, k->b,
                                         k->len) > 0)
        i--;
    return i;
}

/* --------------------------------------------------------- the checking */

static void expect_position(const rv_db_iter *it, const struct entry *v,
                            size_t n, long pos, const char *what)
{
    int want_valid = pos >= 0 && (size_t)pos < n;
    if (rv_db_iter_valid(it) != want_valid)
        fail_msg("after %s: valid=%d, model says %d (pos %ld of %zu)", what,
                 rv_db_iter_valid(it), want_valid, pos, n);
    assert_int_equal(rv_db_iter_status(it), RAVEL_OK);
    if (!want_valid)
        return;
    size_t klen, vlen;
    const char *k = rv_db_iter_key(it, &klen);
    const char *val = rv_db_iter_value(it, &vlen);
    assert_non_null(k);
    if (klen != v[pos].key.len || memcmp(k, v[pos].key.b, klen) != 0)
        fail_msg("after %s: wrong key at model position %ld", what, pos);
    if (vlen != strlen(v[pos].val) || memcmp(val, v[pos].val, vlen) != 0)
        fail_msg("after %s: wrong value at model position %ld", what, pos);
}

/* One random step; updates *POS to the model's answer. */
static const char *walk_step(rv_db_iter *it, const struct entry *v, size_t n,
                             long *pos, uint64_t *rng)
{
    int valid = *pos >= 0 && (size_t)*pos < n;
    int r = (int)(tu_rand(rng) % 10);
    struct key k = key_of((int)(tu_rand(rng) % KEY_SPACE));
    if (valid && r < 3) {
        rv_db_iter_next(it);
        (*pos)++;
        return "next";
    }
    if (valid && r < 6) {
        rv_db_iter_prev(it);
        (*pos)--;
        return "prev";
    }
    switch (r % 4) {
    case 0:
        rv_db_iter_seek(it, k.b, k.len);
        *pos = model_lower_bound(v, n, &k);
        return "seek";
    case 1:
        rv_db_iter_seek_for_prev(it, k.b, k.len);
        *pos = model_upper_floor(v, n, &k);
        return "seek_for_prev";
    case 2:
        rv_db_iter_seek_to_first(it);
        *pos = 0;
        return "seek_to_first";
    default:
        rv_db_iter_seek_to_last(it);
        *pos = (long)n - 1;
        return "seek_to_last";
    }
}

static void walk(rv_db_iter *it, const struct entry *v, size_t n, int steps,
                 uint64_t *rng)
{
    long pos = -1;
    for (int s = 0; s < steps; s++) {
        const char *what = walk_step(it, v, n, &pos, rng);
        if (pos >= (long)n)
            pos = -1;
        expect_position(it, v, n, pos, what);
    }
    /* a full scan each way too */
    size_t i = 0;
    for (rv_db_iter_seek_to_first(it); rv_db_iter_valid(it);
         rv_db_iter_next(it))
        expect_position(it, v, n, (long)i++, "scan forward");
    assert_int_equal(i, n);
    for (rv_db_iter_seek_to_last(it); rv_db_iter_valid(it);
         rv_db_iter_prev(it))
        expect_position(it, v, n, (long)--i, "scan backward");
    assert_int_equal(i, 0);
}

/* Random operations spread over NMEM memtables (sequence numbers unique). */
static size_t fill(rv_memtable **mems, int nmem, struct op *ops, size_t nops,
                   uint64_t *rng)
{
    for (size_t i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        o->key = (int)(tu_rand(rng) % KEY_SPACE);
        o->seq = i + 1;
        o->type = tu_rand(rng) % 3 == 0 ? RV_TYPE_DELETE : RV_TYPE_PUT;
        /* some values empty */
        if (tu_rand(rng) % 8 == 0)
            o->val[0] = '\0';
        else
            snprintf(o->val, sizeof o->val, "v%zu", i + 1);
        struct key k = key_of(o->key);
        rv_memtable *mt = mems[tu_rand(rng) % (uint64_t)nmem];
        assert_int_equal(rv_memtable_add(mt, o->seq, o->type, k.b, k.len,
                                         o->val, strlen(o->val)), RAVEL_OK);
    }
    return nops;
}

/* Most memtables a model run merges. */
#define MAX_MEMS 16

static rv_db_iter *open_view(rv_memtable **mems, int nmem, uint64_t snap)
{
    struct rv_iter *children[MAX_MEMS];
    for (int i = 0; i < nmem; i++) {
        children[i] = rv_memtable_iter_new(mems[i]);
        assert_non_null(children[i]);
    }
    struct rv_iter *internal = nmem == 1 ? children[0]
                                         : rv_merging_iter_new(children, nmem);
    assert_non_null(internal);
    struct rv_read_view view = rv_read_view_at(snap);
    rv_db_iter *it = rv_db_iter_new(internal, &view);
    assert_non_null(it);
    return it;
}

static void run_model(int nmem, int rounds, uint64_t seed)
{
    enum { NOPS = 250 };
    static struct op ops[NOPS];
    static struct entry view[KEY_SPACE];
    uint64_t rng = seed;
    for (int round = 0; round < rounds; round++) {
        rv_memtable *mems[MAX_MEMS];
        for (int i = 0; i < nmem; i++)
            mems[i] = rv_memtable_new(0);
        size_t nops = fill(mems, nmem, ops, 20 + tu_rand(&rng) % (NOPS - 20),
                           &rng);
        for (int s = 0; s < 6; s++) {
            /* snapshots 0, the latest, and in between */
            uint64_t snap = s == 0 ? 0 : s == 1 ? nops
                                           : tu_rand(&rng) % (nops + 1);
            size_t n = model_view(ops, nops, snap, view);
            rv_db_iter *it = open_view(mems, nmem, snap);
            walk(it, view, n, 200, &rng);
            rv_db_iter_free(it);
        }
        for (int i = 0; i < nmem; i++)
            rv_memtable_unref(mems[i]);
    }
}

static void test_model_one_memtable(void **state)
{
    (void)state;
    run_model(1, 30, 0x1111);
}

static void test_model_merged_memtables(void **state)
{
    (void)state;
    run_model(2, 20, 0x2222);
    run_model(4, 20, 0x3333);
    /* a heap several levels deep, children running out at different
    ** times, in both directions */
    run_model(13, 20, 0x4444);
    run_model(MAX_MEMS, 10, 0x5555);
}

/* Entries written after the iterator's snapshot stay invisible, even while
** the iterator is in use. */
static void test_later_writes_invisible(void **state)
{
    (void)state;
    rv_memtable *mt = rv_memtable_new(0);
    assert_int_equal(rv_memtable_add(mt, 1, RV_TYPE_PUT, "a", 1, "1", 1), 0);
    assert_int_equal(rv_memtable_add(mt, 2, RV_TYPE_PUT, "c", 1, "2", 1), 0);
    rv_db_iter *it = open_view(&mt, 1, 2);
    rv_db_iter_seek_to_first(it);
    assert_true(rv_db_iter_valid(it));
    assert_int_equal(rv_memtable_add(mt, 3, RV_TYPE_PUT, "b", 1, "3", 1), 0);
    assert_int_equal(rv_memtable_add(mt, 4, RV_TYPE_DELETE, "c", 1, NULL, 0),
                     0);
    rv_db_iter_next(it);
    assert_true(rv_db_iter_valid(it));
    size_t len;
    assert_memory_equal(rv_db_iter_key(it, &len), "c", 1);
    rv_db_iter_next(it);
    assert_false(rv_db_iter_valid(it));
    assert_null(rv_db_iter_key(it, &len));
    assert_int_equal(len, 0);
    rv_db_iter_free(it);
    rv_memtable_unref(mt);
}

/* --------------------------------------------- an iterator that failed */

static int failed_valid(const struct rv_iter *it) { (void)it; return 0; }
static void failed_move(struct rv_iter *it) { (void)it; }
static void failed_seek(struct rv_iter *it, const char *t, size_t n)
{
    (void)it; (void)t; (void)n;
}
static const char *failed_key(const struct rv_iter *it, size_t *len)
{
    (void)it;
    *len = 0;
    return NULL;
}
static int failed_status(const struct rv_iter *it) { (void)it; return RAVEL_IOERR; }
static void failed_destroy(struct rv_iter *it) { free(it); }

static const struct rv_iter_ops failed_ops = {
    failed_valid, failed_move, failed_move, failed_seek, failed_seek,
    failed_move, failed_move, failed_key, failed_key, failed_status,
    failed_destroy,
};

/* A child's error reaches the user through the merge. */
static void test_child_error_is_status(void **state)
{
    (void)state;
    rv_memtable *mt = rv_memtable_new(0);
    assert_int_equal(rv_memtable_add(mt, 1, RV_TYPE_PUT, "a", 1, "1", 1), 0);
    struct rv_iter *children[2];
    children[0] = rv_memtable_iter_new(mt);
    children[1] = malloc(sizeof *children[1]);
    children[1]->ops = &failed_ops;
    struct rv_read_view at1 = rv_read_view_at(1);
    rv_db_iter *it = rv_db_iter_new(rv_merging_iter_new(children, 2), &at1);
    assert_non_null(it);
    rv_db_iter_seek_to_first(it);
    assert_int_equal(rv_db_iter_status(it), RAVEL_IOERR);
    rv_db_iter_free(it);
    rv_memtable_unref(mt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_one_memtable),
        cmocka_unit_test(test_model_merged_memtables),
        cmocka_unit_test(test_later_writes_invisible),
        cmocka_unit_test(test_child_error_is_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
