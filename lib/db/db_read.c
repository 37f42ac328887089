/*
** db_read.c -- reads: ravel_get, ravel_get_into, ravel_multi_get (many
** keys at one sequence), snapshots and ravel_iter.
**
** A read takes a reference on the current version (the active and
** immutable memtables and the table files), then a read view
** (visibility.h): its snapshot's, or the latest one -- in that order: a version installed by a flush holds files from which
** versions hidden by newer ones were dropped (flush.c), and a read that
** sees that version must read at a sequence at or above everything the
** flush wrote, which a sequence taken after the version guarantees.  Then
** it looks newest first: the memtables, level 0's files newest first,
** then the deeper levels.  A read takes no lock: a get pins the version
** through the read epoch (read_epoch.h), an iterator takes a reference
** inside it.
**
** Snapshots are listed in db->mu.snapshots.list (their sequences are read under
** db->mu.lock when they are taken), so that a flush keeps every version one of
** them can see.
**
** Read options (read_options.h) choose the snapshot, an iterator's bounds
** (enforced by db_iter.c) and the flags the table reader reads data
** blocks with (read_flags); NULL options are the defaults, which is what
** the calls without options use.
*/
#include "db/db.h"
#include "db/db_iter.h"
#include "db/level_iter.h"
#include "base/dbformat.h"
#include "db/range_del_agg.h"
#include "db/read_options.h"
#include "db/visibility.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

struct ravel_iter {
    ravel_db *db;
    rv_db_iter *it;         /* the database's iterator, or NULL when: */
    const struct rv_user_iter_ops *lops; /* a layer over it (owning it) */
    void *layer;
    struct rv_version *v;   /* pinned: its files stay while it reads */
    struct rv_seq_range *hidden; /* its view's own (write_prepared) */
    /* An iterator stops at its first error and returns it from every call
    ** after; the message of that error, kept so that each of those calls
    ** sets it again (NULL until then, or if copying it failed). */
    char *error_message;
};

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

/* The RV_TABLE_READ_* flags of a read with options RO (NULL: defaults). */
static int read_flags(ravel_db *db, const ravel_readoptions *ro)
{
    int flags = rv_table_cache_read_flags(db->tables);
    if (!ro)
        return flags;
    if (ro->verify_checksums == 1)
        flags |= RV_TABLE_READ_VERIFY;
    else if (ro->verify_checksums == 0)
        flags &= ~RV_TABLE_READ_VERIFY;
    if (!ro->fill_cache)
        flags |= RV_TABLE_READ_NO_FILL;
    return flags;
}

/* The version a read as of SNAP uses, referenced: a reader's snapshot's
** own (db.h), else the current one. */
static struct rv_version *read_ref_version(ravel_db *db,
                                           const ravel_snapshot *snap)
{
    if (!snap || !snap->version)
        return rv_db_ref_version(db);
    atomic_fetch_add_explicit(&snap->version->refs, 1, memory_order_relaxed);
    return snap->version;
}

/* The latest view, for a read of version V (taken first): a reader's is
** V's own sequence (db/reader.c: version and sequence change as one). */
static int read_capture_latest(ravel_db *db, const struct rv_version *v,
                               struct rv_read_view *view,
                               struct rv_seq_range **hidden)
{
    if (!db->options.read_only)
        return rv_db_capture_view(db, view, hidden);
    *view = rv_read_view_at(v->visible_seq);
    *hidden = NULL;
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
    s->prev = NULL;
    rv_mutex_lock(&db->mu.lock);
    /* a reader's: the version current now, read at its own sequence */
    s->version = db->options.read_only ? rv_db_ref_version(db) : NULL;
    int rc = s->version ? read_capture_latest(db, s->version, &s->view,
                                              &s->hidden)
                        : rv_db_capture_view(db, &s->view, &s->hidden);
    if (rc) {
        rv_mutex_unlock(&db->mu.lock);
        free(s);
        return rc;
    }
    s->next = db->mu.snapshots.list;
    if (s->next)
        s->next->prev = s;
    db->mu.snapshots.list = s;
    db->mu.snapshots.live++;
    rv_mutex_unlock(&db->mu.lock);
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
    rv_mutex_lock(&db->mu.lock);
    if (snap->prev)
        snap->prev->next = snap->next;
    else
        db->mu.snapshots.list = snap->next;
    if (snap->next)
        snap->next->prev = snap->prev;
    db->mu.snapshots.live--;
    rv_mutex_unlock(&db->mu.lock);
    if (snap->version)
        rv_version_unref(snap->version);
    free(snap->hidden);
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
    return snap ? snap->view.seq : 0;
}

