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
** files the manifest names).  Best effort: a segment left behind is
** deleted by the next open. */
RAVEL_PRIVATE void rv_db_delete_wal_segments(ravel_db *db, uint64_t from,
                                             uint64_t to);

#endif /* RAVEL_FLUSH_H */
