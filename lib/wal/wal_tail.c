/*
** wal_tail.c -- the tail reader (wal_tail.h): reading a WAL segment that
** may still be written, up to the first record that does not verify.
**
** Owns: the read window and the rules for where a live segment's data
** ends for now.  Does not own: the layout (wal_format.h), which segment
** comes next (db/updates.c), what a batch means.
*/
#include "wal/wal_tail.h"
#include "base/batchrepr.h"
#include "util/coding.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "wal/wal_archive.h"
#include "wal/wal_format.h"

#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAIL_WINDOW (64u << 10) /* bytes read ahead at once ... */
#define TAIL_FRESH_WINDOW 4096  /* ... and when reading again at the end of
                                ** the data: a follower polls there */

void rv_wal_tail_init(struct rv_wal_tail *t)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
}

static void tail_close_fd(struct rv_wal_tail *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    t->buf_len = 0;
}

void rv_wal_tail_release(struct rv_wal_tail *t)
{
    tail_close_fd(t);
    free(t->buf);
    rv_wal_tail_init(t);
}

/* Opens segment NUMBER of DIR from DIR or archive/: the descriptor, or -1
** with errno (ENOENT: in neither). */
static int tail_open_file(const char *dir, uint64_t number)
{
    char path[RV_PATH_MAX];
    if (rv_wal_segment_path(path, dir, number) == 0) {
        int fd = rv_open(path, O_RDONLY, 0);
        if (fd >= 0 || errno != ENOENT)
            return fd;
    }
    if (rv_wal_archive_path(path, dir, number) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return rv_open(path, O_RDONLY, 0);
}

/* Makes [AT, AT + N) of the file readable at tail_bytes(T, AT): from the
** window, or read again (FRESH: always).  *GOT: how many of the N bytes
** the file has. */
static int tail_read(struct rv_wal_tail *t, uint64_t at, size_t n,
                     int fresh, size_t *got)
{
    if (!fresh && at >= t->buf_at && at - t->buf_at <= t->buf_len &&
        t->buf_len - (at - t->buf_at) >= n) {
        *got = n;
        return RAVEL_OK;
    }
    size_t window = fresh ? TAIL_FRESH_WINDOW : TAIL_WINDOW;
    size_t want = n > window ? n : window;
    if (t->buf_cap < want) {
        char *b = realloc(t->buf, want);
        if (!b)
            return rv_error(RAVEL_NOMEM, "change feed: out of memory for a "
                            "%zu-byte read of WAL segment %llu", want,
                            (unsigned long long)t->number);
        t->buf = b;
        t->buf_cap = want;
    }
    size_t have = 0;
    while (have < want) {
        ssize_t r = pread(t->fd, t->buf + have, want - have,
                          (off_t)(at + have));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            t->buf_len = 0;
            return rv_error_errno(RAVEL_IOERR, errno, "change feed: read "
                                  "WAL segment %llu at byte offset %llu",
                                  (unsigned long long)t->number,
                                  (unsigned long long)(at + have));
        }
        if (r == 0)
            break;
        have += (size_t)r;
    }
    t->buf_at = at;
    t->buf_len = have;
    *got = have < n ? have : n;
    return RAVEL_OK;
}

static const char *tail_bytes(const struct rv_wal_tail *t, uint64_t at)
{
    return t->buf + (at - t->buf_at);
}

