/*
** test_ingest.c -- bulk ingest: ravel_sst_writer and ravel_ingest.
**
**   writer_order        the writer refuses an out-of-order or duplicate key
**                       (naming the positions), an empty file, an existing
**                       path; its file is removed unless finished
**   into_empty          an ingest into an empty database lands at the last
**                       level; puts and deletes read back; sources kept
**   overrides           an ingest overrides data in memtables and at every
**                       level; a snapshot taken before sees none of it; a
**                       write after it overrides it; placement per level
**   refusals            overlapping, missing, damaged, empty, unsorted (a
**                       crafted file), foreign files: the right code, a
**                       message naming the file, nothing ingested, no file
**                       left in the database directory
**   move_and_devshm     RAVEL_INGEST_MOVE removes the sources; sources on
**                       another file system (/dev/shm) work
**   atomic_visibility   reader threads (snapshots, iterators, gets) never
**                       see part of an ingest of three files, through
**                       memtable flushes and placement at every level
**   concurrent_writes   writers to the same keys while ingests run: a
**                       write after the ingest wins, the ingest wins over
**                       writes before it, gets, iterators and snapshots
**                       agree
**   kill9 / powerloss   a child ingesting in a loop, killed at random and
**                       at pause points (a file copied, before the edit,
**                       after the edit), with and without a simulated
**                       power loss (powerloss.h): each ingest is there
**                       whole or not at all, every acknowledged one is
**                       there, no table file is left that the manifest
**                       does not name.  RAVEL_TEST_INGEST_CRASH_ROUNDS
**                       (default 12) and RAVEL_TEST_INGEST_POWERLOSS_ROUNDS
**                       (default 6).
*/
#include "crash_harness.h"
#include "powerloss.h"
#include "util/fault.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SMALL "write_buffer_size=64K;target_file_size_base=64K;" \
              "max_bytes_for_level_base=256K;" \
              "level0_file_num_compaction_trigger=2"

/* ------------------------------------------------------------ helpers */

static void key_of(char *buf, size_t n, const char *prefix, int i)
{
    snprintf(buf, n, "%s%06d", prefix, i);
}

static void val_of(char *buf, size_t n, uint64_t gen, int i)
{
    snprintf(buf, n, "g%010" PRIu64 "-%06d-%060d", gen, i, i);
}

/* The generation a value of val_of carries. */
static uint64_t gen_of(const char *v, size_t len)
{
    if (len < 11 || v[0] != 'g')
        return UINT64_MAX;
    char d[11];
    memcpy(d, v + 1, 10);
    d[10] = 0;
    return strtoull(d, NULL, 10);
}

/* Writes PATH: keys PREFIX FROM .. TO-1 (every STEP) with values of GEN;
** every DEL_EVERY-th one (0: none) a delete.  Returns the keys added. */
static uint64_t write_sst(const char *path, const char *prefix, int from,
                          int to, int step, uint64_t gen, int del_every)
{
    ravel_sst_writer *w = NULL;
    TU_OK(ravel_sst_writer_open(path, NULL, &w));
    char k[64], v[128];
    for (int i = from; i < to; i += step) {
        key_of(k, sizeof k, prefix, i);
        if (del_every && i % del_every == 0) {
            TU_OK(ravel_sst_writer_delete(w, k, strlen(k)));
        } else {
            val_of(v, sizeof v, gen, i);
            TU_OK(ravel_sst_writer_put(w, k, strlen(k), v, strlen(v)));
        }
    }
    uint64_t n = 0;
    TU_OK(ravel_sst_writer_finish(w, &n));
    ravel_sst_writer_free(w);
    return n;
}

static int count_sst_in(const char *dir)
{
    uint64_t *nums = NULL;
    int n = tu_dir_sst_numbers(dir, &nums);
    free(nums);
    return n;
}

/* The directory holds exactly the table files the database names. */
static void check_directory(ravel_db *db, const char *dir)
{
    struct tu_sst *named = NULL;
    int n_named = tu_sstables(db, &named);
    for (int j = 0; j < n_named; j++)
        if (!tu_sst_exists(dir, named[j].number))
            fail_msg("the database names %06" PRIu64 ".sst, not in %s",
                     named[j].number, dir);
    int n_disk = count_sst_in(dir);
    if (n_disk != n_named)
        fail_msg("%s holds %d table files, the database names %d", dir,
                 n_disk, n_named);
    free(named);
}

/* The number of the table file of DIR whose bytes are those of PATH (an
** ingest that placed it as it is), or 0. */
static uint64_t same_bytes_in(const char *dir, const char *path)
{
    char *want, *have;
    size_t wl, hl;
    assert_int_equal(tu_file_read(path, &want, &wl), 0);
    uint64_t *nums = NULL, found = 0;
    int n = tu_dir_sst_numbers(dir, &nums);
    for (int i = 0; i < n && !found; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%06" PRIu64 ".sst", dir, nums[i]);
        if (tu_file_read(p, &have, &hl) == 0) {
            if (hl == wl && memcmp(have, want, wl) == 0)
                found = nums[i];
            free(have);
        }
    }
    free(nums);
    free(want);
    return found;
}

/* The number of the table file of DIR that is the inode INO, or 0. */
static uint64_t same_inode_in(const char *dir, ino_t ino)
{
    uint64_t *nums = NULL, found = 0;
    int n = tu_dir_sst_numbers(dir, &nums);
    for (int i = 0; i < n && !found; i++) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%06" PRIu64 ".sst", dir, nums[i]);
        if (stat(p, &st) == 0 && st.st_ino == ino)
            found = nums[i];
    }
    free(nums);
    return found;
}

static char *mkdir_fresh(const char *name)
{
    char *p = tu_path("%s", name);
    tu_rm_rf(p);
    if (mkdir(p, 0755) != 0)
        fail_msg("mkdir %s: %s", p, strerror(errno));
    return p;
}

