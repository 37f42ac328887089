/*
** flush.c -- writing the oldest immutable memtable to table files.
**
** A flush, run by a background thread (bg.c), one at a time, oldest
** memtable first:
**   1. under db->mu: picks the memtable, the WAL segment that becomes the
**      log number once it is flushed (the first segment of the next newer
**      memtable), and the live snapshots;
**   2. writes the memtable's entries to one or more table files (cut at
**      target_file_size_base, never inside one user key's versions),
**      keeping every version a live snapshot or a new reader can see and
**      dropping the others; each file is fdatasynced by its builder;
**   3. fsyncs the directory, so the new names survive a power loss;
**   4. appends one version edit to the manifest (fdatasynced): the files
**      at level 0, the new log number, the next file number, the last
**      sequence;
**   5. under db->mu: installs a version in which the files replace the
**      memtable, and wakes writers waiting for room;
**   6. deletes the WAL segments below the new log number.
** A crash before 4 leaves table files no manifest names: the next open
** deletes them and replays the WAL.  A crash after 4 leaves WAL segments
** below the log number: the next open deletes them.
**
** Which versions are kept: a reader sees, of one user key, the newest
** version at or below its sequence.  With the live snapshots s1 < s2 <
** ... < sn, the versions of a key fall into stripes (.., s1], (s1, s2],
** ..., (sn, +inf); each snapshot sees the newest version of its own stripe
** or of an older one, and a reader without a snapshot -- which, taking its
** version before its sequence (db_read.c), reads the new files only at a
** sequence at or above every flushed entry -- sees the newest of the last
** stripe.  So the newest version of each stripe is kept, the others are
** dropped.  Tombstones are kept (until compaction knows nothing older
** exists below).
**
** With write_prepared (visibility.h) a snapshot sees every version at or
** below its all_below and, between that and its sequence, the ones whose
** batches had committed when it was taken; a reader without a snapshot
** sees everything at or below the commit watermark, and above it what has
** committed.  The stripes are then cut at each snapshot's all_below and
** at the watermark (loaded before the snapshot list: later snapshots
** have all_below at or above it), and every version in a range some
** reader may or may not see -- between a snapshot's two bounds, or above
** the watermark -- is kept and hides nothing, whether its batch has
** committed yet or not: a version may reach a table file before its
** commit, and reads ask the commit table about it there as in a
** memtable.
**
** A failure (a write, an fdatasync, the manifest, memory) deletes the
** files written (unless the manifest append was attempted: the next open
** decides by what the manifest holds), leaves the memtable in the version and its WAL segments
** in place, and stops writes with the reason (as a failed WAL write
** does): nothing acknowledged is lost, and the next open starts again.
*/
#include "db/db.h"
#include "db/dbformat.h"
#include "table/table_builder.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A growable copy of one key. */
struct flush_key {
    char *data;
    size_t len, cap;
};

static int flush_key_set(struct flush_key *k, const char *p, size_t n)
{
    if (n > k->cap) {
        size_t cap = k->cap ? k->cap : 64;
        while (cap < n)
            cap *= 2;
        char *d = realloc(k->data, cap);
        if (!d)
            return rv_error(RAVEL_NOMEM, "out of memory for a key during a "
                            "flush");
        k->data = d;
        k->cap = cap;
    }
    if (n)
        memcpy(k->data, p, n);
    k->len = n;
    return RAVEL_OK;
}

/* ---------------------------------------------------- versions kept */

struct flush_keep {
    uint64_t *bounds;       /* stripe bounds, ascending: each live
                            ** snapshot's all_below (its sequence outside
                            ** write_prepared), and with write_prepared
                            ** the commit watermark */
    int n_bounds;
    struct rv_seq_range *uncertain; /* write_prepared: sequences some
                            ** reader may or may not see (between a view's
                            ** two bounds, or above the watermark):
                            ** ascending, disjoint */
    int n_uncertain;
    struct flush_key prev;  /* the last user key kept */
    int have_prev;
    int prev_stripe;
};

