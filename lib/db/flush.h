/*
** flush.h -- writing immutable memtables to table files (flush.c), waiting
** for that (ravel_flush), and deleting the WAL segments a flush made
** obsolete.
*/
#ifndef RAVEL_FLUSH_H
#define RAVEL_FLUSH_H

#include "ravel_int.h"
#include "util/mutex.h"

/* ravel_flush without the gate: close calls it. */
RAVEL_PRIVATE int rv_db_flush(ravel_db *db, int flags);
/* Deletes WAL segments FROM .. TO-1 (flushed: their data is in table
** files the manifest names), or with WAL retention moves them to
** archive/ and purges it (wal/wal_archive.h).  Best effort: a segment
** left behind is deleted (or archived) by the next open. */
/* 1 if the options keep flushed WAL segments for the change feed
** (wal_ttl_seconds or wal_size_limit_mb). */
RAVEL_PRIVATE int rv_db_wal_retained(const ravel_db *db);
/* Deletes from archive/ what the retention options no longer keep; a
** failure is only logged. */
RAVEL_PRIVATE void rv_db_purge_wal_archive(ravel_db *db);
RAVEL_PRIVATE void rv_db_delete_wal_segments(ravel_db *db, uint64_t from,
                                             uint64_t to);

#endif /* RAVEL_FLUSH_H */
