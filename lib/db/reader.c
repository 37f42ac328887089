/*
** reader.c -- a read-only handle that follows a live writer, in another
** process or none: building its state from the manifest and the WAL,
** catching up (ravel_catch_up and the automatic thread), the lag.
**
** A reader takes no lock (db_dir.c) and the writer knows nothing of it.
** What keeps the reader's files from being deleted under it is that it
** holds every table file of every version it uses OPEN (rv_file.hold_fd,
** version.h): an unlinked file's data lives as long as a descriptor does,
** so the writer deletes freely, a reader's reads never fail for it, and a
** reader that crashes holds nothing (the kernel closes its descriptors).
** WAL segments are copied into memory while they are replayed, so none
** is held after a catch-up (docs/design.md, "Readers in other processes",
** defends this against a shared reader table).
**
** A catch-up reads CURRENT and the manifest (the table files and the log
** number), then:
**   rebuild   when the manifest or its log number changed since the state
**             was built (a flush, or another writer's open): a new file
**             set (each file opened, or shared with the current version),
**             a new memtable replayed from every segment at or above the
**             log number;
**   tail      otherwise: the segments from where the last replay stopped
**             (segment, byte offset, sequence) are replayed into the
**             current memtable (the skiplist takes inserts beside reads;
**             the new entries are above every published sequence, so
**             nobody sees them until the new version is installed), and
**             a new file set is made if the manifest grew (a compaction,
**             an ingest).
** The replay ends at the first record that does not verify (a write in
** progress, or out of order under wal_io=direct): what is published is a
** prefix of the log, whole batches in commit order.  A segment is only
** followed by the next one when that one's header says the previous data
** ended where the replay ended (wal_reader.c's chain check).
**
** What can move under a catch-up: the writer deletes or recycles
** (wal_spare.c) the segments below the log number once a flush's edit is
** durable, and deletes table files a compaction's edit removed.  So after
** reading, the manifest is read again: if its number or log number
** changed, the segments read may have been recycled while they were read
** (a recycled segment reads as a shorter prefix, never as other data: its
** records are checksummed with their segment's number), and the attempt
** is thrown away and made again (READER_MAX_ATTEMPTS, then RAVEL_BUSY).  A
** table file that vanished between the manifest and its open is the same
** case.  An error that the writer's moving does not explain is returned.
**
** Publication: a version carries the sequence its reads use
** (rv_version.visible_seq), so a read that loads a version reads at that
** version's sequence -- version and sequence change as one.
*/
#include "db/reader.h"
#include "db/db.h"
#include "base/batchrepr.h"
#include "base/dbformat.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "wal/wal_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READER_MAX_ATTEMPTS 100
/* Internal: the writer moved files under the attempt; make it again. */
#define READER_RETRY (-1)

/* What the manifest says, read by one catch-up attempt. */
struct reader_manifest {
    struct rv_version_edit files; /* the live table files, as one edit */
    uint64_t number, size, log_number;
};

/* --------------------------------------------------------- the manifest */

/* Applies one manifest edit to the file list being read. */
static int reader_apply_edit(void *ctx, struct rv_version_edit *e)
{
    struct reader_manifest *m = ctx;
    int rc = rv_version_edit_apply_files(&m->files, e);
    if (rc)
        return rc;
    if (e->has_log_number)
        m->log_number = e->log_number;
    return RAVEL_OK;
}

/* Reads CURRENT and the manifest it names into *M (a database without a
** manifest yet: no files, log number 0). */
static int reader_manifest_read(ravel_db *db, struct reader_manifest *m)
{
    memset(m, 0, sizeof *m);
    rv_version_edit_init(&m->files);
    struct rv_manifest_tail tail;
    memset(&tail, 0, sizeof tail);
    int rc = rv_manifest_replay(db->dir, reader_apply_edit, m, &m->number,
                                &tail);
    if (rc == RAVEL_NOTFOUND) {
        m->number = 0;
        return RAVEL_OK;
    }
    m->size = tail.size;
    return rc;
}

