/*
** write_unordered.c -- the unordered modes' write path (see
** write_unordered.h for what each mode does; docs/ordering.md for the
** guarantees).
**
** Counting released inserts: the leader adds its group's inserting
** members to pending_inserts before releasing them; each member subtracts
** itself once its batch is inserted -- and, with in-order publication,
** once it has popped what it could, so that a switch that sees 0 also
** sees every inserted batch published.  A leader about to switch
** memtables sets switch_waiting and sleeps on the counter until it reads
** 0; the member that brings it to 0 wakes it.  Both sides store and then
** load what the other stores, so both are sequentially consistent.
**
** Failures.  An insert that fails stops writes (as in the ordered mode)
** and its writer gets the code.  Unordered: the rest of its batch may
** already be visible.  In-order publication: the failed batch is popped
** but never published, and neither is any batch after it (they get
** RAVEL_READONLY; their WAL records are there, so a reopen shows them
** whole).  write_prepared: the failed batch never commits, the commit
** watermark never passes it, and writes are stopped anyway.
*/
#include "db/write_unordered.h"
#include "db/batch.h"
#include "base/dbformat.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/futex.h"

#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

/* Batches in flight the order ring holds before the leader waits. */
#define UNORDERED_RING_SLOTS 4096

/* Yields before the backoff sleeps, and the sleep, of a leader waiting
** for room (a rare wait: a full ring or a commit window run out). */
#define UNORDERED_BACKOFF_YIELDS 64
#define UNORDERED_BACKOFF_NANOS 20000

int rv_write_ordering_init(ravel_db *db)
{
    db->write.ordering = rv_options_ordering(&db->options);
    uint64_t last = atomic_load(&db->write.last_seq);
    atomic_store(&db->write.commit_watermark, last);
    int rc = RAVEL_OK;
    if (db->options.read_only) /* no writes: every view is a sequence */
        return RAVEL_OK;
    if (db->write.ordering == RV_ORDERING_IN_ORDER ||
        db->write.ordering == RV_ORDERING_WRITE_PREPARED)
        rc = rv_order_ring_init(&db->write.order_ring, UNORDERED_RING_SLOTS);
    if (rc == RAVEL_OK && db->write.ordering == RV_ORDERING_WRITE_PREPARED)
        rc = rv_commit_table_init(&db->write.commit_table,
                                  db->options.commit_table_size);
    if (rc != RAVEL_OK)
        return rv_error(RAVEL_NOMEM, "out of memory for the %s ordering's "
                        "tables (commit_table_size=%llu)",
                        rv_write_ordering_name(db->write.ordering),
                        (unsigned long long)db->options.commit_table_size);
    return RAVEL_OK;
}

void rv_write_ordering_destroy(ravel_db *db)
{
    rv_order_ring_destroy(&db->write.order_ring);
    rv_commit_table_destroy(&db->write.commit_table);
}

static void unordered_backoff(int *round)
{
    if ((*round)++ < UNORDERED_BACKOFF_YIELDS) {
        sched_yield();
        return;
    }
    struct timespec nap = {0, UNORDERED_BACKOFF_NANOS};
    nanosleep(&nap, NULL);
}

static int unordered_refusal(ravel_db *db)
{
    return rv_stop_error(&db->stop, RAVEL_READONLY, "database %s refuses "
                         "writes until reopened", db->dir);
}

/* ------------------------------------------------------- sequences */

