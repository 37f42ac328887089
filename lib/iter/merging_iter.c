/*
** merging_iter.c -- one iterator over several, in internal-key order
** (LevelDB's MergingIterator, with RocksDB's heap).
**
** Owns: choosing the current child and switching direction.  Does not own:
** the children's contents (memtables, table files) or version visibility
** (db_iter.c).
**
** Going forward, every child is positioned at its first entry >= the
** current key and the current child is the smallest; going backward, every
** child is at its last entry <= the current key and the current child is
** the largest.  Switching direction re-positions every other child around
** the current key.
**
** The valid children sit in a binary heap ordered for the direction (the
** smallest key on top going forward, the largest going backward), so a
** step compares about twice the heap's depth in keys rather than n: with
** a memtable and a dozen level-0 files, a linear scan asked every child
** for its key at every step.  Each child's current key is cached beside
** it, taken once after the child moves.  Equal internal keys (which distinct sources do
** not hold) are ordered by child index, the order the caller gave, so the
** choice is deterministic.
**
** A child that stops at an error (a damaged block, a table that will not
** open) stops the merge: merging on without it would show older versions
** from deeper levels in place of the ones it holds, and keys it deleted.
** The first error is kept, and from then on the merge is invalid whatever
** is asked of it.  A child's error is noticed when the child is not
** valid, which is enough because a child that failed stays invalid (the
** table and level iterators keep their first error).
*/
#include "iter/iterator.h"
#include "base/dbformat.h"

#include <stdlib.h>

enum merging_direction { MERGING_FORWARD, MERGING_REVERSE };

/* A child and its current key (valid while the child stays there). */
struct merging_child {
    struct rv_iter *it;
    const char *key;
    size_t klen;
    int index; /* position in the caller's order: breaks ties */
};

struct merging_iter {
    struct rv_iter base;
    int n;
    enum merging_direction direction;
    int heap_n; /* valid children, in heap[0 .. heap_n) */
    int status; /* the first child error seen: then heap_n stays 0 */
    /* heap[0] is the current child.  Points into children. */
    struct merging_child **heap;
    /* N children then N heap slots, in the same allocation as the
    ** iterator: one malloc per iterator. */
    struct merging_child children[];
};

static struct merging_iter *merging_cast(struct rv_iter *it)
{
    return (struct merging_iter *)it;
}

static const struct merging_iter *merging_ccast(const struct rv_iter *it)
{
    return (const struct merging_iter *)it;
}

/* ------------------------------------------------------------------ heap */

/* 1 if A belongs above B in MI's heap: before it in the direction's order. */
static int merging_before(const struct merging_iter *mi,
                          const struct merging_child *a,
                          const struct merging_child *b)
{
    int c = rv_ikey_compare(a->key, a->klen, b->key, b->klen);
    if (c == 0)
        return a->index < b->index;
    return mi->direction == MERGING_FORWARD ? c < 0 : c > 0;
}

static void merging_sift_down(struct merging_iter *mi, int i)
{
    struct merging_child **h = mi->heap;
    struct merging_child *x = h[i];
    for (;;) {
        int child = 2 * i + 1;
        if (child >= mi->heap_n)
            break;
        if (child + 1 < mi->heap_n && merging_before(mi, h[child + 1], h[child]))
            child++;
        if (!merging_before(mi, h[child], x))
            break;
        h[i] = h[child];
        i = child;
    }
    h[i] = x;
}

/* Takes C's new key after it moved. */
static void merging_child_refresh(struct merging_child *c)
{
    c->key = c->it->ops->key(c->it, &c->klen);
}

/* Records C's error, if it has one, as the merge's: the merge stops.
** Returns 1 if it did. */
static int merging_child_failed(struct merging_iter *mi,
                                const struct merging_child *c)
{
    int rc = c->it->ops->status(c->it);
    if (rc == RAVEL_OK)
        return 0;
    if (mi->status == RAVEL_OK)
        mi->status = rc;
    mi->heap_n = 0;
    return 1;
}

/* Puts every valid child in the heap, ordered for MI's direction; or
** stops the merge if a child has failed. */
static void merging_rebuild(struct merging_iter *mi)
{
    mi->heap_n = 0;
    for (int i = 0; i < mi->n; i++) {
        struct merging_child *c = &mi->children[i];
        if (c->it->ops->valid(c->it)) {
            merging_child_refresh(c);
            mi->heap[mi->heap_n++] = c;
        } else if (merging_child_failed(mi, c)) {
            return;
        }
    }
    for (int i = mi->heap_n / 2 - 1; i >= 0; i--)
        merging_sift_down(mi, i);
}

/* The top child moved: back to its place, out if it is done, or the merge
** stops if it failed. */
static void merging_top_moved(struct merging_iter *mi)
{
    struct merging_child *top = mi->heap[0];
    if (top->it->ops->valid(top->it)) {
        merging_child_refresh(top);
    } else {
        if (merging_child_failed(mi, top))
            return;
        mi->heap[0] = mi->heap[--mi->heap_n];
        if (mi->heap_n == 0)
            return;
    }
    merging_sift_down(mi, 0);
}

static struct merging_child *merging_current(const struct merging_iter *mi)
{
    return mi->heap_n ? mi->heap[0] : NULL;
}

/* ------------------------------------------------------------ positioning */

