/*
** file.c -- opening the files of a database (see file.h).
*/
#include "util/file.h"
#include "util/error.h"
#include "util/sync_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int rv_open(const char *path, int flags, int mode)
{
    int fd = open(path, flags | O_CLOEXEC, mode);
    if (fd < 0 || fd > 2)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(fd);
    errno = err;
    return moved;
}

int rv_sync_dir(const char *dir)
{
    int fd = rv_open(dir, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open directory %s", dir);
    int rc = RAVEL_OK;
    if (fsync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fsync directory %s", dir);
    else
        rv_sync_journal_dir(dir);
    close(fd);
    return rc;
}
