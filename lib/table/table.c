/*
** table.c -- reading a table file (table.h; the bytes in table_format.h).
**
** The iterator is two-level, as LevelDB's: the index block (kept in
** memory while the table is open) picks a data block, which is read --
** through the block cache the table was opened with, if any, keyed by
** (this open's cache id, the block's offset) -- checked once (checksum
** when verify_checksums, restarts always) and iterated.  A cached block
** stays pinned while an iterator is in it.  rv_table_get runs the same
** iterator on the stack: a point lookup whose block is cached allocates
** nothing.  rv_table_verify reads every block from the file, bypassing
** the cache, so damage on disk is found even when a good copy is cached.
*/
#include "table/table.h"
#include "db/dbformat.h"
#include "table/block.h"
#include "table/bloom.h"
#include "util/cache.h"
#include "util/coding.h"
#include "util/error.h"

#include <xxhash.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rv_table {
    int fd;
    char *path;
    uint64_t file_number, file_size;
    int verify_checksums;
    rv_cache *cache;        /* data blocks, or NULL (a reference held) */
    uint64_t cache_id;      /* this open's prefix of its cache keys */
    struct rv_table_handle index_h, filter_h, props_h;
    char *index;            /* the index block's contents */
    size_t index_len;
    char *filter;           /* NULL when the table has none */
    size_t filter_len;
    struct rv_table_props props;
    char *smallest, *largest;
    size_t smallest_len, largest_len;
};

/* ------------------------------------------------------------- blocks */

static int table_bytewise_compare(const char *a, size_t alen, const char *b,
                                  size_t blen)
{
    return rv_user_key_compare(a, alen, b, blen);
}

static int table_pread(const rv_table *t, char *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(t->fd, buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rv_error_errno(RAVEL_IOERR, errno, "read %s at byte "
                                  "offset %llu", t->path,
                                  (unsigned long long)(off + done));
        if (n == 0)
            return rv_error(RAVEL_CORRUPT, "%s: the file ends at byte offset "
                            "%llu, inside a block it names",
                            t->path, (unsigned long long)(off + done));
        done += (size_t)n;
    }
    return RAVEL_OK;
}

/* Reads the block at H into a new buffer (*OUT, H->size bytes), checking
** its trailer (the checksum when VERIFY). */
static int table_read_block(const rv_table *t, const struct rv_table_handle *h,
                            int verify, char **out)
{
    *out = NULL;
    if (h->offset > t->file_size ||
        h->size > t->file_size - h->offset - RV_TABLE_BLOCK_TRAILER ||
        t->file_size - h->offset < RV_TABLE_BLOCK_TRAILER)
        return rv_error(RAVEL_CORRUPT, "%s: a block handle (byte offset %llu, "
                        "%llu bytes) points past the end of the %llu-byte "
                        "file", t->path, (unsigned long long)h->offset,
                        (unsigned long long)h->size,
                        (unsigned long long)t->file_size);
    size_t n = (size_t)h->size + RV_TABLE_BLOCK_TRAILER;
    char *buf = malloc(n);
    if (!buf)
        return rv_error(RAVEL_NOMEM, "out of memory reading %s", t->path);
    int rc = table_pread(t, buf, n, h->offset);
    const char *trailer = buf + h->size;
    if (rc == RAVEL_OK && trailer[0] != RV_TABLE_NO_COMPRESSION)
        rc = rv_error(RAVEL_CORRUPT, "%s: block at byte offset %llu has "
                      "unknown compression type %u", t->path,
                      (unsigned long long)h->offset,
                      (unsigned char)trailer[0]);
    if (rc == RAVEL_OK && verify &&
        rv_get_fixed64(trailer + 1) !=
            rv_table_block_checksum(buf, (size_t)h->size,
                                    (unsigned char)trailer[0],
                                    t->file_number))
        rc = rv_error(RAVEL_CORRUPT, "%s: block at byte offset %llu (%llu "
                      "bytes): checksum mismatch", t->path,
                      (unsigned long long)h->offset,
                      (unsigned long long)h->size);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    return RAVEL_OK;
}

