/*
** test_cache.c -- the sharded LRU cache (util/cache.h): lookups find what
** was inserted; unpinned entries are evicted least recently used first; a
** pinned entry is never deleted, even evicted, erased or replaced, and is
** deleted once released; usage and pinned usage add up; capacity 0 and an
** entry larger than a shard keep nothing; many threads hammering one cache
** see only their own values and every deleter runs exactly once.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cache.h"
#include "base/options.h"

/* ------------------------------------------------- deleter bookkeeping */

#define LOG_MAX 4096

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_deleted[LOG_MAX]; /* keys, in deletion order */
static int g_ndeleted;

static void log_reset(void)
{
    pthread_mutex_lock(&g_log_mu);
    g_ndeleted = 0;
    pthread_mutex_unlock(&g_log_mu);
}

static int log_count(void)
{
    pthread_mutex_lock(&g_log_mu);
    int n = g_ndeleted;
    pthread_mutex_unlock(&g_log_mu);
    return n;
}

/* The values of these tests are the key itself, as an int in a pointer. */
static void record_deleter(const void *key, size_t klen, void *value)
{
    int k;
    assert_int_equal(klen, sizeof k);
    memcpy(&k, key, sizeof k);
    assert_int_equal((intptr_t)value, k);
    pthread_mutex_lock(&g_log_mu);
    if (g_ndeleted < LOG_MAX)
        g_deleted[g_ndeleted] = k;
    g_ndeleted++;
    pthread_mutex_unlock(&g_log_mu);
}

static rv_cache_handle *put(rv_cache *c, int k, size_t charge)
{
    rv_cache_handle *h = rv_cache_insert(c, &k, sizeof k, (void *)(intptr_t)k,
                                         charge, record_deleter);
    assert_non_null(h);
    return h;
}

static void put_release(rv_cache *c, int k, size_t charge)
{
    rv_cache_release(c, put(c, k, charge));
}

static rv_cache_handle *get(rv_cache *c, int k)
{
    return rv_cache_lookup(c, &k, sizeof k);
}

/* 1 if K is in the cache (the lookup's handle is released at once). */
static int has(rv_cache *c, int k)
{
    rv_cache_handle *h = get(c, k);
    if (!h)
        return 0;
    assert_int_equal((intptr_t)rv_cache_value(h), k);
    rv_cache_release(c, h);
    return 1;
}

/* ------------------------------------------------------------- the tests */

static void test_insert_lookup(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(1000, &c), RAVEL_OK);
    assert_int_equal(rv_cache_capacity(c), 1000);
    assert_null(get(c, 1));
    put_release(c, 1, 10);
    put_release(c, 2, 20);
    assert_true(has(c, 1));
    assert_true(has(c, 2));
    assert_false(has(c, 3));
    assert_int_equal(rv_cache_usage(c), 30);
    assert_int_equal(rv_cache_pinned_usage(c), 0);
    assert_int_equal(log_count(), 0);
    /* Keys differing in length only are distinct; the empty key is a key. */
    rv_cache_handle *h = rv_cache_insert(c, "ab", 2, (void *)7, 1, NULL);
    rv_cache_release(c, h);
    h = rv_cache_insert(c, "", 0, (void *)8, 1, NULL);
    rv_cache_release(c, h);
    h = rv_cache_lookup(c, "ab", 2);
    assert_ptr_equal(rv_cache_value(h), (void *)7);
    rv_cache_release(c, h);
    h = rv_cache_lookup(c, "", 0);
    assert_ptr_equal(rv_cache_value(h), (void *)8);
    rv_cache_release(c, h);
    assert_null(rv_cache_lookup(c, "a", 1));
    rv_cache_unref(c);
    assert_int_equal(log_count(), 2); /* the unref deleted what was left */
}

