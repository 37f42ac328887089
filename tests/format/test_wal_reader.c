/*
** test_wal_reader.c -- WAL replay on real segment files, under each of the
** four recovery modes, read-write and read-only.
**
** Each scenario writes segments into a fresh temporary directory with
** rv_wal_encode_segment_header / rv_wal_seal_record (version 2) or
** rv_wal_encode_v3_header / rv_wal_seal_tagged / rv_wal_encode_skip
** (version 3, laid out in blocks as wal_direct.c writes them, possibly
** over the records of a recycled file's earlier life), damages them the
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
#include "base/dbformat.h"
#include "wal/wal_format.h"
#include "util/filename.h"
#include "wal/wal_reader.h"

#include <xxhash.h>

#define MAXSEG 4
#define MAXREC 32
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
    uint32_t block;     /* version 3: the block size; 0: version 2 */
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

/* The prev_end of a new segment NUMBER: where the one written before it
** ended if that was NUMBER - 1, else 0. */
static uint64_t seg_prev_end(uint64_t number)
{
    return g_chain_valid && g_chain_number + 1 == number ? g_chain_end : 0;
}

static void seg_begin(struct seg *s, uint64_t number)
{
    memset(s, 0, sizeof *s);
    s->number = number;
    seg_reserve(s, RV_WAL_HEADER_SIZE);
    rv_wal_encode_segment_header(s->buf, number, seg_prev_end(number));
    s->len = RV_WAL_HEADER_SIZE;
    s->data_end = s->len;
}

/* A version-3 segment written in blocks of BLOCK bytes (wal_direct.c). */
static void seg_begin_v3(struct seg *s, uint64_t number, uint32_t block)
{
    memset(s, 0, sizeof *s);
    s->number = number;
    s->block = block;
    seg_reserve(s, RV_WAL_V3_HEADER_SIZE);
    rv_wal_encode_v3_header(s->buf, number, seg_prev_end(number), block);
    s->len = RV_WAL_V3_HEADER_SIZE;
    s->data_end = s->len;
}

/* A whole record at DST (rv_wal_record_size(len) bytes) as the writer of
** segment S makes one: the payload placed after the header, then sealed
** (tagged in version 3). */
static size_t rec_encode(char *dst, const struct seg *s, int type,
                         const char *payload, size_t len)
{
    if (len)
        memcpy(dst + RV_WAL_RECORD_HEADER_SIZE, payload, len);
    return rv_wal_seal_tagged(dst, s->number,
                              s->block ? rv_wal_tag(s->number) : 0, type,
                              len);
}

/* Appends a record with payload REP (LEN bytes); returns its offset. */
static size_t seg_add_rep(struct seg *s, const char *rep, size_t len)
{
    size_t off = s->len;
    seg_reserve(s, rv_wal_record_size(len));
    s->len += rec_encode(s->buf + off, s, RV_WAL_BATCH, rep, len);
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
    if (s->block)
        rv_wal_encode_v3_seal(s->buf + off, s->number, off);
    else
        rv_wal_encode_seal(s->buf + off, s->number, off);
    s->len += RV_WAL_SEAL_SIZE;
    s->data_end = s->len;
    return off;
}

/* A batch of OPS_PER_RECORD puts with sequence SEQ into *B; the last
** put's value is BIG (BIG_LEN bytes) when BIG is not NULL. */
static void batch_make(struct ravel_batch *b, uint64_t seq, const char *big,
                       size_t big_len)
{
    rv_batch_init(b);
    for (int i = 0; i < OPS_PER_RECORD; i++) {
        char k[32], v[48];
        int kn = snprintf(k, sizeof k, "key-%llu-%d", (unsigned long long)seq,
                          i);
        int vn = snprintf(v, sizeof v, "value-%llu-%d-padding",
                          (unsigned long long)seq, i);
        int last = i == OPS_PER_RECORD - 1;
        assert_int_equal(rv_batch_add(b, RV_TYPE_PUT, k, (size_t)kn,
                                      last && big ? big : v,
                                      last && big ? big_len : (size_t)vn),
                         RAVEL_OK);
    }
    rv_put_fixed64(b->rep, seq);
}

/* Appends a batch of OPS_PER_RECORD puts with sequence SEQ, the last value
** BIG (BIG_LEN bytes) if BIG is not NULL. */
static size_t seg_add_value(struct seg *s, uint64_t seq, const char *big,
                            size_t big_len)
{
    struct ravel_batch b;
    batch_make(&b, seq, big, big_len);
    size_t off = seg_add_rep(s, b.rep, b.len);
    rv_batch_release(&b);
    return off;
}

/* Appends a batch of OPS_PER_RECORD puts with sequence SEQ. */
static size_t seg_add(struct seg *s, uint64_t seq)
{
    return seg_add_value(s, seq, NULL, 0);
}

