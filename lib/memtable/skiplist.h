/*
** skiplist.h -- a concurrent skiplist of internal keys, in the style of
** RocksDB's InlineSkipList.
**
** Owns: the ordering of nodes (internal-key order, see dbformat.h), their
** random heights, lock-free insertion and searching.  Does not own: what
** follows a key inside a node (the memtable's value encoding) or the memory
** (every node and the list itself live in an rv_arena, freed with it).
**
** Each node holds its key inline, after its array of next pointers; the
** caller may ask for extra bytes right after the key.  Keys are unique
** internal keys (user key + 8-byte tag), at least RV_TAG_SIZE bytes long.
**
** Concurrency: any number of threads may insert and read at once.  A
** reader sees a node once the insert that linked it at level 0 has happened
** before the read (release CAS / acquire load).  Nodes are never removed.
*/
#ifndef RAVEL_SKIPLIST_H
#define RAVEL_SKIPLIST_H

#include "ravel_int.h"
#include "util/arena.h"

#define RV_SKIPLIST_MAX_HEIGHT 12
#define RV_SKIPLIST_BRANCHING 4

typedef struct rv_skiplist rv_skiplist;
struct rv_skiplist_node;

/* A new empty list whose nodes (and itself) come from ARENA.  NULL when the
** arena is out of memory.  There is no free: the arena frees it. */
RAVEL_PRIVATE rv_skiplist *rv_skiplist_new(struct rv_arena *arena);

/* Allocates a node with a random height and room for a KLEN-byte key
** followed by EXTRA bytes.  Returns the buffer (KLEN + EXTRA bytes) for the
** caller to fill, then to pass to rv_skiplist_insert(); NULL when the arena
** is out of memory.  Thread-safe. */
RAVEL_PRIVATE char *rv_skiplist_alloc_key(rv_skiplist *sl, size_t klen,
                                          size_t extra);

/* Links the node whose key buffer KEY was returned by rv_skiplist_alloc_key
** and filled.  No equal key may be in the list.  Lock-free, thread-safe. */
RAVEL_PRIVATE void rv_skiplist_insert(rv_skiplist *sl, const char *key);

/* A position in the list.  Plain value, no cleanup; safe to use while other
** threads insert.  Seek targets are internal keys given as their two parts
** (user key, tag), so a lookup never has to build one. */
struct rv_skiplist_iter {
    const rv_skiplist *list;
    const struct rv_skiplist_node *node; /* NULL: not valid */
};

RAVEL_PRIVATE void rv_skiplist_iter_init(struct rv_skiplist_iter *it,
                                         const rv_skiplist *sl);
RAVEL_PRIVATE int rv_skiplist_iter_valid(const struct rv_skiplist_iter *it);
/* The current internal key; the node's extra bytes start at key + *len. */
RAVEL_PRIVATE const char *rv_skiplist_iter_key(const struct rv_skiplist_iter *it,
                                               size_t *len);
RAVEL_PRIVATE void rv_skiplist_iter_next(struct rv_skiplist_iter *it);
/* Asks the CPU for the rest of the current entry (the value after the key,
** up to 128 bytes on) and for the next node's key, so that a scan that
** reads this entry finds the next one in cache: a walk along level 0 is a
** chain of dependent cache misses, and this overlaps each with the work on
** the entry before.  Only a hint; does nothing when not valid. */
RAVEL_PRIVATE void rv_skiplist_iter_prefetch(const struct rv_skiplist_iter *it);
/* Searches for the last key < the current one (LevelDB's way: nodes have
** no back pointers). */
RAVEL_PRIVATE void rv_skiplist_iter_prev(struct rv_skiplist_iter *it);
/* First key >= (UKEY, TAG). */
RAVEL_PRIVATE void rv_skiplist_iter_seek(struct rv_skiplist_iter *it,
                                         const char *ukey, size_t ulen,
                                         uint64_t tag);
/* Last key <= (UKEY, TAG). */
RAVEL_PRIVATE void rv_skiplist_iter_seek_for_prev(struct rv_skiplist_iter *it,
                                                  const char *ukey, size_t ulen,
                                                  uint64_t tag);
RAVEL_PRIVATE void rv_skiplist_iter_seek_to_first(struct rv_skiplist_iter *it);
RAVEL_PRIVATE void rv_skiplist_iter_seek_to_last(struct rv_skiplist_iter *it);

#endif /* RAVEL_SKIPLIST_H */
