/*
** test_flush.c -- memtables flushed to table files: reads through files,
** the manifest across reopens, snapshots across flushes, the memory bound,
** and flushes that fail.
**
** Databases use a small write_buffer_size so that a few thousand writes
** make many flushes.  Every check compares against a model of what was
** acknowledged.
*/
#include "testutil.h"
#include "util/fault.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#define SMALL "write_buffer_size=64K;target_file_size_base=64K"

static int db_counter;

static char *fresh_dir(void)
{
    return tu_path("flush-%d", db_counter++);
}

static void disarm(void)
{
    rv_fault_arm(RV_FAULT_TABLE_WRITE, -1, 0);
    rv_fault_arm(RV_FAULT_TABLE_SYNC, -1, 0);
    rv_fault_arm(RV_FAULT_MANIFEST_WRITE, -1, 0);
    rv_fault_arm(RV_FAULT_MANIFEST_SYNC, -1, 0);
}

static int teardown(void **state)
{
    (void)state;
    disarm();
    return 0;
}

/* WAL segments of DIR that were started: a spare (wal_io=direct makes the
** next segment ahead; its header is all zeros until its first write) is
** not one. */
static int count_started_segments(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "wal-", 4) != 0 || len < 4 ||
            strcmp(e->d_name + len - 4, ".log") != 0)
            continue;
        char path[4096], magic[8] = {0};
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        ssize_t r = pread(fd, magic, sizeof magic, 0);
        close(fd);
        n += r == (ssize_t)sizeof magic && memcmp(magic, "RAVELWAL", 8) == 0;
    }
    closedir(d);
    return n;
}

static void key_of(char *buf, size_t size, int i)
{
    snprintf(buf, size, "key%08d", i);
}

static void value_of(char *buf, size_t size, int i, int version)
{
    snprintf(buf, size, "value-%d-%d-%0120d", i, version, i);
}

static void put_range(ravel_db *db, int from, int to, int version)
{
    char k[32], v[200];
    for (int i = from; i < to; i++) {
        key_of(k, sizeof k, i);
        value_of(v, sizeof v, i, version);
        tu_put(db, 0, k, v);
    }
}

static void expect_range(ravel_db *db, const ravel_snapshot *snap, int from,
                         int to, int version)
{
    char k[32], v[200];
    for (int i = from; i < to; i++) {
        key_of(k, sizeof k, i);
        value_of(v, sizeof v, i, version);
        tu_expect(db, snap, k, v);
    }
}

/* Iterates forward and backward, checking keys FROM..TO-1 of VERSION. */
static void expect_scan(ravel_db *db, const ravel_snapshot *snap, int from,
                        int to, int version)
{
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, snap, &it));
    char k[32], v[200];
    int i = from;
    TU_OK(ravel_iter_seek_to_first(it));
    for (; ravel_iter_valid(it); ravel_iter_next(it), i++) {
        key_of(k, sizeof k, i);
        value_of(v, sizeof v, i, version);
        size_t kl, vl;
        const char *ik = ravel_iter_key(it, &kl);
        const char *iv = ravel_iter_value(it, &vl);
        if (kl != strlen(k) || memcmp(ik, k, kl) != 0)
            fail_msg("forward scan: entry %d is '%.*s', expected '%s'", i,
                     (int)kl, ik, k);
        if (vl != strlen(v) || memcmp(iv, v, vl) != 0)
            fail_msg("forward scan: value of '%s' is wrong", k);
    }
    TU_OK(ravel_iter_status(it));
    assert_int_equal(i, to);
    i = to - 1;
    TU_OK(ravel_iter_seek_to_last(it));
    for (; ravel_iter_valid(it); ravel_iter_prev(it), i--) {
        key_of(k, sizeof k, i);
        size_t kl;
        const char *ik = ravel_iter_key(it, &kl);
        if (kl != strlen(k) || memcmp(ik, k, kl) != 0)
            fail_msg("backward scan: entry %d is '%.*s', expected '%s'", i,
                     (int)kl, ik, k);
    }
    assert_int_equal(i, from - 1);
    /* a seek into the middle lands on the key */
    key_of(k, sizeof k, (from + to) / 2);
    TU_OK(ravel_iter_seek(it, k, strlen(k)));
    assert_true(ravel_iter_valid(it));
    size_t kl;
    const char *ik = ravel_iter_key(it, &kl);
    assert_int_equal(kl, strlen(k));
    assert_memory_equal(ik, k, kl);
    ravel_iter_free(it);
}

