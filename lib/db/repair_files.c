/*
** repair_files.c -- what repair reads of the manifests and the table
** files (repair.h): the manifests only for what they prove (which table
** files a compaction deleted, and whether the database is whole), then
** every table file they do not prove obsolete (repair_table.c salvages
** each).  The WAL is repair_wal.c's.
**
** Why the manifests still matter when they are damaged: a table file a
** manifest records as deleted is a compaction's input left behind by a
** crash; its keys may have been deleted since (the tombstone dropped by a
** later compaction at the last level), so merging it would bring them
** back.  A record proves the deletion only if it was read whole; a table
** no readable record mentions is merged (it may be a flush's output the
** lost part of the manifest named).
*/
#include "db/repair.h"
#include "db/manifest.h"
#include "util/error.h"
#include "util/filename.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- numbers */

int rv_repair_numbers_add(struct rv_repair_numbers *ns, uint64_t v)
{
    if (ns->n == ns->cap) {
        int cap = ns->cap ? ns->cap * 2 : 16;
        uint64_t *p = realloc(ns->v, (size_t)cap * sizeof *p);
        if (!p)
            return rv_error(RAVEL_NOMEM, "out of memory listing files");
        ns->v = p;
        ns->cap = cap;
    }
    ns->v[ns->n++] = v;
    return RAVEL_OK;
}

int rv_repair_numbers_has(const struct rv_repair_numbers *ns, uint64_t v)
{
    for (int i = 0; i < ns->n; i++)
        if (ns->v[i] == v)
            return 1;
    return 0;
}

void rv_repair_numbers_remove(struct rv_repair_numbers *ns, uint64_t v)
{
    for (int i = 0; i < ns->n; i++)
        if (ns->v[i] == v) {
            ns->v[i] = ns->v[--ns->n];
            return;
        }
}

/* ----------------------------------------------------------- manifests */

/* The file set of one manifest as its readable records leave it. */
struct repair_manifest_state {
    struct rv_repair_numbers live, deleted;
    struct rv_repair_ranges ranges; /* of every file added */
    uint64_t last_sequence, next_file_number;
    uint64_t log_number, closed_segment;
    int deepest_level;
};

static int repair_manifest_edit(void *ctx, struct rv_version_edit *e)
{
    struct repair_manifest_state *m = ctx;
    int rc = RAVEL_OK;
    for (int i = 0; i < e->n_deleted && !rc; i++) {
        rv_repair_numbers_remove(&m->live, e->deleted[i].number);
        if (!rv_repair_numbers_has(&m->deleted, e->deleted[i].number))
            rc = rv_repair_numbers_add(&m->deleted, e->deleted[i].number);
    }
    for (int i = 0; i < e->n_added && !rc; i++) {
        /* a move to another level deletes and adds it in one edit */
        rv_repair_numbers_remove(&m->deleted, e->added[i].number);
        const struct rv_file_meta *f = &e->added[i];
        if (f->level > m->deepest_level)
            m->deepest_level = f->level;
        if (!rv_repair_numbers_has(&m->live, f->number))
            rc = rv_repair_numbers_add(&m->live, f->number);
        if (!rc && f->smallest_len >= RV_TAG_SIZE &&
            f->largest_len >= RV_TAG_SIZE)
            rc = rv_repair_ranges_add(&m->ranges, f->number, f->smallest,
                                      f->smallest_len - RV_TAG_SIZE,
                                      f->largest,
                                      f->largest_len - RV_TAG_SIZE,
                                      f->largest_seq);
    }
    if (e->has_last_sequence && e->last_sequence > m->last_sequence)
        m->last_sequence = e->last_sequence;
    if (e->has_log_number)
        m->log_number = e->log_number;
    m->closed_segment = e->closed_segment; /* only the last edit's counts */
    if (e->has_next_file_number && e->next_file_number > m->next_file_number)
        m->next_file_number = e->next_file_number;
    return rc;
}