/* The manifest CURRENT names and its size, without reading it: 0, 0 when
** there is none.  Cheap: what a catch-up looks at first. */
static int reader_manifest_peek(ravel_db *db, uint64_t *number,
                                uint64_t *size)
{
    char path[RV_PATH_MAX], text[64];
    *number = *size = 0;
    int rc = rv_path_join(path, db->dir, RV_FILE_CURRENT);
    if (rc)
        return rc;
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? RAVEL_OK
                               : rv_error_errno(RAVEL_IOERR, errno, "open %s",
                                                path);
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return READER_RETRY; /* being replaced */
    text[n] = 0;
    text[strcspn(text, "\n")] = 0;
    if (!rv_parse_manifest_name(text, number))
        return READER_RETRY;
    struct stat st;
    rc = rv_path_join(path, db->dir, text);
    if (rc)
        return rc;
    if (stat(path, &st) != 0)
        return READER_RETRY; /* replaced meanwhile */
    *size = (uint64_t)st.st_size;
    return RAVEL_OK;
}

/* ------------------------------------------------------------ the files */

static struct rv_file *reader_find_file(const struct rv_files *fs,
                                        uint64_t number)
{
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < fs->n[l]; i++)
            if (fs->level[l][i]->meta.number == number)
                return fs->level[l][i];
    return NULL;
}

/* A file for META, opened and held open (version.h, hold_fd).
** READER_RETRY if it is gone: a compaction deleted it after the manifest
** was read. */
static int reader_open_file(ravel_db *db, const struct rv_file_meta *meta,
                            struct rv_file **out)
{
    char path[RV_PATH_MAX];
    int rc = rv_table_file_path(path, db->dir, meta->number);
    if (rc)
        return rc;
    if (meta->level >= db->options.num_levels)
        return rv_error(RAVEL_INVALID, "table file %06llu is at level %d, "
                        "but num_levels=%d: open with num_levels=%d or more",
                        (unsigned long long)meta->number, meta->level,
                        db->options.num_levels, meta->level + 1);
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? READER_RETRY
                               : rv_error_errno(RAVEL_IOERR, errno, "open %s",
                                                path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = rv_error_errno(RAVEL_IOERR, errno, "stat %s", path);
        close(fd);
        return rc;
    }
    if ((uint64_t)st.st_size != meta->size) {
        close(fd);
        return rv_error(RAVEL_CORRUPT, "%s holds %llu bytes, but the "
                        "manifest says it holds %llu", path,
                        (unsigned long long)st.st_size,
                        (unsigned long long)meta->size);
    }
    *out = rv_db_new_file(db, meta);
    if (!*out) {
        close(fd);
        return rv_error(RAVEL_NOMEM, "out of memory opening %s", path);
    }
    (*out)->hold_fd = fd;
    return RAVEL_OK;
}

/* The file set M names: each file shared with BASE when BASE has it, else
** opened.  *MAX_SEQ receives the largest sequence in any of them. */
static int reader_file_set(ravel_db *db, const struct reader_manifest *m,
                           const struct rv_files *base, struct rv_files **out,
                           uint64_t *max_seq)
{
    int n = m->files.n_added, made = 0, rc = RAVEL_OK;
    struct rv_file **files = calloc((size_t)n + 1, sizeof *files);
    if (!files)
        return rv_error(RAVEL_NOMEM, "out of memory for a file set");
    *max_seq = 0;
    for (; made < n && rc == RAVEL_OK; made++) {
        const struct rv_file_meta *meta = &m->files.added[made];
        struct rv_file *f = reader_find_file(base, meta->number);
        if (f && f->meta.level == meta->level)
            rv_file_ref(f);
        else if ((rc = reader_open_file(db, meta, &f)) != RAVEL_OK)
            break;
        files[made] = f;
        if (meta->largest_seq > *max_seq)
            *max_seq = meta->largest_seq;
    }
    *out = NULL;
    if (rc == RAVEL_OK) {
        struct rv_files *empty = rv_files_new_empty();
        *out = empty ? rv_files_apply(empty, files, n, NULL) : NULL;
        if (empty)
            rv_files_unref(empty);
        if (!*out)
            rc = rv_error(RAVEL_NOMEM, "out of memory for a file set");
    }
    for (int i = 0; i < made; i++)
        rv_file_unref(files[i]); /* the set holds its own */
    free(files);
    return rc;
}

