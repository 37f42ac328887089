/*
** backup_archive.c -- one-file backups (ravel_backup_write_file, _fd,
** ravel_backup_restore_file, _fd): a checkpoint's files in one stream,
** written front to back (a pipe will do) and checksummed throughout.
**
**   archive  := archive-header entry* archive-end
**   archive-header := magic:fixed64 ("RAVLBKUP") version:fixed32 (1)
**               flags:fixed32 (0)
**   entry    := kind:fixed32 (1) name_len:fixed32 size:fixed64
**               name[name_len] entry_checksum:fixed64 chunk*
**   chunk    := len:fixed32 zero:fixed32 data[len] chunk_checksum:fixed64
**   archive-end := kind:fixed32 (2) files:fixed32 bytes:fixed64
**               whole:fixed64
**
** An entry is one file of the database directory, NAME (a database file
** name, no '/'), SIZE bytes, carried by SIZE / 1 MiB (rounded up) chunks
** of 1 MiB, the last one shorter (none for an empty file).  entry_checksum
** is the XXH3_64 of the entry's bytes before it; chunk_checksum the
** XXH3_64 of the chunk's data seeded with the chunk's index in the
** archive (0, 1, ...), so a chunk moved, repeated or dropped fails;
** whole is the XXH3_64 of every byte of the archive before it;
** files and bytes count the entries and their data.  CURRENT is the last
** entry.  A restore checks each piece as it reads it and the end before
** the directory is renamed into place: a truncated or damaged archive is
** refused, naming the byte offset.
*/
#include "db/checkpoint.h"
#include "util/coding.h"
#include "util/copy.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/sync_journal.h"

#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ARCHIVE_MAGIC 0x50554b424c564152ull /* "RAVLBKUP" */
#define ARCHIVE_VERSION 1
#define ARCHIVE_ENTRY 1
#define ARCHIVE_END 2
#define ARCHIVE_CHUNK (1u << 20)
#define ARCHIVE_NAME_MAX 255

/* ------------------------------------------------------------ writing */

struct archive_out {
    int fd;
    XXH3_state_t *whole;
    uint64_t chunks, files, bytes;
};

static int archive_emit(struct archive_out *o, const void *p, size_t len)
{
    XXH3_64bits_update(o->whole, p, len);
    return rv_copy_write_all(o->fd, p, len, "the one-file backup");
}

static int archive_emit_chunk(struct archive_out *o, const char *data,
                              size_t len)
{
    char h[8], t[8];
    rv_put_fixed32(h, (uint32_t)len);
    rv_put_fixed32(h + 4, 0);
    rv_put_fixed64(t, XXH3_64bits_withSeed(data, len, o->chunks++));
    int rc = archive_emit(o, h, sizeof h);
    if (rc == RAVEL_OK)
        rc = archive_emit(o, data, len);
    return rc ? rc : archive_emit(o, t, sizeof t);
}

static int archive_emit_entry_header(struct archive_out *o, const char *name,
                                     uint64_t size)
{
    size_t nlen = strlen(name);
    char h[16 + ARCHIVE_NAME_MAX + 8];
    rv_put_fixed32(h, ARCHIVE_ENTRY);
    rv_put_fixed32(h + 4, (uint32_t)nlen);
    rv_put_fixed64(h + 8, size);
    memcpy(h + 16, name, nlen);
    rv_put_fixed64(h + 16 + nlen, XXH3_64bits(h, 16 + nlen));
    o->files++;
    o->bytes += size;
    return archive_emit(o, h, 16 + nlen + 8);
}

