/*
** wal_writer_int.h -- the WAL writer's state and the operations each mode
** implements, shared by the files of the writer: wal_writer.c (the
** interface: open, close, dispatch through w->ops; what every mode
** shares), wal_choose.c (which mode, and why), wal_buffered.c (wal_io=sync
** and uring: pwrite or buffered io_uring, batched fdatasync,
** manual_wal_flush), wal_direct.c (wal_io=direct), wal_spare.c (segments
** prepared in advance) and wal_probe.c (what wal_io=auto measures).
** Nothing outside lib/wal/ includes it.
**
** Locks: write_mu (every write to the segment file; the leader's
** appends, segment switches, close), then sync_mu (durability state,
** failures), then sq_mu / cq_mu (the ring's two queues).
*/
#ifndef RAVEL_WAL_WRITER_INT_H
#define RAVEL_WAL_WRITER_INT_H

#include "util/mutex.h"
#include "wal/wal_writer.h"

#include <pthread.h>
#include <stdatomic.h>

#ifndef RAVEL_OMIT_IO_URING
# include <liburing.h>
#endif

#define RV_WAL_WHY_MAX 640

/* Why the manual_wal_flush buffer was written (ravel.stats). */
enum wal_flush_cause {
    WAL_FLUSH_FULL = 0,   /* the next group did not fit */
    WAL_FLUSH_SYNC = 1,   /* a group with a RAVEL_SYNC member, or a sync
                          ** waiter whose record was still buffered */
    WAL_FLUSH_CALL = 2,   /* rv_wal_flush (ravel_flush_wal) */
    WAL_FLUSH_SEGMENT = 3,/* the segment is finished (switch, close) */
    WAL_FLUSH_CAUSES
};

/* What rv_wal_choose (wal_choose.c) found that the mode's open needs. */
struct rv_wal_setup {
    uint32_t block;           /* direct: the direct I/O block size the
                              ** probe found (0: none) */
    int dsync;                /* direct: sync groups are written with
                              ** RWF_DSYNC (else an fdatasync follows) */
};

/* A mode: what each public function of wal_writer.h does in it.
** wal_writer.c calls these and never asks which mode is in force; the
** contracts are wal_writer.h's, with these threads and locks:
**   open        at rv_wal_open, after rv_wal_choose: sets up the mode's
**               state and makes segment NUMBER (after PREV_END) current.
**               On failure the caller runs destroy, then frees the WAL.
**   reserve     the leader.
**   append      the leader, write_mu held (taken by wal_writer.c).
**   wait_written, sync_to, sync_all, flush   any thread, no lock held.
**   switch_segment   the leader, write_mu held.
**   recycle     any thread (a flush), no lock held.
**   close       once, write_mu held: writes what is buffered, makes the
**               segment durable and seals it, unless an I/O failure was
**               recorded; destroy follows.
**   destroy     once, no lock held: frees the mode's state (also after a
**               failed open, whatever it got to set up); wal_writer.c
**               then closes the segment's fd and the ring.
**   stats       any thread: the mode's fields of rv_wal_stats (the
**               shared counters are filled already, the rest zeroed).
**   tagged      records carry the segment's tag (format version 3); -1:
**               the current segment's version says (wal_io=auto). */
struct rv_wal_ops {
    int (*open)(rv_wal *w, uint64_t number, uint64_t prev_end,
                const struct ravel_options *o,
                const struct rv_wal_setup *setup);
    char *(*reserve)(rv_wal *w, size_t len);
    int (*append)(rv_wal *w, size_t len, int want_sync, uint64_t *end);
    int (*wait_written)(rv_wal *w, uint64_t end);
    int (*sync_to)(rv_wal *w, uint64_t end);
    int (*sync_all)(rv_wal *w);
    int (*flush)(rv_wal *w);
    int (*switch_segment)(rv_wal *w, uint64_t number);
    int (*recycle)(rv_wal *w, uint64_t number);
    int (*close)(rv_wal *w);
    void (*destroy)(rv_wal *w);
    void (*stats)(rv_wal *w, struct rv_wal_stats *s);
    int tagged;
};

