/*
** batch.c -- write batches: building a rep (the layout is base/batchrepr.h's)
** and the public ravel_batch calls.
**
** Owns: the size limits on keys, values and whole batches as a batch is
** built.  Does not own: the layout, the check of a rep read back from disk
** or the walk that applies one (base/batchrepr.c), sequence numbers (the
** write group fills the header's sequence when the batch is written).
**
** A small batch (one ravel_put) lives in inline_rep and needs no
** allocation; a bigger one moves to the heap and doubles as it grows.
*/
#include "db/batch.h"
#include "base/dbformat.h"
#include "base/batchrepr.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- building */

void rv_batch_init(struct ravel_batch *b)
{
    b->rep = b->inline_rep;
    b->cap = sizeof b->inline_rep;
    b->len = RV_BATCH_HEADER_SIZE;
    b->count = 0;
    memset(b->rep, 0, RV_BATCH_HEADER_SIZE);
}

void rv_batch_release(struct ravel_batch *b)
{
    if (b->rep != b->inline_rep)
        free(b->rep);
    rv_batch_init(b);
}

/* Makes room for NEED more bytes in B's rep. */
static int batch_reserve(struct ravel_batch *b, size_t need)
{
    if (b->cap - b->len >= need)
        return RAVEL_OK;
    size_t cap = b->cap * 2;
    while (cap - b->len < need)
        cap *= 2;
    char *rep;
    if (b->rep == b->inline_rep) {
        rep = malloc(cap);
        if (rep)
            memcpy(rep, b->rep, b->len);
    } else {
        rep = realloc(b->rep, cap);
    }
    if (!rep)
        return rv_error(RAVEL_NOMEM, "batch: out of memory growing to %zu "
                        "bytes", cap);
    b->rep = rep;
    b->cap = cap;
    return RAVEL_OK;
}

int rv_batch_add(struct ravel_batch *b, int type, const void *key,
                 size_t klen, const void *val, size_t vlen)
{
    if (type != RV_TYPE_PUT && type != RV_TYPE_DELETE &&
        type != RV_TYPE_RANGE_DELETE && !rv_type_is_txn_marker(type))
        return rv_error(RAVEL_INVALID, "batch: unknown op type %d", type);
    if (!key && klen)
        return rv_error(RAVEL_INVALID, "batch: NULL key with length %zu",
                        klen);
    if (type != RV_TYPE_DELETE && !val && vlen)
        return rv_error(RAVEL_INVALID, "batch: NULL value with length %zu",
                        vlen);
    if (klen > RAVEL_MAX_KEY_SIZE)
        return rv_error(RAVEL_INVALID, "batch: key of %zu bytes exceeds "
                        "RAVEL_MAX_KEY_SIZE (%u bytes)", klen,
                        RAVEL_MAX_KEY_SIZE);
    if (type == RV_TYPE_DELETE)
        vlen = 0;
    if (type == RV_TYPE_RANGE_DELETE && vlen > RAVEL_MAX_KEY_SIZE)
        return rv_error(RAVEL_INVALID, "batch: range delete end of %zu "
                        "bytes exceeds RAVEL_MAX_KEY_SIZE (%u bytes)", vlen,
                        RAVEL_MAX_KEY_SIZE);
    if (vlen > RAVEL_MAX_VALUE_SIZE)
        return rv_error(RAVEL_INVALID, "batch: value of %zu bytes exceeds "
                        "RAVEL_MAX_VALUE_SIZE (%u bytes)", vlen,
                        RAVEL_MAX_VALUE_SIZE);
    if (b->count == UINT32_MAX)
        return rv_error(RAVEL_INVALID, "batch: more than %u operations",
                        UINT32_MAX);

    /* Sizes are bounded above, so this sum cannot overflow. */
    size_t need = 1 + (size_t)rv_varint32_length((uint32_t)klen) + klen;
    if (type != RV_TYPE_DELETE)
        need += (size_t)rv_varint32_length((uint32_t)vlen) + vlen;
    if (b->len + need > RAVEL_MAX_BATCH_SIZE)
        return rv_error(RAVEL_INVALID, "batch: %zu bytes would exceed "
                        "RAVEL_MAX_BATCH_SIZE (%u bytes)", b->len + need,
                        RAVEL_MAX_BATCH_SIZE);
    int rc = batch_reserve(b, need);
    if (rc)
        return rc;

    char *p = b->rep + b->len;
    *p++ = (char)type;
    p += rv_put_varint32(p, (uint32_t)klen);
    if (klen)
        memcpy(p, key, klen);
    p += klen;
    if (type != RV_TYPE_DELETE) {
        p += rv_put_varint32(p, (uint32_t)vlen);
        if (vlen)
            memcpy(p, val, vlen);
        p += vlen;
    }
    b->len = (size_t)(p - b->rep);
    b->count++;
    rv_put_fixed32(b->rep + 8, b->count);
    return RAVEL_OK;
}

