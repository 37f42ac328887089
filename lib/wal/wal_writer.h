/*
** wal_writer.h -- appends write groups to the WAL and makes them durable.
**
** Owns: the current segment file, the io_uring ring (or the pwrite
** fallback), and the batched-fsync state.  Does not own: record encoding
** (wal_format.h), grouping writers (write_group.c), replay (wal_reader.c).
**
** Offsets are logical: bytes appended since the WAL was opened, across
** segments, so they only grow and a sync waiter can compare them.
**
** manual_wal_flush: rv_wal_append adds the records to the WAL's own
** buffer (1 MiB) instead of writing them; they reach the file when the
** buffer is full, when the group has a sync member, when a sync waiter
** needs them (rv_wal_sync_to), on rv_wal_flush, and before a segment is
** finished (rv_wal_switch_segment, rv_wal_close).  Offsets stay logical:
** END from rv_wal_append counts buffered bytes too.
**
** Threads: rv_wal_reserve / rv_wal_append / rv_wal_switch_segment are
** called by one write-group leader at a time (the write group serialises
** them).  rv_wal_sync_to and rv_wal_flush may be called by any number of
** threads at once.
**
** Failures: a failed write or fdatasync is recorded as an I/O failure in
** the database's rv_stop (util/stop.h), passed to rv_wal_open; the WAL
** keeps no failure state of its own.  Once an I/O failure is recorded,
** every append and sync returns RAVEL_IOERR with the recorded reason,
** and nothing written after the failure is ever reported durable.
*/
#ifndef RAVEL_WAL_WRITER_H
#define RAVEL_WAL_WRITER_H

#include "ravel_int.h"
#include "base/options.h"
#include "util/stop.h"

typedef struct rv_wal rv_wal;

struct rv_wal_stats {
    uint64_t bytes;         /* appended, record framing included */
    uint64_t appends;       /* group writes submitted */
    uint64_t fsyncs;        /* fdatasyncs issued (linked ones included) */
    uint64_t sync_acks;     /* sync requests satisfied */
    uint64_t segments;      /* segments created by this handle */
    /* manual_wal_flush's buffer */
    int manual;             /* the option is on */
    uint64_t buffered;      /* bytes in the buffer now */
    uint64_t writes_full;   /* buffer writes because a group did not fit */
    uint64_t writes_sync;   /* ... for a sync writer or sync waiter */
    uint64_t writes_flush_wal; /* ... by rv_wal_flush (ravel_flush_wal) */
    uint64_t writes_segment_end; /* ... before a segment switch or close */
    /* wal_io=direct (wal_direct.c) */
    int direct;             /* the mode is in force */
    uint32_t block;         /* direct I/O block size */
    int dsync;              /* sync groups are written with RWF_DSYNC */
    uint64_t dsync_writes;  /* writes that carried RWF_DSYNC */
    uint64_t skips;         /* writes that began at the next block because
                            ** the tail's block was in flight */
    uint64_t skip_bytes;    /* bytes those skipped, skip records included */
    uint64_t max_inflight;  /* most group writes in flight at once */
    uint64_t slot_waits;    /* leaders that waited for a free write slot */
    uint64_t spares_created;/* segments prepared from new files */
    uint64_t spares_recycled;/* ... from flushed segments */
    uint64_t spare_waits;   /* switches that waited for the spare */
    uint64_t pooled;        /* flushed segments kept for recycling now */
};

/* Opens the WAL in DIR, creating segment NUMBER (which must not exist)
** after a segment whose data ended at PREV_END (0: NUMBER starts the
** log; see wal_format.h).  Sets up io_uring as options->wal_io asks.  The
** segment header and the directory entry are durable before it returns.
** STOP (owned by the caller, outliving the WAL) receives the WAL's I/O
** failures. */
RAVEL_PRIVATE int rv_wal_open(const char *dir, uint64_t number,
                              uint64_t prev_end,
                              const struct ravel_options *options,
                              struct rv_stop *stop, rv_wal **out);

/* Writes the buffered records (manual_wal_flush), fdatasyncs what was
** appended, seals the segment (a seal record, then
** another fdatasync: wal_format.h), then closes.  RAVEL_IOERR if either
** fails; after an I/O failure already recorded (and so reported to a
** writer) it syncs and seals nothing and reports nothing.  NULL is a
** no-op. */
RAVEL_PRIVATE int rv_wal_close(rv_wal *w);

