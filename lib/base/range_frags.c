/*
** range_frags.c -- fragmenting range tombstones and searching the
** fragments (range_frags.h).
**
** Fragmenting (RocksDB's range_tombstone_fragmenter.cc in its simplest
** form): every begin and end is a boundary; sorted and deduplicated, the
** boundaries cut the key space into pieces [b_i, b_i+1); each tombstone
** lands on the pieces from its begin's boundary to its end's, found by
** binary search; pieces nobody covers are dropped.
*/
#include "base/range_frags.h"
#include "base/dbformat.h"

#include <stdlib.h>
#include <string.h>

void rv_range_frags_free(struct rv_range_frags *f)
{
    while (f) {
        struct rv_range_frags *older = f->older;
        free(f->pfx);
        free(f->lcp_bytes);
        free(f->frag);
        free(f->seqs);
        free(f);
        f = older;
    }
}

/* ------------------------------------------------------- fragmenting */

struct frag_bound {
    const char *k;
    size_t len;
};

static int frag_bound_cmp(const void *a, const void *b)
{
    const struct frag_bound *x = a, *y = b;
    return rv_user_key_compare(x->k, x->len, y->k, y->len);
}

static int frag_seq_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x > y ? -1 : x < y;
}

/* The 8 bytes of K (LEN) after its first SKIP, big-endian, zero-padded. */
static uint64_t frag_prefix(const char *k, size_t len, size_t skip)
{
    unsigned char b[8] = {0};
    size_t n = len > skip ? len - skip : 0;
    if (n > 8)
        n = 8;
    if (n)
        memcpy(b, k + skip, n);
    uint64_t v;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&v, b, 8);
    v = __builtin_bswap64(v);
#else
    v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
#endif
    return v;
}

/* Fills F's search prefixes from its sorted bounds B (NB of them). */
static int frag_prefixes(struct rv_range_frags *f, const struct frag_bound *b,
                         int nb)
{
    size_t lcp = 0;
    if (nb > 0) {
        const struct frag_bound *x = &b[0], *y = &b[nb - 1];
        while (lcp < x->len && lcp < y->len && x->k[lcp] == y->k[lcp])
            lcp++;
    }
    f->lcp = lcp;
    f->lcp_bytes = malloc(lcp ? lcp : 1);
    size_t n = (size_t)(f->n ? f->n : 1);
    f->pfx = malloc(2 * n * sizeof *f->pfx); /* and EPFX after it */
    if (!f->pfx || !f->lcp_bytes)
        return -1;
    if (lcp)
        memcpy(f->lcp_bytes, b[0].k, lcp);
    f->epfx = f->pfx + n;
    for (int i = 0; i < f->n; i++) {
        f->pfx[i] = frag_prefix(f->frag[i].begin, f->frag[i].blen, lcp);
        f->epfx[i] = frag_prefix(f->frag[i].end, f->frag[i].elen, lcp);
    }
    return 0;
}

