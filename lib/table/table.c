/*
** table.c -- reading a table file (table.h; the bytes in table_format.h):
** open and close, the blocks kept in memory (index, filter, properties,
** range deletions),
** reading a data block through the block cache, and the point lookup.
** The two-level iterator is table_iter.c.
**
** A data block read from the file is checked (trailer, checksum),
** decompressed (table_decompress) and structurally checked
** (rv_block_check) once, then handed out from the cache, keyed by (the
** table's cache id, the block's offset), as LevelDB's table cache keys its
** blocks.  Two threads missing the same block may both read it; the
** second insert replaces the first, which is freed once released.
*/
#include "table/table.h"
#include "table/sst_writer.h"
#include "base/dbformat.h"
#include "table/block.h"
#include "table/bloom.h"
#include "table/index_search.h"
#include "table/compress.h"
#include "table/range_del_block.h"
#include "util/coding.h"
#include "util/error.h"

#include <xxhash.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_CACHE_KEY 16 /* id:fixed64 offset:fixed64 */

struct rv_table {
    int fd;
    /* The whole file mapped read-only (allow_mmap_reads), or NULL: set at
    ** open, unmapped at close, read by any thread in between. */
    const char *map;
    char *path;
    uint64_t file_number, file_size;
    int read_flags;         /* RV_TABLE_READ_VERIFY per verify_checksums */
    rv_cache *cache;        /* NULL: no block cache; else one reference */
    uint64_t cache_id;
    struct rv_table_handle index_h, filter_h, props_h;
    char *index;            /* the index block's contents */
    size_t index_len;
    struct rv_index_search index_search; /* over INDEX (index_search.h) */
    char *filter;           /* NULL when the table has none */
    size_t filter_len;
    struct rv_table_props props;
    char *smallest, *largest;
    size_t smallest_len, largest_len;
    uint32_t version;       /* RV_TABLE_VERSION_PLAIN or RV_TABLE_VERSION */
    struct rv_table_handle range_del_h; /* version 2 */
    char *range_del;        /* the range-deletion block: FRAGS' keys */
    struct rv_range_frags *frags; /* NULL: the file has no tombstones */
};

/* ------------------------------------------------------------- reading */

static int table_bytewise_compare(const char *a, size_t alen, const char *b,
                                  size_t blen)
{
    return rv_user_key_compare(a, alen, b, blen);
}

