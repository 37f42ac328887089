/*
** lock_table.h -- the per-key locks of pessimistic transactions: exclusive
** locks on keys (bytes), owned by transaction ids, with waits bounded by a
** timeout and deadlocks detected on a wait-for graph.  RocksDB's
** PointLockManager is the model; what differs is said where it differs.
**
** Owners.  A transaction id is a uint64_t other than 0, increasing: a
** higher id is a younger transaction.  One id waits in at most one
** rv_lock_table_acquire at a time (a transaction is used by one thread at
** a time).
**
** Re-entrant, not counted.  Acquiring a key the transaction already holds
** succeeds at once (info->already_held says so), and one release frees
** it, however many acquires there were: a transaction releases its keys
** at commit or rollback, not acquire by acquire.  A savepoint's rollback
** releases the keys first locked after the savepoint, which is what
** already_held lets the caller know.
**
** Who remembers the held keys: the caller.  The table keeps no per-
** transaction list (the transaction already lists its keys, in its write
** index and its keys read for update); rv_lock_table_release_all takes
** that list.
**
** Fair hand-off.  Waiters of a key queue in arrival order, each on its own
** condition variable; a release hands the key to the first of them and
** wakes that one only (RocksDB wakes every waiter of the stripe, which
** then race for it).  So a waiter is never overtaken, and the wait-for
** graph is exact at every moment: a waiter's recorded holder is the
** key's owner, updated by the release itself.
**
** Deadlocks.  Each waiter records the one transaction it waits for (the
** key's owner).  Before sleeping, a waiter follows that chain up to the
** table's detect depth (RocksDB's deadlock_detect_depth, 50 by default).
** Finding itself again means a cycle, which its own wait closed: the
** YOUNGEST transaction of the cycle (the highest id) is chosen to fail
** with RV_LOCK_DEADLOCK -- the caller itself, or another waiter of the
** cycle, which is marked and woken and fails (unless the key it waits for
** is handed to it first, which breaks the cycle as well).  The choice
** depends only on the ids in the cycle, so it is deterministic: the same
** cycle always fails the same transaction, the one that has done the
** least work by age.  A cycle with a victim already chosen fails nobody
** else.  A chain longer than the depth is not called a deadlock (RocksDB
** calls it one): a cycle that long is ended by the timeout instead.
**
** Locking.  The keys are spread over a power of two of stripes by hash,
** each with its own mutex and hash map: acquiring or releasing a key no
** one else holds takes its stripe's mutex only.  The wait-for graph has
** one mutex, taken only by waiters and by the release of a key someone
** waits for (always after a stripe's mutex, never before one).
**
** Does not own: what a key means, the transaction ids (the transaction
** layer hands them out), the mapping of RV_LOCK_TIMEDOUT / RV_LOCK_DEADLOCK
** to public result codes.
*/
#ifndef RAVEL_LOCK_TABLE_H
#define RAVEL_LOCK_TABLE_H

#include "ravel_int.h"

/* Results of rv_lock_table_acquire besides RAVEL_OK and RAVEL_NOMEM,
** internal until the public codes exist (outside the public codes'
** range, so never mistaken for one).  Both are retriable: nothing is left
** locked by the failed call. */
#define RV_LOCK_TIMEDOUT 0x100 /* the key stayed held past the timeout */
#define RV_LOCK_DEADLOCK 0x101 /* waiting would have closed a cycle */

/* rv_lock_table_new's defaults, and the bounds of its arguments. */
#define RV_LOCK_STRIPES_DEFAULT 64
#define RV_LOCK_STRIPES_MAX 65536
#define RV_LOCK_DETECT_DEPTH_DEFAULT 50
#define RV_LOCK_DETECT_DEPTH_MAX 256

/* How many ids of a deadlock's cycle rv_lock_wait_info records. */
#define RV_LOCK_CYCLE_MAX 16

/* What rv_lock_table_acquire tells about its wait. */
struct rv_lock_wait_info {
    /* RAVEL_OK: the transaction held the key already (nothing changed) */
    int already_held;
    /* the key asked for (the caller's KEY, KLEN) */
    const void *key;
    size_t klen;
    /* RV_LOCK_TIMEDOUT, RV_LOCK_DEADLOCK: the transaction the caller
    ** waited for last (the key's owner then) */
    uint64_t holder;
    /* RV_LOCK_DEADLOCK: the cycle, from the caller: cycle[0] is the
    ** caller, cycle[i] waits for cycle[i + 1], the last waits for the
    ** caller; cycle_len is its length, of which the first
    ** RV_LOCK_CYCLE_MAX ids are recorded */
    int cycle_len;
    uint64_t cycle[RV_LOCK_CYCLE_MAX];
};

/* A key of rv_lock_table_release_all's list. */
struct rv_lock_key {
    const void *key;
    size_t klen;
};

typedef struct rv_lock_table rv_lock_table;

/* A new, empty table of STRIPES stripes (rounded up to a power of two; 0:
** RV_LOCK_STRIPES_DEFAULT) that follows wait-for chains DETECT_DEPTH
** transactions deep (0: no deadlock detection, waits end by timeout
** only; negative: RV_LOCK_DETECT_DEPTH_DEFAULT).  RAVEL_INVALID past the
** bounds, RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_lock_table_new(int stripes, int detect_depth,
                                    rv_lock_table **out);

/* Frees T and every lock left in it; no thread may be using it.  NULL is
** a no-op. */
RAVEL_PRIVATE void rv_lock_table_free(rv_lock_table *t);

/* Locks KEY (KLEN bytes) for transaction TXN (not 0), waiting while
** another transaction holds it: TIMEOUT_NS nanoseconds at most (0: not at
** all; negative: as long as it takes).  RAVEL_OK once TXN holds it (at
** once if it already did); RV_LOCK_TIMEDOUT; RV_LOCK_DEADLOCK (see the
** rule above); RAVEL_NOMEM.  On failure TXN holds nothing more than
** before, and the message (rv_error) names the key (escaped), TXN and the
** holder it waited for, and for a deadlock the cycle (RocksDB's timeout
** names neither key nor holder, its issue #13753).  INFO (may be NULL)
** is filled on every return. */
RAVEL_PRIVATE int rv_lock_table_acquire(rv_lock_table *t, uint64_t txn,
                                        const void *key, size_t klen,
                                        int64_t timeout_ns,
                                        struct rv_lock_wait_info *info);

/* Unlocks KEY if TXN holds it, handing it to its first waiter, if any
** (waking that one only); a key TXN does not hold is left alone. */
RAVEL_PRIVATE void rv_lock_table_release(rv_lock_table *t, uint64_t txn,
                                         const void *key, size_t klen);

/* rv_lock_table_release of each of the N KEYS. */
RAVEL_PRIVATE void rv_lock_table_release_all(rv_lock_table *t, uint64_t txn,
                                             const struct rv_lock_key *keys,
                                             size_t n);

/* The owner of KEY now (0: unlocked) and how many transactions wait for
** it: snapshots, for tests and diagnostics. */
RAVEL_PRIVATE uint64_t rv_lock_table_owner(rv_lock_table *t, const void *key,
                                           size_t klen);
RAVEL_PRIVATE uint32_t rv_lock_table_waiters(rv_lock_table *t,
                                             const void *key, size_t klen);

#endif /* RAVEL_LOCK_TABLE_H */
