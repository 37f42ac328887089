/*
** updates.c -- the change feed (updates.h): ravel_updates_since and its
** iterator, which reads committed batches back from the WAL.
**
** Owns: the segment index, positioning at a sequence, following the log
** from one segment to the next, what a record shows in the feed, and
** RAVEL_EXPIRED.  Does not own: reading a live segment (wal/wal_tail.c),
** keeping flushed segments (wal/wal_archive.c, called by the flush).
**
** What the feed shows of a record (db/prepared.h has the records):
**   a plain batch                 as it is: its sequence, its ops
**   a batch ending with a commit  its ops without the marker: a prepared
**     marker (a prepared          transaction appears once, when it
**     transaction's commit)       commits, at its commit's sequence
**   a prepare, a rollback         nothing (their sequences are skipped)
** A one-step transaction's commit is a plain batch.  A record's sequences
** are s .. s + count - 1, its marker's included; the feed's batch carries
** s, and op i of it the sequence s + i, as in the database.
**
** Where the feed starts: the batch holding sequence FROM (the one with
** s <= FROM <= s + count - 1), or the first one after FROM when none holds
** it (sequences consumed without a WAL record: a prepare or rollback
** shown as nothing, bulk ingest, RAVEL_NO_WAL writes).
**
** When is FROM no longer available (RAVEL_EXPIRED)?  When the oldest
** segment left comes after FROM: its first record comes after FROM -- or,
** while it has no record yet (or, with wal_io=direct, no header yet),
** FROM is at or below the last sequence the handle knows was written.
** Whether or not it starts the log: one whose header's prev_end names a
** predecessor lost it (flushed and deleted, or purged from archive/), and
** one that starts the log (prev_end 0) may start it again after earlier
** sequences -- the first segment of a repaired database (its segments
** moved aside), of a checkpoint or restored backup whose state was all
** in table files -- so only a log whose first record is sequence 1 (or
** is still to come, nothing written) holds everything.  The log is the run of
** consecutive segment numbers that ends with the newest: older segments
** before a gap in the numbering do not count.  A sequence consumed
** without a record just before that record is then reported expired too,
** since nothing says what the deleted segments held.  Also when a segment the iterator was
** reading was recycled under it before it got to its end (wal_io=direct
** with recycle_log_file_num and no retention): the next segment says its
** predecessor ended further than what still verifies.
**
** How the iterator follows the log: within a segment, record by record
** with the tail reader; at the end of the verified data it goes on to
** segment N + 1 only once that exists and its prev_end is where segment
** N's data ended -- every segment is complete (fdatasynced whole) before
** the next one is created.  Otherwise it is at the end for now
** (RAVEL_NOTFOUND), and the next call looks again.
*/
#include "db/updates.h"
#include "base/batchrepr.h"
#include "base/dbformat.h"
#include "db/batch.h"
#include "db/db.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/filename.h"
#include "wal/wal_archive.h"
#include "wal/wal_tail.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Calls that find segment N + 1 not continuing N, with nothing more of N
** to read, before it is damage. */
#define FEED_MISMATCH_LIMIT 3
/* feed_advance: read segment N again before judging (internal, never
** returned to a caller). */
#define FEED_READ_AGAIN (-1)

struct ravel_updates {
    ravel_db *db;
    uint64_t from;           /* the sequence asked for (at least 1) */
    uint64_t last_seq;       /* the last sequence of the last record read
                             ** (0: none yet) */
    int check_gap;           /* started at the oldest segment, which does
                             ** not start the log: its first record must
                             ** not come after FROM */
    int mismatches;          /* calls that found N + 1 not continuing N
                             ** at TAIL.off == MISMATCH_OFF */
    uint64_t mismatch_off;   /* where N's data ended when N + 1 was last
                             ** found not continuing it (0: not yet) */
    int open;                /* TAIL has a segment */
    struct rv_wal_tail tail;
    struct ravel_batch batch;/* the current batch */
    int valid;               /* BATCH holds one */
    int stopped;             /* the error that stopped U (RAVEL_EXPIRED,
                             ** RAVEL_CORRUPT), returned by every later
                             ** call with ... */
    char *stopped_why;       /* ... its message (malloc'd; NULL: none) */
};

