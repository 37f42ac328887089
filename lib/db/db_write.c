/*
** db_write.c -- the write path: ravel_put, ravel_delete, ravel_write.
**
** What one write group does, in order (write_group.c forms the groups):
**   1. the leader makes room: switches the memtable (and WAL segment) when
**      the active one has reached write_buffer_size;
**   2. assigns consecutive sequence numbers to every member, NO_WAL
**      members included;
**   3. encodes the WAL members' batches as records into one buffer and
**      appends it with one submission (rv_wal_append), an fdatasync linked
**      behind it when a member asked for sync (manual_wal_flush: into the
**      WAL writer's buffer, written when full or on a sync);
**   4. every member inserts its own batch into the memtable at once (or
**      the leader inserts them all, allow_concurrent_memtable_write=false);
**   5. the last to finish publishes last_visible_seq and completes the
**      group, so the next group may form.
** Sync waiters then wait, outside the group, for an fdatasync that covers
** their record (rv_wal_sync_to): the next group is already under way.
** With wal_io=direct, step 3 only submits the write: the group goes on
** while it is in flight (so may the next groups: several writes in
** flight), and every WAL member then waits, outside the group, for its
** write to complete (rv_wal_wait_written) or be durable (rv_wal_sync_to)
** before it returns.  A reader may so see a group before its write
** completes; if that write fails, its writers get RAVEL_IOERR and writes
** stop, as when an fdatasync fails after step 5.
**
** Failures.  Every failure stops writes for good: it is recorded in the
** database's rv_stop (util/stop.h; the first one wins) before the group
** that met it completes, so the next group's leader -- and any writer
** arriving later -- gets RAVEL_READONLY naming the reason.  Reads go on.
** The group's sequence numbers are never reused.
**   - Steps 1-3 (no memory for a memtable or the WAL buffer, the next WAL
**     segment cannot be created, the WAL write fails): the leader fails
**     the whole group with the code (RAVEL_NOMEM, RAVEL_IOERR) before any
**     insert.  A failed WAL write also makes the WAL refuse every later
**     append and sync.  The group's records may or may not be in the WAL.
**   - Step 4 (an insert runs out of memory): the member records it in the
**     group; the last to finish publishes nothing and gives every member
**     the code (RAVEL_NOMEM), so no reader sees any of the group, though
**     some of it is in the memtable above last_visible_seq.  The records
**     are in the WAL: after reopen each batch is there, whole.
**   - After step 5, a sync waiter's fdatasync fails: every waiter on it
**     gets RAVEL_IOERR, and the WAL refuses every later sync and append,
**     so nothing written after the failure is ever acknowledged durable.
**     The group is visible already; its durability is unknown.
** ravel_flush_wal then reports RAVEL_IOERR after an I/O failure,
** RAVEL_READONLY after another; ravel_close does not report again a
** failure already reported (and skips the final sync after an I/O one).
*/
#include "db/batch.h"
#include "db/db.h"
#include "base/dbformat.h"
#include "db/write_unordered.h"
#include "util/error.h"
#include "util/fault.h"
#include "wal/wal_format.h"
#include "util/clock.h"

#include <string.h>
#include <time.h>

/* A writer flag of ravel_flush's own (never a caller's: write_check_flags
** refuses unknown flags): an empty batch asking its group's leader to
** switch the active memtable out so it is flushed. */
#define RV_WRITE_FLUSH 0x100
/* With RV_WRITE_FLUSH, a checkpoint's (rv_write_switch_for_checkpoint):
** also switch when the memtable is empty but the WAL segment is not (it
** holds prepare or rollback records, which go to no memtable), so that
** every record written before the request is in a closed segment. */
#define RV_WRITE_CHECKPOINT 0x1000 /* beside db_write.h's flags */

/* ------------------------------------------------------ leader's work */

/* Gives every member of G the result RC (each member reads its status
** once DONE, after rv_write_group_complete). */
static void write_fail_group(struct rv_write_group *g, int rc)
{
    struct rv_writer *w = g->leader;
    for (;;) {
        w->status = rc;
        if (w == g->last)
            break;
        w = w->next;
    }
}

int rv_write_refusal(ravel_db *db)
{
    return rv_stop_error(&db->stop, RAVEL_READONLY, "database %s refuses "
                         "writes until reopened", db->dir);
}

