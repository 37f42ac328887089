/*
** wal_direct.c -- wal_io=direct: the WAL written with O_DIRECT through
** io_uring, several group writes in flight, into segments prepared ahead
** (wal_spare.c).  wal_writer.h has the contract; the bytes are version 3
** of wal_format.h.
**
** Owns: the direct mode's operations (rv_wal_direct_ops: wal_writer.c
** calls them for every public function once wal_choose.c has picked
** direct), its write slots, the tail block, the completion thread, and
** the spares through wal_spare.c.  Does not own: choosing the mode, the
** block size or RWF_DSYNC (wal_choose.c, from wal_probe.c's numbers),
** setting up the ring (wal_choose.c) or submitting to it, the fdatasync
** bookkeeping and the failure record shared with the buffered modes
** (wal_writer.c).  Its state, struct rv_wal_direct (w->dio), is its alone;
** the shared fields of struct rv_wal it writes are marked there.
**
** Writes.  Every write covers whole blocks (the block size direct I/O
** asks for, at least 4 KiB) at a block-aligned offset from a block-aligned
** buffer.  The group's records are encoded straight into the buffer of a
** free write slot, after a copy of the partial last block (the tail), so
** the write rewrites that block with the new records appended (InnoDB's
** scheme) and the rest of its last block is zeros.  A write is submitted
** and the leader goes on: the next group's write may be submitted while
** this one is in flight, up to DIO_SLOTS of them.  Only one rule keeps
** them apart: a write never rewrites a block an earlier write still in
** flight is writing (two writes of one block could land in either order).
** When the tail's block is in flight, the next write starts at the next
** block boundary instead, with a skip record naming where the data ended;
** the zeros between are never read (wal_format.h).
**
** Completions.  A completion thread per WAL reaps the ring (write and
** fdatasync completions may arrive in any order) and retires the slots in
** submission order: `written` moves to the end of the contiguous prefix of
** completed writes; `synced` too when those writes carried RWF_DSYNC and
** everything before them was durable, else when an fdatasync that began
** after them completes.  Then it wakes every waiter (sync_gen): a writer
** is acknowledged only once the prefix passes its record, so
** acknowledgements go out strictly in log order whatever order the
** device completed the writes in.  A failed or short write at offset X
** records an I/O failure (the database stops taking writes, reason
** recorded) and the prefix never passes X: every writer at or after X gets
** RAVEL_IOERR, every writer before it what it was waiting for.
**
** Durability for RAVEL_SYNC: a group with a sync member is written with
** RWF_DSYNC when the probe (wal_probe.c) found it cheaper than a write and
** an fdatasync, or when the mode was asked for; the device then makes the
** write durable itself (FUA where it has it).  Without DSYNC, or when an
** earlier write since the last sync did not carry it, the waiter issues
** one fdatasync covering every completed write, batched as in
** wal_buffered.c: one in flight at a time, covering all who wait.
**
** Writers without RAVEL_SYNC are acknowledged once their write has
** completed (rv_wal_wait_written): the data is then on the device, so a
** kill -9 cannot lose it.
**
** Switching segments: the leader waits for the writes in flight, makes
** the segment durable (one fdatasync, usually covering nothing new), and
** takes the spare prepared in the background.  The spare's header goes
** out with its first write.  The old segment is not trimmed: its
** preallocated tail is what a recycled file reuses.
*/
#include "wal/wal_writer_int.h"
#include "wal/wal_format.h"
#include "wal/wal_spare.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/futex.h"
#include "util/sync_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RAVEL_OMIT_IO_URING

#define DIO_SLOTS 16           /* group writes in flight at most */
#define DIO_RING_ENTRIES 64    /* slots, an fdatasync, the stop marker */
#define DIO_MEM_ALIGN 4096

/* One group write. */
struct dio_slot {
    char *buf;                 /* block-aligned, cap bytes */
    size_t cap;
    uint64_t file_off;         /* where buf[0] goes: a block boundary */
    size_t len;                /* bytes submitted: whole blocks */
    uint64_t start, end;       /* logical offsets of the data before and
                               ** after it */
    int dsync;                 /* submitted with RWF_DSYNC */
    _Atomic int busy;          /* submitted, not yet retired */
    struct rv_wal_completion done;
    rv_wal *w;                 /* for a completion the test hook held */
};