/* Writes, flushes, and reads back from files; after reopen too; and the
** WAL segments of the flushed memtables are gone. */
static void test_flush_and_read(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    put_range(db, 0, 3000, 1);
    TU_OK(ravel_flush(db, 0));
    assert_true(tu_prop_u64(db, "ravel.num-files-at-level0") >= 1);
    char *sst = tu_prop(db, "ravel.sstables");
    printf("# %s", sst);
    assert_non_null(strstr(sst, "level 0: "));
    ravel_free(sst);
    expect_range(db, NULL, 0, 3000, 1);
    expect_scan(db, NULL, 0, 3000, 1);
    TU_OK(ravel_verify(db));
    /* everything is in files: only the active memtable's segment stays */
    /* (with wal_io=direct that segment may not be started yet: its header
    ** goes out with its first write) */
    int started = count_started_segments(dir);
    const char *io = tu_wal_io();
    assert_true(started == 1 ||
                (started == 0 && io && strcmp(io, "direct") == 0));
    /* a missing key is not found, through filters and files */
    char *val = NULL;
    size_t vlen = 0;
    assert_int_equal(ravel_get(db, NULL, "nokey", 5, (void **)&val, &vlen),
                     RAVEL_NOTFOUND);
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, SMALL);
    expect_range(db, NULL, 0, 3000, 1);
    expect_scan(db, NULL, 0, 3000, 1);
    /* overwrite half and delete a few: newer memtable over older files */
    put_range(db, 0, 1500, 2);
    TU_OK(ravel_delete(db, 0, "key00000007", 11));
    TU_OK(ravel_flush(db, 0));
    tu_expect(db, NULL, "key00000007", NULL);
    expect_range(db, NULL, 8, 1500, 2);
    expect_range(db, NULL, 1500, 3000, 1);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, SMALL);
    tu_expect(db, NULL, "key00000007", NULL);
    expect_range(db, NULL, 8, 1500, 2);
    expect_range(db, NULL, 1500, 3000, 1);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ravel_get_into copies into the caller's buffer, whole or cut. */
static void test_get_into(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    tu_put(db, 0, "a", "hello");
    TU_OK(ravel_flush(db, 0));
    tu_put(db, 0, "b", "world!");
    char buf[16];
    size_t n = 99;
    TU_OK(ravel_get_into(db, NULL, "a", 1, buf, sizeof buf, &n));
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "hello", 5);
    TU_OK(ravel_get_into(db, NULL, "b", 1, buf, 3, &n));
    assert_int_equal(n, 6);
    assert_memory_equal(buf, "wor", 3);
    TU_OK(ravel_get_into(db, NULL, "a", 1, NULL, 0, &n));
    assert_int_equal(n, 5);
    assert_int_equal(ravel_get_into(db, NULL, "c", 1, buf, sizeof buf, &n),
                     RAVEL_NOTFOUND);
    assert_int_equal(n, 0);
    TU_EXPECT_INVALID(ravel_get_into(db, NULL, "a", 1, NULL, 4, &n));
    TU_EXPECT_INVALID(ravel_get_into(db, NULL, "a", 1, buf, 4, NULL));
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------ concurrent writers */

#define WRITERS 32
#define PER_WRITER 400

struct writer_arg {
    ravel_db *db;
    int id;
};

static void *writer_main(void *p)
{
    struct writer_arg *a = p;
    char k[32], v[200];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < PER_WRITER; i++) {
            int key = a->id * PER_WRITER + i;
            key_of(k, sizeof k, key);
            value_of(v, sizeof v, key, round);
            int rc = ravel_put(a->db, 0, k, strlen(k), v, strlen(v));
            TU_CHECK(rc == RAVEL_OK, "put %s: %s", k, ravel_errmsg());
        }
    }
    return NULL;
}

/* Snapshots taken while the writers run see a state that never changes:
** each is read fully, then read again after more flushes. */
struct snap_reader {
    ravel_db *db;
    _Atomic int *stop;
    int taken;
};

static char *scan_all(ravel_db *db, const ravel_snapshot *snap, size_t *len)
{
    ravel_iter *it;
    if (ravel_iter_new(db, snap, &it) != RAVEL_OK)
        return NULL;
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    for (ravel_iter_seek_to_first(it); out && ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t kl, vl;
        const char *k = ravel_iter_key(it, &kl);
        const char *v = ravel_iter_value(it, &vl);
        while (n + kl + vl + 2 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            if (!out)
                break;
        }
        if (!out)
            break;
        memcpy(out + n, k, kl);
        n += kl;
        out[n++] = '=';
        memcpy(out + n, v, vl);
        n += vl;
        out[n++] = '\n';
    }
    TU_CHECK(ravel_iter_status(it) == RAVEL_OK, "scan: %s", ravel_errmsg());
    ravel_iter_free(it);
    *len = n;
    return out;
}

