/*
** shim.c -- the shims declared in shim.h: each makes one ravel call and, on
** failure, copies the calling OS thread's message before returning to Go.
*/
#include <string.h>

#include "shim.h"

/* A malloc'd copy of this thread's current ravel message, or NULL. */
static char *message_copy(void)
{
    size_t len = ravel_errmsg_r(NULL, 0);
    char *msg = malloc(len + 1);
    if (msg)
        ravel_errmsg_r(msg, len + 1);
    return msg;
}

static shim_status status_of(int rc)
{
    shim_status s = {rc, NULL};
    if (rc != RAVEL_OK)
        s.msg = message_copy();
    return s;
}

/* RC and HANDLE from a call that made HANDLE: call first, then this (C
** leaves the order of a call's arguments unspecified). */
static shim_handle handle_of(int rc, void *handle)
{
    shim_handle h = {rc, NULL, rc == RAVEL_OK ? handle : NULL};
    if (rc != RAVEL_OK)
        h.msg = message_copy();
    return h;
}

/* ------------------------------------------------------------- options */

shim_handle shim_options_new(void)
{
    ravel_options *o = NULL;
    int rc = ravel_options_new(&o);
    return handle_of(rc, o);
}

shim_status shim_options_set(ravel_options *o, const char *name,
                             const char *value)
{
    return status_of(ravel_options_set(o, name, value));
}

shim_status shim_options_parse(ravel_options *o, const char *text)
{
    return status_of(ravel_options_parse(o, text));
}

shim_value shim_options_get(const ravel_options *o, const char *name)
{
    char *text = NULL;
    shim_value v = {ravel_options_get(o, name, &text), NULL, NULL, 0};
    if (v.rc != RAVEL_OK) {
        v.msg = message_copy();
        ravel_free(text);
        return v;
    }
    v.data = text;
    v.len = text ? strlen(text) : 0;
    return v;
}

shim_status shim_options_set_cache(ravel_options *o, ravel_cache *c)
{
    return status_of(ravel_options_set_cache(o, c));
}

shim_status shim_options_set_write_controller(ravel_options *o,
                                              ravel_write_controller *wc)
{
    return status_of(ravel_options_set_write_controller(o, wc));
}

/* ------------------------------------------------------ shared objects */

shim_handle shim_cache_new(uint64_t capacity)
{
    ravel_cache *c = NULL;
    int rc = ravel_cache_new(capacity, &c);
    return handle_of(rc, c);
}

shim_handle shim_write_controller_new(uint64_t delayed_write_rate)
{
    ravel_write_controller *wc = NULL;
    int rc = ravel_write_controller_new(delayed_write_rate, &wc);
    return handle_of(rc, wc);
}

/* ------------------------------------------------------------ database */

shim_handle shim_open(const char *dir, const ravel_options *o)
{
    ravel_db *db = NULL;
    int rc = ravel_open(dir, o, &db);
    return handle_of(rc, db);
}

shim_status shim_close(ravel_db *db)
{
    return status_of(ravel_close(db));
}

shim_status shim_destroy(const char *dir)
{
    return status_of(ravel_destroy(dir));
}

shim_status shim_put(ravel_db *db, int flags, const void *key, size_t klen,
                     const void *val, size_t vlen)
{
    return status_of(ravel_put(db, flags, key, klen, val, vlen));
}

shim_status shim_delete(ravel_db *db, int flags, const void *key,
                        size_t klen)
{
    return status_of(ravel_delete(db, flags, key, klen));
}

shim_status shim_write(ravel_db *db, int flags, ravel_batch *b)
{
    return status_of(ravel_write(db, flags, b));
}

/* The engine lookups this OS thread made through the shims: each ravel
** get call counts one (a multi-get one per key).  Thread-local, so
** counting costs no shared cache line; read by the tests (lookups.go). */
static _Thread_local unsigned long shim_lookups_here;

unsigned long shim_lookups(void)
{
    return shim_lookups_here;
}

/* A found value of at most CAP bytes is copied into BUF and ravel's copy
** freed (DATA NULL); a longer one is handed over in DATA. */
static void value_place(shim_value *v, void *buf, size_t cap)
{
    if (v->rc != RAVEL_OK || v->len > cap)
        return;
    if (v->len)
        memcpy(buf, v->data, v->len);
    ravel_free(v->data);
    v->data = NULL;
}

