/*
** wal_spare.h -- WAL segments made ready before they are needed
** (wal_io=direct).
**
** A spare is the file of the next segment, "wal-NNNNNNNN.log" under the
** number it will have, whose bytes are already on disk as zeros and whose
** directory entry is durable, but whose header is not written: its first
** write (wal_direct.c) writes the header with the first records.  Replay
** ignores a spare at the end of the log (wal_format.h).  A background
** thread prepares the spare for the next switch, so a switch never creates,
** zeroes or fsyncs a directory in a writer's path.
**
** Recycling (recycle_log_file_num): a flushed segment whose file is big
** enough is kept, under its old name, in a pool instead of being deleted.
** The next spare is then made from it instead of a new file: its first
** block is zeroed (and made durable) BEFORE it is renamed to the new
** number, so a crash in between never leaves a file whose header names
** another segment.  Its other blocks keep records of its earlier life;
** their tag and checksum tell them apart (wal_format.h).  The rest of the
** file is already allocated and written, so a write into it changes no
** metadata.
**
** Threads: rv_wal_spares_take and rv_wal_spares_request are called by
** one thread at a time (the WAL's leader); rv_wal_spares_recycle by any
** thread (a flush).
*/
#ifndef RAVEL_WAL_SPARE_H
#define RAVEL_WAL_SPARE_H

#include "ravel_int.h"

struct rv_wal_spares;

struct rv_wal_spare_stats {
    uint64_t created;       /* spares made from new files */
    uint64_t recycled;      /* spares made from flushed segments */
    uint64_t waits;         /* switches that waited for a spare */
    uint64_t pooled;        /* flushed segments kept for recycling now */
};

/* Starts the preparing thread for directory DIR: spares of SIZE bytes of
** zeros (0: empty files, wal_preallocate=false) written in blocks of
** BLOCK, keeping up to RECYCLE flushed segments for reuse. */
RAVEL_PRIVATE int rv_wal_spares_new(const char *dir, uint64_t size,
                                    uint32_t block, int recycle,
                                    struct rv_wal_spares **out);

/* Stops the thread; deletes a spare prepared and not taken.  NULL: no-op. */
RAVEL_PRIVATE void rv_wal_spares_free(struct rv_wal_spares *sp);

/* Asks the thread to prepare the spare for segment NUMBER. */
RAVEL_PRIVATE void rv_wal_spares_request(struct rv_wal_spares *sp,
                                         uint64_t number);

/* The spare for segment NUMBER, opened O_RDWR | O_DIRECT, into *FD:
** waits for the thread if it is preparing it, prepares it in the calling
** thread if nobody asked for it.  RAVEL_IOERR (message set) if it cannot
** be made. */
RAVEL_PRIVATE int rv_wal_spares_take(struct rv_wal_spares *sp,
                                     uint64_t number, int *fd);

/* 1 if the spare for segment NUMBER is prepared: taking it would not
** wait (wal_io=auto switches to direct only then). */
RAVEL_PRIVATE int rv_wal_spares_ready(struct rv_wal_spares *sp,
                                      uint64_t number);

/* Gives up the spare for segment NUMBER, asked for or prepared: its
** zeroing stopped, its file deleted, so another mode can create segment
** NUMBER (wal_io=auto leaving direct).  Waits for a preparation under
** way to stop. */
RAVEL_PRIVATE void rv_wal_spares_drop(struct rv_wal_spares *sp,
                                      uint64_t number);

/* Offers flushed segment NUMBER for recycling: 1 if the pool kept it
** (the caller must not delete it), 0 if the caller deletes it. */
RAVEL_PRIVATE int rv_wal_spares_recycle(struct rv_wal_spares *sp,
                                        uint64_t number);

RAVEL_PRIVATE void rv_wal_spares_stats(struct rv_wal_spares *sp,
                                       struct rv_wal_spare_stats *s);

#endif /* RAVEL_WAL_SPARE_H */