static int tail_zero(const char *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Which header layout verifies in H (N bytes): 3, 2, 1, or 0. */
static int tail_layout(const char *h, size_t n)
{
    if (n >= RV_WAL_V3_HEADER_SIZE &&
        rv_get_fixed64(h + 40) == XXH3_64bits(h, 40))
        return 3;
    if (n >= RV_WAL_HEADER_SIZE &&
        rv_get_fixed64(h + 32) == XXH3_64bits(h, 32))
        return 2;
    if (n >= RV_WAL_V1_HEADER_SIZE &&
        rv_get_fixed64(h + 24) == XXH3_64bits(h, 24))
        return 1;
    return 0;
}

/* Reads and checks the header of T's open segment. */
static int tail_header(struct rv_wal_tail *t)
{
    size_t got;
    int rc = tail_read(t, 0, RV_WAL_V3_HEADER_SIZE, 1, &got);
    if (rc)
        return rc;
    const char *h = tail_bytes(t, 0);
    int layout = tail_layout(h, got);
    if (!layout)
        return RAVEL_NOTFOUND; /* a spare, or being written now */
    if (rv_get_fixed64(h) != RV_WAL_MAGIC ||
        rv_get_fixed32(h + 8) != (uint32_t)layout ||
        rv_get_fixed64(h + 16) != t->number)
        return rv_error(RAVEL_CORRUPT, "change feed: WAL segment %llu: its "
                        "header verifies but names version %u, segment %llu",
                        (unsigned long long)t->number, rv_get_fixed32(h + 8),
                        (unsigned long long)rv_get_fixed64(h + 16));
    t->version = layout;
    t->header_size = layout == 3   ? RV_WAL_V3_HEADER_SIZE
                     : layout == 2 ? RV_WAL_HEADER_SIZE
                                   : RV_WAL_V1_HEADER_SIZE;
    t->prev_end = layout >= 2 ? rv_get_fixed64(h + 24) : 0;
    t->block = layout == 3 ? rv_get_fixed32(h + 32) : 0;
    if (layout == 3 && (t->block < 512 || (t->block & (t->block - 1))))
        return rv_error(RAVEL_CORRUPT, "change feed: WAL segment %llu: bad "
                        "block size %u", (unsigned long long)t->number,
                        t->block);
    t->off = t->header_size;
    t->sealed = 0;
    return RAVEL_OK;
}

int rv_wal_tail_open(struct rv_wal_tail *t, const char *dir, uint64_t number)
{
    tail_close_fd(t);
    t->number = number;
    t->fd = tail_open_file(dir, number);
    if (t->fd < 0) {
        if (errno == ENOENT)
            return RAVEL_NOTFOUND;
        return rv_error_errno(RAVEL_IOERR, errno, "change feed: open WAL "
                              "segment %llu of %s",
                              (unsigned long long)number, dir);
    }
    int rc = tail_header(t);
    if (rc)
        tail_close_fd(t);
    return rc;
}

int rv_wal_tail_prev_end(const char *dir, uint64_t number,
                         uint64_t *prev_end)
{
    struct rv_wal_tail t;
    rv_wal_tail_init(&t);
    int rc = rv_wal_tail_open(&t, dir, number);
    *prev_end = t.prev_end;
    rv_wal_tail_release(&t);
    return rc;
}

/* Whether the record header H carries the tag of T's segment (version
** 3) or zero tag bytes (versions 1 and 2). */
static int tail_tag_ok(const struct rv_wal_tail *t, const char *h)
{
    uint32_t want = t->version == 3 ? rv_wal_tag(t->number) : 0;
    return rv_wal_record_tag(h) == want;
}

/* Whether the file has a non-zero record header at T->off now: one
** 16-byte read, leaving the window as it is. */
static int tail_header_written(const struct rv_wal_tail *t)
{
    char h[RV_WAL_RECORD_HEADER_SIZE];
    ssize_t r;
    do
        r = pread(t->fd, h, sizeof h, (off_t)t->off);
    while (r < 0 && errno == EINTR);
    return r == (ssize_t)sizeof h && !tail_zero(h, sizeof h);
}

/* The record at T->off: 1 and *REC (header + payload), *LEN (payload) if
** it verifies; 0 if it does not (for now). */
static int tail_record(struct rv_wal_tail *t, int fresh, const char **rec,
                       uint32_t *len)
{
    size_t got;
    if (fresh && !tail_header_written(t))
        return 0; /* the cheap answer a polling follower mostly gets */
    if (tail_read(t, t->off, RV_WAL_RECORD_HEADER_SIZE, fresh, &got) ||
        got < RV_WAL_RECORD_HEADER_SIZE)
        return 0;
    const char *h = tail_bytes(t, t->off);
    if (tail_zero(h, RV_WAL_RECORD_HEADER_SIZE) || !tail_tag_ok(t, h))
        return 0;
    uint32_t n = rv_get_fixed32(h + 8);
    if (n > RAVEL_MAX_BATCH_SIZE)
        return 0;
    if (tail_read(t, t->off, RV_WAL_RECORD_HEADER_SIZE + (size_t)n, fresh,
                  &got) ||
        got < RV_WAL_RECORD_HEADER_SIZE + (size_t)n)
        return 0;
    h = tail_bytes(t, t->off);
    if (rv_get_fixed64(h) !=
        rv_wal_record_checksum(t->number, h, h + RV_WAL_RECORD_HEADER_SIZE,
                               n))
        return 0;
    *rec = h;
    *len = n;
    return 1;
}

/* Version 3: whether the data before T->off ended there (a zero record
** header, or zeros up to the next block boundary when fewer than 16 bytes
** are left before it) and a skip record at that boundary names T->off:
** then 1, with T->off moved past it (wal_reader.c's wal_reader_v3_end). */
static int tail_skip(struct rv_wal_tail *t, int fresh)
{
    uint64_t at = t->off;
    uint64_t b = (at + t->block - 1) / t->block * t->block;
    size_t n = b - at < RV_WAL_RECORD_HEADER_SIZE ? (size_t)(b - at)
                                                  : RV_WAL_RECORD_HEADER_SIZE;
    size_t got;
    if (b == at || tail_read(t, at, n, fresh, &got) || got < n ||
        !tail_zero(tail_bytes(t, at), n))
        return 0;
    t->off = b;
    const char *rec;
    uint32_t len;
    if (tail_record(t, fresh, &rec, &len) &&
        (unsigned char)rec[12] == RV_WAL_SKIP &&
        len == RV_WAL_SKIP_PAYLOAD &&
        rv_get_fixed64(rec + RV_WAL_RECORD_HEADER_SIZE) == at) {
        t->off = b + RV_WAL_SKIP_SIZE;
        return 1;
    }
    t->off = at;
    return 0;
}

/* One step at T->off: 1 with *REC and *LEN for a batch record, 0 at the
** end of the data for now, or RAVEL_CORRUPT for a record that verified
** but is of no known type. */
static int tail_step(struct rv_wal_tail *t, int fresh, const char **rec,
                     uint32_t *len)
{
    for (;;) {
        if (!tail_record(t, fresh, rec, len)) {
            if (t->version == 3 && tail_skip(t, fresh))
                continue;
            return 0;
        }
        int type = (unsigned char)(*rec)[12];
        uint64_t at = t->off;
        t->off += rv_wal_record_size(*len);
        if (type == RV_WAL_SEAL) {
            t->sealed = 1; /* the data ends past it (the next segment's
                           ** prev_end), and nothing follows */
            return 0;
        }
        if (type == RV_WAL_SKIP && t->version == 3)
            continue; /* a skip naming its own offset: nothing skipped */
        if (type != RV_WAL_BATCH)
            return rv_error(RAVEL_CORRUPT, "change feed: WAL segment %llu: "
                            "record of unknown type %d at byte offset %llu",
                            (unsigned long long)t->number, type,
                            (unsigned long long)at);
        return 1;
    }
}

int rv_wal_tail_next(struct rv_wal_tail *t, const char **rep, size_t *len)
{
    if (t->fd < 0 || t->sealed)
        return RAVEL_NOTFOUND;
    const char *rec = NULL;
    uint32_t n = 0;
    int got = 0;
    /* From the window first; where it ends, from the file again: the
    ** window may hold what the file had before the writer got there. */
    for (int fresh = 0; fresh < 2 && got == 0; fresh++) {
        got = tail_step(t, fresh, &rec, &n);
        if (got > 1)
            return got;
    }
    if (got == 0)
        return RAVEL_NOTFOUND;
    const char *p = rec + RV_WAL_RECORD_HEADER_SIZE;
    if (rv_batch_validate(p, n))
        return rv_error(RAVEL_CORRUPT, "change feed: WAL segment %llu: the "
                        "record at byte offset %llu verifies but is not a "
                        "batch (%s)", (unsigned long long)t->number,
                        (unsigned long long)(t->off - rv_wal_record_size(n)),
                        rv_errmsg_get());
    *rep = p;
    *len = n;
    return RAVEL_OK;
}
