/*
** bloom.h -- the filter of a table file: a cache-local bloom filter over
** user keys, so a point get can skip a file that cannot hold its key.
**
** Cache-local, as RocksDB's FastLocalBloom: a key's hash picks one 64-byte
** cache line, and all of the key's probes fall inside it, so a query
** touches one cache line (one memory miss) whatever the number of probes.
** For the same bits per key this costs a little in false positives over a
** classic bloom filter (about 0.95% against 0.82% at 10 bits/key) and wins
** several times in speed.
**
**   filter := lines[64 * num_lines]  num_probes:u8  zero:u8[3]
**             num_lines:fixed32
**
** A key's probes: h = XXH3_64bits of the user key; the line is
** (h >> 32) * num_lines >> 32 (a multiply instead of a modulo); h's low
** 32 bits, h1, drive the probes: probe i sets bit (h1 >> 23) of the line
** (9 bits: 512 bits a line), then h1 *= 0x9e3779b9.  A filter with
** num_lines = 0 matches every key (an empty or disabled filter).  The
** layout is on disk: DO NOT CHANGE it without a new table format version.
*/
#ifndef RAVEL_BLOOM_H
#define RAVEL_BLOOM_H

#include "ravel_int.h"

#define RV_BLOOM_LINE 64
#define RV_BLOOM_TRAILER 8

/* Collects the hashes of the keys added, then builds the filter. */
struct rv_bloom_builder {
    uint64_t *hashes;
    size_t n, cap;
    int bits_per_key;
};

/* BITS_PER_KEY: 1 .. 100 (10 gives about 1% false positives). */
RAVEL_PRIVATE void rv_bloom_builder_init(struct rv_bloom_builder *b,
                                         int bits_per_key);
RAVEL_PRIVATE void rv_bloom_builder_destroy(struct rv_bloom_builder *b);

/* Adds a user key.  RAVEL_NOMEM on allocation failure. */
RAVEL_PRIVATE int rv_bloom_add(struct rv_bloom_builder *b, const void *key,
                               size_t klen);

/* The filter's size in bytes for the keys added so far. */
RAVEL_PRIVATE size_t rv_bloom_size(const struct rv_bloom_builder *b);

/* Writes the filter (rv_bloom_size bytes) to DST and forgets the keys. */
RAVEL_PRIVATE void rv_bloom_finish(struct rv_bloom_builder *b, char *dst);

/* Checks the structure of a filter read from disk: RAVEL_OK, or
** RAVEL_CORRUPT with a message saying what is wrong. */
RAVEL_PRIVATE int rv_bloom_check(const char *filter, size_t len);

/* 0 if KEY is certainly not among the keys of FILTER (LEN bytes, checked
** by rv_bloom_check), 1 if it may be. */
RAVEL_PRIVATE int rv_bloom_may_match(const char *filter, size_t len,
                                     const void *key, size_t klen);

#endif /* RAVEL_BLOOM_H */
