/*
** commit_table.c -- the prepare -> commit map of write_prepared (see
** commit_table.h for the entry layout and why evictions are harmless).
*/
#include "base/commit_table.h"

#include <stdlib.h>

int rv_commit_table_init(struct rv_commit_table *t, uint64_t size)
{
    unsigned bits = 0;
    while ((1ull << bits) < size)
        bits++;
    t->slots = calloc((size_t)1 << bits, sizeof *t->slots);
    if (!t->slots)
        return RAVEL_NOMEM;
    t->bits = bits;
    t->mask = (1ull << bits) - 1;
    atomic_init(&t->evictions, 0);
    atomic_init(&t->max_evicted_seq, 0);
    return RAVEL_OK;
}

void rv_commit_table_destroy(struct rv_commit_table *t)
{
    free(t->slots);
    t->slots = NULL;
}

static unsigned commit_table_delta_bits(const struct rv_commit_table *t)
{
    return 8 + t->bits;
}

/* The prepared sequence whose entry E sits at PREPARE's index. */
static uint64_t commit_table_entry_prepare(const struct rv_commit_table *t,
                                           uint64_t e, uint64_t prepare)
{
    return ((e >> commit_table_delta_bits(t)) << t->bits) |
           (prepare & t->mask);
}

void rv_commit_table_add(struct rv_commit_table *t, uint64_t prepare,
                         uint64_t commit)
{
    unsigned dbits = commit_table_delta_bits(t);
    uint64_t max_delta = (1ull << dbits) - 1;
    uint64_t delta = commit - prepare;
    if (delta > max_delta)
        delta = max_delta; /* "committed, at an unknown sequence" */
    uint64_t e = ((prepare >> t->bits) << dbits) | delta;
    _Atomic uint64_t *slot = &t->slots[prepare & t->mask];
    /* relaxed: the leader alone writes slots */
    uint64_t old = atomic_load_explicit(slot, memory_order_relaxed);
    if (old != 0) {
        uint64_t evicted = commit_table_entry_prepare(t, old, prepare);
        if (evicted > prepare)
            return; /* never replace a newer entry by an older one */
        if (evicted != prepare) {
            atomic_store_explicit(&t->evictions,
                atomic_load_explicit(&t->evictions, memory_order_relaxed) + 1,
                memory_order_relaxed);
            if (evicted > atomic_load_explicit(&t->max_evicted_seq,
                                               memory_order_relaxed))
                atomic_store_explicit(&t->max_evicted_seq, evicted,
                                      memory_order_relaxed);
        }
    }
    /* relaxed: a reader whose view's sequence is COMMIT or above took it
    ** (acquire) after the leader published it (release), which follows
    ** this store; a reader with an older view ignores the entry anyway. */
    atomic_store_explicit(slot, e, memory_order_relaxed);
}

enum rv_commit_lookup rv_commit_table_lookup(const struct rv_commit_table *t,
                                             uint64_t prepare,
                                             uint64_t *commit)
{
    /* relaxed: see rv_commit_table_add */
    uint64_t e = atomic_load_explicit(&t->slots[prepare & t->mask],
                                      memory_order_relaxed);
    if (e == 0)
        return RV_COMMIT_ABSENT;
    uint64_t p = commit_table_entry_prepare(t, e, prepare);
    if (p < prepare)
        return RV_COMMIT_ABSENT;
    uint64_t max_delta = (1ull << commit_table_delta_bits(t)) - 1;
    if (p > prepare || (e & max_delta) == max_delta)
        return RV_COMMIT_EVICTED;
    *commit = prepare + (e & max_delta);
    return RV_COMMIT_FOUND;
}
