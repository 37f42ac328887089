/*
** test_fault.c -- the WAL fault hook: an armed point lets SKIP operations
** through, fails exactly one with -ERR, then is disarmed again; points are
** independent; a negative SKIP disarms.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>

#include "util/fault.h"

static void test_disarmed(void **state)
{
    (void)state;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(rv_fault_check(RV_FAULT_WAL_WRITE), 0);
        assert_int_equal(rv_fault_check(RV_FAULT_WAL_SYNC), 0);
    }
}

static void test_fires_once_after_skip(void **state)
{
    (void)state;
    rv_fault_arm(RV_FAULT_WAL_SYNC, 2, EIO);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_WRITE), 0);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_SYNC), 0);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_SYNC), 0);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_SYNC), -EIO);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_SYNC), 0);

    rv_fault_arm(RV_FAULT_WAL_WRITE, 0, ENOSPC);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_SYNC), 0);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_WRITE), -ENOSPC);
    assert_int_equal(rv_fault_check(RV_FAULT_WAL_WRITE), 0);
}

static void test_disarm(void **state)
{
    (void)state;
    rv_fault_arm(RV_FAULT_WAL_WRITE, 1, EIO);
    rv_fault_arm(RV_FAULT_WAL_WRITE, -1, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(rv_fault_check(RV_FAULT_WAL_WRITE), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disarmed),
        cmocka_unit_test(test_fires_once_after_skip),
        cmocka_unit_test(test_disarm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
