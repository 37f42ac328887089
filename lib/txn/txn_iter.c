/*
** txn_iter.c -- a transaction's writes merged over its snapshot's view
** (txn_iter.h says what is promised; RocksDB's BaseDeltaIterator).
**
** Owns: the merge of two iterators of user keys, the "delta" (positions
** in the write index) and the base, in either direction.  Does not own:
** what either holds.
**
** Both sit at or past the key shown, in the direction of travel: the one
** whose key comes first shows it (the delta on a tie, and the base's equal
** key is stepped over with it).  A delta entry that is a delete shows
** nothing and takes the base's equal key with it.  Changing direction
** seeks both to the key shown (copied into SAVED first: the base's key
** memory goes when it moves) and steps each off it: one seek of the base
** per switch, simple and plainly right.
**
** Writes while it is open: index nodes never move, so a delta position
** stays good, and a key written after a delta position is met by the next
** step.  When the base shows the key, though, the delta is already past it
** and could have passed a key written in between: the first step after a
** write (the index's op count changed) seeks the delta again, just past
** the key shown.
**
** Bounds are checked on both sides: a key past one ends that side in the
** direction of travel; seeks are clamped to them, as db_iter.c does.
*/
#include "txn/txn_iter.h"
#include "base/dbformat.h"
#include "db/db_iter.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

enum txn_iter_direction { TXN_ITER_FORWARD, TXN_ITER_REVERSE };

/* A growable byte buffer owned by the iterator. */
struct txn_iter_buf {
    char *data;
    size_t len, cap;
};

/* One transaction's thread at a time: no field is shared. */
struct rv_txn_iter {
    const struct rv_user_iter_ops *ops;
    void *base;                     /* owned if ops->destroy */
    struct rv_windex_iter delta;
    uint64_t epoch;  /* the index's when last positioned by a seek */
    uint32_t seen;   /* the index's op count when the merge last settled */
    enum txn_iter_direction direction;
    int valid;
    int at_base;   /* the key shown is the base's */
    int equal;     /* the delta shows it and the base sits on it too */
    /* The first error, the base's or ours (NOMEM): once set, never
    ** cleared, and valid stays 0. */
    int status;
    struct txn_iter_buf saved;      /* a seek target or switch key */
    struct txn_iter_buf lower, upper;
    int has_lower, has_upper;
};

/* --------------------------------------------------------------- buffers */

/* Copies P into B; on failure the iterator stops with RAVEL_NOMEM and -1
** is returned. */
static int txn_iter_save(rv_txn_iter *it, struct txn_iter_buf *b,
                         const void *p, size_t n)
{
    if (n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < n)
            cap *= 2;
        char *data = realloc(b->data, cap);
        if (!data) {
            it->status = rv_error(RAVEL_NOMEM, "transaction iterator: out "
                                  "of memory saving a key of %zu bytes", n);
            it->valid = 0;
            return -1;
        }
        b->data = data;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data, p, n);
    b->len = n;
    return 0;
}

static const char *txn_iter_buf_data(const struct txn_iter_buf *b)
{
    return b->data ? b->data : "";
}

/* --------------------------------------------------------------- sides */

static int txn_iter_in_bounds(const rv_txn_iter *it, const char *key,
                              size_t klen)
{
    if (it->has_lower && rv_user_key_compare(key, klen,
            txn_iter_buf_data(&it->lower), it->lower.len) < 0)
        return 0;
    if (it->has_upper && rv_user_key_compare(key, klen,
            txn_iter_buf_data(&it->upper), it->upper.len) >= 0)
        return 0;
    return 1;
}

/* Records the base's error, if any; 1 if the iterator is stopped. */
static int txn_iter_check_base(rv_txn_iter *it)
{
    if (it->status == RAVEL_OK)
        it->status = it->ops->status(it->base);
    if (it->status != RAVEL_OK)
        it->valid = 0;
    return it->status != RAVEL_OK;
}

static int txn_iter_base_ok(const rv_txn_iter *it, const char **key,
                            size_t *klen)
{
    if (!it->ops->valid(it->base))
        return 0;
    *key = it->ops->key(it->base, klen);
    return txn_iter_in_bounds(it, *key, *klen);
}

/* 1 if the delta is on a key in bounds; *TYPE: its op's type. */
static int txn_iter_delta_ok(const rv_txn_iter *it, const char **key,
                             size_t *klen, int *type)
{
    if (!rv_windex_iter_valid(&it->delta))
        return 0;
    const char *val;
    size_t vlen;
    *type = rv_windex_iter_entry(&it->delta, key, klen, &val, &vlen);
    return txn_iter_in_bounds(it, *key, *klen);
}

