/*
** repair_table.c -- what repair can read of one table file (repair.h):
** its data blocks that verify, found through its index when the footer
** and the index verify; what a block must be to be kept.
**
** A block is kept only if its checksum holds (table_format.h: seeded with
** the file number and the block's type, so a block moved from another
** file or with a damaged type byte never verifies), it decodes, and its
** entries are well formed: internal keys of a put or a deletion, in
** strictly increasing order, after the last key kept from the file.
**
** When the footer or the index is damaged, the blocks are found by
** walking the file (repair_walk.c); the merge reads the blocks kept
** through repair_table_iter.c.
*/
#include "db/repair.h"
#include "base/dbformat.h"
#include "table/block.h"
#include "table/compress.h"
#include "table/range_del_block.h"
#include "util/coding.h"
#include "util/error.h"
#include "util/file.h"

#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the footer says, when it verifies. */
struct repair_footer {
    int ok;
    uint32_t version;       /* RV_TABLE_VERSION_PLAIN or RV_TABLE_VERSION
                            ** (range tombstones) */
    struct rv_table_handle index, filter, props;
    uint64_t data_end;      /* where the data blocks end */
    const char *props_data; /* the properties block, when it verifies */
};

int rv_repair_key_buf_set(struct rv_repair_key_buf *k, const char *key,
                          size_t len)
{
    if (len == 0) {
        k->len = 0;
        return RAVEL_OK;
    }
    if (len > k->cap) {
        char *p = realloc(k->key, len);
        if (!p)
            return rv_error(RAVEL_NOMEM, "out of memory reading a table");
        k->key = p;
        k->cap = len;
    }
    memcpy(k->key, key, len);
    k->len = len;
    return RAVEL_OK;
}

/* -------------------------------------------------------------- blocks */

static void repair_get_handle(const char *p, struct rv_table_handle *h)
{
    h->offset = rv_get_fixed64(p);
    h->size = rv_get_fixed64(p + 8);
}

int rv_repair_decode(const struct rv_repair_table *t, uint64_t off,
                     uint64_t size, struct rv_repair_decoded *d, char *why,
                     size_t whylen)
{
    memset(d, 0, sizeof *d);
    if (off > t->size || t->size - off < RV_TABLE_BLOCK_TRAILER ||
        size > t->size - off - RV_TABLE_BLOCK_TRAILER) {
        snprintf(why, whylen, "it lies past the file's end");
        return 0;
    }
    const char *p = t->map + off;
    int type = (unsigned char)p[size];
    if (rv_get_fixed64(p + size + 1) !=
        rv_table_block_checksum(p, (size_t)size, type, t->seed)) {
        snprintf(why, whylen, "checksum mismatch");
        return 0;
    }
    if (type == RV_TABLE_NO_COMPRESSION) {
        d->data = p;
        d->len = (size_t)size;
    } else {
        size_t raw = 0;
        int rc = rv_compressed_raw_length(type, p, (size_t)size, &raw);
        if (!rc && !(d->owned = malloc(raw ? raw : 1)))
            rc = RAVEL_NOMEM;
        if (!rc)
            rc = rv_decompress(type, p, (size_t)size, d->owned, raw);
        if (rc) {
            free(d->owned);
            d->owned = NULL;
            snprintf(why, whylen, "it does not decompress (%.160s)",
                     rv_errmsg_get());
            return 0;
        }
        d->data = d->owned;
        d->len = raw;
    }
    if (rv_block_check(d->data, d->len)) {
        free(d->owned);
        d->owned = NULL;
        snprintf(why, whylen, "malformed block (%.160s)", rv_errmsg_get());
        return 0;
    }
    return 1;
}

/* What a data block holds. */
struct repair_block_stats {
    uint64_t entries, zero_seq, max_seq;
};

