/*
** cache.c -- the sharded LRU cache (cache.h), and the public cache handle
** of include/ravel.h (ravel_cache is an rv_cache).
**
** LevelDB's LRUCache is the model, with one change that keeps a hit from
** writing anywhere but its own entry (the CLOCK policy RocksDB's clock
** caches use): each shard keeps the entries in the cache in a hash table
** (chained, doubled when it holds more entries than buckets) and in one
** list, oldest first, pinned or not.  A lookup only counts a handle and
** marks the entry recently used; a release only uncounts it.  Eviction
** walks the list from the front: a pinned entry is passed over (it cannot
** be evicted), a recently used one loses its mark and moves to the back
** (a second chance), and the first unpinned one without the mark goes.
** So a hit no longer unlinks its entry from between two others -- two
** cache misses on neighbours' lines per block read, under the shard's
** mutex -- which was a quarter of a cached point read's time (issue 23).
** An entry out of the cache (evicted, erased, replaced, or too large to
** enter it) is in no list and no table: it lives until its last handle is
** released.
*/
#include "util/cache.h"
#include "util/error.h"
#include "util/mutex.h"

#include <xxhash.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX_SHARD_BITS 4
#define CACHE_MIN_SHARD_CAPACITY (512u * 1024)
#define CACHE_INITIAL_BUCKETS 16
#define CACHE_LINE 64

struct cache_link {
    struct cache_link *next, *prev;
};

struct rv_cache_handle {
    struct cache_link link;     /* in the shard's list while in_cache;
                                ** first, so a link is its entry */
    struct rv_cache_handle *next_hash; /* the bucket's chain */
    void *value;
    rv_cache_deleter deleter;
    size_t charge;
    size_t klen;
    uint64_t hash;
    uint32_t refs;              /* handles out; under the shard's mutex */
    int in_cache;               /* in the table and the list; the mutex */
    int used;                   /* looked up since eviction last passed it;
                                ** under the mutex */
    char key[];
};

struct cache_shard {
    rv_mutex mu;
    size_t capacity;            /* fixed at creation */
    size_t cached;              /* charge of the entries in the cache; mu */
    /* The reported figures: written under mu, read without it by the
    ** statistics (relaxed: each is a snapshot, nothing is ordered by it). */
    _Atomic size_t usage, pinned;
    struct cache_link lru;      /* in cache, pinned or not, oldest first;
                                ** mu */
    struct rv_cache_handle **buckets; /* mu */
    size_t nbuckets, elems;
};

/* A shard padded to whole cache lines: two shards' mutexes never share
** one, so threads working in different shards do not slow each other. */
union cache_shard_slot {
    struct cache_shard s;
    char pad[(sizeof(struct cache_shard) + CACHE_LINE - 1) / CACHE_LINE *
             CACHE_LINE];
};

struct rv_cache {
    union cache_shard_slot *shards;
    int shard_bits;
    size_t capacity;
    _Atomic uint64_t next_id;   /* relaxed: only uniqueness matters */
    _Atomic int refs;
};

/* -------------------------------------------------------------- helpers */

static void cache_list_init(struct cache_link *l)
{
    l->next = l->prev = l;
}

static void cache_list_remove(struct cache_link *x)
{
    x->prev->next = x->next;
    x->next->prev = x->prev;
}

/* Appends X at the back of list L (the most recently used end). */
static void cache_list_append(struct cache_link *l, struct cache_link *x)
{
    x->next = l;
    x->prev = l->prev;
    l->prev->next = x;
    l->prev = x;
}

/* Adds D to a counter written only under its shard's mutex. */
static void cache_counter_add(_Atomic size_t *v, size_t d)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + d,
                          memory_order_relaxed);
}

static void cache_counter_sub(_Atomic size_t *v, size_t d)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) - d,
                          memory_order_relaxed);
}

