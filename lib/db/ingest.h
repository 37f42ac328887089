/*
** ingest.h -- ravel_ingest: table files written by ravel_sst_writer added
** to a live database, atomically.  ingest.c owns the call: checking the
** files, the exclusive writer, copying them under a new sequence;
** ingest_as_is.c the other way in, placing them as they are.  This header
** holds what the two share.
*/
#ifndef RAVEL_INGEST_H
#define RAVEL_INGEST_H

#include "ravel_int.h"
#include "db/db.h"
#include "db/table_output.h"
#include "table/table.h"

/* Both written by the calling thread alone (the exclusive writer's FN
** runs in it), read by the validating threads before they start. */
/* One file being ingested. */
struct rv_ingest_file {
    const char *path;             /* the caller's */
    rv_table *t;                  /* open, external */
    const char *smallest, *largest; /* user keys (in T) */
    size_t smallest_len, largest_len;
};

/* One call of ravel_ingest. */
struct rv_ingest_job {
    ravel_db *db;
    struct rv_ingest_file *files; /* sorted by smallest key */
    size_t n;
    uint64_t seq;                 /* S, once taken */
    int seq_taken;
    int levels[RV_NUM_LEVELS];    /* files placed per level (for the LOG) */
    struct rv_table_output out;   /* files[i] -> out.files[i] */
    struct rv_compaction *guards; /* n of them, linked while registered */
    int guarded;
    int logged;                   /* the manifest edit was attempted: the
                                  ** files are never deleted here then */
    int move;                     /* RAVEL_INGEST_MOVE */
    int fast;                     /* placed as they are, at sequence 0 */
    int linked;                   /* files hard-linked (the rest copied) */
    uint64_t entries;
};

/* 1 if MEM holds a key within a file's range of J, -1 out of memory. */
RAVEL_PRIVATE int rv_ingest_memtable_overlaps(const struct rv_ingest_job *j,
                                              rv_memtable *mem);

/* 1 if a file of level L of FS overlaps F's range. */
RAVEL_PRIVATE int rv_ingest_level_overlaps(const struct rv_files *fs, int l,
                                           const struct rv_ingest_file *f);

/* 1 if a running compaction of the list C reads or writes level L over
** F's range: its output may land anywhere from its input level to its
** output level. */
RAVEL_PRIVATE int rv_ingest_compaction_overlaps(const struct rv_compaction *c,
                                                int l,
                                                const struct rv_ingest_file *f);

/* Whether J's files can go in as they are (ingest_as_is.c). */
RAVEL_PRIVATE int rv_ingest_as_is_ok_locked(ravel_db *db,
                                            const struct rv_ingest_job *j)
    RV_REQUIRES(db->mu.lock);

#define RV_INGEST_NOT_AS_IS (-1) /* the conditions went: copy instead */

/* Places J's files as they are: RAVEL_OK, RV_INGEST_NOT_AS_IS (nothing
** left of the attempt), or a failure (ingest_as_is.c). */
RAVEL_PRIVATE int rv_ingest_as_is(struct rv_ingest_job *j);

#endif /* RAVEL_INGEST_H */
