/*
** wal_archive.h -- WAL retention for the change feed: flushed segments
** kept in DIR/archive/ instead of deleted, and purged there by age and
** total size (options wal_ttl_seconds, wal_size_limit_mb; RocksDB's
** WAL_ttl_seconds and WAL_size_limit_MB).
**
** Why a subdirectory: recovery deletes every segment of DIR below the
** manifest's log number (they are flushed), and replays the rest.  A
** segment moved to archive/ is out of its sight: an open neither replays
** it nor deletes it, and nothing in DIR changes meaning.  Only flushed
** segments are ever moved (by the flush that moved the log number past
** them, or by the open that finds them below it), so archive/ never holds
** a segment recovery needs, and purging it can never lose a write.
** The files keep their names and their bytes up to the data's end
** (wal_format.h; a wal_io=direct segment's preallocated tail is cut
** off as it is moved, wal_archive.c); the feed
** (db/updates.c) reads a segment from DIR or from archive/, wherever it
** is found.
**
** A segment's age is its file's modification time: when its last record
** was written.
*/
#ifndef RAVEL_WAL_ARCHIVE_H
#define RAVEL_WAL_ARCHIVE_H

#include "ravel_int.h"

/* What the archive holds, for ravel.stats and the feed's messages. */
struct rv_wal_archive_stats {
    uint64_t segments;      /* in archive/ now */
    uint64_t bytes;         /* their total size */
    uint64_t oldest;        /* the lowest segment number there (0: none) */
};

/* The path of archived segment NUMBER of DIR into BUF (RV_PATH_MAX
** bytes); RAVEL_INVALID when it would not fit. */
RAVEL_PRIVATE int rv_wal_archive_path(char *buf, const char *dir,
                                      uint64_t number);

/* Moves flushed segment NUMBER of DIR into DIR/archive/ (made if absent),
** keeping its name.  RAVEL_NOTFOUND if the segment is not in DIR;
** RAVEL_IOERR naming the path. */
RAVEL_PRIVATE int rv_wal_archive_segment(const char *dir, uint64_t number);

/* Deletes from DIR/archive/ the segments whose last write is more than
** TTL_SECONDS old (0: no age limit), then the oldest ones while the rest
** hold more than SIZE_LIMIT bytes (0: no size limit); both 0 (retention
** off, as a database may be reopened): every one.  *DELETED (may be
** NULL) counts the files deleted.  A missing archive/ is RAVEL_OK. */
RAVEL_PRIVATE int rv_wal_archive_purge(const char *dir, uint64_t ttl_seconds,
                                       uint64_t size_limit,
                                       uint64_t *deleted);

/* Fills *S with what DIR/archive/ holds now. */
RAVEL_PRIVATE int rv_wal_archive_stat(const char *dir,
                                      struct rv_wal_archive_stats *s);

#endif /* RAVEL_WAL_ARCHIVE_H */