/* Capacity 10, charge 1 each: the oldest unused go first, and a lookup
** makes an entry recent again. */
static void test_eviction_order(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(10, &c), RAVEL_OK);
    for (int k = 0; k < 10; k++)
        put_release(c, k, 1);
    assert_int_equal(log_count(), 0);
    assert_true(has(c, 0)); /* 0 becomes the most recent */
    assert_true(has(c, 3));
    put_release(c, 10, 1); /* evicts 1 */
    put_release(c, 11, 1); /* evicts 2 */
    put_release(c, 12, 1); /* evicts 4: 0 and 3 were used */
    assert_int_equal(log_count(), 3);
    assert_int_equal(g_deleted[0], 1);
    assert_int_equal(g_deleted[1], 2);
    assert_int_equal(g_deleted[2], 4);
    assert_false(has(c, 1));
    assert_true(has(c, 0));
    assert_true(has(c, 3));
    assert_int_equal(rv_cache_usage(c), 10);
    /* A heavier entry evicts as many as its charge needs. */
    put_release(c, 20, 4);
    assert_int_equal(log_count(), 7);
    assert_int_equal(rv_cache_usage(c), 10);
    assert_true(has(c, 20));
    rv_cache_unref(c);
    assert_int_equal(log_count(), 7 + 7);
}

/* Pinned entries are never evicted: usage may exceed the capacity while
** they are pinned, and falls back to it as they are released. */
static void test_pinned_not_evicted(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(10, &c), RAVEL_OK);
    rv_cache_handle *h[15];
    for (int k = 0; k < 15; k++)
        h[k] = put(c, k, 1);
    assert_int_equal(log_count(), 0);
    assert_int_equal(rv_cache_usage(c), 15);
    assert_int_equal(rv_cache_pinned_usage(c), 15);
    for (int k = 0; k < 15; k++)
        assert_int_equal((intptr_t)rv_cache_value(h[k]), k);
    /* A second handle on an entry: releasing one keeps it pinned. */
    rv_cache_handle *again = get(c, 0);
    assert_ptr_equal(again, h[0]);
    rv_cache_release(c, h[0]);
    assert_int_equal(rv_cache_pinned_usage(c), 15);
    for (int k = 1; k < 15; k++)
        rv_cache_release(c, h[k]);
    /* 1..14 unpinned, oldest first: 1..5 go, to come back to 10. */
    assert_int_equal(log_count(), 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(g_deleted[i], i + 1);
    assert_int_equal(rv_cache_usage(c), 10);
    assert_int_equal(rv_cache_pinned_usage(c), 1);
    assert_true(has(c, 0));
    rv_cache_release(c, again);
    assert_int_equal(rv_cache_pinned_usage(c), 0);
    rv_cache_unref(c);
    assert_int_equal(log_count(), 15);
}

/* Erase while pinned: lookups stop finding it at once, the value stays
** valid for the holder, and the deleter runs at the release. */
static void test_erase_while_pinned(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(100, &c), RAVEL_OK);
    rv_cache_handle *h = put(c, 5, 7);
    put_release(c, 6, 3);
    rv_cache_erase(c, &(int){5}, sizeof(int));
    assert_false(has(c, 5));
    assert_int_equal(log_count(), 0);
    assert_int_equal((intptr_t)rv_cache_value(h), 5);
    assert_int_equal(rv_cache_usage(c), 10); /* still alive, still counted */
    assert_int_equal(rv_cache_pinned_usage(c), 7);
    rv_cache_release(c, h);
    assert_int_equal(log_count(), 1);
    assert_int_equal(g_deleted[0], 5);
    assert_int_equal(rv_cache_usage(c), 3);
    /* Erasing an unpinned entry deletes it at once; an absent key is a
    ** no-op. */
    rv_cache_erase(c, &(int){6}, sizeof(int));
    assert_int_equal(log_count(), 2);
    rv_cache_erase(c, &(int){6}, sizeof(int));
    assert_int_equal(rv_cache_usage(c), 0);
    rv_cache_unref(c);
    assert_int_equal(log_count(), 2);
}

