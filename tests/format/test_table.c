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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dbformat.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "table/compress.h"
#include "base/range_frags.h"
#include "base/read_view.h"
#include "util/cache.h"
#include "util/coding.h"

#include <xxhash.h>
#include "../testutil.h" /* tu_rand */

#define MAXN 20000

struct entry {
    char key[40];
    size_t klen;
    char val[80];
    size_t vlen;
};

static char g_dir[] = "/tmp/ravel-table-XXXXXX";
static struct entry g_e[MAXN];
static rv_cache *g_cache; /* NULL: tables read without a block cache */
static enum rv_compression g_compression; /* of the tables written */

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
        int uk = (int)(tu_rand(rng) % (uint64_t)(n * 3 / 4 + 1));
        int ul = snprintf(e->key, sizeof e->key, "key-%06d", uk);
        int type = i % 10 == 0 ? RV_TYPE_DELETE : RV_TYPE_PUT;
        rv_put_fixed64(e->key + ul, rv_pack_tag((uint64_t)i + 100, type));
        e->klen = (size_t)ul + 8;
        e->vlen = type == RV_TYPE_PUT ? tu_rand(rng) % 70 : 0;
        for (size_t k = 0; k < e->vlen; k++)
            e->val[k] = (char)('A' + (i * 7 + k) % 26);
    }
    qsort(g_e, (size_t)n, sizeof g_e[0], entry_cmp);
    return n;
}

/* The session id write_table gives its builder (0: the builder draws
** one). */
static uint64_t g_session;

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
                                 .bloom_bits_per_key = bloom_bits,
                                 .compression = g_compression,
                                 .session_id = g_session};
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
    struct rv_table_read_options ro = {.verify_checksums = 1,
                                       .block_cache = g_cache};
    return rv_table_open(fd, path, file_number, (uint64_t)st.st_size, &ro, t);
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

static void round_trip(void)
{
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

    struct rv_iter *it = rv_table_iter_new(t, rv_table_read_flags(t));
    int i = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        expect_at(it, &g_e[i++]);
    assert_int_equal(i, n);
    if (g_cache && rv_cache_capacity(g_cache) >= (1u << 20))
        assert_true(rv_cache_usage(g_cache) >= rv_table_props(t)->data_size
                                                - rp->data_blocks * 9);
    for (it->ops->seek_to_last(it); it->ops->valid(it); it->ops->prev(it))
        expect_at(it, &g_e[--i]);
    assert_int_equal(i, 0);
    it->ops->seek_to_first(it);
    if (g_cache) /* the iterator pins the block it is in */
        assert_true(rv_cache_pinned_usage(g_cache) > 0);
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

static void test_round_trip(void **state)
{
    (void)state;
    round_trip();
}

/* The same through a block cache, large enough for the whole table and
** too small for it: the same entries either way, nothing left pinned, and
** the table's blocks gone from the cache once it is closed. */
static void test_round_trip_cached(void **state)
{
    (void)state;
    static const size_t caps[] = {64u << 20, 16u << 10, 0};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        assert_int_equal(rv_cache_new(caps[i], &g_cache), RAVEL_OK);
        round_trip();
        assert_int_equal(rv_cache_pinned_usage(g_cache), 0);
        assert_int_equal(rv_cache_usage(g_cache), 0);
        rv_cache_unref(g_cache);
        g_cache = NULL;
    }
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
    struct rv_iter *it = rv_table_iter_new(t, rv_table_read_flags(t));
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
            len = tu_rand(&rng) % size; /* one cut */
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
    struct rv_table_read_options ro = {.verify_checksums = 0,
                                       .block_cache = g_cache};
    assert_int_equal(rv_table_open(fd, path_of(14), 14, (uint64_t)st.st_size,
                                   &ro, &t), RAVEL_OK);
    struct rv_iter *it = rv_table_iter_new(t, rv_table_read_flags(t));
    int seen = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        seen++;
    assert_int_equal(it->ops->status(it), RAVEL_CORRUPT);
    assert_true(seen < n);
    it->ops->destroy(it);
    it = rv_table_iter_new(t, rv_table_read_flags(t));
    it->ops->seek(it, g_e[0].key, g_e[0].klen);
    assert_false(it->ops->valid(it));
    assert_int_equal(it->ops->status(it), RAVEL_CORRUPT);
    it->ops->destroy(it);
    rv_table_close(t);
}

/* ---------------------------------------------------------- point gets */

/* What a get's callback saw: the entries of one user key, checked against
** g_e from EXPECT_FROM on. */
struct collected {
    const char *ukey;
    size_t ulen;
    int expect_from;
    int n;          /* entries of UKEY seen */
    int calls;
    int mismatches;
};

static int collect(void *ctx, const char *ikey, size_t klen, const char *val,
                   size_t vlen)
{
    struct collected *c = ctx;
    c->calls++;
    if (klen < 8 || klen - 8 != c->ulen || memcmp(ikey, c->ukey, c->ulen))
        return 0;
    int i = c->expect_from + c->n++;
    const struct entry *e = i < MAXN ? &g_e[i] : NULL;
    if (!e || e->klen != klen || memcmp(e->key, ikey, klen) ||
        e->vlen != vlen || (vlen && memcmp(e->val, val, vlen)))
        c->mismatches++;
    return 1;
}

/* Gets user key UKEY at sequence SEQ: *C says what came back. */
static int get_at(rv_table *t, const char *ukey, size_t ulen, uint64_t seq,
                  int expect_from, struct collected *c)
{
    char ikey[64];
    memcpy(ikey, ukey, ulen);
    rv_put_fixed64(ikey + ulen, rv_pack_tag(seq, RV_TYPE_PUT));
    memset(c, 0, sizeof *c);
    c->ukey = ukey;
    c->ulen = ulen;
    c->expect_from = expect_from;
    return rv_table_get(t, rv_table_read_flags(t), ikey, ulen + 8, collect,
                        c);
}

/* Every user key of the table, from its newest version and from each
** older one; absent keys before, between and after. */
static void gets_of_every_key(rv_table *t, int n)
{
    struct collected c;
    for (int j = 0; j < n; j++) {
        size_t ul = g_e[j].klen - 8;
        int group_start = j == 0 || g_e[j - 1].klen != g_e[j].klen ||
                          memcmp(g_e[j - 1].key, g_e[j].key, ul) != 0;
        int end = j;
        while (end < n && g_e[end].klen == g_e[j].klen &&
               memcmp(g_e[end].key, g_e[j].key, ul) == 0)
            end++;
        if (group_start) {
            assert_int_equal(get_at(t, g_e[j].key, ul, RV_MAX_SEQUENCE, j,
                                    &c), RAVEL_OK);
            assert_int_equal(c.n, end - j);
            assert_int_equal(c.mismatches, 0);
        }
        /* from this version on */
        uint64_t seq = rv_tag_sequence(rv_get_fixed64(g_e[j].key + ul));
        assert_int_equal(get_at(t, g_e[j].key, ul, seq, j, &c), RAVEL_OK);
        assert_int_equal(c.n, end - j);
        assert_int_equal(c.mismatches, 0);
    }
    char absent[32];
    for (int j = 0; j < 2000; j++) {
        int al = snprintf(absent, sizeof absent, "%s-%06d",
                          j % 3 == 0 ? "absent" : j % 3 == 1 ? "key" : "zzz",
                          j * 17);
        assert_int_equal(get_at(t, absent, (size_t)al, RV_MAX_SEQUENCE, 0, &c),
                         RAVEL_OK);
        if (c.n == 0)
            assert_true(c.calls <= 1); /* stopped at the next key */
        else {
            /* "key-NNNNNN" may be present: then it matched for real */
            int found = 0;
            for (int k = 0; k < n && !found; k++)
                found = g_e[k].klen - 8 == (size_t)al &&
                        memcmp(g_e[k].key, absent, (size_t)al) == 0;
            assert_true(found);
        }
    }
    /* past the last key: no call; before the first: the first entry */
    assert_int_equal(get_at(t, "zzzz", 4, RV_MAX_SEQUENCE, 0, &c), RAVEL_OK);
    assert_int_equal(c.calls, 0);
    assert_int_equal(get_at(t, "", 0, RV_MAX_SEQUENCE, 0, &c), RAVEL_OK);
    assert_int_equal(c.calls, 1);
}

