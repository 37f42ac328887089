/*
** wal_reader.c -- replays the write-ahead log on open.
**
** Owns: reading segments back, telling a clean end from a torn tail from
** corruption, and carrying out the recovery mode (truncating a segment,
** deleting later ones).  Does not own: the byte layout (wal_format.c),
** batch structure (batch.c), or what a replayed batch does (the caller's
** callback inserts it into the memtable).
**
** Each segment is mapped read-only and walked record by record at 8-byte
** aligned offsets.  A record is good when its checksum verifies (seeded
** with the segment number), its type is a batch, its payload is a
** well-formed batch and its sequence numbers follow the previous batch's.
**
** Torn or corrupt?  A crash can only damage the end of what was being
** written, so a bad record is a torn tail only if it is in the LAST
** segment, nothing but zero bytes follows it, and no record verifies
** anywhere after its start (this last test keeps a middle record whose
** length field was damaged, which then seems to run past EOF, from being
** mistaken for a torn tail and silently cutting off the good records
** behind it).  A bad segment header in the last segment is a torn tail
** when it fails its checksum (or the file is shorter than a header) and
** only zeros follow: the crash came between creating the file and writing
** its header.  Everything else is corruption.
**
** Files are modified only after the segment is unmapped, and never when
** READ_ONLY.  point_in_time deletes the later segments before truncating
** the damaged one, highest first with a directory fsync after each: if it
** crashed half-way, the next replay must not find a gap in the log.  A
** segment whose header is damaged is deleted rather than truncated to
** zero bytes, so it cannot later sit before newer segments as an empty,
** headerless (that is: corrupt) one.
*/
#include "wal/wal_reader.h"
#include "util/file.h"
#include "util/filename.h"
#include "db/batch.h"
#include "util/coding.h"
#include "db/dbformat.h"
#include "util/error.h"
#include "wal/wal_format.h"

#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define WAL_NO_CUT SIZE_MAX

enum wal_kind { WAL_TORN, WAL_CORRUPT };

/* A bad header or record found at OFF. */
struct wal_problem {
    size_t off;
    size_t extent;    /* where the bad record ends, if known (may be past
                      ** EOF); SIZE_MAX if unknown */
    size_t resume;    /* skip mode: where to go on, 0 = resynchronise */
    enum wal_kind kind;
    char why[320];
};

struct wal_segment {
    char path[RV_PATH_MAX];
    uint64_t number;
    const char *data;  /* the mapped file; NULL when it is empty */
    size_t size;
    int is_last;
    size_t cut;        /* truncate here once unmapped (< header size:
                       ** delete the file); WAL_NO_CUT to keep it */
};

struct wal_replay {
    const char *dir;
    const uint64_t *numbers;
    int n;
    enum rv_recovery_mode mode;
    int read_only;
    rv_wal_replay_fn fn;
    void *ctx;
    struct rv_wal_replay_result *result;
    uint64_t max_seq;  /* last sequence number replayed */
    int stop;          /* replay ends after the current segment */
};