/* 1 if the decoded block D holds only well-formed entries in order after
** LAST (updated to its last key; FIRST, if not NULL, set to its first);
** 0 if not (WHY says why); -1 when out of memory. */
static int repair_check_entries(const struct rv_repair_decoded *d,
                                struct rv_repair_key_buf *last,
                                struct rv_repair_key_buf *first,
                                struct repair_block_stats *s,
                                char *why, size_t whylen)
{
    struct rv_block_cursor c;
    rv_block_cursor_init_checked(&c, d->data, d->len, rv_ikey_compare,
                                 RV_TAG_SIZE);
    memset(s, 0, sizeof *s);
    /* LAST changes only if the whole block is kept */
    struct rv_repair_key_buf cur = {0};
    int ok = last->len && rv_repair_key_buf_set(&cur, last->key, last->len) ? -1
                                                                       : 1;
    for (rv_block_cursor_seek_to_first(&c); ok > 0 && rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c)) {
        uint64_t tag = rv_get_fixed64(c.key + c.key_len - RV_TAG_SIZE);
        int type = rv_tag_type(tag);
        if (type != RV_TYPE_PUT && type != RV_TYPE_DELETE) {
            snprintf(why, whylen, "an entry of type %d is not a put or a "
                     "deletion", type);
            ok = 0;
        } else if (cur.len && rv_ikey_compare(cur.key, cur.len, c.key,
                                              c.key_len) >= 0) {
            snprintf(why, whylen, "its keys are out of order");
            ok = 0;
        } else if (rv_repair_key_buf_set(&cur, c.key, c.key_len) ||
                   (first && s->entries == 0 &&
                    rv_repair_key_buf_set(first, c.key, c.key_len))) {
            ok = -1; /* the key is copied: the cursor reuses its buffer */
        } else {
            s->entries++;
            s->zero_seq += rv_tag_sequence(tag) == 0;
            if (rv_tag_sequence(tag) > s->max_seq)
                s->max_seq = rv_tag_sequence(tag);
        }
    }
    if (ok > 0 && c.status) {
        snprintf(why, whylen, "malformed entries (%.160s)", rv_errmsg_get());
        ok = 0;
    }
    if (ok > 0 && s->entries == 0) {
        snprintf(why, whylen, "it holds no entries");
        ok = 0;
    }
    if (ok > 0) {
        struct rv_repair_key_buf t = *last;
        *last = cur;
        cur = t;
    }
    free(cur.key);
    rv_block_cursor_destroy(&c);
    return ok;
}

/* 1 if D is T's index block rather than data: every value a block handle,
** the handles naming blocks one after another from byte 0 (found by a
** walk, an index block verifies like any other; user values of 16 bytes
** that happen to chain so are not a concern). */
static int repair_is_index(const struct rv_repair_table *t,
                           const struct rv_repair_decoded *d)
{
    struct rv_block_cursor c;
    rv_block_cursor_init_checked(&c, d->data, d->len, rv_ikey_compare,
                                 RV_TAG_SIZE);
    uint64_t next = 0;
    int index = 1;
    for (rv_block_cursor_seek_to_first(&c); index && rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c)) {
        struct rv_table_handle h;
        index = c.val_len == RV_TABLE_HANDLE_SIZE;
        if (index) {
            repair_get_handle(c.val, &h);
            index = h.offset == next && h.size < t->size;
            next = h.offset + h.size + RV_TABLE_BLOCK_TRAILER;
        }
    }
    rv_block_cursor_destroy(&c);
    return index && next > 0;
}

static int repair_keep_block(struct rv_repair_table *t, uint64_t off,
                             uint64_t size,
                             const struct repair_block_stats *s)
{
    if (t->n_blocks == t->cap_blocks) {
        int cap = t->cap_blocks ? t->cap_blocks * 2 : 64;
        struct rv_repair_block *b = realloc(t->blocks,
                                            (size_t)cap * sizeof *b);
        if (!b)
            return rv_error(RAVEL_NOMEM, "out of memory reading %s", t->path);
        t->blocks = b;
        t->cap_blocks = cap;
    }
    t->blocks[t->n_blocks].offset = off;
    t->blocks[t->n_blocks].size = size;
    t->n_blocks++;
    t->kept += s->entries;
    t->zero_seq += s->zero_seq;
    if (s->max_seq > t->max_seq)
        t->max_seq = s->max_seq;
    return RAVEL_OK;
}

