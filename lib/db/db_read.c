/*
** db_read.c -- reads: ravel_get, snapshots and ravel_iter.
**
** A read takes a read view (visibility.h) from its snapshot's sequence, or
** last_visible_seq, and a reference on the current version (the active and immutable
** memtables), then looks newest first.  Nothing a reader does blocks a
** writer beyond the short version-reference critical section.
*/
#include "db/db.h"
#include "db/db_iter.h"
#include "db/dbformat.h"
#include "db/visibility.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

struct ravel_snapshot {
    ravel_db *db;
    uint64_t seq;
};

struct ravel_iter {
    ravel_db *db;
    rv_db_iter *it;
};

static uint64_t read_latest_sequence(ravel_db *db)
{
    /* acquire: pairs with the group completer's release, so every insert
    ** of a visible group is seen. */
    return atomic_load_explicit(&db->last_visible_seq, memory_order_acquire);
}

static int read_check_key(const void *key, size_t klen, const char *fn)
{
    if (!key && klen)
        return rv_error(RAVEL_INVALID, "%s: key is NULL with length %zu",
                        fn, klen);
    if (klen > RAVEL_MAX_KEY_SIZE)
        return rv_error(RAVEL_INVALID, "%s: key of %zu bytes exceeds "
                        "RAVEL_MAX_KEY_SIZE (%u)", fn, klen,
                        RAVEL_MAX_KEY_SIZE);
    return RAVEL_OK;
}

static int read_check_snapshot(ravel_db *db, const ravel_snapshot *snap,
                               const char *fn)
{
    if (snap && snap->db != db)
        return rv_error(RAVEL_INVALID, "%s: the snapshot belongs to another "
                        "database handle", fn);
    return RAVEL_OK;
}

/* ------------------------------------------------------------ snapshots */

static int read_snapshot_acquire(ravel_db *db, ravel_snapshot **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_snapshot_acquire: out is NULL");
    ravel_snapshot *s = malloc(sizeof *s);
    if (!s)
        return rv_error(RAVEL_NOMEM, "out of memory for a snapshot");
    s->db = db;
    s->seq = read_latest_sequence(db);
    pthread_mutex_lock(&db->mu);
    db->live_snapshots++;
    pthread_mutex_unlock(&db->mu);
    *out = s;
    return RAVEL_OK;
}

int ravel_snapshot_acquire(ravel_db *db, ravel_snapshot **out)
{
    int rc = rv_db_enter(db, "ravel_snapshot_acquire");
    if (rc)
        return rc;
    rc = read_snapshot_acquire(db, out);
    rv_db_leave(db);
    return rc;
}

static int read_snapshot_release(ravel_db *db, ravel_snapshot *snap)
{
    if (!snap)
        return rv_error(RAVEL_INVALID, "ravel_snapshot_release: snapshot is "
                        "NULL");
    int rc = read_check_snapshot(db, snap, "ravel_snapshot_release");
    if (rc)
        return rc;
    pthread_mutex_lock(&db->mu);
    db->live_snapshots--;
    pthread_mutex_unlock(&db->mu);
    free(snap);
    return RAVEL_OK;
}

int ravel_snapshot_release(ravel_db *db, ravel_snapshot *snap)
{
    int rc = rv_db_enter(db, "ravel_snapshot_release");
    if (rc)
        return rc;
    rc = read_snapshot_release(db, snap);
    rv_db_leave(db);
    return rc;
}

uint64_t ravel_snapshot_sequence(const ravel_snapshot *snap)
{
    return snap ? snap->seq : 0;
}

/* ------------------------------------------------------------------ get */

/* Newest entry for KEY in V that VIEW sees: 1 if found (put or delete). */
static int read_lookup(struct rv_version *v, const void *key, size_t klen,
                       const struct rv_read_view *view, int *type,
                       const char **val, size_t *vlen)
{
    if (rv_memtable_get(v->mem, key, klen, view, type, val, vlen))
        return 1;
    for (int i = 0; i < v->n_imm; i++)
        if (rv_memtable_get(v->imm[i], key, klen, view, type, val, vlen))
            return 1;
    return 0;
}

