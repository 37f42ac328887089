/*
** test_feed.c -- the change feed (ravel_updates_since) and the batch API
** it hands batches out with.
**
**   batch_api      a batch read back op by op, turned into bytes and back;
**                  damaged or foreign bytes refused with RAVEL_CORRUPT and
**                  a message, bad arguments with RAVEL_INVALID.
**   resume         for every sequence s of a database written in batches
**                  of 1 to 4 ops, across flushes (segments archived) and a
**                  reopen, the feed from s is exactly the batches from the
**                  one holding s on, each with its sequence and ops; at the
**                  end it says so, and a later call returns what was
**                  written since, across a segment switch.
**   expired        without retention a flushed sequence is RAVEL_EXPIRED,
**                  naming the oldest available (also while the segment
**                  left is empty); with wal_size_limit_mb the
**                  oldest segments are purged and only they expire; with
**                  wal_ttl_seconds segments aged past it (their mtime set
**                  back) are purged; a follower whose next segment is
**                  purged under it gets RAVEL_EXPIRED, never a silent gap.
**   recycled       wal_io=direct with recycle_log_file_num, no retention: a
**                  follower that falls behind while the segments it holds
**                  are reused reads only what was written, in order, then
**                  RAVEL_EXPIRED.
**   txn            two-phase commits appear once, at their commit, with
**                  their ops and the database's sequences; prepares and
**                  rollbacks never; across a flush that spilled a prepare
**                  and a reopen that recovered it.
**   ingest_gap     a bulk ingest's sequence (no WAL record) is a gap the
**                  feed passes over; asked for, it starts after it.
**   replication    8 writer threads on a primary with small memtables
**                  (flushes, archived segments); the feed applied to a
**                  second database with ravel_write; at a snapshot's
**                  sequence taken mid-run and at the end, both hold the
**                  same keys and values.
**   other_process  a child process writes synced batches (flushing every
**                  100) while a read_only handle of this process follows
**                  it: at each look, every batch acknowledged before it,
**                  in order; then the child is killed with SIGKILL and the
**                  read_only handle reads every acknowledged batch.  (The
**                  live part is skipped, with a note, where a read_only
**                  open still takes the writer's lock.)
**   powerloss      the same child, every third write synced and a flush
**                  every 100 (segments archived), killed, then a power
**                  loss in each pattern of powerloss.h: the feed after the
**                  reopen is every batch the database recovered, in order,
**                  no gap, reaching past every synced write.  (The harness
**                  damages the directory's own files; archive/ holds only
**                  segments fdatasynced whole before they were moved.)
*/
#include "crash_harness.h"
#include "util/fault.h"
#include "powerloss.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static int dirs;

static char *new_dir(const char *what)
{
    return tu_path("feed-%s-%d", what, dirs++);
}

/* One batch as written: its sequence and its bytes after the header's
** sequence (the count and the ops). */
struct written {
    uint64_t seq;
    uint32_t count;
    char *ops;
    size_t len;
};

static void written_set(struct written *w, uint64_t seq, const ravel_batch *b)
{
    size_t len;
    const char *data = ravel_batch_data(b, &len);
    assert_true(len >= 12);
    w->seq = seq;
    w->count = ravel_batch_count(b);
    w->len = len - 8;
    w->ops = malloc(w->len);
    assert_non_null(w->ops);
    memcpy(w->ops, data + 8, w->len);
}

/* Whether the feed's batch B is W. */
static int written_is(const struct written *w, const ravel_batch *b,
                      uint64_t seq)
{
    size_t len;
    const char *data = ravel_batch_data(b, &len);
    return seq == w->seq && ravel_batch_sequence(b) == seq &&
           len - 8 == w->len && memcmp(data + 8, w->ops, w->len) == 0;
}

/* Writes B and returns the sequence of its first op. */
static uint64_t write_batch(ravel_db *db, ravel_batch *b)
{
    TU_OK(ravel_write(db, 0, b));
    return tu_prop_u64(db, "ravel.last-sequence") - ravel_batch_count(b) + 1;
}

/* A batch of 1 to 4 ops (some deletes) numbered from *N. */
static void fill_batch(ravel_batch *b, uint64_t *rng, int *n)
{
    TU_OK(ravel_batch_clear(b));
    int ops = 1 + (int)(tu_rand(rng) % 4);
    for (int i = 0; i < ops; i++, (*n)++) {
        char k[32], v[64];
        snprintf(k, sizeof k, "key%05d", (int)(tu_rand(rng) % 500));
        if (tu_rand(rng) % 5 == 0) {
            TU_OK(ravel_batch_delete(b, k, strlen(k)));
        } else {
            snprintf(v, sizeof v, "value-%d-%llu", *n,
                     (unsigned long long)(tu_rand(rng) % 1000000));
            TU_OK(ravel_batch_put(b, k, strlen(k), v, strlen(v)));
        }
    }
}

/* ------------------------------------------------------------ batch_api */

