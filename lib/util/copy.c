/*
** copy.c -- copying files crash-safely (copy.h): whole files copied or
** written and fdatasynced with their checksum computed on the way, and
** directories built under NAME.partial and renamed into place.
*/
#include "util/copy.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/sync_journal.h"

#include <xxhash.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_BUF (1u << 20)

int rv_copy_write_all(int fd, const void *data, size_t len, const char *what)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return rv_error_errno(RAVEL_IOERR, n < 0 ? errno : EIO,
                                  "write %s", what);
        p += n;
        len -= (size_t)n;
    }
    return RAVEL_OK;
}

/* read(2) of up to LEN bytes, retried on EINTR; -1 and errno on error. */
static ssize_t copy_read(int fd, char *buf, size_t len)
{
    for (;;) {
        ssize_t n = read(fd, buf, len);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}

/* Finishes a new file of SIZE bytes: fdatasync, close.  Removes it on
** failure. */
static int copy_finish(int fd, const char *path, uint64_t size, int rc)
{
    if (rc == RAVEL_OK && fdatasync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", path);
    if (rc == RAVEL_OK)
        rv_sync_journal_file(fd, size);
    if (close(fd) != 0 && rc == RAVEL_OK)
        rc = rv_error_errno(RAVEL_IOERR, errno, "close %s", path);
    if (rc)
        unlink(path);
    return rc;
}

/* pread(2) of up to LEN bytes at OFF, retried on EINTR. */
static ssize_t copy_pread(int fd, char *buf, size_t len, uint64_t off)
{
    for (;;) {
        ssize_t n = pread(fd, buf, len, (off_t)off);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}

int rv_copy_file(const char *src, const char *dst, uint64_t size,
                 uint64_t *checksum)
{
    int in = rv_open(src, O_RDONLY, 0);
    if (in < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", src);
    int rc = rv_copy_fd(in, src, dst, size, checksum);
    close(in);
    return rc;
}

int rv_copy_fd(int in, const char *src, const char *dst, uint64_t size,
               uint64_t *checksum)
{
    int out = rv_open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (out < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", dst);
    char *buf = malloc(COPY_BUF);
    XXH3_state_t *st = XXH3_createState();
    int rc = buf && st ? RAVEL_OK
                       : rv_error(RAVEL_NOMEM, "out of memory copying %s",
                                  src);
    if (st)
        XXH3_64bits_reset(st);
    uint64_t left = size;
    while (rc == RAVEL_OK && left > 0) {
        size_t want = left < COPY_BUF ? (size_t)left : COPY_BUF;
        ssize_t n = copy_pread(in, buf, want, size - left);
        if (n < 0) {
            rc = rv_error_errno(RAVEL_IOERR, errno, "read %s", src);
        } else if (n == 0) {
            rc = rv_error(RAVEL_CORRUPT, "%s: %llu bytes expected, the file "
                          "ends %llu bytes short", src,
                          (unsigned long long)size,
                          (unsigned long long)left);
        } else {
            XXH3_64bits_update(st, buf, (size_t)n);
            rc = rv_copy_write_all(out, buf, (size_t)n, dst);
            left -= (uint64_t)n;
        }
    }
    if (rc == RAVEL_OK && checksum)
        *checksum = XXH3_64bits_digest(st);
    free(buf);
    if (st)
        XXH3_freeState(st);
    return copy_finish(out, dst, size, rc);
}

int rv_copy_write_file(const char *path, const void *data, size_t len)
{
    int fd = rv_open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", path);
    return copy_finish(fd, path, len,
                       rv_copy_write_all(fd, data, len, path));
}

int rv_copy_checksum_file(const char *path, uint64_t *size,
                          uint64_t *checksum)
{
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);
    char *buf = malloc(COPY_BUF);
    XXH3_state_t *st = XXH3_createState();
    int rc = buf && st ? RAVEL_OK
                       : rv_error(RAVEL_NOMEM, "out of memory reading %s",
                                  path);
    if (st)
        XXH3_64bits_reset(st);
    uint64_t total = 0;
    while (rc == RAVEL_OK) {
        ssize_t n = copy_read(fd, buf, COPY_BUF);
        if (n < 0)
            rc = rv_error_errno(RAVEL_IOERR, errno, "read %s", path);
        if (n <= 0)
            break;
        XXH3_64bits_update(st, buf, (size_t)n);
        total += (uint64_t)n;
    }
    if (rc == RAVEL_OK) {
        *size = total;
        *checksum = XXH3_64bits_digest(st);
    }
    free(buf);
    if (st)
        XXH3_freeState(st);
    close(fd);
    return rc;
}

void rv_copy_remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[RV_PATH_MAX];
            if (rv_path_join(p, path, e->d_name) == 0)
                unlink(p);
        }
        closedir(d);
    }
    rmdir(path);
}

int rv_copy_sync_parent(const char *path)
{
    char parent[RV_PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof parent)
        return rv_error(RAVEL_INVALID, "path too long: %s", path);
    memcpy(parent, path, len + 1);
    while (len > 1 && parent[len - 1] == '/')
        parent[--len] = '\0';
    char *slash = strrchr(parent, '/');
    if (!slash)
        strcpy(parent, ".");
    else if (slash == parent)
        parent[1] = '\0';
    else
        *slash = '\0';
    return rv_sync_dir(parent);
}

/* DIR without its trailing slashes ("cp/" is "cp") into OUT. */
static int copy_dir_name(char *out, const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (len >= RV_PATH_MAX)
        return rv_error(RAVEL_INVALID, "path too long: %s", dir);
    memcpy(out, dir, len);
    out[len] = '\0';
    return RAVEL_OK;
}

int rv_copy_dir_begin(const char *target, char *partial)
{
    struct stat st;
    if (!target || !*target)
        return rv_error(RAVEL_INVALID, "the target directory name is empty "
                        "or NULL");
    char dir[RV_PATH_MAX];
    int rc = copy_dir_name(dir, target);
    if (rc)
        return rc;
    if (lstat(dir, &st) == 0)
        return rv_error(RAVEL_INVALID, "%s already exists: the target must "
                        "be a new directory", dir);
    if (errno != ENOENT)
        return rv_error_errno(RAVEL_IOERR, errno, "stat %s", dir);
    if ((size_t)snprintf(partial, RV_PATH_MAX, "%s.partial", dir) >=
        RV_PATH_MAX)
        return rv_error(RAVEL_INVALID, "path too long: %s", dir);
    char marker[RV_PATH_MAX];
    rc = rv_path_join(marker, partial, RV_COPY_PARTIAL_MARKER);
    if (rc)
        return rc;
    if (lstat(partial, &st) == 0) {
        if (lstat(marker, &st) != 0)
            return rv_error(RAVEL_INVALID, "%s exists and was not made by "
                            "ravel (no %s in it); remove it", partial,
                            RV_COPY_PARTIAL_MARKER);
        rv_copy_remove_dir(partial); /* left by a crash: ours, unfinished */
    }
    if (mkdir(partial, 0755) != 0)
        return rv_error_errno(RAVEL_IOERR, errno, "mkdir %s", partial);
    return rv_copy_write_file(marker, "", 0);
}

int rv_copy_dir_commit(const char *partial, const char *target)
{
    char marker[RV_PATH_MAX], dir[RV_PATH_MAX];
    int rc = copy_dir_name(dir, target);
    if (rc == RAVEL_OK)
        rc = rv_path_join(marker, partial, RV_COPY_PARTIAL_MARKER);
    if (rc == RAVEL_OK && unlink(marker) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "unlink %s", marker);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(partial);
    if (rc == RAVEL_OK && rename(partial, dir) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "rename %s to %s", partial,
                            dir);
    if (rc == RAVEL_OK)
        rc = rv_copy_sync_parent(dir);
    if (rc == RAVEL_OK) /* its entries, under the name they now have */
        rc = rv_sync_dir(dir);
    return rc;
}