static int table_pread(const rv_table *t, char *buf, size_t len, uint64_t off)
{
    if (t->map) { /* rv_table_open checked the file holds FILE_SIZE bytes */
        if (off > t->file_size || len > t->file_size - off)
            return rv_error(RAVEL_CORRUPT, "%s: the file ends at byte offset "
                            "%llu, inside a block it names", t->path,
                            (unsigned long long)t->file_size);
        memcpy(buf, t->map + off, len);
        return RAVEL_OK;
    }
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

static int table_check_handle(const rv_table *t,
                              const struct rv_table_handle *h)
{
    if (h->offset > t->file_size ||
        t->file_size - h->offset < RV_TABLE_BLOCK_TRAILER ||
        h->size > t->file_size - h->offset - RV_TABLE_BLOCK_TRAILER)
        return rv_error(RAVEL_CORRUPT, "%s: a block handle (byte offset %llu, "
                        "%llu bytes) points past the end of the %llu-byte "
                        "file", t->path, (unsigned long long)h->offset,
                        (unsigned long long)h->size,
                        (unsigned long long)t->file_size);
    return RAVEL_OK;
}

/* Checks the trailer of the block at H, read into BUF (contents, then
** trailer): its checksum when VERIFY -- and always for a type this build
** cannot decode, so that damage is not reported as a missing codec -- and
** that the type is one ravel knows.  *TYPE is the block's compression. */
static int table_check_trailer(const rv_table *t,
                               const struct rv_table_handle *h,
                               const char *buf, int verify, int *type)
{
    const char *trailer = buf + h->size;
    *type = (unsigned char)trailer[0];
    int decodable = *type == RV_TABLE_NO_COMPRESSION ||
                    ((*type == RV_COMPRESSION_LZ4 ||
                      *type == RV_COMPRESSION_ZSTD) &&
                     rv_compression_available((enum rv_compression)*type));
    if ((verify || !decodable) &&
        rv_get_fixed64(trailer + 1) !=
            rv_table_block_checksum(buf, (size_t)h->size, *type,
                                    t->file_number))
        return rv_error(RAVEL_CORRUPT, "%s: block at byte offset %llu (%llu "
                        "bytes): checksum mismatch", t->path,
                        (unsigned long long)h->offset,
                        (unsigned long long)h->size);
    if (*type > RV_COMPRESSION_ZSTD)
        return rv_error(RAVEL_CORRUPT, "%s: block at byte offset %llu has "
                        "unknown compression type %u", t->path,
                        (unsigned long long)h->offset, (unsigned)*type);
    return RAVEL_OK;
}

/* Reads a block kept in memory while the table is open (index, filter,
** properties: never compressed) into a new buffer (*OUT, H->size bytes);
** always verified, as it is read once. */
static int table_read_meta_block(const rv_table *t,
                                 const struct rv_table_handle *h, char **out)
{
    *out = NULL;
    int rc = table_check_handle(t, h);
    if (rc)
        return rc;
    char *buf = malloc((size_t)h->size + RV_TABLE_BLOCK_TRAILER);
    if (!buf)
        return rv_error(RAVEL_NOMEM, "out of memory reading %s", t->path);
    int type;
    rc = table_pread(t, buf, (size_t)h->size + RV_TABLE_BLOCK_TRAILER,
                     h->offset);
    if (!rc)
        rc = table_check_trailer(t, h, buf, 1, &type);
    if (!rc && type != RV_TABLE_NO_COMPRESSION)
        rc = rv_error(RAVEL_CORRUPT, "%s: block at byte offset %llu is "
                      "compressed (type %d): only data blocks may be",
                      t->path, (unsigned long long)h->offset, type);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    return RAVEL_OK;
}

/* Decompresses the block *B, read from H, stored as TYPE: *B becomes a
** new block of its raw contents. */
static int table_decompress(const rv_table *t,
                            const struct rv_table_handle *h, int type,
                            struct rv_table_block **b)
{
    size_t raw_len = 0;
    int rc = rv_compressed_raw_length(type, (*b)->data, (*b)->len, &raw_len);
    if (rc)
        return rv_table_block_error(t, "data", h, rc);
    struct rv_table_block *d = malloc(sizeof *d + raw_len);
    if (!d)
        return rv_error(RAVEL_NOMEM, "out of memory decompressing a block "
                        "of %llu bytes of %s", (unsigned long long)raw_len,
                        t->path);
    rc = rv_decompress(type, (*b)->data, (*b)->len, d->data, raw_len);
    if (rc) {
        free(d);
        return rv_table_block_error(t, "data", h, rc);
    }
    d->len = raw_len;
    free(*b);
    *b = d;
    return RAVEL_OK;
}

/* Reads the data block at H from the file into a new rv_table_block:
** checked, decompressed and structurally checked. */
static int table_read_data_block(const rv_table *t,
                                 const struct rv_table_handle *h, int flags,
                                 struct rv_table_block **out)
{
    *out = NULL;
    int rc = table_check_handle(t, h);
    if (rc)
        return rc;
    size_t n = (size_t)h->size + RV_TABLE_BLOCK_TRAILER;
    struct rv_table_block *b = malloc(sizeof *b + n);
    if (!b)
        return rv_error(RAVEL_NOMEM, "out of memory reading %s", t->path);
    b->len = (size_t)h->size;
    int type;
    rc = table_pread(t, b->data, n, h->offset);
    if (!rc)
        rc = table_check_trailer(t, h, b->data,
                                 flags & RV_TABLE_READ_VERIFY, &type);
    if (!rc && type != RV_TABLE_NO_COMPRESSION)
        rc = table_decompress(t, h, type, &b);
    if (!rc && rv_block_check(b->data, b->len))
        rc = rv_table_block_error(t, "data", h, RAVEL_CORRUPT);
    if (rc) {
        free(b);
        return rc;
    }
    *out = b;
    return RAVEL_OK;
}

static void table_block_deleter(const void *key, size_t klen, void *value)
{
    RV_UNUSED(key);
    RV_UNUSED(klen);
    free(value);
}

static void table_cache_key(const rv_table *t, uint64_t offset,
                            char key[TABLE_CACHE_KEY])
{
    rv_put_fixed64(key, t->cache_id);
    rv_put_fixed64(key + 8, offset);
}

/* Serves the uncompressed data block at H in place from the table's map:
** its checksum checked when FLAGS say so, its structure always (it is not
** kept: each use checks it again, as LevelDB and RocksDB do with
** mmap reads).  *MAPPED: 0 when the block is compressed (read it into the
** cache as from a file). */
static int table_map_block(const rv_table *t, const struct rv_table_handle *h,
                           int flags, struct rv_table_block_ref *ref,
                           int *mapped)
{
    *mapped = 0;
    int rc = table_check_handle(t, h);
    if (rc)
        return rc;
    const char *data = t->map + h->offset;
    if ((unsigned char)data[h->size] != RV_TABLE_NO_COMPRESSION)
        return RAVEL_OK;
    int type;
    rc = table_check_trailer(t, h, data, flags & RV_TABLE_READ_VERIFY, &type);
    if (!rc && rv_block_check(data, (size_t)h->size))
        rc = rv_table_block_error(t, "data", h, RAVEL_CORRUPT);
    if (rc)
        return rc;
    ref->data = data;
    ref->len = (size_t)h->size;
    *mapped = 1;
    return RAVEL_OK;
}

int rv_table_load_block(rv_table *t, const struct rv_table_handle *h,
                        int flags, struct rv_table_block_ref *ref)
{
    *ref = (struct rv_table_block_ref){0};
    if (t->map) {
        int mapped;
        int rc = table_map_block(t, h, flags, ref, &mapped);
        if (rc || mapped)
            return rc;
    }
    int cached = t->cache && !(flags & RV_TABLE_READ_NO_CACHE);
    char key[TABLE_CACHE_KEY];
    if (cached) {
        table_cache_key(t, h->offset, key);
        ref->handle = rv_cache_lookup(t->cache, key, sizeof key);
        if (ref->handle) {
            ref->block = rv_cache_value(ref->handle);
            ref->data = ref->block->data;
            ref->len = ref->block->len;
            return RAVEL_OK;
        }
    }
    struct rv_table_block *b;
    int rc = table_read_data_block(t, h, flags, &b);
    if (rc)
        return rc;
    ref->block = b;
    ref->data = b->data;
    ref->len = b->len;
    /* an unverified block would be served to the verifying reads after */
    int unchecked = (t->read_flags & RV_TABLE_READ_VERIFY) &&
                    !(flags & RV_TABLE_READ_VERIFY);
    if (cached && !(flags & RV_TABLE_READ_NO_FILL) && !unchecked)
        /* NULL on allocation failure: the block stays ours */
        ref->handle = rv_cache_insert(t->cache, key, sizeof key, b,
                                      sizeof *b + b->len,
                                      table_block_deleter);
    return RAVEL_OK;
}

void rv_table_release_block(rv_table *t, struct rv_table_block_ref *ref)
{
    if (ref->handle)
        rv_cache_release(t->cache, ref->handle);
    else
        free(ref->block);
    *ref = (struct rv_table_block_ref){0};
}

int rv_table_index_handle(const rv_table *t, const char *val, size_t vlen,
                          struct rv_table_handle *h)
{
    if (vlen != RV_TABLE_HANDLE_SIZE)
        return rv_error(RAVEL_CORRUPT, "%s: an index entry holds %zu bytes, "
                        "not a block handle", t->path, vlen);
    h->offset = rv_get_fixed64(val);
    h->size = rv_get_fixed64(val + 8);
    return RAVEL_OK;
}

int rv_table_block_error(const rv_table *t, const char *what,
                         const struct rv_table_handle *h, int rc)
{
    char why[512]; /* a whole message (ravel.h: at most 511 bytes) */
    snprintf(why, sizeof why, "%s", rv_errmsg_get());
    return rv_error(rc, "%s: %s block at byte offset %llu: %s", t->path, what,
                    (unsigned long long)h->offset, why);
}

int rv_table_read_flags(const rv_table *t)
{
    return t->read_flags;
}

const char *rv_table_index(const rv_table *t, size_t *len,
                           struct rv_table_handle *h)
{
    *len = t->index_len;
    *h = t->index_h;
    return t->index;
}

void rv_table_index_seek(const rv_table *t, struct rv_block_cursor *index,
                         const char *target, size_t tlen)
{
    rv_index_search_seek(&t->index_search, index, target, tlen);
}

const char *rv_table_path(const rv_table *t)
{
    return t->path;
}

/* ---------------------------------------------------------------- open */

static void table_get_handle(const char *p, struct rv_table_handle *h)
{
    h->offset = rv_get_fixed64(p);
    h->size = rv_get_fixed64(p + 8);
}

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
    /* An external table (sst_writer.h) linked in by an ingest keeps the
    ** number it was written under, 0, whatever its name says: its footer
    ** must then verify with 0 and say 0, and 0 seeds its blocks. */
    uint64_t sum = rv_get_fixed64(f + 64);
    if (sum != XXH3_64bits_withSeed(f, 64, t->file_number) &&
        rv_get_fixed64(f + 48) == RV_SST_EXTERNAL_NUMBER &&
        sum == XXH3_64bits_withSeed(f, 64, RV_SST_EXTERNAL_NUMBER))
        t->file_number = RV_SST_EXTERNAL_NUMBER;
    if (sum != XXH3_64bits_withSeed(f, 64, t->file_number))
        return rv_error(RAVEL_CORRUPT, "%s: byte offset %llu: footer checksum "
                        "mismatch", t->path, (unsigned long long)off);
    uint32_t version = rv_get_fixed32(f + 56);
    if (version != RV_TABLE_VERSION && version != RV_TABLE_VERSION_PLAIN)
        return rv_error(RAVEL_CORRUPT, "%s: unsupported table version %u "
                        "(this ravel reads versions %d and %d)", t->path,
                        version, RV_TABLE_VERSION_PLAIN, RV_TABLE_VERSION);
    t->version = version;
    if (rv_get_fixed64(f + 48) != t->file_number)
        return rv_error(RAVEL_CORRUPT, "%s: the footer says file number %llu",
                        t->path, (unsigned long long)rv_get_fixed64(f + 48));
    table_get_handle(f, &t->index_h);
    table_get_handle(f + 16, &t->filter_h);
    table_get_handle(f + 32, &t->props_h);
    return RAVEL_OK;
}