int rv_write_reserve_sequences(ravel_db *db, uint64_t n, uint64_t *first)
{
    if (db->write.ordering != RV_ORDERING_WRITE_PREPARED) {
        /* the leader alone assigns sequences */
        uint64_t last = atomic_load_explicit(&db->write.last_seq,
                                             memory_order_relaxed);
        atomic_store_explicit(&db->write.last_seq, last + n,
                              memory_order_relaxed);
        *first = last + 1;
        return RAVEL_OK;
    }
    /* The commit leader takes sequences too: compare-and-swap.  The
    ** window: the last sequence reserved may not run past the commit
    ** watermark by the table's size (commit_table.h), unless nothing is
    ** in flight at all (a batch larger than the table). */
    uint64_t window = db->write.commit_table.mask + 1;
    int round = 0, waited = 0;
    for (;;) {
        /* Stopped writes (a failed insert may have frozen the watermark
        ** for good) get no sequence: the shortcut below would run the
        ** window past entries reads still need. */
        if (rv_stop_code(&db->stop))
            return unordered_refusal(db);
        uint64_t cur = atomic_load(&db->write.last_seq);
        uint64_t wm = atomic_load(&db->write.commit_watermark);
        if (cur + n <= wm + window - 1 ||
            (rv_order_ring_empty(&db->write.order_ring) &&
             !atomic_load(&db->write.publish_failed))) {
            if (atomic_compare_exchange_weak(&db->write.last_seq, &cur,
                                             cur + n)) {
                *first = cur + 1;
                return RAVEL_OK;
            }
            continue;
        }
        if (!waited) {
            waited = 1;
            atomic_fetch_add_explicit(&db->stats.window_waits, 1,
                                      memory_order_relaxed);
        }
        unordered_backoff(&round);
    }
}

/* ------------------------------------------------ counting inserts */

void rv_write_wait_for_inserts(ravel_db *db)
{
    uint32_t n = atomic_load(&db->write.pending_inserts);
    if (n == 0)
        return;
    atomic_fetch_add_explicit(&db->stats.switch_waits, 1,
                              memory_order_relaxed);
    atomic_store(&db->write.switch_waiting, 1);
    while ((n = atomic_load(&db->write.pending_inserts)) != 0)
        rv_futex_wait(&db->write.pending_inserts, n, NULL);
    atomic_store(&db->write.switch_waiting, 0);
}

/* A released member is done with its insert (and its pops). */
static void unordered_insert_done(ravel_db *db)
{
    if (atomic_fetch_sub(&db->write.pending_inserts, 1) == 1 &&
        atomic_load(&db->write.switch_waiting))
        rv_futex_wake_all(&db->write.pending_inserts);
}

/* ---------------------------------------------------- the release */

int rv_write_unordered_max_group(ravel_db *db)
{
    if (db->write.ordering == RV_ORDERING_IN_ORDER ||
        db->write.ordering == RV_ORDERING_WRITE_PREPARED)
        return UNORDERED_RING_SLOTS;
    return INT_MAX;
}

/* Producer of the order ring: waits until N slots are free (the group's
** inserting members, at most the ring's size: rv_write_unordered_max_group).
** Earlier groups' batches free theirs as they finish; but once writes are
** stopped a failed batch may never be popped, so the wait gives up then. */
static int unordered_wait_ring_room(ravel_db *db, uint32_t n)
{
    int round = 0, waited = 0;
    while (rv_order_ring_free(&db->write.order_ring) < n) {
        if (rv_stop_code(&db->stop))
            return unordered_refusal(db);
        if (!waited) {
            waited = 1;
            atomic_fetch_add_explicit(&db->stats.window_waits, 1,
                                      memory_order_relaxed);
        }
        unordered_backoff(&round);
    }
    return RAVEL_OK;
}

/* unordered_write alone: inserts the group's transaction commits
** (RV_WRITE_ATOMIC) before the group is published, so that a reader sees
** each whole or not at all -- the atomicity the mode gives up for plain
** batches.  Their members then only finish (RV_WRITE_INSERTED). */
static void unordered_insert_atomic(ravel_db *db, struct rv_write_group *g)
{
    for (struct rv_writer *w = g->leader;; w = w->next) {
        if ((w->flags & RV_WRITE_ATOMIC) && w->batch->count > 0) {
            int rc = rv_write_insert_batch(db, g->memtable, w);
            if (rc)
                w->status = rc;
            w->flags |= RV_WRITE_INSERTED;
        }
        if (w == g->last)
            break;
    }
}

