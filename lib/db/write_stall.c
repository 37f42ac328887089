/*
** write_stall.c -- what a database asks of its write controller
** (write_controller.h), decided from its state, RocksDB's conditions:
**
**   stop      the memtables are full (max_write_buffer_number: a leader
**             waits for a flush to make room), or level 0 holds
**             level0_stop_writes_trigger files, or the pending compaction
**             bytes reach hard_pending_compaction_bytes_limit;
**   slowdown  the last memtable allowed is filling (only with
**             max_write_buffer_number > 3, as RocksDB), or level 0 holds
**             level0_slowdown_writes_trigger files, or the pending
**             compaction bytes pass soft_pending_compaction_bytes_limit.
** As in RocksDB, the level 0 and pending-bytes conditions do not apply
** with disable_auto_compactions: nothing would ever clear them.  A
** database whose writes are stopped by a failure asks for nothing: its
** own writers are refused anyway, and a shared controller must not hold
** the other databases' writers for it.
**
** The rate of a slowdown starts at the controller's delayed_write_rate;
** at each later update it is lowered (x0.8) while the backlog -- pending
** bytes and level 0 files -- grows, raised (x1.25, up to the start rate)
** as it shrinks, and lowered harder (x0.6) when the stop is near (level 0
** two files short of it, or the pending bytes past 3/4 of the way from the
** soft to the hard limit).  With use_dynamic_delay the rate is instead
** start rate x (1 - f x 63/64), f being how far the worst cause is from its
** slowdown point (0) to its stop point (1).  Never below 16 KiB/s.
**
** While a group's leader waits (a stop, or a slowdown's slot), the
** writers queued behind it with RAVEL_NO_SLOWDOWN are failed at once
** with RAVEL_BUSY, and such writers arriving meanwhile do not queue
** (RocksDB's BeginWriteStall): none of them waits.
**
** Updates happen under db->mu.lock wherever the state changes: a version
** installed (flush, compaction, memtable switch) and a leader starting or
** ending its wait for room.  Each entry into and exit from a stop or a
** slowdown is logged with its cause.
*/
#include "db/db.h"
#include "util/error.h"
#include "util/clock.h"

#include <stdio.h>
#include <time.h>

#define STALL_MIN_RATE (16u << 10)

/* What the database's state asks for. */
struct stall_need {
    enum rv_wc_state state;
    enum rv_stall_cause cause;
    double fraction;        /* worst cause's way from slowdown to stop */
    int near_stop;
};

