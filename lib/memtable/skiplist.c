/*
** skiplist.c -- the lock-free skiplist under the memtable (RocksDB's
** InlineSkipList design, LevelDB's search code).
**
** Owns: node layout, random heights, splice computation, CAS insertion and
** all searches.  Does not own: the bytes after a key (memtable.c) or memory
** (the arena; nodes are never freed one by one).
**
** Node layout (H = height, 1..RV_SKIPLIST_MAX_HEIGHT):
**
**   link[H-1] ... link[1]   struct rv_skiplist_node   key[key_len] extra
**   \_ (H-1) pointers _/    key_len:u32 height:u32 link[0]
**
** Levels 1..H-1 are stored just before the struct, so the struct's address
** is a fixed distance from the key: a key buffer handed to the caller maps
** back to its node by subtraction, and the key follows link[0] directly.
**
** Insertion (lock-free).  The inserter computes a splice -- for every level
** the last node before the key (prev) and the node after it (next) -- from
** the top level down.  It then links level 0, then 1, and so on: set the
** node's link to next, CAS prev's link from next to the node.  When a CAS
** fails (another node went in between), the splice of that level alone is
** recomputed starting from prev, which is still before the key.  Level 0
** linking makes the node visible; upper levels only speed searches up.
**
** Memory order: a link is published by a release CAS and read with an
** acquire load, so whoever reaches a node also sees its key and the links
** that were written before it was linked at that level.  The node's own
** links are written relaxed because nobody can reach the node at that level
** before the release CAS.  max_height is relaxed: a reader that sees a new
** height before the head's link at that level just finds NULL and drops a
** level.
*/
#include "memtable/skiplist.h"
#include "base/dbformat.h"

#include <assert.h>

struct rv_skiplist_node {
    uint32_t key_len;
    uint32_t height;
    /* Level 0; level L > 0 sits at ((link type *)node)[-L].  Written by the
    ** inserter before publication, later only by CAS of other inserters. */
    _Atomic(struct rv_skiplist_node *) link0;
};

_Static_assert(sizeof(struct rv_skiplist_node) % 8 == 0,
               "the key must follow the node at an 8-byte boundary");

typedef _Atomic(struct rv_skiplist_node *) skiplist_link_t;

struct rv_skiplist {
    struct rv_arena *arena;        /* set once */
    struct rv_skiplist_node *head; /* height MAX, no key; set once */
    /* Highest level in use.  Raised with a relaxed CAS (see above). */
    _Atomic int max_height;
};

/* An internal key split into its parts: what every search compares with. */
struct skiplist_target {
    const char *ukey;
    size_t ulen;
    uint64_t tag;
};

/* ------------------------------------------------------------- nodes */

static skiplist_link_t *skiplist_link(const struct rv_skiplist_node *n,
                                      int level)
{
    skiplist_link_t *base = (skiplist_link_t *)&n->link0;
    if (level == 0)
        return base;
    return (skiplist_link_t *)n - level;
}

static struct rv_skiplist_node *skiplist_next(const struct rv_skiplist_node *n,
                                              int level)
{
    /* acquire: pairs with the release CAS that linked the next node, so its
    ** key and lower links are visible */
    return atomic_load_explicit(skiplist_link(n, level), memory_order_acquire);
}

static const char *skiplist_node_key(const struct rv_skiplist_node *n)
{
    return (const char *)(n + 1);
}

static struct rv_skiplist_node *skiplist_node_of(const char *key)
{
    return (struct rv_skiplist_node *)(key - sizeof(struct rv_skiplist_node));
}

static struct rv_skiplist_node *skiplist_node_new(struct rv_arena *arena,
                                                  int height, size_t klen,
                                                  size_t extra)
{
    size_t uppers = (size_t)(height - 1) * sizeof(skiplist_link_t);
    size_t size = uppers + sizeof(struct rv_skiplist_node) + klen + extra;
    char *raw = rv_arena_alloc(arena, size);
    if (!raw)
        return NULL;
    struct rv_skiplist_node *n = (struct rv_skiplist_node *)(raw + uppers);
    n->key_len = (uint32_t)klen;
    n->height = (uint32_t)height;
    for (int i = 0; i < height; i++)
        /* relaxed: the node is unpublished; insert's release CAS orders it */
        atomic_store_explicit(skiplist_link(n, i), NULL, memory_order_relaxed);
    return n;
}