/* Stops when told: a callback returning 0 at once is called once; one
** that never stops sees every entry from IKEY to the end, across blocks. */
static int count_all(void *ctx, const char *ikey, size_t klen,
                     const char *val, size_t vlen)
{
    (void)ikey; (void)klen; (void)val; (void)vlen;
    int *n = ctx;
    (*n)++;
    return 1;
}

static int stop_at_once(void *ctx, const char *ikey, size_t klen,
                        const char *val, size_t vlen)
{
    (void)ikey; (void)klen; (void)val; (void)vlen;
    int *n = ctx;
    (*n)++;
    return 0;
}

static void test_get(void **state)
{
    (void)state;
    uint64_t rng = 1234;
    int n = make_entries(MAXN, &rng);
    struct rv_table_props p;
    write_table(20, n, 10, &p);
    static const size_t caps[] = {0, 64u << 20, 16u << 10};
    for (int mode = 0; mode < 4; mode++) {
        if (mode > 0)
            assert_int_equal(rv_cache_new(caps[mode - 1], &g_cache), RAVEL_OK);
        rv_table *t;
        assert_int_equal(open_table(20, 20, &t), RAVEL_OK);
        gets_of_every_key(t, n);
        int calls = 0;
        int flags = rv_table_read_flags(t);
        assert_int_equal(rv_table_get(t, flags, g_e[0].key, g_e[0].klen,
                                      count_all, &calls), RAVEL_OK);
        assert_int_equal(calls, n);
        calls = 0;
        assert_int_equal(rv_table_get(t, flags, g_e[n / 2].key,
                                      g_e[n / 2].klen, count_all, &calls),
                         RAVEL_OK);
        assert_int_equal(calls, n - n / 2);
        calls = 0;
        assert_int_equal(rv_table_get(t, flags, g_e[5].key, g_e[5].klen,
                                      stop_at_once, &calls), RAVEL_OK);
        assert_int_equal(calls, 1);
        if (g_cache) {
            assert_int_equal(rv_cache_pinned_usage(g_cache), 0);
            if (rv_cache_capacity(g_cache) >= (1u << 20))
                assert_true(rv_cache_usage(g_cache) > 0);
        }
        rv_table_close(t);
        if (g_cache) {
            assert_int_equal(rv_cache_usage(g_cache), 0);
            rv_cache_unref(g_cache);
            g_cache = NULL;
        }
    }
}

/* One user key with 600 versions spanning many blocks, between others:
** a get returns every version, newest first, from any of them. */
static void test_get_versions_across_blocks(void **state)
{
    (void)state;
    int n = 0;
    for (int i = 0; i < 100; i++, n++) {
        int ul = snprintf(g_e[n].key, sizeof g_e[n].key, "a-%04d", i);
        rv_put_fixed64(g_e[n].key + ul, rv_pack_tag(5, RV_TYPE_PUT));
        g_e[n].klen = (size_t)ul + 8;
        g_e[n].vlen = 10;
        memset(g_e[n].val, 'a', 10);
    }
    for (int v = 0; v < 600; v++, n++) {
        memcpy(g_e[n].key, "hot", 3);
        int type = v % 7 == 3 ? RV_TYPE_DELETE : RV_TYPE_PUT;
        rv_put_fixed64(g_e[n].key + 3, rv_pack_tag(1000 + (uint64_t)v, type));
        g_e[n].klen = 11;
        g_e[n].vlen = type == RV_TYPE_PUT ? 60 : 0;
        for (int k = 0; k < (int)g_e[n].vlen; k++)
            g_e[n].val[k] = (char)('0' + (v + k) % 10);
    }
    for (int i = 0; i < 100; i++, n++) {
        int ul = snprintf(g_e[n].key, sizeof g_e[n].key, "z-%04d", i);
        rv_put_fixed64(g_e[n].key + ul, rv_pack_tag(7, RV_TYPE_PUT));
        g_e[n].klen = (size_t)ul + 8;
        g_e[n].vlen = 0;
    }
    qsort(g_e, (size_t)n, sizeof g_e[0], entry_cmp);
    struct rv_table_props p;
    write_table(21, n, 10, &p);
    assert_true(p.data_blocks > 60);
    assert_int_equal(rv_cache_new(1u << 20, &g_cache), RAVEL_OK);
    rv_table *t;
    assert_int_equal(open_table(21, 21, &t), RAVEL_OK);
    struct collected c;
    assert_int_equal(get_at(t, "hot", 3, RV_MAX_SEQUENCE, 100, &c), RAVEL_OK);
    assert_int_equal(c.n, 600);
    assert_int_equal(c.mismatches, 0);
    /* from sequence 1300 down: versions 300 .. 0, at index 100 + 299 */
    assert_int_equal(get_at(t, "hot", 3, 1300, 100 + 299, &c), RAVEL_OK);
    assert_int_equal(c.n, 301);
    assert_int_equal(c.mismatches, 0);
    /* below every version: the next key */
    assert_int_equal(get_at(t, "hot", 3, 999, 0, &c), RAVEL_OK);
    assert_int_equal(c.n, 0);
    assert_int_equal(c.calls, 1);
    gets_of_every_key(t, n);
    rv_table_close(t);
    rv_cache_unref(g_cache);
    g_cache = NULL;
}

