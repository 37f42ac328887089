/*
** test_batch.c -- write batches: what is put comes back from
** rv_batch_apply (what the write path and WAL replay call) in order with
** the right sequences, the size limits are enforced, and malformed reps are
** rejected by rv_batch_validate, which replay calls before applying.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/batch.h"
#include "base/dbformat.h"
#include "ravel.h"

struct seen_op {
    uint64_t seq;
    int type;
    char *key, *val;
    size_t klen, vlen;
};

struct seen {
    struct seen_op ops[2048];
    int n;
    int stop_at; /* return 99 from this op (-1: never) */
};

static int seen_handler(void *ctx, uint64_t seq, int type, const char *key,
                        size_t klen, const char *val, size_t vlen)
{
    struct seen *s = ctx;
    if (s->n == s->stop_at)
        return 99;
    assert_true(s->n < 2048);
    struct seen_op *op = &s->ops[s->n++];
    op->seq = seq;
    op->type = type;
    op->klen = klen;
    op->vlen = vlen;
    op->key = malloc(klen + 1);
    memcpy(op->key, key, klen);
    op->val = NULL;
    if (val) {
        op->val = malloc(vlen + 1);
        memcpy(op->val, val, vlen);
    }
    return 0;
}

static void seen_reset(struct seen *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->ops[i].key);
        free(s->ops[i].val);
    }
    s->n = 0;
    s->stop_at = -1;
}

static struct seen *seen_new(void)
{
    struct seen *s = calloc(1, sizeof *s);
    s->stop_at = -1;
    return s;
}

static void seen_free(struct seen *s)
{
    seen_reset(s);
    free(s);
}

