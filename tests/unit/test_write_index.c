/*
** test_write_index.c -- a transaction's write index (txn/write_index.h)
** and its merged iterator (txn/txn_iter.h) against a model.
**
** The model is an array over a small key space: for each key, what the
** transaction last did (nothing, put with a value, delete), and a copy of
** that array per savepoint.  The base of the merged iterator is a sorted
** array of keys behind a fake rv_user_iter_ops that can fail after a given
** number of moves.  A final test commits the batch into a memtable and
** checks that the database's view after it equals the merged view before.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/dbformat.h"
#include "db/db_iter.h"
#include "memtable/memtable.h"
#include "txn/txn_iter.h"
#include "txn/write_index.h"
#include "../testutil.h" /* tu_rand */

#define ROUNDS 300

/* ------------------------------------------------------------ key space */

/* Keys of 0..3 bytes over { 0x00, 'a', 0xff }: 40 keys, including the
** empty key, prefixes of each other and bytes that sort differently as
** signed and unsigned.  Seek targets also use 'b', between the others. */
#define KEY_SPACE 40

struct key {
    char b[3];
    size_t len;
};

static struct key key_over(int i, const char *alphabet, int radix)
{
    struct key k = { { 0 }, 0 };
    int len = 0, base = 0, width = 1;
    while (i >= base + width) {
        base += width;
        width *= radix;
        len++;
    }
    int v = i - base;
    k.len = (size_t)len;
    for (int j = len - 1; j >= 0; j--) {
        k.b[j] = alphabet[v % radix];
        v /= radix;
    }
    return k;
}

static struct key key_of(int i)
{
    static const char alphabet[3] = { 0x00, 'a', (char)0xff };
    return key_over(i, alphabet, 3);
}

/* A seek target: 0..3 bytes over 4 letters (85 of them). */
static struct key target_of(uint64_t *rng)
{
    static const char alphabet[4] = { 0x00, 'a', 'b', (char)0xff };
    return key_over((int)(tu_rand(rng) % 85), alphabet, 4);
}

static int key_cmp(const struct key *a, const struct key *b)
{
    return rv_user_key_compare(a->b, a->len, b->b, b->len);
}

/* Key ids in key order. */
static int sorted_ids[KEY_SPACE];

static int id_cmp(const void *a, const void *b)
{
    struct key x = key_of(*(const int *)a), y = key_of(*(const int *)b);
    return key_cmp(&x, &y);
}

static void sort_ids(void)
{
    for (int i = 0; i < KEY_SPACE; i++)
        sorted_ids[i] = i;
    qsort(sorted_ids, KEY_SPACE, sizeof sorted_ids[0], id_cmp);
}

/* ---------------------------------------------------------- the model */

enum { M_NONE, M_PUT, M_DEL };

struct mstate {
    int what[KEY_SPACE];
    char val[KEY_SPACE][24];
    size_t vlen[KEY_SPACE];
};

#define MAX_SP 64

struct model {
    struct mstate cur;
    struct mstate sp[MAX_SP];
    int nsp;
};

/* The index says what the model says, for every key. */
static void check_gets(const rv_write_index *idx, const struct mstate *m)
{
    size_t keys = 0;
    for (int i = 0; i < KEY_SPACE; i++) {
        struct key k = key_of(i);
        int type = -1;
        const char *val = NULL;
        size_t vlen = 99;
        int found = rv_write_index_get(idx, k.b, k.len, &type, &val, &vlen);
        if (m->what[i] == M_NONE) {
            assert_int_equal(found, RV_WINDEX_NOT_IN_TXN);
            continue;
        }
        keys++;
        assert_int_equal(found, RV_WINDEX_FOUND);
        if (m->what[i] == M_DEL) {
            assert_int_equal(type, RV_TYPE_DELETE);
            assert_null(val);
            assert_int_equal(vlen, 0);
        } else {
            assert_int_equal(type, RV_TYPE_PUT);
            assert_int_equal(vlen, m->vlen[i]);
            assert_memory_equal(val, m->val[i], vlen);
        }
    }
    assert_int_equal(rv_write_index_keys(idx), keys);
}

/* Replays the batch, last op wins, into a model state. */
static int replay_op(void *ctx, uint64_t seq, int type, const char *key,
                     size_t klen, const char *val, size_t vlen)
{
    struct mstate *m = ctx;
    (void)seq;
    for (int i = 0; i < KEY_SPACE; i++) {
        struct key k = key_of(i);
        if (k.len != klen || memcmp(k.b, key, klen) != 0)
            continue;
        m->what[i] = type == RV_TYPE_PUT ? M_PUT : M_DEL;
        assert_true(vlen < sizeof m->val[i]);
        if (vlen)
            memcpy(m->val[i], val, vlen);
        m->vlen[i] = vlen;
        return 0;
    }
    fail_msg("the batch holds a key outside the key space");
    return -1;
}