static void table_get_handle(const char *p, struct rv_table_handle *h)
{
    h->offset = rv_get_fixed64(p);
    h->size = rv_get_fixed64(p + 8);
}

/* Prefixes the calling thread's message (a block's own complaint) with
** the file and the block: RAVEL_CORRUPT. */
static int table_corrupt_in(const rv_table *t, const char *what,
                            const struct rv_table_handle *h)
{
    char why[400];
    snprintf(why, sizeof why, "%.399s", rv_errmsg_get());
    return rv_error(RAVEL_CORRUPT, "%s: %s block at byte offset %llu: %s",
                    t->path, what, (unsigned long long)h->offset, why);
}

/* ---------------------------------------------------------------- open */

static int table_read_footer(rv_table *t)
{
    char f[RV_TABLE_FOOTER_SIZE];
    if (t->file_size < RV_TABLE_FOOTER_SIZE)
        return rv_error(RAVEL_CORRUPT, "%s: %llu bytes is too short for a "
                        "table (its footer alone is %d)", t->path,
                        (unsigned long long)t->file_size,
                        RV_TABLE_FOOTER_SIZE);
    uint64_t off = t->file_size - RV_TABLE_FOOTER_SIZE;
    int rc = table_pread(t, f, sizeof f, off);
    if (rc)
        return rc;
    if (rv_get_fixed64(f + 72) != RV_TABLE_MAGIC)
        return rv_error(RAVEL_CORRUPT, "%s: byte offset %llu: bad table magic "
                        "(not a ravel table file, or cut short)", t->path,
                        (unsigned long long)(off + 72));
    if (rv_get_fixed64(f + 64) != XXH3_64bits_withSeed(f, 64, t->file_number))
        return rv_error(RAVEL_CORRUPT, "%s: byte offset %llu: footer checksum "
                        "mismatch", t->path, (unsigned long long)off);
    uint32_t version = rv_get_fixed32(f + 56);
    if (version != RV_TABLE_VERSION)
        return rv_error(RAVEL_CORRUPT, "%s: unsupported table version %u "
                        "(this ravel reads version %d)", t->path, version,
                        RV_TABLE_VERSION);
    if (rv_get_fixed64(f + 48) != t->file_number)
        return rv_error(RAVEL_CORRUPT, "%s: the footer says file number %llu",
                        t->path, (unsigned long long)rv_get_fixed64(f + 48));
    table_get_handle(f, &t->index_h);
    table_get_handle(f + 16, &t->filter_h);
    table_get_handle(f + 32, &t->props_h);
    return RAVEL_OK;
}

/* Decodes the properties block: every known name must be there. */
static int table_read_props(rv_table *t, const char *block, size_t len)
{
    static const struct { const char *name; size_t off; } u64[] = {
        {"ravel.bloom_bits_per_key",
         offsetof(struct rv_table_props, bloom_bits_per_key)},
        {"ravel.creation_time", offsetof(struct rv_table_props, creation_time)},
        {"ravel.data_blocks", offsetof(struct rv_table_props, data_blocks)},
        {"ravel.data_size", offsetof(struct rv_table_props, data_size)},
        {"ravel.deletions", offsetof(struct rv_table_props, deletions)},
        {"ravel.entries", offsetof(struct rv_table_props, entries)},
        {"ravel.filter_size", offsetof(struct rv_table_props, filter_size)},
        {"ravel.largest_seq", offsetof(struct rv_table_props, largest_seq)},
        {"ravel.smallest_seq", offsetof(struct rv_table_props, smallest_seq)},
    };
    struct rv_iter *it = rv_block_iter_new(block, len, table_bytewise_compare);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory opening %s", t->path);
    int rc = RAVEL_OK;
    for (size_t i = 0; i < sizeof u64 / sizeof u64[0] && !rc; i++) {
        const char *name = u64[i].name;
        it->ops->seek(it, name, strlen(name));
        size_t kl, vl;
        const char *k = it->ops->valid(it) ? it->ops->key(it, &kl) : NULL;
        const char *v = k ? it->ops->value(it, &vl) : NULL;
        if (it->ops->status(it))
            rc = it->ops->status(it);
        else if (!k || kl != strlen(name) || memcmp(k, name, kl) || vl != 8)
            rc = rv_error(RAVEL_CORRUPT, "%s: the properties block lacks %s",
                          t->path, name);
        else
            memcpy((char *)&t->props + u64[i].off,
                   &(uint64_t){rv_get_fixed64(v)}, 8);
    }
    static const char *const keys[2] = {"ravel.largest_key",
                                        "ravel.smallest_key"};
    char **dst[2] = {&t->largest, &t->smallest};
    size_t *dlen[2] = {&t->largest_len, &t->smallest_len};
    for (int i = 0; i < 2 && !rc; i++) {
        it->ops->seek(it, keys[i], strlen(keys[i]));
        size_t kl, vl;
        const char *k = it->ops->valid(it) ? it->ops->key(it, &kl) : NULL;
        const char *v = k ? it->ops->value(it, &vl) : NULL;
        if (!k || kl != strlen(keys[i]) || memcmp(k, keys[i], kl))
            rc = rv_error(RAVEL_CORRUPT, "%s: the properties block lacks %s",
                          t->path, keys[i]);
        else if (!(*dst[i] = malloc(vl ? vl : 1)))
            rc = rv_error(RAVEL_NOMEM, "out of memory opening %s", t->path);
        else {
            memcpy(*dst[i], v, vl);
            *dlen[i] = vl;
        }
    }
    it->ops->destroy(it);
    return rc;
}

