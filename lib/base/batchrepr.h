/*
** batchrepr.h -- the byte layout of a batch's representation (rep): what a
** ravel_batch holds, and the payload of a WAL record, verbatim (Pebble's
** batchrepr).  In base/ because the WAL reader checks and replays reps
** without knowing what a ravel_batch is.
**
**   rep      := sequence:fixed64  count:fixed32  op[count]
**   op       := RV_TYPE_PUT:u8     klen:varint32 key[klen] vlen:varint32 value[vlen]
**             | RV_TYPE_DELETE:u8  klen:varint32 key[klen]
**             | RV_TYPE_RANGE_DELETE:u8 blen:varint32 begin[blen]
**                                 elen:varint32 end[elen]   (begin < end)
**             | RV_TYPE_TXN_{COMMIT,PREPARE,ROLLBACK}:u8 klen:varint32
**                                 name[klen] vlen:varint32 number:fixed64
**
** The sequence is the one given to the batch's first operation; operation i
** gets sequence + i.  It is 0 in a batch that has not been written.  The
** op types are base/dbformat.h's (on disk: DO NOT CHANGE THEM).
*/
#ifndef RAVEL_BATCHREPR_H
#define RAVEL_BATCHREPR_H

#include "ravel_int.h"
#include "util/coding.h"

#define RV_BATCH_HEADER_SIZE 12

/* Called by rv_batch_apply for each op of a rep, with its sequence. */
typedef int (*rv_batch_handler)(void *ctx, uint64_t seq, int type,
                                const char *key, size_t klen,
                                const char *val, size_t vlen);

/* One op of a rep, pointing into it. */
struct rv_batch_op {
    int type;                /* RV_TYPE_PUT, RV_TYPE_DELETE,
                             ** RV_TYPE_RANGE_DELETE or a transaction's
                             ** marker (no entry) */
    const char *key, *val;   /* val: NULL for a delete; a range
                             ** delete's END */
    size_t klen, vlen;
};

/* Decodes the op starting at byte offset *OFF of REP (LEN bytes in all)
** into OP and advances *OFF past it.  INDEX (the op's number) only names
** it in the message.  RAVEL_CORRUPT (message as rv_batch_validate's) if
** it is malformed.  For a reader that needs one op, not a walk: the
** transaction's write index (txn/write_index.c) keeps ops by offset. */
RAVEL_PRIVATE int rv_batch_decode_op(const char *rep, size_t len, size_t *off,
                                     uint32_t index, struct rv_batch_op *op);

/* Checks the structure of REP (LEN bytes) without applying anything.
** Returns RAVEL_CORRUPT (message: "batch: what is wrong, at byte offset
** N") if it is malformed: shorter than the header, an unknown op type, a
** truncated varint/key/value, a key or value above its limit, trailing
** bytes, or an op count that differs from the header's. */
RAVEL_PRIVATE int rv_batch_validate(const char *rep, size_t len);

/* Walks the ops of REP (LEN bytes) in one pass, calling FN for each with
** sequence base_seq + i; stops at the first non-zero return of FN and
** returns it.  Callers pass reps known to be well formed -- built by
** rv_batch_add (the write path) or checked by rv_batch_validate (WAL
** replay) -- so the ops are walked once.  It is still bounds checked: a
** malformed rep returns RAVEL_CORRUPT with the same message as
** rv_batch_validate, but possibly after FN has applied the ops before the
** damage, so all-or-nothing for a rep from disk comes from validating
** first. */
RAVEL_PRIVATE int rv_batch_apply(const char *rep, size_t len,
                                 uint64_t base_seq, rv_batch_handler fn,
                                 void *ctx);

static inline uint64_t rv_batch_rep_sequence(const char *rep)
{
    return rv_get_fixed64(rep);
}
static inline uint32_t rv_batch_rep_count(const char *rep)
{
    return rv_get_fixed32(rep + 8);
}

#endif /* RAVEL_BATCHREPR_H */