/* Positions C at property NAME: *V, *VL its value.  RAVEL_CORRUPT if the
** block lacks it. */
static int table_find_prop(const rv_table *t, struct rv_block_cursor *c,
                           const char *name, const char **v, size_t *vl)
{
    size_t len = strlen(name);
    rv_block_cursor_seek(c, name, len);
    if (c->status)
        return rv_table_block_error(t, "properties", &t->props_h, c->status);
    if (!rv_block_cursor_valid(c) || c->key_len != len ||
        memcmp(c->key, name, len) != 0)
        return rv_error(RAVEL_CORRUPT, "%s: the properties block lacks %s",
                        t->path, name);
    *v = c->val;
    *vl = c->val_len;
    return RAVEL_OK;
}

/* A copy of the internal key property NAME into *DST. */
static int table_prop_key(rv_table *t, struct rv_block_cursor *c,
                          const char *name, char **dst, size_t *dlen)
{
    const char *v;
    size_t vl;
    int rc = table_find_prop(t, c, name, &v, &vl);
    if (rc)
        return rc;
    if (!(*dst = malloc(vl ? vl : 1)))
        return rv_error(RAVEL_NOMEM, "out of memory opening %s", t->path);
    memcpy(*dst, v, vl);
    *dlen = vl;
    return RAVEL_OK;
}

