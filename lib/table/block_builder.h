/*
** block_builder.h -- builds a block of a table file: sorted entries with
** prefix-compressed keys and restart points for binary search.  Data blocks
** map internal keys to values; the index block maps a separator key per
** data block to that block's handle.
**
**   block   := entry*  restart:fixed32[num_restarts]  num_restarts:fixed32
**   entry   := shared:varint32  unshared:varint32  value_len:varint32
**              key_suffix[unshared]  value[value_len]
**
** An entry's key is the first SHARED bytes of the previous entry's key
** followed by its suffix.  Every RESTART_INTERVAL entries, an entry stores
** its whole key (shared = 0) and its offset is listed among the restarts,
** so a reader can binary-search the restarts, then scan at most an
** interval.  The first entry is always a restart; a block has at least one
** restart (an empty block: num_restarts = 1, restart[0] = 0, no entries).
** The layout is on disk: DO NOT CHANGE it without a new table format
** version.  (block.h reads it back.)
*/
#ifndef RAVEL_BLOCK_BUILDER_H
#define RAVEL_BLOCK_BUILDER_H

#include "ravel_int.h"

struct rv_block_builder {
    char *buf;              /* the entries so far, then the restarts */
    size_t len, cap;
    uint32_t *restarts;     /* offsets of the restart entries */
    uint32_t num_restarts, restarts_cap;
    int restart_interval;
    int counter;            /* entries since the last restart */
    uint32_t entries;
    char *last_key;         /* the previous entry's whole key */
    size_t last_len, last_cap;
};

/* RESTART_INTERVAL: 1 .. INT_MAX (16 is LevelDB's and RocksDB's default). */
RAVEL_PRIVATE void rv_block_builder_init(struct rv_block_builder *b,
                                         int restart_interval);
RAVEL_PRIVATE void rv_block_builder_destroy(struct rv_block_builder *b);

/* Starts a new, empty block, keeping the allocations. */
RAVEL_PRIVATE void rv_block_builder_reset(struct rv_block_builder *b);

/* Appends an entry.  KEY must sort after every key added since the last
** reset (the caller's order: internal keys for data blocks).  RAVEL_NOMEM
** on allocation failure (the block is then unchanged). */
RAVEL_PRIVATE int rv_block_builder_add(struct rv_block_builder *b,
                                       const char *key, size_t klen,
                                       const char *val, size_t vlen);

/* The size the block would have if finished now. */
RAVEL_PRIVATE size_t rv_block_builder_size(const struct rv_block_builder *b);

/* Appends the restarts and returns the whole block (valid until the next
** reset or add); *LEN is its size.  RAVEL_NOMEM leaves *out NULL. */
RAVEL_PRIVATE int rv_block_builder_finish(struct rv_block_builder *b,
                                          const char **out, size_t *len);

#endif /* RAVEL_BLOCK_BUILDER_H */