/* 1 and *T's tombstones if the verified block D is a range-deletion
** block (a walk meets it among the data blocks). */
static int repair_is_range_dels(struct rv_repair_table *t,
                                const struct rv_repair_decoded *d)
{
    struct rv_range_frags *f = NULL;
    if (rv_range_del_block_read(d->data, d->len, &f) != RAVEL_OK)
        return 0;
    if (!t->tombs && !d->owned) /* never compressed: its keys in MAP */
        t->tombs = f;
    else
        rv_range_frags_free(f);
    return 1;
}

int rv_repair_try_range_dels(struct rv_repair_table *t, uint64_t off,
                             uint64_t size)
{
    struct rv_repair_decoded d;
    char why[256];
    if (!rv_repair_decode(t, off, size, &d, why, sizeof why))
        return 0;
    int is = repair_is_range_dels(t, &d);
    free(d.owned);
    return is;
}

int rv_repair_try_block(struct rv_repair_table *t, uint64_t off,
                        uint64_t size, struct rv_repair_key_buf *last,
                        struct rv_repair_key_buf *first, int *kept,
                        char *why, size_t whylen)
{
    struct rv_repair_decoded d;
    struct repair_block_stats s;
    *kept = 0;
    if (!rv_repair_decode(t, off, size, &d, why, whylen))
        return RAVEL_OK;
    if (repair_is_index(t, &d)) {
        free(d.owned);
        snprintf(why, whylen, "it is the file's index block");
        return RAVEL_OK;
    }
    if (repair_is_range_dels(t, &d)) {
        free(d.owned);
        snprintf(why, whylen, "it is the file's range-deletion block (its "
                 "tombstones are kept)");
        return RAVEL_OK;
    }
    int ok = repair_check_entries(&d, last, first, &s, why, whylen);
    free(d.owned);
    if (ok < 0)
        return RAVEL_NOMEM;
    if (!ok)
        return RAVEL_OK;
    *kept = 1;
    return repair_keep_block(t, off, size, &s);
}

/* ----------------------------------------------------- footer, index */

/* A meta block (never compressed) at H that verifies: 1, its contents at
** *DATA; else 0. */
static int repair_meta_block(const struct rv_repair_table *t,
                             const struct rv_table_handle *h,
                             const char **data)
{
    if (h->offset > t->size || t->size - h->offset < RV_TABLE_BLOCK_TRAILER ||
        h->size > t->size - h->offset - RV_TABLE_BLOCK_TRAILER)
        return 0;
    const char *p = t->map + h->offset;
    if (p[h->size] != RV_TABLE_NO_COMPRESSION ||
        rv_get_fixed64(p + h->size + 1) !=
            rv_table_block_checksum(p, (size_t)h->size, 0, t->seed) ||
        rv_block_check(p, (size_t)h->size))
        return 0;
    *data = p;
    return 1;
}

/* As repair_meta_block, for a block that is not a block_builder block
** (the filter): its checksum only. */
static int repair_meta_block_bytes(const struct rv_repair_table *t,
                                   const struct rv_table_handle *h,
                                   const char **data)
{
    if (h->offset > t->size || t->size - h->offset < RV_TABLE_BLOCK_TRAILER ||
        h->size > t->size - h->offset - RV_TABLE_BLOCK_TRAILER)
        return 0;
    const char *p = t->map + h->offset;
    if (p[h->size] != RV_TABLE_NO_COMPRESSION ||
        rv_get_fixed64(p + h->size + 1) !=
            rv_table_block_checksum(p, (size_t)h->size, 0, t->seed))
        return 0;
    *data = p;
    return 1;
}

static void repair_meta_damaged(struct rv_repair_table *t, const char *what)
{
    t->meta_damaged = 1;
    t->meta_what = what;
}

