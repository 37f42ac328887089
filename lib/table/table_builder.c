/*
** table_builder.c -- writing a table file (table_builder.h; the bytes are
** in table_format.h).
**
** A data block is cut when it reaches block_size; its index entry (its
** last key -> its handle) is added then.  With compression, a data block
** is stored compressed (compress.h) only if that saves at least 1/8 of
** it: below that, decompressing on every read costs more than the bytes
** save.  The other blocks are never compressed.  The filter collects every user
** key.  Properties are written as a block of "ravel.<name>" -> fixed64
** (and the smallest and largest internal keys), in bytewise name order.
*/
#include "table/table_builder.h"
#include "base/dbformat.h"
#include "table/block_builder.h"
#include "table/bloom.h"
#include "table/compress.h"
#include "table/range_del_block.h"
#include "util/coding.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/random.h"
#include "util/sync_journal.h"

#include <xxhash.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TABLE_WRITE_BUFFER (256 * 1024)

struct rv_table_builder {
    int fd;
    const char *path;
    uint64_t file_number;
    struct rv_table_options o;
    int status;             /* the first error; every later call returns it */

    char *wbuf;             /* bytes not yet written, at offset - wlen */
    size_t wlen;
    uint64_t offset;        /* file offset after everything appended */

    struct rv_block_builder data, index;
    rv_compressor *compressor; /* NULL: data blocks stored as they are */
    char *zbuf;             /* compressed data block */
    size_t zcap;
    struct rv_bloom_builder bloom;
    char *last_key;         /* the last key added */
    size_t last_len, last_cap;
    /* The handle of the block just written, whose index entry waits for
    ** the next key: its separator is chosen between the two. */
    int index_pending;
    struct rv_table_handle pending_h;
    char *first_key;
    size_t first_len;
    struct rv_table_props props;
    /* range tombstones given (keys copied: BEGIN's allocation holds END
    ** too), written fragmented at finish in the range-deletion block */
    struct rv_range_tomb *tombs;
    int n_tombs, tombs_cap;
};

/* ------------------------------------------------------------- writing */

