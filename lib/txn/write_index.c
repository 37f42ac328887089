/*
** write_index.c -- a transaction's writes: the batch they are appended to
** and the index over it (write_index.h says what is promised).
**
** Owns: the index -- a single-threaded skiplist with one node per user key
** the transaction wrote -- the per-op records, savepoints and rollback.
** Does not own: the rep layout (base/batchrepr.c decodes an op), building
** a rep and its limits (db/batch.c).
**
** Every op of the batch has a record, ops[i] for op i: the byte offset of
** op i in the rep, the node of its key, and the number of the same key's
** op before it (WINDEX_NONE if none).  A node holds the number of its
** key's latest op (TOP), its links and where its key's bytes are in the
** batch (in the key's first op).  So each key's ops form a chain, newest
** first, and:
**
**   - a write appends op n, records { offset, node, prev = node->top } and
**     sets node->top = n (a new key gets a new node);
**   - a rollback to a savepoint taken at op count c walks ops n-1 down to
**     c: each is its node's top (ops are undone newest first), so
**     node->top = ops[i].prev, and a node left with no op is unlinked and
**     freed; then the batch and the records are cut back to c ops.
**
** Undo costs one step per op written since the savepoint (plus a search
** per key that leaves the index), and nothing is kept for it beyond the
** record every op has anyway (16 bytes).  A savepoint is (rep length, op
** count).  Nodes come from an arena; one a rollback unlinks waits, with
** others of its height, to be reused by the next new key.
**
** Memory: the batch, 16 bytes per op, and per distinct key a node of 16
** bytes plus 8 per level (1.33 levels on average).
*/
#include "txn/write_index.h"
#include "base/dbformat.h"
#include "util/arena.h"
#include "util/error.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define WINDEX_MAX_HEIGHT 12
#define WINDEX_BRANCHING 4
#define WINDEX_NONE UINT32_MAX
/* Nodes are at most 112 bytes: small blocks keep a small transaction
** small. */
#define WINDEX_ARENA_BLOCK 4096

struct rv_windex_node {
    uint32_t top;     /* number of the key's latest op */
    uint32_t height;  /* links in next[] */
    /* Where the key's bytes are in the rep: in the key's first op, which
    ** lives as long as the node (undoing it unlinks the node).  Kept here
    ** so that a comparison reads the node and the key, nothing between. */
    uint32_t key_off;
    uint32_t klen;
    struct rv_windex_node *next[];
};

struct windex_op {
    struct rv_windex_node *node; /* the op's key */
    uint32_t off;             /* byte offset in the rep (< 1 GiB) */
    uint32_t prev;            /* the key's op before this one, or NONE */
};

struct windex_savepoint {
    size_t len;     /* rep length */
    uint32_t count; /* ops */
};

/* One transaction's, used by one thread at a time: no field is shared. */
struct rv_write_index {
    struct ravel_batch batch;  /* the ops, once */
    struct windex_op *ops;     /* batch.count used */
    size_t ops_cap;
    struct rv_windex_node *head;  /* WINDEX_MAX_HEIGHT links, no key */
    int max_height;            /* highest level in use, >= 1 */
    size_t nkeys;              /* nodes, head excluded */
    struct rv_arena arena;     /* the nodes (the head is apart) */
    /* Nodes unlinked by a rollback, by height, chained through next[0]:
    ** reused before the arena grows. */
    struct rv_windex_node *spare[WINDEX_MAX_HEIGHT + 1];
    struct windex_savepoint *sp;
    size_t nsp, sp_cap;
    uint64_t rng;              /* heights */
    uint64_t epoch;            /* + 1 at each rollback or clear */
};

_Static_assert(RAVEL_MAX_BATCH_SIZE <= UINT32_MAX,
               "an op's offset must fit its 32-bit record");

/* ------------------------------------------------------------ the batch */

/* Decodes op N (the rep was built by rv_batch_add: it is well formed). */
static void windex_op_decode(const rv_write_index *idx, uint32_t n,
                             struct rv_batch_op *op)
{
    size_t off = idx->ops[n].off;
    int rc = rv_batch_decode_op(idx->batch.rep, idx->batch.len, &off, n, op);
    assert(rc == RAVEL_OK);
    RV_UNUSED(rc);
}

static const char *windex_node_key(const rv_write_index *idx,
                                   const struct rv_windex_node *n, size_t *klen)
{
    *klen = n->klen;
    return idx->batch.rep + n->key_off;
}

static int windex_node_compare(const rv_write_index *idx,
                               const struct rv_windex_node *n, const void *key,
                               size_t klen)
{
    return rv_user_key_compare(idx->batch.rep + n->key_off, n->klen, key,
                               klen);
}

