/*
** test_wal_direct.c -- wal_io=direct under held completions, failed
** writes, kill -9 and power loss, with recycled segments.
**
** In-process, with the completion hook of util/fault.h
** (rv_test_wal_hold_arm: the completion of one write is held back while
** later writes complete):
**   held_*        a held write A, then later writers -- several at once,
**                 sixteen in a row (every write slot busy), or a memtable
**                 flush (a segment switch waits for A) -- none returns
**                 while A is held, though their writes are in the file;
**                 released as a success, all return RAVEL_OK and a reopen
**                 finds them; released as a failure (EIO), A and every
**                 later writer fail, writes stop naming the reason, and a
**                 reopen finds a prefix of the log.  Each with the sync
**                 method the probe picked (RWF_DSYNC writes or fdatasync)
**                 and with fdatasync forced (RAVEL_TEST_DIRECT_FDATASYNC).
**   hole_on_disk  A's write failed AND its bytes are not on disk (the test
**                 takes them away) while the later writes are: replay must
**                 stop before A in every recovery mode; the later writes
**                 must be in blocks of their own.
**   boundary_failed_flush
**                 a recycled segment whose data ends exactly at a block
**                 boundary, with its earlier life's bytes right after; a
**                 switch to the next segment, then the flush fails (the
**                 manifest write): closed and reopened in every recovery
**                 mode, with every acknowledged write.
** With child processes killed by SIGKILL:
**   boundary_*    the same segment, the last one or switched away from,
**                 replayed after kill -9 in every recovery mode.
**   kill9         rounds of writers (puts, deletes, batches, synced or
**                 not, every value unique) into recycled segments, killed
**                 at random moments; every reopen, in each of the four
**                 recovery modes, must show, per writer thread, exactly the
**                 state after a prefix of its operations that includes
**                 every acknowledged one.  A stale record replayed from a
**                 segment's earlier life would show as an older value, a
**                 deleted key back, or no prefix matching at all.
**   powerloss     the same writers with the sync journal on (powerloss.h),
**                 a second process recovering (it must find every op the
**                 first acknowledged) and writing on, then a simulated
**                 power loss in each pattern of powerloss.h and one more,
**                 "stale": unsynced pages of a segment read back as the
**                 records of another life, as a recycled file's do.  Every
**                 RAVEL_SYNC op and everything the recovery found survive,
**                 and the state is a prefix (per key for
**                 skip_any_corrupted_records; absolute_consistency may
**                 refuse to open).
**
** The program forces wal_io=direct (exits 77 where O_DIRECT or io_uring is
** refused).  RAVEL_TEST_SEED replays a run; RAVEL_TEST_KILL9_ROUNDS
** (default 16) and RAVEL_TEST_POWERLOSS_ROUNDS (default 2 per pattern) set
** the rounds; RAVEL_TEST_FILTER (a cmocka pattern, "*kill9*") picks tests.
*/
#include "crash_harness.h"
#include "powerloss.h"
#include "util/fault.h"
#include "wal/wal_format.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const recovery_modes[4] = {
    "tolerate_corrupted_tail_records", "absolute_consistency",
    "point_in_time", "skip_any_corrupted_records",
};

static int db_counter;

/* ============================================================ helpers */

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Opens DIR with wal_io=direct and EXTRA, or exits 77 where direct I/O
** cannot be had; checks that the database really runs it. */
static ravel_db *open_direct(const char *dir, const char *extra)
{
    char opts[512];
    snprintf(opts, sizeof opts, "wal_io=direct%s%s", extra ? ";" : "",
             extra ? extra : "");
    ravel_db *db = NULL;
    int rc = tu_open(dir, opts, &db);
    if (rc != RAVEL_OK && (strstr(ravel_errmsg(), "O_DIRECT") ||
                           strcasestr(ravel_errmsg(), "io_uring"))) {
        printf("SKIP: wal_io=direct cannot be used here: %s\n",
               ravel_errmsg());
        exit(77);
    }
    if (rc != RAVEL_OK)
        fail_msg("open %s (%s): %s: %s", dir, opts, ravel_errstr(rc),
                 ravel_errmsg());
    char *io = tu_prop(db, "ravel.wal-io");
    if (strncmp(io, "direct", 6) != 0)
        fail_msg("ravel.wal-io is '%s', not direct", io);
    ravel_free(io);
    return db;
}

/* A number of the "wal direct:" line of ravel.stats: the one before
** WORD. */
static uint64_t direct_stat(ravel_db *db, const char *word)
{
    char *s = tu_prop(db, "ravel.stats");
    const char *line = strstr(s, "wal direct:");
    if (!line)
        fail_msg("ravel.stats has no 'wal direct:' line:\n%s", s);
    const char *p = strstr(line, word);
    if (!p)
        fail_msg("no '%s' in %s", word, line);
    while (p > line && p[-1] == ' ')
        p--;
    while (p > line && p[-1] >= '0' && p[-1] <= '9')
        p--;
    uint64_t n = strtoull(p, NULL, 10);
    ravel_free(s);
    return n;
}

/* Group writes the WAL has submitted (the "wal:" line's appends). */
static uint64_t wal_appends(ravel_db *db)
{
    char *s = tu_prop(db, "ravel.stats");
    const char *p = strstr(s, " appends, ");
    if (!p)
        fail_msg("no appends count in ravel.stats:\n%s", s);
    while (p > s && p[-1] != ' ')
        p--;
    uint64_t n = strtoull(p, NULL, 10);
    ravel_free(s);
    return n;
}

static void print_direct_line(ravel_db *db)
{
    char *s = tu_prop(db, "ravel.stats");
    const char *line = strstr(s, "wal direct:");
    printf("#   %.*s\n", line ? (int)strcspn(line, "\n") : 0,
           line ? line : "");
    ravel_free(s);
}

/* Waits until the direct writes a killed process left in flight on the
** files of DIR have landed (they may complete after it is reaped): an
** fallocate waits for a file's direct I/O (ext4, XFS), as powerloss.c
** does.  After it, copies of DIR are one crash state, not several. */
static void settle_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return; /* killed before it created the database */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_WRONLY);
        if (fd >= 0) {
            (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1);
            close(fd);
        }
    }
    closedir(d);
}

static void copy_dir(const char *from, const char *to)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
    assert_int_equal(system(cmd), 0);
}

/* The value KEY holds (malloc'd, NUL-terminated), or NULL if absent. */
static char *get_str(ravel_db *db, const char *key)
{
    void *v = NULL;
    size_t len = 0;
    int rc = ravel_get(db, NULL, key, strlen(key), &v, &len);
    if (rc == RAVEL_NOTFOUND)
        return NULL;
    if (rc != RAVEL_OK)
        fail_msg("get %s: %s: %s", key, ravel_errstr(rc), ravel_errmsg());
    char *s = malloc(len + 1);
    assert_non_null(s);
    memcpy(s, v, len);
    s[len] = 0;
    ravel_free(v);
    return s;
}

/* ------------------------------------------------- WAL segment files */

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* One segment file, read whole. */
struct seg {
    char path[1024];
    uint64_t number;
    unsigned char *data;
    size_t size;
    uint32_t block;    /* from a version 3 header, else 0 */
};

/* The WAL segment numbers in DIR, sorted, into *OUT; returns how many. */
static int seg_numbers(const char *dir, uint64_t **out)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0, cap = 16;
    uint64_t *v = malloc(sizeof *v * (size_t)cap);
    assert_non_null(v);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long num;
        char tail[8];
        if (sscanf(e->d_name, "wal-%llu.%7s", &num, tail) != 2 ||
            strcmp(tail, "log") != 0)
            continue;
        if (n == cap) {
            cap *= 2;
            v = realloc(v, sizeof *v * (size_t)cap);
            assert_non_null(v);
        }
        v[n++] = num;
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *out = v;
    return n;
}

/* Reads segment NUMBER of DIR into *S: 0, or -1 if it is gone. */
static int seg_try_load(const char *dir, uint64_t number, struct seg *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s/wal-%08llu.log", dir,
             (unsigned long long)number);
    s->number = number;
    char *data;
    size_t len;
    int r = tu_file_read(s->path, &data, &len);
    if (r == -ENOENT)
        return -1;
    if (r != 0)
        fail_msg("cannot read %s", s->path);
    s->data = (unsigned char *)data;
    s->size = len;
    if (len >= RV_WAL_V3_HEADER_SIZE &&
        le32(s->data + 8) == RV_WAL_DIRECT_VERSION)
        s->block = le32(s->data + 32);
    return 0;
}

static void seg_load(const char *dir, uint64_t number, struct seg *s)
{
    if (seg_try_load(dir, number, s) != 0)
        fail_msg("%s is gone", s->path);
}

static void seg_free(struct seg *s)
{
    free(s->data);
    s->data = NULL;
}