static void test_batch_api(void **state)
{
    (void)state;
    ravel_batch *b, *c;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "a", 1, "one", 3));
    TU_OK(ravel_batch_delete(b, "b", 1));
    TU_OK(ravel_batch_put(b, "", 0, "", 0));
    assert_int_equal(ravel_batch_sequence(b), 0);

    size_t pos = 0, klen, vlen;
    int op;
    const void *key, *val;
    TU_OK(ravel_batch_next_op(b, &pos, &op, &key, &klen, &val, &vlen));
    assert_int_equal(op, RAVEL_OP_PUT);
    assert_memory_equal(key, "a", 1);
    assert_int_equal(vlen, 3);
    assert_memory_equal(val, "one", 3);
    TU_OK(ravel_batch_next_op(b, &pos, &op, &key, &klen, &val, &vlen));
    assert_int_equal(op, RAVEL_OP_DELETE);
    assert_int_equal(klen, 1);
    assert_null(val);
    assert_int_equal(vlen, 0);
    TU_OK(ravel_batch_next_op(b, &pos, &op, &key, &klen, &val, &vlen));
    assert_int_equal(op, RAVEL_OP_PUT);
    assert_int_equal(klen, 0);
    assert_int_equal(vlen, 0);
    assert_int_equal(ravel_batch_next_op(b, &pos, &op, &key, &klen, &val,
                                         &vlen), RAVEL_NOTFOUND);

    /* bytes and back */
    size_t len;
    const char *data = ravel_batch_data(b, &len);
    TU_OK(ravel_batch_from_data(data, len, &c));
    assert_int_equal(ravel_batch_count(c), 3);
    size_t clen;
    const char *cdata = ravel_batch_data(c, &clen);
    assert_int_equal(clen, len);
    assert_memory_equal(cdata, data, len);
    ravel_batch_free(c);

    /* damaged: every cut, a byte too many, a wrong count, a marker */
    char *buf = malloc(len + 1);
    assert_non_null(buf);
    memcpy(buf, data, len);
    for (size_t cut = 0; cut < len; cut++) {
        ravel_batch *d = (ravel_batch *)1;
        TU_EXPECT_RC(RAVEL_CORRUPT, ravel_batch_from_data(buf, cut, &d));
        assert_null(d);
    }
    buf[len] = 0;
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_batch_from_data(buf, len + 1, &c));
    buf[8] = 4; /* count */
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_batch_from_data(buf, len, &c));
    buf[8] = 3;
    buf[12] = 0x10; /* a commit marker for the first op */
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_batch_from_data(buf, len, &c));
    buf[12] = 0x7f; /* no such op */
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_batch_from_data(buf, len, &c));
    TU_EXPECT_INVALID(ravel_batch_from_data(NULL, 5, &c));
    TU_EXPECT_INVALID(ravel_batch_from_data(buf, len, NULL));
    TU_EXPECT_INVALID(ravel_batch_next_op(NULL, &pos, &op, &key, &klen, &val,
                                          &vlen));
    free(buf);

    /* a batch made from bytes is written like any other */
    char *dir = new_dir("batch");
    ravel_db *db = tu_open_ok(dir, NULL);
    TU_OK(ravel_batch_from_data(data, len, &c));
    TU_OK(ravel_write(db, 0, c));
    tu_expect(db, NULL, "a", "one");
    tu_expect(db, NULL, "b", NULL);
    ravel_batch_free(c);
    TU_OK(ravel_close(db));
    ravel_batch_free(b);
    free(dir);
}

/* --------------------------------------------------------------- resume */

/* Checks the feed of DB from S against W[0..N) and ends at its end. */
static void check_from(ravel_db *db, uint64_t s, const struct written *w,
                       int n)
{
    int i = 0;
    while (i < n && w[i].seq + w[i].count - 1 < s)
        i++;
    ravel_updates *u;
    TU_OK(ravel_updates_since(db, s, 0, &u));
    for (; i < n; i++) {
        int rc = ravel_updates_next(u);
        if (rc != RAVEL_OK)
            fail_msg("from %llu: batch %d (sequence %llu): %s: %s",
                     (unsigned long long)s, i, (unsigned long long)w[i].seq,
                     ravel_errstr(rc), ravel_errmsg());
        if (!written_is(&w[i], ravel_updates_batch(u),
                        ravel_updates_sequence(u)))
            fail_msg("from %llu: batch %d: the feed has sequence %llu, "
                     "written %llu, or other ops", (unsigned long long)s, i,
                     (unsigned long long)ravel_updates_sequence(u),
                     (unsigned long long)w[i].seq);
    }
    assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
    assert_null(ravel_updates_batch(u));
    ravel_updates_free(u);
}

static void test_resume(void **state)
{
    (void)state;
    char *dir = new_dir("resume");
    const char *opts = "wal_size_limit_mb=1024;write_buffer_size=64K";
    ravel_db *db = tu_open_ok(dir, opts);
    enum { N = 160 };
    struct written w[N + 2];
    uint64_t rng = tu_seed() | 1;
    int k = 0;
    ravel_batch *b;
    TU_OK(ravel_batch_new(&b));
    for (int i = 0; i < N; i++) {
        fill_batch(b, &rng, &k);
        written_set(&w[i], write_batch(db, b), b);
        if (i % 40 == 39)
            TU_OK(ravel_flush(db, 0));
        if (i == N / 2) {
            TU_OK(ravel_close(db));
            db = tu_open_ok(dir, opts);
        }
    }
    uint64_t last = tu_prop_u64(db, "ravel.last-sequence");
    for (uint64_t s = 0; s <= last + 1; s++)
        check_from(db, s, w, N);

    /* tailing: at the end, then what is written after, across a switch */
    ravel_updates *u;
    TU_OK(ravel_updates_since(db, last + 1, 0, &u));
    assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
    assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
    for (int i = N; i < N + 2; i++) {
        fill_batch(b, &rng, &k);
        written_set(&w[i], write_batch(db, b), b);
        TU_OK(ravel_updates_next(u));
        assert_true(written_is(&w[i], ravel_updates_batch(u),
                               ravel_updates_sequence(u)));
        assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
        TU_OK(ravel_flush(db, 0)); /* the next one in a new segment */
    }
    ravel_updates_free(u);
    check_from(db, 1, w, N + 2);
    TU_EXPECT_INVALID(ravel_updates_since(db, 1, 0x40, &u));
    TU_EXPECT_INVALID(ravel_updates_since(db, 1, 0, NULL));
    TU_EXPECT_INVALID(ravel_updates_next(NULL));
    TU_OK(ravel_updates_since(db, 1, 0, &u));
    TU_EXPECT_INVALID(ravel_close(db)); /* an iterator is open */
    ravel_updates_free(u);
    TU_OK(ravel_close(db));
    /* ravel_destroy takes archive/ with it */
    TU_OK(ravel_destroy(dir));
    struct stat st;
    assert_int_not_equal(stat(dir, &st), 0);
    for (int i = 0; i < N + 2; i++)
        free(w[i].ops);
    ravel_batch_free(b);
    free(dir);
}