/* ------------------------------------------------------------- the WAL */

static int reader_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The WAL segments of the directory numbered FROM or above, ascending. */
static int reader_list_wal(ravel_db *db, uint64_t from, uint64_t **out,
                           int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(db->dir);
    if (!d)
        return rv_error_errno(RAVEL_IOERR, errno, "opendir %s", db->dir);
    int cap = 0, rc = RAVEL_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t number;
        if (!rv_wal_parse_segment_name(e->d_name, &number) || number < from)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *p = realloc(*out, (size_t)cap * sizeof *p);
            if (!p) {
                rc = rv_error(RAVEL_NOMEM, "out of memory listing %s",
                              db->dir);
                break;
            }
            *out = p;
        }
        (*out)[(*n)++] = number;
    }
    closedir(d);
    if (*n > 1)
        qsort(*out, (size_t)*n, sizeof **out, reader_cmp_u64);
    return rc;
}

/* What a replay inserts into. */
struct reader_replay {
    rv_memtable *mem;
    struct rv_db_prepared prepared; /* scratch: tells prepares apart */
};

static int reader_insert_op(void *ctx, uint64_t seq, int type,
                            const char *key, size_t klen, const char *val,
                            size_t vlen)
{
    if (rv_type_is_txn_marker(type))
        return RAVEL_OK; /* a commit's data is in its own record */
    return rv_memtable_add(ctx, seq, type, key, klen, val, vlen);
}

/* A replayed record: a prepared transaction's writes are never inserted
** (they become visible with their commit record, which holds them); any
** other batch is. */
static int reader_replay_record(void *ctx, const char *rep, size_t len)
{
    struct reader_replay *rr = ctx;
    int prepare = rv_prepared_replay_record(&rr->prepared, rep, len);
    if (prepare < 0)
        return -prepare;
    if (prepare)
        return RAVEL_OK;
    rv_memtable_count_entries(rr->mem, rv_batch_rep_count(rep));
    return rv_batch_apply(rep, len, rv_batch_rep_sequence(rep),
                          reader_insert_op, rr->mem);
}

/* The recovery mode a reader replays with: point_in_time if asked, else
** the default, which ends a replay at a record being written; skipping
** bad records could publish a state with a hole in it. */
static enum rv_recovery_mode reader_mode(const ravel_db *db)
{
    return db->options.wal_recovery_mode == RV_RECOVERY_POINT_IN_TIME
               ? RV_RECOVERY_POINT_IN_TIME
               : RV_RECOVERY_TOLERATE_CORRUPTED_TAIL;
}

/* Replays into MEM the segments from SEGMENT on: all of each (TAIL 0,
** FIRST the log number) or, for a tail, the first from OFFSET on after
** sequence SEQ.  *R receives where it ended. */
static int reader_replay(ravel_db *db, rv_memtable *mem, int tail,
                         uint64_t segment, uint64_t offset, uint64_t seq,
                         struct rv_wal_replay_result *r)
{
    uint64_t *numbers;
    int n;
    int rc = reader_list_wal(db, segment, &numbers, &n);
    if (rc)
        return rc;
    if (tail && segment && offset && (n == 0 || numbers[0] != segment)) {
        free(numbers); /* the segment read last is gone: flushed */
        return READER_RETRY;
    }
    struct reader_replay rr = {.mem = mem};
    rv_prepared_init(&rr.prepared);
    if (tail)
        rc = rv_wal_replay_tail(db->dir, numbers, n, reader_mode(db),
                                offset, seq, reader_replay_record, &rr, r);
    else
        rc = rv_wal_replay(db->dir, segment, numbers, n, reader_mode(db), 1,
                           reader_replay_record, &rr, r);
    rv_prepared_destroy(&rr.prepared);
    free(numbers);
    return rc;
}

