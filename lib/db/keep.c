/*
** keep.c -- which versions a flush or a compaction keeps (keep.h).
*/
#include "db/keep.h"
#include "base/dbformat.h"
#include "util/coding.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

int rv_key_buf_set(struct rv_key_buf *k, const char *p, size_t n)
{
    if (n > k->cap) {
        size_t cap = k->cap ? k->cap : 64;
        while (cap < n)
            cap *= 2;
        char *d = realloc(k->data, cap);
        if (!d)
            return rv_error(RAVEL_NOMEM, "out of memory for a %zu-byte key",
                            n);
        k->data = d;
        k->cap = cap;
    }
    if (n)
        memcpy(k->data, p, n);
    k->len = n;
    return RAVEL_OK;
}


/* The stripe of SEQ: the index of the first bound >= SEQ, or n_bounds. */
static int keep_stripe(const struct rv_keep *k, uint64_t seq)
{
    int lo = 0, hi = k->n_bounds;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (k->bounds[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 1 if SEQ lies in one of K's uncertain ranges. */
static int keep_uncertain(const struct rv_keep *k, uint64_t seq)
{
    int lo = 0, hi = k->n_uncertain;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (k->uncertain[mid].hi < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k->n_uncertain && k->uncertain[lo].lo <= seq;
}

/* 1 if the entry IKEY (entries come in internal-key order) must be kept;
** 0 if a newer version of its key in the same stripe hides it from every
** reader; -1 on allocation failure.  An uncertain entry is kept and hides
** nothing: a reader may not see it. */
int rv_keep_entry(struct rv_keep *k, const char *ikey,
                            size_t klen)
{
    size_t ulen = klen - RV_TAG_SIZE;
    uint64_t seq = rv_tag_sequence(rv_get_fixed64(ikey + ulen));
    if (keep_uncertain(k, seq))
        return 1;
    int stripe = keep_stripe(k, seq);
    if (k->have_prev && stripe == k->prev_stripe &&
        rv_user_key_compare(ikey, ulen, k->prev.data, k->prev.len) == 0)
        return 0;
    if (rv_key_buf_set(&k->prev, ikey, ulen))
        return -1;
    k->have_prev = 1;
    k->prev_stripe = stripe;
    return 1;
}

int rv_keep_hides(const struct rv_keep *k, uint64_t newer, uint64_t older)
{
    return !keep_uncertain(k, newer) && !keep_uncertain(k, older) &&
           keep_stripe(k, newer) == keep_stripe(k, older);
}

static int keep_cmp_range(const void *a, const void *b)
{
    const struct rv_seq_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Fills K from the live snapshots' bounds (SNAPS, N, ascending by
** all_below) and, with write_prepared, the commit watermark WATERMARK
** (UINT64_MAX otherwise): see the top of this file. */
int rv_keep_init(struct rv_keep *k,
                           const struct rv_snapshot_bounds *snaps, int n,
                           uint64_t watermark)
{
    int prepared = watermark != UINT64_MAX;
    k->bounds = malloc((size_t)(n + 1) * sizeof *k->bounds);
    k->uncertain = malloc((size_t)(n + 1) * sizeof *k->uncertain);
    if (!k->bounds || !k->uncertain)
        return rv_error(RAVEL_NOMEM, "out of memory listing snapshots");
    for (int i = 0; i < n; i++) {
        k->bounds[k->n_bounds++] = snaps[i].all_below;
        if (snaps[i].seq > snaps[i].all_below) {
            k->uncertain[k->n_uncertain].lo = snaps[i].all_below + 1;
            k->uncertain[k->n_uncertain++].hi = snaps[i].seq;
        }
    }
    if (prepared) {
        /* readers without a snapshot see everything at or below the
        ** watermark, and above it what has committed by then */
        int at = k->n_bounds;
        while (at > 0 && k->bounds[at - 1] > watermark) {
            k->bounds[at] = k->bounds[at - 1];
            at--;
        }
        k->bounds[at] = watermark;
        k->n_bounds++;
        k->uncertain[k->n_uncertain].lo = watermark + 1;
        k->uncertain[k->n_uncertain++].hi = UINT64_MAX;
    }
    qsort(k->uncertain, (size_t)k->n_uncertain, sizeof *k->uncertain,
          keep_cmp_range);
    int merged = 0;
    for (int i = 0; i < k->n_uncertain; i++) {
        if (merged > 0 && k->uncertain[i].lo <= k->uncertain[merged - 1].hi)
        {
            if (k->uncertain[i].hi > k->uncertain[merged - 1].hi)
                k->uncertain[merged - 1].hi = k->uncertain[i].hi;
        } else {
            k->uncertain[merged++] = k->uncertain[i];
        }
    }
    k->n_uncertain = merged;
    return RAVEL_OK;
}

void rv_keep_free(struct rv_keep *k)
{
    free(k->bounds);
    free(k->uncertain);
    free(k->prev.data);
}

int rv_keep_seen_by_all(const struct rv_keep *k, uint64_t seq)
{
    return !keep_uncertain(k, seq) && keep_stripe(k, seq) == 0;
}

int rv_keep_init_locked(struct rv_keep *k, ravel_db *db)
{
    int nomem = 0, n = 0;
    uint64_t watermark = db->write.ordering == RV_ORDERING_WRITE_PREPARED
        ? atomic_load(&db->write.commit_watermark) : UINT64_MAX;
    struct rv_snapshot_bounds *snaps =
        rv_db_snapshot_list_locked(db, &n, &nomem);
    int rc = nomem ? rv_error(RAVEL_NOMEM, "out of memory listing snapshots")
                   : rv_keep_init(k, snaps, n, watermark);
    free(snaps);
    return rc;
}
