/*
** test_wal_reader.c -- WAL replay on real segment files, under each of the
** four recovery modes, read-write and read-only.
**
** Each scenario writes segments into a fresh temporary directory with
** rv_wal_encode_segment_header / rv_wal_seal_record, damages them the
** way a crash or a bad disk would, and states per mode: the result code,
** the batches delivered (by sequence), and every file's size afterwards
** (-1: deleted).  The runner replays it in all 4 modes x {read-write,
** read-only}; read-only runs and failed runs must leave every byte of
** every file as it was.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/batch.h"
#include "util/coding.h"
#include "db/dbformat.h"
#include "wal/wal_format.h"
#include "util/filename.h"
#include "wal/wal_reader.h"

#include <xxhash.h>

#define MAXSEG 4
#define MAXREC 16
#define OPS_PER_RECORD 2

static char g_dir[256];

/* ----------------------------------------------------------- segments */

struct seg {
    uint64_t number;
    char *buf;
    size_t len, cap;
    size_t rec[MAXREC]; /* offsets of the records added */
    int nrec;
    size_t data_end;    /* where the data ends: after the last record */
};

/* The segment written last, for the next one's prev_end (wal_format.h):
** a scenario's segments chain up as the writer's do. */
static int g_chain_valid;
static uint64_t g_chain_number;
static size_t g_chain_end;

static void seg_reserve(struct seg *s, size_t n)
{
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2;
        s->buf = realloc(s->buf, s->cap);
        assert_non_null(s->buf);
    }
}

static void seg_begin(struct seg *s, uint64_t number)
{
    memset(s, 0, sizeof *s);
    s->number = number;
    seg_reserve(s, RV_WAL_HEADER_SIZE);
    uint64_t prev_end = g_chain_valid && g_chain_number + 1 == number
                            ? g_chain_end : 0;
    rv_wal_encode_segment_header(s->buf, number, prev_end);
    s->len = RV_WAL_HEADER_SIZE;
    s->data_end = s->len;
}

/* A whole record at DST (rv_wal_record_size(len) bytes) as the writer
** makes one: the payload placed after the header, then sealed. */
static size_t rec_encode(char *dst, uint64_t segment_number, int type,
                         const char *payload, size_t len)
{
    if (len)
        memcpy(dst + RV_WAL_RECORD_HEADER_SIZE, payload, len);
    return rv_wal_seal_record(dst, segment_number, type, len);
}

/* Appends a record with payload REP (LEN bytes); returns its offset. */
static size_t seg_add_rep(struct seg *s, const char *rep, size_t len)
{
    size_t off = s->len;
    seg_reserve(s, rv_wal_record_size(len));
    s->len += rec_encode(s->buf + off, s->number, RV_WAL_BATCH, rep, len);
    assert_true(s->nrec < MAXREC);
    s->rec[s->nrec++] = off;
    s->data_end = s->len;
    return off;
}

/* Appends the seal record that close writes (wal_format.h). */
static size_t seg_seal(struct seg *s)
{
    size_t off = s->len;
    seg_reserve(s, RV_WAL_SEAL_SIZE);
    rv_wal_encode_seal(s->buf + off, s->number, off);
    s->len += RV_WAL_SEAL_SIZE;
    s->data_end = s->len;
    return off;
}

/* Appends a batch of OPS_PER_RECORD puts with sequence SEQ. */
static size_t seg_add(struct seg *s, uint64_t seq)
{
    struct ravel_batch b;
    rv_batch_init(&b);
    for (int i = 0; i < OPS_PER_RECORD; i++) {
        char k[32], v[48];
        int kn = snprintf(k, sizeof k, "key-%llu-%d", (unsigned long long)seq,
                          i);
        int vn = snprintf(v, sizeof v, "value-%llu-%d-padding",
                          (unsigned long long)seq, i);
        assert_int_equal(rv_batch_add(&b, RV_TYPE_PUT, k, (size_t)kn, v,
                                      (size_t)vn), RAVEL_OK);
    }
    rv_put_fixed64(b.rep, seq);
    size_t off = seg_add_rep(s, b.rep, b.len);
    rv_batch_release(&b);
    return off;
}

static void seg_zeros(struct seg *s, size_t n)
{
    seg_reserve(s, n);
    memset(s->buf + s->len, 0, n);
    s->len += n;
}

static void seg_path(char *buf, size_t size, uint64_t number)
{
    char name[64];
    rv_wal_segment_name(name, sizeof name, number);
    snprintf(buf, size, "%s/%s", g_dir, name);
}

/* Writes the first LEN bytes of S to its file (LEN = s->len: all). */
static void seg_write_len(struct seg *s, size_t len)
{
    char path[512];
    seg_path(path, sizeof path, s->number);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, s->buf, len), (ssize_t)len);
    close(fd);
    g_chain_valid = 1;
    g_chain_number = s->number;
    g_chain_end = s->data_end;
    free(s->buf);
    s->buf = NULL;
}

static void seg_write(struct seg *s)
{
    seg_write_len(s, s->len);
}

/* ----------------------------------------------------------- scenarios */