/* Item IT as an entry, its data read from memory or from its file. */
static int archive_emit_item(struct archive_out *o,
                             const struct rv_cp_item *it, char *buf)
{
    int rc = archive_emit_entry_header(o, it->name, it->size);
    if (rc || it->kind == RV_CP_DATA) {
        for (uint64_t off = 0; rc == RAVEL_OK && off < it->size;
             off += ARCHIVE_CHUNK) {
            uint64_t n = it->size - off;
            rc = archive_emit_chunk(o, it->data + off,
                                    n < ARCHIVE_CHUNK ? (size_t)n
                                                      : ARCHIVE_CHUNK);
        }
        return rc;
    }
    const char *src = it->src ? it->src : it->name;
    int fd = it->fd >= 0 ? it->fd : rv_open(src, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", src);
    for (uint64_t off = 0; rc == RAVEL_OK && off < it->size;) {
        uint64_t left = it->size - off;
        size_t want = left < ARCHIVE_CHUNK ? (size_t)left : ARCHIVE_CHUNK;
        size_t got = 0;
        while (got < want) {
            ssize_t n = pread(fd, buf + got, want - got, (off_t)(off + got));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                rc = n < 0 ? rv_error_errno(RAVEL_IOERR, errno, "read %s",
                                            src)
                           : rv_error(RAVEL_CORRUPT, "%s: shorter than the "
                                      "%" PRIu64 " bytes expected", src,
                                      it->size);
                break;
            }
            got += (size_t)n;
        }
        if (rc == RAVEL_OK)
            rc = archive_emit_chunk(o, buf, want);
        off += want;
    }
    if (fd != it->fd)
        close(fd);
    return rc;
}

static int archive_write_plan(const struct rv_cp_plan *p, int fd)
{
    struct archive_out o = {.fd = fd, .whole = XXH3_createState()};
    char *buf = malloc(ARCHIVE_CHUNK);
    int rc = o.whole && buf ? RAVEL_OK
                            : rv_error(RAVEL_NOMEM, "out of memory writing "
                                       "a one-file backup");
    if (rc == RAVEL_OK) {
        XXH3_64bits_reset(o.whole);
        char h[16];
        rv_put_fixed64(h, ARCHIVE_MAGIC);
        rv_put_fixed32(h + 8, ARCHIVE_VERSION);
        rv_put_fixed32(h + 12, 0);
        rc = archive_emit(&o, h, sizeof h);
    }
    for (int i = 0; i < p->n && rc == RAVEL_OK; i++)
        rc = archive_emit_item(&o, &p->items[i], buf);
    if (rc == RAVEL_OK) {
        char e[16], t[8];
        rv_put_fixed32(e, ARCHIVE_END);
        rv_put_fixed32(e + 4, (uint32_t)o.files);
        rv_put_fixed64(e + 8, o.bytes);
        rc = archive_emit(&o, e, sizeof e);
        rv_put_fixed64(t, XXH3_64bits_digest(o.whole));
        if (rc == RAVEL_OK)
            rc = rv_copy_write_all(fd, t, sizeof t, "the one-file backup");
    }
    free(buf);
    if (o.whole)
        XXH3_freeState(o.whole);
    return rc;
}

/* A pipe whose reader is gone raises SIGPIPE, which kills a process that
** did not ignore it: the writes block it in this thread, and a SIGPIPE
** they raised is taken back (as libcurl does), so the caller gets
** RAVEL_IOERR (EPIPE) instead. */
static void archive_block_sigpipe(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static void archive_restore_sigpipe(const sigset_t *old)
{
    if (sigismember(old, SIGPIPE))
        return; /* the caller had it blocked: leave it as it was */
    sigset_t set, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    struct timespec zero = {0, 0};
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE))
        (void)sigtimedwait(&set, NULL, &zero);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

int ravel_backup_write_fd(ravel_db *db, int fd)
{
    int rc = rv_db_enter(db, "ravel_backup_write_fd");
    if (rc)
        return rc;
    struct rv_cp_plan p = {.db = db};
    if (fd < 0)
        rc = rv_error(RAVEL_INVALID, "ravel_backup_write_fd: fd is %d", fd);
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_plan(db, &p);
    if (rc == RAVEL_OK) {
        sigset_t old;
        archive_block_sigpipe(&old);
        rc = archive_write_plan(&p, fd);
        archive_restore_sigpipe(&old);
    }
    if (rc == RAVEL_OK)
        rv_db_log(db, "one-file backup: sequence %" PRIu64 ", %d files, "
                  "writers paused %" PRIu64 " us", p.sequence, p.n,
                  p.pause_micros);
    rv_checkpoint_plan_free(&p);
    rv_db_leave(db);
    return rc;
}

