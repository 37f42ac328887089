/*
** db_iter.c -- the user's view of an internal iterator through one read
** view (LevelDB's DBIter).
**
** Owns: skipping versions the read view does not see (visibility.h says
** which), versions hidden by a newer one and deletions; the key/value
** copies needed when moving backward; direction switching.  Does not
** own: merging sources (merging_iter.c) or the public ravel_iter wrapper
** and its error messages (db_read.c).
**
** Going forward, the internal iterator sits on the entry being shown, and
** key()/value() point into it.  Going backward, the internal iterator sits
** just before all entries of the shown user key (the scan had to pass them
** to know which version is newest), so the key and value are copied into
** SAVED_KEY / SAVED_VALUE.
**
** Bounds (RocksDB's iterate_lower_bound, included, and
** iterate_upper_bound, excluded) are checked against the internal
** iterator's own entries, before visibility: going forward the scan stops
** at the first entry at or past the upper bound, going backward at the
** first below the lower one, so nothing past a bound is read to find the
** next visible key.  Seeks are clamped to the bounds instead of being
** refused: a seek below the lower bound starts at it, a seek_for_prev at
** or above the upper bound ends just below it.
**
** The first error stops the iterator for good: its own (out of memory, a
** malformed key) or the internal iterator's (a damaged block).  From then
** on it is invalid, every positioning call leaves it so, and status says
** why.  An entry found before the error in the same move is not shown
** either: going backward, a newer version of it (or its deletion) may be
** in the part that could not be read.
*/
#include "db/db_iter.h"
#include "base/dbformat.h"
#include "db/range_del_agg.h"
#include "util/error.h"

#include <stdlib.h>

enum db_iter_direction { DB_ITER_FORWARD, DB_ITER_REVERSE };

/* A growable byte buffer owned by the iterator. */
struct db_iter_buf {
    char *data;
    size_t len;
    size_t cap;
};

struct rv_db_iter {
    struct rv_iter *internal; /* owned */
    struct rv_read_view view; /* which versions are seen (visibility.h) */
    enum db_iter_direction direction;
    int valid;
    /* The first error, ours (NOMEM, CORRUPT) or the internal iterator's,
    ** or RAVEL_OK: once set, never cleared, and valid stays 0. */
    int status;
    /* Forward: a user key to skip (or a seek target).  Reverse: the user
    ** key shown. */
    struct db_iter_buf saved_key;
    struct db_iter_buf saved_value; /* reverse only: the value shown */
    /* The bounds, copies of the caller's user keys, each used only when
    ** its has_ flag is set (an empty bound is a bound). */
    struct db_iter_buf lower, upper;
    int has_lower, has_upper;
    /* The range deletions it honours (NULL: none), owned. */
    struct rv_range_del_agg *range_dels;
};

/* --------------------------------------------------------------- buffers */

/* Makes room for N bytes and sets the length to N (contents undefined). */
static int db_iter_buf_resize(struct db_iter_buf *b, size_t n)
{
    if (n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < n)
            cap *= 2;
        char *data = realloc(b->data, cap);
        if (!data)
            return RAVEL_NOMEM;
        b->data = data;
        b->cap = cap;
    }
    b->len = n;
    return RAVEL_OK;
}

/* The buffer's bytes, never NULL (an empty key is still a key). */
static const char *db_iter_buf_data(const struct db_iter_buf *b)
{
    return b->data ? b->data : "";
}

static void db_iter_buf_clear(struct db_iter_buf *b)
{
    b->len = 0;
}

/* Saves P into B; on failure the iterator stops with RAVEL_NOMEM.
** Returns 0 on success. */
static int db_iter_save(rv_db_iter *it, struct db_iter_buf *b, const char *p,
                        size_t n)
{
    if (db_iter_buf_resize(b, n) != RAVEL_OK) {
        it->status = rv_error(RAVEL_NOMEM, "out of memory saving an "
                              "iterator's key or value of %zu bytes", n);
        it->valid = 0;
        return -1;
    }
    if (n)
        memcpy(b->data, p, n);
    return 0;
}