/* ------------------------------------------------------------- recycled */

/* wal_io=direct with recycle_log_file_num and no retention: the segments a
** slow follower holds open are reused under it.  Whatever it reads is what
** was written at that sequence, in order, until RAVEL_EXPIRED stops it
** (or it read everything). */
static void test_recycled(void **state)
{
    (void)state;
    const char *io = tu_wal_io();
    if (!io || strcmp(io, "direct") != 0) {
        printf("note: recycled segments exist only with wal_io=direct: not "
               "run in this variant\n");
        return;
    }
    char *dir = new_dir("recycled");
    ravel_db *db = tu_open_ok(dir, "recycle_log_file_num=4;"
                                   "write_buffer_size=64K");
    enum { N = 600 };
    static struct written w[N];
    uint64_t rng = tu_seed() | 1;
    int k = 0;
    ravel_batch *b;
    TU_OK(ravel_batch_new(&b));
    ravel_updates *u;
    TU_OK(ravel_updates_since(db, 1, 0, &u));
    int read = 0, rc = RAVEL_OK;
    char big[300];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < N; i++) {
        fill_batch(b, &rng, &k);
        TU_OK(ravel_batch_put(b, "pad", 3, big, sizeof big));
        written_set(&w[i], write_batch(db, b), b);
        if (i % 25 == 24)
            TU_OK(ravel_flush(db, 0));
        if (i < 5) { /* the follower starts, then falls behind */
            TU_OK(ravel_updates_next(u));
            assert_true(written_is(&w[read], ravel_updates_batch(u),
                                   ravel_updates_sequence(u)));
            read++;
        }
    }
    while ((rc = ravel_updates_next(u)) == RAVEL_OK) {
        if (read >= N || !written_is(&w[read], ravel_updates_batch(u),
                                     ravel_updates_sequence(u)))
            fail_msg("batch %d from the feed (sequence %llu) is not the one "
                     "written", read,
                     (unsigned long long)ravel_updates_sequence(u));
        read++;
    }
    printf("the follower read %d of %d batches, then: %s\n", read, N,
           rc == RAVEL_EXPIRED ? ravel_errmsg() : ravel_errstr(rc));
    if (rc != RAVEL_EXPIRED && !(rc == RAVEL_NOTFOUND && read == N))
        fail_msg("the follower stopped at batch %d with %s: %s", read,
                 ravel_errstr(rc), ravel_errmsg());
    ravel_updates_free(u);
    TU_OK(ravel_close(db));
    for (int i = 0; i < N; i++)
        free(w[i].ops);
    ravel_batch_free(b);
    free(dir);
}

/* -------------------------------------------------------------- expired */

/* Sets the modification time of every file in DIR/archive to AGO seconds
** back; returns how many. */
static int age_archive(const char *dir, int ago)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/archive", dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    struct timeval tv[2];
    gettimeofday(&tv[0], NULL);
    tv[0].tv_sec -= ago;
    tv[1] = tv[0];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char f[4400];
        snprintf(f, sizeof f, "%s/%s", path, e->d_name);
        assert_int_equal(utimes(f, tv), 0);
        n++;
    }
    closedir(d);
    return n;
}

static void expect_expired(ravel_db *db, uint64_t s, uint64_t oldest)
{
    ravel_updates *u = (ravel_updates *)1;
    TU_EXPECT_RC(RAVEL_EXPIRED, ravel_updates_since(db, s, 0, &u));
    assert_null(u);
    char want[64];
    snprintf(want, sizeof want, "the oldest available is %llu",
             (unsigned long long)oldest);
    if (!strstr(ravel_errmsg(), want))
        fail_msg("expected \"%s\" in: %s", want, ravel_errmsg());
}

/* Writes N one-op batches of VLEN-byte values; the sequence of the
** first. */
static uint64_t put_many(ravel_db *db, int n, size_t vlen)
{
    char *v = malloc(vlen + 1);
    assert_non_null(v);
    memset(v, 'v', vlen);
    v[vlen] = 0;
    uint64_t first = tu_prop_u64(db, "ravel.last-sequence") + 1;
    for (int i = 0; i < n; i++) {
        char k[32];
        snprintf(k, sizeof k, "k%08d", i);
        TU_OK(ravel_put(db, 0, k, strlen(k), v, vlen));
    }
    free(v);
    return first;
}

