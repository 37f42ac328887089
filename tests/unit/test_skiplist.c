/*
** test_skiplist.c -- the arena and the concurrent skiplist.
**
** Single-threaded: every search agrees with a sorted reference array.
** Concurrent: threads insert disjoint keys while readers walk the list;
** readers never see keys out of order or a published key missing, and at
** the end every key is there exactly once, in order, with its bytes intact.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <cmocka.h>

#include "util/arena.h"
#include "base/dbformat.h"
#include "memtable/skiplist.h"
#include "../testutil.h" /* tu_rand */

/* Failures seen by worker threads (cmocka's asserts must not run there). */
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

/* Key number N: an 8-byte big-endian user key (so byte order is numeric
** order) and a tag; the 8 extra bytes repeat N. */
#define KEY_LEN (8 + RV_TAG_SIZE)

static void make_ukey(char *p, uint64_t n)
{
    for (int i = 0; i < 8; i++)
        p[i] = (char)(n >> (56 - 8 * i));
}

static uint64_t ukey_number(const char *p)
{
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n = (n << 8) | (unsigned char)p[i];
    return n;
}

static void insert_number(rv_skiplist *sl, uint64_t n)
{
    char *k = rv_skiplist_alloc_key(sl, KEY_LEN, 8);
    if (!k) {
        thread_fail("out of memory");
        return;
    }
    make_ukey(k, n);
    rv_put_fixed64(k + 8, rv_pack_tag(n + 1, RV_TYPE_PUT));
    rv_put_fixed64(k + KEY_LEN, n);
    rv_skiplist_insert(sl, k);
}

/* 1 if the iterator is at key number N with its extra bytes intact. */
static int iter_at_number(const struct rv_skiplist_iter *it, uint64_t n)
{
    size_t len;
    if (!rv_skiplist_iter_valid(it))
        return 0;
    const char *k = rv_skiplist_iter_key(it, &len);
    return len == KEY_LEN && ukey_number(k) == n &&
           rv_get_fixed64(k + 8) == rv_pack_tag(n + 1, RV_TYPE_PUT) &&
           rv_get_fixed64(k + KEY_LEN) == n;
}

static void seek_number(struct rv_skiplist_iter *it, uint64_t n)
{
    char u[8];
    make_ukey(u, n);
    rv_skiplist_iter_seek(it, u, 8, rv_pack_tag(n + 1, RV_TYPE_PUT));
}

/* ---------------------------------------------------------------- arena */

/* Keys in SL, walked from the first. */
static uint64_t count_keys(rv_skiplist *sl)
{
    struct rv_skiplist_iter it;
    rv_skiplist_iter_init(&it, sl);
    uint64_t n = 0;
    for (rv_skiplist_iter_seek_to_first(&it); rv_skiplist_iter_valid(&it);
         rv_skiplist_iter_next(&it))
        n++;
    return n;
}

static void test_arena_alignment_and_usage(void **state)
{
    (void)state;
    struct rv_arena a;
    rv_arena_init(&a, 4096);
    assert_int_equal(rv_arena_memory_usage(&a), 0);
    char *prev = NULL;
    for (size_t i = 0; i < 2000; i++) {
        size_t n = (i * 7) % 50;
        char *p = rv_arena_alloc(&a, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 8, 0);
        assert_ptr_not_equal(p, prev);
        memset(p, 0xab, n);
        prev = p;
    }
    size_t before = rv_arena_memory_usage(&a);
    assert_true(before >= 2000 * 8);
    char *big = rv_arena_alloc(&a, 100000); /* own block */
    assert_non_null(big);
    assert_int_equal((uintptr_t)big % 8, 0);
    memset(big, 1, 100000);
    assert_true(rv_arena_memory_usage(&a) >= before + 100000);
    rv_arena_destroy(&a);
}