/* The optional property ravel.session_id at C into *ID: 0 when absent (a
** file written before it existed). */
static int table_prop_session_id(const rv_table *t, struct rv_block_cursor *c,
                                 uint64_t *id)
{
    static const char name[] = "ravel.session_id";
    *id = 0;
    rv_block_cursor_seek(c, name, sizeof name - 1);
    if (c->status)
        return rv_table_block_error(t, "properties", &t->props_h, c->status);
    if (!rv_block_cursor_valid(c) || c->key_len != sizeof name - 1 ||
        memcmp(c->key, name, sizeof name - 1) != 0)
        return RAVEL_OK;
    if (c->val_len != 8)
        return rv_error(RAVEL_CORRUPT, "%s: property %s holds %zu bytes, "
                        "not 8", t->path, name, c->val_len);
    *id = rv_get_fixed64(c->val);
    return RAVEL_OK;
}

/* The property ravel.range_del_block of a version-2 file: where its
** range-deletion block is (required: a version-2 file has tombstones). */
static int table_prop_range_del(rv_table *t, struct rv_block_cursor *c)
{
    const char *v;
    size_t vl;
    int rc = table_find_prop(t, c, "ravel.range_del_block", &v, &vl);
    if (!rc && vl != RV_TABLE_HANDLE_SIZE)
        rc = rv_error(RAVEL_CORRUPT, "%s: property ravel.range_del_block "
                      "holds %zu bytes, not a block handle", t->path, vl);
    if (!rc)
        table_get_handle(v, &t->range_del_h);
    return rc;
}