struct outcome {
    int rc;
    int nseq;
    uint64_t seqs[MAXREC * MAXSEG];
    long long size[MAXSEG]; /* after a read-write replay; -1: deleted */
    uint64_t dropped;
    uint64_t truncated;     /* bytes_truncated of a read-write replay */
    int err_seg;            /* RAVEL_CORRUPT: index of the segment ... */
    size_t err_off;         /* ... and byte offset the message names */
    const char *hole;       /* or: a hole, and the file the message names */
    uint64_t holes;         /* holes passed over (skip mode) */
};

struct layout {
    int nseg;
    uint64_t numbers[MAXSEG];
    long long size[MAXSEG]; /* as written */
    struct outcome out[4];  /* by enum rv_recovery_mode */
};

static void layout_add(struct layout *L, struct seg *s, size_t written)
{
    L->numbers[L->nseg] = s->number;
    L->size[L->nseg] = (long long)written;
    L->nseg++;
}

/* Default outcome for every mode: OK, SEQS delivered, nothing changed. */
static void expect_all_ok(struct layout *L, const uint64_t *seqs, int n)
{
    for (int m = 0; m < 4; m++) {
        struct outcome *o = &L->out[m];
        memset(o, 0, sizeof *o);
        o->rc = RAVEL_OK;
        o->nseq = n;
        if (n)
        memcpy(o->seqs, seqs, sizeof *seqs * (size_t)n);
        for (int i = 0; i < L->nseg; i++)
            o->size[i] = L->size[i];
    }
}

static void expect_corrupt(struct layout *L, int mode, int seg, size_t off)
{
    struct outcome *o = &L->out[mode];
    memset(o, 0, sizeof *o);
    o->rc = RAVEL_CORRUPT;
    o->nseq = -1; /* records before it were delivered; the caller drops
                  ** what it built from them */
    o->err_seg = seg;
    o->err_off = off;
    for (int i = 0; i < L->nseg; i++)
        o->size[i] = L->size[i];
}

/* MODE keeps SEQS, cuts segment SEG at CUT (< 32: deletes it) and, when
** DELETE_LATER, deletes every later segment. */
static void expect_cut(struct layout *L, int mode, const uint64_t *seqs,
                       int n, int seg, size_t cut, int delete_later)
{
    struct outcome *o = &L->out[mode];
    memset(o, 0, sizeof *o);
    o->rc = RAVEL_OK;
    o->nseq = n;
    if (n)
        memcpy(o->seqs, seqs, sizeof *seqs * (size_t)n);
    o->dropped = 1;
    for (int i = 0; i < L->nseg; i++)
        o->size[i] = L->size[i];
    if (cut < RV_WAL_HEADER_SIZE) {
        o->size[seg] = -1;
        o->truncated += (uint64_t)L->size[seg];
    } else {
        o->size[seg] = (long long)cut;
        o->truncated += (uint64_t)L->size[seg] - cut;
    }
    for (int i = seg + 1; delete_later && i < L->nseg; i++) {
        o->size[i] = -1;
        o->truncated += (uint64_t)L->size[i];
    }
}

/* MODE refuses the layout for a hole the message names with NAME. */
static void expect_hole(struct layout *L, int mode, const char *name)
{
    struct outcome *o = &L->out[mode];
    memset(o, 0, sizeof *o);
    o->rc = RAVEL_CORRUPT;
    o->nseq = -1;
    o->hole = name;
    for (int i = 0; i < L->nseg; i++)
        o->size[i] = L->size[i];
}

static void expect_skip(struct layout *L, const uint64_t *seqs, int n,
                        uint64_t dropped)
{
    struct outcome *o = &L->out[RV_RECOVERY_SKIP_ANY_CORRUPTED];
    memset(o, 0, sizeof *o);
    o->rc = RAVEL_OK;
    o->nseq = n;
    if (n)
        memcpy(o->seqs, seqs, sizeof *seqs * (size_t)n);
    o->dropped = dropped;
    for (int i = 0; i < L->nseg; i++)
        o->size[i] = L->size[i];
}

/* MODE keeps SEQS and deletes segment SEG, a spare (wal_format.h: its
** header is all zeros), without counting it as damage. */
static void expect_spare(struct layout *L, int mode, const uint64_t *seqs,
                         int n, int seg)
{
    struct outcome *o = &L->out[mode];
    memset(o, 0, sizeof *o);
    o->rc = RAVEL_OK;
    o->nseq = n;
    if (n)
        memcpy(o->seqs, seqs, sizeof *seqs * (size_t)n);
    for (int i = 0; i < L->nseg; i++)
        o->size[i] = L->size[i];
    o->size[seg] = -1;
}

#define TOL RV_RECOVERY_TOLERATE_CORRUPTED_TAIL
#define ABS RV_RECOVERY_ABSOLUTE_CONSISTENCY
#define PIT RV_RECOVERY_POINT_IN_TIME
#define SKIP RV_RECOVERY_SKIP_ANY_CORRUPTED

static void flip(struct seg *s, size_t off)
{
    s->buf[off] ^= 0x40;
}

