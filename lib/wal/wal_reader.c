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
** What can a crash or a power loss damage?  Every segment but the last
** was fdatasynced whole before the next one was created (at a switch, and
** at recovery -- db/recovery.c), and the next one's header records where
** its data ended (prev_end); a segment sealed at close ends with a seal
** record written after an fdatasync.  So only the tail of the LAST,
** unsealed segment, after its last completed fdatasync, can be damaged by
** a power loss -- and there the page cache may have written back any
** subset of pages: a bad record may be followed by records that verify.
**
** Hence the classification:
**   torn          a bad record (or header) with only zero bytes after it
**                 and no record that verifies behind it, in the last
**                 segment: a write cut short.
**   unsynced tail a record that fails its checksum or length in the last
**                 segment when it is not sealed, whatever follows: what a
**                 power loss leaves of pages never covered by an
**                 fdatasync.  No record after it can have been
**                 acknowledged as synced (an fdatasync that covered a
**                 later record covered this one too).
**   hole          a segment missing from the numbering, a first segment
**                 whose header names a predecessor (unless the manifest
**                 says the log starts there: its predecessors were flushed
**                 and deleted), a first segment other than the one the
**                 manifest says the log starts at, or a segment whose data
**                 does not end where the next one's header says it did.
**   corruption    everything else: a record that verified but is
**                 malformed, damage in a segment that is not the last or
**                 in a sealed one, a bad header with data behind it.
** tolerate_corrupted_tail_records (the default) drops torn and unsynced
** tails, so it opens every database a power loss can produce without
** losing a synced write, and refuses corruption and holes.
**
** Version 3 segments (wal_io=direct; wal_format.h) end their data
** differently: at a zero record header (or zeros to the end of the block),
** or at a block boundary at bytes whose tag is another segment's, unless
** a skip record at the next boundary names that very offset -- and what
** follows the end is not read, since a recycled file keeps its earlier
** lives there and a crash may keep writes that completed after one that
** was lost (wal_reader_v3_end).  In a sealed one, only a skip record may
** continue the data before the seal; an end there is damage.  Spares (an
** all-zero header) at the end of the log are dropped in every mode
** (wal_reader_drop_spares).
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
#include "base/batchrepr.h"
#include "util/coding.h"
#include "base/dbformat.h"
#include "util/error.h"
#include "util/sync_journal.h"
#include "wal/wal_format.h"

#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
    int in_header;    /* the segment header is bad */
    int verified;     /* the record's checksum verified: not a torn write */
    char why[320];
};

struct wal_segment {
    char path[RV_PATH_MAX];
    uint64_t number;
    const char *data;  /* the mapped file; NULL when it is empty */
    size_t size;
    int is_last;
    size_t header_size;/* 48 (version 3), 40 (version 2), 32 (version 1) */
    int version;       /* the header's version, once checked */
    uint32_t tag;      /* version 3: what its records' tag bytes hold */
    uint32_t block;    /* version 3: the block size it was written in */
    uint64_t prev_end; /* version 2: where the predecessor's data ended */
    int sealed;        /* the segment ends with a seal record */
    int after_seal;    /* the walk has passed the seal: only zeros may
                       ** follow */
    size_t data_end;   /* where the walk found the clean end */
    size_t cut;        /* truncate here once unmapped (< header size:
                       ** delete the file); WAL_NO_CUT to keep it */
    int copied;        /* DATA is a malloc'd copy, not a mapping ... */
    int partial;       /* ... of the file's first SIZE bytes only: the
                       ** copy stopped at a chunk of zeros */
};

struct wal_replay {
    const char *dir;
    uint64_t first_number; /* where the log starts after a flush, or 0 */
    const uint64_t *numbers;
    int n;
    enum rv_recovery_mode mode;
    int read_only;
    rv_wal_replay_fn fn;
    void *ctx;
    struct rv_wal_replay_result *result;
    uint64_t start_offset; /* where the walk of numbers[0] begins (0: after
                           ** its header): a reader's tail */
    uint64_t max_seq;  /* last sequence number replayed */
    int stop;          /* replay ends after the current segment */
    int have_prev;     /* a segment was replayed before the current one */
    uint64_t prev_number; /* ... its number */
    size_t prev_data_end; /* ... and its data ended here */
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
    pb->in_header = 0;
    pb->verified = 0;
    va_start(ap, fmt);
    vsnprintf(pb->why, sizeof pb->why, fmt, ap);
    va_end(ap);
}

