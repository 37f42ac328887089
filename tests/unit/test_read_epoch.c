/*
** test_read_epoch.c -- a version replaced while a reader is inside the
** read epoch stays alive until that reader exits, and is released soon
** after (lib/db/read_epoch.h).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "db/read_epoch.h"
#include "db/version.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

static struct rv_version *make_version(void)
{
    rv_memtable *mem = rv_memtable_new(4096);
    struct rv_files *fs = rv_files_new_empty();
    assert_non_null(mem);
    assert_non_null(fs);
    struct rv_version *v = rv_version_new(mem, 1, 0, fs);
    assert_non_null(v);
    rv_memtable_unref(mem);
    rv_files_unref(fs);
    return v;
}

static int refs_of(struct rv_version *v)
{
    return atomic_load(&v->refs);
}

/* Retires V as the lock holder would, releasing what became free. */
static void retire(struct rv_read_epoch *e, struct rv_version *v)
{
    rv_read_epoch_release(rv_read_epoch_retire_locked(e, v));
}

static void advance(struct rv_read_epoch *e)
{
    rv_read_epoch_release(rv_read_epoch_advance_locked(e));
}

static void test_reader_keeps_version(void **state)
{
    (void)state;
    struct rv_read_epoch e;
    rv_read_epoch_init(&e);
    struct rv_version *v1 = make_version();
    atomic_fetch_add(&v1->refs, 1); /* ours, to watch it */

    unsigned token = rv_read_epoch_enter(&e);
    retire(&e, v1); /* gives up the "current" reference */
    for (int i = 0; i < 10; i++)
        advance(&e);
    /* the reader may still hold v1: the retired reference is kept */
    assert_int_equal(refs_of(v1), 2);
    assert_true(rv_read_epoch_pending_locked(&e));
    rv_read_epoch_exit(&e, token);
    advance(&e);
    advance(&e);
    assert_int_equal(refs_of(v1), 1);
    assert_false(rv_read_epoch_pending_locked(&e));
    rv_version_unref(v1);
}

/* A reader that entered in an epoch that has since advanced once still
** keeps what it could load. */
static void test_reader_entered_before_advance(void **state)
{
    (void)state;
    struct rv_read_epoch e;
    rv_read_epoch_init(&e);
    struct rv_version *v1 = make_version(), *v2 = make_version();
    atomic_fetch_add(&v2->refs, 1);
    retire(&e, v1); /* epoch advances: no reader */
    unsigned token = rv_read_epoch_enter(&e);
    retire(&e, v2);
    for (int i = 0; i < 5; i++)
        advance(&e);
    assert_int_equal(refs_of(v2), 2);
    rv_read_epoch_exit(&e, token);
    advance(&e);
    advance(&e);
    assert_int_equal(refs_of(v2), 1);
    rv_version_unref(v2);
    rv_read_epoch_drain(&e);
}

static void test_drain(void **state)
{
    (void)state;
    struct rv_read_epoch e;
    rv_read_epoch_init(&e);
    struct rv_version *v = make_version();
    atomic_fetch_add(&v->refs, 1);
    unsigned token = rv_read_epoch_enter(&e);
    retire(&e, v);
    rv_read_epoch_exit(&e, token);
    rv_read_epoch_drain(&e);
    assert_int_equal(refs_of(v), 1);
    assert_false(rv_read_epoch_pending_locked(&e));
    rv_version_unref(v);
}

/* Readers load and use the current version while a writer replaces it
** thousands of times: under ASan a version freed too early is a
** use-after-free; each reader checks the version it holds is whole. */
struct race {
    struct rv_read_epoch e;
    pthread_mutex_t mu;
    struct rv_version *_Atomic current;
    _Atomic int stop;
    _Atomic long reads, bad;
};

static void *race_reader(void *p)
{
    struct race *r = p;
    while (!atomic_load(&r->stop)) {
        unsigned token = rv_read_epoch_enter(&r->e);
        struct rv_version *v = atomic_load(&r->current);
        /* use it: a freed version's fields would be poisoned */
        if (v->mem_wal != 1 || v->n_imm != 0 || refs_of(v) < 1 ||
            rv_memtable_memory_usage(v->mem) == 0)
            atomic_fetch_add(&r->bad, 1);
        rv_read_epoch_exit(&r->e, token);
        atomic_fetch_add(&r->reads, 1);
    }
    return NULL;
}

static void test_race(void **state)
{
    (void)state;
    struct race r;
    rv_read_epoch_init(&r.e);
    pthread_mutex_init(&r.mu, NULL);
    atomic_init(&r.current, make_version());
    atomic_init(&r.stop, 0);
    atomic_init(&r.reads, 0);
    atomic_init(&r.bad, 0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r), 0);
    /* at least 5000 swaps, and on until the readers have read a lot (a
    ** loaded machine may not run them at first) */
    for (int i = 0; i < 5000 || atomic_load(&r.reads) < 20000; i++) {
        if (i >= 5000)
            sched_yield();
        struct rv_version *v = make_version();
        pthread_mutex_lock(&r.mu);
        struct rv_version *old = atomic_load(&r.current);
        atomic_store(&r.current, v);
        retire(&r.e, old);
        pthread_mutex_unlock(&r.mu);
    }
    atomic_store(&r.stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&r.bad), 0);
    assert_true(atomic_load(&r.reads) > 0);
    rv_read_epoch_drain(&r.e);
    rv_version_unref(atomic_load(&r.current));
    pthread_mutex_destroy(&r.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_keeps_version),
        cmocka_unit_test(test_reader_entered_before_advance),
        cmocka_unit_test(test_drain),
        cmocka_unit_test(test_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
