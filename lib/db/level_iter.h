/*
** level_iter.h -- one iterator over all the files of a sorted level
** (level_iter.c).
*/
#ifndef RAVEL_LEVEL_ITER_H
#define RAVEL_LEVEL_ITER_H

#include "ravel_int.h"
#include "db/table_cache.h"
#include "iter/iterator.h"

struct rv_range_del_agg;

/* An iterator over FILES (N of them, sorted by key, not overlapping),
** which must stay referenced while it exists, reading blocks as FLAGS
** (RV_TABLE_READ_*) say; NULL on OOM.  Each file it opens gives AGG (if
** not NULL, which outlives the iterator) its range deletions
** (range_del_agg.h). */
RAVEL_PRIVATE struct rv_iter *rv_level_iter_new(rv_table_cache *tc,
                                                struct rv_file *const *files,
                                                int n, int flags,
                                                struct rv_range_del_agg *agg);

#endif /* RAVEL_LEVEL_ITER_H */
