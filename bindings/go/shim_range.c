/*
** shim_range.c -- the shims declared in shim_range.h.
*/
#include "shim_range.h"

static shim_status range_status(int rc)
{
    shim_status s = {rc, NULL};
    if (rc != RAVEL_OK) {
        size_t len = ravel_errmsg_r(NULL, 0);
        s.msg = malloc(len + 1);
        if (s.msg)
            ravel_errmsg_r(s.msg, len + 1);
    }
    return s;
}

shim_status shim_delete_range(ravel_db *db, int flags, const void *begin,
                              size_t blen, const void *end, size_t elen)
{
    return range_status(ravel_delete_range(db, flags, begin, blen, end,
                                           elen));
}

shim_status shim_batch_delete_range(ravel_batch *b, const void *begin,
                                    size_t blen, const void *end,
                                    size_t elen)
{
    return range_status(ravel_batch_delete_range(b, begin, blen, end,
                                                 elen));
}