static void txn_iter_step_base(rv_txn_iter *it)
{
    if (it->direction == TXN_ITER_FORWARD)
        it->ops->next(it->base);
    else
        it->ops->prev(it->base);
    txn_iter_check_base(it);
}

static void txn_iter_step_delta(rv_txn_iter *it)
{
    if (it->direction == TXN_ITER_FORWARD)
        rv_windex_iter_next(&it->delta);
    else
        rv_windex_iter_prev(&it->delta);
}

/* ----------------------------------------------------------- the merge */

/* Settles on the key to show from where both sides are, skipping the
** transaction's deletes and the base keys they hide. */
static void txn_iter_settle(rv_txn_iter *it)
{
    for (;;) {
        const char *bkey = NULL, *dkey = NULL;
        size_t blen = 0, dlen = 0;
        int type = RV_TYPE_PUT;
        if (it->status) {
            it->valid = 0;
            return;
        }
        int bv = txn_iter_base_ok(it, &bkey, &blen);
        int dv = txn_iter_delta_ok(it, &dkey, &dlen, &type);
        if (!bv && !dv) {
            it->valid = 0;
            return;
        }
        int c = bv && dv ? rv_user_key_compare(bkey, blen, dkey, dlen) : 0;
        int fwd = it->direction == TXN_ITER_FORWARD;
        if (!dv || (bv && (fwd ? c < 0 : c > 0))) {
            it->at_base = 1;
            it->equal = 0;
            it->valid = 1;
            it->seen = rv_write_index_count(it->delta.idx);
            return;
        }
        it->equal = bv && c == 0;
        if (type == RV_TYPE_DELETE) {
            txn_iter_step_delta(it);
            if (it->equal)
                txn_iter_step_base(it);
            continue;
        }
        it->at_base = 0;
        it->valid = 1;
        it->seen = rv_write_index_count(it->delta.idx);
        return;
    }
}

/* Both sides to the first key >= KEY (forward). */
static void txn_iter_position_at(rv_txn_iter *it, const char *key,
                                 size_t klen)
{
    it->epoch = rv_write_index_epoch(it->delta.idx);
    it->direction = TXN_ITER_FORWARD;
    it->ops->seek(it->base, key, klen);
    if (txn_iter_check_base(it))
        return;
    rv_windex_iter_seek(&it->delta, key, klen);
}

/* Both sides to the last key <= KEY, or < KEY if STRICT (reverse). */
static void txn_iter_position_before(rv_txn_iter *it, const char *key,
                                     size_t klen, int strict)
{
    it->epoch = rv_write_index_epoch(it->delta.idx);
    it->direction = TXN_ITER_REVERSE;
    it->ops->seek_for_prev(it->base, key, klen);
    if (txn_iter_check_base(it))
        return;
    if (strict && it->ops->valid(it->base)) {
        size_t blen;
        const char *bkey = it->ops->key(it->base, &blen);
        if (rv_user_key_compare(bkey, blen, key, klen) == 0) {
            it->ops->prev(it->base);
            if (txn_iter_check_base(it))
                return;
        }
    }
    rv_windex_iter_seek_for_prev(&it->delta, key, klen);
    if (strict && rv_windex_iter_valid(&it->delta)) {
        const char *dkey, *val;
        size_t dlen, vlen;
        rv_windex_iter_entry(&it->delta, &dkey, &dlen, &val, &vlen);
        if (rv_user_key_compare(dkey, dlen, key, klen) == 0)
            rv_windex_iter_prev(&it->delta);
    }
}

/* Both sides to the first key > KEY (forward). */
static void txn_iter_position_after(rv_txn_iter *it, const char *key,
                                    size_t klen)
{
    txn_iter_position_at(it, key, klen);
    if (it->status)
        return;
    if (it->ops->valid(it->base)) {
        size_t blen;
        const char *bkey = it->ops->key(it->base, &blen);
        if (rv_user_key_compare(bkey, blen, key, klen) == 0) {
            it->ops->next(it->base);
            if (txn_iter_check_base(it))
                return;
        }
    }
    if (rv_windex_iter_valid(&it->delta)) {
        const char *dkey, *val;
        size_t dlen, vlen;
        rv_windex_iter_entry(&it->delta, &dkey, &dlen, &val, &vlen);
        if (rv_user_key_compare(dkey, dlen, key, klen) == 0)
            rv_windex_iter_next(&it->delta);
    }
}

/* ------------------------------------------------------------ lifetime */

