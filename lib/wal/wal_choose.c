/*
** wal_choose.c -- which mode writes the WAL, and why: the one place that
** reads wal_io and decides among wal_io=sync, uring and direct.
**
** Owns: the choice (w->io, w->io_why, w->ops), setting up the ring a mode
** needs and tearing it down when the choice falls back to pwrite, the
** fallbacks when io_uring or O_DIRECT is refused, and how the choice is
** reported
** (rv_wal_io_mode: ravel.wal-io, ravel.stats, the LOG).  Does not own:
** the measurements (wal_probe.c), the modes themselves (wal_buffered.c for
** sync and uring, wal_direct.c for direct), the segment files.
**
** Why it chooses what it chooses (docs/performance.md has the numbers,
** docs/design.md "io_uring, measured" and "The direct WAL" the designs):
**
**   - wal_io=sync, uring, direct: what was asked for.  uring and direct
**     need the ring: where the kernel refuses io_uring (not built in,
**     io_uring_disabled, seccomp, no locked memory), the open fails with
**     the reason rather than quietly running another mode.  direct also
**     needs O_DIRECT in the directory (the probe tries it: tmpfs before
**     Linux 6.6 refuses it), else the open fails, naming the file system.
**   - wal_io=auto (the default) takes the probe's numbers (measured at
**     the first open on a file system and kernel, then reused from
**     wal-probe.cache: wal_probe_cache.c; choose_probe) and picks, in
**     this order:
**     1. direct if O_DIRECT works, a direct RWF_DSYNC write costs no more
**        than pwrite + fdatasync (a RAVEL_SYNC write is then no slower),
**        AND a plain direct write costs no more than WAL_AUTO_DIRECT_PLAIN
**        (2) times a pwrite.  The last test is the one that matters: a
**        write without RAVEL_SYNC waits for its direct write to reach the
**        device (49-121 us measured), where pwrite only copies to the page
**        cache (0.5-0.8 us), and the default, unsynced writes must not
**        become slow.  No disk measured so far passes it, so auto does not
**        pick direct there and says so with the numbers: wal_io=direct is
**        for databases whose writes are mostly RAVEL_SYNC.
**     2. else uring if a buffered io_uring write costs no more than a
**        pwrite: only where the file system completes buffered writes
**        inside the submit call (XFS, btrfs).  ext4 hands each one to a
**        kernel worker thread: ~30 us against ~1 us for pwrite.
**     3. else sync: pwrite + fdatasync.
**     Where io_uring cannot be set up, auto takes sync and records why;
**     it never fails the open.
**   - manual_wal_flush=true: never direct (a direct write goes out at
**     once; rv_options_check refuses the combination asked for); under
**     auto,
**     uring if the probe finds it no slower than pwrite, else sync.
**   - recycle_log_file_num > 0 needs direct (the buffered modes trim each
**     segment to its data, leaving nothing to reuse): rv_options_check
**     refuses it with sync or uring asked for; here it is noted as having
**     no effect when auto does not pick direct.
**   - In direct mode, sync groups are written with RWF_DSYNC unless the
**     probe finds that more than 25% dearer than a direct write and an
**     fdatasync (choose_dsync_pays); wal_io=direct asked for runs the
**     probe for that and for the block size.
**
** Every decision writes its reason into w->io_why, which is what
** ravel.wal-io and the LOG show: the mode is never a mystery.
*/
#include "wal/wal_writer_int.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/filename.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef RAVEL_OMIT_IO_URING
# include <liburing.h>
#endif

#define WAL_RING_ENTRIES 64 /* direct: 16 writes in flight, an fdatasync,
                            ** the completion thread's stop marker */
/* wal_io=auto: a plain direct write may cost at most this many times a
** pwrite (choose_auto). */
#define WAL_AUTO_DIRECT_PLAIN 2

#ifndef RAVEL_OMIT_IO_URING
/* The probe picked pwrite: the ring set up for it goes. */
static void choose_uring_teardown(rv_wal *w)
{
    io_uring_queue_exit(&w->ring);
    close(w->event_fd);
    w->event_fd = -1;
    w->use_uring = 0;
}

