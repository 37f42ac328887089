/*
** test_recovery.c -- reopening after damage to the write-ahead log, under
** each wal_recovery_mode, through the public API; and the LOCK.
**
** A database is written (one WAL segment per open: several opens make
** several segments), closed, and its real files damaged the way crashes and
** bad disks do: a torn tail (the last record cut short, or its end never
** written), a corrupt record in the middle, an impossible record length, a
** segment that is not the last one cut short or with a bad record, a bad
** segment header.  Each mode must then either refuse the open with
** RAVEL_CORRUPT and a message naming the file and offset, or open with
** exactly the keys the mode promises -- and the repair must stick: the
** next open sees the same keys.
**
** Damage is placed with the WAL format of lib/wal/wal_format.h (docs/
** formats.md): a 40-byte segment header, then records of a 16-byte header
** (checksum:8 length:4 type:1 zero:3) and the payload padded to 8 bytes;
** a zero record header ends the data, and a closed segment ends with a
** seal record (type 2).
*/
#include "crash_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG_HEADER 40    /* version 2; version 3 (wal_io=direct): 48 */
#define REC_HEADER 16
#define PER_SEG 10
#define MAX_SEGS 16
#define MAX_RECS 256

enum mode { TOLERATE, ABSOLUTE, POINT_IN_TIME, SKIP, NMODES };

static const char *mode_name[NMODES] = {
    "tolerate_corrupted_tail_records",
    "absolute_consistency",
    "point_in_time",
    "skip_any_corrupted_records",
};

static int db_counter;

/* What a child process is given (write_segment_and_crash, open_in_child). */
struct child_args {
    char dir[PATH_MAX];
    int s; /* the segment to write */
};

/* ------------------------------------------------------------ WAL files */

struct seg {
    uint64_t number;
    char path[4096];
    char name[256];
};

static int seg_cmp(const void *a, const void *b)
{
    const struct seg *x = a, *y = b;
    return x->number < y->number ? -1 : x->number > y->number;
}

/* The WAL segments of DIR, ascending. */
static int list_segments(const char *dir, struct seg *segs)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned long long num;
        char tail[8];
        if (sscanf(e->d_name, "wal-%llu.%7s", &num, tail) != 2
            || strcmp(tail, "log") != 0)
            continue;
        assert_true(n < MAX_SEGS);
        segs[n].number = num;
        snprintf(segs[n].name, sizeof segs[n].name, "%s", e->d_name);
        snprintf(segs[n].path, sizeof segs[n].path, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(segs, (size_t)n, sizeof *segs, seg_cmp);
    return n;
}

struct rec {
    size_t off;   /* of the record header */
    size_t len;   /* payload bytes */
    size_t size;  /* header + padded payload */
};

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

/* The records of an undamaged segment. */
static int parse_records(const char *path, struct rec *recs)
{
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    const unsigned char *p = (const unsigned char *)data;
    assert_true(len >= SEG_HEADER);
    assert_memory_equal(data, "RAVELWAL", 8);
    int n = 0;
    size_t off = get32(p + 12); /* the header's size */
    assert_true(off == SEG_HEADER || off == 48);
    while (off + REC_HEADER <= len) {
        static const unsigned char zero[REC_HEADER];
        if (memcmp(p + off, zero, REC_HEADER) == 0 || p[off + 12] == 2)
            break; /* the end, or the seal written at close */
        size_t plen = get32(p + off + 8);
        size_t size = REC_HEADER + ((plen + 7) & ~(size_t)7);
        assert_true(off + size <= len);
        assert_true(n < MAX_RECS);
        recs[n].off = off;
        recs[n].len = plen;
        recs[n].size = size;
        n++;
        off += size;
    }
    free(data);
    return n;
}

/* A segment prepared ahead and never started: its header is zeros. */
static int is_spare(const char *path)
{
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    static const char zero[8];
    int spare = len < 8 || memcmp(data, zero, 8) == 0;
    free(data);
    return spare;
}

static void file_truncate(const char *path, size_t len)
{
    assert_int_equal(truncate(path, (off_t)len), 0);
}

static void file_xor(const char *path, size_t off, unsigned char mask)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, (off_t)off), 1);
    c ^= mask;
    assert_int_equal(pwrite(fd, &c, 1, (off_t)off), 1);
    close(fd);
}

static void file_put32(const char *path, size_t off, uint32_t v)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                          (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    assert_int_equal(pwrite(fd, b, 4, (off_t)off), 4);
    close(fd);
}

static void file_zero(const char *path, size_t off, size_t len)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    char *z = calloc(1, len);
    assert_int_equal(pwrite(fd, z, len, (off_t)off), (ssize_t)len);
    free(z);
    close(fd);
}

/* ---------------------------------------------------- databases, keys */

static void key_of(char *buf, size_t size, int s, int k)
{
    snprintf(buf, size, "s%d-k%02d", s, k);
}

static void val_of(char *buf, size_t size, int s, int k)
{
    snprintf(buf, size, "value of s%d k%02d %0*d", s, k, (s * 7 + k) % 30, 0);
}

