/*
** read_options.c -- making and setting ravel_readoptions (read_options.h).
**
** Owns: the defaults (the latest state, no bounds, the database's
** verify_checksums, fill_cache on) and the copies of the bound bytes, so
** that a caller may free its own at once.  Does not own: what a read does
** with them (db_read.c, db_iter.c, table.c).
*/
#include "db/read_options.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

int ravel_readoptions_new(ravel_readoptions **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_readoptions_new: out is NULL");
    *out = NULL;
    ravel_readoptions *ro = calloc(1, sizeof *ro);
    if (!ro)
        return rv_error(RAVEL_NOMEM, "ravel_readoptions_new: out of memory");
    ro->verify_checksums = RV_READ_OPTION_DEFAULT;
    ro->fill_cache = 1;
    *out = ro;
    return RAVEL_OK;
}

void ravel_readoptions_free(ravel_readoptions *ro)
{
    if (!ro)
        return;
    free(ro->lower);
    free(ro->upper);
    free(ro);
}

static int read_options_check(const ravel_readoptions *ro, const char *fn)
{
    if (!ro)
        return rv_error(RAVEL_INVALID, "%s: read options are NULL", fn);
    return RAVEL_OK;
}

int ravel_readoptions_set_snapshot(ravel_readoptions *ro,
                                   const ravel_snapshot *snap)
{
    int rc = read_options_check(ro, "ravel_readoptions_set_snapshot");
    if (rc)
        return rc;
    ro->snapshot = snap;
    return RAVEL_OK;
}

/* Replaces *DST (*DLEN bytes) by a copy of KEY (NULL: no bound). */
static int read_options_set_bound(ravel_readoptions *ro, char **dst,
                                  size_t *dlen, const void *key, size_t klen,
                                  const char *fn)
{
    int rc = read_options_check(ro, fn);
    if (rc)
        return rc;
    if (!key && klen)
        return rv_error(RAVEL_INVALID, "%s: key is NULL with length %zu "
                        "(NULL alone clears the bound)", fn, klen);
    if (klen > RAVEL_MAX_KEY_SIZE)
        return rv_error(RAVEL_INVALID, "%s: a bound of %zu bytes exceeds "
                        "RAVEL_MAX_KEY_SIZE (%u)", fn, klen,
                        RAVEL_MAX_KEY_SIZE);
    char *copy = NULL;
    if (key) {
        copy = malloc(klen ? klen : 1);
        if (!copy)
            return rv_error(RAVEL_NOMEM, "%s: out of memory for a bound of "
                            "%zu bytes", fn, klen);
        if (klen)
            memcpy(copy, key, klen);
    }
    free(*dst);
    *dst = copy;
    *dlen = key ? klen : 0;
    return RAVEL_OK;
}

int ravel_readoptions_set_iterate_lower_bound(ravel_readoptions *ro,
                                              const void *key, size_t klen)
{
    return read_options_set_bound(ro, ro ? &ro->lower : NULL,
                                  ro ? &ro->lower_len : NULL, key, klen,
                                  "ravel_readoptions_set_iterate_lower_bound");
}

int ravel_readoptions_set_iterate_upper_bound(ravel_readoptions *ro,
                                              const void *key, size_t klen)
{
    return read_options_set_bound(ro, ro ? &ro->upper : NULL,
                                  ro ? &ro->upper_len : NULL, key, klen,
                                  "ravel_readoptions_set_iterate_upper_bound");
}

int ravel_readoptions_set_verify_checksums(ravel_readoptions *ro, int verify)
{
    int rc = read_options_check(ro, "ravel_readoptions_set_verify_checksums");
    if (rc)
        return rc;
    ro->verify_checksums = verify != 0;
    return RAVEL_OK;
}

int ravel_readoptions_set_fill_cache(ravel_readoptions *ro, int fill)
{
    int rc = read_options_check(ro, "ravel_readoptions_set_fill_cache");
    if (rc)
        return rc;
    ro->fill_cache = fill != 0;
    return RAVEL_OK;
}
