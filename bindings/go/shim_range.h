/*
** shim_range.h -- the shims of range deletes (issue 24, part 1), made as
** shim.h's are: each copies ravel's message inside the C call that
** failed and keeps no pointer it was given.
*/
#ifndef RAVEL_GO_SHIM_RANGE_H
#define RAVEL_GO_SHIM_RANGE_H

#include "shim.h"

shim_status shim_delete_range(ravel_db *db, int flags, const void *begin,
                              size_t blen, const void *end, size_t elen);
shim_status shim_batch_delete_range(ravel_batch *b, const void *begin,
                                    size_t blen, const void *end,
                                    size_t elen);

#endif /* RAVEL_GO_SHIM_RANGE_H */