static void test_empty(void **state)
{
    (void)state;
    ravel_batch *b = NULL;
    assert_int_equal(ravel_batch_new(&b), RAVEL_OK);
    assert_int_equal(ravel_batch_count(b), 0);
    assert_int_equal(b->len, RV_BATCH_HEADER_SIZE);
    assert_int_equal(rv_batch_rep_sequence(b->rep), 0);
    assert_int_equal(rv_batch_rep_count(b->rep), 0);
    assert_int_equal(rv_batch_validate(b->rep, b->len), RAVEL_OK);
    struct seen *s = seen_new();
    assert_int_equal(rv_batch_apply(b->rep, b->len, 7, seen_handler, s),
                     RAVEL_OK);
    assert_int_equal(s->n, 0);
    seen_free(s);
    ravel_batch_free(b);
    ravel_batch_free(NULL);
    assert_int_equal(ravel_batch_count(NULL), 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    ravel_batch *b = NULL;
    assert_int_equal(ravel_batch_new(&b), RAVEL_OK);
    static char big[100000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 7);

    assert_int_equal(ravel_batch_put(b, "alpha", 5, "one", 3), RAVEL_OK);
    assert_int_equal(ravel_batch_delete(b, "beta", 4), RAVEL_OK);
    assert_int_equal(ravel_batch_put(b, NULL, 0, NULL, 0), RAVEL_OK);
    assert_int_equal(ravel_batch_put(b, "k\0z", 3, big, sizeof big),
                     RAVEL_OK);
    assert_int_equal(ravel_batch_delete(b, NULL, 0), RAVEL_OK);
    for (int i = 0; i < 1000; i++) {
        char k[16];
        int n = snprintf(k, sizeof k, "key%04d", i);
        assert_int_equal(ravel_batch_put(b, k, (size_t)n, k, 3), RAVEL_OK);
    }
    assert_int_equal(ravel_batch_count(b), 1005);
    assert_int_equal(rv_batch_rep_count(b->rep), 1005);
    assert_int_equal(rv_batch_rep_sequence(b->rep), 0);

    struct seen *s = seen_new();
    assert_int_equal(rv_batch_apply(b->rep, b->len, 100, seen_handler, s),
                     RAVEL_OK);
    assert_int_equal(s->n, 1005);
    for (int i = 0; i < s->n; i++)
        assert_int_equal(s->ops[i].seq, 100 + (uint64_t)i);
    assert_int_equal(s->ops[0].type, RV_TYPE_PUT);
    assert_int_equal(s->ops[0].klen, 5);
    assert_memory_equal(s->ops[0].key, "alpha", 5);
    assert_int_equal(s->ops[0].vlen, 3);
    assert_memory_equal(s->ops[0].val, "one", 3);
    assert_int_equal(s->ops[1].type, RV_TYPE_DELETE);
    assert_memory_equal(s->ops[1].key, "beta", 4);
    assert_int_equal(s->ops[1].vlen, 0);
    assert_int_equal(s->ops[2].type, RV_TYPE_PUT);
    assert_int_equal(s->ops[2].klen, 0);
    assert_int_equal(s->ops[2].vlen, 0);
    assert_int_equal(s->ops[3].klen, 3);
    assert_memory_equal(s->ops[3].key, "k\0z", 3);
    assert_int_equal(s->ops[3].vlen, sizeof big);
    assert_memory_equal(s->ops[3].val, big, sizeof big);
    assert_int_equal(s->ops[4].type, RV_TYPE_DELETE);
    assert_int_equal(s->ops[4].klen, 0);
    assert_memory_equal(s->ops[1004].key, "key0999", 7);

    /* A handler's non-zero result stops the walk and is returned. */
    seen_reset(s);
    s->stop_at = 2;
    assert_int_equal(rv_batch_apply(b->rep, b->len, 1, seen_handler, s),
                     99);
    assert_int_equal(s->n, 2);

    /* Clear empties it; it can be refilled. */
    assert_int_equal(ravel_batch_clear(b), RAVEL_OK);
    assert_int_equal(ravel_batch_count(b), 0);
    assert_int_equal(b->len, RV_BATCH_HEADER_SIZE);
    assert_int_equal(rv_batch_rep_count(b->rep), 0);
    assert_int_equal(ravel_batch_put(b, "x", 1, "y", 1), RAVEL_OK);
    seen_reset(s);
    assert_int_equal(rv_batch_apply(b->rep, b->len, 5, seen_handler, s),
                     RAVEL_OK);
    assert_int_equal(s->n, 1);
    assert_int_equal(s->ops[0].seq, 5);
    assert_memory_equal(s->ops[0].key, "x", 1);
    seen_free(s);
    ravel_batch_free(b);
}

static void test_stack_batch(void **state)
{
    (void)state;
    struct ravel_batch b;
    rv_batch_init(&b);
    assert_int_equal(rv_batch_add(&b, RV_TYPE_PUT, "k", 1, "v", 1), RAVEL_OK);
    assert_ptr_equal(b.rep, b.inline_rep); /* small: no allocation */
    char v[200] = {0};
    assert_int_equal(rv_batch_add(&b, RV_TYPE_PUT, "k2", 2, v, sizeof v),
                     RAVEL_OK);
    assert_int_equal(b.count, 2);
    struct seen *s = seen_new();
    assert_int_equal(rv_batch_apply(b.rep, b.len, 1, seen_handler, s),
                     RAVEL_OK);
    assert_int_equal(s->n, 2);
    assert_int_equal(s->ops[1].vlen, 200);
    assert_int_equal(rv_batch_add(&b, 7, "k", 1, NULL, 0), RAVEL_INVALID);
    seen_free(s);
    rv_batch_release(&b);
    assert_int_equal(b.count, 0);
}

static void test_limits(void **state)
{
    (void)state;
    ravel_batch *b = NULL;
    assert_int_equal(ravel_batch_new(&b), RAVEL_OK);

    assert_int_equal(ravel_batch_put(b, NULL, 1, "v", 1), RAVEL_INVALID);
    assert_int_equal(ravel_batch_delete(b, NULL, 3), RAVEL_INVALID);
    assert_int_equal(ravel_batch_put(b, "k", 1, NULL, 1), RAVEL_INVALID);
    assert_int_equal(ravel_batch_put(NULL, "k", 1, "v", 1), RAVEL_INVALID);
    assert_int_equal(ravel_batch_delete(NULL, "k", 1), RAVEL_INVALID);
    assert_int_equal(ravel_batch_clear(NULL), RAVEL_INVALID);
    assert_int_equal(ravel_batch_new(NULL), RAVEL_INVALID);

    char *key = calloc(1, RAVEL_MAX_KEY_SIZE + 1);
    assert_int_equal(ravel_batch_put(b, key, RAVEL_MAX_KEY_SIZE + 1, "v", 1),
                     RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "RAVEL_MAX_KEY_SIZE"));
    assert_non_null(strstr(ravel_errmsg(), "1048577"));
    assert_int_equal(ravel_batch_delete(b, key, RAVEL_MAX_KEY_SIZE + 1),
                     RAVEL_INVALID);
    assert_int_equal(ravel_batch_put(b, key, RAVEL_MAX_KEY_SIZE, "v", 1),
                     RAVEL_OK);
    free(key);

    /* The value is refused before it is read: no need for a real one. */
    static const char one = 'x';
    assert_int_equal(ravel_batch_put(b, "k", 1, &one,
                                     (size_t)RAVEL_MAX_VALUE_SIZE + 1),
                     RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "RAVEL_MAX_VALUE_SIZE"));
    assert_non_null(strstr(ravel_errmsg(), "268435457"));
    assert_int_equal(ravel_batch_count(b), 1);
    ravel_batch_free(b);

    /* A batch about to cross RAVEL_MAX_BATCH_SIZE: pretend it is nearly
    ** full (the check comes before any copy). */
    struct ravel_batch s;
    rv_batch_init(&s);
    s.len = RAVEL_MAX_BATCH_SIZE - 8;
    assert_int_equal(rv_batch_add(&s, RV_TYPE_PUT, "key", 3, "value", 5),
                     RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "RAVEL_MAX_BATCH_SIZE"));
    assert_non_null(strstr(ravel_errmsg(), "1073741827"));
    assert_int_equal(s.count, 0);
    s.len = RV_BATCH_HEADER_SIZE;
    rv_batch_release(&s);
}

