/*
** wal_buffered.c -- wal_io=sync and wal_io=uring: the WAL written through
** the page cache, one write per group (or per manual_wal_flush buffer),
** made durable by batched fdatasyncs.  wal_writer.h has the contract,
** wal_format.h the bytes (version 1 segments).
**
** Owns: these modes' operations (rv_wal_buffered_ops, and
** rv_wal_manual_ops for manual_wal_flush=true): the pwrite and buffered
** io_uring writes, the batched fdatasync and its watcher, the
** manual_wal_flush buffer, creating, trimming and sealing segments.
** Does not own: choosing the mode or setting up the ring (wal_choose.c),
** the submission helpers, the fdatasync bookkeeping and the failure
** record every mode shares (wal_writer.c), wal_io=direct (wal_direct.c).
**
** The two modes run the same code; the only difference is the I/O call:
** with the ring set up (w->use_uring: wal_io=uring) a write or fdatasync
** is submitted to it, else (wal_io=sync) pwrite() and fdatasync() run in
** the calling thread.
**
** io_uring, and why it pays here: a group's records go out as ONE write
** submitted by the leader, with an fdatasync linked behind it
** (IOSQE_IO_LINK) when a member asked for sync and no fdatasync is already
** in flight; that is one io_uring_enter for write + sync.  The leader
** waits only for the write's completion; the fdatasync runs in the kernel
** while the next group forms and submits its own write.  The next sync
** waiter to find no fdatasync in flight issues one covering everything
** written so far, so one fdatasync acknowledges every writer who arrived
** during the previous one.
**
** Completions: the CQ ring is consumed under cq_mu.  The leader, after
** submitting, drains the ring and finds its write's completion there when
** the write completed inside the submit call (where the file system
** completes buffered writes inline, as XFS and btrfs do; ext4 hands them
** to a kernel worker: wal_choose.c, docs/performance.md "io_uring against
** pwrite"); otherwise it blocks in io_uring_wait_cqe
** holding cq_mu.
** The one sync waiter watching an fdatasync (the "watcher") never blocks in
** the kernel holding cq_mu: it sleeps on an eventfd registered with the
** ring for asynchronous completions, then drains under cq_mu.  Other sync
** waiters sleep on a futex (sync_gen) bumped when an fdatasync finishes,
** and on waking check the durable offset (an atomic) without taking
** sync_mu, so the covered waiters return at once instead of queueing on
** the mutex one by one.  A watcher that finds, back under sync_mu, that
** another thread applied its fdatasync and started the next one wakes the
** sleepers too, so that one of them watches the new one.
**
** Failure rules: a short write is completed by resubmitting the rest; a
** linked fdatasync behind a short write completes with -ECANCELED and is
** never counted as durable.  EINTR/EAGAIN are retried.  Any other failure
** of a write or an fdatasync is final: it is recorded, under sync_mu, in
** the database's rv_stop (util/stop.h) given at rv_wal_open, and from then
** on every append and sync fails with RAVEL_IOERR and the recorded reason
** (checked under sync_mu, so no sync that saw the failure's wake-up can
** miss it).
**
** Without io_uring (RAVEL_OMIT_IO_URING, wal_io=sync, or a kernel that
** refuses it) the same protocol runs with pwrite() and fdatasync().
**
** manual_wal_flush (rv_wal_manual_ops): a group's records are copied into
** the WAL's own buffer (WAL_MANUAL_BUFFER_BYTES) instead of being written;
** the buffer goes out as ONE write, on the same I/O path, when the next
** group would not fit in it, when a group has a sync member (with the
** fdatasync linked behind, as above), when a sync waiter or rv_wal_flush
** needs it, and before a segment is finished (switch, close).  Until then
** a process crash loses the buffered records: that is the option's price,
** and its gain is one write per buffer instead of one per group.  write_mu
** makes the hand-off safe: every write to the segment file -- the
** leader's, a flusher's from any thread, a segment switch -- holds it, so
** the buffer is appended to and written out whole, in order, exactly
** once, and the file offset, the fd and the io_uring write completion have
** one user at a time.  Lock order: write_mu, then sync_mu (then sq_mu /
** cq_mu).
*/
#include "wal/wal_writer_int.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/sync_journal.h"
#include "util/stop.h"
#include "wal/wal_format.h"
#include "util/futex.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RAVEL_OMIT_IO_URING
# include <liburing.h>
#endif