static void wal_reader_why(struct wal_problem *pb, size_t off, size_t extent,
                           const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void wal_reader_why(struct wal_problem *pb, size_t off, size_t extent,
                           const char *fmt, ...)
{
    va_list ap;
    pb->off = off;
    pb->extent = extent;
    pb->resume = 0;
    pb->kind = WAL_CORRUPT;
    va_start(ap, fmt);
    vsnprintf(pb->why, sizeof pb->why, fmt, ap);
    va_end(ap);
}

static int wal_reader_zero(const char *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* ---------------------------------------------------------- segment files */

static int wal_reader_map(struct wal_segment *s)
{
    int fd = rv_open(s->path, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", s->path);
    int rc = RAVEL_OK;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        rc = rv_error_errno(RAVEL_IOERR, errno, "stat %s", s->path);
        goto out;
    }
    s->size = (size_t)st.st_size;
    s->data = NULL;
    if (s->size) {
        void *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            rc = rv_error_errno(RAVEL_IOERR, errno, "mmap %s", s->path);
            goto out;
        }
        (void)madvise(m, s->size, MADV_SEQUENTIAL); /* a hint only */
        s->data = m;
    }
out:
    close(fd);
    return rc;
}

static void wal_reader_unmap(struct wal_segment *s)
{
    if (s->data)
        munmap((void *)s->data, s->size);
    s->data = NULL;
}

/* Deletes PATH (SIZE bytes) and makes the deletion durable. */
static int wal_reader_unlink(struct wal_replay *r, const char *path,
                             uint64_t size)
{
    if (unlink(path) < 0) {
        if (errno == ENOENT)
            return RAVEL_OK;
        return rv_error_errno(RAVEL_IOERR, errno, "unlink %s", path);
    }
    r->result->bytes_truncated += size;
    return rv_sync_dir(r->dir);
}

/* point_in_time: deletes the segments after index I, highest first. */
static int wal_reader_delete_after(struct wal_replay *r, int i)
{
    for (int j = r->n - 1; j > i; j--) {
        char path[RV_PATH_MAX];
        struct stat st;
        int rc = rv_wal_segment_path(path, r->dir, r->numbers[j]);
        if (rc)
            return rc;
        if (stat(path, &st) < 0) {
            if (errno == ENOENT)
                continue;
            return rv_error_errno(RAVEL_IOERR, errno, "stat %s", path);
        }
        rc = wal_reader_unlink(r, path, (uint64_t)st.st_size);
        if (rc)
            return rc;
    }
    return RAVEL_OK;
}

/* Carries out s->cut: truncate and fsync, or delete a headerless file. */
static int wal_reader_cut(struct wal_replay *r, struct wal_segment *s)
{
    if (s->cut < RV_WAL_HEADER_SIZE)
        return wal_reader_unlink(r, s->path, s->size);
    if (s->cut >= s->size)
        return RAVEL_OK;
    int fd = rv_open(s->path, O_WRONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", s->path);
    int rc = RAVEL_OK;
    if (ftruncate(fd, (off_t)s->cut) < 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "truncate %s to %zu bytes",
                            s->path, s->cut);
    else if (fsync(fd) < 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fsync %s", s->path);
    else
        r->result->bytes_truncated += s->size - s->cut;
    close(fd);
    return rc;
}

/* ---------------------------------------------------------- classifying */

/* 1 if a record whose checksum verifies starts at OFF. */
static int wal_reader_verifies(const struct wal_segment *s, size_t off)
{
    if (off > s->size || s->size - off < RV_WAL_RECORD_HEADER_SIZE)
        return 0;
    const char *h = s->data + off;
    if (h[12] == 0 || h[13] || h[14] || h[15])
        return 0; /* cheap filter: zeros and junk rarely get this far */
    uint32_t len = rv_get_fixed32(h + 8);
    if (len > s->size - off - RV_WAL_RECORD_HEADER_SIZE)
        return 0;
    return rv_get_fixed64(h) ==
           rv_wal_record_checksum(s->number, h, h + RV_WAL_RECORD_HEADER_SIZE,
                                  len);
}

/* The first 8-byte aligned offset in [FROM, LIMIT) where a record
** verifies, or SIZE_MAX. */
static size_t wal_reader_resync(const struct wal_segment *s, size_t from,
                                size_t limit)
{
    for (size_t off = rv_wal_padded(from); off < limit; off += RV_WAL_ALIGN)
        if (wal_reader_verifies(s, off))
            return off;
    return SIZE_MAX;
}

/* Sets pb->kind: torn only in the last segment, with nothing but zeros
** after the bad record and no record that verifies after its start. */
static void wal_reader_classify(const struct wal_segment *s,
                                struct wal_problem *pb)
{
    pb->kind = WAL_CORRUPT;
    if (!s->is_last)
        return;
    size_t end = pb->extent < s->size ? pb->extent : s->size;
    if (end < s->size && !wal_reader_zero(s->data + end, s->size - end))
        return;
    size_t from = pb->off + RV_WAL_ALIGN;
    if (from < RV_WAL_HEADER_SIZE)
        from = RV_WAL_HEADER_SIZE;
    if (wal_reader_resync(s, from, end) != SIZE_MAX)
        return;
    pb->kind = WAL_TORN;
}

/* 1 if the segment header is good; else 0 with *pb describing it. */
static int wal_reader_check_header(const struct wal_segment *s,
                                   struct wal_problem *pb)
{
    const char *h = s->data;
    if (s->size < RV_WAL_HEADER_SIZE) {
        wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE, "segment header truncated: "
                       "the file has %zu of its %d bytes", s->size,
                       RV_WAL_HEADER_SIZE);
        wal_reader_classify(s, pb);
        return 0;
    }
    if (rv_get_fixed64(h + 24) != XXH3_64bits(h, 24)) {
        wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE,
                       "segment header checksum mismatch");
        wal_reader_classify(s, pb);
        return 0;
    }
    /* The checksum verified: whatever is wrong now was written so. */
    uint64_t magic = rv_get_fixed64(h);
    uint32_t version = rv_get_fixed32(h + 8);
    uint32_t hsize = rv_get_fixed32(h + 12);
    uint64_t number = rv_get_fixed64(h + 16);
    if (magic != RV_WAL_MAGIC)
        wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE, "bad segment magic "
                       "0x%016llx (not a ravel WAL segment)",
                       (unsigned long long)magic);
    else if (version != RV_WAL_VERSION)
        wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE, "unsupported WAL version "
                       "%u (this ravel reads version %d)", version,
                       RV_WAL_VERSION);
    else if (hsize != RV_WAL_HEADER_SIZE)
        wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE, "bad segment header size "
                       "%u (expected %d)", hsize, RV_WAL_HEADER_SIZE);
    else if (number != s->number)
        wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE, "segment header says "
                       "number %llu but the file name says %llu",
                       (unsigned long long)number,
                       (unsigned long long)s->number);
    else
        return 1;
    return 0;
}