/* Replays MANIFEST-NUMBER: what it proves goes into RP. */
static int repair_read_manifest(struct rv_repair *rp, uint64_t number)
{
    struct repair_manifest_state m;
    struct rv_manifest_tail tail;
    memset(&m, 0, sizeof m);
    m.deepest_level = -1;
    memset(&tail, 0, sizeof tail);
    int rc = rv_manifest_replay_file(rp->dir, number, repair_manifest_edit,
                                     &m, &tail);
    int whole = rc == RAVEL_OK && !tail.dropped_at;
    if (rc == RAVEL_NOMEM)
        goto out;
    if (whole)
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "MANIFEST-%06llu: "
                      "read whole (%d record%s, %d table file%s)",
                      (unsigned long long)number, tail.records,
                      rv_repair_plural((uint64_t)tail.records), m.live.n,
                      rv_repair_plural((uint64_t)m.live.n));
    else
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "MANIFEST-%06llu: "
                      "damaged (%s); the %d records before the damage were "
                      "used", (unsigned long long)number,
                      rc ? rv_errmsg_get() : tail.why, tail.records);
    rc = RAVEL_OK;
    for (int i = 0; i < m.deleted.n && !rc; i++)
        if (!rv_repair_numbers_has(&rp->obsolete, m.deleted.v[i]))
            rc = rv_repair_numbers_add(&rp->obsolete, m.deleted.v[i]);
    if (m.last_sequence > rp->max_seq)
        rp->max_seq = m.last_sequence;
    if (m.next_file_number > rp->manifest_next)
        rp->manifest_next = m.next_file_number;
    if (m.deepest_level > rp->deepest_level)
        rp->deepest_level = m.deepest_level;
    if (!rc && number == rp->current) {
        rp->current_clean = whole;
        rp->current_log = m.log_number;
        rp->current_closed = m.closed_segment;
        rp->current_last_seq = m.last_sequence;
        for (int i = 0; i < m.live.n && !rc; i++)
            rc = rv_repair_numbers_add(&rp->live, m.live.v[i]);
        rv_repair_ranges_free(&rp->live_ranges);
        rp->live_ranges = m.ranges; /* taken */
        memset(&m.ranges, 0, sizeof m.ranges);
    }
out:
    free(m.live.v);
    free(m.deleted.v);
    rv_repair_ranges_free(&m.ranges);
    return rc;
}

int rv_repair_read_manifests(struct rv_repair *rp)
{
    if (rp->has_current && !rp->current)
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "CURRENT is damaged: "
                      "it names no manifest");
    else if (!rp->has_current)
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "CURRENT is missing");
    else if (!rv_repair_numbers_has(&rp->manifests, rp->current))
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "CURRENT names "
                      "MANIFEST-%06llu, which is missing",
                      (unsigned long long)rp->current);
    if (rp->manifests.n == 0)
        rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "no manifest: the "
                      "table files are all merged (a compaction's input a "
                      "crash left behind could bring back keys deleted "
                      "after it)");
    int rc = RAVEL_OK;
    for (int i = 0; i < rp->manifests.n && !rc; i++)
        rc = repair_read_manifest(rp, rp->manifests.v[i]);
    return rc;
}

/* ---------------------------------------------------------- table files */

/* One line for what was read of table T. */
static void repair_table_summary(struct rv_repair *rp,
                                 const struct rv_repair_table *t)
{
    if (t->size == 0) {
        rp->damage = 1; /* no table file is empty */
        return;
    }
    /* every block the index (or the walk to the data's end) names was
    ** read; the properties, when readable, must agree */
    int whole = !t->lost_blocks && !t->lost_tail &&
                (!t->props_known || t->kept == t->props_entries);
    if (t->walked || t->meta_damaged)
        rp->damage = 1; /* its data is whole, the file is not */
    if (whole) {
        rv_repair_say(&rp->report, RAVEL_REPAIR_KEPT, "%06llu.sst: all %llu "
                      "entr%s kept (%d block%s read)",
                      (unsigned long long)t->number,
                      (unsigned long long)t->kept,
                      t->kept == 1 ? "y" : "ies", t->n_blocks,
                      rv_repair_plural((uint64_t)t->n_blocks));
        return;
    }
    rp->damage = 1;
    char lost[96];
    if (t->props_known && t->props_entries >= t->kept)
        snprintf(lost, sizeof lost, "%llu entries lost",
                 (unsigned long long)(t->props_entries - t->kept));
    else
        snprintf(lost, sizeof lost, "an unknown number of entries lost (its "
                 "properties are unreadable)");
    rv_repair_say(&rp->report, RAVEL_REPAIR_KEPT, "%06llu.sst: %llu entries "
                  "kept (%d block%s read), %s", (unsigned long long)t->number,
                  (unsigned long long)t->kept, t->n_blocks,
                  rv_repair_plural((uint64_t)t->n_blocks), lost);
}