/* Saves KEY plus TAG into saved_key: a seek target. */
static int db_iter_save_target(rv_db_iter *it, const void *key, size_t klen,
                               uint64_t tag)
{
    if (db_iter_buf_resize(&it->saved_key, klen + RV_TAG_SIZE) != RAVEL_OK) {
        it->status = rv_error(RAVEL_NOMEM, "out of memory saving an "
                              "iterator's seek target of %zu bytes", klen);
        it->valid = 0;
        return -1;
    }
    if (klen)
        memcpy(it->saved_key.data, key, klen);
    rv_put_fixed64(it->saved_key.data + klen, tag);
    return 0;
}

/* ------------------------------------------------------- internal keys */

struct db_iter_entry {
    const char *ukey;
    size_t ulen;
    uint64_t sequence;
    int type;
};

/* Splits the internal iterator's current key.  Returns 0, or -1 (and
** records RAVEL_CORRUPT) for a key too short to hold a tag. */
static int db_iter_parse(rv_db_iter *it, struct db_iter_entry *e)
{
    size_t len;
    const char *k = it->internal->ops->key(it->internal, &len);
    if (len < RV_TAG_SIZE) {
        it->status = rv_error(RAVEL_CORRUPT, "an iterator read an internal "
                              "key of %zu bytes, shorter than its %d-byte "
                              "tag", len, RV_TAG_SIZE);
        return -1;
    }
    uint64_t tag = rv_get_fixed64(k + len - RV_TAG_SIZE);
    e->ukey = k;
    e->ulen = len - RV_TAG_SIZE;
    e->sequence = rv_tag_sequence(tag);
    e->type = rv_tag_type(tag);
    /* a put under a newer range deletion reads as a delete */
    if (it->range_dels && e->type == RV_TYPE_PUT &&
        rv_range_del_agg_seq(it->range_dels, e->ukey, e->ulen, &it->view) >
            e->sequence)
        e->type = RV_TYPE_DELETE;
    return 0;
}

static int db_iter_compare_saved(const rv_db_iter *it,
                                 const struct db_iter_entry *e)
{
    return rv_user_key_compare(e->ukey, e->ulen,
                               db_iter_buf_data(&it->saved_key),
                               it->saved_key.len);
}

/* ---------------------------------------------------------------- bounds */

/* Compares user key KEY with bound B. */
static int db_iter_compare_bound(const void *key, size_t klen,
                                 const struct db_iter_buf *b)
{
    return rv_user_key_compare(key, klen, db_iter_buf_data(b), b->len);
}

/* 1 if user key KEY is below the lower bound. */
static int db_iter_below_lower(const rv_db_iter *it, const void *key,
                               size_t klen)
{
    return it->has_lower && db_iter_compare_bound(key, klen, &it->lower) < 0;
}

/* 1 if user key KEY is at or above the upper bound (excluded). */
static int db_iter_past_upper(const rv_db_iter *it, const void *key,
                              size_t klen)
{
    return it->has_upper && db_iter_compare_bound(key, klen, &it->upper) >= 0;
}

/* Copies BOUND (NULL: none) into a fresh *B and *HAS. */
static int db_iter_copy_bound(struct db_iter_buf *b, int *has,
                              const void *bound, size_t len)
{
    *has = bound != NULL;
    if (!bound)
        return RAVEL_OK;
    if (db_iter_buf_resize(b, len) != RAVEL_OK)
        return rv_error(RAVEL_NOMEM, "out of memory for an iterator bound "
                        "of %zu bytes", len);
    if (len)
        memcpy(b->data, bound, len);
    return RAVEL_OK;
}

/* Leaves the iterator unpositioned, as after a move that found nothing. */
static void db_iter_unposition(rv_db_iter *it)
{
    it->valid = 0;
    it->direction = DB_ITER_FORWARD;
    db_iter_buf_clear(&it->saved_key);
    db_iter_buf_clear(&it->saved_value);
}

