/*
** test_multi_get.c -- ravel_multi_get: each key's value or RAVEL_NOTFOUND
** in the caller's order (keys unsorted, repeated, missing, deleted, empty
** values), from the memtable and from table files; through a snapshot;
** N == 0; misuse returning no value at all; and, with a writer that keeps
** every key equal in each batch, never two different values in one call:
** all keys are read at one sequence.  Run once per WAL I/O path
** (RAVEL_TEST_WAL_IO).
*/
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int db_counter;

static char *new_dir(const char *what)
{
    return tu_path("mg-%s-%d", what, db_counter++);
}

/* Up to this many keys a call in these tests. */
#define MG_MAX 64

/* The arrays of one call, with keys given as NUL-terminated strings. */
struct mg_call {
    size_t n;
    const void *keys[MG_MAX];
    size_t klens[MG_MAX];
    void *vals[MG_MAX];
    size_t vlens[MG_MAX];
    int rcs[MG_MAX];
};

static void mg_set_keys(struct mg_call *c, const char *const *keys, size_t n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    for (size_t i = 0; i < n; i++) {
        c->keys[i] = keys[i];
        c->klens[i] = strlen(keys[i]);
    }
}

static void mg_free_values(struct mg_call *c)
{
    for (size_t i = 0; i < c->n; i++) {
        ravel_free(c->vals[i]);
        c->vals[i] = NULL;
    }
}

/* Key I of the call holds WANT (NULL: not found). */
static void mg_expect(const struct mg_call *c, size_t i, const char *want)
{
    if (!want) {
        if (c->rcs[i] != RAVEL_NOTFOUND || c->vals[i] || c->vlens[i])
            fail_msg("key %zu (%.*s): rc %d, value %p, want not found", i,
                     (int)c->klens[i], (const char *)c->keys[i], c->rcs[i],
                     c->vals[i]);
        return;
    }
    if (c->rcs[i] != RAVEL_OK)
        fail_msg("key %zu (%.*s): rc %d (%s), want '%s'", i,
                 (int)c->klens[i], (const char *)c->keys[i], c->rcs[i],
                 ravel_errstr(c->rcs[i]), want);
    assert_non_null(c->vals[i]);
    if (c->vlens[i] != strlen(want) ||
        memcmp(c->vals[i], want, c->vlens[i]) != 0)
        fail_msg("key %zu: '%.*s', want '%s'", i, (int)c->vlens[i],
                 (const char *)c->vals[i], want);
}

/* Present, missing, deleted, repeated and empty-valued keys in no order,
** first from the memtable, then from table files after a flush. */
static void test_values_in_callers_order(void **state)
{
    (void)state;
    char *dir = new_dir("order");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "b", "vb");
    tu_put(db, 0, "a", "va");
    tu_put(db, 0, "d", "vd");
    tu_put(db, 0, "gone", "x");
    TU_OK(ravel_delete(db, 0, "gone", 4));
    TU_OK(ravel_put(db, 0, "empty", 5, "", 0));
    static const char *const keys[] = {"d", "zz", "a", "gone", "b", "a",
                                       "empty", ""};
    static const char *const want[] = {"vd", NULL, "va", NULL, "vb", "va",
                                       "", NULL};
    for (int round = 0; round < 2; round++) {
        struct mg_call c;
        mg_set_keys(&c, keys, 8);
        TU_OK(ravel_multi_get(db, NULL, c.n, c.keys, c.klens, c.vals,
                              c.vlens, c.rcs));
        for (size_t i = 0; i < c.n; i++)
            mg_expect(&c, i, want[i]);
        mg_free_values(&c);
        TU_OK(ravel_flush(db, 0)); /* the second round reads table files */
    }
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* Keys spread over the memtable, level-0 files and deeper levels, with
** newer versions in the memtable hiding older ones in tables. */
static void test_across_memtable_and_tables(void **state)
{
    (void)state;
    char *dir = new_dir("levels");
    ravel_db *db = tu_open_ok(dir, NULL);
    char keys_text[MG_MAX][8], want[MG_MAX][16];
    const char *keys[MG_MAX];
    for (int i = 0; i < MG_MAX; i++) {
        snprintf(keys_text[i], sizeof keys_text[i], "k%02d", i);
        keys[i] = keys_text[i];
        snprintf(want[i], sizeof want[i], "old%02d", i);
        tu_put(db, 0, keys[i], want[i]);
    }
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0)); /* to the last level */
    for (int i = 0; i < MG_MAX; i += 3) {
        snprintf(want[i], sizeof want[i], "l0-%02d", i);
        tu_put(db, 0, keys[i], want[i]);
    }
    TU_OK(ravel_flush(db, 0)); /* a level-0 file */
    for (int i = 0; i < MG_MAX; i += 5) {
        snprintf(want[i], sizeof want[i], "mem%02d", i);
        tu_put(db, 0, keys[i], want[i]);
    }
    struct mg_call c;
    mg_set_keys(&c, keys, MG_MAX);
    TU_OK(ravel_multi_get(db, NULL, c.n, c.keys, c.klens, c.vals, c.vlens,
                          c.rcs));
    for (int i = 0; i < MG_MAX; i++)
        mg_expect(&c, (size_t)i, want[i]);
    mg_free_values(&c);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* Through a snapshot: the values when it was taken. */