/* ------------------------------------------------------------- catch-up */

/* Whether the manifest still has the number and log number of M (read
** before the attempt): RAVEL_OK, READER_RETRY if not, or an error. */
static int reader_still(ravel_db *db, const struct reader_manifest *m)
{
    uint64_t number, size;
    int rc = reader_manifest_peek(db, &number, &size);
    if (rc)
        return rc;
    if (number != m->number)
        return READER_RETRY;
    if (size == m->size)
        return RAVEL_OK;
    struct reader_manifest now;
    rc = reader_manifest_read(db, &now);
    if (rc == RAVEL_OK && (now.number != m->number ||
                           now.log_number != m->log_number))
        rc = READER_RETRY;
    rv_version_edit_clear(&now.files);
    return rc;
}

/* An error met reading: READER_RETRY if the writer moved the manifest or
** its log number since M was read (which explains it), else RC. */
static int reader_explain(ravel_db *db, const struct reader_manifest *m,
                          int rc)
{
    if (rc == READER_RETRY || rc == RAVEL_NOMEM || rc == RAVEL_INVALID)
        return rc;
    char why[512];
    snprintf(why, sizeof why, "%s", rv_errmsg_get());
    int still = reader_still(db, m);
    if (still == READER_RETRY)
        return READER_RETRY;
    return rv_error(rc, "%s", why);
}

/* Makes the version of memtable MEM and file set FS (NULL: the current
** one's) current, read at sequence SEQ. */
static int reader_install(ravel_db *db, rv_memtable *mem, struct rv_files *fs,
                          uint64_t seq)
{
    rv_mutex_lock(&db->mu.lock);
    struct rv_version *cur = db->read.current;
    struct rv_version *v = rv_version_new(mem, 0, 0, fs ? fs : cur->files);
    if (!v) {
        rv_mutex_unlock(&db->mu.lock);
        return rv_error(RAVEL_NOMEM, "out of memory for a version");
    }
    v->visible_seq = seq;
    atomic_store_explicit(&db->write.last_seq, seq, memory_order_relaxed);
    /* release: pairs with the acquire of readers of the property */
    atomic_store_explicit(&db->write.last_visible_seq, seq,
                          memory_order_release);
    rv_db_install_version_locked(db, v);
    rv_mutex_unlock(&db->mu.lock);
    return RAVEL_OK;
}

/* The sequence reads see now. */
static uint64_t reader_visible(ravel_db *db)
{
    /* acquire: pairs with reader_install's release */
    return atomic_load_explicit(&db->write.last_visible_seq,
                                memory_order_acquire);
}

/* Records where a replay that began at (SEGMENT, OFFSET) after sequence
** SEQ ended: the next tail goes on from there.  The WAL's own last
** sequence, not the one published (which may be a table file's, above
** records still to come in the WAL). */
static void reader_save_tail(ravel_db *db,
                             const struct rv_wal_replay_result *r,
                             uint64_t segment, uint64_t offset, uint64_t seq)
    RV_REQUIRES(db->reader.catch_up);
static void reader_save_tail(ravel_db *db,
                             const struct rv_wal_replay_result *r,
                             uint64_t segment, uint64_t offset, uint64_t seq)
{
    struct rv_db_reader *st = &db->reader;
    if (r->last_segment) {
        st->tail_segment = r->last_segment;
        st->tail_offset = r->last_end;
    } else {
        st->tail_segment = segment;
        st->tail_offset = offset;
    }
    st->tail_seq = r->max_sequence > seq ? r->max_sequence : seq;
}

