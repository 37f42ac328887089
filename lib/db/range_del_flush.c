/*
** range_del_flush.c -- the point deletions a flush writes for a memtable's
** range deletions (see range_del_flush.h).  Owns: finding the user keys a
** tombstone covers in older data, and an iterator over the sorted
** deletions made for them.  Does not own: the flush (flush.c) or which
** entries it keeps (keep.c).
**
** Cost: one pass over the keys each tombstone covers, in memory until the
** flush ends (docs/design.md, "Range deletes").
*/
#include "db/range_del_flush.h"
#include "base/dbformat.h"
#include "db/db.h"
#include "db/level_iter.h"
#include "memtable/range_del.h"
#include "util/error.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The deletions made: internal keys, sorted, each its own allocation. */
struct rdf_key {
    char *k;
    size_t len;
};
struct rdf_keys {
    struct rdf_key *e;
    size_t n, cap;
};

static int rdf_keys_add(struct rdf_keys *ks, const char *ukey, size_t ulen,
                        uint64_t seq)
{
    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? 2 * ks->cap : 64;
        struct rdf_key *e = realloc(ks->e, cap * sizeof *e);
        if (!e)
            return rv_error(RAVEL_NOMEM, "flush: out of memory for range "
                            "deletions");
        ks->e = e;
        ks->cap = cap;
    }
    char *p = malloc(ulen + RV_TAG_SIZE);
    if (!p)
        return rv_error(RAVEL_NOMEM, "flush: out of memory for range "
                        "deletions");
    if (ulen)
        memcpy(p, ukey, ulen);
    rv_put_fixed64(p + ulen, rv_pack_tag(seq, RV_TYPE_DELETE));
    ks->e[ks->n].k = p;
    ks->e[ks->n++].len = ulen + RV_TAG_SIZE;
    return RAVEL_OK;
}

static void rdf_keys_free(struct rdf_keys *ks)
{
    for (size_t i = 0; i < ks->n; i++)
        free(ks->e[i].k);
    free(ks->e);
}

/* ------------------------------------------- an iterator over them */

struct rdf_iter {
    struct rv_iter base;
    struct rdf_keys keys;
    size_t at;     /* position in KEYS (sorted); keys.n when invalid */
};

static int rdf_cmp(const void *a, const void *b)
{
    const struct rdf_key *x = a, *y = b;
    return rv_ikey_compare(x->k, x->len, y->k, y->len);
}

static int rdf_valid(const struct rv_iter *it)
{
    const struct rdf_iter *r = (const struct rdf_iter *)it;
    return r->at < r->keys.n;
}

static void rdf_first(struct rv_iter *it)
{
    ((struct rdf_iter *)it)->at = 0;
}

static void rdf_last(struct rv_iter *it)
{
    struct rdf_iter *r = (struct rdf_iter *)it;
    r->at = r->keys.n ? r->keys.n - 1 : 0;
}

