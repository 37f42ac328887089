/*
** version.c -- files, file sets and versions (see version.h), and
** installing a new version: when the leader switches memtables, and when a
** flush replaces its memtable by the files it wrote.
*/
#include "db/db.h"
#include "base/dbformat.h"
#include "db/version.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --------------------------------------------------------------- files */

struct rv_file *rv_file_new(const struct rv_file_meta *meta,
                            rv_file_release_fn release, void *release_ctx)
{
    struct rv_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->meta = *meta;
    f->meta.smallest = malloc(meta->smallest_len ? meta->smallest_len : 1);
    f->meta.largest = malloc(meta->largest_len ? meta->largest_len : 1);
    if (!f->meta.smallest || !f->meta.largest) {
        free(f->meta.smallest);
        free(f->meta.largest);
        free(f);
        return NULL;
    }
    memcpy(f->meta.smallest, meta->smallest, meta->smallest_len);
    memcpy(f->meta.largest, meta->largest, meta->largest_len);
    atomic_init(&f->refs, 1);
    atomic_init(&f->obsolete, 0);
    atomic_init(&f->table, NULL);
    f->release = release;
    f->release_ctx = release_ctx;
    f->hold_fd = -1;
    return f;
}

void rv_file_ref(struct rv_file *f)
{
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}

void rv_file_unref(struct rv_file *f)
{
    /* acq_rel: the last owner sees every use before deleting */
    if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* A moved file's table file is the one its older entry names, which
    ** older versions may still read: the older entry deletes it, when it
    ** goes in turn. */
    struct rv_file *from = f->moved_from;
    if (from && atomic_exchange_explicit(&f->obsolete, 0,
                                         memory_order_acq_rel))
        rv_file_mark_obsolete(from);
    if (f->release)
        f->release(f->release_ctx, f);
    if (f->hold_fd >= 0)
        close(f->hold_fd);
    free(f->meta.smallest);
    free(f->meta.largest);
    free(f);
    if (from)
        rv_file_unref(from);
}

void rv_file_mark_obsolete(struct rv_file *f)
{
    atomic_store_explicit(&f->obsolete, 1, memory_order_release);
}

void rv_file_set_moved_from(struct rv_file *f, struct rv_file *from)
{
    rv_file_ref(from);
    f->moved_from = from;
}

/* ----------------------------------------------------------- file sets */

struct rv_files *rv_files_new_empty(void)
{
    struct rv_files *fs = calloc(1, sizeof *fs);
    if (fs)
        atomic_init(&fs->refs, 1);
    return fs;
}

void rv_files_ref(struct rv_files *fs)
{
    atomic_fetch_add_explicit(&fs->refs, 1, memory_order_relaxed);
}

void rv_files_unref(struct rv_files *fs)
{
    if (atomic_fetch_sub_explicit(&fs->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int l = 0; l < RV_NUM_LEVELS; l++) {
        for (int i = 0; i < fs->n[l]; i++)
            rv_file_unref(fs->level[l][i]);
        free(fs->level[l]);
    }
    free(fs);
}

int rv_files_count(const struct rv_files *fs)
{
    int n = 0;
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        n += fs->n[l];
    return n;
}

uint64_t rv_files_bytes(const struct rv_files *fs)
{
    uint64_t bytes = 0;
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < fs->n[l]; i++)
            bytes += fs->level[l][i]->meta.size;
    return bytes;
}

static int version_is_deleted(const struct rv_version_edit *e, int level,
                              uint64_t number)
{
    for (int i = 0; e && i < e->n_deleted; i++)
        if (e->deleted[i].level == level && e->deleted[i].number == number)
            return 1;
    return 0;
}

static int version_is_added(struct rv_file **add, int n_add,
                            uint64_t number)
{
    for (int i = 0; i < n_add; i++)
        if (add[i]->meta.number == number)
            return 1;
    return 0;
}

/* Level 0: newest (highest number) first; other levels: by smallest key. */
static int version_file_order(const void *a, const void *b)
{
    const struct rv_file *x = *(struct rv_file *const *)a;
    const struct rv_file *y = *(struct rv_file *const *)b;
    if (x->meta.level == 0)
        return x->meta.number < y->meta.number ? 1
             : x->meta.number > y->meta.number ? -1 : 0;
    return rv_ikey_compare(x->meta.smallest, x->meta.smallest_len,
                           y->meta.smallest, y->meta.smallest_len);
}