static char *src_path(const char *dir, const char *name)
{
    char *p = malloc(PATH_MAX);
    assert_non_null(p);
    if (snprintf(p, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
        fail_msg("path too long: %s/%s", dir, name);
    return p;
}

/* ------------------------------------------------------- writer_order */

static void test_writer_order(void **state)
{
    (void)state;
    char *dir = mkdir_fresh("ingest-writer");
    char *path = src_path(dir, "a.sst");
    ravel_sst_writer *w = NULL;
    TU_OK(ravel_sst_writer_open(path, NULL, &w));
    TU_OK(ravel_sst_writer_put(w, "b", 1, "1", 1));
    TU_OK(ravel_sst_writer_put(w, "c", 1, "2", 1));
    TU_EXPECT_INVALID(ravel_sst_writer_put(w, "c", 1, "3", 1));
    assert_non_null(strstr(ravel_errmsg(), "position 2"));
    assert_non_null(strstr(ravel_errmsg(), "equal to"));
    TU_EXPECT_INVALID(ravel_sst_writer_delete(w, "a", 1));
    assert_non_null(strstr(ravel_errmsg(), "less than"));
    assert_non_null(strstr(ravel_errmsg(), "position 1"));
    TU_EXPECT_INVALID(ravel_sst_writer_put(w, "", 0, "x", 1));
    /* the refusals added nothing: the writer goes on */
    TU_OK(ravel_sst_writer_delete(w, "d", 1));
    uint64_t n = 0;
    TU_OK(ravel_sst_writer_finish(w, &n));
    assert_int_equal(n, 3);
    TU_EXPECT_INVALID(ravel_sst_writer_put(w, "e", 1, "x", 1));
    ravel_sst_writer_free(w);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);

    /* an existing path is never overwritten */
    w = NULL;
    TU_EXPECT_INVALID(ravel_sst_writer_open(path, NULL, &w));
    assert_null(w);
    assert_non_null(strstr(ravel_errmsg(), "exists"));

    /* an empty file is refused and removed; an unfinished one removed */
    char *empty = src_path(dir, "empty.sst");
    TU_OK(ravel_sst_writer_open(empty, NULL, &w));
    TU_EXPECT_INVALID(ravel_sst_writer_finish(w, NULL));
    ravel_sst_writer_free(w);
    assert_int_not_equal(stat(empty, &st), 0);
    TU_OK(ravel_sst_writer_open(empty, NULL, &w));
    TU_OK(ravel_sst_writer_put(w, "a", 1, "1", 1));
    ravel_sst_writer_free(w);
    assert_int_not_equal(stat(empty, &st), 0);
    free(empty);
    free(path);
    free(dir);
}

/* --------------------------------------------------------- into_empty */

static void test_into_empty(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-empty-src");
    char *dir = tu_path("ingest-empty");
    tu_rm_rf(dir);
    char *a = src_path(src, "a.sst"), *b = src_path(src, "b.sst");
    write_sst(a, "k", 0, 1000, 1, 7, 10);
    write_sst(b, "m", 0, 500, 1, 7, 0);
    ravel_db *db = tu_open_ok(dir, NULL);
    const char *paths[] = {b, a}; /* any order */
    TU_OK(ravel_ingest(db, paths, 2, 0));
    char k[64], v[128];
    for (int i = 0; i < 1000; i++) {
        key_of(k, sizeof k, "k", i);
        val_of(v, sizeof v, 7, i);
        tu_expect(db, NULL, k, i % 10 == 0 ? NULL : v);
    }
    key_of(k, sizeof k, "m", 499);
    val_of(v, sizeof v, 7, 499);
    tu_expect(db, NULL, k, v);
    /* an empty database: both at the last level */
    assert_int_equal(tu_files_at_level(db, 6), 2);
    assert_int_equal(tu_files_at_level(db, 0), 0);
    struct stat st;
    assert_int_equal(stat(a, &st), 0); /* copied, kept */
    /* nothing overlapped them and no snapshot was live: placed as they
    ** are, byte for byte */
    assert_true(same_bytes_in(dir, a) != 0);
    assert_true(same_bytes_in(dir, b) != 0);
    check_directory(db, dir);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, k, v);
    check_directory(db, dir);
    TU_OK(ravel_close(db));
    free(a);
    free(b);
    free(src);
    free(dir);
}

/* ---------------------------------------------------------- overrides */

static void test_overrides(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-over-src");
    char *dir = tu_path("ingest-over");
    tu_rm_rf(dir);
    ravel_db *db = tu_open_ok(dir, SMALL ";disable_auto_compactions=true");
    char k[64], v[128];
    /* "k" keys 0..2999 at generation 1, compacted to the bottom; then
    ** 1000..1999 at generation 2 in level 0; 2000..2099 at 3 in the
    ** memtable */
    for (int i = 0; i < 3000; i++) {
        key_of(k, sizeof k, "k", i);
        val_of(v, sizeof v, 1, i);
        tu_put(db, 0, k, v);
    }
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    for (int i = 1000; i < 2000; i++) {
        key_of(k, sizeof k, "k", i);
        val_of(v, sizeof v, 2, i);
        tu_put(db, 0, k, v);
    }
    TU_OK(ravel_flush(db, 0));
    for (int i = 2000; i < 2100; i++) {
        key_of(k, sizeof k, "k", i);
        val_of(v, sizeof v, 3, i);
        tu_put(db, 0, k, v);
    }
    uint64_t l0_before = tu_files_at_level(db, 0);
    assert_true(l0_before > 0);
    ravel_snapshot *snap = NULL;
    TU_OK(ravel_snapshot_acquire(db, &snap));

    /* x: overlaps the memtable (2050..2060); y: only the bottom level
    ** (100..199, every other key deleted); z: nothing (new keys "z") */
    char *x = src_path(src, "x.sst"), *y = src_path(src, "y.sst");
    char *z = src_path(src, "z.sst");
    write_sst(x, "k", 2050, 2061, 1, 9, 0);
    write_sst(y, "k", 100, 200, 1, 9, 2);
    write_sst(z, "z", 0, 100, 1, 9, 0);
    const char *paths[] = {x, y, z};
    TU_OK(ravel_ingest(db, paths, 3, 0));

    for (int i = 0; i < 3000; i++) {
        key_of(k, sizeof k, "k", i);
        uint64_t g = i >= 2050 && i <= 2060 ? 9
                   : i >= 100 && i < 200 ? 9
                   : i >= 2000 && i < 2100 ? 3
                   : i >= 1000 && i < 2000 ? 2 : 1;
        uint64_t old = i >= 2000 && i < 2100 ? 3
                     : i >= 1000 && i < 2000 ? 2 : 1;
        val_of(v, sizeof v, g, i);
        int deleted = g == 9 && i >= 100 && i < 200 && i % 2 == 0;
        tu_expect(db, NULL, k, deleted ? NULL : v);
        val_of(v, sizeof v, old, i);
        tu_expect(db, snap, k, v); /* the snapshot sees none of it */
    }
    key_of(k, sizeof k, "z", 5);
    tu_expect(db, snap, k, NULL);
    val_of(v, sizeof v, 9, 5);
    tu_expect(db, NULL, k, v);
    /* the memtable was flushed first; x went to level 0 (it overlaps a
    ** level-0 file: 2000..2099 flushed), z to the last level */
    assert_true(tu_files_at_level(db, 0) >= l0_before + 2);
    /* a write after the ingest overrides it */
    key_of(k, sizeof k, "k", 2055);
    val_of(v, sizeof v, 10, 2055);
    tu_put(db, 0, k, v);
    tu_expect(db, NULL, k, v);
    TU_OK(ravel_snapshot_release(db, snap));

    /* levels: a file overlapping only level 6 goes to level 5 */
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    uint64_t l5 = tu_files_at_level(db, 5);
    char *w5 = src_path(src, "w5.sst");
    write_sst(w5, "k", 500, 510, 1, 11, 0);
    const char *p5[] = {w5};
    TU_OK(ravel_ingest(db, p5, 1, 0));
    assert_int_equal(tu_files_at_level(db, 5), l5 + 1);
    key_of(k, sizeof k, "k", 505);
    val_of(v, sizeof v, 11, 505);
    tu_expect(db, NULL, k, v);
    check_directory(db, dir);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, SMALL);
    tu_expect(db, NULL, k, v);
    key_of(k, sizeof k, "k", 2055);
    val_of(v, sizeof v, 10, 2055);
    tu_expect(db, NULL, k, v);
    tu_wait_background_idle(db);
    tu_expect(db, NULL, k, v);
    key_of(k, sizeof k, "k", 150);
    tu_expect(db, NULL, k, NULL);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    free(w5);
    free(x);
    free(y);
    free(z);
    free(src);
    free(dir);
}

/* --------------------------------------------------------- every_level */

#define EL_KEYS 20000
#define EL_OPTS "write_buffer_size=64K;target_file_size_base=64K;" \
                "max_bytes_for_level_base=64K;" \
                "max_bytes_for_level_multiplier=2;" \
                "level0_file_num_compaction_trigger=2"

/* The generation key I holds in the model after the test's ingests. */
static uint64_t el_gen(int i, int ingested)
{
    if (!ingested)
        return i < EL_KEYS ? 1 : 0;
    if (i >= 100 && i < 200)
        return 2;
    if (i >= 5000 && i < 5100)
        return i % 3 == 0 ? 0 : 2; /* deleted */
    if (i >= EL_KEYS && i < EL_KEYS + 100)
        return 2;
    return i < EL_KEYS ? 1 : 0;
}

