/*
** repair_table_iter.c -- an iterator over the entries of the blocks
** repair kept of one table file (repair.h, rv_repair_table_iter_new), for
** the merge: forward only, one decoded block at a time.
*/
#include "db/repair.h"
#include "base/dbformat.h"
#include "table/block.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct repair_table_iter {
    struct rv_iter base;
    const struct rv_repair_table *t;
    int block;              /* the block C is over; n_blocks: past the end */
    struct rv_repair_decoded d;
    struct rv_block_cursor c;
    int has_cursor;
    int status;
};

static void repair_iter_drop_block(struct repair_table_iter *it)
{
    if (it->has_cursor)
        rv_block_cursor_destroy(&it->c);
    it->has_cursor = 0;
    free(it->d.owned);
    memset(&it->d, 0, sizeof it->d);
}

/* Positions at the first entry of block I or a later one. */
static void repair_iter_load(struct repair_table_iter *it, int i)
{
    repair_iter_drop_block(it);
    for (it->block = i; it->block < it->t->n_blocks; it->block++) {
        const struct rv_repair_block *b = &it->t->blocks[it->block];
        char why[256];
        if (!rv_repair_decode(it->t, b->offset, b->size, &it->d, why,
                           sizeof why)) {
            it->status = rv_error(RAVEL_CORRUPT, "%s: block at byte offset "
                                  "%llu verified, then did not: %s",
                                  it->t->path,
                                  (unsigned long long)b->offset, why);
            it->block = it->t->n_blocks;
            return;
        }
        rv_block_cursor_init_checked(&it->c, it->d.data, it->d.len,
                                     rv_ikey_compare, RV_TAG_SIZE);
        it->has_cursor = 1;
        rv_block_cursor_seek_to_first(&it->c);
        if (rv_block_cursor_valid(&it->c))
            return;
        repair_iter_drop_block(it);
    }
}

static int repair_iter_valid(const struct rv_iter *i)
{
    const struct repair_table_iter *it = (const void *)i;
    return it->has_cursor && rv_block_cursor_valid(&it->c);
}

static void repair_iter_seek_to_first(struct rv_iter *i)
{
    repair_iter_load((struct repair_table_iter *)i, 0);
}

static void repair_iter_next(struct rv_iter *i)
{
    struct repair_table_iter *it = (void *)i;
    rv_block_cursor_next(&it->c);
    if (!rv_block_cursor_valid(&it->c))
        repair_iter_load(it, it->block + 1);
}

/* Not needed by the merge (forward only): they leave the iterator
** invalid with an error. */
static void repair_iter_unsupported(struct rv_iter *i)
{
    struct repair_table_iter *it = (void *)i;
    repair_iter_drop_block(it);
    it->status = rv_error(RAVEL_INVALID, "repair's table iterator only "
                          "moves forward from the first entry");
}

static void repair_iter_seek_to_last(struct rv_iter *i)
{
    repair_iter_unsupported(i);
}

static void repair_iter_seek(struct rv_iter *i, const char *k, size_t n)
{
    RV_UNUSED(k);
    RV_UNUSED(n);
    repair_iter_unsupported(i);
}

static const char *repair_iter_key(const struct rv_iter *i, size_t *len)
{
    const struct repair_table_iter *it = (const void *)i;
    *len = it->c.key_len;
    return it->c.key;
}

static const char *repair_iter_value(const struct rv_iter *i, size_t *len)
{
    const struct repair_table_iter *it = (const void *)i;
    *len = it->c.val_len;
    return it->c.val;
}

static int repair_iter_status(const struct rv_iter *i)
{
    const struct repair_table_iter *it = (const void *)i;
    return it->status ? it->status : it->has_cursor ? it->c.status : 0;
}

static void repair_iter_destroy(struct rv_iter *i)
{
    repair_iter_drop_block((struct repair_table_iter *)i);
    free(i);
}

static const struct rv_iter_ops repair_iter_ops = {
    .valid = repair_iter_valid,
    .seek_to_first = repair_iter_seek_to_first,
    .seek_to_last = repair_iter_seek_to_last,
    .seek = repair_iter_seek,
    .seek_for_prev = repair_iter_seek,
    .next = repair_iter_next,
    .prev = repair_iter_seek_to_last,
    .key = repair_iter_key,
    .value = repair_iter_value,
    .status = repair_iter_status,
    .destroy = repair_iter_destroy,
};

struct rv_iter *rv_repair_table_iter_new(const struct rv_repair_table *t)
{
    struct repair_table_iter *it = calloc(1, sizeof *it);
    if (!it)
        return NULL;
    it->base.ops = &repair_iter_ops;
    it->t = t;
    it->block = t->n_blocks;
    return &it->base;
}