/* A new state from M: its files and a memtable replayed from its log
** number on. */
static int reader_rebuild(ravel_db *db, const struct reader_manifest *m)
    RV_REQUIRES(db->reader.catch_up);
static int reader_rebuild(ravel_db *db, const struct reader_manifest *m)
{
    struct rv_files *fs = NULL;
    uint64_t files_seq = 0;
    struct rv_version *cur = rv_db_ref_version(db);
    int rc = reader_file_set(db, m, cur->files, &fs, &files_seq);
    rv_version_unref(cur);
    rv_memtable *mem = NULL;
    if (rc == RAVEL_OK && !(mem = rv_memtable_new(db->options.write_buffer_size)))
        rc = rv_error(RAVEL_NOMEM, "out of memory for a memtable");
    struct rv_wal_replay_result r;
    memset(&r, 0, sizeof r);
    if (rc == RAVEL_OK)
        rc = reader_replay(db, mem, 0, m->log_number, 0, 0, &r);
    if (rc == RAVEL_OK)
        rc = reader_still(db, m);
    uint64_t seq = r.max_sequence > files_seq ? r.max_sequence : files_seq;
    if (rc == RAVEL_OK && seq < reader_visible(db))
        rc = READER_RETRY; /* never publish an older state */
    if (rc == RAVEL_OK)
        rc = reader_install(db, mem, fs, seq);
    if (rc == RAVEL_OK) {
        struct rv_db_reader *st = &db->reader;
        st->have_state = 1;
        st->manifest_number = m->number;
        st->manifest_size = m->size;
        st->log_number = m->log_number;
        reader_save_tail(db, &r, m->log_number, 0, 0);
        atomic_fetch_add_explicit(&st->rebuilds, 1, memory_order_relaxed);
    } else {
        rc = reader_explain(db, m, rc);
    }
    if (mem)
        rv_memtable_unref(mem);
    if (fs)
        rv_files_unref(fs);
    return rc;
}

/* The log number is what the state was built with: the WAL from where
** the last replay ended goes into the current memtable; if the manifest
** grew (M not NULL), the files are taken from it. */
static int reader_tail(ravel_db *db, const struct reader_manifest *m)
    RV_REQUIRES(db->reader.catch_up);
static int reader_tail(ravel_db *db, const struct reader_manifest *m)
{
    struct rv_db_reader *st = &db->reader;
    struct reader_manifest same = {.number = st->manifest_number,
                                   .size = st->manifest_size,
                                   .log_number = st->log_number};
    if (!m)
        m = &same;
    struct rv_version *cur = rv_db_ref_version(db);
    struct rv_files *fs = NULL;
    uint64_t files_seq = 0;
    int rc = m != &same ? reader_file_set(db, m, cur->files, &fs, &files_seq)
                        : RAVEL_OK;
    struct rv_wal_replay_result r;
    memset(&r, 0, sizeof r);
    if (rc == RAVEL_OK) {
        rc = reader_replay(db, cur->mem, 1, st->tail_segment, st->tail_offset,
                           st->tail_seq, &r);
        if (rc && r.records)
            st->have_state = 0; /* unpublished entries: rebuild next */
    }
    int moved = 0;
    if (rc == RAVEL_OK) {
        int still = reader_still(db, m);
        moved = still == READER_RETRY; /* publish, then rebuild */
        if (still && !moved)
            rc = still;
    }
    uint64_t seq = r.max_sequence > files_seq ? r.max_sequence : files_seq;
    if (seq < reader_visible(db))
        seq = reader_visible(db);
    if (rc == RAVEL_OK && (fs || seq != reader_visible(db)))
        rc = reader_install(db, cur->mem, fs, seq);
    if (rc == RAVEL_OK) {
        reader_save_tail(db, &r, st->tail_segment, st->tail_offset,
                         st->tail_seq);
        st->manifest_size = m->size;
        if (moved)
            st->have_state = 0;
    } else {
        rc = reader_explain(db, m, rc);
    }
    if (fs)
        rv_files_unref(fs);
    rv_version_unref(cur);
    return rc == RAVEL_OK && moved ? READER_RETRY : rc;
}

