/*
** compaction_picker.c -- level targets, scores, pending bytes and the
** choice of the next compaction (compaction_picker.h).
*/
#include "db/compaction_picker.h"
#include "base/dbformat.h"

#include <stdlib.h>
#include <string.h>

#define PICKER_MAX_SCORE 1e9 /* data above the base level must go down */

static uint64_t picker_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

uint64_t rv_level_bytes(const struct rv_files *fs, int l)
{
    uint64_t bytes = 0;
    for (int i = 0; i < fs->n[l]; i++)
        bytes += fs->level[l][i]->meta.size;
    return bytes;
}

/* Bytes of level L's files not being compacted. */
static uint64_t picker_idle_bytes(const struct rv_files *fs, int l)
{
    uint64_t bytes = 0;
    for (int i = 0; i < fs->n[l]; i++)
        if (!fs->level[l][i]->compacting)
            bytes += fs->level[l][i]->meta.size;
    return bytes;
}

int rv_files_deepest_level(const struct rv_files *fs)
{
    for (int l = RV_NUM_LEVELS - 1; l > 0; l--)
        if (fs->n[l] > 0)
            return l;
    return 0;
}

void rv_level_targets_compute(const struct ravel_options *o,
                              const struct rv_files *fs,
                              struct rv_level_targets *t)
{
    memset(t, 0, sizeof *t);
    int last = o->num_levels - 1;
    uint64_t base = o->max_bytes_for_level_base;
    uint64_t mult = (uint64_t)o->max_bytes_for_level_multiplier;
    if (!o->level_compaction_dynamic_level_bytes) {
        t->base_level = 1;
        t->bytes[1] = base;
        for (int l = 2; l <= last; l++)
            t->bytes[l] = picker_mul(t->bytes[l - 1], mult);
        return;
    }
    /* dynamic: from the largest level's actual size up, a multiplier
    ** smaller per level, until a target fits under the base */
    uint64_t biggest = 0;
    for (int l = 1; l <= last; l++) {
        uint64_t b = rv_level_bytes(fs, l);
        if (b > biggest)
            biggest = b;
    }
    int l = last;
    uint64_t target = biggest > base ? biggest : base;
    t->bytes[l] = target;
    while (l > 1 && target > base) {
        target /= mult;
        l--;
        t->bytes[l] = target;
    }
    t->base_level = l;
    /* a level holding data above the base level (the option was turned
    ** on, or the data shrank) is where level 0 must compact instead: no
    ** newer data may go below older */
    for (int k = 1; k < t->base_level; k++)
        if (fs->n[k] > 0) {
            t->base_level = k;
            break;
        }
}

double rv_level_score(const struct ravel_options *o, const struct rv_files *fs,
                      const struct rv_level_targets *t, int l)
{
    if (l == 0) {
        int n = 0;
        for (int i = 0; i < fs->n[0]; i++)
            n += !fs->level[0][i]->compacting;
        return (double)n / o->level0_file_num_compaction_trigger;
    }
    if (l >= o->num_levels - 1)
        return 0; /* the last level goes nowhere */
    uint64_t bytes = picker_idle_bytes(fs, l);
    if (bytes == 0)
        return 0;
    if (t->bytes[l] == 0)
        return PICKER_MAX_SCORE;
    return (double)bytes / (double)t->bytes[l];
}

uint64_t rv_pending_compaction_bytes(const struct ravel_options *o,
                                     const struct rv_files *fs)
{
    struct rv_level_targets t;
    rv_level_targets_compute(o, fs, &t);
    int last = o->num_levels - 1;
    uint64_t est = 0, carry = 0;
    if (fs->n[0] >= o->level0_file_num_compaction_trigger) {
        carry = rv_level_bytes(fs, 0);
        est += carry + rv_level_bytes(fs, t.base_level);
    }
    for (int l = t.base_level; l < last; l++) {
        uint64_t own = rv_level_bytes(fs, l);
        uint64_t size = own + carry;
        carry = 0;
        if (size <= t.bytes[l])
            continue;
        uint64_t excess = size - t.bytes[l];
        uint64_t next = rv_level_bytes(fs, l + 1);
        /* rewriting the excess rewrites about next/own as much below */
        double ratio = own ? (double)next / (double)own : 0;
        est += excess + (uint64_t)((double)excess * ratio);
        carry = excess;
    }
    return est;
}