/* Checks every key against the model; on the first wrong one, prints
** PHASE and the database's table files (ravel.sstables) before failing,
** so that a failure says where the key should have been. */
static void el_check(ravel_db *db, int ingested, const char *phase)
{
    char k[64], v[128];
    for (int i = 0; i < EL_KEYS + 200; i++) {
        key_of(k, sizeof k, "e", i);
        uint64_t g = el_gen(i, ingested);
        if (g)
            val_of(v, sizeof v, g, i);
        void *got = NULL;
        size_t glen = 0;
        int rc = ravel_get(db, NULL, k, strlen(k), &got, &glen);
        int right = g ? rc == RAVEL_OK && glen == strlen(v) &&
                            memcmp(got, v, glen) == 0
                      : rc == RAVEL_NOTFOUND;
        ravel_free(got);
        if (!right) {
            char *files = NULL;
            if (ravel_property(db, "ravel.sstables", &files) == RAVEL_OK)
                printf("# %s: key %s wrong (rc %d); table files:\n%s\n",
                       phase, k, rc, files);
            ravel_free(files);
        }
        tu_expect(db, NULL, k, g ? v : NULL);
    }
}

/* An ingest into a database with files at every level, in level 0 and in
** the memtable: every key reads as the model says, after the ingest,
** after compactions settle and after a reopen. */
static void test_every_level(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-levels-src");
    char *dir = tu_path("ingest-levels");
    tu_rm_rf(dir);
    ravel_db *db = tu_open_ok(dir, EL_OPTS);
    char k[64], v[128];
    uint64_t rng = 42;
    int *order = malloc(EL_KEYS * sizeof *order);
    for (int i = 0; i < EL_KEYS; i++)
        order[i] = i;
    for (int i = EL_KEYS - 1; i > 0; i--) { /* random order: real merges */
        int j = (int)(tu_rand(&rng) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int n = 0; n < EL_KEYS; n++) {
        key_of(k, sizeof k, "e", order[n]);
        val_of(v, sizeof v, 1, order[n]);
        tu_put(db, 0, k, v);
        if (n == EL_KEYS - 3000)
            tu_wait_background_idle(db);
    }
    free(order);
    TU_OK(ravel_flush(db, RAVEL_FLUSH_NO_WAIT));
    int levels = 0;
    printf("# files per level 0..6 before:");
    for (int l = 0; l < 7; l++) {
        levels += tu_files_at_level(db, l) > 0;
        printf(" %" PRIu64, tu_files_at_level(db, l));
    }
    printf("\n");
    assert_true(levels >= 4);

    char *f0 = src_path(src, "f0.sst"), *f1 = src_path(src, "f1.sst");
    char *f2 = src_path(src, "f2.sst");
    write_sst(f0, "e", 100, 200, 1, 2, 0);
    write_sst(f1, "e", 5000, 5100, 1, 2, 3);
    write_sst(f2, "e", EL_KEYS, EL_KEYS + 100, 1, 2, 0);
    const char *paths[] = {f2, f1, f0};
    TU_OK(ravel_ingest(db, paths, 3, 0));
    el_check(db, 1, "after the ingest");
    tu_wait_background_idle(db);
    el_check(db, 1, "after compactions settled");
    printf("# files per level 0..6 after:");
    for (int l = 0; l < 7; l++)
        printf(" %" PRIu64, tu_files_at_level(db, l));
    printf("\n");
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, EL_OPTS ";disable_auto_compactions=true");
    el_check(db, 1, "after a reopen");
    check_directory(db, dir);
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    el_check(db, 1, "after compact_range");
    TU_OK(ravel_close(db));
    free(f0);
    free(f1);
    free(f2);
    free(src);
    free(dir);
}

/* ----------------------------------------------------- snapshot_copies */

struct ingest_thread {
    ravel_db *db;
    const char *const *paths;
    size_t n;
    int rc;
};

static void *ingest_thread_main(void *p)
{
    struct ingest_thread *t = p;
    t->rc = ravel_ingest(t->db, t->paths, t->n, 0);
    return NULL;
}

/* A live snapshot keeps files that overlap nothing from going in as they
** are (their keys at sequence 0 would show in it): they are copied under
** a new sequence instead -- also when the snapshot is taken while the
** files are being placed. */
static void test_snapshot_copies(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-snap-src");
    char *dir = tu_path("ingest-snap");
    tu_rm_rf(dir);
    ravel_db *db = tu_open_ok(dir, NULL);
    char *a = src_path(src, "a.sst"), *b = src_path(src, "b.sst");
    write_sst(a, "a", 0, 100, 1, 1, 0);
    write_sst(b, "b", 0, 100, 1, 1, 0);
    char k[64], v[128];
    val_of(v, sizeof v, 1, 5);

    ravel_snapshot *snap = NULL;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    const char *pa[] = {a};
    TU_OK(ravel_ingest(db, pa, 1, 0));
    key_of(k, sizeof k, "a", 5);
    tu_expect(db, snap, k, NULL);
    tu_expect(db, NULL, k, v);
    assert_int_equal(same_bytes_in(dir, a), 0); /* rewritten */
    TU_OK(ravel_snapshot_release(db, snap));

    /* the race: a snapshot taken after the check, before the install */
    rv_pause_arm(RV_PAUSE_INGEST_FILE_COPIED);
    const char *pb[] = {b};
    struct ingest_thread t = {db, pb, 1, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, ingest_thread_main, &t), 0);
    for (int i = 0; i < 60000 && !rv_pause_waiting(RV_PAUSE_INGEST_FILE_COPIED);
         i++)
        usleep(1000);
    assert_true(rv_pause_waiting(RV_PAUSE_INGEST_FILE_COPIED));
    TU_OK(ravel_snapshot_acquire(db, &snap));
    rv_pause_release(RV_PAUSE_INGEST_FILE_COPIED);
    pthread_join(th, NULL);
    TU_OK(t.rc);
    key_of(k, sizeof k, "b", 5);
    tu_expect(db, snap, k, NULL);
    tu_expect(db, NULL, k, v);
    assert_int_equal(same_bytes_in(dir, b), 0);
    TU_OK(ravel_snapshot_release(db, snap));
    check_directory(db, dir); /* the file placed as it was is gone */
    TU_OK(ravel_close(db));
    free(a);
    free(b);
    free(src);
    free(dir);
}

/* ----------------------------------------------------------- refusals */

/* Flips a byte of PATH at OFFSET. */
static void flip_byte(const char *path, long offset)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, offset), 1);
    c ^= 0x5a;
    assert_int_equal(pwrite(fd, &c, 1, offset), 1);
    close(fd);
}

static void copy_file(const char *from, const char *to)
{
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(from, &data, &len), 0);
    assert_int_equal(tu_file_write(to, data, len), 0);
    free(data);
}

/* The refused ingest left the database as it was. */
static void check_untouched(ravel_db *db, const char *dir, int files)
{
    tu_expect(db, NULL, "base", "1");
    tu_expect(db, NULL, "k000001", NULL);
    assert_int_equal(count_sst_in(dir), files);
    check_directory(db, dir);
}