/* The batch is a valid rep whose replay is what the index says. */
static void check_batch(rv_write_index *idx, const struct mstate *m)
{
    struct ravel_batch *b = rv_write_index_batch(idx);
    assert_int_equal(rv_batch_validate(b->rep, b->len), RAVEL_OK);
    assert_int_equal(rv_batch_rep_count(b->rep), rv_write_index_count(idx));
    assert_int_equal(b->count, rv_write_index_count(idx));
    struct mstate replay;
    memset(&replay, 0, sizeof replay);
    assert_int_equal(rv_batch_apply(b->rep, b->len, 1, replay_op, &replay),
                     0);
    check_gets(idx, &replay);
    for (int i = 0; i < KEY_SPACE; i++)
        assert_int_equal(replay.what[i], m->what[i]);
}

/* One random op on both the index and the model (no savepoints). */
static void random_write(rv_write_index *idx, struct mstate *m, uint64_t *rng,
                         int round)
{
    int i = (int)(tu_rand(rng) % KEY_SPACE);
    struct key k = key_of(i);
    if (tu_rand(rng) % 4 == 0) {
        assert_int_equal(rv_write_index_delete(idx, k.b, k.len), RAVEL_OK);
        m->what[i] = M_DEL;
        m->vlen[i] = 0;
        return;
    }
    char val[24];
    int n = snprintf(val, sizeof val, "v%d.%u", round,
                     (unsigned)(tu_rand(rng) % 100000));
    size_t vlen = tu_rand(rng) % 8 == 0 ? 0 : (size_t)n;
    assert_int_equal(rv_write_index_put(idx, k.b, k.len, val, vlen),
                     RAVEL_OK);
    m->what[i] = M_PUT;
    memcpy(m->val[i], val, vlen);
    m->vlen[i] = vlen;
}

/* ------------------------------------------------------- index tests */