/* ------------------------------------------------------------ ranges */

static const char *picker_ukey(const char *ikey, size_t len, size_t *ulen)
{
    *ulen = len - RV_TAG_SIZE;
    return ikey;
}

/* 1 if file F's user keys overlap [BEGIN, END] (NULL: unbounded). */
static int picker_file_overlaps(const struct rv_file *f, const char *begin,
                                size_t blen, const char *end, size_t elen)
{
    size_t sl, ll;
    const char *s = picker_ukey(f->meta.smallest, f->meta.smallest_len, &sl);
    const char *g = picker_ukey(f->meta.largest, f->meta.largest_len, &ll);
    if (begin && rv_user_key_compare(g, ll, begin, blen) < 0)
        return 0;
    if (end && rv_user_key_compare(s, sl, end, elen) > 0)
        return 0;
    return 1;
}

/* 1 if [AS, AL] and [BS, BL] (user keys) overlap. */
static int picker_ranges_overlap(const char *as, size_t asl, const char *al,
                                 size_t all, const char *bs, size_t bsl,
                                 const char *bl, size_t bll)
{
    return rv_user_key_compare(al, all, bs, bsl) >= 0 &&
           rv_user_key_compare(bl, bll, as, asl) >= 0;
}

/* 1 if a RUNNING compaction writes into LEVEL over keys overlapping
** [S, L]. */
static int picker_output_conflict(const struct rv_compaction *running,
                                  int level, const char *s, size_t sl,
                                  const char *l, size_t ll)
{
    for (const struct rv_compaction *c = running; c; c = c->next)
        if (c->output_level == level &&
            picker_ranges_overlap(c->smallest, c->smallest_len, c->largest,
                                  c->largest_len, s, sl, l, ll))
            return 1;
    return 0;
}

/* ------------------------------------------------------- compactions */

static int picker_add(struct rv_file ***list, int *n, struct rv_file *f)
{
    struct rv_file **grown = realloc(*list, (size_t)(*n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    rv_file_ref(f);
    grown[(*n)++] = f;
    *list = grown;
    return 0;
}

/* Sets C's key range to cover INPUTS[0] and INPUTS[1] (replacing the
** one it had). */
static int picker_set_range(struct rv_compaction *c)
{
    const char *s = NULL, *l = NULL;
    size_t sl = 0, ll = 0;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < c->n_inputs[w]; i++) {
            const struct rv_file_meta *m = &c->inputs[w][i]->meta;
            size_t a, b;
            const char *fs = picker_ukey(m->smallest, m->smallest_len, &a);
            const char *fl = picker_ukey(m->largest, m->largest_len, &b);
            if (!s || rv_user_key_compare(fs, a, s, sl) < 0) {
                s = fs;
                sl = a;
            }
            if (!l || rv_user_key_compare(fl, b, l, ll) > 0) {
                l = fl;
                ll = b;
            }
        }
    free(c->smallest);
    free(c->largest);
    c->smallest = malloc(sl ? sl : 1);
    c->largest = malloc(ll ? ll : 1);
    if (!c->smallest || !c->largest)
        return -1;
    memcpy(c->smallest, s, sl);
    memcpy(c->largest, l, ll);
    c->smallest_len = sl;
    c->largest_len = ll;
    return 0;
}

void rv_compaction_release(struct rv_compaction *c)
{
    if (!c)
        return;
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < c->n_inputs[w]; i++) {
            c->inputs[w][i]->compacting = 0;
            rv_file_unref(c->inputs[w][i]);
        }
        free(c->inputs[w]);
    }
    for (int i = 0; i < c->n_grandparents; i++)
        rv_file_unref(c->grandparents[i]);
    free(c->grandparents);
    if (c->files)
        rv_files_unref(c->files);
    free(c->smallest);
    free(c->largest);
    free(c);
}

uint64_t rv_max_compaction_bytes(const struct ravel_options *o)
{
    return o->max_compaction_bytes ? o->max_compaction_bytes
                                   : picker_mul(o->target_file_size_base, 25);
}