/* ------------------------------------------------------ the index */

void rv_feed_init(struct rv_db_feed *f)
{
    memset(f, 0, sizeof *f);
    rv_mutex_init(&f->lock);
}

void rv_feed_destroy(struct rv_db_feed *f)
{
    free(f->index);
    rv_mutex_destroy(&f->lock);
}

/* The index's position of NUMBER, or where it would go. */
static int feed_index_slot(const struct rv_db_feed *f, uint64_t number)
    RV_REQUIRES(f->lock);
static int feed_index_slot(const struct rv_db_feed *f, uint64_t number)
{
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (f->index[mid].number < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int feed_index_get(struct rv_db_feed *f, uint64_t number,
                          uint64_t *first_seq)
{
    rv_mutex_lock(&f->lock);
    int i = feed_index_slot(f, number);
    int found = i < f->n && f->index[i].number == number;
    if (found)
        *first_seq = f->index[i].first_seq;
    rv_mutex_unlock(&f->lock);
    return found;
}

/* Enters NUMBER's first sequence; out of memory it is only not kept. */
static void feed_index_put(struct rv_db_feed *f, uint64_t number,
                           uint64_t first_seq)
{
    rv_mutex_lock(&f->lock);
    int i = feed_index_slot(f, number);
    if (i < f->n && f->index[i].number == number)
        goto out;
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 64;
        struct rv_feed_entry *g = realloc(f->index, (size_t)cap * sizeof *g);
        if (!g)
            goto out;
        f->index = g;
        f->cap = cap;
    }
    memmove(f->index + i + 1, f->index + i,
            (size_t)(f->n - i) * sizeof *f->index);
    f->index[i] = (struct rv_feed_entry){number, first_seq};
    f->n++;
out:
    rv_mutex_unlock(&f->lock);
}

/* The first sequence of segment NUMBER: from the index, or read from its
** first batch record and entered.  RAVEL_NOTFOUND (no message) if it has
** no record yet, or is gone. */
static int feed_first_seq(ravel_db *db, uint64_t number, uint64_t *seq)
{
    if (feed_index_get(&db->feed, number, seq))
        return RAVEL_OK;
    struct rv_wal_tail t;
    rv_wal_tail_init(&t);
    int rc = rv_wal_tail_open(&t, db->dir, number);
    const char *rep;
    size_t len;
    while (rc == RAVEL_OK) {
        rc = rv_wal_tail_next(&t, &rep, &len);
        if (rc == RAVEL_OK && rv_batch_rep_count(rep) > 0)
            break;
    }
    if (rc == RAVEL_OK) {
        *seq = rv_batch_rep_sequence(rep);
        feed_index_put(&db->feed, number, *seq);
    }
    rv_wal_tail_release(&t);
    return rc;
}

/* --------------------------------------------------------- segments */

static int feed_number_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Adds the WAL segment numbers of directory PATH to *LIST. */
static int feed_list_dir(const char *path, uint64_t **list, int *n,
                         int *cap)
{
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOENT ? RAVEL_OK
                               : rv_error_errno(RAVEL_IOERR, errno,
                                                "change feed: opendir %s",
                                                path);
    int rc = RAVEL_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t number;
        if (!rv_wal_parse_segment_name(e->d_name, &number))
            continue;
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            uint64_t *g = realloc(*list, (size_t)*cap * sizeof *g);
            if (!g) {
                rc = rv_error(RAVEL_NOMEM, "change feed: out of memory "
                              "listing %s", path);
                break;
            }
            *list = g;
        }
        (*list)[(*n)++] = number;
    }
    closedir(d);
    return rc;
}