static void test_refusals(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-refuse-src");
    char *dir = tu_path("ingest-refuse");
    tu_rm_rf(dir);
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "base", "1");
    TU_OK(ravel_flush(db, 0));
    int files = count_sst_in(dir);
    char *a = src_path(src, "a.sst"), *b = src_path(src, "b.sst");
    char *good = src_path(src, "good.sst"), *bad = src_path(src, "bad.sst");
    write_sst(a, "k", 0, 100, 1, 1, 0);
    write_sst(b, "k", 99, 200, 1, 1, 0);     /* shares k000099 */
    write_sst(good, "k", 300, 400, 1, 1, 0);

    const char *overlap[] = {good, a, b};
    TU_EXPECT_INVALID(ravel_ingest(db, overlap, 3, 0));
    assert_non_null(strstr(ravel_errmsg(), a));
    assert_non_null(strstr(ravel_errmsg(), b));
    assert_non_null(strstr(ravel_errmsg(), "overlap"));
    check_untouched(db, dir, files);

    char *missing = src_path(src, "missing.sst");
    const char *miss[] = {good, missing};
    TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_ingest(db, miss, 2, 0));
    assert_non_null(strstr(ravel_errmsg(), missing));
    check_untouched(db, dir, files);

    /* a damaged data block: found while copying, after the other file
    ** of the call was copied; nothing is left behind */
    copy_file(a, bad);
    flip_byte(bad, 200);
    const char *damaged[] = {good, bad};
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_ingest(db, damaged, 2, 0));
    assert_non_null(strstr(ravel_errmsg(), bad));
    check_untouched(db, dir, files);
    /* a damaged footer */
    unlink(bad);
    copy_file(a, bad);
    struct stat st;
    assert_int_equal(stat(bad, &st), 0);
    flip_byte(bad, (long)st.st_size - 20);
    const char *footer[] = {bad};
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_ingest(db, footer, 1, 0));
    assert_non_null(strstr(ravel_errmsg(), bad));
    check_untouched(db, dir, files);

    /* foreign files: garbage, a database's own table file */
    char *junk = src_path(src, "junk.sst");
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    assert_int_equal(tu_file_write(junk, buf, sizeof buf), 0);
    const char *pj[] = {junk};
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_ingest(db, pj, 1, 0));
    assert_non_null(strstr(ravel_errmsg(), junk));
    uint64_t *nums = NULL;
    assert_true(tu_dir_sst_numbers(dir, &nums) > 0);
    char own[PATH_MAX], owncopy[PATH_MAX];
    snprintf(own, sizeof own, "%s/%06" PRIu64 ".sst", dir, nums[0]);
    snprintf(owncopy, sizeof owncopy, "%s/own.sst", src);
    free(nums);
    copy_file(own, owncopy);
    const char *po[] = {owncopy};
    TU_EXPECT_RC(RAVEL_CORRUPT, ravel_ingest(db, po, 1, 0));
    assert_non_null(strstr(ravel_errmsg(), "ravel_sst_writer"));
    check_untouched(db, dir, files);

    /* arguments */
    const char *pg[] = {good};
    TU_EXPECT_INVALID(ravel_ingest(db, pg, 0, 0));
    TU_EXPECT_INVALID(ravel_ingest(db, pg, 1, 0x80));
    const char *pnull[] = {NULL};
    TU_EXPECT_INVALID(ravel_ingest(db, pnull, 1, 0));
    check_untouched(db, dir, files);

    /* the good file alone goes in */
    TU_OK(ravel_ingest(db, pg, 1, 0));
    char k[64], v[128];
    key_of(k, sizeof k, "k", 350);
    val_of(v, sizeof v, 1, 350);
    tu_expect(db, NULL, k, v);
    TU_OK(ravel_close(db));

    /* read_only; the unordered modes */
    db = tu_open_ok(dir, "read_only=true");
    TU_EXPECT_RC(RAVEL_READONLY, ravel_ingest(db, pg, 1, 0));
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, "unordered_write=true");
    TU_EXPECT_INVALID(ravel_ingest(db, pg, 1, 0));
    assert_non_null(strstr(ravel_errmsg(), "unordered"));
    TU_OK(ravel_close(db));
    free(junk);
    free(missing);
    free(a);
    free(b);
    free(good);
    free(bad);
    free(src);
    free(dir);
}

/* ---------------------------------------------------- move_and_devshm */

static void test_move_and_devshm(void **state)
{
    (void)state;
    char *dir = tu_path("ingest-move");
    tu_rm_rf(dir);
    char *src = mkdir_fresh("ingest-move-src");
    char shm[PATH_MAX];
    snprintf(shm, sizeof shm, "/dev/shm/ravel-ingest-%d", (int)getpid());
    tu_rm_rf(shm);
    struct stat st;
    int have_shm = stat("/dev/shm", &st) == 0 && mkdir(shm, 0755) == 0;
    ravel_db *db = tu_open_ok(dir, NULL);
    char *a = src_path(src, "a.sst");
    write_sst(a, "a", 0, 100, 1, 1, 0);
    const char *pa[] = {a};
    assert_int_equal(stat(a, &st), 0);
    ino_t ino = st.st_ino;
    TU_OK(ravel_ingest(db, pa, 1, RAVEL_INGEST_MOVE));
    assert_int_not_equal(stat(a, &st), 0); /* moved */
    assert_true(same_inode_in(dir, ino) != 0); /* by a hard link */
    char k[64], v[128];
    key_of(k, sizeof k, "a", 50);
    val_of(v, sizeof v, 1, 50);
    tu_expect(db, NULL, k, v);
    if (have_shm) {
        char *s = src_path(shm, "s.sst"), *t = src_path(shm, "t.sst");
        write_sst(s, "s", 0, 100, 1, 2, 0);
        write_sst(t, "t", 0, 100, 1, 2, 0);
        const char *ps[] = {s, t};
        char *copy = src_path(src, "s-copy.sst");
        copy_file(s, copy);
        TU_OK(ravel_ingest(db, ps, 2, RAVEL_INGEST_MOVE));
        /* another file system: copied as it is, the source removed */
        assert_true(same_bytes_in(dir, copy) != 0);
        free(copy);
        assert_int_not_equal(stat(s, &st), 0);
        /* the moved file is gone */
        TU_EXPECT_RC(RAVEL_NOTFOUND, ravel_ingest(db, pa, 1, 0));
        key_of(k, sizeof k, "t", 99);
        val_of(v, sizeof v, 2, 99);
        tu_expect(db, NULL, k, v);
        free(s);
        free(t);
        tu_rm_rf(shm);
    } else {
        printf("# /dev/shm unavailable: the cross-file-system case skipped\n");
    }
    check_directory(db, dir);
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, NULL);
    tu_expect(db, NULL, k, v);
    TU_OK(ravel_close(db));
    free(a);
    free(src);
    free(dir);
}

/* -------------------------------------------------- atomic_visibility */

#define VIS_FILES 3
#define VIS_KEYS 200 /* per file */
static const char *const vis_prefix[VIS_FILES] = {"a", "m", "t"};

struct vis {
    ravel_db *db;
    _Atomic int stop;
    _Atomic uint64_t published; /* the last generation ingest returned */
    _Atomic uint64_t checks;
};

/* Every key of every file through SNAP: one generation, or none at all
** before the first ingest.  Returns it. */
static uint64_t vis_scan(struct vis *s, const ravel_snapshot *snap)
{
    ravel_iter *it = NULL;
    if (ravel_iter_new(s->db, snap, &it)) {
        tu_thread_fail("iter: %s", ravel_errmsg());
        return 0;
    }
    uint64_t gen = UINT64_MAX, n = 0;
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t kl, vl;
        const char *k = ravel_iter_key(it, &kl);
        const char *v = ravel_iter_value(it, &vl);
        if (kl == 4 && memcmp(k, "mark", 4) == 0)
            continue;
        uint64_t g = gen_of(v, vl);
        if (gen == UINT64_MAX)
            gen = g;
        TU_CHECK(g == gen, "a scan saw generations %" PRIu64 " and %" PRIu64
                 " (at %.*s): part of an ingest", gen, g, (int)kl, k);
        n++;
    }
    TU_CHECK(ravel_iter_status(it) == RAVEL_OK, "iter: %s", ravel_errmsg());
    ravel_iter_free(it);
    TU_CHECK(n == 0 || n == VIS_FILES * VIS_KEYS, "a scan saw %" PRIu64
             " keys of %d", n, VIS_FILES * VIS_KEYS);
    return n ? gen : 0;
}

