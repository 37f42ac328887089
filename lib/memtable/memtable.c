/*
** memtable.c -- the in-memory write buffer: entries in a concurrent
** skiplist, allocated from the memtable's own arena.
**
** Owns: the entry encoding, reference counting, point lookups and the
** memtable's rv_iter.  Does not own: ordering and concurrency of inserts
** (skiplist.c), memory (arena.c), or hiding old versions and deletions from
** users (db_iter.c).
**
** Entry layout, the bytes of one skiplist node after its links:
**
**   entry     := internal_key  value_len:varint32  value[value_len]
**   internal_key := user_key  tag:fixed64          (dbformat.h)
**
** The skiplist knows the internal key's length, so key() is the node's key
** as it stands and value() starts right after it.
*/
#include "memtable/memtable.h"
#include "util/arena.h"
#include "base/dbformat.h"
#include "util/error.h"
#include "util/fault.h"
#include "memtable/skiplist.h"
#include "memtable/range_del.h"

#include <stdlib.h>

/* From this write_buffer_size on, the arena's blocks past its first 4 MiB
** are 2 MiB huge-page regions (arena.h), each at most a sixteenth of the
** buffer: searches of a large memtable touch nodes all over it, and 4 KiB
** pages made every node a TLB miss. */
#define MEMTABLE_HUGE_MIN (16 * (size_t)RV_ARENA_HUGE_BLOCK)

struct rv_memtable {
    struct rv_arena arena; /* every entry; freed with the memtable */
    rv_skiplist *list;     /* set once, lives in ARENA */
    /* Owners: the creator, iterators, readers that took one.  fetch_add
    ** relaxed, fetch_sub acq_rel (see rv_memtable_unref). */
    _Atomic uint64_t refs;
    /* Entries written or being written, counted a batch or a group at a
    ** time by whoever inserts them (rv_memtable_count_entries). */
    _Atomic uint64_t entries;
    /* Its range deletions (range_del.h: thread-safe on its own); set
    ** once at creation. */
    struct rv_range_dels *range_dels;
};

rv_memtable *rv_memtable_new(size_t write_buffer_size)
{
    rv_memtable *mt = malloc(sizeof *mt);
    if (!mt)
        return NULL;
    size_t block = write_buffer_size / 8;
    if (write_buffer_size == 0 || block > RV_ARENA_BLOCK_SIZE)
        block = RV_ARENA_BLOCK_SIZE;
    else if (block < 4096)
        block = 4096;
    rv_arena_init(&mt->arena, block);
    if (write_buffer_size >= MEMTABLE_HUGE_MIN)
        rv_arena_use_huge_blocks(&mt->arena);
    mt->list = rv_skiplist_new(&mt->arena);
    if (!mt->list) {
        rv_arena_destroy(&mt->arena);
        free(mt);
        return NULL;
    }
    atomic_init(&mt->refs, 1);
    atomic_init(&mt->entries, 0);
    mt->range_dels = rv_range_dels_new();
    if (!mt->range_dels) {
        rv_arena_destroy(&mt->arena);
        free(mt);
        return NULL;
    }
    return mt;
}

void rv_memtable_ref(rv_memtable *mt)
{
    /* relaxed: the caller already holds a reference, nothing to order */
    atomic_fetch_add_explicit(&mt->refs, 1, memory_order_relaxed);
}

void rv_memtable_unref(rv_memtable *mt)
{
    /* acq_rel: release our uses of the memtable; the last owner acquires
    ** everyone else's before freeing */
    if (atomic_fetch_sub_explicit(&mt->refs, 1, memory_order_acq_rel) != 1)
        return;
    rv_range_dels_free(mt->range_dels);
    rv_arena_destroy(&mt->arena);
    free(mt);
}