/* Reads the range-deletion block of a version-2 file into T's fragments,
** kept while the table is open (as the index is). */
static int table_read_range_dels(rv_table *t)
{
    int rc = table_read_meta_block(t, &t->range_del_h, &t->range_del);
    if (!rc)
        rc = rv_range_del_block_read(t->range_del, t->range_del_h.size,
                                     &t->frags);
    if (rc == RAVEL_CORRUPT && t->range_del)
        rc = rv_table_block_error(t, "range deletion", &t->range_del_h, rc);
    return rc;
}

/* Decodes the properties block: every known name must be there, but for
** ravel.session_id, which older files lack. */
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
    struct rv_block_cursor c;
    int rc = rv_block_cursor_init(&c, block, len, table_bytewise_compare, 0);
    if (rc)
        return rv_table_block_error(t, "properties", &t->props_h, rc);
    for (size_t i = 0; i < sizeof u64 / sizeof u64[0] && !rc; i++) {
        const char *v;
        size_t vl;
        rc = table_find_prop(t, &c, u64[i].name, &v, &vl);
        if (!rc && vl != 8)
            rc = rv_error(RAVEL_CORRUPT, "%s: property %s holds %zu bytes, "
                          "not 8", t->path, u64[i].name, vl);
        if (!rc)
            memcpy((char *)&t->props + u64[i].off,
                   &(uint64_t){rv_get_fixed64(v)}, 8);
    }
    if (!rc)
        rc = table_prop_session_id(t, &c, &t->props.session_id);
    if (!rc && t->version == RV_TABLE_VERSION)
        rc = table_prop_range_del(t, &c);
    if (!rc)
        rc = table_prop_key(t, &c, "ravel.largest_key", &t->largest,
                            &t->largest_len);
    if (!rc)
        rc = table_prop_key(t, &c, "ravel.smallest_key", &t->smallest,
                            &t->smallest_len);
    rv_block_cursor_destroy(&c);
    return rc;
}