#define WAL_GATHER_NS 200000        /* at most 200 us */
#define WAL_GATHER_SLICE_NS 50000
/* manual_wal_flush's buffer: RocksDB's writable_file_max_buffer_size
** default.  A group larger than it is written directly. */
#define WAL_MANUAL_BUFFER_BYTES (1u << 20)

/* ------------------------------------------------------ sync sleeping */

/* Like wal_sync_sleep, for at most NS nanoseconds. */
static void wal_sync_sleep_for(rv_wal *w, uint32_t gen, long ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ns};
    rv_futex_wait(&w->sync_gen, gen, &ts);
}

/* Sleeps until the generation moves past GEN (read before the caller
** looked at the state under sync_mu, so no wake-up is missed).  Called
** and returns with sync_mu released. */
static void wal_sync_sleep(rv_wal *w, uint32_t gen)
{
    rv_futex_wait(&w->sync_gen, gen, NULL);
}

/* ------------------------------------------------------------- failures */

/* Records the failure of WHAT with errno ERR. */
static void wal_fail(rv_wal *w, int err, const char *what)
{
    rv_mutex_lock(&w->sync_mu);
    rv_wal_fail_locked(w, err, what);
    rv_mutex_unlock(&w->sync_mu);
}

/* ------------------------------------------------------------ io_uring */

#ifndef RAVEL_OMIT_IO_URING

/* Drains every available completion; the caller is the reaper. */
static void wal_uring_drain(rv_wal *w)
{
    struct io_uring_cqe *cqe;
    unsigned head, n = 0;
    io_uring_for_each_cqe(&w->ring, head, cqe) {
        struct rv_wal_completion *c = io_uring_cqe_get_data(cqe);
        if (c)
            rv_wal_completion_set(c, cqe->res);
        n++;
    }
    io_uring_cq_advance(&w->ring, n);
}

/* Waits until C is done, draining the ring; may block in the kernel while
** holding cq_mu, so only for a completion that is due soon (a write).
** Returns 0, or -errno if waiting on the ring itself failed. */
static int wal_uring_wait(rv_wal *w, struct rv_wal_completion *c)
{
    int err = 0;
    rv_mutex_lock(&w->cq_mu);
    for (;;) {
        wal_uring_drain(w);
        if (rv_wal_completion_is_done(c))
            break;
        struct io_uring_cqe *cqe;
        int r = io_uring_wait_cqe(&w->ring, &cqe);
        if (r < 0 && r != -EINTR && r != -EAGAIN) {
            err = r;
            break;
        }
    }
    rv_mutex_unlock(&w->cq_mu);
    return err;
}

/* Waits until C (an fdatasync) is done without holding cq_mu while
** asleep: sleeps on the eventfd, drains under cq_mu.  The poll timeout
** only bounds the cost of a wake-up that could be missed if the kernel
** completed the fdatasync inline (it does not today). */
static void wal_uring_watch(rv_wal *w, struct rv_wal_completion *c)
{
    for (;;) {
        rv_mutex_lock(&w->cq_mu);
        wal_uring_drain(w);
        rv_mutex_unlock(&w->cq_mu);
        if (rv_wal_completion_is_done(c))
            return;
        struct pollfd pfd = {.fd = w->event_fd, .events = POLLIN};
        if (poll(&pfd, 1, 10) > 0) {
            uint64_t count;
            ssize_t ignored = read(w->event_fd, &count, sizeof count);
            RV_UNUSED(ignored);
        }
    }
}

/* One write attempt through the ring: bytes written or -errno. */
static int wal_uring_write_once(rv_wal *w, const char *p, size_t len,
                                uint64_t off, int link_sync)
{
    /* In the WAL, not on the stack: if waiting on the ring fails, a late
    ** completion must not land in a dead stack frame (the WAL is failed
    ** for good then, so no later write can mistake it for its own). */
    struct rv_wal_completion *c = &w->write_done;
    rv_wal_completion_reset(c);
    int r = rv_wal_uring_submit_write(w, p, len, off, c, 0, link_sync);
    if (r < 0)
        return r;
    r = wal_uring_wait(w, c);
    return r < 0 ? r : atomic_load_explicit(&c->res, memory_order_relaxed);
}

#endif /* RAVEL_OMIT_IO_URING */

