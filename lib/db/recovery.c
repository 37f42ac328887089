/*
** recovery.c -- opening a database's state: reading the manifest (the
** table files and the WAL log number), replaying the WAL segments the
** manifest does not cover into the active memtable, making what was
** replayed durable, and -- unless read-only -- starting a new manifest
** and deleting the files nothing needs: table files no manifest names
** (left by a flush that crashed before its manifest record), WAL segments
** below the log number (flushed), older manifests.
**
** The rules for telling a torn WAL tail from corruption, and the recovery
** modes, belong to wal/wal_reader.c; the manifest's to db/manifest.c.
**
** Why make the replayed WAL durable: after a kill -9, the dead process's
** last segment may still sit in the page cache, never fdatasynced.  This
** open serves its records and then starts a new segment; if a power loss
** later took the old segment's tail, the log would have a hole in its
** middle -- acknowledged writes of the dead process missing while later
** ones are present.  So before the first new segment exists, every
** replayed segment is fdatasynced (the last one trimmed of its unused
** preallocated tail first; the others were trimmed when they were
** finished) and the directory fsynced.  The new segment's header then
** vouches for where the old one ends (wal_format.h, prev_end).  A
** read-only open changes nothing and creates no segment, so it has
** nothing to make durable.
**
** Every table file the manifest names must exist with the size it
** records: a missing or shortened one is RAVEL_CORRUPT naming it (its
** data cannot be found anywhere else: the WAL segments that held it were
** deleted).
**
** A manifest whose damaged last record replay dropped as a torn append
** (manifest.h) is held to what a torn append implies: the record never
** became durable, so nothing that only its durability allowed can have
** happened -- every table file the records before it name is still there
** (a compaction deletes its inputs only after its record is durable), and
** so is the WAL segment at their log number (a flush deletes segments only
** after its record is durable).  Anything missing proves the record was
** durable and then damaged: RAVEL_CORRUPT naming the manifest and the
** offset, in every recovery mode (those are about the WAL).  And an open
** never deletes what it cannot prove obsolete: after a dropped record, the
** table files no manifest names and the damaged manifest itself are moved
** into lost/, not deleted (docs/formats.md).
*/
#include "db/batch.h"
#include "db/db.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/sync_journal.h"
#include "wal/wal_archive.h"
#include "wal/wal_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the directory holds, by kind. */
struct recovery_listing {
    uint64_t *wal;           /* WAL segment numbers, ascending */
    int n_wal, cap_wal;
    uint64_t *tables;        /* table file numbers */
    int n_tables, cap_tables;
    uint64_t *manifests;     /* manifest numbers */
    int n_manifests, cap_manifests;
    uint64_t max_file_number; /* of tables and manifests */
};

/* What the manifest says. */
struct recovery_state {
    struct rv_version_edit files; /* the live files, as one edit */
    uint64_t log_number, next_file_number, last_sequence;
    uint64_t closed_segment; /* the last edit says the database closed
                             ** cleanly, its log ending here; or 0 */
    uint64_t manifest_number;
    int have_manifest;
    struct rv_manifest_tail tail; /* where the manifest's replay ended */
};


static int recovery_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int recovery_push(uint64_t **a, int *n, int *cap, uint64_t v)
{
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 16;
        uint64_t *p = realloc(*a, (size_t)c * sizeof *p);
        if (!p)
            return -1;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}

static void recovery_listing_free(struct recovery_listing *l)
{
    free(l->wal);
    free(l->tables);
    free(l->manifests);
}

/* Lists the WAL segments, table files and manifests of the directory. */
static int recovery_list(ravel_db *db, struct recovery_listing *l)
{
    memset(l, 0, sizeof *l);
    DIR *d = opendir(db->dir);
    if (!d)
        return rv_error_errno(RAVEL_IOERR, errno, "opendir %s", db->dir);
    int failed = 0;
    struct dirent *e;
    while (!failed && (e = readdir(d)) != NULL) {
        uint64_t number;
        if (rv_wal_parse_segment_name(e->d_name, &number)) {
            failed = recovery_push(&l->wal, &l->n_wal, &l->cap_wal, number);
            continue;
        }
        if (rv_parse_table_file_name(e->d_name, &number))
            failed = recovery_push(&l->tables, &l->n_tables, &l->cap_tables,
                                   number);
        else if (rv_parse_manifest_name(e->d_name, &number))
            failed = recovery_push(&l->manifests, &l->n_manifests,
                                   &l->cap_manifests, number);
        else
            continue;
        if (number > l->max_file_number)
            l->max_file_number = number;
    }
    closedir(d);
    if (failed) {
        recovery_listing_free(l);
        return rv_error(RAVEL_NOMEM, "out of memory listing %s", db->dir);
    }
    if (l->n_wal > 1)
        qsort(l->wal, (size_t)l->n_wal, sizeof *l->wal, recovery_cmp_u64);
    return RAVEL_OK;
}

