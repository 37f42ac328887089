/*
** test_block.c -- table blocks (lib/table/block_builder.c, block.c):
** whatever is added reads back in order, both ways, with seeks to every
** key and between keys, at every restart interval; damaged blocks never
** make the reader leave the block (run it under ASan) and malformed
** restart arrays are refused as RAVEL_CORRUPT.
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
#include "util/coding.h"
#include "../testutil.h" /* tu_rand */

#define MAXN 3000

struct entry {
    char key[48];
    size_t klen;
    char val[64];
    size_t vlen;
};

static int entry_cmp(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return rv_ikey_compare(x->key, x->klen, y->key, y->klen);
}

/* N distinct internal keys in order: user keys with long shared prefixes,
** several versions of some, values of 0..60 bytes. */
static int make_entries(struct entry *e, int n, uint64_t *rng)
{
    for (int i = 0; i < n; i++) {
        int uk = (int)(tu_rand(rng) % (uint64_t)(n / 2 + 1));
        int ul = snprintf(e[i].key, sizeof e[i].key - 8,
                          "user/prefix/%05d%s", uk, uk % 3 ? "" : "/long");
        rv_put_fixed64(e[i].key + ul, rv_pack_tag((uint64_t)i + 1, RV_TYPE_PUT));
        e[i].klen = (size_t)ul + 8;
        e[i].vlen = tu_rand(rng) % 61;
        for (size_t k = 0; k < e[i].vlen; k++)
            e[i].val[k] = (char)('a' + (i + k) % 26);
    }
    qsort(e, (size_t)n, sizeof *e, entry_cmp);
    return n;
}

static const char *build(struct rv_block_builder *b, const struct entry *e,
                         int n, size_t *len)
{
    rv_block_builder_reset(b);
    for (int i = 0; i < n; i++)
        assert_int_equal(rv_block_builder_add(b, e[i].key, e[i].klen,
                                              e[i].val, e[i].vlen), RAVEL_OK);
    size_t est = rv_block_builder_size(b);
    const char *data;
    assert_int_equal(rv_block_builder_finish(b, &data, len), RAVEL_OK);
    assert_int_equal(*len, est);
    return data;
}

static void expect_at(struct rv_iter *it, const struct entry *e)
{
    assert_true(it->ops->valid(it));
    size_t kl, vl;
    const char *k = it->ops->key(it, &kl);
    const char *v = it->ops->value(it, &vl);
    assert_int_equal(kl, e->klen);
    assert_memory_equal(k, e->key, kl);
    assert_int_equal(vl, e->vlen);
    if (vl)
        assert_memory_equal(v, e->val, vl);
}

static void check_block(const char *data, size_t len, const struct entry *e,
                        int n)
{
    struct rv_iter *it = rv_block_iter_new(data, len, rv_ikey_compare,
                                           RV_TAG_SIZE);
    assert_non_null(it);
    assert_int_equal(it->ops->status(it), RAVEL_OK);
    assert_false(it->ops->valid(it));
    int i = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        expect_at(it, &e[i++]);
    assert_int_equal(i, n);
    for (it->ops->seek_to_last(it); it->ops->valid(it); it->ops->prev(it))
        expect_at(it, &e[--i]);
    assert_int_equal(i, 0);
    for (int j = 0; j < n; j++) {
        it->ops->seek(it, e[j].key, e[j].klen);
        expect_at(it, &e[j]);
        it->ops->seek_for_prev(it, e[j].key, e[j].klen);
        expect_at(it, &e[j]);
        /* just after e[j]: the same user key with sequence 0 sorts after
        ** every version of it */
        char t[48];
        size_t ul = e[j].klen - 8;
        memcpy(t, e[j].key, ul);
        rv_put_fixed64(t + ul, 0);
        it->ops->seek(it, t, ul + 8);
        int k = j;
        while (k < n && rv_ikey_compare(e[k].key, e[k].klen, t, ul + 8) < 0)
            k++;
        if (k < n)
            expect_at(it, &e[k]);
        else
            assert_false(it->ops->valid(it));
        it->ops->seek_for_prev(it, t, ul + 8);
        expect_at(it, &e[k - 1]);
        if (k < n) {
            it->ops->next(it);
            expect_at(it, &e[k]);
            it->ops->prev(it);
            expect_at(it, &e[k - 1]);
        }
    }
    assert_int_equal(it->ops->status(it), RAVEL_OK);
    it->ops->destroy(it);
}

