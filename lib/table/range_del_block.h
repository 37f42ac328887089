/*
** range_del_block.h -- a table file's range-deletion block (format version
** 2, table_format.h; RocksDB's range_del meta block): written from a
** file's tombstones and read back into the fragmented form readers search
** (memtable/range_del.h's rv_range_frags, the memtables' form too).
**
** The block is a block_builder.h block with restart interval 1: one entry
** per fragment and per sequence covering it, newest first, key = begin
** user key + tag (seq, RV_TYPE_RANGE_DELETE), value = the fragment's
** exclusive end user key.  Entries of one fragment share begin and end;
** fragments are sorted and disjoint.
*/
#ifndef RAVEL_RANGE_DEL_BLOCK_H
#define RAVEL_RANGE_DEL_BLOCK_H

#include "ravel_int.h"
#include "base/range_frags.h"
#include "table/block_builder.h"

/* Adds the entries of the fragments F to B (a fresh block builder with
** restart interval 1); a sequence listed twice in a fragment is written
** once.  RAVEL_OK or RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_block_add(struct rv_block_builder *b,
                                         const struct rv_range_frags *f);

/* Decodes the block DATA (LEN bytes, kept alive and unchanged while *OUT
** is used: its keys point into it) into a new fragment snapshot *OUT
** (rv_range_frags_free; never NULL on success: a block has at least one
** entry).  Every entry is checked: a whole key of the range-delete type,
** begin < end, fragments sorted and disjoint, sequences descending within
** one.  RAVEL_CORRUPT with a message saying what is wrong (the caller
** names the file), or RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_block_read(const char *data, size_t len,
                                          struct rv_range_frags **out);

#endif /* RAVEL_RANGE_DEL_BLOCK_H */