struct rv_wal_direct {
    uint32_t block;            /* direct I/O block size */
    int use_dsync;             /* sync groups' writes carry RWF_DSYNC */
    struct dio_slot slots[DIO_SLOTS];
    uint64_t submitted;        /* slots submitted so far; leader only */
    uint64_t retired;          /* slots retired; under sync_mu */
    _Atomic uint64_t retired_atomic; /* its copy for the leader's waits */
    char *tail;                /* the partial last block (zeros past the
                               ** data); leader only */
    struct dio_slot *tail_slot;/* the last write of that block, or NULL */
    int header_pending;        /* the segment's header is in the tail only:
                               ** no write has taken it to the file yet */
    /* What dio_reserve laid out for dio_append. */
    struct dio_slot *pending;
    uint64_t pending_off;      /* where the write starts in the file */
    size_t pending_head;       /* bytes of the tail copied before */
    int pending_skip;          /* a skip record comes first */
    char *scratch;             /* reserve's buffer once writes failed */
    size_t scratch_cap;

    struct rv_wal_spares *spares;
    pthread_t reaper;
    int reaper_started;
    char stop_marker;          /* its address: the completion thread's
                               ** stop request */

    _Atomic uint64_t stat_dsync_writes;
    _Atomic uint64_t stat_skips;
    _Atomic uint64_t stat_skip_bytes;
    _Atomic uint64_t stat_max_inflight;
    _Atomic uint64_t stat_slot_waits;
};

static size_t dio_round_up(size_t n, size_t block)
{
    return (n + block - 1) / block * block;
}

/* The file offset in the current segment of logical offset LOGICAL. */
static uint64_t dio_file_offset(const rv_wal *w, uint64_t logical)
{
    return logical - w->seg_start + w->header_size;
}

/* -------------------------------------------------------- retiring */

/* Retires the completed slots at the head of the submission order,
** advancing written and synced; wakes the waiters if anything moved.
** sync_mu held. */
static void dio_retire_locked(rv_wal *w)
    RV_REQUIRES(w->sync_mu);
static void dio_retire_locked(rv_wal *w)
{
    struct rv_wal_direct *d = w->dio;
    int moved = 0;
    for (;;) {
        struct dio_slot *s = &d->slots[d->retired % DIO_SLOTS];
        /* acquire: pairs with the leader's release when it submitted */
        if (!atomic_load_explicit(&s->busy, memory_order_acquire) ||
            !rv_wal_completion_is_done(&s->done))
            break;
        int res = atomic_load_explicit(&s->done.res, memory_order_relaxed);
        if (rv_wal_io_failed(w)) {
            ; /* a hole before it: never acknowledged */
        } else if (res == (int)s->len) {
            w->written = s->end;
            if (s->dsync && w->synced >= s->start) {
                w->synced = s->end;
                rv_sync_journal_file(w->fd, dio_file_offset(w, s->end));
            }
        } else {
            char what[160];
            snprintf(what, sizeof what, "%s at byte offset %llu (%zu bytes%s)",
                     res >= 0 ? "short direct write" : "direct write",
                     (unsigned long long)s->file_off, s->len,
                     res >= 0 ? ", fewer written" : "");
            rv_wal_fail_locked(w, res < 0 ? -res : EIO, what);
        }
        atomic_store_explicit(&s->busy, 0, memory_order_relaxed);
        d->retired++;
        moved = 1;
    }
    /* An fdatasync is applied once the writes it covers are retired (a
    ** linked one may complete before its write is reaped): durable never
    ** runs ahead of written, and after a failure it makes nothing
    ** durable. */
    if (w->fsync_inflight && rv_wal_completion_is_done(&w->fsync_done)) {
        int res = atomic_load_explicit(&w->fsync_done.res,
                                       memory_order_relaxed);
        if (rv_wal_io_failed(w)) {
            w->fsync_inflight = 0;
            moved = 1;
        } else if (res != 0 || w->written >= w->fsync_target) {
            rv_wal_fsync_finished_locked(w); /* wakes */
            moved = 1;
        }
    }
    if (moved) {
        atomic_store_explicit(&w->written_atomic, w->written,
                              memory_order_release);
        atomic_store_explicit(&d->retired_atomic, d->retired,
                              memory_order_release);
        rv_wal_sync_wake_locked(w);
    }
}

/* Applies RES as slot CTX's completion: the test hook's delivery, or a
** write that never reached the kernel. */
static void dio_deliver(void *ctx, int res)
{
    struct dio_slot *s = ctx;
    rv_wal *w = s->w;
    rv_wal_completion_set(&s->done, res);
    rv_mutex_lock(&w->sync_mu);
    dio_retire_locked(w);
    rv_mutex_unlock(&w->sync_mu);
}