/* Segment 1: records 1, 11, 21. */
static void build_clean(struct layout *L)
{
    struct seg s;
    seg_begin(&s, 1);
    seg_add(&s, 1);
    seg_add(&s, 11);
    seg_add(&s, 21);
    layout_add(L, &s, s.len);
    seg_write(&s);
    expect_all_ok(L, (uint64_t[]){1, 11, 21}, 3);
}

/* Two preallocated segments: records then zeros to the end. */
static void build_prealloc(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 4);
    seg_add(&a, 1);
    seg_add(&a, 3);
    seg_zeros(&a, 4096);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 5);
    seg_add(&b, 5);
    seg_zeros(&b, 4096 + 5); /* zero bytes need not end on 8 */
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_all_ok(L, (uint64_t[]){1, 3, 5}, 3);
}

/* A segment holding only its header, then one with records. */
static void build_empty_segment(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 1);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_all_ok(L, (uint64_t[]){1}, 1);
}

/* The torn-tail family: all are cut at record 3 of the last segment by
** tolerate, point_in_time and skip, refused by absolute. */
static void expect_torn(struct layout *L, const uint64_t *seqs, int n,
                        int seg, size_t cut)
{
    expect_cut(L, TOL, seqs, n, seg, cut, 0);
    expect_corrupt(L, ABS, seg, cut);
    expect_cut(L, PIT, seqs, n, seg, cut, 1);
    expect_cut(L, SKIP, seqs, n, seg, cut, 0);
}

/* Last record's payload cut short by EOF. */
static void build_torn_payload(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 5);
    seg_add(&b, 7);
    size_t r3 = seg_add(&b, 9);
    size_t cut_at = r3 + RV_WAL_RECORD_HEADER_SIZE + 10;
    layout_add(L, &b, cut_at);
    seg_write_len(&b, cut_at);
    expect_torn(L, (uint64_t[]){1, 3, 5, 7}, 4, 1, r3);
}

/* Last record's header cut short by EOF. */
static void build_torn_header(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t r3 = seg_add(&a, 5);
    layout_add(L, &a, r3 + 10);
    seg_write_len(&a, r3 + 10);
    expect_torn(L, (uint64_t[]){1, 3}, 2, 0, r3);
}

/* Last record fails its checksum, then the preallocated zeros. */
static void build_torn_checksum(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t r3 = seg_add(&a, 5);
    flip(&a, r3 + RV_WAL_RECORD_HEADER_SIZE + 20);
    seg_zeros(&a, 1024);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_torn(L, (uint64_t[]){1, 3}, 2, 0, r3);
}

/* The tail record's second half never reached the disk: zeros. */
static void build_torn_zeroed_half(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t r2 = seg_add(&a, 3);
    memset(a.buf + r2 + 24, 0, a.len - r2 - 24);
    seg_zeros(&a, 512);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_torn(L, (uint64_t[]){1}, 1, 0, r2);
}

/* A middle record of the last segment is damaged. */
static void build_corrupt_middle(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t r2 = seg_add(&a, 3);
    seg_add(&a, 5);
    flip(&a, r2 + RV_WAL_RECORD_HEADER_SIZE + 3);
    seg_zeros(&a, 256);
    layout_add(L, &a, a.len);
    seg_write(&a);
    /* The last segment, not sealed: an unsynced tail whatever follows
    ** (a power loss may keep a later page and lose this one). */
    expect_cut(L, TOL, (uint64_t[]){1}, 1, 0, r2, 0);
    L->out[TOL].dropped = 2;
    expect_corrupt(L, ABS, 0, r2);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 0, r2, 1);
    L->out[PIT].dropped = 2;
    expect_skip(L, (uint64_t[]){1, 5}, 2, 1);
}

/* A middle record's length is damaged so that it seems to run past EOF:
** the good record behind it makes this corruption, not a torn tail. */
static void build_corrupt_length(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t r2 = seg_add(&a, 3);
    seg_add(&a, 5);
    a.buf[r2 + 11] = 0x7f;
    layout_add(L, &a, a.len);
    seg_write(&a);
    /* The last segment, not sealed: an unsynced tail whatever follows
    ** (a power loss may keep a later page and lose this one). */
    expect_cut(L, TOL, (uint64_t[]){1}, 1, 0, r2, 0);
    L->out[TOL].dropped = 2;
    expect_corrupt(L, ABS, 0, r2);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 0, r2, 1);
    L->out[PIT].dropped = 2;
    expect_skip(L, (uint64_t[]){1, 5}, 2, 1);
}

/* A record header was zeroed but records follow it. */
static void build_zero_header_then_data(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t r2 = seg_add(&a, 3);
    seg_add(&a, 5);
    memset(a.buf + r2, 0, RV_WAL_RECORD_HEADER_SIZE);
    layout_add(L, &a, a.len);
    seg_write(&a);
    /* The last segment, not sealed: an unsynced tail whatever follows
    ** (a power loss may keep a later page and lose this one). */
    expect_cut(L, TOL, (uint64_t[]){1}, 1, 0, r2, 0);
    L->out[TOL].dropped = 2;
    expect_corrupt(L, ABS, 0, r2);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 0, r2, 1);
    L->out[PIT].dropped = 2;
    expect_skip(L, (uint64_t[]){1, 5}, 2, 1);
}

