/*
** block.c -- the block iterator (see block.h; layout in block_builder.h).
**
** Position: CUR is the offset of the current entry, NEXT the offset after
** it; KEY holds the current entry's whole key, rebuilt from the previous
** one (prefix compression), VAL points into the block.  Moving backward
** re-scans from the restart point before the current entry, as LevelDB's
** block iterator does: a prev costs up to a restart interval of decoding.
*/
#include "table/block.h"
#include "util/coding.h"
#include "util/error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>


int rv_block_check(const char *data, size_t len)
{
    if (len < 4)
        return rv_error(RAVEL_CORRUPT, "block of %zu bytes has no room for "
                        "its restart count", len);
    uint32_t n = rv_get_fixed32(data + len - 4);
    if (n == 0 || (uint64_t)n * 4 > len - 4)
        return rv_error(RAVEL_CORRUPT, "block of %zu bytes says it has %u "
                        "restart points", len, n);
    size_t restarts_off = len - 4 - (size_t)n * 4;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = rv_get_fixed32(data + restarts_off + (size_t)i * 4);
        if (r >= restarts_off && !(r == 0 && restarts_off == 0))
            return rv_error(RAVEL_CORRUPT, "block restart %u points at byte "
                            "offset %u, past the entries (%zu bytes)", i, r,
                            restarts_off);
        if (i > 0 && r <= prev)
            return rv_error(RAVEL_CORRUPT, "block restart %u (byte offset "
                            "%u) does not follow restart %u (%u)", i, r,
                            i - 1, prev);
        prev = r;
    }
    if (rv_get_fixed32(data + restarts_off) != 0)
        return rv_error(RAVEL_CORRUPT, "block's first restart is not at "
                        "byte offset 0");
    return RAVEL_OK;
}

static uint32_t block_restart(const struct rv_block_iter *it, uint32_t i)
{
    return rv_get_fixed32(it->data + it->restarts_off + (size_t)i * 4);
}

static void block_invalidate(struct rv_block_iter *it)
{
    it->cur = it->next = it->restarts_off;
    it->restart_index = it->num_restarts;
}

static void block_corrupt(struct rv_block_iter *it, size_t off, const char *what)
{
    if (it->status == RAVEL_OK)
        it->status = rv_error(RAVEL_CORRUPT, "block entry at byte offset "
                              "%zu: %s", off, what);
    block_invalidate(it);
}

/* Decodes the entry at it->next into the current position, rebuilding the
** key from the current one.  Returns 0 at the end of the entries or on
** corruption (the iterator is then invalid). */
static int block_decode_next(struct rv_block_iter *it)
{
    size_t off = it->next;
    if (off >= it->restarts_off) {
        block_invalidate(it);
        return 0;
    }
    const char *p = it->data + off, *limit = it->data + it->restarts_off;
    uint32_t shared, unshared, vlen;
    if (!(p = rv_get_varint32(p, limit, &shared)) ||
        !(p = rv_get_varint32(p, limit, &unshared)) ||
        !(p = rv_get_varint32(p, limit, &vlen))) {
        block_corrupt(it, off, "truncated entry header");
        return 0;
    }
    if (shared > it->key_len) {
        block_corrupt(it, off, "shares more key bytes than the previous "
                      "key has");
        return 0;
    }
    if ((size_t)(limit - p) < (size_t)unshared + vlen) {
        block_corrupt(it, off, "key or value runs past the entries");
        return 0;
    }
    size_t klen = (size_t)shared + unshared;
    if (klen > it->key_cap) {
        size_t cap = it->key_cap ? it->key_cap : 64;
        while (cap < klen)
            cap *= 2;
        char *k = it->key == it->key_inline ? malloc(cap)
                                            : realloc(it->key, cap);
        if (k && it->key == it->key_inline)
            memcpy(k, it->key_inline, it->key_len);
        if (!k) {
            it->status = rv_error(RAVEL_NOMEM, "out of memory reading a "
                                  "table block");
            block_invalidate(it);
            return 0;
        }
        it->key = k;
        it->key_cap = cap;
    }
    memcpy(it->key + shared, p, unshared);
    it->key_len = klen;
    it->val = p + unshared;
    it->val_len = vlen;
    it->cur = off;
    it->next = (size_t)(it->val + vlen - it->data);
    while (it->restart_index + 1 < it->num_restarts &&
           block_restart(it, it->restart_index + 1) <= off)
        it->restart_index++;
    return 1;
}

/* Positions before restart I: the next decode reads its entry. */
static void block_seek_restart(struct rv_block_iter *it, uint32_t i)
{
    it->key_len = 0;
    it->restart_index = i;
    it->next = block_restart(it, i);
    it->cur = it->restarts_off;
}

static int block_valid(const struct rv_iter *base)
{
    const struct rv_block_iter *it = (const struct rv_block_iter *)base;
    return it->cur < it->restarts_off;
}

static void block_seek_to_first(struct rv_iter *base)
{
    struct rv_block_iter *it = (struct rv_block_iter *)base;
    if (it->status)
        return;
    block_seek_restart(it, 0);
    block_decode_next(it);
}

static void block_seek_to_last(struct rv_iter *base)
{
    struct rv_block_iter *it = (struct rv_block_iter *)base;
    if (it->status)
        return;
    block_seek_restart(it, it->num_restarts - 1);
    while (block_decode_next(it) && it->next < it->restarts_off)
        ;
}

