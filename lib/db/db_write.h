/*
** db_write.h -- the write path's state in the handle (db->write), written
** by db_write.c, write_unordered.c and the memtable switch in version.c.
**
** Who writes what: the write-group leader owns the plain fields (one
** group at a time: leaders follow one another through the write queue's
** release/acquire hand-off, write_group.h), the atomics say their own
** rule, and the fields fixed after open are set by ravel_open before any
** writer exists.
*/
#ifndef RAVEL_DB_WRITE_H
#define RAVEL_DB_WRITE_H

#include "ravel_int.h"
#include "base/commit_table.h"
#include "base/options.h"
#include "db/order_ring.h"
#include "db/write_group.h"
#include "memtable/memtable.h"
#include "wal/wal_writer.h"

struct rv_db_write {
    struct rv_write_queue queue;    /* its own lock (write_group.h) */
    rv_wal *wal;                    /* fixed after open; NULL when
                                    ** read_only */
    /* The last sequence assigned: by the write-group leader, and with
    ** write_prepared also by the commit-queue leader (compare-and-swap).
    ** Others read it for statistics and the manifest. */
    _Atomic uint64_t last_seq;
    uint64_t next_segment;          /* leader only */
    uint64_t wal_prev_end;          /* set by recovery, before any writer:
                                    ** where the data of the last replayed
                                    ** segment ends, the first new
                                    ** segment's prev_end */
    /* The sequence reads and snapshots use: published (release) by the
    ** group completer (ordered), the leader (unordered), the batch poppers
    ** (in-order publication) or the commit-queue leader (write_prepared,
    ** where it is RocksDB's last_published_seq). */
    _Atomic uint64_t last_visible_seq;

    /* Ordering modes (docs/ordering.md, write_unordered.h). */
    enum rv_write_ordering ordering; /* fixed after open */
    /* Released members still inserting (unordered modes): a memtable
    ** switch waits for 0 (RocksDB's pending_memtable_writes and
    ** switch_cv_); a futex word, with switch_waiting set while the
    ** leader sleeps on it.  Sequentially consistent atomics. */
    _Atomic uint32_t pending_inserts;
    _Atomic uint32_t switch_waiting;
    /* Batches in sequence order until published (in-order publication)
    ** or committed (write_prepared): one producer, the leader; poppers by
    ** compare-and-swap (order_ring.h). */
    struct rv_order_ring order_ring;
    _Atomic int publish_failed;     /* in-order: an insert failed, nothing
                                    ** past it is ever published */
    /* write_prepared: the second write queue (commits), the commit table
    ** (entries written by the commit leader alone), and the commit
    ** watermark: every batch prepared at or below it has committed, at or
    ** below last_visible_seq (raised after it). */
    struct rv_write_queue commit_queue;
    struct rv_commit_table commit_table;
    _Atomic uint64_t commit_watermark;

    /* db->read.current->mem and ->mem_wal: written with db->mu.lock held
    ** by the leader that switches memtables, read by leaders alone
    ** without it (the leader reads its own latest store). */
    rv_memtable *active_mem;
    uint64_t active_mem_wal;
};

/* Switches the active memtable out through the write queue (its leader
** is the only one who may switch), so that the memtable written so far is
** flushed; *SEGMENT receives the new active memtable's WAL segment: the
** flush of everything before it is done once no immutable memtable
** begins below it.  The refusal if writes are stopped. */
RAVEL_PRIVATE int rv_write_switch_memtable(ravel_db *db, uint64_t *segment);

/* Runs the function given, with CTX and its writer, as the leader of a
** write group of its own (an exclusive writer, write_group.h): every
** write acknowledged before the call is published and none is in
** progress, and writes queued meanwhile wait until it returns.  Returns
** its result (the refusal if writes are stopped, without calling it).
** Ordered mode only: the unordered modes publish groups after their
** leader has moved on. */
RAVEL_PRIVATE int rv_write_exclusive(ravel_db *db,
                                     int (*fn)(void *ctx,
                                               struct rv_writer *self),
                                     void *ctx);

/* Inside an exclusive writer's FN, SELF being its writer: switches the
** active memtable out (waiting for room as a write does), so that it gets
** flushed. */
RAVEL_PRIVATE int rv_write_switch_memtable_exclusive(ravel_db *db,
                                                     struct rv_writer *self);
/* The same for a checkpoint (checkpoint.c): switches also when the
** memtable is empty but the WAL segment holds records, so that every
** record written before the call is in a closed segment. */
RAVEL_PRIVATE int rv_write_switch_for_checkpoint(ravel_db *db);

/* Internal flags of a writer (struct rv_writer's flags, beside the public
** RAVEL_SYNC, RAVEL_NO_WAL, RAVEL_NO_SLOWDOWN):
**   RV_WRITE_ATOMIC    a transaction's commit: with unordered_write alone
**                      the leader inserts it before it publishes the
**                      group, so that no reader sees part of it;
**   RV_WRITE_INSERTED  ... done: the member only finishes;
**   RV_WRITE_WAL_ONLY  a transaction's prepare: written to the WAL,
**                      inserted nowhere (db/prepared.h). */
#define RV_WRITE_ATOMIC 0x200
#define RV_WRITE_INSERTED 0x400
#define RV_WRITE_WAL_ONLY 0x800

/* ravel_write inside the caller's gate, with INTERNAL flags added (a
** transaction's commit: RV_WRITE_ATOMIC; its prepare: RV_WRITE_WAL_ONLY),
** *SEGMENT receiving the WAL segment the batch's record went to (0 if
** none). */
RAVEL_PRIVATE int rv_write_batch_in_segment(ravel_db *db, int flags,
                                            int internal,
                                            struct ravel_batch *batch,
                                            uint64_t *segment);

/* RAVEL_READONLY naming why writes stopped (util/stop.h). */
RAVEL_PRIVATE int rv_write_refusal(ravel_db *db);

#endif /* RAVEL_DB_WRITE_H */
