/*
** wal_auto.c -- wal_io=auto's adaptive WAL: a buffered mode (pwrite, or
** buffered io_uring where the probe found it no slower) for some
** segments, the direct mode for others, moving between them at segment
** switches as the mix of writes and the probe's costs say.
**
** Owns: the mode table wal_io=auto runs (it forwards each operation to
** the mode in force, a->cur), counting each segment's synced and unsynced
** appends, the decision with its hysteresis, the switch itself, telling
** the LOG and ravel.wal-io about it.  Does not own: the modes
** (wal_buffered.c, wal_direct.c), the spares (wal_spare.c), the probe
** (wal_probe.c) or the choice at open (wal_choose.c, which decides
** whether the WAL adapts at all and in which mode it starts).
**
** Why: at open nobody knows whether writes will be mostly RAVEL_SYNC.
** A synced group costs an fdatasync after a pwrite in the buffered mode,
** one RWF_DSYNC direct write in the direct mode; an unsynced group costs
** a copy into the page cache (~1 us) against a direct write to the device
** (tens to hundreds of us).  So the direct mode pays only where most
** groups are synced (docs/performance.md).  Each segment's counts, priced
** with the probe's medians, say which mode would have been cheaper for
** it:
**     buffered = synced * pwrite_sync_ns + plain * pwrite_ns
**     direct   = synced * (direct_sync_ns, or direct_fsync_ns when sync
**                groups are followed by an fdatasync) + plain * direct_ns
** The other mode is taken at a segment switch when it would have been at
** least AUTO_MARGIN_PCT percent cheaper for AUTO_VOTES segments in a row,
** each with at least AUTO_MIN_GROUPS groups: a workload on the boundary
** keeps its mode (hysteresis).
**
** Nobody pays for a switch to direct: once the current segment's counts
** favour direct (checked every AUTO_CHECK_EVERY groups), the spare of the
** next segment is asked for, and the switch happens only if it is ready
** (else the spare is dropped and the next segment tries again).  The
** ring was set up at open.  A switch to buffered settles the direct
** writes in flight (as a direct switch does) and creates the segment as
** the buffered mode does.
**
** Recovery needs nothing new: each segment's header says its version (2
** for buffered, 3 for direct) and a log may hold both in any order
** (docs/formats.md); prev_end names a byte offset in the previous file
** whatever its version.
**
** The mode a run moves to on its own is kept in the probe's cache at
** close (wal_probe_cache.c, "settled"), and the next open starts in it
** (wal_choose.c): a database whose writes are mostly synced starts
** direct instead of spending AUTO_VOTES segments buffered at every open.
** Only a switch the counts decided is kept (not a testing switch), only
** when the cache holds this probe's numbers, and only at a close: the
** file is a hint, a crash loses nothing but the hint.
**
** wal_io_switch_every_segments=N (testing only) switches after every N
** segments whatever the mix, waiting for the spare, so the crash and
** power-loss tests run across switches.
**
** Threads: the leader switches (write_mu held) and counts; a->cur is read
** by any thread (atomic: a thread that learnt an offset from an append
** after a switch sees the mode of that switch); the reason is under
** why_mu.  Before a switch the old mode's segment is durable up to its
** end, so a thread still inside the old mode's wait returns at once.
*/
#include "wal/wal_writer_int.h"
#include "wal/wal_format.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RAVEL_OMIT_IO_URING

#define AUTO_MARGIN_PCT 10    /* the other mode this much cheaper ... */
#define AUTO_VOTES 2          /* ... for this many segments in a row */
#define AUTO_MIN_GROUPS 32    /* a segment with fewer says nothing */
#define AUTO_CHECK_EVERY 64   /* groups between looks at the counts */

struct rv_wal_auto {
    /* Set at open, read-only afterwards. */
    const struct rv_wal_ops *buffered;
    const struct rv_wal_ops *direct;
    const char *buffered_name;  /* "sync" or "uring" */
    struct rv_wal_probe probe;
    int dsync;                  /* direct sync groups use RWF_DSYNC */
    int switch_every;           /* wal_io_switch_every_segments */
    int ring_owned;             /* the ring is ours to tear down (the
                                ** buffered mode is pwrite: use_uring 0) */
    int log_fd;                 /* the LOG, appended to; -1: none */
    int64_t measured;           /* when the cached probe was measured (0:
                                ** not cached: nothing is kept at close) */
    enum rv_wal_settled settled;/* the cache's settled mode at open */