/* The highest-numbered segment of DIR whose header has been written (a
** spare's first bytes are zeros); fails if there is none. */
static void seg_current(const char *dir, struct seg *s)
{
    uint64_t *nums;
    int n = seg_numbers(dir, &nums);
    for (int i = n - 1; i >= 0; i--) {
        seg_load(dir, nums[i], s);
        if (s->size >= RV_WAL_V3_HEADER_SIZE &&
            !all_zero(s->data, RV_WAL_V3_HEADER_SIZE)) {
            free(nums);
            return;
        }
        seg_free(s);
    }
    free(nums);
    fail_msg("no started WAL segment in %s", dir);
}

/* Called for each record of the segment's current life. */
typedef void (*seg_record_fn)(void *ctx, const struct seg *s, size_t off,
                              int type, uint32_t len);

/* Walks the records of a version 3 segment as docs/formats.md says
** replay does (skip records followed), verifying each checksum; returns
** where its data ends. */
static size_t seg_walk(const struct seg *s, seg_record_fn fn, void *ctx)
{
    assert_true(s->block >= 512);
    uint32_t tag = rv_wal_tag(s->number);
    size_t off = RV_WAL_V3_HEADER_SIZE;
    while (off + RV_WAL_RECORD_HEADER_SIZE <= s->size) {
        const unsigned char *h = s->data + off;
        size_t b = (off + s->block - 1) / s->block * s->block;
        size_t n = b > off && b - off < RV_WAL_RECORD_HEADER_SIZE
                       ? b - off : RV_WAL_RECORD_HEADER_SIZE;
        if (all_zero(h, n)) {
            const unsigned char *k = s->data + b;
            if (b > off && b + RV_WAL_SKIP_SIZE <= s->size &&
                k[12] == RV_WAL_SKIP &&
                rv_wal_record_tag((const char *)k) == tag &&
                le64(k + RV_WAL_RECORD_HEADER_SIZE) == off) {
                if (fn)
                    fn(ctx, s, b, RV_WAL_SKIP, RV_WAL_SKIP_PAYLOAD);
                off = b + RV_WAL_SKIP_SIZE;
                continue;
            }
            return off;
        }
        if (rv_wal_record_tag((const char *)h) != tag)
            return off;
        uint32_t len = le32(h + 8);
        if (len > s->size - off - RV_WAL_RECORD_HEADER_SIZE ||
            le64(h) != rv_wal_record_checksum(s->number, (const char *)h,
                                              (const char *)h +
                                                  RV_WAL_RECORD_HEADER_SIZE,
                                              len))
            return off;
        if (fn)
            fn(ctx, s, off, h[12], len);
        off += rv_wal_record_size(len);
    }
    return off;
}

/* Whether any WAL segment file of DIR holds the bytes NEEDLE. */
static int wal_files_hold(const char *dir, const char *needle)
{
    uint64_t *nums;
    int n = seg_numbers(dir, &nums);
    int found = 0;
    for (int i = 0; i < n && !found; i++) {
        struct seg s;
        if (seg_try_load(dir, nums[i], &s) != 0)
            continue;
        found = memmem(s.data, s.size, needle, strlen(needle)) != NULL;
        seg_free(&s);
    }
    free(nums);
    return found;
}

/* ================================================== held completions */

enum held_scene {
    SCENE_CONCURRENT, /* B, C, D (sync) and E (not) start at once */
    SCENE_SLOTS,      /* 15 writes one after another fill every write slot;
                      ** the 16th waits for a slot, 4 more queue behind */
    SCENE_FLUSH,      /* B, then ravel_flush (its segment switch waits for
                      ** A), then C, D, E behind it */
};

#define MAX_WRITERS 24

struct writer {
    ravel_db *db;
    char key[32];
    int sync;
    int flush;        /* ravel_flush instead of a put */
    int rank;         /* log order: every writer of a lower rank was
                      ** submitted before any of a higher one */
    int submitted;    /* its write was in the file before the release */
    pthread_t thread;
    _Atomic int done;
    int rc;
    char msg[512];    /* its ravel_errmsg() when it failed */
};

struct held {
    ravel_db *db;
    char *dir;
    struct writer w[MAX_WRITERS];
    int n;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    if (w->flush)
        w->rc = ravel_flush(w->db, 0);
    else
        w->rc = ravel_put(w->db, w->sync ? RAVEL_SYNC : 0, w->key,
                          strlen(w->key), w->key, strlen(w->key));
    if (w->rc != RAVEL_OK)
        snprintf(w->msg, sizeof w->msg, "%s", ravel_errmsg());
    atomic_store(&w->done, 1);
    return NULL;
}

static struct writer *writer_start(struct held *h, const char *key, int sync,
                                   int flush, int rank)
{
    assert_true(h->n < MAX_WRITERS);
    struct writer *w = &h->w[h->n++];
    memset(w, 0, sizeof *w);
    w->db = h->db;
    w->sync = sync;
    w->flush = flush;
    w->rank = rank;
    snprintf(w->key, sizeof w->key, "%s", key);
    assert_int_equal(pthread_create(&w->thread, NULL, writer_main, w), 0);
    return w;
}

/* Waits until the WAL file holds W's record: its write completed in the
** kernel (the data is in the file), whatever the WAL did with the
** completion.  A minute bounds it against hanging. */
static void wait_in_file(struct held *h, struct writer *w)
{
    uint64_t limit = tu_now_ms() + 60000;
    while (!wal_files_hold(h->dir, w->key)) {
        if (tu_now_ms() > limit)
            fail_msg("the write of %s never reached the WAL file", w->key);
        nap_ms(1);
    }
    w->submitted = 1;
}

static void wait_slot_waits(ravel_db *db)
{
    uint64_t limit = tu_now_ms() + 60000;
    while (direct_stat(db, " waits for a write slot") == 0) {
        if (tu_now_ms() > limit)
            fail_msg("no write ever waited for a write slot");
        nap_ms(1);
    }
}

/* Starts the later writers of SCENE while A is held. */
static void held_scene_start(struct held *h, enum held_scene scene)
{
    char key[32];
    switch (scene) {
    case SCENE_CONCURRENT: {
        struct writer *w[4];
        w[0] = writer_start(h, "later-B", 1, 0, 2);
        w[1] = writer_start(h, "later-C", 1, 0, 2);
        w[2] = writer_start(h, "later-D", 1, 0, 2);
        w[3] = writer_start(h, "later-E", 0, 0, 2);
        for (int i = 0; i < 4; i++)
            wait_in_file(h, w[i]);
        break;
    }
    case SCENE_SLOTS: {
        uint64_t base = wal_appends(h->db);
        for (int i = 0; i < 15; i++) {
            snprintf(key, sizeof key, "slot-%02d", i);
            struct writer *w = writer_start(h, key, i % 3 != 2, 0, 2 + i);
            /* one at a time: each a write of its own, in this order */
            while (wal_appends(h->db) < base + (uint64_t)i + 1)
                nap_ms(1);
            wait_in_file(h, w);
        }
        /* Sixteen writes in flight (A's among them): the next waits. */
        writer_start(h, "slot-15", 1, 0, 17);
        wait_slot_waits(h->db);
        for (int i = 0; i < 4; i++) {
            snprintf(key, sizeof key, "queued-%d", i);
            writer_start(h, key, i % 2, 0, 18);
        }
        break;
    }
    case SCENE_FLUSH:
        wait_in_file(h, writer_start(h, "later-B", 1, 0, 2));
        writer_start(h, "", 0, 1, 3);
        nap_ms(20); /* lets the flush reach its switch first (not needed) */
        writer_start(h, "later-C", 1, 0, 3);
        writer_start(h, "later-D", 1, 0, 3);
        writer_start(h, "later-E", 0, 0, 3);
        break;
    }
}

static const char *writer_name(const struct writer *w)
{
    return w->flush ? "ravel_flush" : w->key;
}

/* None of the writers may have returned: the held write comes before all
** of them in the log. */
static void expect_none_returned(struct held *h)
{
    nap_ms(50); /* time for a wrong acknowledgement to happen */
    if (atomic_load(&h->w[0].done))
        fail_msg("%s returned (%s: %s) while its write's completion is "
                 "held", h->w[0].key, ravel_errstr(h->w[0].rc), h->w[0].msg);
    for (int i = 1; i < h->n; i++)
        if (atomic_load(&h->w[i].done))
            fail_msg("%s returned (%s: %s) while the write before it in "
                     "the log (%s's) is still in flight", writer_name(&h->w[i]),
                     ravel_errstr(h->w[i].rc), h->w[i].msg,
                     h->w[0].key);
}

static void expect_key_value(ravel_db *db, const char *key, int present,
                             const char *label)
{
    char *v = get_str(db, key);
    if (present && !v)
        fail_msg("%s: %s is missing", label, key);
    if (!present && v)
        fail_msg("%s: %s is there (%s) but must not be", label, key, v);
    if (v && strcmp(v, key) != 0)
        fail_msg("%s: %s holds '%s'", label, key, v);
    free(v);
}

