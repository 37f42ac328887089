/*
** version.c -- versions (see version.h) and installing a new one when the
** leader switches memtables.
*/
#include "db/db.h"
#include "db/version.h"
#include "util/error.h"

#include <stdlib.h>

struct rv_version *rv_version_new(rv_memtable *mem, uint64_t mem_wal,
                                  int n_imm)
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
    free(v->imm);
    free(v->imm_wal);
    free(v);
}

struct rv_version *rv_db_ref_version(ravel_db *db)
{
    pthread_mutex_lock(&db->mu);
    struct rv_version *v = db->current;
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&db->mu);
    return v;
}

rv_memtable *rv_db_active_memtable(ravel_db *db)
{
    /* Only leaders replace db->current, and leaders follow one another
    ** through the write queue's release/acquire hand-off, so the leader
    ** reads its own latest store without the lock. */
    return db->current->mem;
}

int rv_db_install_memtable(ravel_db *db, rv_memtable *mem,
                           uint64_t wal_segment)
{
    pthread_mutex_lock(&db->mu);
    struct rv_version *old = db->current;
    struct rv_version *v = rv_version_new(mem, wal_segment, old->n_imm + 1);
    if (!v) {
        pthread_mutex_unlock(&db->mu);
        return rv_error(RAVEL_NOMEM, "out of memory switching memtables");
    }
    rv_memtable_ref(old->mem);
    v->imm[0] = old->mem;
    v->imm_wal[0] = old->mem_wal;
    for (int i = 0; i < old->n_imm; i++) {
        rv_memtable_ref(old->imm[i]);
        v->imm[i + 1] = old->imm[i];
        v->imm_wal[i + 1] = old->imm_wal[i];
    }
    db->current = v;
    pthread_mutex_unlock(&db->mu);
    rv_version_unref(old);
    return RAVEL_OK;
}