/* How the last open of build_db ends: closed (its segment sealed, and the
** manifest saying where the log ends), or as a crash leaves it (a child
** process exits without closing: nothing says where the log ended, so a
** damaged tail may be a torn one). */
enum db_end { CLOSED, CRASHED };

/* One open writing segment S's puts, closed. */
static void write_segment(const char *dir, int s)
{
    char key[32], val[64];
    ravel_db *db = tu_open_ok(dir, NULL);
    for (int k = 0; k < PER_SEG; k++) {
        key_of(key, sizeof key, s, k);
        val_of(val, sizeof val, s, k);
        tu_put(db, k == PER_SEG - 1 ? RAVEL_SYNC : 0, key, val);
    }
    TU_OK(ravel_close(db));
}

/* The same in a child process that exits without closing, once its last
** put is synced. */
static int write_segment_child(const void *arg)
{
    const struct child_args *ca = arg;
    char key[32], val[64];
    ravel_db *db = NULL;
    if (tu_open(ca->dir, NULL, &db) != RAVEL_OK)
        _exit(1);
    for (int k = 0; k < PER_SEG; k++) {
        key_of(key, sizeof key, ca->s, k);
        val_of(val, sizeof val, ca->s, k);
        if (ravel_put(db, k == PER_SEG - 1 ? RAVEL_SYNC : 0, key,
                      strlen(key), val, strlen(val)) != RAVEL_OK)
            _exit(2);
    }
    _exit(0); /* no ravel_close: as a crash leaves it */
}

static void write_segment_and_crash(const char *dir, int s)
{
    struct child_args ca = {.s = s};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    struct crash_child c = {.on_msg = NULL};
    int status = crash_run(&c, "write-segment", &ca, sizeof ca, 120000);
    if (status != 0)
        fail_msg("the child writing segment %d failed (exit status %d)", s,
                 status);
}

/* Writes NSEGS segments of PER_SEG single puts each (one open per
** segment), the last open ending as END says, and fills SEGS with the
** segments that hold them. */
static char *build_db(int nsegs, struct seg *segs,
                      struct rec recs[][MAX_RECS], enum db_end end)
{
    char *dir = tu_path("rec-%d", db_counter++);
    for (int s = 0; s < nsegs; s++) {
        if (s == nsegs - 1 && end == CRASHED)
            write_segment_and_crash(dir, s);
        else
            write_segment(dir, s);
    }
    struct seg all[MAX_SEGS];
    int n = list_segments(dir, all);
    int found = 0;
    for (int i = 0; i < n; i++) {
        struct rec r[MAX_RECS];
        if (is_spare(all[i].path))
            continue; /* wal_io=direct's next segment, prepared ahead */
        int nr = parse_records(all[i].path, r);
        if (nr == 0)
            continue;
        if (nr != PER_SEG)
            fail_msg("%s holds %d records; expected one per put (%d)",
                     all[i].name, nr, PER_SEG);
        assert_true(found < nsegs);
        segs[found] = all[i];
        memcpy(recs[found], r, sizeof r);
        found++;
    }
    if (found != nsegs)
        fail_msg("%d opens with writes made %d WAL segments with records",
                 nsegs, found);
    return dir;
}

/* Which keys an open must show: SURVIVES[s][k]; -1 = not checked. */
typedef int survive_t[MAX_SEGS][PER_SEG];

static void survive_all(survive_t sv, int nsegs, int value)
{
    for (int s = 0; s < MAX_SEGS; s++)
        for (int k = 0; k < PER_SEG; k++)
            sv[s][k] = s < nsegs ? value : 0;
}

static void check_keys(ravel_db *db, survive_t sv, int nsegs,
                       const char *what)
{
    char key[32], val[64];
    for (int s = 0; s < nsegs; s++) {
        for (int k = 0; k < PER_SEG; k++) {
            if (sv[s][k] < 0)
                continue;
            key_of(key, sizeof key, s, k);
            val_of(val, sizeof val, s, k);
            void *v = NULL;
            size_t vl = 0;
            int rc = ravel_get(db, NULL, key, strlen(key), &v, &vl);
            if (sv[s][k] && rc != RAVEL_OK)
                fail_msg("%s: key %s should have survived: %s", what, key,
                         ravel_errstr(rc));
            if (!sv[s][k] && rc != RAVEL_NOTFOUND)
                fail_msg("%s: key %s should be gone: %s", what, key,
                         ravel_errstr(rc));
            if (rc == RAVEL_OK
                && (vl != strlen(val) || memcmp(v, val, vl) != 0))
                fail_msg("%s: key %s has a wrong value", what, key);
            ravel_free(v);
        }
    }
}

static char *mode_opts(enum mode m, const char *extra)
{
    char *s = malloc(256);
    snprintf(s, 256, "create_if_missing=false;wal_recovery_mode=%s%s%s",
             mode_name[m], extra ? ";" : "", extra ? extra : "");
    return s;
}