static void test_expired(void **state)
{
    (void)state;
    ravel_updates *u;
    /* no retention: flushed means gone */
    char *dir = new_dir("expired");
    ravel_db *db = tu_open_ok(dir, NULL);
    put_many(db, 10, 10);
    TU_OK(ravel_flush(db, 0));
    expect_expired(db, 1, 11); /* the only segment left is empty */
    TU_OK(ravel_updates_since(db, 11, 0, &u)); /* what comes next */
    assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
    uint64_t s11 = put_many(db, 1, 10);
    TU_OK(ravel_updates_next(u));
    assert_int_equal(ravel_updates_sequence(u), 11);
    ravel_updates_free(u);
    assert_int_equal(s11, 11);
    expect_expired(db, 1, 11);
    expect_expired(db, 10, 11);
    TU_OK(ravel_updates_since(db, 11, 0, &u));
    TU_OK(ravel_updates_next(u));
    assert_int_equal(ravel_updates_sequence(u), 11);
    ravel_updates_free(u);
    TU_OK(ravel_close(db));
    free(dir);

    /* the size limit: the oldest segments go, the newer ones stay */
    dir = new_dir("sizelimit");
    db = tu_open_ok(dir, "wal_size_limit_mb=1;write_buffer_size=256K");
    uint64_t first = put_many(db, 1, 100);
    for (int round = 0; round < 12; round++) {
        put_many(db, 64, 4000);
        TU_OK(ravel_flush(db, 0));
    }
    uint64_t recent = put_many(db, 1, 10);
    TU_EXPECT_RC(RAVEL_EXPIRED, ravel_updates_since(db, first, 0, &u));
    if (!strstr(ravel_errmsg(), "wal_size_limit_mb"))
        fail_msg("the message names no option: %s", ravel_errmsg());
    /* what the archive kept is still read, up to the newest */
    TU_OK(ravel_updates_since(db, recent - 64, 0, &u));
    uint64_t seen = 0;
    while (ravel_updates_next(u) == RAVEL_OK)
        seen = ravel_updates_sequence(u);
    assert_int_equal(seen, recent);
    ravel_updates_free(u);
    TU_OK(ravel_close(db));
    free(dir);

    /* the age limit, and a follower whose next segment is purged */
    dir = new_dir("ttl");
    db = tu_open_ok(dir, "wal_ttl_seconds=3600");
    put_many(db, 5, 10);
    TU_OK(ravel_flush(db, 0));
    put_many(db, 5, 10);
    TU_OK(ravel_flush(db, 0));
    put_many(db, 1, 10);
    TU_OK(ravel_updates_since(db, 1, 0, &u)); /* archived, not expired */
    TU_OK(ravel_updates_next(u));
    assert_int_equal(ravel_updates_sequence(u), 1);
    assert_true(age_archive(dir, 2 * 3600) >= 2);
    put_many(db, 1, 10);
    TU_OK(ravel_flush(db, 0)); /* purges what is past the age */
    /* U still reads the segment it has open, then finds the next gone */
    int rc;
    while ((rc = ravel_updates_next(u)) == RAVEL_OK)
        assert_true(ravel_updates_sequence(u) <= 5);
    assert_int_equal(rc, RAVEL_EXPIRED);
    /* stopped there: never on past the gap */
    TU_EXPECT_RC(RAVEL_EXPIRED, ravel_updates_next(u));
    TU_EXPECT_RC(RAVEL_EXPIRED, ravel_updates_next(u));
    ravel_updates_free(u);
    TU_EXPECT_RC(RAVEL_EXPIRED, ravel_updates_since(db, 1, 0, &u));
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------------------ txn */

static void test_txn(void **state)
{
    (void)state;
    char *dir = new_dir("txn");
    const char *opts = "wal_size_limit_mb=64";
    ravel_db *db = tu_open_ok(dir, opts);
    ravel_txn *t1, *t2, *t3;
    tu_put(db, 0, "a", "1");
    TU_OK(ravel_txn_begin(db, 0, &t1));
    TU_OK(ravel_txn_put(t1, "x", 1, "X", 1));
    TU_OK(ravel_txn_put(t1, "y", 1, "Y", 1));
    TU_OK(ravel_txn_set_name(t1, "t1"));
    TU_OK(ravel_txn_prepare(t1));
    tu_put(db, 0, "b", "2");
    TU_OK(ravel_txn_commit(t1));
    ravel_txn_free(t1);
    uint64_t t1_end = tu_prop_u64(db, "ravel.last-sequence");
    TU_OK(ravel_txn_begin(db, 0, &t2));
    TU_OK(ravel_txn_put(t2, "z", 1, "Z", 1));
    TU_OK(ravel_txn_set_name(t2, "t2"));
    TU_OK(ravel_txn_prepare(t2));
    TU_OK(ravel_txn_rollback(t2));
    ravel_txn_free(t2);
    TU_OK(ravel_txn_begin(db, 0, &t3));
    TU_OK(ravel_txn_put(t3, "w", 1, "W", 1));
    TU_OK(ravel_txn_set_name(t3, "t3"));
    TU_OK(ravel_txn_prepare(t3));
    ravel_txn_free(t3); /* left prepared */
    TU_OK(ravel_flush(db, 0)); /* spills t3's prepare */
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    TU_OK(ravel_txn_recover(db, "t3", &t3));
    TU_OK(ravel_txn_commit(t3));
    ravel_txn_free(t3);
    uint64_t t3_end = tu_prop_u64(db, "ravel.last-sequence");
    tu_put(db, 0, "c", "3");

    /* the feed: a, b, t1 (x y), t3 (w), c -- never z, never a marker */
    static const char *want[][2] = {{"a", NULL}, {"b", NULL}, {"x", "y"},
                                    {"w", NULL}, {"c", NULL}};
    ravel_updates *u;
    TU_OK(ravel_updates_since(db, 0, 0, &u));
    for (int i = 0; i < 5; i++) {
        int rc = ravel_updates_next(u);
        if (rc)
            fail_msg("batch %d: %s: %s", i, ravel_errstr(rc),
                     ravel_errmsg());
        const ravel_batch *b = ravel_updates_batch(u);
        int ops = want[i][1] ? 2 : 1;
        assert_int_equal(ravel_batch_count(b), ops);
        size_t pos = 0, klen, vlen;
        int op;
        const void *key, *val;
        for (int j = 0; j < ops; j++) {
            TU_OK(ravel_batch_next_op(b, &pos, &op, &key, &klen, &val,
                                      &vlen));
            assert_int_equal(op, RAVEL_OP_PUT);
            assert_int_equal(klen, 1);
            assert_memory_equal(key, want[i][j], 1);
        }
        /* a commit's sequences are the database's: its ops, then the
        ** marker's, which ends it */
        if (i == 2)
            assert_int_equal(ravel_updates_sequence(u) + 2, t1_end);
        if (i == 3)
            assert_int_equal(ravel_updates_sequence(u) + 1, t3_end);
    }
    assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
    ravel_updates_free(u);
    TU_OK(ravel_close(db));
    free(dir);
}

/* --------------------------------------------------------------- ingest */

/* A bulk ingest takes a sequence with no WAL record: a gap in the feed,
** passed over, and a sequence asked for inside it starts at the next
** batch, never RAVEL_EXPIRED. */
static void test_ingest_gap(void **state)
{
    (void)state;
    char *dir = new_dir("ingest");
    char *sst = tu_path("feed-ingest-%d.sst", dirs++);
    ravel_db *db = tu_open_ok(dir, "wal_size_limit_mb=64");
    tu_put(db, 0, "a", "1");
    uint64_t before = tu_prop_u64(db, "ravel.last-sequence");
    ravel_sst_writer *w;
    TU_OK(ravel_sst_writer_open(sst, NULL, &w));
    /* over "a": the ingest gets a sequence above every write */
    TU_OK(ravel_sst_writer_put(w, "a", 1, "A", 1));
    TU_OK(ravel_sst_writer_put(w, "x", 1, "X", 1));
    TU_OK(ravel_sst_writer_finish(w, NULL));
    ravel_sst_writer_free(w);
    const char *paths[] = {sst};
    int rc = ravel_ingest(db, paths, 1, 0);
    if (rc == RAVEL_INVALID && strstr(ravel_errmsg(), "not supported")) {
        /* an ordering mode bulk ingest refuses */
        printf("note: %s\n", ravel_errmsg());
        TU_OK(ravel_close(db));
        free(sst);
        free(dir);
        return;
    }
    TU_OK(rc);
    uint64_t ingested = tu_prop_u64(db, "ravel.last-sequence");
    assert_true(ingested > before);
    tu_put(db, 0, "b", "2");
    tu_expect(db, NULL, "a", "A");
    tu_expect(db, NULL, "x", "X");

    ravel_updates *u;
    TU_OK(ravel_updates_since(db, 1, 0, &u));
    TU_OK(ravel_updates_next(u));
    assert_int_equal(ravel_updates_sequence(u), before);
    TU_OK(ravel_updates_next(u));
    assert_int_equal(ravel_updates_sequence(u), ingested + 1);
    assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
    ravel_updates_free(u);
    TU_OK(ravel_updates_since(db, ingested, 0, &u)); /* inside the gap */
    TU_OK(ravel_updates_next(u));
    assert_int_equal(ravel_updates_sequence(u), ingested + 1);
    ravel_updates_free(u);
    TU_OK(ravel_close(db));
    free(sst);
    free(dir);
}

/* ---------------------------------------------------------- replication */

enum { WRITERS = 8 };

struct repl {
    ravel_db *db;
    int batches;                /* per writer */
    _Atomic int done_batches;   /* all writers' */
    _Atomic int finished;       /* writers finished */
};

struct writer_arg {
    struct repl *r;
    int id;
};

static void *writer_main(void *p)
{
    struct writer_arg *a = p;
    ravel_batch *b;
    if (ravel_batch_new(&b))
        return NULL;
    uint64_t rng = (uint64_t)a->id * 7919 + 17;
    for (int i = 0; i < a->r->batches && !tu_thread_failures(); i++) {
        ravel_batch_clear(b);
        int ops = 1 + (int)(tu_rand(&rng) % 3);
        for (int j = 0; j < ops; j++) {
            char k[32], v[48];
            snprintf(k, sizeof k, "w%d-%04d", a->id,
                     (int)(tu_rand(&rng) % 300));
            if (tu_rand(&rng) % 10 == 0) {
                ravel_batch_delete(b, k, strlen(k));
            } else {
                snprintf(v, sizeof v, "w%d-%d-%d", a->id, i, j);
                ravel_batch_put(b, k, strlen(k), v, strlen(v));
            }
        }
        int rc = ravel_write(a->r->db, 0, b);
        TU_CHECK(rc == RAVEL_OK, "writer %d: %s: %s", a->id,
                 ravel_errstr(rc), ravel_errmsg());
        atomic_fetch_add(&a->r->done_batches, 1);
    }
    ravel_batch_free(b);
    atomic_fetch_add(&a->r->finished, 1);
    return NULL;
}

/* Applies U's batches to REPLICA up to and including sequence UPTO; a
** batch read past it is left in *HELD (applied by the next call first). */
static void follow_until(ravel_updates *u, ravel_db *replica, uint64_t upto,
                         int *held)
{
    uint64_t polls = 0;
    for (;;) {
        if (*held) {
            if (ravel_updates_sequence(u) > upto)
                return;
            TU_OK(ravel_write(replica, 0,
                              (ravel_batch *)ravel_updates_batch(u)));
            *held = 0;
        }
        if (ravel_updates_last_sequence(u) >= upto)
            return;
        int rc = ravel_updates_next(u);
        if (rc == RAVEL_NOTFOUND) {
            if (++polls > 20000000)
                fail_msg("the feed never reached sequence %llu (at %llu)",
                         (unsigned long long)upto,
                         (unsigned long long)ravel_updates_last_sequence(u));
            usleep(50);
            continue;
        }
        if (rc)
            fail_msg("follow: %s: %s", ravel_errstr(rc), ravel_errmsg());
        *held = 1;
    }
}

static void compare(ravel_db *a, const ravel_snapshot *snap, ravel_db *b,
                    const char *when)
{
    size_t la, lb;
    char *sa = tu_scan_all(a, snap, &la);
    char *sb = tu_scan_all(b, NULL, &lb);
    assert_non_null(sa);
    assert_non_null(sb);
    if (la != lb || memcmp(sa, sb, la) != 0)
        fail_msg("%s: the replica differs from the primary (%zu and %zu "
                 "bytes of key=value lines)", when, la, lb);
    free(sa);
    free(sb);
}

static void test_replication(void **state)
{
    (void)state;
    char *dir = new_dir("primary"), *rdir = new_dir("replica");
    struct repl r = {
        .db = tu_open_ok(dir, "write_buffer_size=128K;wal_size_limit_mb=512"),
        /* the longer form: RAVEL_TEST_FEED_BATCHES=20000 */
        .batches = (int)tu_env_u64("RAVEL_TEST_FEED_BATCHES", 1500),
    };
    ravel_db *replica = tu_open_ok(rdir, NULL);
    ravel_updates *u;
    TU_OK(ravel_updates_since(r.db, 1, 0, &u));
    pthread_t th[WRITERS];
    struct writer_arg args[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        args[i] = (struct writer_arg){&r, i};
        assert_int_equal(pthread_create(&th[i], NULL, writer_main, &args[i]),
                         0);
    }
    /* follow while they write, a little at a time, until half is written;
    ** the snapshot is taken then, with the writers still running */
    int held = 0;
    while (atomic_load(&r.done_batches) < WRITERS * r.batches / 2) {
        int rc = ravel_updates_next(u);
        if (rc == RAVEL_NOTFOUND) {
            usleep(50);
            continue;
        }
        if (rc)
            fail_msg("follow: %s: %s", ravel_errstr(rc), ravel_errmsg());
        TU_OK(ravel_write(replica, 0,
                          (ravel_batch *)ravel_updates_batch(u)));
    }
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(r.db, &snap));
    uint64_t at = ravel_snapshot_sequence(snap);
    follow_until(u, replica, at, &held);
    compare(r.db, snap, replica, "at the snapshot");
    printf("compared at sequence %llu with the writers running\n",
           (unsigned long long)at);
    TU_OK(ravel_snapshot_release(r.db, snap));
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    uint64_t end = tu_prop_u64(r.db, "ravel.last-sequence");
    follow_until(u, replica, end, &held);
    assert_int_equal(held, 0);
    assert_int_equal(ravel_updates_next(u), RAVEL_NOTFOUND);
    compare(r.db, NULL, replica, "at the end");
    printf("compared at sequence %llu after %d batches\n",
           (unsigned long long)end, WRITERS * r.batches);
    ravel_updates_free(u);
    TU_OK(ravel_close(replica));
    TU_OK(ravel_close(r.db));
    free(dir);
    free(rdir);
}

