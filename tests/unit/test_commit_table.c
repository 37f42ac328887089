/*
** test_commit_table.c -- the commit table's entries: found, absent (not
** committed yet), evicted by a newer sequence, never replaced by an older
** one, and a commit too far from its prepare reported as evicted
** (lib/base/commit_table.h).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "base/commit_table.h"

static void test_entries(void **state)
{
    (void)state;
    struct rv_commit_table t;
    assert_int_equal(rv_commit_table_init(&t, 16), RAVEL_OK);
    uint64_t c = 0;
    assert_int_equal(rv_commit_table_lookup(&t, 5, &c), RV_COMMIT_ABSENT);
    rv_commit_table_add(&t, 5, 9);
    assert_int_equal(rv_commit_table_lookup(&t, 5, &c), RV_COMMIT_FOUND);
    assert_int_equal(c, 9);
    /* the same slot, another sequence: older absent, newer not committed */
    assert_int_equal(rv_commit_table_lookup(&t, 21, &c), RV_COMMIT_ABSENT);
    rv_commit_table_add(&t, 21, 30);
    assert_int_equal(rv_commit_table_lookup(&t, 21, &c), RV_COMMIT_FOUND);
    assert_int_equal(c, 30);
    assert_int_equal(rv_commit_table_lookup(&t, 5, &c), RV_COMMIT_EVICTED);
    assert_int_equal(atomic_load(&t.evictions), 1);
    assert_int_equal(atomic_load(&t.max_evicted_seq), 5);
    /* an older commit arriving late never replaces a newer entry */
    rv_commit_table_add(&t, 5, 31);
    assert_int_equal(rv_commit_table_lookup(&t, 21, &c), RV_COMMIT_FOUND);
    assert_int_equal(c, 30);
    /* large sequences keep their high bits */
    uint64_t big = (1ull << 55) + 37;
    rv_commit_table_add(&t, big, big + 100);
    assert_int_equal(rv_commit_table_lookup(&t, big, &c), RV_COMMIT_FOUND);
    assert_int_equal(c, big + 100);
    assert_int_equal(rv_commit_table_lookup(&t, big - 16, &c),
                     RV_COMMIT_EVICTED);
    assert_int_equal(rv_commit_table_lookup(&t, big + 16, &c),
                     RV_COMMIT_ABSENT);
    /* a delta beyond 8 + 4 bits: committed, at an unknown sequence */
    rv_commit_table_add(&t, 1000, 1000 + 5000);
    assert_int_equal(rv_commit_table_lookup(&t, 1000, &c), RV_COMMIT_EVICTED);
    rv_commit_table_add(&t, 1001, 1001 + 4094);
    assert_int_equal(rv_commit_table_lookup(&t, 1001, &c), RV_COMMIT_FOUND);
    assert_int_equal(c, 1001 + 4094);
    rv_commit_table_destroy(&t);
}

static void test_sizes(void **state)
{
    (void)state;
    struct rv_commit_table t;
    assert_int_equal(rv_commit_table_init(&t, 1u << 20), RAVEL_OK);
    assert_int_equal(t.mask, (1u << 20) - 1);
    for (uint64_t p = 1; p < 5000; p++)
        rv_commit_table_add(&t, p, p + (p % 700) + 1);
    uint64_t c = 0;
    for (uint64_t p = 1; p < 5000; p++) {
        assert_int_equal(rv_commit_table_lookup(&t, p, &c), RV_COMMIT_FOUND);
        assert_int_equal(c, p + (p % 700) + 1);
    }
    assert_int_equal(atomic_load(&t.evictions), 0);
    rv_commit_table_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
