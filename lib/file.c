/*
** file.c -- opening the files of a database (see file.h).
*/
#include "file.h"

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