/* A request whose result a thread waits for. */
struct rv_wal_completion {
    _Atomic int done; /* 0 until res is set; release/acquire publishes res */
    _Atomic int res;  /* bytes or -errno; atomic (relaxed) because the
                      ** reset before submission and the set after the
                      ** CQE are ordered through the kernel, which thread
                      ** sanitizers cannot see */
};

struct rv_wal {
    /* Set at open (rv_wal_open, rv_wal_choose, the mode's open), read-only
    ** afterwards: no lock. */
    char *dir;
    struct rv_stop *stop;     /* the database's: where I/O failures are
                              ** recorded and read (set at open) */
    const struct rv_wal_ops *ops; /* the mode in force (wal_choose.c) */
    int use_uring;            /* the ring is set up (buffered or direct);
                              ** wal_choose.c clears it if it tears the
                              ** ring down again, before any other thread
                              ** exists */
    enum rv_wal_io io;        /* the mode in force: sync, uring or direct */
    char io_why[RV_WAL_WHY_MAX]; /* why it is in force (ravel.wal-io) */
    struct rv_wal_direct *dio;/* wal_io=direct's state (wal_direct.c), or
                              ** NULL; the pointer is set by its open */
    struct rv_wal_auto *autos;/* wal_io=auto's switching (wal_auto.c), or
                              ** NULL; set by rv_wal_choose */

    /* The segment file; written under write_mu, which every write to
    ** the file holds (the leader's appends, with manual_wal_flush any
    ** thread's buffer flush, segment switches, close). */
    rv_mutex write_mu;
    int fd;                   /* current segment; also read by syncers under sync_mu */
    uint64_t number;          /* current segment number */
    uint64_t file_off;        /* next write offset in the segment */
    uint64_t seg_start;       /* logical offset of the segment's first
                              ** record; written under sync_mu too, where
                              ** a finished fdatasync reads it */
    size_t header_size;       /* the current segment's header: 40, or 48
                              ** (version 3, direct); written under
                              ** sync_mu too, like seg_start */
    uint64_t preallocated;    /* bytes reserved in the segment file */
    uint64_t prealloc_chunk;  /* 0: preallocation off (set at open; a
                              ** refused fallocate clears it) */

    /* manual_wal_flush's buffer (wal_buffered.c): records appended, not
    ** yet written.  pend, pend_len under write_mu; pend allocated by the
    ** manual mode's open, NULL in every other mode. */
    char *pend;               /* WAL_MANUAL_BUFFER_BYTES, or NULL */
    size_t pend_len;

    /* Leader-only state (write groups serialise leaders). */
    uint64_t logical_end;     /* logical offset after the last append
                              ** (buffered records included); moved by
                              ** the append operation, under write_mu, so
                              ** another thread may read it there */
    char *buf;                /* where the leader encodes a group
                              ** (wal_buffered.c; direct encodes into its
                              ** write slots) */
    size_t buf_cap;

#ifndef RAVEL_OMIT_IO_URING
    struct io_uring ring;
    struct rv_wal_completion write_done; /* the leader's write in flight */
#endif
    rv_mutex sq_mu;         /* serialises SQE preparation + submit */
    rv_mutex cq_mu;         /* serialises consuming the CQ ring */
    int event_fd;             /* signalled on async completions, or -1 */

