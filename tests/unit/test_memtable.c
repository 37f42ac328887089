/*
** test_memtable.c -- the memtable: point lookups at a snapshot, deletions,
** the iterator over all versions, reference counting, concurrent adds.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "base/dbformat.h"
#include "memtable/memtable.h"

static _Atomic int thread_failures;
static char thread_failure_msg[256];

static void thread_fail(const char *fmt, ...)
{
    if (atomic_fetch_add(&thread_failures, 1) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(thread_failure_msg, sizeof thread_failure_msg, fmt, ap);
        va_end(ap);
    }
}

static void assert_no_thread_failures(void)
{
    if (atomic_load(&thread_failures))
        fail_msg("%d thread failure(s), first: %s",
                 atomic_load(&thread_failures), thread_failure_msg);
}

static void put(rv_memtable *mt, uint64_t seq, const char *k, const char *v)
{
    assert_int_equal(rv_memtable_add(mt, seq, RV_TYPE_PUT, k, strlen(k), v,
                                     strlen(v)), RAVEL_OK);
}

static void del(rv_memtable *mt, uint64_t seq, const char *k)
{
    assert_int_equal(rv_memtable_add(mt, seq, RV_TYPE_DELETE, k, strlen(k),
                                     NULL, 0), RAVEL_OK);
}

/* EXPECT: a value, "<deleted>", or NULL for no entry at all. */
static void expect_get(rv_memtable *mt, const char *k, uint64_t snap,
                       const char *expect)
{
    int type = -1;
    const char *val = NULL;
    size_t vlen = 0;
    struct rv_read_view view = rv_read_view_at(snap);
    int found = rv_memtable_get(mt, k, strlen(k), &view, &type, &val, &vlen,
                                NULL);
    if (!expect) {
        if (found)
            fail_msg("get(%s @%llu) found an entry", k,
                     (unsigned long long)snap);
        return;
    }
    if (!found)
        fail_msg("get(%s @%llu) found nothing, expected %s", k,
                 (unsigned long long)snap, expect);
    if (strcmp(expect, "<deleted>") == 0) {
        assert_int_equal(type, RV_TYPE_DELETE);
        return;
    }
    assert_int_equal(type, RV_TYPE_PUT);
    assert_int_equal(vlen, strlen(expect));
    assert_memory_equal(val, expect, vlen);
}

/* Entries in MT (every version), walked from the first. */
static uint64_t count_entries(rv_memtable *mt)
{
    struct rv_iter *it = rv_memtable_iter_new(mt);
    assert_non_null(it);
    uint64_t n = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        n++;
    it->ops->destroy(it);
    return n;
}

static void test_get_honours_snapshot_and_deletion(void **state)
{
    (void)state;
    rv_memtable *mt = rv_memtable_new(0);
    assert_non_null(mt);
    put(mt, 5, "k", "v5");
    put(mt, 1, "k", "v1");
    del(mt, 9, "k");
    put(mt, 12, "k", "v12");
    put(mt, 3, "ka", "other");
    put(mt, 4, "j", "before");

    expect_get(mt, "k", 0, NULL);
    expect_get(mt, "k", 1, "v1");
    expect_get(mt, "k", 4, "v1");
    expect_get(mt, "k", 5, "v5");
    expect_get(mt, "k", 8, "v5");
    expect_get(mt, "k", 9, "<deleted>");
    expect_get(mt, "k", 11, "<deleted>");
    expect_get(mt, "k", 12, "v12");
    expect_get(mt, "k", RV_MAX_SEQUENCE, "v12");
    /* neighbours and prefixes are other keys */
    expect_get(mt, "ka", 2, NULL);
    expect_get(mt, "ka", 3, "other");
    expect_get(mt, "", 100, NULL);
    expect_get(mt, "kb", 100, NULL);
    expect_get(mt, "j", 3, NULL);
    expect_get(mt, "j", 4, "before");
    expect_get(mt, "zzz", 100, NULL);
    assert_int_equal(count_entries(mt), 6);
    rv_memtable_unref(mt);
}

static void test_empty_key_and_value(void **state)
{
    (void)state;
    rv_memtable *mt = rv_memtable_new(0);
    assert_non_null(mt);
    put(mt, 1, "", "");
    put(mt, 2, "\x01", "x");
    expect_get(mt, "", 1, "");
    expect_get(mt, "\x01", 2, "x");
    int type;
    const char *val = NULL;
    size_t vlen = 99;
    struct rv_read_view at1 = rv_read_view_at(1);
    assert_int_equal(
        rv_memtable_get(mt, "", 0, &at1, &type, &val, &vlen, NULL), 1);
    assert_non_null(val);
    assert_int_equal(vlen, 0);
    rv_memtable_unref(mt);
}