/* A damaged data block: the get that reaches it fails with RAVEL_CORRUPT
** naming the file and the block's offset, with or without a cache (a
** damaged block is never cached as good); gets elsewhere succeed. */
static void test_get_damaged_block(void **state)
{
    (void)state;
    uint64_t rng = 77;
    int n = make_entries(2000, &rng);
    struct rv_table_props p;
    write_table(22, n, 0, &p);
    /* a checksum failure: a value byte of the first block */
    int fd = open(path_of(22), O_RDWR);
    char b;
    assert_int_equal(pread(fd, &b, 1, 40), 1);
    b ^= 0x10;
    assert_int_equal(pwrite(fd, &b, 1, 40), 1);
    close(fd);
    for (int cached = 0; cached < 2; cached++) {
        if (cached)
            assert_int_equal(rv_cache_new(1u << 20, &g_cache), RAVEL_OK);
        rv_table *t;
        assert_int_equal(open_table(22, 22, &t), RAVEL_OK);
        struct collected c;
        for (int round = 0; round < 2; round++) {
            assert_int_equal(get_at(t, g_e[0].key, g_e[0].klen - 8,
                                    RV_MAX_SEQUENCE, 0, &c), RAVEL_CORRUPT);
            assert_non_null(strstr(ravel_errmsg(), "000022.sst"));
            assert_non_null(strstr(ravel_errmsg(), "byte offset 0"));
            assert_int_equal(c.calls, 0);
        }
        assert_int_equal(get_at(t, g_e[n - 1].key, g_e[n - 1].klen - 8,
                                RV_MAX_SEQUENCE, n - 1, &c), RAVEL_OK);
        assert_int_equal(c.n, 1);
        rv_table_close(t);
        if (cached) {
            rv_cache_unref(g_cache);
            g_cache = NULL;
        }
    }
    /* with verify_checksums off, a block that does not decode: the cursor
    ** reports it, prefixed with the file and the block */
    write_table(23, n, 0, &p);
    fd = open(path_of(23), O_RDWR);
    assert_int_equal(pwrite(fd, "\x05", 1, 0), 1);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    rv_table *t;
    struct rv_table_read_options ro = {.verify_checksums = 0};
    assert_int_equal(rv_table_open(fd, path_of(23), 23, (uint64_t)st.st_size,
                                   &ro, &t), RAVEL_OK);
    struct collected c;
    assert_int_equal(get_at(t, g_e[0].key, g_e[0].klen - 8, RV_MAX_SEQUENCE,
                            0, &c), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "000023.sst: data block at byte "
                                           "offset 0"));
    rv_table_close(t);
}

/* Blocks are read and verified once per cache fill: once cached, damage
** to the file does not reach gets or iterators (they are served from
** memory), while rv_table_verify, which reads past the cache, finds it;
** a table opened again has an id of its own and reads the file anew. */
static void test_cache_serves_blocks(void **state)
{
    (void)state;
    uint64_t rng = 4242;
    int n = make_entries(3000, &rng);
    struct rv_table_props p;
    write_table(24, n, 10, &p);
    assert_int_equal(rv_cache_new(8u << 20, &g_cache), RAVEL_OK);
    rv_table *t;
    assert_int_equal(open_table(24, 24, &t), RAVEL_OK);
    gets_of_every_key(t, n);
    size_t usage = rv_cache_usage(g_cache);
    assert_true(usage > p.data_size - p.data_blocks * 9);
    int fd = open(path_of(24), O_RDWR);
    char b;
    assert_int_equal(pread(fd, &b, 1, 100), 1);
    b ^= 0x01;
    assert_int_equal(pwrite(fd, &b, 1, 100), 1);
    close(fd);
    gets_of_every_key(t, n);
    struct rv_iter *it = rv_table_iter_new(t, rv_table_read_flags(t));
    int i = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        expect_at(it, &g_e[i++]);
    assert_int_equal(i, n);
    it->ops->destroy(it);
    assert_int_equal(rv_cache_usage(g_cache), usage);
    assert_int_equal(rv_table_verify(t), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "000024.sst"));
    rv_table *t2;
    assert_int_equal(open_table(24, 24, &t2), RAVEL_OK);
    struct collected c;
    assert_int_equal(get_at(t2, g_e[0].key, g_e[0].klen - 8, RV_MAX_SEQUENCE,
                            0, &c), RAVEL_CORRUPT);
    rv_table_close(t2);
    rv_table_close(t);
    assert_int_equal(rv_cache_usage(g_cache), 0);
    rv_cache_unref(g_cache);
    g_cache = NULL;
}

/* Threads getting from one table through a cache too small for it (blocks
** evicted and read again all along): every get sees exactly its entries. */
struct getter_arg {
    rv_table *t;
    int n;
    uint64_t seed;
    int failures;
};

static void *getter_thread(void *p)
{
    struct getter_arg *a = p;
    for (int i = 0; i < 20000; i++) {
        int j = (int)(tu_rand(&a->seed) % (uint64_t)a->n);
        size_t ul = g_e[j].klen - 8;
        struct collected c;
        uint64_t seq = rv_tag_sequence(rv_get_fixed64(g_e[j].key + ul));
        if (get_at(a->t, g_e[j].key, ul, seq, j, &c) != RAVEL_OK ||
            c.n < 1 || c.mismatches)
            a->failures++;
    }
    return NULL;
}

static void test_get_threads(void **state)
{
    (void)state;
    uint64_t rng = 8;
    int n = make_entries(MAXN, &rng);
    struct rv_table_props p;
    write_table(25, n, 10, &p);
    assert_int_equal(rv_cache_new(64u << 10, &g_cache), RAVEL_OK);
    rv_table *t;
    assert_int_equal(open_table(25, 25, &t), RAVEL_OK);
    pthread_t th[4];
    struct getter_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct getter_arg){.t = t, .n = n,
                                      .seed = 0x1234567ull * (uint64_t)(i + 1)};
        assert_int_equal(pthread_create(&th[i], NULL, getter_thread,
                                        &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
    }
    assert_int_equal(rv_cache_pinned_usage(g_cache), 0);
    assert_true(rv_cache_usage(g_cache) <= 64u << 10);
    rv_table_close(t);
    rv_cache_unref(g_cache);
    g_cache = NULL;
}

/* ---------------------------------------------------------- compression */

static const enum rv_compression all_compressions[] = {
    RV_COMPRESSION_LZ4, RV_COMPRESSION_ZSTD,
};

/* The stored type of each data block of table NUMBER: counts by type. */
static void count_block_types(uint64_t number, int counts[256])
{
    memset(counts, 0, 256 * sizeof counts[0]);
    rv_table *t;
    assert_int_equal(open_table(number, number, &t), RAVEL_OK);
    size_t len;
    struct rv_table_handle ih;
    const char *index = rv_table_index(t, &len, &ih);
    struct rv_block_cursor c;
    assert_int_equal(rv_block_cursor_init(&c, index, len, rv_ikey_compare,
                                          8), RAVEL_OK);
    int fd = open(path_of(number), O_RDONLY);
    for (rv_block_cursor_seek_to_first(&c); rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c)) {
        struct rv_table_handle h;
        assert_int_equal(rv_table_index_handle(t, c.val, c.val_len, &h),
                         RAVEL_OK);
        unsigned char type;
        assert_int_equal(pread(fd, &type, 1, (off_t)(h.offset + h.size)), 1);
        counts[type]++;
    }
    close(fd);
    rv_block_cursor_destroy(&c);
    rv_table_close(t);
}

/* Each compression this build has: the round trip (iterators, gets, with
** and without a cache) reads back every entry, data blocks are stored
** compressed and the file is smaller than without. */
static void test_compression_round_trip(void **state)
{
    (void)state;
    uint64_t rng = 99;
    int n = make_entries(MAXN, &rng);
    struct rv_table_props p;
    g_compression = RV_COMPRESSION_NONE;
    uint64_t plain = write_table(7, n, 10, &p);
    int tested = 0;
    for (size_t i = 0; i < 2; i++) {
        enum rv_compression z = all_compressions[i];
        if (!rv_compression_available(z)) {
            printf("# %s: not in this build\n", rv_compression_name(z));
            continue;
        }
        tested++;
        g_compression = z;
        round_trip(); /* writes table 7 with Z, reads it all back */
        assert_int_equal(rv_cache_new(1u << 20, &g_cache), RAVEL_OK);
        round_trip();
        rv_cache_unref(g_cache);
        g_cache = NULL;
        uint64_t size = write_table(26, n, 10, &p);
        int counts[256];
        count_block_types(26, counts);
        printf("# %s: %llu bytes against %llu uncompressed; %d of %llu data "
               "blocks compressed\n", rv_compression_name(z),
               (unsigned long long)size, (unsigned long long)plain,
               counts[z], (unsigned long long)p.data_blocks);
        assert_true(size < plain);
        assert_true(counts[z] > 0);
        assert_int_equal(counts[0] + counts[z], (int)p.data_blocks);
        rv_table *t;
        assert_int_equal(open_table(26, 26, &t), RAVEL_OK);
        gets_of_every_key(t, n);
        assert_int_equal(rv_table_verify(t), RAVEL_OK);
        rv_table_close(t);
    }
    g_compression = RV_COMPRESSION_NONE;
    if (!tested)
        skip();
}

