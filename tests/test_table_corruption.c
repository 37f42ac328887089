/*
** test_table_corruption.c -- damage to table files, the manifest and
** CURRENT is reported as RAVEL_CORRUPT naming the file, never returned as
** data.
**
** Each case builds a database whose data is all in table files (several
** flushes, bloom filters on), closes it, damages one file, reopens and
** reads everything: every get, a forward and a backward scan, and
** ravel_verify.  A read may fail with RAVEL_CORRUPT; a read that succeeds
** must return the value written.  The damage must be reported somewhere
** (the open, a read, or verify), and the message must name the file.
** The *_mmap cases reopen with allow_mmap_reads=true (blocks read in
** place from a map of the file): the same damage, the same reports.
*/
#include "testutil.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPTS "write_buffer_size=64K;target_file_size_base=64K"
#define KEYS 3000

static int db_counter;
/* The options a damaged database is reopened with. */
static const char *reopen_opts = OPTS;
#define MMAP_OPTS OPTS ";allow_mmap_reads=true"

static void key_of(char *b, size_t n, int i)
{
    snprintf(b, n, "key%06d", i);
}

static void val_of(char *b, size_t n, int i)
{
    snprintf(b, n, "value-%d-%060d", i, i);
}

static char *build_db_with(const char *opts)
{
    char *dir = tu_path("corrupt-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, opts);
    char k[32], v[128];
    for (int i = 0; i < KEYS; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i);
        tu_put(db, 0, k, v);
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_close(db));
    return dir;
}

static char *build_db(void)
{
    return build_db_with(OPTS);
}

/* The name of the first file of DIR starting with PREFIX and ending with
** SUFFIX (sorted), into BUF. */
static void find_file(const char *dir, const char *prefix, const char *suffix,
                      char *buf, size_t n)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    buf[0] = '\0';
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && len >= sl &&
            strcmp(e->d_name + len - sl, suffix) == 0 &&
            (!buf[0] || strcmp(e->d_name, buf) < 0))
            snprintf(buf, n, "%.63s", e->d_name);
    }
    closedir(d);
    assert_true(buf[0] != '\0');
}

static void flip_bit(const char *path, size_t off)
{
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    assert_true(off < len);
    data[off] ^= 0x10;
    assert_int_equal(tu_file_write(path, data, len), 0);
    free(data);
}

static void truncate_to(const char *path, size_t len)
{
    assert_int_equal(truncate(path, (off_t)len), 0);
}

static size_t file_size(const char *path)
{
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    free(data);
    return len;
}

/* Whether a report of damage was seen, and whether it named NAME. */
struct seen {
    int corrupt;
    int named;
    char first[600];
};

static void note(struct seen *s, int rc, const char *name)
{
    if (rc == RAVEL_OK || rc == RAVEL_NOTFOUND)
        return;
    if (rc != RAVEL_CORRUPT)
        fail_msg("damage reported as %s, not RAVEL_CORRUPT: %s",
                 ravel_errstr(rc), ravel_errmsg());
    if (!s->corrupt)
        snprintf(s->first, sizeof s->first, "%s", ravel_errmsg());
    s->corrupt = 1;
    s->named |= strstr(ravel_errmsg(), name) != NULL;
}

static void read_scan(ravel_db *db, ravel_iter *it, struct seen *s,
                      const char *name);

/* Reads everything; a value returned must be right. */
static void read_all(ravel_db *db, struct seen *s, const char *name)
{
    char k[32], v[128];
    for (int i = 0; i < KEYS; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i);
        void *got = NULL;
        size_t len = 0;
        int rc = ravel_get(db, NULL, k, strlen(k), &got, &len);
        if (rc == RAVEL_OK && (len != strlen(v) || memcmp(got, v, len)))
            fail_msg("%s: wrong value returned after damage to %s", k, name);
        if (rc == RAVEL_NOTFOUND)
            fail_msg("%s: not found after damage to %s, with no error", k,
                     name);
        ravel_free(got);
        note(s, rc, name);
    }
    ravel_iter *it;
    int rc = ravel_iter_new(db, NULL, &it);
    note(s, rc, name);
    if (rc == RAVEL_OK)
        read_scan(db, it, s, name);
    note(s, ravel_verify(db), name);
}

