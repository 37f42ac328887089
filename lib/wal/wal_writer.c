/*
** wal_writer.c -- the WAL writer's interface (wal_writer.h): opens a WAL,
** hands every call to the mode in force, closes it; and what every mode
** shares.
**
** Owns: rv_wal_open / rv_wal_close and the handle's lifetime, the
** dispatch of each public function through w->ops, the failure record
** (rv_stop, under sync_mu), the sync generation every waiter sleeps on,
** the fdatasync bookkeeping (begin, apply its result), the inbound-writer
** hint, the ring's setup and its submissions (used by wal_io=uring,
** direct and the probe), the counters every mode keeps.  Does not own:
** which mode (wal_choose.c), how a mode writes and syncs (wal_buffered.c:
** sync, uring, manual_wal_flush; wal_direct.c: direct), the bytes
** (wal_format.h).
**
** The modes behind one table (struct rv_wal_ops, wal_writer_int.h):
** nothing here asks which mode is in force.  rv_wal_open lets
** rv_wal_choose set w->ops, then runs the mode's open; each public
** function calls its operation.  The leader's calls that write to the
** segment file -- append, switch_segment, close -- are made here with
** write_mu held, so a mode's operation runs with the file to itself
** (manual_wal_flush's flushers from other threads take write_mu too).
** Lock order: write_mu, then sync_mu, then sq_mu / cq_mu.
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#ifndef RAVEL_OMIT_IO_URING
# include <liburing.h>
#endif

#define WAL_FAIL_MSG_MAX 384


/* ------------------------------------------------------ clock, wake-ups */

