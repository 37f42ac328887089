/*
** db_stats.h -- the handle's statistics (db->stats): counters added to
** with relaxed atomics wherever the event happens and read, each on its
** own, by ravel_property (properties.c, compaction_stats.c).  Relaxed:
** no reader infers anything about other memory from a counter.
*/
#ifndef RAVEL_DB_STATS_H
#define RAVEL_DB_STATS_H

#include "ravel_int.h"
#include "base/dbformat.h"
#include "util/write_controller.h"

struct rv_db_stats {
    _Atomic uint64_t memtable_switches;
    _Atomic uint64_t nowal_writes;
    _Atomic uint64_t flushes;
    _Atomic uint64_t flush_bytes;     /* table bytes written */
    _Atomic uint64_t flush_entries;   /* entries written */
    _Atomic uint64_t flush_dropped;   /* versions no reader can see */
    _Atomic uint64_t flush_micros;
    _Atomic uint64_t stalls;          /* groups that waited for room */
    _Atomic uint64_t stall_micros;
    _Atomic uint64_t bg_errors;
    _Atomic uint64_t filter_useful;   /* table lookups a filter saved */
    _Atomic uint64_t wal_deleted;     /* obsolete segments deleted */
    _Atomic uint64_t switch_waits;    /* switches that waited for released
                                      ** inserts */
    _Atomic uint64_t publish_waits;   /* writers that waited for an earlier
                                      ** batch to publish */
    _Atomic uint64_t window_waits;    /* leaders that waited for room in
                                      ** the order ring or the commit
                                      ** window */
    _Atomic uint64_t stale_reads;     /* gets started again (an evicted
                                      ** commit entry) */
    _Atomic uint64_t user_bytes;      /* batch bytes written */
    /* compactions, by output level */
    _Atomic uint64_t compactions[RV_NUM_LEVELS];
    _Atomic uint64_t compact_read[RV_NUM_LEVELS];
    _Atomic uint64_t compact_written[RV_NUM_LEVELS];
    _Atomic uint64_t compact_micros[RV_NUM_LEVELS];
    _Atomic uint64_t compact_moves;
    _Atomic uint64_t compact_dropped; /* versions and deletions */
    /* the write controller: micros writers waited, by cause */
    _Atomic uint64_t stop_micros[RV_CAUSE_COUNT];
    _Atomic uint64_t delay_micros[RV_CAUSE_COUNT];
    _Atomic uint64_t busy;            /* writes refused: RAVEL_BUSY */
};

#endif /* RAVEL_DB_STATS_H */