/* The memtable stop: while max_write_buffer_number memtables would be in
** memory after a switch (the immutable ones all waiting for their flush),
** waits for a flush to finish, the database asking its write controller
** to stop every writer meanwhile (write_stall.c).  Returns RAVEL_OK when
** there is room, RAVEL_BUSY at once for a NO_SLOWDOWN group, or the
** refusal once writes are stopped (a failed flush, among others). */
static int write_wait_for_room(ravel_db *db, int no_slowdown,
                               struct rv_writer *last)
{
    int waited = 0, rc = RAVEL_OK;
    uint64_t start = 0;
    rv_mutex_lock(&db->mu.lock);
    while (db->read.current->n_imm + 1 >= db->options.max_write_buffer_number) {
        if (rv_stop_code(&db->stop)) {
            rc = RAVEL_READONLY;
            break;
        }
        if (no_slowdown) {
            rc = RAVEL_BUSY;
            break;
        }
        if (!waited) {
            waited = 1;
            start = rv_now_micros();
            db->mu.stall.memtables_full = 1;
            rv_write_stall_update_locked(db);
        }
        /* none of those queued behind that must not wait does */
        rv_write_stall_fail_no_slowdown(db, last);
        /* Timed: a failure recorded by the WAL writer's own thread does
        ** not broadcast flush_cv. */
        rv_cond_wait_ms(&db->mu.bg.flush_cv, &db->mu.lock, CLOCK_REALTIME,
                        100);
    }
    if (waited) {
        db->mu.stall.memtables_full = 0;
        rv_write_stall_update_locked(db);
    }
    rv_mutex_unlock(&db->mu.lock);
    if (waited) {
        uint64_t took = rv_now_micros() - start;
        atomic_fetch_add_explicit(&db->stats.stalls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stats.stall_micros, took,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stats.stop_micros[RV_CAUSE_MEMTABLES],
                                  took, memory_order_relaxed);
    }
    if (rc == RAVEL_BUSY) /* each writer refused reports it (write_busy) */
        return RAVEL_BUSY;
    return rc == RAVEL_OK ? RAVEL_OK : rv_write_refusal(db);
}

/* Replaces a full memtable by a fresh one with its own WAL segment. */
static int write_switch_memtable(ravel_db *db, int no_slowdown,
                                 struct rv_writer *last)
{
    int rc = write_wait_for_room(db, no_slowdown, last);
    if (rc)
        return rc;
    /* unordered modes: the memtable being switched out must be complete
    ** before a flush may read it */
    rv_write_wait_for_inserts(db);
    rv_memtable *mem = rv_memtable_new(db->options.write_buffer_size);
    if (!mem)
        return rv_error(RAVEL_NOMEM, "out of memory creating a memtable");
    uint64_t segment = db->write.next_segment++;
    rc = db->write.wal ? rv_wal_switch_segment(db->write.wal, segment)
                       : RAVEL_OK;
    if (rc == RAVEL_OK)
        rc = rv_db_install_memtable(db, mem, segment);
    rv_memtable_unref(mem); /* the version holds it now, or nobody */
    if (rc == RAVEL_OK)
        atomic_fetch_add_explicit(&db->stats.memtable_switches, 1,
                                  memory_order_relaxed);
    return rc;
}

/* Gives every member its sequence numbers (*WAL_BYTES: the WAL bytes
** needed).  Fails only with write_prepared, if writes stop while it
** waits for room in the commit window. */
static int write_assign_sequences(ravel_db *db, struct rv_write_group *g,
                                  int *want_sync, size_t *wal_bytes)
{
    uint64_t count = 0;
    *wal_bytes = 0;
    for (struct rv_writer *w = g->leader;; w = w->next) {
        count += w->batch->count;
        if (!(w->flags & RAVEL_NO_WAL))
            *wal_bytes += rv_wal_record_size(w->batch->len);
        else if (!(w->flags & RV_WRITE_FLUSH))
            atomic_fetch_add_explicit(&db->stats.nowal_writes, 1,
                                      memory_order_relaxed);
        if (w->flags & RAVEL_SYNC)
            *want_sync = 1;
        if (w == g->last)
            break;
    }
    uint64_t seq = 0;
    int rc = rv_write_reserve_sequences(db, count, &seq);
    if (rc)
        return rc;
    for (struct rv_writer *w = g->leader;; w = w->next) {
        w->first_seq = seq;
        seq += w->batch->count;
        if (w == g->last)
            break;
    }
    g->last_seq = seq - 1;
    return RAVEL_OK;
}