static void test_get_put_delete_overwrite(void **state)
{
    (void)state;
    rv_write_index *idx = rv_write_index_new();
    assert_non_null(idx);
    int type;
    const char *val;
    size_t vlen;
    assert_int_equal(rv_write_index_get(idx, "a", 1, &type, &val, &vlen),
                     RV_WINDEX_NOT_IN_TXN);
    assert_int_equal(rv_write_index_put(idx, "a", 1, "1", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_put(idx, "", 0, "empty", 5), RAVEL_OK);
    assert_int_equal(rv_write_index_delete(idx, "b", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "a", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(type, RV_TYPE_PUT);
    assert_int_equal(vlen, 1);
    assert_memory_equal(val, "1", 1);
    assert_int_equal(rv_write_index_get(idx, "", 0, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(vlen, 5);
    assert_int_equal(rv_write_index_get(idx, "b", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(type, RV_TYPE_DELETE);
    assert_int_equal(rv_write_index_get(idx, "ab", 2, &type, &val, &vlen),
                     RV_WINDEX_NOT_IN_TXN);
    /* overwrites: put over put, delete over put, put over delete; the
    ** batch keeps every op, the index the latest */
    assert_int_equal(rv_write_index_put(idx, "a", 1, "22", 2), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "a", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(vlen, 2);
    assert_memory_equal(val, "22", 2);
    assert_int_equal(rv_write_index_delete(idx, "a", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "a", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(type, RV_TYPE_DELETE);
    assert_int_equal(rv_write_index_put(idx, "b", 1, "3", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "b", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(type, RV_TYPE_PUT);
    assert_int_equal(rv_write_index_count(idx), 6);
    assert_int_equal(rv_write_index_keys(idx), 3);
    /* a refused write changes nothing */
    size_t before = rv_write_index_batch(idx)->len;
    assert_int_equal(rv_write_index_put(idx, "k", RAVEL_MAX_KEY_SIZE + 1,
                                        "v", 1), RAVEL_INVALID);
    assert_int_equal(rv_write_index_batch(idx)->len, before);
    assert_int_equal(rv_write_index_count(idx), 6);
    assert_int_equal(rv_write_index_keys(idx), 3);
    /* clear */
    rv_write_index_clear(idx);
    assert_int_equal(rv_write_index_count(idx), 0);
    assert_int_equal(rv_write_index_keys(idx), 0);
    assert_int_equal(rv_write_index_get(idx, "b", 1, &type, &val, &vlen),
                     RV_WINDEX_NOT_IN_TXN);
    assert_int_equal(rv_write_index_put(idx, "b", 1, "4", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "b", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_memory_equal(val, "4", 1);
    rv_write_index_free(idx);
}

static void test_savepoint_basic(void **state)
{
    (void)state;
    rv_write_index *idx = rv_write_index_new();
    int type;
    const char *val;
    size_t vlen;
    assert_int_equal(rv_write_index_rollback_to_savepoint(idx),
                     RAVEL_NOTFOUND);
    assert_int_equal(rv_write_index_pop_savepoint(idx), RAVEL_NOTFOUND);
    assert_int_equal(rv_write_index_put(idx, "a", 1, "1", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
    assert_int_equal(rv_write_index_put(idx, "a", 1, "2", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_put(idx, "b", 1, "2", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
    assert_int_equal(rv_write_index_delete(idx, "a", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_savepoint_count(idx), 2);
    /* inner rollback: a is back to 2 */
    assert_int_equal(rv_write_index_rollback_to_savepoint(idx), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "a", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(type, RV_TYPE_PUT);
    assert_memory_equal(val, "2", 1);
    assert_int_equal(rv_write_index_count(idx), 3);
    /* outer rollback: a is back to 1, b gone */
    assert_int_equal(rv_write_index_rollback_to_savepoint(idx), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "a", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_memory_equal(val, "1", 1);
    assert_int_equal(rv_write_index_get(idx, "b", 1, &type, &val, &vlen),
                     RV_WINDEX_NOT_IN_TXN);
    assert_int_equal(rv_write_index_count(idx), 1);
    assert_int_equal(rv_write_index_keys(idx), 1);
    assert_int_equal(rv_write_index_savepoint_count(idx), 0);
    /* pop keeps the writes */
    assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
    assert_int_equal(rv_write_index_put(idx, "c", 1, "3", 1), RAVEL_OK);
    assert_int_equal(rv_write_index_pop_savepoint(idx), RAVEL_OK);
    assert_int_equal(rv_write_index_get(idx, "c", 1, &type, &val, &vlen),
                     RV_WINDEX_FOUND);
    assert_int_equal(rv_write_index_rollback_to_savepoint(idx),
                     RAVEL_NOTFOUND);
    rv_write_index_free(idx);
}

/* Random writes, savepoints, rollbacks and pops; after every step the
** index agrees with the model and, after every rollback, with a replay of
** its batch. */
static void test_savepoint_random(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0001;
    for (int round = 0; round < ROUNDS; round++) {
        rv_write_index *idx = rv_write_index_new();
        static struct model m;
        memset(&m, 0, sizeof m);
        int steps = 20 + (int)(tu_rand(&rng) % 200);
        for (int s = 0; s < steps; s++) {
            uint64_t r = tu_rand(&rng) % 100;
            if (r < 70) {
                random_write(idx, &m.cur, &rng, round);
            } else if (r < 80) {
                if (m.nsp == MAX_SP)
                    continue;
                assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
                m.sp[m.nsp++] = m.cur;
            } else if (r < 92) {
                int rc = rv_write_index_rollback_to_savepoint(idx);
                if (m.nsp == 0) {
                    assert_int_equal(rc, RAVEL_NOTFOUND);
                    continue;
                }
                assert_int_equal(rc, RAVEL_OK);
                m.cur = m.sp[--m.nsp];
                check_batch(idx, &m.cur);
            } else {
                int rc = rv_write_index_pop_savepoint(idx);
                assert_int_equal(rc, m.nsp ? RAVEL_OK : RAVEL_NOTFOUND);
                if (m.nsp)
                    m.nsp--;
            }
            assert_int_equal(rv_write_index_savepoint_count(idx), m.nsp);
            check_gets(idx, &m.cur);
        }
        check_batch(idx, &m.cur);
        while (m.nsp) {
            assert_int_equal(rv_write_index_rollback_to_savepoint(idx),
                             RAVEL_OK);
            m.cur = m.sp[--m.nsp];
            check_batch(idx, &m.cur);
        }
        rv_write_index_free(idx);
    }
}

static void test_bytes(void **state)
{
    (void)state;
    rv_write_index *idx = rv_write_index_new();
    size_t empty = rv_write_index_bytes(idx);
    assert_true(empty > 0);
    static char big[100000];
    memset(big, 'x', sizeof big);
    assert_int_equal(rv_write_index_put(idx, "k", 1, big, sizeof big),
                     RAVEL_OK);
    size_t one = rv_write_index_bytes(idx);
    assert_true(one >= empty + sizeof big);
    for (int i = 0; i < 1000; i++) {
        char k[16];
        int n = snprintf(k, sizeof k, "key%d", i);
        assert_int_equal(rv_write_index_put(idx, k, (size_t)n, "v", 1),
                         RAVEL_OK);
    }
    assert_true(rv_write_index_bytes(idx) > one);
    assert_true(rv_write_index_bytes(idx) >=
                rv_write_index_batch(idx)->len);
    /* nodes of keys rolled back are given back */
    assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
    size_t at_sp = rv_write_index_bytes(idx);
    for (int i = 0; i < 1000; i++) {
        char k[16];
        int n = snprintf(k, sizeof k, "other%d", i);
        assert_int_equal(rv_write_index_delete(idx, k, (size_t)n),
                         RAVEL_OK);
    }
    assert_true(rv_write_index_bytes(idx) > at_sp);
    assert_int_equal(rv_write_index_rollback_to_savepoint(idx), RAVEL_OK);
    assert_int_equal(rv_write_index_keys(idx), 1001);
    rv_write_index_free(idx);
}

/* ------------------------------------------------------ the fake base */

struct fake_base {
    int ids[KEY_SPACE]; /* in key order */
    char val[KEY_SPACE][16];
    size_t vlen[KEY_SPACE];
    int n;
    int pos;            /* -1 or n: not valid */
    long moves;         /* positioning calls so far */
    long fail_after;    /* the move that fails (-1: never) */
    int status;
};

static int fake_moved(struct fake_base *b)
{
    if (b->status)
        return 1;
    if (b->fail_after >= 0 && ++b->moves > b->fail_after) {
        b->status = RAVEL_CORRUPT;
        b->pos = -1;
        return 1;
    }
    return 0;
}

static int fake_valid(void *p)
{
    struct fake_base *b = p;
    return !b->status && b->pos >= 0 && b->pos < b->n;
}

static void fake_seek_to_first(void *p)
{
    struct fake_base *b = p;
    if (!fake_moved(b))
        b->pos = 0;
}

static void fake_seek_to_last(void *p)
{
    struct fake_base *b = p;
    if (!fake_moved(b))
        b->pos = b->n - 1;
}

static int fake_cmp(const struct fake_base *b, int pos, const void *key,
                    size_t klen)
{
    struct key k = key_of(b->ids[pos]);
    return rv_user_key_compare(k.b, k.len, key, klen);
}

static void fake_seek(void *p, const void *key, size_t klen)
{
    struct fake_base *b = p;
    if (fake_moved(b))
        return;
    b->pos = 0;
    while (b->pos < b->n && fake_cmp(b, b->pos, key, klen) < 0)
        b->pos++;
}

static void fake_seek_for_prev(void *p, const void *key, size_t klen)
{
    struct fake_base *b = p;
    if (fake_moved(b))
        return;
    b->pos = b->n - 1;
    while (b->pos >= 0 && fake_cmp(b, b->pos, key, klen) > 0)
        b->pos--;
}

static void fake_next(void *p)
{
    struct fake_base *b = p;
    assert_true(fake_valid(b));
    if (!fake_moved(b))
        b->pos++;
}

static void fake_prev(void *p)
{
    struct fake_base *b = p;
    assert_true(fake_valid(b));
    if (!fake_moved(b))
        b->pos--;
}

static __thread struct key fake_key_buf;

static const char *fake_key(void *p, size_t *klen)
{
    struct fake_base *b = p;
    assert_true(fake_valid(b));
    fake_key_buf = key_of(b->ids[b->pos]);
    *klen = fake_key_buf.len;
    return fake_key_buf.b;
}

static const char *fake_value(void *p, size_t *vlen)
{
    struct fake_base *b = p;
    assert_true(fake_valid(b));
    *vlen = b->vlen[b->pos];
    return b->val[b->pos];
}

static int fake_status(void *p)
{
    return ((struct fake_base *)p)->status;
}

static const struct rv_user_iter_ops fake_ops = {
    .valid = fake_valid,
    .seek_to_first = fake_seek_to_first,
    .seek_to_last = fake_seek_to_last,
    .seek = fake_seek,
    .seek_for_prev = fake_seek_for_prev,
    .next = fake_next,
    .prev = fake_prev,
    .key = fake_key,
    .value = fake_value,
    .status = fake_status,
    .destroy = NULL,
};

static void fake_fill(struct fake_base *b, uint64_t *rng, int percent)
{
    memset(b, 0, sizeof *b);
    b->fail_after = -1;
    b->pos = -1;
    for (int s = 0; s < KEY_SPACE; s++) {
        if ((int)(tu_rand(rng) % 100) >= percent)
            continue;
        b->ids[b->n] = sorted_ids[s];
        b->vlen[b->n] = (size_t)snprintf(b->val[b->n], sizeof b->val[0],
                                         "base%d", sorted_ids[s]);
        b->n++;
    }
}

/* ------------------------------------------------- the merged model */

struct visible {
    int n;
    int id[KEY_SPACE];
    const char *val[KEY_SPACE];
    size_t vlen[KEY_SPACE];
};

/* What the merged iterator must show, in key order, within
** [lower, upper) (NULL: no bound). */
static void merged_model(const struct mstate *m, const struct fake_base *b,
                         const struct key *lower, const struct key *upper,
                         struct visible *v)
{
    v->n = 0;
    for (int s = 0; s < KEY_SPACE; s++) {
        int id = sorted_ids[s];
        struct key k = key_of(id);
        if ((lower && key_cmp(&k, lower) < 0) ||
            (upper && key_cmp(&k, upper) >= 0))
            continue;
        if (m->what[id] == M_DEL)
            continue;
        if (m->what[id] == M_PUT) {
            v->id[v->n] = id;
            v->val[v->n] = m->val[id];
            v->vlen[v->n] = m->vlen[id];
            v->n++;
            continue;
        }
        for (int j = 0; j < b->n; j++)
            if (b->ids[j] == id) {
                v->id[v->n] = id;
                v->val[v->n] = b->val[j];
                v->vlen[v->n] = b->vlen[j];
                v->n++;
            }
    }
}

/* The iterator is at model position POS (-1 or n: not valid). */
static void check_at(rv_txn_iter *it, const struct visible *v, int pos)
{
    assert_int_equal(rv_txn_iter_status(it), RAVEL_OK);
    if (pos < 0 || pos >= v->n) {
        assert_false(rv_txn_iter_valid(it));
        return;
    }
    assert_true(rv_txn_iter_valid(it));
    struct key want = key_of(v->id[pos]);
    size_t klen, vlen;
    const char *key = rv_txn_iter_key(it, &klen);
    assert_int_equal(klen, want.len);
    assert_memory_equal(key, want.b, klen);
    const char *val = rv_txn_iter_value(it, &vlen);
    assert_int_equal(vlen, v->vlen[pos]);
    assert_memory_equal(val, v->val[pos], vlen);
}

static int model_seek(const struct visible *v, const struct key *t)
{
    int pos = 0;
    while (pos < v->n) {
        struct key k = key_of(v->id[pos]);
        if (key_cmp(&k, t) >= 0)
            break;
        pos++;
    }
    return pos;
}

static int model_seek_for_prev(const struct visible *v, const struct key *t)
{
    int pos = v->n - 1;
    while (pos >= 0) {
        struct key k = key_of(v->id[pos]);
        if (key_cmp(&k, t) <= 0)
            break;
        pos--;
    }
    return pos;
}

/* Full scans both ways, then random seeks each followed by a random walk
** that switches direction. */
static void walk(rv_txn_iter *it, const struct visible *v, uint64_t *rng)
{
    int pos = 0;
    rv_txn_iter_seek_to_first(it);
    for (pos = 0; pos <= v->n; pos++) {
        check_at(it, v, pos);
        rv_txn_iter_next(it);
    }
    rv_txn_iter_seek_to_last(it);
    for (pos = v->n - 1; pos >= -1; pos--) {
        check_at(it, v, pos);
        rv_txn_iter_prev(it);
    }
    for (int s = 0; s < 30; s++) {
        struct key t = target_of(rng);
        switch (tu_rand(rng) % 4) {
        case 0:
            rv_txn_iter_seek(it, t.b, t.len);
            pos = model_seek(v, &t);
            break;
        case 1:
            rv_txn_iter_seek_for_prev(it, t.b, t.len);
            pos = model_seek_for_prev(v, &t);
            break;
        case 2:
            rv_txn_iter_seek_to_first(it);
            pos = 0;
            break;
        default:
            rv_txn_iter_seek_to_last(it);
            pos = v->n - 1;
            break;
        }
        check_at(it, v, pos);
        int steps = (int)(tu_rand(rng) % 12);
        for (int i = 0; i < steps && pos >= 0 && pos < v->n; i++) {
            if (tu_rand(rng) % 2) {
                rv_txn_iter_next(it);
                pos++;
            } else {
                rv_txn_iter_prev(it);
                pos--;
            }
            check_at(it, v, pos);
        }
    }
}

/* A random bound, or NULL. */
static const struct key *random_bound(uint64_t *rng, struct key *k)
{
    if (tu_rand(rng) % 3)
        return NULL;
    *k = target_of(rng);
    return k;
}

static void test_iter_model(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0002;
    for (int round = 0; round < ROUNDS; round++) {
        static struct fake_base base;
        static struct mstate m;
        static struct visible v;
        fake_fill(&base, &rng, (int)(tu_rand(&rng) % 101));
        memset(&m, 0, sizeof m);
        rv_write_index *idx = rv_write_index_new();
        int writes = (int)(tu_rand(&rng) % 60);
        for (int i = 0; i < writes; i++)
            random_write(idx, &m, &rng, round);
        rv_txn_iter *it = rv_txn_iter_new(idx, &fake_ops, &base);
        assert_non_null(it);
        merged_model(&m, &base, NULL, NULL, &v);
        walk(it, &v, &rng);
        /* bounds */
        for (int b = 0; b < 3; b++) {
            struct key lo, up;
            const struct key *lower = random_bound(&rng, &lo);
            const struct key *upper = random_bound(&rng, &up);
            assert_int_equal(rv_txn_iter_set_bounds(it,
                                 lower ? lower->b : NULL,
                                 lower ? lower->len : 0,
                                 upper ? upper->b : NULL,
                                 upper ? upper->len : 0), RAVEL_OK);
            assert_false(rv_txn_iter_valid(it));
            merged_model(&m, &base, lower, upper, &v);
            walk(it, &v, &rng);
        }
        rv_txn_iter_free(it);
        /* more writes and a rollback, then a new iterator */
        assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
        struct mstate saved = m;
        for (int i = 0; i < 20; i++)
            random_write(idx, &m, &rng, round);
        if (tu_rand(&rng) % 2) {
            assert_int_equal(rv_write_index_rollback_to_savepoint(idx),
                             RAVEL_OK);
            m = saved;
        }
        it = rv_txn_iter_new(idx, &fake_ops, &base);
        merged_model(&m, &base, NULL, NULL, &v);
        walk(it, &v, &rng);
        rv_txn_iter_free(it);
        rv_write_index_free(idx);
    }
}

/* The base fails after a random number of moves in the middle of a walk:
** the iterator stops with the base's error, shows nothing after it (not
** even the transaction's own keys further on), and stays stopped. */
static void test_iter_base_error(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0003;
    int stopped_midway = 0, clean = 0;
    for (int round = 0; round < ROUNDS; round++) {
        static struct fake_base base;
        static struct mstate m;
        static struct visible v;
        fake_fill(&base, &rng, 60);
        memset(&m, 0, sizeof m);
        rv_write_index *idx = rv_write_index_new();
        for (int i = 0; i < 30; i++)
            random_write(idx, &m, &rng, round);
        merged_model(&m, &base, NULL, NULL, &v);
        base.fail_after = (long)(tu_rand(&rng) % (uint64_t)(base.n + 2));
        rv_txn_iter *it = rv_txn_iter_new(idx, &fake_ops, &base);
        int forward = (int)(tu_rand(&rng) % 2);
        int pos = forward ? 0 : v.n - 1, shown = 0;
        if (forward)
            rv_txn_iter_seek_to_first(it);
        else
            rv_txn_iter_seek_to_last(it);
        while (rv_txn_iter_valid(it)) {
            assert_true(pos >= 0 && pos < v.n);
            struct key want = key_of(v.id[pos]);
            size_t klen;
            const char *key = rv_txn_iter_key(it, &klen);
            assert_int_equal(klen, want.len);
            assert_memory_equal(key, want.b, klen);
            shown++;
            if (forward) {
                rv_txn_iter_next(it);
                pos++;
            } else {
                rv_txn_iter_prev(it);
                pos--;
            }
        }
        if (base.status) {
            assert_int_equal(rv_txn_iter_status(it), RAVEL_CORRUPT);
            /* stopped for good: every positioning call leaves it so */
            rv_txn_iter_seek_to_first(it);
            assert_false(rv_txn_iter_valid(it));
            rv_txn_iter_seek_to_last(it);
            assert_false(rv_txn_iter_valid(it));
            rv_txn_iter_seek(it, "", 0);
            assert_false(rv_txn_iter_valid(it));
            rv_txn_iter_seek_for_prev(it, "\xff\xff\xff\xff", 4);
            assert_false(rv_txn_iter_valid(it));
            assert_int_equal(rv_txn_iter_status(it), RAVEL_CORRUPT);
            stopped_midway += shown > 0 && shown < v.n;
        } else {
            assert_int_equal(rv_txn_iter_status(it), RAVEL_OK);
            assert_int_equal(shown, v.n);
            clean++;
        }
        rv_txn_iter_free(it);
        rv_write_index_free(idx);
    }
    /* the rounds covered both cases */
    assert_true(stopped_midway > ROUNDS / 4);
    assert_true(clean > 0);
}

/* A base error where the transaction has keys after it: they are not
** shown. */
static void test_iter_base_error_hides_delta(void **state)
{
    (void)state;
    static struct fake_base base;
    uint64_t rng = 1;
    fake_fill(&base, &rng, 100);
    rv_write_index *idx = rv_write_index_new();
    assert_int_equal(rv_write_index_put(idx, "\xff\xff\xff\xff", 4, "t", 1),
                     RAVEL_OK);
    base.fail_after = 3; /* seek_to_first, next, next; the 4th fails */
    rv_txn_iter *it = rv_txn_iter_new(idx, &fake_ops, &base);
    rv_txn_iter_seek_to_first(it);
    int shown = 0;
    while (rv_txn_iter_valid(it)) {
        shown++;
        rv_txn_iter_next(it);
    }
    assert_int_equal(shown, 3);
    assert_int_equal(rv_txn_iter_status(it), RAVEL_CORRUPT);
    rv_txn_iter_free(it);
    rv_write_index_free(idx);
}

/* The first visible key > (FWD) or the last < (!FWD) key id CUR. */
static int model_step_from(const struct visible *v, int cur, int fwd)
{
    struct key c = key_of(cur);
    if (fwd) {
        for (int pos = 0; pos < v->n; pos++) {
            struct key k = key_of(v->id[pos]);
            if (key_cmp(&k, &c) > 0)
                return pos;
        }
        return v->n;
    }
    for (int pos = v->n - 1; pos >= 0; pos--) {
        struct key k = key_of(v->id[pos]);
        if (key_cmp(&k, &c) < 0)
            return pos;
    }
    return -1;
}

/* Read, modify, write while scanning: the transaction writes between the
** steps (the key shown, keys ahead, keys behind) and each step goes to
** the next key of the view as it is after the write.  A rollback leaves
** the iterator not valid until a seek. */
static void test_iter_writes_while_open(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0005;
    for (int round = 0; round < ROUNDS; round++) {
        static struct fake_base base;
        static struct mstate m;
        static struct visible v;
        fake_fill(&base, &rng, (int)(tu_rand(&rng) % 101));
        memset(&m, 0, sizeof m);
        rv_write_index *idx = rv_write_index_new();
        int writes = (int)(tu_rand(&rng) % 30);
        for (int i = 0; i < writes; i++)
            random_write(idx, &m, &rng, round);
        rv_txn_iter *it = rv_txn_iter_new(idx, &fake_ops, &base);
        merged_model(&m, &base, NULL, NULL, &v);
        int pos = 0;
        for (int s = 0; s < 80; s++) {
            if (!rv_txn_iter_valid(it)) {
                if (tu_rand(&rng) % 2) {
                    rv_txn_iter_seek_to_first(it);
                    pos = 0;
                } else {
                    rv_txn_iter_seek_to_last(it);
                    pos = v.n - 1;
                }
                check_at(it, &v, pos);
                if (v.n == 0)
                    break;
            }
            int cur = v.id[pos];
            if (tu_rand(&rng) % 3 == 0) {
                if (tu_rand(&rng) % 4 == 0) {
                    /* rewrite the key shown */
                    struct key k = key_of(cur);
                    if (tu_rand(&rng) % 2) {
                        assert_int_equal(rv_write_index_delete(idx, k.b,
                                             k.len), RAVEL_OK);
                        m.what[cur] = M_DEL;
                    } else {
                        assert_int_equal(rv_write_index_put(idx, k.b, k.len,
                                             "rmw", 3), RAVEL_OK);
                        m.what[cur] = M_PUT;
                        memcpy(m.val[cur], "rmw", 3);
                        m.vlen[cur] = 3;
                    }
                } else {
                    random_write(idx, &m, &rng, round);
                }
                merged_model(&m, &base, NULL, NULL, &v);
            }
            int fwd = (int)(tu_rand(&rng) % 2);
            if (fwd)
                rv_txn_iter_next(it);
            else
                rv_txn_iter_prev(it);
            pos = model_step_from(&v, cur, fwd);
            check_at(it, &v, pos);
        }
        /* a rollback: not valid until a seek */
        assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
        struct key k = key_of(sorted_ids[KEY_SPACE - 1]);
        assert_int_equal(rv_write_index_put(idx, k.b, k.len, "z", 1),
                         RAVEL_OK);
        rv_txn_iter_seek_to_first(it);
        assert_true(rv_txn_iter_valid(it));
        assert_int_equal(rv_write_index_rollback_to_savepoint(idx),
                         RAVEL_OK);
        assert_false(rv_txn_iter_valid(it));
        rv_txn_iter_next(it);
        assert_false(rv_txn_iter_valid(it));
        rv_txn_iter_seek_to_first(it);
        check_at(it, &v, 0);
        rv_txn_iter_free(it);
        rv_write_index_free(idx);
    }
}

/* ------------------------------------------- over a real rv_db_iter */

static int commit_op(void *ctx, uint64_t seq, int type, const char *key,
                     size_t klen, const char *val, size_t vlen)
{
    return rv_memtable_add(ctx, seq, type, key, klen, val, vlen);
}

static rv_db_iter *view_at(rv_memtable *mt, uint64_t seq)
{
    struct rv_iter *child = rv_memtable_iter_new(mt);
    assert_non_null(child);
    struct rv_iter *merged = rv_merging_iter_new(&child, 1);
    assert_non_null(merged);
    struct rv_read_view view = rv_read_view_at(seq);
    rv_db_iter *it = rv_db_iter_new(merged, &view);
    assert_non_null(it);
    return it;
}

/* Snapshot = the base at SNAP; the merged view before commit must be the
** database's view after the batch is applied at SNAP + 1 (each op at its
** own sequence: the last op on a key wins). */
static void test_commit_equals_merged_view(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0004;
    for (int round = 0; round < ROUNDS / 3; round++) {
        rv_memtable *mt = rv_memtable_new(0);
        uint64_t seq = 0;
        for (int i = 0; i < 60; i++) {
            struct key k = key_of((int)(tu_rand(&rng) % KEY_SPACE));
            char val[16];
            int n = snprintf(val, sizeof val, "b%d", i);
            int del = tu_rand(&rng) % 5 == 0;
            assert_int_equal(rv_memtable_add(mt, ++seq,
                                 del ? RV_TYPE_DELETE : RV_TYPE_PUT,
                                 k.b, k.len, val, del ? 0 : (size_t)n), 0);
        }
        uint64_t snap = seq;
        rv_write_index *idx = rv_write_index_new();
        static struct mstate m;
        memset(&m, 0, sizeof m);
        for (int i = 0; i < 40; i++) {
            if (i == 20)
                assert_int_equal(rv_write_index_savepoint(idx), RAVEL_OK);
            random_write(idx, &m, &rng, round);
        }
        if (tu_rand(&rng) % 2)
            assert_int_equal(rv_write_index_rollback_to_savepoint(idx), 0);

        /* the merged view, collected */
        rv_txn_iter *it = rv_txn_iter_new(idx, rv_txn_db_iter_base(),
                                          view_at(mt, snap));
        assert_non_null(it);
        char keys[KEY_SPACE][4], vals[KEY_SPACE][24];
        size_t klens[KEY_SPACE], vlens[KEY_SPACE];
        int n = 0;
        for (rv_txn_iter_seek_to_first(it); rv_txn_iter_valid(it);
             rv_txn_iter_next(it)) {
            assert_true(n < KEY_SPACE);
            const char *p = rv_txn_iter_key(it, &klens[n]);
            memcpy(keys[n], p, klens[n]);
            p = rv_txn_iter_value(it, &vlens[n]);
            memcpy(vals[n], p, vlens[n]);
            n++;
        }
        assert_int_equal(rv_txn_iter_status(it), RAVEL_OK);
        /* backward too */
        int back = n;
        for (rv_txn_iter_seek_to_last(it); rv_txn_iter_valid(it);
             rv_txn_iter_prev(it)) {
            size_t klen;
            const char *p = rv_txn_iter_key(it, &klen);
            back--;
            assert_true(back >= 0);
            assert_int_equal(klen, klens[back]);
            assert_memory_equal(p, keys[back], klen);
        }
        assert_int_equal(back, 0);
        rv_txn_iter_free(it);

        /* commit: apply the batch after the snapshot */
        struct ravel_batch *b = rv_write_index_batch(idx);
        assert_int_equal(rv_batch_apply(b->rep, b->len, snap + 1, commit_op,
                                        mt), 0);
        rv_db_iter *db = view_at(mt, snap + b->count);
        int i = 0;
        for (rv_db_iter_seek_to_first(db); rv_db_iter_valid(db);
             rv_db_iter_next(db), i++) {
            assert_true(i < n);
            size_t klen, vlen;
            const char *p = rv_db_iter_key(db, &klen);
            assert_int_equal(klen, klens[i]);
            assert_memory_equal(p, keys[i], klen);
            p = rv_db_iter_value(db, &vlen);
            assert_int_equal(vlen, vlens[i]);
            assert_memory_equal(p, vals[i], vlen);
        }
        assert_int_equal(i, n);
        rv_db_iter_free(db);
        rv_write_index_free(idx);
        rv_memtable_unref(mt);
    }
}

int main(void)
{
    sort_ids();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_put_delete_overwrite),
        cmocka_unit_test(test_savepoint_basic),
        cmocka_unit_test(test_savepoint_random),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_iter_model),
        cmocka_unit_test(test_iter_base_error),
        cmocka_unit_test(test_iter_base_error_hides_delta),
        cmocka_unit_test(test_iter_writes_while_open),
        cmocka_unit_test(test_commit_equals_merged_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