/* One write attempt with pwrite: bytes written or -errno. */
static int wal_pwrite_once(rv_wal *w, const char *p, size_t len, uint64_t off)
{
    ssize_t n = pwrite(w->fd, p, len, (off_t)off);
    return n < 0 ? -errno : (int)n;
}

/* ------------------------------------------------------------- syncing */

/* Issues the fdatasync begun by rv_wal_fsync_begin_locked.  Called without
** sync_mu; returns with the completion set (sync path) or submitted. */
static void wal_fsync_issue(rv_wal *w, int fd)
{
#ifndef RAVEL_OMIT_IO_URING
    if (w->use_uring) {
        int r = rv_wal_uring_submit_fsync(w);
        if (r < 0)
            rv_wal_completion_set(&w->fsync_done, r);
        return;
    }
#endif
    int r = fdatasync(fd) == 0 ? 0 : -errno;
    rv_wal_completion_set(&w->fsync_done, r);
}

/* Watches the in-flight fdatasync until it ends and applies its result.
** sync_mu held on entry and exit.  Returns 0 if another thread is already
** watching (the caller then sleeps instead). */
static int wal_fsync_watch_locked(rv_wal *w)
    RV_REQUIRES(w->sync_mu);
static int wal_fsync_watch_locked(rv_wal *w)
{
    if (rv_wal_completion_is_done(&w->fsync_done)) {
        rv_wal_fsync_finished_locked(w);
        return 1;
    }
#ifndef RAVEL_OMIT_IO_URING
    if (w->use_uring && !w->fsync_watched) {
        w->fsync_watched = 1;
        rv_mutex_unlock(&w->sync_mu);
        wal_uring_watch(w, &w->fsync_done);
        rv_pause_here(RV_PAUSE_WAL_WATCHED);
        rv_mutex_lock(&w->sync_mu);
        w->fsync_watched = 0;
        /* Another thread may have applied it and started the next one
        ** meanwhile: apply only a completion that is really there. */
        if (w->fsync_inflight && rv_wal_completion_is_done(&w->fsync_done))
            rv_wal_fsync_finished_locked(w);
        else if (w->fsync_inflight)
            /* That next fdatasync's waiters went to sleep counting on this
            ** watcher, which may now leave: wake them, so that one of them
            ** watches it. */
            rv_wal_sync_wake_locked(w);
        return 1;
    }
#endif
    /* The watcher, or on the sync path the issuing thread, wakes us. */
    return 0;
}

/* Waits until no fdatasync is in flight.  sync_mu held on entry and exit. */
static void wal_fsync_wait_locked(rv_wal *w)
    RV_REQUIRES(w->sync_mu);
static void wal_fsync_wait_locked(rv_wal *w)
{
    while (w->fsync_inflight) {
        uint32_t gen = atomic_load_explicit(&w->sync_gen, memory_order_acquire);
        if (wal_fsync_watch_locked(w))
            continue;
        rv_mutex_unlock(&w->sync_mu);
        wal_sync_sleep(w, gen);
        rv_mutex_lock(&w->sync_mu);
    }
}

/* Starts an fdatasync covering everything written so far.  sync_mu held
** on entry and exit (released while a sync-path fdatasync runs). */
static void wal_fsync_start_locked(rv_wal *w)
    RV_REQUIRES(w->sync_mu);
static void wal_fsync_start_locked(rv_wal *w)
{
    int fd = w->fd;
    int must_issue = rv_wal_fsync_begin_locked(w, w->written);
    rv_mutex_unlock(&w->sync_mu);
    if (must_issue)
        wal_fsync_issue(w, fd);
    rv_mutex_lock(&w->sync_mu);
    if (!w->use_uring && w->fsync_inflight &&
        rv_wal_completion_is_done(&w->fsync_done))
        rv_wal_fsync_finished_locked(w);
}

/* Whether a sync waiter about to start an fdatasync should first let the
** writers already on their way append, so that the fdatasync covers them
** too.  Without this, writers fall into two cohorts that alternate
** between two fdatasyncs, each covering half of them.  Bounded by
** WAL_GATHER_NS, so a steady stream of writers cannot starve a sync. */
static int wal_fsync_gather(rv_wal *w, uint64_t *since)
{
    if (atomic_load_explicit(&w->inbound, memory_order_relaxed) <= 0)
        return 0;
    uint64_t now = rv_now_nanos();
    if (!*since)
        *since = now;
    return now - *since < WAL_GATHER_NS;
}