/* Encodes the WAL members' batches, with their sequences, into BUF. */
static void write_encode_records(struct rv_write_group *g, char *buf,
                                 uint64_t segment, uint32_t tag)
{
    char *p = buf;
    struct rv_writer *w = g->leader;
    for (;;) {
        if (!(w->flags & RAVEL_NO_WAL)) {
            char *payload = p + RV_WAL_RECORD_HEADER_SIZE;
            memcpy(payload, w->batch->rep, w->batch->len);
            rv_put_fixed64(payload, w->first_seq);
            p += rv_wal_seal_tagged(p, segment, tag, RV_WAL_BATCH,
                                    w->batch->len);
        }
        if (w == g->last)
            break;
        w = w->next;
    }
}

/* 1 if a member of G is ravel_flush asking for the active memtable to be
** switched out (and so flushed). */
static int write_group_wants_flush(const struct rv_write_group *g)
{
    for (struct rv_writer *w = g->leader;; w = w->next) {
        if (w->flags & RV_WRITE_FLUSH)
            return 1;
        if (w == g->last)
            return 0;
    }
}

/* 1 if a member of G is a checkpoint's switch request. */
static int write_group_wants_checkpoint(const struct rv_write_group *g)
{
    for (struct rv_writer *w = g->leader;; w = w->next) {
        if (w->flags & RV_WRITE_CHECKPOINT)
            return 1;
        if (w == g->last)
            return 0;
    }
}

/* 1 if G asks for the active memtable MEM to be switched out. */
static int write_group_wants_switch(ravel_db *db,
                                    const struct rv_write_group *g,
                                    rv_memtable *mem)
{
    if (!write_group_wants_flush(g))
        return 0;
    if (!rv_memtable_is_empty(mem))
        return 1;
    return write_group_wants_checkpoint(g) && db->write.wal &&
           rv_wal_segment_has_records(db->write.wal);
}

/* 1 if a member of G has an entry to write. */
static int write_group_has_entries(const struct rv_write_group *g)
{
    for (struct rv_writer *w = g->leader;; w = w->next) {
        if (w->seqs)
            return 1;
        if (w == g->last)
            return 0;
    }
}

/* Tells each ravel_flush member which WAL segment the log number must
** reach for everything written before it to be in table files: the
** active memtable's first segment (after the switch). */
static void write_group_note_flush_target(ravel_db *db,
                                          struct rv_write_group *g)
{
    for (struct rv_writer *w = g->leader;; w = w->next) {
        if (w->flags & RV_WRITE_FLUSH)
            w->wal_end = db->write.active_mem_wal;
        if (w == g->last)
            return;
    }
}

/* Steps 1-3 for group G.  On failure, writes are stopped. */
static int write_prepare_group(ravel_db *db, struct rv_write_group *g)
{
    if (rv_stop_code(&db->stop))
        return rv_write_refusal(db);

    /* the write controller: one decision per group, charged its bytes
    ** (a group without any -- ravel_flush's request, empty batches --
    ** writes nothing it could hold back) */
    int no_slowdown = g->leader->flags & RAVEL_NO_SLOWDOWN;
    int rc = rv_write_stall_active(db) && write_group_has_entries(g)
                 ? rv_write_stall_admit(db, g->bytes, no_slowdown, g->last)
                 : RAVEL_OK;
    rv_memtable *mem = rv_db_active_memtable(db);
    if (rc == RAVEL_OK &&
        (rv_memtable_memory_usage(mem) >= db->options.write_buffer_size ||
         write_group_wants_switch(db, g, mem)))
        rc = write_switch_memtable(db, no_slowdown, g->last);
    if (rc == RAVEL_BUSY)
        return rc; /* nothing of the group is written; writes go on */
    if (rc != RAVEL_OK)
        goto out;
    atomic_fetch_add_explicit(&db->stats.user_bytes, g->bytes,
                              memory_order_relaxed);
    write_group_note_flush_target(db, g);

    int want_sync = 0;
    size_t wal_bytes = 0;
    rc = write_assign_sequences(db, g, &want_sync, &wal_bytes);
    if (rc != RAVEL_OK)
        goto out;
    g->memtable = rv_db_active_memtable(db);
    rv_memtable_count_entries(g->memtable, g->last_seq + 1 -
                                               g->leader->first_seq);
    if (wal_bytes == 0)
        return RAVEL_OK;

    char *buf = rv_wal_reserve(db->write.wal, wal_bytes);
    if (!buf) {
        rc = rv_error(RAVEL_NOMEM, "out of memory for a %zu-byte WAL write",
                      wal_bytes);
        goto out;
    }
    uint64_t segment = rv_wal_segment_number(db->write.wal);
    write_encode_records(g, buf, segment, rv_wal_segment_tag(db->write.wal));
    uint64_t end = 0;
    rc = rv_wal_append(db->write.wal, wal_bytes, want_sync, &end);
    if (rc != RAVEL_OK)
        goto out;
    for (struct rv_writer *w = g->leader;; w = w->next) {
        if (!(w->flags & RV_WRITE_FLUSH)) /* it keeps its segment */
            w->wal_end = end;
        w->wal_segment = segment;
        if (w == g->last)
            break;
    }
out:
    if (rc != RAVEL_OK)
        rv_db_stop_writes(db, rc, rv_errmsg_get());
    return rc;
}

