/*
** table_iter.c -- the iterator over a table file (rv_table_iter_new in
** table.h), and the full check of a table (rv_table_verify) that walks it.
**
** Two-level, as LevelDB's: a cursor over the index block (kept in memory
** by the table) picks a data block, which is got through the block cache
** (rv_table_load_block) and pinned while the iterator is in it, and a
** cursor over that block yields the entries.  Both cursors live inside the
** iterator: moving from block to block allocates nothing when the blocks
** are cached.
**
** A cursor that stops on damage stops the iterator: its status becomes
** the iterator's, prefixed with the file and the block, and is never lost
** by moving on to the next block.
*/
#include "table/table.h"
#include "base/dbformat.h"
#include "table/block.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

struct table_iter {
    struct rv_iter base;
    rv_table *t;
    int flags;                      /* RV_TABLE_READ_* of every load */
    struct rv_table_handle index_h; /* for messages */
    struct rv_block_cursor index;
    struct rv_block_cursor data;    /* over ref.data, when it is set */
    struct rv_table_block_ref ref;
    struct rv_table_handle block_h; /* where ref.data is in the file */
    int status;
};

/* Drops the current data block. */
static void table_iter_drop(struct table_iter *it)
{
    if (!it->ref.data)
        return;
    rv_block_cursor_destroy(&it->data);
    rv_table_release_block(it->t, &it->ref);
}

/* Loads the data block the index cursor is at (or drops the current one
** when the index is not valid); the data cursor is left unpositioned. */
static void table_iter_load(struct table_iter *it)
{
    if (!rv_block_cursor_valid(&it->index)) {
        table_iter_drop(it);
        return;
    }
    struct rv_table_handle h;
    int rc = rv_table_index_handle(it->t, it->index.val, it->index.val_len,
                                   &h);
    if (rc) {
        it->status = rc;
        return;
    }
    if (it->ref.data && it->block_h.offset == h.offset)
        return;
    table_iter_drop(it);
    rc = rv_table_load_block(it->t, &h, it->flags, &it->ref);
    if (rc) {
        it->status = rc;
        return;
    }
    it->block_h = h;
    rv_block_cursor_init_checked(&it->data, it->ref.data,
                                 it->ref.len, rv_ikey_compare,
                                 RV_TAG_SIZE);
}

/* Takes a cursor's failure as the iterator's; 1 if there was one. */
static int table_iter_failed(struct table_iter *it)
{
    if (it->status)
        return 1;
    if (it->ref.data && it->data.status)
        it->status = rv_table_block_error(it->t, "data", &it->block_h,
                                          it->data.status);
    else if (it->index.status)
        it->status = rv_table_block_error(it->t, "index", &it->index_h,
                                          it->index.status);
    return it->status != RAVEL_OK;
}

static int table_iter_in_block(const struct table_iter *it)
{
    return it->ref.data && rv_block_cursor_valid(&it->data);
}

static int table_iter_valid(const struct rv_iter *base)
{
    const struct table_iter *it = (const struct table_iter *)base;
    return !it->status && table_iter_in_block(it);
}

/* Moves over empty or exhausted blocks, forward. */
static void table_iter_skip_forward(struct table_iter *it)
{
    while (!table_iter_failed(it) && !table_iter_in_block(it)) {
        if (!rv_block_cursor_valid(&it->index))
            return;
        rv_block_cursor_next(&it->index);
        table_iter_load(it);
        if (it->ref.data && !it->status)
            rv_block_cursor_seek_to_first(&it->data);
    }
}

static void table_iter_skip_backward(struct table_iter *it)
{
    while (!table_iter_failed(it) && !table_iter_in_block(it)) {
        if (!rv_block_cursor_valid(&it->index))
            return;
        rv_block_cursor_prev(&it->index);
        table_iter_load(it);
        if (it->ref.data && !it->status)
            rv_block_cursor_seek_to_last(&it->data);
    }
}

static void table_iter_seek_to_first(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    rv_block_cursor_seek_to_first(&it->index);
    table_iter_load(it);
    if (it->ref.data && !it->status)
        rv_block_cursor_seek_to_first(&it->data);
    table_iter_skip_forward(it);
}

