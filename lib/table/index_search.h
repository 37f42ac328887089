/*
** index_search.h -- the seek into a table's index block, made cheap: an
** array, built once when the table opens, of one 8-byte slice per index
** entry (the bytes of its separator's user key that follow the prefix all
** the separators share), searched instead of the block.
**
** The index block (restart interval 1: every entry a restart, every key
** whole) is searched by rv_block_cursor_seek as any block: about 15 probes
** for a 64 MiB table, each decoding an entry header and comparing two
** internal keys through a function pointer, on lines spread over the whole
** block.  The slices of all the entries sit together (8 bytes an entry,
** 128 KiB for 16,000 blocks), compare as integers, and decide every probe
** but those that land on a slice equal to the target's; only those compare
** whole keys.  The result is exactly rv_block_cursor_seek's: the first
** entry whose internal key is >= the target.
**
** Why a slice decides: the separators' user keys all begin with the same
** SHARED bytes; past them, the 8 following bytes read as a big-endian
** number, zero-padded when the key ends sooner, order two keys whenever
** they differ (a strictly smaller slice means a strictly smaller user key,
** so a smaller internal key whatever the sequences), and say nothing when
** they are equal.
**
** Memory: 8 bytes per data block of the table, kept with the table's
** index while it is open (about 0.2% of the table's size with 4 KiB
** blocks).  Nothing on disk changes.
*/
#ifndef RAVEL_INDEX_SEARCH_H
#define RAVEL_INDEX_SEARCH_H

#include "ravel_int.h"
#include "table/block.h"

struct rv_index_search {
    uint64_t *slices;       /* one per entry, in order; NULL: not built */
    uint32_t n;             /* entries (== restarts) */
    size_t shared;          /* bytes every separator's user key begins
                            ** with */
    const char *prefix;     /* those bytes (in the index block) */
};

/* Builds S over the index block INDEX (LEN bytes, checked, alive while S
** is used).  When the block is not one S can serve (an entry that is not
** a restart, a key shorter than a tag) or memory is short, S is left
** unbuilt and rv_index_search_seek falls back on the block's own seek:
** never an error. */
RAVEL_PRIVATE void rv_index_search_build(struct rv_index_search *s,
                                         const char *index, size_t len);
RAVEL_PRIVATE void rv_index_search_free(struct rv_index_search *s);

/* Positions C, a cursor over the same index block, at the first entry
** whose internal key is >= TARGET (invalid if none), as
** rv_block_cursor_seek(C, TARGET, TLEN) does. */
RAVEL_PRIVATE void rv_index_search_seek(const struct rv_index_search *s,
                                        struct rv_block_cursor *c,
                                        const char *target, size_t tlen);

#endif /* RAVEL_INDEX_SEARCH_H */