static int read_get(ravel_db *db, const ravel_snapshot *snap,
                    const void *key, size_t klen, void **val, size_t *vlen)
{
    int rc = read_check_key(key, klen, "ravel_get");
    if (rc == RAVEL_OK)
        rc = read_check_snapshot(db, snap, "ravel_get");
    if (rc == RAVEL_OK && (!val || !vlen))
        rc = rv_error(RAVEL_INVALID, "ravel_get: %s is NULL",
                      !val ? "val" : "vlen");
    if (val)
        *val = NULL;
    if (vlen)
        *vlen = 0;
    if (rc)
        return rc;

    struct rv_read_view view =
        rv_read_view_at(snap ? snap->seq : read_latest_sequence(db));
    struct rv_version *v = rv_db_ref_version(db);
    int type = 0;
    const char *found = NULL;
    size_t found_len = 0;
    if (!read_lookup(v, key, klen, &view, &type, &found, &found_len) ||
        type != RV_TYPE_PUT) {
        rv_version_unref(v);
        return RAVEL_NOTFOUND;
    }
    char *copy = malloc(found_len ? found_len : 1);
    if (copy)
        memcpy(copy, found, found_len);
    rv_version_unref(v);
    if (!copy)
        return rv_error(RAVEL_NOMEM, "ravel_get: out of memory for a "
                        "%zu-byte value", found_len);
    *val = copy;
    *vlen = found_len;
    return RAVEL_OK;
}

int ravel_get(ravel_db *db, const ravel_snapshot *snap, const void *key,
              size_t klen, void **val, size_t *vlen)
{
    int rc = rv_db_enter(db, "ravel_get");
    if (rc) {
        if (val)
            *val = NULL;
        if (vlen)
            *vlen = 0;
        return rc;
    }
    rc = read_get(db, snap, key, klen, val, vlen);
    rv_db_leave(db);
    return rc;
}

/* ------------------------------------------------------------ iterators */

/* Merges the memtables of V, newest first. */
static struct rv_iter *read_version_iter(struct rv_version *v)
{
    int n = 1 + v->n_imm;
    struct rv_iter **children = calloc((size_t)n, sizeof *children);
    if (!children)
        return NULL;
    int made = 0;
    children[made] = rv_memtable_iter_new(v->mem);
    if (children[made])
        made++;
    for (int i = 0; i < v->n_imm && made == i + 1; i++) {
        children[made] = rv_memtable_iter_new(v->imm[i]);
        if (children[made])
            made++;
    }
    struct rv_iter *merged = NULL;
    if (made == n) {
        merged = rv_merging_iter_new(children, n);
    } else {
        for (int i = 0; i < made; i++)
            children[i]->ops->destroy(children[i]);
    }
    free(children);
    return merged;
}

static int read_iter_new(ravel_db *db, const ravel_snapshot *snap,
                         ravel_iter **out)
{
    int rc = read_check_snapshot(db, snap, "ravel_iter_new");
    if (rc == RAVEL_OK && !out)
        rc = rv_error(RAVEL_INVALID, "ravel_iter_new: out is NULL");
    if (rc)
        return rc;

    struct rv_read_view view =
        rv_read_view_at(snap ? snap->seq : read_latest_sequence(db));
    struct rv_version *v = rv_db_ref_version(db);
    struct rv_iter *merged = read_version_iter(v);
    rv_version_unref(v); /* the memtable iterators hold their memtables */
    ravel_iter *it = merged ? malloc(sizeof *it) : NULL;
    rv_db_iter *dit = it ? rv_db_iter_new(merged, &view) : NULL;
    if (!dit) {
        if (!it && merged)
            merged->ops->destroy(merged);
        free(it);
        return rv_error(RAVEL_NOMEM, "out of memory creating an iterator");
    }
    it->db = db;
    it->it = dit;
    pthread_mutex_lock(&db->mu);
    db->live_iterators++;
    pthread_mutex_unlock(&db->mu);
    *out = it;
    return RAVEL_OK;
}

