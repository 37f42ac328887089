/*
** db_iter.h -- the user-facing iterator: turns an internal iterator (all
** versions of every key, newest first) into the user's view at one
** read view (visibility.h): one entry per user key, the newest version
** the view sees, deletions hidden.
*/
#ifndef RAVEL_DB_ITER_H
#define RAVEL_DB_ITER_H

#include "ravel_int.h"
#include "iter/iterator.h"
#include "db/visibility.h"

typedef struct rv_db_iter rv_db_iter;

/* Takes ownership of INTERNAL; VIEW is copied.  NULL on allocation
** failure (INTERNAL is destroyed then too). */
RAVEL_PRIVATE rv_db_iter *rv_db_iter_new(struct rv_iter *internal,
                                         const struct rv_read_view *view);
RAVEL_PRIVATE void rv_db_iter_free(rv_db_iter *it);
/* IT honours the range deletions AGG gathers (db/range_del_agg.h) and
** frees AGG with itself; the sources AGG points into outlive IT. */
struct rv_range_del_agg;
RAVEL_PRIVATE void rv_db_iter_take_range_dels(rv_db_iter *it,
                                              struct rv_range_del_agg *agg);
/* Replaces the bounds: user keys below LOWER (LLEN bytes) or at or above
** UPPER (ULEN bytes) are not shown; NULL: no bound.  Both are copied.
** Leaves the iterator unpositioned (an iterator stopped by an error stays
** stopped).  RAVEL_OK, or RAVEL_NOMEM with the old bounds kept. */
RAVEL_PRIVATE int rv_db_iter_set_bounds(rv_db_iter *it, const void *lower,
                                        size_t llen, const void *upper,
                                        size_t ulen);
RAVEL_PRIVATE int rv_db_iter_valid(const rv_db_iter *it);
RAVEL_PRIVATE void rv_db_iter_seek_to_first(rv_db_iter *it);
RAVEL_PRIVATE void rv_db_iter_seek_to_last(rv_db_iter *it);
/* First user key >= KEY (>= the lower bound when KEY is below it). */
RAVEL_PRIVATE void rv_db_iter_seek(rv_db_iter *it, const void *key,
                                   size_t klen);
/* Last user key <= KEY (< the upper bound when KEY is at or above it). */
RAVEL_PRIVATE void rv_db_iter_seek_for_prev(rv_db_iter *it, const void *key,
                                            size_t klen);
RAVEL_PRIVATE void rv_db_iter_next(rv_db_iter *it);
RAVEL_PRIVATE void rv_db_iter_prev(rv_db_iter *it);
/* Valid until the iterator moves. */
RAVEL_PRIVATE const char *rv_db_iter_key(const rv_db_iter *it, size_t *len);
RAVEL_PRIVATE const char *rv_db_iter_value(const rv_db_iter *it, size_t *len);
/* RAVEL_OK, or the internal iterator's error (or RAVEL_NOMEM). */
RAVEL_PRIVATE int rv_db_iter_status(const rv_db_iter *it);

#endif /* RAVEL_DB_ITER_H */