int rv_write_unordered_release(ravel_db *db, struct rv_write_group *g,
                               struct rv_writer *leader)
{
    uint32_t inserting = 0;
    for (struct rv_writer *w = g->leader;; w = w->next) {
        w->memtable = g->memtable;
        inserting += w->batch->count > 0;
        if (w == g->last)
            break;
    }
    if (db->write.ordering != RV_ORDERING_UNORDERED) {
        /* room for the whole group first: the leader alone pushes, so it
        ** stays free while it does */
        int rc = unordered_wait_ring_room(db, inserting);
        if (rc)
            return rc;
        /* in-order publication wakes the owner once published */
        int in_order = db->write.ordering == RV_ORDERING_IN_ORDER;
        for (struct rv_writer *w = g->leader;; w = w->next) {
            if (w->batch->count > 0)
                w->order_pos = rv_order_ring_push(
                    &db->write.order_ring, w->first_seq + w->batch->count - 1,
                    in_order ? w : NULL);
            if (w == g->last)
                break;
        }
    }
    /* relaxed: the release of each member's INSERT state orders it
    ** before the member's own decrement */
    atomic_fetch_add_explicit(&db->write.pending_inserts, inserting,
                              memory_order_relaxed);
    if (db->write.ordering == RV_ORDERING_UNORDERED)
        unordered_insert_atomic(db, g);
    if (db->write.ordering == RV_ORDERING_UNORDERED)
        /* release: what readers need before the group's sequences is
        ** in the memtable already; the group's own inserts are not, and
        ** that is this mode's relaxed guarantee */
        atomic_store_explicit(&db->write.last_visible_seq, g->last_seq,
                              memory_order_release);
    rv_write_group_release(&db->write.queue, g, leader);
    rv_write_unordered_insert(db, leader);
    return RAVEL_OK;
}

/* ------------------------------------------- in-order publication */

/* Pops every finished batch at the head of the order ring, publishing
** each (or, past a failed insert, failing it) and waking its writer.
** Returns 1 if SELF's own batch was among them. */
static int unordered_publish(ravel_db *db, struct rv_writer *self)
{
    int mine = 0;
    struct rv_order_popped p;
    while (rv_order_ring_pop(&db->write.order_ring, &p)) {
        struct rv_writer *w = p.owner;
        if (p.failed)
            atomic_store(&db->write.publish_failed, 1);
        if (atomic_load(&db->write.publish_failed)) {
            if (w->status == RAVEL_OK)
                w->status = RAVEL_READONLY;
        } else {
            rv_order_raise(&db->write.last_visible_seq, p.last_seq);
        }
        if (w == self)
            mine = 1;
        else
            rv_writer_set_done(w); /* W may return at once */
    }
    return mine;
}

static void unordered_finish_in_order(ravel_db *db, struct rv_writer *w,
                                      int rc)
{
    /* A failure stops publication before its slot can be popped: a popper
    ** of any later batch pops after this one, so it sees the flag (all
    ** sequentially consistent), even if the popper of this one has not
    ** got to set it yet. */
    if (rc)
        atomic_store(&db->write.publish_failed, 1);
    rv_order_ring_finish(&db->write.order_ring, w->order_pos,
                         rc ? RV_ORDER_FAILED : RV_ORDER_DONE);
    int mine = unordered_publish(db, w);
    unordered_insert_done(db);
    if (!mine) {
        atomic_fetch_add_explicit(&db->stats.publish_waits, 1,
                                  memory_order_relaxed);
        rv_writer_await_done(w);
    }
}

/* ------------------------------------------------- write_prepared */