/* The last record of a segment that is NOT the last is damaged: never a
** torn tail. */
static void build_corrupt_not_last(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t r3 = seg_add(&a, 5);
    flip(&a, r3 + RV_WAL_RECORD_HEADER_SIZE + 1);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 7);
    seg_add(&b, 9);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_corrupt(L, TOL, 0, r3);
    expect_corrupt(L, ABS, 0, r3);
    expect_cut(L, PIT, (uint64_t[]){1, 3}, 2, 0, r3, 1);
    expect_skip(L, (uint64_t[]){1, 3, 7, 9}, 4, 1);
}

/* A segment that is not the last was cut short (lost its tail). */
static void build_truncated_segment(struct layout *L)
{
    struct seg a, b, c;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t r3 = seg_add(&a, 5);
    layout_add(L, &a, r3 + 30);
    seg_write_len(&a, r3 + 30);
    seg_begin(&b, 2);
    seg_add(&b, 7);
    layout_add(L, &b, b.len);
    seg_write(&b);
    seg_begin(&c, 3);
    seg_add(&c, 9);
    layout_add(L, &c, c.len);
    seg_write(&c);
    expect_corrupt(L, TOL, 0, r3);
    expect_corrupt(L, ABS, 0, r3);
    expect_cut(L, PIT, (uint64_t[]){1, 3}, 2, 0, r3, 1);
    expect_skip(L, (uint64_t[]){1, 3, 7, 9}, 4, 1);
    L->out[SKIP].holes = 1; /* segment 2 says 1 ended later */
}

/* A bad header (magic damaged) on a segment in the middle. */
static void build_bad_header_middle(struct layout *L)
{
    struct seg a, b, c;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 3);
    seg_add(&b, 5);
    flip(&b, 2);
    layout_add(L, &b, b.len);
    seg_write(&b);
    seg_begin(&c, 3);
    seg_add(&c, 7);
    layout_add(L, &c, c.len);
    seg_write(&c);
    expect_corrupt(L, TOL, 1, 0);
    expect_corrupt(L, ABS, 1, 0);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 1, 0, 1);
    expect_skip(L, (uint64_t[]){1, 3, 5, 7}, 4, 1);
}

/* The last segment's header verifies but names another segment. */
static void build_bad_header_number(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 3);
    rv_wal_encode_segment_header(b.buf, 7, rv_get_fixed64(b.buf + 24));
    seg_zeros(&b, 64);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_corrupt(L, TOL, 1, 0);
    expect_corrupt(L, ABS, 1, 0);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 1, 0, 1);
    expect_skip(L, (uint64_t[]){1, 3}, 2, 1);
}

/* The last segment is shorter than its header: a crash right after it
** was created, or a header half written. */
static void build_torn_segment_header(struct layout *L, size_t keep,
                                      size_t zeros)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    memset(b.buf + keep, 0, RV_WAL_HEADER_SIZE - keep);
    b.len = keep;
    seg_zeros(&b, zeros);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_cut(L, TOL, (uint64_t[]){1}, 1, 1, 0, 0);
    expect_corrupt(L, ABS, 1, 0);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 1, 0, 1);
    expect_cut(L, SKIP, (uint64_t[]){1}, 1, 1, 0, 0);
}

static void build_header_cut(struct layout *L)
{
    build_torn_segment_header(L, 20, 0);
}

/* A zero-length last segment, or a preallocated one whose header was
** never written: a spare (wal_format.h), which held nothing, so every
** mode deletes it and keeps the rest, absolute_consistency included. */
static void build_spare_segment(struct layout *L, size_t zeros)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    memset(b.buf, 0, RV_WAL_HEADER_SIZE);
    b.len = 0;
    seg_zeros(&b, zeros);
    layout_add(L, &b, b.len);
    seg_write(&b);
    for (int mode = 0; mode < 4; mode++)
        expect_spare(L, mode, (uint64_t[]){1}, 1, 1);
}

static void build_header_empty(struct layout *L)
{
    build_spare_segment(L, 0);
}

static void build_header_never_written(struct layout *L)
{
    build_spare_segment(L, 4096);
}

static void build_header_half_written(struct layout *L)
{
    build_torn_segment_header(L, 12, 4096 - 12);
}

/* A zero-length segment that is not the last one is corrupt. */
static void build_empty_not_last(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    layout_add(L, &a, 0);
    seg_write_len(&a, 0);
    seg_begin(&b, 2);
    seg_add(&b, 1);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_corrupt(L, TOL, 0, 0);
    expect_corrupt(L, ABS, 0, 0);
    expect_cut(L, PIT, NULL, 0, 0, 0, 1);
    expect_skip(L, (uint64_t[]){1}, 1, 1);
    L->out[SKIP].holes = 1;
}