static int repair_bytewise(const char *a, size_t alen, const char *b,
                           size_t blen)
{
    return rv_user_key_compare(a, alen, b, blen);
}

/* The u64 property NAME of the properties block P (LEN bytes): 1 and *V,
** or 0. */
static int repair_prop(const char *p, size_t len, const char *name,
                       uint64_t *v)
{
    struct rv_block_cursor c;
    rv_block_cursor_init_checked(&c, p, len, repair_bytewise, 0);
    rv_block_cursor_seek(&c, name, strlen(name));
    int ok = rv_block_cursor_valid(&c) && c.key_len == strlen(name) &&
             memcmp(c.key, name, c.key_len) == 0 && c.val_len == 8;
    if (ok)
        *v = rv_get_fixed64(c.val);
    rv_block_cursor_destroy(&c);
    return ok;
}

static void repair_read_footer(struct rv_repair_table *t,
                               struct repair_footer *f)
{
    memset(f, 0, sizeof *f);
    if (t->size < RV_TABLE_FOOTER_SIZE)
        return;
    const char *p = t->map + t->size - RV_TABLE_FOOTER_SIZE;
    uint32_t version = rv_get_fixed32(p + 56);
    if (rv_get_fixed64(p + 72) != RV_TABLE_MAGIC ||
        rv_get_fixed64(p + 64) != XXH3_64bits_withSeed(p, 64, t->seed) ||
        (version != RV_TABLE_VERSION_PLAIN && version != RV_TABLE_VERSION) ||
        rv_get_fixed64(p + 48) != t->seed)
        return;
    f->version = version;
    repair_get_handle(p, &f->index);
    repair_get_handle(p + 16, &f->filter);
    repair_get_handle(p + 32, &f->props);
    f->data_end = f->filter.size ? f->filter.offset : f->props.offset;
    if (f->data_end > t->size - RV_TABLE_FOOTER_SIZE)
        return;
    f->ok = 1;
    const char *props, *filter;
    uint64_t seq;
    if (f->filter.size && !repair_meta_block_bytes(t, &f->filter, &filter))
        repair_meta_damaged(t, "filter");
    if (!repair_meta_block(t, &f->props, &props))
        repair_meta_damaged(t, "properties");
    else
        f->props_data = props;
    if (f->props_data && repair_prop(props, (size_t)f->props.size, "ravel.entries",
                         &t->props_entries) &&
             repair_prop(props, (size_t)f->props.size, "ravel.largest_seq",
                         &seq)) {
        t->props_known = 1;
        if (seq > t->max_seq)
            t->max_seq = seq;
    }
}

/* The range tombstones of a version-2 file (F verified) into T->tombs:
** from the block its properties name.  When they cannot be read, the
** loss is reported (they may have hidden older versions anywhere) and
** every version kept below the file's newest sequence counts as
** suspect. */
static int repair_read_range_dels(struct rv_repair_table *t,
                                  const struct repair_footer *f,
                                  struct rv_repair_report *r,
                                  struct rv_repair_ranges *lost)
{
    if (!f->ok || f->version != RV_TABLE_VERSION || t->tombs)
        return RAVEL_OK;
    const char *why = "its properties block, which names it, is damaged";
    if (f->props_data) {
        struct rv_block_cursor c;
        rv_block_cursor_init_checked(&c, f->props_data,
                                     (size_t)f->props.size, repair_bytewise,
                                     0);
        static const char name[] = "ravel.range_del_block";
        rv_block_cursor_seek(&c, name, sizeof name - 1);
        struct rv_table_handle h;
        const char *data;
        int named = rv_block_cursor_valid(&c) &&
                    c.key_len == sizeof name - 1 &&
                    memcmp(c.key, name, c.key_len) == 0 &&
                    c.val_len == RV_TABLE_HANDLE_SIZE;
        if (named)
            repair_get_handle(c.val, &h);
        rv_block_cursor_destroy(&c);
        why = "its properties do not name it";
        if (named && !repair_meta_block(t, &h, &data))
            why = "it does not verify";
        else if (named && rv_range_del_block_read(data, (size_t)h.size,
                                                  &t->tombs) == RAVEL_NOMEM)
            return RAVEL_NOMEM;
        else if (named && !t->tombs)
            why = "its entries are malformed";
    }
    if (t->tombs) {
        rv_repair_say(r, RAVEL_REPAIR_KEPT, "%06llu.sst: %d range "
                      "tombstone fragments read from its range-deletion "
                      "block", (unsigned long long)t->number, t->tombs->n);
        return RAVEL_OK;
    }
    rv_repair_say(r, RAVEL_REPAIR_LOST, "%06llu.sst: its range-deletion "
                  "block is lost (%s): the range deletions it held are "
                  "gone, and older versions they hid may show again",
                  (unsigned long long)t->number, why);
    return rv_repair_ranges_add(lost, t->number, NULL, 0, NULL, 0,
                                t->props_known ? t->max_seq
                                               : RV_MAX_SEQUENCE);
}

