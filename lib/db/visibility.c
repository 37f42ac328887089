/*
** visibility.c -- taking read views of a database (visibility.h).
**
** Capturing a view that never changes (a snapshot, an iterator): load the
** commit watermark W, then the published sequence S (in that order: every
** batch at or below W committed at or below the S published before W was
** raised), then walk W+1 .. S in the commit table and record as hidden
** every sequence with no entry (not committed yet, so its commit will be
** above S) or an entry committing above S.  The walk covers the batches
** in flight when the view is taken, a few hundred sequences under load.
** An evicted entry met on the way means a whole table of sequences went
** by during the walk: the capture starts again with fresh bounds.
*/
#include "db/visibility.h"
#include "base/commit_table.h"
#include "db/db.h"
#include "util/error.h"

#include <stdlib.h>

struct rv_read_view rv_db_current_view(ravel_db *db, int *stale)
{
    if (db->write.ordering != RV_ORDERING_WRITE_PREPARED)
        /* acquire: pairs with the publisher's release, so every insert of
        ** a visible batch is seen */
        return rv_read_view_at(atomic_load_explicit(&db->write.last_visible_seq,
                                                    memory_order_acquire));
    /* the watermark first: see the top of this file */
    uint64_t all_below = atomic_load_explicit(&db->write.commit_watermark,
                                              memory_order_acquire);
    struct rv_read_view v = rv_read_view_at(
        atomic_load_explicit(&db->write.last_visible_seq,
                             memory_order_acquire));
    v.all_below = all_below;
    v.table = &db->write.commit_table;
    v.stale = stale;
    return v;
}

/* Appends SEQ to the hidden ranges *R (*N of them, room for *CAP). */
static int visibility_hide(struct rv_seq_range **r, int *n, int *cap,
                           uint64_t seq)
{
    if (*n > 0 && (*r)[*n - 1].hi + 1 == seq) {
        (*r)[*n - 1].hi = seq;
        return RAVEL_OK;
    }
    if (*n == *cap) {
        int grown = *cap ? *cap * 2 : 16;
        struct rv_seq_range *more = realloc(*r, (size_t)grown * sizeof **r);
        if (!more)
            return rv_error(RAVEL_NOMEM, "out of memory taking a read view");
        *r = more;
        *cap = grown;
    }
    (*r)[*n].lo = (*r)[*n].hi = seq;
    (*n)++;
    return RAVEL_OK;
}

/* One attempt at capturing the view of write_prepared: 1 if it met an
** evicted entry and must start again, 0 done, or an error (< 0 never:
** RAVEL_NOMEM is returned through *RC). */
static int visibility_capture_once(ravel_db *db, struct rv_read_view *v,
                                   struct rv_seq_range **hidden, int *cap,
                                   int *rc)
{
    int stale = 0;
    *v = rv_db_current_view(db, &stale);
    v->n_hidden = 0;
    for (uint64_t p = v->all_below + 1; p <= v->seq; p++) {
        uint64_t commit = 0;
        enum rv_commit_lookup found =
            rv_commit_table_lookup(&db->write.commit_table, p, &commit);
        if (found == RV_COMMIT_EVICTED)
            return 1;
        if (found == RV_COMMIT_FOUND && commit <= v->seq)
            continue;
        *rc = visibility_hide(hidden, &v->n_hidden, cap, p);
        if (*rc)
            return 0;
    }
    return 0;
}

int rv_db_capture_view(ravel_db *db, struct rv_read_view *v,
                       struct rv_seq_range **hidden)
{
    *hidden = NULL;
    if (db->write.ordering != RV_ORDERING_WRITE_PREPARED) {
        *v = rv_db_current_view(db, NULL);
        return RAVEL_OK;
    }
    int cap = 0, rc = RAVEL_OK;
    while (visibility_capture_once(db, v, hidden, &cap, &rc) && !rc)
        ;
    if (rc) {
        free(*hidden);
        *hidden = NULL;
        return rc;
    }
    v->table = NULL;
    v->stale = NULL;
    v->hidden = *hidden;
    if (!*hidden) /* nothing hidden: everything up to SEQ is visible */
        v->all_below = v->seq;
    return RAVEL_OK;
}