static int wal_reader_zero(const char *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* ---------------------------------------------------------- segment files */

/* A read-only replay reads a segment in chunks of this many bytes, and
** stops after one that is all zero (wal_reader_copy). */
#define WAL_READER_CHUNK (256u << 10)

/* Reads bytes [LO, HI) of FD into BUF + LO; *END receives where the file
** ended if before HI (trimmed meanwhile), else HI. */
static int wal_reader_pread(struct wal_segment *s, int fd, char *buf,
                            size_t lo, size_t hi, size_t *end)
{
    size_t off = lo;
    while (off < hi) {
        ssize_t n = pread(fd, buf + off, hi - off, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rv_error_errno(RAVEL_IOERR, errno, "read %s", s->path);
        if (n == 0)
            break;
        off += (size_t)n;
    }
    *end = off;
    return RAVEL_OK;
}

/* Reads S's file (FD, s->size bytes) into a malloc'd copy instead of
** mapping it: what a read-only replay does, since the file may belong to
** a live writer, which trims a finished segment's preallocated tail (a
** mapping would fault on the pages cut off) and writes its tail while it
** is read (a copy is a fixed picture; a record caught half-written fails
** its checksum and ends the walk there, as a torn tail).  With FROM > 0
** only the header and the bytes from FROM on are read; the rest stays
** zero and is never walked.  Unless WHOLE, reading stops after a chunk of
** zeros (a live segment's preallocated rest: a reader catching up often
** must not read it all each time), s->partial set: a walk that needs
** more than was read asks for the whole file (wal_reader_step). */
static int wal_reader_copy(struct wal_segment *s, int fd, uint64_t from,
                           int whole)
{
    size_t file_size = s->size, end;
    char *buf = calloc(1, file_size ? file_size : 1);
    if (!buf)
        return rv_error(RAVEL_NOMEM, "out of memory reading %s (%zu bytes)",
                        s->path, file_size);
    size_t head = RV_WAL_V3_HEADER_SIZE < file_size ? RV_WAL_V3_HEADER_SIZE
                                                     : file_size;
    int rc = wal_reader_pread(s, fd, buf, 0, head, &end);
    size_t off = end;
    int more = rc == RAVEL_OK && end == head; /* not trimmed meanwhile */
    if (more)
        off = from > head && from < file_size ? (size_t)from : head;
    s->partial = 0;
    while (more && off < file_size) {
        size_t hi = file_size - off > WAL_READER_CHUNK
                        ? off + WAL_READER_CHUNK : file_size;
        rc = wal_reader_pread(s, fd, buf, off, hi, &end);
        if (rc || end < hi) {
            off = end; /* trimmed meanwhile: the file ends there */
            break;
        }
        int zeros = !whole && hi < file_size &&
                    wal_reader_zero(buf + off, hi - off);
        off = hi;
        if (zeros)
            s->partial = 1;
        if (zeros)
            break;
    }
    if (rc) {
        free(buf);
        return rc;
    }
    s->size = off;
    s->data = buf;
    s->copied = 1;
    return RAVEL_OK;
}

static int wal_reader_map(struct wal_segment *s, int read_only, uint64_t from)
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
    if (read_only) {
        rc = wal_reader_copy(s, fd, from, 0);
    } else if (s->size) {
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

/* Waits until no direct write is in flight on PATH.  A process killed
** with direct WAL writes in flight (wal_io=direct) is reaped before the
** kernel has finished them: they may land after the next open has begun
** reading the file, and collide with its page cache.  fallocate waits for
** the direct I/O in flight on the inode (ext4, XFS); the range asked for
** (the first byte, the size kept) is already allocated, so it changes
** nothing.  Best effort: where fallocate is not supported there is no
** such wait to be had. */
static void wal_reader_quiesce(const char *path)
{
    int fd = rv_open(path, O_WRONLY, 0);
    if (fd < 0)
        return;
    (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1);
    close(fd);
}

static void wal_reader_unmap(struct wal_segment *s)
{
    if (s->copied)
        free((void *)s->data);
    else if (s->data)
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
    if (s->cut < RV_WAL_V1_HEADER_SIZE)
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
    if (rc == RAVEL_OK)
        rv_sync_journal_file(fd, s->cut);
    close(fd);
    return rc;
}

/* ---------------------------------------------------------- classifying */

/* Whether the record header H carries the tag records of S carry (zero
** bytes before version 3). */
static int wal_reader_tag_ok(const struct wal_segment *s, const char *h)
{
    return rv_wal_record_tag(h) == (s->version == 3 ? s->tag : 0);
}

/* 1 if a record whose checksum verifies starts at OFF. */
static int wal_reader_verifies(const struct wal_segment *s, size_t off)
{
    if (off > s->size || s->size - off < RV_WAL_RECORD_HEADER_SIZE)
        return 0;
    const char *h = s->data + off;
    if (h[12] == 0 || !wal_reader_tag_ok(s, h))
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
    if (from < s->header_size)
        from = s->header_size;
    if (wal_reader_resync(s, from, end) != SIZE_MAX)
        return;
    pb->kind = WAL_TORN;
}

/* Which header layout verifies at the start of S: 3, 2, 1, or 0 if
** none. */
static int wal_reader_header_layout(const struct wal_segment *s)
{
    const char *h = s->data;
    if (s->size >= RV_WAL_V3_HEADER_SIZE &&
        rv_get_fixed64(h + 40) == XXH3_64bits(h, 40))
        return 3;
    if (s->size >= RV_WAL_HEADER_SIZE &&
        rv_get_fixed64(h + 32) == XXH3_64bits(h, 32))
        return 2;
    if (s->size >= RV_WAL_V1_HEADER_SIZE &&
        rv_get_fixed64(h + 24) == XXH3_64bits(h, 24))
        return 1;
    return 0;
}

static int wal_reader_block_ok(uint32_t block)
{
    return block >= 512 && block <= 65536 && (block & (block - 1)) == 0;
}

/* 1 if the segment header is good (setting s->header_size, s->prev_end);
** else 0 with *pb describing it. */
static int wal_reader_check_header(struct wal_segment *s,
                                   struct wal_problem *pb)
{
    const char *h = s->data;
    int layout = wal_reader_header_layout(s);
    if (!layout) {
        if (s->size < RV_WAL_HEADER_SIZE)
            wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE, "segment header "
                           "truncated: the file has %zu of its %d bytes",
                           s->size, RV_WAL_HEADER_SIZE);
        else
            wal_reader_why(pb, 0, RV_WAL_HEADER_SIZE,
                           "segment header checksum mismatch");
        pb->in_header = 1;
        wal_reader_classify(s, pb);
        return 0;
    }
    /* The checksum verified: whatever is wrong now was written so. */
    size_t expect_size = layout == 3   ? RV_WAL_V3_HEADER_SIZE
                         : layout == 2 ? RV_WAL_HEADER_SIZE
                                       : RV_WAL_V1_HEADER_SIZE;
    uint64_t magic = rv_get_fixed64(h);
    uint32_t version = rv_get_fixed32(h + 8);
    uint32_t hsize = rv_get_fixed32(h + 12);
    uint64_t number = rv_get_fixed64(h + 16);
    if (magic != RV_WAL_MAGIC)
        wal_reader_why(pb, 0, expect_size, "bad segment magic 0x%016llx "
                       "(not a ravel WAL segment)", (unsigned long long)magic);
    else if (version >= 1 && version <= RV_WAL_DIRECT_VERSION &&
             version != (uint32_t)layout)
        wal_reader_why(pb, 0, expect_size, "WAL version %u in the %zu-byte "
                       "header layout of version %d", version, expect_size,
                       layout);
    else if (version != (uint32_t)layout)
        wal_reader_why(pb, 0, expect_size, "unsupported WAL version %u (this "
                       "ravel reads versions 1 to %d)", version,
                       RV_WAL_DIRECT_VERSION);
    else if (hsize != expect_size)
        wal_reader_why(pb, 0, expect_size, "bad segment header size %u "
                       "(expected %zu)", hsize, expect_size);
    else if (number != s->number)
        wal_reader_why(pb, 0, expect_size, "segment header says number %llu "
                       "but the file name says %llu",
                       (unsigned long long)number,
                       (unsigned long long)s->number);
    else if (layout == 3 && !wal_reader_block_ok(rv_get_fixed32(h + 32)))
        wal_reader_why(pb, 0, expect_size, "bad block size %u in a version "
                       "3 segment header (a power of two from 512 to 64K "
                       "expected)", rv_get_fixed32(h + 32));
    else {
        s->header_size = expect_size;
        s->version = layout;
        s->prev_end = layout >= 2 ? rv_get_fixed64(h + 24) : 0;
        s->tag = rv_wal_tag(s->number);
        s->block = layout == 3 ? rv_get_fixed32(h + 32) : 0;
        return 1;
    }
    pb->in_header = 1;
    return 0;
}

/* 1 if S ends with a seal record (wal_format.h): ravel closed it after an
** fdatasync of everything in it. */
static int wal_reader_is_sealed(const struct wal_segment *s)
{
    if (s->size < s->header_size + RV_WAL_SEAL_SIZE)
        return 0;
    size_t at = s->size - RV_WAL_SEAL_SIZE;
    const char *h = s->data + at;
    return at % RV_WAL_ALIGN == 0 && wal_reader_verifies(s, at) &&
           (unsigned char)h[12] == RV_WAL_SEAL &&
           rv_get_fixed32(h + 8) == RV_WAL_SEAL_PAYLOAD &&
           rv_get_fixed64(h + RV_WAL_RECORD_HEADER_SIZE) == at;
}

/* ------------------------------------------------------------ replaying */

/* A record at OFF whose checksum verified: checks what the checksum cannot
** (type, batch structure, sequence order) and hands it to the callback.
** Returns the callback's non-zero result, or 0 with *bad set if the record
** is corrupt (*pb describes it). */
static int wal_reader_deliver(struct wal_replay *r,
                              struct wal_segment *s, size_t off,
                              int *bad, struct wal_problem *pb)
{
    const char *h = s->data + off;
    const char *p = h + RV_WAL_RECORD_HEADER_SIZE;
    uint32_t len = rv_get_fixed32(h + 8);
    size_t extent = off + rv_wal_record_size(len);
    uint64_t seq, count;

    *bad = 1;
    if ((unsigned char)h[12] == RV_WAL_SEAL && wal_reader_tag_ok(s, h)) {
        if (len != RV_WAL_SEAL_PAYLOAD ||
            rv_get_fixed64(p) != (uint64_t)off) {
            wal_reader_why(pb, off, extent, "seal record of %u bytes does "
                           "not name its own offset", len);
            return 0;
        }
        *bad = 0;
        s->after_seal = 1;
        return 0;
    }
    if ((unsigned char)h[12] == RV_WAL_SKIP && s->version == 3 &&
        len == RV_WAL_SKIP_PAYLOAD && rv_get_fixed64(p) == (uint64_t)off &&
        off % s->block == 0) {
        *bad = 0; /* the data before it ended right here: nothing skipped */
        return 0;
    }
    if ((unsigned char)h[12] != RV_WAL_BATCH || !wal_reader_tag_ok(s, h)) {
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

/* Version 3: whether the data ends at AT -- a zero record header, or at a
** block boundary 16 bytes whose tag is not this segment's (the file's
** earlier life, whatever those bytes were there: a header or the middle
** of a payload) -- returning 1 with *OFF = AT, or continues after a skip
** record at the next block boundary that names AT (returning 1 with *OFF
** past it).  0: a header that belongs here (good or damaged).  In a
** sealed segment only a skip record may continue the data before the
** seal: an end there is damage (0), since all of it was durable. */
static int wal_reader_v3_end(const struct wal_segment *s, size_t at,
                             size_t *off)
{
    const char *h = s->data + at;
    size_t b = (at + s->block - 1) / s->block * s->block;
    /* Zeros to the end of the block end the data even when fewer than a
    ** header's 16 bytes are left in it: what follows the boundary was
    ** written by another write (a skip record, or nothing). */
    size_t n = b > at && b - at < RV_WAL_RECORD_HEADER_SIZE
                   ? b - at : RV_WAL_RECORD_HEADER_SIZE;
    int zero = wal_reader_zero(h, n);
    if (!zero && !(at % s->block == 0 && rv_wal_record_tag(h) != s->tag))
        return 0;
    *off = at;
    if (zero && b > at && b <= s->size && s->size - b >= RV_WAL_SKIP_SIZE &&
        wal_reader_verifies(s, b)) {
        const char *k = s->data + b;
        if ((unsigned char)k[12] == RV_WAL_SKIP &&
            rv_get_fixed32(k + 8) == RV_WAL_SKIP_PAYLOAD &&
            rv_get_fixed64(k + RV_WAL_RECORD_HEADER_SIZE) == (uint64_t)at)
            *off = b + RV_WAL_SKIP_SIZE;
    }
    return *off != at || !s->sealed;
}

/* Reads the record at *OFF.  On a good record: delivers it, advances *OFF
** and sets *STATUS to 1.  At a clean end: *STATUS = 0.  On a bad record:
** *STATUS = -1 and *pb says what and where.  A record that runs past a
** partial copy (wal_reader_copy): *STATUS = 2, the whole file is needed.
** Returns only a callback's non-zero result. */
static int wal_reader_step(struct wal_replay *r, struct wal_segment *s,
                           size_t *off, int *status, struct wal_problem *pb)
{
    size_t at = *off, avail = s->size - at;
    const char *h = s->data + at;

    if (s->after_seal) {
        /* Version 3: a kill -9 between the seal's block write and the
        ** trim leaves the rest of the block and, in a recycled file, its
        ** earlier life after the seal: not data. */
        if (s->version == 3 || wal_reader_zero(h, avail)) {
            *status = 0;
            return 0;
        }
        wal_reader_why(pb, at, SIZE_MAX, "data after the seal record that "
                       "ends the segment");
        pb->verified = 1; /* the seal verified: nothing may follow it */
        *status = -1;
        return 0;
    }
    if (avail < RV_WAL_RECORD_HEADER_SIZE) {
        if (wal_reader_zero(h, avail)) {
            *status = 0;
            return 0;
        }
        wal_reader_why(pb, at, SIZE_MAX, "record header truncated: %zu of "
                       "%d bytes before the end of the file", avail,
                       RV_WAL_RECORD_HEADER_SIZE);
    } else if (s->version == 3 && wal_reader_v3_end(s, at, off)) {
        *status = *off == at ? 0 : 1;
        return 0;
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
        if (len > avail - RV_WAL_RECORD_HEADER_SIZE && s->partial) {
            *status = 2; /* a long record: read the whole file */
            return 0;
        }
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
                pb->verified = 1;
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

/* Whether mode tolerate_corrupted_tail_records drops the problem *pb of
** segment S, and if not, why it is not a tail, into WHY. */
static int wal_reader_is_tail(const struct wal_segment *s,
                              const struct wal_problem *pb, const char **why)
{
    if (pb->kind == WAL_TORN)
        return 1;
    if (!s->is_last)
        *why = "corruption: a segment that is not the last was made durable "
               "whole before the next one began";
    else if (pb->in_header)
        *why = "corruption: the segment header was made durable before any "
               "record was written";
    else if (pb->verified)
        *why = "corruption: the record's checksum verified, so it was "
               "written this way";
    else if (s->sealed)
        *why = "corruption: the segment was sealed at close after an "
               "fdatasync of all of it, so this is damage, not a torn write";
    else
        return 1; /* the unsynced tail of the last segment */
    return 0;
}

/* Counts the records that verify in S from OFF on: what dropping a tail
** there throws away besides the bad record itself. */
static uint64_t wal_reader_count_after(const struct wal_segment *s,
                                       size_t off)
{
    uint64_t n = 0;
    size_t at = wal_reader_resync(s, off + RV_WAL_ALIGN, s->size);
    while (at != SIZE_MAX) {
        n++;
        size_t next = at + rv_wal_record_size(rv_get_fixed32(s->data + at + 8));
        at = wal_reader_resync(s, next, s->size);
    }
    return n;
}

/* Applies the recovery mode to the problem *pb in segment S: returns
** RAVEL_CORRUPT, or 0 having set where to go on (*OFF), r->stop or
** s->cut. */
static int wal_reader_problem(struct wal_replay *r, struct wal_segment *s,
                              const struct wal_problem *pb, size_t *off)
{
    const char *why = pb->kind == WAL_TORN ?
                          "a torn write at the end of the log" : "corruption";
    int tolerated, cut;
    switch (r->mode) {
    case RV_RECOVERY_TOLERATE_CORRUPTED_TAIL:
        tolerated = cut = wal_reader_is_tail(s, pb, &why);
        break;
    case RV_RECOVERY_POINT_IN_TIME:
        tolerated = cut = 1;
        break;
    case RV_RECOVERY_SKIP_ANY_CORRUPTED:
        tolerated = 1;
        cut = pb->kind == WAL_TORN;
        break;
    default:
        tolerated = cut = 0;
        break;
    }
    if (!tolerated)
        return rv_error(RAVEL_CORRUPT, "%s: byte offset %zu: %s (%s; "
                        "wal_recovery_mode=%s does not tolerate it)",
                        s->path, pb->off, pb->why, why,
                        rv_recovery_mode_name(r->mode));

    r->result->records_dropped++;
    if (cut) {
        /* Cut here; for point_in_time also drop every later segment. */
        if (!pb->in_header)
            r->result->records_dropped += wal_reader_count_after(s, pb->off);
        s->cut = pb->off;
        s->data_end = pb->off;
        r->stop = 1;
        return RAVEL_OK;
    }
    /* skip_any_corrupted_records, corruption: go on after it. */
    if (pb->resume) {
        *off = pb->resume;
    } else {
        size_t from = pb->off + RV_WAL_ALIGN;
        if (from < s->header_size)
            from = s->header_size;
        size_t next = wal_reader_resync(s, from, s->size);
        *off = next == SIZE_MAX ? s->size : next;
    }
    return RAVEL_OK;
}

/* A hole in the log (wal_reader.c's top comment): RAVEL_CORRUPT naming
** it, except under skip_any_corrupted_records, which goes on. */
static int wal_reader_hole(struct wal_replay *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int wal_reader_hole(struct wal_replay *r, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (r->mode == RV_RECOVERY_SKIP_ANY_CORRUPTED) {
        r->result->holes++;
        return RAVEL_OK;
    }
    return rv_error(RAVEL_CORRUPT, "%s (a hole in the write-ahead log: "
                    "acknowledged writes are missing; wal_recovery_mode=%s "
                    "does not tolerate it)", what,
                    rv_recovery_mode_name(r->mode));
}

/* Checks that segment S (header read) follows the one replayed before
** it, or starts the log. */
static int wal_reader_check_chain(struct wal_replay *r,
                                  const struct wal_segment *s)
{
    if (!r->have_prev) {
        if (s->prev_end == 0)
            return RAVEL_OK;
        if (r->first_number && s->number == r->first_number)
            return RAVEL_OK; /* its predecessor was flushed and deleted */
        return wal_reader_hole(r, "%s: the segment continues the log from "
                               "segment %llu (which ended at byte offset "
                               "%llu), but that segment is missing", s->path,
                               (unsigned long long)(s->number - 1),
                               (unsigned long long)s->prev_end);
    }
    if (s->header_size == RV_WAL_V1_HEADER_SIZE)
        return RAVEL_OK; /* version 1 vouches for nothing */
    if (s->number != r->prev_number + 1)
        return RAVEL_OK; /* a gap in the numbering, reported already */
    if (s->prev_end == r->prev_data_end)
        return RAVEL_OK;
    char prev[32];
    rv_wal_segment_name(prev, sizeof prev, s->number - 1);
    return wal_reader_hole(r, "%s: its header says %s ended at byte offset "
                           "%llu, but the data of %s ends at byte offset %zu",
                           s->path, prev, (unsigned long long)s->prev_end,
                           prev, r->prev_data_end);
}

/* A partial copy of S (wal_reader_copy) met a record longer than it
** holds: reads the whole file again. */
static int wal_reader_reread_whole(struct wal_segment *s)
{
    int fd = rv_open(s->path, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", s->path);
    struct stat st;
    int rc = fstat(fd, &st) == 0
                 ? RAVEL_OK
                 : rv_error_errno(RAVEL_IOERR, errno, "stat %s", s->path);
    if (rc == RAVEL_OK) {
        wal_reader_unmap(s);
        s->size = (size_t)st.st_size;
        rc = wal_reader_copy(s, fd, 0, 1);
    }
    close(fd);
    if (rc == RAVEL_OK)
        s->sealed = wal_reader_is_sealed(s);
    return rc;
}

static int wal_reader_segment(struct wal_replay *r, struct wal_segment *s)
{
    struct wal_problem pb;
    size_t off;
    int rc;

    if (wal_reader_check_header(s, &pb)) {
        rc = wal_reader_check_chain(r, s);
        if (rc)
            return rc;
        off = s->header_size;
        if (!r->have_prev && r->start_offset > off &&
            s->number == r->numbers[0])
            off = (size_t)r->start_offset; /* a reader's tail: go on */
        s->sealed = wal_reader_is_sealed(s);
    } else {
        rc = wal_reader_problem(r, s, &pb, &off);
        if (rc || r->stop)
            return rc;
    }
    while (off < s->size) {
        int status;
        rc = wal_reader_step(r, s, &off, &status, &pb);
        if (rc)
            return rc;
        if (status == 2) {
            rc = wal_reader_reread_whole(s);
            if (rc)
                return rc;
            continue;
        }
        if (status == 0)
            break;
        if (status < 0) {
            rc = wal_reader_problem(r, s, &pb, &off);
            if (rc || r->stop)
                return rc;
        }
    }
    s->data_end = off < s->size ? off : s->size;
    return RAVEL_OK;
}

/* Checks that the segment numbers are consecutive: a missing one is a
** hole. */
static int wal_reader_check_numbers(struct wal_replay *r)
{
    if (r->first_number && r->n > 0 && r->numbers[0] != r->first_number) {
        char name[32];
        rv_wal_segment_name(name, sizeof name, r->first_number);
        int rc = wal_reader_hole(r, "%s/%s is missing: the manifest says "
                                 "the log starts there, and segment %llu "
                                 "follows", r->dir, name,
                                 (unsigned long long)r->numbers[0]);
        if (rc)
            return rc;
    }
    for (int i = 1; i < r->n; i++) {
        if (r->numbers[i] == r->numbers[i - 1] + 1)
            continue;
        char name[32];
        rv_wal_segment_name(name, sizeof name, r->numbers[i - 1] + 1);
        int rc = wal_reader_hole(r, "%s/%s is missing: the segments before "
                                 "and after it (%llu and %llu) are there",
                                 r->dir, name,
                                 (unsigned long long)r->numbers[i - 1],
                                 (unsigned long long)r->numbers[i]);
        if (rc)
            return rc;
    }
    return RAVEL_OK;
}

/* Whether the segment file PATH is a spare (wal_format.h): its first
** RV_WAL_V3_HEADER_SIZE bytes, or all it has if fewer, are zero.  Sets
** *SIZE to the file's size. */
static int wal_reader_is_spare(const char *path, uint64_t *size, int *err)
{
    char h[RV_WAL_V3_HEADER_SIZE];
    *err = 0;
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0) {
        *err = errno;
        return 0;
    }
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 ? pread(fd, h, sizeof h, 0) : -1;
    if (n < 0)
        *err = errno;
    close(fd);
    *size = n < 0 ? 0 : (uint64_t)st.st_size;
    return n >= 0 && wal_reader_zero(h, (size_t)n);
}

/* Drops the spares at the end of the log from the N segments: a spare
** was never started, so it holds nothing and must not be taken for the
** log's last segment.  Replay never deletes them (result->spare_from):
** the caller does, once what it opens no longer needs to know they were
** there (recovery.c, after the new manifest is durable). */
static int wal_reader_drop_spares(struct wal_replay *r, int *n)
{
    while (*n > 0) {
        char path[RV_PATH_MAX];
        uint64_t size;
        int err, rc = rv_wal_segment_path(path, r->dir, r->numbers[*n - 1]);
        if (rc)
            return rc;
        if (!wal_reader_is_spare(path, &size, &err)) {
            if (err == ENOENT && r->read_only) {
                /* listed, then gone under a reader in another process:
                ** the writer deletes only a spare at the end of the log
                ** (wal_io=auto leaving direct drops the next one); the
                ** reader meets the log as it is on its next look.  An
                ** open holding the LOCK calls a listed segment that
                ** vanished damage (below). */
                (*n)--;
                continue;
            }
            if (err)
                return rv_error_errno(RAVEL_IOERR, err, "read %s", path);
            return RAVEL_OK;
        }
        r->result->spares++;
        (*n)--;
    }
    return RAVEL_OK;
}

/* rv_wal_replay and rv_wal_replay_tail: the walk of numbers[0] begins at
** START_OFFSET (0: after its header), the sequences replayed must follow
** START_SEQ. */
static int wal_reader_run(const char *dir, uint64_t first_number,
                          const uint64_t *numbers, int n,
                          enum rv_recovery_mode mode, int read_only,
                          uint64_t start_offset, uint64_t start_seq,
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
        result->highest_segment = numbers[n - 1];

    struct wal_replay r = {
        .dir = dir, .first_number = first_number, .numbers = numbers,
        .n = n, .mode = mode,
        .read_only = read_only, .fn = fn, .ctx = ctx, .result = result,
        .start_offset = start_offset, .max_seq = start_seq,
    };
    result->max_sequence = start_seq;
    int listed = n;
    int rc = wal_reader_drop_spares(&r, &n);
    r.n = n;
    if (rc == RAVEL_OK)
        rc = wal_reader_check_numbers(&r);
    for (int i = 0; i < n && !r.stop && rc == RAVEL_OK; i++) {
        struct wal_segment s = {
            .number = numbers[i], .is_last = i == n - 1, .cut = WAL_NO_CUT,
            .header_size = RV_WAL_HEADER_SIZE, .version = 2,
        };
        rc = rv_wal_segment_path(s.path, dir, s.number);
        if (!rc && !read_only)
            wal_reader_quiesce(s.path);
        if (!rc)
            rc = wal_reader_map(&s, read_only,
                                i == 0 ? r.start_offset : 0);
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
        }
        if (s.cut == WAL_NO_CUT || s.cut >= RV_WAL_V1_HEADER_SIZE) {
            result->last_segment = s.number;
            result->last_end = s.data_end;
            result->last_sealed = s.after_seal && s.cut == WAL_NO_CUT;
            r.have_prev = 1;
            r.prev_number = s.number;
            r.prev_data_end = s.data_end;
        }
    }
    if (listed > n)
        result->spare_from = numbers[n];
    return rc;
}

int rv_wal_replay(const char *dir, uint64_t first_number,
                  const uint64_t *numbers, int n,
                  enum rv_recovery_mode mode, int read_only,
                  rv_wal_replay_fn fn, void *ctx,
                  struct rv_wal_replay_result *result)
{
    return wal_reader_run(dir, first_number, numbers, n, mode, read_only, 0,
                          0, fn, ctx, result);
}

int rv_wal_replay_tail(const char *dir, const uint64_t *numbers, int n,
                       enum rv_recovery_mode mode, uint64_t offset,
                       uint64_t last_seq, rv_wal_replay_fn fn, void *ctx,
                       struct rv_wal_replay_result *result)
{
    return wal_reader_run(dir, n > 0 ? numbers[0] : 0, numbers, n, mode, 1,
                          offset, last_seq, fn, ctx, result);
}