/* Inserting a key again replaces the entry: lookups see the new value, the
** old one lives while pinned. */
static void test_replace(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(100, &c), RAVEL_OK);
    int k = 9;
    rv_cache_handle *old = put(c, k, 4);
    rv_cache_handle *h = rv_cache_insert(c, &k, sizeof k, (void *)(intptr_t)k,
                                         6, record_deleter);
    assert_ptr_not_equal(h, old);
    assert_int_equal(rv_cache_usage(c), 10);
    rv_cache_handle *l = get(c, k);
    assert_ptr_equal(l, h);
    rv_cache_release(c, l);
    rv_cache_release(c, h);
    assert_int_equal(log_count(), 0);
    rv_cache_release(c, old);
    assert_int_equal(log_count(), 1);
    assert_int_equal(rv_cache_usage(c), 6);
    /* replacing an unpinned entry deletes it at once */
    put_release(c, k, 2);
    assert_int_equal(log_count(), 2);
    assert_int_equal(rv_cache_usage(c), 2);
    rv_cache_unref(c);
    assert_int_equal(log_count(), 3);
}

/* Capacity 0: inserts return a pinned handle, nothing is found, the
** release deletes. */
static void test_capacity_zero(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(0, &c), RAVEL_OK);
    rv_cache_handle *h = put(c, 1, 100);
    assert_int_equal((intptr_t)rv_cache_value(h), 1);
    assert_false(has(c, 1));
    assert_int_equal(rv_cache_usage(c), 100);
    assert_int_equal(rv_cache_pinned_usage(c), 100);
    rv_cache_release(c, h);
    assert_int_equal(log_count(), 1);
    assert_int_equal(rv_cache_usage(c), 0);
    put_release(c, 2, 0);
    assert_int_equal(log_count(), 2);
    assert_false(has(c, 2));
    rv_cache_unref(c);
}

/* An entry larger than its shard: returned pinned, never found, deleted on
** release -- and it does not push out what fits. */
static void test_entry_larger_than_shard(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(100, &c), RAVEL_OK);
    put_release(c, 1, 50);
    put_release(c, 3, 40);
    rv_cache_handle *h = put(c, 2, 101);
    assert_false(has(c, 2));
    assert_true(has(c, 1));
    assert_true(has(c, 3));
    assert_int_equal(rv_cache_usage(c), 191);
    rv_cache_release(c, h);
    assert_int_equal(log_count(), 1);
    assert_int_equal(g_deleted[0], 2);
    assert_int_equal(rv_cache_usage(c), 90);
    /* It supersedes an entry of the same key all the same. */
    h = put(c, 1, 500);
    assert_int_equal(log_count(), 2); /* the old 1, unpinned */
    assert_false(has(c, 1));
    rv_cache_release(c, h);
    assert_int_equal(log_count(), 3);
    rv_cache_unref(c);
}

/* Large capacities are sharded: the whole stays within capacity, with
** every shard's share used. */
static void test_sharded_capacity(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    size_t cap = 16u << 20;
    assert_int_equal(rv_cache_new(cap, &c), RAVEL_OK);
    char key[16];
    for (int i = 0; i < 20000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        rv_cache_handle *h = rv_cache_insert(c, key, strlen(key), NULL, 4096,
                                             NULL);
        assert_non_null(h);
        rv_cache_release(c, h);
        assert_true(rv_cache_usage(c) <= cap);
    }
    /* 20000 blocks of 4K offered to 16M: nearly all of it is used (each
    ** shard fills to within one block of its share). */
    assert_true(rv_cache_usage(c) > cap - 16 * 4096);
    int found = 0;
    for (int i = 0; i < 20000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        rv_cache_handle *h = rv_cache_lookup(c, key, strlen(key));
        if (h) {
            found++;
            rv_cache_release(c, h);
        }
    }
    assert_int_equal((size_t)found * 4096, rv_cache_usage(c));
    rv_cache_unref(c);
}

static void test_references(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(100, &c), RAVEL_OK);
    rv_cache_ref(c);
    put_release(c, 1, 1);
    rv_cache_unref(c);
    assert_int_equal(log_count(), 0); /* one reference left */
    assert_true(has(c, 1));
    rv_cache_unref(c);
    assert_int_equal(log_count(), 1);
    rv_cache_unref(NULL);
}

