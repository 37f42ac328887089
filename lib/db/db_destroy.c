/*
** db_destroy.c -- ravel_destroy: deleting a database directory, as
** RocksDB's DestroyDB does.
**
** The database's LOCK is taken first, so an open database -- in this
** process or another -- is never deleted under its owner (RAVEL_LOCKED,
** nothing removed).  Then the files ravel makes (rv_is_database_file_name:
** CURRENT, IDENTITY, LOG, manifests, WAL segments, table files, their
** .tmp files, lost/ and archive/ and what they hold) are removed, the LOCK last, while
** still held; files of other names stay, and so does the directory if any
** is left.
*/
#include "db/db.h"
#include "util/error.h"
#include "util/filename.h"
#include "util/lockfile.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes the file or the directory lost/ or archive/ (with what it
** holds) NAME of DIR. */
static int destroy_entry(const char *dir, const char *name)
{
    char path[RV_PATH_MAX];
    int rc = rv_path_join(path, dir, name);
    if (rc)
        return rc;
    if (strcmp(name, RV_DIR_LOST) == 0 ||
        strcmp(name, RV_DIR_ARCHIVE) == 0) {
        DIR *d = opendir(path);
        if (!d && errno != ENOTDIR)
            return rv_error_errno(RAVEL_IOERR, errno, "ravel_destroy: "
                                  "opendir %s", path);
        struct dirent *e;
        while (d && rc == RAVEL_OK && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char inner[RV_PATH_MAX];
            rc = rv_path_join(inner, path, e->d_name);
            if (rc == RAVEL_OK && unlink(inner) != 0)
                rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_destroy: "
                                    "unlink %s", inner);
        }
        if (d) {
            closedir(d);
            if (rc == RAVEL_OK && rmdir(path) != 0)
                rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_destroy: "
                                    "rmdir %s", path);
            return rc;
        }
    }
    if (unlink(path) != 0 && errno != ENOENT)
        return rv_error_errno(RAVEL_IOERR, errno, "ravel_destroy: unlink %s",
                              path);
    return RAVEL_OK;
}

/* Removes every entry of DIR with one of ravel's names but the LOCK. */
static int destroy_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return rv_error_errno(RAVEL_IOERR, errno, "ravel_destroy: opendir %s",
                              dir);
    int rc = RAVEL_OK;
    struct dirent *e;
    while (rc == RAVEL_OK && (e = readdir(d)) != NULL)
        if (rv_is_database_file_name(e->d_name) &&
            strcmp(e->d_name, RV_FILE_LOCK) != 0)
            rc = destroy_entry(dir, e->d_name);
    closedir(d);
    return rc;
}

int ravel_destroy(const char *dir)
{
    if (!dir || !*dir)
        return rv_error(RAVEL_INVALID, "ravel_destroy: directory name is "
                        "empty or NULL");
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            return RAVEL_OK; /* nothing to delete */
        return rv_error_errno(RAVEL_IOERR, errno, "ravel_destroy: stat %s",
                              dir);
    }
    if (!S_ISDIR(st.st_mode))
        return rv_error(RAVEL_INVALID, "ravel_destroy: %s is not a "
                        "directory", dir);
    struct rv_lockfile lock;
    int rc = rv_lockfile_acquire(dir, &lock);
    if (rc)
        return rc;
    rc = destroy_files(dir);
    if (rc == RAVEL_OK)
        rc = destroy_entry(dir, RV_FILE_LOCK); /* still held: last */
    rv_lockfile_release(&lock);
    if (rc == RAVEL_OK && rmdir(dir) != 0 && errno != ENOTEMPTY &&
        errno != EEXIST)
        rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_destroy: rmdir %s",
                            dir);
    return rc;
}
