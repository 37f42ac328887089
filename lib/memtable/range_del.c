/*
** range_del.c -- a memtable's range deletions: the list written by adds
** and its fragmented snapshot for readers (layout and concurrency in
** range_del.h).  Does not own: deciding what a tombstone hides from a read
** (db/range_del_agg.c) or writing them into table files at a flush
** (db/range_del_out.c), fragmenting (base/range_frags.c).
*/
#include "memtable/range_del.h"
#include "base/dbformat.h"
#include "util/error.h"
#include "util/mutex.h"

#include <stdlib.h>
#include <string.h>

struct rv_range_dels {
    rv_mutex mu;
    /* Written under MU by adds; read by a flush once the memtable is
    ** immutable, and under MU by rebuilds. */
    struct rv_range_tomb *tombs;
    int cap;
    /* Tombstones in TOMBS: stored with release under MU after the
    ** tombstone is in place, loaded with acquire by readers. */
    _Atomic int n;
    /* Bytes of keys and list entries added: under MU, relaxed (an
    ** estimate readers may see late). */
    _Atomic size_t bytes;
    /* The newest snapshot, stored with release under MU, loaded with
    ** acquire by readers; replaced ones hang off its OLDER chain. */
    struct rv_range_frags *_Atomic frags;
};

struct rv_range_dels *rv_range_dels_new(void)
{
    struct rv_range_dels *r = calloc(1, sizeof *r);
    if (r && rv_mutex_init(&r->mu) != 0) {
        free(r);
        r = NULL;
    }
    return r;
}

void rv_range_dels_free(struct rv_range_dels *r)
{
    if (!r)
        return;
    int n = atomic_load_explicit(&r->n, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        free((char *)r->tombs[i].begin); /* END shares the allocation */
    free(r->tombs);
    rv_range_frags_free(atomic_load_explicit(&r->frags,
                                             memory_order_relaxed));
    rv_mutex_destroy(&r->mu);
    free(r);
}

int rv_range_dels_add(struct rv_range_dels *r, uint64_t seq,
                      const void *begin, size_t blen, const void *end,
                      size_t elen)
{
    char *keys = malloc(blen + elen + 1);
    if (!keys)
        return rv_error(RAVEL_NOMEM, "memtable: out of memory for a range "
                        "delete");
    if (blen)
        memcpy(keys, begin, blen);
    if (elen)
        memcpy(keys + blen, end, elen);
    rv_mutex_lock(&r->mu);
    int n = atomic_load_explicit(&r->n, memory_order_relaxed);
    if (n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 8;
        void *t = realloc(r->tombs, (size_t)cap * sizeof *r->tombs);
        if (!t) {
            rv_mutex_unlock(&r->mu);
            free(keys);
            return rv_error(RAVEL_NOMEM, "memtable: out of memory for a "
                            "range delete");
        }
        r->tombs = t;
        r->cap = cap;
    }
    struct rv_range_tomb *t = &r->tombs[n];
    t->begin = keys;
    t->blen = blen;
    t->end = keys + blen;
    t->elen = elen;
    t->seq = seq;
    atomic_store_explicit(&r->n, n + 1, memory_order_release);
    atomic_fetch_add_explicit(&r->bytes, blen + elen + 1 + sizeof *t,
                              memory_order_relaxed);
    rv_mutex_unlock(&r->mu);
    return RAVEL_OK;
}

size_t rv_range_dels_bytes(const struct rv_range_dels *r)
{
    return atomic_load_explicit(&r->bytes, memory_order_relaxed);
}

int rv_range_dels_count(const struct rv_range_dels *r)
{
    return atomic_load_explicit(&r->n, memory_order_acquire);
}

const struct rv_range_tomb *rv_range_dels_list(struct rv_range_dels *r,
                                               int *n)
{
    *n = atomic_load_explicit(&r->n, memory_order_acquire);
    return r->tombs;
}

/* Bytes F takes. */
static size_t frags_bytes(const struct rv_range_frags *f)
{
    size_t seqs = 0;
    for (int i = 0; i < f->n; i++)
        seqs += (size_t)f->frag[i].n_seqs;
    return sizeof *f + (size_t)f->n * (sizeof *f->frag + 2 * sizeof(uint64_t)) +
           seqs * sizeof(uint64_t) + f->lcp;
}

const struct rv_range_frags *rv_range_dels_frags(struct rv_range_dels *r,
                                                 int *nomem)
{
    *nomem = 0;
    int n = atomic_load_explicit(&r->n, memory_order_acquire);
    if (n == 0)
        return NULL;
    struct rv_range_frags *f =
        atomic_load_explicit(&r->frags, memory_order_acquire);
    if (f && f->n_tombs >= n)
        return f;
    rv_mutex_lock(&r->mu);
    f = atomic_load_explicit(&r->frags, memory_order_relaxed);
    n = atomic_load_explicit(&r->n, memory_order_relaxed);
    if (!f || f->n_tombs < n) {
        struct rv_range_frags *nf = rv_range_frags_build(r->tombs, n);
        if (nf) {
            /* Replaced snapshots stay until the memtable goes (a reader
            ** may be searching one): counted in its memory usage, so
            ** reads interleaved with many range deletes make it fill
            ** and be flushed rather than grow without bound. */
            atomic_fetch_add_explicit(&r->bytes, frags_bytes(nf),
                                      memory_order_relaxed);
            nf->older = f;
            atomic_store_explicit(&r->frags, nf, memory_order_release);
        } else {
            *nomem = 1;
        }
        f = nf;
    }
    rv_mutex_unlock(&r->mu);
    return f;
}

int rv_range_dels_overlap(struct rv_range_dels *r, const void *smallest,
                          size_t slen, const void *largest, size_t llen)
{
    int hit = 0;
    rv_mutex_lock(&r->mu);
    int n = atomic_load_explicit(&r->n, memory_order_relaxed);
    for (int i = 0; i < n && !hit; i++) {
        const struct rv_range_tomb *t = &r->tombs[i];
        hit = rv_user_key_compare(t->begin, t->blen, largest, llen) <= 0 &&
              rv_user_key_compare(t->end, t->elen, smallest, slen) > 0;
    }
    rv_mutex_unlock(&r->mu);
    return hit;
}
