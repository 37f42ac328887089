/*
** repair.c -- ravel_repair (include/ravel.h, "repair"): the steps in
** order, the directory's files, and moving the originals aside.
**
** The steps, each finished before the next begins, so that an interrupted
** repair loses nothing and can simply be run again:
**   1. take the LOCK (RAVEL_LOCKED if the database is open anywhere);
**   2. read: the manifests (what they prove), the table files' good
**      blocks, the WAL's good records (repair_files.c, repair_wal.c);
**   3. if everything verified and is in its place, stop: nothing to do;
**   4. merge and write new table files, numbered above every file in the
**      directory, each fdatasynced, then the directory fsynced
**      (repair_output.c);
**   5. move every original file (the files a manifest proves obsolete
**      first, so none outlives the manifest that says so; then CURRENT,
**      so no open can use a manifest half moved away) into
**      lost-repair-YYYYmmddTHHMMSS/, and fsync both directories;
**   6. write the prepared transactions still waiting back as files, then
**      a new manifest naming the new tables, and CURRENT (manifest.c:
**      durable before CURRENT names it).
** A crash before 5 leaves the originals in place (and new tables no
** manifest names, which an open deletes), as does one in 5 before
** CURRENT is moved (but for obsolete files); after that, a directory
** without a usable CURRENT (an open refuses it) holding the new tables,
** which hold everything read: a second run merges them again.
*/
#include "db/repair.h"
#include "base/batchrepr.h"
#include "db/manifest.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/lockfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define REPAIR_IDENTITY "ravel-db 1\n" /* db_dir.c's, on disk */

/* ------------------------------------------------------- the directory */

static int repair_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void repair_sort(struct rv_repair_numbers *ns)
{
    if (ns->n > 1) /* an empty list has no array at all */
        qsort(ns->v, (size_t)ns->n, sizeof *ns->v, repair_cmp_u64);
}

/* 1 for the files repair leaves where they are. */
static int repair_stays(const char *name)
{
    return strcmp(name, RV_FILE_IDENTITY) == 0 ||
           strcmp(name, RV_FILE_LOCK) == 0 ||
           strcmp(name, RV_FILE_LOG) == 0 ||
           strcmp(name, RV_FILE_LOG_OLD) == 0 ||
           strcmp(name, RV_WAL_PROBE_CACHE) == 0 ||
           strcmp(name, RV_DIR_LOST) == 0;
}

static int repair_add_aside(struct rv_repair *rp, const char *name)
{
    if (rp->n_aside == rp->cap_aside) {
        int cap = rp->cap_aside ? rp->cap_aside * 2 : 32;
        char **a = realloc(rp->aside, (size_t)cap * sizeof *a);
        if (!a)
            return rv_error(RAVEL_NOMEM, "out of memory listing %s", rp->dir);
        rp->aside = a;
        rp->cap_aside = cap;
    }
    if (!(rp->aside[rp->n_aside] = strdup(name)))
        return rv_error(RAVEL_NOMEM, "out of memory listing %s", rp->dir);
    rp->n_aside++;
    return RAVEL_OK;
}

/* Reads CURRENT: RP->current is the manifest it names (0: unreadable). */
static void repair_read_current(struct rv_repair *rp)
{
    char path[RV_PATH_MAX], *text = NULL;
    size_t len = 0;
    if (rv_path_join(path, rp->dir, RV_FILE_CURRENT) ||
        rv_read_file(path, &text, &len, NULL))
        return;
    text[len] = '\0';
    if (len > 0 && text[len - 1] == '\n')
        text[len - 1] = '\0';
    if (!rv_parse_manifest_name(text, &rp->current))
        rp->current = 0;
    free(text);
}

/* 1 if IDENTITY holds what db_dir.c writes. */
static int repair_identity_whole(struct rv_repair *rp)
{
    char path[RV_PATH_MAX], *text = NULL;
    size_t len = 0;
    if (rv_path_join(path, rp->dir, RV_FILE_IDENTITY) ||
        rv_read_file(path, &text, &len, NULL))
        return 0;
    int whole = len == strlen(REPAIR_IDENTITY) &&
                memcmp(text, REPAIR_IDENTITY, len) == 0;
    free(text);
    return whole;
}