    /* The mode in force: stored (release) by the leader under write_mu,
    ** loaded (acquire) by any thread. */
    _Atomic(const struct rv_wal_ops *) cur;

    /* The leader's, under write_mu. */
    uint64_t seg_synced;        /* groups with a RAVEL_SYNC member ... */
    uint64_t seg_plain;         /* ... and without, in this segment */
    int decided;                /* a switch the counts decided was made */
    int votes;                  /* segments in a row favouring the other */
    int segments_in_mode;       /* segments finished in the current mode */
    int spare_asked;            /* the next segment's spare was asked for */

    rv_mutex why_mu;            /* why, switches */
    char why[RV_WAL_WHY_MAX];   /* the last switch and its reason */
    uint64_t switches;
};

static const struct rv_wal_ops *auto_cur(rv_wal *w)
{
    /* acquire: pairs with the leader's release in auto_enter_mode */
    return atomic_load_explicit(&w->autos->cur, memory_order_acquire);
}

static int auto_is_direct(const struct rv_wal_auto *a,
                          const struct rv_wal_ops *m)
{
    return m == a->direct;
}

/* What SYNCED synced and PLAIN plain groups would cost in each mode, in
** ns (saturating: a count times a time fits in 64 bits for any real
** segment). */
static void auto_costs(const struct rv_wal_auto *a, uint64_t synced,
                       uint64_t plain, uint64_t *buffered, uint64_t *direct)
{
    const struct rv_wal_probe *p = &a->probe;
    uint64_t dsync = a->dsync ? p->direct_sync_ns : p->direct_fsync_ns;
    *buffered = synced * p->pwrite_sync_ns + plain * p->pwrite_ns;
    *direct = synced * dsync + plain * p->direct_ns;
}

/* 1 if the counts say the mode other than CUR is at least AUTO_MARGIN_PCT
** cheaper; 0 if not or if there are too few groups to say. */
static int auto_other_cheaper(const struct rv_wal_auto *a,
                              const struct rv_wal_ops *cur, uint64_t synced,
                              uint64_t plain)
{
    if (synced + plain < AUTO_MIN_GROUPS)
        return 0;
    uint64_t b, d;
    auto_costs(a, synced, plain, &b, &d);
    uint64_t here = auto_is_direct(a, cur) ? d : b;
    uint64_t there = auto_is_direct(a, cur) ? b : d;
    return there * 100 <= here * (100 - AUTO_MARGIN_PCT);
}

