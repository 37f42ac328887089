/*
** test_table.c -- table files (lib/table/table_builder.c, table.c): what
** is written reads back in order both ways, with seeks, properties and the
** filter right; and a flipped bit anywhere in a file, or a cut, is
** reported as RAVEL_CORRUPT by the open or by rv_table_verify -- never
** returned as data.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/dbformat.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "util/coding.h"

#define MAXN 20000

struct entry {
    char key[40];
    size_t klen;
    char val[80];
    size_t vlen;
};

static char g_dir[] = "/tmp/ravel-table-XXXXXX";
static struct entry g_e[MAXN];

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return rv_ikey_compare(x->key, x->klen, y->key, y->klen);
}

/* N entries: user keys "key-NNNNNN" (some with two versions), a tenth of
** them deletions. */
static int make_entries(int n, uint64_t *rng)
{
    for (int i = 0; i < n; i++) {
        struct entry *e = &g_e[i];
        int uk = (int)(rng_next(rng) % (uint64_t)(n * 3 / 4 + 1));
        int ul = snprintf(e->key, sizeof e->key, "key-%06d", uk);
        int type = i % 10 == 0 ? RV_TYPE_DELETE : RV_TYPE_PUT;
        rv_put_fixed64(e->key + ul, rv_pack_tag((uint64_t)i + 100, type));
        e->klen = (size_t)ul + 8;
        e->vlen = type == RV_TYPE_PUT ? rng_next(rng) % 70 : 0;
        for (size_t k = 0; k < e->vlen; k++)
            e->val[k] = (char)('A' + (i * 7 + k) % 26);
    }
    qsort(g_e, (size_t)n, sizeof g_e[0], entry_cmp);
    return n;
}

static char *path_of(uint64_t number)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%06llu.sst", g_dir, (unsigned long long)number);
    return p;
}

static uint64_t write_table(uint64_t number, int n, int bloom_bits,
                            struct rv_table_props *props)
{
    const char *path = path_of(number);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    struct rv_table_options o = {.block_size = 512,
                                 .block_restart_interval = 8,
                                 .bloom_bits_per_key = bloom_bits};
    rv_table_builder *tb;
    assert_int_equal(rv_table_builder_new(fd, path, number, &o, &tb),
                     RAVEL_OK);
    for (int i = 0; i < n; i++)
        assert_int_equal(rv_table_builder_add(tb, g_e[i].key, g_e[i].klen,
                                              g_e[i].val, g_e[i].vlen),
                         RAVEL_OK);
    uint64_t size;
    assert_int_equal(rv_table_builder_finish(tb, props, &size), RAVEL_OK);
    rv_table_builder_free(tb);
    close(fd);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((uint64_t)st.st_size, size);
    return size;
}

static int open_table(uint64_t number, uint64_t file_number, rv_table **t)
{
    const char *path = path_of(number);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    struct rv_table_read_options ro = {.verify_checksums = 1};
    return rv_table_open(fd, path, file_number, (uint64_t)st.st_size, &ro,
                         t);
}

static void expect_at(struct rv_iter *it, const struct entry *e)
{
    assert_true(it->ops->valid(it));
    size_t kl, vl;
    const char *k = it->ops->key(it, &kl);
    const char *v = it->ops->value(it, &vl);
    assert_int_equal(kl, e->klen);
    assert_memory_equal(k, e->key, kl);
    assert_int_equal(vl, e->vlen);
    if (vl)
        assert_memory_equal(v, e->val, vl);
}

static void test_round_trip(void **state)
{
    (void)state;
    uint64_t rng = 99;
    int n = make_entries(MAXN, &rng);
    struct rv_table_props p;
    write_table(7, n, 10, &p);
    rv_table *t;
    assert_int_equal(open_table(7, 7, &t), RAVEL_OK);
    const struct rv_table_props *rp = rv_table_props(t);
    assert_int_equal(rp->entries, (uint64_t)n);
    assert_int_equal(rp->deletions, p.deletions);
    assert_true(rp->deletions > 0);
    assert_int_equal(rp->smallest_seq, 100);
    assert_int_equal(rp->largest_seq, 100 + (uint64_t)n - 1);
    assert_true(rp->data_blocks > 100);
    assert_int_equal(rp->bloom_bits_per_key, 10);
    size_t l;
    const char *k = rv_table_smallest_key(t, &l);
    assert_int_equal(l, g_e[0].klen);
    assert_memory_equal(k, g_e[0].key, l);
    k = rv_table_largest_key(t, &l);
    assert_memory_equal(k, g_e[n - 1].key, l);

    struct rv_iter *it = rv_table_iter_new(t);
    int i = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        expect_at(it, &g_e[i++]);
    assert_int_equal(i, n);
    for (it->ops->seek_to_last(it); it->ops->valid(it); it->ops->prev(it))
        expect_at(it, &g_e[--i]);
    assert_int_equal(i, 0);
    for (int j = 0; j < n; j += 7) {
        it->ops->seek(it, g_e[j].key, g_e[j].klen);
        expect_at(it, &g_e[j]);
        it->ops->seek_for_prev(it, g_e[j].key, g_e[j].klen);
        expect_at(it, &g_e[j]);
        if (j + 1 < n) {
            it->ops->next(it);
            expect_at(it, &g_e[j + 1]);
            it->ops->prev(it);
            expect_at(it, &g_e[j]);
        }
    }
    it->ops->seek(it, "zzz\0\0\0\0\0\0\0\0", 11);
    assert_false(it->ops->valid(it));
    it->ops->seek_for_prev(it, "a\0\0\0\0\0\0\0\0", 9);
    assert_false(it->ops->valid(it));
    assert_int_equal(it->ops->status(it), RAVEL_OK);
    it->ops->destroy(it);

    for (int j = 0; j < n; j++)
        if (!rv_table_may_contain(t, g_e[j].key, g_e[j].klen - 8))
            fail_msg("the filter refuses a key the table holds");
    int fp = 0;
    char absent[32];
    for (int j = 0; j < 10000; j++) {
        int al = snprintf(absent, sizeof absent, "absent-%06d", j);
        fp += rv_table_may_contain(t, absent, (size_t)al);
    }
    assert_true(fp < 300);
    assert_int_equal(rv_table_verify(t), RAVEL_OK);
    rv_table_close(t);
}