/* wal_io=auto without manual_wal_flush: rules 1-3 of the top comment,
** with the probe's numbers in io_why either way. */
static enum rv_wal_io choose_auto(rv_wal *w, const struct rv_wal_probe *p)
{
    char costs[240];
    snprintf(costs, sizeof costs, "direct+DSYNC %.0f us vs pwrite+fdatasync "
             "%.0f us, direct %.0f us vs pwrite %.1f us",
             (double)p->direct_sync_ns / 1e3,
             (double)p->pwrite_sync_ns / 1e3, (double)p->direct_ns / 1e3,
             (double)p->pwrite_ns / 1e3);
    if (p->direct_ok && p->direct_sync_ns <= p->pwrite_sync_ns &&
        p->direct_ns <= WAL_AUTO_DIRECT_PLAIN * p->pwrite_ns) {
        snprintf(w->io_why, sizeof w->io_why, "wal_io=auto on %s: %s",
                 p->fs, costs);
        return RV_WAL_IO_DIRECT;
    }
    const char *not_direct = !p->direct_ok ? p->why_not_direct
        : p->direct_sync_ns > p->pwrite_sync_ns
            ? "a synced direct write costs more than pwrite+fdatasync"
            : "writes without RAVEL_SYNC would wait for the device; "
              "wal_io=direct pays where most writes are RAVEL_SYNC";
    enum rv_wal_io io = p->uring_pays ? RV_WAL_IO_URING : RV_WAL_IO_SYNC;
    snprintf(w->io_why, sizeof w->io_why, "wal_io=auto on %s: not direct "
             "(%s%s%s); %s", p->fs, not_direct, p->direct_ok ? ": " : "",
             p->direct_ok ? costs : "",
             io == RV_WAL_IO_URING
                 ? "a buffered io_uring write costs no more than pwrite"
                 : "a buffered io_uring write costs more than pwrite here "
                   "(a kernel worker thread runs it where the file system "
                   "cannot complete it inline, as ext4)");
    return io;
}

/* wal_io=auto moves between a buffered mode and direct as the writes
** say (wal_auto.c) where direct works and nothing pins the mode:
** manual_wal_flush never runs direct, recycle_log_file_num keeps direct's
** files for reuse. */
static int choose_adapts(const struct ravel_options *o,
                         const struct rv_wal_probe *p)
{
    return o->wal_io == RV_WAL_IO_AUTO && !o->manual_wal_flush &&
           o->recycle_log_file_num == 0 && p->direct_ok && p->block;
}

/* Appends "; NOTE" to w->io_why. */
static void choose_why_append(rv_wal *w, const char *note)
{
    size_t n = strlen(w->io_why);
    snprintf(w->io_why + n, sizeof w->io_why - n, "; %s", note);
}

/* The probe's numbers: the cached ones (wal_probe_cache.c) when they
** still hold for this file system and kernel, else measured now and
** cached.  Where they came from goes into NOTE (SIZE bytes), for io_why. */
static void choose_probe(rv_wal *w, struct rv_wal_probe *p, char *note,
                         size_t size, int64_t *measured,
                         enum rv_wal_settled *settled)
{
    int64_t when;
    *measured = 0;
    *settled = RV_WAL_SETTLED_NONE;
    if (rv_wal_probe_cache_load(w->dir, p, &when, settled)) {
        *measured = when;
        time_t t = (time_t)when;
        struct tm tm;
        char stamp[32] = "?";
        if (gmtime_r(&t, &tm))
            strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(note, size, "probe result of %s reused (%s)", stamp,
                 RV_WAL_PROBE_CACHE);
        return;
    }
    rv_wal_probe_run(w, p);
    if (!p->pwrite_sync_ns) { /* the probe could not run: not cached */
        snprintf(note, size, "probe measured at this open");
        return;
    }
    int64_t now = (int64_t)time(NULL);
    if (rv_wal_probe_cache_store(w->dir, p, now, RV_WAL_SETTLED_NONE) !=
        RAVEL_OK) {
        snprintf(note, size, "probe measured at this open, not cached: %.100s",
                 rv_errmsg_get());
    } else {
        snprintf(note, size, "probe measured at this open, cached in %s",
                 RV_WAL_PROBE_CACHE);
        *measured = now;
    }
}