/* Replay kept a prefix of the log: a writer present means every writer of
** a lower rank is present.  Returns the number present. */
static int check_rank_prefix(ravel_db *db, struct held *h, const char *label)
{
    int max_rank = 0, present = 0;
    for (int i = 0; i < h->n; i++)
        if (h->w[i].rank > max_rank)
            max_rank = h->w[i].rank;
    int gap = 0; /* the lowest rank with a writer missing, 0 = none */
    for (int r = 1; r <= max_rank; r++) {
        for (int i = 0; i < h->n; i++) {
            struct writer *w = &h->w[i];
            if (w->rank != r || w->flush)
                continue;
            char *v = get_str(db, w->key);
            if (v && strcmp(v, w->key) != 0)
                fail_msg("%s: %s holds '%s'", label, w->key, v);
            if (v && gap)
                fail_msg("%s: %s (rank %d) is there, but a write of rank %d "
                         "before it in the log is not: not a prefix",
                         label, w->key, r, gap);
            present += v != NULL;
            free(v);
        }
        for (int i = 0; i < h->n && !gap; i++) {
            struct writer *w = &h->w[i];
            if (w->rank == r && !w->flush) {
                char *v = get_str(db, w->key);
                if (!v)
                    gap = r;
                free(v);
            }
        }
    }
    return present;
}

/* ---------------------------------------- taking A's write off the disk */

struct hole_scan {
    const char *a_key;
    size_t a_off, a_end;       /* A's record */
    int a_found;
    size_t later_min;          /* the first record after A's */
    int records;
};

static void hole_scan_record(void *ctx, const struct seg *s, size_t off,
                             int type, uint32_t len)
{
    struct hole_scan *hs = ctx;
    hs->records++;
    if (type != RV_WAL_BATCH)
        return;
    const unsigned char *p = s->data + off + RV_WAL_RECORD_HEADER_SIZE;
    if (memmem(p, len, hs->a_key, strlen(hs->a_key))) {
        hs->a_found = 1;
        hs->a_off = off;
        hs->a_end = off + rv_wal_record_size(len);
    } else if (hs->a_found && off < hs->later_min) {
        hs->later_min = off;
    }
}

/* Undoes A's write in the file: the bytes from A's record to the end of
** that write's last block go back to what they were before it (zeros:
** the segment was a fresh spare), as if the write had failed in the
** device.  Checks first that no later write shares a block with it. */
static void take_away_write(const char *dir, const char *a_key)
{
    struct seg s;
    seg_current(dir, &s);
    struct hole_scan hs = {.a_key = a_key, .later_min = SIZE_MAX};
    size_t end = seg_walk(&s, hole_scan_record, &hs);
    if (!hs.a_found)
        fail_msg("%s: no record of %s (data ends at %zu)", s.path, a_key,
                 end);
    size_t write_end = (hs.a_end + s.block - 1) / s.block * s.block;
    printf("#   %s: %s's record at [%zu, %zu), its write ends at %zu; the "
           "next record at %zu; data ends at %zu\n", s.path, a_key,
           hs.a_off, hs.a_end, write_end, hs.later_min, end);
    if (hs.later_min < write_end)
        fail_msg("a later write's record (at %zu) shares a block with the "
                 "held write (which ends at %zu): two writes in flight "
                 "wrote one block", hs.later_min, write_end);
    if (hs.later_min == SIZE_MAX)
        fail_msg("no record after %s's in %s", a_key, s.path);
    int fd = open(s.path, O_WRONLY);
    assert_true(fd >= 0);
    char *zeros = calloc(1, write_end - hs.a_off);
    assert_non_null(zeros);
    assert_int_equal(pwrite(fd, zeros, write_end - hs.a_off,
                            (off_t)hs.a_off),
                     (ssize_t)(write_end - hs.a_off));
    assert_int_equal(fsync(fd), 0);
    close(fd);
    free(zeros);
    seg_free(&s);
}

/* ------------------------------------------------------------ the runs */

enum held_outcome { HELD_OK, HELD_EIO, HELD_EIO_HOLE };

static void held_check_failure(struct held *h)
{
    for (int i = 0; i < h->n; i++) {
        struct writer *w = &h->w[i];
        if (i == 0 || w->submitted) {
            /* at or after the failed write in the log */
            if (w->rc != RAVEL_IOERR)
                fail_msg("%s (%s) got %s (%s)", writer_name(w),
                         i ? "written after the failed write"
                           : "the failed write", ravel_errstr(w->rc), w->msg);
            if (!strstr(w->msg, "Input/output error"))
                fail_msg("%s: message does not name the failure: %s",
                         writer_name(w), w->msg);
        } else if (w->rc != RAVEL_IOERR && w->rc != RAVEL_READONLY) {
            fail_msg("%s, queued behind the failed write, got %s (%s)",
                     writer_name(w), ravel_errstr(w->rc), w->msg);
        } else if (!w->msg[0]) {
            fail_msg("%s got %s without a message", writer_name(w),
                     ravel_errstr(w->rc));
        }
    }
    char *why = tu_prop(h->db, "ravel.read-only-reason");
    printf("#   ravel.read-only-reason: %s\n", why);
    if (!strstr(why, "Input/output error"))
        fail_msg("ravel.read-only-reason does not name the failed write: %s",
                 why);
    ravel_free(why);
    tu_errmsg_prime();
    int rc = ravel_put(h->db, RAVEL_SYNC, "refused", 7, "x", 1);
    if (rc != RAVEL_READONLY && rc != RAVEL_IOERR)
        fail_msg("a write after the failure got %s", ravel_errstr(rc));
    assert_true(tu_errmsg_is_fresh());
    TU_EXPECT_RC(RAVEL_IOERR, ravel_flush_wal(h->db, 1));
    char *v = get_str(h->db, "before-sync"); /* reads go on */
    assert_non_null(v);
    free(v);
}

static void held_reopen_check(struct held *h, enum held_outcome outcome)
{
    for (int m = 0; m < 4; m++) {
        char label[128];
        snprintf(label, sizeof label, "reopen (%s)", recovery_modes[m]);
        char *copy = tu_path("held-copy-%d-%d", db_counter, m);
        copy_dir(h->dir, copy);
        char opts[128];
        snprintf(opts, sizeof opts, "wal_recovery_mode=%s",
                 recovery_modes[m]);
        ravel_db *db = open_direct(copy, opts);
        expect_key_value(db, "before-sync", 1, label);
        expect_key_value(db, "before-nosync", 1, label);
        if (outcome == HELD_OK) {
            for (int i = 0; i < h->n; i++)
                if (!h->w[i].flush)
                    expect_key_value(db, h->w[i].key, 1, label);
        } else {
            int n = check_rank_prefix(db, h, label);
            printf("#   %s: %d of the held and later writes present\n",
                   label, n);
            if (outcome == HELD_EIO_HOLE && n)
                fail_msg("%s: the held write is not on disk, yet %d "
                         "writes of it or after it were replayed", label, n);
        }
        if (outcome == HELD_EIO_HOLE && m == 0) {
            /* Writing on and reopening keeps the hole where it was. */
            tu_put(db, RAVEL_SYNC, "after-hole", "after-hole");
            TU_OK(ravel_close(db));
            db = open_direct(copy, opts);
            expect_key_value(db, "after-hole", 1, "second reopen");
            if (check_rank_prefix(db, h, "second reopen"))
                fail_msg("second reopen: writes after the hole came back");
        }
        TU_OK(ravel_close(db));
        tu_rm_rf(copy);
        free(copy);
    }
}

static void held_run(enum held_scene scene, enum held_outcome outcome,
                     int fdatasync)
{
    /* read by tu_options (testutil.c), which sets the hook from it */
    setenv("RAVEL_TEST_DIRECT_FDATASYNC", fdatasync ? "1" : "0", 1);
    struct held *h = calloc(1, sizeof *h);
    assert_non_null(h);
    h->dir = tu_path("held-%d", db_counter++);
    h->db = open_direct(h->dir, NULL);
    char *st = tu_prop(h->db, "ravel.stats");
    const char *line = strstr(st, "wal direct:");
    assert_non_null(line);
    if (fdatasync &&
        strncmp(strstr(line, "sync by "), "sync by fdatasync", 17) != 0)
        fail_msg("fdatasync was forced, yet: %s", line);
    ravel_free(st);
    tu_put(h->db, RAVEL_SYNC, "before-sync", "before-sync");
    tu_put(h->db, 0, "before-nosync", "before-nosync");

    /* A is a sync write: with fdatasync, one is linked behind its write,
    ** and its completion must not acknowledge A while the write's own
    ** completion is held. */
    rv_test_wal_hold_arm();
    writer_start(h, "held-A", 1, 0, 1);
    while (!rv_test_wal_hold_waiting())
        nap_ms(1);
    wait_in_file(h, &h->w[0]);
    held_scene_start(h, scene);
    expect_none_returned(h);
    print_direct_line(h->db);
    if (scene == SCENE_SLOTS &&
        direct_stat(h->db, " writes in flight") != 16)
        fail_msg("expected 16 writes in flight at most");

    rv_test_wal_hold_release(outcome == HELD_OK ? 0 : -EIO);
    for (int i = 0; i < h->n; i++)
        pthread_join(h->w[i].thread, NULL);
    if (outcome == HELD_OK) {
        for (int i = 0; i < h->n; i++)
            if (h->w[i].rc != RAVEL_OK)
                fail_msg("%s: %s: %s", writer_name(&h->w[i]),
                         ravel_errstr(h->w[i].rc), h->w[i].msg);
        if (scene == SCENE_FLUSH)
            assert_true(tu_files_at_level(h->db, 0) > 0);
        TU_OK(ravel_close(h->db));
    } else {
        printf("#   the held writer: %s\n", h->w[0].msg);
        held_check_failure(h);
        int rc = ravel_close(h->db);
        printf("#   close after the failure: %s\n", ravel_errstr(rc));
    }
    setenv("RAVEL_TEST_DIRECT_FDATASYNC", "0", 1);
    if (outcome == HELD_EIO_HOLE)
        take_away_write(h->dir, "held-A");
    held_reopen_check(h, outcome);
    tu_rm_rf(h->dir);
    free(h->dir);
    free(h);
}

