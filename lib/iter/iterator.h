/*
** iterator.h -- the internal iterator interface over internal keys.
**
** Memtable iterators, the merging iterator and (later) sorted-file iterators
** all implement rv_iter_ops.  key() returns an internal key (user key +
** 8-byte tag, see dbformat.h); the memory stays valid while the iterator is
** positioned there and the source is alive.
**
** Not owned here: the user-facing ravel_iter (db_iter.c), which hides
** tags, old versions and deletions.
*/
#ifndef RAVEL_ITERATOR_H
#define RAVEL_ITERATOR_H

#include "ravel_int.h"

struct rv_iter;

struct rv_iter_ops {
    int (*valid)(const struct rv_iter *it);
    void (*seek_to_first)(struct rv_iter *it);
    void (*seek_to_last)(struct rv_iter *it);
    /* First entry whose internal key >= TARGET (an internal key). */
    void (*seek)(struct rv_iter *it, const char *target, size_t tlen);
    /* Last entry whose internal key <= TARGET. */
    void (*seek_for_prev)(struct rv_iter *it, const char *target, size_t tlen);
    void (*next)(struct rv_iter *it);
    void (*prev)(struct rv_iter *it);
    const char *(*key)(const struct rv_iter *it, size_t *len);
    const char *(*value)(const struct rv_iter *it, size_t *len);
    int (*status)(const struct rv_iter *it); /* RAVEL_OK or an error */
    void (*destroy)(struct rv_iter *it);
};

/* Every iterator struct starts with this. */
struct rv_iter {
    const struct rv_iter_ops *ops;
};

/* Merges CHILDREN (N of them, taking ownership) into one iterator in
** internal-key order.  Works in both directions, switching as LevelDB's
** MergingIterator does.  Returns NULL on allocation failure (the children
** are destroyed then too). */
RAVEL_PRIVATE struct rv_iter *rv_merging_iter_new(struct rv_iter **children,
                                                  int n);

#endif /* RAVEL_ITERATOR_H */