/* The stripe of SEQ: the index of the first bound >= SEQ, or n_bounds. */
static int flush_stripe(const struct flush_keep *k, uint64_t seq)
{
    int lo = 0, hi = k->n_bounds;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (k->bounds[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 1 if SEQ lies in one of K's uncertain ranges. */
static int flush_uncertain(const struct flush_keep *k, uint64_t seq)
{
    int lo = 0, hi = k->n_uncertain;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (k->uncertain[mid].hi < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k->n_uncertain && k->uncertain[lo].lo <= seq;
}

/* 1 if the entry IKEY (entries come in internal-key order) must be kept;
** 0 if a newer version of its key in the same stripe hides it from every
** reader; -1 on allocation failure.  An uncertain entry is kept and hides
** nothing: a reader may not see it. */
static int flush_keep_entry(struct flush_keep *k, const char *ikey,
                            size_t klen)
{
    size_t ulen = klen - RV_TAG_SIZE;
    uint64_t seq = rv_tag_sequence(rv_get_fixed64(ikey + ulen));
    if (flush_uncertain(k, seq))
        return 1;
    int stripe = flush_stripe(k, seq);
    if (k->have_prev && stripe == k->prev_stripe &&
        rv_user_key_compare(ikey, ulen, k->prev.data, k->prev.len) == 0)
        return 0;
    if (flush_key_set(&k->prev, ikey, ulen))
        return -1;
    k->have_prev = 1;
    k->prev_stripe = stripe;
    return 1;
}

static int flush_cmp_range(const void *a, const void *b)
{
    const struct rv_seq_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Fills K from the live snapshots' bounds (SNAPS, N, ascending by
** all_below) and, with write_prepared, the commit watermark WATERMARK
** (UINT64_MAX otherwise): see the top of this file. */
static int flush_keep_init(struct flush_keep *k,
                           const struct rv_snapshot_bounds *snaps, int n,
                           uint64_t watermark)
{
    int prepared = watermark != UINT64_MAX;
    k->bounds = malloc((size_t)(n + 1) * sizeof *k->bounds);
    k->uncertain = malloc((size_t)(n + 1) * sizeof *k->uncertain);
    if (!k->bounds || !k->uncertain)
        return rv_error(RAVEL_NOMEM, "out of memory listing snapshots");
    for (int i = 0; i < n; i++) {
        k->bounds[k->n_bounds++] = snaps[i].all_below;
        if (snaps[i].seq > snaps[i].all_below) {
            k->uncertain[k->n_uncertain].lo = snaps[i].all_below + 1;
            k->uncertain[k->n_uncertain++].hi = snaps[i].seq;
        }
    }
    if (prepared) {
        /* readers without a snapshot see everything at or below the
        ** watermark, and above it what has committed by then */
        int at = k->n_bounds;
        while (at > 0 && k->bounds[at - 1] > watermark) {
            k->bounds[at] = k->bounds[at - 1];
            at--;
        }
        k->bounds[at] = watermark;
        k->n_bounds++;
        k->uncertain[k->n_uncertain].lo = watermark + 1;
        k->uncertain[k->n_uncertain++].hi = UINT64_MAX;
    }
    qsort(k->uncertain, (size_t)k->n_uncertain, sizeof *k->uncertain,
          flush_cmp_range);
    int merged = 0;
    for (int i = 0; i < k->n_uncertain; i++) {
        if (merged > 0 && k->uncertain[i].lo <= k->uncertain[merged - 1].hi)
        {
            if (k->uncertain[i].hi > k->uncertain[merged - 1].hi)
                k->uncertain[merged - 1].hi = k->uncertain[i].hi;
        } else {
            k->uncertain[merged++] = k->uncertain[i];
        }
    }
    k->n_uncertain = merged;
    return RAVEL_OK;
}

static void flush_keep_free(struct flush_keep *k)
{
    free(k->bounds);
    free(k->uncertain);
    free(k->prev.data);
}

/* ---------------------------------------------------- table files */

/* The files one flush writes. */
struct flush_output {
    struct rv_file_meta *files;
    int n, cap;
    uint64_t bytes, entries, dropped;
};

/* The table being written. */
struct flush_table {
    int fd;
    char path[RV_PATH_MAX];
    uint64_t number;
    rv_table_builder *tb;
    struct flush_key smallest, largest;
    int empty;
};

static uint64_t flush_new_file_number(ravel_db *db)
{
    pthread_mutex_lock(&db->mu);
    uint64_t n = db->next_file_number++;
    pthread_mutex_unlock(&db->mu);
    return n;
}

static int flush_table_start(ravel_db *db, struct flush_table *t)
{
    t->number = flush_new_file_number(db);
    int rc = rv_table_file_path(t->path, db->dir, t->number);
    if (rc)
        return rc;
    t->fd = rv_open(t->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (t->fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create table file %s",
                              t->path);
    struct rv_table_options to = {
        .block_size = db->options.block_size,
        .block_restart_interval = db->options.block_restart_interval,
        .bloom_bits_per_key = db->options.bloom_bits_per_key,
        .compression = db->options.compression,
    };
    t->empty = 1;
    return rv_table_builder_new(t->fd, t->path, t->number, &to, &t->tb);
}

/* Abandons the table being written: closes and deletes it. */
static void flush_table_abandon(struct flush_table *t)
{
    if (t->tb)
        rv_table_builder_free(t->tb);
    t->tb = NULL;
    if (t->fd >= 0) {
        close(t->fd);
        unlink(t->path);
    }
    t->fd = -1;
}

static int flush_output_add(struct flush_output *out,
                            const struct rv_file_meta *m)
{
    if (out->n == out->cap) {
        int cap = out->cap ? out->cap * 2 : 4;
        struct rv_file_meta *f = realloc(out->files,
                                         (size_t)cap * sizeof *f);
        if (!f)
            return rv_error(RAVEL_NOMEM, "out of memory listing the "
                            "files of a flush");
        out->files = f;
        out->cap = cap;
    }
    out->files[out->n++] = *m;
    return RAVEL_OK;
}

/* Finishes the table being written and records it in OUT. */
static int flush_table_finish(struct flush_table *t, struct flush_output *out)
{
    struct rv_table_props props;
    memset(&props, 0, sizeof props);
    uint64_t size = 0;
    int rc = rv_table_builder_finish(t->tb, &props, &size);
    rv_table_builder_free(t->tb);
    t->tb = NULL;
    if (rc == RAVEL_OK && close(t->fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "close %s", t->path);
    else if (rc)
        close(t->fd);
    t->fd = -1;
    struct rv_file_meta m = {
        .level = 0, .number = t->number, .size = size,
        .smallest = t->smallest.data, .smallest_len = t->smallest.len,
        .largest = t->largest.data, .largest_len = t->largest.len,
        .smallest_seq = props.smallest_seq, .largest_seq = props.largest_seq,
        .entries = props.entries,
    };
    if (rc == RAVEL_OK) {
        /* the meta takes the key buffers */
        rc = flush_output_add(out, &m);
        if (rc == RAVEL_OK) {
            memset(&t->smallest, 0, sizeof t->smallest);
            memset(&t->largest, 0, sizeof t->largest);
            out->bytes += size;
            out->entries += props.entries;
        }
    }
    if (rc)
        unlink(t->path);
    return rc;
}

/* Adds one entry to the table being written, starting one if needed. */
static int flush_table_add(ravel_db *db, struct flush_table *t,
                           const char *k, size_t klen, const char *v,
                           size_t vlen)
{
    int rc = RAVEL_OK;
    if (!t->tb)
        rc = flush_table_start(db, t);
    if (rc == RAVEL_OK && t->empty)
        rc = flush_key_set(&t->smallest, k, klen);
    if (rc == RAVEL_OK)
        rc = rv_table_builder_add(t->tb, k, klen, v, vlen);
    if (rc == RAVEL_OK)
        rc = flush_key_set(&t->largest, k, klen);
    t->empty = 0;
    return rc;
}

/* Deletes the files of OUT (a failed flush) and frees the list. */
static void flush_output_discard(ravel_db *db, struct flush_output *out)
{
    for (int i = 0; i < out->n; i++) {
        char path[RV_PATH_MAX];
        if (rv_table_file_path(path, db->dir, out->files[i].number) == 0)
            unlink(path);
    }
}

static void flush_output_free(struct flush_output *out)
{
    for (int i = 0; i < out->n; i++) {
        free(out->files[i].smallest);
        free(out->files[i].largest);
    }
    free(out->files);
}

/* Step 2: writes MEM's entries that must be kept into table files. */
static int flush_write_tables(ravel_db *db, rv_memtable *mem,
                              struct flush_keep *keep,
                              struct flush_output *out)
{
    struct rv_iter *it = rv_memtable_iter_new(mem);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory for a flush iterator");
    struct flush_table t;
    memset(&t, 0, sizeof t);
    t.fd = -1;
    int rc = RAVEL_OK;
    for (it->ops->seek_to_first(it); rc == RAVEL_OK && it->ops->valid(it);
         it->ops->next(it)) {
        size_t klen, vlen;
        const char *k = it->ops->key(it, &klen);
        const char *v = it->ops->value(it, &vlen);
        int kept = flush_keep_entry(keep, k, klen);
        if (kept < 0) {
            rc = RAVEL_NOMEM;
            break;
        }
        if (!kept) {
            out->dropped++;
            continue;
        }
        /* A new user key (kept == 1 and the key changed) may start a new
        ** file once this one is big enough. */
        if (t.tb && rv_table_builder_size(t.tb) >=
                        db->options.target_file_size_base &&
            rv_user_key_compare(k, klen - RV_TAG_SIZE, t.largest.data,
                                t.largest.len - RV_TAG_SIZE) != 0)
            rc = flush_table_finish(&t, out);
        if (rc == RAVEL_OK)
            rc = flush_table_add(db, &t, k, klen, v, vlen);
    }
    if (rc == RAVEL_OK)
        rc = it->ops->status(it);
    it->ops->destroy(it);
    if (rc == RAVEL_OK && t.tb)
        rc = flush_table_finish(&t, out);
    flush_table_abandon(&t);
    free(t.smallest.data);
    free(t.largest.data);
    return rc;
}

/* ------------------------------------------------------- the job */

static uint64_t flush_now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Step 4: the edit naming OUT's files, appended to the manifest. */
static int flush_log_edit(ravel_db *db, const struct flush_output *out,
                          uint64_t log_number)
{
    struct rv_version_edit e;
    rv_version_edit_init(&e);
    int rc = RAVEL_OK;
    for (int i = 0; i < out->n && rc == RAVEL_OK; i++)
        rc = rv_version_edit_add_file(&e, &out->files[i]);
    pthread_mutex_lock(&db->mu);
    e.has_next_file_number = 1;
    e.next_file_number = db->next_file_number;
    pthread_mutex_unlock(&db->mu);
    e.has_log_number = 1;
    e.log_number = log_number;
    e.has_last_sequence = 1;
    e.last_sequence = atomic_load_explicit(&db->last_seq,
                                           memory_order_relaxed);
    if (rc == RAVEL_OK)
        rc = rv_manifest_append(db->manifest, &e);
    rv_version_edit_clear(&e);
    return rc;
}

/* Step 5, under db->mu: the files replace MEM in a new version. */
static int flush_install_locked(ravel_db *db, rv_memtable *mem,
                                const struct flush_output *out,
                                uint64_t log_number)
{
    struct rv_file **files = calloc((size_t)out->n + 1, sizeof *files);
    int made = 0, rc = RAVEL_OK;
    for (; files && made < out->n; made++) {
        files[made] = rv_db_new_file(db, &out->files[made]);
        if (!files[made])
            break;
    }
    struct rv_files *fs = NULL;
    if (files && made == out->n)
        fs = rv_files_apply(db->current->files, files, out->n, NULL);
    if (fs) {
        rc = rv_db_install_flush_locked(db, mem, fs);
        rv_files_unref(fs);
    } else {
        rc = rv_error(RAVEL_NOMEM, "out of memory installing a flush");
    }
    for (int i = 0; i < made; i++)
        rv_file_unref(files[i]);
    free(files);
    if (rc == RAVEL_OK)
        db->log_number = log_number;
    return rc;
}

/* Stops writes after the failure RC of a flush. */
static void flush_fail(ravel_db *db, int rc)
{
    char why[RV_STOP_REASON_MAX];
    snprintf(why, sizeof why, "a flush failed: %.450s", rv_errmsg_get());
    atomic_fetch_add_explicit(&db->stat_bg_errors, 1, memory_order_relaxed);
    rv_db_stop_writes(db, rc, why);
}

void rv_flush_run_locked(ravel_db *db)
{
    struct rv_version *v = db->current;
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    rv_memtable *mem = v->imm[v->n_imm - 1];
    uint64_t log_number = v->n_imm >= 2 ? v->imm_wal[v->n_imm - 2]
                                        : v->mem_wal;
    uint64_t old_log_number = db->log_number;
    int nomem = 0, n_snaps = 0;
    /* the watermark before the list: a snapshot taken after the list (so
    ** after this load) has all_below at or above it */
    uint64_t watermark = db->ordering == RV_ORDERING_WRITE_PREPARED
        ? atomic_load(&db->commit_watermark) : UINT64_MAX;
    struct rv_snapshot_bounds *snaps =
        rv_db_snapshot_list_locked(db, &n_snaps, &nomem);
    pthread_mutex_unlock(&db->mu);

    uint64_t start = flush_now_micros();
    struct flush_output out;
    memset(&out, 0, sizeof out);
    struct flush_keep keep;
    memset(&keep, 0, sizeof keep);
    int rc = nomem ? rv_error(RAVEL_NOMEM, "out of memory listing snapshots")
                   : flush_keep_init(&keep, snaps, n_snaps, watermark);
    if (rc == RAVEL_OK)
        rc = flush_write_tables(db, mem, &keep, &out);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(db->dir);
    if (rc != RAVEL_OK) {
        flush_output_discard(db, &out);
    } else {
        rv_pause_here(RV_PAUSE_FLUSH_TABLES_WRITTEN);
        /* If the append fails, the edit may still have reached the disk:
        ** the files stay, and the next open keeps or deletes them as the
        ** manifest it reads says. */
        rc = flush_log_edit(db, &out, log_number);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_FLUSH_LOGGED);
    }

    pthread_mutex_lock(&db->mu);
    if (rc == RAVEL_OK)
        rc = flush_install_locked(db, mem, &out, log_number);
    pthread_mutex_unlock(&db->mu);
    if (rc != RAVEL_OK) {
        /* The manifest may name the files (a failed install): they stay
        ** for the next open, which the stop makes the only way on. */
        flush_fail(db, rc);
    } else {
        rv_db_delete_wal_segments(db, old_log_number, log_number);
        atomic_fetch_add_explicit(&db->stat_flushes, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stat_flush_bytes, out.bytes,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stat_flush_entries, out.entries,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&db->stat_flush_dropped, out.dropped,
                                  memory_order_relaxed);
        uint64_t took = flush_now_micros() - start;
        atomic_fetch_add_explicit(&db->stat_flush_micros, took,
                                  memory_order_relaxed);
        rv_db_log(db, "flushed a memtable into %d table file(s), %llu "
                  "bytes, %llu entries (%llu versions dropped) in %.3f s; "
                  "log number %llu", out.n, (unsigned long long)out.bytes,
                  (unsigned long long)out.entries,
                  (unsigned long long)out.dropped, (double)took / 1e6,
                  (unsigned long long)log_number);
    }
    flush_output_free(&out);
    flush_keep_free(&keep);
    free(snaps);
    rv_version_unref(v);
    pthread_mutex_lock(&db->mu);
}