/* Does MSG contain OFF as a whole decimal (or 0x hex) number? */
static int names_number(const char *msg, uint64_t off)
{
    char dec[32], hex[32];
    snprintf(dec, sizeof dec, "%" PRIu64, off);
    snprintf(hex, sizeof hex, "0x%" PRIx64, off);
    const char *pats[2] = {dec, hex};
    for (int i = 0; i < 2; i++) {
        size_t pl = strlen(pats[i]);
        for (const char *p = msg; (p = strstr(p, pats[i])); p++) {
            int before_ok = p == msg || !(p[-1] >= '0' && p[-1] <= '9');
            char after = p[pl];
            int after_ok = !((after >= '0' && after <= '9')
                             || (after >= 'a' && after <= 'f'));
            if (before_ok && after_ok)
                return 1;
        }
    }
    return 0;
}

/* Names of the segment files and their sizes, one per line. */
static char *seg_listing(const char *dir)
{
    struct seg segs[MAX_SEGS];
    int n = list_segments(dir, segs);
    char *out = calloc(1, 64 * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        struct stat st;
        assert_int_equal(stat(segs[i].path, &st), 0);
        sprintf(out + strlen(out), "%s %lld\n", segs[i].name,
                (long long)st.st_size);
    }
    return out;
}

/* What one mode must do with one kind of damage. */
struct expect {
    int corrupt;             /* RAVEL_CORRUPT expected */
    const char *file;        /* ... naming this file */
    uint64_t offsets[4];     /* ... and one of these offsets */
    int noffsets;
    survive_t survives;      /* otherwise: these keys */
};

/* Opens DIR under mode M and checks the outcome against E.  After a
** refusal: nothing was changed and the LOCK was released (the same open
** fails the same way again).  After a successful open: the repair sticks
** -- a new write lands, and the next open (under absolute_consistency,
** except after skipping records, which stay in the file) sees the same. */
static void open_and_check(const char *dir, enum mode m, struct expect *e,
                           int nsegs, const char *what)
{
    char label[256];
    snprintf(label, sizeof label, "%s, %s", what, mode_name[m]);
    char *opts = mode_opts(m, NULL);
    ravel_db *db = NULL;
    if (e->corrupt) {
        char *before = seg_listing(dir);
        for (int attempt = 0; attempt < 2; attempt++) {
            tu_errmsg_prime();
            int rc = tu_open(dir, opts, &db);
            if (rc != RAVEL_CORRUPT) {
                if (rc == RAVEL_OK)
                    ravel_close(db);
                fail_msg("%s: open returned %s, expected RAVEL_CORRUPT (%s)",
                         label, ravel_errstr(rc), ravel_errmsg());
            }
            const char *msg = ravel_errmsg();
            if (!tu_errmsg_is_fresh())
                fail_msg("%s: RAVEL_CORRUPT without a message", label);
            if (!strstr(msg, e->file))
                fail_msg("%s: message does not name %s: %s", label, e->file,
                         msg);
            int named = 0;
            for (int i = 0; i < e->noffsets; i++)
                named |= names_number(msg, e->offsets[i]);
            if (!named)
                fail_msg("%s: message does not name the offset (%" PRIu64
                         "): %s", label, e->offsets[0], msg);
            if (attempt == 0)
                printf("# %s: %s\n", label, msg);
        }
        char *after = seg_listing(dir);
        if (strcmp(before, after) != 0)
            fail_msg("%s: the refused open changed the WAL files:\n%s---\n%s",
                     label, before, after);
        free(before);
        free(after);
        free(opts);
        return;
    }

    int rc = tu_open(dir, opts, &db);
    if (rc != RAVEL_OK)
        fail_msg("%s: open: %s: %s", label, ravel_errstr(rc),
                 ravel_errmsg());
    check_keys(db, e->survives, nsegs, label);
    tu_put(db, RAVEL_SYNC, "after-recovery", "yes");
    TU_OK(ravel_close(db));

    enum mode next = m == SKIP ? SKIP : ABSOLUTE;
    char *opts2 = mode_opts(next, NULL);
    char label2[300];
    snprintf(label2, sizeof label2, "%s, then reopened %s", label,
             mode_name[next]);
    rc = tu_open(dir, opts2, &db);
    if (rc != RAVEL_OK)
        fail_msg("%s: %s: %s", label2, ravel_errstr(rc), ravel_errmsg());
    check_keys(db, e->survives, nsegs, label2);
    tu_expect(db, NULL, "after-recovery", "yes");
    TU_OK(ravel_close(db));
    free(opts2);
    free(opts);
}

/* Builds a database, damages it with DAMAGE, and checks every mode. */
typedef void (*damage_fn)(struct seg *segs, struct rec recs[][MAX_RECS],
                          struct expect *e);

static void run_case(const char *what, int nsegs, enum db_end end,
                     damage_fn damage)
{
    for (int m = 0; m < NMODES; m++) {
        struct seg segs[MAX_SEGS];
        static struct rec recs[MAX_SEGS][MAX_RECS];
        char *dir = build_db(nsegs, segs, recs, end);
        struct expect e[NMODES];
        memset(e, 0, sizeof e);
        for (int i = 0; i < NMODES; i++)
            survive_all(e[i].survives, nsegs, 1);
        damage(segs, recs, e);
        open_and_check(dir, (enum mode)m, &e[m], nsegs, what);
        tu_rm_rf(dir);
        free(dir);
    }
}