    /* Batched fsync state; all fields under sync_mu. */
    rv_mutex sync_mu;
    uint64_t written;         /* logical end of completed writes to the
                              ** file; also written under write_mu, so a
                              ** holder of write_mu may read it alone */
    _Atomic uint64_t written_atomic; /* direct: copy of written for
                              ** lock-free checks; stored (release) under
                              ** sync_mu */
    uint64_t synced;          /* logical offset known durable */
    _Atomic uint64_t synced_atomic; /* copy of synced for lock-free checks;
                              ** stored (release) under sync_mu */
    _Atomic int inbound;      /* sync writers whose records are not yet
                              ** appended (rv_wal_inbound); a hint */
    _Atomic uint32_t sync_gen;/* futex word: bumped (release) under sync_mu
                              ** when an fdatasync finishes or fails */
    int fsync_inflight;
    int fsync_watched;        /* a thread is waiting for the fsync's end
                              ** (wal_buffered.c's watcher) */
    _Atomic int gathering;    /* sync waiters waiting for inbound writers
                              ** (wal_buffered.c); a hint, relaxed */
    uint64_t fsync_target;    /* what the in-flight fsync covers */
    struct rv_wal_completion fsync_done;

    /* Statistics: relaxed atomics, read by ravel_property. */
    _Atomic uint64_t stat_bytes;
    _Atomic uint64_t stat_appends;
    _Atomic uint64_t stat_fsyncs;
    _Atomic uint64_t stat_sync_acks;
    _Atomic uint64_t stat_segments;
    _Atomic uint64_t stat_buffered;   /* pend_len's last value (manual) */
    _Atomic uint64_t stat_buffer_writes[WAL_FLUSH_CAUSES]; /* (manual) */
};

static inline void rv_wal_completion_reset(struct rv_wal_completion *c)
{
    atomic_store_explicit(&c->res, 0, memory_order_relaxed);
    atomic_store_explicit(&c->done, 0, memory_order_relaxed);
}

static inline void rv_wal_completion_set(struct rv_wal_completion *c, int res)
{
    atomic_store_explicit(&c->res, res, memory_order_relaxed);
    /* release: a waiter that sees done reads res */
    atomic_store_explicit(&c->done, 1, memory_order_release);
}

static inline int rv_wal_completion_is_done(const struct rv_wal_completion *c)
{
    /* acquire: pairs with rv_wal_completion_set */
    return atomic_load_explicit(&c->done, memory_order_acquire);
}

/* Whether an I/O failure has been recorded: nothing more may be appended
** or acknowledged as durable.  Read under sync_mu, where the WAL records
** its failures, or after the failure's wake-up. */
static inline int rv_wal_io_failed(rv_wal *w)
{
    return rv_stop_io_failed(w->stop);
}

/* Wakes every thread sleeping on sync_gen.  sync_mu held. */
RAVEL_PRIVATE void rv_wal_sync_wake_locked(rv_wal *w)
    RV_REQUIRES(w->sync_mu);

/* Records REASON (or the failure of WHAT with errno ERR) as an I/O
** failure and wakes every sync waiter.  sync_mu held. */
RAVEL_PRIVATE void rv_wal_fail_reason_locked(rv_wal *w, const char *reason)
    RV_REQUIRES(w->sync_mu);
RAVEL_PRIVATE void rv_wal_fail_locked(rv_wal *w, int err, const char *what)
    RV_REQUIRES(w->sync_mu);

/* Sets the calling thread's message from the recorded failure; returns
** its code. */
RAVEL_PRIVATE int rv_wal_failure_rc(rv_wal *w);

/* Marks an fdatasync covering TARGET as in flight: 1 if the caller must
** issue it, 0 if a fault hook already completed it as failed.  And
** applies its result once done.  sync_mu held. */
RAVEL_PRIVATE int rv_wal_fsync_begin_locked(rv_wal *w, uint64_t target)
    RV_REQUIRES(w->sync_mu);
RAVEL_PRIVATE void rv_wal_fsync_finished_locked(rv_wal *w)
    RV_REQUIRES(w->sync_mu);

#ifndef RAVEL_OMIT_IO_URING
/* Sets up the ring with ENTRIES entries (an eventfd signalled on
** asynchronous completions); 0, or -errno with *why set. */
RAVEL_PRIVATE int rv_wal_uring_setup(rv_wal *w, unsigned entries,
                                     const char **why);
