/*
** block.c -- the block cursor and iterator (see block.h; layout in
** block_builder.h).
**
** Position: CUR is the offset of the current entry, NEXT the offset after
** it; KEY is the current entry's whole key: in the block when the entry
** stores it whole (shared = 0), otherwise rebuilt in the cursor's buffer
** from the previous key (prefix compression); VAL points into the block.
** Moving backward re-scans from the restart point before the current
** entry, as LevelDB's block iterator does: a prev costs up to a restart
** interval of decoding.
*/
#include "table/block.h"
#include "util/coding.h"
#include "util/error.h"

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

/* -------------------------------------------------------------- cursor */

static uint32_t block_restart(const struct rv_block_cursor *c, uint32_t i)
{
    return rv_get_fixed32(c->data + c->restarts_off + (size_t)i * 4);
}

static void block_invalidate(struct rv_block_cursor *c)
{
    c->cur = c->next = c->restarts_off;
    c->restart_index = c->num_restarts;
}

static void block_corrupt(struct rv_block_cursor *c, size_t off,
                          const char *what)
{
    if (c->status == RAVEL_OK)
        c->status = rv_error(RAVEL_CORRUPT, "block entry at byte offset "
                             "%zu: %s", off, what);
    block_invalidate(c);
}

/* Decodes the header of the entry at OFF: its lengths, and where its key
** suffix begins (*SUFFIX).  Returns 0 (the cursor then corrupt) if the
** entry does not fit in the entries or its key is too short. */
static int block_decode_header(struct rv_block_cursor *c, size_t off,
                               uint32_t *shared, uint32_t *unshared,
                               uint32_t *vlen, const char **suffix)
{
    const char *p = c->data + off, *limit = c->data + c->restarts_off;
    if (p + 3 <= limit && ((p[0] | p[1] | p[2]) & 0x80) == 0) {
        /* the common case: three one-byte lengths */
        *shared = (unsigned char)p[0];
        *unshared = (unsigned char)p[1];
        *vlen = (unsigned char)p[2];
        p += 3;
    } else if (!(p = rv_get_varint32(p, limit, shared)) ||
               !(p = rv_get_varint32(p, limit, unshared)) ||
               !(p = rv_get_varint32(p, limit, vlen))) {
        block_corrupt(c, off, "truncated entry header");
        return 0;
    }
    if ((size_t)(limit - p) < (size_t)*unshared + *vlen) {
        block_corrupt(c, off, "key or value runs past the entries");
        return 0;
    }
    if ((size_t)*shared + *unshared < c->min_key) {
        block_corrupt(c, off, "key too short for this block");
        return 0;
    }
    *suffix = p;
    return 1;
}

/* Makes room for a key of KLEN bytes in the cursor's buffer, keeping the
** first SHARED bytes of the current key there.  0 on allocation failure. */
static int block_key_room(struct rv_block_cursor *c, size_t klen,
                          size_t shared)
{
    char *buf = c->kbuf ? c->kbuf : c->inline_key;
    size_t cap = c->kbuf ? c->kbuf_cap : sizeof c->inline_key;
    if (klen <= cap) {
        if (c->key != buf)
            memcpy(buf, c->key, shared);
        return 1;
    }
    while (cap < klen)
        cap *= 2;
    char *bigger = malloc(cap);
    if (!bigger)
        return 0;
    memcpy(bigger, c->key, shared);
    free(c->kbuf);
    c->kbuf = bigger;
    c->kbuf_cap = cap;
    return 1;
}

