/*
** cache.c -- a sharded LRU cache (cache.h): interim version, one mutex
** per shard, a hash chain per bucket and an LRU list of unpinned entries.
*/
#include "util/cache.h"
#include "util/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define CACHE_SHARDS 16

struct rv_cache_handle {
    struct rv_cache_handle *hnext;          /* hash chain */
    struct rv_cache_handle *prev, *next;    /* LRU list (unpinned only) */
    void *value;
    rv_cache_deleter deleter;
    size_t charge;
    uint64_t hash;
    int refs;                               /* pins + 1 while cached */
    int in_cache;
    size_t klen;
    char key[];
};

struct cache_shard {
    pthread_mutex_t mu;
    struct rv_cache_handle **buckets;
    size_t n_buckets, count;
    struct rv_cache_handle lru;             /* sentinel: oldest at next */
    size_t usage, pinned, capacity;
};

struct rv_cache {
    _Atomic int refs;
    _Atomic uint64_t next_id;
    size_t capacity;
    struct cache_shard shards[CACHE_SHARDS];
};

int rv_cache_new(size_t capacity, rv_cache **out)
{
    rv_cache *c = calloc(1, sizeof *c);
    if (!c)
        return rv_error(RAVEL_NOMEM, "out of memory for a cache");
    atomic_init(&c->refs, 1);
    atomic_init(&c->next_id, 1);
    c->capacity = capacity;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        struct cache_shard *s = &c->shards[i];
        pthread_mutex_init(&s->mu, NULL);
        s->capacity = (capacity + CACHE_SHARDS - 1) / CACHE_SHARDS;
        s->lru.next = s->lru.prev = &s->lru;
        s->n_buckets = 64;
        s->buckets = calloc(s->n_buckets, sizeof *s->buckets);
        if (!s->buckets) {
            c->capacity = 0;
            rv_cache_unref(c);
            return rv_error(RAVEL_NOMEM, "out of memory for a cache");
        }
    }
    *out = c;
    return RAVEL_OK;
}

void rv_cache_ref(rv_cache *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

static void cache_free_entry(struct rv_cache_handle *h)
{
    if (h->deleter)
        h->deleter(h->key, h->klen, h->value);
    free(h);
}

void rv_cache_unref(rv_cache *c)
{
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        struct cache_shard *s = &c->shards[i];
        for (size_t b = 0; s->buckets && b < s->n_buckets; b++) {
            struct rv_cache_handle *h = s->buckets[b];
            while (h) {
                struct rv_cache_handle *next = h->hnext;
                cache_free_entry(h);
                h = next;
            }
        }
        free(s->buckets);
        pthread_mutex_destroy(&s->mu);
    }
    free(c);
}

static uint64_t cache_hash(const void *key, size_t klen)
{
    return XXH3_64bits(key, klen);
}

static struct cache_shard *cache_shard_of(rv_cache *c, uint64_t hash)
{
    return &c->shards[hash >> 60 & (CACHE_SHARDS - 1)];
}

static struct rv_cache_handle **cache_slot(struct cache_shard *s,
                                           const void *key, size_t klen,
                                           uint64_t hash)
{
    struct rv_cache_handle **p = &s->buckets[hash & (s->n_buckets - 1)];
    while (*p && ((*p)->hash != hash || (*p)->klen != klen ||
                  memcmp((*p)->key, key, klen) != 0))
        p = &(*p)->hnext;
    return p;
}

static void cache_lru_remove(struct rv_cache_handle *h)
{
    h->next->prev = h->prev;
    h->prev->next = h->next;
    h->next = h->prev = NULL;
}

static void cache_lru_append(struct cache_shard *s, struct rv_cache_handle *h)
{
    h->next = &s->lru;
    h->prev = s->lru.prev;
    h->prev->next = h;
    h->next->prev = h;
}

/* Drops one reference under the shard lock; returns H if it must be freed
** (outside the lock). */
static struct rv_cache_handle *cache_unref_locked(struct cache_shard *s,
                                                  struct rv_cache_handle *h)
{
    h->refs--;
    if (h->refs == 0) {
        s->usage -= h->charge;
        return h;
    }
    if (h->in_cache && h->refs == 1) {
        s->pinned -= h->charge;
        cache_lru_append(s, h);
    }
    return NULL;
}

/* Takes H out of the table (it stays alive while pinned). */
static struct rv_cache_handle *cache_detach_locked(struct cache_shard *s,
                                                   struct rv_cache_handle **slot)
{
    struct rv_cache_handle *h = *slot;
    *slot = h->hnext;
    s->count--;
    h->in_cache = 0;
    if (h->next)
        cache_lru_remove(h);
    else
        s->pinned -= h->charge;
    return cache_unref_locked(s, h);
}