int rv_table_open(int fd, const char *path, uint64_t file_number,
                  uint64_t file_size, const struct rv_table_read_options *ro,
                  rv_table **out)
{
    *out = NULL;
    rv_table *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        close(fd);
        return rv_error(RAVEL_NOMEM, "out of memory opening %s", path);
    }
    t->fd = fd;
    t->file_number = file_number;
    t->file_size = file_size;
    t->verify_checksums = ro->verify_checksums;
    if (ro->block_cache) {
        t->cache = ro->block_cache;
        rv_cache_ref(t->cache);
        t->cache_id = rv_cache_new_id(t->cache);
    }
    char *props = NULL;
    int rc = table_read_footer(t);
    /* The blocks kept in memory are always verified: they are read once. */
    if (!rc)
        rc = table_read_block(t, &t->index_h, 1, &t->index);
    if (!rc && rv_block_check(t->index, t->index_len = t->index_h.size))
        rc = table_corrupt_in(t, "index", &t->index_h);
    if (!rc && t->filter_h.size) {
        rc = table_read_block(t, &t->filter_h, 1, &t->filter);
        t->filter_len = t->filter_h.size;
        if (!rc && rv_bloom_check(t->filter, t->filter_len))
            rc = table_corrupt_in(t, "filter", &t->filter_h);
    }
    if (!rc)
        rc = table_read_block(t, &t->props_h, 1, &props);
    if (!rc)
        rc = table_read_props(t, props, t->props_h.size);
    free(props);
    if (rc) {
        rv_table_close(t);
        return rc;
    }
    *out = t;
    return RAVEL_OK;
}

void rv_table_close(rv_table *t)
{
    if (!t)
        return;
    close(t->fd);
    if (t->cache)
        rv_cache_unref(t->cache);
    free(t->index);
    free(t->filter);
    free(t->smallest);
    free(t->largest);
    free(t->path);
    free(t);
}

const struct rv_table_props *rv_table_props(const rv_table *t)
{
    return &t->props;
}

const char *rv_table_smallest_key(const rv_table *t, size_t *len)
{
    *len = t->smallest_len;
    return t->smallest;
}

const char *rv_table_largest_key(const rv_table *t, size_t *len)
{
    *len = t->largest_len;
    return t->largest;
}

int rv_table_may_contain(const rv_table *t, const void *user_key, size_t klen)
{
    return !t->filter ||
           rv_bloom_may_match(t->filter, t->filter_len, user_key, klen);
}

/* --------------------------------------------------------- data blocks */

/* A data block as the block cache holds it: contents checked (checksum
** when asked, restarts always) once, when it was read. */
struct table_block {
    char *data;
    size_t len;
};

