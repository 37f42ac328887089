/*
** block.h -- reading a block of a table file (the layout is in
** block_builder.h): a structural check, and an iterator over its entries.
**
** A block read back from a file is untrusted even after its checksum
** verified (a checksum vouches for the bytes, not for the writer): every
** offset and length is bounds-checked as it is decoded, and a malformed
** block makes the iterator invalid with status RAVEL_CORRUPT and a message
** naming the byte offset in the block -- never a read outside it.
*/
#ifndef RAVEL_BLOCK_H
#define RAVEL_BLOCK_H

#include "ravel_int.h"
#include "iter/iterator.h"

/* Compares two keys of a block: internal keys (db/dbformat.h) for data
** blocks and index blocks alike. */
typedef int (*rv_block_compare_fn)(const char *a, size_t alen, const char *b,
                                   size_t blen);

/* A block iterator, embeddable in another struct or on the stack (a point
** lookup then allocates nothing: keys up to 64 bytes live in key_inline).
** Its fields are block.c's; the iterator interface is &base. */
struct rv_block_iter {
    struct rv_iter base;
    const char *data;
    size_t restarts_off;    /* where the restart array begins: the end of
                            ** the entries */
    uint32_t num_restarts;
    rv_block_compare_fn cmp;
    size_t cur, next;       /* cur == restarts_off: not valid */
    uint32_t restart_index; /* the restart at or before cur */
    char *key;              /* key_inline, or a heap buffer */
    size_t key_len, key_cap;
    const char *val;
    size_t val_len;
    int status;
    char key_inline[64];
};

/* Initializes IT over the block DATA (LEN bytes), which must stay alive
** while IT is used; CHECKED: the block already passed rv_block_check
** (otherwise it is checked here, and a bad block gives status
** RAVEL_CORRUPT).  rv_block_iter_release frees what it may allocate. */
RAVEL_PRIVATE void rv_block_iter_init(struct rv_block_iter *it,
                                      const char *data, size_t len,
                                      rv_block_compare_fn cmp, int checked);
RAVEL_PRIVATE void rv_block_iter_release(struct rv_block_iter *it);

/* Checks the restart array of a block of LEN bytes: RAVEL_OK, or
** RAVEL_CORRUPT with a message. */
RAVEL_PRIVATE int rv_block_check(const char *data, size_t len);

/* An iterator over the entries of the block DATA (LEN bytes), which must
** stay alive and unchanged while the iterator exists, ordered by CMP.  A
** block that fails rv_block_check gives an iterator whose status is
** RAVEL_CORRUPT.  NULL on allocation failure. */
RAVEL_PRIVATE struct rv_iter *rv_block_iter_new(const char *data, size_t len,
                                                rv_block_compare_fn cmp);

/* The same for a block that already passed rv_block_check (one kept in
** memory, checked once when it was read): the check, linear in the
** number of restarts, is not repeated for every iterator. */
RAVEL_PRIVATE struct rv_iter *rv_block_iter_new_checked(
    const char *data, size_t len, rv_block_compare_fn cmp);

#endif /* RAVEL_BLOCK_H */
