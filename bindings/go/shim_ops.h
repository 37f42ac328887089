/*
** shim_ops.h -- the shims of issue 22's calls (operating a live database:
** a reader's catch-up, checkpoints and backups, the change feed, bulk
** ingest, repair), made as shim.h's are: each copies ravel's message
** inside the C call that failed, keeps no pointer it was given, and never
** calls back into Go (ravel_backup_list's and ravel_repair's callbacks
** are C functions here that collect what they are given).
*/
#ifndef RAVEL_GO_SHIM_OPS_H
#define RAVEL_GO_SHIM_OPS_H

#include "shim.h"

/* The outcome of a call that returns a number. */
typedef struct shim_u64 {
    int rc;
    char *msg;
    uint64_t value;
} shim_u64;

/* readers, checkpoints, backups */
shim_status shim_catch_up(ravel_db *db);
shim_status shim_checkpoint(ravel_db *db, const char *dir);
/* VALUE the new backup's id */
shim_u64 shim_backup_create(ravel_db *db, const char *root);
/* DATA a malloc'd array of LEN uint64_t ids (free with ravel_free) */
shim_value shim_backup_list(const char *root);
shim_u64 shim_backup_info(const char *root, uint64_t id, int what);
shim_status shim_backup_verify(const char *root, uint64_t id);
shim_status shim_backup_restore(const char *root, uint64_t id,
                                const char *dir);
shim_status shim_backup_purge(const char *root, int keep);
shim_status shim_backup_write_file(ravel_db *db, const char *path);
shim_status shim_backup_write_fd(ravel_db *db, int fd);
shim_status shim_backup_restore_file(const char *path, const char *dir);
shim_status shim_backup_restore_fd(int fd, const char *dir);

/* the change feed: a batch's operation at *POS (RAVEL_NOTFOUND after the
** last, no message) */
typedef struct shim_op {
    int rc;
    char *msg;
    size_t pos;
    int op;
    const void *key;
    size_t klen;
    const void *val;
    size_t vlen;
} shim_op;
shim_op shim_batch_next_op(const ravel_batch *b, size_t pos);
shim_handle shim_batch_from_data(const void *data, size_t len);
shim_handle shim_updates_since(ravel_db *db, uint64_t seq);
/* ravel_updates_next; RAVEL_NOTFOUND has no message */
shim_status shim_updates_next(ravel_updates *u);

/* bulk ingest */
shim_handle shim_sst_writer_open(const char *path, const ravel_options *o);
shim_status shim_sst_writer_put(ravel_sst_writer *w, const void *key,
                                size_t klen, const void *val, size_t vlen);
shim_status shim_sst_writer_delete(ravel_sst_writer *w, const void *key,
                                   size_t klen);
/* VALUE the number of keys added */
shim_u64 shim_sst_writer_finish(ravel_sst_writer *w);
shim_status shim_ingest(ravel_db *db, const char *const *paths, size_t n,
                        int flags);

/* repair: DATA a malloc'd text of the report's lines, each "K line\n" with
** K the kind's digit (free with ravel_free), LEN its length */
shim_value shim_repair(const char *dir, const ravel_options *o);

#endif /* RAVEL_GO_SHIM_OPS_H */