/* Sorts one entry NAME of the directory. */
static int repair_list_entry(struct rv_repair *rp, const char *name)
{
    uint64_t number;
    int rc = RAVEL_OK;
    if (strcmp(name, RV_FILE_IDENTITY) == 0 && repair_identity_whole(rp))
        rp->has_identity = 1;
    else if (strcmp(name, RV_FILE_IDENTITY) == 0)
        return repair_add_aside(rp, name); /* damaged: written again */
    if (strcmp(name, RV_FILE_CURRENT) == 0)
        rp->has_current = 1;
    if (!rv_is_database_file_name(name) || repair_stays(name))
        return RAVEL_OK;
    if (rv_wal_parse_segment_name(name, &number))
        rc = rv_repair_numbers_add(&rp->wal, number);
    else if (rv_parse_table_file_name(name, &number))
        rc = rv_repair_numbers_add(&rp->tables, number);
    else if (rv_parse_manifest_name(name, &number))
        rc = rv_repair_numbers_add(&rp->manifests, number);
    else
        number = 0;
    if (!rc && !rv_wal_parse_segment_name(name, &(uint64_t){0}) &&
        number > rp->max_number)
        rp->max_number = number;
    if (!rc)
        rc = repair_add_aside(rp, name);
    return rc;
}

static int repair_list(struct rv_repair *rp)
{
    DIR *d = opendir(rp->dir);
    if (!d)
        return rv_error_errno(errno == ENOENT || errno == ENOTDIR
                                  ? RAVEL_INVALID : RAVEL_IOERR,
                              errno, "ravel_repair: open directory %s",
                              rp->dir);
    int rc = RAVEL_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL)
        rc = repair_list_entry(rp, e->d_name);
    closedir(d);
    if (rc)
        return rc;
    if (!rp->has_identity && rp->n_aside == 0)
        return rv_error(RAVEL_INVALID, "ravel_repair: %s holds no database "
                        "(no IDENTITY, manifest, WAL segment or table file)",
                        rp->dir);
    repair_sort(&rp->tables);
    repair_sort(&rp->wal);
    repair_sort(&rp->manifests);
    if (rp->has_current)
        repair_read_current(rp);
    return RAVEL_OK;
}

/* 1 if the log an open replays is whole: it begins with the segment the
** manifest's log number names (if any segment at or above it is there),
** and ends with the sealed segment the manifest says it was closed with
** (if it says so). */
static int repair_log_whole(const struct rv_repair *rp)
{
    int first = -1;
    for (int i = 0; i < rp->wal.n && first < 0; i++)
        if (rp->wal.v[i] >= rp->current_log)
            first = i;
    if (first >= 0 && rp->wal.v[first] != rp->current_log)
        return 0;
    if (rp->current_closed && rp->current_closed >= rp->current_log &&
        (rp->wal_last != rp->current_closed || !rp->wal_last_sealed))
        return 0;
    return 1;
}

/* 1 if the database needs nothing: IDENTITY is whole, its manifest read
** whole names exactly the table files there, all read whole, and the log
** is whole and had no damage. */
static int repair_nothing_to_do(const struct rv_repair *rp)
{
    if (rp->damage || !rp->current_clean || !rp->has_identity ||
        rp->live.n != rp->tables.n || !repair_log_whole(rp))
        return 0;
    for (int i = 0; i < rp->tables.n; i++)
        if (!rv_repair_numbers_has(&rp->live, rp->tables.v[i]))
            return 0;
    return 1;
}

/* ------------------------------------------------------ moving aside */

