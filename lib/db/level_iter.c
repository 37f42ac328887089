/*
** level_iter.c -- an iterator over one sorted level (level 1 and below):
** its files do not overlap and are sorted by key, so the level reads as
** one sequence, opening one file's table at a time.  A seek opens only
** the file that can hold the target (a binary search on the files' key
** ranges), where giving every file of the level to the merging iterator
** would seek all of them.
**
** The files array belongs to a file set the caller keeps referenced for
** the iterator's life.  Each file opened hands its range tombstones to
** the reader's aggregator (range_del_agg.h) before any of its entries is
** shown, so a covered version in a deeper level is known as covered when
** the merge reaches it.  A table that fails to open ends the iteration
** with its error in status().
*/
#include "db/level_iter.h"
#include "base/dbformat.h"
#include "db/range_del_agg.h"

#include <stdlib.h>

struct level_iter {
    struct rv_iter base;
    rv_table_cache *tc;
    struct rv_file *const *files;
    int n;
    int flags;              /* RV_TABLE_READ_* of every file's reads */
    struct rv_range_del_agg *agg; /* given each opened file's tombstones,
                                  ** or NULL */
    int at;                 /* the file CUR reads, or -1 */
    struct rv_iter *cur;
    int status;
};

static void level_iter_close_file(struct level_iter *it)
{
    if (it->cur)
        it->cur->ops->destroy(it->cur);
    it->cur = NULL;
    it->at = -1;
}

/* Makes file AT current (0 <= AT < n), or ends the iteration: 1 if it is
** open. */
static int level_iter_open(struct level_iter *it, int at)
{
    if (it->at == at && it->cur)
        return 1;
    level_iter_close_file(it);
    if (at < 0 || at >= it->n || it->status)
        return 0;
    int rc = RAVEL_OK;
    it->cur = rv_table_cache_iter(it->tc, it->files[at], it->flags, &rc);
    if (it->cur && it->agg)
        rc = rv_range_del_agg_add_file(it->agg, it->files[at]);
    if (!it->cur || rc) {
        level_iter_close_file(it);
        it->status = rc ? rc : RAVEL_NOMEM;
        return 0;
    }
    it->at = at;
    return 1;
}

/* While the current file is done, the next file's first entry (STEP 1)
** or the previous file's last (STEP -1). */
static void level_iter_skip(struct level_iter *it, int step)
{
    while (it->cur && !it->cur->ops->valid(it->cur)) {
        if (it->cur->ops->status(it->cur)) {
            it->status = it->cur->ops->status(it->cur);
            level_iter_close_file(it);
            return;
        }
        if (!level_iter_open(it, it->at + step))
            return;
        if (step > 0)
            it->cur->ops->seek_to_first(it->cur);
        else
            it->cur->ops->seek_to_last(it->cur);
    }
}

static int level_iter_valid(const struct rv_iter *base)
{
    const struct level_iter *it = (const struct level_iter *)base;
    return it->cur && it->cur->ops->valid(it->cur);
}

static void level_iter_seek_to_first(struct rv_iter *base)
{
    struct level_iter *it = (struct level_iter *)base;
    if (!level_iter_open(it, 0))
        return;
    it->cur->ops->seek_to_first(it->cur);
    level_iter_skip(it, 1);
}

static void level_iter_seek_to_last(struct rv_iter *base)
{
    struct level_iter *it = (struct level_iter *)base;
    if (!level_iter_open(it, it->n - 1))
        return;
    it->cur->ops->seek_to_last(it->cur);
    level_iter_skip(it, -1);
}

static void level_iter_seek(struct rv_iter *base, const char *target,
                            size_t tlen)
{
    struct level_iter *it = (struct level_iter *)base;
    /* the first file whose largest key is at or after the target */
    int lo = 0, hi = it->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const struct rv_file_meta *m = &it->files[mid]->meta;
        if (rv_ikey_compare(m->largest, m->largest_len, target, tlen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!level_iter_open(it, lo))
        return;
    it->cur->ops->seek(it->cur, target, tlen);
    level_iter_skip(it, 1);
}

static void level_iter_seek_for_prev(struct rv_iter *base, const char *target,
                                     size_t tlen)
{
    struct level_iter *it = (struct level_iter *)base;
    /* the last file whose smallest key is at or before the target */
    int lo = 0, hi = it->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const struct rv_file_meta *m = &it->files[mid]->meta;
        if (rv_ikey_compare(m->smallest, m->smallest_len, target, tlen) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!level_iter_open(it, lo - 1))
        return;
    it->cur->ops->seek_for_prev(it->cur, target, tlen);
    level_iter_skip(it, -1);
}

static void level_iter_next(struct rv_iter *base)
{
    struct level_iter *it = (struct level_iter *)base;
    it->cur->ops->next(it->cur);
    level_iter_skip(it, 1);
}

static void level_iter_prev(struct rv_iter *base)
{
    struct level_iter *it = (struct level_iter *)base;
    it->cur->ops->prev(it->cur);
    level_iter_skip(it, -1);
}

static const char *level_iter_key(const struct rv_iter *base, size_t *len)
{
    const struct level_iter *it = (const struct level_iter *)base;
    return it->cur->ops->key(it->cur, len);
}

static const char *level_iter_value(const struct rv_iter *base, size_t *len)
{
    const struct level_iter *it = (const struct level_iter *)base;
    return it->cur->ops->value(it->cur, len);
}

static int level_iter_status(const struct rv_iter *base)
{
    const struct level_iter *it = (const struct level_iter *)base;
    if (it->status)
        return it->status;
    return it->cur ? it->cur->ops->status(it->cur) : RAVEL_OK;
}

static void level_iter_destroy(struct rv_iter *base)
{
    struct level_iter *it = (struct level_iter *)base;
    level_iter_close_file(it);
    free(it);
}

static const struct rv_iter_ops level_iter_ops = {
    level_iter_valid,     level_iter_seek_to_first, level_iter_seek_to_last,
    level_iter_seek,      level_iter_seek_for_prev, level_iter_next,
    level_iter_prev,      level_iter_key,           level_iter_value,
    level_iter_status,    level_iter_destroy,
};

struct rv_iter *rv_level_iter_new(rv_table_cache *tc,
                                  struct rv_file *const *files, int n,
                                  int flags, struct rv_range_del_agg *agg)
{
    struct level_iter *it = calloc(1, sizeof *it);
    if (!it)
        return NULL;
    it->base.ops = &level_iter_ops;
    it->tc = tc;
    it->files = files;
    it->n = n;
    it->flags = flags;
    it->agg = agg;
    it->at = -1;
    return &it->base;
}