static uint64_t picker_target_file_size(const struct ravel_options *o,
                                        int level)
{
    uint64_t size = o->target_file_size_base;
    for (int l = 1; l < level; l++)
        size = picker_mul(size, (uint64_t)o->target_file_size_multiplier);
    return size;
}

static struct rv_compaction *picker_new(const struct ravel_options *o,
                                        struct rv_files *fs, int level,
                                        int output_level)
{
    struct rv_compaction *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->level = level;
    c->output_level = output_level;
    rv_files_ref(fs);
    c->files = fs;
    c->max_output_file_size = picker_target_file_size(o, output_level);
    c->max_compaction_bytes = rv_max_compaction_bytes(o);
    c->dynamic_file_size = o->level_compaction_dynamic_file_size;
    return c;
}

/* Adds the output level's files overlapping C's range (which grows to
** cover them) and the grandparents; marks every input compacting.
** Returns 0, 1 if a file needed is being compacted or the output range is
** being written by a running compaction, -1 on OOM. */
static int picker_complete(struct rv_compaction *c, struct rv_files *fs,
                           const struct rv_compaction *running)
{
    if (picker_set_range(c))
        return -1;
    int out = c->output_level;
    if (out != c->level) {
        for (int i = 0; i < fs->n[out]; i++) {
            struct rv_file *f = fs->level[out][i];
            if (!picker_file_overlaps(f, c->smallest, c->smallest_len,
                                      c->largest, c->largest_len))
                continue;
            if (f->compacting)
                return 1;
            if (picker_add(&c->inputs[1], &c->n_inputs[1], f))
                return -1;
        }
        if (picker_set_range(c))
            return -1;
    }
    if (picker_output_conflict(running, out, c->smallest, c->smallest_len,
                               c->largest, c->largest_len))
        return 1;
    if (out + 1 < RV_NUM_LEVELS)
        for (int i = 0; i < fs->n[out + 1]; i++) {
            struct rv_file *f = fs->level[out + 1][i];
            if (picker_file_overlaps(f, c->smallest, c->smallest_len,
                                     c->largest, c->largest_len) &&
                picker_add(&c->grandparents, &c->n_grandparents, f))
                return -1;
        }
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < c->n_inputs[w]; i++)
            c->inputs[w][i]->compacting = 1;
    return 0;
}

/* Level 0 into the output level: every level 0 file. */
static struct rv_compaction *picker_level0(const struct ravel_options *o,
                                           struct rv_files *fs,
                                           const struct rv_compaction
                                           *running, int output_level)
{
    for (int i = 0; i < fs->n[0]; i++)
        if (fs->level[0][i]->compacting)
            return NULL; /* one level 0 compaction at a time */
    struct rv_compaction *c = picker_new(o, fs, 0, output_level);
    int rc = c ? 0 : -1;
    for (int i = 0; rc == 0 && i < fs->n[0]; i++)
        rc = picker_add(&c->inputs[0], &c->n_inputs[0], fs->level[0][i]);
    if (rc == 0)
        rc = picker_complete(c, fs, running);
    if (rc != 0) {
        rv_compaction_release(c); /* marks nothing it did not set */
        return NULL;
    }
    return c;
}

static void picker_set_pointer(struct rv_key_pointer *p, const char *k,
                               size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return; /* the round-robin restarts at the level's start */
    memcpy(copy, k, len);
    free(p->key);
    p->key = copy;
    p->len = len;
    p->set = 1;
}

/* Bytes of level L+1's files overlapping each file of level L, into
** OVERLAP[i] (both levels sorted and disjoint: one pass). */
static void picker_overlaps(const struct rv_files *fs, int l,
                            uint64_t *overlap)
{
    struct rv_file *const *up = fs->level[l];
    struct rv_file *const *down = fs->level[l + 1];
    int nd = fs->n[l + 1], j = 0;
    for (int i = 0; i < fs->n[l]; i++) {
        const struct rv_file_meta *m = &up[i]->meta;
        overlap[i] = 0;
        /* skip the files below that end before this one starts */
        while (j < nd &&
               rv_ikey_compare(down[j]->meta.largest,
                               down[j]->meta.largest_len, m->smallest,
                               m->smallest_len) < 0)
            j++;
        for (int k = j; k < nd; k++) {
            if (rv_user_key_compare(down[k]->meta.smallest,
                                    down[k]->meta.smallest_len - RV_TAG_SIZE,
                                    m->largest,
                                    m->largest_len - RV_TAG_SIZE) > 0)
                break;
            overlap[i] += down[k]->meta.size;
        }
    }
}

