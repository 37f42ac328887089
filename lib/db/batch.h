/*
** batch.h -- write batches: the unit of atomicity.  A batch holds its
** representation (rep), laid out as base/batchrepr.h says and written
** verbatim as the payload of a WAL record.
*/
#ifndef RAVEL_BATCH_H
#define RAVEL_BATCH_H

#include "ravel_int.h"
#include "base/batchrepr.h"

struct ravel_batch {
    char *rep;          /* RV_BATCH_HEADER_SIZE + ops; heap or inline_rep */
    size_t len;         /* bytes used in rep */
    size_t cap;         /* bytes allocated for rep */
    uint32_t count;     /* ops, mirrored in the rep header */
    char inline_rep[64]; /* small batches (ravel_put) need no allocation */
};

/* Prepares a batch living on the caller's stack (no allocation until it
** outgrows inline_rep); release with rv_batch_release. */
RAVEL_PRIVATE void rv_batch_init(struct ravel_batch *b);
RAVEL_PRIVATE void rv_batch_release(struct ravel_batch *b);

/* Appends one op; RAVEL_INVALID for oversize keys/values/batches (message
** names the limit), RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_batch_add(struct ravel_batch *b, int type,
                               const void *key, size_t klen,
                               const void *val, size_t vlen);

/* Appends a range delete of [BEGIN, END) (db/batch.c): RAVEL_INVALID
** (message naming FN) if BEGIN sorts after END; nothing and RAVEL_OK if
** they are equal (an empty range, as RocksDB treats it). */
RAVEL_PRIVATE int rv_batch_add_range_delete(struct ravel_batch *b,
                                            const void *begin, size_t blen,
                                            const void *end, size_t elen,
                                            const char *fn);

/* 1 if B holds a range delete (a walk of its ops). */
RAVEL_PRIVATE int rv_batch_has_range_delete(const struct ravel_batch *b);

/* Cuts B back to its first COUNT ops, which end at byte LEN of the rep
** (a length and count B had before: a transaction's savepoint).  Keeps
** the allocation. */
RAVEL_PRIVATE void rv_batch_truncate(struct ravel_batch *b, size_t len,
                                     uint32_t count);

/* Makes B hold a copy of REP (LEN bytes, a rep already validated) with
** its header's count set to COUNT: the first COUNT ops of REP must end at
** LEN.  RAVEL_NOMEM (B is then empty). */
RAVEL_PRIVATE int rv_batch_assign(struct ravel_batch *b, const char *rep,
                                  size_t len, uint32_t count);

#endif /* RAVEL_BATCH_H */
