/*
** index_search.c -- the slice array over a table's index block and the
** seek that uses it (index_search.h).
*/
#include "table/index_search.h"
#include "base/dbformat.h"
#include "util/coding.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The 8 bytes of KEY (KLEN bytes) from byte FROM, big-endian, zero-padded
** past its end. */
static uint64_t index_slice(const char *key, size_t klen, size_t from)
{
    unsigned char b[8] = {0};
    if (klen > from)
        memcpy(b, key + from, klen - from < 8 ? klen - from : 8);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

static size_t index_common_prefix(const char *a, size_t alen, const char *b,
                                  size_t blen)
{
    size_t n = alen < blen ? alen : blen, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* The byte offset of restart I of the block C walks. */
static uint32_t index_restart(const struct rv_block_cursor *c, uint32_t i)
{
    return rv_get_fixed32(c->data + c->restarts_off + (size_t)i * 4);
}

/* 1 if every entry of the block C walks is a restart whose key lies whole
** in the block (what the seek relies on, and what the table builder
** writes: restart interval 1); sets *N to their count and S's prefix (the
** shared prefix of the first and the last separators' user keys, which
** every key between them has too: they are sorted). */
static int index_check(struct rv_index_search *s, struct rv_block_cursor *c,
                       uint32_t *n)
{
    const char *first = NULL, *last = NULL;
    size_t first_len = 0, last_len = 0;
    *n = 0;
    for (rv_block_cursor_seek_to_first(c); rv_block_cursor_valid(c);
         rv_block_cursor_next(c), (*n)++) {
        if (*n >= c->num_restarts || index_restart(c, *n) != c->cur ||
            (uintptr_t)c->key < (uintptr_t)c->data ||
            (uintptr_t)c->key >= (uintptr_t)(c->data + c->restarts_off))
            return 0;
        if (!first) {
            first = c->key;
            first_len = c->key_len - RV_TAG_SIZE;
        }
        last = c->key;
        last_len = c->key_len - RV_TAG_SIZE;
    }
    if (c->status || *n == 0 || *n != c->num_restarts)
        return 0;
    s->prefix = first;
    s->shared = index_common_prefix(first, first_len, last, last_len);
    return 1;
}

void rv_index_search_build(struct rv_index_search *s, const char *index,
                           size_t len)
{
    memset(s, 0, sizeof *s);
    struct rv_block_cursor c;
    rv_block_cursor_init_checked(&c, index, len, rv_ikey_compare,
                                 RV_TAG_SIZE);
    uint32_t n;
    uint64_t *slices = NULL;
    if (index_check(s, &c, &n) &&
        (slices = malloc((size_t)n * sizeof *slices)) != NULL) {
        uint32_t i = 0;
        for (rv_block_cursor_seek_to_first(&c); rv_block_cursor_valid(&c);
             rv_block_cursor_next(&c))
            slices[i++] = index_slice(c.key, c.key_len - RV_TAG_SIZE,
                                      s->shared);
        s->slices = slices;
        s->n = n;
    } else {
        memset(s, 0, sizeof *s);
    }
    rv_block_cursor_destroy(&c);
}

void rv_index_search_free(struct rv_index_search *s)
{
    free(s->slices);
    memset(s, 0, sizeof *s);
}

/* The first entry in [LO, HI) whose slice is >= T (> T when STRICT). */
static uint32_t index_bound(const uint64_t *slices, uint32_t lo, uint32_t hi,
                            uint64_t t, int strict)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (slices[mid] < t || (strict && slices[mid] == t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void rv_index_search_seek(const struct rv_index_search *s,
                          struct rv_block_cursor *c, const char *target,
                          size_t tlen)
{
    if (!s->slices || c->status || tlen < RV_TAG_SIZE) {
        rv_block_cursor_seek(c, target, tlen);
        return;
    }
    size_t ulen = tlen - RV_TAG_SIZE;
    size_t m = ulen < s->shared ? ulen : s->shared;
    int r = m ? memcmp(target, s->prefix, m) : 0;
    if (r < 0 || (r == 0 && ulen < s->shared)) {
        /* below every separator's user key: the first entry */
        rv_block_cursor_seek_to_restart(c, 0);
        return;
    }
    if (r > 0) {
        /* above every separator's user key: none */
        rv_block_cursor_seek_to_restart(c, s->n);
        return;
    }
    uint64_t t = index_slice(target, ulen, s->shared);
    uint32_t lo = index_bound(s->slices, 0, s->n, t, 0);
    uint32_t hi = index_bound(s->slices, lo, s->n, t, 1);
    /* entries before LO are < TARGET, entries from HI are > it; between,
    ** the slices tie and whole keys decide */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        rv_block_cursor_seek_to_restart(c, mid);
        if (c->status)
            return;
        if (rv_ikey_compare(c->key, c->key_len, target, tlen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    rv_block_cursor_seek_to_restart(c, lo);
}
