/*
** wal_tail.h -- reading one WAL segment while it may still be written:
** the change feed's reader (db/updates.c), beside the replay reader
** (wal_reader.h), which reads a log at rest.
**
** A live segment's end is where the writer is now: a record there may be
** half written, or (wal_io=direct) written out of order behind a skip
** record.  So the tail reader treats the first record that does not
** verify as the end of the data for now -- never as damage -- and
** returns only records whose checksum verifies (seeded with the segment
** number, wal_format.h), in file order, following skip records only where
** they name the exact offset the data before them ended at, as replay
** does.  A later call reads the file again from there.  A segment is
** found in DIR or, once archived, in DIR/archive/ (wal_archive.h); an
** open descriptor keeps reading it across the rename.
**
** The caller decides when a segment is over: when segment number + 1
** exists and its header's prev_end is the offset the tail reader
** stopped at (rv_wal_tail_prev_end).  Not thread-safe: one reader, one user.
*/
#ifndef RAVEL_WAL_TAIL_H
#define RAVEL_WAL_TAIL_H

#include "ravel_int.h"

struct rv_wal_tail {
    int fd;               /* the open segment, or -1 */
    uint64_t number;      /* its number */
    int version;          /* its header's version: 1, 2 or 3 */
    size_t header_size;
    uint32_t block;       /* version 3: its block size */
    uint64_t prev_end;    /* its header's prev_end (0: starts the log, or
                          ** version 1) */
    uint64_t off;         /* where the next record starts */
    int sealed;           /* the seal record was read: nothing follows */
    char *buf;            /* a window of the file: BUF_LEN bytes read at
                          ** BUF_AT (bytes past the data's end may be stale:
                          ** read again before they are trusted) */
    size_t buf_len, buf_cap;
    uint64_t buf_at;
};

/* Prepares T (no segment open). */
RAVEL_PRIVATE void rv_wal_tail_init(struct rv_wal_tail *t);
/* Closes the segment and frees the window. */
RAVEL_PRIVATE void rv_wal_tail_release(struct rv_wal_tail *t);

/* Opens segment NUMBER of DIR, looked for in DIR, then in DIR/archive/,
** and reads its header; positions at its first record.  RAVEL_NOTFOUND
** (no message) when the file is in neither place, or its header does not
** verify yet (a spare, or a header being written); RAVEL_CORRUPT if a
** verified header is not this segment's; RAVEL_IOERR. */
RAVEL_PRIVATE int rv_wal_tail_open(struct rv_wal_tail *t, const char *dir,
                                   uint64_t number);

/* Reads the next batch record: RAVEL_OK with *REP (its payload, a batch
** rep checked by rv_batch_validate; valid until the next call) and *LEN;
** RAVEL_NOTFOUND (no message) at the end of the verified data for now;
** RAVEL_CORRUPT if a record that verified is malformed; RAVEL_IOERR. */
RAVEL_PRIVATE int rv_wal_tail_next(struct rv_wal_tail *t, const char **rep,
                                   size_t *len);

/* Reads the header of segment NUMBER of DIR (in DIR or archive/) without
** keeping it open: *PREV_END (0 for version 1).  RAVEL_NOTFOUND (no
** message) as rv_wal_tail_open. */
RAVEL_PRIVATE int rv_wal_tail_prev_end(const char *dir, uint64_t number,
                                       uint64_t *prev_end);

#endif /* RAVEL_WAL_TAIL_H */