struct rv_files *rv_files_apply(const struct rv_files *base,
                                struct rv_file **add, int n_add,
                                const struct rv_version_edit *e)
{
    struct rv_files *fs = rv_files_new_empty();
    if (!fs)
        return NULL;
    for (int l = 0; l < RV_NUM_LEVELS; l++) {
        int cap = base->n[l];
        for (int i = 0; i < n_add; i++)
            cap += add[i]->meta.level == l;
        if (cap == 0)
            continue;
        fs->level[l] = malloc((size_t)cap * sizeof *fs->level[l]);
        if (!fs->level[l]) {
            rv_files_unref(fs);
            return NULL;
        }
        for (int i = 0; i < base->n[l]; i++) {
            struct rv_file *f = base->level[l][i];
            if (version_is_deleted(e, l, f->meta.number))
                continue;
            rv_file_ref(f);
            fs->level[l][fs->n[l]++] = f;
        }
        for (int i = 0; i < n_add; i++) {
            if (add[i]->meta.level != l)
                continue;
            rv_file_ref(add[i]);
            fs->level[l][fs->n[l]++] = add[i];
        }
        qsort(fs->level[l], (size_t)fs->n[l], sizeof *fs->level[l],
              version_file_order);
    }
    /* Only now that nothing can fail: the removed files go once unused
    ** (a moved one stays: its new entry names the same file). */
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < base->n[l]; i++) {
            struct rv_file *f = base->level[l][i];
            if (version_is_deleted(e, l, f->meta.number) &&
                !version_is_added(add, n_add, f->meta.number))
                rv_file_mark_obsolete(f);
        }
    return fs;
}

/* ------------------------------------------------------------ versions */

struct rv_version *rv_version_new(rv_memtable *mem, uint64_t mem_wal,
                                  int n_imm, struct rv_files *files)
{
    struct rv_version *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->imm = calloc((size_t)n_imm + 1, sizeof *v->imm);
    v->imm_wal = calloc((size_t)n_imm + 1, sizeof *v->imm_wal);
    if (!v->imm || !v->imm_wal) {
        free(v->imm);
        free(v->imm_wal);
        free(v);
        return NULL;
    }
    atomic_init(&v->refs, 1);
    rv_memtable_ref(mem);
    v->mem = mem;
    v->mem_wal = mem_wal;
    v->n_imm = n_imm;
    rv_files_ref(files);
    v->files = files;
    return v;
}

void rv_version_unref(struct rv_version *v)
{
    /* acq_rel: the last owner must see all uses before freeing. */
    if (atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) != 1)
        return;
    rv_memtable_unref(v->mem);
    for (int i = 0; i < v->n_imm; i++)
        rv_memtable_unref(v->imm[i]);
    rv_files_unref(v->files);
    free(v->imm);
    free(v->imm_wal);
    free(v);
}

struct rv_version *rv_db_pin_version(ravel_db *db, unsigned *token)
{
    *token = rv_read_epoch_enter(&db->read.epoch);
    return atomic_load(&db->read.current); /* seq_cst: see read_epoch.h */
}

void rv_db_unpin_version(ravel_db *db, unsigned token)
{
    rv_read_epoch_exit(&db->read.epoch, token);
}

struct rv_version *rv_db_ref_version(ravel_db *db)
{
    unsigned token;
    struct rv_version *v = rv_db_pin_version(db, &token);
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    rv_db_unpin_version(db, token);
    return v;
}

rv_memtable *rv_db_active_memtable(ravel_db *db)
{
    /* Only leaders switch the active memtable (rv_db_install_memtable
    ** sets db->write.active_mem), and leaders follow one another through the
    ** write queue's release/acquire hand-off, so the leader reads its own
    ** latest store without the lock.  db->read.current itself may be replaced
    ** by a flush meanwhile (which keeps the active memtable): it is not
    ** read here.  The current version keeps the memtable alive. */
    return db->write.active_mem;
}

/* Copies OLD's immutable memtables into V from index AT on, skipping
** old index SKIP (-1: none). */
static void version_copy_imm(struct rv_version *v, int at,
                             const struct rv_version *old, int skip)
{
    for (int i = 0; i < old->n_imm; i++) {
        if (i == skip)
            continue;
        rv_memtable_ref(old->imm[i]);
        v->imm[at] = old->imm[i];
        v->imm_wal[at] = old->imm_wal[i];
        at++;
    }
}

/* Makes V current (under db->mu.lock); the old one is retired until no reader
** can hold it (read_epoch.h). */
static void version_install_locked(ravel_db *db, struct rv_version *v)
    RV_REQUIRES(db->mu.lock);
static void version_install_locked(ravel_db *db, struct rv_version *v)
{
    struct rv_version *old = db->read.current;
    atomic_store(&db->read.current, v); /* seq_cst: see read_epoch.h */
    rv_read_epoch_release(rv_read_epoch_retire_locked(&db->read.epoch, old));
}

void rv_db_install_version_locked(ravel_db *db, struct rv_version *v)
{
    version_install_locked(db, v);
}