/* An arena asked for huge-page blocks: past RV_ARENA_HUGE_AFTER, every
** piece lies inside one 2 MiB-aligned region, pieces do not overlap, and
** the usage grows by whole 2 MiB blocks (and by the large pieces' own
** blocks); before that, blocks stay small. */
static void test_arena_huge_blocks(void **state)
{
    (void)state;
    struct rv_arena a;
    rv_arena_init(&a, 0);
    rv_arena_use_huge_blocks(&a);
    assert_non_null(rv_arena_alloc(&a, 8));
    assert_true(rv_arena_memory_usage(&a) < RV_ARENA_HUGE_BLOCK);
    while (rv_arena_memory_usage(&a) < RV_ARENA_HUGE_AFTER)
        assert_non_null(rv_arena_alloc(&a, 1000));
    /* The block in use when the threshold was passed is still a small
    ** malloc'd one, anywhere in the heap: fill it, so the next block, the
    ** first huge one, takes over. */
    size_t start = rv_arena_memory_usage(&a);
    while (rv_arena_memory_usage(&a) == start)
        assert_non_null(rv_arena_alloc(&a, 1000));
    enum { PIECES = 60000, PIECE = 120 }; /* about 3.5 huge blocks */
    static char *ptrs[PIECES];
    const uintptr_t huge = RV_ARENA_HUGE_BLOCK;
    for (size_t i = 0; i < PIECES; i++) {
        char *p = rv_arena_alloc(&a, PIECE);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 8, 0);
        if ((uintptr_t)p / huge != ((uintptr_t)p + PIECE - 1) / huge)
            fail_msg("piece %zu at %p crosses a 2 MiB boundary", i, (void *)p);
        memset(p, (int)(i % 251), PIECE);
        ptrs[i] = p;
    }
    size_t usage = rv_arena_memory_usage(&a);
    assert_true(usage - start >= (size_t)PIECES * PIECE);
    assert_int_equal((usage - start) % RV_ARENA_HUGE_BLOCK, 0);
    for (size_t i = 0; i < PIECES; i++)
        for (size_t j = 0; j < PIECE; j++)
            if (ptrs[i][j] != (char)(i % 251))
                fail_msg("piece %zu overwritten", i);
    char *big = rv_arena_alloc(&a, 1u << 20); /* own block */
    assert_non_null(big);
    memset(big, 1, 1u << 20);
    assert_true(rv_arena_memory_usage(&a) >= usage + (1u << 20));
    rv_arena_destroy(&a);
}

#define ARENA_THREADS 4
#define ARENA_ALLOCS 20000

struct arena_job {
    struct rv_arena *arena;
    int id;
    char *ptrs[ARENA_ALLOCS];
    size_t lens[ARENA_ALLOCS];
};

static void *arena_worker(void *arg)
{
    struct arena_job *job = arg;
    uint64_t rng = 0x1234567ull * (uint64_t)(job->id + 1);
    for (int i = 0; i < ARENA_ALLOCS; i++) {
        size_t n = 1 + tu_rand(&rng) % (i % 100 == 0 ? 3000 : 40);
        char *p = rv_arena_alloc(job->arena, n);
        if (!p || (uintptr_t)p % 8) {
            thread_fail("arena_alloc(%zu) gave %p", n, (void *)p);
            return NULL;
        }
        memset(p, job->id + 1, n);
        job->ptrs[i] = p;
        job->lens[i] = n;
    }
    return NULL;
}

/* Pieces handed to different threads never overlap: each thread's bytes
** still hold its own pattern after all threads are done. */
static void test_arena_concurrent(void **state)
{
    (void)state;
    struct rv_arena a;
    rv_arena_init(&a, 8192);
    static struct arena_job jobs[ARENA_THREADS];
    pthread_t th[ARENA_THREADS];
    for (int t = 0; t < ARENA_THREADS; t++) {
        jobs[t].arena = &a;
        jobs[t].id = t;
        assert_int_equal(pthread_create(&th[t], NULL, arena_worker, &jobs[t]),
                         0);
    }
    for (int t = 0; t < ARENA_THREADS; t++)
        pthread_join(th[t], NULL);
    assert_no_thread_failures();
    for (int t = 0; t < ARENA_THREADS; t++)
        for (int i = 0; i < ARENA_ALLOCS; i++)
            for (size_t j = 0; j < jobs[t].lens[i]; j++)
                if (jobs[t].ptrs[i][j] != (char)(t + 1))
                    fail_msg("thread %d allocation %d overwritten", t, i);
    rv_arena_destroy(&a);
}

