/*
** memtable.h -- the in-memory write buffer: a concurrent skiplist of
** internal keys (see dbformat.h) with their values, allocated from an arena.
**
** Concurrency: any number of threads may rv_memtable_add() and read at
** once; adds are lock-free (CAS at each skiplist level).  A reader sees an
** entry once the add that made it has returned (release/acquire).  Entries
** are never removed; the whole memtable is freed when its last reference
** goes.
*/
#ifndef RAVEL_MEMTABLE_H
#define RAVEL_MEMTABLE_H

#include "ravel_int.h"
#include "iter/iterator.h"
#include "base/read_view.h"

typedef struct rv_memtable rv_memtable;

/* A new empty memtable with one reference, sized for WRITE_BUFFER_SIZE
** (its arena blocks are an eighth of it, 4 KiB .. 64 KiB, so that memory
** usage tracks what was inserted even for small buffers; 0: 64 KiB
** blocks; from 32 MiB on, 2 MiB huge-page blocks past the first 4 MiB).
** NULL on allocation failure. */
RAVEL_PRIVATE rv_memtable *rv_memtable_new(size_t write_buffer_size);
RAVEL_PRIVATE void rv_memtable_ref(rv_memtable *mt);
RAVEL_PRIVATE void rv_memtable_unref(rv_memtable *mt);

/* Inserts (user key, seq, type, value).  (key, seq) must be unique in the
** memtable (sequence numbers are).  Thread-safe.  Returns RAVEL_OK or
** RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_memtable_add(rv_memtable *mt, uint64_t seq, int type,
                                  const void *key, size_t klen,
                                  const void *val, size_t vlen);

/* Looks up the newest entry for KEY visible to VIEW (visibility.h).
** Returns 0 if there is none; otherwise 1 with *type set (RV_TYPE_PUT or
** RV_TYPE_DELETE), *seq its sequence (SEQ may be NULL) and, for a put,
** *val / *vlen pointing into the memtable (valid while the caller holds a
** reference). */
RAVEL_PRIVATE int rv_memtable_get(rv_memtable *mt, const void *key,
                                  size_t klen,
                                  const struct rv_read_view *view,
                                  int *type, const char **val, size_t *vlen,
                                  uint64_t *seq);

/* Bytes allocated for this memtable (arena blocks), read with relaxed
** ordering: an estimate that only grows. */
RAVEL_PRIVATE size_t rv_memtable_memory_usage(const rv_memtable *mt);

/* N more entries are being added to MT (a write group's, or a replayed
** batch's); for ravel.estimate-num-keys, which sequence numbers cannot
** give when commits take some (write_prepared). */
RAVEL_PRIVATE void rv_memtable_count_entries(rv_memtable *mt, uint64_t n);
RAVEL_PRIVATE uint64_t rv_memtable_entries(const rv_memtable *mt);

/* An iterator over every entry (all versions) in internal-key order.  It
** holds a reference on MT until destroyed.  NULL on allocation failure. */
RAVEL_PRIVATE struct rv_iter *rv_memtable_iter_new(rv_memtable *mt);

/* MT's range deletions (memtable/range_del.h), which rv_memtable_add
** keeps there instead of the skiplist; never NULL. */
struct rv_range_dels;
RAVEL_PRIVATE struct rv_range_dels *rv_memtable_range_dels(rv_memtable *mt);

/* 1 if MEM holds no entry and no range deletion (0 when out of memory to look: the safe
** answer). */
RAVEL_PRIVATE int rv_memtable_is_empty(rv_memtable *mem);

#endif /* RAVEL_MEMTABLE_H */