int rv_db_install_memtable(ravel_db *db, rv_memtable *mem,
                           uint64_t wal_segment)
{
    rv_mutex_lock(&db->mu.lock);
    struct rv_version *old = db->read.current;
    struct rv_version *v = rv_version_new(mem, wal_segment, old->n_imm + 1,
                                          old->files);
    if (!v) {
        rv_mutex_unlock(&db->mu.lock);
        return rv_error(RAVEL_NOMEM, "out of memory switching memtables");
    }
    rv_memtable_ref(old->mem);
    v->imm[0] = old->mem;
    v->imm_wal[0] = old->mem_wal;
    version_copy_imm(v, 1, old, -1);
    version_install_locked(db, v);
    db->write.active_mem = mem;
    db->write.active_mem_wal = wal_segment;
    rv_write_stall_update_locked(db);
    pthread_cond_broadcast(&db->mu.bg.cv); /* a flush to run */
    rv_mutex_unlock(&db->mu.lock);
    return RAVEL_OK;
}

static int version_install_flush_locked(ravel_db *db, rv_memtable *flushed,
                                        struct rv_files *files)
    RV_REQUIRES(db->mu.lock);

int rv_db_log_edit(ravel_db *db, struct rv_version_edit *e)
{
    rv_mutex_lock(&db->manifest.lock);
    /* read here, under the manifest's lock, so that the counters the
    ** manifest records never go backwards from one edit to the next */
    rv_mutex_lock(&db->mu.lock);
    e->has_next_file_number = 1;
    e->next_file_number = db->mu.files.next_file_number;
    rv_mutex_unlock(&db->mu.lock);
    e->has_last_sequence = 1;
    e->last_sequence = atomic_load_explicit(&db->write.last_seq,
                                            memory_order_relaxed);
    int rc = rv_manifest_append(db->manifest.log, e);
    rv_mutex_unlock(&db->manifest.lock);
    return rc;
}

/* The entry of the current version that E deletes and adds again under
** the same number at another level (a move), or NULL. */
static struct rv_file *version_moved_entry(const struct rv_files *fs,
                                           const struct rv_version_edit *e,
                                           uint64_t number)
{
    for (int i = 0; i < e->n_deleted; i++) {
        int l = e->deleted[i].level;
        if (e->deleted[i].number != number || l < 0 || l >= RV_NUM_LEVELS)
            continue;
        for (int j = 0; j < fs->n[l]; j++)
            if (fs->level[l][j]->meta.number == number)
                return fs->level[l][j];
    }
    return NULL;
}

int rv_db_install_edit_locked(ravel_db *db, rv_memtable *flushed,
                              const struct rv_version_edit *e)
{
    struct rv_file **files = calloc((size_t)e->n_added + 1, sizeof *files);
    int made = 0, rc = RAVEL_OK;
    for (; files && made < e->n_added; made++) {
        files[made] = rv_db_new_file(db, &e->added[made]);
        if (!files[made])
            break;
        struct rv_file *from = version_moved_entry(
            db->read.current->files, e, e->added[made].number);
        if (from)
            rv_file_set_moved_from(files[made], from);
    }
    struct rv_files *fs = NULL;
    if (files && made == e->n_added)
        fs = rv_files_apply(db->read.current->files, files, e->n_added, e);
    if (!fs) {
        rc = rv_error(RAVEL_NOMEM, "out of memory installing a new version");
    } else if (flushed) {
        rc = version_install_flush_locked(db, flushed, fs);
    } else {
        struct rv_version *old = db->read.current;
        struct rv_version *v = rv_version_new(old->mem, old->mem_wal,
                                              old->n_imm, fs);
        if (v) {
            version_copy_imm(v, 0, old, -1);
            version_install_locked(db, v);
        } else {
            rc = rv_error(RAVEL_NOMEM, "out of memory installing a new "
                          "version");
        }
    }
    if (fs)
        rv_files_unref(fs);
    for (int i = 0; i < made; i++)
        rv_file_unref(files[i]);
    free(files);
    if (rc == RAVEL_OK)
        rv_write_stall_update_locked(db);
    return rc;
}

/* Replaces the immutable memtable FLUSHED by the file set FILES in a new
** current version. */
static int version_install_flush_locked(ravel_db *db, rv_memtable *flushed,
                                        struct rv_files *files)
{
    struct rv_version *old = db->read.current;
    int at = -1;
    for (int i = 0; i < old->n_imm; i++)
        if (old->imm[i] == flushed)
            at = i;
    if (at < 0)
        return rv_error(RAVEL_INVALID, "internal: the flushed memtable is "
                        "not among the immutable ones");
    struct rv_version *v = rv_version_new(old->mem, old->mem_wal,
                                          old->n_imm - 1, files);
    if (!v)
        return rv_error(RAVEL_NOMEM, "out of memory installing a flush");
    version_copy_imm(v, 0, old, at);
    version_install_locked(db, v);
    return RAVEL_OK;
}
