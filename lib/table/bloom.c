/*
** bloom.c -- the cache-local bloom filter (layout in bloom.h).
**
** The number of probes follows from the bits per key: k = bits * ln 2,
** rounded, at least 1 and at most 30, the optimum for a classic filter;
** the cache-local one is within a few percent of its own optimum there.
*/
#include "table/bloom.h"
#include "util/coding.h"
#include "util/error.h"

#include <xxhash.h>

#include <stdlib.h>
#include <string.h>

#define BLOOM_LINE_BITS (RV_BLOOM_LINE * 8)
#define BLOOM_MAX_PROBES 30
#define BLOOM_PROBE_MULTIPLIER 0x9e3779b9u

void rv_bloom_builder_init(struct rv_bloom_builder *b, int bits_per_key)
{
    memset(b, 0, sizeof *b);
    b->bits_per_key = bits_per_key < 1 ? 1 : bits_per_key > 100 ? 100
                                                                  : bits_per_key;
}

void rv_bloom_builder_destroy(struct rv_bloom_builder *b)
{
    free(b->hashes);
    b->hashes = NULL;
    b->n = b->cap = 0;
}

int rv_bloom_add(struct rv_bloom_builder *b, const void *key, size_t klen)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        uint64_t *p = realloc(b->hashes, cap * sizeof *p);
        if (!p)
            return rv_error(RAVEL_NOMEM, "out of memory building a filter "
                            "of %zu keys", b->n);
        b->hashes = p;
        b->cap = cap;
    }
    b->hashes[b->n++] = XXH3_64bits(key, klen);
    return RAVEL_OK;
}

static uint32_t bloom_num_lines(const struct rv_bloom_builder *b)
{
    uint64_t bits = (uint64_t)b->n * (uint64_t)b->bits_per_key;
    uint64_t lines = (bits + BLOOM_LINE_BITS - 1) / BLOOM_LINE_BITS;
    return lines > UINT32_MAX ? UINT32_MAX : (uint32_t)lines;
}

static int bloom_num_probes(int bits_per_key)
{
    int k = (bits_per_key * 69 + 50) / 100; /* bits * ln 2, rounded */
    return k < 1 ? 1 : k > BLOOM_MAX_PROBES ? BLOOM_MAX_PROBES : k;
}

size_t rv_bloom_size(const struct rv_bloom_builder *b)
{
    return (size_t)bloom_num_lines(b) * RV_BLOOM_LINE + RV_BLOOM_TRAILER;
}

/* The line of hash H among NUM_LINES. */
static uint32_t bloom_line(uint64_t h, uint32_t num_lines)
{
    return (uint32_t)(((h >> 32) * (uint64_t)num_lines) >> 32);
}

void rv_bloom_finish(struct rv_bloom_builder *b, char *dst)
{
    uint32_t num_lines = bloom_num_lines(b);
    int probes = bloom_num_probes(b->bits_per_key);
    memset(dst, 0, (size_t)num_lines * RV_BLOOM_LINE);
    for (size_t i = 0; i < b->n && num_lines; i++) {
        uint64_t h = b->hashes[i];
        unsigned char *line = (unsigned char *)dst +
                              (size_t)bloom_line(h, num_lines) * RV_BLOOM_LINE;
        uint32_t h1 = (uint32_t)h;
        for (int p = 0; p < probes; p++) {
            uint32_t bit = h1 >> 23;
            line[bit >> 3] |= (unsigned char)(1u << (bit & 7));
            h1 *= BLOOM_PROBE_MULTIPLIER;
        }
    }
    char *t = dst + (size_t)num_lines * RV_BLOOM_LINE;
    t[0] = (char)probes;
    t[1] = t[2] = t[3] = 0;
    rv_put_fixed32(t + 4, num_lines);
    b->n = 0;
}

int rv_bloom_check(const char *filter, size_t len)
{
    if (len < RV_BLOOM_TRAILER)
        return rv_error(RAVEL_CORRUPT, "filter of %zu bytes is shorter than "
                        "its %d-byte trailer", len, RV_BLOOM_TRAILER);
    const char *t = filter + len - RV_BLOOM_TRAILER;
    int probes = (unsigned char)t[0];
    uint32_t num_lines = rv_get_fixed32(t + 4);
    if (probes < 1 || probes > BLOOM_MAX_PROBES || t[1] || t[2] || t[3])
        return rv_error(RAVEL_CORRUPT, "filter trailer is malformed (%d "
                        "probes)", probes);
    if ((uint64_t)num_lines * RV_BLOOM_LINE != len - RV_BLOOM_TRAILER)
        return rv_error(RAVEL_CORRUPT, "filter says %u lines but holds %zu "
                        "bytes of them", num_lines, len - RV_BLOOM_TRAILER);
    return RAVEL_OK;
}

int rv_bloom_may_match(const char *filter, size_t len, const void *key,
                       size_t klen)
{
    const char *t = filter + len - RV_BLOOM_TRAILER;
    uint32_t num_lines = rv_get_fixed32(t + 4);
    if (num_lines == 0)
        return 1;
    int probes = (unsigned char)t[0];
    uint64_t h = XXH3_64bits(key, klen);
    const unsigned char *line = (const unsigned char *)filter +
                                (size_t)bloom_line(h, num_lines) * RV_BLOOM_LINE;
    uint32_t h1 = (uint32_t)h;
    for (int p = 0; p < probes; p++) {
        uint32_t bit = h1 >> 23;
        if (!(line[bit >> 3] & (1u << (bit & 7))))
            return 0;
        h1 *= BLOOM_PROBE_MULTIPLIER;
    }
    return 1;
}
