/*
** wal_reader.h -- replays WAL segments on open, under one of the four
** recovery modes (base/options.h, rv_recovery_mode).
**
** What replay can find (wal_reader.c's top comment has the reasoning,
** docs/formats.md the full rules):
**   clean end     EOF at a record boundary, or a zero record header
**                 followed only by zero bytes up to EOF; a seal record ends
**                 a segment closed cleanly.
**   torn tail     in the LAST segment, a bad record or header with only
**                 zero bytes after it: a write cut short by a crash.
**   unsynced tail in the last segment, if it is not sealed, a record that
**                 fails its checksum or length, whatever follows it: what a
**                 power loss leaves of pages no fdatasync covered.
**   hole          a segment missing from the numbering, or one whose data
**                 does not end where the next segment's header says.
**   corruption    anything else.
**
** Modes:
**   tolerate_corrupted_tail_records  torn and unsynced tails dropped (the
**                 segment truncated there unless read-only); holes and
**                 corruption -> RAVEL_CORRUPT.
**   absolute_consistency  any of them -> RAVEL_CORRUPT.
**   point_in_time  replay stops at the first tail or corruption; the
**                 segment is truncated there and later segments deleted
**                 (unless read-only), so the state is a consistent prefix.
**                 A hole -> RAVEL_CORRUPT.
**   skip_any_corrupted_records  bad records are skipped (resynchronising
**                 on the next 8-byte offset where a record verifies) and
**                 holes passed over; a torn tail is truncated.
**
** Every RAVEL_CORRUPT message names the file and the byte offset.
*/
#ifndef RAVEL_WAL_READER_H
#define RAVEL_WAL_READER_H

#include "ravel_int.h"
#include "base/options.h"

/* Called for every good batch record in WAL order with its payload (a
** batch rep, already structurally validated).  Non-zero return stops the
** replay and is returned. */
typedef int (*rv_wal_replay_fn)(void *ctx, const char *rep, size_t len);

struct rv_wal_replay_result {
    uint64_t records;        /* batch records replayed */
    uint64_t records_dropped;/* skipped, or cut away with a tail */
    uint64_t bytes_truncated;/* tail bytes cut off */
    uint64_t holes;          /* holes passed over (skip mode only) */
    uint64_t spares;         /* spare segments at the end, never started
                             ** (wal_format.h): ignored, left in place */
    uint64_t spare_from;     /* the lowest of them (0 if none): the caller
                             ** deletes spare_from and the segments above */
    uint64_t highest_segment;/* highest segment number listed (0 if none) */
    uint64_t last_segment;   /* the last segment kept (0 if none): the next
                             ** one must be last_segment + 1 ... */
    uint64_t last_end;       /* ... with prev_end = last_end, where its data
                             ** ends (wal_format.h) */
    uint64_t max_sequence;   /* last sequence number replayed (0 if none) */
    int last_sealed;         /* the last segment kept ends with its seal
                             ** (ravel closed it cleanly), uncut */
};

/* Replays the segments listed in NUMBERS (ascending, N of them) of
** directory DIR.  FIRST_NUMBER, when not 0, is the segment the log starts
** at because the ones before it were flushed and deleted (the manifest's
** log number): the list must begin there, and its header may name a
** predecessor.  READ_ONLY: never modify files (and read them into a copy
** rather than map them: a live writer may trim them).  Fills *result. */
RAVEL_PRIVATE int rv_wal_replay(const char *dir, uint64_t first_number,
                                const uint64_t *numbers,
                                int n, enum rv_recovery_mode mode,
                                int read_only, rv_wal_replay_fn fn,
                                void *ctx, struct rv_wal_replay_result *result);

/* A reader's tail (db/reader.c): replays, read-only, the segments
** NUMBERS (ascending, N of them) of DIR, the first from byte OFFSET on --
** where an earlier replay of it ended, its data before OFFSET already
** replayed, up to sequence LAST_SEQ, which the sequences replayed now
** must follow.  The segments may belong to a live writer: they are read
** into a copy, never mapped (a writer trims a finished segment), and a
** record being written ends the walk as a torn tail does. */
RAVEL_PRIVATE int rv_wal_replay_tail(const char *dir, const uint64_t *numbers,
                                     int n, enum rv_recovery_mode mode,
                                     uint64_t offset, uint64_t last_seq,
                                     rv_wal_replay_fn fn, void *ctx,
                                     struct rv_wal_replay_result *result);

#endif /* RAVEL_WAL_READER_H */