/* ----------------------------------------------------- single-threaded */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the first reference entry >= N (COUNT if none). */
static size_t ref_lower_bound(const uint64_t *ref, size_t count, uint64_t n)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ref[mid] < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void expect_at(const struct rv_skiplist_iter *it, const uint64_t *ref,
                      size_t count, size_t idx)
{
    if (idx >= count) {
        assert_false(rv_skiplist_iter_valid(it));
        return;
    }
    assert_true(iter_at_number(it, ref[idx]));
}

static void test_skiplist_matches_sorted_array(void **state)
{
    (void)state;
    struct rv_arena a;
    rv_arena_init(&a, 0);
    rv_skiplist *sl = rv_skiplist_new(&a);
    assert_non_null(sl);
    struct rv_skiplist_iter it;
    rv_skiplist_iter_init(&it, sl);
    rv_skiplist_iter_seek_to_first(&it);
    assert_false(rv_skiplist_iter_valid(&it));
    rv_skiplist_iter_seek_to_last(&it);
    assert_false(rv_skiplist_iter_valid(&it));

    enum { COUNT = 3000 };
    static uint64_t ref[COUNT];
    uint64_t rng = 42;
    for (size_t i = 0; i < COUNT; i++) {
        ref[i] = 2 * i + 10; /* even numbers, so odd ones are absent */
    }
    for (size_t i = COUNT - 1; i > 0; i--) { /* insert in random order */
        size_t j = tu_rand(&rng) % (i + 1);
        uint64_t tmp = ref[i];
        ref[i] = ref[j];
        ref[j] = tmp;
    }
    for (size_t i = 0; i < COUNT; i++)
        insert_number(sl, ref[i]);
    assert_no_thread_failures();
    qsort(ref, COUNT, sizeof ref[0], cmp_u64);
    assert_int_equal(count_keys(sl), COUNT);

    size_t n = 0;
    for (rv_skiplist_iter_seek_to_first(&it); rv_skiplist_iter_valid(&it);
         rv_skiplist_iter_next(&it)) {
        rv_skiplist_iter_prefetch(&it); /* a hint: changes nothing */
        expect_at(&it, ref, COUNT, n++);
    }
    rv_skiplist_iter_prefetch(&it); /* not valid: a no-op */
    assert_int_equal(n, COUNT);
    n = COUNT;
    for (rv_skiplist_iter_seek_to_last(&it); rv_skiplist_iter_valid(&it);
         rv_skiplist_iter_prev(&it))
        expect_at(&it, ref, COUNT, --n);
    assert_int_equal(n, 0);

    for (int i = 0; i < 2000; i++) {
        uint64_t target = tu_rand(&rng) % (2 * COUNT + 20);
        size_t lb = ref_lower_bound(ref, COUNT, target);
        seek_number(&it, target);
        expect_at(&it, ref, COUNT, lb);
        char u[8];
        make_ukey(u, target);
        rv_skiplist_iter_seek_for_prev(&it, u, 8,
                                       rv_pack_tag(target + 1, RV_TYPE_PUT));
        size_t le = lb < COUNT && ref[lb] == target ? lb : lb - 1;
        expect_at(&it, ref, COUNT, le); /* lb-1 wraps to >= COUNT at 0 */
    }
    rv_arena_destroy(&a);
}