/* RAVEL_NOTFOUND from a get sets no message: none is copied for it. */
shim_value shim_get_copy(ravel_db *db, const ravel_snapshot *snap,
                         const void *key, size_t klen, void *buf,
                         size_t cap, int into_first)
{
    shim_value v = {0, NULL, NULL, 0};
    if (into_first && cap) {
        shim_lookups_here++;
        v.rc = ravel_get_into(db, snap, key, klen, buf, cap, &v.len);
        if (v.rc != RAVEL_OK || v.len <= cap)
            goto out;
    }
    shim_lookups_here++;
    v.rc = ravel_get(db, snap, key, klen, &v.data, &v.len);
    value_place(&v, buf, cap);
out:
    if (v.rc != RAVEL_OK && v.rc != RAVEL_NOTFOUND)
        v.msg = message_copy();
    return v;
}

shim_status shim_multi_get(ravel_db *db, const ravel_snapshot *snap,
                           size_t n, const void *const *keys,
                           const size_t *klens, void **vals, size_t *vlens,
                           int *rcs)
{
    ravel_readoptions *ro = NULL;
    int rc = RAVEL_OK;
    if (snap) {
        rc = ravel_readoptions_new(&ro);
        if (rc == RAVEL_OK)
            rc = ravel_readoptions_set_snapshot(ro, snap);
    }
    if (rc == RAVEL_OK) {
        shim_lookups_here += n;
        rc = ravel_multi_get(db, ro, n, keys, klens, vals, vlens, rcs);
    }
    shim_status s = status_of(rc); /* the message before any other call */
    ravel_readoptions_free(ro);
    return s;
}

void shim_free_values(void **vals, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ravel_free(vals[i]);
}

shim_status shim_flush_wal(ravel_db *db, int sync)
{
    return status_of(ravel_flush_wal(db, sync));
}

shim_status shim_flush(ravel_db *db, int flags)
{
    return status_of(ravel_flush(db, flags));
}

/* HAS_BEGIN / HAS_END tell an open end (NULL) from the empty key, which Go
** passes as a zero-length slice that may have no address. */
shim_status shim_compact_range(ravel_db *db, const void *begin, size_t blen,
                               int has_begin, const void *end, size_t elen,
                               int has_end)
{
    static const char empty_key[1];
    if (has_begin && !begin)
        begin = empty_key;
    if (has_end && !end)
        end = empty_key;
    return status_of(ravel_compact_range(db, has_begin ? begin : NULL, blen,
                                         has_end ? end : NULL, elen));
}

shim_status shim_verify(ravel_db *db)
{
    return status_of(ravel_verify(db));
}

shim_value shim_property(ravel_db *db, const char *name)
{
    char *text = NULL;
    shim_value v = {ravel_property(db, name, &text), NULL, NULL, 0};
    if (v.rc != RAVEL_OK) {
        v.msg = message_copy();
        ravel_free(text);
        return v;
    }
    v.data = text;
    v.len = text ? strlen(text) : 0;
    return v;
}

/* ------------------------------------------------------------- batches */

shim_handle shim_batch_new(void)
{
    ravel_batch *b = NULL;
    int rc = ravel_batch_new(&b);
    return handle_of(rc, b);
}

shim_status shim_batch_put(ravel_batch *b, const void *key, size_t klen,
                           const void *val, size_t vlen)
{
    return status_of(ravel_batch_put(b, key, klen, val, vlen));
}

shim_status shim_batch_delete(ravel_batch *b, const void *key, size_t klen)
{
    return status_of(ravel_batch_delete(b, key, klen));
}

shim_status shim_batch_clear(ravel_batch *b)
{
    return status_of(ravel_batch_clear(b));
}

/* ------------------------------------------- snapshots and iterators */

shim_handle shim_snapshot_acquire(ravel_db *db)
{
    ravel_snapshot *s = NULL;
    int rc = ravel_snapshot_acquire(db, &s);
    return handle_of(rc, s);
}

shim_status shim_snapshot_release(ravel_db *db, ravel_snapshot *snap)
{
    return status_of(ravel_snapshot_release(db, snap));
}

shim_handle shim_iter_new(ravel_db *db, const ravel_snapshot *snap,
                          const void *lower, size_t llen, int has_lower,
                          const void *upper, size_t ulen, int has_upper)
{
    ravel_readoptions *ro = NULL;
    ravel_iter *it = NULL;
    int rc = ravel_readoptions_new(&ro);
    if (rc == RAVEL_OK)
        rc = ravel_readoptions_set_snapshot(ro, snap);
    /* NULL removes a bound: an empty one is given as "" */
    if (rc == RAVEL_OK && has_lower)
        rc = ravel_readoptions_set_iterate_lower_bound(
            ro, llen ? lower : "", llen);
    if (rc == RAVEL_OK && has_upper)
        rc = ravel_readoptions_set_iterate_upper_bound(
            ro, ulen ? upper : "", ulen);
    if (rc == RAVEL_OK)
        rc = ravel_iter_new_opt(db, ro, &it);
    shim_handle h = handle_of(rc, it); /* the message before any other call */
    ravel_readoptions_free(ro);
    return h;
}