#define HELD_TEST(name, scene, outcome, fds) \
    static void test_##name(void **state) \
    { \
        (void)state; \
        held_run(scene, outcome, fds); \
    }

/* 0: sync writes as the probe chose (RWF_DSYNC or fdatasync); 1:
** fdatasync forced. */
HELD_TEST(held_concurrent_ok, SCENE_CONCURRENT, HELD_OK, 0)
HELD_TEST(held_concurrent_eio, SCENE_CONCURRENT, HELD_EIO, 0)
HELD_TEST(held_concurrent_ok_fdatasync, SCENE_CONCURRENT, HELD_OK, 1)
HELD_TEST(held_concurrent_eio_fdatasync, SCENE_CONCURRENT, HELD_EIO, 1)
HELD_TEST(held_slots_ok, SCENE_SLOTS, HELD_OK, 0)
HELD_TEST(held_slots_eio, SCENE_SLOTS, HELD_EIO, 0)
HELD_TEST(held_slots_eio_fdatasync, SCENE_SLOTS, HELD_EIO, 1)
HELD_TEST(held_flush_ok, SCENE_FLUSH, HELD_OK, 0)
HELD_TEST(held_flush_eio, SCENE_FLUSH, HELD_EIO, 0)
HELD_TEST(held_flush_eio_fdatasync, SCENE_FLUSH, HELD_EIO, 1)
HELD_TEST(hole_on_disk, SCENE_CONCURRENT, HELD_EIO_HOLE, 0)
HELD_TEST(hole_on_disk_fdatasync, SCENE_CONCURRENT, HELD_EIO_HOLE, 1)
HELD_TEST(hole_on_disk_slots, SCENE_SLOTS, HELD_EIO_HOLE, 0)

/* ==================================== a recycled segment's block boundary */

/* How test_boundary_* make a recycled segment end at a block boundary:
** the current segment is made a recycled file (segments written with
** patterned values, flushed, recycled), then one record is written, sized
** so that the segment's data ends exactly at a block boundary behind which
** the file's earlier life left bytes that are not a record header (byte
** 12, the type, zero; others not zero).  Then the segment is ended:
**   last      it stays the last segment; the process is killed;
**   switched  a memtable flush switches to the next segment and is held
**             before the manifest names its table (so the segment stays in
**             the log), one more write goes to the new segment; killed;
**   failed    the same switch, then the manifest write fails (EIO): the
**             flush fails, writes stop, the database is closed -- no crash
**             at all.
** Every mode must then open with every acknowledged write. */
enum boundary_end { BOUNDARY_LAST, BOUNDARY_SWITCHED, BOUNDARY_FAILED };

#define LIFE_VALUE 12000

struct boundary_info {
    int lives;          /* life-LL-J and tick-LL keys written, LL < lives */
    uint64_t number;    /* the recycled segment */
    size_t target;      /* the block boundary where its data ends */
};

/* Whether the 16 bytes at P are what the test wants after the data: not
** zero, type byte zero (so not a record header of another life either). */
static int boundary_misleading(const unsigned char *p)
{
    return !all_zero(p, RV_WAL_RECORD_HEADER_SIZE) && p[12] == 0;
}

/* A put of key "boundary" whose WAL record takes exactly SIZE bytes
** (a multiple of 8, at least 48). */
static int boundary_put(ravel_db *db, size_t size)
{
    size_t rep = size - RV_WAL_RECORD_HEADER_SIZE;
    /* rep = 12 header + 1 type + 1 klen + 8 key + vlen varint + vlen */
    size_t vlen = rep - 22 - 1;
    if (vlen >= 128)
        vlen = rep - 22 - 2;
    char *val = malloc(vlen);
    if (!val)
        return RAVEL_NOMEM;
    memset(val, 'b', vlen);
    int rc = ravel_put(db, RAVEL_SYNC, "boundary", 8, val, vlen);
    free(val);
    return rc;
}

/* Writes until the current segment of DB (in DIR) is a recycled file and
** its data ends at a block boundary with misleading bytes behind.  0, or
** -1 with ERR set. */
static int boundary_setup(ravel_db *db, const char *dir,
                          struct boundary_info *bi, char *err, size_t n)
{
    char *val = malloc(LIFE_VALUE);
    assert_non_null(val);
    for (size_t i = 0; i < LIFE_VALUE; i++)
        val[i] = i % 16 == 0 ? 0x5a : 0;
    struct seg s = {0};
    size_t end = 0, target = 0;
    int rc = RAVEL_OK, life;
    for (life = 0; life < 16 && !target && !rc; life++) {
        char key[32];
        for (int j = 0; j < 3 && !rc; j++) {
            snprintf(key, sizeof key, "life-%02d-%d", life, j);
            rc = ravel_put(db, RAVEL_SYNC, key, strlen(key), val, LIFE_VALUE);
        }
        if (!rc)
            rc = ravel_flush(db, 0);
        /* the new segment's first write (its header goes with it) */
        snprintf(key, sizeof key, "tick-%02d", life);
        if (!rc)
            rc = ravel_put(db, RAVEL_SYNC, key, strlen(key), "t", 1);
        if (rc)
            break;
        seg_free(&s);
        seg_current(dir, &s);
        end = seg_walk(&s, NULL, NULL);
        /* A recycled file: its earlier life's bytes lie past the data. */
        for (size_t b = (end + 64 + s.block - 1) / s.block * s.block;
             b + RV_WAL_RECORD_HEADER_SIZE <= s.size && !target;
             b += s.block)
            if (boundary_misleading(s.data + b))
                target = b;
    }
    free(val);
    bi->lives = life;
    bi->number = s.number;
    bi->target = target;
    seg_free(&s);
    if (rc) {
        snprintf(err, n, "writing: %s: %s", ravel_errstr(rc), ravel_errmsg());
        return -1;
    }
    if (!target) {
        snprintf(err, n, "no recycled segment with stale bytes at a block "
                 "boundary");
        return -1;
    }
    rc = boundary_put(db, target - end);
    if (rc) {
        snprintf(err, n, "boundary put: %s: %s", ravel_errstr(rc),
                 ravel_errmsg());
        return -1;
    }
    seg_load(dir, bi->number, &s);
    size_t now = seg_walk(&s, NULL, NULL);
    seg_free(&s);
    if (now != target) {
        snprintf(err, n, "the data of segment %llu ends at %zu, not at %zu",
                 (unsigned long long)bi->number, now, target);
        return -1;
    }
    return 0;
}

/* Switches DB to its next segment by a flush held before the manifest
** names its table, and writes "after-switch" there.  0, or -1 with ERR. */
static int boundary_switch(ravel_db *db, char *err, size_t n)
{
    rv_pause_arm(RV_PAUSE_FLUSH_TABLES_WRITTEN);
    int rc = ravel_flush(db, RAVEL_FLUSH_NO_WAIT);
    if (!rc) {
        while (!rv_pause_waiting(RV_PAUSE_FLUSH_TABLES_WRITTEN))
            nap_ms(1);
        rc = ravel_put(db, RAVEL_SYNC, "after-switch", 12, "a", 1);
    }
    if (rc) {
        snprintf(err, n, "switch: %s: %s", ravel_errstr(rc), ravel_errmsg());
        return -1;
    }
    return 0;
}

#define BOUNDARY_OPTS "recycle_log_file_num=4;write_buffer_size=8M"

/* What the child of test_boundary_last_segment and _switched_segment is
** given, and what it reports once it is set up. */
struct boundary_args {
    char dir[PATH_MAX];
    int with_switch;
};

struct boundary_ready {
    struct boundary_info bi;
    uint64_t recycled; /* ravel.stats' count of recycled segments */
};