int rv_db_iter_set_bounds(rv_db_iter *it, const void *lower, size_t llen,
                          const void *upper, size_t ulen)
{
    /* both or neither: a failure leaves the old pair */
    struct db_iter_buf l = {0}, u = {0};
    int has_l, has_u;
    int rc = db_iter_copy_bound(&l, &has_l, lower, llen);
    if (rc == RAVEL_OK)
        rc = db_iter_copy_bound(&u, &has_u, upper, ulen);
    if (rc) {
        free(l.data);
        free(u.data);
        return rc;
    }
    free(it->lower.data);
    free(it->upper.data);
    it->lower = l;
    it->upper = u;
    it->has_lower = has_l;
    it->has_upper = has_u;
    db_iter_unposition(it);
    return RAVEL_OK;
}

/* ------------------------------------------------------------ creation */

rv_db_iter *rv_db_iter_new(struct rv_iter *internal,
                           const struct rv_read_view *view)
{
    rv_db_iter *it = calloc(1, sizeof *it);
    if (!it) {
        internal->ops->destroy(internal);
        return NULL;
    }
    it->internal = internal;
    it->view = *view;
    it->direction = DB_ITER_FORWARD;
    return it;
}

void rv_db_iter_free(rv_db_iter *it)
{
    if (!it)
        return;
    it->internal->ops->destroy(it->internal);
    free(it->saved_key.data);
    free(it->saved_value.data);
    free(it->lower.data);
    free(it->upper.data);
    rv_range_del_agg_free(it->range_dels);
    free(it);
}

void rv_db_iter_take_range_dels(rv_db_iter *it, struct rv_range_del_agg *agg)
{
    rv_range_del_agg_free(it->range_dels);
    it->range_dels = agg;
}

int rv_db_iter_valid(const rv_db_iter *it)
{
    return it->valid;
}

int rv_db_iter_status(const rv_db_iter *it)
{
    if (it->status)
        return it->status;
    return it->internal->ops->status(it->internal);
}

/* 1 if the iterator has stopped at an error, which it then keeps; it is
** invalid from then on.  Called at the start and at the end of every move. */
static int db_iter_stopped(rv_db_iter *it)
{
    /* An internal iterator that failed is not valid (the merge stops at a
    ** child's error), so a valid one needs no status call: the merge's
    ** walks its children, which every step would otherwise pay for. */
    if (it->status == RAVEL_OK && !it->internal->ops->valid(it->internal))
        it->status = it->internal->ops->status(it->internal);
    if (it->status == RAVEL_OK)
        return 0;
    it->valid = 0;
    return 1;
}

/* ------------------------------------------------------------- forward */

/* From the internal position onward, finds the first visible put below
** the upper bound.  With SKIPPING set, entries whose user key is <=
** saved_key are hidden. */
static void db_iter_find_next_user_entry(rv_db_iter *it, int skipping)
{
    struct rv_iter *in = it->internal;
    for (; in->ops->valid(in); in->ops->next(in)) {
        struct db_iter_entry e;
        if (db_iter_parse(it, &e))
            break;
        if (db_iter_past_upper(it, e.ukey, e.ulen))
            break; /* and read no further */
        if (!rv_read_view_sees(&it->view, e.sequence))
            continue;
        if (e.type == RV_TYPE_DELETE) {
            if (db_iter_save(it, &it->saved_key, e.ukey, e.ulen))
                return;
            skipping = 1;
        } else if (!skipping || db_iter_compare_saved(it, &e) > 0) {
            it->valid = 1;
            db_iter_buf_clear(&it->saved_key);
            return;
        }
    }
    db_iter_buf_clear(&it->saved_key);
    it->valid = 0;
}

static void db_iter_next(rv_db_iter *it)
{
    struct rv_iter *in = it->internal;
    if (it->direction == DB_ITER_REVERSE) {
        /* The internal iterator is just before the entries of the shown
        ** key (saved_key); step into them and skip them below. */
        it->direction = DB_ITER_FORWARD;
        if (!in->ops->valid(in)) /* (then the scan back met no entry
                                 ** below the lower bound either) */
            in->ops->seek_to_first(in);
        else
            in->ops->next(in);
    } else {
        struct db_iter_entry e;
        db_iter_parse(it, &e); /* valid: it was parsed when shown */
        if (db_iter_save(it, &it->saved_key, e.ukey, e.ulen))
            return;
        in->ops->next(in);
    }
    db_iter_find_next_user_entry(it, 1);
}