/* A block that compression does not shrink by 1/8 is stored as it is:
** values of random bytes give the same file as no compression. */
static void test_incompressible_blocks_stored_raw(void **state)
{
    (void)state;
    uint64_t rng = 31;
    int n = make_entries(2000, &rng);
    for (int i = 0; i < n; i++) {
        g_e[i].vlen = 70;
        for (size_t k = 0; k < g_e[i].vlen; k++)
            g_e[i].val[k] = (char)tu_rand(&rng);
    }
    struct rv_table_props p;
    g_compression = RV_COMPRESSION_NONE;
    uint64_t plain = write_table(27, n, 10, &p);
    int tested = 0;
    for (size_t i = 0; i < 2; i++) {
        if (!rv_compression_available(all_compressions[i]))
            continue;
        tested++;
        g_compression = all_compressions[i];
        assert_int_equal(write_table(28, n, 10, &p), plain);
        int counts[256];
        count_block_types(28, counts);
        assert_int_equal(counts[0], (int)p.data_blocks);
    }
    g_compression = RV_COMPRESSION_NONE;
    if (!tested)
        skip();
}

/* Every byte of the data blocks of a small compressed table flipped in
** turn: rv_table_verify reports RAVEL_CORRUPT naming the file, every time.
** With verify_checksums off, the decoder meets the damage itself: it
** stays inside its buffers (ASan says so) and what it reports names the
** file; a flip it cannot see (a literal byte) is read as data, as a flip
** in an uncompressed block would be -- which is what checksums are for. */
static void test_compressed_damage_detected(void **state)
{
    (void)state;
    int tested = 0;
    for (size_t zi = 0; zi < 2; zi++) {
        if (!rv_compression_available(all_compressions[zi]))
            continue;
        tested++;
        g_compression = all_compressions[zi];
        uint64_t rng = 11;
        int n = make_entries(300, &rng);
        struct rv_table_props p;
        uint64_t size = write_table(29, n, 0, &p);
        char *orig = malloc(size), *copy = malloc(size);
        int fd = open(path_of(29), O_RDONLY);
        assert_int_equal(read(fd, orig, size), (ssize_t)size);
        close(fd);
        int as_written = 0, changed = 0, reported = 0;
        for (uint64_t pos = 0; pos < p.data_size; pos++) {
            memcpy(copy, orig, size);
            copy[pos] ^= (char)(1u << (pos % 8));
            fd = open(path_of(30), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            assert_int_equal(write(fd, copy, size), (ssize_t)size);
            close(fd);
            rv_table *t;
            int rc = open_table(30, 29, &t);
            assert_int_equal(rc, RAVEL_OK); /* only data blocks changed */
            rc = rv_table_verify(t);
            if (rc != RAVEL_CORRUPT || !strstr(ravel_errmsg(), "000030.sst"))
                fail_msg("%s: damage at byte %llu not reported: %d (%s)",
                         rv_compression_name(g_compression),
                         (unsigned long long)pos, rc, ravel_errmsg());
            rv_table_close(t);
            /* unverified: the iterator fails or returns what was written */
            fd = open(path_of(30), O_RDONLY);
            struct rv_table_read_options ro = {.verify_checksums = 0};
            assert_int_equal(rv_table_open(fd, path_of(30), 29, size, &ro,
                                           &t), RAVEL_OK);
            struct rv_iter *it =
                rv_table_iter_new(t, rv_table_read_flags(t));
            int i = 0, differs = 0;
            for (it->ops->seek_to_first(it); it->ops->valid(it);
                 it->ops->next(it), i++) {
                size_t kl, vl;
                const char *k = it->ops->key(it, &kl);
                const char *v = it->ops->value(it, &vl);
                differs |= i >= n || kl != g_e[i].klen ||
                           memcmp(k, g_e[i].key, kl) || vl != g_e[i].vlen ||
                           (vl && memcmp(v, g_e[i].val, vl));
            }
            rc = it->ops->status(it);
            if (rc == RAVEL_OK && !differs && i == n)
                as_written++; /* e.g. a flip in a checksum */
            else if (rc == RAVEL_OK)
                changed++;
            else if (rc != RAVEL_CORRUPT ||
                     !strstr(ravel_errmsg(), "000030.sst"))
                fail_msg("unverified damage at byte %llu: %d (%s)",
                         (unsigned long long)pos, rc, ravel_errmsg());
            else
                reported++;
            it->ops->destroy(it);
            rv_table_close(t);
        }
        printf("# %s: %llu damaged data bytes, all caught by the checksum; "
               "without it %d reported by the decoder, %d read as written, "
               "%d read changed\n", rv_compression_name(g_compression),
               (unsigned long long)p.data_size, reported, as_written,
               changed);
        assert_true(reported > 0);
        free(orig);
        free(copy);
    }
    g_compression = RV_COMPRESSION_NONE;
    if (!tested)
        skip();
}

/* Rewrites the trailer of the first data block of table NUMBER to claim
** TYPE, with a checksum that matches: a block genuinely written so. */
static void retype_first_block(uint64_t number, int type)
{
    int fd = open(path_of(number), O_RDWR);
    rv_table *t;
    assert_int_equal(open_table(number, number, &t), RAVEL_OK);
    size_t len;
    struct rv_table_handle ih, h;
    const char *index = rv_table_index(t, &len, &ih);
    struct rv_block_cursor c;
    assert_int_equal(rv_block_cursor_init(&c, index, len, rv_ikey_compare,
                                          8), RAVEL_OK);
    rv_block_cursor_seek_to_first(&c);
    assert_int_equal(rv_table_index_handle(t, c.val, c.val_len, &h),
                     RAVEL_OK);
    rv_block_cursor_destroy(&c);
    rv_table_close(t);
    char *buf = malloc(h.size + 9);
    assert_int_equal(pread(fd, buf, h.size + 9, (off_t)h.offset),
                     (ssize_t)(h.size + 9));
    buf[h.size] = (char)type;
    rv_put_fixed64(buf + h.size + 1,
                   rv_table_block_checksum(buf, h.size, type, number));
    assert_int_equal(pwrite(fd, buf + h.size, 9, (off_t)(h.offset + h.size)),
                     9);
    free(buf);
    close(fd);
}

/* Table NUMBER (N entries) written with Z, read as by a build without Z:
** RAVEL_INVALID with a message naming the file, the offset, the codec and
** the library the build lacks (not damage); with Z back, it reads. */
static void check_missing_codec(enum rv_compression z, uint64_t number, int n)
{
    struct rv_table_props p;
    rv_table *t;
    struct collected c;
    g_compression = z;
    write_table(number, n, 0, &p);
    g_compression = RV_COMPRESSION_NONE;
    rv_compress_hide(1u << z);
    assert_int_equal(open_table(number, number, &t), RAVEL_OK);
    assert_int_equal(get_at(t, g_e[0].key, g_e[0].klen - 8, RV_MAX_SEQUENCE,
                            0, &c), RAVEL_INVALID);
    const char *name = rv_compression_name(z);
    char want[160];
    snprintf(want, sizeof want, "%06llu.sst: data block at byte offset 0: "
             "%s-compressed, but this build of ravel has no %s support "
             "(built without lib%s): a ravel built with lib%s reads it",
             (unsigned long long)number, name, name, name, name);
    assert_non_null(strstr(ravel_errmsg(), want));
    assert_int_equal(rv_table_verify(t), RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), want));
    rv_table_close(t);
    rv_compress_hide(0);
    assert_int_equal(open_table(number, number, &t), RAVEL_OK);
    assert_int_equal(rv_table_verify(t), RAVEL_OK);
    rv_table_close(t);
}

