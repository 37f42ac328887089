/*
** compaction.c -- running one compaction (picked by compaction_picker.c):
** merging its input files into new files of the output level.
**
**   1. under db->mu.lock: registers it as running; takes the live snapshots'
**      bounds and, with write_prepared, the commit watermark (keep.h);
**   2. merges the inputs in internal-key order, keeping the versions
**      keep.h says a reader may still see, and dropping a deletion seen by
**      every reader when no level below the output holds its key (then
**      nothing older can be behind it); cuts the output files at the
**      level's target file size and where one would span, with the files
**      it overlaps in the level below, more than max_compaction_bytes --
**      with level_compaction_dynamic_file_size, at a boundary of the
**      level below once half the target size is written (files up to
**      twice the target), as RocksDB 7.8 does -- never inside one user
**      key's versions; each file is fdatasynced by its builder;
**   3. fsyncs the directory, then appends one edit to the manifest (the
**      inputs deleted, the outputs added);
**   4. under db->mu.lock: installs a version with the new file set.  The input
**      files are deleted once no version, iterator or get still uses them
**      (version.h).
** A move -- one file overlapping nothing in the output level -- is only
** the edit of steps 3-4: the same file, at the next level.
**
** A failure before the manifest append deletes the outputs and leaves the
** inputs as they were: the database stays consistent and the compaction
** is retried after a pause (1 s, doubling up to 60 s).
** RV_COMPACTION_MAX_FAILURES (compaction.h) failures in a row stop writes
** with the reason (as does a failed manifest append at
** once: the manifest is then unusable).  Close aborts a running
** compaction the same way, without counting it as a failure.
*/
#include "db/db.h"
#include "base/dbformat.h"
#include "db/keep.h"
#include "db/range_del_out.h"
#include "db/table_output.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* -------------------------------------------------- deeper levels */

/* For each level below the output, the first file that may still hold a
** key at or after the ones already asked about (keys are asked in
** order). */
struct compaction_below {
    const struct rv_compaction *c;
    int at[RV_NUM_LEVELS];
};

/* 1 if no level below C's output level may hold user key K. */
static int compaction_bottom_for_key(struct compaction_below *b,
                                     const char *k, size_t klen)
{
    const struct rv_files *fs = b->c->files;
    for (int l = b->c->output_level + 1; l < RV_NUM_LEVELS; l++) {
        while (b->at[l] < fs->n[l]) {
            const struct rv_file_meta *m = &fs->level[l][b->at[l]]->meta;
            if (rv_user_key_compare(k, klen, m->largest,
                                    m->largest_len - RV_TAG_SIZE) <= 0) {
                if (rv_user_key_compare(k, klen, m->smallest,
                                        m->smallest_len - RV_TAG_SIZE) >= 0)
                    return 0;
                break;
            }
            b->at[l]++;
        }
    }
    return 1;
}

/* --------------------------------------------------- output cuts */

/* Where the output stands against the grandparents (the level below the
** output level), RocksDB's CompactionOutputs: the file holding the last
** user key asked about, or the gap before it. */
struct compaction_grandparents {
    const struct rv_compaction *c;
    int at;                 /* grandparent holding the last key, or the
                            ** first one after it (IN_GAP) */
    int in_gap;             /* the last key was between grandparents */
    uint64_t overlap;       /* bytes of them the current output spans */
    int crossed;            /* boundaries the current output crossed */
    int seen_key;
};

static const struct rv_file_meta *
compaction_gp_meta(const struct compaction_grandparents *g, int i)
{
    return &g->c->grandparents[i]->meta;
}

/* Moves G to user key K (keys come in order): the number of grandparent
** boundaries (a file's start or end) crossed since the last key; the
** files entered count into G's overlap. */
static int compaction_gp_advance(struct compaction_grandparents *g,
                                 const char *k, size_t klen)
{
    int n = g->c->n_grandparents, crossed = 0;
    while (g->at < n) {
        const struct rv_file_meta *m = compaction_gp_meta(g, g->at);
        if (g->in_gap) {
            if (rv_user_key_compare(k, klen, m->smallest,
                                    m->smallest_len - RV_TAG_SIZE) < 0)
                break;
            if (g->seen_key) {
                crossed++;
                g->overlap += m->size;
            }
            g->in_gap = 0;
        } else {
            if (rv_user_key_compare(k, klen, m->largest,
                                    m->largest_len - RV_TAG_SIZE) <= 0)
                break;
            if (g->seen_key)
                crossed++;
            g->in_gap = 1;
            g->at++;
        }
    }
    if (!g->seen_key && !g->in_gap && g->at < n)
        g->overlap = compaction_gp_meta(g, g->at)->size; /* inside one */
    g->seen_key = 1;
    g->crossed += crossed;
    return crossed;
}