/* The sync_to operation: waits for an fdatasync that began after END was
** written, issuing one if none is in flight. */
static int wal_sync_to(rv_wal *w, uint64_t end)
{
    uint64_t gather_since = 0;
    for (;;) {
        /* acquire: pairs with rv_wal_sync_wake_locked's release */
        if (atomic_load_explicit(&w->synced_atomic, memory_order_acquire) >=
            end) {
            atomic_fetch_add_explicit(&w->stat_sync_acks, 1,
                                      memory_order_relaxed);
            return RAVEL_OK;
        }
        uint32_t gen = atomic_load_explicit(&w->sync_gen, memory_order_acquire);
        rv_mutex_lock(&w->sync_mu);
        if (rv_wal_io_failed(w)) {
            rv_mutex_unlock(&w->sync_mu);
            return rv_wal_failure_rc(w);
        }
        int progressed = 1;
        if (w->synced >= end) {
            ; /* finished meanwhile: the fast path above returns */
        } else if (!w->fsync_inflight && wal_fsync_gather(w, &gather_since)) {
            atomic_fetch_add_explicit(&w->gathering, 1, memory_order_relaxed);
            rv_mutex_unlock(&w->sync_mu);
            wal_sync_sleep_for(w, gen, WAL_GATHER_SLICE_NS);
            rv_mutex_lock(&w->sync_mu);
            atomic_fetch_sub_explicit(&w->gathering, 1, memory_order_relaxed);
        } else if (!w->fsync_inflight) {
            wal_fsync_start_locked(w);
        } else {
            progressed = wal_fsync_watch_locked(w);
        }
        rv_mutex_unlock(&w->sync_mu);
        if (!progressed)
            wal_sync_sleep(w, gen);
    }
}

/* The wait_written operation: rv_wal_append returns once its write is
** complete, so there is never anything to wait for. */
static int wal_wait_written(rv_wal *w, uint64_t end)
{
    RV_UNUSED(w);
    RV_UNUSED(end);
    return RAVEL_OK;
}

/* ------------------------------------------------------------- appends */

/* The reserve operation: the leader's own buffer, grown to LEN. */
static char *wal_reserve(rv_wal *w, size_t len)
{
    if (len > w->buf_cap) {
        size_t cap = w->buf_cap ? w->buf_cap : 64 * 1024;
        while (cap < len)
            cap *= 2;
        char *p = realloc(w->buf, cap);
        if (!p)
            return NULL;
        w->buf = p;
        w->buf_cap = cap;
    }
    return w->buf;
}

/* Grows the segment's reserved space ahead of a write that would pass it:
** writes into reserved blocks make fdatasync cheaper (measured in
** docs/performance.md).  Preallocation is an optimisation: if the file
** system refuses it, it is switched off, not reported. */
static void wal_preallocate(rv_wal *w, uint64_t need_end)
{
    if (!w->prealloc_chunk || need_end <= w->preallocated)
        return;
    uint64_t len = w->prealloc_chunk;
    while (w->preallocated + len < need_end)
        len += w->prealloc_chunk;
    if (fallocate(w->fd, 0, (off_t)w->preallocated, (off_t)len) != 0) {
        w->prealloc_chunk = 0;
        return;
    }
    w->preallocated += len;
}

/* Writes all LEN bytes at OFF, completing short writes, retrying
** EINTR/EAGAIN.  LINK_SYNC links an fdatasync behind the first attempt. */
static int wal_write_all(rv_wal *w, const char *p, size_t len, uint64_t off,
                         int link_sync)
{
    size_t done = 0;
    while (done < len) {
        int r = rv_fault_check(RV_FAULT_WAL_WRITE);
        if (r == 0) {
#ifndef RAVEL_OMIT_IO_URING
            if (w->use_uring)
                r = wal_uring_write_once(w, p + done, len - done, off + done,
                                         link_sync);
            else
#endif
                r = wal_pwrite_once(w, p + done, len - done, off + done);
        } else if (link_sync) {
            /* The injected failure stands for the write; its linked
            ** fdatasync would be cancelled. */
            rv_wal_completion_set(&w->fsync_done, -ECANCELED);
        }
        link_sync = 0;
        if (r == -EINTR || r == -EAGAIN)
            continue;
        if (r <= 0)
            return r < 0 ? -r : EIO; /* 0 bytes: no progress, give up */
        done += (size_t)r;
    }
    return 0;
}

