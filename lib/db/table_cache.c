/*
** table_cache.c -- the open table files of a database (table_cache.h).
**
** An rv_cache (util/cache.h) of capacity max_open_files, each open table
** charged 1, keyed by its file number as 8 little-endian bytes.  Two
** readers that miss at once both open the table; the second insert
** replaces the first, which closes when its reader releases it.
*/
#include "base/dbformat.h"
#include "base/range_frags.h"
#include "db/table_cache.h"
#include "util/coding.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rv_table_cache {
    char *dir;
    rv_cache *cache;
    struct rv_table_read_options ro;
    int max_pinned;             /* max_open_files */
    _Atomic int pinned;         /* tables pinned in files */
};

int rv_table_cache_new(const char *dir, int max_open,
                       const struct rv_table_read_options *ro,
                       rv_table_cache **out)
{
    *out = NULL;
    rv_table_cache *tc = calloc(1, sizeof *tc);
    if (!tc || !(tc->dir = strdup(dir))) {
        free(tc);
        return rv_error(RAVEL_NOMEM, "out of memory for the table cache");
    }
    int rc = rv_cache_new((size_t)max_open, &tc->cache);
    if (rc) {
        free(tc->dir);
        free(tc);
        return rc;
    }
    tc->ro = *ro;
    tc->max_pinned = max_open;
    atomic_init(&tc->pinned, 0);
    if (tc->ro.block_cache)
        rv_cache_ref(tc->ro.block_cache);
    *out = tc;
    return RAVEL_OK;
}

void rv_table_cache_free(rv_table_cache *tc)
{
    if (!tc)
        return;
    rv_cache_unref(tc->cache);
    if (tc->ro.block_cache)
        rv_cache_unref(tc->ro.block_cache);
    free(tc->dir);
    free(tc);
}

static void table_cache_close_entry(const void *key, size_t klen, void *value)
{
    (void)key;
    (void)klen;
    rv_table_close(value);
}

/* Opens table NUMBER: from a dup of HOLD_FD, a reader's descriptor that
** outlives the file's name (version.h), or by its path when HOLD_FD is
** -1. */
static int table_cache_open(rv_table_cache *tc, uint64_t number,
                            uint64_t file_size, int hold_fd, rv_table **out)
{
    char path[RV_PATH_MAX];
    int rc = rv_table_file_path(path, tc->dir, number);
    if (rc)
        return rc;
    int fd = hold_fd >= 0 ? fcntl(hold_fd, F_DUPFD_CLOEXEC, 3)
                          : rv_open(path, O_RDONLY, 0);
    if (fd < 0 && hold_fd >= 0)
        return rv_error_errno(RAVEL_IOERR, errno, "dup the descriptor of "
                              "table file %s", path);
    if (fd < 0)
        return rv_error_errno(errno == ENOENT ? RAVEL_CORRUPT : RAVEL_IOERR,
                              errno, "open table file %s%s", path,
                              errno == ENOENT ? " (the manifest names it, "
                              "but it is missing)" : "");
    return rv_table_open(fd, path, number, file_size, &tc->ro, out);
}

/* The open table NUMBER of FILE_SIZE bytes, opened from HOLD_FD if not
** -1 (rv_table_cache_find). */
static int table_cache_find_fd(rv_table_cache *tc, uint64_t number,
                               uint64_t file_size, int hold_fd,
                               rv_cache_handle **h)
{
    char key[8];
    rv_put_fixed64(key, number);
    *h = rv_cache_lookup(tc->cache, key, sizeof key);
    if (*h)
        return RAVEL_OK;
    rv_table *t = NULL;
    int rc = table_cache_open(tc, number, file_size, hold_fd, &t);
    if (rc)
        return rc;
    *h = rv_cache_insert(tc->cache, key, sizeof key, t, 1,
                         table_cache_close_entry);
    if (!*h) {
        rv_table_close(t);
        return rv_error(RAVEL_NOMEM, "out of memory caching an open table");
    }
    return RAVEL_OK;
}

