/*
** cache.h -- a sharded LRU cache (interface; implementation in progress on
** the table-layer branch).
*/
#ifndef RAVEL_CACHE_H
#define RAVEL_CACHE_H

#include "ravel_int.h"

typedef struct rv_cache rv_cache;
typedef struct rv_cache_handle rv_cache_handle;
typedef void (*rv_cache_deleter)(const void *key, size_t klen, void *value);
RAVEL_PRIVATE int rv_cache_new(size_t capacity, rv_cache **out);
RAVEL_PRIVATE void rv_cache_ref(rv_cache *c);
RAVEL_PRIVATE void rv_cache_unref(rv_cache *c);
RAVEL_PRIVATE rv_cache_handle *rv_cache_insert(rv_cache *c, const void *key,
                                               size_t klen, void *value,
                                               size_t charge,
                                               rv_cache_deleter deleter);
RAVEL_PRIVATE rv_cache_handle *rv_cache_lookup(rv_cache *c, const void *key,
                                               size_t klen);
RAVEL_PRIVATE void rv_cache_release(rv_cache *c, rv_cache_handle *h);
RAVEL_PRIVATE void *rv_cache_value(const rv_cache_handle *h);
RAVEL_PRIVATE void rv_cache_erase(rv_cache *c, const void *key, size_t klen);
RAVEL_PRIVATE uint64_t rv_cache_new_id(rv_cache *c);
RAVEL_PRIVATE size_t rv_cache_usage(const rv_cache *c);
RAVEL_PRIVATE size_t rv_cache_pinned_usage(const rv_cache *c);
RAVEL_PRIVATE size_t rv_cache_capacity(const rv_cache *c);

#endif
