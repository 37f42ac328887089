/*
** range_del_agg.c -- what range deletions hide from a read (see
** range_del_agg.h).  Owns: gathering the memtables' fragment snapshots
** and asking each for the newest visible tombstone over a key.  Does not
** own: the snapshots (memtable/range_del.c) or what a reader does with
** the answer (db_read.c, db_iter.c).
**
** Cost for reads of unrelated keys: a memtable without range deletions
** costs one atomic load; one with them, a binary search of its fragments.
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

int rv_range_del_agg_new(struct rv_version *v, struct rv_range_del_agg **out)
{
    *out = NULL;
    int any = 0;
    for (int i = -1; i < v->n_imm && !any; i++)
        any = rv_range_dels_count(rv_memtable_range_dels(
                  i < 0 ? v->mem : v->imm[i])) > 0;
    if (!any)
        return RAVEL_OK;
    /* a slot for every memtable: one without tombstones when counted may
    ** have one now (the active one), and none may be skipped for it */
    struct rv_range_del_agg *a = malloc(sizeof *a);
    const struct rv_range_frags **f =
        malloc((size_t)(1 + v->n_imm) * sizeof *f);
    if (!a || !f)
        goto nomem;
    a->n = 0;
    a->frags = f;
    for (int i = -1; i < v->n_imm; i++) {
        int nomem = 0;
        const struct rv_range_frags *g = rv_range_dels_frags(
            rv_memtable_range_dels(i < 0 ? v->mem : v->imm[i]), &nomem);
        if (nomem)
            goto nomem;
        if (g)
            a->frags[a->n++] = g;
    }
    *out = a;
    return RAVEL_OK;
nomem:
    free(a);
    free(f);
    return rv_error(RAVEL_NOMEM, "out of memory gathering range deletions");
}

void rv_range_del_agg_free(struct rv_range_del_agg *a)
{
    if (!a)
        return;
    free(a->frags);
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