/* Sets every available completion; returns 1 if the stop marker was
** among them. */
static int dio_drain(rv_wal *w)
{
    struct rv_wal_direct *d = w->dio;
    struct io_uring_cqe *cqe;
    unsigned head, n = 0;
    int stop = 0;
    io_uring_for_each_cqe(&w->ring, head, cqe) {
        void *data = io_uring_cqe_get_data(cqe);
        n++;
        if (data == &d->stop_marker) {
            stop = 1;
        } else if (data == &w->fsync_done) {
            rv_wal_completion_set(&w->fsync_done, cqe->res);
        } else if (data) {
            if (!rv_test_wal_hold(dio_deliver, data, cqe->res))
                rv_wal_completion_set(&((struct dio_slot *)data)->done,
                                      cqe->res);
        }
    }
    io_uring_cq_advance(&w->ring, n);
    return stop;
}

/* The completion thread: reaps, retires, wakes, until stopped. */
static void *dio_reaper_main(void *arg)
{
    rv_wal *w = arg;
    for (;;) {
        struct io_uring_cqe *cqe;
        int r = io_uring_wait_cqe(&w->ring, &cqe);
        if (r < 0 && r != -EINTR && r != -EAGAIN) {
            /* The ring itself failed: nothing can be acknowledged now.
            ** Keep reaping what may still come (close waits for it). */
            rv_mutex_lock(&w->sync_mu);
            rv_wal_fail_locked(w, -r, "waiting for direct WAL completions on");
            rv_mutex_unlock(&w->sync_mu);
            struct timespec nap = {0, 1000000};
            nanosleep(&nap, NULL);
        }
        int stop = dio_drain(w);
        rv_mutex_lock(&w->sync_mu);
        dio_retire_locked(w);
        rv_mutex_unlock(&w->sync_mu);
        if (stop)
            return NULL;
    }
}

/* --------------------------------------------------------------- waiting */

/* Starts an fdatasync covering every completed write if none is in flight
** and one is needed for END.  sync_mu held; released and re-taken while
** submitting. */
static void dio_fsync_start_locked(rv_wal *w)
    RV_REQUIRES(w->sync_mu);
static void dio_fsync_start_locked(rv_wal *w)
{
    if (!rv_wal_fsync_begin_locked(w, w->written)) {
        rv_wal_fsync_finished_locked(w); /* the fault hook failed it */
        return;
    }
    rv_mutex_unlock(&w->sync_mu);
    int r = rv_wal_uring_submit_fsync(w);
    rv_mutex_lock(&w->sync_mu);
    if (r < 0) {
        rv_wal_completion_set(&w->fsync_done, r);
        rv_wal_fsync_finished_locked(w);
    }
}

/* Waits until everything up to logical offset END is written (DURABLE:
** durable). */
static int dio_wait(rv_wal *w, uint64_t end, int durable)
{
    _Atomic uint64_t *mark = durable ? &w->synced_atomic : &w->written_atomic;
    for (;;) {
        /* acquire: pairs with the release stores of dio_retire_locked */
        if (atomic_load_explicit(mark, memory_order_acquire) >= end)
            break;
        uint32_t gen = atomic_load_explicit(&w->sync_gen,
                                            memory_order_acquire);
        rv_mutex_lock(&w->sync_mu);
        uint64_t have = durable ? w->synced : w->written;
        if (have >= end) {
            rv_mutex_unlock(&w->sync_mu);
            break;
        }
        if (rv_wal_io_failed(w)) {
            rv_mutex_unlock(&w->sync_mu);
            return rv_wal_failure_rc(w);
        }
        if (durable && w->written >= end && !w->fsync_inflight)
            dio_fsync_start_locked(w);
        rv_mutex_unlock(&w->sync_mu);
        rv_futex_wait(&w->sync_gen, gen, NULL);
    }
    if (durable)
        atomic_fetch_add_explicit(&w->stat_sync_acks, 1, memory_order_relaxed);
    return RAVEL_OK;
}

/* Waits until at most MAX writes are in flight (leader).  Returns early,
** with the failure's code, once an I/O failure is recorded and MAX is 0
** is not required. */
static void dio_wait_inflight(rv_wal *w, uint64_t max)
{
    struct rv_wal_direct *d = w->dio;
    int counted = 0;
    for (;;) {
        uint32_t gen = atomic_load_explicit(&w->sync_gen,
                                            memory_order_acquire);
        uint64_t retired = atomic_load_explicit(&d->retired_atomic,
                                                memory_order_acquire);
        if (d->submitted - retired <= max)
            return;
        if (!counted && max > 0)
            atomic_fetch_add_explicit(&d->stat_slot_waits, 1,
                                      memory_order_relaxed);
        counted = 1;
        rv_futex_wait(&w->sync_gen, gen, NULL);
    }
}

/* Waits for every write and fdatasync in flight, then makes everything
** written durable with one fdatasync if the writes did not.  Leader (or
** close), write_mu held. */
static int dio_settle(rv_wal *w)
    RV_REQUIRES(w->write_mu);