/* The adaptive WAL starts in the mode it last settled on (SETTLED, from
** the probe's cache: wal_auto.c), not in the one the probe's numbers
** pick, so that a database whose writes made it move to direct (or back)
** does not spend its first segments of every run in the other mode.  The
** buffered mode it would leave for, or start in, is the probe's: uring
** where a buffered io_uring write pays, else pwrite. */
static void choose_settled(rv_wal *w, const struct rv_wal_probe *p,
                           enum rv_wal_settled settled)
{
    enum rv_wal_io buffered = p->uring_pays ? RV_WAL_IO_URING
                                            : RV_WAL_IO_SYNC;
    enum rv_wal_io start = settled == RV_WAL_SETTLED_DIRECT ? RV_WAL_IO_DIRECT
                           : settled == RV_WAL_SETTLED_BUFFERED ? buffered
                                                                : w->io;
    if (start == w->io)
        return;
    choose_why_append(w, start == RV_WAL_IO_DIRECT
        ? "starts direct, the mode it settled on last time ("
          RV_WAL_PROBE_CACHE ")"
        : "starts buffered, the mode it settled on last time ("
          RV_WAL_PROBE_CACHE ")");
    if (start == RV_WAL_IO_DIRECT && w->io == RV_WAL_IO_SYNC)
        w->use_uring = 0; /* the buffered mode it may go back to: pwrite */
    w->io = start;
}

/* Whether RAVEL_SYNC groups should be written with RWF_DSYNC rather than
** followed by an fdatasync: one operation instead of two, so it is kept
** unless the probe found it clearly (25%) slower -- the probe's few
** samples must not flip the choice between two equal costs. */
static int choose_dsync_pays(const struct rv_wal_probe *p)
{
    return p->direct_sync_ns * 4 <= p->direct_fsync_ns * 5;
}

/* wal_io=direct, asked for: the probe must find O_DIRECT working; it
** also says whether RWF_DSYNC beats a write and an fdatasync (*DSYNC). */
static int choose_direct(rv_wal *w, const struct rv_wal_probe *p,
                         int *dsync)
{
    if (!p->direct_ok)
        return rv_error(RAVEL_INVALID, "wal_io=direct: %s in %s",
                        p->why_not_direct, w->dir);
    *dsync = choose_dsync_pays(p);
    snprintf(w->io_why, sizeof w->io_why, "wal_io=direct was requested; "
             "on %s, sync by %s: direct+DSYNC %.0f us vs direct+fdatasync "
             "%.0f us", p->fs, *dsync ? "RWF_DSYNC" : "fdatasync",
             (double)p->direct_sync_ns / 1e3,
             (double)p->direct_fsync_ns / 1e3);
    return RAVEL_OK;
}
#endif