/* The child: sets up, reports a struct boundary_ready (or fails) and waits
** for its kill. */
static int boundary_child(const void *arg)
{
    const struct boundary_args *ba = arg;
    const char *dir = ba->dir;
    char err[512] = "";
    ravel_options *o = NULL;
    ravel_db *db = NULL;
    struct boundary_ready ready = {{0}, 0};
    int rc = tu_options_try("wal_io=direct;" BOUNDARY_OPTS, &o);
    if (!rc)
        rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("open: %s: %s", ravel_errstr(rc), ravel_errmsg());
    if (boundary_setup(db, dir, &ready.bi, err, sizeof err) == 0 &&
        ba->with_switch)
        boundary_switch(db, err, sizeof err);
    if (err[0])
        crash_child_fail("%s", err);
    ready.recycled = direct_stat(db, " recycled");
    crash_send(&ready, sizeof ready);
    crash_child_park();
}

/* Opens copies of DIR in every recovery mode and counts the modes that do
** not open or lose an acknowledged write of BI (and "after-switch" with
** AFTER). */
static int boundary_check(const char *dir, const struct boundary_info *bi,
                          int after, const char *how)
{
    int failures = 0;
    for (int m = 0; m < 4; m++) {
        char *copy = tu_path("boundary-copy-%d-%d", db_counter, m);
        copy_dir(dir, copy);
        char opts[160];
        snprintf(opts, sizeof opts, "wal_recovery_mode=%s;" BOUNDARY_OPTS,
                 recovery_modes[m]);
        ravel_db *db = NULL;
        int rc = tu_open(copy, opts, &db);
        if (rc != RAVEL_OK) {
            printf("# FAIL: %s: the database does not open after %s: "
                   "%s: %s\n", recovery_modes[m], how, ravel_errstr(rc),
                   ravel_errmsg());
            failures++;
        } else {
            char key[32];
            int missing = 0;
            for (int l = 0; l < bi->lives; l++) {
                for (int j = 0; j < 4; j++) {
                    if (j < 3)
                        snprintf(key, sizeof key, "life-%02d-%d", l, j);
                    else
                        snprintf(key, sizeof key, "tick-%02d", l);
                    char *v = get_str(db, key);
                    missing += v == NULL;
                    free(v);
                }
            }
            for (int j = 0; j < 1 + after; j++) {
                char *v = get_str(db, j ? "after-switch" : "boundary");
                if (!v)
                    printf("# %s: %s is missing\n", recovery_modes[m],
                           j ? "after-switch" : "boundary");
                missing += v == NULL;
                free(v);
            }
            printf("# %s: opens, %d acknowledged keys missing\n",
                   recovery_modes[m], missing);
            if (missing) {
                printf("# FAIL: %s: %d acknowledged keys missing after %s\n",
                       recovery_modes[m], missing, how);
                failures++;
            }
            TU_OK(ravel_close(db));
        }
        tu_rm_rf(copy);
        free(copy);
    }
    return failures;
}

/* The parent's record of the child's report. */
struct boundary_heard {
    struct boundary_ready ready;
    int got;
};

static void boundary_record(struct crash_child *c, const void *msg)
{
    struct boundary_heard *h = c->ctx;
    memcpy(&h->ready, msg, sizeof h->ready);
    h->got = 1;
}

static int boundary_got_ready(struct crash_child *c)
{
    return ((struct boundary_heard *)c->ctx)->got;
}

static void boundary_killed(int with_switch)
{
    char *dir = tu_path("boundary-%d", db_counter++);
    struct boundary_args ba = {.with_switch = with_switch};
    snprintf(ba.dir, sizeof ba.dir, "%s", dir);
    struct boundary_heard heard = {{{0}, 0}, 0};
    struct crash_child c = {.on_msg = boundary_record,
                            .msg_size = sizeof(struct boundary_ready),
                            .ctx = &heard};
    crash_spawn(&c, "boundary", &ba, sizeof ba);
    crash_wait(&c, boundary_got_ready, 120000, "its setup");
    crash_kill(&c);
    settle_dir(dir);
    struct boundary_info bi = heard.ready.bi;
    unsigned long long number = bi.number, recycled = heard.ready.recycled;
    printf("# segment %llu (a recycled file; %llu recycled) ends at block "
           "boundary %zu with its earlier life's bytes behind; %s; "
           "killed\n", number, recycled, bi.target,
           with_switch ? "switched to the next segment, its flush held"
                       : "the last segment");
    int failures = boundary_check(dir, &bi, with_switch, "kill -9");
    tu_rm_rf(dir);
    free(dir);
    if (failures)
        fail_msg("%d of 4 recovery modes failed after kill -9 (above)",
                 failures);
}

static void test_boundary_failed_flush(void **state)
{
    (void)state;
    char *dir = tu_path("boundary-%d", db_counter++);
    ravel_db *db = open_direct(dir, BOUNDARY_OPTS);
    struct boundary_info bi;
    char err[512];
    if (boundary_setup(db, dir, &bi, err, sizeof err) != 0 ||
        boundary_switch(db, err, sizeof err) != 0)
        fail_msg("%s", err);
    rv_fault_arm(RV_FAULT_MANIFEST_WRITE, 0, EIO);
    rv_pause_release(RV_PAUSE_FLUSH_TABLES_WRITTEN);
    /* The flush fails and stops writes; wait for it. */
    uint64_t limit = tu_now_ms() + 60000;
    for (;;) {
        char *why = tu_prop(db, "ravel.read-only-reason");
        int stopped = why[0] != 0;
        if (stopped)
            printf("# the flush failed: %s\n", why);
        ravel_free(why);
        if (stopped)
            break;
        if (tu_now_ms() > limit)
            fail_msg("the flush with a failing manifest write never failed");
        nap_ms(1);
    }
    rv_fault_arm(RV_FAULT_MANIFEST_WRITE, -1, 0);
    ravel_close(db);
    printf("# segment %llu (a recycled file) ends at block boundary %zu "
           "with its earlier life's bytes behind; switched; the flush "
           "failed; closed\n", (unsigned long long)bi.number, bi.target);
    int failures = boundary_check(dir, &bi, 1, "a failed flush and a close");
    tu_rm_rf(dir);
    free(dir);
    if (failures)
        fail_msg("%d of 4 recovery modes failed after a failed flush and a "
                 "close (above)", failures);
}

static void test_boundary_last_segment(void **state)
{
    (void)state;
    boundary_killed(0);
}

static void test_boundary_switched_segment(void **state)
{
    (void)state;
    boundary_killed(1);
}

/* ====================================== writers with a checkable past */

/* Each writer thread T of a child runs operation I = 0, 1, 2, ... of a
** sequence fixed by the seed (op_of), on keys of its own: a put, a
** delete, a batch of three puts and a delete, or a put of a large value;
** synced or not.  Every value is unique (it names T, I and the key) and
** checkable (value_of).  A thread's operations reach the log in its
** order, so what replay keeps of it must be exactly the state after some
** prefix 0..J of them: the test finds J (find_prefix) or fails. */
#define CR_THREADS 4
#define CR_KEYS 24
#define OP_KEYS 4
#define CR_VALUE_MAX 6200

struct op {
    int n;                 /* keys touched */
    int key[OP_KEYS];
    int del[OP_KEYS];      /* 1: deleted, 0: put */
    size_t vlen[OP_KEYS];
    int sync;
};

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void op_of(uint64_t seed, int t, uint64_t i, struct op *o)
{
    uint64_t h = mix64(seed ^ mix64(((uint64_t)t << 48) ^ i));
    unsigned kind = (unsigned)(h % 100);
    h = mix64(h);
    memset(o, 0, sizeof *o);
    o->sync = h % 3 == 0;
    h = mix64(h);
    o->n = kind < 70 || kind >= 90 ? 1 : 4;
    int first = (int)(h % CR_KEYS);
    for (int k = 0; k < o->n; k++) {
        h = mix64(h);
        o->key[k] = (first + k * 7) % CR_KEYS; /* distinct */
        o->del[k] = kind < 70 ? kind >= 50 : k == 3;
        o->vlen[k] = kind >= 90 ? 2000 + h % 4000 : 24 + h % 300;
    }
}

static int key_of(char *buf, size_t n, int t, int k)
{
    return snprintf(buf, n, "t%d-k%02d", t, k);
}

/* The value op I of thread T puts into key K: VLEN bytes. */
static void value_of(char *buf, int t, uint64_t i, int k, size_t vlen)
{
    int n = snprintf(buf, vlen, "t%d-i%010llu-k%02d|", t,
                     (unsigned long long)i, k);
    for (size_t j = (size_t)n; j < vlen; j++)
        buf[j] = (char)('a' + (i * 7 + j) % 26);
}

