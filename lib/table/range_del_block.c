/*
** range_del_block.c -- a table file's range-deletion block (layout in
** range_del_block.h and table_format.h): its entries written from
** fragments, and read back, checked entry by entry, into fragments.
** Does not own: fragmenting (memtable/range_del.c), where the block sits
** in the file (table_builder.c, table.c).
*/
#include "table/range_del_block.h"
#include "base/dbformat.h"
#include "table/block.h"
#include "util/coding.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

int rv_range_del_block_add(struct rv_block_builder *b,
                           const struct rv_range_frags *f)
{
    size_t cap = 0;
    char *k = NULL;
    int rc = RAVEL_OK;
    for (int i = 0; i < f->n && !rc; i++) {
        const struct rv_range_frag *g = &f->frag[i];
        if (g->blen + RV_TAG_SIZE > cap) {
            char *nk = realloc(k, cap = g->blen + RV_TAG_SIZE);
            if (!nk) {
                rc = rv_error(RAVEL_NOMEM, "out of memory writing a range "
                              "deletion block");
                break;
            }
            k = nk;
        }
        memcpy(k, g->begin, g->blen);
        for (int j = 0; j < g->n_seqs && !rc; j++) {
            if (j && g->seqs[j] == g->seqs[j - 1])
                continue; /* two tombstones of one sequence: one is enough */
            rv_put_fixed64(k + g->blen,
                           rv_pack_tag(g->seqs[j], RV_TYPE_RANGE_DELETE));
            rc = rv_block_builder_add(b, k, g->blen + RV_TAG_SIZE, g->end,
                                      g->elen);
        }
    }
    free(k);
    return rc;
}

/* Checks the entry at C (index I) against the one before it, PREV (NULL
** for the first), and fills *T. */
static int rdb_entry(const struct rv_block_cursor *c, const char *data,
                     size_t len, int i, const struct rv_range_tomb *prev,
                     struct rv_range_tomb *t)
{
    if (c->key < data || c->key + c->key_len > data + len)
        return rv_error(RAVEL_CORRUPT, "entry %d: its key is not whole "
                        "(range deletion blocks have restart interval 1)", i);
    uint64_t tag = rv_get_fixed64(c->key + c->key_len - RV_TAG_SIZE);
    *t = (struct rv_range_tomb){.begin = c->key,
                                .blen = c->key_len - RV_TAG_SIZE,
                                .end = c->val, .elen = c->val_len,
                                .seq = rv_tag_sequence(tag)};
    if (rv_tag_type(tag) != RV_TYPE_RANGE_DELETE)
        return rv_error(RAVEL_CORRUPT, "entry %d: type %d, not a range "
                        "deletion", i, rv_tag_type(tag));
    if (rv_user_key_compare(t->begin, t->blen, t->end, t->elen) >= 0)
        return rv_error(RAVEL_CORRUPT, "entry %d: its begin is not before "
                        "its end", i);
    if (!prev)
        return RAVEL_OK;
    int same = rv_user_key_compare(prev->begin, prev->blen, t->begin,
                                   t->blen) == 0;
    if (same && (rv_user_key_compare(prev->end, prev->elen, t->end,
                                     t->elen) != 0 || prev->seq <= t->seq))
        return rv_error(RAVEL_CORRUPT, "entry %d: a fragment's entries "
                        "differ in end or are not newest first", i);
    if (!same && rv_user_key_compare(prev->end, prev->elen, t->begin,
                                     t->blen) > 0)
        return rv_error(RAVEL_CORRUPT, "entry %d: fragments overlap or are "
                        "out of order", i);
    return RAVEL_OK;
}

int rv_range_del_block_read(const char *data, size_t len,
                            struct rv_range_frags **out)
{
    *out = NULL;
    struct rv_block_cursor c;
    int rc = rv_block_cursor_init(&c, data, len, rv_ikey_compare,
                                  RV_TAG_SIZE);
    if (rc)
        return rc;
    int n = 0, cap = 0;
    struct rv_range_tomb *t = NULL;
    for (rv_block_cursor_seek_to_first(&c); !rc && rv_block_cursor_valid(&c);
         rv_block_cursor_next(&c)) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            struct rv_range_tomb *nt = realloc(t, (size_t)cap * sizeof *t);
            if (!nt) {
                rc = rv_error(RAVEL_NOMEM, "out of memory reading a range "
                              "deletion block");
                break;
            }
            t = nt;
        }
        rc = rdb_entry(&c, data, len, n, n ? &t[n - 1] : NULL, &t[n]);
        n += !rc;
    }
    if (!rc && c.status)
        rc = c.status;
    if (!rc && n == 0)
        rc = rv_error(RAVEL_CORRUPT, "no entry (a file without range "
                      "tombstones has no such block)");
    rv_block_cursor_destroy(&c);
    if (!rc && !(*out = rv_range_frags_build(t, n)))
        rc = rv_error(RAVEL_NOMEM, "out of memory reading a range deletion "
                      "block");
    free(t);
    return rc;
}