static void expect_corrupt(struct expect *e, const struct seg *s,
                           uint64_t off0, uint64_t off1)
{
    e->corrupt = 1;
    e->file = s->name;
    e->offsets[0] = off0;
    e->offsets[1] = off1;
    e->noffsets = 2;
}

/* ----------------------------------------------------------------- cases */

static void damage_none(struct seg *segs, struct rec recs[][MAX_RECS],
                        struct expect *e)
{
    (void)segs;
    (void)recs;
    (void)e;
}

static void test_clean_wal(void **state)
{
    (void)state;
    run_case("undamaged", 3, CRASHED, damage_none);
}

/* The last record of the last segment, torn: every mode but
** absolute_consistency drops just that record. */
static void expect_torn_tail(struct seg *segs, struct rec *last,
                             size_t cut, struct expect *e)
{
    for (int m = 0; m < NMODES; m++)
        e[m].survives[0][PER_SEG - 1] = 0;
    expect_corrupt(&e[ABSOLUTE], &segs[0], last->off, cut);
}

static void damage_torn_payload(struct seg *segs,
                                struct rec recs[][MAX_RECS],
                                struct expect *e)
{
    struct rec *last = &recs[0][PER_SEG - 1];
    size_t cut = last->off + REC_HEADER + last->len / 2;
    file_truncate(segs[0].path, cut);
    expect_torn_tail(segs, last, cut, e);
}

static void test_torn_tail_payload(void **state)
{
    (void)state;
    run_case("torn tail (truncated in the payload)", 1, CRASHED, damage_torn_payload);
}

static void damage_torn_header(struct seg *segs, struct rec recs[][MAX_RECS],
                               struct expect *e)
{
    struct rec *last = &recs[0][PER_SEG - 1];
    size_t cut = last->off + 7;
    file_truncate(segs[0].path, cut);
    expect_torn_tail(segs, last, cut, e);
}

static void test_torn_tail_header(void **state)
{
    (void)state;
    run_case("torn tail (truncated in the header)", 1, CRASHED, damage_torn_header);
}

/* The file keeps its length (preallocated), but the end of the last
** record never reached the disk: zeros from its middle on (the seal that
** close writes after it included). */
static void damage_torn_zeroed(struct seg *segs, struct rec recs[][MAX_RECS],
                               struct expect *e)
{
    struct rec *last = &recs[0][PER_SEG - 1];
    size_t from = last->off + REC_HEADER + last->len / 2;
    struct stat st;
    assert_int_equal(stat(segs[0].path, &st), 0);
    file_zero(segs[0].path, from, (size_t)st.st_size - from);
    expect_torn_tail(segs, last, from, e);
}

static void test_torn_tail_zeroed(void **state)
{
    (void)state;
    run_case("torn tail (end of the record zero)", 1, CRASHED, damage_torn_zeroed);
}

/* A flipped byte in record 4 of 10: corruption, not a torn tail. */
static void damage_middle(struct seg *segs, struct rec recs[][MAX_RECS],
                          struct expect *e)
{
    struct rec *r = &recs[0][4];
    file_xor(segs[0].path, r->off + REC_HEADER + 2, 0x55);
    expect_corrupt(&e[TOLERATE], &segs[0], r->off, r->off + REC_HEADER);
    expect_corrupt(&e[ABSOLUTE], &segs[0], r->off, r->off + REC_HEADER);
    for (int k = 4; k < PER_SEG; k++)
        e[POINT_IN_TIME].survives[0][k] = 0;
    e[SKIP].survives[0][4] = 0;
}

static void test_corrupt_middle_record(void **state)
{
    (void)state;
    run_case("corrupt middle record", 1, CLOSED, damage_middle);
}

/* Record 4's length is impossible: skipping it needs a resync. */
static void damage_length(struct seg *segs, struct rec recs[][MAX_RECS],
                          struct expect *e)
{
    struct rec *r = &recs[0][4];
    file_put32(segs[0].path, r->off + 8, 0x7ffffff0u);
    expect_corrupt(&e[TOLERATE], &segs[0], r->off, r->off + 8);
    expect_corrupt(&e[ABSOLUTE], &segs[0], r->off, r->off + 8);
    for (int k = 4; k < PER_SEG; k++)
        e[POINT_IN_TIME].survives[0][k] = 0;
    e[SKIP].survives[0][4] = 0;
}

static void test_corrupt_record_length(void **state)
{
    (void)state;
    run_case("impossible record length", 1, CLOSED, damage_length);
}

/* A segment that is not the last, cut short in its last record. */
static void damage_truncated_older(struct seg *segs,
                                   struct rec recs[][MAX_RECS],
                                   struct expect *e)
{
    struct rec *last = &recs[0][PER_SEG - 1];
    size_t cut = last->off + REC_HEADER + 3;
    file_truncate(segs[0].path, cut);
    expect_corrupt(&e[TOLERATE], &segs[0], last->off, cut);
    expect_corrupt(&e[ABSOLUTE], &segs[0], last->off, cut);
    e[POINT_IN_TIME].survives[0][PER_SEG - 1] = 0;
    for (int k = 0; k < PER_SEG; k++)
        e[POINT_IN_TIME].survives[1][k] = 0;
    e[SKIP].survives[0][PER_SEG - 1] = 0;
}

