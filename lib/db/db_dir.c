/*
** db_dir.c -- the database directory: creating it and its IDENTITY file,
** or checking that an existing one holds a ravel database; taking the
** LOCK.
**
**   IDENTITY := "ravel-db 1\n"        (11 bytes; on disk: DO NOT CHANGE)
**
** Creation is crash-safe: IDENTITY is written to IDENTITY.tmp, fsynced
** and renamed into place, and the directory (and, for a new directory,
** its parent) is fsynced, all before the first WAL segment exists.  So a
** directory with WAL segments always has a whole IDENTITY, and one
** without it after a crash during creation is simply not a database yet.
*/
#include "db/db.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/lockfile.h"
#include "util/sync_journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DB_IDENTITY "ravel-db 1\n"

static int db_dir_exists(const char *dir, const char *name, int *exists)
{
    char path[RV_PATH_MAX];
    int rc = rv_path_join(path, dir, name);
    if (rc)
        return rc;
    struct stat st;
    *exists = stat(path, &st) == 0;
    if (!*exists && errno != ENOENT)
        return rv_error_errno(RAVEL_IOERR, errno, "stat %s", path);
    return RAVEL_OK;
}

/* 1 if DIR holds a WAL segment (a database whose IDENTITY is gone). */
static int db_dir_has_segments(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    uint64_t number;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL)
        found = rv_wal_parse_segment_name(e->d_name, &number);
    closedir(d);
    return found;
}

static int db_dir_write_identity(ravel_db *db)
{
    return rv_replace_file(db->dir, RV_FILE_IDENTITY, DB_IDENTITY,
                           strlen(DB_IDENTITY));
}

static int db_dir_check_identity(ravel_db *db)
{
    char path[RV_PATH_MAX], buf[64];
    int rc = rv_path_join(path, db->dir, RV_FILE_IDENTITY);
    if (rc)
        return rc;
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return rv_error_errno(RAVEL_IOERR, err, "read %s", path);
    buf[n] = 0;
    if (strcmp(buf, DB_IDENTITY) != 0)
        return rv_error(RAVEL_CORRUPT, "%s: not a ravel database identity "
                        "(expected \"ravel-db 1\")", path);
    return RAVEL_OK;
}

/* Creates DB->dir, making its entry in the parent directory durable. */
static int db_dir_create(ravel_db *db)
{
    if (mkdir(db->dir, 0755) != 0) {
        if (errno == EEXIST)
            return RAVEL_OK;
        return rv_error_errno(RAVEL_IOERR, errno, "mkdir %s", db->dir);
    }
    char *copy = strdup(db->dir);
    if (!copy)
        return rv_error(RAVEL_NOMEM, "out of memory creating %s", db->dir);
    int rc = rv_sync_dir(dirname(copy));
    free(copy);
    return rc;
}

/* Checks that the directory is there (creating it when asked). */
static int db_dir_ensure(ravel_db *db)
{
    const struct ravel_options *o = &db->options;
    struct stat st;
    if (stat(db->dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return rv_error(RAVEL_INVALID, "%s is not a directory", db->dir);
        return RAVEL_OK;
    }
    if (errno != ENOENT)
        return rv_error_errno(RAVEL_IOERR, errno, "stat %s", db->dir);
    if (!o->create_if_missing || o->read_only)
        return rv_error(RAVEL_INVALID, "database %s does not exist "
                        "(create_if_missing is false)", db->dir);
    return db_dir_create(db);
}

int rv_db_prepare_dir(ravel_db *db)
{
    const struct ravel_options *o = &db->options;
    int rc = db_dir_ensure(db);
    /* A reader takes no lock: any number of them open beside the one
    ** writer (db/reader.c says why nothing of theirs can be deleted). */
    if (rc == RAVEL_OK && !o->read_only)
        rc = rv_lockfile_acquire(db->dir, &db->lock);
    int exists = 0;
    if (rc == RAVEL_OK)
        rc = db_dir_exists(db->dir, RV_FILE_IDENTITY, &exists);
    if (rc)
        return rc;
    if (exists) {
        if (o->error_if_exists)
            return rv_error(RAVEL_INVALID, "database %s already exists "
                            "(error_if_exists is true)", db->dir);
        return db_dir_check_identity(db);
    }
    if (db_dir_has_segments(db->dir))
        return rv_error(RAVEL_CORRUPT, "%s holds WAL segments but no "
                        "IDENTITY file: the database is damaged (IDENTITY "
                        "is made durable before any segment exists)",
                        db->dir);
    if (!o->create_if_missing || o->read_only)
        return rv_error(RAVEL_INVALID, "%s holds no ravel database (no "
                        "IDENTITY file; create_if_missing is false)", db->dir);
    return db_dir_write_identity(db);
}