rv_txn_iter *rv_txn_iter_new(const rv_write_index *idx,
                             const struct rv_user_iter_ops *ops, void *base)
{
    rv_txn_iter *it = calloc(1, sizeof *it);
    if (!it) {
        if (ops->destroy)
            ops->destroy(base);
        rv_error(RAVEL_NOMEM, "transaction iterator: out of memory");
        return NULL;
    }
    it->ops = ops;
    it->base = base;
    rv_windex_iter_init(&it->delta, idx);
    return it;
}

void rv_txn_iter_free(rv_txn_iter *it)
{
    if (!it)
        return;
    if (it->ops->destroy)
        it->ops->destroy(it->base);
    free(it->saved.data);
    free(it->lower.data);
    free(it->upper.data);
    free(it);
}

int rv_txn_iter_set_bounds(rv_txn_iter *it, const void *lower, size_t llen,
                           const void *upper, size_t ulen)
{
    struct txn_iter_buf lo = { 0 }, up = { 0 };
    int status = it->status;
    if ((lower && txn_iter_save(it, &lo, lower, llen)) ||
        (upper && txn_iter_save(it, &up, upper, ulen))) {
        free(lo.data);
        free(up.data);
        it->status = status; /* a failed call does not stop the iterator */
        return RAVEL_NOMEM;
    }
    free(it->lower.data);
    free(it->upper.data);
    it->lower = lo;
    it->upper = up;
    it->has_lower = lower != NULL;
    it->has_upper = upper != NULL;
    it->valid = 0;
    return RAVEL_OK;
}

/* ------------------------------------------------------------- moving */

/* Not valid either after a rollback or clear of the index since the last
** seek: the delta's position may be a freed node. */
int rv_txn_iter_valid(const rv_txn_iter *it)
{
    return it->valid && it->epoch == rv_write_index_epoch(it->delta.idx);
}

void rv_txn_iter_seek_to_first(rv_txn_iter *it)
{
    if (it->status)
        return;
    if (it->has_lower) {
        txn_iter_position_at(it, txn_iter_buf_data(&it->lower),
                             it->lower.len);
    } else {
        it->epoch = rv_write_index_epoch(it->delta.idx);
        it->direction = TXN_ITER_FORWARD;
        it->ops->seek_to_first(it->base);
        if (!txn_iter_check_base(it))
            rv_windex_iter_seek_to_first(&it->delta);
    }
    txn_iter_settle(it);
}

void rv_txn_iter_seek_to_last(rv_txn_iter *it)
{
    if (it->status)
        return;
    if (it->has_upper) {
        txn_iter_position_before(it, txn_iter_buf_data(&it->upper),
                                 it->upper.len, 1);
    } else {
        it->epoch = rv_write_index_epoch(it->delta.idx);
        it->direction = TXN_ITER_REVERSE;
        it->ops->seek_to_last(it->base);
        if (!txn_iter_check_base(it))
            rv_windex_iter_seek_to_last(&it->delta);
    }
    txn_iter_settle(it);
}

void rv_txn_iter_seek(rv_txn_iter *it, const void *key, size_t klen)
{
    if (it->status)
        return;
    if (it->has_lower && rv_user_key_compare(key, klen,
            txn_iter_buf_data(&it->lower), it->lower.len) < 0) {
        rv_txn_iter_seek_to_first(it);
        return;
    }
    /* KEY may be this iterator's own key, which moving the base frees */
    if (txn_iter_save(it, &it->saved, key, klen))
        return;
    txn_iter_position_at(it, txn_iter_buf_data(&it->saved), klen);
    txn_iter_settle(it);
}

void rv_txn_iter_seek_for_prev(rv_txn_iter *it, const void *key, size_t klen)
{
    if (it->status)
        return;
    if (it->has_upper && rv_user_key_compare(key, klen,
            txn_iter_buf_data(&it->upper), it->upper.len) >= 0) {
        rv_txn_iter_seek_to_last(it);
        return;
    }
    if (txn_iter_save(it, &it->saved, key, klen))
        return;
    txn_iter_position_before(it, txn_iter_buf_data(&it->saved), klen, 0);
    txn_iter_settle(it);
}

/* The base shows key K and the transaction has written since: the delta
** may have passed keys written between K and it, or K itself.  Puts it
** back just past K in the direction of travel. */
static void txn_iter_resync_delta(rv_txn_iter *it)
{
    size_t klen, dlen, vlen;
    const char *key = it->ops->key(it->base, &klen), *dkey, *val;
    int fwd = it->direction == TXN_ITER_FORWARD;
    if (fwd)
        rv_windex_iter_seek(&it->delta, key, klen);
    else
        rv_windex_iter_seek_for_prev(&it->delta, key, klen);
    if (!rv_windex_iter_valid(&it->delta))
        return;
    rv_windex_iter_entry(&it->delta, &dkey, &dlen, &val, &vlen);
    if (rv_user_key_compare(dkey, dlen, key, klen) == 0)
        txn_iter_step_delta(it);
}