static void test_truncated_older_segment(void **state)
{
    (void)state;
    run_case("older segment truncated", 2, CRASHED, damage_truncated_older);
}

/* The last segment cut in half: its torn record is the tail. */
static void damage_truncated_last(struct seg *segs,
                                  struct rec recs[][MAX_RECS],
                                  struct expect *e)
{
    struct rec *r = &recs[1][5];
    size_t cut = r->off + REC_HEADER + 1;
    file_truncate(segs[1].path, cut);
    for (int m = 0; m < NMODES; m++)
        for (int k = 5; k < PER_SEG; k++)
            e[m].survives[1][k] = 0;
    expect_corrupt(&e[ABSOLUTE], &segs[1], r->off, cut);
}

static void test_truncated_last_segment(void **state)
{
    (void)state;
    run_case("last segment truncated in half", 2, CRASHED, damage_truncated_last);
}

/* A bad record in the middle segment of three. */
static void damage_older_record(struct seg *segs,
                                struct rec recs[][MAX_RECS],
                                struct expect *e)
{
    struct rec *r = &recs[1][5];
    file_xor(segs[1].path, r->off + REC_HEADER + r->len - 1, 0x01);
    expect_corrupt(&e[TOLERATE], &segs[1], r->off, r->off + REC_HEADER);
    expect_corrupt(&e[ABSOLUTE], &segs[1], r->off, r->off + REC_HEADER);
    for (int k = 5; k < PER_SEG; k++)
        e[POINT_IN_TIME].survives[1][k] = 0;
    for (int k = 0; k < PER_SEG; k++)
        e[POINT_IN_TIME].survives[2][k] = 0;
    e[SKIP].survives[1][5] = 0;
}

static void test_bad_record_in_older_segment(void **state)
{
    (void)state;
    run_case("bad record in an older segment", 3, CRASHED, damage_older_record);
}

/* The first of two segments has a bad header. */
static void damage_segment_header(struct seg *segs,
                                  struct rec recs[][MAX_RECS],
                                  struct expect *e)
{
    (void)recs;
    file_xor(segs[0].path, 20, 0xff); /* in the segment number */
    expect_corrupt(&e[TOLERATE], &segs[0], 0, 20);
    expect_corrupt(&e[ABSOLUTE], &segs[0], 0, 20);
    survive_all(e[POINT_IN_TIME].survives, 2, 0);
    /* skip: the second segment is replayed; what is salvaged of the
    ** first is not specified. */
    for (int k = 0; k < PER_SEG; k++)
        e[SKIP].survives[0][k] = -1;
}

static void test_bad_segment_header(void **state)
{
    (void)state;
    run_case("bad segment header", 2, CRASHED, damage_segment_header);
}

/* A crash while a new segment was being created: the newest segment file
** is empty, or preallocated with its header never written.  The data of
** the segments before it is intact and the database must open in every
** mode that tolerates a torn tail. */
static void test_crash_while_creating_segment(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 64 << 10};
    for (int i = 0; i < 2; i++) {
        for (int m = 0; m < NMODES; m++) {
            if (m == ABSOLUTE)
                continue;
            struct seg segs[MAX_SEGS];
            static struct rec recs[MAX_SEGS][MAX_RECS];
            char *dir = build_db(2, segs, recs, CLOSED);
            struct seg all[MAX_SEGS];
            int n = list_segments(dir, all);
            char name[4096];
            snprintf(name, sizeof name, "%s/wal-%08" PRIu64 ".log", dir,
                     all[n - 1].number + 1);
            char *zeros = calloc(1, sizes[i] + 1);
            assert_int_equal(tu_file_write(name, zeros, sizes[i]), 0);
            free(zeros);
            struct expect e;
            memset(&e, 0, sizeof e);
            survive_all(e.survives, 2, 1);
            char what[64];
            snprintf(what, sizeof what, "newest segment all zero, %zu bytes",
                     sizes[i]);
            open_and_check(dir, (enum mode)m, &e, 2, what);
            tu_rm_rf(dir);
            free(dir);
        }
    }
}

