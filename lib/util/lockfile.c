/*
** lockfile.c -- the LOCK file (see lockfile.h).  The file's contents are
** unused; only the lock on it matters.
*/
#include "util/lockfile.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* F_OFD_SETLK of TYPE (F_WRLCK, F_UNLCK) over the whole of FD. */
static int lockfile_set(int fd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, F_OFD_SETLK, &fl);
}

int rv_lockfile_acquire(const char *dir, struct rv_lockfile *lock)
{
    char path[RV_PATH_MAX];
    int rc = rv_path_join(path, dir, RV_FILE_LOCK);
    if (rc)
        return rc;
    /* rv_open adds O_CLOEXEC: a child that execs does not keep the lock */
    int fd = rv_open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);
    if (lockfile_set(fd, F_WRLCK) != 0) {
        int err = errno;
        close(fd);
        if (err == EAGAIN || err == EACCES)
            return rv_error(RAVEL_LOCKED,
                            "database %s is already open: its LOCK is held "
                            "by another handle, in this process or another, "
                            "or by a child forked from a process that had it "
                            "open and ended without ravel_close (the child "
                            "holds it until it exits or execs)", dir);
        return rv_error_errno(RAVEL_IOERR, err, "lock %s", path);
    }
    lock->fd = fd;
    lock->owner = getpid();
    return RAVEL_OK;
}

void rv_lockfile_release(struct rv_lockfile *lock)
{
    if (lock->fd < 0)
        return;
    /* close() alone drops the lock only when no other process shares the
    ** description: a child forked while the database was open would keep
    ** it, and the next open here would be RAVEL_LOCKED.  Unlocking
    ** releases it for all who share it.  A forked child must not: the
    ** database is still open in its parent.  If the unlock fails, close
    ** still drops the lock when no child shares it. */
    if (getpid() == lock->owner)
        (void)lockfile_set(lock->fd, F_UNLCK);
    close(lock->fd);
    lock->fd = -1;
}