/* Leader only.  A buffer of at least LEN bytes to encode the group's
** records into (valid until the next rv_wal_append); NULL on OOM. */
RAVEL_PRIVATE char *rv_wal_reserve(rv_wal *w, size_t len);

/* The segment number records must be sealed with (rv_wal_seal_record). */
RAVEL_PRIVATE uint64_t rv_wal_segment_number(const rv_wal *w);

/* Leader only.  1 if a record was appended to the current segment (a
** checkpoint then switches segments even when the memtable is empty: a
** prepare or rollback record is in no memtable). */
RAVEL_PRIVATE int rv_wal_segment_has_records(const rv_wal *w);

/* The tag records of the current segment carry (rv_wal_seal_tagged):
** 0, or the segment number's low 24 bits in version 3 (wal_io=direct). */
RAVEL_PRIVATE uint32_t rv_wal_segment_tag(const rv_wal *w);

/* Leader only.  Writes the LEN reserved bytes at the end of the current
** segment, in one submission; when WANT_SYNC and no fdatasync is in
** flight, links one behind the write.  Returns once the write is complete
** (not necessarily durable) with *end = the logical offset after it.
** wal_io=direct: returns once the write is SUBMITTED (several may be in
** flight); a writer waits for its completion with rv_wal_wait_written or
** rv_wal_sync_to, and a write that fails is reported there.
** With manual_wal_flush, copies them into the buffer instead, writing the
** buffer (one submission) first if they do not fit, and after them if
** WANT_SYNC.  RAVEL_IOERR if a write fails, or if an I/O failure was
** recorded before; the WAL then refuses all later appends and syncs. */
RAVEL_PRIVATE int rv_wal_append(rv_wal *w, size_t len, int want_sync,
                                uint64_t *end);

/* Returns once an fdatasync that began after logical offset END was
** written has completed (issuing one if none is in flight), or
** RAVEL_IOERR once an I/O failure is recorded (a failed fdatasync is
** never retried as if nothing happened). */
RAVEL_PRIVATE int rv_wal_sync_to(rv_wal *w, uint64_t end);

/* Returns once everything up to logical offset END is written to the
** file (a kill -9 cannot lose it), or RAVEL_IOERR if a write at or before
** END failed.  Only wal_io=direct has writes in flight when rv_wal_append
** returns; the other modes return at once.  Any thread. */
RAVEL_PRIVATE int rv_wal_wait_written(rv_wal *w, uint64_t end);

/* Counts sync writers on their way to an append (DELTA > 0 when one
** starts, < 0 once its group's append is done or failed).
** A hint that lets a sync waiter wait for them before starting an
** fdatasync, so that one fdatasync covers more writers. */
RAVEL_PRIVATE void rv_wal_inbound(rv_wal *w, int delta);

/* With manual_wal_flush, writes the buffered records to the segment file
** (the operating system then has them: they survive a process crash);
** otherwise there is nothing to write.  Any thread.  RAVEL_IOERR if the
** write fails (recorded: the WAL refuses everything afterwards) or failed
** before. */
RAVEL_PRIVATE int rv_wal_flush(rv_wal *w);

/* Like rv_wal_sync_to for everything appended so far (buffered records
** included: rv_wal_flush first). */
RAVEL_PRIVATE int rv_wal_sync_all(rv_wal *w);

/* Leader only.  Writes the buffered records (manual_wal_flush), makes the
** current segment durable, closes it, and starts segment NUMBER. */
RAVEL_PRIVATE int rv_wal_switch_segment(rv_wal *w, uint64_t number);

/* The mode in force, "sync", "uring" or "direct"; WHY (SIZE bytes, at
** least RV_WAL_IO_WHY_MAX to hold it all) gets why it was chosen and,
** under wal_io=auto, since when it is in force.  Any thread. */
#define RV_WAL_IO_WHY_MAX 1400
RAVEL_PRIVATE const char *rv_wal_io_mode(rv_wal *w, char *why, size_t size);

/* Offers flushed segment NUMBER for reuse (recycle_log_file_num,
** wal_io=direct): 1 if the WAL keeps the file, 0 if the caller deletes
** it.  Any thread. */
RAVEL_PRIVATE int rv_wal_recycle(rv_wal *w, uint64_t number);

RAVEL_PRIVATE void rv_wal_get_stats(rv_wal *w, struct rv_wal_stats *s);

#endif /* RAVEL_WAL_WRITER_H */