/* A data block in use: from the cache (H pinned) or read for this use
** alone (OWNED). */
struct table_block_ref {
    const char *data;
    size_t len;
    rv_cache_handle *h;
    char *owned;
};

static void table_block_delete(const void *key, size_t klen, void *value)
{
    (void)key;
    (void)klen;
    struct table_block *b = value;
    free(b->data);
    free(b);
}

static void table_block_release(rv_table *t, struct table_block_ref *ref)
{
    if (ref->h)
        rv_cache_release(t->cache, ref->h);
    free(ref->owned);
    memset(ref, 0, sizeof *ref);
}

/* Reads the data block at H (through the block cache when USE_CACHE and
** the table has one), checking its checksum when VERIFY and its restarts
** always. */
static int table_block_load(rv_table *t, const struct rv_table_handle *h,
                            int verify, int use_cache,
                            struct table_block_ref *ref)
{
    char key[16];
    memset(ref, 0, sizeof *ref);
    use_cache = use_cache && t->cache;
    if (use_cache) {
        rv_put_fixed64(key, t->cache_id);
        rv_put_fixed64(key + 8, h->offset);
        ref->h = rv_cache_lookup(t->cache, key, sizeof key);
        if (ref->h) {
            const struct table_block *b = rv_cache_value(ref->h);
            ref->data = b->data;
            ref->len = b->len;
            return RAVEL_OK;
        }
    }
    char *buf;
    int rc = table_read_block(t, h, verify, &buf);
    if (rc)
        return rc;
    if (rv_block_check(buf, (size_t)h->size)) {
        free(buf);
        return table_corrupt_in(t, "data", h);
    }
    ref->data = buf;
    ref->len = (size_t)h->size;
    struct table_block *b = use_cache ? malloc(sizeof *b) : NULL;
    if (b) {
        b->data = buf;
        b->len = (size_t)h->size;
        ref->h = rv_cache_insert(t->cache, key, sizeof key, b,
                                 b->len + sizeof *b, table_block_delete);
        if (ref->h)
            return RAVEL_OK;
        free(b);
    }
    ref->owned = buf; /* no cache, or no memory to cache it */
    return RAVEL_OK;
}

/* ------------------------------------------------------------ iterator */

/* Two levels: the index block (in memory) picks a data block, an
** iterator over that block yields the entries.  Both block iterators are
** embedded, so an iterator on the stack (rv_table_get) allocates nothing
** when its blocks are cached. */
struct table_iter {
    struct rv_iter base;
    rv_table *t;
    int verify;             /* check data blocks' checksums */
    int use_cache;          /* read data blocks through the block cache */
    struct rv_block_iter index;
    struct rv_block_iter data;
    int have_data;          /* DATA is over BLOCK */
    struct table_block_ref block;
    uint64_t block_offset;  /* its handle's offset, to skip re-reading */
    int status;
};

#define TABLE_INDEX(it) (&(it)->index.base)
#define TABLE_DATA(it) (&(it)->data.base)

static void table_iter_drop_block(struct table_iter *it)
{
    if (!it->have_data)
        return;
    rv_block_iter_release(&it->data);
    table_block_release(it->t, &it->block);
    it->have_data = 0;
}

/* Loads the data block the index iterator is at (or drops the current
** one when the index is not valid). */
static void table_iter_load(struct table_iter *it)
{
    struct rv_iter *index = TABLE_INDEX(it);
    if (!index->ops->valid(index)) {
        table_iter_drop_block(it);
        return;
    }
    size_t vl;
    const char *v = index->ops->value(index, &vl);
    if (vl != RV_TABLE_HANDLE_SIZE) {
        it->status = rv_error(RAVEL_CORRUPT, "%s: an index entry holds %zu "
                              "bytes, not a block handle", it->t->path, vl);
        return;
    }
    struct rv_table_handle h;
    table_get_handle(v, &h);
    if (it->have_data && it->block_offset == h.offset)
        return;
    table_iter_drop_block(it);
    int rc = table_block_load(it->t, &h, it->verify, it->use_cache,
                              &it->block);
    if (rc) {
        it->status = rc;
        return;
    }
    rv_block_iter_init(&it->data, it->block.data, it->block.len,
                       rv_ikey_compare, 1);
    it->have_data = 1;
    it->block_offset = h.offset;
}