static void test_snapshot(void **state)
{
    (void)state;
    char *dir = new_dir("snap");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    tu_put(db, 0, "b", "1");
    ravel_snapshot *snap;
    TU_OK(ravel_snapshot_acquire(db, &snap));
    tu_put(db, 0, "a", "2");
    TU_OK(ravel_delete(db, 0, "b", 1));
    tu_put(db, 0, "c", "2");
    ravel_readoptions *ro;
    TU_OK(ravel_readoptions_new(&ro));
    TU_OK(ravel_readoptions_set_snapshot(ro, snap));
    static const char *const keys[] = {"a", "b", "c"};
    struct mg_call c;
    mg_set_keys(&c, keys, 3);
    TU_OK(ravel_multi_get(db, ro, c.n, c.keys, c.klens, c.vals, c.vlens,
                          c.rcs));
    mg_expect(&c, 0, "1");
    mg_expect(&c, 1, "1");
    mg_expect(&c, 2, NULL);
    mg_free_values(&c);
    TU_OK(ravel_multi_get(db, NULL, c.n, c.keys, c.klens, c.vals, c.vlens,
                          c.rcs)); /* no options: the latest state */
    mg_expect(&c, 0, "2");
    mg_expect(&c, 1, NULL);
    mg_expect(&c, 2, "2");
    mg_free_values(&c);
    ravel_readoptions_free(ro);
    TU_OK(ravel_snapshot_release(db, snap));
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

/* N == 0 is RAVEL_OK with NULL arrays; a NULL array with keys, a key too
** long, or another handle's snapshot is RAVEL_INVALID with a message, and
** no value is returned: every VALS[i] NULL, every RCS[i] the code. */
static void test_misuse(void **state)
{
    (void)state;
    char *dir = new_dir("misuse");
    char *other_dir = new_dir("misuse-other");
    ravel_db *db = tu_open_ok(dir, NULL);
    ravel_db *other = tu_open_ok(other_dir, NULL);
    tu_put(db, 0, "a", "va");
    TU_OK(ravel_multi_get(db, NULL, 0, NULL, NULL, NULL, NULL, NULL));

    /* no database: the outputs are still cleared, each code set */
    {
        static const char *const one[] = {"a"};
        struct mg_call z;
        mg_set_keys(&z, one, 1);
        z.vals[0] = (void *)&z; /* junk a careless caller would free */
        z.vlens[0] = 77;
        z.rcs[0] = 12345;
        TU_EXPECT_INVALID(ravel_multi_get(NULL, NULL, 1, z.keys, z.klens,
                                          z.vals, z.vlens, z.rcs));
        assert_null(z.vals[0]);
        assert_int_equal(z.vlens[0], 0);
        assert_int_equal(z.rcs[0], RAVEL_INVALID);
    }

    static const char *const keys[] = {"a", "b"};
    struct mg_call c;
    mg_set_keys(&c, keys, 2);
    TU_EXPECT_INVALID(ravel_multi_get(db, NULL, 2, NULL, c.klens, c.vals,
                                      c.vlens, c.rcs));
    TU_EXPECT_INVALID(ravel_multi_get(db, NULL, 2, c.keys, c.klens, c.vals,
                                      c.vlens, NULL));

    static char big[RAVEL_MAX_KEY_SIZE + 1];
    c.keys[1] = big;
    c.klens[1] = sizeof big;
    TU_EXPECT_INVALID(ravel_multi_get(db, NULL, 2, c.keys, c.klens, c.vals,
                                      c.vlens, c.rcs));
    for (size_t i = 0; i < 2; i++) {
        assert_null(c.vals[i]);
        assert_int_equal(c.vlens[i], 0);
        assert_int_equal(c.rcs[i], RAVEL_INVALID);
    }

    mg_set_keys(&c, keys, 2);
    ravel_snapshot *theirs;
    TU_OK(ravel_snapshot_acquire(other, &theirs));
    ravel_readoptions *ro;
    TU_OK(ravel_readoptions_new(&ro));
    TU_OK(ravel_readoptions_set_snapshot(ro, theirs));
    TU_EXPECT_INVALID(ravel_multi_get(db, ro, 2, c.keys, c.klens, c.vals,
                                      c.vlens, c.rcs));
    assert_null(c.vals[0]);
    ravel_readoptions_free(ro);
    TU_OK(ravel_snapshot_release(other, theirs));
    TU_OK(ravel_close(other));
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    tu_rm_rf(other_dir);
    free(dir);
    free(other_dir);
}

/* ------------------------------------------------ one state per call */

#define EQ_KEYS 48

struct equal_writer {
    ravel_db *db;
    atomic_int stop;
    uint64_t batches;
};

static void eq_key(int i, char key[8])
{
    snprintf(key, 8, "e%02d", i);
}

/* Writes batch after batch, each setting every key to the same value (the
** batch's number, with padding so that memtables fill and flush): any
** state of the database holds one value in every key. */
static void *equal_writer_run(void *arg)
{
    struct equal_writer *w = arg;
    ravel_batch *b;
    if (ravel_batch_new(&b) != RAVEL_OK) {
        tu_thread_fail("ravel_batch_new failed");
        return NULL;
    }
    /* relaxed: a flag; nothing else is read through it */
    while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
        char val[128];
        int len = snprintf(val, sizeof val, "%08llu",
                           (unsigned long long)++w->batches);
        memset(val + len, '.', sizeof val - (size_t)len);
        ravel_batch_clear(b);
        for (int i = 0; i < EQ_KEYS; i++) {
            char key[8];
            eq_key(i, key);
            if (ravel_batch_put(b, key, strlen(key), val, sizeof val)) {
                tu_thread_fail("ravel_batch_put: %s", ravel_errmsg());
                goto out;
            }
        }
        int rc = ravel_write(w->db, 0, b);
        if (rc) {
            tu_thread_fail("ravel_write: %s", ravel_errmsg());
            break;
        }
    }
out:
    ravel_batch_free(b);
    return NULL;
}