static void auto_log(struct rv_wal_auto *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void auto_log(struct rv_wal_auto *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_log_vprintf(a->log_fd, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ forwarding */

static char *auto_reserve(rv_wal *w, size_t len)
{
    return auto_cur(w)->reserve(w, len);
}

/* The append operation: the mode's, then the counts; once they favour
** direct, the next segment's spare is asked for.  write_mu held. */
static int auto_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
    RV_REQUIRES(w->write_mu);
static int auto_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
{
    struct rv_wal_auto *a = w->autos;
    const struct rv_wal_ops *cur = auto_cur(w);
    int rc = cur->append(w, len, want_sync, end);
    if (rc != RAVEL_OK)
        return rc;
    if (want_sync)
        a->seg_synced++;
    else
        a->seg_plain++;
    uint64_t n = a->seg_synced + a->seg_plain;
    if (!a->spare_asked && !auto_is_direct(a, cur) && !a->switch_every &&
        n % AUTO_CHECK_EVERY == 0 &&
        a->votes + 1 >= AUTO_VOTES &&
        auto_other_cheaper(a, cur, a->seg_synced, a->seg_plain)) {
        rv_wal_direct_want_spare(w, w->number + 1);
        a->spare_asked = 1;
    }
    return RAVEL_OK;
}

static int auto_wait_written(rv_wal *w, uint64_t end)
{
    return auto_cur(w)->wait_written(w, end);
}

static int auto_sync_to(rv_wal *w, uint64_t end)
{
    return auto_cur(w)->sync_to(w, end);
}

static int auto_sync_all(rv_wal *w)
{
    return auto_cur(w)->sync_all(w);
}

static int auto_flush(rv_wal *w)
{
    return auto_cur(w)->flush(w);
}

/* The recycle operation: no pool (wal_choose.c adapts only without
** recycle_log_file_num): the caller deletes. */
static int auto_recycle(rv_wal *w, uint64_t number)
{
    RV_UNUSED(w);
    RV_UNUSED(number);
    return 0;
}

static void auto_keep_settled(rv_wal *w)
    RV_REQUIRES(w->write_mu);
static int auto_close(rv_wal *w)
    RV_REQUIRES(w->write_mu);
static int auto_close(rv_wal *w)
{
    int rc = auto_cur(w)->close(w);
    auto_keep_settled(w);
    return rc;
}

static void auto_stats(rv_wal *w, struct rv_wal_stats *s)
{
    auto_cur(w)->stats(w, s);
}

/* -------------------------------------------------------------- switches */

/* Makes M the mode in force and records why.  write_mu held. */
static void auto_enter_mode(rv_wal *w, const struct rv_wal_ops *m,
                            uint64_t number, const char *reason)
    RV_REQUIRES(w->write_mu);
static void auto_enter_mode(rv_wal *w, const struct rv_wal_ops *m,
                            uint64_t number, const char *reason)
{
    struct rv_wal_auto *a = w->autos;
    /* release: a thread that sees the new mode sees its state */
    atomic_store_explicit(&a->cur, m, memory_order_release);
    const char *name = auto_is_direct(a, m) ? "direct" : a->buffered_name;
    rv_mutex_lock(&a->why_mu);
    a->switches++;
    snprintf(a->why, sizeof a->why, "%s since segment %llu (switch %llu: "
             "%s)", name, (unsigned long long)number,
             (unsigned long long)a->switches, reason);
    rv_mutex_unlock(&a->why_mu);
    auto_log(a, "WAL I/O: %s from segment %llu: %s", name,
             (unsigned long long)number, reason);
    a->segments_in_mode = 0;
    a->votes = 0;
}

/* Buffered -> direct at the switch to segment NUMBER.  write_mu held. */
static int auto_to_direct(rv_wal *w, uint64_t number, const char *reason)
    RV_REQUIRES(w->write_mu);
static int auto_to_direct(rv_wal *w, uint64_t number, const char *reason)
{
    struct rv_wal_auto *a = w->autos;
    int rc = rv_wal_buffered_finish(w);
    if (rc != RAVEL_OK)
        return rc;
    int old_fd = w->fd;
    uint64_t prev_end = w->file_off;
    rc = rv_wal_direct_enter(w, number, prev_end);
    if (rc != RAVEL_OK) {
        /* stay buffered: the finished segment is followed by a new one */
        auto_log(a, "WAL I/O: staying %s at segment %llu: the direct "
                 "segment could not be started: %s", a->buffered_name,
                 (unsigned long long)number, rv_errmsg_get());
        rc = a->buffered->open(w, number, prev_end, NULL, NULL);
        if (rc == RAVEL_OK)
            close(old_fd);
        return rc;
    }
    close(old_fd);
    auto_enter_mode(w, a->direct, number, reason);
    return RAVEL_OK;
}

/* Direct -> buffered at the switch to segment NUMBER.  write_mu held. */
static int auto_to_buffered(rv_wal *w, uint64_t number, const char *reason)
    RV_REQUIRES(w->write_mu);
static int auto_to_buffered(rv_wal *w, uint64_t number, const char *reason)
{
    struct rv_wal_auto *a = w->autos;
    int rc = rv_wal_direct_leave(w, number);
    if (rc != RAVEL_OK)
        return rc;
    int old_fd = w->fd;
    rv_mutex_lock(&w->sync_mu); /* the buffered mode's header, which its
                                ** open does not set (it never changes
                                ** there): syncers read it under sync_mu */
    w->header_size = RV_WAL_HEADER_SIZE;
    rv_mutex_unlock(&w->sync_mu);
    rc = a->buffered->open(w, number, w->file_off, NULL, NULL);
    if (rc != RAVEL_OK) {
        /* as a failed buffered switch: stay, refusing further writes */
        rv_mutex_lock(&w->sync_mu);
        rv_wal_fail_reason_locked(w, rv_errmsg_get());
        rv_mutex_unlock(&w->sync_mu);
        return rc;
    }
    close(old_fd);
    auto_enter_mode(w, a->buffered, number, reason);
    return RAVEL_OK;
}

/* Whether to switch at the move to segment NUMBER, and why (REASON). */
static int auto_decide(rv_wal *w, uint64_t number, char *reason,
                       size_t size)
{
    struct rv_wal_auto *a = w->autos;
    const struct rv_wal_ops *cur = auto_cur(w);
    a->segments_in_mode++;
    if (a->switch_every) {
        snprintf(reason, size, "wal_io_switch_every_segments=%d (testing)",
                 a->switch_every);
        return a->segments_in_mode >= a->switch_every;
    }
    if (auto_other_cheaper(a, cur, a->seg_synced, a->seg_plain))
        a->votes++;
    else
        a->votes = 0;
    if (a->votes < AUTO_VOTES)
        return 0;
    uint64_t b, d;
    auto_costs(a, a->seg_synced, a->seg_plain, &b, &d);
    uint64_t groups = a->seg_synced + a->seg_plain;
    snprintf(reason, size, "%llu of %llu groups in segment %llu synced; "
             "priced by the probe: direct %.0f us, buffered %.0f us, "
             "the other mode cheaper for %d segments in a row",
             (unsigned long long)a->seg_synced, (unsigned long long)groups,
             (unsigned long long)(number - 1), (double)d / 1e3,
             (double)b / 1e3, a->votes);
    /* to direct only where the spare is ready: nobody waits for it */
    return auto_is_direct(a, cur) || rv_wal_direct_spare_ready(w, number);
}

/* The switch_segment operation.  write_mu held. */
static int auto_switch(rv_wal *w, uint64_t number)
    RV_REQUIRES(w->write_mu);
static int auto_switch(rv_wal *w, uint64_t number)
{
    struct rv_wal_auto *a = w->autos;
    const struct rv_wal_ops *cur = auto_cur(w);
    char reason[RV_WAL_WHY_MAX / 2];
    int change = auto_decide(w, number, reason, sizeof reason);
    a->seg_synced = a->seg_plain = 0;
    a->spare_asked = 0;
    int rc;
    if (change && auto_is_direct(a, cur))
        rc = auto_to_buffered(w, number, reason);
    else if (change)
        rc = auto_to_direct(w, number, reason);
    else if (auto_is_direct(a, cur))
        rc = cur->switch_segment(w, number);
    else {
        /* a spare asked for and not taken must not meet the buffered
        ** mode's creation of the same number */
        rv_wal_direct_drop_spare(w, number);
        rc = cur->switch_segment(w, number);
    }
    if (rc == RAVEL_OK && auto_cur(w) != cur && !a->switch_every)
        a->decided = 1; /* kept at close (auto_keep_settled) */
    if (rc == RAVEL_OK && a->switch_every && !auto_is_direct(a, auto_cur(w)))
        rv_wal_direct_want_spare(w, number + 1);
    return rc;
}

/* -------------------------------------------------------------- lifetime */

/* At close: the mode this run moved to on its own, kept in the probe's
** cache for the next open (a failure to write it is only logged). */
static void auto_keep_settled(rv_wal *w)
{
    struct rv_wal_auto *a = w->autos;
    enum rv_wal_settled now = auto_is_direct(a, auto_cur(w))
                                  ? RV_WAL_SETTLED_DIRECT
                                  : RV_WAL_SETTLED_BUFFERED;
    if (!a->decided || !a->measured || now == a->settled)
        return;
    if (rv_wal_probe_cache_store(w->dir, &a->probe, a->measured, now) !=
        RAVEL_OK) {
        auto_log(a, "WAL I/O: the mode settled on (%s) not kept in %s: %s",
                 now == RV_WAL_SETTLED_DIRECT ? "direct" : "buffered",
                 RV_WAL_PROBE_CACHE, rv_errmsg_get());
        return;
    }
    a->settled = now;
    auto_log(a, "WAL I/O: %s kept in %s: the next open starts there",
             now == RV_WAL_SETTLED_DIRECT ? "direct" : a->buffered_name,
             RV_WAL_PROBE_CACHE);
}

/* The open operation: segment NUMBER in the mode wal_choose.c started
** with; the direct mode's state made ready either way. */
static int auto_open(rv_wal *w, uint64_t number, uint64_t prev_end,
                     const struct ravel_options *o,
                     const struct rv_wal_setup *setup)
{
    struct rv_wal_auto *a = w->autos;
    const struct rv_wal_ops *cur = auto_cur(w);
    int rc = cur->open(w, number, prev_end, o, setup);
    if (rc == RAVEL_OK && !auto_is_direct(a, cur))
        rc = rv_wal_direct_prepare(w, o, setup);
    if (rc == RAVEL_OK && a->switch_every && !auto_is_direct(a, cur))
        rv_wal_direct_want_spare(w, number + 1);
    return rc;
}

/* The destroy operation: both modes' state, then the ring when the
** buffered mode does not own it, the LOG's descriptor. */
static void auto_destroy(rv_wal *w)
{
    struct rv_wal_auto *a = w->autos;
    if (!a)
        return;
    a->buffered->destroy(w);
    a->direct->destroy(w);
    if (a->ring_owned)
        io_uring_queue_exit(&w->ring);
    if (a->log_fd >= 0)
        close(a->log_fd);
    rv_mutex_destroy(&a->why_mu);
    free(a);
    w->autos = NULL;
}

static const struct rv_wal_ops auto_ops_table = {
    .open = auto_open,
    .reserve = auto_reserve,
    .append = auto_append,
    .wait_written = auto_wait_written,
    .sync_to = auto_sync_to,
    .sync_all = auto_sync_all,
    .flush = auto_flush,
    .switch_segment = auto_switch,
    .recycle = auto_recycle,
    .close = auto_close,
    .destroy = auto_destroy,
    .stats = auto_stats,
    .tagged = -1, /* the segment's: version 3 (direct) only */
};

const struct rv_wal_ops *rv_wal_auto_ops(void)
{
    return &auto_ops_table;
}

int rv_wal_auto_init(rv_wal *w, const struct ravel_options *o,
                     const struct rv_wal_probe *probe, int dsync,
                     enum rv_wal_io start, int64_t measured,
                     enum rv_wal_settled settled)
{
    struct rv_wal_auto *a = calloc(1, sizeof *a);
    if (!a)
        return rv_error(RAVEL_NOMEM, "out of memory opening the WAL");
    a->buffered = rv_wal_buffered_ops();
    a->direct = rv_wal_direct_ops();
    a->buffered_name = w->use_uring ? "uring" : "sync";
    a->probe = *probe;
    a->dsync = dsync;
    a->switch_every = o->wal_io_switch_every_segments;
    a->measured = measured;
    a->settled = settled;
    a->ring_owned = !w->use_uring;
    char path[RV_PATH_MAX];
    a->log_fd = rv_path_join(path, w->dir, RV_FILE_LOG) == RAVEL_OK
                    ? rv_open(path, O_WRONLY | O_APPEND | O_CREAT, 0644)
                    : -1;
    rv_mutex_init(&a->why_mu);
    atomic_init(&a->cur, start == RV_WAL_IO_DIRECT ? a->direct : a->buffered);
    snprintf(a->why, sizeof a->why, "%s from the start%s",
             start == RV_WAL_IO_DIRECT ? "direct" : a->buffered_name,
             settled != RV_WAL_SETTLED_NONE
                 ? " (the mode it settled on last time)" : "");
    w->autos = a;
    return RAVEL_OK;
}

const char *rv_wal_auto_mode(rv_wal *w, char *why, size_t size)
{
    struct rv_wal_auto *a = w->autos;
    const struct rv_wal_ops *cur = auto_cur(w);
    rv_mutex_lock(&a->why_mu);
    snprintf(why, size, "%s", a->why);
    rv_mutex_unlock(&a->why_mu);
    return auto_is_direct(a, cur) ? "direct" : a->buffered_name;
}

#endif /* RAVEL_OMIT_IO_URING */