/* Writes the LEN bytes at P at the end of the segment, linking an
** fdatasync behind them when WANT_SYNC and none is in flight (otherwise
** the sync waiters issue the next one), and advances file_off and
** written.  write_mu held. */
static int wal_write_locked(rv_wal *w, const char *p, size_t len,
                            int want_sync)
    RV_REQUIRES(w->write_mu);
static int wal_write_locked(rv_wal *w, const char *p, size_t len,
                            int want_sync)
{
    rv_mutex_lock(&w->sync_mu);
    if (rv_wal_io_failed(w)) {
        rv_mutex_unlock(&w->sync_mu);
        return rv_wal_failure_rc(w);
    }
    uint64_t end = w->written + len;
    int link = 0;
    if (want_sync && w->use_uring && !w->fsync_inflight)
        link = rv_wal_fsync_begin_locked(w, end);
    rv_mutex_unlock(&w->sync_mu);

    wal_preallocate(w, w->file_off + len);
    int err = wal_write_all(w, p, len, w->file_off, link);
    if (err) {
        wal_fail(w, err, "write");
        return rv_wal_failure_rc(w);
    }
    w->file_off += len;
    rv_mutex_lock(&w->sync_mu);
    w->written = end;
    rv_mutex_unlock(&w->sync_mu);
    return RAVEL_OK;
}

/* Writes the manual_wal_flush buffer out, if it holds anything, for
** CAUSE.  On failure the buffered records are dropped with the WAL (it
** is failed for good: nothing of them may be written after a hole).
** write_mu held. */
static int wal_flush_pending_locked(rv_wal *w, int want_sync,
                                    enum wal_flush_cause cause)
    RV_REQUIRES(w->write_mu);
static int wal_flush_pending_locked(rv_wal *w, int want_sync,
                                    enum wal_flush_cause cause)
{
    if (w->pend_len == 0)
        return RAVEL_OK;
    int rc = wal_write_locked(w, w->pend, w->pend_len, want_sync);
    w->pend_len = 0;
    atomic_store_explicit(&w->stat_buffered, 0, memory_order_relaxed);
    if (rc == RAVEL_OK)
        atomic_fetch_add_explicit(&w->stat_buffer_writes[cause], 1,
                                  memory_order_relaxed);
    return rc;
}

/* manual_wal_flush: adds the LEN reserved bytes to the buffer, writing
** the buffer first if they do not fit, and then at once if WANT_SYNC.  A
** group of the buffer's size or more is written directly, after what the
** buffer held.  write_mu held. */
static int wal_append_to_buffer(rv_wal *w, size_t len, int want_sync)
    RV_REQUIRES(w->write_mu);
static int wal_append_to_buffer(rv_wal *w, size_t len, int want_sync)
{
    int rc = RAVEL_OK;
    /* Under write_mu, where a flusher records its failure: nothing is
    ** buffered, and so acknowledged, after a failed buffer write. */
    if (rv_wal_io_failed(w))
        rc = rv_wal_failure_rc(w);
    else if (w->pend_len + len > WAL_MANUAL_BUFFER_BYTES)
        rc = wal_flush_pending_locked(w, 0, WAL_FLUSH_FULL);
    if (rc == RAVEL_OK && len >= WAL_MANUAL_BUFFER_BYTES) {
        rc = wal_write_locked(w, w->buf, len, want_sync);
        if (rc == RAVEL_OK)
            atomic_fetch_add_explicit(&w->stat_buffer_writes[
                                          want_sync ? WAL_FLUSH_SYNC
                                                    : WAL_FLUSH_FULL],
                                      1, memory_order_relaxed);
    } else if (rc == RAVEL_OK) {
        memcpy(w->pend + w->pend_len, w->buf, len);
        w->pend_len += len;
        atomic_store_explicit(&w->stat_buffered, w->pend_len,
                              memory_order_relaxed);
        if (want_sync)
            rc = wal_flush_pending_locked(w, 1, WAL_FLUSH_SYNC);
    }
    return rc;
}

/* Counts a successful append of LEN bytes; *END the logical offset after
** it.  Leader, write_mu held. */
static void wal_appended(rv_wal *w, size_t len, uint64_t *end)
    RV_REQUIRES(w->write_mu);
