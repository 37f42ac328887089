/*
** range_del_agg.c -- what range deletions hide from a read (see
** range_del_agg.h).  Owns: gathering the memtables' and table files'
** fragments and asking each for the newest visible tombstone over a key.  Does not
** own: the snapshots (memtable/range_del.c) or what a reader does with
** the answer (db_read.c, db_iter.c).
**
** Cost for reads of unrelated keys: a memtable without range deletions
** costs one atomic load; one with them, a binary search of its fragments;
** the same for a table file (a pointer test for one without).
*/
#include "db/range_del_agg.h"
#include "db/version.h"
#include "memtable/memtable.h"
#include "memtable/range_del.h"
#include "util/error.h"

#include <stdlib.h>

/* The newest visible tombstone over KEY in memtable M (0: none). */
static uint64_t agg_memtable_seq(rv_memtable *m, const void *key,
                                 size_t klen, const struct rv_read_view *view,
                                 int *rc)
{
    struct rv_range_dels *r = rv_memtable_range_dels(m);
    if (rv_range_dels_count(r) == 0)
        return 0;
    int nomem = 0;
    const struct rv_range_frags *f = rv_range_dels_frags(r, &nomem);
    if (nomem) {
        *rc = rv_error(RAVEL_NOMEM, "out of memory fragmenting range "
                       "deletions");
        return 0;
    }
    return f ? rv_range_frags_seq(f, key, klen, view) : 0;
}

uint64_t rv_range_del_seq(struct rv_version *v, const void *key, size_t klen,
                          const struct rv_read_view *view, int *rc)
{
    uint64_t best = agg_memtable_seq(v->mem, key, klen, view, rc);
    for (int i = 0; i < v->n_imm; i++) {
        uint64_t s = agg_memtable_seq(v->imm[i], key, klen, view, rc);
        if (s > best)
            best = s;
    }
    return best;
}

/* Appends F (held by H, or NULL) to A.  RAVEL_NOMEM. */
static int agg_append(struct rv_range_del_agg *a,
                      const struct rv_range_frags *f, rv_cache_handle *h)
{
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 4;
        const struct rv_range_frags **nf =
            realloc(a->frags, (size_t)cap * sizeof *nf);
        if (nf)
            a->frags = nf;
        rv_cache_handle **nh =
            nf ? realloc(a->hold, (size_t)cap * sizeof *nh) : NULL;
        if (!nh)
            return rv_error(RAVEL_NOMEM, "out of memory gathering range "
                            "deletions");
        a->hold = nh;
        a->cap = cap;
    }
    a->frags[a->n] = f;
    a->hold[a->n] = h;
    a->n++;
    return RAVEL_OK;
}

int rv_range_del_agg_new(struct rv_version *v, rv_table_cache *tc,
                         struct rv_range_del_agg **out)
{
    *out = NULL;
    struct rv_range_del_agg *a = calloc(1, sizeof *a);
    if (!a)
        return rv_error(RAVEL_NOMEM, "out of memory gathering range "
                        "deletions");
    a->tc = tc;
    int rc = RAVEL_OK;
    /* every memtable: one without tombstones when counted may have one
    ** now (the active one), and none may be skipped for it */
    for (int i = -1; i < v->n_imm && rc == RAVEL_OK; i++) {
        struct rv_range_dels *r =
            rv_memtable_range_dels(i < 0 ? v->mem : v->imm[i]);
        if (rv_range_dels_count(r) == 0)
            continue;
        int nomem = 0;
        const struct rv_range_frags *g = rv_range_dels_frags(r, &nomem);
        if (nomem)
            rc = rv_error(RAVEL_NOMEM, "out of memory fragmenting range "
                          "deletions");
        else if (g)
            rc = agg_append(a, g, NULL);
    }
    if (rc) {
        rv_range_del_agg_free(a);
        return rc;
    }
    *out = a;
    return RAVEL_OK;
}

int rv_range_del_agg_add_file(struct rv_range_del_agg *a, struct rv_file *f)
{
    const struct rv_range_frags *g;
    rv_cache_handle *h;
    int rc = rv_table_cache_range_frags(a->tc, f, &g, &h);
    if (rc || !g)
        return rc;
    for (int i = 0; i < a->n; i++)
        if (a->frags[i] == g) { /* a level iterator came back to it */
            if (h)
                rv_table_cache_release(a->tc, h);
            return RAVEL_OK;
        }
    rc = agg_append(a, g, h);
    if (rc && h)
        rv_table_cache_release(a->tc, h);
    return rc;
}

void rv_range_del_agg_free(struct rv_range_del_agg *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->n; i++)
        if (a->hold[i])
            rv_table_cache_release(a->tc, a->hold[i]);
    free(a->frags);
    free(a->hold);
    free(a);
}

uint64_t rv_range_del_agg_seq(const struct rv_range_del_agg *a,
                              const void *key, size_t klen,
                              const struct rv_read_view *view)
{
    uint64_t best = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t s = rv_range_frags_seq(a->frags[i], key, klen, view);
        if (s > best)
            best = s;
    }
    return best;
}