static int table_iter_valid(const struct rv_iter *base)
{
    const struct table_iter *it = (const struct table_iter *)base;
    return !it->status && it->have_data && TABLE_DATA(it)->ops->valid(TABLE_DATA(it));
}

/* Moves over empty or exhausted blocks, forward. */
static void table_iter_skip_forward(struct table_iter *it)
{
    while (!it->status && (!it->have_data || !TABLE_DATA(it)->ops->valid(TABLE_DATA(it)))) {
        /* A block that ended because it is damaged stops the iterator: its
        ** status must not be lost by moving on to the next block. */
        if (it->have_data && TABLE_DATA(it)->ops->status(TABLE_DATA(it))) {
            it->status = TABLE_DATA(it)->ops->status(TABLE_DATA(it));
            return;
        }
        if (!TABLE_INDEX(it)->ops->valid(TABLE_INDEX(it)))
            return;
        TABLE_INDEX(it)->ops->next(TABLE_INDEX(it));
        table_iter_load(it);
        if (it->have_data && !it->status)
            TABLE_DATA(it)->ops->seek_to_first(TABLE_DATA(it));
    }
}

static void table_iter_skip_backward(struct table_iter *it)
{
    while (!it->status && (!it->have_data || !TABLE_DATA(it)->ops->valid(TABLE_DATA(it)))) {
        /* A block that ended because it is damaged stops the iterator: its
        ** status must not be lost by moving on to the next block. */
        if (it->have_data && TABLE_DATA(it)->ops->status(TABLE_DATA(it))) {
            it->status = TABLE_DATA(it)->ops->status(TABLE_DATA(it));
            return;
        }
        if (!TABLE_INDEX(it)->ops->valid(TABLE_INDEX(it)))
            return;
        TABLE_INDEX(it)->ops->prev(TABLE_INDEX(it));
        table_iter_load(it);
        if (it->have_data && !it->status)
            TABLE_DATA(it)->ops->seek_to_last(TABLE_DATA(it));
    }
}

static void table_iter_seek_to_first(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    TABLE_INDEX(it)->ops->seek_to_first(TABLE_INDEX(it));
    table_iter_load(it);
    if (it->have_data && !it->status)
        TABLE_DATA(it)->ops->seek_to_first(TABLE_DATA(it));
    table_iter_skip_forward(it);
}

static void table_iter_seek_to_last(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    TABLE_INDEX(it)->ops->seek_to_last(TABLE_INDEX(it));
    table_iter_load(it);
    if (it->have_data && !it->status)
        TABLE_DATA(it)->ops->seek_to_last(TABLE_DATA(it));
    table_iter_skip_backward(it);
}

static void table_iter_seek(struct rv_iter *base, const char *target,
                            size_t tlen)
{
    struct table_iter *it = (struct table_iter *)base;
    TABLE_INDEX(it)->ops->seek(TABLE_INDEX(it), target, tlen);
    table_iter_load(it);
    if (it->have_data && !it->status)
        TABLE_DATA(it)->ops->seek(TABLE_DATA(it), target, tlen);
    table_iter_skip_forward(it);
}

static void table_iter_seek_for_prev(struct rv_iter *base, const char *target,
                                     size_t tlen)
{
    struct table_iter *it = (struct table_iter *)base;
    /* The block that may hold the last key <= TARGET is the first whose
    ** last key >= TARGET; if none, the last block. */
    TABLE_INDEX(it)->ops->seek(TABLE_INDEX(it), target, tlen);
    if (!TABLE_INDEX(it)->ops->valid(TABLE_INDEX(it)))
        TABLE_INDEX(it)->ops->seek_to_last(TABLE_INDEX(it));
    table_iter_load(it);
    if (it->have_data && !it->status)
        TABLE_DATA(it)->ops->seek_for_prev(TABLE_DATA(it), target, tlen);
    table_iter_skip_backward(it);
}

static void table_iter_next(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    if (!table_iter_valid(base))
        return;
    TABLE_DATA(it)->ops->next(TABLE_DATA(it));
    table_iter_skip_forward(it);
}

