/*
** wal_archive.c -- WAL retention (wal_archive.h): moving flushed segments
** into DIR/archive/ and purging them there by age and total size.
**
** Owns: archive/ and what is in it.  Does not own: deciding that a
** segment is flushed (the flush and recovery call in only for segments
** below the log number), reading segments (db/updates.c).
*/
#include "wal/wal_archive.h"
#include "wal/wal_tail.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int rv_wal_archive_path(char *buf, const char *dir, uint64_t number)
{
    char name[48];
    char sub[RV_PATH_MAX];
    int rc = rv_path_join(sub, dir, RV_DIR_ARCHIVE);
    if (rc)
        return rc;
    rv_wal_segment_name(name, sizeof name, number);
    return rv_path_join(buf, sub, name);
}

/* Where flushed segment NUMBER of DIR ends: the prev_end segment NUMBER +
** 1 vouches for (it exists: the flush moved the log number to it), or,
** while its header is not written yet (wal_io=direct writes it with its
** first record), the end of NUMBER's verified records -- the segment is
** complete (fdatasynced whole before its successor was made).  0: not
** known. */
static uint64_t archive_data_end(const char *dir, uint64_t number)
{
    uint64_t end = 0;
    if (rv_wal_tail_prev_end(dir, number + 1, &end) == RAVEL_OK && end)
        return end;
    struct rv_wal_tail t;
    rv_wal_tail_init(&t);
    int rc = rv_wal_tail_open(&t, dir, number);
    const char *rep;
    size_t len;
    while (rc == RAVEL_OK)
        rc = rv_wal_tail_next(&t, &rep, &len);
    end = rc == RAVEL_NOTFOUND && t.fd >= 0 ? t.off : 0;
    rv_wal_tail_release(&t);
    return end;
}

/* Cuts segment NUMBER (at FROM, in DIR) to its data: wal_io=direct does
** not trim a segment it switches away from (its preallocated, zeroed
** tail is what a recycled file reuses, wal_direct.c), and retention
** never recycles, so an archived segment would keep the whole
** preallocation (write_buffer_size and more, of disk) for a few records,
** and count it against wal_size_limit_mb.  Nothing past the data end is
** read by anyone (the feed stops there); the modification time, the
** segment's age for wal_ttl_seconds, is kept.  Best effort: a segment
** left long is only bigger. */
static void archive_trim(const char *dir, const char *from, uint64_t number)
{
    uint64_t end = archive_data_end(dir, number);
    struct stat st;
    int fd = end ? rv_open(from, O_WRONLY, 0) : -1;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > end &&
        ftruncate(fd, (off_t)end) == 0) {
        struct timespec times[2] = {st.st_atim, st.st_mtim};
        (void)futimens(fd, times);
    }
    close(fd);
}

int rv_wal_archive_segment(const char *dir, uint64_t number)
{
    char from[RV_PATH_MAX], to[RV_PATH_MAX], sub[RV_PATH_MAX];
    int rc = rv_wal_segment_path(from, dir, number);
    if (!rc)
        rc = rv_wal_archive_path(to, dir, number);
    if (!rc)
        rc = rv_path_join(sub, dir, RV_DIR_ARCHIVE);
    if (rc)
        return rc;
    if (mkdir(sub, 0755) != 0 && errno != EEXIST)
        return rv_error_errno(RAVEL_IOERR, errno, "mkdir %s", sub);
    archive_trim(dir, from, number);
    if (rename(from, to) != 0) {
        if (errno == ENOENT)
            return rv_error(RAVEL_NOTFOUND, "%s is not there to archive",
                            from);
        return rv_error_errno(RAVEL_IOERR, errno, "rename %s to %s", from,
                              to);
    }
    /* Durable in archive/: a crash that loses the rename leaves the
    ** segment in DIR below the log number, and the next open archives
    ** it again (recovery.c). */
    return rv_sync_dir(sub);
}

/* One archived segment, for the purge's sort. */
struct archive_entry {
    uint64_t number;
    uint64_t size;
    time_t mtime;
};

