/*
** lockfile.h -- the LOCK file that keeps a database directory open in one
** place at a time.
**
** The lock is an open-file-description lock (F_OFD_SETLK): it belongs to
** the open file, not to the process, so a second open of the same
** directory from this process is refused as well as one from another
** process, and an unrelated close() of the LOCK file elsewhere in the
** process does not drop it (as it would with POSIX record locks).
*/
#ifndef RAVEL_LOCKFILE_H
#define RAVEL_LOCKFILE_H

#include "ravel_int.h"

/* Creates DIR/LOCK if needed and locks it; *fd is the open file.
** RAVEL_LOCKED if the directory is open elsewhere, RAVEL_IOERR otherwise. */
RAVEL_PRIVATE int rv_lockfile_acquire(const char *dir, int *fd);

/* Releases the lock (closing FD drops it). */
RAVEL_PRIVATE void rv_lockfile_release(int fd);

#endif /* RAVEL_LOCKFILE_H */