/* The first position whose key is >= TARGET. */
static size_t rdf_lower(const struct rdf_iter *r, const char *t, size_t tl)
{
    size_t lo = 0, hi = r->keys.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rv_ikey_compare(r->keys.e[mid].k, r->keys.e[mid].len, t, tl) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void rdf_seek(struct rv_iter *it, const char *t, size_t tl)
{
    struct rdf_iter *r = (struct rdf_iter *)it;
    r->at = rdf_lower(r, t, tl);
}

static void rdf_seek_for_prev(struct rv_iter *it, const char *t, size_t tl)
{
    struct rdf_iter *r = (struct rdf_iter *)it;
    size_t lo = rdf_lower(r, t, tl);
    if (lo < r->keys.n) {
        if (rv_ikey_compare(r->keys.e[lo].k, r->keys.e[lo].len, t, tl) ==
            0) {
            r->at = lo;
            return;
        }
    }
    r->at = lo ? lo - 1 : r->keys.n;
}

static void rdf_next(struct rv_iter *it)
{
    ((struct rdf_iter *)it)->at++;
}

static void rdf_prev(struct rv_iter *it)
{
    struct rdf_iter *r = (struct rdf_iter *)it;
    r->at = r->at ? r->at - 1 : r->keys.n;
}

static const char *rdf_key(const struct rv_iter *it, size_t *len)
{
    const struct rdf_iter *r = (const struct rdf_iter *)it;
    *len = r->keys.e[r->at].len;
    return r->keys.e[r->at].k;
}

static const char *rdf_value(const struct rv_iter *it, size_t *len)
{
    (void)it;
    *len = 0;
    return "";
}

static int rdf_status(const struct rv_iter *it)
{
    (void)it;
    return RAVEL_OK;
}

static void rdf_destroy(struct rv_iter *it)
{
    struct rdf_iter *r = (struct rdf_iter *)it;
    rdf_keys_free(&r->keys);
    free(r);
}

static const struct rv_iter_ops rdf_ops = {
    rdf_valid, rdf_first, rdf_last, rdf_seek, rdf_seek_for_prev,
    rdf_next, rdf_prev, rdf_key, rdf_value, rdf_status, rdf_destroy,
};

/* ------------------------------------------------- finding the keys */

/* Every source of V: its memtables and table files. */
static struct rv_iter *rdf_version_iter(ravel_db *db, struct rv_version *v,
                                        int *rc)
{
    int n = 1 + v->n_imm + v->files->n[0];
    for (int l = 1; l < RV_NUM_LEVELS; l++)
        n += v->files->n[l] > 0;
    struct rv_iter **c = calloc((size_t)n, sizeof *c);
    int made = 0;
    *rc = c ? RAVEL_OK : rv_error(RAVEL_NOMEM, "flush: out of memory");
    int flags = *rc ? 0 : rv_table_cache_read_flags(db->tables);
    for (int i = -1; i < v->n_imm && !*rc; i++)
        if ((c[made] = rv_memtable_iter_new(i < 0 ? v->mem : v->imm[i])))
            made++;
        else
            *rc = rv_error(RAVEL_NOMEM, "flush: out of memory");
    for (int i = 0; i < v->files->n[0] && !*rc; i++)
        if ((c[made] = rv_table_cache_iter(db->tables, v->files->level[0][i],
                                           flags, rc)))
            made++;
    for (int l = 1; l < RV_NUM_LEVELS && !*rc; l++)
        if (v->files->n[l] > 0) {
            if ((c[made] = rv_level_iter_new(db->tables, v->files->level[l],
                                             v->files->n[l], flags, NULL)))
                made++;
            else
                *rc = rv_error(RAVEL_NOMEM, "flush: out of memory");
        }
    struct rv_iter *m = NULL;
    if (!*rc && !(m = rv_merging_iter_new(c, made)))
        *rc = rv_error(RAVEL_NOMEM, "flush: out of memory");
    if (*rc && !m)
        for (int i = 0; i < made && c; i++)
            c[i]->ops->destroy(c[i]);
    free(c);
    return m;
}

/* Adds a deletion at T's sequence for each user key in [T.begin, T.end)
** that IT holds with an older sequence. */
static int rdf_cover(struct rv_iter *it, const struct rv_range_tomb *t,
                     struct rdf_keys *ks)
{
    size_t tl = t->blen + RV_TAG_SIZE;
    char *target = malloc(tl);
    if (!target)
        return rv_error(RAVEL_NOMEM, "flush: out of memory");
    if (t->blen)
        memcpy(target, t->begin, t->blen);
    rv_put_fixed64(target + t->blen, (RV_MAX_SEQUENCE << 8) | 0xff);
    const char *last = NULL; /* the user key last given a deletion */
    size_t last_len = 0;
    int rc = RAVEL_OK;
    for (it->ops->seek(it, target, tl); !rc && it->ops->valid(it);
         it->ops->next(it)) {
        size_t klen;
        const char *k = it->ops->key(it, &klen);
        if (klen < RV_TAG_SIZE)
            continue;
        size_t ulen = klen - RV_TAG_SIZE;
        if (rv_user_key_compare(k, ulen, t->end, t->elen) >= 0)
            break;
        uint64_t seq = rv_tag_sequence(rv_get_fixed64(k + ulen));
        if (seq >= t->seq ||
            (last && rv_user_key_compare(k, ulen, last, last_len) == 0))
            continue;
        rc = rdf_keys_add(ks, k, ulen, t->seq);
        if (!rc) {
            last = ks->e[ks->n - 1].k;
            last_len = ulen;
        }
    }
    if (!rc)
        rc = it->ops->status(it);
    free(target);
    return rc;
}

/* The deletions MEM's tombstones stand for, as a sorted iterator. */
static struct rv_iter *rdf_deletions(ravel_db *db, struct rv_version *v,
                                     rv_memtable *mem, int *rc)
{
    int n;
    const struct rv_range_tomb *tombs =
        rv_range_dels_list(rv_memtable_range_dels(mem), &n);
    struct rdf_iter *r = calloc(1, sizeof *r);
    struct rv_iter *src = r ? rdf_version_iter(db, v, rc) : NULL;
    if (!r)
        *rc = rv_error(RAVEL_NOMEM, "flush: out of memory");
    for (int i = 0; src && i < n && !*rc; i++)
        *rc = rdf_cover(src, &tombs[i], &r->keys);
    if (src)
        src->ops->destroy(src);
    if (*rc) {
        if (r)
            rdf_destroy(&r->base);
        return NULL;
    }
    if (r->keys.n > 0) /* qsort's array may not be NULL, even empty */
        qsort(r->keys.e, r->keys.n, sizeof *r->keys.e, rdf_cmp);
    r->base.ops = &rdf_ops;
    r->at = r->keys.n;
    return &r->base;
}

struct rv_iter *rv_range_del_flush_iter(ravel_db *db, struct rv_version *v,
                                        rv_memtable *mem, int *rc)
{
    *rc = RAVEL_OK;
    struct rv_iter *own = rv_memtable_iter_new(mem);
    if (!own) {
        *rc = rv_error(RAVEL_NOMEM, "out of memory for a flush iterator");
        return NULL;
    }
    if (rv_range_dels_count(rv_memtable_range_dels(mem)) == 0)
        return own;
    struct rv_iter *dels = rdf_deletions(db, v, mem, rc);
    if (!dels) {
        own->ops->destroy(own);
        return NULL;
    }
    struct rv_iter *c[2] = {own, dels};
    struct rv_iter *m = rv_merging_iter_new(c, 2);
    if (!m)
        *rc = rv_error(RAVEL_NOMEM, "out of memory for a flush iterator");
    return m;
}

#ifdef RAVEL_TEST_HOOKS
/* written by a test before its database writes, read by flushes: relaxed
** (a flag, no data published through it) */
static _Atomic int rdf_test_tables;

int rv_range_del_flush_to_tables(void)
{
    return atomic_load_explicit(&rdf_test_tables, memory_order_relaxed);
}

void rv_range_del_flush_test_tables(int on)
{
    atomic_store_explicit(&rdf_test_tables, on, memory_order_relaxed);
}
#endif