/* A record that verifies but whose sequence goes backwards, in the middle
** and as the last record before the zeros (still corrupt: it verified). */
static void build_sequence_backwards(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 21);
    size_t r3 = seg_add(&a, 11);
    seg_add(&a, 31);
    seg_add(&a, 22); /* 21 + 1 was used by record 2's second op */
    seg_zeros(&a, 64);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_corrupt(L, TOL, 0, r3);
    expect_corrupt(L, ABS, 0, r3);
    expect_cut(L, PIT, (uint64_t[]){1, 21}, 2, 0, r3, 1);
    L->out[PIT].dropped = 3;
    expect_skip(L, (uint64_t[]){1, 21, 31}, 3, 2);
}

/* A record that verifies but whose payload is not a batch. */
static void build_bad_batch(struct layout *L)
{
    struct seg a;
    char rep[RV_BATCH_HEADER_SIZE + 4];
    rv_put_fixed64(rep, 3);
    rv_put_fixed32(rep + 8, 5); /* says 5 ops, holds 1 */
    memcpy(rep + RV_BATCH_HEADER_SIZE, "\x00\x01k", 3);
    seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t r2 = seg_add_rep(&a, rep, RV_BATCH_HEADER_SIZE + 3);
    seg_add(&a, 5);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_corrupt(L, TOL, 0, r2);
    expect_corrupt(L, ABS, 0, r2);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 0, r2, 1);
    L->out[PIT].dropped = 2;
    expect_skip(L, (uint64_t[]){1, 5}, 2, 1);
}

/* Segments 1, 2, 3 written, 2 deleted: a hole, refused by every mode but
** skip. */
static void build_hole_missing_middle(struct layout *L)
{
    struct seg a, b, c;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 3);
    g_chain_valid = 1; /* not written: deleted */
    g_chain_number = 2;
    g_chain_end = b.data_end;
    free(b.buf);
    seg_begin(&c, 3);
    seg_add(&c, 5);
    layout_add(L, &c, c.len);
    seg_write(&c);
    expect_hole(L, TOL, "wal-00000002.log");
    expect_hole(L, ABS, "wal-00000002.log");
    expect_hole(L, PIT, "wal-00000002.log");
    expect_skip(L, (uint64_t[]){1, 5}, 2, 0);
    L->out[SKIP].holes = 1; /* the number gap */
}

/* A segment that is not the last lost its last record, cut exactly at the
** record boundary: only the next segment's prev_end can tell. */
static void build_hole_cut_at_boundary(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t r3 = seg_add(&a, 5);
    layout_add(L, &a, r3);
    seg_write_len(&a, r3);
    seg_begin(&b, 2);
    seg_add(&b, 7);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_hole(L, TOL, "wal-00000002.log");
    expect_hole(L, ABS, "wal-00000002.log");
    expect_hole(L, PIT, "wal-00000002.log");
    expect_skip(L, (uint64_t[]){1, 3, 7}, 3, 0);
    L->out[SKIP].holes = 1;
}

/* The first segment of the log is gone: segment 2 names its predecessor. */
static void build_hole_first_missing(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    g_chain_valid = 1;
    g_chain_number = 1;
    g_chain_end = a.data_end;
    free(a.buf);
    seg_begin(&b, 2);
    seg_add(&b, 3);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_hole(L, TOL, "wal-00000002.log");
    expect_hole(L, ABS, "wal-00000002.log");
    expect_hole(L, PIT, "wal-00000002.log");
    expect_skip(L, (uint64_t[]){3}, 1, 0);
    L->out[SKIP].holes = 1;
}

/* Sealed at close: clean; the seal is not a batch. */
static void build_sealed(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_seal(&a);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 3);
    seg_add(&b, 5);
    seg_seal(&b);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_all_ok(L, (uint64_t[]){1, 3, 5}, 3);
}

/* A damaged record in a sealed last segment: corruption, not a tail --
** the segment was made durable whole before the seal was written. */
static void build_sealed_damaged(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t r2 = seg_add(&a, 3);
    seg_add(&a, 5);
    seg_seal(&a);
    flip(&a, r2 + RV_WAL_RECORD_HEADER_SIZE + 3);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_corrupt(L, TOL, 0, r2);
    expect_corrupt(L, ABS, 0, r2);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 0, r2, 1);
    L->out[PIT].dropped = 3; /* the bad record, 5 and the seal */
    expect_skip(L, (uint64_t[]){1, 5}, 2, 1);
}

/* Records after the seal: corruption in every mode but skip. */
static void build_data_after_seal(struct layout *L)
{
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t seal = seg_seal(&a);
    size_t r2 = seg_add(&a, 3);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_corrupt(L, TOL, 0, r2);
    expect_corrupt(L, ABS, 0, r2);
    expect_cut(L, PIT, (uint64_t[]){1}, 1, 0, r2, 1);
    L->out[PIT].dropped = 1;
    (void)seal;
    expect_skip(L, (uint64_t[]){1}, 1, 1);
}