/* The user key of internal key K (KLEN >= 8) into the report's text. */
static const char *repair_ukey(char *buf, const char *k, size_t klen)
{
    return rv_repair_key(buf, RV_REPAIR_KEY_TEXT, k, klen - RV_TAG_SIZE);
}

/* Reports the data block at H (index entry IKEY, after PREV_IKEY or the
** file's start) as lost, WHY, and adds its range to LOST. */
static int repair_lost_block(struct rv_repair_table *t,
                             struct rv_repair_report *r,
                             struct rv_repair_ranges *lost,
                             const struct rv_table_handle *h,
                             const char *prev, size_t prev_len,
                             const char *ikey, size_t klen, const char *why)
{
    char a[RV_REPAIR_KEY_TEXT] = "(the first key)", b[RV_REPAIR_KEY_TEXT];
    if (prev)
        repair_ukey(a, prev, prev_len);
    repair_ukey(b, ikey, klen);
    t->lost_blocks++;
    rv_repair_say(r, RAVEL_REPAIR_LOST, "%06llu.sst: data block at byte "
                  "offset %llu (%llu bytes) lost (%s): keys from %s to %s",
                  (unsigned long long)t->number,
                  (unsigned long long)h->offset,
                  (unsigned long long)h->size, why, a, b);
    return rv_repair_ranges_add(lost, t->number,
                                prev, prev ? prev_len - RV_TAG_SIZE : 0,
                                ikey, klen - RV_TAG_SIZE,
                                t->props_known ? t->max_seq
                                               : RV_MAX_SEQUENCE);
}

/* Walks the index at F->index.  0: done (blocks kept or reported lost);
** 1: the index could not be used (nothing was kept: walk instead). */
static int repair_by_index(struct rv_repair_table *t,
                           const struct repair_footer *f,
                           struct rv_repair_report *r,
                           struct rv_repair_ranges *lost, int *rc)
{
    const char *index;
    *rc = RAVEL_OK;
    if (!repair_meta_block(t, &f->index, &index))
        return 1;
    struct rv_block_cursor c;
    rv_block_cursor_init_checked(&c, index, (size_t)f->index.size,
                                 rv_ikey_compare, RV_TAG_SIZE);
    for (rv_block_cursor_seek_to_first(&c); rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c))
        if (c.val_len != RV_TABLE_HANDLE_SIZE)
            break;
    int unusable = rv_block_cursor_valid(&c) || c.status;
    struct rv_repair_key_buf last = {0};
    const char *prev = NULL;
    size_t prev_len = 0;
    char why[256];
    for (rv_block_cursor_seek_to_first(&c);
         !unusable && !*rc && rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c)) {
        struct rv_table_handle h;
        repair_get_handle(c.val, &h);
        int kept;
        *rc = rv_repair_try_block(t, h.offset, h.size, &last, NULL, &kept, why,
                               sizeof why);
        if (!*rc && !kept)
            *rc = repair_lost_block(t, r, lost, &h, prev, prev_len, c.key,
                                    c.key_len, why);
        prev = c.key; /* whole keys: the index's restart interval is 1 */
        prev_len = c.key_len;
    }
    rv_block_cursor_destroy(&c);
    free(last.key);
    return unusable;
}