/* After IT stopped with RC, another failure on this thread must not
** replace the message later calls on IT return with: a binding reads it
** right after each call (ravel.h, "For binding writers"). */
static void check_sticky_message(ravel_iter *it, int rc, const char *name)
{
    char first[512];
    snprintf(first, sizeof first, "%s", ravel_errmsg());
    ravel_options *o;
    TU_OK(ravel_options_new(&o));
    assert_int_equal(ravel_options_set(o, "no_such_option", "1"),
                     RAVEL_INVALID);
    ravel_options_free(o);
    assert_int_equal(ravel_iter_status(it), rc);
    if (strcmp(ravel_errmsg(), first) != 0)
        fail_msg("ravel_iter_status after damage to %s says \"%s\", not the "
                 "iterator's error \"%s\"", name, ravel_errmsg(), first);
    assert_int_equal(ravel_options_new(&o), RAVEL_OK);
    assert_int_equal(ravel_options_set(o, "no_such_option", "1"),
                     RAVEL_INVALID);
    ravel_options_free(o);
    assert_int_equal(ravel_iter_seek_to_first(it), rc);
    if (strcmp(ravel_errmsg(), first) != 0)
        fail_msg("a seek on a failed iterator after damage to %s says \"%s\","
                 " not the iterator's error \"%s\"", name, ravel_errmsg(),
                 first);
}

/* Scans IT forward and back; an entry shown must be right. */
static void read_scan(ravel_db *db, ravel_iter *it, struct seen *s,
                      const char *name)
{
    (void)db;
    char k[32], v[128];
    int n = 0, rc = ravel_iter_seek_to_first(it);
    for (; rc == RAVEL_OK && ravel_iter_valid(it); rc = ravel_iter_next(it)) {
        size_t kl, vl;
        const char *ik = ravel_iter_key(it, &kl);
        const char *iv = ravel_iter_value(it, &vl);
        key_of(k, sizeof k, n);
        val_of(v, sizeof v, n);
        if (kl != strlen(k) || memcmp(ik, k, kl) || vl != strlen(v) ||
            memcmp(iv, v, vl))
            fail_msg("scan: entry %d is wrong after damage to %s", n, name);
        n++;
    }
    if (rc == RAVEL_OK)
        rc = ravel_iter_status(it);
    if (rc == RAVEL_OK && n != KEYS)
        fail_msg("scan saw %d of %d keys after damage to %s, with no error",
                 n, KEYS, name);
    note(s, rc, name);
    if (rc != RAVEL_OK) {
        check_sticky_message(it, rc, name);
        ravel_iter_free(it);
        return;
    }
    rc = ravel_iter_seek_to_last(it);
    for (; rc == RAVEL_OK && ravel_iter_valid(it); rc = ravel_iter_prev(it))
        ;
    if (rc == RAVEL_OK)
        rc = ravel_iter_status(it);
    note(s, rc, name);
    ravel_iter_free(it);
}

/* Opens DIR after damage to NAME: the damage must be reported, naming it. */
static void expect_reported(const char *dir, const char *name)
{
    struct seen s = {0};
    ravel_db *db = NULL;
    int rc = tu_open(dir, reopen_opts, &db);
    note(&s, rc, name);
    if (rc == RAVEL_OK) {
        read_all(db, &s, name);
        TU_OK(ravel_close(db));
    }
    if (!s.corrupt)
        fail_msg("damage to %s went unreported", name);
    if (!s.named)
        fail_msg("damage to %s was reported without naming it: %s", name,
                 s.first);
    printf("# %s: %s\n", name, s.first);
}

/* Offsets of a table's blocks, from its footer (docs/formats.md). */
struct layout {
    uint64_t index_off, filter_off, props_off, footer_off;
};

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static struct layout table_layout(const char *path)
{
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    const unsigned char *f = (const unsigned char *)data + len - 80;
    struct layout l = {
        .index_off = get64(f), .filter_off = get64(f + 16),
        .props_off = get64(f + 32), .footer_off = len - 80,
    };
    free(data);
    return l;
}

static void damage_table_at(const char *what)
{
    char *dir = build_db();
    char name[64];
    find_file(dir, "", ".sst", name, sizeof name);
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", dir, name);
    struct layout l = table_layout(full);
    size_t off = strcmp(what, "data") == 0       ? 100
               : strcmp(what, "index") == 0      ? l.index_off + 3
               : strcmp(what, "filter") == 0     ? l.filter_off + 5
               : strcmp(what, "properties") == 0 ? l.props_off + 7
                                                 : l.footer_off + 20;
    printf("# %s block of %s at byte offset %zu\n", what, name, off);
    flip_bit(full, off);
    expect_reported(dir, name);
    free(dir);
}