/* 1 if a table file read was written as NUMBER (renamed since). */
static int repair_read_as(const struct rv_repair *rp, uint64_t number)
{
    for (int i = 0; i < rp->n_read; i++)
        if (rp->read[i].seed == number)
            return 1;
    return 0;
}

/* A table file CURRENT's manifest names is missing: its keys are lost,
** and reported in the range the manifest records for it. */
static int repair_table_missing(struct rv_repair *rp, uint64_t number)
{
    rp->damage = 1;
    for (int i = rp->live_ranges.n - 1; i >= 0; i--) {
        const struct rv_repair_range *g = &rp->live_ranges.v[i];
        if (g->file != number)
            continue;
        char a[RV_REPAIR_KEY_TEXT], b[RV_REPAIR_KEY_TEXT];
        rv_repair_key(a, sizeof a, g->lo, g->lo_len);
        rv_repair_key(b, sizeof b, g->hi, g->hi_len);
        rv_repair_say(&rp->report, RAVEL_REPAIR_LOST, "%06llu.sst is "
                      "missing (the manifest names it): keys from %s to %s "
                      "are lost", (unsigned long long)number, a, b);
        return rv_repair_ranges_add(&rp->lost, number, g->lo, g->lo_len,
                                    g->hi, g->hi_len, g->max_seq);
    }
    rv_repair_say(&rp->report, RAVEL_REPAIR_LOST, "%06llu.sst is missing "
                  "(the manifest names it): its keys are lost",
                  (unsigned long long)number);
    return rv_repair_ranges_add(&rp->lost, number, NULL, 0, NULL, 0,
                                RV_MAX_SEQUENCE);
}

int rv_repair_read_tables(struct rv_repair *rp)
{
    rp->read = calloc((size_t)rp->tables.n + 1, sizeof *rp->read);
    if (!rp->read)
        return rv_error(RAVEL_NOMEM, "out of memory reading table files");
    int rc = RAVEL_OK;
    for (int i = 0; i < rp->tables.n && !rc; i++) {
        uint64_t number = rp->tables.v[i];
        if (rv_repair_numbers_has(&rp->obsolete, number)) {
            rp->damage = 1;
            rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "%06llu.sst: not "
                          "merged: a manifest records it deleted by a "
                          "compaction (moved aside with the rest)",
                          (unsigned long long)number);
            continue;
        }
        char path[RV_PATH_MAX];
        rc = rv_table_file_path(path, rp->dir, number);
        if (rc)
            break;
        struct rv_repair_table *t = &rp->read[rp->n_read++];
        rc = rv_repair_table_read(number, path, &rp->report, &rp->lost, t);
        if (!rc) {
            repair_table_summary(rp, t);
            if (t->max_seq > rp->max_seq)
                rp->max_seq = t->max_seq;
            if (t->max_seq > rp->seen_seq)
                rp->seen_seq = t->max_seq;
            if (t->zero_seq)
                rv_repair_say(&rp->report, RAVEL_REPAIR_NOTE, "%06llu.sst: "
                              "%llu entries at sequence 0 (an ingested "
                              "file's, or older than every write): they "
                              "lose to every other version of their key",
                              (unsigned long long)number,
                              (unsigned long long)t->zero_seq);
        }
    }
    for (int i = 0; i < rp->live.n && !rc; i++)
        if (!rv_repair_numbers_has(&rp->tables, rp->live.v[i]) &&
            !repair_read_as(rp, rp->live.v[i]))
            rc = repair_table_missing(rp, rp->live.v[i]);
    return rc;
}