/* A writer keeps every key equal in each batch, memtables switching and
** flushing under it; every multi-get of all the keys (in shuffled order)
** must find one value in all of them.  N calls of ravel_get would not:
** a batch may land between two of them. */
static void test_one_state_under_a_writer(void **state)
{
    (void)state;
    char *dir = new_dir("equal");
    ravel_db *db = tu_open_ok(dir, "write_buffer_size=64K");
    struct equal_writer w = {.db = db};
    char keys_text[EQ_KEYS][8];
    const void *keys[EQ_KEYS];
    size_t klens[EQ_KEYS];
    void *vals[EQ_KEYS];
    size_t vlens[EQ_KEYS];
    int rcs[EQ_KEYS];
    for (int i = 0; i < EQ_KEYS; i++) {
        eq_key((i * 7) % EQ_KEYS, keys_text[i]); /* not in key order */
        keys[i] = keys_text[i];
        klens[i] = strlen(keys_text[i]);
    }
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, equal_writer_run, &w), 0);
    uint64_t calls = 0, seen_all = 0, start = tu_now_ms();
    while (tu_now_ms() - start < 1500 && !tu_thread_failures()) {
        TU_OK(ravel_multi_get(db, NULL, EQ_KEYS, keys, klens, vals, vlens,
                              rcs));
        calls++;
        int found = 0;
        for (int i = 0; i < EQ_KEYS; i++)
            found += rcs[i] == RAVEL_OK;
        if (found != 0 && found != EQ_KEYS)
            fail_msg("call %llu: %d of %d keys found: a batch seen in part",
                     (unsigned long long)calls, found, EQ_KEYS);
        for (int i = 1; found && i < EQ_KEYS; i++)
            if (vlens[i] != vlens[0] || memcmp(vals[i], vals[0], 8) != 0)
                fail_msg("call %llu: key %s holds %.8s, key %s %.8s: two "
                         "states in one multi-get",
                         (unsigned long long)calls, keys_text[0],
                         (const char *)vals[0], keys_text[i],
                         (const char *)vals[i]);
        seen_all += found == EQ_KEYS;
        for (int i = 0; i < EQ_KEYS; i++)
            ravel_free(vals[i]);
    }
    atomic_store_explicit(&w.stop, 1, memory_order_relaxed);
    pthread_join(th, NULL);
    tu_assert_no_thread_failures();
    uint64_t flushes = tu_prop_u64(db, "ravel.num-files-at-level0") +
                       tu_prop_u64(db, "ravel.num-files-at-level1");
    printf("# %llu multi-gets, %llu batches written, %llu table files\n",
           (unsigned long long)calls, (unsigned long long)w.batches,
           (unsigned long long)flushes);
    assert_true(seen_all > 0);
    TU_OK(ravel_close(db));
    tu_rm_rf(dir);
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_in_callers_order),
        cmocka_unit_test(test_across_memtable_and_tables),
        cmocka_unit_test(test_snapshot),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_one_state_under_a_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