/* One attempt: rebuild or tail, as the manifest says. */
static int reader_attempt(ravel_db *db) RV_REQUIRES(db->reader.catch_up);
static int reader_attempt(ravel_db *db)
{
    struct rv_db_reader *st = &db->reader;
    uint64_t number, size;
    int rc = reader_manifest_peek(db, &number, &size);
    if (rc)
        return rc;
    if (st->have_state && number == st->manifest_number &&
        size == st->manifest_size)
        return reader_tail(db, NULL);
    struct reader_manifest m;
    rc = reader_manifest_read(db, &m);
    if (rc)
        rc = READER_RETRY; /* replaced or appended to while read */
    else if (m.number == 0 && st->manifest_number != 0)
        /* CURRENT gone from a database that had one: a state built from
        ** the WAL alone would lack every table file's data */
        rc = rv_error(RAVEL_BUSY, "catching up with %s: its CURRENT is "
                      "gone (the database is being repaired, restored or "
                      "deleted?): the reader keeps the state it has; try "
                      "again", db->dir);
    else if (st->have_state && m.number == st->manifest_number &&
             m.log_number == st->log_number)
        rc = reader_tail(db, &m);
    else
        rc = reader_rebuild(db, &m);
    rv_version_edit_clear(&m.files);
    return rc;
}

/* Releases the replaced versions no read holds any more (read_epoch.h):
** a writer's background thread nudges the epoch now and then, a reader
** has none, and a replaced version holds table files the writer may have
** deleted.  Two advances: a version is released two epochs after its
** retirement. */
static void reader_release_replaced(ravel_db *db)
{
    for (int i = 0; i < 2; i++) {
        rv_mutex_lock(&db->mu.lock);
        struct rv_version *list =
            rv_read_epoch_advance_locked(&db->read.epoch);
        rv_mutex_unlock(&db->mu.lock);
        rv_read_epoch_release(list);
    }
}

/* A catch-up; then, when it succeeded and THEN is not NULL, calls THEN
** with DB and CTX before another catch-up can run (its result is
** returned). */
static int reader_catch_up_then(ravel_db *db,
                                int (*then)(ravel_db *db, void *ctx),
                                void *ctx)
{
    struct rv_db_reader *st = &db->reader;
    int rc = READER_RETRY;
    rv_mutex_lock(&db->reader.catch_up);
    for (int i = 0; i < READER_MAX_ATTEMPTS && rc == READER_RETRY; i++) {
        if (i > 0) {
            atomic_fetch_add_explicit(&st->retries, 1, memory_order_relaxed);
            struct timespec pause = {0, 1000000L * (i < 10 ? 1 : 10)};
            nanosleep(&pause, NULL);
        }
        rc = reader_attempt(db);
    }
    int then_rc = RAVEL_OK;
    if (rc == RAVEL_OK && then)
        then_rc = then(db, ctx);
    rv_mutex_unlock(&db->reader.catch_up);
    reader_release_replaced(db);
    if (rc == READER_RETRY)
        rc = rv_error(RAVEL_BUSY, "catching up with %s: the writer moved its "
                      "log (flushes, or a reopen) under each of %d attempts; "
                      "try again", db->dir, READER_MAX_ATTEMPTS);
    if (rc == RAVEL_OK) {
        atomic_fetch_add_explicit(&st->catch_ups, 1, memory_order_relaxed);
        atomic_store_explicit(&st->last_ok_us, rv_now_micros(),
                              memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&st->failures, 1, memory_order_relaxed);
    }
    return rc ? rc : then_rc;
}

static int reader_catch_up(ravel_db *db)
{
    return reader_catch_up_then(db, NULL, NULL);
}