static int dio_settle(rv_wal *w)
{
    dio_wait_inflight(w, 0);
    rv_mutex_lock(&w->sync_mu);
    while (w->fsync_inflight) {
        uint32_t gen = atomic_load_explicit(&w->sync_gen,
                                            memory_order_acquire);
        rv_mutex_unlock(&w->sync_mu);
        rv_futex_wait(&w->sync_gen, gen, NULL);
        rv_mutex_lock(&w->sync_mu);
    }
    if (!rv_wal_io_failed(w) && w->synced < w->written) {
        if (fdatasync(w->fd) != 0) {
            rv_wal_fail_locked(w, errno, "fdatasync");
        } else {
            rv_sync_journal_file(w->fd, dio_file_offset(w, w->written));
            w->synced = w->written;
            atomic_fetch_add_explicit(&w->stat_fsyncs, 1,
                                      memory_order_relaxed);
            rv_wal_sync_wake_locked(w);
        }
    }
    int failed = rv_wal_io_failed(w);
    rv_mutex_unlock(&w->sync_mu);
    return failed ? rv_wal_failure_rc(w) : RAVEL_OK;
}

/* --------------------------------------------------------------- appends */

/* Makes S's buffer hold at least N bytes.  0, or -1 out of memory. */
static int dio_slot_reserve(struct dio_slot *s, size_t n)
{
    if (s->cap >= n)
        return 0;
    size_t cap = s->cap ? s->cap : 64 * 1024;
    while (cap < n)
        cap *= 2;
    void *p = NULL;
    if (posix_memalign(&p, DIO_MEM_ALIGN, cap))
        return -1;
    free(s->buf);
    s->buf = p;
    s->cap = cap;
    return 0;
}

/* Once writes have failed, reserve still hands out a buffer (append then
** reports the failure). */
static char *dio_scratch(struct rv_wal_direct *d, size_t len)
{
    if (d->scratch_cap < len) {
        char *p = realloc(d->scratch, len);
        if (!p)
            return NULL;
        d->scratch = p;
        d->scratch_cap = len;
    }
    d->pending = NULL;
    return d->scratch;
}

/* The reserve operation: lays out the next write in a free slot (waiting
** for one), after a copy of the tail, and hands out where the records go. */
static char *dio_reserve(rv_wal *w, size_t len)
{
    struct rv_wal_direct *d = w->dio;
    size_t block = d->block;
    if (rv_wal_io_failed(w))
        return dio_scratch(d, len);
    dio_wait_inflight(w, DIO_SLOTS - 1);
    if (rv_wal_io_failed(w))
        return dio_scratch(d, len);
    uint64_t off = w->file_off;
    uint64_t block_start = off / block * block;
    size_t partial = (size_t)(off - block_start);
    /* The tail's block still in flight: start at the next block. */
    int skip = partial && d->tail_slot &&
               !rv_wal_completion_is_done(&d->tail_slot->done);
    size_t head = skip ? 0 : partial;
    size_t lead = skip ? RV_WAL_SKIP_SIZE : 0;
    struct dio_slot *s = &d->slots[d->submitted % DIO_SLOTS];
    if (dio_slot_reserve(s, dio_round_up(head + lead + len, block)))
        return NULL;
    if (head)
        memcpy(s->buf, d->tail, head);
    d->pending = s;
    d->pending_off = skip ? block_start + block : block_start;
    d->pending_head = head;
    d->pending_skip = skip;
    return s->buf + head + lead;
}

/* Submits slot S (laid out and filled), with an fdatasync linked behind
** it when LINK_SYNC (begun by dio_link_sync); a submission that fails, or a
** fault injected by a test (RV_FAULT_WAL_WRITE, and RV_FAULT_WAL_SYNC for
** an RWF_DSYNC write, which is its own sync), completes it at once with
** that result. */
static void dio_submit(rv_wal *w, struct dio_slot *s, int link_sync)
{
    /* An RWF_DSYNC write is also the sync: the sync fault fails it too. */
    int fault = rv_fault_check(RV_FAULT_WAL_WRITE);
    if (!fault && s->dsync)
        fault = rv_fault_check(RV_FAULT_WAL_SYNC);
    if (fault) {
        if (link_sync) /* never submitted: not durable */
            rv_wal_completion_set(&w->fsync_done, -ECANCELED);
        dio_deliver(s, fault);
        return;
    }
    int r = rv_wal_uring_submit_write(w, s->buf, s->len, s->file_off, s,
                                      s->dsync ? RWF_DSYNC : 0, link_sync);
    if (r < 0)
        dio_deliver(s, r);
}