/* Runs op I of thread T against DB. */
static int op_run(ravel_db *db, uint64_t seed, int t, uint64_t i,
                  ravel_batch *b)
{
    struct op o;
    op_of(seed, t, i, &o);
    char key[32], val[CR_VALUE_MAX];
    int flags = o.sync ? RAVEL_SYNC : 0;
    if (o.n == 1) {
        int kl = key_of(key, sizeof key, t, o.key[0]);
        if (o.del[0])
            return ravel_delete(db, flags, key, (size_t)kl);
        value_of(val, t, i, o.key[0], o.vlen[0]);
        return ravel_put(db, flags, key, (size_t)kl, val, o.vlen[0]);
    }
    ravel_batch_clear(b);
    for (int k = 0; k < o.n; k++) {
        int kl = key_of(key, sizeof key, t, o.key[k]);
        int rc;
        if (o.del[k]) {
            rc = ravel_batch_delete(b, key, (size_t)kl);
        } else {
            value_of(val, t, i, o.key[k], o.vlen[k]);
            rc = ravel_batch_put(b, key, (size_t)kl, val, o.vlen[k]);
        }
        if (rc)
            return rc;
    }
    return ravel_write(db, flags, b);
}

/* What thread T's keys hold in DB: per key the op that wrote its value,
** or -1 if absent.  0, or -1 with WHY set if a value is not one any op
** wrote. */
static int read_state(ravel_db *db, int t, int64_t *got, char *why,
                      size_t wn)
{
    char key[32], want[CR_VALUE_MAX];
    for (int k = 0; k < CR_KEYS; k++) {
        int kl = key_of(key, sizeof key, t, k);
        void *v = NULL;
        size_t len = 0;
        int rc = ravel_get(db, NULL, key, (size_t)kl, &v, &len);
        got[k] = -1;
        if (rc == RAVEL_NOTFOUND)
            continue;
        if (rc != RAVEL_OK) {
            snprintf(why, wn, "get %s: %s: %s", key, ravel_errstr(rc),
                     ravel_errmsg());
            return -1;
        }
        int vt, vk;
        unsigned long long vi;
        char text[48];
        snprintf(text, sizeof text, "%.*s", (int)(len < 40 ? len : 40),
                 (char *)v);
        if (len > CR_VALUE_MAX ||
            sscanf(text, "t%d-i%llu-k%d|", &vt, &vi, &vk) != 3 || vt != t ||
            vk != k) {
            snprintf(why, wn, "%s holds a value no op wrote: '%s'", key,
                     text);
            ravel_free(v);
            return -1;
        }
        value_of(want, t, vi, k, len);
        if (memcmp(want, v, len) != 0) {
            snprintf(why, wn, "%s holds a damaged value of op %llu", key, vi);
            ravel_free(v);
            return -1;
        }
        got[k] = (int64_t)vi;
        ravel_free(v);
    }
    return 0;
}

/* Applies op I of thread T to the state CUR (per key: the op that wrote
** it, or -1). */
static void op_apply(uint64_t seed, int t, uint64_t i, int64_t *cur)
{
    struct op o;
    op_of(seed, t, i, &o);
    for (int k = 0; k < o.n; k++)
        cur[o.key[k]] = o.del[k] ? -1 : (int64_t)i;
}

/* Thread T's state after ops 0..BASE_J is BASE.  Returns the largest J in
** [LO, HI] (LO >= BASE_J) whose state equals GOT, or -2 if none does.
** With PER_KEY, instead of one J for all keys, each key may hold any
** value it had after some J in [LO, HI] (skip_any_corrupted_records,
** which may replay past a damaged record): returns HI if every key does,
** else -2. */
static int64_t find_prefix(uint64_t seed, int t, const int64_t *base,
                           int64_t base_j, const int64_t *got, int64_t lo,
                           int64_t hi, int per_key)
{
    int64_t cur[CR_KEYS];
    int matched[CR_KEYS];
    memcpy(cur, base, sizeof cur);
    int64_t j = base_j;
    for (; j < lo; j++)
        op_apply(seed, t, (uint64_t)(j + 1), cur);
    int64_t best = -2;
    for (int k = 0; k < CR_KEYS; k++)
        matched[k] = cur[k] == got[k];
    for (;;) {
        int all = 1;
        for (int k = 0; k < CR_KEYS; k++) {
            matched[k] = per_key ? matched[k] || cur[k] == got[k]
                                 : cur[k] == got[k];
            all &= matched[k];
        }
        if (all && !per_key)
            best = j;
        if (j >= hi)
            break;
        j++;
        op_apply(seed, t, (uint64_t)j, cur);
    }
    if (per_key) {
        for (int k = 0; k < CR_KEYS; k++)
            if (!matched[k])
                return -2;
        return hi;
    }
    return best;
}

/* ------------------------------------------------------------ the child */

/* The child's messages (its open: crash_child_opened; a failure:
** crash_child_fail). */
enum cr_msg_type {
    CR_ACK = 2,      /* op V of thread T returned RAVEL_OK; A: synced */
    CR_RECYCLED = 3, /* ravel.stats counts V recycled segments */
    CR_SEEN = 4,     /* after the open, thread T's state is the prefix
                     ** 0..V-1 (V = J + 1) */
};

struct cr_msg {
    uint32_t type;
    uint32_t t;
    uint32_t a;
    uint32_t pad;
    uint64_t v;
};

static void cr_send(uint32_t type, uint32_t t, uint32_t a, uint64_t v)
{
    struct cr_msg m = {type, t, a, 0, v};
    crash_send(&m, sizeof m);
}

static void cr_die(const char *what, int rc)
{
    crash_child_fail("%s: %s: %s", what, ravel_errstr(rc), ravel_errmsg());
}

struct cr_thread {
    ravel_db *db;
    uint64_t seed;
    int t;
    uint64_t start;
};

static void *cr_writer(void *p)
{
    struct cr_thread *ct = p;
    ravel_batch *b = NULL;
    int rc = ravel_batch_new(&b);
    if (rc)
        cr_die("batch_new", rc);
    for (uint64_t i = ct->start;; i++) {
        rc = op_run(ct->db, ct->seed, ct->t, i, b);
        if (rc)
            cr_die("write", rc);
        struct op o;
        op_of(ct->seed, ct->t, i, &o);
        cr_send(CR_ACK, (uint32_t)ct->t, (uint32_t)o.sync, i);
        if (ct->t == 0 && i % 32 == 0)
            cr_send(CR_RECYCLED, 0, 0, direct_stat(ct->db, " recycled"));
    }
    return NULL;
}

/* What a child is given.  CHECK 0: thread T starts at op START[T].
** CHECK 1: a fresh database's second process: finds each thread's prefix
** (ops up to START[T] - 1 at most), reports it, and goes on after it. */
struct cr_args {
    char dir[PATH_MAX];
    char journal[PATH_MAX]; /* the sync journal, or "" */
    char opts[256];
    uint64_t seed;
    int check;
    uint64_t start[CR_THREADS];
};

static int cr_child(const void *arg)
{
    const struct cr_args *ca = arg;
    const char *dir = ca->dir;
    uint64_t seed = ca->seed;
    if (ca->journal[0])
        tu_sync_journal_start(ca->journal);
    const char *opts = ca->opts;
    int check = ca->check;
    uint64_t start[CR_THREADS];
    for (int t = 0; t < CR_THREADS; t++)
        start[t] = ca->start[t];

    ravel_options *o = NULL;
    int rc = tu_options_try(opts, &o);
    if (rc)
        cr_die("options", rc);
    ravel_db *db = NULL;
    rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc)
        cr_die("open", rc);
    char *io = NULL;
    if (ravel_property(db, "ravel.wal-io", &io) || strncmp(io, "direct", 6))
        cr_die("not wal_io=direct", RAVEL_INVALID);
    ravel_free(io);
    crash_child_opened(db);
    if (check) {
        for (int t = 0; t < CR_THREADS; t++) {
            int64_t got[CR_KEYS], base[CR_KEYS];
            char why[256];
            for (int k = 0; k < CR_KEYS; k++)
                base[k] = -1;
            if (read_state(db, t, got, why, sizeof why) != 0)
                crash_child_fail("state after recovery: %s", why);
            int64_t j = find_prefix(seed, t, base, -1, got, -1,
                                    (int64_t)start[t] - 1, 0);
            if (j == -2)
                crash_child_fail("state after recovery: thread %d: the "
                                 "state after recovery is no prefix of its "
                                 "ops", t);
            cr_send(CR_SEEN, (uint32_t)t, 0, (uint64_t)(j + 1));
            start[t] = (uint64_t)(j + 1);
        }
    }
    pthread_t th[CR_THREADS];
    struct cr_thread ct[CR_THREADS];
    for (int t = 0; t < CR_THREADS; t++) {
        ct[t] = (struct cr_thread){db, seed, t, start[t]};
        if (pthread_create(&th[t], NULL, cr_writer, &ct[t]))
            cr_die("pthread_create", RAVEL_NOMEM);
    }
    crash_child_park();
}

/* ----------------------------------------------------------- the parent */

/* What the parent knows of one child run. */
struct cr_run {
    int opened;                     /* it reported its open */
    int64_t acked[CR_THREADS];      /* highest op acknowledged, or -1 */
    int64_t synced[CR_THREADS];     /* highest synced op acknowledged */
    int64_t seen[CR_THREADS];       /* CR_SEEN: prefix found, -2 none */
    uint64_t recycled;
    uint64_t acks;
};