/* 1 if the output, SIZE bytes so far, should be cut before user key K
** (RocksDB 7.8's rules): too big; spanning, with its
** grandparents, more than max_compaction_bytes; and with dynamic file
** sizes, at a grandparent boundary once big enough, or before a whole
** grandparent worth an eighth of the target would be spanned. */
static int compaction_should_cut(struct compaction_grandparents *g,
                                 const char *k, size_t klen, uint64_t size)
{
    const struct rv_compaction *c = g->c;
    uint64_t before = g->overlap;
    int crossed = c->output_level > 0 ? compaction_gp_advance(g, k, klen) : 0;
    if (size == 0)
        return 0; /* no file open */
    uint64_t target = c->max_output_file_size;
    int aligned = c->dynamic_file_size && c->output_level > 0 &&
                  c->n_grandparents > 0;
    uint64_t hard = aligned && target <= UINT64_MAX / 2 ? 2 * target : target;
    if (size >= hard)
        return 1;
    if (!crossed)
        return 0;
    if (g->overlap + size > c->max_compaction_bytes)
        return 1;
    if (!aligned)
        return 0;
    if (crossed >= (g->in_gap ? 2 : 3) && g->overlap - before > target / 8)
        return 1; /* K would span a whole grandparent: skip it */
    int more = g->crossed * 5 < 40 ? g->crossed * 5 : 40;
    return size >= (target + 99) / 100 * (uint64_t)(50 + more);
}

/* After a cut before user key K: the new output starts at K. */
static void compaction_gp_restart(struct compaction_grandparents *g)
{
    g->overlap = g->in_gap || g->at >= g->c->n_grandparents
                     ? 0 : compaction_gp_meta(g, g->at)->size;
    g->crossed = 0;
}

/* ------------------------------------------------------- the merge */

struct compaction_result {
    struct rv_table_output out;
    uint64_t read_bytes, dropped;
};

/* An iterator merging C's inputs; NULL with *RC set on failure. */
static struct rv_iter *compaction_inputs_iter(ravel_db *db,
                                              const struct rv_compaction *c,
                                              int *rc)
{
    int n = c->n_inputs[0] + c->n_inputs[1];
    struct rv_iter **children = calloc((size_t)n + 1, sizeof *children);
    if (!children) {
        *rc = rv_error(RAVEL_NOMEM, "out of memory for a compaction");
        return NULL;
    }
    int made = 0;
    int flags = rv_table_cache_read_flags(db->tables);
    *rc = RAVEL_OK;
    for (int w = 0; w < 2 && *rc == RAVEL_OK; w++)
        for (int i = 0; i < c->n_inputs[w] && *rc == RAVEL_OK; i++) {
            children[made] = rv_table_cache_iter(db->tables, c->inputs[w][i],
                                                 flags, rc);
            if (children[made])
                made++;
        }
    struct rv_iter *merged = NULL;
    if (*rc == RAVEL_OK) {
        merged = rv_merging_iter_new(children, made);
        if (!merged)
            *rc = rv_error(RAVEL_NOMEM, "out of memory for a compaction");
    } else {
        for (int i = 0; i < made; i++)
            children[i]->ops->destroy(children[i]);
    }
    free(children);
    return merged;
}

/* 1 if the entry K of C may be dropped as a deletion nobody needs. */
static int compaction_drop_deletion(const struct rv_keep *keep,
                                    struct compaction_below *below,
                                    const char *k, size_t klen)
{
    uint64_t tag = rv_get_fixed64(k + klen - RV_TAG_SIZE);
    return rv_tag_type(tag) == RV_TYPE_DELETE &&
           rv_keep_seen_by_all(keep, rv_tag_sequence(tag)) &&
           compaction_bottom_for_key(below, k, klen - RV_TAG_SIZE);
}