/* A version-1 segment (ravel 0.1.0: 32-byte header, no prev_end) is read,
** and a version-2 segment may follow it. */
static void build_version1_then_2(struct layout *L)
{
    struct seg a, b;
    memset(&a, 0, sizeof a);
    a.number = 1;
    seg_reserve(&a, RV_WAL_V1_HEADER_SIZE);
    rv_put_fixed64(a.buf, RV_WAL_MAGIC);
    rv_put_fixed32(a.buf + 8, 1);
    rv_put_fixed32(a.buf + 12, RV_WAL_V1_HEADER_SIZE);
    rv_put_fixed64(a.buf + 16, 1);
    rv_put_fixed64(a.buf + 24, XXH3_64bits(a.buf, 24));
    a.len = a.data_end = RV_WAL_V1_HEADER_SIZE;
    seg_add(&a, 1);
    seg_add(&a, 3);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    seg_add(&b, 5);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_all_ok(L, (uint64_t[]){1, 3, 5}, 3);
}

/* ------------------------------------------------------------- runner */

static uint64_t g_seqs[MAXREC * MAXSEG];
static int g_nseq;

static int collect(void *ctx, const char *rep, size_t len)
{
    (void)ctx;
    assert_int_equal(rv_batch_validate(rep, len), RAVEL_OK);
    assert_true(g_nseq < MAXREC * MAXSEG);
    g_seqs[g_nseq++] = rv_batch_rep_sequence(rep);
    return 0;
}

static void clean_dir(void)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", g_dir, e->d_name);
        assert_int_equal(unlink(path), 0);
    }
    closedir(d);
    g_chain_valid = 0;
}

/* The contents of a segment file (NULL, *len = -1 if absent). */
static char *read_segment(uint64_t number, long long *len)
{
    char path[512];
    seg_path(path, sizeof path, number);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        assert_int_equal(errno, ENOENT);
        *len = -1;
        return NULL;
    }
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    char *buf = malloc((size_t)st.st_size + 1);
    assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
    close(fd);
    *len = st.st_size;
    return buf;
}

static const char *const mode_names[] = {"tolerate", "absolute",
                                         "point_in_time", "skip"};

static void run_one(const char *name, void (*build)(struct layout *),
                    int mode, int ro)
{
    struct layout L;
    memset(&L, 0, sizeof L);
    clean_dir();
    build(&L);
    const struct outcome *o = &L.out[mode];

    char *before[MAXSEG];
    long long before_len[MAXSEG];
    for (int i = 0; i < L.nseg; i++)
        before[i] = read_segment(L.numbers[i], &before_len[i]);

    struct rv_wal_replay_result res;
    g_nseq = 0;
    int rc = rv_wal_replay(g_dir, 0, L.numbers, L.nseg,
                           (enum rv_recovery_mode)mode, ro, collect, NULL,
                           &res);
    const char *msg = ravel_errmsg();
#define CHECK(cond, ...) do { if (!(cond)) { \
        print_error("%s, mode %s, %s: ", name, mode_names[mode], \
                    ro ? "read-only" : "read-write"); \
        fail_msg(__VA_ARGS__); } } while (0)

    CHECK(rc == o->rc, "rc %d, want %d (%s)", rc, o->rc, msg);
    if (rc == RAVEL_CORRUPT && o->hole) {
        CHECK(strstr(msg, "a hole in the write-ahead log") &&
              strstr(msg, o->hole), "message '%s' does not name a hole at "
              "%s", msg, o->hole);
    } else if (rc == RAVEL_CORRUPT) {
        char want[512], path[400];
        seg_path(path, sizeof path, L.numbers[o->err_seg]);
        snprintf(want, sizeof want, "%s: byte offset %zu: ", path,
                 o->err_off);
        CHECK(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg,
              want);
    }
    CHECK(o->nseq < 0 || g_nseq == o->nseq, "%d records delivered, "
          "want %d", g_nseq, o->nseq);
    for (int i = 0; i < o->nseq; i++)
        CHECK(g_seqs[i] == o->seqs[i], "record %d has sequence %llu, "
              "want %llu", i, (unsigned long long)g_seqs[i],
              (unsigned long long)o->seqs[i]);
    if (rc == RAVEL_OK) {
        CHECK(res.records == (uint64_t)o->nseq, "result.records %llu",
              (unsigned long long)res.records);
        CHECK(res.records_dropped == o->dropped, "records_dropped %llu, "
              "want %llu", (unsigned long long)res.records_dropped,
              (unsigned long long)o->dropped);
        uint64_t want_trunc = ro ? 0 : o->truncated;
        CHECK(res.bytes_truncated == want_trunc, "bytes_truncated %llu, "
              "want %llu", (unsigned long long)res.bytes_truncated,
              (unsigned long long)want_trunc);
        uint64_t want_max = o->nseq ?
            o->seqs[o->nseq - 1] + OPS_PER_RECORD - 1 : 0;
        CHECK(res.max_sequence == want_max, "max_sequence %llu, want %llu",
              (unsigned long long)res.max_sequence,
              (unsigned long long)want_max);
        CHECK(res.highest_segment == L.numbers[L.nseg - 1],
              "highest_segment %llu",
              (unsigned long long)res.highest_segment);
        uint64_t kept = 0;
        for (int i = 0; i < L.nseg; i++)
            if (o->size[i] >= 0)
                kept = L.numbers[i];
        CHECK(res.last_segment == kept, "last_segment %llu, want %llu",
              (unsigned long long)res.last_segment,
              (unsigned long long)kept);
        CHECK(res.holes == o->holes, "holes %llu, want %llu",
              (unsigned long long)res.holes, (unsigned long long)o->holes);
    }
    for (int i = 0; i < L.nseg; i++) {
        long long len;
        char *after = read_segment(L.numbers[i], &len);
        if (ro || rc != RAVEL_OK) {
            /* Untouched, byte for byte. */
            CHECK(len == before_len[i], "segment %d: size %lld, was %lld",
                  i, len, before_len[i]);
            CHECK(len <= 0 || memcmp(after, before[i], (size_t)len) == 0,
                  "segment %d modified", i);
        } else {
            CHECK(len == o->size[i], "segment %d: size %lld, want %lld", i,
                  len, o->size[i]);
            CHECK(len <= 0 || memcmp(after, before[i], (size_t)len) == 0,
                  "segment %d: kept bytes modified", i);
        }
        free(after);
        free(before[i]);
    }