/* -------------------------------------------------------- other_process */

struct child_args {
    char dir[512];
    char journal[512];  /* the sync journal of a power-loss round, or "" */
    int sync_every;     /* every Nth write with RAVEL_SYNC (1: all) */
};

/* The child: one-op batches "p<i>" = "<i>" (every sync_every-th with
** RAVEL_SYNC), reporting each synced one; a flush every 100 writes, so
** segments are archived while it runs. */
static int child_writer(const void *arg)
{
    const struct child_args *ca = arg;
    if (ca->journal[0])
        tu_sync_journal_start(ca->journal);
    ravel_db *db = NULL;
    ravel_options *o = NULL;
    int rc = tu_options_try("write_buffer_size=64K;wal_size_limit_mb=64", &o);
    if (!rc)
        rc = ravel_open(ca->dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("open: %s: %s", ravel_errstr(rc), ravel_errmsg());
    crash_child_opened(db);
    for (uint64_t i = 0;; i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "p%llu", (unsigned long long)i);
        snprintf(v, sizeof v, "%llu", (unsigned long long)i);
        int synced = i % (uint64_t)ca->sync_every == 0;
        rc = ravel_put(db, synced ? RAVEL_SYNC : 0, k, strlen(k), v,
                       strlen(v));
        if (rc)
            crash_child_fail("put: %s: %s", ravel_errstr(rc), ravel_errmsg());
        if (synced)
            crash_send(&i, sizeof i);
        if (i % 100 == 99 && (rc = ravel_flush(db, 0)) != RAVEL_OK)
            crash_child_fail("flush: %s: %s", ravel_errstr(rc),
                             ravel_errmsg());
    }
}

