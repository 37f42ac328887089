/*
** wal_writer.c -- appends write groups to the WAL segment and batches
** fdatasyncs (see wal_writer.h for the contract, wal_format.h for bytes).
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
** to a kernel worker: wal_probe.c, docs/performance.md "io_uring against
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
** manual_wal_flush: a group's records are copied into the WAL's own
** buffer (WAL_MANUAL_BUFFER_BYTES) instead of being written; the buffer
** goes out as ONE write, on the same I/O path, when the next group would
** not fit in it, when a group has a sync member (with the fdatasync linked
** behind, as above), when a sync waiter or rv_wal_flush needs it, and
** before a segment is finished (switch, close).  Until then a process
** crash loses the buffered records: that is the option's price, and its
** gain is one write per buffer instead of one per group.  write_mu makes
** the hand-off safe: every write to the segment file -- the leader's, a
** flusher's from any thread, a segment switch -- holds it, so the buffer
** is appended to and written out whole, in order, exactly once, and the
** file offset, the fd and the io_uring write completion have one user at
** a time.  Lock order: write_mu, then sync_mu (then sq_mu / cq_mu).
*/
#include "wal/wal_writer_int.h"
#include "util/file.h"
#include "util/filename.h"
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
#include <limits.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RAVEL_OMIT_IO_URING
# include <liburing.h>
#endif

#define WAL_RING_ENTRIES 64 /* direct: 16 writes in flight, an fdatasync,
                            ** the completion thread's stop marker */
/* wal_io=auto: a plain direct write may cost at most this many times a
** pwrite (wal_auto_pick). */
#define WAL_AUTO_DIRECT_PLAIN 2
#define WAL_FAIL_MSG_MAX 384
#define WAL_GATHER_NS 200000        /* at most 200 us */
#define WAL_GATHER_SLICE_NS 50000
/* manual_wal_flush's buffer: RocksDB's writable_file_max_buffer_size
** default.  A group larger than it is written directly. */
#define WAL_MANUAL_BUFFER_BYTES (1u << 20)


/* ------------------------------------------------------ sync sleeping */

uint64_t rv_wal_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


/* Wakes every thread sleeping in wal_sync_sleep or wal_sync_sleep_for.
** sync_mu held. */
void rv_wal_sync_wake_locked(rv_wal *w)
{
    atomic_store_explicit(&w->synced_atomic, w->synced, memory_order_release);
    /* release: a waiter that sees the new generation sees synced/failed */
    atomic_fetch_add_explicit(&w->sync_gen, 1, memory_order_release);
    rv_futex_wake_all(&w->sync_gen);
}

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

/* Records REASON as an I/O failure and wakes every sync waiter, who then
** sees it.  sync_mu held. */
void rv_wal_fail_reason_locked(rv_wal *w, const char *reason)
{
    if (rv_wal_io_failed(w))
        return;
    rv_stop_set(w->stop, RAVEL_IOERR, reason);
    rv_wal_sync_wake_locked(w);
}

/* Records the failure of WHAT with errno ERR.  sync_mu held. */
void rv_wal_fail_locked(rv_wal *w, int err, const char *what)
{
    if (rv_wal_io_failed(w))
        return;
    err = err ? err : EIO;
    char buf[128], reason[WAL_FAIL_MSG_MAX];
    snprintf(reason, sizeof reason, "%s %s/wal-%08llu.log: %s (errno %d)",
             what, w->dir, (unsigned long long)w->number,
             strerror_r(err, buf, sizeof buf), err);
    rv_wal_fail_reason_locked(w, reason);
}

static void wal_fail(rv_wal *w, int err, const char *what)
{
    pthread_mutex_lock(&w->sync_mu);
    rv_wal_fail_locked(w, err, what);
    pthread_mutex_unlock(&w->sync_mu);
}

/* Sets the calling thread's message from the recorded failure. */
int rv_wal_failure_rc(rv_wal *w)
{
    return rv_stop_error(w->stop, RAVEL_IOERR, NULL);
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
    pthread_mutex_lock(&w->cq_mu);
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
    pthread_mutex_unlock(&w->cq_mu);
    return err;
}