static void cr_handle(struct crash_child *c, const void *msg)
{
    struct cr_run *r = c->ctx;
    const struct cr_msg *m = msg;
    switch (m->type) {
    case CR_ACK:
        assert_true(m->t < CR_THREADS);
        if ((int64_t)m->v > r->acked[m->t])
            r->acked[m->t] = (int64_t)m->v;
        if (m->a && (int64_t)m->v > r->synced[m->t])
            r->synced[m->t] = (int64_t)m->v;
        r->acks++;
        break;
    case CR_RECYCLED:
        if (m->v > r->recycled)
            r->recycled = m->v;
        break;
    case CR_SEEN:
        assert_true(m->t < CR_THREADS);
        r->seen[m->t] = (int64_t)m->v - 1;
        break;
    default:
        fail_msg("garbled message from the child");
    }
}

static void cr_run_init(struct cr_run *r, const uint64_t *start)
{
    memset(r, 0, sizeof *r);
    for (int t = 0; t < CR_THREADS; t++) {
        r->acked[t] = (int64_t)start[t] - 1;
        r->synced[t] = -1;
        r->seen[t] = -2;
    }
}

/* Runs a child and kills it: EARLY, at a random moment of its start
** (its open is a recovery); else DELAY ms after its open. */
static void cr_run_child(const char *dir, uint64_t seed, const char *journal,
                         const char *opts, int check, const uint64_t *start,
                         int early, uint64_t delay, struct cr_run *r)
{
    cr_run_init(r, start);
    struct cr_args ca = {.seed = seed, .check = check};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    snprintf(ca.journal, sizeof ca.journal, "%s", journal ? journal : "");
    snprintf(ca.opts, sizeof ca.opts, "%s", opts);
    for (int t = 0; t < CR_THREADS; t++)
        ca.start[t] = start[t];
    struct crash_child c = {.on_msg = cr_handle,
                            .msg_size = sizeof(struct cr_msg), .ctx = r};
    crash_spawn(&c, "writer", &ca, sizeof ca);
    crash_kill_after(&c, early ? CRASH_FROM_SPAWN : CRASH_FROM_OPEN, delay);
    r->opened = c.opened;
    settle_dir(dir);
}

/* The model: per thread, the state after ops 0..J. */
struct cr_model {
    uint64_t seed;
    int64_t j[CR_THREADS];
    int64_t state[CR_THREADS][CR_KEYS];
};

static void cr_model_init(struct cr_model *md, uint64_t seed)
{
    md->seed = seed;
    for (int t = 0; t < CR_THREADS; t++) {
        md->j[t] = -1;
        for (int k = 0; k < CR_KEYS; k++)
            md->state[t][k] = -1;
    }
}

static void cr_model_advance(struct cr_model *md, int t, int64_t to)
{
    for (; md->j[t] < to; md->j[t]++)
        op_apply(md->seed, t, (uint64_t)(md->j[t] + 1), md->state[t]);
}

/* Checks DB against the model: thread T's state must be the prefix 0..J
** for a J in [LO_T, HI_T] (PER_KEY: see find_prefix); the J found go to
** FOUND.  Fails the test with LABEL. */
static void cr_check(ravel_db *db, const struct cr_model *md,
                     const int64_t *lo, const int64_t *hi, int per_key,
                     int64_t *found, const char *label)
{
    for (int t = 0; t < CR_THREADS; t++) {
        int64_t got[CR_KEYS];
        char why[256];
        if (read_state(db, t, got, why, sizeof why) != 0)
            fail_msg("%s: thread %d: %s", label, t, why);
        int64_t l = lo[t] > md->j[t] ? lo[t] : md->j[t];
        int64_t j = find_prefix(md->seed, t, md->state[t], md->j[t], got, l,
                                hi[t], per_key);
        if (j == -2) {
            char text[1024];
            size_t n = 0;
            int64_t cur[CR_KEYS];
            memcpy(cur, md->state[t], sizeof cur);
            for (int64_t i = md->j[t] + 1; i <= l; i++)
                op_apply(md->seed, t, (uint64_t)i, cur);
            for (int k = 0; k < CR_KEYS && n < sizeof text - 64; k++)
                if (got[k] != cur[k])
                    n += (size_t)snprintf(text + n, sizeof text - n,
                                          " k%02d: %lld (ops up to %lld: "
                                          "%lld)", k, (long long)got[k],
                                          (long long)l, (long long)cur[k]);
            fail_msg("%s: thread %d: the recovered state is not the state "
                     "after any prefix of its ops 0..J with J in [%lld, "
                     "%lld] (every acknowledged op: up to %lld; a stale or "
                     "lost record, or a record replayed past a hole); keys "
                     "that differ from the prefix %lld (op that wrote the "
                     "value, -1 absent):%s", label, t, (long long)l,
                     (long long)hi[t], (long long)lo[t], (long long)l, text);
        }
        found[t] = j;
    }
}

static const char *cr_opts(char *buf, size_t n, const char *wbs,
                           const char *mode)
{
    snprintf(buf, n, "wal_io=direct;recycle_log_file_num=4;"
             "write_buffer_size=%s%s%s", wbs, mode ? ";wal_recovery_mode=" : "",
             mode ? mode : "");
    return buf;
}

/* Kill -9 rounds on one database, carried through all of them. */
static void test_kill9_recycled_every_mode(void **state)
{
    (void)state;
    static const char *const wbs[] = {"16K", "32K", "64K"};
    int rounds = (int)tu_env_u64("RAVEL_TEST_KILL9_ROUNDS", 16);
    uint64_t rng = tu_seed();
    uint64_t seed = tu_rand(&rng);
    char *dir = tu_path("kill9");
    struct cr_model md;
    cr_model_init(&md, seed);
    uint64_t recycled = 0, acks = 0;
    int opened = 0;
    for (int round = 0; round < rounds; round++) {
        char opts[256];
        cr_opts(opts, sizeof opts, wbs[round % 3], NULL);
        uint64_t start[CR_THREADS];
        for (int t = 0; t < CR_THREADS; t++)
            start[t] = (uint64_t)(md.j[t] + 1);
        uint64_t r = tu_rand(&rng);
        int early = r % 5 == 0;
        uint64_t delay = early ? (r >> 8) % 80 : 20 + (r >> 8) % 600;
        struct cr_run run;
        cr_run_child(dir, seed, NULL, opts, 0, start, early, delay, &run);
        recycled = run.recycled > recycled ? run.recycled : recycled;
        acks += run.acks;
        opened += run.opened;
        printf("# round %d (write_buffer_size=%s): killed %llu ms after %s, "
               "%llu acknowledged ops, %llu segments recycled\n", round,
               wbs[round % 3], (unsigned long long)delay,
               early ? "its start" : "its open",
               (unsigned long long)run.acks,
               (unsigned long long)run.recycled);
        /* Every acknowledged op is there (kill -9 loses none, synced or
        ** not), and at most the one in flight after it. */
        if (access(dir, F_OK) != 0) {
            /* an early kill on a loaded machine can land before the
            ** child's open made the directory: nothing to reopen, and
            ** nothing may have been acknowledged */
            assert_int_equal(run.acks, 0);
            printf("#   killed before the directory existed\n");
            continue;
        }
        int64_t lo[CR_THREADS], hi[CR_THREADS], j[4][CR_THREADS];
        for (int t = 0; t < CR_THREADS; t++) {
            lo[t] = run.acked[t];
            hi[t] = run.acked[t] + 1;
        }
        for (int m = 0; m < 4; m++) {
            char *copy = tu_path("kill9-%d-%d", round, m);
            copy_dir(dir, copy);
            char mopts[256], label[160];
            cr_opts(mopts, sizeof mopts, wbs[round % 3], recovery_modes[m]);
            snprintf(label, sizeof label, "round %d, %s", round,
                     recovery_modes[m]);
            ravel_db *db = NULL;
            int rc = tu_open(copy, mopts, &db);
            if (rc != RAVEL_OK)
                fail_msg("%s: the database does not open after kill -9: "
                         "%s: %s", label, ravel_errstr(rc), ravel_errmsg());
            cr_check(db, &md, lo, hi, 0, j[m], label);
            TU_OK(ravel_close(db));
            if (m)
                for (int t = 0; t < CR_THREADS; t++)
                    if (j[m][t] != j[0][t])
                        fail_msg("%s: thread %d: ops up to %lld replayed, "
                                 "but up to %lld under %s", label, t,
                                 (long long)j[m][t], (long long)j[0][t],
                                 recovery_modes[0]);
            if (m == round % 4) {
                tu_rm_rf(dir);
                assert_int_equal(rename(copy, dir), 0);
            } else {
                tu_rm_rf(copy);
            }
            free(copy);
        }
        for (int t = 0; t < CR_THREADS; t++)
            cr_model_advance(&md, t, j[0][t]);
    }
    printf("# %llu acknowledged ops in %d rounds (%d opened); at most %llu "
           "segments recycled in a round\n", (unsigned long long)acks,
           rounds, opened, (unsigned long long)recycled);
    assert_true(acks > 0);
    assert_true(opened > 0);
    if (recycled == 0)
        fail_msg("no segment was ever recycled: the test proved nothing "
                 "about recycling");
    tu_rm_rf(dir);
    free(dir);
}