static void *snap_reader_main(void *p)
{
    struct snap_reader *r = p;
    while (!atomic_load(r->stop)) {
        ravel_snapshot *s;
        if (ravel_snapshot_acquire(r->db, &s) != RAVEL_OK) {
            tu_thread_fail("snapshot: %s", ravel_errmsg());
            return NULL;
        }
        size_t l1, l2;
        char *a = scan_all(r->db, s, &l1);
        int frc = ravel_flush(r->db, RAVEL_FLUSH_NO_WAIT);
        TU_CHECK(frc == RAVEL_OK, "ravel_flush: %s", ravel_errmsg());
        char *b = scan_all(r->db, s, &l2);
        TU_CHECK(a && b && l1 == l2 && memcmp(a, b, l1) == 0,
                 "a snapshot read twice, across flushes, changed (%zu then "
                 "%zu bytes)", l1, l2);
        free(a);
        free(b);
        ravel_snapshot_release(r->db, s);
        r->taken++;
    }
    return NULL;
}

static void test_concurrent_writers_with_flushes(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    ravel_snapshot *before;
    put_range(db, 0, WRITERS * PER_WRITER, 9); /* version 9: before */
    TU_OK(ravel_snapshot_acquire(db, &before));
    size_t before_len;
    char *before_scan = scan_all(db, before, &before_len);

    pthread_t th[WRITERS], rd;
    struct writer_arg args[WRITERS];
    _Atomic int stop = 0;
    struct snap_reader reader = {.db = db, .stop = &stop};
    pthread_create(&rd, NULL, snap_reader_main, &reader);
    for (int i = 0; i < WRITERS; i++) {
        args[i].db = db;
        args[i].id = i;
        pthread_create(&th[i], NULL, writer_main, &args[i]);
    }
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    atomic_store(&stop, 1);
    pthread_join(rd, NULL);
    tu_assert_no_thread_failures();
    printf("# %d snapshots re-read across flushes\n", reader.taken);
    /* Several flushes ran (counted by ravel.stats: compactions may have
    ** moved their files out of level 0 already). */
    char *stats = NULL;
    TU_OK(ravel_property(db, "ravel.stats", &stats));
    const char *f = strstr(stats, "flush: ");
    unsigned long long flushes = 0;
    assert_non_null(f);
    assert_int_equal(sscanf(f, "flush: %llu flushes", &flushes), 1);
    ravel_free(stats);
    assert_true(flushes > 2);

    expect_range(db, NULL, 0, WRITERS * PER_WRITER, 1);
    expect_scan(db, NULL, 0, WRITERS * PER_WRITER, 1);
    /* the snapshot taken before still sees version 9, exactly */
    expect_range(db, before, 0, WRITERS * PER_WRITER, 9);
    size_t after_len;
    TU_OK(ravel_flush(db, 0));
    char *after_scan = scan_all(db, before, &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before_scan, after_scan, before_len);
    free(before_scan);
    free(after_scan);
    TU_OK(ravel_snapshot_release(db, before));
    TU_OK(ravel_close(db));

    db = tu_open_ok(dir, SMALL);
    expect_range(db, NULL, 0, WRITERS * PER_WRITER, 1);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------ memory bound */

/* Loading ten times write_buffer_size keeps the memtables within
** max_write_buffer_number of them (writers wait for flushes). */
static void test_memtable_memory_bound(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    const uint64_t wbs = 256 * 1024;
    ravel_db *db = tu_open_ok(dir, "write_buffer_size=256K;"
                              "max_write_buffer_number=2;"
                              "disable_auto_compactions=true");
    char k[32], v[1100];
    memset(v, 'v', sizeof v - 1);
    v[sizeof v - 1] = '\0';
    uint64_t max_seen = 0;
    int n = (int)(10 * wbs / 1100) + 1;
    for (int i = 0; i < n; i++) {
        key_of(k, sizeof k, i);
        tu_put(db, 0, k, v);
        uint64_t now = tu_prop_u64(db, "ravel.cur-size-all-mem-tables");
        if (now > max_seen)
            max_seen = now;
    }
    printf("# memtables peaked at %" PRIu64 " bytes (bound %" PRIu64 ")\n",
           max_seen, 2 * wbs);
    /* A memtable switches once it has reached the size, so the active one
    ** may pass it by one write (plus its arena block). */
    assert_true(max_seen <= 2 * wbs + 2 * 1100 + 64 * 1024);
    assert_true(tu_prop_u64(db, "ravel.num-files-at-level0") >= 5);
    char *stats = tu_prop(db, "ravel.stats");
    assert_non_null(strstr(stats, "flush: "));
    ravel_free(stats);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------------ faults */

static void run_flush_fault(enum rv_fault_point point)
{
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    put_range(db, 0, 200, 1);
    TU_OK(ravel_flush(db, 0));
    put_range(db, 200, 400, 1);
    rv_fault_arm(point, 0, EIO);
    int rc = ravel_flush(db, 0);
    disarm();
    if (rc == RAVEL_OK)
        fail_msg("ravel_flush returned RAVEL_OK although the flush failed");
    printf("# ravel_flush: %s: %s\n", ravel_errstr(rc), ravel_errmsg());
    char *why = tu_prop(db, "ravel.read-only-reason");
    assert_non_null(strstr(why, "flush"));
    ravel_free(why);
    assert_true(tu_prop_u64(db, "ravel.background-errors") >= 1);
    /* writes are refused, reads still see everything */
    assert_int_equal(ravel_put(db, 0, "x", 1, "y", 1), RAVEL_READONLY);
    expect_range(db, NULL, 0, 400, 1);
    ravel_close(db);
    /* nothing acknowledged was lost */
    db = tu_open_ok(dir, SMALL);
    expect_range(db, NULL, 0, 400, 1);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_flush(db, 0));
    expect_range(db, NULL, 0, 400, 1);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_table_write_fault(void **state)
{
    (void)state;
    run_flush_fault(RV_FAULT_TABLE_WRITE);
}

static void test_table_sync_fault(void **state)
{
    (void)state;
    run_flush_fault(RV_FAULT_TABLE_SYNC);
}

static void test_manifest_write_fault(void **state)
{
    (void)state;
    run_flush_fault(RV_FAULT_MANIFEST_WRITE);
}

static void test_manifest_sync_fault(void **state)
{
    (void)state;
    run_flush_fault(RV_FAULT_MANIFEST_SYNC);
}

/* ------------------------------------------------------------- API */

static void test_flush_api(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    TU_EXPECT_INVALID(ravel_flush(db, 0x80));
    TU_EXPECT_INVALID(ravel_flush(NULL, 0));
    /* an empty memtable makes no file */
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(tu_prop_u64(db, "ravel.num-files-at-level0"), 0);
    tu_put(db, 0, "k", "v");
    TU_OK(ravel_flush(db, RAVEL_FLUSH_NO_WAIT));
    TU_OK(ravel_flush(db, 0));
    assert_int_equal(tu_prop_u64(db, "ravel.num-files-at-level0"), 1);
    assert_int_equal(tu_prop_u64(db, "ravel.estimate-num-keys"), 1);
    TU_OK(ravel_close(db));
    TU_EXPECT_INVALID(ravel_verify(NULL));

    db = tu_open_ok(dir, "read_only=true");
    tu_expect(db, NULL, "k", "v");
    TU_EXPECT_RC(RAVEL_READONLY, ravel_flush(db, 0));
    TU_OK(ravel_close(db));
    free(dir);
}

/* A flush keeps exactly the versions snapshots can see: each snapshot
** reads its own value from the file, and the versions between them that
** nobody can see are dropped (counted in ravel.stats). */
static void test_flush_keeps_snapshot_versions(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    ravel_snapshot *s[3];
    const char *seen[3] = {"v1", "v3", NULL};
    tu_put(db, 0, "k", "v0");
    tu_put(db, 0, "k", "v1");          /* hides v0 from everyone */
    TU_OK(ravel_snapshot_acquire(db, &s[0]));
    tu_put(db, 0, "k", "v2");
    tu_put(db, 0, "k", "v3");          /* hides v2 */
    TU_OK(ravel_snapshot_acquire(db, &s[1]));
    TU_OK(ravel_delete(db, 0, "k", 1));
    TU_OK(ravel_snapshot_acquire(db, &s[2]));
    tu_put(db, 0, "k", "v4");
    tu_put(db, 0, "k", "v5");          /* hides v4 */
    TU_OK(ravel_flush(db, 0));
    for (int i = 0; i < 3; i++)
        tu_expect(db, s[i], "k", seen[i]);
    tu_expect(db, NULL, "k", "v5");
    char *stats = tu_prop(db, "ravel.stats");
    /* v0, v2 and v4 were dropped; v1, v3, the delete and v5 kept */
    if (!strstr(stats, "4 entries written, 3 versions dropped"))
        fail_msg("expected 4 versions kept and 3 dropped:\n%s", stats);
    ravel_free(stats);
    for (int i = 0; i < 3; i++)
        TU_OK(ravel_snapshot_release(db, s[i]));
    TU_OK(ravel_close(db));
    free(dir);
}

/* More table files than max_open_files: reads and iterators still see
** everything (tables beyond the limit are opened per use, not pinned). */
static void test_more_files_than_max_open_files(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    const char *opts = "write_buffer_size=16K;target_file_size_base=64K;"
                       "max_open_files=16;disable_auto_compactions=true";
    ravel_db *db = tu_open_ok(dir, opts);
    put_range(db, 0, 4000, 1);
    TU_OK(ravel_flush(db, 0));
    uint64_t files = tu_prop_u64(db, "ravel.num-files-at-level0");
    printf("# %" PRIu64 " files, max_open_files=16\n", files);
    assert_true(files > 20);
    expect_range(db, NULL, 0, 4000, 1);
    expect_scan(db, NULL, 0, 4000, 1);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    expect_range(db, NULL, 0, 4000, 1);
    TU_OK(ravel_close(db));
    free(dir);
}

/* One block cache shared by two databases: both fill it, both report its
** usage, and it outlives the caller's handle while they use it. */
static void test_shared_block_cache(void **state)
{
    (void)state;
    ravel_cache *cache;
    TU_OK(ravel_cache_new(8 << 20, &cache));
    ravel_db *db[2];
    char *dirs[2];
    for (int i = 0; i < 2; i++) {
        dirs[i] = fresh_dir();
        /* no compaction: its reads and deletions would move the usage */
        ravel_options *o = tu_options(SMALL ";disable_auto_compactions=true");
        TU_OK(ravel_options_set_cache(o, cache));
        TU_OK(ravel_open(dirs[i], o, &db[i]));
        ravel_options_free(o);
        put_range(db[i], 0, 1000, i);
        TU_OK(ravel_flush(db[i], 0));
    }
    ravel_cache_free(cache); /* the databases keep theirs */
    expect_range(db[0], NULL, 0, 1000, 0);
    uint64_t one = tu_prop_u64(db[0], "ravel.block-cache-usage");
    expect_range(db[1], NULL, 0, 1000, 1);
    uint64_t both = tu_prop_u64(db[1], "ravel.block-cache-usage");
    printf("# shared cache: %" PRIu64 " bytes after one db's reads, %"
           PRIu64 " after both\n", one, both);
    assert_true(one > 0);
    assert_true(both > one);
    assert_int_equal(tu_prop_u64(db[0], "ravel.block-cache-usage"),
                     tu_prop_u64(db[1], "ravel.block-cache-usage"));
    for (int i = 0; i < 2; i++) {
        TU_OK(ravel_close(db[i]));
        free(dirs[i]);
    }
}

/* Each compression this build has: flushed files are smaller than without,
** and read back whole after a reopen; one it lacks is refused. */
static uint64_t table_bytes(ravel_db *db)
{
    char *stats = tu_prop(db, "ravel.stats");
    const char *line = strstr(stats, "\ntables: ");
    unsigned long long files = 0, bytes = 0;
    assert_non_null(line);
    assert_int_equal(sscanf(line, "\ntables: %llu files, %llu bytes", &files,
                            &bytes), 2);
    ravel_free(stats);
    return bytes;
}

static void test_compression(void **state)
{
    (void)state;
    static const char *const kinds[] = {"none", "lz4", "zstd"};
    uint64_t plain = 0;
    for (int k = 0; k < 3; k++) {
        ravel_options *o;
        TU_OK(ravel_options_new(&o));
        int rc = ravel_options_set(o, "compression", kinds[k]);
        ravel_options_free(o);
        if (rc != RAVEL_OK) {
            /* a build without it says so */
            assert_int_equal(rc, RAVEL_INVALID);
            assert_non_null(strstr(ravel_errmsg(), "not available"));
            printf("# compression=%s: not in this build\n", kinds[k]);
            continue;
        }
        char *dir = fresh_dir();
        char opts[128];
        snprintf(opts, sizeof opts, SMALL ";compression=%s", kinds[k]);
        ravel_db *db = tu_open_ok(dir, opts);
        put_range(db, 0, 3000, 1); /* values are mostly zero digits */
        TU_OK(ravel_flush(db, 0));
        uint64_t bytes = table_bytes(db);
        printf("# compression=%s: %" PRIu64 " bytes of tables\n", kinds[k],
               bytes);
        if (k == 0)
            plain = bytes;
        else
            assert_true(bytes < plain / 2);
        TU_OK(ravel_close(db));
        db = tu_open_ok(dir, opts);
        expect_range(db, NULL, 0, 3000, 1);
        expect_scan(db, NULL, 0, 3000, 1);
        TU_OK(ravel_verify(db));
        TU_OK(ravel_close(db));
        free(dir);
    }
}

/* point_in_time drops every segment from the manifest's log number on
** (the first one's header is damaged): the log then starts again at that
** number, so the next open finds no hole. */
static void test_point_in_time_after_flush(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SMALL);
    put_range(db, 0, 2000, 1);
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, SMALL ";avoid_flush_during_shutdown=true");
    tu_put(db, 0, "late", "x");
    TU_OK(ravel_close(db));
    /* damage the header of the newest segments (the log's first ones) */
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int damaged = 0;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "wal-", 4) != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        fputs("XXXXXXXX", f);
        fclose(f);
        damaged++;
    }
    closedir(d);
    assert_true(damaged >= 1);
    db = tu_open_ok(dir, SMALL ";wal_recovery_mode=point_in_time");
    expect_range(db, NULL, 0, 2000, 1);
    tu_expect(db, NULL, "late", NULL); /* its segment was dropped */
    tu_put(db, RAVEL_SYNC, "after", "y");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, SMALL);
    expect_range(db, NULL, 0, 2000, 1);
    tu_expect(db, NULL, "after", "y");
    TU_OK(ravel_close(db));
    free(dir);
}