/* Decides the mode (w->io, w->io_why) and sets up the ring it needs.
** For direct: SETUP->block gets the block size the probe found,
** SETUP->dsync whether sync groups are written with RWF_DSYNC. */
static int choose_mode(rv_wal *w, const struct ravel_options *o,
                       struct rv_wal_setup *setup)
{
    enum rv_wal_io mode = o->wal_io;
    setup->block = 0;
    setup->dsync = 1;
    /* wal_io=direct with manual_wal_flush, and recycle_log_file_num with
    ** wal_io=sync or uring, were refused by rv_options_check. */
    if (mode == RV_WAL_IO_SYNC) {
        w->io = RV_WAL_IO_SYNC;
        snprintf(w->io_why, sizeof w->io_why, "wal_io=sync was requested");
        return RAVEL_OK;
    }
#ifdef RAVEL_OMIT_IO_URING
    w->io = RV_WAL_IO_SYNC;
    snprintf(w->io_why, sizeof w->io_why, "built without io_uring "
             "(RAVEL_OMIT_IO_URING)");
    if (mode != RV_WAL_IO_AUTO)
        return rv_error(RAVEL_INVALID, "wal_io=%s: this build of ravel "
                        "has no io_uring support (RAVEL_OMIT_IO_URING)",
                        mode == RV_WAL_IO_DIRECT ? "direct" : "uring");
    return RAVEL_OK;
#else
    const char *why = NULL;
    int r = rv_wal_uring_setup(w, WAL_RING_ENTRIES, &why);
    if (r != 0) {
        w->io = RV_WAL_IO_SYNC;
        snprintf(w->io_why, sizeof w->io_why, "%s", why);
        if (mode != RV_WAL_IO_AUTO)
            return rv_error_errno(RAVEL_IOERR, -r, "wal_io=%s: %s",
                                  mode == RV_WAL_IO_DIRECT ? "direct"
                                                           : "uring", why);
        return RAVEL_OK;
    }
    w->use_uring = 1;
    if (mode == RV_WAL_IO_URING) {
        w->io = mode;
        snprintf(w->io_why, sizeof w->io_why, "wal_io=uring was requested");
        return RAVEL_OK;
    }
    struct rv_wal_probe p;
    char probed[200];
    int64_t measured;
    enum rv_wal_settled settled;
    choose_probe(w, &p, probed, sizeof probed, &measured, &settled);
    setup->block = p.block;
    if (mode == RV_WAL_IO_DIRECT) {
        w->io = mode;
        int rc = choose_direct(w, &p, &setup->dsync);
        choose_why_append(w, probed);
        return rc;
    }
    w->io = o->manual_wal_flush && p.uring_pays ? RV_WAL_IO_URING
            : o->manual_wal_flush ? RV_WAL_IO_SYNC
                                  : choose_auto(w, &p);
    if (o->manual_wal_flush)
        snprintf(w->io_why, sizeof w->io_why, "wal_io=auto with "
                 "manual_wal_flush on %s: io_uring %s", p.fs,
                 p.uring_pays ? "costs no more than pwrite"
                              : "is slower than pwrite here");
    if (w->io == RV_WAL_IO_DIRECT)
        setup->dsync = choose_dsync_pays(&p);
    if (w->io != RV_WAL_IO_DIRECT && o->recycle_log_file_num > 0) {
        size_t n = strlen(w->io_why);
        snprintf(w->io_why + n, sizeof w->io_why - n, "; "
                 "recycle_log_file_num=%d has no effect without direct",
                 o->recycle_log_file_num);
    }
    if (choose_adapts(o, &p)) {
        setup->dsync = choose_dsync_pays(&p);
        choose_settled(w, &p, settled);
        if (w->io == RV_WAL_IO_SYNC)
            w->use_uring = 0; /* pwrite; the ring kept for direct */
        choose_why_append(w, w->io == RV_WAL_IO_DIRECT
            ? "adaptive: leaves direct for the buffered mode at a segment "
              "switch when too few writes are synced"
            : "adaptive: moves to direct at a segment switch when most "
              "writes are synced (wal_auto.c)");
        choose_why_append(w, probed);
        return rv_wal_auto_init(w, o, &p, setup->dsync, w->io, measured,
                                settled);
    }
    choose_why_append(w, probed);
    if (w->io == RV_WAL_IO_SYNC)
        choose_uring_teardown(w); /* io_why says why */
    return RAVEL_OK;
#endif
}

int rv_wal_choose(rv_wal *w, const struct ravel_options *o,
                  struct rv_wal_setup *setup)
{
    int rc = choose_mode(w, o, setup);
    if (rc != RAVEL_OK)
        return rc;
    if (rv_test_wal_direct_fdatasync_forced())
        setup->dsync = 0;
#ifndef RAVEL_OMIT_IO_URING
    if (w->autos) {
        w->ops = rv_wal_auto_ops();
        return RAVEL_OK;
    }
    if (w->io == RV_WAL_IO_DIRECT) {
        w->ops = rv_wal_direct_ops();
        return RAVEL_OK;
    }
#endif
    /* sync and uring share one implementation: w->use_uring says which
    ** call writes (wal_buffered.c). */
    w->ops = o->manual_wal_flush ? rv_wal_manual_ops() : rv_wal_buffered_ops();
    return RAVEL_OK;
}

const char *rv_wal_io_mode(rv_wal *w, char *why, size_t size)
{
#ifndef RAVEL_OMIT_IO_URING
    if (w->autos) {
        char now[RV_WAL_WHY_MAX];
        const char *mode = rv_wal_auto_mode(w, now, sizeof now);
        snprintf(why, size, "%s; now %s", w->io_why, now);
        return mode;
    }
#endif
    snprintf(why, size, "%s", w->io_why);
    return w->io == RV_WAL_IO_DIRECT ? "direct"
           : w->io == RV_WAL_IO_URING ? "uring" : "sync";
}
