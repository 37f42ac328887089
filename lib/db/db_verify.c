/*
** db_verify.c -- ravel_verify: reads every block of every table file of
** the current version and checks it (table.c's rv_table_verify), reporting
** the first damage by file and byte offset.
*/
#include "db/db.h"
#include "util/error.h"

static int verify_file(ravel_db *db, const struct rv_file *f)
{
    rv_cache_handle *h;
    int rc = rv_table_cache_find(db->tables, f, &h);
    if (rc)
        return rc;
    rc = rv_table_verify(rv_table_cache_table(h));
    rv_table_cache_release(db->tables, h);
    return rc;
}

int ravel_verify(ravel_db *db)
{
    int rc = rv_db_enter(db, "ravel_verify");
    if (rc)
        return rc;
    struct rv_version *v = rv_db_ref_version(db);
    for (int l = 0; l < RV_NUM_LEVELS && rc == RAVEL_OK; l++)
        for (int i = 0; i < v->files->n[l] && rc == RAVEL_OK; i++)
            rc = verify_file(db, v->files->level[l][i]);
    rv_version_unref(v);
    rv_db_leave(db);
    return rc;
}
