/*
** table_output.h -- the table files one flush or compaction writes: each
** started with a fresh file number, fdatasynced by its builder when
** finished, and listed with its metadata for the version edit; all of
** them deleted again if the job fails before the manifest names them.
**
** The job decides where a file ends (rv_table_output_cut) and never cuts
** inside one user key's versions, so the files of a level >= 1 never
** share a user key.
*/
#ifndef RAVEL_TABLE_OUTPUT_H
#define RAVEL_TABLE_OUTPUT_H

#include "ravel_int.h"
#include "db/db.h"
#include "db/keep.h"
#include "table/table_builder.h"
#include "util/filename.h"

struct rv_table_output {
    ravel_db *db;
    int level;                  /* of the files written */
    /* finished files */
    struct rv_file_meta *files;
    int n, cap;
    uint64_t bytes, entries;
    /* the file being written */
    int fd;
    char path[RV_PATH_MAX];
    uint64_t number;
    rv_table_builder *tb;
    struct rv_key_buf smallest, largest;
};

/* Starts an output of files at LEVEL for DB (nothing is created yet). */
RAVEL_PRIVATE void rv_table_output_init(struct rv_table_output *o,
                                        ravel_db *db, int level);

/* Adds one entry (internal key K, value V), starting a file if none is
** open. */
RAVEL_PRIVATE int rv_table_output_add(struct rv_table_output *o,
                                      const char *k, size_t klen,
                                      const char *v, size_t vlen);

/* Adds the range tombstone [BEGIN, END) @ SEQ (user keys) to the file
** being written, starting one if none is open; the file's bounds are
** widened over it when it is finished (rv_table_builder_add_range_del).
** The caller gives each file only the part of a tombstone inside it. */
RAVEL_PRIVATE int rv_table_output_add_range_del(struct rv_table_output *o,
                                                const char *begin,
                                                size_t blen,
                                                const char *end,
                                                size_t elen, uint64_t seq);

/* Bytes of the file being written so far (0 if none is open). */
RAVEL_PRIVATE uint64_t rv_table_output_file_size(
    const struct rv_table_output *o);

/* 1 if internal key K would start a new user key in the open file (so a
** cut before it is allowed). */
RAVEL_PRIVATE int rv_table_output_new_user_key(const struct rv_table_output
                                               *o, const char *k,
                                               size_t klen);

/* Finishes the open file (if any) and lists it. */
RAVEL_PRIVATE int rv_table_output_cut(struct rv_table_output *o);

/* Deletes every file written (finished or open): the job failed before
** the manifest could name them. */
RAVEL_PRIVATE void rv_table_output_discard(struct rv_table_output *o);

/* Frees the list (the files stay). */
RAVEL_PRIVATE void rv_table_output_free(struct rv_table_output *o);

#endif /* RAVEL_TABLE_OUTPUT_H */