/* ------------------------------------------------------ memtable inserts */

/* Where rv_batch_apply inserts: the memtable, and the batch's first
** sequence (for the test hook that slows an insert after its first
** entry). */
struct write_insert_ctx {
    rv_memtable *mem;
    uint64_t first_seq;
};

static int write_insert_op(void *ctx, uint64_t seq, int type, const char *key,
                           size_t klen, const char *val, size_t vlen)
{
    struct write_insert_ctx *c = ctx;
    if (seq == c->first_seq + 1)
        rv_test_insert_delay_here();
    if (rv_type_is_txn_marker(type))
        return RAVEL_OK; /* for recovery (db/prepared.h) */
    return rv_memtable_add(c->mem, seq, type, key, klen, val, vlen);
}

int rv_write_insert_batch(ravel_db *db, rv_memtable *mem,
                          const struct rv_writer *w)
{
    if (w->flags & RV_WRITE_WAL_ONLY)
        return RAVEL_OK; /* a prepare: its writes wait for the commit */
    struct write_insert_ctx c = {mem, w->first_seq};
    int rc = rv_batch_apply(w->batch->rep, w->batch->len, w->first_seq,
                            write_insert_op, &c);
    if (rc != RAVEL_OK)
        rv_db_stop_writes(db, rc, rv_errmsg_get());
    return rc;
}

/* Inserts W's batch into the group's memtable.  On failure, stops writes
** and marks the group failed: it will publish nothing. */
static void write_insert_batch(ravel_db *db, struct rv_write_group *g,
                               struct rv_writer *w)
{
    int rc = rv_write_insert_batch(db, g->memtable, w);
    if (rc != RAVEL_OK)
        rv_write_group_insert_failed(g, rc);
}

/* The last member to finish: publishes the group -- or, if an insert
** failed, gives every member the error and publishes nothing -- then
** completes it.  Writes are already stopped in that case, so the next
** leader refuses its group. */
static void write_finish_group(ravel_db *db, struct rv_write_group *g,
                               struct rv_writer *self)
{
    /* relaxed: every member's insert_done (acq_rel) precedes ours */
    int failed = atomic_load_explicit(&g->failed, memory_order_relaxed);
    if (failed)
        write_fail_group(g, failed);
    else
        /* release: a reader that sees last_visible_seq sees every insert
        ** of the group (each member's inserts happen-before its
        ** insert_done). */
        atomic_store_explicit(&db->write.last_visible_seq, g->last_seq,
                              memory_order_release);
    rv_write_group_complete(&db->write.queue, g, self);
}

/* A member inserts its own batch; the last one finishes the group. */
static void write_member_insert(ravel_db *db, struct rv_writer *w)
{
    struct rv_write_group *g = w->group;
    write_insert_batch(db, g, w);
    if (rv_write_group_insert_done(g))
        write_finish_group(db, g, w);
    else
        rv_writer_await_done(w);
}