struct acked {
    uint64_t n;    /* batches acknowledged */
    uint64_t want; /* how many to wait for (0: 300) */
};

static void on_ack(struct crash_child *c, const void *msg)
{
    struct acked *a = c->ctx;
    uint64_t i;
    memcpy(&i, msg, sizeof i);
    if (i < a->n)
        fail_msg("child acknowledged %llu after %llu",
                 (unsigned long long)i, (unsigned long long)a->n);
    a->n = i + 1; /* every write up to i is durable: i was synced */
}

static int acked_300(struct crash_child *c)
{
    const struct acked *a = c->ctx;
    return a->n >= (a->want ? a->want : 300);
}

/* Reads U on from batch *I to the end of what is written now: each batch
** one put "p<i>" for i = *I, *I + 1, ...; *I is then how many were read. */
static void read_puts_from(ravel_updates *u, uint64_t *i_io)
{
    uint64_t i = *i_io;
    int rc;
    while ((rc = ravel_updates_next(u)) == RAVEL_OK) {
        const ravel_batch *b = ravel_updates_batch(u);
        size_t pos = 0, klen, vlen;
        int op;
        const void *key, *val;
        char want[32];
        snprintf(want, sizeof want, "p%llu", (unsigned long long)i);
        TU_OK(ravel_batch_next_op(b, &pos, &op, &key, &klen, &val, &vlen));
        if (klen != strlen(want) || memcmp(key, want, klen) != 0)
            fail_msg("batch %llu of the feed is not %s",
                     (unsigned long long)i, want);
        i++;
    }
    if (rc != RAVEL_NOTFOUND)
        fail_msg("the feed stopped at batch %llu: %s: %s",
                 (unsigned long long)i, ravel_errstr(rc), ravel_errmsg());
    *i_io = i;
}