/* Waits until C (an fdatasync) is done without holding cq_mu while
** asleep: sleeps on the eventfd, drains under cq_mu.  The poll timeout
** only bounds the cost of a wake-up that could be missed if the kernel
** completed the fdatasync inline (it does not today). */
static void wal_uring_watch(rv_wal *w, struct rv_wal_completion *c)
{
    for (;;) {
        pthread_mutex_lock(&w->cq_mu);
        wal_uring_drain(w);
        pthread_mutex_unlock(&w->cq_mu);
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

int rv_wal_uring_submit_write(rv_wal *w, const void *p, size_t len,
                              uint64_t off, void *data, int rw_flags,
                              int link_sync)
{
    pthread_mutex_lock(&w->sq_mu);
    /* Take SQEs only when all of them fit: a half-prepared pair would be
    ** submitted by the next io_uring_submit. */
    struct io_uring_sqe *sqe = NULL, *sync_sqe = NULL;
    if (io_uring_sq_space_left(&w->ring) >= (unsigned)(link_sync ? 2 : 1)) {
        sqe = io_uring_get_sqe(&w->ring);
        if (link_sync)
            sync_sqe = io_uring_get_sqe(&w->ring);
    }
    int r = -EBUSY;
    if (sqe && (!link_sync || sync_sqe)) {
        io_uring_prep_write(sqe, w->fd, p, (unsigned)len, off);
        sqe->rw_flags = rw_flags;
        io_uring_sqe_set_data(sqe, data);
        if (link_sync) {
            sqe->flags |= IOSQE_IO_LINK;
            io_uring_prep_fsync(sync_sqe, w->fd, IORING_FSYNC_DATASYNC);
            io_uring_sqe_set_data(sync_sqe, &w->fsync_done);
        }
        r = io_uring_submit(&w->ring);
        if (r >= 0)
            r = 0;
    }
    pthread_mutex_unlock(&w->sq_mu);
    /* Not submitted: the linked fdatasync will never complete by itself. */
    if (r < 0 && link_sync)
        rv_wal_completion_set(&w->fsync_done, -ECANCELED);
    return r;
}

int rv_wal_uring_submit_fsync(rv_wal *w)
{
    pthread_mutex_lock(&w->sq_mu);
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
    int r = -EBUSY;
    if (sqe) {
        io_uring_prep_fsync(sqe, w->fd, IORING_FSYNC_DATASYNC);
        io_uring_sqe_set_data(sqe, &w->fsync_done);
        r = io_uring_submit(&w->ring);
        if (r >= 0)
            r = 0;
    }
    pthread_mutex_unlock(&w->sq_mu);
    return r;
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

/* Checks that this kernel lets us use io_uring for WAL writes.  Returns 0
** or sets *why. */
int rv_wal_uring_setup(rv_wal *w, unsigned entries, const char **why)
{
    int r = io_uring_queue_init(entries, &w->ring, 0);
    if (r < 0) {
        *why = r == -ENOSYS   ? "io_uring_setup: not implemented by this kernel"
               : r == -EPERM  ? "io_uring_setup: not permitted (io_uring_disabled or seccomp)"
               : r == -ENOMEM ? "io_uring_setup: out of locked memory"
                              : "io_uring_setup failed";
        return r;
    }
    struct io_uring_probe *probe = io_uring_get_probe_ring(&w->ring);
    int ok = probe && io_uring_opcode_supported(probe, IORING_OP_WRITE) &&
             io_uring_opcode_supported(probe, IORING_OP_FSYNC);
    if (probe)
        io_uring_free_probe(probe);
    if (!ok) {
        io_uring_queue_exit(&w->ring);
        *why = "io_uring lacks IORING_OP_WRITE or IORING_OP_FSYNC";
        return -EOPNOTSUPP;
    }
    w->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->event_fd < 0 ||
        io_uring_register_eventfd_async(&w->ring, w->event_fd) < 0) {
        if (w->event_fd >= 0)
            close(w->event_fd);
        w->event_fd = -1;
        io_uring_queue_exit(&w->ring);
        *why = "io_uring cannot signal completions to an eventfd";
        return -EOPNOTSUPP;
    }
    return 0;
}

#endif /* RAVEL_OMIT_IO_URING */

/* One write attempt with pwrite: bytes written or -errno. */
static int wal_pwrite_once(rv_wal *w, const char *p, size_t len, uint64_t off)
{
    ssize_t n = pwrite(w->fd, p, len, (off_t)off);
    return n < 0 ? -errno : (int)n;
}

/* ------------------------------------------------------------- syncing */

/* Applies the in-flight fdatasync's result.  sync_mu held. */
void rv_wal_fsync_finished_locked(rv_wal *w)
{
    int res = atomic_load_explicit(&w->fsync_done.res, memory_order_relaxed);
    if (res == 0) {
        if (w->fsync_target > w->synced)
            w->synced = w->fsync_target;
        /* An fdatasync in flight is always on the current segment:
        ** switching waits for it (wal_finish_segment). */
        rv_sync_journal_file(w->fd, w->fsync_target - w->seg_start +
                                        w->header_size);
    } else if (res != -ECANCELED) {
        /* -ECANCELED: a short write broke the link; not durable, the next
        ** sync waiter issues a fresh fdatasync. */
        rv_wal_fail_locked(w, -res, "fdatasync");
    }
    w->fsync_inflight = 0;
    rv_wal_sync_wake_locked(w);
}

/* Marks an fdatasync as in flight, covering TARGET.  Returns 1 if the
** caller must issue it, 0 if a fault hook already completed it as failed.
** sync_mu held. */
int rv_wal_fsync_begin_locked(rv_wal *w, uint64_t target)
{
    w->fsync_inflight = 1;
    w->fsync_target = target;
    rv_wal_completion_reset(&w->fsync_done);
    atomic_fetch_add_explicit(&w->stat_fsyncs, 1, memory_order_relaxed);
    int fault = rv_fault_check(RV_FAULT_WAL_SYNC);
    if (fault) {
        rv_wal_completion_set(&w->fsync_done, fault);
        return 0;
    }
    return 1;
}

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
{
    if (rv_wal_completion_is_done(&w->fsync_done)) {
        rv_wal_fsync_finished_locked(w);
        return 1;
    }
#ifndef RAVEL_OMIT_IO_URING
    if (w->use_uring && !w->fsync_watched) {
        w->fsync_watched = 1;
        pthread_mutex_unlock(&w->sync_mu);
        wal_uring_watch(w, &w->fsync_done);
        rv_pause_here(RV_PAUSE_WAL_WATCHED);
        pthread_mutex_lock(&w->sync_mu);
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
{
    while (w->fsync_inflight) {
        uint32_t gen = atomic_load_explicit(&w->sync_gen, memory_order_acquire);
        if (wal_fsync_watch_locked(w))
            continue;
        pthread_mutex_unlock(&w->sync_mu);
        wal_sync_sleep(w, gen);
        pthread_mutex_lock(&w->sync_mu);
    }
}

/* Starts an fdatasync covering everything written so far.  sync_mu held
** on entry and exit (released while a sync-path fdatasync runs). */
static void wal_fsync_start_locked(rv_wal *w)
{
    int fd = w->fd;
    int must_issue = rv_wal_fsync_begin_locked(w, w->written);
    pthread_mutex_unlock(&w->sync_mu);
    if (must_issue)
        wal_fsync_issue(w, fd);
    pthread_mutex_lock(&w->sync_mu);
    if (!w->use_uring && w->fsync_inflight &&
        rv_wal_completion_is_done(&w->fsync_done))
        rv_wal_fsync_finished_locked(w);
}

void rv_wal_inbound(rv_wal *w, int delta)
{
    /* relaxed: a hint; the wake-up below goes through sync_gen */
    int now = atomic_fetch_add_explicit(&w->inbound, delta,
                                        memory_order_relaxed) + delta;
    if (delta < 0 && now <= 0 &&
        atomic_load_explicit(&w->gathering, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&w->sync_gen, 1, memory_order_release);
        rv_futex_wake_all(&w->sync_gen);
    }
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
    uint64_t now = rv_wal_now_ns();
    if (!*since)
        *since = now;
    return now - *since < WAL_GATHER_NS;
}

static int wal_flush_to(rv_wal *w, uint64_t end);

int rv_wal_sync_to(rv_wal *w, uint64_t end)
{
    if (w->dio)
        return rv_wal_direct_wait(w, end, 1);
    uint64_t gather_since = 0;
    /* acquire: pairs with rv_wal_sync_wake_locked's release */
    if (w->manual &&
        atomic_load_explicit(&w->synced_atomic, memory_order_acquire) < end) {
        int rc = wal_flush_to(w, end);
        if (rc != RAVEL_OK)
            return rc;
    }
    for (;;) {
        /* acquire: pairs with rv_wal_sync_wake_locked's release */
        if (atomic_load_explicit(&w->synced_atomic, memory_order_acquire) >=
            end) {
            atomic_fetch_add_explicit(&w->stat_sync_acks, 1,
                                      memory_order_relaxed);
            return RAVEL_OK;
        }
        uint32_t gen = atomic_load_explicit(&w->sync_gen, memory_order_acquire);
        pthread_mutex_lock(&w->sync_mu);
        if (rv_wal_io_failed(w)) {
            pthread_mutex_unlock(&w->sync_mu);
            return rv_wal_failure_rc(w);
        }
        int progressed = 1;
        if (w->synced >= end) {
            ; /* finished meanwhile: the fast path above returns */
        } else if (!w->fsync_inflight && wal_fsync_gather(w, &gather_since)) {
            atomic_fetch_add_explicit(&w->gathering, 1, memory_order_relaxed);
            pthread_mutex_unlock(&w->sync_mu);
            wal_sync_sleep_for(w, gen, WAL_GATHER_SLICE_NS);
            pthread_mutex_lock(&w->sync_mu);
            atomic_fetch_sub_explicit(&w->gathering, 1, memory_order_relaxed);
        } else if (!w->fsync_inflight) {
            wal_fsync_start_locked(w);
        } else {
            progressed = wal_fsync_watch_locked(w);
        }
        pthread_mutex_unlock(&w->sync_mu);
        if (!progressed)
            wal_sync_sleep(w, gen);
    }
}

/* The logical end of everything appended so far (any thread). */
static uint64_t wal_appended_end(rv_wal *w)
{
    pthread_mutex_lock(&w->write_mu);
    uint64_t end = w->logical_end;
    pthread_mutex_unlock(&w->write_mu);
    return end;
}

int rv_wal_wait_written(rv_wal *w, uint64_t end)
{
    return w->dio ? rv_wal_direct_wait(w, end, 0) : RAVEL_OK;
}

int rv_wal_sync_all(rv_wal *w)
{
    if (w->dio)
        return rv_wal_direct_wait(w, wal_appended_end(w), 1);
    int rc = rv_wal_flush(w);
    if (rc != RAVEL_OK)
        return rc;
    pthread_mutex_lock(&w->sync_mu);
    uint64_t end = w->written;
    pthread_mutex_unlock(&w->sync_mu);
    return rv_wal_sync_to(w, end);
}

/* ------------------------------------------------------------- appends */

char *rv_wal_reserve(rv_wal *w, size_t len)
{
    if (w->dio)
        return rv_wal_direct_reserve(w, len);
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

uint64_t rv_wal_segment_number(const rv_wal *w)
{
    return w->number;
}

uint32_t rv_wal_segment_tag(const rv_wal *w)
{
    return w->dio ? rv_wal_tag(w->number) : 0;
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
{
    pthread_mutex_lock(&w->sync_mu);
    if (rv_wal_io_failed(w)) {
        pthread_mutex_unlock(&w->sync_mu);
        return rv_wal_failure_rc(w);
    }
    uint64_t end = w->written + len;
    int link = 0;
    if (want_sync && w->use_uring && !w->fsync_inflight)
        link = rv_wal_fsync_begin_locked(w, end);
    pthread_mutex_unlock(&w->sync_mu);

    wal_preallocate(w, w->file_off + len);
    int err = wal_write_all(w, p, len, w->file_off, link);
    if (err) {
        wal_fail(w, err, "write");
        return rv_wal_failure_rc(w);
    }
    w->file_off += len;
    pthread_mutex_lock(&w->sync_mu);
    w->written = end;
    pthread_mutex_unlock(&w->sync_mu);
    return RAVEL_OK;
}

/* Writes the manual_wal_flush buffer out, if it holds anything, for
** CAUSE.  On failure the buffered records are dropped with the WAL (it
** is failed for good: nothing of them may be written after a hole).
** write_mu held. */
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
** buffer held. */
static int wal_append_buffered(rv_wal *w, size_t len, int want_sync)
{
    int rc = RAVEL_OK;
    pthread_mutex_lock(&w->write_mu);
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
    pthread_mutex_unlock(&w->write_mu);
    return rc;
}

int rv_wal_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
{
    int rc;
    if (w->dio) {
        pthread_mutex_lock(&w->write_mu);
        rc = rv_wal_direct_append(w, len, want_sync, end);
        pthread_mutex_unlock(&w->write_mu);
        return rc;
    }
    if (w->manual) {
        rc = wal_append_buffered(w, len, want_sync);
    } else {
        pthread_mutex_lock(&w->write_mu);
        rc = wal_write_locked(w, w->buf, len, want_sync);
        pthread_mutex_unlock(&w->write_mu);
    }
    if (rc != RAVEL_OK)
        return rc;
    w->logical_end += len;
    atomic_fetch_add_explicit(&w->stat_bytes, len, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->stat_appends, 1, memory_order_relaxed);
    *end = w->logical_end;
    return RAVEL_OK;
}

int rv_wal_flush(rv_wal *w)
{
    if (w->dio) /* in flight: wait for the writes to complete */
        return rv_wal_direct_wait(w, wal_appended_end(w), 0);
    if (!w->manual) /* nothing buffered: no need to wait for a write */
        return rv_wal_io_failed(w) ? rv_wal_failure_rc(w) : RAVEL_OK;
    pthread_mutex_lock(&w->write_mu);
    int rc = rv_wal_io_failed(w) ? rv_wal_failure_rc(w)
             : wal_flush_pending_locked(w, 0, WAL_FLUSH_CALL);
    pthread_mutex_unlock(&w->write_mu);
    return rc;
}

/* manual_wal_flush: makes sure the records up to logical offset END are
** in the file (not necessarily durable), writing the buffer if they are
** not.  Any thread. */
static int wal_flush_to(rv_wal *w, uint64_t end)
{
    if (!w->manual)
        return RAVEL_OK;
    int rc = RAVEL_OK;
    pthread_mutex_lock(&w->write_mu);
    if (w->written < end)
        rc = wal_flush_pending_locked(w, 0, WAL_FLUSH_SYNC);
    pthread_mutex_unlock(&w->write_mu);
    return rc;
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
    pthread_mutex_lock(&w->sync_mu); /* syncers read these under sync_mu */
    w->fd = fd;
    w->seg_start = w->logical_end;
    pthread_mutex_unlock(&w->sync_mu);
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
    pthread_mutex_lock(&w->sync_mu);
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
    pthread_mutex_unlock(&w->sync_mu);
    return failed ? rv_wal_failure_rc(w) : RAVEL_OK;
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
        pthread_mutex_lock(&w->sync_mu);
        rv_wal_fail_reason_locked(w, rv_errmsg_get());
        pthread_mutex_unlock(&w->sync_mu);
        return rc;
    }
    /* No fdatasync can be in flight on OLD_FD: wal_finish_segment waited
    ** for it and made everything written durable, so no sync waiter needs
    ** a new one on the old segment. */
    close(old_fd);
    return RAVEL_OK;
}

int rv_wal_switch_segment(rv_wal *w, uint64_t number)
{
    pthread_mutex_lock(&w->write_mu);
    int rc = w->dio ? rv_wal_direct_switch(w, number)
                    : wal_switch_segment_locked(w, number);
    pthread_mutex_unlock(&w->write_mu);
    return rc;
}

/* -------------------------------------------------------------- lifetime */

static void wal_destroy(rv_wal *w)
{
    if (w->dio)
        rv_wal_direct_destroy(w);
#ifndef RAVEL_OMIT_IO_URING
    if (w->use_uring)
        io_uring_queue_exit(&w->ring);
#endif
    if (w->fd >= 0)
        close(w->fd);
    pthread_mutex_destroy(&w->sq_mu);
    pthread_mutex_destroy(&w->cq_mu);
    if (w->event_fd >= 0)
        close(w->event_fd);
    pthread_mutex_destroy(&w->sync_mu);
    pthread_mutex_destroy(&w->write_mu);
    free(w->pend);
    free(w->buf);
    free(w->dir);
    free(w);
}

#ifndef RAVEL_OMIT_IO_URING
static void wal_uring_teardown(rv_wal *w)
{
    io_uring_queue_exit(&w->ring);
    close(w->event_fd);
    w->event_fd = -1;
    w->use_uring = 0;
}

/* wal_io=auto: the rule (docs/performance.md has the measurements behind
** it).  direct where O_DIRECT works, a direct RWF_DSYNC write costs no
** more than a write and an fdatasync (a RAVEL_SYNC write is then no
** slower), AND a plain direct write costs no more than
** WAL_AUTO_DIRECT_PLAIN times a pwrite: a write without RAVEL_SYNC waits
** for its direct write to complete on the device, where pwrite only
** copies to the page cache, and the default, unsynced, writes must not
** become slow.  On disks measured so far the last test fails (tens of
** microseconds against one), so auto keeps the buffered modes there and
** says so: wal_io=direct is for databases whose writes are mostly
** RAVEL_SYNC.  Otherwise io_uring where buffered writes complete
** inline, else pwrite. */
static enum rv_wal_io wal_auto_pick(rv_wal *w, const struct rv_wal_probe *p)
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

/* Whether RAVEL_SYNC groups should be written with RWF_DSYNC rather than
** followed by an fdatasync: one operation instead of two, so it is kept
** unless the probe found it clearly (25%) slower -- the probe's few
** samples must not flip the choice between two equal costs. */
static int wal_dsync_pays(const struct rv_wal_probe *p)
{
    return p->direct_sync_ns * 4 <= p->direct_fsync_ns * 5;
}

/* wal_io=direct, asked for: the probe must find O_DIRECT working; it
** also says whether RWF_DSYNC beats a write and an fdatasync (*DSYNC). */
static int wal_direct_check(rv_wal *w, const struct rv_wal_probe *p,
                            int *dsync)
{
    if (!p->direct_ok)
        return rv_error(RAVEL_INVALID, "wal_io=direct: %s in %s",
                        p->why_not_direct, w->dir);
    *dsync = wal_dsync_pays(p);
    snprintf(w->io_why, sizeof w->io_why, "wal_io=direct was requested; "
             "on %s, sync by %s: direct+DSYNC %.0f us vs direct+fdatasync "
             "%.0f us", p->fs, *dsync ? "RWF_DSYNC" : "fdatasync",
             (double)p->direct_sync_ns / 1e3,
             (double)p->direct_fsync_ns / 1e3);
    return RAVEL_OK;
}
#endif

/* Decides the mode (w->io, w->io_why) and sets up the ring it needs.
** For direct: *BLOCK gets the block size the probe found, *DSYNC whether
** sync groups are written with RWF_DSYNC. */
static int wal_choose_io(rv_wal *w, const struct ravel_options *o,
                         uint32_t *block, int *dsync)
{
    enum rv_wal_io mode = o->wal_io;
    *block = 0;
    *dsync = 1;
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
    rv_wal_probe_run(w, &p);
    *block = p.block;
    if (mode == RV_WAL_IO_DIRECT) {
        w->io = mode;
        return wal_direct_check(w, &p, dsync);
    }
    w->io = o->manual_wal_flush && p.uring_pays ? RV_WAL_IO_URING
            : o->manual_wal_flush ? RV_WAL_IO_SYNC
                                  : wal_auto_pick(w, &p);
    if (o->manual_wal_flush)
        snprintf(w->io_why, sizeof w->io_why, "wal_io=auto with "
                 "manual_wal_flush on %s: io_uring %s", p.fs,
                 p.uring_pays ? "costs no more than pwrite"
                              : "is slower than pwrite here");
    if (w->io == RV_WAL_IO_DIRECT)
        *dsync = wal_dsync_pays(&p);
    if (w->io != RV_WAL_IO_DIRECT && o->recycle_log_file_num > 0) {
        size_t n = strlen(w->io_why);
        snprintf(w->io_why + n, sizeof w->io_why - n, "; "
                 "recycle_log_file_num=%d has no effect without direct",
                 o->recycle_log_file_num);
    }
    if (w->io == RV_WAL_IO_SYNC)
        wal_uring_teardown(w); /* io_why says why */
    return RAVEL_OK;
#endif
}

int rv_wal_open(const char *dir, uint64_t number, uint64_t prev_end,
                const struct ravel_options *o, struct rv_stop *stop,
                rv_wal **out)
{
    rv_wal *w = calloc(1, sizeof *w);
    if (!w || !(w->dir = strdup(dir))) {
        free(w);
        return rv_error(RAVEL_NOMEM, "out of memory opening the WAL");
    }
    w->stop = stop;
    w->fd = -1;
    pthread_mutex_init(&w->sq_mu, NULL);
    pthread_mutex_init(&w->cq_mu, NULL);
    w->event_fd = -1;
    pthread_mutex_init(&w->sync_mu, NULL);
    pthread_mutex_init(&w->write_mu, NULL);
    if (o->manual_wal_flush) {
        w->manual = 1;
        w->pend = malloc(WAL_MANUAL_BUFFER_BYTES);
        if (!w->pend) {
            wal_destroy(w);
            return rv_error(RAVEL_NOMEM, "out of memory for the %u-byte "
                            "WAL buffer (manual_wal_flush)",
                            WAL_MANUAL_BUFFER_BYTES);
        }
    }
    if (o->wal_preallocate) {
        uint64_t chunk = o->write_buffer_size + o->write_buffer_size / 8;
        w->prealloc_chunk = chunk > (256u << 20) ? (256u << 20) : chunk;
    }

    w->header_size = RV_WAL_HEADER_SIZE;
    char scratch[RV_PATH_MAX]; /* a probe's, left by a crash during one */
    if (rv_path_join(scratch, dir, RV_WAL_PROBE_FILE) == RAVEL_OK)
        (void)unlink(scratch);
    uint32_t block = 0;
    int dsync = 1;
    int rc = wal_choose_io(w, o, &block, &dsync);
    if (rv_test_wal_direct_fdatasync_forced())
        dsync = 0;
    if (rc == RAVEL_OK && w->io == RV_WAL_IO_DIRECT)
        rc = rv_wal_direct_open(w, number, prev_end, o, block, dsync);
    else if (rc == RAVEL_OK)
        rc = wal_create_segment(w, number, prev_end);
    if (rc != RAVEL_OK) {
        wal_destroy(w);
        return rc;
    }
    *out = w;
    return RAVEL_OK;
}

int rv_wal_close(rv_wal *w)
{
    if (!w)
        return RAVEL_OK;
    /* A failure already reported to writers is not reported again: the
    ** handle is going away and nothing new went wrong. */
    int rc = RAVEL_OK;
    if (w->dio) {
        rc = rv_wal_direct_close(w);
        wal_destroy(w);
        return rc;
    }
    pthread_mutex_lock(&w->write_mu);
    if (!rv_wal_io_failed(w))
        rc = wal_flush_pending_locked(w, 0, WAL_FLUSH_SEGMENT);
    if (!rv_wal_io_failed(w)) {
        rc = wal_finish_segment(w);
        if (rc == RAVEL_OK)
            rc = wal_seal_segment(w);
    }
    pthread_mutex_unlock(&w->write_mu);
    wal_destroy(w);
    return rc;
}

const char *rv_wal_io_mode(const rv_wal *w, const char **why)
{
    if (why)
        *why = w->io_why;
    return w->io == RV_WAL_IO_DIRECT ? "direct"
           : w->io == RV_WAL_IO_URING ? "uring" : "sync";
}

int rv_wal_recycle(rv_wal *w, uint64_t number)
{
    return w->dio ? rv_wal_direct_recycle(w, number) : 0;
}

void rv_wal_get_stats(rv_wal *w, struct rv_wal_stats *s)
{
    s->bytes = atomic_load_explicit(&w->stat_bytes, memory_order_relaxed);
    s->appends = atomic_load_explicit(&w->stat_appends, memory_order_relaxed);
    s->fsyncs = atomic_load_explicit(&w->stat_fsyncs, memory_order_relaxed);
    s->sync_acks = atomic_load_explicit(&w->stat_sync_acks,
                                        memory_order_relaxed);
    s->segments = atomic_load_explicit(&w->stat_segments,
                                       memory_order_relaxed);
    s->manual = w->manual;
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
    if (w->dio)
        rv_wal_direct_stats(w, s);
}