/* ------------------------------------------------------------- skiplist */

static int windex_random_height(rv_write_index *idx)
{
    int h = 1;
    for (;;) {
        uint64_t x = idx->rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        idx->rng = x;
        if (h >= WINDEX_MAX_HEIGHT ||
            ((x * 0x2545F4914F6CDD1Dull) >> 40) % WINDEX_BRANCHING)
            return h;
        h++;
    }
}

static size_t windex_node_size(int height)
{
    return sizeof(struct rv_windex_node) +
           (size_t)height * sizeof(struct rv_windex_node *);
}

/* The first node with key >= KEY (NULL: none); PREV[l], if given, gets the
** last node before it at each level l (the head if none). */
static struct rv_windex_node *windex_find_ge(const rv_write_index *idx,
                                          const void *key, size_t klen,
                                          struct rv_windex_node **prev)
{
    struct rv_windex_node *x = idx->head;
    for (int l = idx->max_height - 1; l >= 0; l--) {
        struct rv_windex_node *next = x->next[l];
        while (next && windex_node_compare(idx, next, key, klen) < 0) {
            x = next;
            next = x->next[l];
        }
        if (prev)
            prev[l] = x;
    }
    return x->next[0];
}

/* The node of KEY, or NULL. */
static struct rv_windex_node *windex_find(const rv_write_index *idx,
                                       const void *key, size_t klen,
                                       struct rv_windex_node **prev)
{
    struct rv_windex_node *n = windex_find_ge(idx, key, klen, prev);
    if (n && windex_node_compare(idx, n, key, klen) == 0)
        return n;
    return NULL;
}

static struct rv_windex_node *windex_node_new(rv_write_index *idx)
{
    int h = windex_random_height(idx);
    struct rv_windex_node *n = idx->spare[h];
    if (n)
        idx->spare[h] = n->next[0];
    else
        n = rv_arena_alloc(&idx->arena, windex_node_size(h));
    if (!n)
        return NULL;
    n->top = WINDEX_NONE;
    n->height = (uint32_t)h;
    return n;
}

/* Links N after PREV (windex_find's, for N's key). */
static void windex_link(rv_write_index *idx, struct rv_windex_node *n,
                        struct rv_windex_node **prev)
{
    for (int l = idx->max_height; l < (int)n->height; l++)
        prev[l] = idx->head;
    if ((int)n->height > idx->max_height)
        idx->max_height = (int)n->height;
    for (int l = 0; l < (int)n->height; l++) {
        n->next[l] = prev[l]->next[l];
        prev[l]->next[l] = n;
    }
    idx->nkeys++;
}

/* N (unlinked) to the spares of its height. */
static void windex_node_recycle(rv_write_index *idx, struct rv_windex_node *n)
{
    n->next[0] = idx->spare[n->height];
    idx->spare[n->height] = n;
}

/* Unlinks N and keeps it for reuse, whose key is KEY (read before the op goes). */
static void windex_unlink(rv_write_index *idx, struct rv_windex_node *n,
                          const char *key, size_t klen)
{
    struct rv_windex_node *prev[WINDEX_MAX_HEIGHT];
    struct rv_windex_node *found = windex_find_ge(idx, key, klen, prev);
    assert(found == n);
    RV_UNUSED(found);
    for (int l = 0; l < (int)n->height; l++)
        prev[l]->next[l] = n->next[l];
    while (idx->max_height > 1 && !idx->head->next[idx->max_height - 1])
        idx->max_height--;
    idx->nkeys--;
    windex_node_recycle(idx, n);
}

/* -------------------------------------------------------------- writing */

rv_write_index *rv_write_index_new(void)
{
    rv_write_index *idx = calloc(1, sizeof *idx);
    if (idx)
        idx->head = calloc(1, windex_node_size(WINDEX_MAX_HEIGHT));
    if (!idx || !idx->head) {
        free(idx);
        rv_error(RAVEL_NOMEM, "transaction: out of memory creating its "
                 "write index");
        return NULL;
    }
    rv_batch_init(&idx->batch);
    rv_arena_init(&idx->arena, WINDEX_ARENA_BLOCK);
    idx->head->height = WINDEX_MAX_HEIGHT;
    idx->max_height = 1;
    idx->rng = 0x9E3779B97F4A7C15ull;
    return idx;
}

static void windex_free_nodes(rv_write_index *idx)
{
    rv_arena_destroy(&idx->arena);
    rv_arena_init(&idx->arena, WINDEX_ARENA_BLOCK);
    memset(idx->spare, 0, sizeof idx->spare);
    memset(idx->head->next, 0, WINDEX_MAX_HEIGHT * sizeof idx->head->next[0]);
    idx->max_height = 1;
    idx->nkeys = 0;
}

