/*
** batchrepr.c -- checking and walking a batch's representation (the layout
** is in batchrepr.h): the structural check applied to a rep read back from
** disk (rv_batch_validate) and the one-pass walk that applies a rep's ops
** (rv_batch_apply).  Does not own: building a rep (db/batch.c) or what an
** op does to a memtable (the handler decides).
*/
#include "base/batchrepr.h"
#include "base/dbformat.h"
#include "util/error.h"

/* -------------------------------------------------------------- walking */

int rv_batch_decode_op(const char *rep, size_t len, size_t *off,
                       uint32_t index, struct rv_batch_op *op)
{
    const char *limit = rep + len;
    size_t at = *off;
    const char *p = rep + at;
    uint32_t n;

    op->type = (unsigned char)*p++;
    if (op->type != RV_TYPE_PUT && op->type != RV_TYPE_DELETE &&
        op->type != RV_TYPE_RANGE_DELETE && !rv_type_is_txn_marker(op->type))
        return rv_error(RAVEL_CORRUPT, "batch: op %u has unknown type 0x%02x "
                        "at byte offset %zu", index, op->type, at);
    p = rv_get_varint32(p, limit, &n);
    if (!p)
        return rv_error(RAVEL_CORRUPT, "batch: op %u has a truncated or bad "
                        "key length at byte offset %zu", index, at + 1);
    if (n > RAVEL_MAX_KEY_SIZE)
        return rv_error(RAVEL_CORRUPT, "batch: op %u key of %u bytes at byte "
                        "offset %zu exceeds RAVEL_MAX_KEY_SIZE", index, n,
                        (size_t)(p - rep));
    if (n > (size_t)(limit - p))
        return rv_error(RAVEL_CORRUPT, "batch: op %u key of %u bytes at byte "
                        "offset %zu runs past the end of the %zu-byte batch",
                        index, n, (size_t)(p - rep), len);
    op->key = p;
    op->klen = n;
    p += n;
    op->val = NULL;
    op->vlen = 0;
    if (op->type != RV_TYPE_DELETE) {
        size_t voff = (size_t)(p - rep);
        p = rv_get_varint32(p, limit, &n);
        if (!p)
            return rv_error(RAVEL_CORRUPT, "batch: op %u has a truncated or "
                            "bad value length at byte offset %zu", index,
                            voff);
        if (n > RAVEL_MAX_VALUE_SIZE)
            return rv_error(RAVEL_CORRUPT, "batch: op %u value of %u bytes "
                            "at byte offset %zu exceeds RAVEL_MAX_VALUE_SIZE",
                            index, n, (size_t)(p - rep));
        if (n > (size_t)(limit - p))
            return rv_error(RAVEL_CORRUPT, "batch: op %u value of %u bytes "
                            "at byte offset %zu runs past the end of the "
                            "%zu-byte batch", index, n, (size_t)(p - rep),
                            len);
        op->val = p;
        op->vlen = n;
        p += n;
        if (op->type == RV_TYPE_RANGE_DELETE &&
            rv_user_key_compare(op->key, op->klen, op->val, op->vlen) >= 0)
            return rv_error(RAVEL_CORRUPT, "batch: op %u is a range delete "
                            "whose end does not sort after its begin, at "
                            "byte offset %zu", index, at);
    }
    *off = (size_t)(p - rep);
    return RAVEL_OK;
}

/* One pass over REP: checks its structure and, if FN, calls it per op. */
static int batch_walk(const char *rep, size_t len, uint64_t base_seq,
                      rv_batch_handler fn, void *ctx)
{
    if (!rep || len < RV_BATCH_HEADER_SIZE)
        return rv_error(RAVEL_CORRUPT, "batch: %zu bytes is shorter than the "
                        "%d-byte header", rep ? len : 0,
                        RV_BATCH_HEADER_SIZE);
    uint32_t count = rv_batch_rep_count(rep);
    size_t off = RV_BATCH_HEADER_SIZE;
    uint32_t i = 0;
    for (; i < count && off < len; i++) {
        struct rv_batch_op op = {0};
        int rc = rv_batch_decode_op(rep, len, &off, i, &op);
        if (rc)
            return rc;
        if (fn) {
            rc = fn(ctx, base_seq + i, op.type, op.key, op.klen, op.val,
                    op.vlen);
            if (rc)
                return rc;
        }
    }
    if (i < count)
        return rv_error(RAVEL_CORRUPT, "batch: header says %u ops but the "
                        "batch ends after %u, at byte offset %zu", count, i,
                        off);
    if (off < len)
        return rv_error(RAVEL_CORRUPT, "batch: %zu trailing bytes after the "
                        "last of %u ops, at byte offset %zu", len - off,
                        count, off);
    return RAVEL_OK;
}

int rv_batch_validate(const char *rep, size_t len)
{
    return batch_walk(rep, len, 0, NULL, NULL);
}

/* One pass: the caller built or validated REP (see batch.h), so the
** checks batch_walk makes on the way are a safety net, not a promise that
** nothing was applied from a malformed rep. */
int rv_batch_apply(const char *rep, size_t len, uint64_t base_seq,
                   rv_batch_handler fn, void *ctx)
{
    return batch_walk(rep, len, base_seq, fn, ctx);
}