static struct cache_shard *cache_shard_of(rv_cache *c, uint64_t hash)
{
    size_t i = c->shard_bits ? (size_t)(hash >> (64 - c->shard_bits)) : 0;
    return &c->shards[i].s;
}

/* ----------------------------------------------------------- hash table */

/* The slot pointing at the entry of KEY in S, or at the end of its chain. */
static struct rv_cache_handle **cache_find(struct cache_shard *s,
                                           const void *key, size_t klen,
                                           uint64_t hash)
{
    struct rv_cache_handle **p = &s->buckets[hash & (s->nbuckets - 1)];
    while (*p && ((*p)->hash != hash || (*p)->klen != klen ||
                  memcmp((*p)->key, key, klen) != 0))
        p = &(*p)->next_hash;
    return p;
}

/* Doubles the buckets; on allocation failure the chains just grow. */
static void cache_grow(struct cache_shard *s)
{
    size_t n = s->nbuckets * 2;
    struct rv_cache_handle **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct rv_cache_handle *e = s->buckets[i];
        while (e) {
            struct rv_cache_handle *next = e->next_hash;
            struct rv_cache_handle **slot = &b[e->hash & (n - 1)];
            e->next_hash = *slot;
            *slot = e;
            e = next;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

/* Puts E in the table; returns the entry of the same key it replaces. */
static struct rv_cache_handle *cache_table_insert(struct cache_shard *s,
                                                  struct rv_cache_handle *e)
{
    struct rv_cache_handle **p = cache_find(s, e->key, e->klen, e->hash);
    struct rv_cache_handle *old = *p;
    e->next_hash = old ? old->next_hash : NULL;
    *p = e;
    if (!old && ++s->elems > s->nbuckets)
        cache_grow(s);
    return old;
}

static struct rv_cache_handle *cache_table_remove(struct cache_shard *s,
                                                  const void *key, size_t klen,
                                                  uint64_t hash)
{
    struct rv_cache_handle **p = cache_find(s, key, klen, hash);
    struct rv_cache_handle *e = *p;
    if (e) {
        *p = e->next_hash;
        s->elems--;
    }
    return e;
}

/* -------------------------------------------------------------- entries */

/* Takes E, already out of the table, out of the cache; if no handle pins
** it, it joins DEAD (freed by the caller once the mutex is released). */
static void cache_detach(struct cache_shard *s, struct rv_cache_handle *e,
                         struct cache_link *dead)
{
    e->in_cache = 0;
    s->cached -= e->charge;
    cache_list_remove(&e->link);
    if (e->refs == 0) {
        cache_counter_sub(&s->usage, e->charge);
        cache_list_append(dead, &e->link);
    }
}

/* Evicts unpinned entries, oldest first, until the cache's charge is
** within capacity or nothing unpinned is left: the CLOCK walk (top of the
** file).  Each entry is visited at most twice (a used one once more, at
** the back, without its mark), so the walk ends. */
static void cache_evict(struct cache_shard *s, struct cache_link *dead)
{
    struct cache_link *l = s->lru.next;
    while (s->cached > s->capacity && l != &s->lru) {
        struct rv_cache_handle *e = (struct rv_cache_handle *)l;
        l = l->next;
        if (e->refs > 0)
            continue;
        if (e->used) {
            e->used = 0;
            cache_list_remove(&e->link);
            cache_list_append(&s->lru, &e->link);
            if (l == &s->lru)
                l = &e->link; /* it was the last: visit it again */
            continue;
        }
        cache_table_remove(s, e->key, e->klen, e->hash);
        cache_detach(s, e, dead);
    }
}

/* Runs the deleters of the entries of DEAD and frees them. */
static void cache_free_dead(struct cache_link *dead)
{
    struct cache_link *l = dead->next;
    while (l != dead) {
        struct rv_cache_handle *e = (struct rv_cache_handle *)l;
        l = l->next;
        if (e->deleter)
            e->deleter(e->key, e->klen, e->value);
        free(e);
    }
}

/* ------------------------------------------------------------ the cache */

int rv_cache_new(size_t capacity, rv_cache **out)
{
    *out = NULL;
    rv_cache *c = calloc(1, sizeof *c);
    if (!c)
        return rv_error(RAVEL_NOMEM, "out of memory for a block cache");
    int bits = CACHE_MAX_SHARD_BITS;
    while (bits > 0 && (capacity >> bits) < CACHE_MIN_SHARD_CAPACITY)
        bits--;
    size_t n = (size_t)1 << bits;
    size_t per_shard = capacity / n + (capacity % n != 0);
    c->shards = aligned_alloc(CACHE_LINE, n * sizeof c->shards[0]);
    if (!c->shards) {
        free(c);
        return rv_error(RAVEL_NOMEM, "out of memory for a block cache");
    }
    memset(c->shards, 0, n * sizeof c->shards[0]);
    c->shard_bits = bits;
    c->capacity = capacity;
    atomic_init(&c->next_id, 1);
    atomic_init(&c->refs, 1);
    for (size_t i = 0; i < n; i++) {
        struct cache_shard *s = &c->shards[i].s;
        s->capacity = per_shard;
        atomic_init(&s->usage, 0);
        atomic_init(&s->pinned, 0);
        cache_list_init(&s->lru);
        s->nbuckets = CACHE_INITIAL_BUCKETS;
        s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
        if (!s->buckets || rv_mutex_init(&s->mu) != 0) {
            free(s->buckets);
            for (size_t j = 0; j < i; j++) {
                rv_mutex_destroy(&c->shards[j].s.mu);
                free(c->shards[j].s.buckets);
            }
            free(c->shards);
            free(c);
            return rv_error(RAVEL_NOMEM, "out of memory for a block cache");
        }
    }
    *out = c;
    return RAVEL_OK;
}

void rv_cache_ref(rv_cache *c)
{
    /* relaxed: the caller already holds a reference, as in any refcount */
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void rv_cache_unref(rv_cache *c)
{
    /* acq_rel: every use by other holders happens before the free */
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    size_t n = (size_t)1 << c->shard_bits;
    for (size_t i = 0; i < n; i++) {
        struct cache_shard *s = &c->shards[i].s;
        /* Every handle was released: only unpinned entries remain. */
        cache_free_dead(&s->lru);
        rv_mutex_destroy(&s->mu);
        free(s->buckets);
    }
    free(c->shards);
    free(c);
}

rv_cache_handle *rv_cache_insert(rv_cache *c, const void *key, size_t klen,
                                 void *value, size_t charge,
                                 rv_cache_deleter deleter)
{
    struct rv_cache_handle *e = malloc(sizeof *e + klen);
    if (!e)
        return NULL;
    e->value = value;
    e->deleter = deleter;
    e->charge = charge;
    e->klen = klen;
    e->hash = XXH3_64bits(key, klen);
    e->refs = 1;
    e->in_cache = 0;
    e->used = 0;
    e->next_hash = NULL;
    if (klen)
        memcpy(e->key, key, klen);
    struct cache_shard *s = cache_shard_of(c, e->hash);
    struct cache_link dead;
    cache_list_init(&dead);
    rv_mutex_lock(&s->mu);
    cache_counter_add(&s->usage, charge);
    cache_counter_add(&s->pinned, charge);
    struct rv_cache_handle *old;
    if (s->capacity > 0 && charge <= s->capacity) {
        e->in_cache = 1;
        s->cached += charge;
        cache_list_append(&s->lru, &e->link);
        old = cache_table_insert(s, e);
    } else {
        /* Too large to stay: pinned only.  It still supersedes KEY. */
        cache_list_init(&e->link);
        old = cache_table_remove(s, key, klen, e->hash);
    }
    if (old)
        cache_detach(s, old, &dead);
    cache_evict(s, &dead);
    rv_mutex_unlock(&s->mu);
    cache_free_dead(&dead);
    return e;
}

rv_cache_handle *rv_cache_lookup(rv_cache *c, const void *key, size_t klen)
{
    uint64_t hash = XXH3_64bits(key, klen);
    struct cache_shard *s = cache_shard_of(c, hash);
    rv_mutex_lock(&s->mu);
    struct rv_cache_handle *e = *cache_find(s, key, klen, hash);
    if (e) {
        e->used = 1;
        if (e->refs++ == 0)
            cache_counter_add(&s->pinned, e->charge);
    }
    rv_mutex_unlock(&s->mu);
    return e;
}

void rv_cache_release(rv_cache *c, rv_cache_handle *e)
{
    struct cache_shard *s = cache_shard_of(c, e->hash);
    struct cache_link dead;
    cache_list_init(&dead);
    rv_mutex_lock(&s->mu);
    if (--e->refs == 0) {
        cache_counter_sub(&s->pinned, e->charge);
        if (e->in_cache) {
            if (s->cached > s->capacity)
                cache_evict(s, &dead);
        } else {
            cache_counter_sub(&s->usage, e->charge);
            cache_list_append(&dead, &e->link);
        }
    }
    rv_mutex_unlock(&s->mu);
    cache_free_dead(&dead);
}

void *rv_cache_value(const rv_cache_handle *h)
{
    return h->value;
}

void rv_cache_erase(rv_cache *c, const void *key, size_t klen)
{
    uint64_t hash = XXH3_64bits(key, klen);
    struct cache_shard *s = cache_shard_of(c, hash);
    struct cache_link dead;
    cache_list_init(&dead);
    rv_mutex_lock(&s->mu);
    struct rv_cache_handle *e = cache_table_remove(s, key, klen, hash);
    if (e)
        cache_detach(s, e, &dead);
    rv_mutex_unlock(&s->mu);
    cache_free_dead(&dead);
}

uint64_t rv_cache_new_id(rv_cache *c)
{
    return atomic_fetch_add_explicit(&c->next_id, 1, memory_order_relaxed);
}

/* Sums one of the shards' reported counters, the one at byte OFFSET of a
** shard. */
static size_t cache_sum(const rv_cache *c, size_t offset)
{
    size_t total = 0, n = (size_t)1 << c->shard_bits;
    for (size_t i = 0; i < n; i++) {
        const char *s = (const char *)&c->shards[i].s;
        total += atomic_load_explicit((const _Atomic size_t *)(s + offset),
                                      memory_order_relaxed);
    }
    return total;
}

size_t rv_cache_usage(const rv_cache *c)
{
    return cache_sum(c, offsetof(struct cache_shard, usage));
}

size_t rv_cache_pinned_usage(const rv_cache *c)
{
    return cache_sum(c, offsetof(struct cache_shard, pinned));
}

size_t rv_cache_capacity(const rv_cache *c)
{
    return c->capacity;
}

/* ----------------------------------------------------- the public handle */

int ravel_cache_new(uint64_t capacity, ravel_cache **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_cache_new: NULL out pointer");
    *out = NULL;
    if (capacity > SIZE_MAX)
        return rv_error(RAVEL_INVALID, "ravel_cache_new: capacity %llu is "
                        "more than this machine can address",
                        (unsigned long long)capacity);
    rv_cache *c;
    int rc = rv_cache_new((size_t)capacity, &c);
    if (rc)
        return rc;
    *out = (ravel_cache *)c;
    return RAVEL_OK;
}

void ravel_cache_free(ravel_cache *c)
{
    rv_cache_unref((rv_cache *)c);
}

uint64_t ravel_cache_usage(const ravel_cache *c)
{
    return c ? (uint64_t)rv_cache_usage((const rv_cache *)c) : 0;
}

uint64_t ravel_cache_capacity(const ravel_cache *c)
{
    return c ? (uint64_t)rv_cache_capacity((const rv_cache *)c) : 0;
}