/* A read-only open replays a torn tail without repairing it. */
static void test_read_only_leaves_files_alone(void **state)
{
    (void)state;
    struct seg segs[MAX_SEGS];
    static struct rec recs[MAX_SEGS][MAX_RECS];
    char *dir = build_db(1, segs, recs, CRASHED);
    struct rec *last = &recs[0][PER_SEG - 1];
    file_truncate(segs[0].path, last->off + REC_HEADER + 2);
    char *before_data, *after_data;
    size_t before_len, after_len;
    assert_int_equal(tu_file_read(segs[0].path, &before_data, &before_len),
                     0);
    char *before = seg_listing(dir);

    ravel_db *db = tu_open_ok(dir, "read_only=true;create_if_missing=false");
    survive_t sv;
    survive_all(sv, 1, 1);
    sv[0][PER_SEG - 1] = 0;
    check_keys(db, sv, 1, "read-only open of a torn tail");
    TU_OK(ravel_close(db));

    char *after = seg_listing(dir);
    assert_string_equal(before, after);
    assert_int_equal(tu_file_read(segs[0].path, &after_data, &after_len), 0);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before_data, after_data, before_len);

    /* A read-write open then repairs it for good. */
    struct expect e;
    memset(&e, 0, sizeof e);
    survive_all(e.survives, 1, 1);
    e.survives[0][PER_SEG - 1] = 0;
    open_and_check(dir, TOLERATE, &e, 1, "torn tail after a read-only open");
    free(before);
    free(after);
    free(before_data);
    free(after_data);
    tu_rm_rf(dir);
    free(dir);
}

/* After absolute_consistency refuses a torn tail, the user can still open
** with the default mode: the refused open made nothing worse. */
static void test_refused_then_tolerated(void **state)
{
    (void)state;
    struct seg segs[MAX_SEGS];
    static struct rec recs[MAX_SEGS][MAX_RECS];
    char *dir = build_db(2, segs, recs, CRASHED);
    struct rec *last = &recs[1][PER_SEG - 1];
    size_t cut = last->off + REC_HEADER + 1;
    file_truncate(segs[1].path, cut);
    struct expect e;
    memset(&e, 0, sizeof e);
    expect_corrupt(&e, &segs[1], last->off, cut);
    open_and_check(dir, ABSOLUTE, &e, 2, "torn tail");
    memset(&e, 0, sizeof e);
    survive_all(e.survives, 2, 1);
    e.survives[1][PER_SEG - 1] = 0;
    open_and_check(dir, TOLERATE, &e, 2, "torn tail after a refused open");
    tu_rm_rf(dir);
    free(dir);
}

/* ----------------------------------------------------------------- holes */

/* Opens DIR in every mode: all but skip_any_corrupted_records must refuse
** with RAVEL_CORRUPT naming a hole and NAME; skip opens and shows exactly
** the keys SV says. */
static void expect_hole_in_every_mode(const char *dir, const char *name,
                                      survive_t sv, int nsegs,
                                      const char *what)
{
    for (int m = 0; m < NMODES; m++) {
        char *opts = mode_opts((enum mode)m, NULL);
        ravel_db *db = NULL;
        tu_errmsg_prime();
        int rc = tu_open(dir, opts, &db);
        free(opts);
        if (m == SKIP) {
            if (rc != RAVEL_OK)
                fail_msg("%s, %s: %s: %s", what, mode_name[m],
                         ravel_errstr(rc), ravel_errmsg());
            check_keys(db, sv, nsegs, what);
            TU_OK(ravel_close(db));
            continue;
        }
        if (rc == RAVEL_OK)
            ravel_close(db);
        if (rc != RAVEL_CORRUPT || !tu_errmsg_is_fresh() ||
            !strstr(ravel_errmsg(), "hole") ||
            !strstr(ravel_errmsg(), name))
            fail_msg("%s, %s: open returned %s, expected RAVEL_CORRUPT naming "
                     "a hole at %s: %s", what, mode_name[m], ravel_errstr(rc),
                     name, ravel_errmsg());
        printf("# %s, %s: %s\n", what, mode_name[m], ravel_errmsg());
    }
}

/* A middle segment of a closed database deleted: acknowledged writes are
** missing while later ones are there, which no mode but skip may hide. */
static void test_hole_missing_segment(void **state)
{
    (void)state;
    struct seg segs[MAX_SEGS];
    static struct rec recs[MAX_SEGS][MAX_RECS];
    char *dir = build_db(3, segs, recs, CLOSED);
    assert_int_equal(unlink(segs[1].path), 0);
    survive_t sv;
    survive_all(sv, 3, 1);
    for (int k = 0; k < PER_SEG; k++)
        sv[1][k] = 0;
    expect_hole_in_every_mode(dir, segs[1].name, sv, 3,
                              "middle segment deleted");
    tu_rm_rf(dir);
    free(dir);
}

/* A segment that is not the last cut exactly at a record boundary: every
** record left verifies, only the next segment's header can tell. */
static void test_hole_cut_at_record_boundary(void **state)
{
    (void)state;
    struct seg segs[MAX_SEGS];
    static struct rec recs[MAX_SEGS][MAX_RECS];
    char *dir = build_db(3, segs, recs, CLOSED);
    file_truncate(segs[1].path, recs[1][6].off);
    survive_t sv;
    survive_all(sv, 3, 1);
    for (int k = 6; k < PER_SEG; k++)
        sv[1][k] = 0;
    expect_hole_in_every_mode(dir, segs[1].name, sv, 3,
                              "middle segment cut at a record boundary");
    tu_rm_rf(dir);
    free(dir);
}