/* ------------------------------------------------------------ manifest */

/* Applies one manifest edit to the state being rebuilt. */
static int recovery_apply_edit(void *ctx, struct rv_version_edit *e)
{
    struct recovery_state *st = ctx;
    int rc = rv_version_edit_apply_files(&st->files, e);
    if (rc)
        return rc;
    if (e->has_log_number)
        st->log_number = e->log_number;
    if (e->has_next_file_number)
        st->next_file_number = e->next_file_number;
    if (e->has_last_sequence)
        st->last_sequence = e->last_sequence;
    st->closed_segment = e->closed_segment; /* only the last edit's counts */
    return RAVEL_OK;
}

/* Counts the files a manifest's edits add (replaying one without CURRENT). */
static int recovery_count_files(void *ctx, struct rv_version_edit *e)
{
    *(int *)ctx += e->n_added;
    return RAVEL_OK;
}

/* CURRENT is missing.  That is a database that never had a manifest (new,
** or made before table files existed), or one whose first manifest was
** written but whose first CURRENT a crash or power loss took (CURRENT is
** replaced by rename, so once there it is never missing): then no manifest
** names a table file.  Anything else -- table files, a manifest naming
** some -- means CURRENT was lost, and which files make up the database is
** unknown. */
static int recovery_without_current(ravel_db *db,
                                    const struct recovery_listing *l)
{
    int rc = RAVEL_OK, named = 0;
    for (int i = 0; i < l->n_manifests && rc == RAVEL_OK && !named; i++) {
        struct rv_manifest_tail tail;
        rc = rv_manifest_replay_file(db->dir, l->manifests[i],
                                     recovery_count_files, &named, &tail);
        /* A manifest that never became current may be torn anywhere (its
        ** fdatasync may not have completed): nothing relied on it. */
        if (rc == RAVEL_CORRUPT) {
            rv_db_log(db, "ignoring a manifest that never became current: "
                      "%s", rv_errmsg_get());
            rc = RAVEL_OK;
        }
    }
    if (rc == RAVEL_OK && (l->n_tables || named))
        rc = rv_error(RAVEL_CORRUPT, "%s/%s is missing, but the directory "
                      "holds %d manifest(s) (naming table files: %s) and %d "
                      "table file(s): without it, which of them make up the "
                      "database is unknown", db->dir, RV_FILE_CURRENT,
                      l->n_manifests, named ? "yes" : "no", l->n_tables);
    return rc;
}

/* Reads CURRENT and the manifest it names. */
static int recovery_read_manifest(ravel_db *db,
                                  const struct recovery_listing *l,
                                  struct recovery_state *st)
{
    int rc = rv_manifest_replay(db->dir, recovery_apply_edit, st,
                                &st->manifest_number, &st->tail);
    if (rc == RAVEL_OK) {
        st->have_manifest = 1;
        return RAVEL_OK;
    }
    if (rc != RAVEL_NOTFOUND)
        return rc;
    return recovery_without_current(db, l);
}

static int recovery_has_segment(const struct recovery_listing *l,
                                uint64_t number)
{
    for (int i = 0; i < l->n_wal; i++)
        if (l->wal[i] == number)
            return 1;
    return 0;
}