static void cache_grow_locked(struct cache_shard *s)
{
    size_t n = s->n_buckets * 2;
    struct rv_cache_handle **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < s->n_buckets; i++) {
        struct rv_cache_handle *h = s->buckets[i];
        while (h) {
            struct rv_cache_handle *next = h->hnext;
            h->hnext = b[h->hash & (n - 1)];
            b[h->hash & (n - 1)] = h;
            h = next;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->n_buckets = n;
}

rv_cache_handle *rv_cache_insert(rv_cache *c, const void *key, size_t klen,
                                 void *value, size_t charge,
                                 rv_cache_deleter deleter)
{
    struct rv_cache_handle *h = malloc(sizeof *h + klen);
    if (!h)
        return NULL;
    memcpy(h->key, key, klen);
    h->klen = klen;
    h->value = value;
    h->deleter = deleter;
    h->charge = charge;
    h->hash = cache_hash(key, klen);
    h->refs = 2; /* the cache and the caller */
    h->in_cache = 1;
    h->next = h->prev = NULL;
    struct cache_shard *s = cache_shard_of(c, h->hash);
    struct rv_cache_handle *dead[64];
    int n_dead = 0;
    pthread_mutex_lock(&s->mu);
    struct rv_cache_handle **slot = cache_slot(s, key, klen, h->hash);
    if (*slot) {
        struct rv_cache_handle *d = cache_detach_locked(s, slot);
        if (d)
            dead[n_dead++] = d;
    }
    h->hnext = NULL;
    *cache_slot(s, key, klen, h->hash) = h;
    s->count++;
    s->usage += charge;
    s->pinned += charge;
    while (s->usage > s->capacity && s->lru.next != &s->lru && n_dead < 64) {
        struct rv_cache_handle *old = s->lru.next;
        struct rv_cache_handle *d = cache_detach_locked(
            s, cache_slot(s, old->key, old->klen, old->hash));
        if (d)
            dead[n_dead++] = d;
    }
    if (s->count > s->n_buckets)
        cache_grow_locked(s);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < n_dead; i++)
        cache_free_entry(dead[i]);
    return h;
}

rv_cache_handle *rv_cache_lookup(rv_cache *c, const void *key, size_t klen)
{
    uint64_t hash = cache_hash(key, klen);
    struct cache_shard *s = cache_shard_of(c, hash);
    pthread_mutex_lock(&s->mu);
    struct rv_cache_handle *h = *cache_slot(s, key, klen, hash);
    if (h) {
        if (h->refs == 1) {
            cache_lru_remove(h);
            s->pinned += h->charge;
        }
        h->refs++;
    }
    pthread_mutex_unlock(&s->mu);
    return h;
}

void rv_cache_release(rv_cache *c, rv_cache_handle *h)
{
    struct cache_shard *s = cache_shard_of(c, h->hash);
    pthread_mutex_lock(&s->mu);
    struct rv_cache_handle *dead = cache_unref_locked(s, h);
    /* an entry over capacity is dropped as soon as it is unpinned */
    if (!dead && h->in_cache && h->refs == 1 && s->usage > s->capacity)
        dead = cache_detach_locked(s, cache_slot(s, h->key, h->klen,
                                                 h->hash));
    pthread_mutex_unlock(&s->mu);
    if (dead)
        cache_free_entry(dead);
}

void *rv_cache_value(const rv_cache_handle *h)
{
    return h->value;
}

void rv_cache_erase(rv_cache *c, const void *key, size_t klen)
{
    uint64_t hash = cache_hash(key, klen);
    struct cache_shard *s = cache_shard_of(c, hash);
    struct rv_cache_handle *dead = NULL;
    pthread_mutex_lock(&s->mu);
    struct rv_cache_handle **slot = cache_slot(s, key, klen, hash);
    if (*slot)
        dead = cache_detach_locked(s, slot);
    pthread_mutex_unlock(&s->mu);
    if (dead)
        cache_free_entry(dead);
}

uint64_t rv_cache_new_id(rv_cache *c)
{
    return atomic_fetch_add_explicit(&c->next_id, 1, memory_order_relaxed);
}

size_t rv_cache_usage(const rv_cache *c)
{
    size_t n = 0;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        struct cache_shard *s = (struct cache_shard *)&c->shards[i];
        pthread_mutex_lock(&s->mu);
        n += s->usage;
        pthread_mutex_unlock(&s->mu);
    }
    return n;
}

size_t rv_cache_pinned_usage(const rv_cache *c)
{
    size_t n = 0;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        struct cache_shard *s = (struct cache_shard *)&c->shards[i];
        pthread_mutex_lock(&s->mu);
        n += s->pinned;
        pthread_mutex_unlock(&s->mu);
    }
    return n;
}

size_t rv_cache_capacity(const rv_cache *c)
{
    return c->capacity;
}