/* A block compressed with a codec this build lacks: RAVEL_INVALID with a
** message saying so (not damage), for each codec this build has (the
** test hides it); an unknown type: RAVEL_CORRUPT. */
static void test_unsupported_compression(void **state)
{
    (void)state;
    uint64_t rng = 3;
    int n = make_entries(500, &rng);
    struct rv_table_props p;
    rv_table *t;
    struct collected c;
    for (size_t i = 0; i < 2; i++)
        if (rv_compression_available(all_compressions[i]))
            check_missing_codec(all_compressions[i], 40 + i, n);
    /* a type no ravel knows, with a checksum that matches */
    write_table(32, n, 0, &p);
    retype_first_block(32, 9);
    assert_int_equal(open_table(32, 32, &t), RAVEL_OK);
    assert_int_equal(get_at(t, g_e[0].key, g_e[0].klen - 8, RV_MAX_SEQUENCE,
                            0, &c), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "unknown compression type 9"));
    rv_table_close(t);
    /* a raw block relabelled lz4: it does not decompress (or is refused
    ** as unavailable): never read as data */
    write_table(33, n, 0, &p);
    retype_first_block(33, RV_COMPRESSION_LZ4);
    assert_int_equal(open_table(33, 33, &t), RAVEL_OK);
    int rc = get_at(t, g_e[0].key, g_e[0].klen - 8, RV_MAX_SEQUENCE, 0, &c);
    assert_true(rc == RAVEL_CORRUPT ||
                (rc == RAVEL_INVALID &&
                 !rv_compression_available(RV_COMPRESSION_LZ4)));
    assert_non_null(strstr(ravel_errmsg(), "000033.sst"));
    rv_table_close(t);
}

/* The recorded length is checked: a compressed block whose header says
** one byte more or less than it holds is RAVEL_CORRUPT naming the file and
** the block (read without checksums, so the decoder meets it). */
static void test_compressed_length_mismatch(void **state)
{
    (void)state;
    int tested = 0;
    for (size_t zi = 0; zi < 2; zi++) {
        if (!rv_compression_available(all_compressions[zi]))
            continue;
        tested++;
        g_compression = all_compressions[zi];
        uint64_t rng = 12;
        int n = make_entries(400, &rng);
        struct rv_table_props p;
        uint64_t size = write_table(34, n, 0, &p);
        g_compression = RV_COMPRESSION_NONE;
        for (int delta = -1; delta <= 1; delta += 2) {
            /* the first block's raw length: a varint at byte 0 */
            int fd = open(path_of(34), O_RDWR);
            char hdr[5];
            assert_int_equal(pread(fd, hdr, 5, 0), 5);
            uint32_t raw = 0;
            const char *after = rv_get_varint32(hdr, hdr + 5, &raw);
            assert_non_null(after);
            char fixed[5];
            int w = rv_put_varint32(fixed, raw + (uint32_t)delta);
            assert_int_equal(w, (int)(after - hdr)); /* same width */
            assert_int_equal(pwrite(fd, fixed, (size_t)w, 0), w);
            struct rv_table_read_options ro = {.verify_checksums = 0};
            rv_table *t;
            assert_int_equal(rv_table_open(fd, path_of(34), 34, size, &ro,
                                           &t), RAVEL_OK);
            struct collected c;
            assert_int_equal(get_at(t, g_e[0].key, g_e[0].klen - 8,
                                    RV_MAX_SEQUENCE, 0, &c), RAVEL_CORRUPT);
            assert_non_null(strstr(ravel_errmsg(), "000034.sst: data block "
                                                   "at byte offset 0"));
            rv_table_close(t); /* closes fd */
            /* put it back */
            fd = open(path_of(34), O_RDWR);
            assert_int_equal(pwrite(fd, hdr, 5, 0), 5);
            close(fd);
        }
    }
    if (!tested)
        skip();
}

/* ------------------------------------------------------ session id */