/* The segments of DB's log, in DIR and archive/, ascending, without
** duplicates (DIR is listed first: a segment archived meanwhile is then
** seen in one place or both, never in neither), from the last gap in
** the numbering on. */
static int feed_list(ravel_db *db, uint64_t **list, int *n)
{
    char sub[RV_PATH_MAX];
    int cap = 0;
    *list = NULL;
    *n = 0;
    int rc = feed_list_dir(db->dir, list, n, &cap);
    if (rc == RAVEL_OK)
        rc = rv_path_join(sub, db->dir, RV_DIR_ARCHIVE);
    if (rc == RAVEL_OK)
        rc = feed_list_dir(sub, list, n, &cap);
    if (rc) {
        free(*list);
        *list = NULL;
        *n = 0;
        return rc;
    }
    if (*n > 1)
        qsort(*list, (size_t)*n, sizeof **list, feed_number_cmp);
    int k = 0;
    for (int i = 0; i < *n; i++)
        if (k == 0 || (*list)[k - 1] != (*list)[i])
            (*list)[k++] = (*list)[i];
    /* the log is the run of consecutive numbers that ends with the newest:
    ** what lies before a gap was cut off from it (segments deleted
    ** between them, while retention was off) */
    int from = k;
    while (from > 0 && (from == k || (*list)[from - 1] + 1 == (*list)[from]))
        from--;
    memmove(*list, *list + from, (size_t)(k - from) * sizeof **list);
    *n = k - from;
    return RAVEL_OK;
}

/* RAVEL_EXPIRED for U: FIRST is the oldest sequence the WAL still has. */
static int feed_expired(const struct ravel_updates *u, uint64_t first)
{
    const struct ravel_options *o = &u->db->options;
    return rv_error(RAVEL_EXPIRED, "change feed: sequence %llu is no longer "
                    "in the WAL of %s: the oldest available is %llu "
                    "(flushed segments are kept only with wal_ttl_seconds "
                    "or wal_size_limit_mb, here %llu and %llu); start again "
                    "from a checkpoint", (unsigned long long)u->from,
                    u->db->dir, (unsigned long long)first,
                    (unsigned long long)o->wal_ttl_seconds,
                    (unsigned long long)o->wal_size_limit_mb);
}

/* The last sequence U's handle knows is in its WAL files or its table
** files: the last one published, since a batch is published only after
** its WAL write returned (the last one assigned would not do: a group's
** sequences are given out before its WAL write, and a segment looked at
** in between has no record of them yet).  feed_position reads it BEFORE
** it looks at any segment, so a segment with no record after that really
** lacks those batches.  0 with manual_wal_flush on the writer's handle,
** where a published batch may still be in its buffer: then nothing is
** judged gone while the oldest segment has no record. */
static uint64_t feed_last_written(const struct ravel_updates *u)
{
    if (u->db->options.manual_wal_flush && !u->db->options.read_only)
        return 0;
    /* acquire: pairs with the publisher's release */
    return atomic_load_explicit(&u->db->write.last_visible_seq,
                                memory_order_acquire);
}

/* No segment holds a record yet and the oldest has not even been started
** (wal_io=direct writes a segment's header with its first record): the
** batches up to the handle's last sequence are in no segment left.
** RAVEL_EXPIRED if U->from is among them, else RAVEL_NOTFOUND (U is
** positioned by a later call). */
static int feed_check_unstarted(struct ravel_updates *u, uint64_t last)
{
    return u->from <= last ? feed_expired(u, last + 1) : RAVEL_NOTFOUND;
}

/* U starts at segment OLDEST, the oldest left, which does not start the
** log: RAVEL_EXPIRED if its first record comes after U->from, or, when it
** has none yet, if U->from is at or below the last sequence the handle
** knows of (written before, so in a segment that is gone). */
static int feed_check_gap(struct ravel_updates *u, uint64_t oldest,
                          uint64_t last)
{
    uint64_t first;
    int rc = feed_first_seq(u->db, oldest, &first);
    if (rc == RAVEL_OK)
        return first > u->from ? feed_expired(u, first) : RAVEL_OK;
    if (rc != RAVEL_NOTFOUND)
        return rc;
    return u->from <= last ? feed_expired(u, last + 1) : RAVEL_OK;
}