int rv_memtable_add(rv_memtable *mt, uint64_t seq, int type, const void *key,
                    size_t klen, const void *val, size_t vlen)
{
    if (klen > RAVEL_MAX_KEY_SIZE || vlen > RAVEL_MAX_VALUE_SIZE)
        return rv_error(RAVEL_INVALID, "memtable: key (%zu bytes) or value "
                        "(%zu bytes) too large", klen, vlen);
    if (type == RV_TYPE_RANGE_DELETE) /* beside the skiplist */
        return rv_range_dels_add(mt->range_dels, seq, key, klen, val, vlen);
    size_t ilen = klen + RV_TAG_SIZE;
    size_t vhead = (size_t)rv_varint32_length((uint32_t)vlen);
    /* The fault hook stands for the allocator running out of memory. */
    char *p = rv_fault_check(RV_FAULT_MEMTABLE_ALLOC)
                  ? NULL
                  : rv_skiplist_alloc_key(mt->list, ilen, vhead + vlen);
    if (!p)
        return rv_error(RAVEL_NOMEM, "memtable: out of memory for a %zu-byte "
                        "entry", ilen + vhead + vlen);
    if (klen)
        memcpy(p, key, klen);
    rv_put_fixed64(p + klen, rv_pack_tag(seq, type));
    rv_put_varint32(p + ilen, (uint32_t)vlen);
    if (vlen)
        memcpy(p + ilen + vhead, val, vlen);
    rv_skiplist_insert(mt->list, p);
    return RAVEL_OK;
}

/* The value stored after an internal key of ILEN bytes at IKEY. */
static const char *memtable_entry_value(const char *ikey, size_t ilen,
                                        size_t *vlen)
{
    uint32_t n = 0;
    /* the varint was written by rv_memtable_add: at most 5 bytes */
    const char *v = rv_get_varint32(ikey + ilen, ikey + ilen + 5, &n);
    *vlen = n;
    return v;
}

int rv_memtable_get(rv_memtable *mt, const void *key, size_t klen,
                    const struct rv_read_view *view, int *type,
                    const char **val, size_t *vlen, uint64_t *seq)
{
    struct rv_skiplist_iter it;
    rv_skiplist_iter_init(&it, mt->list);
    /* The highest tag a visible entry can have: from there the key's
    ** versions come newest first, and the first one VIEW sees is the
    ** answer (today the first one met, as views are sequence prefixes). */
    rv_skiplist_iter_seek(&it, key, klen,
                          rv_pack_tag(rv_read_view_max_seq(view),
                                      RV_TYPE_PUT));
    size_t ilen;
    const char *ikey;
    uint64_t tag;
    for (;; rv_skiplist_iter_next(&it)) {
        if (!rv_skiplist_iter_valid(&it))
            return 0;
        ikey = rv_skiplist_iter_key(&it, &ilen);
        if (rv_user_key_compare(ikey, ilen - RV_TAG_SIZE, key, klen) != 0)
            return 0;
        tag = rv_get_fixed64(ikey + ilen - RV_TAG_SIZE);
        if (rv_read_view_sees(view, rv_tag_sequence(tag)))
            break;
    }
    *type = rv_tag_type(tag);
    if (seq)
        *seq = rv_tag_sequence(tag);
    if (*type == RV_TYPE_PUT) {
        *val = memtable_entry_value(ikey, ilen, vlen);
    } else {
        *val = NULL;
        *vlen = 0;
    }
    return 1;
}

void rv_memtable_count_entries(rv_memtable *mt, uint64_t n)
{
    atomic_fetch_add_explicit(&mt->entries, n, memory_order_relaxed);
}

uint64_t rv_memtable_entries(const rv_memtable *mt)
{
    return atomic_load_explicit(&mt->entries, memory_order_relaxed);
}

size_t rv_memtable_memory_usage(const rv_memtable *mt)
{
    /* range deletions count too: a stream of them alone must fill a
    ** memtable and be flushed like any write */
    return rv_arena_memory_usage(&mt->arena) +
           rv_range_dels_bytes(mt->range_dels);
}

/* ------------------------------------------------------------ iterator */

struct memtable_iter {
    struct rv_iter base;
    rv_memtable *mt; /* one reference, dropped by destroy */
    struct rv_skiplist_iter pos;
};

static struct rv_skiplist_iter *memtable_iter_pos(struct rv_iter *it)
{
    return &((struct memtable_iter *)it)->pos;
}

