/*
** repair_output.c -- the merge of everything repair read, and the new
** table files it writes (repair.h).
**
** Every source -- the WAL's entries in a memtable, the good blocks of each
** table file -- is merged by internal key (iter/merging_iter.c: user key,
** then sequence descending), so the first entry of each user key is its
** newest surviving version: a put is written, a deletion is not (with
** every source in the merge, nothing older is left for it to hide).
** Equal internal keys come from the sources in the order given: the WAL
** first, then the table files from the highest number down -- which
** decides between versions at sequence 0 of one key (repair.h's rule).
**
** The files are written at one level (repair.c's choice), cut at
** target_file_size_base between user keys, each fdatasynced by its
** builder; the caller syncs the directory.  Each keeps its entries'
** sequence numbers, so a second repair of the result merges to the same
** entries.
*/
#include "db/repair.h"
#include "base/dbformat.h"
#include "memtable/range_del.h"
#include "table/table_builder.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/random.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A growable copy of a key. */
struct repair_key {
    char *p;
    size_t len, cap;
};

static int repair_key_set(struct repair_key *k, const char *p, size_t len)
{
    if (len > k->cap) {
        char *q = realloc(k->p, len);
        if (!q)
            return rv_error(RAVEL_NOMEM, "out of memory merging");
        k->p = q;
        k->cap = len;
    }
    memcpy(k->p, p, len);
    k->len = len;
    return RAVEL_OK;
}

/* The file being written. */
struct repair_out {
    struct rv_repair *rp;
    struct rv_table_options to;
    int level;
    int fd;
    char path[RV_PATH_MAX];
    rv_table_builder *tb;
    struct rv_file_meta meta;       /* its keys in SMALLEST, LARGEST */
    struct repair_key smallest, largest;
};

