/*
** txn_iter.h -- a transaction's view as an iterator of user keys: its own
** writes (write_index.h) merged over the database's view at its snapshot
** (RocksDB's BaseDeltaIterator).
**
** Owns: merging the two in key order in both directions, hiding base keys
** the transaction deleted, showing its puts over or between base keys,
** bounds, and stopping at the base's first error.  Does not own: the base
** (any iterator of user keys behind rv_user_iter_ops; rv_txn_db_iter_base()
** wraps the database's rv_db_iter) or the write index.
**
** The base's first error stops the iterator for good, as db/db_iter.c
** does: it turns invalid, every positioning call leaves it so, status
** says why, and nothing found in the move that met the error is shown.
**
** The transaction may write while the iterator is open (read, modify,
** write as it scans): the iterator stays where it is and moves on through
** the index as it is then, so a key written ahead of it in its direction
** is shown when reached, one behind it is not; key and value pointers
** taken before the write are stale.  A rollback to a savepoint or a clear
** of the index makes the iterator not valid until the next seek.
*/
#ifndef RAVEL_TXN_ITER_H
#define RAVEL_TXN_ITER_H

#include "ravel_int.h"
#include "db/db_read.h"
#include "txn/write_index.h"

/* The base: an iterator of user keys and their values, in bytewise key
** order (the database's view at the transaction's snapshot), called
** through struct rv_user_iter_ops (db/db_read.h; set_bounds unused).
** Seeks as rv_db_iter's; key/value valid until it moves; status RAVEL_OK
** or its error (then not valid).  destroy may be NULL (the caller keeps
** the base). */

/* The base over an rv_db_iter (CTX: the rv_db_iter *, freed by destroy). */
RAVEL_PRIVATE const struct rv_user_iter_ops *rv_txn_db_iter_base(void);

typedef struct rv_txn_iter rv_txn_iter;

/* Merges IDX over BASE (OPS).  Takes BASE (ops->destroy frees it, also on
** failure).  IDX must outlive the iterator.  NULL when out of memory
** (message set). */
RAVEL_PRIVATE rv_txn_iter *rv_txn_iter_new(const rv_write_index *idx,
                                           const struct rv_user_iter_ops *ops,
                                           void *base);
RAVEL_PRIVATE void rv_txn_iter_free(rv_txn_iter *it);
/* Keys below LOWER or at or above UPPER (NULL: no bound) are not shown,
** from the index or the base (give the base the same bounds for speed:
** then it reads nothing past them).  Copied.  Leaves the iterator
** unpositioned.  RAVEL_NOMEM with the old bounds kept. */
RAVEL_PRIVATE int rv_txn_iter_set_bounds(rv_txn_iter *it, const void *lower,
                                         size_t llen, const void *upper,
                                         size_t ulen);
RAVEL_PRIVATE int rv_txn_iter_valid(const rv_txn_iter *it);
RAVEL_PRIVATE void rv_txn_iter_seek_to_first(rv_txn_iter *it);
RAVEL_PRIVATE void rv_txn_iter_seek_to_last(rv_txn_iter *it);
/* First key >= KEY (and >= the lower bound). */
RAVEL_PRIVATE void rv_txn_iter_seek(rv_txn_iter *it, const void *key,
                                    size_t klen);
/* Last key <= KEY (and < the upper bound). */
RAVEL_PRIVATE void rv_txn_iter_seek_for_prev(rv_txn_iter *it,
                                             const void *key, size_t klen);
RAVEL_PRIVATE void rv_txn_iter_next(rv_txn_iter *it);
RAVEL_PRIVATE void rv_txn_iter_prev(rv_txn_iter *it);
/* Valid until the iterator moves or the transaction writes. */
RAVEL_PRIVATE const char *rv_txn_iter_key(const rv_txn_iter *it,
                                          size_t *klen);
RAVEL_PRIVATE const char *rv_txn_iter_value(const rv_txn_iter *it,
                                            size_t *vlen);
/* RAVEL_OK, the base's error, or RAVEL_NOMEM; sticky. */
RAVEL_PRIVATE int rv_txn_iter_status(const rv_txn_iter *it);

#endif /* RAVEL_TXN_ITER_H */
