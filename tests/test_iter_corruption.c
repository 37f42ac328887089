/*
** test_iter_corruption.c -- an iterator stops at its first error and never
** shows another entry: no stale version from a deeper level, no key the
** damaged file deleted, whatever the caller asks of it afterwards.
**
** The database is layered so that going on past damage would show wrong
** data: every key written at version 1 and compacted to the last level,
** then every key rewritten at version 2 (every fifth one deleted instead)
** and flushed to level 0 above it.  One block of one file is damaged --
** each kind of block, in a level-0 file and in a last-level file -- and
** the database is read as a careless program would: step while
** ravel_iter_valid, read key and value after every call, ignore the
** result codes until the end.  Every entry shown must be the next live key
** at version 2; after the first error nothing may be shown, and every
** positioning call and ravel_iter_status must return that error with its
** message.  Forward and backward, from the ends and from seeks.
*/
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPTS "write_buffer_size=64K;target_file_size_base=64K;" \
             "disable_auto_compactions=true"
#define KEYS 2000

static int db_counter;

static void key_of(char *b, size_t n, int i)
{
    snprintf(b, n, "key%06d", i);
}

static void val_of(char *b, size_t n, int i, int version)
{
    snprintf(b, n, "v%d-%d-%060d", version, i, i);
}

/* Whether key I is live at the end (version 2 deleted every fifth). */
static int live(int i)
{
    return i % 5 != 0;
}

/* Builds the layered database; the numbers of one level-0 file and one
** last-level file in *UPPER and *LOWER. */
static char *build_db(uint64_t *upper, uint64_t *lower)
{
    char *dir = tu_path("itercorrupt-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS);
    char k[32], v[128];
    for (int i = 0; i < KEYS; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i, 1);
        tu_put(db, 0, k, v);
    }
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    for (int i = 0; i < KEYS; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i, 2);
        if (live(i))
            tu_put(db, 0, k, v);
        else
            TU_OK(ravel_delete(db, 0, k, strlen(k)));
    }
    TU_OK(ravel_flush(db, 0));
    struct tu_sst *ssts;
    int n = tu_sstables(db, &ssts);
    int deepest = 0;
    for (int i = 0; i < n; i++)
        if (ssts[i].level > deepest)
            deepest = ssts[i].level;
    /* the middle file of each: entries on both sides of it */
    int seen[2] = {0, 0}, count[2] = {0, 0};
    for (int i = 0; i < n; i++)
        count[ssts[i].level == 0 ? 0 : 1] += ssts[i].level == 0 ||
                                             ssts[i].level == deepest;
    *upper = *lower = 0;
    for (int i = 0; i < n; i++) {
        int which = ssts[i].level == 0 ? 0 : ssts[i].level == deepest ? 1
                                                                      : -1;
        if (which >= 0 && seen[which]++ == count[which] / 2)
            *(which ? lower : upper) = ssts[i].number;
    }
    free(ssts);
    assert_true(*upper != 0 && *lower != 0);
    TU_OK(ravel_close(db));
    return dir;
}

/* Offsets of a table's blocks, from its 80-byte footer
** (docs/formats.md). */
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

/* Flips a bit inside block WHAT of table NUMBER in DIR. */
static void damage(const char *dir, uint64_t number, const char *what)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%06llu.sst", dir,
             (unsigned long long)number);
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    const unsigned char *f = (const unsigned char *)data + len - 80;
    struct layout l = {get64(f), get64(f + 16), get64(f + 32), len - 80};
    /* a data block in the middle of the file: entries on both sides */
    size_t off = strcmp(what, "data") == 0       ? l.index_off / 2
               : strcmp(what, "index") == 0      ? l.index_off + 3
               : strcmp(what, "filter") == 0     ? l.filter_off + 5
               : strcmp(what, "properties") == 0 ? l.props_off + 7
                                                 : l.footer_off + 20;
    assert_true(off < len);
    data[off] ^= 0x10;
    assert_int_equal(tu_file_write(path, data, len), 0);
    free(data);
}