/* The group's sync members have been appended (or failed): no longer
** inbound for the fdatasync gathering of rv_wal_sync_to. */
static void write_leave_inbound(ravel_db *db, struct rv_write_group *g)
{
    int n = 0;
    for (struct rv_writer *w = g->leader;; w = w->next) {
        n += (w->flags & RAVEL_SYNC) != 0;
        if (w == g->last)
            break;
    }
    if (n)
        rv_wal_inbound(db->write.wal, -n);
}

static void write_lead_group(ravel_db *db, struct rv_writer *leader)
{
    struct rv_write_group g;
    rv_pause_here(RV_PAUSE_GROUP_LEAD);
    /* write_prepared: a group spans at most half the commit table, so
    ** that no two of its batches share an entry (commit_table.h) */
    uint64_t max_seqs = db->write.ordering == RV_ORDERING_WRITE_PREPARED
        ? (db->write.commit_table.mask + 1) / 2 : UINT64_MAX;
    rv_write_group_form(&db->write.queue, leader, &g,
                        db->options.max_write_batch_group_size_bytes,
                        max_seqs, rv_write_unordered_max_group(db));
    if (leader->exclusive) {
        /* alone, the previous group complete: nobody else writes */
        leader->status = leader->exclusive(leader->exclusive_ctx,
                                           leader);
        rv_write_group_complete(&db->write.queue, &g, leader);
        return;
    }
    int rc = write_prepare_group(db, &g);
    write_leave_inbound(db, &g);
    if (rc != RAVEL_OK) {
        write_fail_group(&g, rc);
        rv_write_group_complete(&db->write.queue, &g, leader);
        return;
    }
    if (db->write.ordering != RV_ORDERING_ORDERED) {
        rc = rv_write_unordered_release(db, &g, leader);
        if (rc != RAVEL_OK) {
            write_fail_group(&g, rc);
            rv_write_group_complete(&db->write.queue, &g, leader);
        }
        return;
    }
    if (db->options.allow_concurrent_memtable_write && g.size > 1) {
        rv_write_group_launch(&g);
        write_member_insert(db, leader);
        return;
    }
    /* The leader inserts every batch, stopping at the first failure. */
    for (struct rv_writer *w = g.leader;; w = w->next) {
        write_insert_batch(db, &g, w);
        if (w == g.last ||
            atomic_load_explicit(&g.failed, memory_order_relaxed))
            break;
    }
    write_finish_group(db, &g, leader);
}

/* ------------------------------------------------------------ the API */

/* Joins a write group as W and returns once its group is complete. */
static void write_join(ravel_db *db, struct rv_writer *w)
{
    if (w->flags & RAVEL_SYNC) /* only sync writers gain from gathering */
        rv_wal_inbound(db->write.wal, 1);
    int state = rv_write_queue_join(&db->write.queue, w);
    if (state == RV_WRITER_LEADER)
        write_lead_group(db, w);
    else if (state == RV_WRITER_INSERT &&
             db->write.ordering != RV_ORDERING_ORDERED)
        rv_write_unordered_insert(db, w);
    else if (state == RV_WRITER_INSERT)
        write_member_insert(db, w);
}

/* RAVEL_BUSY for a RAVEL_NO_SLOWDOWN write the controller would hold. */
static int write_busy(ravel_db *db)
{
    atomic_fetch_add_explicit(&db->stats.busy, 1, memory_order_relaxed);
    return rv_error(RAVEL_BUSY, "write refused (RAVEL_NO_SLOWDOWN): the write "
                    "controller of %s would make it wait (a slowdown or a "
                    "stop: ravel.stats says why); nothing of it was written",
                    db->dir);
}

