/*
** arena.h -- a bump allocator that many threads may allocate from at once.
**
** Owns: blocks of memory handed out in 8-byte aligned pieces, the count of
** bytes allocated, and freeing every block at once.  Does not own: what is
** stored in the pieces (skiplist nodes, memtable entries) or any per-piece
** free: nothing is returned to the arena before rv_arena_destroy().
**
** Concurrency: rv_arena_alloc() and rv_arena_memory_usage() may be called
** by any number of threads at once.  rv_arena_init() and rv_arena_destroy()
** must not race with anything.
*/
#ifndef RAVEL_ARENA_H
#define RAVEL_ARENA_H

#include "ravel_int.h"
#include "util/mutex.h"

#include <pthread.h>

/* Default size of one block; a request larger than a quarter of the block
** size gets a block of its own so that little space is wasted. */
#define RV_ARENA_BLOCK_SIZE 65536

/* Huge-page blocks (rv_arena_use_huge_blocks): once an arena has obtained
** RV_ARENA_HUGE_AFTER bytes, each new regular block is one region of
** RV_ARENA_HUGE_BLOCK bytes (header included), aligned to its size and
** advised for transparent huge pages (MADV_HUGEPAGE, where the system has
** it).  A reader walking a large memtable then misses the TLB once per
** 2 MiB instead of once per 4 KiB page (measured: a fifth of a point
** lookup's time in a 1M-key memtable).  The first RV_ARENA_HUGE_AFTER bytes
** stay in regular blocks, so a small or empty memtable costs no more than
** before (a huge page is resident as a whole once touched). */
#define RV_ARENA_HUGE_BLOCK (2u << 20)
#define RV_ARENA_HUGE_AFTER (4u << 20)

struct rv_arena_block;

struct rv_arena {
    /* The block small requests are carved from.  Written (release) only
    ** under LOCK when a new block is installed; read (acquire) by
    ** allocating threads.  NULL until the first allocation. */
    _Atomic(struct rv_arena_block *) current;
    /* Every block, for rv_arena_destroy().  Written under LOCK. */
    struct rv_arena_block *blocks;
    /* Serialises installing blocks; never held on the fast path. */
    rv_mutex lock;
    /* Bytes obtained from malloc, headers included.  Relaxed atomic: an
    ** estimate that only grows. */
    _Atomic size_t usage;
    /* Size of a regular block's data area (set once by rv_arena_init). */
    size_t block_size;
    /* Regular blocks become huge-page regions past RV_ARENA_HUGE_AFTER
    ** (set before any allocation by rv_arena_use_huge_blocks). */
    int huge;
};

/* Prepares an empty arena whose regular blocks hold BLOCK_SIZE bytes
** (0: RV_ARENA_BLOCK_SIZE).  Allocates nothing yet. */
RAVEL_PRIVATE void rv_arena_init(struct rv_arena *a, size_t block_size);

/* Makes the arena's regular blocks huge-page regions once it has obtained
** RV_ARENA_HUGE_AFTER bytes (see above).  Call after rv_arena_init, before
** any allocation. */
RAVEL_PRIVATE void rv_arena_use_huge_blocks(struct rv_arena *a);

/* Frees every block.  The arena may be initialised again afterwards. */
RAVEL_PRIVATE void rv_arena_destroy(struct rv_arena *a);

/* N bytes aligned to 8, valid until rv_arena_destroy().  N = 0 gives a
** valid, distinct pointer.  NULL when malloc fails.  Thread-safe. */
RAVEL_PRIVATE void *rv_arena_alloc(struct rv_arena *a, size_t n);

/* Bytes obtained from the system so far (relaxed read). */
RAVEL_PRIVATE size_t rv_arena_memory_usage(const struct rv_arena *a);

#endif /* RAVEL_ARENA_H */