int ravel_iter_new(ravel_db *db, const ravel_snapshot *snap, ravel_iter **out)
{
    int rc = rv_db_enter(db, "ravel_iter_new");
    if (rc)
        return rc;
    rc = read_iter_new(db, snap, out);
    rv_db_leave(db);
    return rc;
}

void ravel_iter_free(ravel_iter *it)
{
    if (!it)
        return;
    ravel_db *db = it->db;
    rv_db_iter_free(it->it);
    free(it);
    pthread_mutex_lock(&db->mu);
    db->live_iterators--;
    pthread_mutex_unlock(&db->mu);
}

static int read_iter_check(const ravel_iter *it, const char *fn)
{
    if (!it)
        return rv_error(RAVEL_INVALID, "%s: iterator is NULL", fn);
    return RAVEL_OK;
}

int ravel_iter_seek(ravel_iter *it, const void *key, size_t klen)
{
    int rc = read_iter_check(it, "ravel_iter_seek");
    if (rc == RAVEL_OK)
        rc = read_check_key(key, klen, "ravel_iter_seek");
    if (rc)
        return rc;
    rv_db_iter_seek(it->it, key, klen);
    return rv_db_iter_status(it->it);
}

int ravel_iter_seek_for_prev(ravel_iter *it, const void *key, size_t klen)
{
    int rc = read_iter_check(it, "ravel_iter_seek_for_prev");
    if (rc == RAVEL_OK)
        rc = read_check_key(key, klen, "ravel_iter_seek_for_prev");
    if (rc)
        return rc;
    rv_db_iter_seek_for_prev(it->it, key, klen);
    return rv_db_iter_status(it->it);
}

int ravel_iter_seek_to_first(ravel_iter *it)
{
    int rc = read_iter_check(it, "ravel_iter_seek_to_first");
    if (rc)
        return rc;
    rv_db_iter_seek_to_first(it->it);
    return rv_db_iter_status(it->it);
}

int ravel_iter_seek_to_last(ravel_iter *it)
{
    int rc = read_iter_check(it, "ravel_iter_seek_to_last");
    if (rc)
        return rc;
    rv_db_iter_seek_to_last(it->it);
    return rv_db_iter_status(it->it);
}

static int read_iter_check_valid(ravel_iter *it, const char *fn)
{
    int rc = read_iter_check(it, fn);
    if (rc)
        return rc;
    if (!rv_db_iter_valid(it->it))
        return rv_error(RAVEL_INVALID, "%s: the iterator is not positioned "
                        "at an entry", fn);
    return RAVEL_OK;
}

int ravel_iter_next(ravel_iter *it)
{
    int rc = read_iter_check_valid(it, "ravel_iter_next");
    if (rc)
        return rc;
    rv_db_iter_next(it->it);
    return rv_db_iter_status(it->it);
}

int ravel_iter_prev(ravel_iter *it)
{
    int rc = read_iter_check_valid(it, "ravel_iter_prev");
    if (rc)
        return rc;
    rv_db_iter_prev(it->it);
    return rv_db_iter_status(it->it);
}

int ravel_iter_valid(const ravel_iter *it)
{
    return it && rv_db_iter_valid(it->it);
}

const void *ravel_iter_key(const ravel_iter *it, size_t *len)
{
    size_t n = 0;
    const char *k = ravel_iter_valid(it) ? rv_db_iter_key(it->it, &n) : NULL;
    if (len)
        *len = n;
    return k;
}

const void *ravel_iter_value(const ravel_iter *it, size_t *len)
{
    size_t n = 0;
    const char *v = ravel_iter_valid(it) ? rv_db_iter_value(it->it, &n) : NULL;
    if (len)
        *len = n;
    return v;
}

int ravel_iter_status(const ravel_iter *it)
{
    if (!it)
        return rv_error(RAVEL_INVALID, "ravel_iter_status: iterator is NULL");
    return rv_db_iter_status(it->it);
}