/* Opens U's tail at the segment to start from (updates.h): RAVEL_OK,
** RAVEL_NOTFOUND when there is no segment yet, RAVEL_EXPIRED. */
static int feed_position(struct ravel_updates *u)
{
    uint64_t last = feed_last_written(u); /* before any segment is read */
    uint64_t *list;
    int n, rc = feed_list(u->db, &list, &n);
    if (rc)
        return rc;
    int start = -1;
    for (int i = n - 1; i >= 0 && start < 0; i--) {
        uint64_t seq;
        rc = feed_first_seq(u->db, list[i], &seq);
        if (rc == RAVEL_NOTFOUND)
            continue;
        if (rc)
            break;
        if (seq <= u->from)
            start = i;
    }
    if (rc == RAVEL_NOTFOUND)
        rc = RAVEL_OK;
    if (rc == RAVEL_OK && n == 0)
        rc = RAVEL_NOTFOUND;
    if (rc == RAVEL_OK)
        rc = rv_wal_tail_open(&u->tail, u->db->dir,
                              list[start < 0 ? 0 : start]);
    if (rc == RAVEL_NOTFOUND && start < 0)
        rc = feed_check_unstarted(u, last);
    if (rc == RAVEL_OK) {
        u->open = 1;
        /* every segment's first record comes after FROM: what came
        ** before the oldest is gone -- even where the oldest starts the
        ** log (prev_end 0), as a repaired database's, a checkpoint's or a
        ** restored backup's first segment does after sequences that are
        ** now only in table files */
        u->check_gap = start < 0;
        if (u->check_gap)
            rc = feed_check_gap(u, list[0], last);
    }
    free(list);
    return rc;
}

/* 1 if segment NUMBER is in neither DIR nor archive/. */
static int feed_gone(const struct ravel_updates *u, uint64_t number)
{
    char path[RV_PATH_MAX], arch[RV_PATH_MAX];
    return rv_wal_segment_path(path, u->db->dir, number) == 0 &&
           rv_wal_archive_path(arch, u->db->dir, number) == 0 &&
           access(path, F_OK) != 0 && access(arch, F_OK) != 0;
}

/* 1 if segment NUMBER has left DIR: it was flushed (archived or
** deleted), so the next one was made before that (a flush moves the log
** number to a segment that exists). */
static int feed_flushed(const struct ravel_updates *u, uint64_t number)
{
    char path[RV_PATH_MAX];
    return rv_wal_segment_path(path, u->db->dir, number) == 0 &&
           access(path, F_OK) != 0;
}