void rv_write_index_free(rv_write_index *idx)
{
    if (!idx)
        return;
    rv_arena_destroy(&idx->arena);
    free(idx->head);
    free(idx->ops);
    free(idx->sp);
    rv_batch_release(&idx->batch);
    free(idx);
}

/* Room for one more op record. */
static int windex_reserve_op(rv_write_index *idx)
{
    if (idx->batch.count < idx->ops_cap)
        return RAVEL_OK;
    size_t cap = idx->ops_cap ? idx->ops_cap * 2 : 16;
    struct windex_op *ops = realloc(idx->ops, cap * sizeof *ops);
    if (!ops)
        return rv_error(RAVEL_NOMEM, "transaction: out of memory indexing "
                        "op %u", idx->batch.count);
    idx->ops = ops;
    idx->ops_cap = cap;
    return RAVEL_OK;
}

/* Appends the op and indexes it; all or nothing. */
static int windex_add(rv_write_index *idx, int type, const void *key,
                      size_t klen, const void *val, size_t vlen)
{
    struct rv_windex_node *prev[WINDEX_MAX_HEIGHT];
    int rc = windex_reserve_op(idx);
    if (rc)
        return rc;
    /* the search reads KEY before rv_batch_add checks it */
    if (!key && klen)
        return rv_error(RAVEL_INVALID, "transaction: NULL key with length "
                        "%zu", klen);
    struct rv_windex_node *node = windex_find(idx, key, klen, prev);
    struct rv_windex_node *fresh = NULL;
    if (!node) {
        fresh = node = windex_node_new(idx);
        if (!node)
            return rv_error(RAVEL_NOMEM, "transaction: out of memory "
                            "indexing a key of %zu bytes", klen);
    }
    uint32_t n = idx->batch.count;
    size_t off = idx->batch.len;
    rc = rv_batch_add(&idx->batch, type, key, klen, val, vlen);
    if (rc) {
        if (fresh)
            windex_node_recycle(idx, fresh);
        return rc;
    }
    idx->ops[n] = (struct windex_op){ node, (uint32_t)off, node->top };
    node->top = n;
    if (fresh) {
        struct rv_batch_op op;
        windex_op_decode(idx, n, &op);
        fresh->key_off = (uint32_t)(op.key - idx->batch.rep);
        fresh->klen = (uint32_t)op.klen;
        windex_link(idx, fresh, prev);
    }
    return RAVEL_OK;
}

int rv_write_index_put(rv_write_index *idx, const void *key, size_t klen,
                       const void *val, size_t vlen)
{
    return windex_add(idx, RV_TYPE_PUT, key, klen, val, vlen);
}

int rv_write_index_delete(rv_write_index *idx, const void *key, size_t klen)
{
    return windex_add(idx, RV_TYPE_DELETE, key, klen, NULL, 0);
}

/* -------------------------------------------------------------- reading */

int rv_write_index_get(const rv_write_index *idx, const void *key,
                       size_t klen, int *type, const char **val,
                       size_t *vlen)
{
    struct rv_windex_node *n = windex_find(idx, key, klen, NULL);
    if (!n)
        return RV_WINDEX_NOT_IN_TXN;
    struct rv_batch_op op;
    windex_op_decode(idx, n->top, &op);
    *type = op.type;
    *val = op.val;
    *vlen = op.vlen;
    return RV_WINDEX_FOUND;
}

struct ravel_batch *rv_write_index_batch(rv_write_index *idx)
{
    return &idx->batch;
}

uint32_t rv_write_index_count(const rv_write_index *idx)
{
    return idx->batch.count;
}

size_t rv_write_index_keys(const rv_write_index *idx)
{
    return idx->nkeys;
}

size_t rv_write_index_bytes(const rv_write_index *idx)
{
    return sizeof *idx + idx->batch.cap +
           idx->ops_cap * sizeof idx->ops[0] +
           windex_node_size(WINDEX_MAX_HEIGHT) +
           rv_arena_memory_usage(&idx->arena) +
           idx->sp_cap * sizeof idx->sp[0];
}

/* ----------------------------------------------------------- savepoints */

int rv_write_index_savepoint(rv_write_index *idx)
{
    if (idx->nsp == idx->sp_cap) {
        size_t cap = idx->sp_cap ? idx->sp_cap * 2 : 4;
        struct windex_savepoint *sp = realloc(idx->sp, cap * sizeof *sp);
        if (!sp)
            return rv_error(RAVEL_NOMEM, "transaction: out of memory "
                            "taking savepoint %zu", idx->nsp + 1);
        idx->sp = sp;
        idx->sp_cap = cap;
    }
    idx->sp[idx->nsp++] = (struct windex_savepoint){ idx->batch.len,
                                                     idx->batch.count };
    return RAVEL_OK;
}