static void wal_appended(rv_wal *w, size_t len, uint64_t *end)
{
    w->logical_end += len;
    atomic_fetch_add_explicit(&w->stat_bytes, len, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->stat_appends, 1, memory_order_relaxed);
    *end = w->logical_end;
}

/* The append operation: the group's records written at once, an
** fdatasync linked behind them when WANT_SYNC.  write_mu held. */
static int wal_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
    RV_REQUIRES(w->write_mu);
static int wal_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
{
    int rc = wal_write_locked(w, w->buf, len, want_sync);
    if (rc == RAVEL_OK)
        wal_appended(w, len, end);
    return rc;
}

/* The append operation with manual_wal_flush: the records into the
** buffer.  write_mu held. */
static int wal_manual_append(rv_wal *w, size_t len, int want_sync,
                             uint64_t *end)
    RV_REQUIRES(w->write_mu);
static int wal_manual_append(rv_wal *w, size_t len, int want_sync,
                             uint64_t *end)
{
    int rc = wal_append_to_buffer(w, len, want_sync);
    if (rc == RAVEL_OK)
        wal_appended(w, len, end);
    return rc;
}

/* The flush operation: nothing is buffered, so there is no write to wait
** for; only a recorded failure to report. */
static int wal_flush(rv_wal *w)
{
    return rv_wal_io_failed(w) ? rv_wal_failure_rc(w) : RAVEL_OK;
}

/* The flush operation with manual_wal_flush: writes the buffer. */
static int wal_manual_flush(rv_wal *w)
{
    rv_mutex_lock(&w->write_mu);
    int rc = rv_wal_io_failed(w) ? rv_wal_failure_rc(w)
             : wal_flush_pending_locked(w, 0, WAL_FLUSH_CALL);
    rv_mutex_unlock(&w->write_mu);
    return rc;
}

/* manual_wal_flush: makes sure the records up to logical offset END are
** in the file (not necessarily durable), writing the buffer if they are
** not.  Any thread. */
static int wal_flush_to(rv_wal *w, uint64_t end)
{
    int rc = RAVEL_OK;
    rv_mutex_lock(&w->write_mu);
    if (w->written < end)
        rc = wal_flush_pending_locked(w, 0, WAL_FLUSH_SYNC);
    rv_mutex_unlock(&w->write_mu);
    return rc;
}

/* The sync_to operation with manual_wal_flush: the buffer written first
** if the records up to END are still in it. */
static int wal_manual_sync_to(rv_wal *w, uint64_t end)
{
    /* acquire: pairs with rv_wal_sync_wake_locked's release */
    if (atomic_load_explicit(&w->synced_atomic, memory_order_acquire) < end) {
        int rc = wal_flush_to(w, end);
        if (rc != RAVEL_OK)
            return rc;
    }
    return wal_sync_to(w, end);
}

/* The sync_all operation (both tables): whatever is buffered written,
** then everything written made durable. */
static int wal_sync_all(rv_wal *w)
{
    int rc = w->ops->flush(w);
    if (rc != RAVEL_OK)
        return rc;
    rv_mutex_lock(&w->sync_mu);
    uint64_t end = w->written;
    rv_mutex_unlock(&w->sync_mu);
    return w->ops->sync_to(w, end);
}
/* ------------------------------------------------------------- segments */