static int archive_entry_cmp(const void *a, const void *b)
{
    const struct archive_entry *x = a, *y = b;
    return x->number < y->number ? -1 : x->number > y->number;
}

/* The segments of DIR/archive/ (SUB), ascending, into *OUT (malloc'd, *N
** of them; NULL and 0 when archive/ is absent or empty). */
static int archive_list(const char *sub, struct archive_entry **out, int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(sub);
    if (!d)
        return errno == ENOENT ? RAVEL_OK
                               : rv_error_errno(RAVEL_IOERR, errno,
                                                "opendir %s", sub);
    int rc = RAVEL_OK, cap = 0;
    struct dirent *e;
    while (rc == RAVEL_OK && (e = readdir(d)) != NULL) {
        uint64_t number;
        char path[RV_PATH_MAX];
        struct stat st;
        if (!rv_wal_parse_segment_name(e->d_name, &number))
            continue;
        if (rv_path_join(path, sub, e->d_name) || stat(path, &st) != 0)
            continue; /* purged meanwhile by another handle */
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            struct archive_entry *g = realloc(*out, (size_t)cap * sizeof *g);
            if (!g) {
                rc = rv_error(RAVEL_NOMEM, "listing %s: out of memory", sub);
                break;
            }
            *out = g;
        }
        (*out)[(*n)++] = (struct archive_entry){
            .number = number, .size = (uint64_t)st.st_size,
            .mtime = st.st_mtime};
    }
    closedir(d);
    if (rc == RAVEL_OK && *n > 1)
        qsort(*out, (size_t)*n, sizeof **out, archive_entry_cmp);
    return rc;
}

/* Deletes archived segment E of SUB; counts it in *DELETED. */
static int archive_delete(const char *sub, const struct archive_entry *e,
                          uint64_t *deleted)
{
    char name[48], path[RV_PATH_MAX];
    rv_wal_segment_name(name, sizeof name, e->number);
    int rc = rv_path_join(path, sub, name);
    if (rc)
        return rc;
    if (unlink(path) != 0 && errno != ENOENT)
        return rv_error_errno(RAVEL_IOERR, errno, "unlink %s", path);
    if (deleted)
        (*deleted)++;
    return RAVEL_OK;
}

int rv_wal_archive_purge(const char *dir, uint64_t ttl_seconds,
                         uint64_t size_limit, uint64_t *deleted)
{
    char sub[RV_PATH_MAX];
    struct archive_entry *list;
    int n, rc = rv_path_join(sub, dir, RV_DIR_ARCHIVE);
    if (!rc)
        rc = archive_list(sub, &list, &n);
    if (rc)
        return rc;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += list[i].size;
    time_t now = time(NULL);
    /* Oldest first: the feed reads the archive as one run of segments, so
    ** a purge only ever shortens it from its start. */
    for (int i = 0; i < n && rc == RAVEL_OK; i++) {
        int old = ttl_seconds && now > list[i].mtime &&
                  (uint64_t)(now - list[i].mtime) > ttl_seconds;
        int over = size_limit && total > size_limit;
        int none = !ttl_seconds && !size_limit; /* retention off */
        if (!old && !over && !none)
            break;
        rc = archive_delete(sub, &list[i], deleted);
        total -= list[i].size;
    }
    free(list);
    return rc;
}

int rv_wal_archive_stat(const char *dir, struct rv_wal_archive_stats *s)
{
    char sub[RV_PATH_MAX];
    struct archive_entry *list;
    int n, rc = rv_path_join(sub, dir, RV_DIR_ARCHIVE);
    memset(s, 0, sizeof *s);
    if (!rc)
        rc = archive_list(sub, &list, &n);
    if (rc)
        return rc;
    s->segments = (uint64_t)n;
    s->oldest = n ? list[0].number : 0;
    for (int i = 0; i < n; i++)
        s->bytes += list[i].size;
    free(list);
    return RAVEL_OK;
}