/* Wakes every thread sleeping on sync_gen (every mode's waiters).
** sync_mu held. */
void rv_wal_sync_wake_locked(rv_wal *w)
{
    atomic_store_explicit(&w->synced_atomic, w->synced, memory_order_release);
    /* release: a waiter that sees the new generation sees synced/failed */
    atomic_fetch_add_explicit(&w->sync_gen, 1, memory_order_release);
    rv_futex_wake_all(&w->sync_gen);
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

/* Sets the calling thread's message from the recorded failure. */
int rv_wal_failure_rc(rv_wal *w)
{
    return rv_stop_error(w->stop, RAVEL_IOERR, NULL);
}

/* ------------------------------------------------------------ io_uring */

#ifndef RAVEL_OMIT_IO_URING

int rv_wal_uring_submit_write(rv_wal *w, const void *p, size_t len,
                              uint64_t off, void *data, int rw_flags,
                              int link_sync)
{
    rv_mutex_lock(&w->sq_mu);
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
    rv_mutex_unlock(&w->sq_mu);
    /* Not submitted: the linked fdatasync will never complete by itself. */
    if (r < 0 && link_sync)
        rv_wal_completion_set(&w->fsync_done, -ECANCELED);
    return r;
}

int rv_wal_uring_submit_fsync(rv_wal *w)
{
    rv_mutex_lock(&w->sq_mu);
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
    int r = -EBUSY;
    if (sqe) {
        io_uring_prep_fsync(sqe, w->fd, IORING_FSYNC_DATASYNC);
        io_uring_sqe_set_data(sqe, &w->fsync_done);
        r = io_uring_submit(&w->ring);
        if (r >= 0)
            r = 0;
    }
    rv_mutex_unlock(&w->sq_mu);
    return r;
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
    /* A program started with stdin closed would otherwise have its ring on
    ** descriptor 0 (see util/file.h).  liburing's struct io_uring declares
    ** both fields, and io_uring_queue_exit closes ring_fd: moving the
    ** descriptor is enough, the rings' mappings do not depend on it. */
    if (w->ring.ring_fd <= 2) {
        int fd = rv_fd_above_stdio(w->ring.ring_fd);
        if (fd < 0) {
            w->ring.ring_fd = -1;
            io_uring_queue_exit(&w->ring);
            *why = "io_uring: no descriptor above 2 for the ring";
            return -EMFILE;
        }
        if (w->ring.enter_ring_fd == w->ring.ring_fd)
            w->ring.enter_ring_fd = fd;
        w->ring.ring_fd = fd;
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
    w->event_fd = rv_fd_above_stdio(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
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

/* Every mode counts; only the buffered modes' sync waiters read the count
** (wal_buffered.c, wal_fsync_gather): the direct mode has no use for it. */
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

/* ----------------------------------------------------------- dispatch */

char *rv_wal_reserve(rv_wal *w, size_t len)
{
    return w->ops->reserve(w, len);
}

int rv_wal_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
{
    rv_mutex_lock(&w->write_mu);
    int rc = w->ops->append(w, len, want_sync, end);
    rv_mutex_unlock(&w->write_mu);
    return rc;
}

int rv_wal_wait_written(rv_wal *w, uint64_t end)
{
    return w->ops->wait_written(w, end);
}

int rv_wal_sync_to(rv_wal *w, uint64_t end)
{
    return w->ops->sync_to(w, end);
}

int rv_wal_sync_all(rv_wal *w)
{
    return w->ops->sync_all(w);
}

int rv_wal_flush(rv_wal *w)
{
    return w->ops->flush(w);
}

int rv_wal_switch_segment(rv_wal *w, uint64_t number)
{
    rv_mutex_lock(&w->write_mu);
    int rc = w->ops->switch_segment(w, number);
    rv_mutex_unlock(&w->write_mu);
    return rc;
}

int rv_wal_recycle(rv_wal *w, uint64_t number)
{
    return w->ops->recycle(w, number);
}

uint64_t rv_wal_segment_number(const rv_wal *w)
{
    return w->number;
}

int rv_wal_segment_has_records(const rv_wal *w)
{
    return w->logical_end != w->seg_start;
}

uint32_t rv_wal_segment_tag(const rv_wal *w)
{
    int tagged = w->ops->tagged >= 0 ? w->ops->tagged
                 : w->header_size == RV_WAL_V3_HEADER_SIZE;
    return tagged ? rv_wal_tag(w->number) : 0;
}

void rv_wal_get_stats(rv_wal *w, struct rv_wal_stats *s)
{
    memset(s, 0, sizeof *s);
    s->bytes = atomic_load_explicit(&w->stat_bytes, memory_order_relaxed);
    s->appends = atomic_load_explicit(&w->stat_appends, memory_order_relaxed);
    s->fsyncs = atomic_load_explicit(&w->stat_fsyncs, memory_order_relaxed);
    s->sync_acks = atomic_load_explicit(&w->stat_sync_acks,
                                        memory_order_relaxed);
    s->segments = atomic_load_explicit(&w->stat_segments,
                                       memory_order_relaxed);
    w->ops->stats(w, s);
}

/* -------------------------------------------------------------- lifetime */

/* Frees the WAL: the mode's state first (its threads may still use the
** ring), then the ring, the segment, the locks. */
static void wal_free(rv_wal *w)
{
    if (w->ops)
        w->ops->destroy(w);
#ifndef RAVEL_OMIT_IO_URING
    if (w->use_uring)
        io_uring_queue_exit(&w->ring);
#endif
    if (w->fd >= 0)
        close(w->fd);
    rv_mutex_destroy(&w->sq_mu);
    rv_mutex_destroy(&w->cq_mu);
    if (w->event_fd >= 0)
        close(w->event_fd);
    rv_mutex_destroy(&w->sync_mu);
    rv_mutex_destroy(&w->write_mu);
    free(w->dir);
    free(w);
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
    rv_mutex_init(&w->sq_mu);
    rv_mutex_init(&w->cq_mu);
    w->event_fd = -1;
    rv_mutex_init(&w->sync_mu);
    rv_mutex_init(&w->write_mu);
    if (o->wal_preallocate) {
        uint64_t chunk = o->write_buffer_size + o->write_buffer_size / 8;
        w->prealloc_chunk = chunk > (256u << 20) ? (256u << 20) : chunk;
    }

    w->header_size = RV_WAL_HEADER_SIZE;
    char scratch[RV_PATH_MAX]; /* a probe's, left by a crash during one */
    if (rv_path_join(scratch, dir, RV_WAL_PROBE_FILE) == RAVEL_OK)
        (void)unlink(scratch);
    struct rv_wal_setup setup;
    int rc = rv_wal_choose(w, o, &setup);
    if (rc == RAVEL_OK)
        rc = w->ops->open(w, number, prev_end, o, &setup);
    if (rc != RAVEL_OK) {
        wal_free(w);
        return rc;
    }
    *out = w;
    return RAVEL_OK;
}

int rv_wal_close(rv_wal *w)
{
    if (!w)
        return RAVEL_OK;
    rv_mutex_lock(&w->write_mu);
    int rc = w->ops->close(w);
    rv_mutex_unlock(&w->write_mu);
    wal_free(w);
    return rc;
}