static void test_data_block(void **state)
{
    (void)state;
    damage_table_at("data");
}

static void test_index_block(void **state)
{
    (void)state;
    damage_table_at("index");
}

static void test_filter_block(void **state)
{
    (void)state;
    damage_table_at("filter");
}

static void test_properties_block(void **state)
{
    (void)state;
    damage_table_at("properties");
}

static void test_footer(void **state)
{
    (void)state;
    damage_table_at("footer");
}

static void test_missing_table(void **state)
{
    (void)state;
    char *dir = build_db();
    char name[64], full[4096];
    find_file(dir, "", ".sst", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    assert_int_equal(unlink(full), 0);
    expect_reported(dir, name);
    free(dir);
}

static void test_truncated_table(void **state)
{
    (void)state;
    char *dir = build_db();
    char name[64], full[4096];
    find_file(dir, "", ".sst", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    truncate_to(full, file_size(full) / 2);
    expect_reported(dir, name);
    free(dir);
}

/* allow_mmap_reads: an undamaged database reads back whole (gets, scans
** both ways, verify), with uncompressed blocks and, where this build has
** lz4, compressed ones (decompressed into the cache from the map). */
static void test_mmap_reads_undamaged(void **state)
{
    (void)state;
    static const char *const how[] = {OPTS, OPTS ";compression=lz4"};
    for (size_t i = 0; i < sizeof how / sizeof how[0]; i++) {
        ravel_options *o;
        TU_OK(ravel_options_new(&o));
        int lz4 = ravel_options_set(o, "compression", "lz4") == RAVEL_OK;
        ravel_options_free(o);
        if (i == 1 && !lz4) {
            printf("# no lz4 in this build: compressed blocks not tried\n");
            continue;
        }
        char *dir = build_db_with(how[i]);
        char opts[256];
        snprintf(opts, sizeof opts, "%s;allow_mmap_reads=true", how[i]);
        ravel_db *db = tu_open_ok(dir, opts);
        struct seen s = {0};
        read_all(db, &s, "nothing");
        if (s.corrupt)
            fail_msg("allow_mmap_reads, %s: an undamaged database reported "
                     "%s", how[i], s.first);
        TU_OK(ravel_close(db));
        free(dir);
    }
}

static void test_data_block_mmap(void **state)
{
    (void)state;
    reopen_opts = MMAP_OPTS;
    damage_table_at("data");
    reopen_opts = OPTS;
}

static void test_index_block_mmap(void **state)
{
    (void)state;
    reopen_opts = MMAP_OPTS;
    damage_table_at("index");
    reopen_opts = OPTS;
}

static void test_footer_mmap(void **state)
{
    (void)state;
    reopen_opts = MMAP_OPTS;
    damage_table_at("footer");
    reopen_opts = OPTS;
}

/* A table shorter than the manifest says, by half or by its last byte, is
** refused when opened for reading, never mapped past its end (SIGBUS). */
static void test_truncated_table_mmap(void **state)
{
    (void)state;
    reopen_opts = MMAP_OPTS;
    for (int by_one = 0; by_one <= 1; by_one++) {
        char *dir = build_db();
        char name[64], full[4096];
        find_file(dir, "", ".sst", name, sizeof name);
        snprintf(full, sizeof full, "%s/%s", dir, name);
        size_t len = file_size(full);
        truncate_to(full, by_one ? len - 1 : len / 2);
        expect_reported(dir, name);
        free(dir);
    }
    reopen_opts = OPTS;
}

/* allow_mmap_reads: an iterator's blocks are in its tables' maps, so the
** iterator must keep its tables open (and mapped) after a compaction has
** replaced and deleted them and a small table cache has evicted them:
** the key and value it shows, and every later step both ways, read what
** it was opened on, never an unmapped page or a newer value. */
static void test_mmap_iterator_outlives_compaction(void **state)
{
    (void)state;
    char *dir = build_db();
    ravel_db *db = tu_open_ok(dir, MMAP_OPTS ";max_open_files=16");
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, NULL, &it));
    TU_OK(ravel_iter_seek(it, "key001000", 9));
    assert_true(ravel_iter_valid(it));
    size_t klen, vlen;
    const char *k0 = ravel_iter_key(it, &klen);
    const char *v0 = ravel_iter_value(it, &vlen);
    char k[32], v[128];
    /* every value rewritten, the old tables compacted away and deleted */
    for (int i = 0; i < KEYS; i++) {
        key_of(k, sizeof k, i);
        tu_put(db, 0, k, "new");
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    for (int i = 0; i < KEYS; i += 7) { /* churn the table cache */
        key_of(k, sizeof k, i);
        void *got = NULL;
        size_t len = 0;
        TU_OK(ravel_get(db, NULL, k, strlen(k), &got, &len));
        assert_true(len == 3 && memcmp(got, "new", 3) == 0);
        ravel_free(got);
    }
    val_of(v, sizeof v, 1000);
    assert_true(klen == 9 && memcmp(k0, "key001000", 9) == 0);
    assert_true(vlen == strlen(v) && memcmp(v0, v, vlen) == 0);
    int n = 0;
    for (; ravel_iter_valid(it); ravel_iter_next(it), n++) {
        const char *kk = ravel_iter_key(it, &klen);
        const char *vv = ravel_iter_value(it, &vlen);
        key_of(k, sizeof k, 1000 + n);
        val_of(v, sizeof v, 1000 + n);
        if (klen != strlen(k) || memcmp(kk, k, klen) || vlen != strlen(v) ||
            memcmp(vv, v, vlen))
            fail_msg("step %d after the compaction: not %s's old value", n,
                     k);
    }
    assert_int_equal(ravel_iter_status(it), RAVEL_OK);
    assert_int_equal(n, KEYS - 1000);
    TU_OK(ravel_iter_seek_to_last(it));
    for (n = 0; ravel_iter_valid(it); ravel_iter_prev(it), n++) {
        const char *vv = ravel_iter_value(it, &vlen);
        val_of(v, sizeof v, KEYS - 1 - n);
        if (vlen != strlen(v) || memcmp(vv, v, vlen))
            fail_msg("backward step %d after the compaction: wrong value", n);
    }
    assert_int_equal(ravel_iter_status(it), RAVEL_OK);
    assert_int_equal(n, KEYS);
    ravel_iter_free(it);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* Reads everything of a damaged database, going on past every error as
** a careless caller would: every get, then a scan each way that keeps
** stepping (and reading key and value) after a failure.  Mixes what was
** returned into *SIG; with STRICT (checksums verified), a value returned
** must be the one written.  Any crash is the failure. */
static uint64_t bytes_hash(const void *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

static uint64_t careless_reads(ravel_db *db, int strict)
{
    uint64_t sig = 0;
    char k[32], v[128];
    for (int i = 0; i < KEYS; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i);
        void *got = NULL;
        size_t len = 0;
        int rc = ravel_get(db, NULL, k, strlen(k), &got, &len);
        if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND && rc != RAVEL_CORRUPT)
            fail_msg("%s: %s", k, ravel_errstr(rc));
        if (strict && rc == RAVEL_OK &&
            (len != strlen(v) || memcmp(got, v, len) != 0))
            fail_msg("%s: wrong value with verify_checksums on", k);
        sig = sig * 31 + (uint64_t)rc * 7 + (rc == RAVEL_OK ? bytes_hash(
                  got, len) : 0);
        ravel_free(got);
    }
    ravel_iter *it;
    if (ravel_iter_new(db, NULL, &it) != RAVEL_OK)
        return sig * 31 + 1;
    for (int dir = 0; dir < 2; dir++) {
        int rc = dir ? ravel_iter_seek_to_last(it)
                     : ravel_iter_seek_to_first(it);
        int errors = 0;
        for (int steps = 0; steps < 2 * KEYS && errors < 8; steps++) {
            if (rc != RAVEL_OK)
                errors++;
            sig = sig * 31 + (uint64_t)rc;
            if (ravel_iter_valid(it)) {
                size_t kl, vl;
                const char *ik = ravel_iter_key(it, &kl);
                const char *iv = ravel_iter_value(it, &vl);
                sig = sig * 31 + bytes_hash(ik, kl) + bytes_hash(iv, vl);
                if (strict && rc == RAVEL_OK) {
                    int n = -1;
                    if (kl == 9 && sscanf(ik, "key%6d", &n) == 1) {
                        val_of(v, sizeof v, n);
                        if (vl != strlen(v) || memcmp(iv, v, vl) != 0)
                            fail_msg("scan: %.9s: wrong value with "
                                     "verify_checksums on", ik);
                    }
                }
            } else if (rc == RAVEL_OK) {
                break;
            }
            rc = dir ? ravel_iter_prev(it) : ravel_iter_next(it);
        }
    }
    ravel_iter_free(it);
    return sig;
}

/* Random damage (1 to 8 bytes of one table file, a fixed seed), read
** carelessly through the map and through pread: with checksums verified,
** errors or right values; without, no crash either way, and the map
** returns exactly what pread returns. */
static void test_mmap_random_damage(void **state)
{
    (void)state;
    char *dir = build_db();
    uint64_t *nums = NULL;
    int n = tu_dir_sst_numbers(dir, &nums);
    assert_true(n > 0);
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ tu_env_u64(
                       "RAVEL_TEST_DAMAGE_SEED", 0);
    int rounds = (int)tu_env_u64("RAVEL_TEST_DAMAGE_ROUNDS", 60), differ = 0;
    for (int round = 0; round < rounds; round++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%06" PRIu64 ".sst", dir,
                 nums[tu_rand(&rng) % (uint64_t)n]);
        char *orig, *data;
        size_t len;
        assert_int_equal(tu_file_read(path, &orig, &len), 0);
        data = malloc(len);
        assert_non_null(data);
        memcpy(data, orig, len);
        int hits = 1 + (int)(tu_rand(&rng) % 8);
        for (int h = 0; h < hits; h++)
            data[tu_rand(&rng) % len] ^= (char)(1 + tu_rand(&rng) % 255);
        assert_int_equal(tu_file_write(path, data, len), 0);
        uint64_t sig[2] = {0, 0};
        for (int verify = 0; verify <= 1; verify++)
            for (int mmap = 0; mmap <= 1; mmap++) {
                char opts[256];
                snprintf(opts, sizeof opts, "%s;read_only=true;"
                         "verify_checksums=%s;allow_mmap_reads=%s", OPTS,
                         verify ? "true" : "false", mmap ? "true" : "false");
                ravel_db *db = NULL;
                int rc = tu_open(dir, opts, &db);
                uint64_t got = (uint64_t)rc;
                if (rc == RAVEL_OK) {
                    got = careless_reads(db, verify);
                    TU_OK(ravel_close(db));
                }
                if (!verify)
                    sig[mmap] = got;
                else if (mmap)
                    differ += got != sig[1];
            }
        if (sig[0] != sig[1])
            fail_msg("round %d (%s): without checksums, reads through the "
                     "map differ from reads through pread", round, path);
        assert_int_equal(tu_file_write(path, orig, len), 0);
        free(orig);
        free(data);
    }
    /* the reads see the damage: verified reads differ from unverified
    ** ones in some rounds (an error where a damaged value was returned) */
    printf("# %d rounds, %d where verifying changed what was read\n",
           rounds, differ);
    assert_true(rounds < 20 || differ > 0);
    free(nums);
    free(dir);
}