/* U's segment N has no more verified data: moves to N + 1 if it exists
** and continues N.  RAVEL_OK (moved), RAVEL_NOTFOUND (not yet),
** RAVEL_EXPIRED, RAVEL_CORRUPT. */
static int feed_advance(struct ravel_updates *u)
{
    uint64_t next = u->tail.number + 1, prev_end;
    int rc = rv_wal_tail_prev_end(u->db->dir, next, &prev_end);
    if (rc == RAVEL_NOTFOUND && feed_flushed(u, u->tail.number) &&
        feed_gone(u, next))
        return rv_error(RAVEL_EXPIRED, "change feed: WAL segment %llu was "
                        "deleted before the feed got to it (it had read up "
                        "to sequence %llu): start again from a checkpoint "
                        "(wal_ttl_seconds or wal_size_limit_mb keep "
                        "segments for it)", (unsigned long long)next,
                        (unsigned long long)u->last_seq);
    if (rc)
        return rc;
    if (prev_end && prev_end != u->tail.off) {
        /* N was read to its end while still being written, and N + 1
        ** says where it ended.  Read N again before judging: the
        ** descriptor the tail holds reads the rest even after N was
        ** deleted (a flush with no retention), and every new end of
        ** N's data earns one more look at once. */
        if (u->tail.off != u->mismatch_off) {
            u->mismatch_off = u->tail.off;
            u->mismatches = 0;
            return FEED_READ_AGAIN;
        }
        if (++u->mismatches < FEED_MISMATCH_LIMIT)
            return RAVEL_NOTFOUND;
        if (feed_gone(u, u->tail.number))
            return rv_error(RAVEL_EXPIRED, "change feed: WAL segment %llu "
                            "was deleted or recycled while the feed read it "
                            "(its data verifies up to byte offset %llu, "
                            "segment %llu says it ended at %llu): sequences "
                            "after %llu are lost to the feed; start again "
                            "from a checkpoint (wal_ttl_seconds or "
                            "wal_size_limit_mb keep segments for it)",
                            (unsigned long long)u->tail.number,
                            (unsigned long long)u->tail.off,
                            (unsigned long long)next,
                            (unsigned long long)prev_end,
                            (unsigned long long)u->last_seq);
        return rv_error(RAVEL_CORRUPT, "change feed: WAL segment %llu of %s "
                        "says segment %llu ended at byte offset %llu, but "
                        "its data verifies only up to byte offset %llu",
                        (unsigned long long)next, u->db->dir,
                        (unsigned long long)u->tail.number,
                        (unsigned long long)prev_end,
                        (unsigned long long)u->tail.off);
    }
    /* opened aside: if it fails (purged meanwhile), U stays where it was
    ** and the next call looks again */
    struct rv_wal_tail t;
    rv_wal_tail_init(&t);
    rc = rv_wal_tail_open(&t, u->db->dir, next);
    if (rc) {
        rv_wal_tail_release(&t);
        return rc;
    }
    rv_wal_tail_release(&u->tail);
    u->tail = t;
    u->mismatches = 0;
    u->mismatch_off = 0;
    return RAVEL_OK;
}

/* ---------------------------------------------------------- records */

/* What the feed shows of record REP (LEN bytes, validated): 1 with
** U->batch holding it, 0 for nothing (a prepare, a rollback), or a ravel
** code. */
static int feed_take(struct ravel_updates *u, const char *rep, size_t len)
{
    uint32_t count = rv_batch_rep_count(rep);
    size_t off = RV_BATCH_HEADER_SIZE, last_off = off;
    struct rv_batch_op op = {0};
    for (uint32_t i = 0; i < count; i++) {
        last_off = off;
        int rc = rv_batch_decode_op(rep, len, &off, i, &op);
        if (rc)
            return rc;
        if (rv_type_is_txn_marker(op.type) && i + 1 < count)
            return rv_error(RAVEL_CORRUPT, "change feed: a batch of %u ops "
                            "at sequence %llu has a transaction marker as "
                            "op %u, not last", count,
                            (unsigned long long)rv_batch_rep_sequence(rep),
                            i);
    }
    if (op.type == RV_TYPE_TXN_PREPARE || op.type == RV_TYPE_TXN_ROLLBACK)
        return 0;
    if (op.type == RV_TYPE_TXN_COMMIT) {
        len = last_off;
        count--;
    }
    int rc = rv_batch_assign(&u->batch, rep, len, count);
    return rc ? rc : 1;
}