/* The commit-queue leader: one commit sequence for its whole group,
** recorded for every prepared sequence of every member, then published;
** then the commit watermark advances past whatever batches are now
** committed in order. */
static void unordered_lead_commit(ravel_db *db, struct rv_writer *leader)
{
    struct rv_write_group g;
    rv_write_group_form(&db->write.commit_queue, leader, &g, SIZE_MAX / 4,
                        UINT64_MAX, INT_MAX);
    uint64_t commit = atomic_fetch_add(&db->write.last_seq, 1) + 1;
    for (struct rv_writer *w = g.leader;; w = w->next) {
        uint64_t end = w->first_seq + w->batch->count;
        for (uint64_t s = w->first_seq; s < end; s++)
            rv_commit_table_add(&db->write.commit_table, s, commit);
        if (w == g.last)
            break;
    }
    /* release: the entries above, and the members' inserts (each joined
    ** this queue after its insert), before the sequence that shows them */
    atomic_store_explicit(&db->write.last_visible_seq, commit,
                          memory_order_release);
    /* After the publication, so that a view loading the watermark and
    ** then the published sequence never finds a batch below the first
    ** whose commit is above the second. */
    for (struct rv_writer *w = g.leader;; w = w->next) {
        rv_order_ring_finish(&db->write.order_ring, w->order_pos,
                             RV_ORDER_DONE);
        if (w == g.last)
            break;
    }
    struct rv_order_popped p;
    while (rv_order_ring_pop(&db->write.order_ring, &p)) {
        if (p.failed)
            atomic_store(&db->write.publish_failed, 1);
        if (!atomic_load(&db->write.publish_failed))
            rv_order_raise(&db->write.commit_watermark, p.last_seq);
    }
    rv_write_group_complete(&db->write.commit_queue, &g, leader);
}

/* Test builds: the RV_PAUSE_COMMIT point, armed for a batch's first
** key. */
static void unordered_pause_before_commit(const struct rv_writer *w)
{
#ifdef RAVEL_TEST_HOOKS
    const char *p = w->batch->rep + RV_BATCH_HEADER_SIZE + 1; /* type */
    const char *end = w->batch->rep + w->batch->len;
    uint32_t klen = 0;
    p = rv_get_varint32(p, end, &klen);
    if (p && klen <= (size_t)(end - p))
        rv_pause_here_key(RV_PAUSE_COMMIT, p, klen);
#else
    (void)w;
#endif
}

static void unordered_commit(ravel_db *db, struct rv_writer *w)
{
    unordered_pause_before_commit(w);
    if (rv_write_queue_join(&db->write.commit_queue, w) == RV_WRITER_LEADER)
        unordered_lead_commit(db, w);
}

/* ------------------------------------------------------ the member */

void rv_write_unordered_insert(ravel_db *db, struct rv_writer *w)
{
    if (w->batch->count == 0) /* ravel_flush's writer: nothing to insert */
        return;
    rv_pause_here(RV_PAUSE_MEMTABLE_INSERT);
    int rc = RAVEL_OK;
    if (w->flags & RV_WRITE_INSERTED) /* by the leader */
        rc = w->status;
    else if ((rc = rv_write_insert_batch(db, w->memtable, w)) != RAVEL_OK)
        w->status = rc;
    switch (db->write.ordering) {
    case RV_ORDERING_IN_ORDER:
        unordered_finish_in_order(db, w, rc);
        return;
    case RV_ORDERING_WRITE_PREPARED:
        if (rc) {
            /* the watermark stops here for good: no sequence is reserved
            ** past the commit window from now on */
            atomic_store(&db->write.publish_failed, 1);
            rv_order_ring_finish(&db->write.order_ring, w->order_pos,
                                 RV_ORDER_FAILED);
        }
        unordered_insert_done(db);
        if (!rc)
            unordered_commit(db, w);
        return;
    case RV_ORDERING_ORDERED:
    case RV_ORDERING_UNORDERED:
        unordered_insert_done(db);
        return;
    }
}