/* Without RWF_DSYNC: whether to link an fdatasync behind S, a sync group's
** write.  Only when no fdatasync is in flight and every earlier write has
** completed, so that it covers everything up to S's end; other sync
** waiters issue theirs (dio_wait). */
static int dio_link_sync(rv_wal *w, struct dio_slot *s)
{
    rv_mutex_lock(&w->sync_mu);
    int link = !w->fsync_inflight && w->written == s->start &&
               !rv_wal_io_failed(w);
    if (link && !rv_wal_fsync_begin_locked(w, s->end)) {
        rv_wal_fsync_finished_locked(w); /* the fault hook failed it */
        link = 0;
    }
    rv_mutex_unlock(&w->sync_mu);
    return link;
}

/* The append operation: submits the write dio_reserve laid out and
** returns; the writers wait for it (dio_wait).  write_mu held. */
static int dio_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
    RV_REQUIRES(w->write_mu);
static int dio_append(rv_wal *w, size_t len, int want_sync, uint64_t *end)
{
    struct rv_wal_direct *d = w->dio;
    struct dio_slot *s = d->pending;
    if (!s || rv_wal_io_failed(w)) {
        rv_mutex_lock(&w->sync_mu);
        int rc = rv_wal_failure_rc(w);
        rv_mutex_unlock(&w->sync_mu);
        return rc;
    }
    d->pending = NULL;
    size_t block = d->block;
    size_t lead = d->pending_skip ? RV_WAL_SKIP_SIZE : 0;
    if (d->pending_skip) {
        rv_wal_encode_skip(s->buf, w->number, w->file_off);
        atomic_fetch_add_explicit(&d->stat_skips, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&d->stat_skip_bytes,
                                  d->pending_off - w->file_off + lead,
                                  memory_order_relaxed);
    }
    size_t data = d->pending_head + lead + len;
    size_t total = dio_round_up(data, block);
    memset(s->buf + data, 0, total - data);
    uint64_t new_off = d->pending_off + data;

    s->w = w;
    s->file_off = d->pending_off;
    s->len = total;
    s->start = w->logical_end;
    s->end = w->seg_start + (new_off - w->header_size);
    s->dsync = want_sync && d->use_dsync;
    rv_wal_completion_reset(&s->done);
    if (new_off % block) {
        memcpy(d->tail, s->buf + total - block, block);
        d->tail_slot = s;
    } else {
        d->tail_slot = NULL;
    }
    w->file_off = new_off;
    w->logical_end = s->end;
    *end = s->end;
    d->submitted++;
    d->header_pending = 0; /* block 0 goes out with this write, or went */
    /* release: the completion thread that sees busy sees the slot */
    atomic_store_explicit(&s->busy, 1, memory_order_release);

    atomic_fetch_add_explicit(&w->stat_bytes, len, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->stat_appends, 1, memory_order_relaxed);
    if (s->dsync)
        atomic_fetch_add_explicit(&d->stat_dsync_writes, 1,
                                  memory_order_relaxed);
    uint64_t inflight = d->submitted -
        atomic_load_explicit(&d->retired_atomic, memory_order_relaxed);
    if (inflight > atomic_load_explicit(&d->stat_max_inflight,
                                        memory_order_relaxed))
        atomic_store_explicit(&d->stat_max_inflight, inflight,
                              memory_order_relaxed);
    dio_submit(w, s, want_sync && !d->use_dsync && dio_link_sync(w, s));
    return RAVEL_OK;
}

/* ------------------------------------------------------------- segments */

/* Makes FD, the spare for segment NUMBER whose predecessor's data ended
** at PREV_END, the current segment; its header goes out with the first
** write.  Leader, write_mu held, nothing in flight. */
static void dio_start_segment(rv_wal *w, int fd, uint64_t number,
                              uint64_t prev_end)
    RV_REQUIRES(w->write_mu);
static void dio_start_segment(rv_wal *w, int fd, uint64_t number,
                              uint64_t prev_end)
{
    struct rv_wal_direct *d = w->dio;
    rv_mutex_lock(&w->sync_mu); /* the completion thread reads these */
    w->fd = fd;
    w->seg_start = w->logical_end;
    w->header_size = RV_WAL_V3_HEADER_SIZE;
    rv_mutex_unlock(&w->sync_mu);
    w->number = number;
    w->file_off = RV_WAL_V3_HEADER_SIZE;
    memset(d->tail, 0, d->block);
    rv_wal_encode_v3_header(d->tail, number, prev_end, d->block);
    d->tail_slot = NULL;
    d->header_pending = 1;
    atomic_fetch_add_explicit(&w->stat_segments, 1, memory_order_relaxed);
}

/* Writes block 0 of the current segment -- its header, nothing else yet
** -- and makes it durable.  0, or the errno of the write or fdatasync. */
static int dio_write_header(rv_wal *w)
{
    struct rv_wal_direct *d = w->dio;
    if (pwrite(w->fd, d->tail, d->block, 0) != (ssize_t)d->block)
        return errno ? errno : EIO;
    if (fdatasync(w->fd) != 0)
        return errno;
    rv_sync_journal_file(w->fd, w->header_size);
    d->header_pending = 0;
    return 0;
}