/* ------------------------------------------------------------ replaying */

/* A record at OFF whose checksum verified: checks what the checksum cannot
** (type, batch structure, sequence order) and hands it to the callback.
** Returns the callback's non-zero result, or 0 with *bad set if the record
** is corrupt (*pb describes it). */
static int wal_reader_deliver(struct wal_replay *r,
                              const struct wal_segment *s, size_t off,
                              int *bad, struct wal_problem *pb)
{
    const char *h = s->data + off;
    const char *p = h + RV_WAL_RECORD_HEADER_SIZE;
    uint32_t len = rv_get_fixed32(h + 8);
    size_t extent = off + rv_wal_record_size(len);
    uint64_t seq, count;

    *bad = 1;
    if ((unsigned char)h[12] != RV_WAL_BATCH || h[13] || h[14] || h[15]) {
        wal_reader_why(pb, off, extent, "unknown record type %u (reserved "
                       "bytes %02x %02x %02x)", (unsigned char)h[12],
                       (unsigned char)h[13], (unsigned char)h[14],
                       (unsigned char)h[15]);
        return 0;
    }
    if (rv_batch_validate(p, len)) {
        wal_reader_why(pb, off, extent, "record payload at byte offset %zu "
                       "is not a well-formed batch (%s)",
                       off + RV_WAL_RECORD_HEADER_SIZE, rv_errmsg_get());
        return 0;
    }
    seq = rv_batch_rep_sequence(p);
    count = rv_batch_rep_count(p);
    if (count && (seq == 0 || seq <= r->max_seq ||
                  seq > RV_MAX_SEQUENCE - (count - 1))) {
        wal_reader_why(pb, off, extent, "batch sequence %llu (%llu ops) does "
                       "not follow the last sequence replayed, %llu",
                       (unsigned long long)seq, (unsigned long long)count,
                       (unsigned long long)r->max_seq);
        return 0;
    }
    *bad = 0;
    if (r->fn) {
        int rc = r->fn(r->ctx, p, len);
        if (rc)
            return rc;
    }
    if (count)
        r->max_seq = seq + count - 1;
    r->result->records++;
    r->result->max_sequence = r->max_seq;
    return 0;
}

/* Reads the record at *OFF.  On a good record: delivers it, advances *OFF
** and sets *STATUS to 1.  At a clean end: *STATUS = 0.  On a bad record:
** *STATUS = -1 and *pb says what and where.  Returns only a callback's
** non-zero result. */
static int wal_reader_step(struct wal_replay *r, const struct wal_segment *s,
                           size_t *off, int *status, struct wal_problem *pb)
{
    size_t at = *off, avail = s->size - at;
    const char *h = s->data + at;

    if (avail < RV_WAL_RECORD_HEADER_SIZE) {
        if (wal_reader_zero(h, avail)) {
            *status = 0;
            return 0;
        }
        wal_reader_why(pb, at, SIZE_MAX, "record header truncated: %zu of "
                       "%d bytes before the end of the file", avail,
                       RV_WAL_RECORD_HEADER_SIZE);
    } else if (wal_reader_zero(h, RV_WAL_RECORD_HEADER_SIZE)) {
        if (wal_reader_zero(h + RV_WAL_RECORD_HEADER_SIZE,
                            avail - RV_WAL_RECORD_HEADER_SIZE)) {
            *status = 0;
            return 0;
        }
        wal_reader_why(pb, at, at + RV_WAL_RECORD_HEADER_SIZE, "zero record "
                       "header followed by non-zero data");
    } else {
        uint32_t len = rv_get_fixed32(h + 8);
        const char *p = h + RV_WAL_RECORD_HEADER_SIZE;
        if (len > avail - RV_WAL_RECORD_HEADER_SIZE) {
            wal_reader_why(pb, at, SIZE_MAX, "record of %u payload bytes "
                           "runs past the end of the file (%zu bytes)", len,
                           s->size);
        } else if (rv_get_fixed64(h) !=
                   rv_wal_record_checksum(s->number, h, p, len)) {
            wal_reader_why(pb, at, at + rv_wal_record_size(len),
                           "record checksum mismatch (%u payload bytes)",
                           len);
        } else {
            int bad;
            int rc = wal_reader_deliver(r, s, at, &bad, pb);
            if (rc)
                return rc;
            size_t next = at + rv_wal_record_size(len);
            if (next > s->size)
                next = s->size; /* padding cut by EOF: payload is whole */
            if (bad) {
                pb->kind = WAL_CORRUPT; /* it verified: not a torn write */
                pb->resume = next;
                *status = -1;
                return 0;
            }
            *off = next;
            *status = 1;
            return 0;
        }
    }
    wal_reader_classify(s, pb);
    *status = -1;
    return 0;
}