/* The order level L's files are tried in: by their overlap with L+1
** relative to their size, smallest first (RocksDB's
** kMinOverlappingRatio: the least rewriting per byte moved down), or
** round-robin from the level's pointer.  Fills ORDER (n entries). */
static void picker_order(const struct ravel_options *o,
                         const struct rv_files *fs, int l,
                         const struct rv_key_pointer *ptr, int *order)
{
    int n = fs->n[l], start = 0;
    if (o->compaction_pri == RV_COMPACTION_PRI_ROUND_ROBIN || n < 2) {
        if (ptr->set)
            while (start < n) {
                const struct rv_file_meta *m = &fs->level[l][start]->meta;
                if (rv_user_key_compare(m->largest,
                                        m->largest_len - RV_TAG_SIZE,
                                        ptr->key, ptr->len) > 0)
                    break;
                start++;
            }
        for (int k = 0; k < n; k++)
            order[k] = (start + k) % n;
        return;
    }
    uint64_t *overlap = malloc((size_t)n * sizeof *overlap);
    double *ratio = malloc((size_t)n * sizeof *ratio);
    for (int k = 0; k < n; k++)
        order[k] = k;
    if (!overlap || !ratio) {
        free(overlap);
        free(ratio);
        return; /* out of memory: key order will do */
    }
    picker_overlaps(fs, l, overlap);
    for (int k = 0; k < n; k++)
        ratio[k] = (double)overlap[k] /
                   (double)(fs->level[l][k]->meta.size + 1);
    /* insertion sort by ratio: levels hold at most thousands of files and
    ** this runs once per compaction */
    for (int k = 1; k < n; k++) {
        int v = order[k], at = k;
        while (at > 0 && ratio[order[at - 1]] > ratio[v]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = v;
    }
    free(overlap);
    free(ratio);
}

/* Level L >= 1 into L+1: the first idle file in picker_order's order whose
** compaction conflicts with nothing running. */
static struct rv_compaction *picker_level(const struct ravel_options *o,
                                          struct rv_files *fs,
                                          const struct rv_compaction *running,
                                          int l, struct rv_key_pointer *ptr)
{
    int n = fs->n[l];
    int *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return NULL;
    picker_order(o, fs, l, ptr, order);
    struct rv_compaction *found = NULL;
    for (int k = 0; k < n && !found; k++) {
        struct rv_file *f = fs->level[l][order[k]];
        if (f->compacting)
            continue;
        struct rv_compaction *c = picker_new(o, fs, l, l + 1);
        int rc = c ? picker_add(&c->inputs[0], &c->n_inputs[0], f) : -1;
        if (rc == 0)
            rc = picker_complete(c, fs, running);
        if (rc == 0) {
            picker_set_pointer(ptr, f->meta.largest,
                               f->meta.largest_len - RV_TAG_SIZE);
            found = c;
            break;
        }
        rv_compaction_release(c);
        if (rc < 0)
            break;
    }
    free(order);
    return found;
}

/* Marks a one-file compaction that overlaps nothing in its output level,
** and not too much below it, as a move. */
static void picker_maybe_move(struct rv_compaction *c)
{
    if (c->manual || c->n_inputs[0] != 1 || c->n_inputs[1] != 0)
        return;
    uint64_t gp = 0;
    for (int i = 0; i < c->n_grandparents; i++)
        gp += c->grandparents[i]->meta.size;
    if (gp <= c->max_compaction_bytes)
        c->is_move = 1;
}

struct rv_compaction *rv_compaction_pick(const struct ravel_options *o,
                                         struct rv_files *fs,
                                         const struct rv_compaction *running,
                                         struct rv_key_pointer *pointers)
{
    struct rv_level_targets t;
    rv_level_targets_compute(o, fs, &t);
    double scores[RV_NUM_LEVELS];
    for (int l = 0; l < o->num_levels; l++)
        scores[l] = rv_level_score(o, fs, &t, l);
    /* highest score first; each level at most once */
    for (int tries = 0; tries < o->num_levels; tries++) {
        int best = -1;
        for (int l = 0; l < o->num_levels; l++)
            if (scores[l] >= 1 && (best < 0 || scores[l] > scores[best]))
                best = l;
        if (best < 0)
            return NULL;
        double score = scores[best];
        scores[best] = 0;
        struct rv_compaction *c;
        if (best == 0)
            c = picker_level0(o, fs, running, t.base_level);
        else
            c = picker_level(o, fs, running, best, &pointers[best]);
        if (c) {
            c->score = score;
            picker_maybe_move(c);
            return c;
        }
    }
    return NULL;
}

/* Adds F to C's inputs of its level, unless it is one already: 0, 1 if F
** is being compacted, -1 on OOM. */
static int picker_take(struct rv_compaction *c, struct rv_file *f)
{
    for (int k = 0; k < c->n_inputs[0]; k++)
        if (c->inputs[0][k] == f)
            return 0;
    if (f->compacting)
        return 1;
    return picker_add(&c->inputs[0], &c->n_inputs[0], f);
}

/* C's inputs become every file of LEVEL (> 0: its files are disjoint and
** sorted) overlapping the span of the files C chose, in the level's
** order.  0, 1 if one of them is being compacted, -1 out of memory. */
static int picker_take_span(struct rv_compaction *c, struct rv_files *fs,
                            int level)
{
    if (picker_set_range(c) != 0)
        return -1;
    for (int i = 0; i < c->n_inputs[0]; i++) /* the level still holds them */
        rv_file_unref(c->inputs[0][i]);
    c->n_inputs[0] = 0;
    int rc = 0;
    for (int i = 0; rc == 0 && i < fs->n[level]; i++)
        if (picker_file_overlaps(fs->level[level][i], c->smallest,
                                 c->smallest_len, c->largest,
                                 c->largest_len))
            rc = picker_take(c, fs->level[level][i]);
    return rc;
}

struct rv_compaction *
rv_compaction_pick_range(const struct ravel_options *o, struct rv_files *fs,
                         const struct rv_compaction *running, int level,
                         int output_level, const char *begin, size_t blen,
                         const char *end, size_t elen, uint64_t min_number,
                         int allow_move, int *busy)
{
    struct rv_compaction *c = picker_new(o, fs, level, output_level);
    int rc = c ? 0 : -1;
    for (int i = 0; rc == 0 && i < fs->n[level]; i++) {
        struct rv_file *f = fs->level[level][i];
        if (f->meta.number < min_number &&
            picker_file_overlaps(f, begin, blen, end, elen))
            rc = picker_take(c, f);
    }
    if (rc == 0 && c->n_inputs[0] == 0) {
        rv_compaction_release(c); /* nothing of the range here */
        *busy = 0;
        return NULL;
    }
    /* level 0: with every file overlapping the chosen ones, until none is
    ** left out: no older version of a key may stay behind in level 0 */
    for (int grew = level == 0; rc == 0 && grew;) {
        int before = c->n_inputs[0];
        rc = picker_set_range(c);
        for (int i = 0; rc == 0 && i < fs->n[0]; i++)
            if (picker_file_overlaps(fs->level[0][i], c->smallest,
                                     c->smallest_len, c->largest,
                                     c->largest_len))
                rc = picker_take(c, fs->level[0][i]);
        grew = c->n_inputs[0] > before;
    }
    /* a level rewritten in place (OUTPUT_LEVEL == LEVEL > 0) takes every
    ** file of it within the chosen files' span, in key order: one left
    ** out (a file MIN_NUMBER passed over) would sit inside the output's
    ** range, and the level's files would overlap (gets then search the
    ** wrong file and miss live keys) */
    if (rc == 0 && level > 0 && level == output_level)
        rc = picker_take_span(c, fs, level);
    if (rc == 0)
        rc = picker_complete(c, fs, running);
    *busy = rc;
    if (rc != 0) {
        rv_compaction_release(c); /* marks nothing it did not set */
        return NULL;
    }
    if (allow_move)
        picker_maybe_move(c);
    c->manual = 1;
    return c;
}