/* Writes the current segment's header, and makes it durable, when no
** write has carried it: a segment switched away from before any record
** reached it (a flush with only RAVEL_NO_WAL writes) must not stay a
** spare in the middle of the log.  Leader, nothing in flight. */
static int dio_write_pending_header(rv_wal *w)
{
    if (!w->dio->header_pending)
        return RAVEL_OK;
    int err = dio_write_header(w);
    if (!err)
        return RAVEL_OK;
    rv_mutex_lock(&w->sync_mu);
    rv_wal_fail_locked(w, err, "writing the header of");
    rv_mutex_unlock(&w->sync_mu);
    return rv_wal_failure_rc(w);
}

/* The switch_segment operation: settles the writes in flight, then takes
** the spare.  write_mu held. */
static int dio_switch(rv_wal *w, uint64_t number)
    RV_REQUIRES(w->write_mu);
static int dio_switch(rv_wal *w, uint64_t number)
{
    struct rv_wal_direct *d = w->dio;
    int rc = dio_settle(w);
    if (rc == RAVEL_OK)
        rc = dio_write_pending_header(w);
    if (rc != RAVEL_OK)
        return rc;
    int fd = -1;
    rc = rv_wal_spares_take(d->spares, number, &fd);
    if (rc != RAVEL_OK) {
        /* Stay on the old segment, refusing further writes. */
        rv_mutex_lock(&w->sync_mu);
        rv_wal_fail_reason_locked(w, rv_errmsg_get());
        rv_mutex_unlock(&w->sync_mu);
        return rc;
    }
    int old_fd = w->fd;
    dio_start_segment(w, fd, number, w->file_off);
    close(old_fd);
    rv_wal_spares_request(d->spares, number + 1);
    return RAVEL_OK;
}

/* Writes the seal record (wal_format.h) after the data, trims the file
** right after it and makes it durable: replay then knows the segment was
** complete.  Close only, after dio_settle. */
static int dio_seal(rv_wal *w)
{
    struct rv_wal_direct *d = w->dio;
    size_t block = d->block;
    uint64_t off = w->file_off;
    uint64_t block_start = off / block * block;
    size_t head = (size_t)(off - block_start);
    struct dio_slot *s = &d->slots[0];
    size_t total = dio_round_up(head + RV_WAL_SEAL_SIZE, block);
    int err = 0;
    if (dio_slot_reserve(s, total)) {
        err = ENOMEM;
    } else {
        memcpy(s->buf, d->tail, head);
        rv_wal_encode_v3_seal(s->buf + head, w->number, off);
        memset(s->buf + head + RV_WAL_SEAL_SIZE, 0,
               total - head - RV_WAL_SEAL_SIZE);
        if (pwrite(w->fd, s->buf, total, (off_t)block_start) != (ssize_t)total)
            err = errno ? errno : EIO;
        else if (ftruncate(w->fd, (off_t)(off + RV_WAL_SEAL_SIZE)) != 0 ||
                 fdatasync(w->fd) != 0)
            err = errno;
    }
    rv_mutex_lock(&w->sync_mu);
    if (err)
        rv_wal_fail_locked(w, err, "sealing");
    else
        rv_sync_journal_file(w->fd, off + RV_WAL_SEAL_SIZE);
    rv_mutex_unlock(&w->sync_mu);
    if (err)
        return rv_wal_failure_rc(w);
    w->file_off = off + RV_WAL_SEAL_SIZE;
    return RAVEL_OK;
}

/* The close operation: syncs and seals the segment (unless an I/O failure
** was recorded); the threads stop in dio_destroy.  write_mu held. */
static int dio_close(rv_wal *w)
    RV_REQUIRES(w->write_mu);
static int dio_close(rv_wal *w)
{
    int rc = RAVEL_OK;
    if (!rv_wal_io_failed(w)) {
        rc = dio_settle(w);
        if (rc == RAVEL_OK)
            rc = dio_seal(w);
    } else {
        dio_wait_inflight(w, 0); /* the buffers must outlive the writes */
    }
    return rc;
}

/* The recycle operation: the spares' pool decides. */
static int dio_recycle(rv_wal *w, uint64_t number)
{
    return rv_wal_spares_recycle(w->dio->spares, number);
}

/* -------------------------------------------------------------- lifetime */