/* Joins a write group with B and waits for the outcome, then for
** durability when RAVEL_SYNC was asked. */
static int write_batch(ravel_db *db, int flags, struct ravel_batch *b,
                       uint64_t *segment)
{
    if (rv_stop_code(&db->stop))
        return rv_write_refusal(db);
    /* refused before it queues: none waits behind a stalled leader */
    if ((flags & RAVEL_NO_SLOWDOWN) && rv_write_stall_active(db))
        return write_busy(db);

    struct rv_writer w;
    memset(&w, 0, sizeof w);
    w.batch = b;
    w.flags = flags;
    w.size = b->len;
    w.seqs = b->count;
    w.status = RAVEL_OK;
    write_join(db, &w);
    if (segment)
        *segment = w.wal_segment;

    if (w.status == RAVEL_READONLY)
        return rv_write_refusal(db);
    if (w.status == RAVEL_BUSY) /* born in the leader's thread */
        return write_busy(db);
    if (w.status != RAVEL_OK) /* the message was born in another thread */
        return rv_stop_error(&db->stop, w.status, "write failed");
    int rc;
    if (!(flags & RAVEL_SYNC)) {
        /* wal_io=direct: acknowledged once its write has completed */
        if (flags & RAVEL_NO_WAL)
            return RAVEL_OK;
        rc = rv_wal_wait_written(db->write.wal, w.wal_end);
        if (rc != RAVEL_OK)
            rv_db_stop_writes(db, rc, rv_errmsg_get());
        return rc;
    }
    rc = rv_wal_sync_to(db->write.wal, w.wal_end);
    if (rc != RAVEL_OK)
        rv_db_stop_writes(db, rc, rv_errmsg_get());
    return rc;
}

static int write_check_flags(ravel_db *db, int flags, const char *fn)
{
    int known = RAVEL_SYNC | RAVEL_NO_WAL | RAVEL_NO_SLOWDOWN;
    if (flags & ~known)
        return rv_error(RAVEL_INVALID, "%s: unknown flags 0x%x", fn,
                        (unsigned)(flags & ~known));
    if ((flags & RAVEL_SYNC) && (flags & RAVEL_NO_WAL))
        return rv_error(RAVEL_INVALID, "%s: RAVEL_SYNC and RAVEL_NO_WAL "
                        "cannot be combined (nothing to sync)", fn);
    if (db->options.read_only)
        return rv_error(RAVEL_READONLY, "%s: database %s was opened with "
                        "read_only=true", fn, db->dir);
    return RAVEL_OK;
}

/* write_batch of a plain write: while transactions exist in DB, with the
** keys of B locked as a transaction would lock them (so that a plain
** write never slips between a transaction's check of a key and its
** commit: db.h, txn). */
static int write_plain(ravel_db *db, int flags, struct ravel_batch *b)
{
    void *st = atomic_load_explicit(&db->txn.state, memory_order_acquire);
    if (!st)
        return write_batch(db, flags, b, NULL);
    if (rv_batch_has_range_delete(b))
        return rv_error(RAVEL_INVALID, "a range delete cannot be written "
                        "while transactions are in use: the lock table locks "
                        "keys, not ranges (as RocksDB's TransactionDB refuses "
                        "DeleteRange); see ravel_delete_range");
    void *held = NULL;
    int rc = db->txn.lock_batch(st, db, b, &held);
    if (rc == RAVEL_OK)
        rc = write_batch(db, flags, b, NULL);
    if (held)
        db->txn.unlock_batch(st, held);
    return rc;
}

int ravel_write(ravel_db *db, int flags, ravel_batch *batch)
{
    int rc = rv_db_enter(db, "ravel_write");
    if (rc)
        return rc;
    rc = write_check_flags(db, flags, "ravel_write");
    if (rc == RAVEL_OK && !batch)
        rc = rv_error(RAVEL_INVALID, "ravel_write: batch is NULL");
    if (rc == RAVEL_OK && batch->count > 0)
        rc = write_plain(db, flags, batch);
    rv_db_leave(db);
    return rc;
}

int rv_write_batch_in_segment(ravel_db *db, int flags, int internal,
                              struct ravel_batch *batch, uint64_t *segment)
{
    *segment = 0;
    int rc = write_check_flags(db, flags, "ravel_txn_commit");
    if (rc == RAVEL_OK && batch->count > 0)
        rc = write_batch(db, flags | internal, batch, segment);
    return rc;
}

/* One put, delete or range delete (KEY..VAL is its begin..end) as a batch
** of its own. */
static int write_single(ravel_db *db, int flags, int type, const void *key,
                        size_t klen, const void *val, size_t vlen,
                        const char *fn)
{
    int rc = rv_db_enter(db, fn);
    if (rc)
        return rc;
    rc = write_check_flags(db, flags, fn);
    if (rc == RAVEL_OK) {
        struct ravel_batch b;
        rv_batch_init(&b);
        rc = type == RV_TYPE_RANGE_DELETE
                 ? rv_batch_add_range_delete(&b, key, klen, val, vlen, fn)
                 : rv_batch_add(&b, type, key, klen, val, vlen);
        if (rc == RAVEL_OK && b.count > 0) /* an empty range adds nothing */
            rc = write_plain(db, flags, &b);
        rv_batch_release(&b);
    }
    rv_db_leave(db);
    return rc;
}