static void test_large_value(void **state)
{
    (void)state;
    rv_memtable *mt = rv_memtable_new(0);
    size_t n = 300000;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)(i * 31);
    size_t before = rv_memtable_memory_usage(mt);
    assert_int_equal(rv_memtable_add(mt, 1, RV_TYPE_PUT, "big", 3, big, n),
                     RAVEL_OK);
    assert_true(rv_memtable_memory_usage(mt) >= before + n);
    int type;
    const char *val;
    size_t vlen;
    struct rv_read_view at1 = rv_read_view_at(1);
    assert_int_equal(
        rv_memtable_get(mt, "big", 3, &at1, &type, &val, &vlen, NULL), 1);
    assert_int_equal(vlen, n);
    assert_memory_equal(val, big, n);
    free(big);
    rv_memtable_unref(mt);
}

/* A large write buffer puts the memtable in 2 MiB huge-page arena blocks
** past its first 4 MiB: entries spread over small and huge blocks are all
** found by get and by the iterator, in order; an empty memtable still
** counts little memory. */
static void test_large_buffer_huge_blocks(void **state)
{
    (void)state;
    rv_memtable *mt = rv_memtable_new(64u << 20);
    assert_non_null(mt);
    assert_true(rv_memtable_memory_usage(mt) < (1u << 20));
    enum { N = 60000 }; /* about 8 MiB */
    char key[16], val[100];
    for (int i = 0; i < N; i++) {
        int k = (int)(((uint64_t)i * 7919) % N); /* a permutation */
        snprintf(key, sizeof key, "k%08d", k);
        memset(val, 'a' + k % 26, sizeof val);
        assert_int_equal(rv_memtable_add(mt, (uint64_t)i + 1, RV_TYPE_PUT,
                                         key, 9, val, sizeof val), RAVEL_OK);
    }
    assert_true(rv_memtable_memory_usage(mt) >= (size_t)N * 100);
    struct rv_read_view all = rv_read_view_at(N + 1);
    for (int k = 0; k < N; k++) {
        int type;
        const char *v;
        size_t vlen;
        snprintf(key, sizeof key, "k%08d", k);
        assert_int_equal(
            rv_memtable_get(mt, key, 9, &all, &type, &v, &vlen, NULL), 1);
        assert_int_equal(type, RV_TYPE_PUT);
        assert_int_equal(vlen, 100);
        assert_true(v[0] == 'a' + k % 26 && v[99] == 'a' + k % 26);
    }
    struct rv_iter *it = rv_memtable_iter_new(mt);
    assert_non_null(it);
    int k = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it)) {
        size_t klen, vlen;
        const char *ik = it->ops->key(it, &klen);
        snprintf(key, sizeof key, "k%08d", k);
        assert_int_equal(klen, 9 + RV_TAG_SIZE);
        assert_memory_equal(ik, key, 9);
        assert_int_equal(it->ops->value(it, &vlen)[0], 'a' + k % 26);
        k++;
    }
    assert_int_equal(k, N);
    it->ops->destroy(it);
    rv_memtable_unref(mt);
}

/* The iterator shows every version: user keys ascending, newest first. */
static void test_iterator_all_versions(void **state)
{
    (void)state;
    rv_memtable *mt = rv_memtable_new(0);
    put(mt, 2, "b", "b2");
    put(mt, 1, "a", "a1");
    del(mt, 3, "a");
    put(mt, 4, "a", "a4");
    struct rv_iter *it = rv_memtable_iter_new(mt);
    assert_non_null(it);
    /* the iterator keeps the memtable alive on its own (ASan checks) */
    rv_memtable_unref(mt);

    const char *ukeys[] = { "a", "a", "a", "b" };
    const uint64_t seqs[] = { 4, 3, 1, 2 };
    const char *vals[] = { "a4", "", "a1", "b2" };
    int i = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it)) {
        size_t klen, vlen;
        const char *k = it->ops->key(it, &klen);
        const char *v = it->ops->value(it, &vlen);
        assert_true(i < 4);
        assert_int_equal(klen, 1 + RV_TAG_SIZE);
        assert_memory_equal(k, ukeys[i], 1);
        assert_int_equal(rv_tag_sequence(rv_get_fixed64(k + 1)), seqs[i]);
        assert_int_equal(vlen, strlen(vals[i]));
        assert_memory_equal(v, vals[i], vlen);
        i++;
    }
    assert_int_equal(i, 4);
    for (it->ops->seek_to_last(it); it->ops->valid(it); it->ops->prev(it)) {
        size_t klen;
        const char *k = it->ops->key(it, &klen);
        i--;
        assert_memory_equal(k, ukeys[i], 1);
        assert_int_equal(rv_tag_sequence(rv_get_fixed64(k + 1)), seqs[i]);
    }
    assert_int_equal(i, 0);

    /* seek to (a, 3): the entry (a, 3) itself; seek_for_prev to (a, 2): a1
    ** is after it in order, so the last <= is (a, 3) */
    char target[1 + RV_TAG_SIZE] = "a";
    rv_put_fixed64(target + 1, rv_pack_tag(3, RV_TYPE_PUT));
    it->ops->seek(it, target, sizeof target);
    size_t klen;
    assert_true(it->ops->valid(it));
    assert_int_equal(rv_tag_sequence(rv_get_fixed64(it->ops->key(it, &klen) + 1)),
                     3);
    rv_put_fixed64(target + 1, rv_pack_tag(2, RV_TYPE_PUT));
    it->ops->seek_for_prev(it, target, sizeof target);
    assert_true(it->ops->valid(it));
    assert_int_equal(rv_tag_sequence(rv_get_fixed64(it->ops->key(it, &klen) + 1)),
                     3);
    assert_int_equal(it->ops->status(it), RAVEL_OK);
    it->ops->destroy(it);
}

