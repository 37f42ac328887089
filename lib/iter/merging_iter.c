/*
** merging_iter.c -- one iterator over several, in internal-key order
** (LevelDB's MergingIterator).
**
** Owns: choosing the current child and switching direction.  Does not own:
** the children's contents (memtables, later sorted files) or version
** visibility (db_iter.c).
**
** Going forward, every child is positioned at its first entry >= the
** current key and the current child is the smallest; going backward, every
** child is at its last entry <= the current key and the current child is
** the largest.  Switching direction re-positions every other child around
** the current key.  Children are few, so the smallest/largest is found by a
** linear scan rather than a heap.
*/
#include "iter/iterator.h"
#include "db/dbformat.h"

#include <stdlib.h>

enum merging_direction { MERGING_FORWARD, MERGING_REVERSE };

struct merging_iter {
    struct rv_iter base;
    int n;
    struct rv_iter *current;   /* NULL: not valid */
    enum merging_direction direction;
    struct rv_iter *children[]; /* owned, N of them; in the same allocation,
                                ** one malloc per iterator fewer */
};

static struct merging_iter *merging_cast(struct rv_iter *it)
{
    return (struct merging_iter *)it;
}

static const struct merging_iter *merging_ccast(const struct rv_iter *it)
{
    return (const struct merging_iter *)it;
}

/* Compares the current keys of two valid children. */
static int merging_compare(const struct rv_iter *a, const struct rv_iter *b)
{
    size_t alen, blen;
    const char *ak = a->ops->key(a, &alen);
    const char *bk = b->ops->key(b, &blen);
    return rv_ikey_compare(ak, alen, bk, blen);
}

static void merging_find_smallest(struct merging_iter *mi)
{
    struct rv_iter *smallest = NULL;
    for (int i = 0; i < mi->n; i++) {
        struct rv_iter *c = mi->children[i];
        if (c->ops->valid(c) && (!smallest || merging_compare(c, smallest) < 0))
            smallest = c;
    }
    mi->current = smallest;
}

static void merging_find_largest(struct merging_iter *mi)
{
    struct rv_iter *largest = NULL;
    for (int i = mi->n - 1; i >= 0; i--) {
        struct rv_iter *c = mi->children[i];
        if (c->ops->valid(c) && (!largest || merging_compare(c, largest) > 0))
            largest = c;
    }
    mi->current = largest;
}

static int merging_valid(const struct rv_iter *it)
{
    return merging_ccast(it)->current != NULL;
}

static void merging_seek_to_first(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    for (int i = 0; i < mi->n; i++)
        mi->children[i]->ops->seek_to_first(mi->children[i]);
    merging_find_smallest(mi);
    mi->direction = MERGING_FORWARD;
}

static void merging_seek_to_last(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    for (int i = 0; i < mi->n; i++)
        mi->children[i]->ops->seek_to_last(mi->children[i]);
    merging_find_largest(mi);
    mi->direction = MERGING_REVERSE;
}

static void merging_seek(struct rv_iter *it, const char *target, size_t tlen)
{
    struct merging_iter *mi = merging_cast(it);
    for (int i = 0; i < mi->n; i++)
        mi->children[i]->ops->seek(mi->children[i], target, tlen);
    merging_find_smallest(mi);
    mi->direction = MERGING_FORWARD;
}

static void merging_seek_for_prev(struct rv_iter *it, const char *target,
                                  size_t tlen)
{
    struct merging_iter *mi = merging_cast(it);
    for (int i = 0; i < mi->n; i++)
        mi->children[i]->ops->seek_for_prev(mi->children[i], target, tlen);
    merging_find_largest(mi);
    mi->direction = MERGING_REVERSE;
}

/* After a backward move, puts every other child at its first entry after
** the current key, so that the smallest child is the next entry. */
static void merging_turn_forward(struct merging_iter *mi)
{
    size_t klen;
    const char *key = mi->current->ops->key(mi->current, &klen);
    for (int i = 0; i < mi->n; i++) {
        struct rv_iter *c = mi->children[i];
        if (c == mi->current)
            continue;
        c->ops->seek(c, key, klen);
        if (c->ops->valid(c) && merging_compare(c, mi->current) == 0)
            c->ops->next(c);
    }
    mi->direction = MERGING_FORWARD;
}

/* After a forward move, puts every other child at its last entry before
** the current key, so that the largest child is the previous entry. */
static void merging_turn_backward(struct merging_iter *mi)
{
    size_t klen;
    const char *key = mi->current->ops->key(mi->current, &klen);
    for (int i = 0; i < mi->n; i++) {
        struct rv_iter *c = mi->children[i];
        if (c == mi->current)
            continue;
        c->ops->seek(c, key, klen);
        if (c->ops->valid(c))
            c->ops->prev(c); /* the first entry >= key, so one back is < */
        else
            c->ops->seek_to_last(c); /* every entry is < key */
    }
    mi->direction = MERGING_REVERSE;
}

static void merging_next(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->direction != MERGING_FORWARD)
        merging_turn_forward(mi);
    mi->current->ops->next(mi->current);
    merging_find_smallest(mi);
}

static void merging_prev(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->direction != MERGING_REVERSE)
        merging_turn_backward(mi);
    mi->current->ops->prev(mi->current);
    merging_find_largest(mi);
}

static const char *merging_key(const struct rv_iter *it, size_t *len)
{
    const struct rv_iter *c = merging_ccast(it)->current;
    return c->ops->key(c, len);
}

static const char *merging_value(const struct rv_iter *it, size_t *len)
{
    const struct rv_iter *c = merging_ccast(it)->current;
    return c->ops->value(c, len);
}

/* The first error among the children. */
static int merging_status(const struct rv_iter *it)
{
    const struct merging_iter *mi = merging_ccast(it);
    for (int i = 0; i < mi->n; i++) {
        int rc = mi->children[i]->ops->status(mi->children[i]);
        if (rc)
            return rc;
    }
    return RAVEL_OK;
}

static void merging_destroy(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    for (int i = 0; i < mi->n; i++)
        mi->children[i]->ops->destroy(mi->children[i]);
    free(mi);
}

static const struct rv_iter_ops merging_iter_ops = {
    .valid = merging_valid,
    .seek_to_first = merging_seek_to_first,
    .seek_to_last = merging_seek_to_last,
    .seek = merging_seek,
    .seek_for_prev = merging_seek_for_prev,
    .next = merging_next,
    .prev = merging_prev,
    .key = merging_key,
    .value = merging_value,
    .status = merging_status,
    .destroy = merging_destroy,
};

struct rv_iter *rv_merging_iter_new(struct rv_iter **children, int n)
{
    struct merging_iter *mi =
        malloc(sizeof *mi + sizeof *mi->children * (size_t)(n > 0 ? n : 0));
    if (!mi) {
        for (int i = 0; i < n; i++)
            children[i]->ops->destroy(children[i]);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        mi->children[i] = children[i];
    mi->base.ops = &merging_iter_ops;
    mi->n = n;
    mi->current = NULL;
    mi->direction = MERGING_FORWARD;
    return &mi->base;
}