void rv_batch_truncate(struct ravel_batch *b, size_t len, uint32_t count)
{
    b->len = len;
    b->count = count;
    rv_put_fixed32(b->rep + 8, count);
}

/* ----------------------------------------------------------- public API */

int ravel_batch_new(ravel_batch **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_batch_new: NULL out pointer");
    *out = NULL;
    struct ravel_batch *b = malloc(sizeof *b);
    if (!b)
        return rv_error(RAVEL_NOMEM, "ravel_batch_new: out of memory");
    rv_batch_init(b);
    *out = b;
    return RAVEL_OK;
}

void ravel_batch_free(ravel_batch *b)
{
    if (!b)
        return;
    rv_batch_release(b);
    free(b);
}

int ravel_batch_put(ravel_batch *b, const void *key, size_t klen,
                    const void *val, size_t vlen)
{
    if (!b)
        return rv_error(RAVEL_INVALID, "ravel_batch_put: NULL batch");
    return rv_batch_add(b, RV_TYPE_PUT, key, klen, val, vlen);
}

int ravel_batch_delete(ravel_batch *b, const void *key, size_t klen)
{
    if (!b)
        return rv_error(RAVEL_INVALID, "ravel_batch_delete: NULL batch");
    return rv_batch_add(b, RV_TYPE_DELETE, key, klen, NULL, 0);
}

int rv_batch_add_range_delete(struct ravel_batch *b, const void *begin,
                               size_t blen, const void *end, size_t elen,
                               const char *fn)
{
    if ((!begin && blen) || (!end && elen))
        return rv_error(RAVEL_INVALID, "%s: NULL %s with length %zu", fn,
                        !begin && blen ? "begin" : "end",
                        !begin && blen ? blen : elen);
    int cmp = rv_user_key_compare(begin ? begin : "", blen, end ? end : "",
                                  elen);
    if (cmp > 0)
        return rv_error(RAVEL_INVALID, "%s: begin sorts after end (the "
                        "range [begin, end) would be reversed)", fn);
    if (cmp == 0)
        return RAVEL_OK; /* [k, k) is empty: nothing to record (RocksDB) */
    return rv_batch_add(b, RV_TYPE_RANGE_DELETE, begin ? begin : "", blen,
                        end ? end : "", elen);
}

static int batch_is_range_delete(void *ctx, uint64_t seq, int type,
                                 const char *key, size_t klen,
                                 const char *val, size_t vlen)
{
    (void)ctx, (void)seq, (void)key, (void)klen, (void)val, (void)vlen;
    return type == RV_TYPE_RANGE_DELETE;
}

int rv_batch_has_range_delete(const struct ravel_batch *b)
{
    return rv_batch_apply(b->rep, b->len, 0, batch_is_range_delete, NULL) ==
           1;
}

int ravel_batch_delete_range(ravel_batch *b, const void *begin, size_t blen,
                             const void *end, size_t elen)
{
    if (!b)
        return rv_error(RAVEL_INVALID, "ravel_batch_delete_range: NULL "
                        "batch");
    return rv_batch_add_range_delete(b, begin, blen, end, elen,
                                     "ravel_batch_delete_range");
}

/* Keeps the allocation: a cleared batch is usually refilled. */
int ravel_batch_clear(ravel_batch *b)
{
    if (!b)
        return rv_error(RAVEL_INVALID, "ravel_batch_clear: NULL batch");
    b->len = RV_BATCH_HEADER_SIZE;
    b->count = 0;
    memset(b->rep, 0, RV_BATCH_HEADER_SIZE);
    return RAVEL_OK;
}

