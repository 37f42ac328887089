/*
** write_index.h -- a transaction's own writes, indexed (RocksDB's
** WriteBatchWithIndex in spirit).
**
** Owns: the transaction's batch (a ravel_batch, the rep layout of
** base/batchrepr.h, so commit hands it to the write path as it is), an
** index from each user key the transaction wrote to its latest op in that
** batch, the savepoint stack, and the count of bytes both hold.  Does not
** own: locks, the snapshot, the merged view over the database (txn_iter.h
** builds it from the positions below).
**
** The writes are held once.  Every put or delete is appended to the batch,
** a rewrite of a key too: the batch keeps both ops (RocksDB's
** overwrite_key=false), the later one gets the higher sequence at commit
** and so wins, and a rollback to a savepoint between them finds the
** earlier one still there.  The index holds no key or value bytes: an
** index node names a record of the batch by its byte offset, and keys are
** compared by reading them there.
**
** Not thread-safe: one transaction, one thread at a time.
*/
#ifndef RAVEL_WRITE_INDEX_H
#define RAVEL_WRITE_INDEX_H

#include "ravel_int.h"
#include "db/batch.h"

typedef struct rv_write_index rv_write_index;
struct rv_windex_node;

/* rv_write_index_get's answers. */
enum rv_windex_found {
    RV_WINDEX_NOT_IN_TXN = 0, /* the transaction did not write the key */
    RV_WINDEX_FOUND = 1,      /* it did: *type says put or delete */
};

/* NULL when out of memory (message set). */
RAVEL_PRIVATE rv_write_index *rv_write_index_new(void);
RAVEL_PRIVATE void rv_write_index_free(rv_write_index *idx);

/* Appends a put / a delete of KEY to the batch and makes it the key's
** latest op.  RAVEL_INVALID for a key, value or batch over its limit
** (db/batch.h's messages), RAVEL_NOMEM; nothing changed then. */
RAVEL_PRIVATE int rv_write_index_put(rv_write_index *idx, const void *key,
                                     size_t klen, const void *val,
                                     size_t vlen);
RAVEL_PRIVATE int rv_write_index_delete(rv_write_index *idx, const void *key,
                                        size_t klen);

/* The transaction's latest op on KEY: RV_WINDEX_FOUND with *TYPE
** RV_TYPE_PUT (*VAL, *VLEN: the value, inside the batch) or RV_TYPE_DELETE
** (*VAL NULL, *VLEN 0); or RV_WINDEX_NOT_IN_TXN.  The value stays valid
** until the next write, rollback or clear. */
RAVEL_PRIVATE int rv_write_index_get(const rv_write_index *idx,
                                     const void *key, size_t klen, int *type,
                                     const char **val, size_t *vlen);

/* Savepoints nest.  Push remembers where the batch ends; rollback_to
** undoes every write since the newest savepoint (batch cut back to that
** length, each key written since back to its op before it, or out of the
** index) and removes the savepoint; pop removes it and keeps the writes.
** Push: RAVEL_NOMEM.  Rollback and pop: RAVEL_NOTFOUND with no savepoint
** (message set), else RAVEL_OK. */
RAVEL_PRIVATE int rv_write_index_savepoint(rv_write_index *idx);
RAVEL_PRIVATE int rv_write_index_rollback_to_savepoint(rv_write_index *idx);
RAVEL_PRIVATE int rv_write_index_pop_savepoint(rv_write_index *idx);
RAVEL_PRIVATE int rv_write_index_savepoint_count(const rv_write_index *idx);

/* Forgets every write and savepoint; keeps the batch's allocation. */
RAVEL_PRIVATE void rv_write_index_clear(rv_write_index *idx);

/* The batch, for commit (the write path fills its header's sequence).
** Writing to it other than through this index breaks the index. */
RAVEL_PRIVATE struct ravel_batch *rv_write_index_batch(rv_write_index *idx);
/* Ops in the batch (a rewritten key counts each time). */
RAVEL_PRIVATE uint32_t rv_write_index_count(const rv_write_index *idx);
/* Distinct keys the transaction wrote (puts and deletes). */
RAVEL_PRIVATE size_t rv_write_index_keys(const rv_write_index *idx);
/* Bytes held: the batch's allocation, the index's nodes and per-op
** records, the savepoint stack.  What a caller compares with its limit
** (the batch alone is refused past RAVEL_MAX_BATCH_SIZE). */
RAVEL_PRIVATE size_t rv_write_index_bytes(const rv_write_index *idx);

/* Changes at each rollback to a savepoint and each clear: what a position
** held before points to freed memory then (see below). */
RAVEL_PRIVATE uint64_t rv_write_index_epoch(const rv_write_index *idx);

/* ------------------------------------------------ positions, in key order
**
** A plain value over the index's keys, for the merged iterator.  A write
** leaves a position where it was (nodes are never moved; a key written
** after it going forward is met later); key and value pointers taken
** before the write are stale (the batch may have moved).  A rollback or
** clear (a new epoch) invalidates every position: seek again. */
struct rv_windex_iter {
    const rv_write_index *idx;
    const struct rv_windex_node *node; /* NULL: not valid */
};

RAVEL_PRIVATE void rv_windex_iter_init(struct rv_windex_iter *it,
                                       const rv_write_index *idx);
RAVEL_PRIVATE int rv_windex_iter_valid(const struct rv_windex_iter *it);
RAVEL_PRIVATE void rv_windex_iter_seek_to_first(struct rv_windex_iter *it);
RAVEL_PRIVATE void rv_windex_iter_seek_to_last(struct rv_windex_iter *it);
/* First key >= KEY. */
RAVEL_PRIVATE void rv_windex_iter_seek(struct rv_windex_iter *it,
                                       const void *key, size_t klen);
/* Last key <= KEY. */
RAVEL_PRIVATE void rv_windex_iter_seek_for_prev(struct rv_windex_iter *it,
                                                const void *key, size_t klen);
RAVEL_PRIVATE void rv_windex_iter_next(struct rv_windex_iter *it);
/* A search from the top (nodes have no back pointers). */
RAVEL_PRIVATE void rv_windex_iter_prev(struct rv_windex_iter *it);
/* The key's latest op: returns its type (RV_TYPE_PUT / RV_TYPE_DELETE),
** sets the key and, for a put, the value (pointers into the batch). */
RAVEL_PRIVATE int rv_windex_iter_entry(const struct rv_windex_iter *it,
                                       const char **key, size_t *klen,
                                       const char **val, size_t *vlen);

#endif /* RAVEL_WRITE_INDEX_H */