/* The manifest's last record was dropped as a torn append: checks that
** nothing only its durability could have deleted is gone (the top of this
** file).  RAVEL_CORRUPT naming the manifest if something is. */
static int recovery_check_torn_manifest(ravel_db *db,
                                        const struct recovery_listing *l,
                                        const struct recovery_state *st)
{
    char gone[64] = "";
    for (int i = 0; i < st->files.n_added && !gone[0]; i++) {
        char path[RV_PATH_MAX];
        struct stat sb;
        uint64_t number = st->files.added[i].number;
        if (rv_table_file_path(path, db->dir, number) == RAVEL_OK &&
            stat(path, &sb) != 0 && errno == ENOENT)
            rv_table_file_name(gone, sizeof gone, number);
    }
    if (!gone[0] && st->log_number && !recovery_has_segment(l, st->log_number))
        rv_wal_segment_name(gone, sizeof gone, st->log_number);
    if (!gone[0]) {
        rv_db_log(db, "MANIFEST-%06llu: its last record, at byte offset "
                  "%llu (%s), was dropped as a torn append: every file the "
                  "records before it need is here",
                  (unsigned long long)st->manifest_number,
                  (unsigned long long)st->tail.dropped_at, st->tail.why);
        return RAVEL_OK;
    }
    return rv_error(RAVEL_CORRUPT, "%s/MANIFEST-%06llu: byte offset %llu: "
                    "record damaged (%s); it is the last record, but not a "
                    "torn append: %s, which only that record becoming "
                    "durable could have let go, is gone.  The manifest is "
                    "corrupt; no file was changed", db->dir,
                    (unsigned long long)st->manifest_number,
                    (unsigned long long)st->tail.dropped_at, st->tail.why,
                    gone);
}

/* Checks that every file the manifest names is there, whole. */
static int recovery_check_files(ravel_db *db, const struct recovery_state *st)
{
    for (int i = 0; i < st->files.n_added; i++) {
        const struct rv_file_meta *f = &st->files.added[i];
        if (f->level >= db->options.num_levels)
            return rv_error(RAVEL_INVALID, "table file %06llu is at level "
                            "%d, but num_levels=%d allows levels 0 .. %d: "
                            "open with num_levels=%d or more",
                            (unsigned long long)f->number, f->level,
                            db->options.num_levels,
                            db->options.num_levels - 1, f->level + 1);
        char path[RV_PATH_MAX];
        int rc = rv_table_file_path(path, db->dir, f->number);
        if (rc)
            return rc;
        struct stat sb;
        if (stat(path, &sb) != 0)
            return errno == ENOENT
                       ? rv_error(RAVEL_CORRUPT, "%s is missing, but "
                                  "MANIFEST-%06llu names it (level %d, %llu "
                                  "bytes)", path,
                                  (unsigned long long)st->manifest_number,
                                  f->level, (unsigned long long)f->size)
                       : rv_error_errno(RAVEL_IOERR, errno, "stat %s", path);
        if ((uint64_t)sb.st_size != f->size)
            return rv_error(RAVEL_CORRUPT, "%s holds %llu bytes, but "
                            "MANIFEST-%06llu says it holds %llu", path,
                            (unsigned long long)sb.st_size,
                            (unsigned long long)st->manifest_number,
                            (unsigned long long)f->size);
    }
    return RAVEL_OK;
}

/* The files of ST become the current version's file set. */
static int recovery_install_files(ravel_db *db, const struct recovery_state *st)
{
    int n = st->files.n_added;
    struct rv_file **files = calloc((size_t)n + 1, sizeof *files);
    int made = 0;
    for (; files && made < n; made++) {
        files[made] = rv_db_new_file(db, &st->files.added[made]);
        if (!files[made])
            break;
    }
    struct rv_files *fs = NULL;
    if (files && made == n)
        fs = rv_files_apply(db->read.current->files, files, n, NULL);
    for (int i = 0; i < made; i++)
        rv_file_unref(files[i]);
    free(files);
    if (!fs)
        return rv_error(RAVEL_NOMEM, "out of memory loading the file list");
    rv_files_unref(db->read.current->files);
    db->read.current->files = fs;
    return RAVEL_OK;
}

/* ------------------------------------------------------------ the WAL */

static int recovery_insert_op(void *ctx, uint64_t seq, int type,
                              const char *key, size_t klen, const char *val,
                              size_t vlen)
{
    ravel_db *db = ctx;
    if (rv_type_is_txn_marker(type)) { /* a prepared transaction resolved */
        if (vlen == 8)
            rv_prepared_replayed_marker(&db->prepared, type,
                                        rv_get_fixed64(val));
        return RAVEL_OK;
    }
    return rv_memtable_add(db->read.current->mem, seq, type, key, klen, val,
                           vlen);
}