/* The newest segment of a cleanly closed database lost -- deleted, or cut
** at a record boundary (which takes its seal) -- leaves a log that looks
** whole, with a clean end.  The manifest's close record says where the log
** ended, sealed and durable: no crash or power loss explains the loss, so
** absolute_consistency and the default refuse it naming the segment
** (both used to open without that segment's writes); point_in_time opens
** the prefix that is left. */
static void expect_closed_log_loss(const char *dir, const char *name,
                                   survive_t sv, int nsegs, const char *what)
{
    static const enum mode refusing[] = {TOLERATE, ABSOLUTE};
    for (int i = 0; i < 2; i++) {
        enum mode m = refusing[i];
        char *opts = mode_opts(m, NULL);
        ravel_db *db = NULL;
        char *before = seg_listing(dir);
        tu_errmsg_prime();
        int rc = tu_open(dir, opts, &db);
        free(opts);
        char *after = seg_listing(dir);
        if (rc != RAVEL_OK && strcmp(before, after) != 0)
            fail_msg("%s, %s: the refused open changed the WAL files:\n%s"
                     "---\n%s", what, mode_name[m], before, after);
        free(before);
        free(after);
        if (rc == RAVEL_OK)
            ravel_close(db);
        if (rc != RAVEL_CORRUPT || !tu_errmsg_is_fresh() ||
            !strstr(ravel_errmsg(), name) ||
            !strstr(ravel_errmsg(), "closed cleanly"))
            fail_msg("%s, %s: open returned %s, expected RAVEL_CORRUPT naming "
                     "%s and the clean close: %s", what, mode_name[m],
                     ravel_errstr(rc), name, ravel_errmsg());
        printf("# %s, %s: %s\n", what, mode_name[m], ravel_errmsg());
    }
    char *opts = mode_opts(POINT_IN_TIME, NULL);
    ravel_db *db = NULL;
    int rc = tu_open(dir, opts, &db);
    free(opts);
    if (rc != RAVEL_OK)
        fail_msg("%s, point_in_time: %s: %s", what, ravel_errstr(rc),
                 ravel_errmsg());
    check_keys(db, sv, nsegs, what);
    TU_OK(ravel_close(db));
}

static void test_closed_log_newest_segment_deleted(void **state)
{
    (void)state;
    struct seg segs[MAX_SEGS];
    static struct rec recs[MAX_SEGS][MAX_RECS];
    char *dir = build_db(3, segs, recs, CLOSED);
    assert_int_equal(unlink(segs[2].path), 0);
    survive_t sv;
    survive_all(sv, 3, 1);
    for (int k = 0; k < PER_SEG; k++)
        sv[2][k] = 0;
    expect_closed_log_loss(dir, segs[2].name, sv, 3,
                           "newest segment of a closed database deleted");
    tu_rm_rf(dir);
    free(dir);
}

/* The same with the only segment of a database cut at its first record:
** the replay finds nothing, which once let the open take the loss for a
** flushed segment (and delete it). */
static void test_closed_log_cut_to_nothing(void **state)
{
    (void)state;
    struct seg segs[MAX_SEGS];
    static struct rec recs[MAX_SEGS][MAX_RECS];
    char *dir = build_db(1, segs, recs, CLOSED);
    file_truncate(segs[0].path, recs[0][0].off);
    survive_t sv;
    survive_all(sv, 1, 0);
    expect_closed_log_loss(dir, segs[0].name, sv, 1,
                           "the only segment of a closed database cut at "
                           "its first record");
    tu_rm_rf(dir);
    free(dir);
}

static void test_closed_log_cut_at_record_boundary(void **state)
{
    (void)state;
    struct seg segs[MAX_SEGS];
    static struct rec recs[MAX_SEGS][MAX_RECS];
    char *dir = build_db(3, segs, recs, CLOSED);
    file_truncate(segs[2].path, recs[2][6].off);
    survive_t sv;
    survive_all(sv, 3, 1);
    for (int k = 6; k < PER_SEG; k++)
        sv[2][k] = 0;
    expect_closed_log_loss(dir, segs[2].name, sv, 3,
                           "newest segment of a closed database cut at a "
                           "record boundary");
    tu_rm_rf(dir);
    free(dir);
}

/* A cleanly closed database ends its last segment with a seal, with or
** without preallocation (the io_uring probe's zeros once hid the seal when
** preallocation was off): damage in it is then corruption, never a torn
** tail that would silently drop synced writes. */
static void test_damage_in_sealed_segment(void **state)
{
    (void)state;
    /* wal_io=auto: its io_uring probe writes zeros past the header */
    static const char *const prealloc[] = {"wal_preallocate=false;wal_io=auto",
                                           "wal_preallocate=true"};
    for (int i = 0; i < 2; i++) {
        char *dir = tu_path("sealed-%d", i);
        ravel_db *db = tu_open_ok(dir, prealloc[i]);
        char key[32], val[64];
        for (int k = 0; k < 5; k++) {
            key_of(key, sizeof key, 0, k);
            val_of(val, sizeof val, 0, k);
            tu_put(db, RAVEL_SYNC, key, val);
        }
        TU_OK(ravel_close(db));
        struct seg segs[MAX_SEGS];
        int n = list_segments(dir, segs);
        assert_true(n >= 1);
        struct rec recs[MAX_RECS];
        assert_int_equal(parse_records(segs[n - 1].path, recs), 5);
        file_xor(segs[n - 1].path, recs[1].off + REC_HEADER + 2, 0x10);
        char *opts = mode_opts(TOLERATE, prealloc[i]);
        tu_errmsg_prime();
        int rc = tu_open(dir, opts, &db);
        if (rc == RAVEL_OK)
            ravel_close(db);
        if (rc != RAVEL_CORRUPT || !strstr(ravel_errmsg(), "sealed"))
            fail_msg("%s: damage in a sealed segment: %s (%s), expected "
                     "RAVEL_CORRUPT naming the seal", prealloc[i],
                     ravel_errstr(rc), ravel_errmsg());
        free(opts);
        tu_rm_rf(dir);
        free(dir);
    }
}