/* ========================================================= power loss */

/* The durable prefix the sync journal JOURNAL gives inode INO (its last
** "F" line), or 0. */
static uint64_t journal_durable(const char *journal, uint64_t ino)
{
    char *text;
    size_t len;
    if (tu_file_read(journal, &text, &len) != 0)
        return 0;
    uint64_t durable = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        unsigned long long i, n;
        if (sscanf(line, "F %llu %llu", &i, &n) == 2 && i == ino)
            durable = n;
    }
    free(text);
    return durable;
}

/* A power loss as a recycled segment sees it: every page of a WAL segment
** past what a completed sync covered (rounded up to the 4 KiB block: the
** direct writer writes whole blocks) is kept, zeroed, or -- what a
** recycled file holds there -- replaced by the bytes another segment
** holds at that offset: records of another life, other tag, other
** checksum seed.  The first block, written durably before the segment
** started, is never replaced. */
static void power_loss_stale(const char *dir, const char *journal,
                             uint64_t *rng)
{
    uint64_t *nums;
    int n = seg_numbers(dir, &nums);
    struct seg *segs = calloc((size_t)n + 1, sizeof *segs);
    assert_non_null(segs);
    for (int i = 0; i < n; i++)
        if (seg_try_load(dir, nums[i], &segs[i]) != 0)
            segs[i].size = 0;
    for (int i = 0; i < n; i++) {
        struct seg *s = &segs[i];
        struct stat sb;
        if (!s->size || stat(s->path, &sb) != 0)
            continue;
        uint64_t durable = journal_durable(journal, (uint64_t)sb.st_ino);
        uint64_t from = (durable + 4095) / 4096 * 4096;
        if (from < 4096)
            from = 4096;
        int fd = open(s->path, O_WRONLY);
        assert_true(fd >= 0);
        unsigned stale = 0, zeroed = 0;
        for (uint64_t pg = from; pg < s->size; pg += 4096) {
            size_t len = s->size - pg < 4096 ? (size_t)(s->size - pg) : 4096;
            uint64_t r = tu_rand(rng) % 3;
            static const char zeros[4096];
            const void *src = NULL;
            if (r == 1) {
                src = zeros;
                zeroed++;
            } else if (r == 2) {
                /* another segment's bytes at this offset, if any has some */
                int o = (int)(tu_rand(rng) % (uint64_t)n);
                for (int k = 0; k < n && !src; k++) {
                    struct seg *other = &segs[(o + k) % n];
                    if (other != s && other->size >= pg + len &&
                        !all_zero(other->data + pg, len))
                        src = other->data + pg;
                }
                stale += src != NULL;
            }
            if (src)
                assert_int_equal(pwrite(fd, src, len, (off_t)pg),
                                 (ssize_t)len);
        }
        close(fd);
        if (stale || zeroed)
            printf("#   power loss (stale): %s: past byte %llu, %u pages "
                   "zeroed, %u given another segment's bytes\n", s->path,
                   (unsigned long long)from, zeroed, stale);
    }
    for (int i = 0; i < n; i++)
        seg_free(&segs[i]);
    free(segs);
    free(nums);
}

#define PL_STALE TU_PL_PATTERNS /* power_loss_stale, after powerloss.h's */

/* One round: a first process writes and is killed; a second recovers
** (every op the first acknowledged must be there), writes on and is
** killed; then the power loss, and the database reopened in every mode. */
static void powerloss_round(int pattern, int round, uint64_t *rng)
{
    const char *wbs = round % 2 ? "64K" : "32K";
    char *dir = tu_path("pl-%d-%d", pattern, round);
    char *journal = tu_path("pl-%d-%d.journal", pattern, round);
    uint64_t seed = tu_rand(rng);
    char opts[256];
    cr_opts(opts, sizeof opts, wbs, NULL);
    uint64_t start[CR_THREADS] = {0};
    struct cr_run r1, r2;
    cr_run_child(dir, seed, journal, opts, 0, start, 0,
                 100 + tu_rand(rng) % 400, &r1);
    for (int t = 0; t < CR_THREADS; t++)
        start[t] = (uint64_t)(r1.acked[t] + 2); /* what it may find */
    cr_run_child(dir, seed, journal, opts, 1, start, 0,
                 100 + tu_rand(rng) % 400, &r2);
    const char *pname = pattern == PL_STALE
        ? "stale" : tu_power_loss_name((enum tu_power_loss_pattern)pattern);
    printf("# %s, round %d (write_buffer_size=%s): %llu + %llu acknowledged "
           "ops, %llu + %llu segments recycled\n", pname, round, wbs,
           (unsigned long long)r1.acks, (unsigned long long)r2.acks,
           (unsigned long long)r1.recycled, (unsigned long long)r2.recycled);
    int64_t lo[CR_THREADS], hi[CR_THREADS];
    for (int t = 0; t < CR_THREADS; t++) {
        if (r2.seen[t] < r1.acked[t] || r2.seen[t] > r1.acked[t] + 1)
            fail_msg("%s, round %d: thread %d: the second process found ops "
                     "up to %lld after the kill; acknowledged: up to %lld",
                     pname, round, t, (long long)r2.seen[t],
                     (long long)r1.acked[t]);
        int64_t acked = r2.acked[t] > r2.seen[t] ? r2.acked[t] : r2.seen[t];
        /* What the recovery found was made durable before it wrote on;
        ** a synced op covers every op before it. */
        lo[t] = r2.synced[t] > r2.seen[t] ? r2.synced[t] : r2.seen[t];
        hi[t] = acked + 1;
    }
    if (pattern == PL_STALE)
        power_loss_stale(dir, journal, rng);
    else
        tu_power_loss(dir, journal, (enum tu_power_loss_pattern)pattern, rng);
    struct cr_model md;
    cr_model_init(&md, seed);
    for (int m = 0; m < 4; m++) {
        char *copy = tu_path("pl-%d-%d-%d", pattern, round, m);
        copy_dir(dir, copy);
        char mopts[256], label[160];
        cr_opts(mopts, sizeof mopts, wbs, recovery_modes[m]);
        snprintf(label, sizeof label, "%s, round %d, %s", pname, round,
                 recovery_modes[m]);
        ravel_db *db = NULL;
        int rc = tu_open(copy, mopts, &db);
        int64_t found[CR_THREADS];
        if (rc == RAVEL_CORRUPT && m == 1) {
            /* absolute_consistency may refuse what a power loss left */
            printf("#   %s: refuses to open: %s\n", label, ravel_errmsg());
        } else if (rc != RAVEL_OK) {
            fail_msg("%s: the database does not open after the power "
                     "loss: %s: %s", label, ravel_errstr(rc), ravel_errmsg());
        } else {
            cr_check(db, &md, lo, hi, m == 3, found, label);
            TU_OK(ravel_close(db));
        }
        tu_rm_rf(copy);
        free(copy);
    }
    tu_rm_rf(dir);
    unlink(journal);
    free(dir);
    free(journal);
}

static void test_powerloss_recycled(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    int rounds = (int)tu_env_u64("RAVEL_TEST_POWERLOSS_ROUNDS", 2);
    for (int p = 0; p <= PL_STALE; p++)
        for (int r = 0; r < rounds; r++)
            powerloss_round(p, r, &rng);
}

/* ================================================================ main */

static const struct crash_role roles[] = {
    {"boundary", boundary_child, sizeof(struct boundary_args)},
    {"writer", cr_child, sizeof(struct cr_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_concurrent_ok),
        cmocka_unit_test(test_held_concurrent_eio),
        cmocka_unit_test(test_held_concurrent_ok_fdatasync),
        cmocka_unit_test(test_held_concurrent_eio_fdatasync),
        cmocka_unit_test(test_held_slots_ok),
        cmocka_unit_test(test_held_slots_eio),
        cmocka_unit_test(test_held_slots_eio_fdatasync),
        cmocka_unit_test(test_held_flush_ok),
        cmocka_unit_test(test_held_flush_eio),
        cmocka_unit_test(test_held_flush_eio_fdatasync),
        cmocka_unit_test(test_hole_on_disk),
        cmocka_unit_test(test_hole_on_disk_fdatasync),
        cmocka_unit_test(test_hole_on_disk_slots),
        cmocka_unit_test(test_boundary_last_segment),
        cmocka_unit_test(test_boundary_switched_segment),
        cmocka_unit_test(test_boundary_failed_flush),
        cmocka_unit_test(test_kill9_recycled_every_mode),
        cmocka_unit_test(test_powerloss_recycled),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
