/*
** block.h -- reading a block of a table file (the layout is in
** block_builder.h): a structural check, a cursor over its entries that
** needs no allocation (it lives on the caller's stack or inside another
** struct), and an rv_iter around that cursor.
**
** A block read back from a file is untrusted even after its checksum
** verified (a checksum vouches for the bytes, not for the writer): every
** offset and length is bounds-checked as it is decoded, and a malformed
** block makes the cursor invalid with status RAVEL_CORRUPT and a message
** naming the byte offset in the block -- never a read outside it.
*/
#ifndef RAVEL_BLOCK_H
#define RAVEL_BLOCK_H

#include "ravel_int.h"
#include "iter/iterator.h"

/* Compares two keys of a block: internal keys (base/dbformat.h) for data
** blocks and index blocks alike. */
typedef int (*rv_block_compare_fn)(const char *a, size_t alen, const char *b,
                                   size_t blen);

/* Checks the restart array of a block of LEN bytes: RAVEL_OK, or
** RAVEL_CORRUPT with a message. */
RAVEL_PRIVATE int rv_block_check(const char *data, size_t len);

/* Keys up to this size are rebuilt (prefix compression) inside the cursor
** itself; a longer one takes a heap buffer, freed by
** rv_block_cursor_destroy. */
#define RV_BLOCK_KEY_INLINE 128

/* A position in a block.  The fields are read-only for its users; the
** cursor must not be copied (KEY may point into its own buffer).
** Whole keys (every restart entry, every entry of a block with restart
** interval 1, such as the index) are not copied: KEY points into the
** block. */
struct rv_block_cursor {
    const char *data;
    size_t restarts_off;    /* where the restart array begins: the end of
                            ** the entries */
    uint32_t num_restarts;
    rv_block_compare_fn cmp;
    size_t min_key;         /* a shorter key is corruption (8 for internal
                            ** keys, which the comparator assumes) */
    size_t cur, next;       /* cur == restarts_off: not valid */
    uint32_t restart_index; /* the restart at or before cur */
    const char *key;        /* the current key: in DATA or in kbuf */
    size_t key_len;
    const char *val;        /* in DATA */
    size_t val_len;
    int status;
    char *kbuf;             /* NULL: inline_key; else a heap buffer */
    size_t kbuf_cap;
    char inline_key[RV_BLOCK_KEY_INLINE];
};

/* Sets C over the block DATA (LEN bytes, alive and unchanged while C is
** used), ordered by CMP, with keys of at least MIN_KEY bytes; C is not
** positioned.  Returns C's status: RAVEL_CORRUPT if the block fails
** rv_block_check (the cursor then stays invalid). */
RAVEL_PRIVATE int rv_block_cursor_init(struct rv_block_cursor *c,
                                       const char *data, size_t len,
                                       rv_block_compare_fn cmp,
                                       size_t min_key);
/* The same for a block that already passed rv_block_check (a block of a
** cache, checked when it was filled): nothing is checked twice. */
RAVEL_PRIVATE void rv_block_cursor_init_checked(struct rv_block_cursor *c,
                                                const char *data, size_t len,
                                                rv_block_compare_fn cmp,
                                                size_t min_key);
/* Frees the key buffer of a cursor whose keys outgrew inline_key. */
RAVEL_PRIVATE void rv_block_cursor_destroy(struct rv_block_cursor *c);

RAVEL_PRIVATE void rv_block_cursor_seek_to_first(struct rv_block_cursor *c);
RAVEL_PRIVATE void rv_block_cursor_seek_to_last(struct rv_block_cursor *c);
/* The first entry whose key >= TARGET: a binary search over the restarts
** (whole keys, compared in place), then a scan of at most one interval. */
RAVEL_PRIVATE void rv_block_cursor_seek(struct rv_block_cursor *c,
                                        const char *target, size_t tlen);
/* The last entry whose key <= TARGET. */
RAVEL_PRIVATE void rv_block_cursor_seek_for_prev(struct rv_block_cursor *c,
                                                 const char *target,
                                                 size_t tlen);
/* The entry at restart I (the first entry when I is 0); invalid when I is
** past the last restart. */
RAVEL_PRIVATE void rv_block_cursor_seek_to_restart(struct rv_block_cursor *c,
                                                   uint32_t i);
RAVEL_PRIVATE void rv_block_cursor_next(struct rv_block_cursor *c);
/* Re-scans from the restart before the current entry (up to a restart
** interval of decoding), as LevelDB's block iterator does. */
RAVEL_PRIVATE void rv_block_cursor_prev(struct rv_block_cursor *c);

static inline int rv_block_cursor_valid(const struct rv_block_cursor *c)
{
    return c->cur < c->restarts_off;
}

/* An iterator over the entries of the block DATA (LEN bytes), which must
** stay alive and unchanged while the iterator exists, ordered by CMP, with
** keys of at least MIN_KEY bytes.  A block that fails rv_block_check gives
** an iterator whose status is RAVEL_CORRUPT.  NULL on allocation
** failure. */
RAVEL_PRIVATE struct rv_iter *rv_block_iter_new(const char *data, size_t len,
                                                rv_block_compare_fn cmp,
                                                size_t min_key);

#endif /* RAVEL_BLOCK_H */