int ravel_backup_write_file(ravel_db *db, const char *path)
{
    if (!path || !*path)
        return rv_error(RAVEL_INVALID, "ravel_backup_write_file: the path "
                        "is empty or NULL");
    struct stat st;
    if (lstat(path, &st) == 0)
        return rv_error(RAVEL_INVALID, "%s already exists: a one-file "
                        "backup is written to a new file", path);
    char tmp[RV_PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.partial", path) >= sizeof tmp)
        return rv_error(RAVEL_INVALID, "path too long: %s", path);
    /* a leftover (or a symlink or FIFO) at TMP is removed, not opened
    ** with O_TRUNC, which would write through a symlink into its target
    ** or block on a FIFO (as rv_replace_file_parts) */
    unlink(tmp);
    int fd = rv_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", tmp);
    int rc = ravel_backup_write_fd(db, fd);
    struct stat written;
    if (rc == RAVEL_OK && fdatasync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", tmp);
    else if (rc == RAVEL_OK && fstat(fd, &written) == 0)
        rv_sync_journal_file(fd, (uint64_t)written.st_size);
    if (close(fd) != 0 && rc == RAVEL_OK)
        rc = rv_error_errno(RAVEL_IOERR, errno, "close %s", tmp);
    if (rc == RAVEL_OK && rename(tmp, path) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "rename %s", tmp);
    if (rc == RAVEL_OK)
        rc = rv_copy_sync_parent(path);
    if (rc)
        unlink(tmp);
    return rc;
}

/* ------------------------------------------------------------ reading */

struct archive_in {
    int fd;
    const char *what;       /* the source, for messages */
    XXH3_state_t *whole;
    uint64_t offset, chunks;
    int current;            /* CURRENT was among the entries */
};

/* Reads exactly LEN bytes; RAVEL_CORRUPT "truncated" at the end. */
static int archive_take(struct archive_in *in, void *p, size_t len, int hash)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(in->fd, (char *)p + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rv_error_errno(RAVEL_IOERR, errno, "read %s", in->what);
        if (n == 0)
            return rv_error(RAVEL_CORRUPT, "one-file backup %s is truncated "
                            "at byte %" PRIu64, in->what,
                            in->offset + got);
        got += (size_t)n;
    }
    if (hash)
        XXH3_64bits_update(in->whole, p, len);
    in->offset += len;
    return RAVEL_OK;
}

static int archive_bad(const struct archive_in *in, uint64_t at,
                       const char *why)
{
    return rv_error(RAVEL_CORRUPT, "one-file backup %s is damaged at byte %"
                    PRIu64 ": %s", in->what, at, why);
}

/* One entry's data into the new file DST. */
static int archive_read_data(struct archive_in *in, const char *dst,
                             uint64_t size, char *buf)
{
    int fd = rv_open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", dst);
    int rc = RAVEL_OK;
    for (uint64_t left = size; rc == RAVEL_OK && left > 0;) {
        uint64_t at = in->offset;
        char h[8], t[8];
        size_t want = left < ARCHIVE_CHUNK ? (size_t)left : ARCHIVE_CHUNK;
        rc = archive_take(in, h, sizeof h, 1);
        if (rc == RAVEL_OK && (rv_get_fixed32(h) != want ||
                               rv_get_fixed32(h + 4) != 0))
            rc = archive_bad(in, at, "a chunk of the wrong length");
        if (rc == RAVEL_OK)
            rc = archive_take(in, buf, want, 1);
        if (rc == RAVEL_OK)
            rc = archive_take(in, t, sizeof t, 1);
        if (rc == RAVEL_OK && rv_get_fixed64(t) !=
                                  XXH3_64bits_withSeed(buf, want,
                                                       in->chunks++))
            rc = archive_bad(in, at, "chunk checksum mismatch");
        if (rc == RAVEL_OK)
            rc = rv_copy_write_all(fd, buf, want, dst);
        left -= want;
    }
    if (rc == RAVEL_OK && fdatasync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", dst);
    if (rc == RAVEL_OK)
        rv_sync_journal_file(fd, size);
    close(fd);
    return rc;
}

/* 1 if NAME may be written into a database directory. */
static int archive_name_ok(const char *name)
{
    return *name && !strchr(name, '/') && strcmp(name, ".") &&
           strcmp(name, "..") && rv_is_database_file_name(name);
}

/* One entry or the end (*DONE); the files into PARTIAL. */
static int archive_read_piece(struct archive_in *in, const char *partial,
                              char *buf, uint64_t *files, uint64_t *bytes,
                              int *done)
{
    uint64_t at = in->offset;
    char h[16 + ARCHIVE_NAME_MAX + 8];
    int rc = archive_take(in, h, 16, 1);
    if (rc)
        return rc;
    uint32_t kind = rv_get_fixed32(h);
    if (kind == ARCHIVE_END) {
        char t[8];
        uint64_t expect = XXH3_64bits_digest(in->whole);
        rc = archive_take(in, t, sizeof t, 0);
        if (rc == RAVEL_OK && rv_get_fixed64(t) != expect)
            return archive_bad(in, at, "the archive's checksum does not "
                               "match");
        if (rc == RAVEL_OK && (rv_get_fixed32(h + 4) != *files ||
                               rv_get_fixed64(h + 8) != *bytes))
            return archive_bad(in, at, "the end's counts do not match");
        if (rc == RAVEL_OK && !in->current)
            return archive_bad(in, at, "no CURRENT before the end: not a "
                               "whole database");
        *done = 1;
        return rc;
    }
    uint32_t nlen = rv_get_fixed32(h + 4);
    if (kind != ARCHIVE_ENTRY || nlen == 0 || nlen > ARCHIVE_NAME_MAX)
        return archive_bad(in, at, "not an entry");
    rc = archive_take(in, h + 16, nlen + 8, 1);
    if (rc)
        return rc;
    if (rv_get_fixed64(h + 16 + nlen) != XXH3_64bits(h, 16 + nlen))
        return archive_bad(in, at, "entry header checksum mismatch");
    char name[ARCHIVE_NAME_MAX + 1], dst[RV_PATH_MAX];
    memcpy(name, h + 16, nlen);
    name[nlen] = '\0';
    if (!archive_name_ok(name))
        return archive_bad(in, at, "an entry whose name is not a database "
                           "file's");
    uint64_t size = rv_get_fixed64(h + 8);
    in->current |= strcmp(name, RV_FILE_CURRENT) == 0;
    rc = rv_path_join(dst, partial, name);
    if (rc == RAVEL_OK)
        rc = archive_read_data(in, dst, size, buf);
    (*files)++;
    *bytes += size;
    return rc;
}

/* Restores the archive read from FD (WHAT names it) into DIR. */
static int archive_restore(int fd, const char *what, const char *dir)
{
    struct archive_in in = {.fd = fd, .what = what,
                            .whole = XXH3_createState()};
    char *buf = malloc(ARCHIVE_CHUNK);
    char partial[RV_PATH_MAX];
    int rc = in.whole && buf ? RAVEL_OK
                             : rv_error(RAVEL_NOMEM, "out of memory "
                                        "restoring a one-file backup");
    if (rc == RAVEL_OK)
        rc = rv_copy_dir_begin(dir, partial);
    if (rc) {
        free(buf);
        if (in.whole)
            XXH3_freeState(in.whole);
        return rc;
    }
    XXH3_64bits_reset(in.whole);
    char h[16];
    rc = archive_take(&in, h, sizeof h, 1);
    if (rc == RAVEL_OK && (rv_get_fixed64(h) != ARCHIVE_MAGIC ||
                           rv_get_fixed32(h + 8) != ARCHIVE_VERSION))
        rc = archive_bad(&in, 0, "not a ravel one-file backup (magic or "
                         "version)");
    uint64_t files = 0, bytes = 0;
    for (int done = 0; rc == RAVEL_OK && !done;)
        rc = archive_read_piece(&in, partial, buf, &files, &bytes, &done);
    if (rc == RAVEL_OK)
        rc = rv_copy_dir_commit(partial, dir);
    if (rc)
        rv_copy_remove_dir(partial);
    free(buf);
    XXH3_freeState(in.whole);
    return rc;
}

int ravel_backup_restore_fd(int fd, const char *dir)
{
    if (fd < 0)
        return rv_error(RAVEL_INVALID, "ravel_backup_restore_fd: fd is %d",
                        fd);
    char what[32];
    snprintf(what, sizeof what, "(fd %d)", fd);
    return archive_restore(fd, what, dir);
}

int ravel_backup_restore_file(const char *path, const char *dir)
{
    if (!path || !*path)
        return rv_error(RAVEL_INVALID, "ravel_backup_restore_file: the path "
                        "is empty or NULL");
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(errno == ENOENT ? RAVEL_NOTFOUND : RAVEL_IOERR,
                              errno, "open %s", path);
    int rc = archive_restore(fd, path, dir);
    close(fd);
    return rc;
}
