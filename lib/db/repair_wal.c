/*
** repair_wal.c -- what repair reads of the WAL (repair.h,
** rv_repair_read_wal): every segment, replayed read-only in
** skip_any_corrupted_records mode, so records that fail their checksum
** are skipped and the reader resynchronises after them (wal_reader.c):
** the records after damage in the middle of a segment are kept.  A
** prepare record's writes are not data: they go to the prepared
** transactions' list (db/prepared.c), as at an open, and a commit record
** carries its transaction's writes itself.  The report names the
** sequence numbers missing between the records kept, and those missing
** at the end of a log that a clean close sealed but that no longer ends
** with its seal (cut, or its last segment gone).
*/
#include "db/repair.h"
#include "base/batchrepr.h"
#include "util/error.h"
#include "util/filename.h"
#include "wal/wal_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int repair_wal_op(void *ctx, uint64_t seq, int type, const char *key,
                         size_t klen, const char *val, size_t vlen)
{
    struct rv_repair *rp = ctx;
    if (rv_type_is_txn_marker(type)) { /* a prepared transaction resolved */
        if (vlen == 8)
            rv_prepared_replayed_marker(&rp->prepared, type,
                                        rv_get_fixed64(val));
        return RAVEL_OK;
    }
    if (seq > rp->max_seq)
        rp->max_seq = seq;
    if (rp->wal_flushed)
        return RAVEL_OK; /* in the tables, or replaced there since */
    rp->wal_entries++;
    return rv_memtable_add(rp->mem, seq, type, key, klen, val, vlen);
}

/* Notes the sequences missing before a record starting at SEQ. */
static void repair_wal_gap(struct rv_repair *rp, uint64_t seq, uint32_t n)
{
    if (rp->wal_next_seq && seq > rp->wal_next_seq &&
        rp->wal_gaps < (int)(sizeof rp->wal_gap_from /
                             sizeof rp->wal_gap_from[0])) {
        rp->wal_gap_from[rp->wal_gaps] = rp->wal_next_seq;
        rp->wal_gap_to[rp->wal_gaps] = seq - 1;
        rp->wal_gaps++;
    }
    rp->wal_next_seq = seq + n;
}

static int repair_wal_record(void *ctx, const char *rep, size_t len)
{
    struct rv_repair *rp = ctx;
    repair_wal_gap(rp, rv_batch_rep_sequence(rep), rv_batch_rep_count(rep));
    int prepare = rv_prepared_replay_record(&rp->prepared, rep, len);
    if (prepare < 0)
        return -prepare;
    if (prepare) /* not data until its commit */
        return RAVEL_OK;
    return rv_batch_apply(rep, len, rv_batch_rep_sequence(rep), repair_wal_op,
                          rp);
}

/* "wal-A.log to wal-B.log" for the N segments NUMBERS, into BUF. */
static void repair_segments_name(char *buf, size_t size,
                                 const uint64_t *numbers, int n)
{
    rv_wal_segment_name(buf, size, numbers[0]);
    if (n > 1) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, " to ");
        len = strlen(buf);
        rv_wal_segment_name(buf + len, size - len, numbers[n - 1]);
    }
}

/* Replays the N segments NUMBERS.  FLUSHED: they lie below the log number
** of a manifest read whole, so the tables it names hold their writes --
** or what replaced them since: a later deletion, compacted away with the
** value under it.  So their writes are not merged (a second copy would
** bring such a value back); their prepares and transaction markers are
** read, as at an open, and their damage loses nothing. */
static int repair_replay_segments(struct rv_repair *rp,
                                  const uint64_t *numbers, int n,
                                  int flushed)
{
    struct rv_wal_replay_result r;
    memset(&r, 0, sizeof r);
    rp->wal_next_seq = 0; /* no gap between two replays */
    rp->wal_flushed = flushed;
    uint64_t entries = rp->wal_entries;
    /* the first segment there may name a predecessor: one a flush let go */
    int rc = rv_wal_replay(rp->dir, numbers[0], numbers, n,
                           RV_RECOVERY_SKIP_ANY_CORRUPTED, 1,
                           repair_wal_record, rp, &r);
    if (rc == RAVEL_CORRUPT) {
        /* what skip mode cannot pass over: keep what came before it */
        rv_repair_say(&rp->report, flushed ? RAVEL_REPAIR_NOTE
                                            : RAVEL_REPAIR_LOST,
                      "WAL: the replay stopped at damage it cannot skip "
                      "(%s): the records after it are %s", rv_errmsg_get(),
                      flushed ? "in the tables" : "lost");
        rc = RAVEL_OK;
        r.records_dropped++;
    }
    if (rc)
        return rc;
    if (r.max_sequence > rp->max_seq)
        rp->max_seq = r.max_sequence;
    if (r.max_sequence > rp->seen_seq)
        rp->seen_seq = r.max_sequence;
    char segments[96];
    repair_segments_name(segments, sizeof segments, numbers, n);
    rp->wal_flushed = 0;
    if (flushed)
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "WAL (%s, flushed: "
                      "its writes, or what replaced them, are what the "
                      "tables hold): %llu batch%s read for their "
                      "transactions, their writes not merged",
                      segments, (unsigned long long)r.records,
                      r.records == 1 ? "" : "es");
    else
        rv_repair_say(&rp->report, RAVEL_REPAIR_KEPT,
                      "WAL (%s): %llu batch%s kept (%llu entr%s)", segments,
                      (unsigned long long)r.records,
                      r.records == 1 ? "" : "es",
                      (unsigned long long)(rp->wal_entries - entries),
                      rp->wal_entries - entries == 1 ? "y" : "ies");
    int damaged = r.records_dropped || r.holes || r.bytes_truncated;
    if (!flushed) {
        rp->wal_last = r.last_segment;
        rp->wal_last_sealed = r.last_sealed;
    }
    if (flushed || !damaged) {
        rp->wal_gaps = 0;
        return RAVEL_OK;
    }
    rp->damage = 1;
    rp->wal_damaged = 1;
    rp->wal_dropped += r.records_dropped;
    rv_repair_say(&rp->report, RAVEL_REPAIR_LOST, "WAL: %llu damaged "
                  "records skipped, %llu bytes of torn tail, %llu missing "
                  "segments: the writes they held are lost",
                  (unsigned long long)r.records_dropped,
                  (unsigned long long)r.bytes_truncated,
                  (unsigned long long)r.holes);
    for (int i = 0; i < rp->wal_gaps; i++)
        rv_repair_say(&rp->report, RAVEL_REPAIR_LOST, "WAL: sequences %llu "
                      "to %llu are missing between the records kept (lost "
                      "with the damage, or written without the WAL)",
                      (unsigned long long)rp->wal_gap_from[i],
                      (unsigned long long)rp->wal_gap_to[i]);
    return RAVEL_OK;
}