void rv_db_iter_next(rv_db_iter *it)
{
    if (!it->valid || db_iter_stopped(it))
        return;
    db_iter_next(it);
    db_iter_stopped(it);
}

/* Positions at the first user key >= KEY, KEY not below the lower
** bound. */
static void db_iter_seek_from(rv_db_iter *it, const void *key, size_t klen)
{
    db_iter_unposition(it);
    if (db_iter_past_upper(it, key, klen))
        return; /* nothing to read */
    /* the newest version the snapshot can see sorts first */
    if (db_iter_save_target(it, key, klen,
                            rv_pack_tag(rv_read_view_max_seq(&it->view),
                                        RV_TYPE_PUT)))
        return;
    it->internal->ops->seek(it->internal, it->saved_key.data,
                            it->saved_key.len);
    db_iter_find_next_user_entry(it, 0);
}

void rv_db_iter_seek_to_first(rv_db_iter *it)
{
    if (db_iter_stopped(it))
        return;
    if (it->has_lower) {
        db_iter_seek_from(it, it->lower.data, it->lower.len);
    } else {
        db_iter_unposition(it);
        it->internal->ops->seek_to_first(it->internal);
        db_iter_find_next_user_entry(it, 0);
    }
    db_iter_stopped(it);
}

void rv_db_iter_seek(rv_db_iter *it, const void *key, size_t klen)
{
    if (db_iter_stopped(it))
        return;
    if (db_iter_below_lower(it, key, klen))
        db_iter_seek_from(it, it->lower.data, it->lower.len);
    else
        db_iter_seek_from(it, key, klen);
    db_iter_stopped(it);
}

/* ------------------------------------------------------------ backward */

/* Saves the shown entry (a put) for the reverse direction. */
static int db_iter_save_entry(rv_db_iter *it, const struct db_iter_entry *e)
{
    size_t vlen;
    const char *v = it->internal->ops->value(it->internal, &vlen);
    if (db_iter_save(it, &it->saved_key, e->ukey, e->ulen))
        return -1;
    return db_iter_save(it, &it->saved_value, v, vlen);
}

/* From the internal position backward, finds the newest visible version of
** the previous user key that is not deleted and not below the lower bound,
** leaving the internal iterator before all of that key's entries. */
static void db_iter_find_prev_user_entry(rv_db_iter *it)
{
    struct rv_iter *in = it->internal;
    int type = RV_TYPE_DELETE;
    for (; in->ops->valid(in); in->ops->prev(in)) {
        struct db_iter_entry e;
        if (db_iter_parse(it, &e))
            return;
        if (db_iter_below_lower(it, e.ukey, e.ulen))
            break; /* and read no further */
        if (!rv_read_view_sees(&it->view, e.sequence))
            continue;
        /* a put already found belongs to a later user key: stop there */
        if (type != RV_TYPE_DELETE && db_iter_compare_saved(it, &e) < 0)
            break;
        type = e.type;
        if (type == RV_TYPE_DELETE) {
            db_iter_buf_clear(&it->saved_key);
            db_iter_buf_clear(&it->saved_value);
        } else if (db_iter_save_entry(it, &e)) {
            return;
        }
    }
    if (type == RV_TYPE_DELETE) {
        it->valid = 0;
        db_iter_buf_clear(&it->saved_key);
        db_iter_buf_clear(&it->saved_value);
        it->direction = DB_ITER_FORWARD;
    } else {
        it->valid = 1;
    }
}