/* Creates segment NUMBER, whose predecessor's data ended at PREV_END (0:
** none), with its header and directory entry durable; makes it current. */
static int wal_create_segment(rv_wal *w, uint64_t number, uint64_t prev_end)
{
    char path[RV_PATH_MAX];
    int rc = rv_wal_segment_path(path, w->dir, number);
    if (rc)
        return rc;
    int fd = rv_open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", path);

    char header[RV_WAL_HEADER_SIZE];
    rv_wal_encode_segment_header(header, number, prev_end);
    if (pwrite(fd, header, sizeof header, 0) != (ssize_t)sizeof header)
        rc = rv_error_errno(RAVEL_IOERR, errno ? errno : EIO, "write %s", path);
    else if (fdatasync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", path);
    else
        rv_sync_journal_file(fd, sizeof header);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(w->dir);
    if (rc != RAVEL_OK) {
        close(fd);
        unlink(path);
        return rc;
    }
    rv_mutex_lock(&w->sync_mu); /* syncers read these under sync_mu */
    w->fd = fd;
    w->seg_start = w->logical_end;
    rv_mutex_unlock(&w->sync_mu);
    w->number = number;
    w->file_off = RV_WAL_HEADER_SIZE;
    w->preallocated = RV_WAL_HEADER_SIZE;
    atomic_fetch_add_explicit(&w->stat_segments, 1, memory_order_relaxed);
    return RAVEL_OK;
}

/* Trims the current segment to its data, then makes everything appended
** to it durable.  Leader only (or close). */
static int wal_finish_segment(rv_wal *w)
{
    rv_mutex_lock(&w->sync_mu);
    wal_fsync_wait_locked(w);
    int err = 0;
    /* Trim whatever lies past the data: preallocated space, and the zeros
    ** the io_uring probe wrote even with preallocation off.  The file
    ** must end right after the data, so that a seal is found at its end. */
    struct stat st;
    if (!rv_wal_io_failed(w) && fstat(w->fd, &st) != 0)
        err = errno;
    else if (!rv_wal_io_failed(w) && (uint64_t)st.st_size > w->file_off &&
             ftruncate(w->fd, (off_t)w->file_off) != 0)
        err = errno;
    if (!rv_wal_io_failed(w) && !err) {
        if (fdatasync(w->fd) != 0)
            err = errno;
        else
            rv_sync_journal_file(w->fd, w->file_off);
    }
    if (err)
        rv_wal_fail_locked(w, err, "finishing segment");
    int failed = rv_wal_io_failed(w);
    if (!failed) {
        w->synced = w->written;
        rv_wal_sync_wake_locked(w);
    }
    rv_mutex_unlock(&w->sync_mu);
    return failed ? rv_wal_failure_rc(w) : RAVEL_OK;
}

int rv_wal_buffered_finish(rv_wal *w)
{
    return wal_finish_segment(w);
}

/* Appends the seal record (wal_format.h) to a finished segment and makes
** it durable: the segment is then known complete, so the reader treats
** any damage in it as corruption, not as a torn write.  Close only. */
static int wal_seal_segment(rv_wal *w)
{
    char seal[RV_WAL_SEAL_SIZE];
    rv_wal_encode_seal(seal, w->number, w->file_off);
    int err = 0;
    if (pwrite(w->fd, seal, sizeof seal, (off_t)w->file_off) !=
        (ssize_t)sizeof seal)
        err = errno ? errno : EIO;
    else if (fdatasync(w->fd) != 0)
        err = errno;
    if (err) {
        wal_fail(w, err, "sealing");
        return rv_wal_failure_rc(w);
    }
    w->file_off += sizeof seal;
    rv_sync_journal_file(w->fd, w->file_off);
    return RAVEL_OK;
}

/* Finishes the current segment and starts segment NUMBER.  write_mu
** held: no flusher writes between the two. */
static int wal_switch_segment_locked(rv_wal *w, uint64_t number)
    RV_REQUIRES(w->write_mu);
static int wal_switch_segment_locked(rv_wal *w, uint64_t number)
{
    int rc = wal_flush_pending_locked(w, 0, WAL_FLUSH_SEGMENT);
    if (rc)
        return rc;
    rc = wal_finish_segment(w);
    if (rc)
        return rc;
    int old_fd = w->fd;
    rc = wal_create_segment(w, number, w->file_off);
    if (rc) {
        /* Stay on the old segment, but refuse further writes (the
        ** database stops them too), recording the creation's message. */
        rv_mutex_lock(&w->sync_mu);
        rv_wal_fail_reason_locked(w, rv_errmsg_get());
        rv_mutex_unlock(&w->sync_mu);
        return rc;
    }
    /* No fdatasync can be in flight on OLD_FD: wal_finish_segment waited
    ** for it and made everything written durable, so no sync waiter needs
    ** a new one on the old segment. */
    close(old_fd);
    return RAVEL_OK;
}

/* The recycle operation: these modes trim each segment to its data, so a
** flushed one is never worth reusing; the caller deletes it. */
static int wal_recycle(rv_wal *w, uint64_t number)
{
    RV_UNUSED(w);
    RV_UNUSED(number);
    return 0;
}

/* The close operation: writes the buffered records (manual_wal_flush),
** makes the segment durable and seals it.  write_mu held. */
static int wal_close(rv_wal *w)
    RV_REQUIRES(w->write_mu);
static int wal_close(rv_wal *w)
{
    /* A failure already reported to writers is not reported again: the
    ** handle is going away and nothing new went wrong. */
    int rc = RAVEL_OK;
    if (!rv_wal_io_failed(w))
        rc = wal_flush_pending_locked(w, 0, WAL_FLUSH_SEGMENT);
    if (!rv_wal_io_failed(w)) {
        rc = wal_finish_segment(w);
        if (rc == RAVEL_OK)
            rc = wal_seal_segment(w);
    }
    return rc;
}

/* -------------------------------------------------------------- lifetime */

/* The open operation: creates segment NUMBER and makes it current. */
static int wal_open(rv_wal *w, uint64_t number, uint64_t prev_end,
                    const struct ravel_options *o,
                    const struct rv_wal_setup *setup)
{
    RV_UNUSED(o);
    RV_UNUSED(setup);
    return wal_create_segment(w, number, prev_end);
}

/* The open operation with manual_wal_flush: the buffer, then the
** segment. */
static int wal_manual_open(rv_wal *w, uint64_t number, uint64_t prev_end,
                           const struct ravel_options *o,
                           const struct rv_wal_setup *setup)
{
    w->pend = malloc(WAL_MANUAL_BUFFER_BYTES);
    if (!w->pend)
        return rv_error(RAVEL_NOMEM, "out of memory for the %u-byte "
                        "WAL buffer (manual_wal_flush)",
                        WAL_MANUAL_BUFFER_BYTES);
    return wal_open(w, number, prev_end, o, setup);
}

/* The destroy operation: the buffers (the segment's fd and the ring are
** wal_writer.c's to close). */
static void wal_buffered_destroy(rv_wal *w)
{
    free(w->pend);
    w->pend = NULL;
    free(w->buf);
    w->buf = NULL;
}

/* The stats operation: nothing beyond the shared counters. */
static void wal_stats(rv_wal *w, struct rv_wal_stats *s)
{
    RV_UNUSED(w);
    RV_UNUSED(s);
}

/* The stats operation with manual_wal_flush: the buffer's. */
static void wal_manual_stats(rv_wal *w, struct rv_wal_stats *s)
{
    s->manual = 1;
    s->buffered = atomic_load_explicit(&w->stat_buffered,
                                       memory_order_relaxed);
    s->writes_full = atomic_load_explicit(
        &w->stat_buffer_writes[WAL_FLUSH_FULL], memory_order_relaxed);
    s->writes_sync = atomic_load_explicit(
        &w->stat_buffer_writes[WAL_FLUSH_SYNC], memory_order_relaxed);
    s->writes_flush_wal = atomic_load_explicit(
        &w->stat_buffer_writes[WAL_FLUSH_CALL], memory_order_relaxed);
    s->writes_segment_end = atomic_load_explicit(
        &w->stat_buffer_writes[WAL_FLUSH_SEGMENT], memory_order_relaxed);
}

static const struct rv_wal_ops wal_buffered_ops_table = {
    .open = wal_open,
    .reserve = wal_reserve,
    .append = wal_append,
    .wait_written = wal_wait_written,
    .sync_to = wal_sync_to,
    .sync_all = wal_sync_all,
    .flush = wal_flush,
    .switch_segment = wal_switch_segment_locked,
    .recycle = wal_recycle,
    .close = wal_close,
    .destroy = wal_buffered_destroy,
    .stats = wal_stats,
    .tagged = 0,
};

static const struct rv_wal_ops wal_manual_ops_table = {
    .open = wal_manual_open,
    .reserve = wal_reserve,
    .append = wal_manual_append,
    .wait_written = wal_wait_written,
    .sync_to = wal_manual_sync_to,
    .sync_all = wal_sync_all,
    .flush = wal_manual_flush,
    .switch_segment = wal_switch_segment_locked,
    .recycle = wal_recycle,
    .close = wal_close,
    .destroy = wal_buffered_destroy,
    .stats = wal_manual_stats,
    .tagged = 0,
};

const struct rv_wal_ops *rv_wal_buffered_ops(void)
{
    return &wal_buffered_ops_table;
}

const struct rv_wal_ops *rv_wal_manual_ops(void)
{
    return &wal_manual_ops_table;
}