/* ------------------------------------------------------------------ LOCK */

/* In a separate process: ravel_open's result code as the exit status. */
static int open_child_main(const void *arg)
{
    const char *dir = ((const struct child_args *)arg)->dir;
    ravel_options *o = NULL;
    int rc = ravel_options_new(&o);
    if (!rc && tu_wal_io())
        rc = ravel_options_set(o, "wal_io", tu_wal_io());
    if (rc)
        return 100;
    ravel_db *db = NULL;
    rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc == RAVEL_OK)
        rc = ravel_close(db) == RAVEL_OK ? 0 : 101;
    else
        fprintf(stderr, "# child open: %s: %s\n", ravel_errstr(rc),
                ravel_errmsg());
    return rc;
}

static int open_in_child(const char *dir)
{
    struct child_args ca = {.s = 0};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    struct crash_child c = {.on_msg = NULL};
    return crash_run(&c, "open", &ca, sizeof ca, 120000);
}

static void test_lock(void **state)
{
    (void)state;
    char *dir = tu_path("lock");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "k", "v");

    /* Same process: refused, and the refusal leaves the first handle's
    ** lock in place (another process is still refused). */
    ravel_db *db2 = NULL;
    ravel_options *o = tu_options(NULL);
    TU_EXPECT_RC(RAVEL_LOCKED, ravel_open(dir, o, &db2));
    assert_null(db2);
    TU_EXPECT_RC(RAVEL_LOCKED, ravel_open(dir, o, &db2));
    ravel_options_free(o);
    /* A reader takes no lock (db/reader.c): it opens beside the writer,
    ** and sees what the writer wrote. */
    o = tu_options("read_only=true");
    TU_OK(ravel_open(dir, o, &db2));
    ravel_options_free(o);
    tu_expect(db2, NULL, "k", "v");
    TU_OK(ravel_close(db2));
    db2 = NULL;
    assert_int_equal(open_in_child(dir), RAVEL_LOCKED);
    assert_int_equal(open_in_child(dir), RAVEL_LOCKED);

    /* The first handle still works. */
    tu_put(db, RAVEL_SYNC, "k2", "v2");
    tu_expect(db, NULL, "k", "v");
    TU_OK(ravel_close(db));

    /* After close: another process can open it, then this one. */
    assert_int_equal(open_in_child(dir), RAVEL_OK);
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "k2", "v2");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    TU_OK(ravel_close(db));

    /* Two different databases open at once are independent. */
    char *other = tu_path("lock-other");
    db = tu_open_ok(dir, NULL);
    db2 = tu_open_ok(other, NULL);
    assert_int_equal(open_in_child(other), RAVEL_LOCKED);
    TU_OK(ravel_close(db2));
    assert_int_equal(open_in_child(other), RAVEL_OK);
    TU_OK(ravel_close(db));
    free(other);
    free(dir);
}

static const struct crash_role roles[] = {
    {"write-segment", write_segment_child, sizeof(struct child_args)},
    {"open", open_child_main, sizeof(struct child_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_wal),
        cmocka_unit_test(test_hole_missing_segment),
        cmocka_unit_test(test_hole_cut_at_record_boundary),
        cmocka_unit_test(test_closed_log_newest_segment_deleted),
        cmocka_unit_test(test_closed_log_cut_at_record_boundary),
        cmocka_unit_test(test_closed_log_cut_to_nothing),
        cmocka_unit_test(test_damage_in_sealed_segment),
        cmocka_unit_test(test_torn_tail_payload),
        cmocka_unit_test(test_torn_tail_header),
        cmocka_unit_test(test_torn_tail_zeroed),
        cmocka_unit_test(test_corrupt_middle_record),
        cmocka_unit_test(test_corrupt_record_length),
        cmocka_unit_test(test_truncated_older_segment),
        cmocka_unit_test(test_truncated_last_segment),
        cmocka_unit_test(test_bad_record_in_older_segment),
        cmocka_unit_test(test_bad_segment_header),
        cmocka_unit_test(test_crash_while_creating_segment),
        cmocka_unit_test(test_read_only_leaves_files_alone),
        cmocka_unit_test(test_refused_then_tolerated),
        cmocka_unit_test(test_lock),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