/* Makes DIR/lost-repair-<UTC time>[.N] into LOST (RV_PATH_MAX bytes). */
static int repair_make_lost_dir(struct rv_repair *rp, char *lost)
{
    char name[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    size_t n = strftime(name, sizeof name, "lost-repair-%Y%m%dT%H%M%S", &tm);
    for (int i = 0; i < 1000; i++) {
        if (i)
            snprintf(name + n, sizeof name - n, ".%d", i);
        int rc = rv_path_join(lost, rp->dir, name);
        if (rc)
            return rc;
        if (mkdir(lost, 0755) == 0)
            return RAVEL_OK;
        if (errno != EEXIST)
            return rv_error_errno(RAVEL_IOERR, errno, "mkdir %s", lost);
    }
    return rv_error(RAVEL_IOERR, "mkdir %s: 1000 such directories exist",
                    lost);
}

static int repair_move(struct rv_repair *rp, const char *lost,
                       const char *name)
{
    char from[RV_PATH_MAX], to[RV_PATH_MAX];
    int rc = rv_path_join(from, rp->dir, name);
    if (!rc)
        rc = rv_path_join(to, lost, name);
    int injected = rc ? 0 : rv_fault_check(RV_FAULT_REPAIR_MOVE);
    if (injected)
        rc = rv_error_errno(RAVEL_IOERR, -injected, "rename %s to %s "
                            "(injected; repair stopped here: run it again)",
                            from, to);
    if (!rc && rename(from, to) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "rename %s to %s (repair "
                            "stopped here: run it again)", from, to);
    return rc;
}

/* 1 for an original file a manifest proves obsolete: a table file it
** records deleted, a WAL segment below the log number of CURRENT's
** manifest read whole (its writes are in the tables, or were replaced
** there since). */
static int repair_proven_obsolete(const struct rv_repair *rp,
                                  const char *name)
{
    uint64_t number;
    if (rv_parse_table_file_name(name, &number))
        return rv_repair_numbers_has(&rp->obsolete, number);
    return rp->current_clean && rv_wal_parse_segment_name(name, &number) &&
           number < rp->current_log;
}

/* Moves every original file into a new lost directory: first the files
** a manifest proves obsolete (an open needs none of them), so a repair
** stopped in the middle never leaves one without CURRENT and the manifest
** that say so -- the next run, not knowing it, would merge it and bring
** back what was deleted after it; then CURRENT (no open uses a manifest
** half moved away); then the rest. */
static int repair_move_aside(struct rv_repair *rp)
{
    char lost[RV_PATH_MAX];
    int rc = repair_make_lost_dir(rp, lost);
    for (int i = 0; !rc && i < rp->n_aside; i++)
        if (repair_proven_obsolete(rp, rp->aside[i]))
            rc = repair_move(rp, lost, rp->aside[i]);
    for (int i = 0; !rc && i < rp->n_aside; i++)
        if (strcmp(rp->aside[i], RV_FILE_CURRENT) == 0)
            rc = repair_move(rp, lost, rp->aside[i]);
    for (int i = 0; !rc && i < rp->n_aside; i++)
        if (strcmp(rp->aside[i], RV_FILE_CURRENT) != 0 &&
            !repair_proven_obsolete(rp, rp->aside[i]))
            rc = repair_move(rp, lost, rp->aside[i]);
    if (!rc)
        rc = rv_sync_dir(lost);
    if (!rc)
        rc = rv_sync_dir(rp->dir);
    if (!rc)
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "the %d original file%s "
                      "were moved, unchanged, into %s", rp->n_aside,
                      rv_repair_plural((uint64_t)rp->n_aside), lost);
    return rc;
}

/* --------------------------------------------------------- installing */

static void repair_count_waiting(void *ctx, struct rv_prepared_txn *e)
{
    struct rv_repair *rp = ctx;
    e->spilled = 0; /* its file went aside: written again */
    rv_repair_say(&rp->report, RAVEL_REPAIR_KEPT, "prepared transaction "
                  "'%s' (%u operations): still prepared, its file written "
                  "again", e->name,
                  e->rep ? rv_batch_rep_count(e->rep) : 0u);
}

