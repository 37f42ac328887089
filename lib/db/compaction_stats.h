/*
** compaction_stats.h -- the compaction and write-controller properties
** (compaction_stats.c): text for ravel.levelstats and ravel.stats, and the
** numbers ravel_property reads.
*/
#ifndef RAVEL_COMPACTION_STATS_H
#define RAVEL_COMPACTION_STATS_H

#include "ravel_int.h"
#include "util/write_controller.h"

/* Text of the compaction properties (compaction_stats.c), malloc'd or
** NULL on OOM: ravel.levelstats, the compaction and write-controller
** lines of ravel.stats. */
RAVEL_PRIVATE char *rv_levelstats_text(ravel_db *db);
RAVEL_PRIVATE char *rv_compaction_stats_text(ravel_db *db);
RAVEL_PRIVATE uint64_t rv_db_pending_compaction_bytes(ravel_db *db);
RAVEL_PRIVATE int rv_db_compaction_pending(ravel_db *db);
RAVEL_PRIVATE int rv_db_running_compactions(ravel_db *db);
/* The write controller's enforced state and rate (0 unless delayed). */
RAVEL_PRIVATE enum rv_wc_state rv_db_write_controller_state(ravel_db *db,
                                                            uint64_t *rate);

#endif /* RAVEL_COMPACTION_STATS_H */