/* Decodes the entry at c->next into the current position.  Returns 0 at
** the end of the entries or on corruption (the cursor is then invalid). */
static int block_decode_next(struct rv_block_cursor *c)
{
    size_t off = c->next;
    if (off >= c->restarts_off) {
        block_invalidate(c);
        return 0;
    }
    uint32_t shared, unshared, vlen;
    const char *p;
    if (!block_decode_header(c, off, &shared, &unshared, &vlen, &p))
        return 0;
    if (shared > c->key_len) {
        block_corrupt(c, off, "shares more key bytes than the previous "
                      "key has");
        return 0;
    }
    size_t klen = (size_t)shared + unshared;
    if (shared == 0) {
        c->key = p;
    } else {
        if (!block_key_room(c, klen, shared)) {
            c->status = rv_error(RAVEL_NOMEM, "out of memory reading a "
                                 "table block");
            block_invalidate(c);
            return 0;
        }
        char *buf = c->kbuf ? c->kbuf : c->inline_key;
        memcpy(buf + shared, p, unshared);
        c->key = buf;
    }
    c->key_len = klen;
    c->val = p + unshared;
    c->val_len = vlen;
    c->cur = off;
    c->next = (size_t)(c->val + vlen - c->data);
    while (c->restart_index + 1 < c->num_restarts &&
           block_restart(c, c->restart_index + 1) <= off)
        c->restart_index++;
    return 1;
}

/* Positions before restart I: the next decode reads its entry. */
static void block_seek_restart(struct rv_block_cursor *c, uint32_t i)
{
    c->key_len = 0;
    c->restart_index = i;
    c->next = block_restart(c, i);
    c->cur = c->restarts_off;
}

void rv_block_cursor_init_checked(struct rv_block_cursor *c, const char *data,
                                  size_t len, rv_block_compare_fn cmp,
                                  size_t min_key)
{
    c->data = data;
    c->num_restarts = rv_get_fixed32(data + len - 4);
    c->restarts_off = len - 4 - (size_t)c->num_restarts * 4;
    c->cmp = cmp;
    c->min_key = min_key;
    c->key = c->val = NULL;
    c->key_len = c->val_len = 0;
    c->status = RAVEL_OK;
    c->kbuf = NULL;
    c->kbuf_cap = 0;
    block_invalidate(c);
}

int rv_block_cursor_init(struct rv_block_cursor *c, const char *data,
                         size_t len, rv_block_compare_fn cmp, size_t min_key)
{
    int rc = rv_block_check(data, len);
    if (rc == RAVEL_OK) {
        rv_block_cursor_init_checked(c, data, len, cmp, min_key);
        return RAVEL_OK;
    }
    memset(c, 0, sizeof *c);
    c->data = data;
    c->cmp = cmp;
    c->min_key = min_key;
    c->status = rc;
    return rc;
}

void rv_block_cursor_destroy(struct rv_block_cursor *c)
{
    free(c->kbuf);
    c->kbuf = NULL;
    c->kbuf_cap = 0;
}

void rv_block_cursor_seek_to_first(struct rv_block_cursor *c)
{
    if (c->status)
        return;
    block_seek_restart(c, 0);
    block_decode_next(c);
}

void rv_block_cursor_seek_to_last(struct rv_block_cursor *c)
{
    if (c->status)
        return;
    block_seek_restart(c, c->num_restarts - 1);
    while (block_decode_next(c) && c->next < c->restarts_off)
        ;
}

/* The whole key of restart I, in place.  0 on corruption. */
static int block_restart_key(struct rv_block_cursor *c, uint32_t i,
                             const char **key, size_t *klen)
{
    size_t off = block_restart(c, i);
    uint32_t shared, unshared, vlen;
    if (!block_decode_header(c, off, &shared, &unshared, &vlen, key))
        return 0;
    if (shared != 0) {
        block_corrupt(c, off, "a restart entry shares key bytes");
        return 0;
    }
    *klen = unshared;
    return 1;
}