/* Steps off the key shown in the current direction. */
static void txn_iter_advance(rv_txn_iter *it)
{
    if (it->at_base && it->seen != rv_write_index_count(it->delta.idx))
        txn_iter_resync_delta(it);
    if (it->at_base) {
        txn_iter_step_base(it);
    } else {
        txn_iter_step_delta(it);
        if (it->equal)
            txn_iter_step_base(it);
    }
    txn_iter_settle(it);
}

/* Saves the key shown; -1 if that failed (the iterator stopped). */
static int txn_iter_save_current(rv_txn_iter *it)
{
    size_t klen;
    const char *key = rv_txn_iter_key(it, &klen);
    return txn_iter_save(it, &it->saved, key, klen);
}

void rv_txn_iter_next(rv_txn_iter *it)
{
    if (!rv_txn_iter_valid(it))
        return;
    if (it->direction == TXN_ITER_FORWARD) {
        txn_iter_advance(it);
        return;
    }
    if (txn_iter_save_current(it))
        return;
    txn_iter_position_after(it, txn_iter_buf_data(&it->saved),
                            it->saved.len);
    txn_iter_settle(it);
}

void rv_txn_iter_prev(rv_txn_iter *it)
{
    if (!rv_txn_iter_valid(it))
        return;
    if (it->direction == TXN_ITER_REVERSE) {
        txn_iter_advance(it);
        return;
    }
    if (txn_iter_save_current(it))
        return;
    txn_iter_position_before(it, txn_iter_buf_data(&it->saved),
                             it->saved.len, 1);
    txn_iter_settle(it);
}

const char *rv_txn_iter_key(const rv_txn_iter *it, size_t *klen)
{
    if (it->at_base)
        return it->ops->key(it->base, klen);
    const char *key, *val;
    size_t vlen;
    rv_windex_iter_entry(&it->delta, &key, klen, &val, &vlen);
    return key;
}

const char *rv_txn_iter_value(const rv_txn_iter *it, size_t *vlen)
{
    if (it->at_base)
        return it->ops->value(it->base, vlen);
    const char *key, *val;
    size_t klen;
    rv_windex_iter_entry(&it->delta, &key, &klen, &val, vlen);
    return val ? val : "";
}

int rv_txn_iter_status(const rv_txn_iter *it)
{
    return it->status;
}

/* ------------------------------------------- the base over an rv_db_iter */

static int txn_iter_db_valid(void *b)
{
    return rv_db_iter_valid(b);
}

static void txn_iter_db_seek_to_first(void *b)
{
    rv_db_iter_seek_to_first(b);
}

static void txn_iter_db_seek_to_last(void *b)
{
    rv_db_iter_seek_to_last(b);
}

static void txn_iter_db_seek(void *b, const void *key, size_t klen)
{
    rv_db_iter_seek(b, key, klen);
}

static void txn_iter_db_seek_for_prev(void *b, const void *key, size_t klen)
{
    rv_db_iter_seek_for_prev(b, key, klen);
}

static void txn_iter_db_next(void *b)
{
    rv_db_iter_next(b);
}

static void txn_iter_db_prev(void *b)
{
    rv_db_iter_prev(b);
}

static const char *txn_iter_db_key(void *b, size_t *klen)
{
    return rv_db_iter_key(b, klen);
}

static const char *txn_iter_db_value(void *b, size_t *vlen)
{
    return rv_db_iter_value(b, vlen);
}

static int txn_iter_db_status(void *b)
{
    return rv_db_iter_status(b);
}

static void txn_iter_db_destroy(void *b)
{
    rv_db_iter_free(b);
}

static const struct rv_user_iter_ops txn_iter_db_ops = {
    .valid = txn_iter_db_valid,
    .seek_to_first = txn_iter_db_seek_to_first,
    .seek_to_last = txn_iter_db_seek_to_last,
    .seek = txn_iter_db_seek,
    .seek_for_prev = txn_iter_db_seek_for_prev,
    .next = txn_iter_db_next,
    .prev = txn_iter_db_prev,
    .key = txn_iter_db_key,
    .value = txn_iter_db_value,
    .status = txn_iter_db_status,
    .destroy = txn_iter_db_destroy,
};

const struct rv_user_iter_ops *rv_txn_db_iter_base(void)
{
    return &txn_iter_db_ops;
}