/* ----------------------------------------------------------- concurrent */

#define WRITERS 4
#define PER_WRITER 10000

struct mt_race {
    rv_memtable *mt;
    _Atomic uint64_t published[WRITERS]; /* release by the writer */
    _Atomic int writers_left;
};

struct mt_arg {
    struct mt_race *race;
    int id;
};

static void race_key(char *buf, int t, uint64_t i)
{
    snprintf(buf, 32, "key-%06llu-%d", (unsigned long long)i, t);
}

static void *mt_writer(void *p)
{
    struct mt_arg *arg = p;
    char k[32], v[32];
    for (uint64_t i = 0; i < PER_WRITER; i++) {
        race_key(k, arg->id, i);
        snprintf(v, sizeof v, "value-%d-%llu", arg->id, (unsigned long long)i);
        uint64_t seq = i * WRITERS + (uint64_t)arg->id + 1;
        if (rv_memtable_add(arg->race->mt, seq, RV_TYPE_PUT, k, strlen(k), v,
                            strlen(v)) != RAVEL_OK)
            thread_fail("add failed");
        /* release: a reader that sees the count sees the entry */
        atomic_store_explicit(&arg->race->published[arg->id], i + 1,
                              memory_order_release);
    }
    atomic_fetch_sub(&arg->race->writers_left, 1);
    return NULL;
}

static void *mt_reader(void *p)
{
    struct mt_arg *arg = p;
    struct mt_race *r = arg->race;
    uint64_t x = 0;
    char k[32], v[32];
    while (atomic_load(&r->writers_left) > 0) {
        for (int t = 0; t < WRITERS; t++) {
            /* acquire: pairs with the writer's release */
            uint64_t n = atomic_load_explicit(&r->published[t],
                                              memory_order_acquire);
            if (!n)
                continue;
            uint64_t i = (x++ * 7919) % n;
            race_key(k, t, i);
            snprintf(v, sizeof v, "value-%d-%llu", t, (unsigned long long)i);
            int type;
            const char *val;
            size_t vlen;
            struct rv_read_view all = rv_read_view_at(RV_MAX_SEQUENCE);
            if (rv_memtable_get(r->mt, k, strlen(k), &all, &type,
                                &val, &vlen, NULL) != 1 ||
                type != RV_TYPE_PUT ||
                vlen != strlen(v) || memcmp(val, v, vlen) != 0)
                thread_fail("published key %s not found or wrong", k);
        }
    }
    return NULL;
}

static void test_concurrent_add_and_get(void **state)
{
    (void)state;
    static struct mt_race r;
    r.mt = rv_memtable_new(0);
    assert_non_null(r.mt);
    atomic_init(&r.writers_left, WRITERS);
    for (int t = 0; t < WRITERS; t++)
        atomic_init(&r.published[t], 0);
    pthread_t th[WRITERS + 1];
    struct mt_arg args[WRITERS + 1];
    for (int i = 0; i <= WRITERS; i++) {
        args[i].race = &r;
        args[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL,
                                        i < WRITERS ? mt_writer : mt_reader,
                                        &args[i]), 0);
    }
    for (int i = 0; i <= WRITERS; i++)
        pthread_join(th[i], NULL);
    assert_no_thread_failures();

    assert_int_equal(count_entries(r.mt),
                     (uint64_t)WRITERS * PER_WRITER);
    char k[32], v[32];
    for (int t = 0; t < WRITERS; t++)
        for (uint64_t i = 0; i < PER_WRITER; i++) {
            race_key(k, t, i);
            snprintf(v, sizeof v, "value-%d-%llu", t, (unsigned long long)i);
            expect_get(r.mt, k, RV_MAX_SEQUENCE, v);
            /* its sequence is i*WRITERS+t+1: one below, it is absent */
            expect_get(r.mt, k, i * WRITERS + (uint64_t)t, NULL);
        }
    /* the iterator sees them in strictly increasing internal-key order */
    struct rv_iter *it = rv_memtable_iter_new(r.mt);
    size_t n = 0, plen = 0;
    char prev[64];
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it)) {
        size_t klen;
        const char *key = it->ops->key(it, &klen);
        assert_true(klen < sizeof prev);
        if (n)
            assert_true(rv_ikey_compare(prev, plen, key, klen) < 0);
        memcpy(prev, key, klen);
        plen = klen;
        n++;
    }
    assert_int_equal(n, (size_t)WRITERS * PER_WRITER);
    it->ops->destroy(it);
    rv_memtable_unref(r.mt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_honours_snapshot_and_deletion),
        cmocka_unit_test(test_empty_key_and_value),
        cmocka_unit_test(test_large_value),
        cmocka_unit_test(test_large_buffer_huge_blocks),
        cmocka_unit_test(test_iterator_all_versions),
        cmocka_unit_test(test_concurrent_add_and_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