static int iter_step(ravel_iter *it, int move, const void *key, size_t klen)
{
    switch (move) {
    case SHIM_SEEK:          return ravel_iter_seek(it, key, klen);
    case SHIM_SEEK_FOR_PREV: return ravel_iter_seek_for_prev(it, key, klen);
    case SHIM_SEEK_TO_FIRST: return ravel_iter_seek_to_first(it);
    case SHIM_SEEK_TO_LAST:  return ravel_iter_seek_to_last(it);
    case SHIM_NEXT:          return ravel_iter_next(it);
    case SHIM_PREV:          return ravel_iter_prev(it);
    default:                 return RAVEL_INVALID; /* not a move */
    }
}

shim_position shim_iter_move(ravel_iter *it, int move, const void *key,
                             size_t klen)
{
    shim_position p = {0, NULL, 0, NULL, 0, NULL, 0};
    p.rc = iter_step(it, move, key, klen);
    if (p.rc != RAVEL_OK)
        p.msg = message_copy();
    p.valid = ravel_iter_valid(it);
    if (p.valid) {
        p.key = ravel_iter_key(it, &p.klen);
        p.value = ravel_iter_value(it, &p.vlen);
    }
    return p;
}

/* -------------------------------------------------------- transactions */

shim_handle shim_txn_begin(ravel_db *db, int flags)
{
    ravel_txn *t = NULL;
    int rc = ravel_txn_begin(db, flags, &t);
    return handle_of(rc, t);
}

shim_handle shim_txn_recover(ravel_db *db, const char *name)
{
    ravel_txn *t = NULL;
    int rc = ravel_txn_recover(db, name, &t);
    return handle_of(rc, t);
}

shim_value shim_txn_get(ravel_txn *t, int for_update, const void *key,
                        size_t klen, void *buf, size_t cap)
{
    shim_value v = {0, NULL, NULL, 0};
    shim_lookups_here++;
    v.rc = for_update ? ravel_txn_get_for_update(t, key, klen, &v.data, &v.len)
                      : ravel_txn_get(t, key, klen, &v.data, &v.len);
    if (v.rc != RAVEL_OK && v.rc != RAVEL_NOTFOUND)
        v.msg = message_copy();
    value_place(&v, buf, cap);
    return v;
}

shim_status shim_txn_put(ravel_txn *t, const void *key, size_t klen,
                         const void *val, size_t vlen)
{
    return status_of(ravel_txn_put(t, key, klen, val, vlen));
}

shim_status shim_txn_delete(ravel_txn *t, const void *key, size_t klen)
{
    return status_of(ravel_txn_delete(t, key, klen));
}

shim_status shim_txn_control(ravel_txn *t, int op)
{
    switch (op) {
    case SHIM_TXN_SAVEPOINT:
        return status_of(ravel_txn_savepoint(t));
    case SHIM_TXN_ROLLBACK_TO_SAVEPOINT:
        return status_of(ravel_txn_rollback_to_savepoint(t));
    case SHIM_TXN_PREPARE:
        return status_of(ravel_txn_prepare(t));
    case SHIM_TXN_COMMIT:
        return status_of(ravel_txn_commit(t));
    case SHIM_TXN_ROLLBACK:
        return status_of(ravel_txn_rollback(t));
    default: {
        shim_status s = {RAVEL_INVALID, NULL};
        return s; /* not an operation */
    }
    }
}

shim_status shim_txn_set_name(ravel_txn *t, const char *name)
{
    return status_of(ravel_txn_set_name(t, name));
}

shim_handle shim_txn_iter_new(ravel_txn *t, const void *lower, size_t llen,
                              int has_lower, const void *upper, size_t ulen,
                              int has_upper)
{
    ravel_iter *it = NULL;
    int rc = ravel_txn_iter_new(t, &it);
    /* NULL removes a bound: an empty one is given as "" */
    if (rc == RAVEL_OK && (has_lower || has_upper))
        rc = ravel_iter_set_bounds(it, has_lower ? (llen ? lower : "") : NULL,
                                   llen, has_upper ? (ulen ? upper : "") : NULL,
                                   ulen);
    shim_handle h = handle_of(rc, it); /* the message before any other call */
    if (rc != RAVEL_OK)
        ravel_iter_free(it);
    return h;
}