/* Reads the feed of U from its start; returns how many batches. */
static uint64_t read_puts(ravel_db *db, ravel_updates *u)
{
    uint64_t i = 0;
    (void)db;
    read_puts_from(u, &i);
    return i;
}

static void test_other_process(void **state)
{
    (void)state;
    char *dir = new_dir("child");
    struct child_args ca = {.sync_every = 1};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    struct acked a = {0};
    struct crash_child c = {.on_msg = on_ack, .msg_size = sizeof(uint64_t),
                            .ctx = &a};
    crash_spawn(&c, "writer", &ca, sizeof ca);
    crash_wait(&c, acked_300, 60000, "300 synced writes");

    /* beside the live writer, where read_only opens allow it */
    ravel_db *ro = NULL;
    int rc = tu_open(dir, "read_only=true", &ro);
    if (rc == RAVEL_LOCKED) {
        printf("note: a read_only open beside the writer is refused "
               "(RAVEL_LOCKED) in this build: the live cross-process feed "
               "is not tested\n");
    } else {
        TU_OK(rc);
        /* tail the live writer (it flushes every 100 writes: segments
        ** leave DIR for archive/ while the feed reads them): each time,
        ** everything acknowledged before the look is there, in order */
        ravel_updates *u;
        TU_OK(ravel_updates_since(ro, 1, 0, &u));
        uint64_t seen = 0;
        for (int look = 0; look < 20; look++) {
            crash_pump(&c, tu_now_ms() + 20);
            uint64_t before = a.n;
            read_puts_from(u, &seen);
            if (seen < before)
                fail_msg("look %d: the feed has %llu batches, %llu were "
                         "acknowledged before it looked", look,
                         (unsigned long long)seen,
                         (unsigned long long)before);
        }
        printf("a read_only handle followed the writer process to batch "
               "%llu\n", (unsigned long long)seen);
        ravel_updates_free(u);
        TU_OK(ravel_close(ro));
    }
    crash_kill(&c);

    /* after the kill: every acknowledged batch, in order */
    TU_OK(tu_open(dir, "read_only=true", &ro));
    ravel_updates *u;
    TU_OK(ravel_updates_since(ro, 1, 0, &u));
    uint64_t seen = read_puts(ro, u);
    printf("the child acknowledged %llu batches; the feed has %llu\n",
           (unsigned long long)a.n, (unsigned long long)seen);
    assert_true(seen >= a.n);
    ravel_updates_free(u);
    TU_OK(ravel_close(ro));
    free(dir);
}

/* ------------------------------------------------------------ powerloss */

/* A follower that starts while the first batches are being written:
** a group's sequences are given out before its WAL write, so a segment
** looked at in between has no record of them yet -- that is no reason to
** call them gone.  Real threads, many rounds; never RAVEL_EXPIRED, and
** every batch seen once. */
#define EARLY_BATCHES 50

static void *early_writer(void *arg)
{
    ravel_db *db = arg;
    char k[32], v[100];
    memset(v, 'x', sizeof v);
    for (int n = 0; n < EARLY_BATCHES; n++) {
        ravel_batch *b = NULL;
        assert_int_equal(ravel_batch_new(&b), RAVEL_OK);
        for (int i = 0; i < 10; i++) {
            snprintf(k, sizeof k, "key%08d", n * 10 + i);
            assert_int_equal(ravel_batch_put(b, k, strlen(k), v, sizeof v),
                             RAVEL_OK);
        }
        assert_int_equal(ravel_write(db, 0, b), RAVEL_OK);
        ravel_batch_free(b);
    }
    return NULL;
}

static void test_follower_starts_early(void **state)
{
    (void)state;
    for (int round = 0; round < 100; round++) {
        char *dir = new_dir("early");
        ravel_db *db = tu_open_ok(dir, NULL);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, early_writer, db), 0);
        usleep((useconds_t)(round % 7) * 40);
        ravel_updates *u = NULL;
        int rc = ravel_updates_since(db, 0, 0, &u);
        if (rc != RAVEL_OK)
            fail_msg("round %d: ravel_updates_since(0) while the first "
                     "batches are written: %s", round, ravel_errmsg());
        assert_int_equal(pthread_join(th, NULL), 0);
        int n = 0;
        while ((rc = ravel_updates_next(u)) == RAVEL_OK)
            n++;
        if (rc != RAVEL_NOTFOUND)
            fail_msg("round %d: %s", round, ravel_errmsg());
        assert_int_equal(n, EARLY_BATCHES);
        ravel_updates_free(u);
        TU_OK(ravel_close(db));
        free(dir);
    }
}