static void test_manifest_header(void **state)
{
    (void)state;
    char *dir = build_db();
    char name[64], full[4096];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    flip_bit(full, 3);
    expect_reported(dir, name);
    free(dir);
}

static void test_manifest_record(void **state)
{
    (void)state;
    char *dir = build_db();
    char name[64], full[4096];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    /* inside the first record's payload, with records after it */
    flip_bit(full, 32 + 16 + 10);
    expect_reported(dir, name);
    free(dir);
}

/* A manifest cut in its last record is what a crash during an append
** leaves: tolerated as documented -- the record is dropped.  Here the
** record dropped named a flush whose WAL segments are gone: the open must
** say data is missing rather than open without it. */
static void test_manifest_lost_flush(void **state)
{
    (void)state;
    char *dir = tu_path("corrupt-%d", db_counter++);
    /* keep appending to one manifest: no reopen between the flushes */
    ravel_db *db = tu_open_ok(dir, OPTS);
    char k[32], v[128];
    for (int i = 0; i < KEYS; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i);
        tu_put(db, 0, k, v);
    }
    TU_OK(ravel_flush(db, 0));
    char name[64], full[4096];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    size_t before_last = file_size(full);
    tu_put(db, 0, "late", "x");
    TU_OK(ravel_flush(db, 0)); /* one more record: the one we cut */
    /* the damage happens while the database is open (no new manifest) */
    truncate_to(full, before_last + (file_size(full) - before_last) / 2);
    TU_OK(ravel_close(db));
    /* closing wrote nothing to the manifest: the cut record is still the
    ** last; the WAL segments its flush deleted are gone */
    struct seen s = {0};
    ravel_db *db2 = NULL;
    int rc = tu_open(dir, OPTS, &db2);
    note(&s, rc, "wal-");
    if (rc == RAVEL_OK) {
        tu_expect(db2, NULL, "late", "x"); /* or it must not open */
        TU_OK(ravel_close(db2));
    } else {
        printf("# lost manifest record: %s\n", s.first);
    }
    free(dir);
}