/* 1 if no level below C's output level holds a key of [B, E) (user
** keys; a file's bounds cover its own tombstones). */
static int compaction_bottom_for_range(const struct rv_compaction *c,
                                       const char *b, size_t bl,
                                       const char *e, size_t el)
{
    const struct rv_files *fs = c->files;
    for (int l = c->output_level + 1; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < fs->n[l]; i++) {
            const struct rv_file_meta *m = &fs->level[l][i]->meta;
            if (rv_user_key_compare(m->smallest,
                                    m->smallest_len - RV_TAG_SIZE, e,
                                    el) < 0 &&
                rv_user_key_compare(m->largest, m->largest_len - RV_TAG_SIZE,
                                    b, bl) >= 0)
                return 0;
        }
    return 1;
}

struct compaction_tomb_ctx {
    const struct rv_compaction *c;
    const struct rv_keep *keep;
};

/* rv_range_del_out_drop's question: a tombstone every reader sees, over
** a range nothing below the output holds, hides nothing once the
** versions it covers here are dropped (they are: the same stripe). */
static int compaction_tomb_droppable(void *ctx, const struct rv_range_tomb *t)
{
    const struct compaction_tomb_ctx *x = ctx;
    return rv_keep_seen_by_all(x->keep, t->seq) &&
           compaction_bottom_for_range(x->c, t->begin, t->blen, t->end,
                                       t->elen);
}

/* 1 if the entry K (kept by rv_keep_entry) is hidden from every reader
** by one of TOMBS: the oldest tombstone over it newer than it, in its
** stripe.  -1 when out of memory. */
static int compaction_covered(const struct rv_keep *keep,
                              struct rv_range_del_out *tombs, const char *k,
                              size_t klen)
{
    int nomem = 0;
    const struct rv_range_frag *g =
        rv_range_del_out_find(tombs, k, klen - RV_TAG_SIZE, &nomem);
    if (nomem)
        return -1;
    if (!g)
        return 0;
    uint64_t seq = rv_tag_sequence(rv_get_fixed64(k + klen - RV_TAG_SIZE));
    uint64_t above = 0; /* the sequences are newest first */
    for (int i = 0; i < g->n_seqs && g->seqs[i] > seq; i++)
        above = g->seqs[i];
    return above && rv_keep_hides(keep, above, seq);
}