/* Tags order versions of one user key newest first, and user keys order
** bytewise with a shorter key first. */
static void test_skiplist_internal_key_order(void **state)
{
    (void)state;
    struct rv_arena a;
    rv_arena_init(&a, 0);
    rv_skiplist *sl = rv_skiplist_new(&a);
    const char *ukeys[] = { "b", "", "ab", "a", "\xff", "a\x00" };
    size_t ulens[] = { 1, 0, 2, 1, 1, 2 };
    for (int i = 0; i < 6; i++)
        for (uint64_t seq = 1; seq <= 3; seq++) {
            char *k = rv_skiplist_alloc_key(sl, ulens[i] + RV_TAG_SIZE, 0);
            assert_non_null(k);
            memcpy(k, ukeys[i], ulens[i]);
            rv_put_fixed64(k + ulens[i], rv_pack_tag(seq * 10 + (uint64_t)i,
                                                     RV_TYPE_PUT));
            rv_skiplist_insert(sl, k);
        }
    /* expected: "", "a", "a\0", "ab", "b", "\xff"; each seq 3, 2, 1 */
    const int order[] = { 1, 3, 5, 2, 0, 4 };
    struct rv_skiplist_iter it;
    rv_skiplist_iter_init(&it, sl);
    rv_skiplist_iter_seek_to_first(&it);
    for (int i = 0; i < 6; i++)
        for (uint64_t seq = 3; seq >= 1; seq--) {
            size_t len;
            assert_true(rv_skiplist_iter_valid(&it));
            const char *k = rv_skiplist_iter_key(&it, &len);
            int u = order[i];
            assert_int_equal(len, ulens[u] + RV_TAG_SIZE);
            assert_memory_equal(k, ukeys[u], ulens[u]);
            assert_int_equal(rv_tag_sequence(rv_get_fixed64(k + ulens[u])),
                             seq * 10 + (uint64_t)u);
            rv_skiplist_iter_next(&it);
        }
    assert_false(rv_skiplist_iter_valid(&it));
    rv_arena_destroy(&a);
}

/* ----------------------------------------------------------- concurrent */

#define WRITERS 4
#define READERS 2
#define PER_WRITER 20000

struct race {
    rv_skiplist *sl;
    /* Writer T has inserted its keys 0..published[T]-1 (release store). */
    _Atomic uint64_t published[WRITERS];
    _Atomic int writers_left;
};

struct race_arg {
    struct race *race;
    int id;
};

/* The I-th number writer T inserts.  Writer T owns the numbers
** j*WRITERS+T; odd writers insert them ascending (all racing at the tail),
** even ones scrambled (4099 is prime and does not divide PER_WRITER, so
** i*4099 mod PER_WRITER is a permutation). */
static uint64_t race_number(int t, uint64_t i)
{
    uint64_t j = t % 2 ? i : (i * 4099) % PER_WRITER;
    return j * WRITERS + (uint64_t)t;
}

static void *race_writer(void *p)
{
    struct race_arg *arg = p;
    struct race *r = arg->race;
    uint64_t rng = 99 + (uint64_t)arg->id;
    for (uint64_t i = 0; i < PER_WRITER; i++) {
        insert_number(r->sl, race_number(arg->id, i));
        /* release: readers that see the count see the inserted nodes */
        atomic_store_explicit(&r->published[arg->id], i + 1,
                              memory_order_release);
        if (tu_rand(&rng) % 512 == 0)
            sched_yield();
    }
    atomic_fetch_sub(&r->writers_left, 1);
    return NULL;
}