static void *vis_reader(void *p)
{
    struct vis *s = p;
    uint64_t rng = tu_seed() ^ (uint64_t)(uintptr_t)&rng;
    uint64_t last = 0;
    while (!atomic_load(&s->stop)) {
        uint64_t floor = atomic_load(&s->published);
        ravel_snapshot *snap = NULL;
        if (ravel_snapshot_acquire(s->db, &snap)) {
            tu_thread_fail("snapshot: %s", ravel_errmsg());
            break;
        }
        uint64_t g = vis_scan(s, snap);
        TU_CHECK(g >= floor, "a snapshot taken after ingest %" PRIu64
                 " returned shows %" PRIu64, floor, g);
        TU_CHECK(g >= last, "generations went back: %" PRIu64 " then %"
                 PRIu64, last, g);
        last = g;
        /* gets through the same snapshot agree with the scan */
        for (int i = 0; i < 20 && g; i++) {
            char k[64];
            int f = (int)(tu_rand(&rng) % VIS_FILES);
            int n = (int)(tu_rand(&rng) % VIS_KEYS);
            key_of(k, sizeof k, vis_prefix[f], n);
            void *v = NULL;
            size_t vl = 0;
            int rc = ravel_get(s->db, snap, k, strlen(k), &v, &vl);
            TU_CHECK(rc == RAVEL_OK && gen_of(v, vl) == g, "get %s through "
                     "a snapshot of generation %" PRIu64 ": rc %d, %"
                     PRIu64, k, g, rc, rc ? 0 : gen_of(v, vl));
            ravel_free(v);
        }
        TU_OK(ravel_snapshot_release(s->db, snap));
        /* gets without a snapshot: a later read never sees an older
        ** generation, across files */
        uint64_t prev = 0;
        for (int f = VIS_FILES - 1; f >= 0; f--) {
            char k[64];
            key_of(k, sizeof k, vis_prefix[f], (int)(tu_rand(&rng) %
                                                     VIS_KEYS));
            void *v = NULL;
            size_t vl = 0;
            int rc = ravel_get(s->db, NULL, k, strlen(k), &v, &vl);
            uint64_t gv = rc == RAVEL_OK ? gen_of(v, vl) : 0;
            TU_CHECK(rc == RAVEL_OK || (rc == RAVEL_NOTFOUND && g == 0),
                     "get %s: %d", k, rc);
            TU_CHECK(gv >= prev, "get %s saw generation %" PRIu64 " after "
                     "another key's %" PRIu64, k, gv, prev);
            prev = gv;
            ravel_free(v);
        }
        atomic_fetch_add(&s->checks, 1);
    }
    return NULL;
}

static void test_atomic_visibility(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-vis-src");
    char *dir = tu_path("ingest-vis");
    tu_rm_rf(dir);
    struct vis s = {.db = tu_open_ok(dir, SMALL)};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, vis_reader, &s), 0);
    int rounds = (int)tu_env_u64("RAVEL_TEST_INGEST_VIS_ROUNDS", 30);
    for (int r = 1; r <= rounds; r++) {
        char *paths[VIS_FILES];
        for (int f = 0; f < VIS_FILES; f++) {
            char name[64];
            snprintf(name, sizeof name, "%d-%d.sst", r, f);
            paths[f] = src_path(src, name);
            write_sst(paths[f], vis_prefix[f], 0, VIS_KEYS, 1, (uint64_t)r,
                      0);
        }
        /* a memtable holding an ingested key (outside the keys scanned:
        ** "mark" sorts between "a" and "m"); every third round a key of
        ** the files themselves, at the previous generation, so that the
        ** memtable must be flushed first */
        tu_put(s.db, 0, "mark", "x");
        if (r > 1 && r % 3 == 0) {
            char k[64], v[128];
            key_of(k, sizeof k, "m", 7);
            val_of(v, sizeof v, (uint64_t)r - 1, 7);
            tu_put(s.db, 0, k, v);
        }
        TU_OK(ravel_ingest(s.db, (const char *const *)paths, VIS_FILES,
                           RAVEL_INGEST_MOVE));
        atomic_store(&s.published, (uint64_t)r);
        for (int f = 0; f < VIS_FILES; f++)
            free(paths[f]);
    }
    /* the readers check a few more times after the last one */
    uint64_t c = atomic_load(&s.checks);
    while (atomic_load(&s.checks) < c + 8 && !tu_thread_failures())
        usleep(1000);
    atomic_store(&s.stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    printf("# %d ingests of %d files, %" PRIu64 " reader checks; files "
           "per level 0..6:", rounds, VIS_FILES, atomic_load(&s.checks));
    for (int l = 0; l < 7; l++)
        printf(" %" PRIu64, tu_files_at_level(s.db, l));
    printf("\n");
    assert_true(vis_scan(&s, NULL) == (uint64_t)rounds);
    tu_assert_no_thread_failures();
    TU_OK(ravel_verify(s.db));
    TU_OK(ravel_close(s.db));
    /* obsolete files go once no reader holds them: after a reopen */
    s.db = tu_open_ok(dir, SMALL ";disable_auto_compactions=true");
    assert_true(vis_scan(&s, NULL) == (uint64_t)rounds);
    check_directory(s.db, dir);
    TU_OK(ravel_close(s.db));
    free(src);
    free(dir);
}

/* ------------------------------------------- atomic_visibility_as_is */

/* Ingests of new key ranges (placed as they are, at sequence 0) while
** readers iterate without snapshots (which would make the files be
** copied): every scan sees each ingest whole or not at all, and the ones
** it sees are the first ones, in order. */
#define VIS2_KEYS 100

struct vis2 {
    ravel_db *db;
    _Atomic int stop;
    _Atomic uint64_t published;
    _Atomic uint64_t checks;
};

static void *vis2_reader(void *p)
{
    struct vis2 *s = p;
    uint64_t seen = 0;
    while (!atomic_load(&s->stop)) {
        uint64_t floor = atomic_load(&s->published);
        ravel_iter *it = NULL;
        if (ravel_iter_new(s->db, NULL, &it)) {
            tu_thread_fail("iter: %s", ravel_errmsg());
            break;
        }
        uint64_t gen = 0, n = 0, gens = 0;
        for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
             ravel_iter_next(it)) {
            size_t vl;
            const char *v = ravel_iter_value(it, &vl);
            uint64_t g = gen_of(v, vl);
            if (g != gen) {
                TU_CHECK(gen == 0 || n == (uint64_t)VIS_FILES * VIS2_KEYS,
                         "generation %" PRIu64 ": %" PRIu64 " keys of %d",
                         gen, n, VIS_FILES * VIS2_KEYS);
                TU_CHECK(g == gen + 1, "generation %" PRIu64 " after %"
                         PRIu64, g, gen);
                gen = g;
                n = 0;
                gens++;
            }
            n++;
        }
        TU_CHECK(gen == 0 || n == (uint64_t)VIS_FILES * VIS2_KEYS,
                 "generation %" PRIu64 ": %" PRIu64 " keys of %d", gen, n,
                 VIS_FILES * VIS2_KEYS);
        TU_CHECK(ravel_iter_status(it) == RAVEL_OK, "iter: %s",
                 ravel_errmsg());
        ravel_iter_free(it);
        TU_CHECK(gens >= floor && gens >= seen, "a scan saw %" PRIu64
                 " ingests; %" PRIu64 " had returned, %" PRIu64 " seen "
                 "before", gens, floor, seen);
        seen = gens;
        atomic_fetch_add(&s->checks, 1);
    }
    return NULL;
}