/* Creates segment NUMBER now (at open): a spare, then its header written
** and made durable at once, so the log never ends in a spare after an
** open. */
static int dio_first_segment(rv_wal *w, uint64_t number, uint64_t prev_end)
{
    struct rv_wal_direct *d = w->dio;
    int fd = -1;
    int rc = rv_wal_spares_take(d->spares, number, &fd);
    if (rc != RAVEL_OK)
        return rc;
    /* at open no other thread exists: the lock is taken for the rule */
    rv_mutex_lock(&w->write_mu);
    dio_start_segment(w, fd, number, prev_end);
    rv_mutex_unlock(&w->write_mu);
    int err = dio_write_header(w);
    if (err) {
        char path[RV_PATH_MAX]; /* a torn header must not stay behind */
        if (rv_wal_segment_path(path, w->dir, number) == RAVEL_OK)
            unlink(path);
        return rv_error_errno(RAVEL_IOERR, err, "writing the header of WAL "
                              "segment %llu (O_DIRECT) in %s",
                              (unsigned long long)number, w->dir);
    }
    return RAVEL_OK;
}

static int dio_start_reaper(rv_wal *w);
static void dio_stop_reaper(rv_wal *w);

/* The open operation: direct I/O on the ring wal_choose.c set up, in
** blocks of SETUP->block, RWF_DSYNC for sync groups if SETUP->dsync; the
** completion thread, the spares, then segment NUMBER (after PREV_END).
** On failure the caller destroys the WAL (dio_destroy). */
static int dio_open(rv_wal *w, uint64_t number, uint64_t prev_end,
                    const struct ravel_options *o,
                    const struct rv_wal_setup *setup)
{
    int rc = rv_wal_direct_prepare(w, o, setup);
    if (rc == RAVEL_OK)
        rc = dio_start_reaper(w);
    if (rc == RAVEL_OK)
        rc = dio_first_segment(w, number, prev_end);
    if (rc != RAVEL_OK)
        return rc;
    rv_wal_spares_request(w->dio->spares, number + 1);
    return RAVEL_OK;
}

int rv_wal_direct_prepare(rv_wal *w, const struct ravel_options *o,
                          const struct rv_wal_setup *setup)
{
    uint32_t block = setup->block;
    int use_dsync = setup->dsync;
    if (!block) /* the probe found the size before the mode was chosen */
        return rv_error(RAVEL_INVALID, "wal_io=direct: no direct I/O block "
                        "size for %s", w->dir);
    struct rv_wal_direct *d = calloc(1, sizeof *d);
    if (!d)
        return rv_error(RAVEL_NOMEM, "out of memory opening the WAL");
    w->dio = d;
    d->block = block;
    d->use_dsync = use_dsync;
    void *tail = NULL;
    if (posix_memalign(&tail, DIO_MEM_ALIGN, block))
        return rv_error(RAVEL_NOMEM, "out of memory opening the WAL");
    d->tail = tail;
    uint64_t size = o->wal_preallocate ? w->prealloc_chunk : 0;
    int rc = rv_wal_spares_new(w->dir, size, block,
                               (int)o->recycle_log_file_num, &d->spares);
    return rc;
}

/* Starts the completion thread: only while the direct mode writes (under
** wal_io=auto, the buffered io_uring mode reaps the ring itself). */
static int dio_start_reaper(rv_wal *w)
{
    struct rv_wal_direct *d = w->dio;
    int r = pthread_create(&d->reaper, NULL, dio_reaper_main, w);
    if (r != 0)
        return rv_error_errno(RAVEL_IOERR, r, "cannot start the WAL's "
                              "completion thread");
    d->reaper_started = 1;
    return RAVEL_OK;
}

void rv_wal_direct_want_spare(rv_wal *w, uint64_t number)
{
    rv_wal_spares_request(w->dio->spares, number);
}

void rv_wal_direct_drop_spare(rv_wal *w, uint64_t number)
{
    rv_wal_spares_drop(w->dio->spares, number);
}

int rv_wal_direct_spare_ready(rv_wal *w, uint64_t number)
{
    return rv_wal_spares_ready(w->dio->spares, number);
}

int rv_wal_direct_enter(rv_wal *w, uint64_t number, uint64_t prev_end)
{
    struct rv_wal_direct *d = w->dio;
    int fd = -1;
    int rc = rv_wal_spares_take(d->spares, number, &fd);
    if (rc == RAVEL_OK && !d->reaper_started && (rc = dio_start_reaper(w))) {
        char path[RV_PATH_MAX]; /* a spare nobody writes: replay ignores
                                ** it, the next creation must not meet it */
        close(fd);
        if (rv_wal_segment_path(path, w->dir, number) == RAVEL_OK)
            unlink(path);
    }
    if (rc != RAVEL_OK)
        return rc;
    dio_start_segment(w, fd, number, prev_end);
    rv_wal_spares_request(d->spares, number + 1);
    return RAVEL_OK;
}