/* Step 2: merges C's inputs into R's output files. */
static int compaction_merge(ravel_db *db, const struct rv_compaction *c,
                            struct rv_keep *keep, struct compaction_result *r)
{
    int rc = RAVEL_OK;
    struct rv_iter *it = compaction_inputs_iter(db, c, &rc);
    if (!it)
        return rc;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < c->n_inputs[w]; i++)
            r->read_bytes += c->inputs[w][i]->meta.size;
    /* the inputs' range tombstones, each output file given its part */
    struct rv_range_del_out tombs;
    rv_range_del_out_init(&tombs, db->tables);
    for (int w = 0; w < 2 && rc == RAVEL_OK; w++)
        for (int i = 0; i < c->n_inputs[w] && rc == RAVEL_OK; i++)
            rc = rv_range_del_out_add_file(&tombs, c->inputs[w][i]);
    struct compaction_tomb_ctx tctx = {.c = c, .keep = keep};
    if (rc == RAVEL_OK)
        rc = rv_range_del_out_drop(&tombs, compaction_tomb_droppable, &tctx);
    struct compaction_below below = {.c = c};
    struct compaction_grandparents gp = {.c = c, .in_gap = 1};
    for (it->ops->seek_to_first(it); rc == RAVEL_OK && it->ops->valid(it);
         it->ops->next(it)) {
        if (atomic_load_explicit(&db->compaction_abort,
                                 memory_order_relaxed)) {
            rc = rv_error(RAVEL_INVALID, "compaction abandoned: the "
                          "database is closing");
            break;
        }
        size_t klen, vlen;
        const char *k = it->ops->key(it, &klen);
        const char *v = it->ops->value(it, &vlen);
        if (klen < RV_TAG_SIZE) {
            rc = rv_error(RAVEL_CORRUPT, "compaction to level %d met an "
                          "entry whose key is too short to hold a tag",
                          c->output_level);
            break;
        }
        int kept = rv_keep_entry(keep, k, klen);
        int covered = kept > 0 && rv_range_del_out_any(&tombs)
                          ? compaction_covered(keep, &tombs, k, klen)
                          : 0;
        if (kept < 0 || covered < 0) {
            rc = kept < 0 ? RAVEL_NOMEM /* its message is set */
                          : rv_error(RAVEL_NOMEM, "out of memory "
                                     "fragmenting a compaction's range "
                                     "tombstones");
            break;
        }
        if (!kept || covered ||
            compaction_drop_deletion(keep, &below, k, klen)) {
            r->dropped++;
            continue;
        }
        if (rv_table_output_new_user_key(&r->out, k, klen) &&
            compaction_should_cut(&gp, k, klen - RV_TAG_SIZE,
                                  rv_table_output_file_size(&r->out))) {
            rc = rv_range_del_out_give(&tombs, &r->out, k, klen - RV_TAG_SIZE);
            if (rc == RAVEL_OK)
                rc = rv_table_output_cut(&r->out);
            compaction_gp_restart(&gp);
        }
        if (rc == RAVEL_OK)
            rc = rv_table_output_add(&r->out, k, klen, v, vlen);
    }
    if (rc == RAVEL_OK)
        rc = it->ops->status(it);
    it->ops->destroy(it);
    if (rc == RAVEL_OK)
        rc = rv_range_del_out_give(&tombs, &r->out, NULL, 0);
    rv_range_del_out_free(&tombs);
    if (rc == RAVEL_OK)
        rc = rv_table_output_cut(&r->out);
    return rc;
}

/* ------------------------------------------------------- the job */

/* The edit of C: its inputs deleted, OUT's files (or, for a move, the
** input itself) added at the output level. */
static int compaction_edit(const struct rv_compaction *c,
                           const struct rv_table_output *out,
                           struct rv_version_edit *e)
{
    int rc = RAVEL_OK;
    for (int w = 0; w < 2 && rc == RAVEL_OK; w++)
        for (int i = 0; i < c->n_inputs[w] && rc == RAVEL_OK; i++)
            rc = rv_version_edit_delete_file(e, c->inputs[w][i]->meta.level,
                                             c->inputs[w][i]->meta.number);
    if (c->is_move && rc == RAVEL_OK) {
        struct rv_file_meta m = c->inputs[0][0]->meta;
        m.level = c->output_level;
        rc = rv_version_edit_add_file(e, &m);
    }
    for (int i = 0; out && i < out->n && rc == RAVEL_OK; i++)
        rc = rv_version_edit_add_file(e, &out->files[i]);
    return rc;
}

static void compaction_unlink_running_locked(ravel_db *db,
                                             struct rv_compaction *c)
    RV_REQUIRES(db->mu.lock);
static void compaction_unlink_running_locked(ravel_db *db,
                                             struct rv_compaction *c)
{
    struct rv_compaction **p = &db->mu.compact.running;
    while (*p && *p != c)
        p = &(*p)->next;
    if (*p)
        *p = c->next;
    db->mu.compact.n_running--;
}

/* Under db->mu.lock: what a failure RC of C does (see the top of the file). */
static void compaction_fail_locked(ravel_db *db, const struct rv_compaction *c,
                                   int rc, int logged)
    RV_REQUIRES(db->mu.lock);
static void compaction_fail_locked(ravel_db *db, const struct rv_compaction *c,
                                   int rc, int logged)
{
    if (atomic_load_explicit(&db->compaction_abort, memory_order_relaxed))
        return;
    char why[RV_STOP_REASON_MAX];
    snprintf(why, sizeof why, "a compaction of level %d into level %d "
             "failed: %.400s", c->level, c->output_level, rv_errmsg_get());
    atomic_fetch_add_explicit(&db->stats.bg_errors, 1, memory_order_relaxed);
    db->mu.compact.failures++;
    uint64_t pause = 1000000u;
    for (int i = 1; i < db->mu.compact.failures && pause < 60000000u; i++)
        pause *= 2;
    db->mu.compact.retry_at = rv_now_micros() + pause;
    rv_db_log(db, "%s (failure %d in a row; inputs kept, retry in %llu s)",
              why, db->mu.compact.failures,
              (unsigned long long)(pause / 1000000u));
    if (logged || db->mu.compact.failures >= RV_COMPACTION_MAX_FAILURES) {
        rv_mutex_unlock(&db->mu.lock);
        rv_db_stop_writes(db, rc, why);
        rv_mutex_lock(&db->mu.lock);
    }
}

