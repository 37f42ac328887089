/*
** manifest.c -- writing and replaying the manifest (manifest.h).
*/
#include "db/manifest.h"
#include "util/coding.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/sync_journal.h"
#include "wal/wal_format.h"

#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rv_manifest {
    int fd;
    char path[RV_PATH_MAX];
    uint64_t number;
    uint64_t size;      /* bytes written and synced */
    int failed;         /* an append failed: the file's end is unknown */
};

/* ------------------------------------------------------------- writing */

static int manifest_write_all(int fd, const char *p, size_t len, uint64_t off,
                              const char *path)
{
    size_t done = 0;
    while (done < len) {
        int injected = rv_fault_check(RV_FAULT_MANIFEST_WRITE);
        ssize_t n = injected ? (errno = -injected, -1)
                             : pwrite(fd, p + done, len - done,
                                      (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return rv_error_errno(RAVEL_IOERR, n < 0 ? errno : EIO,
                                  "write %s", path);
        done += (size_t)n;
    }
    return RAVEL_OK;
}

int rv_manifest_append(rv_manifest *m, const struct rv_version_edit *e)
{
    if (m->failed)
        return rv_error(RAVEL_IOERR, "%s: an earlier append failed; the "
                        "manifest takes no more edits", m->path);
    char *payload = NULL;
    size_t plen = 0;
    int rc = rv_version_edit_encode(e, &payload, &plen);
    if (rc)
        return rc;
    size_t size = rv_wal_record_size(plen);
    char *rec = malloc(size);
    if (!rec) {
        free(payload);
        return rv_error(RAVEL_NOMEM, "out of memory appending to %s",
                        m->path);
    }
    memcpy(rec + RV_WAL_RECORD_HEADER_SIZE, payload, plen);
    free(payload);
    rv_wal_seal_record(rec, m->number, RV_MANIFEST_RECORD_EDIT, plen);
    rc = manifest_write_all(m->fd, rec, size, m->size, m->path);
    free(rec);
    int injected = rc ? 0 : rv_fault_check(RV_FAULT_MANIFEST_SYNC);
    if (injected)
        rc = rv_error_errno(RAVEL_IOERR, -injected, "fdatasync %s", m->path);
    else if (rc == RAVEL_OK && fdatasync(m->fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", m->path);
    if (rc) {
        m->failed = 1;
        return rc;
    }
    m->size += size;
    rv_sync_journal_file(m->fd, m->size);
    return RAVEL_OK;
}

/* The header of manifest NUMBER into H (RV_MANIFEST_HEADER_SIZE bytes). */
static void manifest_encode_header(char *h, uint64_t number)
{
    rv_put_fixed64(h, RV_MANIFEST_MAGIC);
    rv_put_fixed32(h + 8, RV_MANIFEST_VERSION);
    rv_put_fixed32(h + 12, RV_MANIFEST_HEADER_SIZE);
    rv_put_fixed64(h + 16, number);
    rv_put_fixed64(h + 24, XXH3_64bits(h, 24));
}

int rv_manifest_image(uint64_t number, const struct rv_version_edit *e,
                      char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    char *payload = NULL;
    size_t plen = 0;
    int rc = rv_version_edit_encode(e, &payload, &plen);
    if (rc)
        return rc;
    size_t size = RV_MANIFEST_HEADER_SIZE + rv_wal_record_size(plen);
    char *buf = malloc(size);
    if (!buf) {
        free(payload);
        return rv_error(RAVEL_NOMEM, "out of memory encoding a manifest");
    }
    manifest_encode_header(buf, number);
    char *rec = buf + RV_MANIFEST_HEADER_SIZE;
    memcpy(rec + RV_WAL_RECORD_HEADER_SIZE, payload, plen);
    free(payload);
    rv_wal_seal_record(rec, number, RV_MANIFEST_RECORD_EDIT, plen);
    *out = buf;
    *len = size;
    return RAVEL_OK;
}

/* Points CURRENT at manifest NUMBER: temp file, fsync, rename, dir fsync. */
static int manifest_set_current(const char *dir, uint64_t number)
{
    char text[40];
    rv_manifest_name(text, sizeof text - 1, number);
    strcat(text, "\n");
    return rv_replace_file(dir, RV_FILE_CURRENT, text, strlen(text));
}

int rv_manifest_create(const char *dir, uint64_t number,
                       const struct rv_version_edit *first, rv_manifest **out)
{
    *out = NULL;
    rv_manifest *m = calloc(1, sizeof *m);
    if (!m)
        return rv_error(RAVEL_NOMEM, "out of memory creating a manifest");
    char name[32];
    rv_manifest_name(name, sizeof name, number);
    int rc = rv_path_join(m->path, dir, name);
    if (rc) {
        free(m);
        return rc;
    }
    m->number = number;
    m->fd = rv_open(m->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (m->fd < 0) {
        rc = rv_error_errno(RAVEL_IOERR, errno, "create %s", m->path);
        free(m);
        return rc;
    }
    char h[RV_MANIFEST_HEADER_SIZE];
    manifest_encode_header(h, number);
    rc = manifest_write_all(m->fd, h, sizeof h, 0, m->path);
    m->size = sizeof h;
    if (!rc)
        rc = rv_manifest_append(m, first); /* fdatasyncs the header too */
    if (!rc)
        rc = rv_sync_dir(dir);
    if (!rc) {
        rv_pause_here(RV_PAUSE_MANIFEST_WRITTEN);
        rc = manifest_set_current(dir, number);
    }
    if (rc) {
        close(m->fd);
        unlink(m->path);
        free(m);
        return rc;
    }
    *out = m;
    return RAVEL_OK;
}

uint64_t rv_manifest_number(const rv_manifest *m)
{
    return m->number;
}

void rv_manifest_close(rv_manifest *m)
{
    if (!m)
        return;
    close(m->fd);
    free(m);
}

/* ------------------------------------------------------------ replaying */

/* Reads CURRENT: the manifest number it names. */
static int manifest_read_current(const char *dir, uint64_t *number)
{
    char path[RV_PATH_MAX], text[64];
    int rc = rv_path_join(path, dir, RV_FILE_CURRENT);
    if (rc)
        return rc;
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0) {
        if (errno == ENOENT)
            return rv_error(RAVEL_NOTFOUND, "%s does not exist", path);
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);
    }
    ssize_t n = read(fd, text, sizeof text - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return rv_error_errno(RAVEL_IOERR, err, "read %s", path);
    text[n] = '\0';
    size_t len = (size_t)n;
    if (len == 0 || text[len - 1] != '\n')
        return rv_error(RAVEL_CORRUPT, "%s does not end with a newline (it "
                        "holds %zd bytes)", path, n);
    text[len - 1] = '\0';
    if (!rv_parse_manifest_name(text, number))
        return rv_error(RAVEL_CORRUPT, "%s names '%s', not a manifest",
                        path, text);
    return RAVEL_OK;
}

static int manifest_is_zero(const char *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* The largest tail manifest_valid_record_after searches: a torn append is
** one edit, far smaller. */
#define MANIFEST_TORN_TAIL_MAX (4u << 20)

/* 1 if a whole record with a good checksum starts anywhere in DATA after
** OFF.  A power loss can damage the unsynced last append anywhere, its
** header included (so its length is wrong), but it has no record after it;
** damage in the synced part has the later records after it. */
static int manifest_valid_record_after(uint64_t number, const char *data,
                                       size_t len, size_t off)
{
    if (len - off > MANIFEST_TORN_TAIL_MAX)
        return 1; /* too much to be one torn append */
    for (size_t at = off + 1; at + RV_WAL_RECORD_HEADER_SIZE <= len; at++) {
        const char *h = data + at;
        uint32_t plen = rv_get_fixed32(h + 8);
        if (plen > len - at - RV_WAL_RECORD_HEADER_SIZE ||
            manifest_is_zero(h, RV_WAL_RECORD_HEADER_SIZE))
            continue;
        if (rv_get_fixed64(h) ==
            rv_wal_record_checksum(number, h, h + RV_WAL_RECORD_HEADER_SIZE,
                                   plen))
            return 1;
    }
    return 0;
}

/* Damage at OFF is the torn last append: recorded in TAIL, and the walk
** ends there.  The first record never is: CURRENT named the manifest only
** after it was durable. */
static int manifest_torn_end(const char *path, size_t off, const char *why,
                             struct rv_manifest_tail *tail)
{
    if (off == RV_MANIFEST_HEADER_SIZE)
        return rv_error(RAVEL_CORRUPT, "%s: byte offset %zu: the first "
                        "record is damaged (%s); it was durable before "
                        "CURRENT named this manifest, so no crash can have "
                        "torn it", path, off, why);
    tail->dropped_at = off;
    snprintf(tail->why, sizeof tail->why, "%s", why);
    return RAVEL_OK;
}

/* Walks the records of the manifest DATA (LEN bytes) at PATH. */
static int manifest_walk(const char *path, uint64_t number, const char *data,
                         size_t len, rv_manifest_edit_fn fn, void *ctx,
                         struct rv_manifest_tail *tail)
{
    if (len < RV_MANIFEST_HEADER_SIZE ||
        rv_get_fixed64(data + 24) != XXH3_64bits(data, 24) ||
        rv_get_fixed64(data) != RV_MANIFEST_MAGIC ||
        rv_get_fixed32(data + 8) < RV_MANIFEST_VERSION_MIN ||
        rv_get_fixed32(data + 8) > RV_MANIFEST_VERSION ||
        rv_get_fixed32(data + 12) != RV_MANIFEST_HEADER_SIZE ||
        rv_get_fixed64(data + 16) != number)
        return rv_error(RAVEL_CORRUPT, "%s: byte offset 0: bad manifest "
                        "header (a manifest of version %d to %d numbered %llu "
                        "was expected)", path, RV_MANIFEST_VERSION_MIN,
                        RV_MANIFEST_VERSION,
                        (unsigned long long)number);
    size_t off = RV_MANIFEST_HEADER_SIZE;
    while (off < len) {
        const char *h = data + off;
        size_t avail = len - off;
        uint32_t plen = avail >= RV_WAL_RECORD_HEADER_SIZE
                            ? rv_get_fixed32(h + 8) : 0;
        int whole = avail >= RV_WAL_RECORD_HEADER_SIZE &&
                    plen <= avail - RV_WAL_RECORD_HEADER_SIZE;
        if (whole && manifest_is_zero(h, RV_WAL_RECORD_HEADER_SIZE) &&
            manifest_is_zero(h, avail)) {
            if (off == RV_MANIFEST_HEADER_SIZE)
                break; /* no record: refused below */
            /* appends leave no zeros behind them: zeros are an append a
            ** power loss took, held to the torn append's rule too */
            return manifest_torn_end(path, off, "zero bytes", tail);
        }
        if (!whole || rv_get_fixed64(h) !=
                          rv_wal_record_checksum(number, h,
                                                 h + RV_WAL_RECORD_HEADER_SIZE,
                                                 plen)) {
            /* Every append is synced before the next: only the last one can
            ** be torn, and no record can follow it.  A power loss may have
            ** damaged its header too, so the bytes after what its length
            ** says may be its own: the end, unless a good record follows. */
            size_t end = whole ? off + rv_wal_record_size(plen) : len;
            if (end > len)
                end = len;
            if (manifest_is_zero(data + end, len - end) ||
                !manifest_valid_record_after(number, data, len, off))
                return manifest_torn_end(path, off,
                                         whole ? "checksum mismatch"
                                               : "cut short", tail);
            return rv_error(RAVEL_CORRUPT, "%s: byte offset %zu: record "
                            "damaged, with data after it", path, off);
        }
        if ((unsigned char)h[12] != RV_MANIFEST_RECORD_EDIT || h[13] ||
            h[14] || h[15])
            return rv_error(RAVEL_CORRUPT, "%s: byte offset %zu: record of "
                            "unknown type %u", path, off,
                            (unsigned char)h[12]);
        struct rv_version_edit e;
        rv_version_edit_init(&e);
        int rc = rv_version_edit_decode(&e, h + RV_WAL_RECORD_HEADER_SIZE,
                                        plen);
        if (rc) {
            char why[400];
            snprintf(why, sizeof why, "%.399s", rv_errmsg_get());
            return rv_error(RAVEL_CORRUPT, "%s: record at byte offset %zu: "
                            "%s", path, off, why);
        }
        rc = fn(ctx, &e);
        rv_version_edit_clear(&e);
        if (rc)
            return rc;
        tail->records++;
        off += rv_wal_record_size(plen);
    }
    if (tail->records == 0)
        return rv_error(RAVEL_CORRUPT, "%s: holds no record (%zu bytes); "
                        "a manifest is durable with its first record before "
                        "CURRENT names it", path, len);
    return RAVEL_OK;
}

int rv_manifest_replay(const char *dir, rv_manifest_edit_fn fn, void *ctx,
                       uint64_t *number, struct rv_manifest_tail *tail)
{
    int rc = manifest_read_current(dir, number);
    if (rc)
        return rc;
    return rv_manifest_replay_file(dir, *number, fn, ctx, tail);
}

int rv_manifest_replay_file(const char *dir, uint64_t number,
                            rv_manifest_edit_fn fn, void *ctx,
                            struct rv_manifest_tail *tail)
{
    memset(tail, 0, sizeof *tail);
    char name[32], path[RV_PATH_MAX];
    rv_manifest_name(name, sizeof name, number);
    int rc = rv_path_join(path, dir, name);
    if (rc)
        return rc;
    char *data = NULL;
    size_t got = 0;
    int open_errno = 0;
    rc = rv_read_file(path, &data, &got, &open_errno);
    if (rc && open_errno == ENOENT)
        return rv_error(RAVEL_CORRUPT, "%s, named by CURRENT, is missing",
                        path);
    if (rc)
        return rc;
    tail->size = got;
    if (!rc)
        rc = manifest_walk(path, number, data, got, fn, ctx, tail);
    free(data);
    return rc;
}