static const struct rv_skiplist_iter *
memtable_iter_cpos(const struct rv_iter *it)
{
    return &((const struct memtable_iter *)it)->pos;
}

static int memtable_iter_valid(const struct rv_iter *it)
{
    return rv_skiplist_iter_valid(memtable_iter_cpos(it));
}

static void memtable_iter_seek_to_first(struct rv_iter *it)
{
    rv_skiplist_iter_seek_to_first(memtable_iter_pos(it));
    rv_skiplist_iter_prefetch(memtable_iter_cpos(it));
}

static void memtable_iter_seek_to_last(struct rv_iter *it)
{
    rv_skiplist_iter_seek_to_last(memtable_iter_pos(it));
}

static void memtable_iter_seek(struct rv_iter *it, const char *target,
                               size_t tlen)
{
    size_t ulen = tlen - RV_TAG_SIZE;
    rv_skiplist_iter_seek(memtable_iter_pos(it), target, ulen,
                          rv_get_fixed64(target + ulen));
    /* a seek is usually followed by reading the entry and moving on */
    rv_skiplist_iter_prefetch(memtable_iter_cpos(it));
}

static void memtable_iter_seek_for_prev(struct rv_iter *it, const char *target,
                                        size_t tlen)
{
    size_t ulen = tlen - RV_TAG_SIZE;
    rv_skiplist_iter_seek_for_prev(memtable_iter_pos(it), target, ulen,
                                   rv_get_fixed64(target + ulen));
}

static void memtable_iter_next(struct rv_iter *it)
{
    rv_skiplist_iter_next(memtable_iter_pos(it));
    rv_skiplist_iter_prefetch(memtable_iter_cpos(it));
}

static void memtable_iter_prev(struct rv_iter *it)
{
    rv_skiplist_iter_prev(memtable_iter_pos(it));
}

static const char *memtable_iter_key(const struct rv_iter *it, size_t *len)
{
    return rv_skiplist_iter_key(memtable_iter_cpos(it), len);
}

static const char *memtable_iter_value(const struct rv_iter *it, size_t *len)
{
    size_t ilen;
    const char *ikey = rv_skiplist_iter_key(memtable_iter_cpos(it), &ilen);
    return memtable_entry_value(ikey, ilen, len);
}

static int memtable_iter_status(const struct rv_iter *it)
{
    RV_UNUSED(it);
    return RAVEL_OK;
}

static void memtable_iter_destroy(struct rv_iter *it)
{
    struct memtable_iter *mi = (struct memtable_iter *)it;
    rv_memtable_unref(mi->mt);
    free(mi);
}

static const struct rv_iter_ops memtable_iter_ops = {
    .valid = memtable_iter_valid,
    .seek_to_first = memtable_iter_seek_to_first,
    .seek_to_last = memtable_iter_seek_to_last,
    .seek = memtable_iter_seek,
    .seek_for_prev = memtable_iter_seek_for_prev,
    .next = memtable_iter_next,
    .prev = memtable_iter_prev,
    .key = memtable_iter_key,
    .value = memtable_iter_value,
    .status = memtable_iter_status,
    .destroy = memtable_iter_destroy,
};

struct rv_iter *rv_memtable_iter_new(rv_memtable *mt)
{
    struct memtable_iter *mi = malloc(sizeof *mi);
    if (!mi)
        return NULL;
    mi->base.ops = &memtable_iter_ops;
    mi->mt = mt;
    rv_memtable_ref(mt);
    rv_skiplist_iter_init(&mi->pos, mt->list);
    return &mi->base;
}

struct rv_range_dels *rv_memtable_range_dels(rv_memtable *mt)
{
    return mt->range_dels;
}

int rv_memtable_is_empty(rv_memtable *mem)
{
    if (rv_range_dels_count(mem->range_dels) > 0)
        return 0;
    struct rv_iter *it = rv_memtable_iter_new(mem);
    if (!it)
        return 0; /* out of memory: say "not empty", the safe answer */
    it->ops->seek_to_first(it);
    int empty = !it->ops->valid(it);
    it->ops->destroy(it);
    return empty;
}