static int merging_valid(const struct rv_iter *it)
{
    return merging_ccast(it)->heap_n > 0;
}

static void merging_seek_to_first(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->status)
        return;
    for (int i = 0; i < mi->n; i++)
        mi->children[i].it->ops->seek_to_first(mi->children[i].it);
    mi->direction = MERGING_FORWARD;
    merging_rebuild(mi);
}

static void merging_seek_to_last(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->status)
        return;
    for (int i = 0; i < mi->n; i++)
        mi->children[i].it->ops->seek_to_last(mi->children[i].it);
    mi->direction = MERGING_REVERSE;
    merging_rebuild(mi);
}

static void merging_seek(struct rv_iter *it, const char *target, size_t tlen)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->status)
        return;
    for (int i = 0; i < mi->n; i++)
        mi->children[i].it->ops->seek(mi->children[i].it, target, tlen);
    mi->direction = MERGING_FORWARD;
    merging_rebuild(mi);
}

static void merging_seek_for_prev(struct rv_iter *it, const char *target,
                                  size_t tlen)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->status)
        return;
    for (int i = 0; i < mi->n; i++)
        mi->children[i].it->ops->seek_for_prev(mi->children[i].it, target,
                                               tlen);
    mi->direction = MERGING_REVERSE;
    merging_rebuild(mi);
}

/* 1 if child C is valid and positioned at exactly KEY. */
static int merging_child_at(const struct rv_iter *c, const char *key,
                            size_t klen)
{
    size_t len;
    if (!c->ops->valid(c))
        return 0;
    const char *k = c->ops->key(c, &len);
    return rv_ikey_compare(k, len, key, klen) == 0;
}

/* After a backward move, puts every other child at its first entry after
** the current key, so that the smallest child is the next entry. */
static void merging_turn_forward(struct merging_iter *mi)
{
    struct merging_child *cur = merging_current(mi);
    const char *key = cur->key;
    size_t klen = cur->klen;
    for (int i = 0; i < mi->n; i++) {
        struct rv_iter *c = mi->children[i].it;
        if (&mi->children[i] == cur)
            continue;
        c->ops->seek(c, key, klen);
        if (merging_child_at(c, key, klen))
            c->ops->next(c);
    }
    mi->direction = MERGING_FORWARD;
    merging_rebuild(mi);
}

/* After a forward move, puts every other child at its last entry before
** the current key, so that the largest child is the previous entry. */
static void merging_turn_backward(struct merging_iter *mi)
{
    struct merging_child *cur = merging_current(mi);
    const char *key = cur->key;
    size_t klen = cur->klen;
    for (int i = 0; i < mi->n; i++) {
        struct rv_iter *c = mi->children[i].it;
        if (&mi->children[i] == cur)
            continue;
        c->ops->seek(c, key, klen);
        if (c->ops->valid(c))
            c->ops->prev(c); /* the first entry >= key, so one back is < */
        else
            c->ops->seek_to_last(c); /* every entry is < key */
    }
    mi->direction = MERGING_REVERSE;
    merging_rebuild(mi);
}

static void merging_next(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->heap_n == 0)
        return;
    if (mi->direction != MERGING_FORWARD)
        merging_turn_forward(mi);
    struct merging_child *top = merging_current(mi);
    if (!top)
        return; /* a child failed while turning */
    top->it->ops->next(top->it);
    merging_top_moved(mi);
}

static void merging_prev(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    if (mi->heap_n == 0)
        return;
    if (mi->direction != MERGING_REVERSE)
        merging_turn_backward(mi);
    struct merging_child *top = merging_current(mi);
    if (!top)
        return; /* a child failed while turning */
    top->it->ops->prev(top->it);
    merging_top_moved(mi);
}

static const char *merging_key(const struct rv_iter *it, size_t *len)
{
    const struct merging_child *c = merging_current(merging_ccast(it));
    *len = c->klen;
    return c->key;
}

static const char *merging_value(const struct rv_iter *it, size_t *len)
{
    const struct merging_child *c = merging_current(merging_ccast(it));
    return c->it->ops->value(c->it, len);
}

/* The error that stopped the merge, or the first among the children. */
static int merging_status(const struct rv_iter *it)
{
    const struct merging_iter *mi = merging_ccast(it);
    if (mi->status)
        return mi->status;
    for (int i = 0; i < mi->n; i++) {
        const struct rv_iter *c = mi->children[i].it;
        int rc = c->ops->status(c);
        if (rc)
            return rc;
    }
    return RAVEL_OK;
}

static void merging_destroy(struct rv_iter *it)
{
    struct merging_iter *mi = merging_cast(it);
    for (int i = 0; i < mi->n; i++)
        mi->children[i].it->ops->destroy(mi->children[i].it);
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
    size_t count = (size_t)(n > 0 ? n : 0);
    struct merging_iter *mi =
        malloc(sizeof *mi + count * (sizeof *mi->children +
                                     sizeof *mi->heap));
    if (!mi) {
        for (int i = 0; i < n; i++)
            children[i]->ops->destroy(children[i]);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        mi->children[i] = (struct merging_child){children[i], NULL, 0, i};
    mi->heap = (struct merging_child **)(mi->children + count);
    mi->base.ops = &merging_iter_ops;
    mi->n = n;
    mi->heap_n = 0;
    mi->status = RAVEL_OK;
    mi->direction = MERGING_FORWARD;
    return &mi->base;
}
