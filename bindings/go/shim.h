/*
** shim.h -- the C half of the Go binding: one small function per ravel call
** that can fail.
**
** ravel keeps its detailed error message per OS thread, and a goroutine may
** move to another OS thread between two cgo calls.  So each shim makes the
** ravel call and, when it fails, copies the message (ravel_errmsg_r) inside
** the same C call, before any other ravel call can run on this thread.  The
** copy is malloc'd and returned in the result struct; the Go side turns it
** into an *Error and frees it.  Results are returned by value so that no
** Go pointer is needed for out-parameters.
**
** No shim keeps a pointer it was given after it returns, and none calls
** back into Go (see the #cgo noescape / nocallback lines in cgo.go).
*/
#ifndef RAVEL_GO_SHIM_H
#define RAVEL_GO_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ravel.h"

/* The outcome of a call: its result code and, when RC is not RAVEL_OK, a
** malloc'd copy of ravel's message (NULL if there was no memory for it, or
** for a get's RAVEL_NOTFOUND, which has no message). */
typedef struct shim_status {
    int rc;
    char *msg;
} shim_status;

/* The outcome of a call that makes a handle (a database, snapshot, ...). */
typedef struct shim_handle {
    int rc;
    char *msg;
    void *handle;
} shim_handle;

/* The outcome of a call that returns bytes: ravel_get_into (DATA unused,
** LEN the whole value's length), ravel_property and ravel_options_get (DATA
** a string allocated by ravel, freed with ravel_free). */
typedef struct shim_value {
    int rc;
    char *msg;
    void *data;
    size_t len;
} shim_value;

/* Where an iterator stands after a move: the move's result code, and the
** current entry if VALID (pointers into the iterator, good until it moves). */
typedef struct shim_position {
    int rc;
    char *msg;
    int valid;
    const void *key;
    size_t klen;
    const void *value;
    size_t vlen;
} shim_position;

/* The moves shim_iter_move makes. */
enum shim_move {
    SHIM_SEEK = 0,
    SHIM_SEEK_FOR_PREV = 1,
    SHIM_SEEK_TO_FIRST = 2,
    SHIM_SEEK_TO_LAST = 3,
    SHIM_NEXT = 4,
    SHIM_PREV = 5
};

/* options */
shim_handle shim_options_new(void);
shim_status shim_options_set(ravel_options *o, const char *name,
                             const char *value);
shim_status shim_options_parse(ravel_options *o, const char *text);
shim_value shim_options_get(const ravel_options *o, const char *name);
shim_status shim_options_set_cache(ravel_options *o, ravel_cache *c);
shim_status shim_options_set_write_controller(ravel_options *o,
                                              ravel_write_controller *wc);

/* shared objects */
shim_handle shim_cache_new(uint64_t capacity);
shim_handle shim_write_controller_new(uint64_t delayed_write_rate);

/* database */
shim_handle shim_open(const char *dir, const ravel_options *o);
shim_status shim_close(ravel_db *db);
shim_status shim_destroy(const char *dir);
shim_status shim_put(ravel_db *db, int flags, const void *key, size_t klen,
                     const void *val, size_t vlen);
shim_status shim_delete(ravel_db *db, int flags, const void *key,
                        size_t klen);
shim_status shim_write(ravel_db *db, int flags, ravel_batch *b);
/* KEY's value as of SNAP (NULL: the latest state) with ONE lookup
** (ravel_get) whatever its size: LEN is its length; a value of at most CAP
** bytes is copied into BUF (DATA NULL), a longer one is in DATA, ravel's
** allocation, for the caller to copy and free with ravel_free.  With
** INTO_FIRST and CAP > 0 the value is first read into BUF with
** ravel_get_into, and only a longer one is read again with ravel_get (the
** caller sized BUF: AppendGet). */
shim_value shim_get_copy(ravel_db *db, const ravel_snapshot *snap,
                         const void *key, size_t klen, void *buf,
                         size_t cap, int into_first);
/* The engine lookups the calling OS thread made through these shims (a
** multi-get counts one per key), for the tests. */
unsigned long shim_lookups(void);
/* ravel_multi_get through read options holding SNAP (NULL: the latest
** state), made and freed inside the call; the per-key codes in RCS need no
** message (RAVEL_OK or RAVEL_NOTFOUND).  shim_free_values frees the N
** values (NULL ones skipped) a successful call left in VALS. */
shim_status shim_multi_get(ravel_db *db, const ravel_snapshot *snap,
                           size_t n, const void *const *keys,
                           const size_t *klens, void **vals, size_t *vlens,
                           int *rcs);
void shim_free_values(void **vals, size_t n);
shim_status shim_flush_wal(ravel_db *db, int sync);
shim_status shim_flush(ravel_db *db, int flags);
shim_status shim_compact_range(ravel_db *db, const void *begin, size_t blen,
                               int has_begin, const void *end, size_t elen,
                               int has_end);
shim_status shim_verify(ravel_db *db);
shim_value shim_property(ravel_db *db, const char *name);

/* batches */
shim_handle shim_batch_new(void);
shim_status shim_batch_put(ravel_batch *b, const void *key, size_t klen,
                           const void *val, size_t vlen);
shim_status shim_batch_delete(ravel_batch *b, const void *key, size_t klen);
shim_status shim_batch_clear(ravel_batch *b);

/* snapshots and iterators */
shim_handle shim_snapshot_acquire(ravel_db *db);
shim_status shim_snapshot_release(ravel_db *db, ravel_snapshot *snap);
/* ravel_iter_new_opt with read options holding SNAP and the bounds
** LOWER/UPPER (each only when its HAS_ flag is set: an empty bound is a
** bound), made and freed inside the call. */
shim_handle shim_iter_new(ravel_db *db, const ravel_snapshot *snap,
                          const void *lower, size_t llen, int has_lower,
                          const void *upper, size_t ulen, int has_upper);
shim_position shim_iter_move(ravel_iter *it, int move, const void *key,
                             size_t klen);

/* transactions */
/* The calls shim_txn_control makes. */
enum shim_txn_op {
    SHIM_TXN_SAVEPOINT = 0,
    SHIM_TXN_ROLLBACK_TO_SAVEPOINT = 1,
    SHIM_TXN_PREPARE = 2,
    SHIM_TXN_COMMIT = 3,
    SHIM_TXN_ROLLBACK = 4
};
shim_handle shim_txn_begin(ravel_db *db, int flags);
shim_handle shim_txn_recover(ravel_db *db, const char *name);
/* ravel_txn_get, or ravel_txn_get_for_update if FOR_UPDATE (one lookup):
** LEN the value's length; a value of at most CAP bytes is copied into BUF
** (DATA NULL), a longer one is in DATA, ravel's allocation (free with
** ravel_free); RAVEL_NOTFOUND has no message. */
shim_value shim_txn_get(ravel_txn *t, int for_update, const void *key,
                        size_t klen, void *buf, size_t cap);
shim_status shim_txn_put(ravel_txn *t, const void *key, size_t klen,
                         const void *val, size_t vlen);
shim_status shim_txn_delete(ravel_txn *t, const void *key, size_t klen);
shim_status shim_txn_control(ravel_txn *t, int op);
shim_status shim_txn_set_name(ravel_txn *t, const char *name);
/* ravel_txn_iter_new, then ravel_iter_set_bounds with the bounds given
** (HAS_ flags as shim_iter_new's) if any. */
shim_handle shim_txn_iter_new(ravel_txn *t, const void *lower, size_t llen,
                              int has_lower, const void *upper, size_t ulen,
                              int has_upper);

#endif /* RAVEL_GO_SHIM_H */