uint32_t ravel_batch_count(const ravel_batch *b)
{
    return b ? b->count : 0;
}

/* -------------------------------------- reading back and serializing */

int rv_batch_assign(struct ravel_batch *b, const char *rep, size_t len,
                    uint32_t count)
{
    b->len = RV_BATCH_HEADER_SIZE;
    int rc = batch_reserve(b, len - RV_BATCH_HEADER_SIZE);
    if (rc)
        return rc;
    memcpy(b->rep, rep, len);
    b->len = len;
    b->count = count;
    rv_put_fixed32(b->rep + 8, count);
    return RAVEL_OK;
}

int ravel_batch_next_op(const ravel_batch *b, size_t *pos, int *op,
                        const void **key, size_t *klen, const void **val,
                        size_t *vlen)
{
    if (!b || !pos || !op || !key || !klen || !val || !vlen)
        return rv_error(RAVEL_INVALID, "ravel_batch_next_op: NULL argument");
    size_t at = *pos < RV_BATCH_HEADER_SIZE ? RV_BATCH_HEADER_SIZE : *pos;
    if (at >= b->len)
        return RAVEL_NOTFOUND;
    struct rv_batch_op o;
    int rc = rv_batch_decode_op(b->rep, b->len, &at, 0, &o);
    if (rc)
        return rc; /* a position not at an op's start */
    if (rv_type_is_txn_marker(o.type))
        return rv_error(RAVEL_CORRUPT, "ravel_batch_next_op: a transaction "
                        "marker (type 0x%02x) at byte offset %zu", o.type,
                        *pos);
    *pos = at;
    *op = o.type == RV_TYPE_PUT            ? RAVEL_OP_PUT
          : o.type == RV_TYPE_RANGE_DELETE ? RAVEL_OP_DELETE_RANGE
                                           : RAVEL_OP_DELETE;
    *key = o.key;
    *klen = o.klen;
    *val = o.type != RV_TYPE_DELETE ? o.val : NULL;
    *vlen = o.vlen;
    return RAVEL_OK;
}

const void *ravel_batch_data(const ravel_batch *b, size_t *len)
{
    if (len)
        *len = b ? b->len : 0;
    return b ? b->rep : NULL;
}

uint64_t ravel_batch_sequence(const ravel_batch *b)
{
    return b ? rv_batch_rep_sequence(b->rep) : 0;
}

/* Refuses the transaction markers only ravel's WAL may hold. */
static int batch_refuse_marker(void *ctx, uint64_t seq, int type,
                               const char *key, size_t klen, const char *val,
                               size_t vlen)
{
    (void)key, (void)klen, (void)val, (void)vlen;
    uint32_t *index = ctx;
    if (rv_type_is_txn_marker(type))
        return rv_error(RAVEL_CORRUPT, "ravel_batch_from_data: op %llu is a "
                        "transaction marker (type 0x%02x), which only "
                        "ravel's own WAL records hold",
                        (unsigned long long)seq, type);
    (*index)++;
    return RAVEL_OK;
}

int ravel_batch_from_data(const void *data, size_t len, ravel_batch **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_batch_from_data: NULL out "
                        "pointer");
    *out = NULL;
    if (!data && len)
        return rv_error(RAVEL_INVALID, "ravel_batch_from_data: NULL data "
                        "with length %zu", len);
    if (len > RAVEL_MAX_BATCH_SIZE)
        return rv_error(RAVEL_INVALID, "ravel_batch_from_data: %zu bytes "
                        "exceed RAVEL_MAX_BATCH_SIZE (%u bytes)", len,
                        RAVEL_MAX_BATCH_SIZE);
    int rc = rv_batch_validate(data, len);
    uint32_t ops = 0;
    if (rc == RAVEL_OK)
        rc = rv_batch_apply(data, len, 0, batch_refuse_marker, &ops);
    if (rc)
        return rc;
    ravel_batch *b;
    rc = ravel_batch_new(&b);
    if (rc == RAVEL_OK)
        rc = rv_batch_assign(b, data, len, rv_batch_rep_count(data));
    if (rc) {
        ravel_batch_free(b);
        return rc;
    }
    *out = b;
    return RAVEL_OK;
}