/* The public handle is the cache: options hold a reference of their own
** (ravel_options_set_cache, rv_options_copy), and the cache and its
** entries are freed with the last reference. */
static void test_public_handle_references(void **state)
{
    (void)state;
    log_reset();
    ravel_cache *pc;
    assert_int_equal(ravel_cache_new(1000, &pc), RAVEL_OK);
    rv_cache *c = (rv_cache *)pc;
    put_release(c, 1, 10);
    assert_int_equal(ravel_cache_usage(pc), 10);
    ravel_options *o;
    assert_int_equal(ravel_options_new(&o), RAVEL_OK);
    assert_int_equal(ravel_options_set_cache(o, pc), RAVEL_OK);
    assert_int_equal(ravel_options_set_cache(o, pc), RAVEL_OK); /* again */
    struct ravel_options copy;
    rv_options_copy(&copy, o);
    ravel_cache_free(pc);
    assert_true(has(c, 1));
    ravel_options_free(o);
    assert_true(has(c, 1));
    assert_int_equal(log_count(), 0);
    rv_options_release(&copy);
    assert_int_equal(log_count(), 1); /* the last reference freed it */

    /* Clearing drops the options' reference. */
    assert_int_equal(ravel_cache_new(1000, &pc), RAVEL_OK);
    c = (rv_cache *)pc;
    put_release(c, 2, 10);
    assert_int_equal(ravel_options_new(&o), RAVEL_OK);
    assert_int_equal(ravel_options_set_cache(o, pc), RAVEL_OK);
    assert_int_equal(ravel_options_set_cache(o, NULL), RAVEL_OK);
    ravel_cache_free(pc);
    assert_int_equal(log_count(), 2);
    ravel_options_free(o);
}

/* ------------------------------------------------------------- threads */

#define HAMMER_THREADS 8
#define HAMMER_OPS 200000
#define HAMMER_KEYS 5000

static atomic_long g_values_alive, g_values_made;
static atomic_int g_deleter_failures; /* cmocka's asserts are for the main
                                      ** thread: workers count instead */

struct hammer_value {
    uint64_t key;
    uint64_t check; /* ~key: a freed or foreign value fails the check */
};

static void hammer_deleter(const void *key, size_t klen, void *value)
{
    struct hammer_value *v = value;
    uint64_t k = 0;
    if (klen == sizeof k)
        memcpy(&k, key, sizeof k);
    if (klen != sizeof k || v->key != k || v->check != ~k)
        atomic_fetch_add(&g_deleter_failures, 1);
    v->check = 0;
    free(v);
    atomic_fetch_sub(&g_values_alive, 1);
}

struct hammer_arg {
    rv_cache *c;
    uint64_t seed;
    uint64_t ids[64];
    int failures;
};

static uint64_t hammer_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *hammer_thread(void *p)
{
    struct hammer_arg *a = p;
    rv_cache_handle *held[4] = {0};
    for (int i = 0; i < 64; i++)
        a->ids[i] = rv_cache_new_id(a->c);
    for (int i = 0; i < HAMMER_OPS; i++) {
        uint64_t r = hammer_rand(&a->seed);
        /* A skewed key space: a few hot keys, many cold ones. */
        uint64_t k = (r >> 8) % (r & 1 ? 16 : HAMMER_KEYS);
        int slot = (int)((r >> 40) & 3);
        if (held[slot]) {
            struct hammer_value *v = rv_cache_value(held[slot]);
            if (v->check != ~v->key)
                a->failures++;
            rv_cache_release(a->c, held[slot]);
            held[slot] = NULL;
        }
        switch ((r >> 4) % 8) {
        case 0: {
            struct hammer_value *v = malloc(sizeof *v);
            v->key = k;
            v->check = ~k;
            atomic_fetch_add(&g_values_alive, 1);
            atomic_fetch_add(&g_values_made, 1);
            held[slot] = rv_cache_insert(a->c, &k, sizeof k, v, 100,
                                         hammer_deleter);
            break;
        }
        case 1:
            rv_cache_erase(a->c, &k, sizeof k);
            break;
        default:
            held[slot] = rv_cache_lookup(a->c, &k, sizeof k);
            if (held[slot]) {
                struct hammer_value *v = rv_cache_value(held[slot]);
                if (v->key != k || v->check != ~k)
                    a->failures++;
            }
        }
    }
    for (int s = 0; s < 4; s++)
        if (held[s])
            rv_cache_release(a->c, held[s]);
    return NULL;
}