static void test_atomic_visibility_as_is(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-vis2-src");
    char *dir = tu_path("ingest-vis2");
    tu_rm_rf(dir);
    struct vis2 s = {.db = tu_open_ok(dir, SMALL)};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, vis2_reader, &s), 0);
    int rounds = (int)tu_env_u64("RAVEL_TEST_INGEST_VIS_ROUNDS", 30);
    for (int r = 1; r <= rounds; r++) {
        char *paths[VIS_FILES];
        for (int f = 0; f < VIS_FILES; f++) {
            char name[64], prefix[32];
            snprintf(name, sizeof name, "%d-%d.sst", r, f);
            /* generation-major keys: a scan meets the generations in
            ** order */
            snprintf(prefix, sizeof prefix, "g%06d-%s", r, vis_prefix[f]);
            paths[f] = src_path(src, name);
            write_sst(paths[f], prefix, 0, VIS2_KEYS, 1, (uint64_t)r, 0);
        }
        TU_OK(ravel_ingest(s.db, (const char *const *)paths, VIS_FILES,
                           r % 2 ? RAVEL_INGEST_MOVE : 0));
        atomic_store(&s.published, (uint64_t)r);
        for (int f = 0; f < VIS_FILES; f++)
            free(paths[f]);
    }
    uint64_t c = atomic_load(&s.checks);
    while (atomic_load(&s.checks) < c + 8 && !tu_thread_failures())
        usleep(1000);
    atomic_store(&s.stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    printf("# %d ingests placed as they are, %" PRIu64 " reader scans\n",
           rounds, atomic_load(&s.checks));
    /* all at the last level: nothing overlapped */
    assert_int_equal(tu_files_at_level(s.db, 6), (uint64_t)rounds * VIS_FILES);
    TU_OK(ravel_verify(s.db));
    TU_OK(ravel_close(s.db));
    s.db = tu_open_ok(dir, SMALL ";disable_auto_compactions=true");
    check_directory(s.db, dir);
    TU_OK(ravel_close(s.db));
    free(src);
    free(dir);
}

/* -------------------------------------------------- concurrent_writes */

#define CW_WRITERS 4
#define CW_KEYS 400 /* writer w writes the keys i with i % CW_WRITERS == w */

struct cw {
    ravel_db *db;
    _Atomic int phase;          /* 0: race, 1: after the ingest, 2: stop */
    /* per key: the value last acknowledged, and whether a put of it began
    ** after the ingest returned */
    char last[CW_KEYS][32];
    int after[CW_KEYS];
    _Atomic int after_rounds[CW_WRITERS];
};

struct cw_arg {
    struct cw *s;
    int w;
};

static void *cw_writer(void *p)
{
    struct cw_arg *a = p;
    struct cw *s = a->s;
    uint64_t n = 0;
    for (;;) {
        int ph = atomic_load(&s->phase);
        if (ph == 2)
            break;
        for (int i = a->w; i < CW_KEYS; i += CW_WRITERS) {
            int began_after = atomic_load(&s->phase) >= 1;
            char k[64], v[32];
            key_of(k, sizeof k, "c", i);
            snprintf(v, sizeof v, "w%d-%" PRIu64, a->w, ++n);
            int rc = ravel_put(s->db, 0, k, strlen(k), v, strlen(v));
            if (rc) {
                tu_thread_fail("put: %s", ravel_errmsg());
                return NULL;
            }
            memcpy(s->last[i], v, sizeof v);
            s->after[i] |= began_after;
        }
        if (ph == 1)
            atomic_fetch_add(&s->after_rounds[a->w], 1);
    }
    return NULL;
}

/* Gets, a scan and a snapshot's gets agree on every key. */
static void cw_check_agree(struct cw *s)
{
    ravel_snapshot *snap = NULL;
    TU_OK(ravel_snapshot_acquire(s->db, &snap));
    size_t len = 0;
    char *scan = tu_scan_all(s->db, snap, &len);
    assert_non_null(scan);
    char *line = scan;
    for (int i = 0; i < CW_KEYS; i++) {
        char k[64];
        key_of(k, sizeof k, "c", i);
        void *v = NULL;
        size_t vl = 0;
        TU_OK(ravel_get(s->db, snap, k, strlen(k), &v, &vl));
        char want[256];
        snprintf(want, sizeof want, "%s=%.*s\n", k, (int)vl, (char *)v);
        if (strncmp(line, want, strlen(want)) != 0)
            fail_msg("key %s: the snapshot's get says %s, its scan %.60s", k,
                     want, line);
        line += strlen(want);
        ravel_free(v);
    }
    free(scan);
    TU_OK(ravel_snapshot_release(s->db, snap));
}

static void test_concurrent_writes(void **state)
{
    (void)state;
    char *src = mkdir_fresh("ingest-cw-src");
    char *dir = tu_path("ingest-cw");
    tu_rm_rf(dir);
    static struct cw s;
    memset(&s, 0, sizeof s);
    s.db = tu_open_ok(dir, SMALL);
    int rounds = (int)tu_env_u64("RAVEL_TEST_INGEST_CW_ROUNDS", 10);
    char k[64], v[128];
    for (int r = 1; r <= rounds; r++) {
        atomic_store(&s.phase, 0);
        memset(s.after, 0, sizeof s.after);
        for (int w = 0; w < CW_WRITERS; w++)
            atomic_store(&s.after_rounds[w], 0);
        pthread_t th[CW_WRITERS];
        struct cw_arg args[CW_WRITERS];
        for (int w = 0; w < CW_WRITERS; w++) {
            args[w] = (struct cw_arg){&s, w};
            assert_int_equal(pthread_create(&th[w], NULL, cw_writer,
                                            &args[w]), 0);
        }
        char name[64];
        snprintf(name, sizeof name, "cw-%d.sst", r);
        char *path = src_path(src, name);
        write_sst(path, "c", 0, CW_KEYS, 1, (uint64_t)r, 0);
        const char *paths[] = {path};
        TU_OK(ravel_ingest(s.db, paths, 1, RAVEL_INGEST_MOVE));
        atomic_store(&s.phase, 1);
        /* every writer completes two passes begun after the ingest */
        for (int w = 0; w < CW_WRITERS; w++)
            while (atomic_load(&s.after_rounds[w]) < 2 &&
                   !tu_thread_failures())
                usleep(200);
        atomic_store(&s.phase, 2);
        for (int w = 0; w < CW_WRITERS; w++)
            pthread_join(th[w], NULL);
        tu_assert_no_thread_failures();
        /* a put that began after the ingest returned has the higher
        ** sequence: it wins */
        for (int i = 0; i < CW_KEYS; i++) {
            key_of(k, sizeof k, "c", i);
            assert_true(s.after[i]);
            tu_expect(s.db, NULL, k, s.last[i]);
        }
        cw_check_agree(&s);
        /* and an ingest after the writes wins over them all */
        snprintf(name, sizeof name, "cw-%d-b.sst", r);
        free(path);
        path = src_path(src, name);
        write_sst(path, "c", 0, CW_KEYS, 1, (uint64_t)r, 0);
        const char *pb[] = {path};
        TU_OK(ravel_ingest(s.db, pb, 1, RAVEL_INGEST_MOVE));
        for (int i = 0; i < CW_KEYS; i++) {
            key_of(k, sizeof k, "c", i);
            val_of(v, sizeof v, (uint64_t)r, i);
            tu_expect(s.db, NULL, k, v);
        }
        cw_check_agree(&s);
        free(path);
    }
    TU_OK(ravel_verify(s.db));
    TU_OK(ravel_close(s.db));
    s.db = tu_open_ok(dir, SMALL ";disable_auto_compactions=true");
    for (int i = 0; i < CW_KEYS; i++) {
        key_of(k, sizeof k, "c", i);
        val_of(v, sizeof v, (uint64_t)rounds, i);
        tu_expect(s.db, NULL, k, v);
    }
    check_directory(s.db, dir);
    TU_OK(ravel_close(s.db));
    free(src);
    free(dir);
}

/* ----------------------------------------------------- kill9/powerloss */

#define CR_FILES 3
#define CR_KEYS 300 /* per file */
static const char *const cr_prefix[CR_FILES] = {"b", "d", "f"};