static int table_flush_wbuf(rv_table_builder *tb)
{
    size_t done = 0;
    while (done < tb->wlen) {
        int injected = rv_fault_check(RV_FAULT_TABLE_WRITE);
        ssize_t n = injected ? (errno = -injected, -1)
                             : write(tb->fd, tb->wbuf + done, tb->wlen - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tb->status = rv_error_errno(RAVEL_IOERR,
                                               n < 0 ? errno : EIO,
                                               "write %s", tb->path);
        done += (size_t)n;
    }
    tb->wlen = 0;
    return RAVEL_OK;
}

static int table_append(rv_table_builder *tb, const char *p, size_t n)
{
    while (n) {
        if (tb->wlen == TABLE_WRITE_BUFFER && table_flush_wbuf(tb))
            return tb->status;
        size_t room = TABLE_WRITE_BUFFER - tb->wlen;
        size_t k = n < room ? n : room;
        memcpy(tb->wbuf + tb->wlen, p, k);
        tb->wlen += k;
        tb->offset += k;
        p += k;
        n -= k;
    }
    return RAVEL_OK;
}

/* Appends CONTENTS, stored as TYPE, as a block with its trailer; *H says
** where it went. */
static int table_write_block(rv_table_builder *tb, const char *contents,
                             size_t len, int type, struct rv_table_handle *h)
{
    char trailer[RV_TABLE_BLOCK_TRAILER];
    trailer[0] = (char)type;
    rv_put_fixed64(trailer + 1,
                   rv_table_block_checksum(contents, len, type,
                                           tb->file_number));
    h->offset = tb->offset;
    h->size = len;
    if (table_append(tb, contents, len) ||
        table_append(tb, trailer, sizeof trailer))
        return tb->status;
    return RAVEL_OK;
}

static void table_put_handle(char *dst, const struct rv_table_handle *h)
{
    rv_put_fixed64(dst, h->offset);
    rv_put_fixed64(dst + 8, h->size);
}

/* Compresses the data block CONTENTS (LEN bytes) if that saves 1/8 of
** it: *CONTENTS, *LEN and *TYPE then describe the compressed block. */
static int table_compress_block(rv_table_builder *tb, const char **contents,
                                size_t *len, int *type)
{
    *type = RV_TABLE_NO_COMPRESSION;
    if (!tb->compressor)
        return RAVEL_OK;
    size_t cap = *len - *len / 8;
    if (cap > tb->zcap) {
        char *z = realloc(tb->zbuf, cap);
        if (!z)
            return rv_error(RAVEL_NOMEM, "out of memory compressing a block "
                            "of %s", tb->path);
        tb->zbuf = z;
        tb->zcap = cap;
    }
    size_t n = rv_compress(tb->compressor, *contents, *len, tb->zbuf, cap);
    if (n == 0)
        return RAVEL_OK; /* does not shrink enough: stored as it is */
    *contents = tb->zbuf;
    *len = n;
    *type = (int)tb->o.compression;
    return RAVEL_OK;
}

/* Into OUT (room for ALEN bytes), a short internal key K with A <= K < B
** (LevelDB's shortest separator: the user keys' common prefix and the
** next byte of A's raised by one, with the tag that sorts first).
** Returns its length, or 0 when no shorter key fits between them. */
static size_t table_separator(const char *a, size_t alen, const char *b,
                              size_t blen, char *out)
{
    size_t ua = alen - RV_TAG_SIZE, ub = blen - RV_TAG_SIZE;
    size_t n = ua < ub ? ua : ub, diff = 0;
    while (diff < n && a[diff] == b[diff])
        diff++;
    if (diff >= n || diff + 1 >= ua)
        return 0; /* a prefix of the other, or no shorter */
    unsigned char c = (unsigned char)a[diff];
    if (c == 0xff || c + 1 >= (unsigned char)b[diff])
        return 0;
    memcpy(out, a, diff);
    out[diff] = (char)(c + 1);
    rv_put_fixed64(out + diff + 1, rv_pack_tag(RV_MAX_SEQUENCE, RV_TYPE_PUT));
    return diff + 1 + RV_TAG_SIZE;
}

/* Adds the index entry of the block written last: its key is a separator
** between that block's last key and NEXT (NULL at the end of the file:
** the last key itself).  Smaller index blocks than the blocks' last keys
** give (RocksDB and LevelDB do the same), so a seek's binary search
** touches less memory. */
static int table_add_pending_index(rv_table_builder *tb, const char *next,
                                   size_t nlen)
{
    if (!tb->index_pending)
        return RAVEL_OK;
    tb->index_pending = 0;
    char hv[RV_TABLE_HANDLE_SIZE];
    table_put_handle(hv, &tb->pending_h);
    char sep[64];
    size_t slen = next && tb->last_len <= sizeof sep
                      ? table_separator(tb->last_key, tb->last_len, next, nlen,
                                        sep)
                      : 0;
    if (slen)
        return rv_block_builder_add(&tb->index, sep, slen, hv, sizeof hv);
    return rv_block_builder_add(&tb->index, tb->last_key, tb->last_len, hv,
                                sizeof hv);
}

/* Writes the current data block; its index entry follows with the next
** key (table_add_pending_index). */
static int table_cut_block(rv_table_builder *tb)
{
    if (tb->data.entries == 0)
        return RAVEL_OK;
    const char *contents;
    size_t len;
    int type;
    struct rv_table_handle h;
    int rc = rv_block_builder_finish(&tb->data, &contents, &len);
    if (rc == RAVEL_OK)
        rc = table_compress_block(tb, &contents, &len, &type);
    if (rc == RAVEL_OK)
        rc = table_write_block(tb, contents, len, type, &h);
    if (rc)
        return tb->status = rc;
    tb->index_pending = 1;
    tb->pending_h = h;
    tb->props.data_size += len + RV_TABLE_BLOCK_TRAILER;
    tb->props.data_blocks++;
    rv_block_builder_reset(&tb->data);
    return RAVEL_OK;
}

/* -------------------------------------------------------------- the API */

int rv_table_builder_new(int fd, const char *path, uint64_t file_number,
                         const struct rv_table_options *o,
                         rv_table_builder **out)
{
    rv_compressor *z = NULL;
    if (o->compression != RV_COMPRESSION_NONE) {
        int rc = rv_compressor_new(o->compression, &z);
        if (rc)
            return rc;
    }
    rv_table_builder *tb = calloc(1, sizeof *tb);
    char *wbuf = malloc(TABLE_WRITE_BUFFER);
    if (!tb || !wbuf) {
        free(tb);
        free(wbuf);
        rv_compressor_free(z);
        return rv_error(RAVEL_NOMEM, "out of memory writing %s", path);
    }
    tb->compressor = z;
    tb->fd = fd;
    tb->path = path;
    tb->file_number = file_number;
    tb->o = *o;
    if (tb->o.block_size < 64)
        tb->o.block_size = 64;
    tb->wbuf = wbuf;
    rv_block_builder_init(&tb->data, o->block_restart_interval);
    rv_block_builder_init(&tb->index, 1); /* binary search over all */
    rv_bloom_builder_init(&tb->bloom, o->bloom_bits_per_key);
    tb->props.smallest_seq = UINT64_MAX;
    tb->props.bloom_bits_per_key = (uint64_t)(o->bloom_bits_per_key > 0
                                              ? o->bloom_bits_per_key : 0);
    tb->props.session_id = o->session_id ? o->session_id : rv_random_id();
    *out = tb;
    return RAVEL_OK;
}

int rv_table_builder_add(rv_table_builder *tb, const char *ikey, size_t klen,
                         const char *val, size_t vlen)
{
    if (tb->status)
        return tb->status;
    if (klen < RV_TAG_SIZE)
        return tb->status = rv_error(RAVEL_INVALID, "%s: internal key of %zu "
                                     "bytes", tb->path, klen);
    int rc = table_add_pending_index(tb, ikey, klen);
    if (rc == RAVEL_OK)
        rc = rv_block_builder_add(&tb->data, ikey, klen, val, vlen);
    if (rc == RAVEL_OK && tb->o.bloom_bits_per_key > 0)
        rc = rv_bloom_add(&tb->bloom, ikey, klen - RV_TAG_SIZE);
    if (rc == RAVEL_OK && klen > tb->last_cap) {
        char *k = realloc(tb->last_key, klen);
        if (!k)
            rc = rv_error(RAVEL_NOMEM, "out of memory writing %s", tb->path);
        else {
            tb->last_key = k;
            tb->last_cap = klen;
        }
    }
    if (rc == RAVEL_OK && !tb->first_key) {
        tb->first_key = malloc(klen);
        if (!tb->first_key)
            rc = rv_error(RAVEL_NOMEM, "out of memory writing %s", tb->path);
        else {
            memcpy(tb->first_key, ikey, klen);
            tb->first_len = klen;
        }
    }
    if (rc)
        return tb->status = rc;
    memcpy(tb->last_key, ikey, klen);
    tb->last_len = klen;
    uint64_t tag = rv_get_fixed64(ikey + klen - RV_TAG_SIZE);
    uint64_t seq = rv_tag_sequence(tag);
    tb->props.entries++;
    tb->props.deletions += rv_tag_type(tag) == RV_TYPE_DELETE;
    if (seq < tb->props.smallest_seq)
        tb->props.smallest_seq = seq;
    if (seq > tb->props.largest_seq)
        tb->props.largest_seq = seq;
    if (rv_block_builder_size(&tb->data) >= tb->o.block_size)
        return table_cut_block(tb);
    return RAVEL_OK;
}

uint64_t rv_table_builder_size(const rv_table_builder *tb)
{
    return tb->offset + rv_block_builder_size(&tb->data);
}

int rv_table_builder_add_range_del(rv_table_builder *tb, const char *begin,
                                   size_t blen, const char *end, size_t elen,
                                   uint64_t seq)
{
    if (tb->status)
        return tb->status;
    if (rv_user_key_compare(begin, blen, end, elen) >= 0)
        return tb->status = rv_error(RAVEL_INVALID, "%s: a range tombstone "
                                     "whose begin is not before its end",
                                     tb->path);
    if (tb->n_tombs == tb->tombs_cap) {
        int cap = tb->tombs_cap ? 2 * tb->tombs_cap : 16;
        struct rv_range_tomb *t = realloc(tb->tombs,
                                          (size_t)cap * sizeof *t);
        if (!t)
            return tb->status = rv_error(RAVEL_NOMEM, "out of memory "
                                         "writing %s", tb->path);
        tb->tombs = t;
        tb->tombs_cap = cap;
    }
    char *k = malloc(blen + elen + 1);
    if (!k)
        return tb->status = rv_error(RAVEL_NOMEM, "out of memory writing %s",
                                     tb->path);
    memcpy(k, begin, blen);
    memcpy(k + blen, end, elen);
    tb->tombs[tb->n_tombs++] = (struct rv_range_tomb){
        .begin = k, .blen = blen, .end = k + blen, .elen = elen, .seq = seq};
    if (seq < tb->props.smallest_seq)
        tb->props.smallest_seq = seq;
    if (seq > tb->props.largest_seq)
        tb->props.largest_seq = seq;
    return RAVEL_OK;
}

/* *DST (of *DLEN bytes, malloc'd or NULL) becomes the internal key K
** (KLEN bytes of user key) + tag (SEQ, RV_TYPE_RANGE_DELETE) when that
** sorts before it (WIDER_SIGN -1: a smallest bound) or after it (1: a
** largest), or when there is none yet. */
static int table_widen_bound(rv_table_builder *tb, char **dst, size_t *dlen,
                             const char *k, size_t klen, uint64_t seq,
                             int wider_sign)
{
    char *b = malloc(klen + RV_TAG_SIZE);
    if (!b)
        return tb->status = rv_error(RAVEL_NOMEM, "out of memory writing %s",
                                     tb->path);
    memcpy(b, k, klen);
    rv_put_fixed64(b + klen, rv_pack_tag(seq, RV_TYPE_RANGE_DELETE));
    if (!*dst || rv_ikey_compare(b, klen + RV_TAG_SIZE, *dst, *dlen) *
                     wider_sign > 0) {
        free(*dst);
        *dst = b;
        *dlen = klen + RV_TAG_SIZE;
    } else {
        free(b);
    }
    return RAVEL_OK;
}

/* The range-deletion block of the fragments F, and the file's bounds
** widened to cover them (the largest to the last end at RV_MAX_SEQUENCE,
** RocksDB's sentinel: the end is exclusive). */
static int table_write_range_dels(rv_table_builder *tb,
                                  const struct rv_range_frags *f,
                                  struct rv_table_handle *h)
{
    struct rv_block_builder b;
    rv_block_builder_init(&b, 1); /* whole keys: read in place */
    const char *contents;
    size_t len;
    int rc = rv_range_del_block_add(&b, f);
    if (!rc)
        rc = rv_block_builder_finish(&b, &contents, &len);
    if (!rc)
        rc = table_write_block(tb, contents, len, RV_TABLE_NO_COMPRESSION, h);
    rv_block_builder_destroy(&b);
    const struct rv_range_frag *first = &f->frag[0], *last = &f->frag[f->n - 1];
    if (!rc)
        rc = table_widen_bound(tb, &tb->first_key, &tb->first_len,
                               first->begin, first->blen, first->seqs[0], -1);
    if (!rc) {
        char *l = NULL;
        size_t ll = 0;
        if (tb->last_key) {
            if (!(l = malloc(tb->last_len ? tb->last_len : 1)))
                rc = rv_error(RAVEL_NOMEM, "out of memory writing %s",
                              tb->path);
            else {
                memcpy(l, tb->last_key, tb->last_len);
                ll = tb->last_len;
            }
        }
        if (!rc)
            rc = table_widen_bound(tb, &l, &ll, last->end, last->elen,
                                   RV_MAX_SEQUENCE, 1);
        if (!rc) {
            free(tb->last_key);
            tb->last_key = l;
            tb->last_len = tb->last_cap = ll;
        } else {
            free(l);
        }
    }
    return rc ? (tb->status = rc) : RAVEL_OK;
}

static int table_prop_u64(struct rv_block_builder *b, const char *name,
                          uint64_t v)
{
    char buf[8];
    rv_put_fixed64(buf, v);
    return rv_block_builder_add(b, name, strlen(name), buf, sizeof buf);
}

/* The properties block; names in bytewise order.  RANGE_DEL: where the
** range-deletion block is, NULL when the file has none. */
static int table_write_props(rv_table_builder *tb,
                             const struct rv_table_handle *range_del,
                             struct rv_table_handle *h)
{
    struct rv_block_builder b;
    rv_block_builder_init(&b, 1);
    const struct rv_table_props *p = &tb->props;
    static const char empty[1];
    int rc = table_prop_u64(&b, "ravel.bloom_bits_per_key",
                            p->bloom_bits_per_key);
    if (!rc) rc = table_prop_u64(&b, "ravel.creation_time", p->creation_time);
    if (!rc) rc = table_prop_u64(&b, "ravel.data_blocks", p->data_blocks);
    if (!rc) rc = table_prop_u64(&b, "ravel.data_size", p->data_size);
    if (!rc) rc = table_prop_u64(&b, "ravel.deletions", p->deletions);
    if (!rc) rc = table_prop_u64(&b, "ravel.entries", p->entries);
    if (!rc) rc = table_prop_u64(&b, "ravel.filter_size", p->filter_size);
    if (!rc) rc = rv_block_builder_add(&b, "ravel.largest_key", 17,
                                       tb->last_key ? tb->last_key : empty,
                                       tb->last_len);
    if (!rc) rc = table_prop_u64(&b, "ravel.largest_seq", p->largest_seq);
    char rh[RV_TABLE_HANDLE_SIZE];
    if (range_del)
        table_put_handle(rh, range_del);
    if (!rc && range_del)
        rc = rv_block_builder_add(&b, "ravel.range_del_block", 21, rh,
                                  sizeof rh);
    if (!rc) rc = table_prop_u64(&b, "ravel.session_id", p->session_id);
    if (!rc) rc = rv_block_builder_add(&b, "ravel.smallest_key", 18,
                                       tb->first_key ? tb->first_key : empty,
                                       tb->first_len);
    if (!rc) rc = table_prop_u64(&b, "ravel.smallest_seq", p->smallest_seq);
    const char *contents;
    size_t len;
    if (!rc)
        rc = rv_block_builder_finish(&b, &contents, &len);
    if (!rc)
        rc = table_write_block(tb, contents, len, RV_TABLE_NO_COMPRESSION, h);
    rv_block_builder_destroy(&b);
    return rc ? (tb->status = rc) : RAVEL_OK;
}

static int table_write_filter(rv_table_builder *tb, struct rv_table_handle *h)
{
    h->offset = tb->offset;
    h->size = 0;
    if (tb->o.bloom_bits_per_key <= 0)
        return RAVEL_OK;
    size_t len = rv_bloom_size(&tb->bloom);
    char *f = malloc(len);
    if (!f)
        return tb->status = rv_error(RAVEL_NOMEM, "out of memory for the "
                                     "filter of %s", tb->path);
    rv_bloom_finish(&tb->bloom, f);
    int rc = table_write_block(tb, f, len, RV_TABLE_NO_COMPRESSION, h);
    free(f);
    tb->props.filter_size = len;
    return rc;
}

static int table_write_footer(rv_table_builder *tb,
                              const struct rv_table_handle *index,
                              const struct rv_table_handle *filter,
                              const struct rv_table_handle *props,
                              uint32_t version)
{
    char f[RV_TABLE_FOOTER_SIZE];
    table_put_handle(f, index);
    table_put_handle(f + 16, filter);
    table_put_handle(f + 32, props);
    rv_put_fixed64(f + 48, tb->file_number);
    rv_put_fixed32(f + 56, version);
    rv_put_fixed32(f + 60, 0);
    rv_put_fixed64(f + 64, XXH3_64bits_withSeed(f, 64, tb->file_number));
    rv_put_fixed64(f + 72, RV_TABLE_MAGIC);
    return table_append(tb, f, sizeof f);
}

int rv_table_builder_finish(rv_table_builder *tb, struct rv_table_props *props,
                            uint64_t *file_size)
{
    struct rv_table_handle filter, ph, index, rdh;
    struct rv_range_frags *frags = NULL;
    const char *contents;
    size_t len;
    if (tb->status || table_cut_block(tb))
        return tb->status;
    int pending = table_add_pending_index(tb, NULL, 0);
    if (pending)
        return tb->status = pending;
    tb->props.creation_time = (uint64_t)time(NULL);
    if (tb->props.entries == 0 && tb->n_tombs == 0)
        tb->props.smallest_seq = 0;
    int rc = table_write_filter(tb, &filter);
    if (!rc && tb->n_tombs &&
        !(frags = rv_range_frags_build(tb->tombs, tb->n_tombs)))
        rc = tb->status = rv_error(RAVEL_NOMEM, "out of memory writing %s",
                                   tb->path);
    if (!rc && frags)
        rc = table_write_range_dels(tb, frags, &rdh);
    rv_range_frags_free(frags);
    if (!rc)
        rc = rv_block_builder_finish(&tb->index, &contents, &len);
    if (!rc) {
        tb->props.index_size = len;
        rc = table_write_props(tb, tb->n_tombs ? &rdh : NULL, &ph);
    }
    if (!rc)
        rc = table_write_block(tb, contents, len, RV_TABLE_NO_COMPRESSION,
                               &index);
    if (!rc)
        rc = table_write_footer(tb, &index, &filter, &ph,
                                tb->n_tombs ? RV_TABLE_VERSION
                                            : RV_TABLE_VERSION_PLAIN);
    if (!rc)
        rc = table_flush_wbuf(tb);
    int injected = rc ? 0 : rv_fault_check(RV_FAULT_TABLE_SYNC);
    if (injected)
        rc = rv_error_errno(RAVEL_IOERR, -injected, "fdatasync %s", tb->path);
    else if (!rc && fdatasync(tb->fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", tb->path);
    if (rc)
        return tb->status = rc;
    rv_sync_journal_file(tb->fd, tb->offset);
    *props = tb->props;
    *file_size = tb->offset;
    return RAVEL_OK;
}

void rv_table_builder_bounds(const rv_table_builder *tb,
                             const char **smallest, size_t *slen,
                             const char **largest, size_t *llen)
{
    *smallest = tb->first_key;
    *slen = tb->first_len;
    *largest = tb->last_key;
    *llen = tb->last_len;
}

void rv_table_builder_free(rv_table_builder *tb)
{
    if (!tb)
        return;
    rv_block_builder_destroy(&tb->data);
    rv_block_builder_destroy(&tb->index);
    rv_bloom_builder_destroy(&tb->bloom);
    rv_compressor_free(tb->compressor);
    free(tb->zbuf);
    free(tb->wbuf);
    free(tb->last_key);
    free(tb->first_key);
    for (int i = 0; i < tb->n_tombs; i++)
        free((char *)tb->tombs[i].begin); /* END shares the allocation */
    free(tb->tombs);
    free(tb);
}