/* Submits a write of LEN bytes from P at OFF whose completion carries
** DATA, with RW_FLAGS (RWF_DSYNC or 0), and an fdatasync linked behind it
** when LINK_SYNC (its completion goes to w->fsync_done; set to -ECANCELED
** if the pair could not be submitted).  0 or -errno. */
RAVEL_PRIVATE int rv_wal_uring_submit_write(rv_wal *w, const void *p,
                                            size_t len, uint64_t off,
                                            void *data, int rw_flags,
                                            int link_sync);
/* Submits an fdatasync whose completion goes to w->fsync_done. */
RAVEL_PRIVATE int rv_wal_uring_submit_fsync(rv_wal *w);
#endif

/* ---- the modes: each file's operations */

struct rv_wal_probe;

/* wal_buffered.c: wal_io=sync and uring (w->use_uring picks the call),
** without and with manual_wal_flush. */
RAVEL_PRIVATE const struct rv_wal_ops *rv_wal_buffered_ops(void);
RAVEL_PRIVATE const struct rv_wal_ops *rv_wal_manual_ops(void);

/* wal_buffered.c, for wal_io=auto's switches: makes everything appended
** to the current segment durable and trims it to its data, without
** starting another (the switch_segment operation's first half).  The
** leader, write_mu held; not with manual_wal_flush. */
RAVEL_PRIVATE int rv_wal_buffered_finish(rv_wal *w);

/* The mode an adaptive WAL (wal_auto.c) last moved to on its own, kept
** with the probe's result so that the next open starts in it. */
enum rv_wal_settled {
    RV_WAL_SETTLED_NONE,        /* never switched (or an older file) */
    RV_WAL_SETTLED_BUFFERED,
    RV_WAL_SETTLED_DIRECT,
};

#ifndef RAVEL_OMIT_IO_URING
/* wal_direct.c: wal_io=direct. */
RAVEL_PRIVATE const struct rv_wal_ops *rv_wal_direct_ops(void);

/* wal_direct.c, for wal_io=auto (wal_auto.c), which writes with the
** direct mode for some segments and a buffered mode for others:
**   prepare     at open: the direct mode's state and its spares' thread,
**               no segment (as the open operation, which also starts the
**               completion thread and segment NUMBER).
**   rv_wal_direct_want_spare, rv_wal_direct_spare_ready,
**   rv_wal_direct_drop_spare   ask for the spare of segment NUMBER, say
**               whether it is ready (taking it would not wait), give it
**               up.
**   enter       the leader, write_mu held, the buffered segment finished:
**               starts the completion thread and makes the spare of
**               segment NUMBER (after PREV_END) current.
**   leave       the leader, write_mu held: settles the writes in flight,
**               makes the segment durable, stops the completion thread
**               and drops the spare of segment NUMBER, so the buffered
**               mode can create it. */
RAVEL_PRIVATE int rv_wal_direct_prepare(rv_wal *w,
                                        const struct ravel_options *o,
                                        const struct rv_wal_setup *setup);
RAVEL_PRIVATE void rv_wal_direct_want_spare(rv_wal *w, uint64_t number);
RAVEL_PRIVATE void rv_wal_direct_drop_spare(rv_wal *w, uint64_t number);
RAVEL_PRIVATE int rv_wal_direct_spare_ready(rv_wal *w, uint64_t number);
RAVEL_PRIVATE int rv_wal_direct_enter(rv_wal *w, uint64_t number,
                                      uint64_t prev_end)
    RV_REQUIRES(w->write_mu);
RAVEL_PRIVATE int rv_wal_direct_leave(rv_wal *w, uint64_t number)
    RV_REQUIRES(w->write_mu);