static void test_round_trip(void **state)
{
    (void)state;
    static struct entry e[MAXN];
    static const int counts[] = {0, 1, 2, 17, 300, MAXN};
    static const int intervals[] = {1, 2, 16, 1024};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    struct rv_block_builder b;
    for (size_t r = 0; r < sizeof intervals / sizeof intervals[0]; r++) {
        rv_block_builder_init(&b, intervals[r]);
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            int n = make_entries(e, counts[c], &rng);
            size_t len;
            const char *data = build(&b, e, n, &len);
            assert_int_equal(rv_block_check(data, len), RAVEL_OK);
            check_block(data, len, e, n);
        }
        rv_block_builder_destroy(&b);
    }
}

/* Keys sharing long prefixes take less room than their total size. */
static void test_prefix_compression(void **state)
{
    (void)state;
    static struct entry e[MAXN];
    uint64_t rng = 42;
    int n = make_entries(e, 1000, &rng);
    size_t raw = 0;
    for (int i = 0; i < n; i++)
        raw += e[i].klen + e[i].vlen;
    struct rv_block_builder b;
    rv_block_builder_init(&b, 16);
    size_t len;
    build(&b, e, n, &len);
    printf("# 1000 entries: %zu bytes of keys and values, block %zu bytes\n",
           raw, len);
    assert_true(len < raw);
    rv_block_builder_destroy(&b);
}

static void test_bad_restart_arrays(void **state)
{
    (void)state;
    char buf[64];
    memset(buf, 0, sizeof buf);
    assert_int_equal(rv_block_check(buf, 3), RAVEL_CORRUPT);
    rv_put_fixed32(buf + 60, 0); /* no restart */
    assert_int_equal(rv_block_check(buf, 64), RAVEL_CORRUPT);
    rv_put_fixed32(buf + 60, 1000); /* more restarts than bytes */
    assert_int_equal(rv_block_check(buf, 64), RAVEL_CORRUPT);
    rv_put_fixed32(buf + 60, 2); /* restarts at 0 and 52: entries end at 52 */
    rv_put_fixed32(buf + 52, 0);
    rv_put_fixed32(buf + 56, 52);
    assert_int_equal(rv_block_check(buf, 64), RAVEL_CORRUPT);
    rv_put_fixed32(buf + 56, 0); /* not increasing */
    assert_int_equal(rv_block_check(buf, 64), RAVEL_CORRUPT);
    struct rv_iter *it = rv_block_iter_new(buf, 64, rv_ikey_compare,
                                           RV_TAG_SIZE);
    assert_int_equal(it->ops->status(it), RAVEL_CORRUPT);
    it->ops->seek_to_first(it);
    assert_false(it->ops->valid(it));
    it->ops->destroy(it);
}

/* Every byte flipped in turn, and every truncation: the reader stays in
** the block (ASan would say otherwise) and always terminates. */
static void test_damage_never_escapes(void **state)
{
    (void)state;
    static struct entry e[MAXN];
    uint64_t rng = 7;
    int n = make_entries(e, 60, &rng);
    struct rv_block_builder b;
    rv_block_builder_init(&b, 4);
    size_t len;
    const char *data = build(&b, e, n, &len);
    int corrupt = 0;
    for (size_t cut = 0; cut <= len; cut++) {
        for (size_t pos = 0; pos < cut; pos += cut < len ? cut : 1) {
            char *copy = malloc(cut ? cut : 1);
            memcpy(copy, data, cut);
            if (cut == len)
                copy[pos] ^= 0x5a;
            struct rv_iter *it = rv_block_iter_new(copy, cut,
                                                   rv_ikey_compare,
                                                   RV_TAG_SIZE);
            int steps = 0;
            for (it->ops->seek_to_first(it); it->ops->valid(it);
                 it->ops->next(it))
                assert_true(++steps <= 4 * n);
            for (it->ops->seek_to_last(it); it->ops->valid(it);
                 it->ops->prev(it))
                assert_true(++steps <= 8 * n);
            it->ops->seek(it, e[n / 2].key, e[n / 2].klen);
            corrupt += it->ops->status(it) == RAVEL_CORRUPT;
            it->ops->destroy(it);
            free(copy);
            if (cut < len)
                break;
        }
    }
    printf("# %d damaged blocks reported as corrupt by the reader\n",
           corrupt);
    assert_true(corrupt > 0);
    rv_block_builder_destroy(&b);
}

