/*
** test_order_ring.c -- batches finished out of order by many threads are
** popped exactly once each, in push order, and the watermark they raise
** never passes a batch that is not finished (lib/db/order_ring.h).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "db/order_ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

static void test_single_thread(void **state)
{
    (void)state;
    struct rv_order_ring r;
    assert_int_equal(rv_order_ring_init(&r, 4), RAVEL_OK);
    struct rv_order_popped p;
    assert_true(rv_order_ring_empty(&r));
    assert_int_equal(rv_order_ring_pop(&r, &p), 0);
    uint64_t a = rv_order_ring_push(&r, 10, NULL);
    uint64_t b = rv_order_ring_push(&r, 20, NULL);
    uint64_t c = rv_order_ring_push(&r, 30, NULL);
    uint64_t d = rv_order_ring_push(&r, 40, NULL);
    assert_true(rv_order_ring_full(&r));
    /* finished out of order: nothing pops until the oldest is done */
    rv_order_ring_finish(&r, c, RV_ORDER_DONE);
    rv_order_ring_finish(&r, b, RV_ORDER_FAILED);
    assert_int_equal(rv_order_ring_pop(&r, &p), 0);
    rv_order_ring_finish(&r, a, RV_ORDER_DONE);
    assert_int_equal(rv_order_ring_pop(&r, &p), 1);
    assert_int_equal(p.last_seq, 10);
    assert_int_equal(p.failed, 0);
    assert_false(rv_order_ring_full(&r));
    assert_int_equal(rv_order_ring_pop(&r, &p), 1);
    assert_int_equal(p.last_seq, 20);
    assert_int_equal(p.failed, 1);
    assert_int_equal(rv_order_ring_pop(&r, &p), 1);
    assert_int_equal(p.last_seq, 30);
    assert_int_equal(rv_order_ring_pop(&r, &p), 0); /* d pending */
    /* a reused slot starts pending again */
    uint64_t e = rv_order_ring_push(&r, 50, NULL);
    assert_int_equal(e & 3, a & 3);
    rv_order_ring_finish(&r, e, RV_ORDER_DONE);
    assert_int_equal(rv_order_ring_pop(&r, &p), 0);
    rv_order_ring_finish(&r, d, RV_ORDER_DONE);
    assert_int_equal(rv_order_ring_pop(&r, &p), 1);
    assert_int_equal(p.last_seq, 40);
    assert_int_equal(rv_order_ring_pop(&r, &p), 1);
    assert_int_equal(p.last_seq, 50);
    assert_true(rv_order_ring_empty(&r));
    rv_order_ring_destroy(&r);
}

/* Many threads: a producer pushes batches 1..N (last_seq = i); finisher
** threads take positions from a shared queue in a scrambled order, mark
** each done, check the watermark never passed an unfinished batch, and
** pop; every batch must be popped once, in order. */
#define RING_BATCHES 200000
#define RING_FINISHERS 4

struct ring_test {
    struct rv_order_ring ring;
    _Atomic uint64_t watermark;
    _Atomic uint64_t pushed;            /* positions pushed so far */
    _Atomic uint64_t next_claim;        /* next position to finish */
    _Atomic unsigned char *finished;    /* per batch: finished? */
    _Atomic unsigned char *popped;      /* per batch: times popped */
    _Atomic long violations;
    _Atomic uint64_t last_popped_per_thread[RING_FINISHERS];
};

static void *ring_producer(void *arg)
{
    struct ring_test *t = arg;
    for (uint64_t i = 1; i <= RING_BATCHES; i++) {
        while (rv_order_ring_full(&t->ring))
            sched_yield();
        uint64_t pos = rv_order_ring_push(&t->ring, i, (void *)(uintptr_t)i);
        if (pos != i - 1)
            atomic_fetch_add(&t->violations, 1);
        atomic_store(&t->pushed, i);
    }
    return NULL;
}

static void *ring_finisher(void *arg)
{
    struct ring_test *t = arg;
    for (;;) {
        uint64_t pos = atomic_fetch_add(&t->next_claim, 1);
        if (pos >= RING_BATCHES)
            return NULL;
        while (atomic_load(&t->pushed) <= pos)
            sched_yield();
        /* scramble: odd positions wait a moment, so finishes cross */
        if (pos & 1)
            sched_yield();
        atomic_store(&t->finished[pos], 1);
        rv_order_ring_finish(&t->ring, pos, RV_ORDER_DONE);
        struct rv_order_popped p;
        while (rv_order_ring_pop(&t->ring, &p)) {
            if ((uint64_t)(uintptr_t)p.owner != p.last_seq)
                atomic_fetch_add(&t->violations, 1);
            atomic_fetch_add(&t->popped[p.last_seq - 1], 1);
            rv_order_raise(&t->watermark, p.last_seq);
            /* everything at or below the watermark is finished */
            uint64_t w = atomic_load(&t->watermark);
            for (uint64_t k = w > 64 ? w - 64 : 0; k < w; k++)
                if (!atomic_load(&t->finished[k]))
                    atomic_fetch_add(&t->violations, 1);
        }
    }
}

static void test_threads(void **state)
{
    (void)state;
    struct ring_test *t = calloc(1, sizeof *t);
    assert_non_null(t);
    assert_int_equal(rv_order_ring_init(&t->ring, 64), RAVEL_OK);
    t->finished = calloc(RING_BATCHES, 1);
    t->popped = calloc(RING_BATCHES, 1);
    assert_non_null(t->finished);
    assert_non_null(t->popped);
    pthread_t prod, fin[RING_FINISHERS];
    assert_int_equal(pthread_create(&prod, NULL, ring_producer, t), 0);
    for (int i = 0; i < RING_FINISHERS; i++)
        assert_int_equal(pthread_create(&fin[i], NULL, ring_finisher, t), 0);
    pthread_join(prod, NULL);
    for (int i = 0; i < RING_FINISHERS; i++)
        pthread_join(fin[i], NULL);
    assert_int_equal(atomic_load(&t->violations), 0);
    for (uint64_t i = 0; i < RING_BATCHES; i++)
        if (atomic_load(&t->popped[i]) != 1)
            fail_msg("batch %llu popped %d times", (unsigned long long)i + 1,
                     (int)atomic_load(&t->popped[i]));
    assert_int_equal(atomic_load(&t->watermark), RING_BATCHES);
    assert_true(rv_order_ring_empty(&t->ring));
    rv_order_ring_destroy(&t->ring);
    free((void *)t->finished);
    free((void *)t->popped);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_thread),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
