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
** Threads: rv_wal_reserve / rv_wal_append / rv_wal_switch_segment are
** called by one write-group leader at a time (the write group serialises
** them).  rv_wal_sync_to may be called by any number of threads at once.
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
#include "util/options.h"
#include "util/stop.h"

typedef struct rv_wal rv_wal;

struct rv_wal_stats {
    uint64_t bytes;         /* appended, record framing included */
    uint64_t appends;       /* group writes submitted */
    uint64_t fsyncs;        /* fdatasyncs issued (linked ones included) */
    uint64_t sync_acks;     /* sync requests satisfied */
    uint64_t segments;      /* segments created by this handle */
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

/* Fdatasyncs what was appended, seals the segment (a seal record, then
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

/* Leader only.  Writes the LEN reserved bytes at the end of the current
** segment, in one submission; when WANT_SYNC and no fdatasync is in
** flight, links one behind the write.  Returns once the write is complete
** (not necessarily durable) with *end = the logical offset after it.
** RAVEL_IOERR if the write fails, or if an I/O failure was recorded
** before; the WAL then refuses all later appends and syncs. */
RAVEL_PRIVATE int rv_wal_append(rv_wal *w, size_t len, int want_sync,
                                uint64_t *end);

/* Returns once an fdatasync that began after logical offset END was
** written has completed (issuing one if none is in flight), or
** RAVEL_IOERR once an I/O failure is recorded (a failed fdatasync is
** never retried as if nothing happened). */
RAVEL_PRIVATE int rv_wal_sync_to(rv_wal *w, uint64_t end);

/* Counts sync writers on their way to an append (DELTA > 0 when one
** starts, < 0 once its group's append is done or failed).
** A hint that lets a sync waiter wait for them before starting an
** fdatasync, so that one fdatasync covers more writers. */
RAVEL_PRIVATE void rv_wal_inbound(rv_wal *w, int delta);

/* Like rv_wal_sync_to for everything appended so far. */
RAVEL_PRIVATE int rv_wal_sync_all(rv_wal *w);

/* Leader only.  Makes the current segment durable, closes it, and starts
** segment NUMBER. */
RAVEL_PRIVATE int rv_wal_switch_segment(rv_wal *w, uint64_t number);

/* 1 if io_uring is in use; *why (static text) says why not otherwise. */
RAVEL_PRIVATE int rv_wal_uses_uring(const rv_wal *w, const char **why);

RAVEL_PRIVATE void rv_wal_get_stats(rv_wal *w, struct rv_wal_stats *s);

#endif /* RAVEL_WAL_WRITER_H */