/* One reader pass: the whole list in strictly increasing order, at least
** as many entries as were published, and published keys found by seek. */
static void race_check_once(struct race *r, uint64_t *rng)
{
    uint64_t published[WRITERS], total = 0;
    for (int t = 0; t < WRITERS; t++) {
        /* acquire: pairs with the writer's release store */
        published[t] = atomic_load_explicit(&r->published[t],
                                            memory_order_acquire);
        total += published[t];
    }
    struct rv_skiplist_iter it;
    rv_skiplist_iter_init(&it, r->sl);
    uint64_t seen = 0, last = 0;
    for (rv_skiplist_iter_seek_to_first(&it); rv_skiplist_iter_valid(&it);
         rv_skiplist_iter_next(&it)) {
        size_t len;
        uint64_t n = ukey_number(rv_skiplist_iter_key(&it, &len));
        if (!iter_at_number(&it, n) || (seen && n <= last)) {
            thread_fail("order broken: %llu after %llu",
                        (unsigned long long)n, (unsigned long long)last);
            return;
        }
        last = n;
        seen++;
    }
    if (seen < total)
        thread_fail("saw %llu entries, %llu were published",
                    (unsigned long long)seen, (unsigned long long)total);
    for (int t = 0; t < WRITERS; t++) {
        if (!published[t])
            continue;
        uint64_t n = race_number(t, tu_rand(rng) % published[t]);
        seek_number(&it, n);
        if (!iter_at_number(&it, n))
            thread_fail("published key %llu not found",
                        (unsigned long long)n);
    }
    /* a few steps backward from the end stay strictly decreasing */
    rv_skiplist_iter_seek_to_last(&it);
    for (int i = 0; i < 20 && rv_skiplist_iter_valid(&it); i++) {
        size_t len;
        uint64_t n = ukey_number(rv_skiplist_iter_key(&it, &len));
        if (i && n >= last)
            thread_fail("prev went from %llu to %llu",
                        (unsigned long long)last, (unsigned long long)n);
        last = n;
        rv_skiplist_iter_prev(&it);
    }
}

static void *race_reader(void *p)
{
    struct race_arg *arg = p;
    uint64_t rng = 7 + (uint64_t)arg->id;
    int passes = 0;
    while (atomic_load(&arg->race->writers_left) > 0 || passes < 2) {
        race_check_once(arg->race, &rng);
        passes++;
    }
    return NULL;
}

static void test_skiplist_concurrent_insert(void **state)
{
    (void)state;
    struct rv_arena a;
    rv_arena_init(&a, 0);
    static struct race r;
    r.sl = rv_skiplist_new(&a);
    assert_non_null(r.sl);
    for (int t = 0; t < WRITERS; t++)
        atomic_init(&r.published[t], 0);
    atomic_init(&r.writers_left, WRITERS);

    pthread_t th[WRITERS + READERS];
    struct race_arg args[WRITERS + READERS];
    for (int i = 0; i < WRITERS + READERS; i++) {
        args[i].race = &r;
        args[i].id = i < WRITERS ? i : i - WRITERS;
        assert_int_equal(pthread_create(&th[i], NULL,
                                        i < WRITERS ? race_writer : race_reader,
                                        &args[i]), 0);
    }
    for (int i = 0; i < WRITERS + READERS; i++)
        pthread_join(th[i], NULL);
    assert_no_thread_failures();

    const uint64_t total = (uint64_t)WRITERS * PER_WRITER;
    assert_int_equal(count_keys(r.sl), total);
    struct rv_skiplist_iter it;
    rv_skiplist_iter_init(&it, r.sl);
    uint64_t n = 0;
    for (rv_skiplist_iter_seek_to_first(&it); rv_skiplist_iter_valid(&it);
         rv_skiplist_iter_next(&it))
        assert_true(iter_at_number(&it, n++)); /* every number, in order */
    assert_int_equal(n, total);
    for (rv_skiplist_iter_seek_to_last(&it); rv_skiplist_iter_valid(&it);
         rv_skiplist_iter_prev(&it))
        assert_true(iter_at_number(&it, --n));
    assert_int_equal(n, 0);
    rv_arena_destroy(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena_alignment_and_usage),
        cmocka_unit_test(test_arena_concurrent),
        cmocka_unit_test(test_arena_huge_blocks),
        cmocka_unit_test(test_skiplist_matches_sorted_array),
        cmocka_unit_test(test_skiplist_internal_key_order),
        cmocka_unit_test(test_skiplist_concurrent_insert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
