/*
** compact_range.c -- ravel_compact_range: compacting a key range down to
** the last level holding data, in the calling thread.
**
** The memtables are flushed first.  Then level 0's files overlapping the
** range are compacted into the base level (compaction_picker.h), and
** level by level from there to the one above the last, the files
** overlapping the range into the next level (a file overlapping nothing there is moved, as an
** automatic compaction would); finally the last level's files in the
** range that this call did not just write are rewritten in place, so the
** deletions and overwritten versions they hold go.  Each step waits while
** a running compaction holds a file or an output range it needs
** (db->mu.compact.cv) and runs as an ordinary compaction (compaction.c)
** beside the background ones.
*/
#include "db/db.h"
#include "base/dbformat.h"
#include "util/error.h"

/* Compacts LEVEL's files overlapping the range into OUTPUT_LEVEL (under
** db->mu.lock; see rv_compaction_pick_range for MIN_NUMBER and ALLOW_MOVE). */
static int compact_range_step_locked(ravel_db *db, int level,
                                     int output_level, const char *begin,
                                     size_t blen, const char *end,
                                     size_t elen, uint64_t min_number,
                                     int allow_move)
    RV_REQUIRES(db->mu.lock);
static int compact_range_step_locked(ravel_db *db, int level,
                                     int output_level, const char *begin,
                                     size_t blen, const char *end,
                                     size_t elen, uint64_t min_number,
                                     int allow_move)
{
    for (;;) {
        if (rv_stop_code(&db->stop))
            return rv_stop_error(&db->stop, RAVEL_READONLY, "ravel_compact_"
                                 "range: database %s refuses writes until "
                                 "reopened", db->dir);
        int busy = 0;
        struct rv_compaction *c = rv_compaction_pick_range(
            &db->options, db->read.current->files, db->mu.compact.running,
            level, output_level, begin, blen, end, elen, min_number,
            allow_move, &busy);
        if (c)
            return rv_compaction_run_locked(db, c);
        if (busy < 0)
            return rv_error(RAVEL_NOMEM, "ravel_compact_range: out of "
                            "memory picking the files of level %d", level);
        if (!busy)
            return RAVEL_OK; /* nothing of the range at this level */
        rv_cond_wait(&db->mu.compact.cv, &db->mu.lock);
    }
}

static int compact_range_run(ravel_db *db, const char *begin, size_t blen,
                             const char *end, size_t elen)
{
    int rc = rv_db_flush(db, 0);
    if (rc)
        return rc;
    rv_mutex_lock(&db->mu.lock);
    uint64_t first_new = db->mu.files.next_file_number;
    int last = rv_files_deepest_level(db->read.current->files);
    if (last < 1)
        last = 1;
    /* level 0 goes to the base level (1 unless the level sizes are
    ** dynamic: the levels between are empty then), then level by level */
    struct rv_level_targets t;
    rv_level_targets_compute(&db->options, db->read.current->files, &t);
    int base = t.base_level < last ? t.base_level : last;
    rc = compact_range_step_locked(db, 0, base, begin, blen, end, elen,
                                   UINT64_MAX, 1);
    for (int l = base; l < last && rc == RAVEL_OK; l++)
        rc = compact_range_step_locked(db, l, l + 1, begin, blen, end, elen,
                                       UINT64_MAX, 1);
    if (rc == RAVEL_OK)
        rc = compact_range_step_locked(db, last, last, begin, blen, end,
                                       elen, first_new, 0);
    rv_mutex_unlock(&db->mu.lock);
    return rc;
}

int ravel_compact_range(ravel_db *db, const void *begin, size_t blen,
                        const void *end, size_t elen)
{
    int rc = rv_db_enter(db, "ravel_compact_range");
    if (rc)
        return rc;
    if (db->options.read_only)
        rc = rv_error(RAVEL_READONLY, "ravel_compact_range: database %s was "
                      "opened with read_only=true", db->dir);
    else if ((!begin && blen) || (!end && elen))
        rc = rv_error(RAVEL_INVALID, "ravel_compact_range: a NULL bound "
                      "with a non-zero length (%zu)", begin ? elen : blen);
    else if ((begin && blen > RAVEL_MAX_KEY_SIZE) ||
             (end && elen > RAVEL_MAX_KEY_SIZE))
        rc = rv_error(RAVEL_INVALID, "ravel_compact_range: a bound is longer "
                      "than RAVEL_MAX_KEY_SIZE");
    else if (begin && end && rv_user_key_compare(begin, blen, end, elen) > 0)
        rc = rv_error(RAVEL_INVALID, "ravel_compact_range: begin is after "
                      "end");
    else
        rc = compact_range_run(db, begin, blen, end, elen);
    rv_db_leave(db);
    return rc;
}
