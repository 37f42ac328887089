/*
** version_edit.c -- encoding and decoding version edits (the layout is in
** version_edit.h).  Decoding is strict: an edit read back from a manifest
** is untrusted until every field has been bounds-checked.
*/
#include "db/version_edit.h"
#include "base/dbformat.h"
#include "util/coding.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

enum edit_tag {
    EDIT_LOG_NUMBER = 1,
    EDIT_NEXT_FILE_NUMBER = 2,
    EDIT_LAST_SEQUENCE = 3,
    EDIT_NEW_FILE = 4,
    EDIT_DELETED_FILE = 5,
    EDIT_CLOSED = 6,
};

void rv_version_edit_init(struct rv_version_edit *e)
{
    memset(e, 0, sizeof *e);
}

void rv_version_edit_clear(struct rv_version_edit *e)
{
    for (int i = 0; i < e->n_added; i++) {
        free(e->added[i].smallest);
        free(e->added[i].largest);
    }
    free(e->added);
    free(e->deleted);
    rv_version_edit_init(e);
}

static char *edit_copy(const char *p, size_t n)
{
    char *c = malloc(n ? n : 1);
    if (c && n)
        memcpy(c, p, n);
    return c;
}

/* The index in FILES (an edit used as a list) of the file NUMBER at LEVEL,
** or -1. */
static int edit_find_file(const struct rv_version_edit *files, int level,
                          uint64_t number)
{
    for (int i = 0; i < files->n_added; i++)
        if (files->added[i].level == level &&
            files->added[i].number == number)
            return i;
    return -1;
}

int rv_version_edit_apply_files(struct rv_version_edit *files,
                                const struct rv_version_edit *e)
{
    for (int i = 0; i < e->n_deleted; i++) {
        int at = edit_find_file(files, e->deleted[i].level,
                                e->deleted[i].number);
        if (at < 0)
            return rv_error(RAVEL_CORRUPT, "manifest: an edit deletes table "
                            "file %llu at level %d, which is not there",
                            (unsigned long long)e->deleted[i].number,
                            e->deleted[i].level);
        free(files->added[at].smallest);
        free(files->added[at].largest);
        files->added[at] = files->added[--files->n_added];
    }
    for (int i = 0; i < e->n_added; i++) {
        if (edit_find_file(files, e->added[i].level, e->added[i].number) >= 0)
            return rv_error(RAVEL_CORRUPT, "manifest: an edit adds table "
                            "file %llu at level %d twice",
                            (unsigned long long)e->added[i].number,
                            e->added[i].level);
        int rc = rv_version_edit_add_file(files, &e->added[i]);
        if (rc)
            return rc;
    }
    return RAVEL_OK;
}

int rv_version_edit_add_file(struct rv_version_edit *e,
                             const struct rv_file_meta *f)
{
    if (f->level < 0 || f->level >= RV_NUM_LEVELS)
        return rv_error(RAVEL_INVALID, "version edit: level %d out of range "
                        "0..%d", f->level, RV_NUM_LEVELS - 1);
    if (e->n_added == e->cap_added) {
        int cap = e->cap_added ? e->cap_added * 2 : 4;
        struct rv_file_meta *a = realloc(e->added, (size_t)cap * sizeof *a);
        if (!a)
            return rv_error(RAVEL_NOMEM, "out of memory for a version edit");
        e->added = a;
        e->cap_added = cap;
    }
    struct rv_file_meta m = *f;
    m.smallest = edit_copy(f->smallest, f->smallest_len);
    m.largest = edit_copy(f->largest, f->largest_len);
    if (!m.smallest || !m.largest) {
        free(m.smallest);
        free(m.largest);
        return rv_error(RAVEL_NOMEM, "out of memory for a version edit");
    }
    e->added[e->n_added++] = m;
    return RAVEL_OK;
}

int rv_version_edit_delete_file(struct rv_version_edit *e, int level,
                                uint64_t number)
{
    if (level < 0 || level >= RV_NUM_LEVELS)
        return rv_error(RAVEL_INVALID, "version edit: level %d out of range "
                        "0..%d", level, RV_NUM_LEVELS - 1);
    if (e->n_deleted == e->cap_deleted) {
        int cap = e->cap_deleted ? e->cap_deleted * 2 : 4;
        struct rv_deleted_file *d = realloc(e->deleted,
                                            (size_t)cap * sizeof *d);
        if (!d)
            return rv_error(RAVEL_NOMEM, "out of memory for a version edit");
        e->deleted = d;
        e->cap_deleted = cap;
    }
    e->deleted[e->n_deleted].level = level;
    e->deleted[e->n_deleted].number = number;
    e->n_deleted++;
    return RAVEL_OK;
}

/* ------------------------------------------------------------ encoding */

static size_t edit_max_size(const struct rv_version_edit *e)
{
    size_t n = 4 * 15; /* the scalar fields */
    for (int i = 0; i < e->n_added; i++)
        n += 5 + 5 + 10 * 6 + 10 + e->added[i].smallest_len +
             e->added[i].largest_len;
    return n + (size_t)e->n_deleted * 25;
}

static char *edit_put_bytes(char *p, const char *data, size_t n)
{
    p += rv_put_varint32(p, (uint32_t)n);
    if (n)
        memcpy(p, data, n);
    return p + n;
}