/* Reads the blocks kept in memory: index, filter, properties. */
static int table_read_meta(rv_table *t)
{
    char *props = NULL;
    int rc = table_read_meta_block(t, &t->index_h, &t->index);
    if (!rc && rv_block_check(t->index, t->index_len = t->index_h.size))
        rc = rv_table_block_error(t, "index", &t->index_h, RAVEL_CORRUPT);
    if (!rc)
        rv_index_search_build(&t->index_search, t->index, t->index_len);
    if (!rc && t->filter_h.size) {
        rc = table_read_meta_block(t, &t->filter_h, &t->filter);
        t->filter_len = t->filter_h.size;
        if (!rc && rv_bloom_check(t->filter, t->filter_len))
            rc = rv_table_block_error(t, "filter", &t->filter_h,
                                      RAVEL_CORRUPT);
    }
    if (!rc)
        rc = table_read_meta_block(t, &t->props_h, &props);
    if (!rc)
        rc = table_read_props(t, props, t->props_h.size);
    if (!rc && t->version == RV_TABLE_VERSION)
        rc = table_read_range_dels(t);
    /* the properties block is written before the index, so it cannot hold
    ** the index's size: the footer's handle does */
    t->props.index_size = t->index_h.size;
    free(props);
    return rc;
}

/* Maps the file (allow_mmap_reads).  A file shorter than the FILE_SIZE
** the manifest gives is refused, so that no block read touches a page
** past its end; a file cut short after this, behind ravel's back, makes
** a read of the lost pages raise SIGBUS (as in LevelDB and RocksDB).  A
** map that fails (address space, a file system without mmap) leaves the
** table read with pread. */
static int table_map(rv_table *t)
{
    struct stat st;
    if (fstat(t->fd, &st) != 0)
        return rv_error_errno(RAVEL_IOERR, errno, "stat %s", t->path);
    if ((uint64_t)st.st_size < t->file_size)
        return rv_error(RAVEL_CORRUPT, "%s: %llu bytes, but the manifest "
                        "says %llu", t->path, (unsigned long long)st.st_size,
                        (unsigned long long)t->file_size);
    if (t->file_size == 0 || t->file_size > SIZE_MAX)
        return RAVEL_OK;
    void *m = mmap(NULL, (size_t)t->file_size, PROT_READ, MAP_SHARED, t->fd,
                   0);
    if (m != MAP_FAILED)
        t->map = m;
    return RAVEL_OK;
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
    t->read_flags = ro->verify_checksums ? RV_TABLE_READ_VERIFY : 0;
    int rc = ro->allow_mmap_reads ? table_map(t) : RAVEL_OK;
    if (!rc)
        rc = table_read_footer(t);
    if (!rc)
        rc = table_read_meta(t);
    if (rc) {
        rv_table_close(t);
        return rc;
    }
    if (ro->block_cache) {
        t->cache = ro->block_cache;
        rv_cache_ref(t->cache);
        t->cache_id = rv_cache_new_id(t->cache);
    }
    *out = t;
    return RAVEL_OK;
}

int rv_table_file_session_id(int fd, const char *path, uint64_t file_number,
                             uint64_t file_size, uint64_t *id)
{
    *id = 0;
    rv_table t = {.fd = fd, .path = (char *)path, .file_number = file_number,
                  .file_size = file_size, .read_flags = RV_TABLE_READ_VERIFY};
    char *props = NULL;
    int rc = table_read_footer(&t);
    if (!rc)
        rc = table_read_meta_block(&t, &t.props_h, &props);
    struct rv_block_cursor c;
    if (!rc) {
        rc = rv_block_cursor_init(&c, props, t.props_h.size,
                                  table_bytewise_compare, 0);
        if (rc)
            rc = rv_table_block_error(&t, "properties", &t.props_h, rc);
        else {
            rc = table_prop_session_id(&t, &c, id);
            rv_block_cursor_destroy(&c);
        }
    }
    free(props);
    return rc;
}