int rv_table_cache_find(rv_table_cache *tc, const struct rv_file *f,
                        rv_cache_handle **h)
{
    return table_cache_find_fd(tc, f->meta.number, f->meta.size, f->hold_fd,
                               h);
}

rv_table *rv_table_cache_table(rv_cache_handle *h)
{
    return rv_cache_value(h);
}

void rv_table_cache_release(rv_table_cache *tc, rv_cache_handle *h)
{
    rv_cache_release(tc->cache, h);
}

void rv_table_cache_evict(rv_table_cache *tc, uint64_t number)
{
    char key[8];
    rv_put_fixed64(key, number);
    rv_cache_erase(tc->cache, key, sizeof key);
}

/* The open table of F: pinned in F (*H = NULL), or held by *H, which the
** caller releases. */
static int table_cache_table_of(rv_table_cache *tc, struct rv_file *f,
                                rv_table **t, rv_cache_handle **h)
{
    /* acquire: pairs with the CAS that pinned it */
    rv_cache_handle *pin = atomic_load_explicit(&f->table,
                                                memory_order_acquire);
    *h = NULL;
    if (pin) {
        *t = rv_cache_value(pin);
        return RAVEL_OK;
    }
    rv_cache_handle *mine;
    int rc = table_cache_find_fd(tc, f->meta.number, f->meta.size,
                                 f->hold_fd, &mine);
    if (rc)
        return rc;
    *t = rv_cache_value(mine);
    if (atomic_fetch_add_explicit(&tc->pinned, 1, memory_order_relaxed) >=
        tc->max_pinned) {
        atomic_fetch_sub_explicit(&tc->pinned, 1, memory_order_relaxed);
        *h = mine; /* no room to pin: the caller releases it */
        return RAVEL_OK;
    }
    rv_cache_handle *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&f->table, &expected, mine,
                                                memory_order_acq_rel,
                                                memory_order_acquire))
        return RAVEL_OK; /* the file owns MINE now */
    /* another reader pinned it first: use theirs */
    atomic_fetch_sub_explicit(&tc->pinned, 1, memory_order_relaxed);
    rv_cache_release(tc->cache, mine);
    *t = rv_cache_value(expected);
    return RAVEL_OK;
}

void rv_table_cache_unpin(rv_table_cache *tc, struct rv_file *f)
{
    rv_cache_handle *pin = atomic_exchange_explicit(&f->table, NULL,
                                                    memory_order_acq_rel);
    if (!pin)
        return;
    rv_cache_release(tc->cache, pin);
    atomic_fetch_sub_explicit(&tc->pinned, 1, memory_order_relaxed);
}

int rv_table_cache_read_flags(const rv_table_cache *tc)
{
    return tc->ro.verify_checksums ? RV_TABLE_READ_VERIFY : 0;
}

int rv_table_cache_get(rv_table_cache *tc, struct rv_file *f, int flags,
                       const char *ikey, size_t klen, rv_table_get_fn fn,
                       void *ctx, int *filtered,
                       const struct rv_read_view *view, uint64_t *range_seq)
{
    rv_table *t;
    rv_cache_handle *h;
    int rc = table_cache_table_of(tc, f, &t, &h);
    if (rc)
        return rc;
    const struct rv_range_frags *frags = rv_table_range_frags(t);
    if (frags && range_seq) {
        uint64_t s = rv_range_frags_seq(frags, ikey, klen - RV_TAG_SIZE,
                                        view);
        if (s > *range_seq)
            *range_seq = s;
    }
    /* a file of tombstones alone (a flush of range deletes, a compaction
    ** that dropped every version under them) has no entry to look for,
    ** and may have no filter to say so */
    if (rv_table_props(t)->entries == 0) {
        *filtered = 0;
    } else {
        *filtered = !rv_table_may_contain(t, ikey, klen - RV_TAG_SIZE);
        if (!*filtered)
            rc = rv_table_get(t, flags, ikey, klen, fn, ctx);
    }
    if (h)
        rv_cache_release(tc->cache, h);
    return rc;
}