static int bytewise(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* The session id of table NUMBER as rv_table_file_session_id reads it. */
static int file_session_id(uint64_t number, uint64_t *id)
{
    int fd = open(path_of(number), O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    int rc = rv_table_file_session_id(fd, path_of(number), number,
                                      (uint64_t)st.st_size, id);
    close(fd);
    return rc;
}

/* Rewrites table NUMBER as a table written before ravel.session_id
** existed: its properties block without that entry, the index block and
** a footer after it, with their checksums. */
static void strip_session_id(uint64_t number)
{
    const char *path = path_of(number);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    size_t size = (size_t)st.st_size;
    char *f = malloc(size);
    assert_non_null(f);
    assert_int_equal(pread(fd, f, size, 0), (ssize_t)size);
    const char *foot = f + size - RV_TABLE_FOOTER_SIZE;
    uint64_t index_off = rv_get_fixed64(foot), index_len = rv_get_fixed64(foot + 8);
    uint64_t props_off = rv_get_fixed64(foot + 32);
    uint64_t props_len = rv_get_fixed64(foot + 40);
    struct rv_block_cursor c;
    assert_int_equal(rv_block_cursor_init(&c, f + props_off, props_len,
                                          bytewise, 0), RAVEL_OK);
    struct rv_block_builder b;
    rv_block_builder_init(&b, 1);
    int dropped = 0;
    for (rv_block_cursor_seek_to_first(&c); rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c)) {
        if (c.key_len == 16 && memcmp(c.key, "ravel.session_id", 16) == 0) {
            dropped++;
            continue;
        }
        assert_int_equal(rv_block_builder_add(&b, c.key, c.key_len, c.val,
                                              c.val_len), RAVEL_OK);
    }
    rv_block_cursor_destroy(&c);
    assert_int_equal(dropped, 1);
    const char *props;
    size_t plen;
    assert_int_equal(rv_block_builder_finish(&b, &props, &plen), RAVEL_OK);
    char trailer[RV_TABLE_BLOCK_TRAILER] = {RV_TABLE_NO_COMPRESSION};
    rv_put_fixed64(trailer + 1, rv_table_block_checksum(props, plen, 0,
                                                        number));
    char footer[RV_TABLE_FOOTER_SIZE];
    memcpy(footer, foot, sizeof footer);
    uint64_t at = props_off + plen + RV_TABLE_BLOCK_TRAILER;
    rv_put_fixed64(footer, at);
    rv_put_fixed64(footer + 40, plen);
    rv_put_fixed64(footer + 64, XXH3_64bits_withSeed(footer, 64, number));
    assert_int_equal(pwrite(fd, props, plen, (off_t)props_off), (ssize_t)plen);
    assert_int_equal(pwrite(fd, trailer, sizeof trailer,
                            (off_t)(props_off + plen)),
                     (ssize_t)sizeof trailer);
    size_t ilen = (size_t)index_len + RV_TABLE_BLOCK_TRAILER;
    assert_int_equal(pwrite(fd, f + index_off, ilen, (off_t)at),
                     (ssize_t)ilen);
    assert_int_equal(pwrite(fd, footer, sizeof footer, (off_t)(at + ilen)),
                     (ssize_t)sizeof footer);
    assert_int_equal(ftruncate(fd, (off_t)(at + ilen + sizeof footer)), 0);
    rv_block_builder_destroy(&b);
    close(fd);
    free(f);
}

/* ravel.session_id: the builder writes the one it is given, or draws one
** (never 0, a new one for each builder); readers read it, and accept a
** file without it (written before it existed) as session id 0. */
static void test_session_id(void **state)
{
    (void)state;
    uint64_t rng = 11, id = 0, id2 = 0;
    int n = make_entries(200, &rng);
    struct rv_table_props p;
    g_session = 0x1234567890abcdefull;
    write_table(40, n, 10, &p);
    g_session = 0;
    assert_int_equal(p.session_id, 0x1234567890abcdefull);
    rv_table *t;
    assert_int_equal(open_table(40, 40, &t), RAVEL_OK);
    assert_int_equal(rv_table_props(t)->session_id, 0x1234567890abcdefull);
    rv_table_close(t);
    assert_int_equal(file_session_id(40, &id), RAVEL_OK);
    assert_int_equal(id, 0x1234567890abcdefull);

    write_table(41, n, 10, &p);
    write_table(42, n, 10, &p);
    assert_int_equal(file_session_id(41, &id), RAVEL_OK);
    assert_int_equal(file_session_id(42, &id2), RAVEL_OK);
    assert_true(id != 0 && id2 != 0 && id != id2);

    strip_session_id(41);
    assert_int_equal(open_table(41, 41, &t), RAVEL_OK);
    assert_int_equal(rv_table_props(t)->session_id, 0);
    assert_int_equal(rv_table_props(t)->entries, (uint64_t)n);
    struct rv_iter *it = rv_table_iter_new(t, rv_table_read_flags(t));
    int seen = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it))
        expect_at(it, &g_e[seen++]);
    assert_int_equal(seen, n);
    assert_int_equal(it->ops->status(it), RAVEL_OK);
    it->ops->destroy(it);
    assert_int_equal(rv_table_verify(t), RAVEL_OK);
    rv_table_close(t);
    assert_int_equal(file_session_id(41, &id), RAVEL_OK);
    assert_int_equal(id, 0);

    /* a damaged properties block: RAVEL_CORRUPT, not a wrong id */
    int fd = open(path_of(42), O_RDWR);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    char foot[RV_TABLE_FOOTER_SIZE], byte;
    assert_int_equal(pread(fd, foot, sizeof foot,
                           st.st_size - RV_TABLE_FOOTER_SIZE),
                     (ssize_t)sizeof foot);
    off_t at = (off_t)rv_get_fixed64(foot + 32) + 3;
    assert_int_equal(pread(fd, &byte, 1, at), 1);
    byte ^= 0x40;
    assert_int_equal(pwrite(fd, &byte, 1, at), 1);
    close(fd);
    assert_int_equal(file_session_id(42, &id), RAVEL_CORRUPT);
}

/* ------------------------------------------------ range deletions */

struct tomb {
    char begin[16], end[16];
    size_t blen, elen;
    uint64_t seq;
};

#define MAXT 200
static struct tomb g_t[MAXT];

/* NT random tombstones over the key space of make_entries ("key-NNNNNN"),
** overlapping, with sequences 1 .. 2*NT (some shared by two tombstones,
** as a flush never writes but a reader must take). */
static int make_tombs(int nt, int key_space, uint64_t *rng)
{
    for (int i = 0; i < nt; i++) {
        struct tomb *t = &g_t[i];
        int a = (int)(tu_rand(rng) % (uint64_t)key_space);
        int w = 1 + (int)(tu_rand(rng) % (uint64_t)(i % 7 == 0 ? 200 : 8));
        t->blen = (size_t)snprintf(t->begin, sizeof t->begin, "key-%06d", a);
        t->elen = (size_t)snprintf(t->end, sizeof t->end, "key-%06d", a + w);
        t->seq = 1 + tu_rand(rng) % (uint64_t)(2 * nt);
    }
    return nt;
}

/* A table of the first N entries and the first NT tombstones. */
static uint64_t write_table_rd(uint64_t number, int n, int nt,
                               struct rv_table_props *props)
{
    const char *path = path_of(number);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    struct rv_table_options o = {.block_size = 512,
                                 .block_restart_interval = 8,
                                 .bloom_bits_per_key = 10};
    rv_table_builder *tb;
    assert_int_equal(rv_table_builder_new(fd, path, number, &o, &tb),
                     RAVEL_OK);
    for (int i = 0; i < nt; i++)
        assert_int_equal(rv_table_builder_add_range_del(
                             tb, g_t[i].begin, g_t[i].blen, g_t[i].end,
                             g_t[i].elen, g_t[i].seq),
                         RAVEL_OK);
    for (int i = 0; i < n; i++)
        assert_int_equal(rv_table_builder_add(tb, g_e[i].key, g_e[i].klen,
                                              g_e[i].val, g_e[i].vlen),
                         RAVEL_OK);
    uint64_t size;
    assert_int_equal(rv_table_builder_finish(tb, props, &size), RAVEL_OK);
    rv_table_builder_free(tb);
    close(fd);
    return size;
}

