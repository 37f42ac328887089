/*
** cache.h -- a generic sharded cache of reference-counted entries (the
** block cache of table files, and any other cache of the engine).
**
** An entry maps a key (bytes) to a value owned by the cache, and costs a
** charge (bytes, as the caller counts them).  A handle pins an entry: a
** pinned entry is never freed, even once it is evicted, erased or replaced;
** its deleter runs when it is out of the cache and its last handle is
** released.  Entries not pinned are evicted oldest first once the charges
** of the shard exceed its capacity, an entry looked up since eviction last
** passed it getting a second chance (CLOCK, an approximation of least
** recently used that lets a hit touch nothing but its own entry).
**
** The capacity is split evenly over shards (16, fewer for small
** capacities), each a hash table and an LRU list under a mutex of its own,
** picked by the key's hash: lookups of different blocks rarely meet on a
** lock.  An entry larger than its shard's capacity is still returned
** pinned, and dropped when released; with capacity 0 nothing stays once
** released.  Every function is thread-safe.
**
** Accounting: usage is the charge of every entry alive -- in the cache, or
** out of it but still pinned -- so it is what the cached values hold in
** memory; pinned usage is the part of it held by handles.
**
** Does not own: what a key means (a table prefixes its block offsets with
** an id from rv_cache_new_id, table/table.c).
*/
#ifndef RAVEL_CACHE_H
#define RAVEL_CACHE_H

#include "ravel_int.h"

typedef struct rv_cache rv_cache;
typedef struct rv_cache_handle rv_cache_handle;

/* Frees VALUE, the value of the entry KEY (KLEN bytes). */
typedef void (*rv_cache_deleter)(const void *key, size_t klen, void *value);

/* A new cache of CAPACITY bytes, with one reference held by the caller.
** RAVEL_NOMEM on allocation failure. */
RAVEL_PRIVATE int rv_cache_new(size_t capacity, rv_cache **out);
RAVEL_PRIVATE void rv_cache_ref(rv_cache *c);
/* Drops a reference; the last one frees the cache and every entry in it
** (all handles must have been released).  NULL is a no-op. */
RAVEL_PRIVATE void rv_cache_unref(rv_cache *c);

/* Inserts KEY -> VALUE costing CHARGE bytes, replacing an existing entry of
** KEY (the old one is deleted once its last handle is released).  Returns a
** handle pinning the new entry, or NULL on allocation failure (then nothing
** is called: the caller still owns VALUE). */
RAVEL_PRIVATE rv_cache_handle *rv_cache_insert(rv_cache *c, const void *key,
                                               size_t klen, void *value,
                                               size_t charge,
                                               rv_cache_deleter deleter);
/* A handle pinning the entry of KEY, or NULL if absent. */
RAVEL_PRIVATE rv_cache_handle *rv_cache_lookup(rv_cache *c, const void *key,
                                               size_t klen);
/* Releases a handle of rv_cache_insert or rv_cache_lookup. */
RAVEL_PRIVATE void rv_cache_release(rv_cache *c, rv_cache_handle *h);
RAVEL_PRIVATE void *rv_cache_value(const rv_cache_handle *h);
/* Removes the entry of KEY, if any, from the cache: lookups no longer find
** it, and it is deleted once its last handle is released. */
RAVEL_PRIVATE void rv_cache_erase(rv_cache *c, const void *key, size_t klen);

/* A number never returned before by this cache (from 1): the key prefix of
** one table instance, so that its blocks never meet another's. */
RAVEL_PRIVATE uint64_t rv_cache_new_id(rv_cache *c);

/* The charge of all entries, pinned included. */
RAVEL_PRIVATE size_t rv_cache_usage(const rv_cache *c);
/* The charge of the entries some handle pins. */
RAVEL_PRIVATE size_t rv_cache_pinned_usage(const rv_cache *c);
RAVEL_PRIVATE size_t rv_cache_capacity(const rv_cache *c);

#endif /* RAVEL_CACHE_H */