/* The last restart whose key is < TARGET (0 if none); restart keys are
** whole (shared = 0), so they compare where they lie. */
static uint32_t block_find_restart(struct rv_block_cursor *c,
                                   const char *target, size_t tlen)
{
    uint32_t lo = 0, hi = c->num_restarts - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        const char *k;
        size_t kl;
        if (!block_restart_key(c, mid, &k, &kl))
            return 0; /* corrupt: the status says so */
        if (c->cmp(k, kl, target, tlen) < 0)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void rv_block_cursor_seek(struct rv_block_cursor *c, const char *target,
                          size_t tlen)
{
    if (c->status)
        return;
    uint32_t r = block_find_restart(c, target, tlen);
    if (c->status)
        return;
    block_seek_restart(c, r);
    while (block_decode_next(c))
        if (c->cmp(c->key, c->key_len, target, tlen) >= 0)
            return;
}

void rv_block_cursor_seek_for_prev(struct rv_block_cursor *c,
                                   const char *target, size_t tlen)
{
    rv_block_cursor_seek(c, target, tlen);
    if (c->status)
        return;
    if (!rv_block_cursor_valid(c)) {
        rv_block_cursor_seek_to_last(c);
        return;
    }
    if (c->cmp(c->key, c->key_len, target, tlen) > 0)
        rv_block_cursor_prev(c);
}

void rv_block_cursor_seek_to_restart(struct rv_block_cursor *c, uint32_t i)
{
    if (c->status)
        return;
    if (i >= c->num_restarts) {
        block_invalidate(c);
        return;
    }
    block_seek_restart(c, i);
    block_decode_next(c);
}

void rv_block_cursor_next(struct rv_block_cursor *c)
{
    if (rv_block_cursor_valid(c))
        block_decode_next(c);
}

void rv_block_cursor_prev(struct rv_block_cursor *c)
{
    if (!rv_block_cursor_valid(c))
        return;
    size_t target = c->cur;
    uint32_t r = c->restart_index;
    while (block_restart(c, r) >= target) {
        if (r == 0) {
            block_invalidate(c); /* before the first entry */
            return;
        }
        r--;
    }
    block_seek_restart(c, r);
    while (block_decode_next(c) && c->next < target)
        ;
}

/* ------------------------------------------------------------ iterator */

struct block_iter {
    struct rv_iter base;
    struct rv_block_cursor c;
};

static int block_iter_valid(const struct rv_iter *base)
{
    return rv_block_cursor_valid(&((const struct block_iter *)base)->c);
}

static void block_iter_seek_to_first(struct rv_iter *base)
{
    rv_block_cursor_seek_to_first(&((struct block_iter *)base)->c);
}

static void block_iter_seek_to_last(struct rv_iter *base)
{
    rv_block_cursor_seek_to_last(&((struct block_iter *)base)->c);
}

static void block_iter_seek(struct rv_iter *base, const char *target,
                            size_t tlen)
{
    rv_block_cursor_seek(&((struct block_iter *)base)->c, target, tlen);
}

static void block_iter_seek_for_prev(struct rv_iter *base, const char *target,
                                     size_t tlen)
{
    rv_block_cursor_seek_for_prev(&((struct block_iter *)base)->c, target,
                                  tlen);
}

static void block_iter_next(struct rv_iter *base)
{
    rv_block_cursor_next(&((struct block_iter *)base)->c);
}

static void block_iter_prev(struct rv_iter *base)
{
    rv_block_cursor_prev(&((struct block_iter *)base)->c);
}

static const char *block_iter_key(const struct rv_iter *base, size_t *len)
{
    const struct block_iter *it = (const struct block_iter *)base;
    *len = it->c.key_len;
    return it->c.key;
}

static const char *block_iter_value(const struct rv_iter *base, size_t *len)
{
    const struct block_iter *it = (const struct block_iter *)base;
    *len = it->c.val_len;
    return it->c.val;
}

static int block_iter_status(const struct rv_iter *base)
{
    return ((const struct block_iter *)base)->c.status;
}

static void block_iter_destroy(struct rv_iter *base)
{
    struct block_iter *it = (struct block_iter *)base;
    rv_block_cursor_destroy(&it->c);
    free(it);
}

static const struct rv_iter_ops block_iter_ops = {
    .valid = block_iter_valid,
    .seek_to_first = block_iter_seek_to_first,
    .seek_to_last = block_iter_seek_to_last,
    .seek = block_iter_seek,
    .seek_for_prev = block_iter_seek_for_prev,
    .next = block_iter_next,
    .prev = block_iter_prev,
    .key = block_iter_key,
    .value = block_iter_value,
    .status = block_iter_status,
    .destroy = block_iter_destroy,
};

struct rv_iter *rv_block_iter_new(const char *data, size_t len,
                                  rv_block_compare_fn cmp, size_t min_key)
{
    struct block_iter *it = malloc(sizeof *it);
    if (!it)
        return NULL;
    it->base.ops = &block_iter_ops;
    rv_block_cursor_init(&it->c, data, len, cmp, min_key);
    return &it->base;
}
