/*
** recovery.c -- replaying the write-ahead log into the active memtable on
** open.  The rules for telling a torn tail from corruption, and the
** recovery modes, belong to wal/wal_reader.c; this file lists the
** segments, hands every replayed batch to the memtable, and sets the
** sequence numbers and segment numbers the writer goes on from.
*/
#include "db/batch.h"
#include "db/db.h"
#include "util/error.h"
#include "util/filename.h"
#include "wal/wal_reader.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int rv_db_recover(ravel_db *db)
{
    uint64_t *numbers = NULL;
    int n = 0;
    int rc = recovery_list_segments(db, &numbers, &n);
    if (rc)
        return rc;
    struct rv_wal_replay_result r;
    memset(&r, 0, sizeof r);
    if (n > 0)
        rc = rv_wal_replay(db->dir, numbers, n, db->options.wal_recovery_mode,
                           db->options.read_only, recovery_replay_record,
                           db->current->mem, &r);
    uint64_t first = n > 0 ? numbers[0] : 0;
    free(numbers);
    if (rc) {
        rv_db_log(db, "recovery failed: %s", rv_errmsg_get());
        return rc;
    }
    db->last_seq = r.max_sequence;
    db->next_segment = (r.last_segment > first ? r.last_segment : first) + 1;
    db->current->mem_wal = first ? first : db->next_segment;
    rv_db_log(db, "recovered %d WAL segment(s): %llu records replayed, "
              "%llu dropped, %llu tail bytes truncated, last sequence %llu",
              n, (unsigned long long)r.records,
              (unsigned long long)r.records_dropped,
              (unsigned long long)r.bytes_truncated,
              (unsigned long long)r.max_sequence);
    return RAVEL_OK;
}