static const char *const recovery_modes[] = {
    "tolerate_corrupted_tail_records", "absolute_consistency", "point_in_time",
    "skip_any_corrupted_records"};

/* The table files of DIR, as a count and a fingerprint of their numbers. */
static uint64_t sst_fingerprint(const char *dir, int *n)
{
    uint64_t *nums = NULL, fp = 0;
    *n = tu_dir_sst_numbers(dir, &nums);
    for (int i = 0; i < *n; i++)
        fp = fp * 1000003 + nums[i];
    free(nums);
    return fp;
}

/* Two flushes appended to one manifest: "a" then "b", each in a table.
** The manifest is left as a crash right after the second flush leaves it:
** that flush's record last (no close record after it), the WAL segments it
** let go deleted. */
static char *two_flushes(void)
{
    char *dir = tu_path("corrupt-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS);
    tu_put(db, 0, "a", "1");
    TU_OK(ravel_flush(db, 0));
    tu_put(db, 0, "b", "2");
    TU_OK(ravel_flush(db, 0));
    char name[64], full[4096];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(full, &data, &len), 0);
    TU_OK(ravel_close(db));
    assert_int_equal(tu_file_write(full, data, len), 0);
    free(data);
    return dir;
}

/* Opening DIR in every recovery mode fails with RAVEL_CORRUPT naming the
** manifest, and leaves every table file where it was. */
static void expect_manifest_refused(const char *dir, const char *damage)
{
    char name[64];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    int n_before;
    uint64_t fp_before = sst_fingerprint(dir, &n_before);
    for (size_t m = 0; m < sizeof recovery_modes / sizeof *recovery_modes;
         m++) {
        char opts[256];
        snprintf(opts, sizeof opts, "%s;wal_recovery_mode=%s", OPTS,
                 recovery_modes[m]);
        ravel_db *db = NULL;
        int rc = tu_open(dir, opts, &db);
        if (rc == RAVEL_OK) {
            ravel_close(db);
            fail_msg("%s: opened in %s", damage, recovery_modes[m]);
        }
        if (rc != RAVEL_CORRUPT || !strstr(ravel_errmsg(), name))
            fail_msg("%s, %s: %s, not RAVEL_CORRUPT naming %s: %s", damage,
                     recovery_modes[m], ravel_errstr(rc), name,
                     ravel_errmsg());
        int n_after;
        if (sst_fingerprint(dir, &n_after) != fp_before || n_after != n_before)
            fail_msg("%s, %s: the refused open changed the table files "
                     "(%d before, %d after)", damage, recovery_modes[m],
                     n_before, n_after);
        printf("# %s, %s: %s\n", damage, recovery_modes[m], ravel_errmsg());
    }
}

