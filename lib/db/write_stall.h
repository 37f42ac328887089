/*
** write_stall.h -- what a database asks of its write controller
** (write_stall.c; RocksDB's stop and slowdown conditions), and that state
** in the handle (db->mu.stall, read and written with db->mu.lock held).
*/
#ifndef RAVEL_WRITE_STALL_H
#define RAVEL_WRITE_STALL_H

#include "ravel_int.h"
#include "util/mutex.h"
#include "db/write_group.h"
#include "util/write_controller.h"

struct rv_db_stall {
    enum rv_wc_state state;         /* what it asks for now */
    enum rv_stall_cause cause;
    uint64_t rate;                  /* bytes/s asked while delaying */
    uint64_t prev_debt;             /* pending bytes at the last update */
    int prev_l0;                    /* level 0 files at the last update */
    int memtables_full;             /* a leader waits for a flush to make
                                    ** room for a memtable */
    uint64_t since;                 /* monotonic micros the state began */
};

/* Admits a write group of BYTES whose last member is LAST
** (write_stall.c): waits as the write controller says, or returns
** RAVEL_BUSY (no message: the writers refused report it) for
** NO_SLOWDOWN; RAVEL_READONLY (message set) if writes stop meanwhile.
** Before waiting, fails the RAVEL_NO_SLOWDOWN writers queued behind LAST
** (rv_write_stall_fail_no_slowdown). */
RAVEL_PRIVATE int rv_write_stall_admit(ravel_db *db, uint64_t bytes,
                                       int no_slowdown,
                                       struct rv_writer *last);
RAVEL_PRIVATE void rv_write_stall_fail_no_slowdown(ravel_db *db,
                                                   struct rv_writer *last);
/* 1 if the write controller holds writes back now (a slowdown or a stop;
** one relaxed load, a hint): a group is admitted only then, and a
** RAVEL_NO_SLOWDOWN write is refused before it queues. */
RAVEL_PRIVATE int rv_write_stall_active(ravel_db *db);

#endif /* RAVEL_WRITE_STALL_H */