/* The prefix of file F's keys in generation GEN. */
static void cr_prefix_of(char *buf, size_t n, int fresh, uint64_t gen, int f)
{
    if (fresh)
        snprintf(buf, n, "%s%08" PRIu64 "-", cr_prefix[f], gen);
    else
        snprintf(buf, n, "%s", cr_prefix[f]);
}

/* Writes generation GEN's files into SRC (PATHS receive their names). */
static void cr_write_files(const char *src, int fresh, uint64_t gen,
                           char **paths)
{
    for (int f = 0; f < CR_FILES; f++) {
        char name[64], prefix[32];
        snprintf(name, sizeof name, "%" PRIu64 "-%d.sst", gen, f);
        paths[f] = src_path(src, name);
        unlink(paths[f]); /* left by a killed child */
        cr_prefix_of(prefix, sizeof prefix, fresh, gen, f);
        write_sst(paths[f], prefix, 0, CR_KEYS, 1, gen, 7);
    }
}

struct cr_args {
    char dir[PATH_MAX];
    char src[PATH_MAX];
    char journal[PATH_MAX];
    uint64_t gen0;        /* the first generation this child ingests */
    int point;            /* -1: killed at random; else a pause point */
    int fresh;            /* each generation ingests keys of its own (they
                          ** overlap nothing: placed as they are) */
    int arm_after;        /* ingests acknowledged before it is armed */
};

/* A message: generation GEN was ingested (acknowledged). */
struct cr_msg {
    uint64_t gen;
};