/* Applies the recovery mode to the problem *pb in segment S: returns
** RAVEL_CORRUPT, or 0 having set where to go on (*OFF), r->stop or
** s->cut. */
static int wal_reader_problem(struct wal_replay *r, struct wal_segment *s,
                              const struct wal_problem *pb, size_t *off)
{
    int tolerated;
    switch (r->mode) {
    case RV_RECOVERY_TOLERATE_CORRUPTED_TAIL:
    case RV_RECOVERY_SKIP_ANY_CORRUPTED:
        tolerated = pb->kind == WAL_TORN ||
                    r->mode == RV_RECOVERY_SKIP_ANY_CORRUPTED;
        break;
    case RV_RECOVERY_POINT_IN_TIME:
        tolerated = 1;
        break;
    default:
        tolerated = 0;
        break;
    }
    if (!tolerated)
        return rv_error(RAVEL_CORRUPT, "%s: byte offset %zu: %s (%s; "
                        "wal_recovery_mode=%s does not tolerate it)",
                        s->path, pb->off, pb->why,
                        pb->kind == WAL_TORN ?
                            "a torn write at the end of the log" :
                            "corruption",
                        rv_recovery_mode_name(r->mode));

    r->result->records_dropped++;
    if (pb->kind == WAL_TORN || r->mode == RV_RECOVERY_POINT_IN_TIME) {
        /* Cut here; for point_in_time also drop every later segment. */
        s->cut = pb->off;
        r->stop = 1;
        return RAVEL_OK;
    }
    /* skip_any_corrupted_records, corruption: go on after it. */
    if (pb->resume) {
        *off = pb->resume;
    } else {
        size_t from = pb->off + RV_WAL_ALIGN;
        if (from < RV_WAL_HEADER_SIZE)
            from = RV_WAL_HEADER_SIZE;
        size_t next = wal_reader_resync(s, from, s->size);
        *off = next == SIZE_MAX ? s->size : next;
    }
    return RAVEL_OK;
}

static int wal_reader_segment(struct wal_replay *r, struct wal_segment *s)
{
    struct wal_problem pb;
    size_t off = RV_WAL_HEADER_SIZE;
    int rc;

    if (!wal_reader_check_header(s, &pb)) {
        rc = wal_reader_problem(r, s, &pb, &off);
        if (rc || r->stop)
            return rc;
    }
    while (off < s->size) {
        int status;
        rc = wal_reader_step(r, s, &off, &status, &pb);
        if (rc)
            return rc;
        if (status == 0)
            break;
        if (status < 0) {
            rc = wal_reader_problem(r, s, &pb, &off);
            if (rc || r->stop)
                return rc;
        }
    }
    return RAVEL_OK;
}

int rv_wal_replay(const char *dir, const uint64_t *numbers, int n,
                  enum rv_recovery_mode mode, int read_only,
                  rv_wal_replay_fn fn, void *ctx,
                  struct rv_wal_replay_result *result)
{
    if (!dir || !result || n < 0 || (n > 0 && !numbers))
        return rv_error(RAVEL_INVALID, "rv_wal_replay: bad arguments");
    memset(result, 0, sizeof *result);
    for (int i = 1; i < n; i++)
        if (numbers[i] <= numbers[i - 1])
            return rv_error(RAVEL_INVALID, "rv_wal_replay: segment numbers "
                            "not ascending (%llu after %llu)",
                            (unsigned long long)numbers[i],
                            (unsigned long long)numbers[i - 1]);
    if (n > 0)
        result->last_segment = numbers[n - 1];

    struct wal_replay r = {
        .dir = dir, .numbers = numbers, .n = n, .mode = mode,
        .read_only = read_only, .fn = fn, .ctx = ctx, .result = result,
    };
    for (int i = 0; i < n && !r.stop; i++) {
        struct wal_segment s = {
            .number = numbers[i], .is_last = i == n - 1, .cut = WAL_NO_CUT,
        };
        int rc = rv_wal_segment_path(s.path, dir, s.number);
        if (!rc)
            rc = wal_reader_map(&s);
        if (rc)
            return rc;
        rc = wal_reader_segment(&r, &s);
        wal_reader_unmap(&s);
        if (rc)
            return rc;
        if (s.cut != WAL_NO_CUT && !read_only) {
            if (mode == RV_RECOVERY_POINT_IN_TIME)
                rc = wal_reader_delete_after(&r, i);
            if (!rc)
                rc = wal_reader_cut(&r, &s);
            if (rc)
                return rc;
        }
    }
    return RAVEL_OK;
}