static double stall_fraction(double value, double slow, double stop)
{
    if (stop <= slow)
        return value >= stop ? 1 : 0;
    double f = (value - slow) / (stop - slow);
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* Notes CAUSE as a slowdown at FRACTION, if it is the worst so far. */
static void stall_slow(struct stall_need *n, enum rv_stall_cause cause,
                       double fraction)
{
    if (n->state == RV_WC_NONE || fraction > n->fraction) {
        n->cause = cause;
        n->fraction = fraction;
    }
    n->state = RV_WC_DELAY;
}

static struct stall_need stall_assess(ravel_db *db, uint64_t debt, int l0)
{
    const struct ravel_options *o = &db->options;
    struct stall_need n = {RV_WC_NONE, RV_CAUSE_NONE, 0, 0};
    int compacting = !o->disable_auto_compactions;
    if (rv_stop_code(&db->stop))
        return n; /* a database refusing writes holds nobody else's */
    if (db->mu.stall.memtables_full) {
        n.state = RV_WC_STOP;
        n.cause = RV_CAUSE_MEMTABLES;
        return n;
    }
    if (compacting && l0 >= o->level0_stop_writes_trigger) {
        n.state = RV_WC_STOP;
        n.cause = RV_CAUSE_LEVEL0;
        return n;
    }
    uint64_t soft = o->soft_pending_compaction_bytes_limit;
    uint64_t hard = o->hard_pending_compaction_bytes_limit;
    if (compacting && hard && debt >= hard) {
        n.state = RV_WC_STOP;
        n.cause = RV_CAUSE_PENDING_BYTES;
        return n;
    }
    int max_mem = o->max_write_buffer_number;
    if (max_mem > 3 && db->read.current->n_imm + 1 >= max_mem)
        stall_slow(&n, RV_CAUSE_MEMTABLES,
                   (double)rv_memtable_memory_usage(db->read.current->mem) /
                       (double)o->write_buffer_size);
    if (compacting && l0 >= o->level0_slowdown_writes_trigger) {
        stall_slow(&n, RV_CAUSE_LEVEL0,
                   stall_fraction(l0, o->level0_slowdown_writes_trigger,
                                  o->level0_stop_writes_trigger));
        n.near_stop |= l0 >= o->level0_stop_writes_trigger - 2;
    }
    if (compacting && soft && debt >= soft) {
        double f = hard ? stall_fraction((double)debt, (double)soft,
                                         (double)hard)
                        : 0;
        stall_slow(&n, RV_CAUSE_PENDING_BYTES, f);
        n.near_stop |= f >= 0.75;
    }
    return n;
}

/* The rate a slowdown asks for now (see the top of the file). */
static uint64_t stall_rate(ravel_db *db, const struct stall_need *n,
                           uint64_t debt, int l0)
{
    uint64_t max = rv_write_controller_max_rate(db->wc_member.wc);
    double rate;
    if (db->options.use_dynamic_delay) {
        rate = (double)max * (1.0 - n->fraction * 63.0 / 64.0);
    } else if (db->mu.stall.state != RV_WC_DELAY) {
        rate = (double)max;
    } else {
        rate = (double)db->mu.stall.rate;
        if (debt > db->mu.stall.prev_debt || l0 > db->mu.stall.prev_l0)
            rate *= 0.8;
        else if (debt < db->mu.stall.prev_debt || l0 < db->mu.stall.prev_l0)
            rate *= 1.25;
        if (n->near_stop)
            rate *= 0.6;
    }
    if (rate > (double)max)
        rate = (double)max;
    if (rate < STALL_MIN_RATE)
        rate = STALL_MIN_RATE;
    return (uint64_t)rate;
}

static const char *stall_state_name(enum rv_wc_state s)
{
    return s == RV_WC_STOP ? "stop" : s == RV_WC_DELAY ? "slowdown" : "none";
}

void rv_write_stall_update_locked(ravel_db *db)
{
    if (!db->wc_member.wc)
        return; /* read-only, or not open yet */
    const struct rv_files *fs = db->read.current->files;
    int l0 = fs->n[0];
    uint64_t debt = rv_pending_compaction_bytes(&db->options, fs);
    struct stall_need n = stall_assess(db, debt, l0);
    uint64_t rate = n.state == RV_WC_DELAY ? stall_rate(db, &n, debt, l0)
                                           : 0;
    enum rv_wc_state was = db->mu.stall.state;
    enum rv_stall_cause was_cause = db->mu.stall.cause;
    db->mu.stall.prev_debt = debt;
    db->mu.stall.prev_l0 = l0;
    db->mu.stall.rate = rate;
    rv_wc_set(&db->wc_member, n.state, n.cause, rate);
    if (n.state == was && n.cause == was_cause)
        return;
    uint64_t now = rv_now_micros();
    if (was != RV_WC_NONE)
        rv_db_log(db, "write %s (%s) ended after %.3f s", stall_state_name(was),
                  rv_stall_cause_name(was_cause),
                  (double)(now - db->mu.stall.since) / 1e6);
    char rate_text[48] = "";
    if (n.state == RV_WC_DELAY)
        snprintf(rate_text, sizeof rate_text, "; rate %llu bytes/s",
                 (unsigned long long)rate);
    if (n.state != RV_WC_NONE)
        rv_db_log(db, "write %s: %s (level 0 files %d, slowdown at %d, stop "
                  "at %d; pending compaction bytes %llu; immutable memtables "
                  "%d)%s", stall_state_name(n.state),
                  rv_stall_cause_name(n.cause), l0,
                  db->options.level0_slowdown_writes_trigger,
                  db->options.level0_stop_writes_trigger,
                  (unsigned long long)debt, db->read.current->n_imm, rate_text);
    db->mu.stall.state = n.state;
    db->mu.stall.cause = n.cause;
    db->mu.stall.since = now;
}

/* The writers behind a stalled group that must not wait: failed with
** RAVEL_BUSY, nothing of them written. */
struct stall_queue {
    ravel_db *db;
    struct rv_writer *last;
};

static void stall_fail_queued(void *ctx)
{
    struct stall_queue *q = ctx;
    rv_write_stall_fail_no_slowdown(q->db, q->last);
}

void rv_write_stall_fail_no_slowdown(ravel_db *db, struct rv_writer *last)
{
    int sync = rv_write_queue_fail_flagged(&db->write.queue, last,
                                           RAVEL_NO_SLOWDOWN, RAVEL_BUSY);
    if (sync && db->write.wal)
        rv_wal_inbound(db->write.wal, -sync);
}

int rv_write_stall_active(ravel_db *db)
{
    return db->wc_member.wc &&
           rv_wc_enforced_hint(&db->wc_member) != RV_WC_NONE;
}

int rv_write_stall_admit(ravel_db *db, uint64_t bytes, int no_slowdown,
                         struct rv_writer *last)
{
    struct rv_wc_wait w;
    struct stall_queue q = {db, last};
    int rc = rv_wc_admit(&db->wc_member, bytes, no_slowdown, &db->stop, &w,
                         stall_fail_queued, &q);
    if (w.state == RV_WC_STOP)
        atomic_fetch_add_explicit(&db->stats.stop_micros[w.cause], w.micros,
                                  memory_order_relaxed);
    else if (w.state == RV_WC_DELAY)
        atomic_fetch_add_explicit(&db->stats.delay_micros[w.cause], w.micros,
                                  memory_order_relaxed);
    if (rc == RAVEL_READONLY)
        return rv_stop_error(&db->stop, RAVEL_READONLY, "database %s "
                             "refuses writes until reopened", db->dir);
    return rc; /* RAVEL_BUSY: each writer refused reports it */
}