#undef CHECK
}

static void run_scenario(const char *name, void (*build)(struct layout *))
{
    for (int mode = 0; mode < 4; mode++)
        for (int ro = 0; ro < 2; ro++)
            run_one(name, build, mode, ro);
}

#define SCENARIO(fn) \
    static void test_##fn(void **state) \
    { \
        (void)state; \
        run_scenario(#fn, build_##fn); \
    }

SCENARIO(clean)
SCENARIO(prealloc)
SCENARIO(empty_segment)
SCENARIO(torn_payload)
SCENARIO(torn_header)
SCENARIO(torn_checksum)
SCENARIO(torn_zeroed_half)
SCENARIO(corrupt_middle)
SCENARIO(corrupt_length)
SCENARIO(zero_header_then_data)
SCENARIO(corrupt_not_last)
SCENARIO(truncated_segment)
SCENARIO(bad_header_middle)
SCENARIO(bad_header_number)
SCENARIO(header_cut)
SCENARIO(header_empty)
SCENARIO(header_never_written)
SCENARIO(header_half_written)
SCENARIO(empty_not_last)
SCENARIO(sequence_backwards)
SCENARIO(bad_batch)
SCENARIO(hole_missing_middle)
SCENARIO(hole_cut_at_boundary)
SCENARIO(hole_first_missing)
SCENARIO(sealed)
SCENARIO(sealed_damaged)
SCENARIO(data_after_seal)
SCENARIO(version1_then_2)

/* ------------------------------------------------- the rest of the API */

static int stop_at_second(void *ctx, const char *rep, size_t len)
{
    (void)rep;
    (void)len;
    int *n = ctx;
    return ++*n == 2 ? 77 : 0;
}

static void test_callback_error(void **state)
{
    (void)state;
    clean_dir();
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    seg_add(&a, 5);
    seg_write(&a);
    uint64_t nums[] = {1};
    struct rv_wal_replay_result res;
    int n = 0;
    assert_int_equal(rv_wal_replay(g_dir, 0, nums, 1, PIT, 0, stop_at_second,
                                   &n, &res), 77);
    assert_int_equal(n, 2);
    assert_int_equal(res.records, 1);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    clean_dir();
    struct rv_wal_replay_result res;
    uint64_t unordered[] = {2, 1};
    assert_int_equal(rv_wal_replay(g_dir, 0, unordered, 2, TOL, 0, collect,
                                   NULL, &res), RAVEL_INVALID);
    assert_int_equal(rv_wal_replay(g_dir, 0, NULL, 0, TOL, 0, collect, NULL,
                                   &res), RAVEL_OK);
    assert_int_equal(res.records, 0);
    assert_int_equal(res.last_segment, 0);

    uint64_t missing[] = {9};
    assert_int_equal(rv_wal_replay(g_dir, 0, missing, 1, TOL, 0, collect, NULL,
                                   &res), RAVEL_IOERR);
    assert_non_null(strstr(ravel_errmsg(), "wal-00000009.log"));
    assert_non_null(strstr(ravel_errmsg(), "errno"));
}

static void test_future_version(void **state)
{
    (void)state;
    clean_dir();
    struct seg a;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    /* A version this reader does not know, header checksum re-sealed. */
    rv_put_fixed32(a.buf + 8, 3);
    rv_put_fixed64(a.buf + 32, XXH3_64bits(a.buf, 32));
    seg_write(&a);
    uint64_t nums[] = {1};
    struct rv_wal_replay_result res;
    g_nseq = 0;
    assert_int_equal(rv_wal_replay(g_dir, 0, nums, 1, TOL, 1, collect, NULL,
                                   &res), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "wal-00000001.log: byte "
                           "offset 0"));
    assert_non_null(strstr(ravel_errmsg(), "unsupported WAL version 3"));
    assert_int_equal(g_nseq, 0);
}

