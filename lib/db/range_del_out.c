/*
** range_del_out.c -- the range tombstones a flush or compaction writes
** (range_del_out.h).  Owns: the job's list of tombstones and the part of
** each that falls in one output file.  Does not own: the files
** (table_output.c), their block (table/range_del_block.c), or when a file
** is cut (flush.c, compaction.c).
**
** Cost: each cut looks at every tombstone of the job (a job's tombstones
** are few next to its entries); nothing for a job without any.
*/
#include "db/range_del_out.h"
#include "base/dbformat.h"
#include "db/table_output.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

void rv_range_del_out_init(struct rv_range_del_out *o, rv_table_cache *tc)
{
    memset(o, 0, sizeof *o);
    o->tc = tc;
}

void rv_range_del_out_free(struct rv_range_del_out *o)
{
    for (int i = 0; i < o->n_hold; i++)
        rv_table_cache_release(o->tc, o->hold[i]);
    free(o->hold);
    free(o->tombs);
    free(o->dropped);
    rv_range_frags_free(o->frags);
    free(o->lower.data);
    memset(o, 0, sizeof *o);
}

int rv_range_del_out_add(struct rv_range_del_out *o,
                         const struct rv_range_tomb *t, int n)
{
    if (n <= 0)
        return RAVEL_OK;
    if (o->n + n > o->cap) {
        int cap = o->cap ? o->cap : 16;
        while (cap < o->n + n)
            cap *= 2;
        struct rv_range_tomb *m = realloc(o->tombs, (size_t)cap * sizeof *m);
        if (!m)
            return rv_error(RAVEL_NOMEM, "out of memory gathering the range "
                            "tombstones of a flush or compaction");
        o->tombs = m;
        o->cap = cap;
    }
    memcpy(o->tombs + o->n, t, (size_t)n * sizeof *t);
    o->n += n;
    return RAVEL_OK;
}

/* Adds every (fragment, sequence) of F as a tombstone. */
static int rdo_add_frags(struct rv_range_del_out *o,
                         const struct rv_range_frags *f)
{
    int rc = RAVEL_OK;
    for (int i = 0; i < f->n && rc == RAVEL_OK; i++) {
        const struct rv_range_frag *g = &f->frag[i];
        for (int s = 0; s < g->n_seqs && rc == RAVEL_OK; s++) {
            struct rv_range_tomb t = {.begin = g->begin, .blen = g->blen,
                                      .end = g->end, .elen = g->elen,
                                      .seq = g->seqs[s]};
            rc = rv_range_del_out_add(o, &t, 1);
        }
    }
    return rc;
}

static int rdo_hold(struct rv_range_del_out *o, rv_cache_handle *h)
{
    if (o->n_hold == o->cap_hold) {
        int cap = o->cap_hold ? o->cap_hold * 2 : 4;
        rv_cache_handle **m = realloc(o->hold, (size_t)cap * sizeof *m);
        if (!m)
            return rv_error(RAVEL_NOMEM, "out of memory gathering the range "
                            "tombstones of a compaction");
        o->hold = m;
        o->cap_hold = cap;
    }
    o->hold[o->n_hold++] = h;
    return RAVEL_OK;
}

int rv_range_del_out_add_file(struct rv_range_del_out *o, struct rv_file *f)
{
    const struct rv_range_frags *frags;
    rv_cache_handle *h;
    int rc = rv_table_cache_range_frags(o->tc, f, &frags, &h);
    if (rc || !frags)
        return rc;
    if (h && (rc = rdo_hold(o, h)) != RAVEL_OK) {
        rv_table_cache_release(o->tc, h);
        return rc;
    }
    return rdo_add_frags(o, frags);
}

int rv_range_del_out_drop(struct rv_range_del_out *o,
                          int (*drop)(void *ctx,
                                      const struct rv_range_tomb *t),
                          void *ctx)
{
    if (o->n == 0)
        return RAVEL_OK;
    if (!o->dropped && !(o->dropped = calloc((size_t)o->n, 1)))
        return rv_error(RAVEL_NOMEM, "out of memory gathering the range "
                        "tombstones of a compaction");
    for (int i = 0; i < o->n; i++)
        o->dropped[i] = (unsigned char)(drop(ctx, &o->tombs[i]) != 0);
    return RAVEL_OK;
}

const struct rv_range_frag *rv_range_del_out_find(struct rv_range_del_out *o,
                                                  const char *k, size_t klen,
                                                  int *nomem)
{
    if (o->n == 0)
        return NULL;
    if (!o->frags && !(o->frags = rv_range_frags_build(o->tombs, o->n))) {
        *nomem = 1;
        return NULL;
    }
    return rv_range_frags_find(o->frags, k, klen);
}

int rv_range_del_out_any(const struct rv_range_del_out *o)
{
    return o->n > 0;
}

int rv_range_del_out_give(struct rv_range_del_out *o,
                          struct rv_table_output *out, const char *next,
                          size_t nlen)
{
    int rc = RAVEL_OK;
    for (int i = 0; i < o->n && rc == RAVEL_OK; i++) {
        const struct rv_range_tomb *t = &o->tombs[i];
        if (o->dropped && o->dropped[i])
            continue;
        const char *b = t->begin, *e = t->end;
        size_t bl = t->blen, el = t->elen;
        if (o->has_lower &&
            rv_user_key_compare(b, bl, o->lower.data, o->lower.len) < 0) {
            b = o->lower.data;
            bl = o->lower.len;
        }
        if (next && rv_user_key_compare(e, el, next, nlen) > 0) {
            e = next;
            el = nlen;
        }
        if (rv_user_key_compare(b, bl, e, el) < 0)
            rc = rv_table_output_add_range_del(out, b, bl, e, el, t->seq);
    }
    if (rc == RAVEL_OK && next) {
        rc = rv_key_buf_set(&o->lower, next, nlen);
        o->has_lower = 1;
    }
    return rc;
}
