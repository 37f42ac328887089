/*
** block_builder.c -- building a block (layout in block_builder.h).
*/
#include "table/block_builder.h"
#include "util/coding.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

void rv_block_builder_init(struct rv_block_builder *b, int restart_interval)
{
    memset(b, 0, sizeof *b);
    /* Any interval works (a long one makes a seek and a prev scan more
    ** entries); block_restart_interval is 1 .. INT_MAX. */
    b->restart_interval = restart_interval < 1 ? 1 : restart_interval;
}

void rv_block_builder_destroy(struct rv_block_builder *b)
{
    free(b->buf);
    free(b->restarts);
    free(b->last_key);
    memset(b, 0, sizeof *b);
}

void rv_block_builder_reset(struct rv_block_builder *b)
{
    b->len = 0;
    b->num_restarts = 0;
    b->counter = 0;
    b->entries = 0;
    b->last_len = 0;
}

/* Grows *P (holding *CAP bytes) to at least NEED bytes. */
static int block_builder_grow(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return RAVEL_OK;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    char *q = realloc(*p, c);
    if (!q)
        return rv_error(RAVEL_NOMEM, "out of memory building a %zu-byte "
                        "table block", need);
    *p = q;
    *cap = c;
    return RAVEL_OK;
}

static int block_builder_add_restart(struct rv_block_builder *b)
{
    if (b->num_restarts == b->restarts_cap) {
        uint32_t c = b->restarts_cap ? b->restarts_cap * 2 : 16;
        uint32_t *r = realloc(b->restarts, c * sizeof *r);
        if (!r)
            return rv_error(RAVEL_NOMEM, "out of memory building a table "
                            "block");
        b->restarts = r;
        b->restarts_cap = c;
    }
    b->restarts[b->num_restarts++] = (uint32_t)b->len;
    return RAVEL_OK;
}

int rv_block_builder_add(struct rv_block_builder *b, const char *key,
                         size_t klen, const char *val, size_t vlen)
{
    size_t shared = 0;
    int restart = b->entries == 0 || b->counter >= b->restart_interval;
    if (!restart) {
        size_t max = klen < b->last_len ? klen : b->last_len;
        while (shared < max && key[shared] == b->last_key[shared])
            shared++;
    }
    size_t unshared = klen - shared;
    size_t need = b->len + 15 + unshared + vlen;
    int rc = block_builder_grow(&b->buf, &b->cap, need);
    if (rc == RAVEL_OK)
        rc = block_builder_grow(&b->last_key, &b->last_cap, klen);
    if (rc == RAVEL_OK && restart)
        rc = block_builder_add_restart(b);
    if (rc)
        return rc;
    if (restart)
        b->counter = 0;
    char *p = b->buf + b->len;
    p += rv_put_varint32(p, (uint32_t)shared);
    p += rv_put_varint32(p, (uint32_t)unshared);
    p += rv_put_varint32(p, (uint32_t)vlen);
    memcpy(p, key + shared, unshared);
    p += unshared;
    if (vlen)
        memcpy(p, val, vlen);
    p += vlen;
    b->len = (size_t)(p - b->buf);
    memcpy(b->last_key + shared, key + shared, unshared);
    b->last_len = klen;
    b->counter++;
    b->entries++;
    return RAVEL_OK;
}

size_t rv_block_builder_size(const struct rv_block_builder *b)
{
    uint32_t restarts = b->num_restarts ? b->num_restarts : 1;
    return b->len + (size_t)restarts * 4 + 4;
}

int rv_block_builder_finish(struct rv_block_builder *b, const char **out,
                            size_t *len)
{
    *out = NULL;
    int rc = RAVEL_OK;
    if (b->num_restarts == 0)
        rc = block_builder_add_restart(b); /* an empty block: restart 0 */
    size_t size = b->len + (size_t)b->num_restarts * 4 + 4;
    if (rc == RAVEL_OK)
        rc = block_builder_grow(&b->buf, &b->cap, size);
    if (rc)
        return rc;
    char *p = b->buf + b->len;
    for (uint32_t i = 0; i < b->num_restarts; i++, p += 4)
        rv_put_fixed32(p, b->restarts[i]);
    rv_put_fixed32(p, b->num_restarts);
    *out = b->buf;
    *len = size;
    return RAVEL_OK;
}