int rv_table_cache_range_frags(rv_table_cache *tc, struct rv_file *f,
                               const struct rv_range_frags **frags,
                               rv_cache_handle **h)
{
    rv_table *t;
    *frags = NULL;
    int rc = table_cache_table_of(tc, f, &t, h);
    if (rc)
        return rc;
    *frags = rv_table_range_frags(t);
    if (!*frags && *h) {
        rv_cache_release(tc->cache, *h);
        *h = NULL;
    }
    return RAVEL_OK;
}

/* ------------------------------------------- an iterator that pins it */

struct table_cache_iter {
    struct rv_iter base;
    struct rv_iter *inner;
    rv_table_cache *tc;
    rv_cache_handle *h;     /* NULL when the table is pinned in its file */
};

#define TABLE_CACHE_INNER(it) (((const struct table_cache_iter *)(it))->inner)

static int table_cache_iter_valid(const struct rv_iter *it)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    return in->ops->valid(in);
}

static void table_cache_iter_seek_to_first(struct rv_iter *it)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    in->ops->seek_to_first(in);
}

static void table_cache_iter_seek_to_last(struct rv_iter *it)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    in->ops->seek_to_last(in);
}

static void table_cache_iter_seek(struct rv_iter *it, const char *target,
                                  size_t tlen)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    in->ops->seek(in, target, tlen);
}

static void table_cache_iter_seek_for_prev(struct rv_iter *it,
                                           const char *target, size_t tlen)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    in->ops->seek_for_prev(in, target, tlen);
}

static void table_cache_iter_next(struct rv_iter *it)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    in->ops->next(in);
}

static void table_cache_iter_prev(struct rv_iter *it)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    in->ops->prev(in);
}

static const char *table_cache_iter_key(const struct rv_iter *it,
                                        size_t *len)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    return in->ops->key(in, len);
}

static const char *table_cache_iter_value(const struct rv_iter *it,
                                          size_t *len)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    return in->ops->value(in, len);
}

static int table_cache_iter_status(const struct rv_iter *it)
{
    struct rv_iter *in = TABLE_CACHE_INNER(it);
    return in->ops->status(in);
}

static void table_cache_iter_destroy(struct rv_iter *it)
{
    struct table_cache_iter *ti = (struct table_cache_iter *)it;
    ti->inner->ops->destroy(ti->inner);
    if (ti->h)
        rv_cache_release(ti->tc->cache, ti->h);
    free(ti);
}

static const struct rv_iter_ops table_cache_iter_ops = {
    table_cache_iter_valid,
    table_cache_iter_seek_to_first,
    table_cache_iter_seek_to_last,
    table_cache_iter_seek,
    table_cache_iter_seek_for_prev,
    table_cache_iter_next,
    table_cache_iter_prev,
    table_cache_iter_key,
    table_cache_iter_value,
    table_cache_iter_status,
    table_cache_iter_destroy,
};

struct rv_iter *rv_table_cache_iter(rv_table_cache *tc, struct rv_file *f,
                                    int flags, int *rc)
{
    rv_table *t;
    rv_cache_handle *h;
    *rc = table_cache_table_of(tc, f, &t, &h);
    if (*rc)
        return NULL;
    struct table_cache_iter *ti = calloc(1, sizeof *ti);
    struct rv_iter *inner = ti ? rv_table_iter_new(t, flags) : NULL;
    if (!inner) {
        free(ti);
        if (h)
            rv_cache_release(tc->cache, h);
        *rc = rv_error(RAVEL_NOMEM, "out of memory for a table iterator");
        return NULL;
    }
    ti->base.ops = &table_cache_iter_ops;
    ti->inner = inner;
    ti->tc = tc;
    ti->h = h;
    return &ti->base;
}