static void test_format(void **state)
{
    (void)state;
    char name[64];
    uint64_t n = 0;
    rv_wal_segment_name(name, sizeof name, 12);
    assert_string_equal(name, "wal-00000012.log");
    rv_wal_segment_name(name, sizeof name, 123456789012ull);
    assert_string_equal(name, "wal-123456789012.log");
    assert_int_equal(rv_wal_parse_segment_name("wal-00000012.log", &n), 1);
    assert_int_equal(n, 12);
    assert_int_equal(rv_wal_parse_segment_name("wal-123456789012.log", &n),
                     1);
    assert_int_equal(n, 123456789012ull);
    assert_int_equal(rv_wal_parse_segment_name("wal-12.log", &n), 0);
    assert_int_equal(rv_wal_parse_segment_name("wal-000000012.log", &n), 0);
    assert_int_equal(rv_wal_parse_segment_name("wal-0000001a.log", &n), 0);
    assert_int_equal(rv_wal_parse_segment_name("wal-00000012.log.tmp", &n),
                     0);
    assert_int_equal(rv_wal_parse_segment_name("WAL-00000012.log", &n), 0);
    assert_int_equal(rv_wal_parse_segment_name(
                         "wal-99999999999999999999.log", &n), 0);
    assert_int_equal(rv_wal_parse_segment_name("LOCK", &n), 0);

    char h[RV_WAL_HEADER_SIZE];
    rv_wal_encode_segment_header(h, 77, 4096);
    assert_memory_equal(h, "RAVELWAL", 8);
    assert_int_equal(rv_get_fixed32(h + 8), 2);
    assert_int_equal(rv_get_fixed32(h + 12), 40);
    assert_int_equal(rv_get_fixed64(h + 16), 77);
    assert_int_equal(rv_get_fixed64(h + 24), 4096);
    assert_int_equal(rv_get_fixed64(h + 32), XXH3_64bits(h, 32));

    /* Record: header, payload, zero padding to 8; the checksum is seeded
    ** with the segment number. */
    char rec[64], rec2[64];
    memset(rec, 0x55, sizeof rec);
    memcpy(rec + 16, "hello", 5);
    size_t sz = rv_wal_seal_record(rec, 3, RV_WAL_BATCH, 5);
    assert_int_equal(sz, 24);
    assert_int_equal(sz, rv_wal_record_size(5));
    assert_int_equal(rv_get_fixed32(rec + 8), 5);
    assert_int_equal(rec[12], RV_WAL_BATCH);
    assert_memory_equal(rec + 13, "\0\0\0", 3);
    assert_memory_equal(rec + 16, "hello\0\0\0", 8);
    assert_int_equal(rv_get_fixed64(rec),
                     rv_wal_record_checksum(3, rec, rec + 16, 5));
    /* The same record in another segment has another checksum. */
    memset(rec2, 0x55, sizeof rec2);
    memcpy(rec2 + 16, "hello", 5);
    rv_wal_seal_record(rec2, 4, RV_WAL_BATCH, 5);
    assert_memory_equal(rec + 8, rec2 + 8, 16);
    assert_true(rv_get_fixed64(rec) != rv_get_fixed64(rec2));
    /* The checksum of a header and a payload apart (as the reader may
    ** hold them) is the same as of the sealed record. */
    char hdr[16];
    memcpy(hdr, rec, 16);
    assert_int_equal(rv_wal_record_checksum(3, hdr, "hello", 5),
                     rv_get_fixed64(rec));
    assert_int_equal(rv_wal_record_size(0), 16);
    assert_int_equal(rv_wal_record_size(8), 24);
    assert_int_equal(rv_wal_record_size(9), 32);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/ravel-wal-XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    clean_dir();
    return rmdir(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_prealloc),
        cmocka_unit_test(test_empty_segment),
        cmocka_unit_test(test_torn_payload),
        cmocka_unit_test(test_torn_header),
        cmocka_unit_test(test_torn_checksum),
        cmocka_unit_test(test_torn_zeroed_half),
        cmocka_unit_test(test_corrupt_middle),
        cmocka_unit_test(test_corrupt_length),
        cmocka_unit_test(test_zero_header_then_data),
        cmocka_unit_test(test_corrupt_not_last),
        cmocka_unit_test(test_truncated_segment),
        cmocka_unit_test(test_bad_header_middle),
        cmocka_unit_test(test_bad_header_number),
        cmocka_unit_test(test_header_cut),
        cmocka_unit_test(test_header_empty),
        cmocka_unit_test(test_header_never_written),
        cmocka_unit_test(test_header_half_written),
        cmocka_unit_test(test_empty_not_last),
        cmocka_unit_test(test_sequence_backwards),
        cmocka_unit_test(test_bad_batch),
        cmocka_unit_test(test_hole_missing_middle),
        cmocka_unit_test(test_hole_cut_at_boundary),
        cmocka_unit_test(test_hole_first_missing),
        cmocka_unit_test(test_sealed),
        cmocka_unit_test(test_sealed_damaged),
        cmocka_unit_test(test_data_after_seal),
        cmocka_unit_test(test_version1_then_2),
        cmocka_unit_test(test_callback_error),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_future_version),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
