/*
** lockfile.h -- the LOCK file that keeps a database directory open in one
** place at a time.
**
** The lock is an open-file-description lock (F_OFD_SETLK): it belongs to
** the open file, not to the process, so a second open of the same
** directory from this process is refused as well as one from another
** process, and an unrelated close() of the LOCK file elsewhere in the
** process does not drop it (as it would with POSIX record locks).
**
** The open file description is also what a fork shares: a child forked
** while the database is open holds the lock with the parent.  The LOCK is
** opened close-on-exec, so a child that execs lets go of it; one that does
** not holds it until it exits, unless the process that took the lock
** releases it explicitly (rv_lockfile_release), which it does for every
** process sharing the description.
*/
#ifndef RAVEL_LOCKFILE_H
#define RAVEL_LOCKFILE_H

#include "ravel_int.h"

#include <sys/types.h>

/* The LOCK file of an open database. */
struct rv_lockfile {
    int fd;      /* the locked LOCK file, -1 when not held */
    pid_t owner; /* the process that took the lock (not a forked child) */
};

/* Creates DIR/LOCK if needed and locks it into *LOCK.  RAVEL_LOCKED if the
** directory is open elsewhere (or still held by a child forked from a
** process that had it open), RAVEL_IOERR otherwise. */
RAVEL_PRIVATE int rv_lockfile_acquire(const char *dir,
                                      struct rv_lockfile *lock);

/* Releases the lock, for the children forked since it was taken too, if
** called by the process that took it; closes the file.  A struct with fd
** -1 is a no-op. */
RAVEL_PRIVATE void rv_lockfile_release(struct rv_lockfile *lock);

#endif /* RAVEL_LOCKFILE_H */