static void test_no_filter_and_empty(void **state)
{
    (void)state;
    uint64_t rng = 5;
    int n = make_entries(100, &rng);
    struct rv_table_props p;
    write_table(8, n, 0, &p);
    rv_table *t;
    assert_int_equal(open_table(8, 8, &t), RAVEL_OK);
    assert_int_equal(rv_table_may_contain(t, "nothing", 7), 1);
    rv_table_close(t);

    write_table(9, 0, 10, &p);
    assert_int_equal(open_table(9, 9, &t), RAVEL_OK);
    assert_int_equal(rv_table_props(t)->entries, 0);
    struct rv_iter *it = rv_table_iter_new(t);
    it->ops->seek_to_first(it);
    assert_false(it->ops->valid(it));
    it->ops->seek_to_last(it);
    assert_false(it->ops->valid(it));
    assert_int_equal(it->ops->status(it), RAVEL_OK);
    it->ops->destroy(it);
    rv_table_close(t);
}

static void test_wrong_file_number(void **state)
{
    (void)state;
    uint64_t rng = 6;
    int n = make_entries(50, &rng);
    struct rv_table_props p;
    write_table(10, n, 10, &p);
    rv_table *t;
    assert_int_equal(open_table(10, 11, &t), RAVEL_CORRUPT);
    assert_null(t);
}

/* Every byte of a small table flipped in turn, and every cut: the open or
** a full verify reports RAVEL_CORRUPT naming the file, every time. */
static void test_every_damage_detected(void **state)
{
    (void)state;
    uint64_t rng = 11;
    int n = make_entries(300, &rng);
    struct rv_table_props p;
    uint64_t size = write_table(12, n, 10, &p);
    char *orig = malloc(size);
    int fd = open(path_of(12), O_RDONLY);
    assert_int_equal(read(fd, orig, size), (ssize_t)size);
    close(fd);
    char *copy = malloc(size);
    int detected = 0, total = 0;
    for (uint64_t pos = 0; pos <= size; pos++) {
        uint64_t len = size;
        memcpy(copy, orig, size);
        if (pos < size)
            copy[pos] ^= (char)(1u << (pos % 8));
        else
            len = rng_next(&rng) % size; /* one cut */
        fd = open(path_of(13), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_int_equal(write(fd, copy, len), (ssize_t)len);
        close(fd);
        rv_table *t;
        int rc = open_table(13, 12, &t);
        if (rc == RAVEL_OK) {
            rc = rv_table_verify(t);
            rv_table_close(t);
        }
        total++;
        if (rc == RAVEL_CORRUPT && strstr(ravel_errmsg(), "000013.sst"))
            detected++;
        else
            fail_msg("damage at byte %llu of %llu (cut to %llu) not reported "
                     "as RAVEL_CORRUPT naming the file: %d (%s)",
                     (unsigned long long)pos, (unsigned long long)size,
                     (unsigned long long)len, rc, ravel_errmsg());
    }
    printf("# %d of %d damaged copies of a %llu-byte table detected\n",
           detected, total, (unsigned long long)size);
    free(orig);
    free(copy);
}

/* A block that verifies (or is read with verify_checksums off) but does not
** decode stops the iterator with RAVEL_CORRUPT; it is never skipped as if
** the keys in it did not exist. */
static void test_undecodable_block_stops_iterator(void **state)
{
    (void)state;
    uint64_t rng = 21;
    int n = make_entries(200, &rng);
    struct rv_table_props p;
    write_table(14, n, 0, &p);
    /* the first entry of block 0 is a restart: shared must be 0 */
    int fd = open(path_of(14), O_RDWR);
    assert_int_equal(pwrite(fd, "\x05", 1, 0), 1);
    close(fd);
    fd = open(path_of(14), O_RDONLY);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    rv_table *t;
    struct rv_table_read_options ro = {.verify_checksums = 0};
    assert_int_equal(rv_table_open(fd, path_of(14), 14, (uint64_t)st.st_size,
                                   &ro, &t), RAVEL_OK);
    struct rv_iter *it = rv_table_iter_new(t);
    int seen = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        seen++;
    assert_int_equal(it->ops->status(it), RAVEL_CORRUPT);
    assert_true(seen < n);
    it->ops->destroy(it);
    it = rv_table_iter_new(t);
    it->ops->seek(it, g_e[0].key, g_e[0].klen);
    assert_false(it->ops->valid(it));
    assert_int_equal(it->ops->status(it), RAVEL_CORRUPT);
    it->ops->destroy(it);
    rv_table_close(t);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_no_filter_and_empty),
        cmocka_unit_test(test_wrong_file_number),
        cmocka_unit_test(test_every_damage_detected),
        cmocka_unit_test(test_undecodable_block_stops_iterator),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
