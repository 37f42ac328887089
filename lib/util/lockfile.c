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

int rv_lockfile_acquire(const char *dir, int *fd_out)
{
    char path[RV_PATH_MAX];
    int rc = rv_path_join(path, dir, RV_FILE_LOCK);
    if (rc)
        return rc;
    int fd = rv_open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);

    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int err = errno;
        close(fd);
        if (err == EAGAIN || err == EACCES)
            return rv_error(RAVEL_LOCKED,
                            "database %s is already open (LOCK is held by "
                            "another handle, in this process or another)",
                            dir);
        return rv_error_errno(RAVEL_IOERR, err, "lock %s", path);
    }
    *fd_out = fd;
    return RAVEL_OK;
}

void rv_lockfile_release(int fd)
{
    if (fd >= 0)
        close(fd);
}