/* The prepared transactions no commit or rollback resolved stay so. */
static int repair_keep_prepared(struct rv_repair *rp)
{
    rv_prepared_for_each(&rp->prepared, repair_count_waiting, rp);
    return rv_prepared_spill(&rp->prepared, rp->dir, UINT64_MAX);
}

static int repair_install_manifest(struct rv_repair *rp)
{
    uint64_t number = rp->next_number++;
    rp->edit.has_log_number = 1;
    rp->edit.log_number = (rp->wal.n ? rp->wal.v[rp->wal.n - 1] : 0) + 1;
    rp->edit.has_next_file_number = 1;
    rp->edit.next_file_number = rp->next_number;
    rp->edit.has_last_sequence = 1;
    rp->edit.last_sequence = rp->max_seq;
    rv_manifest *m = NULL;
    int rc = rv_manifest_create(rp->dir, number, &rp->edit, &m);
    rv_manifest_close(m);
    if (!rc && !rp->has_identity)
        rc = rv_replace_file(rp->dir, RV_FILE_IDENTITY, REPAIR_IDENTITY,
                             strlen(REPAIR_IDENTITY));
    if (!rc)
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "MANIFEST-%06llu "
                      "written: %d table file%s at level %d, last sequence "
                      "%llu", (unsigned long long)number, rp->edit.n_added,
                      rv_repair_plural((uint64_t)rp->edit.n_added),
                      rp->level,
                      (unsigned long long)rp->max_seq);
    return rc;
}

/* ----------------------------------------------------------- the report */

static void repair_report_ranges(struct rv_repair *rp)
{
    for (int i = 0; i < rp->lost.n; i++) {
        const struct rv_repair_range *g = &rp->lost.v[i];
        if (!g->suspect)
            continue;
        char a[RV_REPAIR_KEY_TEXT] = "(the first key)";
        char b[RV_REPAIR_KEY_TEXT] = "(the last key)";
        if (g->lo)
            rv_repair_key(a, sizeof a, g->lo, g->lo_len);
        if (g->hi)
            rv_repair_key(b, sizeof b, g->hi, g->hi_len);
        rv_repair_say(&rp->report, RAVEL_REPAIR_WARN, "%llu key%s kept from "
                      "%s to %s may be older than a version lost with "
                      "%06llu.sst's damaged part (a newer value, or a "
                      "deletion): check them",
                      (unsigned long long)g->suspect,
                      rv_repair_plural(g->suspect), a, b,
                      (unsigned long long)g->file);
    }
    if (rp->zero_ties)
        rv_repair_say(&rp->report, RAVEL_REPAIR_WARN, "%llu key%s had "
                      "several versions at sequence 0 (ingested files): the "
                      "one in the highest-numbered file was kept",
                      (unsigned long long)rp->zero_ties,
                      rv_repair_plural(rp->zero_ties));
}

static void repair_summary(struct rv_repair *rp)
{
    repair_report_ranges(rp);
    rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "summary: %llu keys "
                  "written; %llu older versions and %llu deletions "
                  "dropped (nothing older left under them); %d lost key "
                  "ranges; %llu WAL records lost%s",
                  (unsigned long long)rp->written,
                  (unsigned long long)rp->older,
                  (unsigned long long)rp->tombstones, rp->lost.n,
                  (unsigned long long)rp->wal_dropped,
                  rp->wal_cut_seqs ? ", and the log's end (its cleanly "
                                     "closed last segment)" : "");
}

/* ------------------------------------------------------------ the whole */

static void repair_free(struct rv_repair *rp)
{
    for (int i = 0; i < rp->n_read; i++)
        rv_repair_table_free(&rp->read[i]);
    free(rp->read);
    for (int i = 0; i < rp->n_aside; i++)
        free(rp->aside[i]);
    free(rp->aside);
    free(rp->tables.v);
    free(rp->wal.v);
    free(rp->manifests.v);
    free(rp->obsolete.v);
    free(rp->live.v);
    rv_repair_ranges_free(&rp->live_ranges);
    rv_repair_ranges_free(&rp->lost);
    if (rp->mem)
        rv_memtable_unref(rp->mem);
    rv_prepared_destroy(&rp->prepared);
    rv_version_edit_clear(&rp->edit);
    free(rp->report.text);
}