static void compaction_count(ravel_db *db, const struct rv_compaction *c,
                             const struct compaction_result *r,
                             uint64_t took)
{
    int o = c->output_level;
    atomic_fetch_add_explicit(&db->stats.compactions[o], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&db->stats.compact_read[o], r->read_bytes,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&db->stats.compact_written[o], r->out.bytes,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&db->stats.compact_micros[o], took,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&db->stats.compact_dropped, r->dropped,
                              memory_order_relaxed);
    if (c->is_move)
        atomic_fetch_add_explicit(&db->stats.compact_moves, 1,
                                  memory_order_relaxed);
}

int rv_compaction_run_locked(ravel_db *db, struct rv_compaction *c)
{
    c->next = db->mu.compact.running;
    db->mu.compact.running = c;
    db->mu.compact.n_running++;
    struct rv_keep keep;
    memset(&keep, 0, sizeof keep);
    int rc = rv_keep_init_locked(&keep, db);
    rv_mutex_unlock(&db->mu.lock);
    rv_pause_here(RV_PAUSE_COMPACTION_PICKED);

    uint64_t start = rv_now_micros();
    struct compaction_result r;
    memset(&r, 0, sizeof r);
    rv_table_output_init(&r.out, db, c->output_level);
    struct rv_version_edit edit;
    rv_version_edit_init(&edit);
    int logged = 0;
    if (rc == RAVEL_OK && !c->is_move) {
        rc = compaction_merge(db, c, &keep, &r);
        int err = rc == RAVEL_OK ? rv_fault_check(RV_FAULT_COMPACTION) : 0;
        if (err)
            rc = rv_error_errno(RAVEL_IOERR, -err, "compaction into level %d "
                                "(injected)", c->output_level);
        if (rc == RAVEL_OK)
            rc = rv_sync_dir(db->dir);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_COMPACTION_WRITTEN);
    }
    if (rc == RAVEL_OK)
        rc = compaction_edit(c, &r.out, &edit);
    if (rc != RAVEL_OK) {
        rv_table_output_discard(&r.out);
    } else {
        logged = 1;
        rc = rv_db_log_edit(db, &edit);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_COMPACTION_LOGGED);
    }

    rv_mutex_lock(&db->mu.lock);
    if (rc == RAVEL_OK)
        rc = rv_db_install_edit_locked(db, NULL, &edit);
    compaction_unlink_running_locked(db, c);
    uint64_t took = rv_now_micros() - start;
    if (rc != RAVEL_OK) {
        compaction_fail_locked(db, c, rc, logged);
    } else {
        db->mu.compact.failures = 0;
        compaction_count(db, c, &r, took);
        rv_db_log(db, "compacted %d+%d file(s) of level %d%s into %d file(s) "
                  "of level %d: %llu bytes read, %llu written, %llu "
                  "entries dropped, in %.3f s (score %.2f%s)",
                  c->n_inputs[0], c->n_inputs[1], c->level,
                  c->is_move ? " (moved)" : "", c->is_move ? 1 : r.out.n,
                  c->output_level, (unsigned long long)r.read_bytes,
                  (unsigned long long)r.out.bytes,
                  (unsigned long long)r.dropped, (double)took / 1e6,
                  c->score, c->manual ? ", manual" : "");
    }
    rv_compaction_release(c);
    pthread_cond_broadcast(&db->mu.compact.cv);
    pthread_cond_broadcast(&db->mu.bg.cv);
    rv_version_edit_clear(&edit);
    rv_table_output_free(&r.out);
    rv_keep_free(&keep);
    return rc;
}