/* Keys longer than the cursor's inline buffer (RV_BLOCK_KEY_INLINE),
** sharing long prefixes, read back through a cursor on the stack: in
** order both ways and by seek, the buffer growing as needed. */
static void test_cursor_long_keys(void **state)
{
    (void)state;
    enum { N = 200, UL = 3 * RV_BLOCK_KEY_INLINE };
    static char keys[N][UL + 8];
    struct rv_block_builder b;
    rv_block_builder_init(&b, 16);
    for (int i = 0; i < N; i++) {
        memset(keys[i], 'k', UL);
        /* the keys differ near their end: most bytes are shared */
        snprintf(keys[i] + UL - 8, 9, "%08d", i);
        rv_put_fixed64(keys[i] + UL, rv_pack_tag(1, RV_TYPE_PUT));
        assert_int_equal(rv_block_builder_add(&b, keys[i], UL + 8, "v", 1),
                         RAVEL_OK);
    }
    const char *data;
    size_t len;
    assert_int_equal(rv_block_builder_finish(&b, &data, &len), RAVEL_OK);
    struct rv_block_cursor c;
    assert_int_equal(rv_block_cursor_init(&c, data, len, rv_ikey_compare,
                                          RV_TAG_SIZE), RAVEL_OK);
    int i = 0;
    for (rv_block_cursor_seek_to_first(&c); rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c), i++) {
        assert_int_equal(c.key_len, UL + 8);
        assert_memory_equal(c.key, keys[i], UL + 8);
    }
    assert_int_equal(i, N);
    for (rv_block_cursor_seek_to_last(&c); rv_block_cursor_valid(&c);
         rv_block_cursor_prev(&c))
        assert_memory_equal(c.key, keys[--i], UL + 8);
    assert_int_equal(i, 0);
    for (int j = 0; j < N; j += 3) {
        rv_block_cursor_seek(&c, keys[j], UL + 8);
        assert_true(rv_block_cursor_valid(&c));
        assert_memory_equal(c.key, keys[j], UL + 8);
    }
    assert_int_equal(c.status, RAVEL_OK);
    rv_block_cursor_destroy(&c);
    rv_block_builder_destroy(&b);
}

/* A data block whose keys are shorter than an internal key's tag is
** corrupt: the comparator is never handed one. */
static void test_cursor_short_key_refused(void **state)
{
    (void)state;
    struct rv_block_builder b;
    rv_block_builder_init(&b, 16);
    assert_int_equal(rv_block_builder_add(&b, "abc", 3, "v", 1), RAVEL_OK);
    const char *data;
    size_t len;
    assert_int_equal(rv_block_builder_finish(&b, &data, &len), RAVEL_OK);
    struct rv_block_cursor c;
    assert_int_equal(rv_block_cursor_init(&c, data, len, rv_ikey_compare,
                                          RV_TAG_SIZE), RAVEL_OK);
    rv_block_cursor_seek_to_first(&c);
    assert_false(rv_block_cursor_valid(&c));
    assert_int_equal(c.status, RAVEL_CORRUPT);
    rv_block_cursor_destroy(&c);
    rv_block_builder_destroy(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_prefix_compression),
        cmocka_unit_test(test_bad_restart_arrays),
        cmocka_unit_test(test_damage_never_escapes),
        cmocka_unit_test(test_cursor_long_keys),
        cmocka_unit_test(test_cursor_short_key_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