enum how { FROM_FIRST, FROM_LAST, SEEK_NEXT, SEEK_FOR_PREV_PREV };
static const char *const how_names[] = {"from the first key, forward",
                                        "from the last key, backward",
                                        "from a seek, forward",
                                        "from a seek_for_prev, backward"};

/* The live key after (STEP 1) or before (STEP -1) key I, or -1. */
static int next_live(int i, int step)
{
    for (i += step; i >= 0 && i < KEYS; i += step)
        if (live(i))
            return i;
    return -1;
}

/* Every positioning call and the status of a stopped iterator return RC
** with the message FIRST, and leave it invalid and showing nothing. */
static void expect_stays_stopped(ravel_iter *it, int rc, const char *first,
                                 const char *what)
{
    char k[32];
    key_of(k, sizeof k, KEYS / 2);
    for (int call = 0; call < 7; call++) {
        int got;
        switch (call) {
        case 0: got = ravel_iter_status(it); break;
        case 1: got = ravel_iter_next(it); break;
        case 2: got = ravel_iter_prev(it); break;
        case 3: got = ravel_iter_seek_to_first(it); break;
        case 4: got = ravel_iter_seek_to_last(it); break;
        case 5: got = ravel_iter_seek(it, k, strlen(k)); break;
        default: got = ravel_iter_seek_for_prev(it, k, strlen(k)); break;
        }
        if (got != rc)
            fail_msg("%s: call %d on the stopped iterator returned %s, not "
                     "its error %s", what, call, ravel_errstr(got),
                     ravel_errstr(rc));
        if (strcmp(ravel_errmsg(), first) != 0)
            fail_msg("%s: call %d on the stopped iterator says \"%s\", not "
                     "\"%s\"", what, call, ravel_errmsg(), first);
        size_t kl = 1, vl = 1;
        if (ravel_iter_valid(it) || ravel_iter_key(it, &kl) ||
            ravel_iter_value(it, &vl) || kl || vl)
            fail_msg("%s: the iterator shows an entry after call %d past "
                     "its error", what, call);
    }
}

/* Reads the database the careless way; returns 1 if the damage was met. */
static int scan(ravel_db *db, enum how how, const char *what)
{
    ravel_iter *it;
    int rc = ravel_iter_new(db, NULL, &it);
    if (rc != RAVEL_OK) {
        assert_int_equal(rc, RAVEL_CORRUPT);
        return 1;
    }
    char k[32], v[128];
    int step = how == FROM_FIRST || how == SEEK_NEXT ? 1 : -1;
    int start = how == FROM_FIRST  ? 0
              : how == FROM_LAST   ? KEYS - 1
              : how == SEEK_NEXT   ? KEYS / 3
                                   : 2 * KEYS / 3;
    int expect = next_live(start - step, step); /* start itself if live */
    key_of(k, sizeof k, start);
    rc = how == FROM_FIRST  ? ravel_iter_seek_to_first(it)
       : how == FROM_LAST   ? ravel_iter_seek_to_last(it)
       : how == SEEK_NEXT   ? ravel_iter_seek(it, k, strlen(k))
                            : ravel_iter_seek_for_prev(it, k, strlen(k));
    int first_rc = rc, shown = 0, after_error = 0;
    char first[600] = "";
    if (rc)
        snprintf(first, sizeof first, "%s", ravel_errmsg());
    while (ravel_iter_valid(it)) {
        size_t kl, vl;
        const char *ik = ravel_iter_key(it, &kl);
        const char *iv = ravel_iter_value(it, &vl);
        if (first_rc != RAVEL_OK)
            after_error++;
        else if (expect < 0)
            fail_msg("%s, %s: an entry past the last live key", what,
                     how_names[how]);
        else {
            key_of(k, sizeof k, expect);
            val_of(v, sizeof v, expect, 2);
            if (kl != strlen(k) || memcmp(ik, k, kl))
                fail_msg("%s, %s: showed \"%.*s\" where \"%s\" is the next "
                         "live key", what, how_names[how], (int)kl, ik, k);
            if (vl != strlen(v) || memcmp(iv, v, vl))
                fail_msg("%s, %s: %s shows \"%.*s\", not its version 2",
                         what, how_names[how], k, (int)(vl > 12 ? 12 : vl),
                         iv);
            expect = next_live(expect, step);
        }
        shown++;
        rc = step > 0 ? ravel_iter_next(it) : ravel_iter_prev(it);
        if (rc && first_rc == RAVEL_OK) {
            first_rc = rc;
            snprintf(first, sizeof first, "%s", ravel_errmsg());
        }
    }
    if (after_error)
        fail_msg("%s, %s: %d entries shown after the iterator's error (%s)",
                 what, how_names[how], after_error, first);
    rc = ravel_iter_status(it);
    if (rc != first_rc)
        fail_msg("%s, %s: ravel_iter_status says %s after a scan that met "
                 "%s", what, how_names[how], ravel_errstr(rc),
                 ravel_errstr(first_rc));
    if (rc == RAVEL_OK && expect >= 0)
        fail_msg("%s, %s: the scan ended early with no error, before key "
                 "%d", what, how_names[how], expect);
    if (rc != RAVEL_OK) {
        assert_int_equal(rc, RAVEL_CORRUPT);
        expect_stays_stopped(it, rc, first, what);
    }
    printf("# %s, %s: %d entries, then %s\n", what, how_names[how], shown,
           rc ? first : "the end");
    ravel_iter_free(it);
    return rc != RAVEL_OK;
}