/* A follower reads segment N to the end of its data while N is still
** written and stops there (RV_PAUSE_FEED_END); more batches go into N; a
** flush moves the log to N + 1 and deletes N (no retention), and one
** more batch goes into N + 1; then the follower looks at N + 1, which
** says N ended past what it read.  The
** feed must read the rest of N through the descriptor it holds, not
** report N deleted while it read it (RAVEL_EXPIRED: what CI's Rust
** follower test hit under load). */
struct dwr_follower {
    ravel_updates *u;
    int n, rc;
    char why[512];
};

static void *dwr_follow(void *arg)
{
    struct dwr_follower *f = arg;
    while ((f->rc = ravel_updates_next(f->u)) == RAVEL_OK)
        f->n++;
    snprintf(f->why, sizeof f->why, "%s", ravel_errmsg());
    return NULL;
}

static void test_segment_deleted_while_read(void **state)
{
    (void)state;
    char *dir = new_dir("deleted-while-read");
    ravel_db *db = tu_open_ok(dir, NULL);
    char k[32];
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof k, "a%02d", i);
        TU_OK(ravel_put(db, 0, k, strlen(k), "v", 1));
    }
    struct dwr_follower f = {0};
    TU_OK(ravel_updates_since(db, 1, 0, &f.u));
    rv_pause_arm(RV_PAUSE_FEED_END);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, dwr_follow, &f), 0);
    while (!rv_pause_waiting(RV_PAUSE_FEED_END))
        usleep(1000);
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof k, "b%02d", i);
        TU_OK(ravel_put(db, 0, k, strlen(k), "v", 1));
    }
    TU_OK(ravel_flush(db, 0));
    /* segment 2 says where 1 ended once it holds a record (under
    ** wal_io=direct its header is written with the first one) */
    TU_OK(ravel_put(db, 0, "c", 1, "v", 1));
    char first[4096];
    snprintf(first, sizeof first, "%s/wal-%08d.log", dir, 1);
    if (access(first, F_OK) == 0)
        fail_msg("%s is still there after the flush: the test shows "
                 "nothing", first);
    rv_pause_release(RV_PAUSE_FEED_END);
    assert_int_equal(pthread_join(th, NULL), 0);
    if (f.rc != RAVEL_NOTFOUND)
        fail_msg("after %d batches: %s (%s)", f.n, ravel_errstr(f.rc),
                 f.why);
    assert_int_equal(f.n, 21);
    assert_int_equal(ravel_updates_last_sequence(f.u), 21);
    ravel_updates_free(f.u);
    TU_OK(ravel_close(db));
    free(dir);
}

/* One round: the child writes (every third write synced, flushes every
** 100), is killed, and a power loss of PATTERN takes what no sync
** covered.  After the reopen the feed from 1 is p0, p1, ... with no gap
** and no other batch, reaching past every synced write, and the database
** holds exactly the keys the feed shows. */
static void powerloss_round(int pattern, uint64_t *rng)
{
    char *dir = new_dir("powerloss");
    char *journal = tu_path("feed-journal-%d", dirs++);
    struct child_args ca = {.sync_every = 3};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    snprintf(ca.journal, sizeof ca.journal, "%s", journal);
    /* killed anywhere between two flushes, not right after one */
    struct acked a = {.want = 300 + tu_rand(rng) % 200};
    struct crash_child c = {.on_msg = on_ack, .msg_size = sizeof(uint64_t),
                            .ctx = &a};
    snprintf(c.label, sizeof c.label, "power loss (%s)",
             tu_power_loss_name((enum tu_power_loss_pattern)pattern));
    crash_spawn(&c, "writer", &ca, sizeof ca);
    crash_wait(&c, acked_300, 60000, "300 to 500 synced writes");
    crash_kill(&c);
    tu_power_loss(dir, journal, (enum tu_power_loss_pattern)pattern, rng);

    ravel_db *db = tu_open_ok(dir, "wal_size_limit_mb=64");
    ravel_updates *u;
    TU_OK(ravel_updates_since(db, 1, 0, &u));
    uint64_t seen = read_puts(db, u);
    ravel_updates_free(u);
    if (seen < a.n)
        fail_msg("%s: the feed shows %llu batches, %llu were synced", c.label,
                 (unsigned long long)seen, (unsigned long long)a.n);
    char k[32];
    snprintf(k, sizeof k, "p%llu", (unsigned long long)(seen - 1));
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)(seen - 1));
    tu_expect(db, NULL, k, v);
    snprintf(k, sizeof k, "p%llu", (unsigned long long)seen);
    tu_expect(db, NULL, k, NULL);
    printf("%s: %llu synced, the feed and the database hold %llu\n",
           c.label, (unsigned long long)a.n, (unsigned long long)seen);
    TU_OK(ravel_close(db));
    free(journal);
    free(dir);
}

static void test_powerloss(void **state)
{
    (void)state;
    uint64_t rng = tu_seed() | 1;
    for (int p = 0; p < TU_PL_PATTERNS; p++)
        powerloss_round(p, &rng);
}

int main(int argc, char **argv)
{
    static const struct crash_role roles[] = {
        {"writer", child_writer, sizeof(struct child_args)},
        {NULL, NULL, 0},
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_api),
        cmocka_unit_test(test_resume),
        cmocka_unit_test(test_expired),
        cmocka_unit_test(test_recycled),
        cmocka_unit_test(test_txn),
        cmocka_unit_test(test_ingest_gap),
        cmocka_unit_test(test_replication),
        cmocka_unit_test(test_other_process),
        cmocka_unit_test(test_follower_starts_early),
        cmocka_unit_test(test_segment_deleted_while_read),
        cmocka_unit_test(test_powerloss),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
