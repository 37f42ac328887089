/*
** test_index_search.c -- the slice array over an index block
** (lib/table/index_search.c): for index blocks of many shapes (user keys
** sharing long prefixes or none, keys shorter and longer than the 8-byte
** slice, keys equal in their slice but not after, several versions of one
** user key, the empty user key), every seek lands where the block's own
** seek lands, for targets at, between, before and after the separators;
** a block it cannot serve (restart interval above 1) falls back on the
** block's seek.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dbformat.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/index_search.h"
#include "util/coding.h"
#include "../testutil.h" /* tu_rand */

#define MAXN 2000
#define MAXK 40

struct key {
    char b[MAXK + 8];
    size_t len; /* whole internal key */
};

static int key_cmp(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    return rv_ikey_compare(x->b, x->len, y->b, y->len);
}

/* A user key of shape SHAPE into K (with a tag of sequence SEQ). */
static void make_key(struct key *k, int shape, uint64_t *rng, uint64_t seq)
{
    char u[MAXK + 1];
    int n;
    uint64_t r = tu_rand(rng);
    switch (shape) {
    case 0: /* db_bench-like: zero-padded decimals, 16 bytes */
        n = snprintf(u, sizeof u, "%016llu", (unsigned long long)(r % 5000));
        break;
    case 1: /* a long shared prefix, then a few varying bytes */
        n = snprintf(u, sizeof u, "tenant/0042/user/%llu",
                     (unsigned long long)(r % 3000));
        break;
    case 2: /* equal slices past the prefix, differing after 8 bytes */
        n = snprintf(u, sizeof u, "p%08d%04llu", 0,
                     (unsigned long long)(r % 400));
        if (r & 1)
            u[1] = 'x';
        break;
    case 3: /* short binary keys, with zero bytes, some empty */
        n = (int)(r % 4);
        for (int i = 0; i < n; i++)
            u[i] = (char)((r >> (8 + 8 * i)) % 3);
        break;
    default: /* random lengths and bytes */
        n = (int)(r % MAXK);
        for (int i = 0; i < n; i++)
            u[i] = (char)(tu_rand(rng) & 0xff);
        break;
    }
    memcpy(k->b, u, (size_t)n);
    rv_put_fixed64(k->b + n, rv_pack_tag(seq, RV_TYPE_PUT));
    k->len = (size_t)n + 8;
}

/* Seeks TARGET with the slice array and with the block's own seek: both
** cursors must stand on the same entry (or both be invalid). */
static void check_seek(const struct rv_index_search *s, const char *block,
                       size_t len, const struct key *target)
{
    struct rv_block_cursor a, b;
    rv_block_cursor_init_checked(&a, block, len, rv_ikey_compare, 8);
    rv_block_cursor_init_checked(&b, block, len, rv_ikey_compare, 8);
    rv_index_search_seek(s, &a, target->b, target->len);
    rv_block_cursor_seek(&b, target->b, target->len);
    assert_int_equal(a.status, RAVEL_OK);
    assert_int_equal(b.status, RAVEL_OK);
    assert_int_equal(rv_block_cursor_valid(&a), rv_block_cursor_valid(&b));
    if (rv_block_cursor_valid(&a)) {
        assert_int_equal(a.cur, b.cur);
        assert_int_equal(a.key_len, b.key_len);
        assert_memory_equal(a.key, b.key, a.key_len);
        assert_memory_equal(a.val, b.val, a.val_len);
        /* and it goes on from there as the block's does */
        rv_block_cursor_next(&a);
        rv_block_cursor_next(&b);
        assert_int_equal(rv_block_cursor_valid(&a),
                         rv_block_cursor_valid(&b));
        if (rv_block_cursor_valid(&a))
            assert_int_equal(a.cur, b.cur);
    }
    rv_block_cursor_destroy(&a);
    rv_block_cursor_destroy(&b);
}

/* One index block of N separators of SHAPE at restart interval INTERVAL;
** seeks to every separator, and to random keys of the same and other
** shapes and sequences. */
static void run_shape(int shape, int n, int interval, uint64_t seed)
{
    static struct key keys[MAXN];
    uint64_t rng = seed;
    for (int i = 0; i < n; i++)
        make_key(&keys[i], shape, &rng, tu_rand(&rng) % 1000 + 1);
    qsort(keys, (size_t)n, sizeof keys[0], key_cmp);
    struct rv_block_builder bb;
    rv_block_builder_init(&bb, interval);
    int added = 0;
    for (int i = 0; i < n; i++) {
        if (added && key_cmp(&keys[added - 1], &keys[i]) == 0)
            continue; /* a block holds each internal key once */
        keys[added] = keys[i];
        char val[16];
        rv_put_fixed64(val, (uint64_t)added * 4096);
        rv_put_fixed64(val + 8, 4000);
        assert_int_equal(rv_block_builder_add(&bb, keys[added].b,
                                              keys[added].len, val, 16),
                         RAVEL_OK);
        added++;
    }
    const char *out;
    size_t len;
    assert_int_equal(rv_block_builder_finish(&bb, &out, &len), RAVEL_OK);
    char *block = malloc(len);
    memcpy(block, out, len);
    rv_block_builder_destroy(&bb);
    assert_int_equal(rv_block_check(block, len), RAVEL_OK);

    struct rv_index_search s;
    rv_index_search_build(&s, block, len);
    if (interval == 1) {
        assert_non_null(s.slices);
        assert_int_equal(s.n, (uint32_t)added);
    } else if (added > 1) {
        assert_null(s.slices); /* not all entries are restarts */
    }
    for (int i = 0; i < added; i++) {
        check_seek(&s, block, len, &keys[i]);
        /* the same user key at the newest and the oldest sequence */
        struct key t = keys[i];
        rv_put_fixed64(t.b + t.len - 8, rv_pack_tag(RV_MAX_SEQUENCE,
                                                    RV_TYPE_PUT));
        check_seek(&s, block, len, &t);
        rv_put_fixed64(t.b + t.len - 8, rv_pack_tag(0, RV_TYPE_PUT));
        check_seek(&s, block, len, &t);
    }
    for (int i = 0; i < 3 * added + 50; i++) {
        struct key t;
        make_key(&t, (int)(tu_rand(&rng) % 6 == 0 ? tu_rand(&rng) % 5
                                                    : (uint64_t)shape),
                 &rng, tu_rand(&rng) % 1200);
        check_seek(&s, block, len, &t);
    }
    rv_index_search_free(&s);
    free(block);
}

static void test_shapes(void **state)
{
    (void)state;
    for (int shape = 0; shape < 5; shape++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            run_shape(shape, MAXN, 1, seed * 7919 + (uint64_t)shape);
            run_shape(shape, 1 + (int)(seed * 3), 1, seed);
        }
}

static void test_single_entry(void **state)
{
    (void)state;
    for (int shape = 0; shape < 5; shape++)
        run_shape(shape, 1, 1, 99 + (uint64_t)shape);
}

static void test_falls_back_above_interval_one(void **state)
{
    (void)state;
    for (int shape = 0; shape < 5; shape++)
        run_shape(shape, 500, 16, 5 + (uint64_t)shape);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_single_entry),
        cmocka_unit_test(test_falls_back_above_interval_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
