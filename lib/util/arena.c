/*
** arena.c -- the concurrent bump allocator behind each memtable.
**
** Owns: the block list, the bump pointer of the current block and the
** memory usage counter.  Does not own: freeing single allocations (there is
** no such thing) or the lifetime of the arena itself (the memtable's).
**
** Design.  Each block has an atomic count of bytes handed out.  A request
** adds its size to the count of the current block with fetch_add; if the
** old count plus the size fits, the bytes at the old count are the
** caller's.  Threads never wait for each other on this path.  When a
** request does not fit, the thread takes the mutex and, unless another
** thread already did, installs a fresh block; the tail of the old block is
** wasted (at most a quarter of a block, since larger requests get a block
** of their own).  The count of a full block may overshoot its size: a
** failed fetch_add just leaves it too large, which is harmless.
**
** Huge-page blocks (arena.h) are mapped with mmap rather than malloc'd:
** malloc cannot be asked for 2 MiB alignment without wasting up to as much
** again, so the arena maps twice the size and unmaps the unaligned ends.
*/
#include "util/arena.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

struct rv_arena_block {
    struct rv_arena_block *next; /* in rv_arena.blocks; written under lock */
    size_t size;                 /* bytes of data after the header */
    size_t mapped;               /* bytes mapped by mmap; 0: malloc'd */
    /* Bytes handed out (may exceed SIZE once full).  Relaxed fetch_add:
    ** it only partitions the space, nothing is published through it. */
    _Atomic size_t used;
    /* data follows, 8-byte aligned (the header size is a multiple of 8) */
};

_Static_assert(sizeof(struct rv_arena_block) % 8 == 0,
               "arena block data must stay 8-byte aligned");

void rv_arena_init(struct rv_arena *a, size_t block_size)
{
    atomic_init(&a->current, NULL);
    a->blocks = NULL;
    rv_mutex_init(&a->lock);
    atomic_init(&a->usage, 0);
    a->huge = 0;
    a->block_size = block_size ? block_size : RV_ARENA_BLOCK_SIZE;
}

void rv_arena_use_huge_blocks(struct rv_arena *a)
{
    a->huge = 1;
}

void rv_arena_destroy(struct rv_arena *a)
{
    struct rv_arena_block *b = a->blocks;
    while (b) {
        struct rv_arena_block *next = b->next;
        if (b->mapped)
            munmap(b, b->mapped);
        else
            free(b);
        b = next;
    }
    a->blocks = NULL;
    atomic_store_explicit(&a->current, NULL, memory_order_relaxed);
    rv_mutex_destroy(&a->lock);
}

static char *arena_block_data(struct rv_arena_block *b)
{
    return (char *)(b + 1);
}

/* RV_ARENA_HUGE_BLOCK bytes aligned to their size and advised for huge
** pages, or NULL. */
static void *arena_map_huge(void)
{
    size_t len = RV_ARENA_HUGE_BLOCK;
    char *p = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    size_t head = (len - (uintptr_t)p % len) % len;
    if (head)
        munmap(p, head);
    munmap(p + head + len, len - head);
#ifdef MADV_HUGEPAGE
    /* advice only: without huge pages the block works the same */
    madvise(p + head, len, MADV_HUGEPAGE);
#endif
    return p + head;
}

/* Links B, of SIZE data bytes with USED already taken, into the arena's
** list and counts it.  Caller holds the lock. */
static struct rv_arena_block *arena_block_add(struct rv_arena *a,
                                              struct rv_arena_block *b,
                                              size_t size, size_t used,
                                              size_t mapped)
{
    b->mapped = mapped;
    b->size = size;
    atomic_init(&b->used, used);
    b->next = a->blocks;
    a->blocks = b;
    /* relaxed: a statistic, no other memory depends on it */
    atomic_fetch_add_explicit(&a->usage, sizeof *b + size,
                              memory_order_relaxed);
    return b;
}

/* A malloc'd block of SIZE data bytes with USED already taken, linked into
** the arena's list.  Caller holds the lock. */
static struct rv_arena_block *arena_block_new(struct rv_arena *a, size_t size,
                                              size_t used)
{
    struct rv_arena_block *b = malloc(sizeof *b + size);
    return b ? arena_block_add(a, b, size, used, 0) : NULL;
}

/* The next regular block: a huge-page region once the arena is past
** RV_ARENA_HUGE_AFTER (if it asked for them), else a malloc'd one.
** Caller holds the lock. */
static struct rv_arena_block *arena_block_next(struct rv_arena *a)
{
    /* relaxed: written under the lock we hold */
    if (a->huge && atomic_load_explicit(&a->usage, memory_order_relaxed) >=
                       RV_ARENA_HUGE_AFTER) {
        struct rv_arena_block *b = arena_map_huge();
        if (b)
            return arena_block_add(a, b, RV_ARENA_HUGE_BLOCK - sizeof *b, 0,
                                   RV_ARENA_HUGE_BLOCK);
        /* no address space for a whole region: a small block will do */
    }
    return arena_block_new(a, a->block_size, 0);
}

/* A request too large to share a block: it gets one of exactly its size. */
static void *arena_alloc_large(struct rv_arena *a, size_t n)
{
    rv_mutex_lock(&a->lock);
    struct rv_arena_block *b = arena_block_new(a, n, n);
    rv_mutex_unlock(&a->lock);
    return b ? arena_block_data(b) : NULL;
}

/* Replaces FULL as the current block, unless another thread already has.
** Returns 0, or -1 if malloc failed. */
static int arena_refill(struct rv_arena *a, struct rv_arena_block *full)
{
    int rc = 0;
    rv_mutex_lock(&a->lock);
    /* relaxed: only ever written under the lock we hold */
    if (atomic_load_explicit(&a->current, memory_order_relaxed) == full) {
        struct rv_arena_block *b = arena_block_next(a);
        if (b)
            /* release: allocators that load it must see its header */
            atomic_store_explicit(&a->current, b, memory_order_release);
        else
            rc = -1;
    }
    rv_mutex_unlock(&a->lock);
    return rc;
}

void *rv_arena_alloc(struct rv_arena *a, size_t n)
{
    if (n > SIZE_MAX - 8)
        return NULL;
    n = n ? (n + 7) & ~(size_t)7 : 8;
    if (n > a->block_size / 4)
        return arena_alloc_large(a, n);
    for (;;) {
        /* acquire: pairs with the release in arena_refill (block header) */
        struct rv_arena_block *b =
            atomic_load_explicit(&a->current, memory_order_acquire);
        if (b) {
            /* relaxed: the count only divides up space (see the struct) */
            size_t off =
                atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed);
            if (off <= b->size && n <= b->size - off)
                return arena_block_data(b) + off;
        }
        if (arena_refill(a, b))
            return NULL;
    }
}

size_t rv_arena_memory_usage(const struct rv_arena *a)
{
    /* relaxed: an estimate; the caller synchronises nothing through it */
    return atomic_load_explicit(&a->usage, memory_order_relaxed);
}