static int read_cmp_bounds(const void *a, const void *b)
{
    const struct rv_snapshot_bounds *x = a, *y = b;
    if (x->all_below != y->all_below)
        return x->all_below < y->all_below ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct rv_snapshot_bounds *rv_db_snapshot_list_locked(ravel_db *db, int *n,
                                                      int *nomem)
{
    *n = 0;
    *nomem = 0;
    if (db->mu.snapshots.live == 0)
        return NULL;
    struct rv_snapshot_bounds *b =
        malloc((size_t)db->mu.snapshots.live * sizeof *b);
    if (!b) {
        *nomem = 1;
        return NULL;
    }
    for (ravel_snapshot *s = db->mu.snapshots.list; s; s = s->next) {
        b[*n].all_below = s->view.all_below;
        b[*n].seq = s->view.seq;
        (*n)++;
    }
    qsort(b, (size_t)*n, sizeof *b, read_cmp_bounds);
    return b;
}

/* ------------------------------------------------------------------ get */

/* Where a found value goes: a malloc'd copy (ravel_get) or the caller's
** buffer (ravel_get_into). */
struct read_sink {
    char **copy;        /* ravel_get: *copy receives the copy */
    char *buf;          /* ravel_get_into */
    size_t cap;
    size_t vlen;        /* the value's whole length */
    int rc;             /* RAVEL_NOMEM if the copy failed */
};

static void read_deliver(struct read_sink *sink, const char *val, size_t vlen)
{
    sink->vlen = vlen;
    if (sink->copy) {
        char *c = malloc(vlen ? vlen : 1);
        if (!c) {
            sink->rc = rv_error(RAVEL_NOMEM, "ravel_get: out of memory for a "
                                "%zu-byte value", vlen);
            return;
        }
        if (vlen)
            memcpy(c, val, vlen);
        *sink->copy = c;
    } else if (vlen && sink->cap) {
        memcpy(sink->buf, val, vlen < sink->cap ? vlen : sink->cap);
    }
}

/* One lookup: the user key, the view, and what was found. */
struct read_probe {
    const char *ukey;
    size_t ulen;
    const struct rv_read_view *view;
    int flags;          /* RV_TABLE_READ_* of the table reads */
    int found;          /* an entry the view sees: a put or a delete */
    int type;
    uint64_t seq;       /* its sequence */
    uint64_t ranged;    /* the newest range tombstone over the key in the
                        ** table files visited that the view sees (0:
                        ** none) */
    int corrupt;        /* an entry too short to hold a tag */
    struct read_sink *sink;
};

/* rv_table_get's callback: the first entry of the key the view sees. */
static int read_table_entry(void *ctx, const char *ikey, size_t klen,
                            const char *val, size_t vlen)
{
    struct read_probe *p = ctx;
    if (klen < RV_TAG_SIZE) {
        p->corrupt = 1;
        return 0;
    }
    if (rv_user_key_compare(ikey, klen - RV_TAG_SIZE, p->ukey, p->ulen) != 0)
        return 0; /* past the key: not in this table */
    uint64_t tag = rv_get_fixed64(ikey + klen - RV_TAG_SIZE);
    if (!rv_read_view_sees(p->view, rv_tag_sequence(tag)))
        return 1;
    p->found = 1;
    p->type = rv_tag_type(tag);
    p->seq = rv_tag_sequence(tag);
    if (p->type == RV_TYPE_PUT && p->sink)
        read_deliver(p->sink, val, vlen);
    return 0;
}

/* 1 if F's key range may hold the user key of P. */
static int read_file_covers(const struct rv_file *f,
                            const struct read_probe *p)
{
    const struct rv_file_meta *m = &f->meta;
    return rv_user_key_compare(p->ukey, p->ulen, m->smallest,
                               m->smallest_len - RV_TAG_SIZE) >= 0 &&
           rv_user_key_compare(p->ukey, p->ulen, m->largest,
                               m->largest_len - RV_TAG_SIZE) <= 0;
}

/* Looks P up in table file F, with TARGET the internal key to seek. */
static int read_file(ravel_db *db, struct rv_file *f, struct read_probe *p,
                     const char *target, size_t tlen)
{
    int filtered = 0;
    int rc = rv_table_cache_get(db->tables, f, p->flags, target, tlen,
                                read_table_entry, p, &filtered, p->view,
                                &p->ranged);
    if (filtered)
        atomic_fetch_add_explicit(&db->stats.filter_useful, 1,
                                  memory_order_relaxed);
    if (rc == RAVEL_OK && p->corrupt)
        rc = rv_error(RAVEL_CORRUPT, "table file %06llu holds an entry whose "
                      "key is too short to hold a tag",
                      (unsigned long long)f->meta.number);
    return rc;
}

/* The first file of a sorted, non-overlapping level whose largest
** internal key is at or after TARGET (P's key at the view's newest
** sequence).  Internal keys, not user keys: a file whose range tombstone
** was cut before user key K ends at the sentinel (K, the maximum
** sequence), and the next file of the level holds K's entries. */
static int read_level_find(struct rv_file *const *files, int n,
                           const char *target, size_t tlen)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const struct rv_file_meta *m = &files[mid]->meta;
        if (rv_ikey_compare(m->largest, m->largest_len, target, tlen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Searches the files of V newest first, stopping at the first entry of
** the key the view sees, with the newest range tombstone over the key of
** the files visited down to it in P->ranged (the files below hold only
** older versions and older tombstones: range_del_agg.h). */
static int read_files(ravel_db *db, const struct rv_version *v,
                      struct read_probe *p)
{
    const struct rv_files *fs = v->files;
    if (rv_files_count(fs) == 0)
        return RAVEL_OK;
    char stack[512];
    size_t tlen = p->ulen + RV_TAG_SIZE;
    char *target = tlen <= sizeof stack ? stack : malloc(tlen);
    if (!target)
        return rv_error(RAVEL_NOMEM, "ravel_get: out of memory for a key");
    if (p->ulen)
        memcpy(target, p->ukey, p->ulen);
    /* the newest version the view can see sorts first */
    rv_put_fixed64(target + p->ulen,
                   rv_pack_tag(rv_read_view_max_seq(p->view), RV_TYPE_PUT));
    int rc = RAVEL_OK;
    for (int i = 0; i < fs->n[0] && !p->found && rc == RAVEL_OK; i++)
        if (read_file_covers(fs->level[0][i], p))
            rc = read_file(db, fs->level[0][i], p, target, tlen);
    for (int l = 1; l < RV_NUM_LEVELS && !p->found && rc == RAVEL_OK; l++) {
        int at = read_level_find(fs->level[l], fs->n[l], target, tlen);
        if (at < fs->n[l] && read_file_covers(fs->level[l][at], p))
            rc = read_file(db, fs->level[l][at], p, target, tlen);
    }
    if (target != stack)
        free(target);
    return rc;
}

/* 1 if memtable M holds an entry of P's key that P's view sees. */
static int read_memtable(rv_memtable *m, struct read_probe *p)
{
    const char *val;
    size_t vlen;
    if (!rv_memtable_get(m, p->ukey, p->ulen, p->view, &p->type, &val, &vlen,
                         &p->seq))
        return 0;
    p->found = 1;
    if (p->type == RV_TYPE_PUT && p->sink)
        read_deliver(p->sink, val, vlen);
    return 1;
}

static int read_lookup_entry(ravel_db *db, struct rv_version *v,
                             struct read_probe *p)
{
    if (read_memtable(v->mem, p))
        return RAVEL_OK;
    for (int i = 0; i < v->n_imm; i++)
        if (read_memtable(v->imm[i], p))
            return RAVEL_OK;
    return read_files(db, v, p);
}

/* Newest entry for P's key in V that P's view sees: a range deletion
** newer than the entry found is the answer instead (a delete). */
static int read_lookup(ravel_db *db, struct rv_version *v,
                       struct read_probe *p)
{
    int rc = read_lookup_entry(db, v, p);
    uint64_t ranged = rc ? 0 : rv_range_del_seq(v, p->ukey, p->ulen,
                                                p->view, &rc);
    if (p->ranged > ranged)
        ranged = p->ranged;
    if (ranged > p->seq || (ranged && !p->found)) {
        p->found = 1;
        p->type = RV_TYPE_DELETE;
        p->seq = ranged;
    }
    return rc;
}

/* The newest entry of KEY that VIEW sees in V: *FOUND, and its *SEQ. */
static int read_newest(ravel_db *db, struct rv_version *v,
                       const struct rv_read_view *view, const void *key,
                       size_t klen, int *found, uint64_t *seq)
{
    struct read_probe p;
    memset(&p, 0, sizeof p);
    p.ukey = key ? key : "";
    p.ulen = klen;
    p.view = view;
    int rc = read_lookup(db, v, &p); /* no sink: the value is not copied */
    *found = p.found;
    *seq = p.seq;
    return rc;
}

int rv_db_key_changed_since(ravel_db *db, const struct rv_read_view *view,
                            const void *key, size_t klen, int *changed)
{
    struct rv_version *v = rv_db_ref_version(db);
    /* after the version: see the top of this file */
    struct rv_read_view latest;
    struct rv_seq_range *hidden = NULL;
    int then_found = 0, now_found = 0;
    uint64_t then_seq = 0, now_seq = 0;
    int rc = rv_db_capture_view(db, &latest, &hidden);
    if (rc == RAVEL_OK)
        rc = read_newest(db, v, &latest, key, klen, &now_found, &now_seq);
    if (rc == RAVEL_OK)
        rc = read_newest(db, v, view, key, klen, &then_found, &then_seq);
    free(hidden);
    rv_version_unref(v);
    *changed = rc == RAVEL_OK &&
               (now_found != then_found || now_seq != then_seq);
    return rc;
}

static int read_check_get(ravel_db *db, const ravel_snapshot *snap,
                          const void *key, size_t klen, const char *fn)
{
    int rc = read_check_key(key, klen, fn);
    if (rc == RAVEL_OK)
        rc = read_check_snapshot(db, snap, fn);
    return rc;
}

/* Looks KEY up as of SNAP, reading tables with FLAGS, into SINK:
** RAVEL_OK, RAVEL_NOTFOUND or an error. */
static int read_get(ravel_db *db, const ravel_snapshot *snap, int flags,
                    const void *key, size_t klen, struct read_sink *sink)
{
    struct read_probe p;
    int rc;
    for (;;) {
        unsigned token = 0;
        /* a reader's snapshot reads the version it holds (db.h) */
        struct rv_version *v = snap && snap->version
                                   ? snap->version
                                   : rv_db_pin_version(db, &token);
        /* after the version (whose load has acquire semantics): see the
        ** top of this file */
        int stale = 0;
        struct rv_read_view view =
            snap ? snap->view
                 : db->options.read_only ? rv_read_view_at(v->visible_seq)
                                         : rv_db_current_view(db, &stale);
        memset(&p, 0, sizeof p);
        p.ukey = key ? key : "";
        p.ulen = klen;
        p.view = &view;
        p.flags = flags;
        p.sink = sink;
        rc = read_lookup(db, v, &p);
        if (!(snap && snap->version))
            rv_db_unpin_version(db, token);
        if (!stale)
            break;
        /* write_prepared: the commit table forgot an entry this read
        ** needed (it stalled while a table's worth of sequences went
        ** by): read again at a fresh view */
        atomic_fetch_add_explicit(&db->stats.stale_reads, 1,
                                  memory_order_relaxed);
        if (sink->copy) {
            free(*sink->copy);
            *sink->copy = NULL;
        }
        sink->rc = RAVEL_OK;
        sink->vlen = 0;
    }
    if (rc == RAVEL_OK && sink->rc)
        rc = sink->rc;
    if (rc == RAVEL_OK && (!p.found || p.type != RV_TYPE_PUT))
        rc = RAVEL_NOTFOUND;
    if (rc && sink->copy && *sink->copy) { /* deleted by a range */
        free(*sink->copy);
        *sink->copy = NULL;
    }
    return rc;
}

/* ravel_get and ravel_get_opt (FN): as of SNAP, with options RO. */
static int read_get_copy(ravel_db *db, const ravel_snapshot *snap,
                         const ravel_readoptions *ro, const void *key,
                         size_t klen, void **val, size_t *vlen,
                         const char *fn)
{
    if (val)
        *val = NULL;
    if (vlen)
        *vlen = 0;
    int rc = rv_db_enter(db, fn);
    if (rc)
        return rc;
    rc = read_check_get(db, snap, key, klen, fn);
    if (rc == RAVEL_OK && (!val || !vlen))
        rc = rv_error(RAVEL_INVALID, "%s: %s is NULL", fn,
                      !val ? "val" : "vlen");
    if (rc == RAVEL_OK) {
        char *copy = NULL;
        struct read_sink sink = {.copy = &copy};
        rc = read_get(db, snap, read_flags(db, ro), key, klen, &sink);
        if (rc == RAVEL_OK) {
            *val = copy;
            *vlen = sink.vlen;
        } else {
            free(copy);
        }
    }
    rv_db_leave(db);
    return rc;
}

int ravel_get(ravel_db *db, const ravel_snapshot *snap, const void *key,
              size_t klen, void **val, size_t *vlen)
{
    return read_get_copy(db, snap, NULL, key, klen, val, vlen, "ravel_get");
}

int ravel_get_opt(ravel_db *db, const ravel_readoptions *ro, const void *key,
                  size_t klen, void **val, size_t *vlen)
{
    return read_get_copy(db, ro ? ro->snapshot : NULL, ro, key, klen, val,
                         vlen, "ravel_get_opt");
}

/* ravel_get_into and ravel_get_into_opt (FN). */
static int read_get_buf(ravel_db *db, const ravel_snapshot *snap,
                        const ravel_readoptions *ro, const void *key,
                        size_t klen, void *buf, size_t cap, size_t *vlen,
                        const char *fn)
{
    if (vlen)
        *vlen = 0;
    int rc = rv_db_enter(db, fn);
    if (rc)
        return rc;
    rc = read_check_get(db, snap, key, klen, fn);
    if (rc == RAVEL_OK && (!vlen || (!buf && cap)))
        rc = rv_error(RAVEL_INVALID, "%s: %s is NULL", fn,
                      !vlen ? "vlen" : "buf (with a non-zero cap)");
    if (rc == RAVEL_OK) {
        struct read_sink sink = {.buf = buf, .cap = cap};
        rc = read_get(db, snap, read_flags(db, ro), key, klen, &sink);
        if (rc == RAVEL_OK)
            *vlen = sink.vlen;
    }
    rv_db_leave(db);
    return rc;
}

int ravel_get_into(ravel_db *db, const ravel_snapshot *snap, const void *key,
                   size_t klen, void *buf, size_t cap, size_t *vlen)
{
    return read_get_buf(db, snap, NULL, key, klen, buf, cap, vlen,
                        "ravel_get_into");
}

int ravel_get_into_opt(ravel_db *db, const ravel_readoptions *ro,
                       const void *key, size_t klen, void *buf, size_t cap,
                       size_t *vlen)
{
    return read_get_buf(db, ro ? ro->snapshot : NULL, ro, key, klen, buf,
                        cap, vlen, "ravel_get_into_opt");
}

/* ------------------------------------------------------------ multi-get */

/* Frees what a multi-get found so far and sets every key's code to RC. */
static void read_multi_clear(size_t n, void **vals, size_t *vlens, int *rcs,
                             int rc)
{
    for (size_t i = 0; i < n; i++) {
        free(vals[i]);
        vals[i] = NULL;
        vlens[i] = 0;
        rcs[i] = rc;
    }
}

/* Looks up the N keys in one version at one view (the snapshot's, or the
** latest visible state captured once): every value comes from the same
** state of the database.  RAVEL_OK, or the first error.  Unlike a get, it
** takes a reference on the version and captures its view, as an iterator
** does, instead of pinning the read epoch: a call of many keys, reading
** table files, would otherwise hold back the reclamation of every retired
** version for its whole length, and under write_prepared a view that went
** stale (read_get) would send all the keys round again, which a long call
** might never finish.  (Looking the keys up in key order was measured no
** faster: each lookup reads its own blocks through the cache either way.) */
static int read_multi_at_one_view(ravel_db *db, const ravel_snapshot *snap,
                                  int flags, size_t n,
                                  const void *const *keys,
                                  const size_t *klens, void **vals,
                                  size_t *vlens, int *rcs)
{
    struct rv_version *v = read_ref_version(db, snap);
    /* after the version: see the top of this file */
    struct rv_read_view captured;
    struct rv_seq_range *hidden = NULL;
    int rc = snap ? RAVEL_OK
                  : read_capture_latest(db, v, &captured, &hidden);
    const struct rv_read_view *view = snap ? &snap->view : &captured;
    for (size_t i = 0; i < n && rc == RAVEL_OK; i++) {
        char *copy = NULL;
        struct read_sink sink = {.copy = &copy};
        struct read_probe p = {.ukey = keys[i] ? keys[i] : "",
                               .ulen = klens[i], .view = view,
                               .flags = flags, .sink = &sink};
        rc = read_lookup(db, v, &p);
        if (rc == RAVEL_OK && sink.rc)
            rc = sink.rc;
        if (rc == RAVEL_OK && p.found && p.type == RV_TYPE_PUT) {
            vals[i] = copy;
            vlens[i] = sink.vlen;
            rcs[i] = RAVEL_OK;
        } else {
            free(copy);
            rcs[i] = RAVEL_NOTFOUND;
        }
    }
    free(hidden);
    rv_version_unref(v);
    return rc;
}

/* The arguments of ravel_multi_get, checked. */
static int read_multi_check(ravel_db *db, const ravel_readoptions *ro,
                            size_t n, const void *const *keys,
                            const size_t *klens, void **vals, size_t *vlens,
                            int *rcs)
{
    const char *fn = "ravel_multi_get";
    if (n && (!keys || !klens || !vals || !vlens || !rcs))
        return rv_error(RAVEL_INVALID, "%s: %s is NULL with %zu keys", fn,
                        !keys ? "keys" : !klens ? "klens" : !vals ? "vals"
                        : !vlens ? "vlens" : "rcs", n);
    int rc = read_check_snapshot(db, ro ? ro->snapshot : NULL, fn);
    for (size_t i = 0; i < n && rc == RAVEL_OK; i++)
        rc = read_check_key(keys[i], klens[i], fn);
    return rc;
}

int ravel_multi_get(ravel_db *db, const ravel_readoptions *ro, size_t n,
                    const void *const *keys, const size_t *klens,
                    void **vals, size_t *vlens, int *rcs)
{
    /* the outputs are cleared before anything can fail, so that every
    ** return leaves them as ravel.h says */
    if (vals && vlens && rcs)
        for (size_t i = 0; i < n; i++) {
            vals[i] = NULL;
            vlens[i] = 0;
            rcs[i] = RAVEL_NOTFOUND;
        }
    int rc = rv_db_enter(db, "ravel_multi_get");
    if (rc) {
        if (vals && vlens && rcs)
            read_multi_clear(n, vals, vlens, rcs, rc);
        return rc;
    }
    rc = read_multi_check(db, ro, n, keys, klens, vals, vlens, rcs);
    if (rc == RAVEL_OK && n)
        rc = read_multi_at_one_view(db, ro ? ro->snapshot : NULL,
                                    read_flags(db, ro), n, keys, klens, vals,
                                    vlens, rcs);
    if (rc != RAVEL_OK && vals && vlens && rcs)
        read_multi_clear(n, vals, vlens, rcs, rc);
    rv_db_leave(db);
    return rc;
}

/* ------------------------------------------------------------ iterators */

/* Merges the memtables and table files of V, newest first, reading the
** tables with FLAGS; the table files' range deletions go to AGG as they
** are opened.  NULL with the error returned in *RC on failure. */
static struct rv_iter *read_version_iter(ravel_db *db, struct rv_version *v,
                                         int flags,
                                         struct rv_range_del_agg *agg,
                                         int *rc)
{
    /* level 0's files one by one (they overlap), each deeper level as
    ** one sequence */
    int n = 1 + v->n_imm + v->files->n[0];
    for (int l = 1; l < RV_NUM_LEVELS; l++)
        n += v->files->n[l] > 0;
    struct rv_iter **children = calloc((size_t)n, sizeof *children);
    if (!children) {
        *rc = rv_error(RAVEL_NOMEM, "out of memory creating an iterator");
        return NULL;
    }
    int made = 0;
    *rc = RAVEL_OK;
    for (int i = -1; i < v->n_imm && *rc == RAVEL_OK; i++) {
        children[made] = rv_memtable_iter_new(i < 0 ? v->mem : v->imm[i]);
        if (children[made])
            made++;
        else
            *rc = rv_error(RAVEL_NOMEM, "out of memory creating an "
                           "iterator");
    }
    for (int i = 0; i < v->files->n[0] && *rc == RAVEL_OK; i++) {
        children[made] = rv_table_cache_iter(db->tables,
                                             v->files->level[0][i], flags,
                                             rc);
        if (children[made])
            made++;
        if (*rc == RAVEL_OK)
            *rc = rv_range_del_agg_add_file(agg, v->files->level[0][i]);
    }
    for (int l = 1; l < RV_NUM_LEVELS && *rc == RAVEL_OK; l++) {
        if (v->files->n[l] == 0)
            continue;
        children[made] = rv_level_iter_new(db->tables, v->files->level[l],
                                           v->files->n[l], flags, agg);
        if (children[made])
            made++;
        else
            *rc = rv_error(RAVEL_NOMEM, "out of memory creating an "
                           "iterator");
    }
    struct rv_iter *merged = NULL;
    if (*rc == RAVEL_OK) {
        merged = rv_merging_iter_new(children, n);
        if (!merged)
            *rc = rv_error(RAVEL_NOMEM, "out of memory creating an "
                           "iterator");
    } else {
        for (int i = 0; i < made; i++)
            children[i]->ops->destroy(children[i]);
    }
    free(children);
    return merged;
}

/* A copy of the snapshot view FROM in *TO, with its own copy of what it
** hides in *HIDDEN (an iterator may outlive its snapshot). */
static int read_copy_view(const struct rv_read_view *from,
                          struct rv_read_view *to,
                          struct rv_seq_range **hidden)
{
    *to = *from;
    *hidden = NULL;
    if (from->n_hidden == 0)
        return RAVEL_OK;
    size_t bytes = (size_t)from->n_hidden * sizeof **hidden;
    *hidden = malloc(bytes);
    if (!*hidden)
        return rv_error(RAVEL_NOMEM, "out of memory creating an iterator");
    memcpy(*hidden, from->hidden, bytes);
    to->hidden = *hidden;
    return RAVEL_OK;
}

/* ravel_iter_new and ravel_iter_new_opt (FN): as of SNAP, with the
** bounds and flags of RO (NULL: none, the defaults). */
static int read_iter_new(ravel_db *db, const ravel_snapshot *snap,
                         const ravel_readoptions *ro,
                         const struct rv_user_iter_ops *lops,
                         rv_iter_layer_fn make, void *arg, ravel_iter **out,
                         const char *fn)
{
    if (out)
        *out = NULL;
    int rc = read_check_snapshot(db, snap, fn);
    if (rc == RAVEL_OK && !out)
        rc = rv_error(RAVEL_INVALID, "%s: out is NULL", fn);
    if (rc)
        return rc;

    struct rv_version *v = read_ref_version(db, snap);
    /* after the version: see the top of this file */
    struct rv_read_view view;
    struct rv_seq_range *hidden = NULL;
    rc = snap ? read_copy_view(&snap->view, &view, &hidden)
              : read_capture_latest(db, v, &view, &hidden);
    struct rv_range_del_agg *agg = NULL;
    if (rc == RAVEL_OK)
        rc = rv_range_del_agg_new(v, db->tables, &agg);
    struct rv_iter *merged =
        rc ? NULL : read_version_iter(db, v, read_flags(db, ro), agg, &rc);
    ravel_iter *it = merged ? malloc(sizeof *it) : NULL;
    rv_db_iter *dit = it ? rv_db_iter_new(merged, &view) : NULL;
    if (dit)
        rv_db_iter_take_range_dels(dit, agg); /* DIT owns AGG now */
    else
        rv_range_del_agg_free(agg);
    if (dit && ro && (ro->lower || ro->upper)) {
        rc = rv_db_iter_set_bounds(dit, ro->lower, ro->lower_len, ro->upper,
                                   ro->upper_len);
        if (rc) {
            rv_db_iter_free(dit); /* destroys MERGED too */
            dit = NULL;
            merged = NULL;
        }
    }
    void *layer = NULL;
    if (dit && make && (rc = make(arg, dit, &layer)) != RAVEL_OK) {
        dit = NULL; /* MAKE freed it */
        merged = NULL;
    }
    if (!dit) {
        if (!it && merged)
            merged->ops->destroy(merged);
        free(it);
        free(hidden);
        rv_version_unref(v);
        return rc ? rc : rv_error(RAVEL_NOMEM, "out of memory creating an "
                                  "iterator");
    }
    it->db = db;
    it->it = layer ? NULL : dit;
    it->lops = layer ? lops : NULL;
    it->layer = layer;
    it->v = v;
    it->hidden = hidden;
    it->error_message = NULL;
    /* relaxed: close reads it only after the gate, which orders it */
    atomic_fetch_add_explicit(&db->read.live_iterators, 1,
                              memory_order_relaxed);
    *out = it;
    return RAVEL_OK;
}

int ravel_iter_new(ravel_db *db, const ravel_snapshot *snap, ravel_iter **out)
{
    int rc = rv_db_enter(db, "ravel_iter_new");
    if (rc)
        return rc;
    rc = read_iter_new(db, snap, NULL, NULL, NULL, NULL, out,
                       "ravel_iter_new");
    rv_db_leave(db);
    return rc;
}

int ravel_iter_new_opt(ravel_db *db, const ravel_readoptions *ro,
                       ravel_iter **out)
{
    int rc = rv_db_enter(db, "ravel_iter_new_opt");
    if (rc)
        return rc;
    rc = read_iter_new(db, ro ? ro->snapshot : NULL, ro, NULL, NULL, NULL,
                       out, "ravel_iter_new_opt");
    rv_db_leave(db);
    return rc;
}

int rv_iter_new_layered(ravel_db *db, const ravel_snapshot *snap,
                        const struct rv_user_iter_ops *ops,
                        rv_iter_layer_fn make, void *arg, ravel_iter **out)
{
    return read_iter_new(db, snap, NULL, ops, make, arg, out,
                         "ravel_txn_iter_new");
}

void ravel_iter_free(ravel_iter *it)
{
    if (!it)
        return;
    ravel_db *db = it->db;
    if (it->lops)
        it->lops->destroy(it->layer); /* and the database's iterator */
    else
        rv_db_iter_free(it->it);
    rv_version_unref(it->v);
    free(it->hidden);
    free(it->error_message);
    free(it);
    /* release: the iterator's last use happens before close sees 0 (this
    ** call is not inside the gate) */
    atomic_fetch_sub_explicit(&db->read.live_iterators, 1,
                              memory_order_release);
}

/* The iterator's entries: the database's iterator's, or its layer's. */
static int iter_valid(const ravel_iter *it)
{
    return it->lops ? it->lops->valid(it->layer) : rv_db_iter_valid(it->it);
}

static int iter_status(const ravel_iter *it)
{
    return it->lops ? it->lops->status(it->layer) : rv_db_iter_status(it->it);
}

static const char *iter_key(const ravel_iter *it, size_t *n)
{
    return it->lops ? it->lops->key(it->layer, n) : rv_db_iter_key(it->it, n);
}

static const char *iter_value(const ravel_iter *it, size_t *n)
{
    return it->lops ? it->lops->value(it->layer, n)
                    : rv_db_iter_value(it->it, n);
}

/* Seeks: KIND 0 seek, 1 seek_for_prev, 2 first, 3 last. */
static void iter_seek(ravel_iter *it, int kind, const void *key, size_t klen)
{
    const struct rv_user_iter_ops *o = it->lops;
    switch (kind) {
    case 0:
        o ? o->seek(it->layer, key, klen) : rv_db_iter_seek(it->it, key, klen);
        break;
    case 1:
        o ? o->seek_for_prev(it->layer, key, klen)
          : rv_db_iter_seek_for_prev(it->it, key, klen);
        break;
    case 2:
        o ? o->seek_to_first(it->layer) : rv_db_iter_seek_to_first(it->it);
        break;
    default:
        o ? o->seek_to_last(it->layer) : rv_db_iter_seek_to_last(it->it);
        break;
    }
}

static void iter_step(ravel_iter *it, int forward)
{
    if (it->lops)
        forward ? it->lops->next(it->layer) : it->lops->prev(it->layer);
    else
        forward ? rv_db_iter_next(it->it) : rv_db_iter_prev(it->it);
}

/* The iterator's status as the result of a call on it.  At its first
** error the message just set where the error was born is kept; every later
** call returning the error sets that message again, so whoever reads the
** message after the call (a binding, inside the same foreign call) reads
** this error's own, not whatever the thread's last failure was. */
static int read_iter_result(ravel_iter *it)
{
    int rc = iter_status(it);
    if (rc == RAVEL_OK)
        return RAVEL_OK;
    if (it->error_message)
        return rv_error(rc, "%s", it->error_message);
    it->error_message = strdup(rv_errmsg_get());
    return rc;
}

static int read_iter_check(const ravel_iter *it, const char *fn)
{
    if (!it)
        return rv_error(RAVEL_INVALID, "%s: iterator is NULL", fn);
    return RAVEL_OK;
}

/* A bound of ravel_iter_set_bounds: NULL (none) or a key. */
static int read_check_bound(const void *bound, size_t len, const char *which)
{
    if (!bound && len)
        return rv_error(RAVEL_INVALID, "ravel_iter_set_bounds: %s is NULL "
                        "with length %zu (NULL alone means no bound)", which,
                        len);
    if (len > RAVEL_MAX_KEY_SIZE)
        return rv_error(RAVEL_INVALID, "ravel_iter_set_bounds: %s of %zu "
                        "bytes exceeds RAVEL_MAX_KEY_SIZE (%u)", which, len,
                        RAVEL_MAX_KEY_SIZE);
    return RAVEL_OK;
}

int ravel_iter_set_bounds(ravel_iter *it, const void *lower, size_t llen,
                          const void *upper, size_t ulen)
{
    int rc = read_iter_check(it, "ravel_iter_set_bounds");
    if (rc == RAVEL_OK)
        rc = read_check_bound(lower, llen, "the lower bound");
    if (rc == RAVEL_OK)
        rc = read_check_bound(upper, ulen, "the upper bound");
    if (rc == RAVEL_OK)
        rc = it->lops ? it->lops->set_bounds(it->layer, lower, llen, upper,
                                             ulen)
                      : rv_db_iter_set_bounds(it->it, lower, llen, upper,
                                              ulen);
    return rc;
}

int ravel_iter_seek(ravel_iter *it, const void *key, size_t klen)
{
    int rc = read_iter_check(it, "ravel_iter_seek");
    if (rc == RAVEL_OK)
        rc = read_check_key(key, klen, "ravel_iter_seek");
    if (rc)
        return rc;
    iter_seek(it, 0, key, klen);
    return read_iter_result(it);
}

int ravel_iter_seek_for_prev(ravel_iter *it, const void *key, size_t klen)
{
    int rc = read_iter_check(it, "ravel_iter_seek_for_prev");
    if (rc == RAVEL_OK)
        rc = read_check_key(key, klen, "ravel_iter_seek_for_prev");
    if (rc)
        return rc;
    iter_seek(it, 1, key, klen);
    return read_iter_result(it);
}

int ravel_iter_seek_to_first(ravel_iter *it)
{
    int rc = read_iter_check(it, "ravel_iter_seek_to_first");
    if (rc)
        return rc;
    iter_seek(it, 2, NULL, 0);
    return read_iter_result(it);
}

int ravel_iter_seek_to_last(ravel_iter *it)
{
    int rc = read_iter_check(it, "ravel_iter_seek_to_last");
    if (rc)
        return rc;
    iter_seek(it, 3, NULL, 0);
    return read_iter_result(it);
}

/* An iterator that can step: one stopped by an error returns that error,
** one merely not positioned RAVEL_INVALID. */
static int read_iter_check_valid(ravel_iter *it, const char *fn)
{
    int rc = read_iter_check(it, fn);
    if (rc)
        return rc;
    rc = read_iter_result(it);
    if (rc)
        return rc;
    if (!iter_valid(it))
        return rv_error(RAVEL_INVALID, "%s: the iterator is not positioned "
                        "at an entry", fn);
    return RAVEL_OK;
}

int ravel_iter_next(ravel_iter *it)
{
    int rc = read_iter_check_valid(it, "ravel_iter_next");
    if (rc)
        return rc;
    iter_step(it, 1);
    return read_iter_result(it);
}

int ravel_iter_prev(ravel_iter *it)
{
    int rc = read_iter_check_valid(it, "ravel_iter_prev");
    if (rc)
        return rc;
    iter_step(it, 0);
    return read_iter_result(it);
}

int ravel_iter_valid(const ravel_iter *it)
{
    return it && iter_valid(it);
}

const void *ravel_iter_key(const ravel_iter *it, size_t *len)
{
    size_t n = 0;
    const char *k = ravel_iter_valid(it) ? iter_key(it, &n) : NULL;
    if (len)
        *len = n;
    return k;
}

const void *ravel_iter_value(const ravel_iter *it, size_t *len)
{
    size_t n = 0;
    const char *v = ravel_iter_valid(it) ? iter_value(it, &n) : NULL;
    if (len)
        *len = n;
    return v;
}

int ravel_iter_status(const ravel_iter *it)
{
    if (!it)
        return rv_error(RAVEL_INVALID, "ravel_iter_status: iterator is NULL");
    int rc = iter_status(it);
    if (rc && it->error_message) /* see read_iter_result */
        rv_error(rc, "%s", it->error_message);
    return rc;
}