/* WHAT became of segment N, the one the log ended in at a clean close. */
static void repair_closed_segment_fate(const struct rv_repair *rp,
                                       uint64_t n, char *what, size_t size)
{
    char name[32];
    rv_wal_segment_name(name, sizeof name, n);
    if (!rv_repair_numbers_has(&rp->wal, n))
        snprintf(what, size, "%s is missing", name);
    else
        snprintf(what, size, "%s no longer ends with its seal (the replay "
                 "ended in segment %llu)", name,
                 (unsigned long long)rp->wal_last);
}

/* CURRENT's manifest, read whole, says the database was closed cleanly
** with its log ending in segment current_closed, sealed (db.c,
** db_record_clean_close; an open refuses the log otherwise, recovery.c).
** If the replay, undamaged, did not end there sealed, the log was cut or
** lost that segment: the sequences the manifest gave out above every one
** found in a table file or a WAL record are lost writes, reported as
** such; with none missing only the seal is lost. */
static void repair_check_closed_log(struct rv_repair *rp)
{
    uint64_t n = rp->current_closed;
    if (!rp->current_clean || !n || n < rp->current_log || rp->wal_damaged ||
        (rp->wal_last == n && rp->wal_last_sealed))
        return;
    char what[128];
    repair_closed_segment_fate(rp, n, what, sizeof what);
    if (rp->current_last_seq <= rp->seen_seq) {
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "WAL: %s, though "
                      "MANIFEST-%06llu says the database was closed cleanly "
                      "with its log ending there, sealed; every sequence it "
                      "gave out (to %llu) is in the files read: only the "
                      "seal is lost", what, (unsigned long long)rp->current,
                      (unsigned long long)rp->current_last_seq);
        return;
    }
    rp->damage = 1;
    rp->wal_cut_seqs = rp->current_last_seq - rp->seen_seq;
    rv_repair_say(&rp->report, RAVEL_REPAIR_LOST, "WAL: %s, though "
                  "MANIFEST-%06llu says the database was closed cleanly "
                  "with its log ending there, sealed: sequences %llu to "
                  "%llu, which it gave out, are in no table file or WAL "
                  "record read -- the writes that had them are lost (or "
                  "were deletions a compaction dropped)", what,
                  (unsigned long long)rp->current,
                  (unsigned long long)rp->seen_seq + 1,
                  (unsigned long long)rp->current_last_seq);
}

int rv_repair_read_wal(struct rv_repair *rp)
{
    if (!(rp->mem = rv_memtable_new(0)))
        return rv_error(RAVEL_NOMEM, "out of memory replaying the WAL");
    int rc = rv_prepared_load(&rp->prepared, rp->dir, 1);
    if (rc == RAVEL_NOMEM)
        return rc;
    if (rc) {
        rp->damage = 1;
        rv_repair_say(&rp->report, RAVEL_REPAIR_LOST, "prepared "
                      "transactions: %s; none is kept (their files are "
                      "moved aside)", rv_errmsg_get());
        rv_prepared_destroy(&rp->prepared);
        rv_prepared_init(&rp->prepared);
    }
    /* the segments a whole manifest says are flushed, then the others */
    int flushed = 0;
    while (rp->current_clean && flushed < rp->wal.n &&
           rp->wal.v[flushed] < rp->current_log)
        flushed++;
    rc = RAVEL_OK;
    if (flushed)
        rc = repair_replay_segments(rp, rp->wal.v, flushed, 1);
    if (!rc && rp->wal.n > flushed)
        rc = repair_replay_segments(rp, rp->wal.v + flushed,
                                    rp->wal.n - flushed, 0);
    if (!rc)
        repair_check_closed_log(rp);
    return rc;
}