/* The index of K among the N sorted, distinct bounds B (K is one). */
static int frag_bound_index(const struct frag_bound *b, int n, const char *k,
                            size_t len)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (rv_user_key_compare(b[mid].k, b[mid].len, k, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct rv_range_frags *rv_range_frags_build(const struct rv_range_tomb *tombs,
                                            int n)
{
    struct rv_range_frags *f = calloc(1, sizeof *f);
    struct frag_bound *b = malloc(2 * (size_t)n * sizeof *b);
    int *count = NULL, *at = NULL;
    if (!f || !b)
        goto fail;
    int nb = 0;
    for (int i = 0; i < n; i++) {
        b[nb++] = (struct frag_bound){tombs[i].begin, tombs[i].blen};
        b[nb++] = (struct frag_bound){tombs[i].end, tombs[i].elen};
    }
    qsort(b, (size_t)nb, sizeof *b, frag_bound_cmp);
    int u = 0;
    for (int i = 0; i < nb; i++)
        if (u == 0 || frag_bound_cmp(&b[u - 1], &b[i]) != 0)
            b[u++] = b[i];
    nb = u;
    /* pieces 0 .. nb-2: how many tombstones cover each */
    count = calloc((size_t)nb, sizeof *count);
    at = calloc((size_t)nb, sizeof *at);
    if (!count || !at)
        goto fail;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        int lo = frag_bound_index(b, nb, tombs[i].begin, tombs[i].blen);
        int hi = frag_bound_index(b, nb, tombs[i].end, tombs[i].elen);
        for (int p = lo; p < hi; p++)
            count[p]++;
        total += (size_t)(hi - lo);
    }
    f->seqs = malloc((total ? total : 1) * sizeof *f->seqs);
    f->frag = malloc((size_t)(nb ? nb : 1) * sizeof *f->frag);
    if (!f->seqs || !f->frag)
        goto fail;
    size_t off = 0;
    for (int p = 0; p + 1 < nb; p++) {
        at[p] = (int)off;
        off += (size_t)count[p];
        count[p] = 0;
    }
    for (int i = 0; i < n; i++) {
        int lo = frag_bound_index(b, nb, tombs[i].begin, tombs[i].blen);
        int hi = frag_bound_index(b, nb, tombs[i].end, tombs[i].elen);
        for (int p = lo; p < hi; p++)
            f->seqs[at[p] + count[p]++] = tombs[i].seq;
    }
    for (int p = 0; p + 1 < nb; p++) {
        if (count[p] == 0)
            continue;
        struct rv_range_frag *g = &f->frag[f->n++];
        g->begin = b[p].k;
        g->blen = b[p].len;
        g->end = b[p + 1].k;
        g->elen = b[p + 1].len;
        g->seqs = f->seqs + at[p];
        g->n_seqs = count[p];
        qsort(f->seqs + at[p], (size_t)count[p], sizeof *f->seqs,
              frag_seq_desc);
    }
    f->n_tombs = n;
    if (frag_prefixes(f, b, nb) < 0)
        goto fail;
    free(b);
    free(count);
    free(at);
    return f;
fail:
    if (f) {
        free(f->pfx);
        free(f->lcp_bytes);
        free(f->frag);
        free(f->seqs);
    }
    free(f);
    free(b);
    free(count);
    free(at);
    return NULL;
}

/* The fragment of F covering KEY, or NULL. */
static inline const struct rv_range_frag *
frags_find(const struct rv_range_frags *f, const void *key, size_t klen)
{
    if (f->n == 0)
        return NULL;
    /* LO: how many fragments begin at or before KEY */
    int lo;
    const char *k = key;
    uint64_t kp = 0;
    int fast = klen >= f->lcp && memcmp(k, f->lcp_bytes, f->lcp) == 0;
    if (!fast) {
        /* KEY leaves the prefix every bound shares: before them all, or
        ** after them all */
        lo = rv_user_key_compare(key, klen, f->frag[0].begin,
                                 f->frag[0].blen) < 0 ? 0 : f->n;
    } else {
        kp = frag_prefix(k, klen, f->lcp);
        /* the first prefix >= KP, by a search without branches to
        ** mispredict (Khuong and Morin's lower bound).  Between two gets
        ** the blocks they read push the array out of the CPU's caches,
        ** so each step would wait on a miss: both places the next step
        ** may read are fetched ahead, and the misses overlap. */
        const uint64_t *b = f->pfx;
        size_t n = (size_t)f->n;
        while (n > 1) {
            size_t half = n / 2;
            __builtin_prefetch(b + half / 2);
            __builtin_prefetch(b + half + half / 2);
            b = b[half] < kp ? b + half : b;
            n -= half;
        }
        lo = (int)(b - f->pfx) + (*b < kp);
        /* equal prefixes: the whole keys decide */
        while (lo < f->n && f->pfx[lo] == kp &&
               rv_user_key_compare(f->frag[lo].begin, f->frag[lo].blen, key,
                                   klen) <= 0)
            lo++;
    }
    if (lo == 0)
        return NULL;
    /* past the fragment's end?  Its prefix mostly says without the key
    ** (a key not covered touches no fragment) */
    if (fast && kp != f->epfx[lo - 1]) {
        if (kp > f->epfx[lo - 1])
            return NULL;
    } else if (rv_user_key_compare(key, klen, f->frag[lo - 1].end,
                                   f->frag[lo - 1].elen) >= 0) {
        return NULL;
    }
    return &f->frag[lo - 1];
}

const struct rv_range_frag *rv_range_frags_find(const struct rv_range_frags *f,
                                                const void *key, size_t klen)
{
    return frags_find(f, key, klen);
}

uint64_t rv_range_frags_seq(const struct rv_range_frags *f, const void *key,
                            size_t klen, const struct rv_read_view *view)
{
    const struct rv_range_frag *g = frags_find(f, key, klen);
    if (!g)
        return 0;
    for (int i = 0; i < g->n_seqs; i++)
        if (rv_read_view_sees(view, g->seqs[i]))
            return g->seqs[i];
    return 0;
}
