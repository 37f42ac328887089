/*
** recovery.c -- replaying the write-ahead log into the active memtable on
** open.  The rules for telling a torn tail from corruption, and the
** recovery modes, belong to wal/wal_reader.c; this file lists the
** segments, hands every replayed batch to the memtable, makes what was
** replayed durable, and sets the sequence and segment numbers the writer
** goes on from.
**
** Why make it durable: after a kill -9, the dead process's last segment
** may still sit in the page cache, never fdatasynced.  This open serves
** its records and then starts a new segment; if a power loss later took
** the old segment's tail, the log would have a hole in its middle --
** acknowledged writes of the dead process missing while later ones are
** present.  So before the first new segment exists, every replayed segment
** is fdatasynced (the last one trimmed of its unused preallocated tail
** first; the others were trimmed when they were finished) and the
** directory fsynced.  The new segment's header then vouches for where the
** old one ends (wal_format.h, prev_end).  A read-only open changes nothing
** and creates no segment, so it has nothing to make durable.
*/
#include "db/batch.h"
#include "db/db.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/sync_journal.h"
#include "wal/wal_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int recovery_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Lists the WAL segments of the directory in ascending order. */
static int recovery_list_segments(ravel_db *db, uint64_t **out, int *count)
{
    DIR *d = opendir(db->dir);
    if (!d)
        return rv_error_errno(RAVEL_IOERR, errno, "opendir %s", db->dir);
    uint64_t *numbers = NULL;
    int n = 0, cap = 0, rc = RAVEL_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t number;
        if (!rv_wal_parse_segment_name(e->d_name, &number))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *p = realloc(numbers, (size_t)cap * sizeof *p);
            if (!p) {
                rc = rv_error(RAVEL_NOMEM, "out of memory listing %s", db->dir);
                break;
            }
            numbers = p;
        }
        numbers[n++] = number;
    }
    closedir(d);
    if (rc) {
        free(numbers);
        return rc;
    }
    if (n > 1)
        qsort(numbers, (size_t)n, sizeof *numbers, recovery_cmp_u64);
    *out = numbers;
    *count = n;
    return RAVEL_OK;
}

static int recovery_insert_op(void *ctx, uint64_t seq, int type,
                              const char *key, size_t klen, const char *val,
                              size_t vlen)
{
    return rv_memtable_add(ctx, seq, type, key, klen, val, vlen);
}

static int recovery_replay_record(void *ctx, const char *rep, size_t len)
{
    /* wal_reader.c validated the rep before handing it over */
    return rv_batch_apply(rep, len, rv_batch_rep_sequence(rep),
                          recovery_insert_op, ctx);
}

/* Makes segment NUMBER durable; when it is the last one, first trims it
** to END, where its data ends (the rest is unused preallocated space). */
static int recovery_sync_segment(ravel_db *db, uint64_t number, int last,
                                 uint64_t end)
{
    char path[RV_PATH_MAX];
    int rc = rv_wal_segment_path(path, db->dir, number);
    if (rc)
        return rc;
    int fd = rv_open(path, last ? O_WRONLY : O_RDONLY, 0);
    if (fd < 0) {
        if (errno == ENOENT)
            return RAVEL_OK; /* deleted by point_in_time recovery */
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "stat %s", path);
    else if (last && (uint64_t)st.st_size > end &&
             ftruncate(fd, (off_t)end) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "truncate %s to %llu bytes",
                            path, (unsigned long long)end);
    else if (fsync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fsync %s", path);
    else
        rv_sync_journal_file(fd, last && (uint64_t)st.st_size > end
                                     ? end : (uint64_t)st.st_size);
    close(fd);
    return rc;
}

/* Makes every replayed segment, and the directory, durable. */
static int recovery_make_durable(ravel_db *db, const uint64_t *numbers,
                                 int n, const struct rv_wal_replay_result *r)
{
    for (int i = 0; i < n && numbers[i] <= r->last_segment; i++) {
        int rc = recovery_sync_segment(db, numbers[i],
                                       numbers[i] == r->last_segment,
                                       r->last_end);
        if (rc)
            return rc;
    }
    return rv_sync_dir(db->dir);
}

int rv_db_recover(ravel_db *db)
{
    uint64_t *numbers = NULL;
    int n = 0;
    int rc = recovery_list_segments(db, &numbers, &n);
    if (rc)
        return rc;
    struct rv_wal_replay_result r;
    memset(&r, 0, sizeof r);
    rc = rv_wal_replay(db->dir, numbers, n, db->options.wal_recovery_mode,
                       db->options.read_only, recovery_replay_record,
                       db->current->mem, &r);
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = recovery_make_durable(db, numbers, n, &r);
    uint64_t first = n > 0 ? numbers[0] : 0;
    free(numbers);
    if (rc) {
        rv_db_log(db, "recovery failed: %s", rv_errmsg_get());
        return rc;
    }
    db->last_seq = r.max_sequence;
    /* The next segment follows the last one kept, so the log has no gap
    ** even where point_in_time deleted segments after it. */
    db->next_segment = (r.last_segment ? r.last_segment
                                       : r.highest_segment) + 1;
    db->wal_prev_end = r.last_segment ? r.last_end : 0;
    db->current->mem_wal = first ? first : db->next_segment;
    rv_db_log(db, "recovered %d WAL segment(s): %llu records replayed, "
              "%llu dropped, %llu tail bytes truncated, %llu holes skipped, "
              "last sequence %llu",
              n, (unsigned long long)r.records,
              (unsigned long long)r.records_dropped,
              (unsigned long long)r.bytes_truncated,
              (unsigned long long)r.holes,
              (unsigned long long)r.max_sequence);
    return RAVEL_OK;
}