/* Erases the blocks of T from the cache (every block the index names). */
static void table_forget_blocks(rv_table *t)
{
    struct rv_block_cursor c;
    rv_block_cursor_init_checked(&c, t->index, t->index_len, rv_ikey_compare,
                                 RV_TAG_SIZE);
    char key[TABLE_CACHE_KEY];
    for (rv_block_cursor_seek_to_first(&c); rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c)) {
        if (c.val_len != RV_TABLE_HANDLE_SIZE)
            continue; /* not a handle: no block was cached for it */
        table_cache_key(t, rv_get_fixed64(c.val), key);
        rv_cache_erase(t->cache, key, sizeof key);
    }
    rv_block_cursor_destroy(&c);
}

void rv_table_close(rv_table *t)
{
    if (!t)
        return;
    if (t->cache) {
        table_forget_blocks(t);
        rv_cache_unref(t->cache);
    }
    if (t->map)
        munmap((void *)t->map, (size_t)t->file_size);
    close(t->fd);
    rv_index_search_free(&t->index_search);
    free(t->index);
    free(t->filter);
    free(t->smallest);
    free(t->largest);
    rv_range_frags_free(t->frags);
    free(t->range_del);
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

const struct rv_range_frags *rv_table_range_frags(const rv_table *t)
{
    return t->frags;
}

int rv_table_may_contain(const rv_table *t, const void *user_key, size_t klen)
{
    return !t->filter ||
           rv_bloom_may_match(t->filter, t->filter_len, user_key, klen);
}

/* ------------------------------------------------------------ point get */

/* Calls FN from the data block at H, from IKEY (or from its first entry
** when IKEY is NULL).  *MORE: 0 once FN said stop. */
static int table_get_in_block(rv_table *t, const struct rv_table_handle *h,
                              int flags, const char *ikey, size_t klen,
                              rv_table_get_fn fn, void *ctx, int *more)
{
    struct rv_table_block_ref ref;
    int rc = rv_table_load_block(t, h, flags, &ref);
    if (rc)
        return rc;
    struct rv_block_cursor c;
    rv_block_cursor_init_checked(&c, ref.data, ref.len,
                                 rv_ikey_compare, RV_TAG_SIZE);
    if (ikey)
        rv_block_cursor_seek(&c, ikey, klen);
    else
        rv_block_cursor_seek_to_first(&c);
    while (rv_block_cursor_valid(&c)) {
        if (!fn(ctx, c.key, c.key_len, c.val, c.val_len)) {
            *more = 0;
            break;
        }
        rv_block_cursor_next(&c);
    }
    if (c.status)
        rc = rv_table_block_error(t, "data", h, c.status);
    rv_block_cursor_destroy(&c);
    rv_table_release_block(t, &ref);
    return rc;
}

int rv_table_get(rv_table *t, int flags, const char *ikey, size_t klen,
                 rv_table_get_fn fn, void *ctx)
{
    /* The index maps each block's last key to it: the first entry whose
    ** key >= IKEY names the block holding the first entry >= IKEY. */
    struct rv_block_cursor index;
    rv_block_cursor_init_checked(&index, t->index, t->index_len,
                                 rv_ikey_compare, RV_TAG_SIZE);
    rv_table_index_seek(t, &index, ikey, klen);
    int rc = RAVEL_OK, more = 1;
    const char *from = ikey;
    while (!rc && more && rv_block_cursor_valid(&index)) {
        struct rv_table_handle h;
        rc = rv_table_index_handle(t, index.val, index.val_len, &h);
        if (!rc)
            rc = table_get_in_block(t, &h, flags, from, klen, fn, ctx,
                                    &more);
        from = NULL;
        if (!rc && more)
            rv_block_cursor_next(&index);
    }
    if (!rc && index.status)
        rc = rv_table_block_error(t, "index", &t->index_h, index.status);
    rv_block_cursor_destroy(&index);
    return rc;
}