/* The whole key of the entry at restart I, in place (a restart entry
** shares nothing with the one before it).  Returns NULL, with the
** iterator marked corrupt, if the entry does not decode. */
static const char *block_restart_key(struct rv_block_iter *it, uint32_t i,
                                     size_t *klen)
{
    size_t off = block_restart(it, i);
    const char *p = it->data + off, *limit = it->data + it->restarts_off;
    uint32_t shared, unshared, vlen;
    if (!(p = rv_get_varint32(p, limit, &shared)) ||
        !(p = rv_get_varint32(p, limit, &unshared)) ||
        !(p = rv_get_varint32(p, limit, &vlen)) || shared != 0 ||
        (size_t)(limit - p) < (size_t)unshared + vlen) {
        block_corrupt(it, off, "bad entry at a restart point");
        return NULL;
    }
    *klen = unshared;
    return p;
}

/* The last restart whose key is < TARGET (0 if none); restart keys are
** whole (shared = 0), so they compare in place, without decoding or
** copying anything else. */
static uint32_t block_find_restart(struct rv_block_iter *it, const char *target,
                                   size_t tlen)
{
    uint32_t lo = 0, hi = it->num_restarts - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        size_t klen;
        const char *key = block_restart_key(it, mid, &klen);
        if (!key)
            return 0; /* corrupt: the status says so */
        if (it->cmp(key, klen, target, tlen) < 0)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void block_seek(struct rv_iter *base, const char *target, size_t tlen)
{
    struct rv_block_iter *it = (struct rv_block_iter *)base;
    if (it->status)
        return;
    uint32_t r = block_find_restart(it, target, tlen);
    if (it->status)
        return;
    block_seek_restart(it, r);
    while (block_decode_next(it))
        if (it->cmp(it->key, it->key_len, target, tlen) >= 0)
            return;
}

static void block_prev(struct rv_iter *base);

static void block_seek_for_prev(struct rv_iter *base, const char *target,
                                size_t tlen)
{
    struct rv_block_iter *it = (struct rv_block_iter *)base;
    block_seek(base, target, tlen);
    if (it->status)
        return;
    if (!block_valid(base)) {
        block_seek_to_last(base);
        return;
    }
    if (it->cmp(it->key, it->key_len, target, tlen) > 0)
        block_prev(base);
}

static void block_next(struct rv_iter *base)
{
    struct rv_block_iter *it = (struct rv_block_iter *)base;
    if (block_valid(base))
        block_decode_next(it);
}

static void block_prev(struct rv_iter *base)
{
    struct rv_block_iter *it = (struct rv_block_iter *)base;
    if (!block_valid(base))
        return;
    size_t target = it->cur;
    uint32_t r = it->restart_index;
    while (block_restart(it, r) >= target) {
        if (r == 0) {
            block_invalidate(it); /* before the first entry */
            return;
        }
        r--;
    }
    block_seek_restart(it, r);
    while (block_decode_next(it) && it->next < target)
        ;
}

static const char *block_key(const struct rv_iter *base, size_t *len)
{
    const struct rv_block_iter *it = (const struct rv_block_iter *)base;
    *len = it->key_len;
    return it->key;
}

static const char *block_value(const struct rv_iter *base, size_t *len)
{
    const struct rv_block_iter *it = (const struct rv_block_iter *)base;
    *len = it->val_len;
    return it->val;
}

static int block_status(const struct rv_iter *base)
{
    return ((const struct rv_block_iter *)base)->status;
}

void rv_block_iter_release(struct rv_block_iter *it)
{
    if (it->key != it->key_inline)
        free(it->key);
    it->key = it->key_inline;
    it->key_cap = sizeof it->key_inline;
}

static void block_destroy(struct rv_iter *base)
{
    struct rv_block_iter *it = (struct rv_block_iter *)base;
    rv_block_iter_release(it);
    free(it);
}

static const struct rv_iter_ops block_iter_ops = {
    .valid = block_valid,
    .seek_to_first = block_seek_to_first,
    .seek_to_last = block_seek_to_last,
    .seek = block_seek,
    .seek_for_prev = block_seek_for_prev,
    .next = block_next,
    .prev = block_prev,
    .key = block_key,
    .value = block_value,
    .status = block_status,
    .destroy = block_destroy,
};

void rv_block_iter_init(struct rv_block_iter *it, const char *data,
                        size_t len, rv_block_compare_fn cmp, int checked)
{
    memset(it, 0, offsetof(struct rv_block_iter, key_inline));
    it->base.ops = &block_iter_ops;
    it->data = data;
    it->cmp = cmp;
    it->key = it->key_inline;
    it->key_cap = sizeof it->key_inline;
    it->status = checked ? RAVEL_OK : rv_block_check(data, len);
    if (it->status == RAVEL_OK) {
        it->num_restarts = rv_get_fixed32(data + len - 4);
        it->restarts_off = len - 4 - (size_t)it->num_restarts * 4;
    }
    block_invalidate(it);
}

/* A heap iterator over DATA; CHECKED as for rv_block_iter_init. */
static struct rv_iter *block_iter_create(const char *data, size_t len,
                                         rv_block_compare_fn cmp, int checked)
{
    struct rv_block_iter *it = malloc(sizeof *it);
    if (!it)
        return NULL;
    rv_block_iter_init(it, data, len, cmp, checked);
    return &it->base;
}

struct rv_iter *rv_block_iter_new(const char *data, size_t len,
                                  rv_block_compare_fn cmp)
{
    return block_iter_create(data, len, cmp, 0);
}

struct rv_iter *rv_block_iter_new_checked(const char *data, size_t len,
                                          rv_block_compare_fn cmp)
{
    return block_iter_create(data, len, cmp, 1);
}