static int recovery_replay_record(void *ctx, const char *rep, size_t len)
{
    ravel_db *db = ctx;
    /* wal_reader.c validated the rep before handing it over */
    int prepare = rv_prepared_replay_record(&db->prepared, rep, len);
    if (prepare < 0)
        return -prepare;
    if (prepare) /* kept aside until its commit or rollback */
        return RAVEL_OK;
    rv_memtable_count_entries(db->read.current->mem, rv_batch_rep_count(rep));
    return rv_batch_apply(rep, len, rv_batch_rep_sequence(rep),
                          recovery_insert_op, db);
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

/* ------------------------------------------- a new manifest, cleaning up */

/* Starts a new manifest holding the whole state as one edit (so the log
** of edits does not grow across opens), pointed at by CURRENT. */
static int recovery_new_manifest(ravel_db *db, const struct recovery_state *st)
{
    struct rv_version_edit e;
    rv_version_edit_init(&e);
    int rc = RAVEL_OK;
    for (int i = 0; i < st->files.n_added && rc == RAVEL_OK; i++)
        rc = rv_version_edit_add_file(&e, &st->files.added[i]);
    uint64_t number = db->mu.files.next_file_number++;
    e.has_log_number = 1;
    e.log_number = db->mu.files.log_number;
    e.has_next_file_number = 1;
    e.next_file_number = db->mu.files.next_file_number;
    e.has_last_sequence = 1;
    e.last_sequence = db->write.last_seq;
    if (rc == RAVEL_OK)
        rc = rv_manifest_create(db->dir, number, &e, &db->manifest.log);
    rv_version_edit_clear(&e);
    return rc;
}

static void recovery_unlink(ravel_db *db, const char *name, const char *why)
{
    char path[RV_PATH_MAX];
    if (rv_path_join(path, db->dir, name) != 0)
        return;
    if (unlink(path) == 0)
        rv_db_log(db, "deleted %s (%s)", name, why);
    else if (errno != ENOENT)
        rv_db_log(db, "could not delete %s (%s): %s", path, why,
                  strerror(errno));
}

/* Flushed WAL segment NUMBER, left behind by a flush that did not get
** to step 6, goes to archive/ for the change feed (WAL retention). */
static void recovery_archive(ravel_db *db, uint64_t number)
{
    int rc = rv_wal_archive_segment(db->dir, number);
    if (rc == RAVEL_OK)
        rv_db_log(db, "archived flushed WAL segment %llu",
                  (unsigned long long)number);
    else if (rc != RAVEL_NOTFOUND)
        rv_db_log(db, "could not archive flushed WAL segment %llu: %s",
                  (unsigned long long)number, rv_errmsg_get());
}

/* 1 if the state ST names table file NUMBER. */
static int recovery_names_table(const struct recovery_state *st,
                                uint64_t number)
{
    for (int j = 0; j < st->files.n_added; j++)
        if (st->files.added[j].number == number)
            return 1;
    return 0;
}

/* How recovery_keep_in_lost keeps a file: moved (rename), or linked (the
** file keeps its name too, until the caller lets it go). */
enum recovery_keep { RECOVERY_MOVE, RECOVERY_LINK };

/* Keeps NAME in DIR/lost/ (made if needed), under NAME or, if that is
** taken, NAME.1 ... NAME.999: for a person or a repair tool, out of the
** way of the next open.  Best effort, said in the LOG. */
static void recovery_keep_in_lost(ravel_db *db, const char *name,
                                  enum recovery_keep how, const char *why)
{
    char lost[RV_PATH_MAX], from[RV_PATH_MAX], to[RV_PATH_MAX + 16];
    if (rv_path_join(lost, db->dir, RV_DIR_LOST) ||
        rv_path_join(from, db->dir, name)) {
        rv_db_log(db, "could not keep %s in lost/ (%s): %s; left in place",
                  name, why, rv_errmsg_get());
        return;
    }
    if (mkdir(lost, 0755) != 0 && errno != EEXIST) {
        rv_db_log(db, "could not make %s to keep %s (%s): %s; left in place",
                  lost, name, why, strerror(errno));
        return;
    }
    snprintf(to, sizeof to, "%s/%s", lost, name);
    for (int i = 1; access(to, F_OK) == 0 && i < 1000; i++)
        snprintf(to, sizeof to, "%s/%s.%d", lost, name, i);
    if (access(to, F_OK) == 0) {
        rv_db_log(db, "lost/ holds 1000 copies of %s already; %s left in "
                  "place (%s)", name, from, why);
        return;
    }
    int failed = how == RECOVERY_MOVE ? rename(from, to) : link(from, to);
    if (failed) {
        rv_db_log(db, "could not keep %s as %s (%s): %s; left in place",
                  from, to, why, strerror(errno));
        return;
    }
    rv_sync_dir(lost);
    if (how == RECOVERY_MOVE)
        rv_sync_dir(db->dir);
    rv_db_log(db, "kept %s as %s (%s)", name, to, why);
}

/* After a manifest whose last record was dropped, and before the new
** manifest is switched in: moves the table files it does not name into
** lost/ (no manifest, old or new, names them), and links the damaged
** manifest there (CURRENT still names it until the switch).  Done first,
** so that a crash at any later point cannot let the next open, reading a
** manifest with nothing dropped, delete them as a flush's leftovers and
** an older manifest: the damage may have been something other than a torn
** append that no check could tell apart. */
static void recovery_keep_doubtful(ravel_db *db,
                                   const struct recovery_listing *l,
                                   const struct recovery_state *st)
{
    char name[32];
    for (int i = 0; i < l->n_tables; i++) {
        if (recovery_names_table(st, l->tables[i]))
            continue;
        rv_table_file_name(name, sizeof name, l->tables[i]);
        recovery_keep_in_lost(db, name, RECOVERY_MOVE, "no manifest names "
                              "it, but the manifest's last record was "
                              "dropped");
    }
    rv_manifest_name(name, sizeof name, st->manifest_number);
    recovery_keep_in_lost(db, name, RECOVERY_LINK, "the manifest whose last "
                          "record was dropped");
}

/* Deletes what the new manifest does not need: older manifests, table
** files it does not name (a flush, compaction or ingest that crashed
** before its record; after a dropped record recovery_keep_doubtful moved
** them away first), WAL segments below the log number (archived instead
** with WAL retention, and the archive purged), and the spares the replay
** found after the log's end (the new segment takes the first one's
** number).  Best effort: what is left is deleted by the next open. */
static void recovery_delete_obsolete(ravel_db *db,
                                     const struct recovery_listing *l,
                                     const struct recovery_state *st,
                                     const struct rv_wal_replay_result *r)
{
    char name[32];
    for (int i = 0; i < l->n_manifests; i++) {
        if (l->manifests[i] == rv_manifest_number(db->manifest.log))
            continue;
        rv_manifest_name(name, sizeof name, l->manifests[i]);
        recovery_unlink(db, name, "an older manifest");
    }
    for (int i = 0; i < l->n_tables; i++) {
        if (recovery_names_table(st, l->tables[i]))
            continue;
        rv_table_file_name(name, sizeof name, l->tables[i]);
        recovery_unlink(db, name, "no manifest names it: a flush, "
                        "compaction or ingest that did not finish");
    }
    for (int i = 0; i < l->n_wal; i++) {
        rv_wal_segment_name(name, sizeof name, l->wal[i]);
        if (l->wal[i] < db->mu.files.log_number &&
            (!r->spare_from || l->wal[i] < r->spare_from) &&
            rv_db_wal_retained(db))
            recovery_archive(db, l->wal[i]);
        else if (l->wal[i] < db->mu.files.log_number &&
                 (!r->spare_from || l->wal[i] < r->spare_from))
            recovery_unlink(db, name, "flushed WAL segment");
        else if (r->spare_from && l->wal[i] >= r->spare_from)
            recovery_unlink(db, name, "a spare segment never started");
    }
    if (r->spare_from)
        rv_sync_dir(db->dir);
    rv_db_purge_wal_archive(db); /* retention off: archive/ emptied */
}

/* ------------------------------------------ the end of a cleanly closed log */

/* 1 if the manifest says the log was closed cleanly and the recovery
** mode refuses its loss (recovery_check_closed_log). */
static int recovery_closed_log_refused(const ravel_db *db,
                                       const struct recovery_state *st)
{
    enum rv_recovery_mode mode = db->options.wal_recovery_mode;
    return st->closed_segment && st->closed_segment >= st->log_number &&
           mode != RV_RECOVERY_POINT_IN_TIME &&
           mode != RV_RECOVERY_SKIP_ANY_CORRUPTED;
}

/* recovery_make_durable for the segments at or above LOG_NUMBER. */
static int recovery_make_durable_from(ravel_db *db,
                                      const struct recovery_listing *l,
                                      uint64_t log_number,
                                      const struct rv_wal_replay_result *r)
{
    int skip = 0;
    while (skip < l->n_wal && l->wal[skip] < log_number)
        skip++;
    return recovery_make_durable(db, l->wal + skip, l->n_wal - skip, r);
}

/* The manifest says the database was closed cleanly with its log ending in
** segment ST->closed_segment, sealed and durable: no crash or power loss
** can take that segment or cut it, so its loss is corruption in the modes
** that refuse what a power loss cannot explain (absolute_consistency, and
** the default); the others, which accept a prefix, say it in the LOG.
** R is the replay's result, or NULL before the replay (then only the
** segment's presence in the listing L is checked). */
static int recovery_check_closed_log(ravel_db *db,
                                     const struct recovery_listing *l,
                                     const struct recovery_state *st,
                                     const struct rv_wal_replay_result *r)
{
    uint64_t n = st->closed_segment;
    /* the manifest's log number: recovery raises db's past the last
    ** segment when it replayed nothing, which must not hide the loss */
    if (!n || n < st->log_number)
        return RAVEL_OK; /* not closed cleanly, or that segment is flushed */
    char name[32], what[160];
    rv_wal_segment_name(name, sizeof name, n);
    if (!r && !recovery_has_segment(l, n))
        snprintf(what, sizeof what, "%s is missing", name);
    else if (r && (r->last_segment != n || !r->last_sealed))
        snprintf(what, sizeof what, "%s no longer ends with its seal (the "
                 "log was cut; the replay ended in segment %llu)", name,
                 (unsigned long long)r->last_segment);
    else
        return RAVEL_OK;
    enum rv_recovery_mode mode = db->options.wal_recovery_mode;
    if (mode == RV_RECOVERY_POINT_IN_TIME ||
        mode == RV_RECOVERY_SKIP_ANY_CORRUPTED) {
        rv_db_log(db, "%s, though MANIFEST-%06llu says the database was "
                  "closed cleanly with its log ending there, sealed: "
                  "writes made before that close are lost (this recovery "
                  "mode accepts it)", what,
                  (unsigned long long)st->manifest_number);
        return RAVEL_OK;
    }
    return rv_error(RAVEL_CORRUPT, "%s/%s: MANIFEST-%06llu says the "
                    "database was closed cleanly with its log ending in "
                    "this segment, sealed and durable, so no crash or power "
                    "loss explains it (wal_recovery_mode=%s refuses the "
                    "lost writes)", db->dir, what,
                    (unsigned long long)st->manifest_number,
                    mode == RV_RECOVERY_ABSOLUTE_CONSISTENCY
                        ? "absolute_consistency"
                        : "tolerate_corrupted_tail_records");
}

/* ------------------------------------------------------------ the whole */

/* Replays the segments at or above the log number.  LOOK_ONLY: change no
** file (the caller checks what it found first, then makes it durable with
** recovery_make_durable). */
static int recovery_replay_wal(ravel_db *db, const struct recovery_listing *l,
                               struct rv_wal_replay_result *r, int *first,
                               int look_only)
{
    int skip = 0;
    while (skip < l->n_wal && l->wal[skip] < db->mu.files.log_number)
        skip++;
    const uint64_t *numbers = l->wal + skip;
    int n = l->n_wal - skip;
    memset(r, 0, sizeof *r);
    int rc = rv_wal_replay(db->dir, db->mu.files.log_number, numbers, n,
                           db->options.wal_recovery_mode,
                           db->options.read_only || look_only,
                           recovery_replay_record, db, r);
    if (rc == RAVEL_OK && !db->options.read_only && !look_only)
        rc = recovery_make_durable(db, numbers, n, r);
    *first = n;
    if (rc == RAVEL_OK) {
        uint64_t first_segment = n > 0 ? numbers[0] : 0;
        /* The next segment follows the last one kept, so the log has no
        ** gap even where point_in_time deleted segments after it.  When
        ** none was kept and the manifest says where the log starts, the
        ** log starts there again (the segments from there on are gone:
        ** never written, or deleted as damaged), so the next open finds
        ** its first segment where the manifest says.  Never below the log
        ** number. */
        if (r->last_segment)
            db->write.next_segment = r->last_segment + 1;
        else if (db->mu.files.log_number)
            db->write.next_segment = db->mu.files.log_number;
        else
            db->write.next_segment = r->highest_segment + 1;
        if (db->write.next_segment < db->mu.files.log_number)
            db->write.next_segment = db->mu.files.log_number;
        db->write.wal_prev_end = r->last_segment ? r->last_end : 0;
        db->read.current->mem_wal = first_segment ? first_segment
                                             : db->write.next_segment;
        /* Nothing replayed: no segment holds anything the memtables need,
        ** so the log starts at the new segment, and the new manifest lets
        ** the old ones go (else every open would leave one more). */
        if (r->records == 0 && !db->options.read_only) {
            db->mu.files.log_number = db->write.next_segment;
            db->read.current->mem_wal = db->write.next_segment;
        }
    }
    return rc;
}

static uint64_t recovery_max_file_seq(const struct recovery_state *st)
{
    uint64_t max = 0;
    for (int i = 0; i < st->files.n_added; i++)
        if (st->files.added[i].largest_seq > max)
            max = st->files.added[i].largest_seq;
    return max;
}

int rv_db_recover(ravel_db *db)
{
    struct recovery_listing l;
    struct recovery_state st;
    memset(&st, 0, sizeof st);
    rv_version_edit_init(&st.files);
    int rc = recovery_list(db, &l);
    if (rc) {
        rv_version_edit_clear(&st.files);
        return rc;
    }
    rc = recovery_read_manifest(db, &l, &st);
    if (rc == RAVEL_OK && st.tail.dropped_at)
        rc = recovery_check_torn_manifest(db, &l, &st);
    if (rc == RAVEL_OK)
        rc = recovery_check_files(db, &st);
    if (rc == RAVEL_OK)
        rc = recovery_install_files(db, &st);
    db->mu.files.log_number = st.log_number;
    db->mu.files.next_file_number = st.next_file_number > l.max_file_number
                               ? st.next_file_number : l.max_file_number + 1;
    if (db->mu.files.next_file_number == 0)
        db->mu.files.next_file_number = 1;

    struct rv_wal_replay_result r;
    int n_replayed = 0;
    /* A cleanly closed log is checked before the replay changes anything:
    ** the replay only looks, and what it found is made durable after the
    ** check (an open that refuses changes no file). */
    int look_only = recovery_closed_log_refused(db, &st);
    if (rc == RAVEL_OK)
        rc = recovery_check_closed_log(db, &l, &st, NULL);
    if (rc == RAVEL_OK) /* before the replay, which marks commits in it */
        rc = rv_prepared_load(&db->prepared, db->dir, db->options.read_only);
    if (rc == RAVEL_OK)
        rc = recovery_replay_wal(db, &l, &r, &n_replayed, look_only);
    if (rc == RAVEL_OK)
        rv_prepared_replay_done(&db->prepared, db->dir,
                                r.last_segment ? r.last_segment
                                               : r.highest_segment,
                                db->options.read_only);
    if (rc == RAVEL_OK)
        rc = recovery_check_closed_log(db, &l, &st, &r);
    if (rc == RAVEL_OK && look_only && !db->options.read_only)
        rc = recovery_make_durable_from(db, &l, st.log_number, &r);
    if (rc == RAVEL_OK) {
        db->write.last_seq = r.max_sequence;
        if (st.last_sequence > db->write.last_seq)
            db->write.last_seq = st.last_sequence;
        if (recovery_max_file_seq(&st) > db->write.last_seq)
            db->write.last_seq = recovery_max_file_seq(&st);
    }
    if (rc == RAVEL_OK && !db->options.read_only && st.tail.dropped_at)
        recovery_keep_doubtful(db, &l, &st);
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = recovery_new_manifest(db, &st);
    if (rc == RAVEL_OK && !db->options.read_only)
        recovery_delete_obsolete(db, &l, &st, &r);
    if (rc) {
        rv_db_log(db, "recovery failed: %s", rv_errmsg_get());
    } else {
        rv_db_log(db, "recovered %d table file(s) (log number %llu) and %d "
                  "WAL segment(s): %llu records replayed, %llu dropped, %llu "
                  "tail bytes truncated, %llu holes skipped, last sequence "
                  "%llu", st.files.n_added,
                  (unsigned long long)db->mu.files.log_number, n_replayed,
                  (unsigned long long)r.records,
                  (unsigned long long)r.records_dropped,
                  (unsigned long long)r.bytes_truncated,
                  (unsigned long long)r.holes,
                  (unsigned long long)db->write.last_seq);
    }
    recovery_listing_free(&l);
    rv_version_edit_clear(&st.files);
    return rc;
}