int rv_reader_catch_up_then(ravel_db *db, int (*then)(ravel_db *db,
                                                      void *ctx),
                            void *ctx)
{
    return reader_catch_up_then(db, then, ctx);
}

uint64_t rv_reader_top_number_locked(ravel_db *db)
{
    struct rv_db_reader *st = &db->reader;
    uint64_t top = st->manifest_number;
    if (st->log_number > top)
        top = st->log_number;
    if (st->tail_segment > top)
        top = st->tail_segment;
    return top;
}

int ravel_catch_up(ravel_db *db)
{
    int rc = rv_db_enter(db, "ravel_catch_up");
    if (rc)
        return rc;
    if (!db->options.read_only)
        rc = RAVEL_OK; /* the writer is always caught up with itself */
    else
        rc = reader_catch_up(db);
    rv_db_leave(db);
    return rc;
}

/* ------------------------------------------------- the automatic thread */

static void *reader_thread(void *arg)
{
    ravel_db *db = arg;
    struct rv_db_reader *st = &db->reader;
    int64_t ms = db->options.catch_up_interval_ms;
    pthread_mutex_lock(&st->wake_mu);
    while (!st->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!st->stop &&
               pthread_cond_timedwait(&st->wake, &st->wake_mu, &until) == 0)
            ;
        if (st->stop)
            break;
        pthread_mutex_unlock(&st->wake_mu);
        /* a failure is counted and shown by ravel.reader-lag; the next
        ** round tries again */
        (void)reader_catch_up(db);
        pthread_mutex_lock(&st->wake_mu);
    }
    pthread_mutex_unlock(&st->wake_mu);
    return NULL;
}

int rv_reader_open(ravel_db *db)
{
    struct rv_db_reader *st = &db->reader;
    int rc = reader_catch_up(db);
    if (rc || db->options.catch_up_interval_ms <= 0)
        return rc;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_destroy(&st->wake);
    pthread_cond_init(&st->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&st->thread, NULL, reader_thread, db) != 0)
        return rv_error_errno(RAVEL_IOERR, errno, "starting the catch-up "
                              "thread of %s", db->dir);
    st->thread_started = 1;
    return RAVEL_OK;
}

void rv_reader_close(ravel_db *db)
{
    struct rv_db_reader *st = &db->reader;
    if (!st->thread_started)
        return;
    pthread_mutex_lock(&st->wake_mu);
    st->stop = 1;
    pthread_cond_broadcast(&st->wake);
    pthread_mutex_unlock(&st->wake_mu);
    pthread_join(st->thread, NULL);
    st->thread_started = 0;
}

char *rv_reader_lag_property(ravel_db *db)
{
    struct rv_db_reader *st = &db->reader;
    char *out = malloc(512);
    if (!out)
        return NULL;
    if (!db->options.read_only) {
        snprintf(out, 512, "writer: sequence=%llu\n",
                 (unsigned long long)reader_visible(db));
        return out;
    }
    /* relaxed: statistics */
    uint64_t last = atomic_load_explicit(&st->last_ok_us,
                                         memory_order_relaxed);
    uint64_t now = rv_now_micros();
    snprintf(out, 512,
             "sequence=%llu\nms_since_catch_up=%llu\ncatch_ups=%llu\n"
             "rebuilds=%llu\nretries=%llu\nfailures=%llu\n"
             "interval_ms=%lld\n",
             (unsigned long long)reader_visible(db),
             (unsigned long long)(now > last ? (now - last) / 1000 : 0),
             (unsigned long long)atomic_load_explicit(&st->catch_ups,
                                                      memory_order_relaxed),
             (unsigned long long)atomic_load_explicit(&st->rebuilds,
                                                      memory_order_relaxed),
             (unsigned long long)atomic_load_explicit(&st->retries,
                                                      memory_order_relaxed),
             (unsigned long long)atomic_load_explicit(&st->failures,
                                                      memory_order_relaxed),
             (long long)db->options.catch_up_interval_ms);
    return out;
}