/* Damage inside the last record of a manifest whose WAL segments that
** record let go are gone: no torn append did that.  It was taken for one,
** and skip_any_corrupted_records then deleted the newer table. */
static void test_manifest_last_record_damaged(void **state)
{
    (void)state;
    char *dir = two_flushes();
    char name[64], full[4096];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    size_t size = file_size(full);
    flip_bit(full, size - 12); /* in the last record's payload */
    expect_manifest_refused(dir, "a flipped bit in the last record");
    free(dir);
}

/* A manifest cut inside its first record: CURRENT named it only once that
** record was durable, so no crash did it. */
static void test_manifest_cut_in_first_record(void **state)
{
    (void)state;
    char *dir = two_flushes();
    char name[64], full[4096];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    truncate_to(full, 40);
    expect_manifest_refused(dir, "a manifest cut at 40 bytes");
    free(dir);
}

/* What a crash during a flush's manifest append leaves: the table written,
** its record torn, the WAL segments still there.  The open drops the
** record, serves every key from the WAL, and moves the table no manifest
** names into lost/ rather than deleting it. */
static void test_manifest_torn_append_sets_table_aside(void **state)
{
    (void)state;
    char *dir = tu_path("corrupt-%d", db_counter++);
    char *copy = tu_path("corrupt-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS);
    tu_put(db, 0, "a", "1");
    TU_OK(ravel_flush(db, 0));
    tu_put(db, RAVEL_SYNC, "b", "2");
    /* the directory as a crash before the second flush's record left it */
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", dir, copy);
    assert_int_equal(system(cmd), 0);
    char name[64], full[4096], copy_full[4096];
    find_file(dir, "MANIFEST-", "", name, sizeof name);
    snprintf(full, sizeof full, "%s/%s", dir, name);
    snprintf(copy_full, sizeof copy_full, "%s/%s", copy, name);
    size_t before = file_size(full);
    TU_OK(ravel_flush(db, 0));
    /* ... with the flush's table and half of its record written */
    uint64_t *nums = NULL;
    int n = tu_dir_sst_numbers(dir, &nums);
    assert_true(n >= 2);
    uint64_t newest = nums[n - 1];
    free(nums);
    snprintf(cmd, sizeof cmd, "cp '%s/%06llu.sst' '%s/'", dir,
             (unsigned long long)newest, copy);
    assert_int_equal(system(cmd), 0);
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(full, &data, &len), 0);
    assert_true(len > before);
    assert_int_equal(tu_file_write(copy_full, data,
                                   before + (len - before) / 2), 0);
    free(data);
    TU_OK(ravel_close(db));

    ravel_db *db2 = tu_open_ok(copy, OPTS);
    tu_expect(db2, NULL, "a", "1");
    tu_expect(db2, NULL, "b", "2");
    TU_OK(ravel_close(db2));
    char lost[4200];
    snprintf(lost, sizeof lost, "%s/lost/%06llu.sst", copy,
             (unsigned long long)newest);
    if (access(lost, F_OK) != 0)
        fail_msg("the table no manifest names was not kept in %s", lost);
    snprintf(lost, sizeof lost, "%s/lost/%s", copy, name);
    if (access(lost, F_OK) != 0)
        fail_msg("the manifest whose record was dropped was not kept in %s",
                 lost);
    tu_rm_rf(copy);
    free(copy);
    free(dir);
}