static int cr_child(const void *arg)
{
    const struct cr_args *a = arg;
    if (a->journal[0])
        tu_sync_journal_start(a->journal);
    ravel_options *o = NULL;
    ravel_db *db = NULL;
    int rc = tu_options_try(SMALL, &o);
    if (!rc)
        rc = ravel_open(a->dir, o, &db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("open: %s", ravel_errmsg());
    crash_child_opened(db);
    for (uint64_t gen = a->gen0;; gen++) {
        char *paths[CR_FILES];
        cr_write_files(a->src, a->fresh, gen, paths);
        /* a write in the memtable over the files' keys, at the previous
        ** generation: the ingest flushes it first */
        char k[64], v[128];
        key_of(k, sizeof k, cr_prefix[1], 3);
        val_of(v, sizeof v, gen - 1, 3);
        if (!a->fresh && ravel_put(db, 0, k, strlen(k), v, strlen(v)))
            crash_child_fail("put: %s", ravel_errmsg());
        rc = ravel_ingest(db, (const char *const *)paths, CR_FILES,
                          RAVEL_INGEST_MOVE);
        if (rc)
            crash_child_fail("ingest: %s", ravel_errmsg());
        struct cr_msg m = {gen};
        crash_send(&m, sizeof m);
        for (int f = 0; f < CR_FILES; f++)
            free(paths[f]);
    }
}

/* The pause-point child: ingests ARM_AFTER generations, then one in a
** thread that stops at the point, reported; the parent kills it. */
struct cr_pause_ctx {
    ravel_db *db;
    char *paths[CR_FILES];
};

static void *cr_pause_ingest(void *p)
{
    struct cr_pause_ctx *c = p;
    ravel_ingest(c->db, (const char *const *)c->paths, CR_FILES,
                 RAVEL_INGEST_MOVE);
    return NULL;
}

static int cr_pause_child(const void *arg)
{
    const struct cr_args *a = arg;
    if (a->journal[0])
        tu_sync_journal_start(a->journal);
    ravel_options *o = NULL;
    static struct cr_pause_ctx c;
    int rc = tu_options_try(SMALL, &o);
    if (!rc)
        rc = ravel_open(a->dir, o, &c.db);
    ravel_options_free(o);
    if (rc)
        crash_child_fail("open: %s", ravel_errmsg());
    crash_child_opened(c.db);
    for (uint64_t gen = a->gen0;; gen++) {
        cr_write_files(a->src, a->fresh, gen, c.paths);
        if (gen == a->gen0 + (uint64_t)a->arm_after) {
            rv_pause_arm((enum rv_pause_point)a->point);
            pthread_t t;
            pthread_create(&t, NULL, cr_pause_ingest, &c);
            crash_child_park_at((enum rv_pause_point)a->point);
        }
        if (ravel_ingest(c.db, (const char *const *)c.paths, CR_FILES,
                         RAVEL_INGEST_MOVE))
            crash_child_fail("ingest: %s", ravel_errmsg());
        struct cr_msg m = {gen};
        crash_send(&m, sizeof m);
        for (int f = 0; f < CR_FILES; f++)
            free(c.paths[f]);
    }
}

struct cr_record {
    uint64_t acked; /* the last generation acknowledged */
    int n;
};

static void cr_on_msg(struct crash_child *c, const void *msg)
{
    struct cr_record *r = c->ctx;
    const struct cr_msg *m = msg;
    r->acked = m->gen;
    r->n++;
}

static int cr_reached(struct crash_child *c)
{
    const struct cr_record *r = c->ctx;
    return r->n >= 1;
}

/* Every key of every file reads one generation G >= ACKED (an ingest is
** there whole or not at all); returns G. */
static uint64_t cr_check(ravel_db *db, uint64_t acked)
{
    uint64_t gen = UINT64_MAX;
    for (int f = 0; f < CR_FILES; f++)
        for (int i = 0; i < CR_KEYS; i++) {
            char k[64];
            key_of(k, sizeof k, cr_prefix[f], i);
            void *v = NULL;
            size_t vl = 0;
            int rc = ravel_get(db, NULL, k, strlen(k), &v, &vl);
            if (i % 7 == 0) {
                if (rc != RAVEL_NOTFOUND)
                    fail_msg("%s: deleted by every ingest, reads %d", k, rc);
                continue;
            }
            if (rc)
                fail_msg("%s: %d %s", k, rc, ravel_errmsg());
            uint64_t g = gen_of(v, vl);
            ravel_free(v);
            if (gen == UINT64_MAX)
                gen = g;
            if (g != gen)
                fail_msg("%s reads generation %" PRIu64 ", others %" PRIu64
                         ": an ingest is there in part", k, g, gen);
        }
    if (gen < acked)
        fail_msg("generation %" PRIu64 " found, %" PRIu64 " acknowledged",
                 gen, acked);
    return gen;
}

/* Fresh mode: how many of generation GEN's keys read back (puts only;
** each must hold GEN's value). */
static int cr_fresh_count(ravel_db *db, uint64_t gen)
{
    int n = 0;
    for (int f = 0; f < CR_FILES; f++)
        for (int i = 0; i < CR_KEYS; i++) {
            if (i % 7 == 0)
                continue;
            char prefix[32], k[64];
            cr_prefix_of(prefix, sizeof prefix, 1, gen, f);
            key_of(k, sizeof k, prefix, i);
            void *v = NULL;
            size_t vl = 0;
            int rc = ravel_get(db, NULL, k, strlen(k), &v, &vl);
            if (rc == RAVEL_OK) {
                if (gen_of(v, vl) != gen)
                    fail_msg("%s reads generation %" PRIu64, k,
                             gen_of(v, vl));
                n++;
            } else if (rc != RAVEL_NOTFOUND) {
                fail_msg("%s: %d %s", k, rc, ravel_errmsg());
            }
            ravel_free(v);
        }
    return n;
}

/* Fresh mode: every generation up to BEFORE is there whole, INFLIGHT
** whole or not at all, none after it.  Returns the last one there. */
static uint64_t cr_fresh_check(ravel_db *db, uint64_t first, uint64_t before,
                               uint64_t inflight)
{
    const int whole = CR_FILES * (CR_KEYS - (CR_KEYS + 6) / 7);
    uint64_t last = before;
    for (uint64_t g = first; g <= inflight + 1; g++) {
        int n = cr_fresh_count(db, g);
        if (g <= before && n != whole)
            fail_msg("generation %" PRIu64 " (acknowledged) has %d of %d "
                     "keys", g, n, whole);
        if (g == inflight && n != 0 && n != whole)
            fail_msg("generation %" PRIu64 " (in flight) has %d of %d "
                     "keys: part of an ingest", g, n, whole);
        if (g > inflight && n != 0)
            fail_msg("generation %" PRIu64 " never ingested has %d keys", g,
                     n);
        if (g == inflight && n == whole)
            last = inflight;
    }
    return last;
}

static const int cr_points[] = {-1, RV_PAUSE_INGEST_FILE_COPIED,
                                RV_PAUSE_INGEST_BEFORE_EDIT,
                                RV_PAUSE_INGEST_LOGGED};

static void cr_rounds(const char *name, int rounds, int powerloss,
                      int fresh)
{
    char *dir = tu_path("%s", name);
    char *src = tu_path("%s-src", name);
    char *journal = tu_path("%s.journal", name);
    tu_rm_rf(dir);
    tu_rm_rf(src);
    assert_int_equal(mkdir(src, 0755), 0);
    if (powerloss)
        tu_sync_journal_start(journal);
    uint64_t rng = tu_seed();
    /* generation 1, so that every later state has one */
    ravel_db *db = tu_open_ok(dir, SMALL);
    char *first[CR_FILES];
    cr_write_files(src, fresh, 1, first);
    TU_OK(ravel_ingest(db, (const char *const *)first, CR_FILES,
                       RAVEL_INGEST_MOVE));
    for (int f = 0; f < CR_FILES; f++)
        free(first[f]);
    TU_OK(ravel_close(db));
    uint64_t cur = 1; /* the generation the database holds */
    int found_inflight = 0;
    for (int round = 1; round <= rounds; round++) {
        struct cr_args a;
        memset(&a, 0, sizeof a);
        snprintf(a.dir, sizeof a.dir, "%s", dir);
        snprintf(a.src, sizeof a.src, "%s", src);
        if (powerloss)
            snprintf(a.journal, sizeof a.journal, "%s", journal);
        a.gen0 = cur + 1;
        a.fresh = fresh;
        a.point = cr_points[round % 4];
        a.arm_after = (int)(tu_rand(&rng) % 3);
        struct cr_record rec = {0, 0};
        struct crash_child c;
        memset(&c, 0, sizeof c);
        c.on_msg = cr_on_msg;
        c.msg_size = sizeof(struct cr_msg);
        c.ctx = &rec;
        snprintf(c.label, sizeof c.label, "round %d", round);
        if (a.point < 0) {
            crash_spawn(&c, "ingester", &a, sizeof a);
            crash_wait(&c, cr_reached, 120000, "an ingest");
            crash_kill_after(&c, CRASH_FROM_OPEN, tu_rand(&rng) % 400);
        } else {
            crash_spawn(&c, "pauser", &a, sizeof a);
            crash_wait(&c, crash_paused, 120000, "the pause point");
            crash_kill(&c);
        }
        /* before: what an acknowledged ingest left; in flight: the next */
        uint64_t before = rec.n ? rec.acked : cur;
        uint64_t inflight = rec.n ? rec.acked + 1 : a.gen0;
        if (a.point >= 0 && rec.n != a.arm_after)
            fail_msg("round %d: %d ingests acknowledged before the pause, "
                     "%d expected", round, rec.n, a.arm_after);
        if (powerloss)
            tu_power_loss(dir, journal,
                          (enum tu_power_loss_pattern)(round %
                                                       TU_PL_PATTERNS),
                          &rng);
        db = tu_open_ok(dir, SMALL ";disable_auto_compactions=true");
        uint64_t g = fresh ? cr_fresh_check(db, 1, before, inflight)
                           : cr_check(db, before);
        if (g != before && g != inflight)
            fail_msg("round %d: generation %" PRIu64 " found; %" PRIu64
                     " acknowledged, %" PRIu64 " in flight", round, g,
                     before, inflight);
        if (a.point == RV_PAUSE_INGEST_LOGGED && g != inflight)
            fail_msg("round %d: killed after the manifest edit, yet "
                     "generation %" PRIu64 " is not there (%" PRIu64 ")",
                     round, inflight, g);
        if ((a.point == RV_PAUSE_INGEST_FILE_COPIED ||
             a.point == RV_PAUSE_INGEST_BEFORE_EDIT) && g != before)
            fail_msg("round %d: killed before the manifest edit, yet "
                     "generation %" PRIu64 " is there", round, g);
        found_inflight += g == inflight;
        cur = g;
        check_directory(db, dir);
        TU_OK(ravel_verify(db));
        printf("# round %d: %d ingests acknowledged, killed %s; generation "
               "%" PRIu64 " found (%s)\n", round, rec.n,
               a.point < 0 ? "at random" : a.point ==
               RV_PAUSE_INGEST_FILE_COPIED ? "after a file was copied"
               : a.point == RV_PAUSE_INGEST_BEFORE_EDIT
               ? "before the manifest edit" : "after the manifest edit", g,
               g == inflight ? "the one in flight" : "the last acknowledged");
        TU_OK(ravel_close(db));
    }
    printf("# %d of %d rounds found their in-flight ingest\n",
           found_inflight, rounds);
    if (fresh && !powerloss) { /* placed as they are (the LOG says; a
                                 ** power loss takes the LOG) */
        char log[PATH_MAX];
        snprintf(log, sizeof log, "%s/LOG", dir);
        char *text;
        size_t len;
        assert_int_equal(tu_file_read(log, &text, &len), 0);
        text = realloc(text, len + 1);
        text[len] = 0;
        assert_non_null(strstr(text, "as they are"));
        free(text);
    }
    db = tu_open_ok(dir, SMALL);
    tu_wait_background_idle(db);
    if (fresh)
        assert_int_equal(cr_fresh_check(db, 1, cur, cur), cur);
    else
        assert_int_equal(cr_check(db, cur), cur);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    tu_rm_rf(src);
    free(dir);
    free(src);
    free(journal);
}

static void test_kill9(void **state)
{
    (void)state;
    cr_rounds("ingest-kill9",
              (int)tu_env_u64("RAVEL_TEST_INGEST_CRASH_ROUNDS", 12), 0, 0);
}

static void test_powerloss(void **state)
{
    (void)state;
    cr_rounds("ingest-powerloss",
              (int)tu_env_u64("RAVEL_TEST_INGEST_POWERLOSS_ROUNDS", 6), 1, 0);
}

/* The same for ingests placed as they are (nothing overlaps them). */
static void test_kill9_as_is(void **state)
{
    (void)state;
    cr_rounds("ingest-kill9-as-is",
              (int)tu_env_u64("RAVEL_TEST_INGEST_CRASH_ROUNDS", 12), 0, 1);
}

static void test_powerloss_as_is(void **state)
{
    (void)state;
    cr_rounds("ingest-powerloss-as-is",
              (int)tu_env_u64("RAVEL_TEST_INGEST_POWERLOSS_ROUNDS", 6), 1, 1);
}

static const struct crash_role roles[] = {
    {"ingester", cr_child, sizeof(struct cr_args)},
    {"pauser", cr_pause_child, sizeof(struct cr_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_order),
        cmocka_unit_test(test_into_empty),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_every_level),
        cmocka_unit_test(test_snapshot_copies),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_move_and_devshm),
        cmocka_unit_test(test_atomic_visibility),
        cmocka_unit_test(test_atomic_visibility_as_is),
        cmocka_unit_test(test_concurrent_writes),
        cmocka_unit_test(test_kill9),
        cmocka_unit_test(test_powerloss),
        cmocka_unit_test(test_kill9_as_is),
        cmocka_unit_test(test_powerloss_as_is),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
