/*
** version.h -- the set of memtables a read sees, as one immutable object.
**
** A version is never changed once installed: the leader that switches
** memtables builds a new one and installs it under db->mu; readers take a
** reference (rv_db_ref_version) and use it without locks.  The version is
** the one home of "which memtable is active": the write-group leader
** inserts into db->current->mem.  Levels of sorted files join it in the
** next issue.
*/
#ifndef RAVEL_VERSION_H
#define RAVEL_VERSION_H

#include "ravel_int.h"
#include "memtable/memtable.h"

struct rv_version {
    _Atomic int refs;
    rv_memtable *mem;       /* the active memtable */
    uint64_t mem_wal;       /* the first WAL segment mem's data is in */
    int n_imm;
    rv_memtable **imm;      /* immutable memtables, newest first */
    uint64_t *imm_wal;      /* the first WAL segment each imm needs (seam
                            ** for flushing: segments older than the oldest
                            ** unflushed memtable's can be deleted) */
};

/* A version whose active memtable is MEM (a reference is taken) with room
** for N_IMM immutable ones, one reference held by the caller.  NULL on
** allocation failure. */
RAVEL_PRIVATE struct rv_version *rv_version_new(rv_memtable *mem,
                                                uint64_t mem_wal, int n_imm);
RAVEL_PRIVATE void rv_version_unref(struct rv_version *v);

#endif /* RAVEL_VERSION_H */
