/*
** test_bloom.c -- the table filter (lib/table/bloom.c): never a false
** negative, about 1% false positives at 10 bits per key, malformed filters
** refused.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/bloom.h"
#include "util/coding.h"
#include "ravel.h"

static int key_of(char *buf, size_t n, const char *kind, uint32_t i)
{
    return snprintf(buf, n, "%s-%08u", kind, i);
}

/* Builds a filter of N keys "in-I"; returns it (malloc'd) and its size. */
static char *build(uint32_t n, int bits, size_t *len)
{
    struct rv_bloom_builder b;
    rv_bloom_builder_init(&b, bits);
    char k[32];
    for (uint32_t i = 0; i < n; i++) {
        int kl = key_of(k, sizeof k, "in", i);
        assert_int_equal(rv_bloom_add(&b, k, (size_t)kl), RAVEL_OK);
    }
    *len = rv_bloom_size(&b);
    char *f = malloc(*len);
    assert_non_null(f);
    rv_bloom_finish(&b, f);
    rv_bloom_builder_destroy(&b);
    assert_int_equal(rv_bloom_check(f, *len), RAVEL_OK);
    return f;
}

static double false_positive_rate(const char *f, size_t len, uint32_t tries)
{
    char k[32];
    uint32_t fp = 0;
    for (uint32_t i = 0; i < tries; i++) {
        int kl = key_of(k, sizeof k, "out", i);
        fp += (uint32_t)rv_bloom_may_match(f, len, k, (size_t)kl);
    }
    return (double)fp / tries;
}

static void test_no_false_negatives(void **state)
{
    (void)state;
    static const uint32_t counts[] = {1, 7, 100, 10000, 200000};
    static const int bits[] = {1, 5, 10, 20};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
            size_t len;
            char *f = build(counts[c], bits[b], &len);
            char k[32];
            for (uint32_t i = 0; i < counts[c]; i++) {
                int kl = key_of(k, sizeof k, "in", i);
                if (!rv_bloom_may_match(f, len, k, (size_t)kl))
                    fail_msg("%u keys, %d bits/key: key %s is in the set but "
                             "the filter says no", counts[c], bits[b], k);
            }
            free(f);
        }
    }
}

/* The rate the note reports; bounds wide enough for hash noise, tight
** enough that a broken filter (too few probes, a bad line choice) fails. */
static void test_false_positive_rate(void **state)
{
    (void)state;
    static const struct { int bits; double max; } cases[] = {
        {5, 0.12}, {10, 0.0150}, {20, 0.0010},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        char *f = build(1000000, cases[i].bits, &len);
        double rate = false_positive_rate(f, len, 1000000);
        printf("# %d bits/key, 1M keys: %.4f%% false positives, %.2f bits "
               "per key stored\n", cases[i].bits, rate * 100,
               (double)(len * 8) / 1000000);
        if (rate > cases[i].max)
            fail_msg("%d bits/key: false positive rate %.4f above %.4f",
                     cases[i].bits, rate, cases[i].max);
        free(f);
    }
}

static void test_empty_filter_matches_everything(void **state)
{
    (void)state;
    size_t len;
    char *f = build(0, 10, &len);
    assert_int_equal(len, RV_BLOOM_TRAILER);
    assert_int_equal(rv_bloom_may_match(f, len, "x", 1), 1);
    free(f);
}

/* The same keys give the same bytes: the layout is on disk. */
static void test_layout_is_stable(void **state)
{
    (void)state;
    size_t len;
    char *f = build(3, 10, &len);
    assert_int_equal(len, RV_BLOOM_LINE + RV_BLOOM_TRAILER);
    assert_int_equal((unsigned char)f[RV_BLOOM_LINE], 7); /* 10 * ln 2 */
    assert_int_equal(rv_get_fixed32(f + RV_BLOOM_LINE + 4), 1);
    int bits_set = 0;
    for (int i = 0; i < RV_BLOOM_LINE; i++)
        bits_set += __builtin_popcount((unsigned char)f[i]);
    assert_true(bits_set > 7 && bits_set <= 21); /* 3 keys x 7 probes */
    free(f);
}

static void test_malformed_filters_refused(void **state)
{
    (void)state;
    size_t len;
    char *f = build(1000, 10, &len);
    assert_int_equal(rv_bloom_check(f, 3), RAVEL_CORRUPT);
    assert_int_equal(rv_bloom_check(f, len - 1), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "filter"));
    f[len - RV_BLOOM_TRAILER] = 0; /* zero probes */
    assert_int_equal(rv_bloom_check(f, len), RAVEL_CORRUPT);
    f[len - RV_BLOOM_TRAILER] = 7;
    rv_put_fixed32(f + len - 4, 999999); /* more lines than bytes */
    assert_int_equal(rv_bloom_check(f, len), RAVEL_CORRUPT);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_false_positive_rate),
        cmocka_unit_test(test_empty_filter_matches_everything),
        cmocka_unit_test(test_layout_is_stable),
        cmocka_unit_test(test_malformed_filters_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