/* ---------------------------------------------------------------- whole */

/* A table file renamed (a copy under another name) has checksums seeded
** with the number it was written under, and an external table (an
** ingest's, placed as it is) with 0: when its footer verifies with the
** number it records, and not with the name's, that one is used. */
static void repair_renamed(struct rv_repair_table *t,
                           struct rv_repair_report *r)
{
    if (t->size < RV_TABLE_FOOTER_SIZE)
        return;
    const char *p = t->map + t->size - RV_TABLE_FOOTER_SIZE;
    uint64_t was = rv_get_fixed64(p + 48);
    if (rv_get_fixed64(p + 72) != RV_TABLE_MAGIC || was == t->number ||
        rv_get_fixed64(p + 64) != XXH3_64bits_withSeed(p, 64, was))
        return;
    t->seed = was;
    if (was == 0) /* docs/formats.md: an ingest places such files as is */
        rv_repair_say(r, RAVEL_REPAIR_NOTE, "%06llu.sst: an external table "
                      "(its footer says file number 0, as in a file an "
                      "ingest placed as it is): read as that",
                      (unsigned long long)t->number);
    else
        rv_repair_say(r, RAVEL_REPAIR_NOTE, "%06llu.sst: its footer says it "
                      "was written as %06llu.sst (a renamed copy): read as "
                      "that", (unsigned long long)t->number,
                      (unsigned long long)was);
}

static int repair_map_file(struct rv_repair_table *t)
{
    int fd = rv_open(t->path, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", t->path);
    struct stat st;
    int rc = RAVEL_OK;
    if (fstat(fd, &st) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "stat %s", t->path);
    else if ((t->size = (uint64_t)st.st_size) > 0) {
        void *m = mmap(NULL, (size_t)t->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            rc = rv_error_errno(RAVEL_IOERR, errno, "mmap %s", t->path);
        else
            t->map = m;
    }
    close(fd);
    return rc;
}

int rv_repair_table_read(uint64_t number, const char *path,
                         struct rv_repair_report *r,
                         struct rv_repair_ranges *lost,
                         struct rv_repair_table *t)
{
    memset(t, 0, sizeof *t);
    t->number = t->seed = number;
    if (!(t->path = strdup(path)))
        return rv_error(RAVEL_NOMEM, "out of memory reading %s", path);
    int rc = repair_map_file(t);
    if (!rc && !t->map) /* a flush that died before writing: no data */
        rv_repair_say(r, RAVEL_REPAIR_NOTE, "%06llu.sst: empty",
                      (unsigned long long)number);
    if (rc || !t->map)
        return rc;
    repair_renamed(t, r);
    struct repair_footer f;
    repair_read_footer(t, &f);
    if ((rc = repair_read_range_dels(t, &f, r, lost)) != RAVEL_OK)
        return rc;
    if (t->meta_damaged)
        rv_repair_say(r, RAVEL_REPAIR_NOTE, "%06llu.sst: its %s block is "
                      "damaged (it holds no entries: none lost by it)",
                      (unsigned long long)number, t->meta_what);
    if (f.ok && !repair_by_index(t, &f, r, lost, &rc))
        return rc;
    if (rc)
        return rc;
    t->walked = 1;
    rv_repair_say(r, RAVEL_REPAIR_NOTE, "%06llu.sst: its %s is damaged: "
                  "finding its data blocks by walking them from its start",
                  (unsigned long long)number, f.ok ? "index" : "footer");
    return rv_repair_walk(t, f.ok ? f.data_end : t->size, f.ok, r, lost);
}

void rv_repair_table_free(struct rv_repair_table *t)
{
    rv_range_frags_free(t->tombs);
    if (t->map)
        munmap((void *)t->map, (size_t)t->size);
    free(t->blocks);
    free(t->path);
    memset(t, 0, sizeof *t);
}