/* Undoes ops COUNT .. end, newest first, then cuts the batch to LEN. */
static void windex_undo_to(rv_write_index *idx, size_t len, uint32_t count)
{
    if (count == 0) {
        /* everything goes: free the nodes without searching for each */
        windex_free_nodes(idx);
        rv_batch_truncate(&idx->batch, len, count);
        return;
    }
    for (uint32_t i = idx->batch.count; i-- > count;) {
        struct windex_op *op = &idx->ops[i];
        struct rv_windex_node *n = op->node;
        assert(n->top == i);
        if (op->prev != WINDEX_NONE) {
            n->top = op->prev;
            continue;
        }
        assert(n->key_off > op->off);
        windex_unlink(idx, n, idx->batch.rep + n->key_off, n->klen);
    }
    rv_batch_truncate(&idx->batch, len, count);
}

int rv_write_index_rollback_to_savepoint(rv_write_index *idx)
{
    if (idx->nsp == 0)
        return rv_error(RAVEL_NOTFOUND, "transaction: no savepoint to roll "
                        "back to");
    struct windex_savepoint sp = idx->sp[--idx->nsp];
    windex_undo_to(idx, sp.len, sp.count);
    idx->epoch++;
    return RAVEL_OK;
}

int rv_write_index_pop_savepoint(rv_write_index *idx)
{
    if (idx->nsp == 0)
        return rv_error(RAVEL_NOTFOUND, "transaction: no savepoint to pop");
    idx->nsp--;
    return RAVEL_OK;
}

int rv_write_index_savepoint_count(const rv_write_index *idx)
{
    return (int)idx->nsp;
}

void rv_write_index_clear(rv_write_index *idx)
{
    windex_free_nodes(idx);
    rv_batch_truncate(&idx->batch, RV_BATCH_HEADER_SIZE, 0);
    rv_put_fixed64(idx->batch.rep, 0);
    idx->nsp = 0;
    idx->epoch++;
}

uint64_t rv_write_index_epoch(const rv_write_index *idx)
{
    return idx->epoch;
}

/* ------------------------------------------------------------ positions */

void rv_windex_iter_init(struct rv_windex_iter *it, const rv_write_index *idx)
{
    it->idx = idx;
    it->node = NULL;
}

int rv_windex_iter_valid(const struct rv_windex_iter *it)
{
    return it->node != NULL;
}

void rv_windex_iter_seek_to_first(struct rv_windex_iter *it)
{
    it->node = it->idx->head->next[0];
}

void rv_windex_iter_seek_to_last(struct rv_windex_iter *it)
{
    const rv_write_index *idx = it->idx;
    struct rv_windex_node *x = idx->head;
    for (int l = idx->max_height - 1; l >= 0; l--)
        while (x->next[l])
            x = x->next[l];
    it->node = x == idx->head ? NULL : x;
}

void rv_windex_iter_seek(struct rv_windex_iter *it, const void *key,
                         size_t klen)
{
    it->node = windex_find_ge(it->idx, key, klen, NULL);
}

/* The last node before the first >= KEY, or NULL. */
static const struct rv_windex_node *windex_last_before(const rv_write_index *idx,
                                                    const void *key,
                                                    size_t klen)
{
    struct rv_windex_node *prev[WINDEX_MAX_HEIGHT];
    windex_find_ge(idx, key, klen, prev);
    return prev[0] == idx->head ? NULL : prev[0];
}

void rv_windex_iter_seek_for_prev(struct rv_windex_iter *it, const void *key,
                                  size_t klen)
{
    const struct rv_windex_node *n = windex_find_ge(it->idx, key, klen, NULL);
    if (n && windex_node_compare(it->idx, n, key, klen) == 0)
        it->node = n;
    else
        it->node = windex_last_before(it->idx, key, klen);
}

void rv_windex_iter_next(struct rv_windex_iter *it)
{
    it->node = it->node->next[0];
}

void rv_windex_iter_prev(struct rv_windex_iter *it)
{
    size_t klen;
    const char *key = windex_node_key(it->idx, it->node, &klen);
    it->node = windex_last_before(it->idx, key, klen);
}

int rv_windex_iter_entry(const struct rv_windex_iter *it, const char **key,
                         size_t *klen, const char **val, size_t *vlen)
{
    struct rv_batch_op op;
    windex_op_decode(it->idx, it->node->top, &op);
    *key = op.key;
    *klen = op.klen;
    *val = op.val;
    *vlen = op.vlen;
    return op.type;
}
