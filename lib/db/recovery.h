/*
** recovery.h -- opening a database's state (recovery.c): the manifest,
** the WAL replay, a new manifest, the files proved obsolete.
*/
#ifndef RAVEL_RECOVERY_H
#define RAVEL_RECOVERY_H

#include "ravel_int.h"

/* Reads the manifest and replays the WAL segments it does not cover
** into the active memtable; then, unless read-only, starts a new manifest
** and deletes obsolete files (recovery.c). */
RAVEL_PRIVATE int rv_db_recover(ravel_db *db);

#endif /* RAVEL_RECOVERY_H */