static void skiplist_target_of(const struct rv_skiplist_node *n,
                               struct skiplist_target *t)
{
    t->ukey = skiplist_node_key(n);
    t->ulen = n->key_len - RV_TAG_SIZE;
    t->tag = rv_get_fixed64(t->ukey + t->ulen);
}

/* <0, 0, >0 as N's key is before, equal to, after T (dbformat.h order). */
static int skiplist_compare(const struct rv_skiplist_node *n,
                            const struct skiplist_target *t)
{
    const char *k = skiplist_node_key(n);
    size_t ulen = n->key_len - RV_TAG_SIZE;
    int r = rv_user_key_compare(k, ulen, t->ukey, t->ulen);
    if (r)
        return r;
    uint64_t tag = rv_get_fixed64(k + ulen);
    return tag > t->tag ? -1 : tag < t->tag ? 1 : 0;
}

/* ------------------------------------------------------- random height */

/* Per-thread xorshift64* state, seeded on first use from a shared counter so
** that threads draw different sequences. */
static _Thread_local uint64_t skiplist_rng_state;
static _Atomic uint64_t skiplist_rng_seed = 0x853c49e6748fea9bULL;

static uint64_t skiplist_random(void)
{
    uint64_t x = skiplist_rng_state;
    if (x == 0) {
        /* relaxed: any distinct value will do */
        x = atomic_fetch_add_explicit(&skiplist_rng_seed,
                                      0x9e3779b97f4a7c15ULL,
                                      memory_order_relaxed);
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ULL;
        x |= 1;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    skiplist_rng_state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* 1 + the number of 1-in-BRANCHING successes, capped at MAX_HEIGHT. */
static int skiplist_random_height(void)
{
    uint64_t r = skiplist_random() >> 16;
    int height = 1;
    while (height < RV_SKIPLIST_MAX_HEIGHT && r % RV_SKIPLIST_BRANCHING == 0) {
        height++;
        r /= RV_SKIPLIST_BRANCHING;
    }
    return height;
}

/* ----------------------------------------------------------- creation */

rv_skiplist *rv_skiplist_new(struct rv_arena *arena)
{
    rv_skiplist *sl = rv_arena_alloc(arena, sizeof *sl);
    if (!sl)
        return NULL;
    sl->arena = arena;
    sl->head = skiplist_node_new(arena, RV_SKIPLIST_MAX_HEIGHT, 0, 0);
    if (!sl->head)
        return NULL;
    atomic_init(&sl->max_height, 1);
    return sl;
}

char *rv_skiplist_alloc_key(rv_skiplist *sl, size_t klen, size_t extra)
{
    assert(klen >= RV_TAG_SIZE && klen <= UINT32_MAX);
    struct rv_skiplist_node *n =
        skiplist_node_new(sl->arena, skiplist_random_height(), klen, extra);
    return n ? (char *)skiplist_node_key(n) : NULL;
}

/* ------------------------------------------------------------ searches */

static int skiplist_max_height(const rv_skiplist *sl)
{
    /* relaxed: a stale height only costs a few more comparisons */
    return atomic_load_explicit(&sl->max_height, memory_order_relaxed);
}

/* Asks for the cache lines of N's header and of its key's first bytes
** (N may be NULL: a prefetch never faults). */
static void skiplist_prefetch(const struct rv_skiplist_node *n)
{
    __builtin_prefetch(n);
    __builtin_prefetch((const char *)n + sizeof *n + 7);
}

/* The search (LevelDB's, with two changes that matter once the list is
** larger than the cache: every node touched is a cache miss, about 30 per
** search in a 1M-key memtable).  At each level it walks right while the
** next node is < T, then drops a level.  (1) When a level ends at a node
** already found >= T one level up, that node is not compared again.  (2)
** Each step asks for the node one level down from X, the one compared
** next if the walk drops: its miss then overlaps the current comparison's
** instead of following it.  Returns the last node < T (or the head) and
** sets *AT to the first node >= T (or NULL). */
static const struct rv_skiplist_node *
skiplist_find(const rv_skiplist *sl, const struct skiplist_target *t,
              const struct rv_skiplist_node **at)
{
    const struct rv_skiplist_node *x = sl->head;
    const struct rv_skiplist_node *bigger = NULL; /* known >= T */
    int level = skiplist_max_height(sl) - 1;
    for (;;) {
        const struct rv_skiplist_node *next = skiplist_next(x, level);
        if (level > 0)
            skiplist_prefetch(skiplist_next(x, level - 1));
        if (next && next != bigger && skiplist_compare(next, t) < 0) {
            x = next;
        } else if (level == 0) {
            *at = next;
            return x;
        } else {
            bigger = next;
            level--;
        }
    }
}

/* First node >= T, or NULL. */
static const struct rv_skiplist_node *
skiplist_find_greater_or_equal(const rv_skiplist *sl,
                               const struct skiplist_target *t)
{
    const struct rv_skiplist_node *at;
    skiplist_find(sl, t, &at);
    return at;
}

/* Last node < T, or the head if there is none. */
static const struct rv_skiplist_node *
skiplist_find_less_than(const rv_skiplist *sl, const struct skiplist_target *t)
{
    const struct rv_skiplist_node *at;
    return skiplist_find(sl, t, &at);
}

/* Last node of the list, or the head if it is empty. */
static const struct rv_skiplist_node *skiplist_find_last(const rv_skiplist *sl)
{
    const struct rv_skiplist_node *x = sl->head;
    int level = skiplist_max_height(sl) - 1;
    for (;;) {
        const struct rv_skiplist_node *next = skiplist_next(x, level);
        if (next)
            x = next;
        else if (level == 0)
            return x;
        else
            level--;
    }
}

/* ----------------------------------------------------------- insertion */

/* Walks LEVEL from BEFORE (which is < T) to the pair around T.  BIGGER
** is a node known to be > T (the splice one level up), or NULL; as in
** skiplist_find, it is not compared again, and the node one level down is
** asked for ahead. */
static void skiplist_find_splice_for_level(const struct skiplist_target *t,
                                           struct rv_skiplist_node *before,
                                           int level,
                                           const struct rv_skiplist_node *bigger,
                                           struct rv_skiplist_node **prev,
                                           struct rv_skiplist_node **next)
{
    for (;;) {
        struct rv_skiplist_node *after = skiplist_next(before, level);
        if (level > 0)
            skiplist_prefetch(skiplist_next(before, level - 1));
        int cmp = !after ? 1 : after == bigger ? 1 : skiplist_compare(after, t);
        assert(cmp != 0); /* keys are unique */
        if (cmp > 0) {
            *prev = before;
            *next = after;
            return;
        }
        before = after;
    }
}

/* Raises max_height to at least HEIGHT; returns the height to search from. */
static int skiplist_raise_max_height(rv_skiplist *sl, int height)
{
    int cur = skiplist_max_height(sl);
    while (height > cur) {
        /* relaxed: readers tolerate a height ahead of the head's links */
        if (atomic_compare_exchange_weak_explicit(&sl->max_height, &cur,
                                                  height, memory_order_relaxed,
                                                  memory_order_relaxed))
            return height;
    }
    return cur;
}

/* Links N at LEVEL between PREV and NEXT, retrying from PREV on a race. */
static void skiplist_link_level(struct rv_skiplist_node *n, int level,
                                const struct skiplist_target *t,
                                struct rv_skiplist_node *prev,
                                struct rv_skiplist_node *next)
{
    for (;;) {
        /* relaxed: N is unreachable at LEVEL until the release CAS below */
        atomic_store_explicit(skiplist_link(n, level), next,
                              memory_order_relaxed);
        /* release: publishes N's key and link to whoever loads it from PREV;
        ** relaxed on failure: the retry reloads PREV's link with acquire */
        if (atomic_compare_exchange_strong_explicit(
                skiplist_link(prev, level), &next, n, memory_order_release,
                memory_order_relaxed))
            return;
        skiplist_find_splice_for_level(t, prev, level, NULL, &prev, &next);
    }
}

void rv_skiplist_insert(rv_skiplist *sl, const char *key)
{
    struct rv_skiplist_node *n = skiplist_node_of(key);
    struct rv_skiplist_node *prev[RV_SKIPLIST_MAX_HEIGHT];
    struct rv_skiplist_node *next[RV_SKIPLIST_MAX_HEIGHT];
    struct skiplist_target t;
    int height = (int)n->height;

    skiplist_target_of(n, &t);
    int top = skiplist_raise_max_height(sl, height);
    struct rv_skiplist_node *before = sl->head;
    const struct rv_skiplist_node *bigger = NULL;
    for (int level = top - 1; level >= 0; level--) {
        skiplist_find_splice_for_level(&t, before, level, bigger, &prev[level],
                                       &next[level]);
        before = prev[level];
        bigger = next[level];
    }
    for (int level = 0; level < height; level++)
        skiplist_link_level(n, level, &t, prev[level], next[level]);
    /* relaxed: a statistic */
}

/* ------------------------------------------------------------ iterator */

void rv_skiplist_iter_init(struct rv_skiplist_iter *it, const rv_skiplist *sl)
{
    it->list = sl;
    it->node = NULL;
}

int rv_skiplist_iter_valid(const struct rv_skiplist_iter *it)
{
    return it->node != NULL;
}

const char *rv_skiplist_iter_key(const struct rv_skiplist_iter *it,
                                 size_t *len)
{
    assert(it->node);
    *len = it->node->key_len;
    return skiplist_node_key(it->node);
}

void rv_skiplist_iter_next(struct rv_skiplist_iter *it)
{
    assert(it->node);
    it->node = skiplist_next(it->node, 0);
}

void rv_skiplist_iter_prefetch(const struct rv_skiplist_iter *it)
{
    const struct rv_skiplist_node *n = it->node;
    if (!n)
        return;
    /* the value bytes after the key, up to two lines on */
    __builtin_prefetch((const char *)n + 64);
    __builtin_prefetch((const char *)n + 128);
    /* relaxed: only a hint; whoever moves there loads the link with
    ** acquire */
    skiplist_prefetch(atomic_load_explicit(&n->link0, memory_order_relaxed));
}

/* HEAD (no key) means "before the first": not valid. */
static void skiplist_iter_set(struct rv_skiplist_iter *it,
                              const struct rv_skiplist_node *n)
{
    it->node = n == it->list->head ? NULL : n;
}

void rv_skiplist_iter_prev(struct rv_skiplist_iter *it)
{
    assert(it->node);
    struct skiplist_target t;
    skiplist_target_of(it->node, &t);
    skiplist_iter_set(it, skiplist_find_less_than(it->list, &t));
}

void rv_skiplist_iter_seek(struct rv_skiplist_iter *it, const char *ukey,
                           size_t ulen, uint64_t tag)
{
    struct skiplist_target t = { ukey, ulen, tag };
    it->node = skiplist_find_greater_or_equal(it->list, &t);
}

void rv_skiplist_iter_seek_for_prev(struct rv_skiplist_iter *it,
                                    const char *ukey, size_t ulen, uint64_t tag)
{
    struct skiplist_target t = { ukey, ulen, tag };
    const struct rv_skiplist_node *before = skiplist_find_less_than(it->list, &t);
    const struct rv_skiplist_node *at = skiplist_next(before, 0);
    if (at && skiplist_compare(at, &t) == 0)
        it->node = at;
    else
        skiplist_iter_set(it, before);
}

void rv_skiplist_iter_seek_to_first(struct rv_skiplist_iter *it)
{
    it->node = skiplist_next(it->list->head, 0);
}

void rv_skiplist_iter_seek_to_last(struct rv_skiplist_iter *it)
{
    skiplist_iter_set(it, skiplist_find_last(it->list));
}