static uint32_t footer_version(uint64_t number)
{
    int fd = open(path_of(number), O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    char f[8];
    assert_int_equal(pread(fd, f, 8, st.st_size - 24), 8);
    close(fd);
    return rv_get_fixed32(f);
}

/* The model: the newest sequence <= AT of the first NT tombstones covering
** KEY (0: none). */
static uint64_t model_tomb_seq(int nt, const char *key, size_t klen,
                               uint64_t at)
{
    uint64_t best = 0;
    for (int i = 0; i < nt; i++) {
        const struct tomb *t = &g_t[i];
        if (t->seq <= at && t->seq > best &&
            rv_user_key_compare(t->begin, t->blen, key, klen) <= 0 &&
            rv_user_key_compare(key, klen, t->end, t->elen) < 0)
            best = t->seq;
    }
    return best;
}

/* Tombstones written, read back: every key of the space (and between
** them) at several read sequences answers as the model does; the file is
** version 2, its bounds cover the tombstones (the largest the sentinel
** at the last end), its sequences include theirs; the entries read back
** unchanged. */
static void test_range_del_round_trip(void **state)
{
    (void)state;
    uint64_t rng = 77;
    int n = make_entries(2000, &rng);
    int nt = make_tombs(MAXT, 2000, &rng);
    struct rv_table_props p;
    write_table_rd(60, n, nt, &p);
    assert_int_equal(footer_version(60), RV_TABLE_VERSION);
    rv_table *t;
    int orc = open_table(60, 60, &t);
    if (orc)
        fail_msg("open: %d (%s)", orc, ravel_errmsg());
    const struct rv_range_frags *f = rv_table_range_frags(t);
    assert_non_null(f);
    assert_int_equal(rv_table_props(t)->entries, (uint64_t)n);
    for (int k = 0; k < 2300; k++) {
        char key[24];
        int kl = snprintf(key, sizeof key, "key-%06d%s", k / 1,
                          k % 3 == 0 ? "x" : "");
        static const uint64_t ats[] = {0, 1, 17, 100, 250, 399, 400,
                                       RV_MAX_SEQUENCE};
        for (size_t a = 0; a < sizeof ats / sizeof ats[0]; a++) {
            struct rv_read_view v = rv_read_view_at(ats[a]);
            assert_int_equal(rv_range_frags_seq(f, key, (size_t)kl, &v),
                             model_tomb_seq(nt, key, (size_t)kl, ats[a]));
        }
    }
    /* bounds */
    size_t sl, ll;
    const char *sk = rv_table_smallest_key(t, &sl);
    const char *lk = rv_table_largest_key(t, &ll);
    for (int i = 0; i < nt; i++) {
        char b[32];
        memcpy(b, g_t[i].begin, g_t[i].blen);
        rv_put_fixed64(b + g_t[i].blen,
                       rv_pack_tag(g_t[i].seq, RV_TYPE_RANGE_DELETE));
        assert_true(rv_ikey_compare(sk, sl, b, g_t[i].blen + 8) <= 0);
        memcpy(b, g_t[i].end, g_t[i].elen);
        rv_put_fixed64(b + g_t[i].elen,
                       rv_pack_tag(RV_MAX_SEQUENCE, RV_TYPE_RANGE_DELETE));
        assert_true(rv_ikey_compare(lk, ll, b, g_t[i].elen + 8) >= 0);
    }
    assert_true(rv_ikey_compare(sk, sl, g_e[0].key, g_e[0].klen) <= 0);
    assert_true(rv_ikey_compare(lk, ll, g_e[n - 1].key, g_e[n - 1].klen) >=
                0);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < nt; i++) {
        lo = g_t[i].seq < lo ? g_t[i].seq : lo;
        hi = g_t[i].seq > hi ? g_t[i].seq : hi;
    }
    assert_true(rv_table_props(t)->smallest_seq <= lo);
    assert_true(rv_table_props(t)->largest_seq >= hi);
    struct rv_iter *it = rv_table_iter_new(t, rv_table_read_flags(t));
    int i = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it);
         it->ops->next(it))
        expect_at(it, &g_e[i++]);
    assert_int_equal(i, n);
    assert_int_equal(it->ops->status(it), RAVEL_OK);
    it->ops->destroy(it);
    assert_int_equal(rv_table_verify(t), RAVEL_OK);
    rv_table_close(t);
}

/* A file of tombstones alone (a flush of a memtable holding only range
** deletes): its bounds are the tombstones', the largest the sentinel at
** the end (so a search for the end key does not reach it). */
static void test_range_del_only(void **state)
{
    (void)state;
    g_t[0] = (struct tomb){"b", "d", 1, 1, 9};
    g_t[1] = (struct tomb){"c", "f", 1, 1, 7};
    struct rv_table_props p;
    write_table_rd(61, 0, 2, &p);
    rv_table *t;
    assert_int_equal(open_table(61, 61, &t), RAVEL_OK);
    assert_int_equal(rv_table_props(t)->entries, 0);
    size_t sl, ll;
    const char *sk = rv_table_smallest_key(t, &sl);
    const char *lk = rv_table_largest_key(t, &ll);
    assert_int_equal(sl, 9);
    assert_memory_equal(sk, "b", 1);
    assert_int_equal(rv_get_fixed64(sk + 1),
                     rv_pack_tag(9, RV_TYPE_RANGE_DELETE));
    assert_int_equal(ll, 9);
    assert_memory_equal(lk, "f", 1);
    assert_int_equal(rv_get_fixed64(lk + 1),
                     rv_pack_tag(RV_MAX_SEQUENCE, RV_TYPE_RANGE_DELETE));
    struct rv_read_view v = rv_read_view_at(100);
    const struct rv_range_frags *f = rv_table_range_frags(t);
    assert_int_equal(f->n, 3); /* [b,c) 9; [c,d) 9 7; [d,f) 7 */
    assert_int_equal(rv_range_frags_seq(f, "a", 1, &v), 0);
    assert_int_equal(rv_range_frags_seq(f, "b", 1, &v), 9);
    assert_int_equal(rv_range_frags_seq(f, "c", 1, &v), 9);
    assert_int_equal(rv_range_frags_seq(f, "e", 1, &v), 7);
    assert_int_equal(rv_range_frags_seq(f, "f", 1, &v), 0);
    v = rv_read_view_at(8);
    assert_int_equal(rv_range_frags_seq(f, "c", 1, &v), 7);
    assert_int_equal(rv_range_frags_seq(f, "b", 1, &v), 0);
    rv_table_close(t);
}

/* A file without tombstones is written as before the range-deletion
** block existed: version 1, no ravel.range_del_block property, no
** fragments (files of earlier builds read as they did). */
static void test_range_del_none_is_version_1(void **state)
{
    (void)state;
    uint64_t rng = 78;
    int n = make_entries(300, &rng);
    struct rv_table_props p;
    write_table_rd(62, n, 0, &p);
    assert_int_equal(footer_version(62), RV_TABLE_VERSION_PLAIN);
    rv_table *t;
    assert_int_equal(open_table(62, 62, &t), RAVEL_OK);
    assert_null(rv_table_range_frags(t));
    rv_table_close(t);
    int fd = open(path_of(62), O_RDONLY);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    char *all = malloc((size_t)st.st_size + 1);
    assert_int_equal(read(fd, all, (size_t)st.st_size), st.st_size);
    close(fd);
    all[st.st_size] = 0;
    assert_null(memmem(all, (size_t)st.st_size, "range_del", 9));
    free(all);
}

/* A tombstone whose begin is not before its end is refused at the add. */
static void test_range_del_empty_refused(void **state)
{
    (void)state;
    const char *path = path_of(63);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct rv_table_options o = {.block_size = 512,
                                 .block_restart_interval = 8};
    rv_table_builder *tb;
    assert_int_equal(rv_table_builder_new(fd, path, 63, &o, &tb), RAVEL_OK);
    assert_int_equal(rv_table_builder_add_range_del(tb, "b", 1, "b", 1, 3),
                     RAVEL_INVALID);
    rv_table_builder_free(tb);
    close(fd);
}