static void repair_init(struct rv_repair *rp, const char *dir,
                        const struct ravel_options *o, ravel_repair_fn fn,
                        void *ctx)
{
    memset(rp, 0, sizeof *rp);
    rp->dir = dir;
    rp->o = o;
    rp->report.fn = fn;
    rp->report.ctx = ctx;
    rv_version_edit_init(&rp->edit);
    rv_prepared_init(&rp->prepared);
    rp->deepest_level = -1;
}

/* The level of the new files: the last of OPTS's num_levels -- but no
** deeper than the deepest a manifest used, which the database's own
** num_levels allowed, so it opens with its usual options. */
static int repair_level(const struct rv_repair *rp)
{
    int level = rp->o->num_levels - 1;
    if (rp->deepest_level >= 0 && rp->deepest_level < level)
        level = rp->deepest_level;
    return level;
}

/* Steps 2 to 6 of the top of this file. */
static int repair_run(struct rv_repair *rp)
{
    int rc = rv_repair_read_manifests(rp);
    if (!rc)
        rc = rv_repair_read_tables(rp);
    if (!rc)
        rc = rv_repair_read_wal(rp);
    if (rc)
        return rc;
    if (repair_nothing_to_do(rp)) {
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "nothing to repair: "
                      "every file verified and the manifest names exactly "
                      "the table files there; nothing was changed");
        return RAVEL_OK;
    }
    /* above every number in use, and every one CURRENT or a manifest gave
    ** out: nothing of the originals shares a number with a new file */
    rp->level = repair_level(rp);
    rp->next_number = rp->max_number + 1;
    if (rp->current >= rp->next_number)
        rp->next_number = rp->current + 1;
    if (rp->manifest_next > rp->next_number)
        rp->next_number = rp->manifest_next;
    rc = rv_repair_write_tables(rp);
    if (!rc)
        rc = rv_sync_dir(rp->dir);
    if (rc)
        return rc;
    rc = repair_move_aside(rp);
    if (!rc)
        rc = repair_keep_prepared(rp);
    if (!rc)
        rc = repair_install_manifest(rp);
    if (!rc)
        repair_summary(rp);
    return rc;
}

int ravel_repair(const char *dir, const ravel_options *opts,
                 ravel_repair_fn fn, void *ctx, char **report)
{
    if (report)
        *report = NULL;
    if (!dir)
        return rv_error(RAVEL_INVALID, "ravel_repair: no directory given");
    struct ravel_options defaults;
    if (!opts) {
        rv_options_init_defaults(&defaults);
        opts = &defaults;
    }
    struct rv_repair rp;
    repair_init(&rp, dir, opts, fn, ctx);
    struct rv_lockfile lock = {.fd = -1};
    /* is it a database at all (before a LOCK is made in it)? */
    int rc = repair_list(&rp);
    repair_free(&rp);
    repair_init(&rp, dir, opts, fn, ctx);
    if (!rc)
        rc = rv_lockfile_acquire(dir, &lock);
    if (!rc)
        rc = repair_list(&rp); /* again, now that nothing can change it */
    if (!rc)
        rc = repair_run(&rp);
    rv_lockfile_release(&lock);
    if (rc) {
        char why[512];
        snprintf(why, sizeof why, "%s", rv_errmsg_get());
        rv_repair_say(&rp.report, RAVEL_REPAIR_NOTE, "repair failed: %s",
                      why);
        rv_error(rc, "%s", why);
    }
    if (report && rp.report.text && !rp.report.nomem) {
        *report = rp.report.text;
        rp.report.text = NULL;
    }
    repair_free(&rp);
    return rc;
}