static void table_iter_seek_to_last(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    rv_block_cursor_seek_to_last(&it->index);
    table_iter_load(it);
    if (it->ref.data && !it->status)
        rv_block_cursor_seek_to_last(&it->data);
    table_iter_skip_backward(it);
}

static void table_iter_seek(struct rv_iter *base, const char *target,
                            size_t tlen)
{
    struct table_iter *it = (struct table_iter *)base;
    rv_table_index_seek(it->t, &it->index, target, tlen);
    table_iter_load(it);
    if (it->ref.data && !it->status)
        rv_block_cursor_seek(&it->data, target, tlen);
    table_iter_skip_forward(it);
}

static void table_iter_seek_for_prev(struct rv_iter *base, const char *target,
                                     size_t tlen)
{
    struct table_iter *it = (struct table_iter *)base;
    /* The block that may hold the last key <= TARGET is the first whose
    ** last key >= TARGET; if none, the last block. */
    rv_table_index_seek(it->t, &it->index, target, tlen);
    if (!rv_block_cursor_valid(&it->index))
        rv_block_cursor_seek_to_last(&it->index);
    table_iter_load(it);
    if (it->ref.data && !it->status)
        rv_block_cursor_seek_for_prev(&it->data, target, tlen);
    table_iter_skip_backward(it);
}

static void table_iter_next(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    if (!table_iter_valid(base))
        return;
    rv_block_cursor_next(&it->data);
    table_iter_skip_forward(it);
}

static void table_iter_prev(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    if (!table_iter_valid(base))
        return;
    rv_block_cursor_prev(&it->data);
    table_iter_skip_backward(it);
}

static const char *table_iter_key(const struct rv_iter *base, size_t *len)
{
    const struct table_iter *it = (const struct table_iter *)base;
    *len = it->data.key_len;
    return it->data.key;
}

static const char *table_iter_value(const struct rv_iter *base, size_t *len)
{
    const struct table_iter *it = (const struct table_iter *)base;
    *len = it->data.val_len;
    return it->data.val;
}

static int table_iter_status(const struct rv_iter *base)
{
    return ((const struct table_iter *)base)->status;
}

static void table_iter_destroy(struct rv_iter *base)
{
    struct table_iter *it = (struct table_iter *)base;
    table_iter_drop(it);
    rv_block_cursor_destroy(&it->index);
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

/* An iterator reading its blocks as FLAGS says. */
static struct table_iter *table_iter_new(rv_table *t, int flags)
{
    struct table_iter *it = malloc(sizeof *it);
    if (!it)
        return NULL;
    memset(it, 0, offsetof(struct table_iter, index));
    it->base.ops = &table_iter_ops;
    it->t = t;
    it->flags = flags;
    size_t len;
    const char *index = rv_table_index(t, &len, &it->index_h);
    rv_block_cursor_init_checked(&it->index, index, len, rv_ikey_compare,
                                 RV_TAG_SIZE);
    it->ref = (struct rv_table_block_ref){0};
    it->status = RAVEL_OK;
    return it;
}

struct rv_iter *rv_table_iter_new(rv_table *t, int flags)
{
    struct table_iter *it = table_iter_new(t, flags);
    return it ? &it->base : NULL;
}

int rv_table_verify(rv_table *t)
{
    struct table_iter *it = table_iter_new(t, RV_TABLE_READ_VERIFY |
                                              RV_TABLE_READ_NO_CACHE);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory verifying %s",
                        rv_table_path(t));
    uint64_t n = 0;
    struct rv_iter *base = &it->base;
    for (table_iter_seek_to_first(base); table_iter_valid(base);
         table_iter_next(base))
        n++;
    int rc = it->status;
    table_iter_destroy(base);
    uint64_t entries = rv_table_props(t)->entries;
    if (rc == RAVEL_OK && n != entries)
        rc = rv_error(RAVEL_CORRUPT, "%s: holds %llu entries but its "
                      "properties say %llu", rv_table_path(t),
                      (unsigned long long)n, (unsigned long long)entries);
    return rc;
}