/* The next record of U shown in the feed: RAVEL_OK, RAVEL_NOTFOUND at
** the end for now, or a failure. */
static int feed_next(struct ravel_updates *u)
{
    for (;;) {
        int rc;
        if (!u->open) {
            rc = feed_position(u);
            if (rc)
                return rc;
        }
        const char *rep;
        size_t len;
        rc = rv_wal_tail_next(&u->tail, &rep, &len);
        if (rc == RAVEL_NOTFOUND) {
            rv_pause_here(RV_PAUSE_FEED_END);
            rc = feed_advance(u);
            if (rc && rc != FEED_READ_AGAIN)
                return rc;
            continue;
        }
        if (rc)
            return rc;
        uint64_t seq = rv_batch_rep_sequence(rep);
        uint32_t count = rv_batch_rep_count(rep);
        if (count == 0)
            continue;
        if (seq <= u->last_seq)
            return rv_error(RAVEL_CORRUPT, "change feed: WAL segment %llu: "
                            "a batch at sequence %llu follows sequence %llu",
                            (unsigned long long)u->tail.number,
                            (unsigned long long)seq,
                            (unsigned long long)u->last_seq);
        if (u->check_gap && seq > u->from)
            return feed_expired(u, seq);
        u->check_gap = 0;
        u->last_seq = seq + count - 1;
        if (u->last_seq < u->from)
            continue;
        rc = feed_take(u, rep, len);
        if (rc == 1)
            return RAVEL_OK;
        if (rc)
            return rc;
    }
}

/* ------------------------------------------------------- public API */

int ravel_updates_since(ravel_db *db, uint64_t seq, int flags,
                        ravel_updates **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_updates_since: NULL out "
                        "pointer");
    *out = NULL;
    if (flags)
        return rv_error(RAVEL_INVALID, "ravel_updates_since: unknown flags "
                        "0x%x", (unsigned)flags);
    int rc = rv_db_enter(db, "ravel_updates_since");
    if (rc)
        return rc;
    struct ravel_updates *u = calloc(1, sizeof *u);
    if (!u) {
        rv_db_leave(db);
        return rv_error(RAVEL_NOMEM, "ravel_updates_since: out of memory");
    }
    u->db = db;
    u->from = seq ? seq : 1;
    rv_wal_tail_init(&u->tail);
    rv_batch_init(&u->batch);
    /* relaxed: close reads it only after the gate, which orders it; it
    ** refuses to close while a feed iterator is open, as for others */
    atomic_fetch_add_explicit(&db->read.live_iterators, 1,
                              memory_order_relaxed);
    /* positioned now, so that an expired sequence fails here */
    rc = feed_position(u);
    rv_db_leave(db);
    if (rc && rc != RAVEL_NOTFOUND) {
        ravel_updates_free(u);
        return rc;
    }
    *out = u;
    return RAVEL_OK;
}

int ravel_updates_next(ravel_updates *u)
{
    if (!u)
        return rv_error(RAVEL_INVALID, "ravel_updates_next: NULL iterator");
    int rc = rv_db_enter(u->db, "ravel_updates_next");
    if (rc)
        return rc;
    u->valid = 0;
    if (u->stopped) {
        rc = rv_error(u->stopped, "%s", u->stopped_why ? u->stopped_why
                                       : ravel_errstr(u->stopped));
    } else {
        rc = feed_next(u);
        if (rc == RAVEL_EXPIRED || rc == RAVEL_CORRUPT) {
            /* never read on past a gap or damage */
            u->stopped = rc;
            u->stopped_why = strdup(rv_errmsg_get());
        }
    }
    u->valid = rc == RAVEL_OK;
    rv_db_leave(u->db);
    return rc;
}

uint64_t ravel_updates_sequence(const ravel_updates *u)
{
    return u && u->valid ? rv_batch_rep_sequence(u->batch.rep) : 0;
}

const ravel_batch *ravel_updates_batch(const ravel_updates *u)
{
    return u && u->valid ? &u->batch : NULL;
}

uint64_t ravel_updates_last_sequence(const ravel_updates *u)
{
    return u ? u->last_seq : 0;
}

void ravel_updates_free(ravel_updates *u)
{
    if (!u)
        return;
    ravel_db *db = u->db;
    free(u->stopped_why);
    rv_wal_tail_release(&u->tail);
    rv_batch_release(&u->batch);
    free(u);
    /* release: the iterator's last use happens before close sees 0 (this
    ** call is not inside the gate) */
    atomic_fetch_sub_explicit(&db->read.live_iterators, 1,
                              memory_order_release);
}