/* The internal iterator is on the shown entry: moves it before every entry
** of that user key.  Returns 0, or -1 if there is nothing before. */
static int db_iter_turn_backward(rv_db_iter *it)
{
    struct rv_iter *in = it->internal;
    struct db_iter_entry e;
    db_iter_parse(it, &e); /* valid: it was parsed when shown */
    if (db_iter_save(it, &it->saved_key, e.ukey, e.ulen))
        return -1;
    for (;;) {
        in->ops->prev(in);
        if (!in->ops->valid(in)) {
            it->valid = 0;
            db_iter_buf_clear(&it->saved_key);
            db_iter_buf_clear(&it->saved_value);
            return -1;
        }
        if (db_iter_parse(it, &e))
            return -1;
        if (db_iter_compare_saved(it, &e) < 0)
            break;
    }
    it->direction = DB_ITER_REVERSE;
    return 0;
}

void rv_db_iter_prev(rv_db_iter *it)
{
    if (!it->valid || db_iter_stopped(it))
        return;
    if (it->direction == DB_ITER_FORWARD && db_iter_turn_backward(it)) {
        db_iter_stopped(it);
        return;
    }
    db_iter_find_prev_user_entry(it);
    db_iter_stopped(it);
}

/* How db_iter_seek_back_from treats its key. */
enum db_iter_edge { DB_ITER_KEY_INCLUDED, DB_ITER_KEY_EXCLUDED };

/* Positions at the last user key <= KEY (< KEY when EDGE says
** DB_ITER_KEY_EXCLUDED), KEY not above the upper bound. */
static void db_iter_seek_back_from(rv_db_iter *it, const void *key,
                                   size_t klen, enum db_iter_edge edge)
{
    db_iter_unposition(it);
    int c = it->has_lower ? db_iter_compare_bound(key, klen, &it->lower) : 1;
    if (c < 0 || (c == 0 && edge == DB_ITER_KEY_EXCLUDED))
        return; /* nothing to read */
    /* tag 0 sorts after every version of KEY, the largest tag before
    ** every one (no entry has it: its type is none) */
    uint64_t tag = edge == DB_ITER_KEY_INCLUDED ? 0 : UINT64_MAX;
    if (db_iter_save_target(it, key, klen, tag))
        return;
    it->direction = DB_ITER_REVERSE;
    it->internal->ops->seek_for_prev(it->internal, it->saved_key.data,
                                     it->saved_key.len);
    db_iter_find_prev_user_entry(it);
}

void rv_db_iter_seek_to_last(rv_db_iter *it)
{
    if (db_iter_stopped(it))
        return;
    if (it->has_upper) {
        db_iter_seek_back_from(it, it->upper.data, it->upper.len,
                               DB_ITER_KEY_EXCLUDED);
    } else {
        db_iter_unposition(it);
        it->direction = DB_ITER_REVERSE;
        it->internal->ops->seek_to_last(it->internal);
        db_iter_find_prev_user_entry(it);
    }
    db_iter_stopped(it);
}

void rv_db_iter_seek_for_prev(rv_db_iter *it, const void *key, size_t klen)
{
    if (db_iter_stopped(it))
        return;
    if (db_iter_past_upper(it, key, klen))
        db_iter_seek_back_from(it, it->upper.data, it->upper.len,
                               DB_ITER_KEY_EXCLUDED);
    else
        db_iter_seek_back_from(it, key, klen, DB_ITER_KEY_INCLUDED);
    db_iter_stopped(it);
}

/* -------------------------------------------------------------- access */

const char *rv_db_iter_key(const rv_db_iter *it, size_t *len)
{
    if (!it->valid) {
        *len = 0;
        return NULL;
    }
    if (it->direction == DB_ITER_REVERSE) {
        *len = it->saved_key.len;
        return db_iter_buf_data(&it->saved_key);
    }
    size_t ilen;
    const char *k = it->internal->ops->key(it->internal, &ilen);
    *len = ilen - RV_TAG_SIZE;
    return k;
}

const char *rv_db_iter_value(const rv_db_iter *it, size_t *len)
{
    if (!it->valid) {
        *len = 0;
        return NULL;
    }
    if (it->direction == DB_ITER_REVERSE) {
        *len = it->saved_value.len;
        return db_iter_buf_data(&it->saved_value);
    }
    return it->internal->ops->value(it->internal, len);
}