static void damage_and_scan(const char *block, int upper_file)
{
    for (int how = FROM_FIRST; how <= SEEK_FOR_PREV_PREV; how++) {
        uint64_t upper, lower;
        char *dir = build_db(&upper, &lower);
        uint64_t number = upper_file ? upper : lower;
        char what[128];
        snprintf(what, sizeof what, "%s block of %06llu.sst (%s)", block,
                 (unsigned long long)number,
                 upper_file ? "level 0" : "last level");
        damage(dir, number, block);
        ravel_db *db = NULL;
        int rc = tu_open(dir, OPTS, &db);
        if (rc != RAVEL_OK) {
            assert_int_equal(rc, RAVEL_CORRUPT);
        } else {
            int met = scan(db, (enum how)how, what);
            /* a whole scan reads every block of every file */
            if (!met && (how == FROM_FIRST || how == FROM_LAST))
                fail_msg("%s, %s: the damage went unreported", what,
                         how_names[how]);
            TU_OK(ravel_close(db));
        }
        tu_rm_rf(dir);
        free(dir);
    }
}

static void test_data_block_level0(void **state)
{
    (void)state;
    damage_and_scan("data", 1);
}

static void test_data_block_last_level(void **state)
{
    (void)state;
    damage_and_scan("data", 0);
}

static void test_index_block_level0(void **state)
{
    (void)state;
    damage_and_scan("index", 1);
}

static void test_index_block_last_level(void **state)
{
    (void)state;
    damage_and_scan("index", 0);
}

static void test_filter_block(void **state)
{
    (void)state;
    damage_and_scan("filter", 1);
    damage_and_scan("filter", 0);
}

static void test_properties_block(void **state)
{
    (void)state;
    damage_and_scan("properties", 1);
    damage_and_scan("properties", 0);
}

static void test_footer(void **state)
{
    (void)state;
    damage_and_scan("footer", 1);
    damage_and_scan("footer", 0);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_block_level0),
        cmocka_unit_test(test_data_block_last_level),
        cmocka_unit_test(test_index_block_level0),
        cmocka_unit_test(test_index_block_last_level),
        cmocka_unit_test(test_filter_block),
        cmocka_unit_test(test_properties_block),
        cmocka_unit_test(test_footer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