static void table_iter_prev(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    if (!table_iter_valid(base))
        return;
    TABLE_DATA(it)->ops->prev(TABLE_DATA(it));
    table_iter_skip_backward(it);
}

static const char *table_iter_key(const struct rv_iter *base, size_t *len)
{
    const struct table_iter *it = (const struct table_iter *)base;
    return TABLE_DATA(it)->ops->key(TABLE_DATA(it), len);
}

static const char *table_iter_value(const struct rv_iter *base, size_t *len)
{
    const struct table_iter *it = (const struct table_iter *)base;
    return TABLE_DATA(it)->ops->value(TABLE_DATA(it), len);
}

static int table_iter_status(const struct rv_iter *base)
{
    const struct table_iter *it = (const struct table_iter *)base;
    if (it->status)
        return it->status;
    int rc = TABLE_INDEX(it)->ops->status(TABLE_INDEX(it));
    if (!rc && it->have_data)
        rc = TABLE_DATA(it)->ops->status(TABLE_DATA(it));
    return rc;
}

/* Releases what an iterator holds (its struct is the caller's). */
static void table_iter_cleanup(struct table_iter *it)
{
    table_iter_drop_block(it);
    rv_block_iter_release(&it->index);
}

static void table_iter_destroy(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    table_iter_cleanup(it);
    free(it);
}

static const struct rv_iter_ops table_iter_ops = {
    .valid = table_iter_valid,
    .seek_to_first = table_iter_seek_to_first,
    .seek_to_last = table_iter_seek_to_last,
    .seek = table_iter_seek,
    .seek_for_prev = table_iter_seek_for_prev,
    .next = table_iter_next,
    .prev = table_iter_prev,
    .key = table_iter_key,
    .value = table_iter_value,
    .status = table_iter_status,
    .destroy = table_iter_destroy,
};

/* Initializes IT over T: VERIFY data blocks' checksums, USE_CACHE the
** table's block cache. */
static void table_iter_init(struct table_iter *it, rv_table *t, int verify,
                            int use_cache)
{
    it->base.ops = &table_iter_ops;
    it->t = t;
    it->verify = verify;
    it->use_cache = use_cache;
    it->have_data = 0;
    it->status = RAVEL_OK;
    it->block_offset = 0;
    memset(&it->block, 0, sizeof it->block);
    /* checked when the table was opened */
    rv_block_iter_init(&it->index, t->index, t->index_len, rv_ikey_compare,
                       1);
}

struct rv_iter *rv_table_iter_new(rv_table *t)
{
    struct table_iter *it = malloc(sizeof *it);
    if (!it)
        return NULL;
    table_iter_init(it, t, t->verify_checksums, 1);
    return &it->base;
}

int rv_table_verify(rv_table *t)
{
    /* every block from the file itself, whatever the cache holds */
    struct table_iter it;
    table_iter_init(&it, t, 1, 0);
    uint64_t n = 0;
    struct rv_iter *base = &it.base;
    for (base->ops->seek_to_first(base); base->ops->valid(base);
         base->ops->next(base))
        n++;
    int rc = base->ops->status(base);
    table_iter_cleanup(&it);
    if (rc == RAVEL_OK && n != t->props.entries)
        rc = rv_error(RAVEL_CORRUPT, "%s: holds %llu entries but its "
                      "properties say %llu", t->path, (unsigned long long)n,
                      (unsigned long long)t->props.entries);
    return rc;
}

int rv_table_get(rv_table *t, const char *ikey, size_t klen,
                 rv_table_get_fn fn, void *ctx)
{
    struct table_iter it;
    table_iter_init(&it, t, t->verify_checksums, 1);
    struct rv_iter *base = &it.base;
    for (base->ops->seek(base, ikey, klen); base->ops->valid(base);
         base->ops->next(base)) {
        size_t kl, vl;
        const char *k = base->ops->key(base, &kl);
        const char *v = base->ops->value(base, &vl);
        if (!fn(ctx, k, kl, v, vl))
            break;
    }
    int rc = base->ops->status(base);
    table_iter_cleanup(&it);
    return rc;
}