static void seg_zeros(struct seg *s, size_t n)
{
    if (n == 0)
        return; /* the buffer of an empty spare may not exist */
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
    const char *msg;        /* RAVEL_CORRUPT: the message also says this */
    uint64_t holes;         /* holes passed over (skip mode) */
    uint64_t spares;        /* spares dropped at the end of the log */
    uint64_t last_end;      /* if not 0: where the data of the last segment
                            ** kept ends (the next segment's prev_end) */
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
    o->spares = 1;
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

/* ------------------------------------------------------------ version 3 */

/* Version 3 (wal_format.h) as wal_direct.c writes it: records packed from
** offset 48; each write ends with zeros to the end of its last block; a
** write that had to skip starts at the next block boundary with a skip
** record naming where the data before it ended.  A recycled file keeps
** the bytes of its earlier life after the new data. */

#define BLK 4096

/* Zeros to the end of the block: the rest of the block the last write
** wrote.  The data still ends where it did. */
static void seg_pad_block(struct seg *s)
{
    size_t b = s->block;
    seg_zeros(s, (b - s->len % b) % b);
}

/* A write that began at the next block boundary, the last block being
** still in flight: its skip record names NAMES.  Returns its offset. */
static size_t seg_skip_naming(struct seg *s, size_t names)
{
    seg_pad_block(s);
    size_t off = s->len;
    seg_reserve(s, RV_WAL_SKIP_SIZE);
    rv_wal_encode_skip(s->buf + off, s->number, names);
    s->len += RV_WAL_SKIP_SIZE;
    s->data_end = s->len;
    return off;
}

/* The skip record the writer writes: naming where the data ended. */
static size_t seg_skip(struct seg *s)
{
    return seg_skip_naming(s, s->data_end);
}

/* Appends a batch whose last value is VLEN bytes (a record that may span
** blocks). */
static size_t seg_add_big(struct seg *s, uint64_t seq, size_t vlen)
{
    char *v = malloc(vlen ? vlen : 1);
    assert_non_null(v);
    memset(v, 'a' + (int)(seq % 26), vlen);
    size_t off = seg_add_value(s, seq, v, vlen);
    free(v);
    return off;
}

/* Appends a batch record that ends exactly at END. */
static size_t seg_add_until(struct seg *s, uint64_t seq, size_t end)
{
    struct ravel_batch b;
    batch_make(&b, seq, "", 0);
    size_t base = b.len; /* the rep with an empty last value */
    rv_batch_release(&b);
    assert_true(end % RV_WAL_ALIGN == 0);
    assert_true(end >= s->len + RV_WAL_RECORD_HEADER_SIZE + base);
    size_t vlen = end - s->len - RV_WAL_RECORD_HEADER_SIZE - base;
    if (vlen >= 128)
        vlen--; /* its length takes a second varint byte */
    size_t off = seg_add_big(s, seq, vlen);
    assert_int_equal(s->len, end);
    return off;
}

/* Appends a batch whose last value is VLEN bytes of 'x' but for a zero
** byte at file offset ZERO_AT. */
static size_t seg_add_zero_at(struct seg *s, uint64_t seq, size_t vlen,
                              size_t zero_at)
{
    char *v = malloc(vlen);
    assert_non_null(v);
    memset(v, 'x', vlen);
    struct ravel_batch b;
    batch_make(&b, seq, v, vlen);
    size_t value_at = s->len + RV_WAL_RECORD_HEADER_SIZE + b.len - vlen;
    rv_batch_release(&b);
    assert_true(zero_at >= value_at && zero_at < value_at + vlen);
    v[zero_at - value_at] = 0;
    size_t off = seg_add_value(s, seq, v, vlen);
    free(v);
    return off;
}

/* S's file is a recycled one whose earlier life was OLD: after the new
** data (and the zeros to the end of its block), OLD's bytes to its end. */
static void seg_recycled_from(struct seg *s, const struct seg *old)
{
    seg_pad_block(s);
    assert_true(s->len <= old->len);
    size_t n = old->len - s->len;
    seg_reserve(s, n);
    memcpy(s->buf + s->len, old->buf + s->len, n);
    s->len = old->len;
}

static void seg_free(struct seg *s)
{
    free(s->buf);
    s->buf = NULL;
}

/* The earlier life of a recycled file: segment NUMBER (so another tag and
** seed) as the direct writer left it, 5 blocks, closed and trimmed (a
** seal at its end).  Its batches have sequences from 101 on, so they would
** be delivered if replay took them.  Stale headers at block boundaries: a
** skip record naming NAMES at 8192 (to name where a new life's data ends:
** it must continue nothing), a batch at 12288, a skip record at 16384. */
static void old_life(struct seg *o, uint64_t number, size_t names)
{
    seg_begin_v3(o, number, BLK);
    seg_add(o, 101);
    seg_add_big(o, 103, 3000);
    seg_add_big(o, 105, 2500); /* across 4096 */
    seg_skip_naming(o, names); /* 8192 */
    seg_add_big(o, 107, 3000);
    seg_add_until(o, 109, 3 * BLK);
    seg_add_big(o, 111, 1500); /* 12288 */
    seg_skip(o);               /* 16384 */
    seg_add(o, 113);
    seg_seal(o);
}

/* Sets MODE's expected last_end (where the last kept segment's data
** ends) for every mode. */
static void expect_last_end(struct layout *L, size_t end)
{
    for (int m = 0; m < 4; m++)
        L->out[m].last_end = end;
}

/* A clean version-3 log: a segment of several blocks (records across
** block boundaries, one starting exactly at one) and preallocated zero
** blocks; one holding only its header (opened, never written); one whose
** prev_end is 48, the end of that one. */
static void build_v3_clean(struct layout *L)
{
    struct seg a, b, c;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add_big(&a, 3, 3000);
    seg_add_big(&a, 5, 3000);    /* across 4096 */
    seg_add_until(&a, 7, 2 * BLK);
    assert_int_equal(seg_add_big(&a, 9, 1000), 2 * BLK);
    seg_add(&a, 11);
    seg_pad_block(&a);
    seg_zeros(&a, 2 * BLK);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin_v3(&b, 2, BLK);
    seg_pad_block(&b);
    layout_add(L, &b, b.len);
    seg_write(&b);
    seg_begin_v3(&c, 3, BLK);
    assert_int_equal(rv_get_fixed64(c.buf + 24), RV_WAL_V3_HEADER_SIZE);
    seg_add(&c, 13);
    seg_add(&c, 15);
    size_t end = c.data_end;
    seg_pad_block(&c);
    layout_add(L, &c, c.len);
    seg_write(&c);
    expect_all_ok(L, (uint64_t[]){1, 3, 5, 7, 9, 11, 13, 15}, 8);
    expect_last_end(L, end);
}

/* Writes that started at the next block boundary with a skip record
** naming where the data ended: after 240 bytes; after a record across
** blocks; 8 bytes before a boundary (fewer zeros than a record header);
** and in a segment of 512-byte blocks.  Then a version-2 segment whose
** prev_end is where the last skip-continued data ends. */
static void build_v3_skip_continues(struct layout *L)
{
    struct seg a, b, c;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add(&a, 3);
    assert_int_equal(seg_skip(&a), BLK);
    seg_add_big(&a, 5, 3000);
    seg_add(&a, 7);
    assert_int_equal(seg_skip(&a), 2 * BLK);
    seg_add_until(&a, 9, 3 * BLK - 8);
    assert_int_equal(seg_skip(&a), 3 * BLK);
    seg_add(&a, 11);
    seg_pad_block(&a);
    seg_zeros(&a, BLK);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin_v3(&b, 2, 512);
    seg_add(&b, 13);
    assert_int_equal(seg_skip(&b), 512);
    seg_add(&b, 15);
    size_t b_end = b.data_end;
    seg_pad_block(&b);
    seg_zeros(&b, 512);
    layout_add(L, &b, b.len);
    seg_write(&b);
    seg_begin(&c, 3);
    assert_int_equal(rv_get_fixed64(c.buf + 24), b_end);
    seg_add(&c, 17);
    layout_add(L, &c, c.len);
    seg_write(&c);
    expect_all_ok(L, (uint64_t[]){1, 3, 5, 7, 9, 11, 13, 15, 17}, 9);
    expect_last_end(L, c.data_end);
}

/* A lost in-flight write: records 1 and 3 end at X (write 1); write A
** appended 5 and 7 (X .. Y) and was in flight when write B began at the
** next block boundary with a skip record naming Y, then 9 and 11.  A crash
** kept B and lost A: the blocks A wrote hold what they held before it
** (block 0: write 1's data, zeros after X; later blocks: zeros).  Replay
** keeps the prefix 1, 3 and stops at X in every mode, without an error;
** 9 and 11 are never delivered.  A_SPANS: A reached into block 1, so B's
** skip record is at 8192 rather than at the boundary right after X.
** NEXT: 0 no later segment; 1 one whose prev_end is X (the segment
** recovery starts next); 2 one whose prev_end is B's end -- then A's loss
** is a hole. */
static void build_v3_lost_write(struct layout *L, int a_spans, int next)
{
    struct seg a, b;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t x = a.data_end;
    seg_add_big(&a, 5, a_spans ? 3000 : 100);
    seg_add_big(&a, 7, a_spans ? 2000 : 100);
    size_t y = a.data_end;
    size_t skip_at = a_spans ? 2 * BLK : BLK;
    assert_true(y > skip_at - BLK && y < skip_at);
    assert_int_equal(seg_skip(&a), skip_at);
    assert_int_equal(rv_get_fixed64(a.buf + skip_at + 16), y);
    seg_add(&a, 9);
    seg_add(&a, 11);
    size_t full_end = a.data_end;
    seg_pad_block(&a);
    seg_zeros(&a, BLK);
    memset(a.buf + x, 0, skip_at - x); /* write A never reached the disk */
    a.data_end = next == 2 ? full_end : x;
    layout_add(L, &a, a.len);
    seg_write(&a);
    if (next) {
        seg_begin_v3(&b, 2, BLK);
        seg_add(&b, next == 1 ? 5 : 13);
        seg_pad_block(&b);
        layout_add(L, &b, b.len);
        seg_write(&b);
    }
    if (next == 0) {
        expect_all_ok(L, (uint64_t[]){1, 3}, 2);
        expect_last_end(L, x);
    } else if (next == 1) {
        expect_all_ok(L, (uint64_t[]){1, 3, 5}, 3);
    } else {
        expect_all_ok(L, NULL, 0);
        expect_hole(L, TOL, "wal-00000002.log");
        expect_hole(L, ABS, "wal-00000002.log");
        expect_hole(L, PIT, "wal-00000002.log");
        expect_skip(L, (uint64_t[]){1, 3, 13}, 3, 0);
        L->out[SKIP].holes = 1;
    }
}

static void build_v3_lost_write_last(struct layout *L)
{
    build_v3_lost_write(L, 0, 0);
}

static void build_v3_lost_write_then_next(struct layout *L)
{
    build_v3_lost_write(L, 0, 1);
}

static void build_v3_lost_write_hole(struct layout *L)
{
    build_v3_lost_write(L, 0, 2);
}

static void build_v3_lost_write_spanning(struct layout *L)
{
    build_v3_lost_write(L, 1, 0);
}

/* A recycled file: segment 7 written over segment 3's earlier life
** (old_life).  AT_BOUNDARY 0: the new data (1, 3, 5) ends inside block 1,
** and the stale skip record at 8192 names exactly that offset; 1: the new
** data (1, 3, a skip, 5, 7) ends exactly at 12288, where a stale batch
** record begins.  Nothing stale is ever delivered and no mode reports an
** error, whether segment 7 is the last one or segment 8 follows with
** prev_end = where 7's data ends. */
static void build_v3_recycled(struct layout *L, int at_boundary,
                              int not_last)
{
    struct seg n, o, b;
    seg_begin_v3(&n, 7, BLK);
    seg_add(&n, 1);
    seg_add_big(&n, 3, 3000);
    if (at_boundary) {
        assert_int_equal(seg_skip(&n), BLK);
        seg_add_big(&n, 5, 3000);
        seg_add_until(&n, 7, 3 * BLK);
    } else {
        seg_add_big(&n, 5, 2000);
        assert_true(n.data_end > BLK && n.data_end < 2 * BLK);
    }
    size_t end = n.data_end;
    old_life(&o, 3, end);
    if (at_boundary) {
        /* what the reader meets at the end: a stale batch header */
        assert_int_equal(o.buf[end + 12], RV_WAL_BATCH);
        assert_int_equal(rv_wal_record_tag(o.buf + end), 3);
    } else {
        /* the next boundary: a stale skip record naming END */
        assert_int_equal(o.buf[2 * BLK + 12], RV_WAL_SKIP);
        assert_int_equal(rv_get_fixed64(o.buf + 2 * BLK + 16), end);
    }
    seg_recycled_from(&n, &o);
    seg_free(&o);
    layout_add(L, &n, n.len);
    seg_write(&n);
    if (not_last) {
        seg_begin_v3(&b, 8, BLK);
        assert_int_equal(rv_get_fixed64(b.buf + 24), end);
        seg_add(&b, 9);
        seg_pad_block(&b);
        layout_add(L, &b, b.len);
        seg_write(&b);
        expect_all_ok(L, (uint64_t[]){1, 3, 5, 7, 9}, at_boundary ? 5 : 4);
        if (!at_boundary)
            expect_all_ok(L, (uint64_t[]){1, 3, 5, 9}, 4);
        return;
    }
    expect_all_ok(L, (uint64_t[]){1, 3, 5, 7}, at_boundary ? 4 : 3);
    expect_last_end(L, end);
}

static void build_v3_recycled_last(struct layout *L)
{
    build_v3_recycled(L, 0, 0);
}

static void build_v3_recycled_not_last(struct layout *L)
{
    build_v3_recycled(L, 0, 1);
}

static void build_v3_recycled_boundary_last(struct layout *L)
{
    build_v3_recycled(L, 1, 0);
}

static void build_v3_recycled_boundary_not_last(struct layout *L)
{
    build_v3_recycled(L, 1, 1);
}

/* A recycled file whose new data ends exactly at a block boundary (8192)
** where the earlier life has the middle of a record's payload: 16 bytes
** that are not a record header, not zero, with a zero byte where a
** header's type would be.  That is not data of segment 7 (its writer
** never wrote there); the data ends at 8192 in every mode, as at a stale
** header.  NOT_LAST: segment 8 follows with prev_end 8192. */
static void build_v3_recycled_payload(struct layout *L, int not_last)
{
    struct seg n, o, b;
    seg_begin_v3(&n, 7, BLK);
    seg_add(&n, 1);
    seg_add_big(&n, 3, 3000);
    seg_add_until(&n, 5, 2 * BLK);
    seg_begin_v3(&o, 3, BLK);
    seg_add(&o, 101);
    seg_add_big(&o, 103, 3000);
    seg_add_zero_at(&o, 105, 6000, 2 * BLK + 12); /* across 8192 */
    seg_add(&o, 107);
    seg_pad_block(&o);
    const char *h = o.buf + 2 * BLK;
    assert_int_equal(h[12], 0);
    assert_int_not_equal(h[0], 0);
    seg_recycled_from(&n, &o);
    seg_free(&o);
    layout_add(L, &n, n.len);
    seg_write(&n);
    if (not_last) {
        seg_begin_v3(&b, 8, BLK);
        seg_add(&b, 7);
        seg_pad_block(&b);
        layout_add(L, &b, b.len);
        seg_write(&b);
        expect_all_ok(L, (uint64_t[]){1, 3, 5, 7}, 4);
        return;
    }
    expect_all_ok(L, (uint64_t[]){1, 3, 5}, 3);
    expect_last_end(L, 2 * BLK);
}

static void build_v3_recycled_payload_last(struct layout *L)
{
    build_v3_recycled_payload(L, 0);
}

static void build_v3_recycled_payload_not_last(struct layout *L)
{
    build_v3_recycled_payload(L, 1);
}

/* A lost in-flight write in a recycled file: records 1, 3 (write 1) end
** in block 0; write A (5, across 4096) was lost, so block 1 still holds
** the earlier life; write B (a skip record at 8192 naming A's end, then
** 7, 9) reached the disk.  Replay keeps 1, 3 in every mode. */
static void build_v3_recycled_lost_write(struct layout *L)
{
    struct seg n, o;
    seg_begin_v3(&n, 7, BLK);
    seg_add(&n, 1);
    seg_add_big(&n, 3, 2000);
    size_t x = n.data_end;
    seg_add_big(&n, 5, 3000);
    assert_true(n.data_end > BLK && n.data_end < 2 * BLK);
    seg_skip(&n);
    seg_add(&n, 7);
    seg_add(&n, 9);
    old_life(&o, 3, 0);
    seg_recycled_from(&n, &o);
    memset(n.buf + x, 0, BLK - x);             /* as write 1 left it */
    memcpy(n.buf + BLK, o.buf + BLK, BLK);     /* the earlier life */
    seg_free(&o);
    n.data_end = x;
    layout_add(L, &n, n.len);
    seg_write(&n);
    expect_all_ok(L, (uint64_t[]){1, 3}, 2);
    expect_last_end(L, x);
}

/* A current-tag record that fails its checksum at the end of the last
** version-3 segment, zeros after it: a torn write. */
static void build_v3_torn_checksum(struct layout *L)
{
    struct seg a, b;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add(&a, 3);
    seg_pad_block(&a);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin_v3(&b, 2, BLK);
    seg_add(&b, 5);
    seg_add_big(&b, 7, 3000);
    size_t r9 = seg_add(&b, 9);
    flip(&b, r9 + RV_WAL_RECORD_HEADER_SIZE + 20);
    seg_pad_block(&b);
    seg_zeros(&b, BLK);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_torn(L, (uint64_t[]){1, 3, 5, 7}, 4, 1, r9);
}

/* The last write's second block never reached the disk (4 KiB lost): the
** record across 4096 fails its checksum, zeros follow: torn. */
static void build_v3_torn_block(struct layout *L)
{
    struct seg a;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    size_t r3 = seg_add_big(&a, 3, 5000);
    seg_add(&a, 5);
    seg_pad_block(&a);
    seg_zeros(&a, BLK);
    memset(a.buf + BLK, 0, BLK);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_torn(L, (uint64_t[]){1}, 1, 0, r3);
}

/* A torn record at the end of a recycled last segment: the earlier
** life's blocks follow the zeros after it.  tolerate and point_in_time
** cut there, absolute refuses; skip_any_corrupted_records, seeing bytes
** that are not zero after the bad record, takes it for an unsynced tail
** rather than a torn write (wal_reader.h): it skips it, finds no record
** that verifies after it, and truncates nothing. */
static void build_v3_torn_recycled(struct layout *L)
{
    struct seg n, o;
    seg_begin_v3(&n, 7, BLK);
    seg_add(&n, 1);
    seg_add_big(&n, 3, 3000);
    size_t r5 = seg_add(&n, 5);
    flip(&n, r5 + RV_WAL_RECORD_HEADER_SIZE + 20);
    old_life(&o, 3, r5);
    seg_recycled_from(&n, &o);
    seg_free(&o);
    layout_add(L, &n, n.len);
    seg_write(&n);
    expect_cut(L, TOL, (uint64_t[]){1, 3}, 2, 0, r5, 0);
    expect_corrupt(L, ABS, 0, r5);
    expect_cut(L, PIT, (uint64_t[]){1, 3}, 2, 0, r5, 1);
    expect_skip(L, (uint64_t[]){1, 3}, 2, 1);
    L->out[TOL].last_end = r5;
    L->out[PIT].last_end = r5;
}

/* Damage in a version-3 segment that is not the last: corruption. */
static void build_v3_corrupt_not_last(struct layout *L)
{
    struct seg a, b;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add_big(&a, 3, 5000);
    size_t r5 = seg_add(&a, 5);
    flip(&a, r5 + RV_WAL_RECORD_HEADER_SIZE + 1);
    seg_pad_block(&a);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin_v3(&b, 2, BLK);
    seg_add(&b, 7);
    seg_pad_block(&b);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_corrupt(L, TOL, 0, r5);
    expect_corrupt(L, ABS, 0, r5);
    expect_cut(L, PIT, (uint64_t[]){1, 3}, 2, 0, r5, 1);
    expect_skip(L, (uint64_t[]){1, 3, 7}, 3, 1);
    /* Skip mode resynchronises to the end of the file (nothing verifies
    ** after the bad record), so segment 1's data "ends" at its size, not
    ** at segment 2's prev_end: a hole, passed over. */
    L->out[SKIP].holes = 1;
}

/* Version-3 segments closed cleanly: sealed, trimmed right after the
** seal (wal_direct.c); the next one's prev_end is where the seal ends. */
static void build_v3_sealed(struct layout *L)
{
    struct seg a, b;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add_big(&a, 3, 3000);
    seg_skip(&a);
    seg_add_big(&a, 5, 3000);
    seg_seal(&a);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin_v3(&b, 2, BLK);
    assert_int_equal(rv_get_fixed64(b.buf + 24), L->size[0]);
    seg_add(&b, 7);
    seg_seal(&b);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_all_ok(L, (uint64_t[]){1, 3, 5, 7}, 4);
    expect_last_end(L, (size_t)L->size[1]);
}

/* A damaged record in a sealed version-3 segment: corruption. */
static void build_v3_sealed_damaged(struct layout *L)
{
    struct seg a;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add_big(&a, 3, 3000);
    seg_skip(&a);
    seg_add_big(&a, 5, 3000);
    size_t r7 = seg_add(&a, 7);
    seg_add(&a, 9);
    seg_seal(&a);
    flip(&a, r7 + RV_WAL_RECORD_HEADER_SIZE + 3);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_corrupt(L, TOL, 0, r7);
    expect_corrupt(L, ABS, 0, r7);
    expect_cut(L, PIT, (uint64_t[]){1, 3, 5}, 3, 0, r7, 1);
    L->out[PIT].dropped = 3; /* the bad record, 9 and the seal */
    expect_skip(L, (uint64_t[]){1, 3, 5, 9}, 4, 1);
}

/* A sealed version-3 segment whose block 1 reads back as zeros; a record
** began at 4096.  The seal says everything before it was durable, so the
** zero header at 4096 is damage, not the end of the data: records 9, 11
** and the seal after it are there.  Corruption at 4096. */
static void build_v3_sealed_zeroed_block(struct layout *L)
{
    struct seg a;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add_big(&a, 3, 3000);
    seg_add_until(&a, 5, BLK);
    seg_add_until(&a, 7, 2 * BLK);
    seg_add(&a, 9);
    seg_add(&a, 11);
    seg_seal(&a);
    memset(a.buf + BLK, 0, BLK);
    layout_add(L, &a, a.len);
    seg_write(&a);
    expect_corrupt(L, TOL, 0, BLK);
    expect_corrupt(L, ABS, 0, BLK);
    expect_cut(L, PIT, (uint64_t[]){1, 3, 5}, 3, 0, BLK, 1);
    L->out[PIT].dropped = 4; /* the zeroed record, 9, 11 and the seal */
    expect_skip(L, (uint64_t[]){1, 3, 5, 9, 11}, 5, 1);
}

/* A recycled segment sealed at close, the process killed between the
** write of the seal's block and the trim after it (dio_seal): zeros to
** the end of that block, then the earlier life.  The data ends at the
** seal; what follows is not this segment's: clean in every mode, whether
** last or followed by segment 8 (prev_end = the seal's end). */
static void build_v3_sealed_untrimmed(struct layout *L, int not_last)
{
    struct seg n, o, b;
    seg_begin_v3(&n, 7, BLK);
    seg_add(&n, 1);
    seg_add_big(&n, 3, 3000);
    seg_add_big(&n, 5, 2000);
    seg_seal(&n);
    size_t end = n.data_end;
    old_life(&o, 3, end);
    seg_recycled_from(&n, &o);
    seg_free(&o);
    layout_add(L, &n, n.len);
    seg_write(&n);
    if (not_last) {
        seg_begin_v3(&b, 8, BLK);
        assert_int_equal(rv_get_fixed64(b.buf + 24), end);
        seg_add(&b, 7);
        seg_pad_block(&b);
        layout_add(L, &b, b.len);
        seg_write(&b);
        expect_all_ok(L, (uint64_t[]){1, 3, 5, 7}, 4);
        return;
    }
    expect_all_ok(L, (uint64_t[]){1, 3, 5}, 3);
    expect_last_end(L, end);
}

static void build_v3_sealed_untrimmed_last(struct layout *L)
{
    build_v3_sealed_untrimmed(L, 0);
}

static void build_v3_sealed_untrimmed_not_last(struct layout *L)
{
    build_v3_sealed_untrimmed(L, 1);
}

/* A version-3 segment, then a spare (wal_format.h: first 48 bytes zero)
** made by SPARE: dropped in every mode (deleted unless read-only),
** absolute_consistency included. */
static void build_v3_then_spare(struct layout *L,
                                void (*spare)(struct seg *))
{
    struct seg a, b;
    seg_begin_v3(&a, 5, BLK);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t end = a.data_end;
    seg_pad_block(&a);
    seg_zeros(&a, BLK);
    layout_add(L, &a, a.len);
    seg_write(&a);
    memset(&b, 0, sizeof b);
    b.number = 6;
    b.block = BLK;
    spare(&b);
    layout_add(L, &b, b.len);
    seg_write(&b);
    for (int mode = 0; mode < 4; mode++)
        expect_spare(L, mode, (uint64_t[]){1, 3}, 2, 1);
    expect_last_end(L, end);
}

static void spare_empty(struct seg *s)
{
    (void)s;
}

static void spare_zeroed(struct seg *s)
{
    seg_zeros(s, 3 * BLK);
}

/* A recycled file renamed to the spare's number: first block zeroed,
** the rest its earlier life (segment 4: records, skip records, a seal). */
static void spare_recycled(struct seg *s)
{
    struct seg o;
    old_life(&o, 4, 2 * BLK);
    seg_recycled_from(s, &o);
    seg_free(&o);
    memset(s->buf, 0, BLK);
}

static void build_v3_spare_empty(struct layout *L)
{
    build_v3_then_spare(L, spare_empty);
}

static void build_v3_spare_zeroed(struct layout *L)
{
    build_v3_then_spare(L, spare_zeroed);
}

static void build_v3_spare_recycled(struct layout *L)
{
    build_v3_then_spare(L, spare_recycled);
}

/* Segment 2's version-3 header verifies but is wrong: FIELD_OFF set to
** VALUE (fixed32) and the checksum recomputed.  Refused with MSG; the
** records behind it are v3 records of a header the reader rejected. */
static void build_v3_bad_header(struct layout *L, size_t field_off,
                                uint32_t value, const char *msg)
{
    struct seg a, b;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add(&a, 3);
    seg_pad_block(&a);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin_v3(&b, 2, BLK);
    seg_add(&b, 5);
    seg_pad_block(&b);
    rv_put_fixed32(b.buf + field_off, value);
    rv_put_fixed64(b.buf + 40, XXH3_64bits(b.buf, 40));
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_corrupt(L, TOL, 1, 0);
    L->out[TOL].msg = msg;
    expect_corrupt(L, ABS, 1, 0);
    L->out[ABS].msg = msg;
    expect_cut(L, PIT, (uint64_t[]){1, 3}, 2, 1, 0, 1);
    /* The header tells neither the version nor the block size the reader
    ** could trust, so skip mode finds no record of segment 2. */
    expect_skip(L, (uint64_t[]){1, 3}, 2, 1);
}

static void build_v3_block_size_1000(struct layout *L)
{
    build_v3_bad_header(L, 32, 1000, "bad block size 1000");
}

static void build_v3_block_size_0(struct layout *L)
{
    build_v3_bad_header(L, 32, 0, "bad block size 0");
}

static void build_v3_header_size_40(struct layout *L)
{
    build_v3_bad_header(L, 12, 40, "bad segment header size 40 "
                        "(expected 48)");
}

/* The mode changed between opens: version 2 (preallocated zeros), then
** version 3 (a skip record inside) whose prev_end is where 2 ended. */
static void build_v2_then_v3(struct layout *L)
{
    struct seg a, b;
    seg_begin(&a, 1);
    seg_add(&a, 1);
    seg_add(&a, 3);
    size_t a_end = a.data_end;
    seg_zeros(&a, 100);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin_v3(&b, 2, BLK);
    assert_int_equal(rv_get_fixed64(b.buf + 24), a_end);
    seg_add(&b, 5);
    seg_skip(&b);
    seg_add_big(&b, 7, 5000);
    size_t end = b.data_end;
    seg_pad_block(&b);
    seg_zeros(&b, BLK);
    layout_add(L, &b, b.len);
    seg_write(&b);
    expect_all_ok(L, (uint64_t[]){1, 3, 5, 7}, 4);
    expect_last_end(L, end);
}

/* Version 3 (skip record, preallocated zeros), then version 2, then 3
** again, each prev_end where the one before ended. */
static void build_v3_then_v2(struct layout *L)
{
    struct seg a, b, c;
    seg_begin_v3(&a, 1, BLK);
    seg_add(&a, 1);
    seg_add_big(&a, 3, 3000);
    seg_skip(&a);
    seg_add(&a, 5);
    size_t a_end = a.data_end;
    seg_pad_block(&a);
    seg_zeros(&a, BLK);
    layout_add(L, &a, a.len);
    seg_write(&a);
    seg_begin(&b, 2);
    assert_int_equal(rv_get_fixed64(b.buf + 24), a_end);
    seg_add(&b, 7);
    seg_add(&b, 9);
    layout_add(L, &b, b.len);
    seg_write(&b);
    seg_begin_v3(&c, 3, BLK);
    seg_add(&c, 11);
    size_t end = c.data_end;
    seg_pad_block(&c);
    layout_add(L, &c, c.len);
    seg_write(&c);
    expect_all_ok(L, (uint64_t[]){1, 3, 5, 7, 9, 11}, 6);
    expect_last_end(L, end);
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
    if (rc == RAVEL_CORRUPT && o->msg)
        CHECK(strstr(msg, o->msg) != NULL, "message '%s' lacks '%s'", msg,
              o->msg);
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
        CHECK(res.spares == o->spares, "spares %llu, want %llu",
              (unsigned long long)res.spares, (unsigned long long)o->spares);
        CHECK((res.spare_from != 0) == (o->spares != 0),
              "spare_from %llu with %llu spares",
              (unsigned long long)res.spare_from,
              (unsigned long long)o->spares);
        CHECK(o->last_end == 0 || res.last_end == o->last_end,
              "last_end %llu, want %llu", (unsigned long long)res.last_end,
              (unsigned long long)o->last_end);
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
        } else if (o->size[i] == -1 && res.spare_from &&
                   L.numbers[i] >= res.spare_from) {
            /* A spare: replay leaves it for the caller to delete
            ** (spare_from), once its new manifest is durable. */
            CHECK(len == before_len[i], "spare segment %d: size %lld, was "
                  "%lld", i, len, before_len[i]);
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
SCENARIO(v3_clean)
SCENARIO(v3_skip_continues)
SCENARIO(v3_lost_write_last)
SCENARIO(v3_lost_write_then_next)
SCENARIO(v3_lost_write_hole)
SCENARIO(v3_lost_write_spanning)
SCENARIO(v3_recycled_last)
SCENARIO(v3_recycled_not_last)
SCENARIO(v3_recycled_boundary_last)
SCENARIO(v3_recycled_boundary_not_last)
SCENARIO(v3_recycled_payload_last)
SCENARIO(v3_recycled_payload_not_last)
SCENARIO(v3_recycled_lost_write)
SCENARIO(v3_torn_checksum)
SCENARIO(v3_torn_block)
SCENARIO(v3_torn_recycled)
SCENARIO(v3_corrupt_not_last)
SCENARIO(v3_sealed)
SCENARIO(v3_sealed_damaged)
SCENARIO(v3_sealed_zeroed_block)
SCENARIO(v3_sealed_untrimmed_last)
SCENARIO(v3_sealed_untrimmed_not_last)
SCENARIO(v3_spare_empty)
SCENARIO(v3_spare_zeroed)
SCENARIO(v3_spare_recycled)
SCENARIO(v3_block_size_1000)
SCENARIO(v3_block_size_0)
SCENARIO(v3_header_size_40)
SCENARIO(v2_then_v3)
SCENARIO(v3_then_v2)

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

/* Replays segment 1 (a header of LAYOUT_SIZE bytes, version VERSION, its
** checksum recomputed, then a record) read-only: refused, naming WHAT. */
static void expect_version_refused(size_t layout_size, uint32_t version,
                                   const char *what)
{
    clean_dir();
    struct seg a;
    if (layout_size == RV_WAL_V3_HEADER_SIZE)
        seg_begin_v3(&a, 1, 4096);
    else
        seg_begin(&a, 1);
    seg_add(&a, 1);
    size_t sum = layout_size - 8;
    rv_put_fixed32(a.buf + 8, version);
    rv_put_fixed64(a.buf + sum, XXH3_64bits(a.buf, sum));
    seg_write(&a);
    uint64_t nums[] = {1};
    struct rv_wal_replay_result res;
    g_nseq = 0;
    assert_int_equal(rv_wal_replay(g_dir, 0, nums, 1, TOL, 1, collect, NULL,
                                   &res), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "wal-00000001.log: byte "
                           "offset 0"));
    if (!strstr(ravel_errmsg(), what))
        fail_msg("message '%s' lacks '%s'", ravel_errmsg(), what);
    assert_int_equal(g_nseq, 0);
}

static void test_future_version(void **state)
{
    (void)state;
    /* A version this reader does not know, in either header layout. */
    expect_version_refused(RV_WAL_HEADER_SIZE, 4,
                           "unsupported WAL version 4");
    expect_version_refused(RV_WAL_V3_HEADER_SIZE, 4,
                           "unsupported WAL version 4");
    /* Version 3 in the 40-byte layout of version 2, and 2 in the 48-byte
    ** one: each version has one layout. */
    expect_version_refused(RV_WAL_HEADER_SIZE, 3, "WAL version 3");
    expect_version_refused(RV_WAL_V3_HEADER_SIZE, 2, "WAL version 2");
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
        cmocka_unit_test(test_v3_clean),
        cmocka_unit_test(test_v3_skip_continues),
        cmocka_unit_test(test_v3_lost_write_last),
        cmocka_unit_test(test_v3_lost_write_then_next),
        cmocka_unit_test(test_v3_lost_write_hole),
        cmocka_unit_test(test_v3_lost_write_spanning),
        cmocka_unit_test(test_v3_recycled_last),
        cmocka_unit_test(test_v3_recycled_not_last),
        cmocka_unit_test(test_v3_recycled_boundary_last),
        cmocka_unit_test(test_v3_recycled_boundary_not_last),
        cmocka_unit_test(test_v3_recycled_payload_last),
        cmocka_unit_test(test_v3_recycled_payload_not_last),
        cmocka_unit_test(test_v3_recycled_lost_write),
        cmocka_unit_test(test_v3_torn_checksum),
        cmocka_unit_test(test_v3_torn_block),
        cmocka_unit_test(test_v3_torn_recycled),
        cmocka_unit_test(test_v3_corrupt_not_last),
        cmocka_unit_test(test_v3_sealed),
        cmocka_unit_test(test_v3_sealed_damaged),
        cmocka_unit_test(test_v3_sealed_zeroed_block),
        cmocka_unit_test(test_v3_sealed_untrimmed_last),
        cmocka_unit_test(test_v3_sealed_untrimmed_not_last),
        cmocka_unit_test(test_v3_spare_empty),
        cmocka_unit_test(test_v3_spare_zeroed),
        cmocka_unit_test(test_v3_spare_recycled),
        cmocka_unit_test(test_v3_block_size_1000),
        cmocka_unit_test(test_v3_block_size_0),
        cmocka_unit_test(test_v3_header_size_40),
        cmocka_unit_test(test_v2_then_v3),
        cmocka_unit_test(test_v3_then_v2),
        cmocka_unit_test(test_callback_error),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_future_version),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