int rv_version_edit_encode(const struct rv_version_edit *e, char **out,
                           size_t *len)
{
    char *buf = malloc(edit_max_size(e));
    if (!buf)
        return rv_error(RAVEL_NOMEM, "out of memory encoding a version edit");
    char *p = buf;
    if (e->has_log_number) {
        p += rv_put_varint32(p, EDIT_LOG_NUMBER);
        p += rv_put_varint64(p, e->log_number);
    }
    if (e->has_next_file_number) {
        p += rv_put_varint32(p, EDIT_NEXT_FILE_NUMBER);
        p += rv_put_varint64(p, e->next_file_number);
    }
    if (e->has_last_sequence) {
        p += rv_put_varint32(p, EDIT_LAST_SEQUENCE);
        p += rv_put_varint64(p, e->last_sequence);
    }
    if (e->closed_segment) {
        p += rv_put_varint32(p, EDIT_CLOSED);
        p += rv_put_varint64(p, e->closed_segment);
    }
    for (int i = 0; i < e->n_deleted; i++) {
        p += rv_put_varint32(p, EDIT_DELETED_FILE);
        p += rv_put_varint32(p, (uint32_t)e->deleted[i].level);
        p += rv_put_varint64(p, e->deleted[i].number);
    }
    for (int i = 0; i < e->n_added; i++) {
        const struct rv_file_meta *f = &e->added[i];
        p += rv_put_varint32(p, EDIT_NEW_FILE);
        p += rv_put_varint32(p, (uint32_t)f->level);
        p += rv_put_varint64(p, f->number);
        p += rv_put_varint64(p, f->size);
        p = edit_put_bytes(p, f->smallest, f->smallest_len);
        p = edit_put_bytes(p, f->largest, f->largest_len);
        p += rv_put_varint64(p, f->smallest_seq);
        p += rv_put_varint64(p, f->largest_seq);
        p += rv_put_varint64(p, f->entries);
    }
    *out = buf;
    *len = (size_t)(p - buf);
    return RAVEL_OK;
}

/* ------------------------------------------------------------ decoding */

struct edit_reader {
    const char *start, *p, *limit;
    const char *field;      /* start of the field being read */
    int rc;
};

static int edit_bad(struct edit_reader *r, const char *what)
{
    if (r->rc == RAVEL_OK)
        r->rc = rv_error(RAVEL_CORRUPT, "version edit: field at byte offset "
                         "%zu: %s", (size_t)(r->field - r->start), what);
    return r->rc;
}

static uint64_t edit_u64(struct edit_reader *r, const char *what)
{
    uint64_t v = 0;
    const char *q = r->rc ? NULL : rv_get_varint64(r->p, r->limit, &v);
    if (!q) {
        edit_bad(r, what);
        return 0;
    }
    r->p = q;
    return v;
}

static int edit_level(struct edit_reader *r)
{
    uint64_t level = edit_u64(r, "truncated level");
    if (!r->rc && level >= RV_NUM_LEVELS)
        edit_bad(r, "level out of range");
    return (int)level;
}

/* An internal key as bytes: pointer into the input, length in *N. */
static const char *edit_key(struct edit_reader *r, size_t *n)
{
    uint64_t len = edit_u64(r, "truncated key length");
    if (r->rc)
        return NULL;
    if (len < RV_TAG_SIZE || len > (uint64_t)(r->limit - r->p)) {
        edit_bad(r, "key length out of range");
        return NULL;
    }
    const char *k = r->p;
    r->p += len;
    *n = (size_t)len;
    return k;
}

static void edit_new_file(struct edit_reader *r, struct rv_version_edit *e)
{
    struct rv_file_meta f;
    memset(&f, 0, sizeof f);
    f.level = edit_level(r);
    f.number = edit_u64(r, "truncated file number");
    f.size = edit_u64(r, "truncated file size");
    const char *s = edit_key(r, &f.smallest_len);
    const char *l = edit_key(r, &f.largest_len);
    f.smallest_seq = edit_u64(r, "truncated smallest sequence");
    f.largest_seq = edit_u64(r, "truncated largest sequence");
    f.entries = edit_u64(r, "truncated entry count");
    if (r->rc)
        return;
    if (rv_ikey_compare(s, f.smallest_len, l, f.largest_len) > 0) {
        edit_bad(r, "a file's smallest key sorts after its largest");
        return;
    }
    f.smallest = (char *)s;
    f.largest = (char *)l;
    r->rc = rv_version_edit_add_file(e, &f);
}

int rv_version_edit_decode(struct rv_version_edit *e, const char *data,
                           size_t len)
{
    struct edit_reader r = {data, data, data + len, data, RAVEL_OK};
    while (r.p < r.limit && r.rc == RAVEL_OK) {
        r.field = r.p;
        uint64_t tag = edit_u64(&r, "truncated tag");
        if (r.rc)
            break;
        switch (tag) {
        case EDIT_LOG_NUMBER:
            e->log_number = edit_u64(&r, "truncated log number");
            e->has_log_number = 1;
            break;
        case EDIT_NEXT_FILE_NUMBER:
            e->next_file_number = edit_u64(&r, "truncated next file number");
            e->has_next_file_number = 1;
            break;
        case EDIT_LAST_SEQUENCE:
            e->last_sequence = edit_u64(&r, "truncated last sequence");
            e->has_last_sequence = 1;
            if (!r.rc && e->last_sequence > RV_MAX_SEQUENCE)
                edit_bad(&r, "last sequence out of range");
            break;
        case EDIT_NEW_FILE:
            edit_new_file(&r, e);
            break;
        case EDIT_CLOSED:
            e->closed_segment = edit_u64(&r, "truncated closed segment");
            if (!r.rc && e->closed_segment == 0)
                edit_bad(&r, "closed segment 0");
            break;
        case EDIT_DELETED_FILE: {
            int level = edit_level(&r);
            uint64_t number = edit_u64(&r, "truncated file number");
            if (!r.rc)
                r.rc = rv_version_edit_delete_file(e, level, number);
            break;
        }
        default:
            edit_bad(&r, "unknown tag");
            break;
        }
    }
    if (r.rc)
        rv_version_edit_clear(e);
    return r.rc;
}