int rv_wal_direct_leave(rv_wal *w, uint64_t number)
{
    int rc = dio_settle(w);
    if (rc == RAVEL_OK)
        rc = dio_write_pending_header(w);
    if (rc != RAVEL_OK)
        return rc;
    dio_stop_reaper(w); /* nothing in flight: dio_settle waited */
    rv_wal_spares_drop(w->dio->spares, number);
    return RAVEL_OK;
}

/* Asks the completion thread to stop and waits for it. */
static void dio_stop_reaper(rv_wal *w)
{
    struct rv_wal_direct *d = w->dio;
    for (;;) {
        rv_mutex_lock(&w->sq_mu);
        struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
        int r = -EBUSY;
        if (sqe) {
            io_uring_prep_nop(sqe);
            io_uring_sqe_set_data(sqe, &d->stop_marker);
            r = io_uring_submit(&w->ring);
        }
        rv_mutex_unlock(&w->sq_mu);
        if (r >= 0)
            break;
        sched_yield();
    }
    pthread_join(d->reaper, NULL);
    d->reaper_started = 0;
}

/* The destroy operation: stops the completion thread once nothing is in
** flight, frees the slots and the spares (after dio_close, or a failed
** dio_open, even one that set up nothing). */
static void dio_destroy(rv_wal *w)
{
    struct rv_wal_direct *d = w->dio;
    if (!d)
        return;
    if (d->reaper_started) {
        dio_wait_inflight(w, 0);
        dio_stop_reaper(w);
    }
    rv_wal_spares_free(d->spares);
    for (int i = 0; i < DIO_SLOTS; i++)
        free(d->slots[i].buf);
    free(d->tail);
    free(d->scratch);
    free(d);
    w->dio = NULL;
}

/* The stats operation: the direct mode's counters and the spares'. */
static void dio_stats(rv_wal *w, struct rv_wal_stats *s)
{
    struct rv_wal_direct *d = w->dio;
    struct rv_wal_spare_stats sp;
    rv_wal_spares_stats(d->spares, &sp);
    s->direct = 1;
    s->block = d->block;
    s->dsync = d->use_dsync;
    s->dsync_writes = atomic_load_explicit(&d->stat_dsync_writes,
                                           memory_order_relaxed);
    s->skips = atomic_load_explicit(&d->stat_skips, memory_order_relaxed);
    s->skip_bytes = atomic_load_explicit(&d->stat_skip_bytes,
                                         memory_order_relaxed);
    s->max_inflight = atomic_load_explicit(&d->stat_max_inflight,
                                           memory_order_relaxed);
    s->slot_waits = atomic_load_explicit(&d->stat_slot_waits,
                                         memory_order_relaxed);
    s->spares_created = sp.created;
    s->spares_recycled = sp.recycled;
    s->spare_waits = sp.waits;
    s->pooled = sp.pooled;
}

/* ------------------------------------------------------------ the mode */

/* The logical end of everything appended so far (any thread; the leader
** moves it under write_mu, in dio_append). */
static uint64_t dio_appended_end(rv_wal *w)
{
    rv_mutex_lock(&w->write_mu);
    uint64_t end = w->logical_end;
    rv_mutex_unlock(&w->write_mu);
    return end;
}

/* The wait_written operation: the write holding END completed. */
static int dio_wait_written(rv_wal *w, uint64_t end)
{
    return dio_wait(w, end, 0);
}

/* The sync_to operation: END durable (an RWF_DSYNC write, or an
** fdatasync issued here). */
static int dio_sync_to(rv_wal *w, uint64_t end)
{
    return dio_wait(w, end, 1);
}

/* The sync_all operation: everything appended so far durable. */
static int dio_sync_all(rv_wal *w)
{
    return dio_wait(w, dio_appended_end(w), 1);
}

/* The flush operation: nothing is buffered, but writes may be in flight:
** waits for them to complete. */
static int dio_flush(rv_wal *w)
{
    return dio_wait(w, dio_appended_end(w), 0);
}

static const struct rv_wal_ops dio_ops_table = {
    .open = dio_open,
    .reserve = dio_reserve,
    .append = dio_append,
    .wait_written = dio_wait_written,
    .sync_to = dio_sync_to,
    .sync_all = dio_sync_all,
    .flush = dio_flush,
    .switch_segment = dio_switch,
    .recycle = dio_recycle,
    .close = dio_close,
    .destroy = dio_destroy,
    .stats = dio_stats,
    .tagged = 1,
};

const struct rv_wal_ops *rv_wal_direct_ops(void)
{
    return &dio_ops_table;
}

#endif /* RAVEL_OMIT_IO_URING: wal_choose.c refuses wal_io=direct */
