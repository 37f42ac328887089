/*
** test_stop.c -- the "writes stopped" record (util/stop.h): the first
** failure's code and reason win; an I/O failure is remembered even when it
** comes second (the WAL must then refuse syncs); messages built from it;
** concurrent recorders elect exactly one first.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "util/stop.h"

static void test_first_reason_wins(void **state)
{
    (void)state;
    struct rv_stop s;
    rv_stop_init(&s);
    char why[RV_STOP_REASON_MAX];
    assert_int_equal(rv_stop_code(&s), 0);
    assert_int_equal(rv_stop_io_failed(&s), 0);
    rv_stop_reason(&s, why, sizeof why);
    assert_string_equal(why, "");

    assert_int_equal(rv_stop_set(&s, RAVEL_IOERR, "write wal-1: EIO"), 1);
    assert_int_equal(rv_stop_set(&s, RAVEL_NOMEM, "out of memory"), 0);
    assert_int_equal(rv_stop_set(&s, RAVEL_IOERR, "fdatasync: EIO"), 0);
    assert_int_equal(rv_stop_code(&s), RAVEL_IOERR);
    assert_int_equal(rv_stop_io_failed(&s), 1);
    rv_stop_reason(&s, why, sizeof why);
    assert_string_equal(why, "write wal-1: EIO");

    assert_int_equal(rv_stop_error(&s, RAVEL_READONLY, "db %s refuses", "d"),
                     RAVEL_READONLY);
    assert_string_equal(rv_errmsg_get(), "db d refuses: write wal-1: EIO");
    assert_int_equal(rv_stop_error(&s, RAVEL_IOERR, NULL), RAVEL_IOERR);
    assert_string_equal(rv_errmsg_get(), "write wal-1: EIO");
    rv_stop_destroy(&s);
}

/* An allocation failure first, an I/O failure after: the code and the
** reason stay the first's, but the I/O failure is not lost. */
static void test_io_failure_after_another(void **state)
{
    (void)state;
    struct rv_stop s;
    rv_stop_init(&s);
    assert_int_equal(rv_stop_set(&s, RAVEL_NOMEM, "memtable: out of memory"),
                     1);
    assert_int_equal(rv_stop_io_failed(&s), 0);
    assert_int_equal(rv_stop_set(&s, RAVEL_IOERR, "fdatasync wal-2: EIO"), 0);
    assert_int_equal(rv_stop_code(&s), RAVEL_NOMEM);
    assert_int_equal(rv_stop_io_failed(&s), 1);
    char why[RV_STOP_REASON_MAX];
    rv_stop_reason(&s, why, sizeof why);
    assert_string_equal(why, "memtable: out of memory; then: fdatasync "
                        "wal-2: EIO");
    rv_stop_destroy(&s);
}

#define THREADS 8

struct race {
    struct rv_stop s;
    pthread_barrier_t go;
    int first[THREADS];
};

struct race_arg {
    struct race *r;
    int t;
};

static void *race_set(void *p)
{
    struct race_arg *a = p;
    char reason[32];
    snprintf(reason, sizeof reason, "failure %d", a->t);
    pthread_barrier_wait(&a->r->go);
    a->r->first[a->t] = rv_stop_set(&a->r->s, a->t % 2 ? RAVEL_IOERR
                                                        : RAVEL_NOMEM,
                                    reason);
    return NULL;
}

static void test_concurrent_recorders(void **state)
{
    (void)state;
    for (int round = 0; round < 50; round++) {
        struct race r;
        memset(&r, 0, sizeof r);
        rv_stop_init(&r.s);
        pthread_barrier_init(&r.go, NULL, THREADS);
        pthread_t th[THREADS];
        struct race_arg args[THREADS];
        for (int t = 0; t < THREADS; t++) {
            args[t].r = &r;
            args[t].t = t;
            assert_int_equal(pthread_create(&th[t], NULL, race_set,
                                            &args[t]), 0);
        }
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        int firsts = 0, winner = -1;
        for (int t = 0; t < THREADS; t++)
            if (r.first[t]) {
                firsts++;
                winner = t;
            }
        assert_int_equal(firsts, 1);
        assert_int_equal(rv_stop_code(&r.s),
                         winner % 2 ? RAVEL_IOERR : RAVEL_NOMEM);
        assert_int_equal(rv_stop_io_failed(&r.s), 1); /* odd t: I/O */
        char why[RV_STOP_REASON_MAX], want[32];
        rv_stop_reason(&r.s, why, sizeof why);
        snprintf(want, sizeof want, "failure %d", winner);
        assert_memory_equal(why, want, strlen(want));
        pthread_barrier_destroy(&r.go);
        rv_stop_destroy(&r.s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_reason_wins),
        cmocka_unit_test(test_io_failure_after_another),
        cmocka_unit_test(test_concurrent_recorders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