int ravel_put(ravel_db *db, int flags, const void *key, size_t klen,
              const void *val, size_t vlen)
{
    return write_single(db, flags, RV_TYPE_PUT, key, klen, val, vlen,
                        "ravel_put");
}

int ravel_delete(ravel_db *db, int flags, const void *key, size_t klen)
{
    return write_single(db, flags, RV_TYPE_DELETE, key, klen, NULL, 0,
                        "ravel_delete");
}

int ravel_delete_range(ravel_db *db, int flags, const void *begin,
                       size_t blen, const void *end, size_t elen)
{
    return write_single(db, flags, RV_TYPE_RANGE_DELETE, begin, blen, end,
                        elen, "ravel_delete_range");
}

static int write_flush_wal(ravel_db *db, int sync)
{
    int rc = RAVEL_OK;
    if (!db->write.wal)
        return rc;
    if (rv_stop_code(&db->stop)) {
        /* An I/O failure is reported as such; after another failure the
        ** WAL is intact (its buffer is still written out, for the writes
        ** acknowledged before) but writes are refused. */
        int io = rv_stop_io_failed(&db->stop);
        if (!io)
            (void)rv_wal_flush(db->write.wal);
        return rv_stop_error(&db->stop, io ? RAVEL_IOERR : RAVEL_READONLY,
                             "ravel_flush_wal");
    }
    /* manual_wal_flush: the buffered records go to the file first */
    rc = sync ? rv_wal_sync_all(db->write.wal) : rv_wal_flush(db->write.wal);
    if (rc != RAVEL_OK)
        rv_db_stop_writes(db, rc, rv_errmsg_get());
    return rc;
}

int ravel_flush_wal(ravel_db *db, int sync)
{
    int rc = rv_db_enter(db, "ravel_flush_wal");
    if (rc)
        return rc;
    rc = write_flush_wal(db, sync);
    rv_db_leave(db);
    return rc;
}

/* ------------------------------------------------- switching for a flush */

/* rv_write_switch_memtable with the request's FLAGS. */
static int write_request_switch(ravel_db *db, int flags, uint64_t *segment)
{
    /* An empty batch through the write queue: its leader, the only one
    ** who may switch memtables, switches the active one out. */
    struct ravel_batch b;
    rv_batch_init(&b);
    struct rv_writer w;
    memset(&w, 0, sizeof w);
    w.batch = &b;
    w.flags = RAVEL_NO_WAL | RV_WRITE_FLUSH | flags;
    w.size = b.len;
    w.status = RAVEL_OK;
    write_join(db, &w);
    if (w.status == RAVEL_READONLY)
        return rv_write_refusal(db);
    if (w.status != RAVEL_OK)
        return rv_stop_error(&db->stop, w.status, "ravel_flush failed");
    *segment = w.wal_end;
    return RAVEL_OK;
}

/* ------------------------------------------------- exclusive writers */

int rv_write_exclusive(ravel_db *db,
                       int (*fn)(void *ctx, struct rv_writer *self),
                       void *ctx)
{
    if (rv_stop_code(&db->stop))
        return rv_write_refusal(db);
    struct ravel_batch b;
    rv_batch_init(&b);
    struct rv_writer w;
    memset(&w, 0, sizeof w);
    w.batch = &b;
    w.flags = RAVEL_NO_WAL;
    w.status = RAVEL_OK;
    w.exclusive = fn;
    w.exclusive_ctx = ctx;
    write_join(db, &w);
    return w.status; /* FN's, its message set in this thread */
}

int rv_write_switch_memtable_exclusive(ravel_db *db,
                                       struct rv_writer *self)
{
    return write_switch_memtable(db, 0, self);
}

int rv_write_switch_memtable(ravel_db *db, uint64_t *segment)
{
    return write_request_switch(db, 0, segment);
}

int rv_write_switch_for_checkpoint(ravel_db *db)
{
    uint64_t segment;
    return write_request_switch(db, RV_WRITE_CHECKPOINT, &segment);
}