static void test_current_missing(void **state)
{
    (void)state;
    char *dir = build_db();
    char full[4096];
    snprintf(full, sizeof full, "%s/CURRENT", dir);
    assert_int_equal(unlink(full), 0);
    expect_reported(dir, "CURRENT");
    free(dir);
}

static void test_current_names_missing_manifest(void **state)
{
    (void)state;
    char *dir = build_db();
    char full[4096];
    snprintf(full, sizeof full, "%s/CURRENT", dir);
    assert_int_equal(tu_file_write(full, "MANIFEST-000999\n", 16), 0);
    expect_reported(dir, "MANIFEST-000999");
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_block),
        cmocka_unit_test(test_index_block),
        cmocka_unit_test(test_filter_block),
        cmocka_unit_test(test_properties_block),
        cmocka_unit_test(test_footer),
        cmocka_unit_test(test_missing_table),
        cmocka_unit_test(test_truncated_table),
        cmocka_unit_test(test_mmap_reads_undamaged),
        cmocka_unit_test(test_data_block_mmap),
        cmocka_unit_test(test_index_block_mmap),
        cmocka_unit_test(test_footer_mmap),
        cmocka_unit_test(test_truncated_table_mmap),
        cmocka_unit_test(test_mmap_iterator_outlives_compaction),
        cmocka_unit_test(test_mmap_random_damage),
        cmocka_unit_test(test_manifest_header),
        cmocka_unit_test(test_manifest_record),
        cmocka_unit_test(test_manifest_lost_flush),
        cmocka_unit_test(test_manifest_last_record_damaged),
        cmocka_unit_test(test_manifest_cut_in_first_record),
        cmocka_unit_test(test_manifest_torn_append_sets_table_aside),
        cmocka_unit_test(test_current_missing),
        cmocka_unit_test(test_current_names_missing_manifest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
