/*
** test_range_del.c -- memtable/range_del.c: the fragmented list's answer
** for a key (the newest tombstone over it that a view sees) against a
** brute-force walk of the tombstones, for random tombstones over short
** binary keys (empty keys, zero bytes, keys that are prefixes of others,
** a long shared prefix that the search skips); a view that hides some
** sequences; and a list read by readers while a thread adds to it.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/dbformat.h"
#include "memtable/range_del.h"

static uint64_t ut_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random key: PREFIX (PLEN bytes) then 0..3 bytes from {0, 1, 'a'}. */
static size_t ut_key(uint64_t *rng, char *out, const char *prefix,
                     size_t plen)
{
    static const char alphabet[] = {0, 1, 'a'};
    memcpy(out, prefix, plen);
    size_t n = ut_rand(rng) % 4;
    for (size_t i = 0; i < n; i++)
        out[plen + i] = alphabet[ut_rand(rng) % 3];
    return plen + n;
}

struct ut_tomb {
    char b[32], e[32];
    size_t bl, el;
    uint64_t seq;
};

static uint64_t ut_brute(const struct ut_tomb *t, int n, const char *k,
                         size_t kl, const struct rv_read_view *v)
{
    uint64_t best = 0;
    for (int i = 0; i < n; i++)
        if (rv_user_key_compare(t[i].b, t[i].bl, k, kl) <= 0 &&
            rv_user_key_compare(k, kl, t[i].e, t[i].el) < 0 &&
            rv_read_view_sees(v, t[i].seq) && t[i].seq > best)
            best = t[i].seq;
    return best;
}

static void check_round(uint64_t *rng, const char *prefix, size_t plen)
{
    struct rv_range_dels *r = rv_range_dels_new();
    assert_non_null(r);
    struct ut_tomb t[64];
    int n = 1 + (int)(ut_rand(rng) % 40);
    for (int i = 0; i < n; i++) {
        do {
            t[i].bl = ut_key(rng, t[i].b, prefix, plen);
            t[i].el = ut_key(rng, t[i].e, prefix, plen);
        } while (rv_user_key_compare(t[i].b, t[i].bl, t[i].e, t[i].el) >= 0);
        t[i].seq = 1 + ut_rand(rng) % 100;
        assert_int_equal(rv_range_dels_add(r, t[i].seq, t[i].b, t[i].bl,
                                           t[i].e, t[i].el), 0);
    }
    int nomem;
    const struct rv_range_frags *f = rv_range_dels_frags(r, &nomem);
    assert_non_null(f);
    struct rv_read_view all = rv_read_view_at(RV_MAX_SEQUENCE);
    struct rv_read_view half = rv_read_view_at(50);
    for (int q = 0; q < 300; q++) {
        char k[32];
        size_t kl = ut_rand(rng) % 5 == 0 ? ut_key(rng, k, "", 0)
                                          : ut_key(rng, k, prefix, plen);
        assert_int_equal(rv_range_frags_seq(f, k, kl, &all),
                         ut_brute(t, n, k, kl, &all));
        assert_int_equal(rv_range_frags_seq(f, k, kl, &half),
                         ut_brute(t, n, k, kl, &half));
    }
    rv_range_dels_free(r);
}

static void test_against_brute_force(void **state)
{
    (void)state;
    uint64_t rng = 0x1234567;
    for (int round = 0; round < 2000; round++) {
        /* no shared prefix, a short one, one longer than 8 bytes */
        static const char *prefixes[] = {"", "p", "prefix-longer-than-8:"};
        const char *p = prefixes[round % 3];
        check_round(&rng, p, strlen(p));
    }
}

/* Readers search while a writer adds: every answer is a sequence some
** tombstone over the key has (each tombstone covers [kI, kI+"\xff")). */
struct ut_conc {
    struct rv_range_dels *r;
    _Atomic int stop;
};

static void *ut_adder(void *p)
{
    struct ut_conc *c = p;
    for (int i = 0; i < 2000; i++) {
        char b[8] = {'k', (char)(i >> 8), (char)i}, e[8];
        memcpy(e, b, 3);
        e[3] = (char)0xff;
        assert_int_equal(rv_range_dels_add(c->r, (uint64_t)i + 1, b, 3, e, 4),
                         0);
    }
    atomic_store(&c->stop, 1);
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    (void)state;
    struct ut_conc c = {rv_range_dels_new(), 0};
    pthread_t t;
    pthread_create(&t, NULL, ut_adder, &c);
    struct rv_read_view all = rv_read_view_at(RV_MAX_SEQUENCE);
    uint64_t rng = 99;
    while (!atomic_load(&c.stop)) {
        int have = rv_range_dels_count(c.r);
        int nomem;
        const struct rv_range_frags *f = rv_range_dels_frags(c.r, &nomem);
        if (!f)
            continue;
        int i = (int)(ut_rand(&rng) % 2000);
        char k[8] = {'k', (char)(i >> 8), (char)i, 'x'};
        uint64_t s = rv_range_frags_seq(f, k, 4, &all);
        if (i < have)
            assert_int_equal(s, (uint64_t)i + 1);
        else
            assert_true(s == 0 || s == (uint64_t)i + 1);
    }
    pthread_join(t, NULL);
    rv_range_dels_free(c.r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_concurrent_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