/* Close flushes a large memtable (so the next open replays nothing),
** unless avoid_flush_during_shutdown. */
static void run_close_flush(const char *extra, int expect_files)
{
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, extra);
    put_range(db, 0, 12000, 1); /* about 2 MiB: over the 1 MiB bar */
    assert_int_equal(tu_prop_u64(db, "ravel.num-files-at-level0"), 0);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, extra);
    uint64_t files = tu_prop_u64(db, "ravel.num-files-at-level0");
    uint64_t mem = tu_prop_u64(db, "ravel.cur-size-all-mem-tables");
    printf("# %s: %" PRIu64 " files, %" PRIu64 " memtable bytes after "
           "reopen\n", extra, files, mem);
    if (expect_files)
        assert_true(files >= 1 && mem < 1024 * 1024);
    else
        assert_true(files == 0 && mem >= 1024 * 1024);
    expect_range(db, NULL, 0, 12000, 1);
    TU_OK(ravel_close(db));
    free(dir);
}

static void test_close_flushes(void **state)
{
    (void)state;
    /* RAVEL_NO_WAL writes survive a clean close, however few */
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, RAVEL_NO_WAL, "nowal", "kept");
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, "nowal", "kept");
    TU_OK(ravel_close(db));
    free(dir);

    run_close_flush("avoid_flush_during_shutdown=false", 1);
    /* recovered data is flushed at open only when it is a quarter of
    ** write_buffer_size: 64M here, so it stays in the memtable */
    run_close_flush("avoid_flush_during_shutdown=true", 0);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_flush_and_read, teardown),
        cmocka_unit_test_teardown(test_get_into, teardown),
        cmocka_unit_test_teardown(test_flush_api, teardown),
        cmocka_unit_test_teardown(test_close_flushes, teardown),
        cmocka_unit_test_teardown(test_point_in_time_after_flush, teardown),
        cmocka_unit_test_teardown(test_more_files_than_max_open_files,
                                  teardown),
        cmocka_unit_test_teardown(test_shared_block_cache, teardown),
        cmocka_unit_test_teardown(test_compression, teardown),
        cmocka_unit_test_teardown(test_flush_keeps_snapshot_versions,
                                  teardown),
        cmocka_unit_test_teardown(test_concurrent_writers_with_flushes,
                                  teardown),
        cmocka_unit_test_teardown(test_memtable_memory_bound, teardown),
        cmocka_unit_test_teardown(test_table_write_fault, teardown),
        cmocka_unit_test_teardown(test_table_sync_fault, teardown),
        cmocka_unit_test_teardown(test_manifest_write_fault, teardown),
        cmocka_unit_test_teardown(test_manifest_sync_fault, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
