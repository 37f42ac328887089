/*
** file.c -- opening the files of a database (see file.h).
*/
#include "util/file.h"
#include "util/error.h"
#include "util/filename.h"
#include "util/sync_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

/* Puts /dev/null on FD (0, 1 or 2) in place of what is there, in one
** step (dup2), so the slot never falls free for another thread's open;
** closes FD if /dev/null cannot be opened. */
static void fd_park_on_dev_null(int fd)
{
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) {
        close(fd);
        return;
    }
    /* NULL may itself land on another of 0-2 (the lowest free slot):
    ** then it stays there and parks that slot too */
    if (dup2(null, fd) < 0)
        close(fd);
    if (null > 2)
        close(null);
}

int rv_fd_above_stdio(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    fd_park_on_dev_null(fd);
    errno = err;
    return moved;
}

int rv_open(const char *path, int flags, int mode)
{
    return rv_fd_above_stdio(open(path, flags | O_CLOEXEC, mode));
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

int rv_read_file(const char *path, char **data, size_t *len, int *open_errno)
{
    *data = NULL;
    *len = 0;
    if (open_errno)
        *open_errno = 0;
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0) {
        if (open_errno)
            *open_errno = errno;
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);
    }
    struct stat st;
    char *buf = NULL;
    int rc = RAVEL_OK;
    if (fstat(fd, &st) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "stat %s", path);
    else if (!(buf = malloc((size_t)st.st_size + 1)))
        rc = rv_error(RAVEL_NOMEM, "out of memory reading %s", path);
    size_t got = 0;
    while (!rc && got < (size_t)st.st_size) {
        ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got,
                          (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            rc = rv_error_errno(RAVEL_IOERR, n < 0 ? errno : EIO, "read %s",
                                path);
        else
            got += (size_t)n;
    }
    close(fd);
    if (rc) {
        free(buf);
        return rc;
    }
    *data = buf;
    *len = got;
    return RAVEL_OK;
}

int rv_replace_file(const char *dir, const char *name, const char *data,
                    size_t len)
{
    struct rv_file_part part = {data, len};
    return rv_replace_file_parts(dir, name, &part, 1);
}

/* Writes the LEN bytes of DATA to FD (TMP names it in the message). */
static int file_write_all(int fd, const char *tmp, const char *data,
                          size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return rv_error_errno(RAVEL_IOERR, n < 0 ? errno : EIO,
                                  "write %s", tmp);
        done += (size_t)n;
    }
    return RAVEL_OK;
}

int rv_replace_file_parts(const char *dir, const char *name,
                          const struct rv_file_part *parts, int nparts)
{
    char tmp_name[256], tmp[RV_PATH_MAX], path[RV_PATH_MAX];
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp", name);
    int rc = rv_path_join(tmp, dir, tmp_name);
    if (rc == RAVEL_OK)
        rc = rv_path_join(path, dir, name);
    if (rc)
        return rc;
    /* Whatever is at TMP (a crash's leftover, or a symlink or FIFO put
    ** there) is removed, not opened: O_TRUNC would write through a
    ** symlink into its target, or block on a FIFO with no reader. */
    unlink(tmp);
    int fd = rv_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", tmp);
    size_t len = 0;
    for (int i = 0; rc == RAVEL_OK && i < nparts; i++) {
        rc = file_write_all(fd, tmp, parts[i].data, parts[i].len);
        len += parts[i].len;
    }
    if (rc == RAVEL_OK && fsync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fsync %s", tmp);
    if (rc == RAVEL_OK)
        rv_sync_journal_file(fd, len);
    close(fd);
    if (rc == RAVEL_OK && rename(tmp, path) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "rename %s to %s", tmp, path);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(dir);
    if (rc)
        unlink(tmp);
    return rc;
}