/* Every byte of a table with tombstones flipped, and cuts: RAVEL_CORRUPT
** naming the file, from the open (the range-deletion block is read and
** checked there) or the verify; the tombstones are never ignored. */
static void test_range_del_damage_detected(void **state)
{
    (void)state;
    uint64_t rng = 79;
    int n = make_entries(40, &rng);
    int nt = make_tombs(6, 40, &rng);
    struct rv_table_props p;
    uint64_t size = write_table_rd(64, n, nt, &p);
    char *orig = malloc(size), *copy = malloc(size);
    int fd = open(path_of(64), O_RDONLY);
    assert_int_equal(read(fd, orig, size), (ssize_t)size);
    close(fd);
    for (uint64_t pos = 0; pos <= size; pos++) {
        uint64_t len = size;
        memcpy(copy, orig, size);
        if (pos < size)
            copy[pos] ^= (char)(1u << (pos % 8));
        else
            len = tu_rand(&rng) % size;
        fd = open(path_of(65), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_int_equal(write(fd, copy, len), (ssize_t)len);
        close(fd);
        rv_table *t;
        int rc = open_table(65, 64, &t);
        if (rc == RAVEL_OK) {
            rc = rv_table_verify(t);
            rv_table_close(t);
        }
        if (rc != RAVEL_CORRUPT || !strstr(ravel_errmsg(), "000065.sst"))
            fail_msg("damage at byte %llu of %llu not reported as "
                     "RAVEL_CORRUPT naming the file: %d (%s)",
                     (unsigned long long)pos, (unsigned long long)size, rc,
                     ravel_errmsg());
    }
    free(orig);
    free(copy);
}

/* The handle of the range-deletion block of table NUMBER (from its
** properties block), *SIZE the file's size. */
static struct rv_table_handle range_del_handle(uint64_t number,
                                               uint64_t *size)
{
    int fd = open(path_of(number), O_RDONLY);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    *size = (uint64_t)st.st_size;
    char foot[RV_TABLE_FOOTER_SIZE];
    assert_int_equal(pread(fd, foot, sizeof foot,
                           st.st_size - RV_TABLE_FOOTER_SIZE),
                     (ssize_t)sizeof foot);
    uint64_t po = rv_get_fixed64(foot + 32), ps = rv_get_fixed64(foot + 40);
    char *props = malloc(ps);
    assert_int_equal(pread(fd, props, ps, (off_t)po), (ssize_t)ps);
    close(fd);
    char *at = memmem(props, ps, "ravel.range_del_block", 21);
    assert_non_null(at);
    /* a restart entry: the value follows the key */
    struct rv_table_handle h = {rv_get_fixed64(at + 21),
                                rv_get_fixed64(at + 29)};
    free(props);
    return h;
}

/* A range-deletion block whose checksum verifies but whose entries are
** wrong (written by a faulty writer): the open says RAVEL_CORRUPT naming
** the file and the block, whatever the wrong thing is. */
static void test_range_del_bad_entries(void **state)
{
    (void)state;
    static const struct {
        const char *why;
        struct tomb t[2];
        int nt;
        int type;       /* of the entries written, or 0: the range type */
    } cases[] = {
        {"begin not before end", {{"c", "a", 1, 1, 5}}, 1, 0},
        {"not a range deletion", {{"a", "c", 1, 1, 5}}, 1, RV_TYPE_PUT},
        {"overlapping fragments", {{"a", "d", 1, 1, 5}, {"b", "e", 1, 1, 4}},
         2, 0},
        {"same begin, other end", {{"a", "c", 1, 1, 5}, {"a", "d", 1, 1, 4}},
         2, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        /* a good file with a block of the same size to overwrite */
        g_t[0] = (struct tomb){"a", "c", 1, 1, 5};
        g_t[1] = (struct tomb){"e", "g", 1, 1, 4};
        int nt = cases[c].nt;
        struct rv_table_props p;
        write_table_rd(66, 0, nt, &p);
        uint64_t size;
        struct rv_table_handle h = range_del_handle(66, &size);
        struct rv_block_builder b;
        rv_block_builder_init(&b, 1);
        for (int i = 0; i < nt; i++) {
            const struct tomb *t = &cases[c].t[i];
            char k[16];
            memcpy(k, t->begin, t->blen);
            rv_put_fixed64(k + t->blen,
                           rv_pack_tag(t->seq, cases[c].type
                                                   ? cases[c].type
                                                   : RV_TYPE_RANGE_DELETE));
            assert_int_equal(rv_block_builder_add(&b, k, t->blen + 8,
                                                  t->end, t->elen),
                             RAVEL_OK);
        }
        const char *contents;
        size_t len;
        assert_int_equal(rv_block_builder_finish(&b, &contents, &len),
                         RAVEL_OK);
        assert_int_equal(len, h.size);
        char trailer[9] = {0};
        rv_put_fixed64(trailer + 1,
                       rv_table_block_checksum(contents, len, 0, 66));
        int fd = open(path_of(66), O_WRONLY);
        assert_int_equal(pwrite(fd, contents, len, (off_t)h.offset),
                         (ssize_t)len);
        assert_int_equal(pwrite(fd, trailer, 9, (off_t)(h.offset + len)), 9);
        close(fd);
        rv_block_builder_destroy(&b);
        rv_table *t;
        int rc = open_table(66, 66, &t);
        if (rc != RAVEL_CORRUPT || !strstr(ravel_errmsg(), "000066.sst") ||
            !strstr(ravel_errmsg(), "range deletion block"))
            fail_msg("%s: %d (%s)", cases[c].why, rc, ravel_errmsg());
        (void)size;
    }
}

/* A version-2 file whose properties lack the block's handle: corrupt (a
** reader must not take the file for one without tombstones). */
static void test_range_del_version_without_block(void **state)
{
    (void)state;
    uint64_t rng = 80;
    int n = make_entries(50, &rng);
    struct rv_table_props p;
    uint64_t size = write_table_rd(67, n, 0, &p);
    /* a version-1 file relabelled version 2, its footer re-sealed */
    int fd = open(path_of(67), O_RDWR);
    char f[RV_TABLE_FOOTER_SIZE];
    assert_int_equal(pread(fd, f, sizeof f,
                           (off_t)(size - RV_TABLE_FOOTER_SIZE)),
                     (ssize_t)sizeof f);
    rv_put_fixed32(f + 56, RV_TABLE_VERSION);
    rv_put_fixed64(f + 64, XXH3_64bits_withSeed(f, 64, 67));
    assert_int_equal(pwrite(fd, f, sizeof f,
                            (off_t)(size - RV_TABLE_FOOTER_SIZE)),
                     (ssize_t)sizeof f);
    close(fd);
    rv_table *t;
    assert_int_equal(open_table(67, 67, &t), RAVEL_CORRUPT);
    assert_non_null(strstr(ravel_errmsg(), "ravel.range_del_block"));
    assert_non_null(strstr(ravel_errmsg(), "000067.sst"));
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
        cmocka_unit_test(test_round_trip_cached),
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_get_versions_across_blocks),
        cmocka_unit_test(test_get_damaged_block),
        cmocka_unit_test(test_cache_serves_blocks),
        cmocka_unit_test(test_get_threads),
        cmocka_unit_test(test_compression_round_trip),
        cmocka_unit_test(test_incompressible_blocks_stored_raw),
        cmocka_unit_test(test_compressed_damage_detected),
        cmocka_unit_test(test_unsupported_compression),
        cmocka_unit_test(test_compressed_length_mismatch),
        cmocka_unit_test(test_no_filter_and_empty),
        cmocka_unit_test(test_wrong_file_number),
        cmocka_unit_test(test_every_damage_detected),
        cmocka_unit_test(test_undecodable_block_stops_iterator),
        cmocka_unit_test(test_session_id),
        cmocka_unit_test(test_range_del_round_trip),
        cmocka_unit_test(test_range_del_only),
        cmocka_unit_test(test_range_del_none_is_version_1),
        cmocka_unit_test(test_range_del_empty_refused),
        cmocka_unit_test(test_range_del_damage_detected),
        cmocka_unit_test(test_range_del_bad_entries),
        cmocka_unit_test(test_range_del_version_without_block),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