/* Threads insert, look up, erase and hold entries of a shared key space:
** every lookup returns a live value of its own key, usage returns to
** within capacity once all is released, and every value is deleted
** exactly once by the end. */
static void test_threads_hammer(void **state)
{
    (void)state;
    atomic_store(&g_values_alive, 0);
    atomic_store(&g_values_made, 0);
    atomic_store(&g_deleter_failures, 0);
    rv_cache *c;
    /* 5000 keys of 100 bytes in 256K: evictions all along */
    assert_int_equal(rv_cache_new(256u << 10, &c), RAVEL_OK);
    pthread_t th[HAMMER_THREADS];
    static struct hammer_arg args[HAMMER_THREADS];
    for (int i = 0; i < HAMMER_THREADS; i++) {
        args[i] = (struct hammer_arg){.c = c, .seed = 0x9e3779b97f4a7c15ull *
                                                      (uint64_t)(i + 1)};
        assert_int_equal(pthread_create(&th[i], NULL, hammer_thread,
                                        &args[i]), 0);
    }
    for (int i = 0; i < HAMMER_THREADS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < HAMMER_THREADS; i++)
        assert_int_equal(args[i].failures, 0);
    assert_int_equal(rv_cache_pinned_usage(c), 0);
    assert_true(rv_cache_usage(c) <= rv_cache_capacity(c));
    assert_int_equal((long)(rv_cache_usage(c) / 100),
                     atomic_load(&g_values_alive));
    assert_true(atomic_load(&g_values_made) > HAMMER_THREADS * 1000);
    /* ids are unique across the threads */
    static uint64_t all[HAMMER_THREADS * 64];
    for (int i = 0; i < HAMMER_THREADS; i++)
        memcpy(all + i * 64, args[i].ids, sizeof args[i].ids);
    for (int i = 0; i < HAMMER_THREADS * 64; i++) {
        assert_true(all[i] != 0);
        for (int j = 0; j < i; j++)
            assert_true(all[i] != all[j]);
    }
    rv_cache_unref(c);
    assert_int_equal(atomic_load(&g_values_alive), 0);
    assert_int_equal(atomic_load(&g_deleter_failures), 0);
}

struct hot_arg {
    rv_cache *c;
    int failures;
};

static void *hot_thread(void *p)
{
    struct hot_arg *a = p;
    for (int i = 0; i < HAMMER_OPS; i++) {
        int k = i % 4;
        rv_cache_handle *h = get(a->c, k);
        if (!h || (intptr_t)rv_cache_value(h) != k)
            a->failures++;
        if (h)
            rv_cache_release(a->c, h);
    }
    return NULL;
}

/* Many threads pinning and releasing the same hot entries: none is lost,
** the pin counts balance. */
static void test_threads_hot_entries(void **state)
{
    (void)state;
    log_reset();
    rv_cache *c;
    assert_int_equal(rv_cache_new(1000, &c), RAVEL_OK);
    for (int k = 0; k < 4; k++)
        put_release(c, k, 10);
    pthread_t th[HAMMER_THREADS];
    static struct hot_arg args[HAMMER_THREADS];
    for (int i = 0; i < HAMMER_THREADS; i++) {
        args[i] = (struct hot_arg){.c = c};
        assert_int_equal(pthread_create(&th[i], NULL, hot_thread, &args[i]),
                         0);
    }
    for (int i = 0; i < HAMMER_THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
    }
    assert_int_equal(rv_cache_pinned_usage(c), 0);
    assert_int_equal(rv_cache_usage(c), 40);
    assert_int_equal(log_count(), 0);
    rv_cache_unref(c);
    assert_int_equal(log_count(), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_lookup),
        cmocka_unit_test(test_eviction_order),
        cmocka_unit_test(test_pinned_not_evicted),
        cmocka_unit_test(test_erase_while_pinned),
        cmocka_unit_test(test_replace),
        cmocka_unit_test(test_capacity_zero),
        cmocka_unit_test(test_entry_larger_than_shard),
        cmocka_unit_test(test_sharded_capacity),
        cmocka_unit_test(test_references),
        cmocka_unit_test(test_public_handle_references),
        cmocka_unit_test(test_threads_hammer),
        cmocka_unit_test(test_threads_hot_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