static int repair_out_start(struct repair_out *o)
{
    struct rv_repair *rp = o->rp;
    memset(&o->meta, 0, sizeof o->meta);
    o->meta.level = o->level;
    o->meta.number = rp->next_number++;
    o->meta.smallest_seq = RV_MAX_SEQUENCE;
    int rc = rv_table_file_path(o->path, rp->dir, o->meta.number);
    if (rc)
        return rc;
    o->fd = rv_open(o->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (o->fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", o->path);
    rc = rv_table_builder_new(o->fd, o->path, o->meta.number, &o->to,
                              &o->tb);
    if (rc) {
        close(o->fd);
        o->fd = -1;
        unlink(o->path);
    }
    return rc;
}

/* Finishes the file being written and lists it in the edit. */
static int repair_out_finish(struct repair_out *o)
{
    struct rv_table_props props;
    int rc = rv_table_builder_finish(o->tb, &props, &o->meta.size);
    rv_table_builder_free(o->tb);
    o->tb = NULL;
    if (close(o->fd) != 0 && !rc)
        rc = rv_error_errno(RAVEL_IOERR, errno, "close %s", o->path);
    o->fd = -1;
    if (rc) {
        unlink(o->path);
        return rc;
    }
    o->meta.smallest = o->smallest.p;
    o->meta.smallest_len = o->smallest.len;
    o->meta.largest = o->largest.p;
    o->meta.largest_len = o->largest.len;
    rc = rv_version_edit_add_file(&o->rp->edit, &o->meta); /* copies keys */
    o->meta.smallest = o->meta.largest = NULL;
    return rc;
}

static int repair_out_add(struct repair_out *o, const char *k, size_t klen,
                          const char *v, size_t vlen)
{
    int rc = RAVEL_OK;
    if (!o->tb && (rc = repair_out_start(o)) != RAVEL_OK)
        return rc;
    uint64_t seq = rv_tag_sequence(rv_get_fixed64(k + klen - RV_TAG_SIZE));
    if (o->meta.entries == 0)
        rc = repair_key_set(&o->smallest, k, klen);
    if (!rc)
        rc = repair_key_set(&o->largest, k, klen);
    if (!rc)
        rc = rv_table_builder_add(o->tb, k, klen, v, vlen);
    if (rc)
        return rc;
    o->meta.entries++;
    if (seq < o->meta.smallest_seq)
        o->meta.smallest_seq = seq;
    if (seq > o->meta.largest_seq)
        o->meta.largest_seq = seq;
    o->rp->written++;
    if (rv_table_builder_size(o->tb) >= o->rp->o->target_file_size_base)
        rc = repair_out_finish(o);
    return rc;
}

/* Deletes the files written: the repair failed before a manifest named
** them (they are repair's own, nothing else has them). */
static void repair_out_discard(struct repair_out *o)
{
    if (o->tb) {
        rv_table_builder_free(o->tb);
        close(o->fd);
        unlink(o->path);
    }
    for (int i = 0; i < o->rp->edit.n_added; i++) {
        char path[RV_PATH_MAX];
        if (rv_table_file_path(path, o->rp->dir,
                               o->rp->edit.added[i].number) == RAVEL_OK)
            unlink(path);
    }
}

/* -------------------------------------------------------------- merge */

/* 1 if user key U (LEN bytes) lies in range G. */
static int repair_in_range(const struct rv_repair_range *g, const char *u,
                           size_t len)
{
    return (!g->lo || rv_user_key_compare(g->lo, g->lo_len, u, len) <= 0) &&
           (!g->hi || rv_user_key_compare(u, len, g->hi, g->hi_len) <= 0);
}

/* Counts the kept version (user key U at SEQ) as suspect in every lost
** range it lies in whose lost part may have held a newer version. */
static void repair_check_suspect(struct rv_repair *rp, const char *u,
                                 size_t len, uint64_t seq)
{
    int suspect = 0;
    for (int i = 0; i < rp->lost.n; i++) {
        struct rv_repair_range *g = &rp->lost.v[i];
        if (seq < g->max_seq && repair_in_range(g, u, len)) {
            g->suspect++;
            suspect = 1;
        }
    }
    rp->suspects += suspect;
}

/* The iterator over every source: the WAL's memtable, then the tables
** from the highest file number down. */
static struct rv_iter *repair_merge_new(struct rv_repair *rp)
{
    int n = rp->n_read + 1;
    struct rv_iter **children = calloc((size_t)n, sizeof *children);
    if (!children)
        return NULL;
    int ok = (children[0] = rv_memtable_iter_new(rp->mem)) != NULL;
    for (int i = 0; ok && i < rp->n_read; i++)
        ok = (children[i + 1] =
                  rv_repair_table_iter_new(&rp->read[rp->n_read - 1 - i])) !=
             NULL;
    struct rv_iter *it = NULL;
    if (ok)
        it = rv_merging_iter_new(children, n); /* takes them, even failing */
    else
        for (int i = 0; i < n; i++)
            if (children[i])
                children[i]->ops->destroy(children[i]);
    free(children);
    return it;
}

/* 1 if a range deletion salvaged from the WAL into MEM, newer than SEQ,
** covers user key K. */
static int repair_out_range_deleted(rv_memtable *mem, const char *k,
                                   size_t klen, uint64_t seq)
{
    struct rv_range_dels *r = rv_memtable_range_dels(mem);
    if (rv_range_dels_count(r) == 0)
        return 0;
    int nomem = 0;
    const struct rv_range_frags *f = rv_range_dels_frags(r, &nomem);
    struct rv_read_view all = rv_read_view_at(RV_MAX_SEQUENCE);
    /* out of memory: keep the key (repair reports what it keeps) */
    return f && rv_range_frags_seq(f, k, klen, &all) > seq;
}

/* Walks the merge, writing the newest version of each user key. */
static int repair_merge(struct rv_repair *rp, struct rv_iter *it,
                        struct repair_out *o)
{
    struct repair_key prev = {0};
    uint64_t prev_seq = 0;
    int have_prev = 0, rc = RAVEL_OK;
    for (it->ops->seek_to_first(it); !rc && it->ops->valid(it);
         it->ops->next(it)) {
        size_t klen, vlen;
        const char *k = it->ops->key(it, &klen);
        const char *v = it->ops->value(it, &vlen);
        uint64_t tag = rv_get_fixed64(k + klen - RV_TAG_SIZE);
        size_t ulen = klen - RV_TAG_SIZE;
        if (have_prev &&
            rv_user_key_compare(prev.p, prev.len, k, ulen) == 0) {
            rp->older++;
            rp->zero_ties += prev_seq == 0 && rv_tag_sequence(tag) == 0;
            continue;
        }
        rc = repair_key_set(&prev, k, ulen);
        have_prev = 1;
        prev_seq = rv_tag_sequence(tag);
        if (rc)
            break;
        if (rv_tag_type(tag) == RV_TYPE_DELETE ||
            repair_out_range_deleted(rp->mem, k, ulen, prev_seq)) {
            rp->tombstones++;
            continue;
        }
        repair_check_suspect(rp, k, ulen, prev_seq);
        rc = repair_out_add(o, k, klen, v, vlen);
    }
    if (!rc)
        rc = it->ops->status(it);
    free(prev.p);
    return rc;
}

/* The range tombstones read from version-2 table files join the WAL's
** in MEM: the merge drops what they hide as it drops what a salvaged
** range delete hides, and writes none of them (every source is in the
** merge: nothing older is left for them to hide). */
static int repair_gather_tombstones(struct rv_repair *rp)
{
    struct rv_range_dels *dels = rv_memtable_range_dels(rp->mem);
    int rc = RAVEL_OK;
    for (int i = 0; i < rp->n_read && rc == RAVEL_OK; i++) {
        const struct rv_range_frags *f = rp->read[i].tombs;
        for (int j = 0; f && j < f->n && rc == RAVEL_OK; j++) {
            const struct rv_range_frag *g = &f->frag[j];
            for (int s = 0; s < g->n_seqs && rc == RAVEL_OK; s++)
                rc = rv_range_dels_add(dels, g->seqs[s], g->begin, g->blen,
                                       g->end, g->elen);
        }
    }
    return rc;
}

int rv_repair_write_tables(struct rv_repair *rp)
{
    struct repair_out o;
    memset(&o, 0, sizeof o);
    o.rp = rp;
    o.fd = -1;
    o.level = rp->level;
    o.to.block_size = (size_t)rp->o->block_size;
    o.to.block_restart_interval = rp->o->block_restart_interval;
    o.to.bloom_bits_per_key = rp->o->bloom_bits_per_key;
    o.to.compression = rp->o->compression;
    o.to.session_id = rv_random_id(); /* this repair's (table_format.h) */
    int rc = repair_gather_tombstones(rp);
    if (rc)
        return rc;
    struct rv_iter *it = repair_merge_new(rp);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory starting the merge");
    rc = repair_merge(rp, it, &o);
    it->ops->destroy(it);
    if (!rc && o.tb)
        rc = repair_out_finish(&o);
    if (rc)
        repair_out_discard(&o);
    free(o.smallest.p);
    free(o.largest.p);
    return rc;
}