/* Builds a rep from raw bytes after a header with COUNT. */
static size_t rep_make(char *buf, uint32_t count, const char *ops,
                       size_t olen)
{
    rv_put_fixed64(buf, 42);
    rv_put_fixed32(buf + 8, count);
    memcpy(buf + RV_BATCH_HEADER_SIZE, ops, olen);
    return RV_BATCH_HEADER_SIZE + olen;
}

static void expect_message(const char *what, const char *offset_text)
{
    const char *msg = ravel_errmsg();
    if (!strstr(msg, what) || (offset_text && !strstr(msg, offset_text)))
        fail_msg("message '%s' does not say '%s' at '%s'", msg, what,
                 offset_text ? offset_text : "");
}

/* rv_batch_validate rejects the rep, naming what is wrong and where.
** rv_batch_apply, given it anyway, stops with the same error without
** reading out of bounds (ASan runs watch that); it may have applied the
** ops before the damage, at most OPS_BEFORE of them. */
static void expect_corrupt_after(const char *rep, size_t len,
                                 const char *what, const char *offset_text,
                                 int ops_before)
{
    assert_int_equal(rv_batch_validate(rep, len), RAVEL_CORRUPT);
    expect_message(what, offset_text);
    struct seen *s = seen_new();
    int rc = rv_batch_apply(rep, len, 1, seen_handler, s);
    if (rc != RAVEL_CORRUPT)
        fail_msg("rv_batch_apply: rc %d for a rep that should be %s", rc,
                 what);
    expect_message(what, offset_text);
    if (s->n > ops_before)
        fail_msg("rv_batch_apply applied %d ops of a rep damaged after %d",
                 s->n, ops_before);
    seen_free(s);
}

static void expect_corrupt(const char *rep, size_t len, const char *what,
                           const char *offset_text)
{
    expect_corrupt_after(rep, len, what, offset_text, 0);
}

static void test_malformed(void **state)
{
    (void)state;
    char buf[256];
    size_t n;

    expect_corrupt("", 0, "shorter than the 12-byte header", NULL);
    expect_corrupt("12345678901", 11, "shorter than the 12-byte header",
                   NULL);
    expect_corrupt(NULL, 0, "shorter", NULL);

    /* A good op, then an unknown type at byte 17. */
    n = rep_make(buf, 2, "\x01\x01k\x01v\x07\x01k", 9);
    expect_corrupt_after(buf, n, "unknown type 0x07", "byte offset 17", 1);
    /* Truncated key length varint. */
    n = rep_make(buf, 1, "\x01\x80", 2);
    expect_corrupt(buf, n, "key length", "byte offset 13");
    /* A varint longer than 5 bytes. */
    n = rep_make(buf, 1, "\x00\x80\x80\x80\x80\x80\x01", 7);
    expect_corrupt(buf, n, "key length", "byte offset 13");
    /* Key runs past the end. */
    n = rep_make(buf, 1, "\x01\x05" "ab", 4);
    expect_corrupt(buf, n, "key of 5 bytes at byte offset 14 runs past the "
                   "end", NULL);
    /* Value length missing, value truncated. */
    n = rep_make(buf, 1, "\x01\x01k", 3);
    expect_corrupt(buf, n, "value length", "byte offset 15");
    n = rep_make(buf, 1, "\x01\x01k\x09vv", 6);
    expect_corrupt(buf, n, "value of 9 bytes at byte offset 16 runs past",
                   NULL);
    /* A delete has no value: its "value" bytes are trailing junk. */
    n = rep_make(buf, 1, "\x00\x01k\x01v", 5);
    expect_corrupt_after(buf, n, "2 trailing bytes", "byte offset 15", 1);
    /* Count larger than the ops present. */
    n = rep_make(buf, 3, "\x01\x01k\x01v\x00\x01k", 8);
    expect_corrupt_after(buf, n, "header says 3 ops", "byte offset 20", 2);
    /* Count smaller than the ops present. */
    n = rep_make(buf, 1, "\x01\x01k\x01v\x00\x01k", 8);
    expect_corrupt_after(buf, n, "trailing bytes", "byte offset 17", 1);
    /* Count zero with data. */
    n = rep_make(buf, 0, "\x00", 1);
    expect_corrupt(buf, n, "trailing", "byte offset 12");
    /* A key above the key limit, even though the rep holds all of it. */
    size_t big = RV_BATCH_HEADER_SIZE + 4 + RAVEL_MAX_KEY_SIZE + 1 + 1;
    char *rep = calloc(1, big);
    rep_make(rep, 1, "\x00\x81\x80\x40", 4);
    expect_corrupt(rep, big - 1, "key of 1048577 bytes at byte offset 16 "
                   "exceeds RAVEL_MAX_KEY_SIZE", NULL);
    free(rep);
    /* A value length above the value limit. */
    n = rep_make(buf, 1, "\x01\x01k\x81\x80\x80\x80\x01", 8);
    expect_corrupt(buf, n, "exceeds RAVEL_MAX_VALUE_SIZE", "byte offset 20");

    /* The same ops, well formed, pass. */
    n = rep_make(buf, 2, "\x01\x01k\x01v\x00\x01k", 8);
    assert_int_equal(rv_batch_validate(buf, n), RAVEL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_stack_batch),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