/* wal_auto.c: wal_io=auto switching between a buffered mode (BUFFERED)
** and the direct one at segment switches; *SETUP as for direct, *PROBE
** the numbers the choice is made from, cached as measured at Unix time
** MEASURED (0: not cached), with SETTLED, the mode it starts in if not
** NONE (read from the cache: kept there again at close when this run
** settles on the other mode). */
RAVEL_PRIVATE const struct rv_wal_ops *rv_wal_auto_ops(void);
RAVEL_PRIVATE int rv_wal_auto_init(rv_wal *w, const struct ravel_options *o,
                                   const struct rv_wal_probe *probe,
                                   int dsync, enum rv_wal_io start,
                                   int64_t measured,
                                   enum rv_wal_settled settled);
/* The mode in force ("sync", "uring" or "direct") and, into WHY (SIZE
** bytes), since when and why; any thread. */
RAVEL_PRIVATE const char *rv_wal_auto_mode(rv_wal *w, char *why,
                                           size_t size);
#endif

/* ---- wal_choose.c: which mode */

/* Decides the mode as O asks (wal_io, manual_wal_flush,
** recycle_log_file_num), running the probe when it must and setting up
** the ring the mode needs: sets w->io, w->io_why, w->ops, and *SETUP for
** the mode's open.  RAVEL_INVALID or RAVEL_IOERR (message set) when the
** mode asked for cannot run here; the ring may be set up then, for the
** caller to tear down with the WAL. */
RAVEL_PRIVATE int rv_wal_choose(rv_wal *w, const struct ravel_options *o,
                                struct rv_wal_setup *setup);

/* ---- wal_probe.c: what wal_io=auto measures */

struct rv_wal_probe {
    int direct_ok;          /* O_DIRECT writes work in the directory */
    int uring_pays;         /* a buffered io_uring write costs no more than
                            ** pwrite (it completes inline: XFS, btrfs) */
    uint64_t direct_sync_ns;/* median direct RWF_DSYNC block write */
    uint64_t direct_ns;     /* median direct block write, no DSYNC */
    uint64_t direct_fsync_ns;/* median direct block write + fdatasync */
    uint64_t pwrite_sync_ns;/* median pwrite + fdatasync */
    uint64_t pwrite_ns;     /* median pwrite */
    uint32_t block;         /* the direct I/O block size */
    char fs[32];            /* the file system's name */
    char why_not_direct[160];
};

/* The file system holding DIR: its name into FS (SIZE bytes). */
RAVEL_PRIVATE void rv_wal_probe_fs(const char *dir, char *fs, size_t size);

/* The block size direct writes to FD must be aligned to (offset, length
** and memory), or 0 if FD refuses direct I/O. */
RAVEL_PRIVATE uint32_t rv_wal_direct_block(int fd);

/* Times direct and buffered synced writes in a scratch file in W's
** directory (the ring must be set up), filling *P. */
RAVEL_PRIVATE void rv_wal_probe_run(rv_wal *w, struct rv_wal_probe *p);

/* ---- wal_probe_cache.c: the probe's result kept beside the database */

/* 1 and *P (and *MEASURED, the Unix time it was measured, and *SETTLED)
** from DIR's probe cache when it is whole, keyed by DIR's file system and
** kernel as they are now and recent enough; 0 otherwise (measure
** again). */
RAVEL_PRIVATE int rv_wal_probe_cache_load(const char *dir,
                                          struct rv_wal_probe *p,
                                          int64_t *measured,
                                          enum rv_wal_settled *settled);
/* Writes *P, measured at Unix time MEASURED, and SETTLED as DIR's probe
** cache, crash-safely.  RAVEL_IOERR (message set) when it could not; the
** caller goes on without it. */
RAVEL_PRIVATE int rv_wal_probe_cache_store(const char *dir,
                                           const struct rv_wal_probe *p,
                                           int64_t measured,
                                           enum rv_wal_settled settled);

#endif /* RAVEL_WAL_WRITER_INT_H */
