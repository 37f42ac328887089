/*
** compaction_stats.c -- the text of the compaction and write-controller
** properties (properties.c lists them): per-level statistics, the
** compaction lines of ravel.stats, pending bytes, the controller's state.
*/
#include "db/db.h"
#include "util/error.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t cstats_load(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

char *rv_levelstats_text(ravel_db *db)
{
    rv_mutex_lock(&db->mu.lock);
    const struct rv_files *fs = db->read.current->files;
    struct rv_level_targets t;
    rv_level_targets_compute(&db->options, fs, &t);
    char *text = rv_text_format("level files bytes target score "
                               "(base level %d)\n", t.base_level);
    for (int l = 0; l < db->options.num_levels; l++)
        rv_text_append(&text, "%d %d %llu %llu %.2f\n", l, fs->n[l],
                      (unsigned long long)rv_level_bytes(fs, l),
                      (unsigned long long)(l ? t.bytes[l] : 0),
                      rv_level_score(&db->options, fs, &t, l));
    rv_mutex_unlock(&db->mu.lock);
    return text;
}

uint64_t rv_db_pending_compaction_bytes(ravel_db *db)
{
    rv_mutex_lock(&db->mu.lock);
    uint64_t b = rv_pending_compaction_bytes(&db->options,
                                             db->read.current->files);
    rv_mutex_unlock(&db->mu.lock);
    return b;
}

int rv_db_compaction_pending(ravel_db *db)
{
    rv_mutex_lock(&db->mu.lock);
    const struct rv_files *fs = db->read.current->files;
    struct rv_level_targets t;
    rv_level_targets_compute(&db->options, fs, &t);
    int due = 0;
    for (int l = 0; l < db->options.num_levels && !due; l++)
        due = rv_level_score(&db->options, fs, &t, l) >= 1;
    due |= db->mu.compact.n_running > 0;
    rv_mutex_unlock(&db->mu.lock);
    return due;
}

int rv_db_running_compactions(ravel_db *db)
{
    rv_mutex_lock(&db->mu.lock);
    int n = db->mu.compact.n_running;
    rv_mutex_unlock(&db->mu.lock);
    return n;
}

/* The enforced state of the write controller, and its rate. */
enum rv_wc_state rv_db_write_controller_state(ravel_db *db, uint64_t *rate)
{
    *rate = 0;
    if (!db->wc_member.wc)
        return RV_WC_NONE;
    return rv_wc_enforced(&db->wc_member, rate);
}

/* The compaction and write-controller lines of ravel.stats.  Its "write
** amplification:" line is ravel's one definition of it (ravel-bench prints
** it from here): the table bytes flushes and compactions wrote over the
** bytes users wrote as db_write.c counts them (each batch encoded: header,
** tags, lengths, keys, values -- RocksDB's "ingest", rocksdb.bytes.written).
** The WAL is not counted, as in RocksDB's W-Amp; the wal: line has its
** bytes.  (RocksDB's compaction-stats W-Amp divides by the bytes flushed
** instead, so it leaves out what the memtables still hold.) */
char *rv_compaction_stats_text(ravel_db *db)
{
    char *text = rv_text_format("%s", "");
    uint64_t written = cstats_load(&db->stats.flush_bytes);
    for (int l = 1; l < RV_NUM_LEVELS; l++) {
        uint64_t n = cstats_load(&db->stats.compactions[l]);
        if (!n)
            continue;
        uint64_t w = cstats_load(&db->stats.compact_written[l]);
        written += w;
        rv_text_append(&text, "compaction into level %d: %llu compactions, "
                      "%llu bytes read, %llu written, %.3f s\n", l,
                      (unsigned long long)n,
                      (unsigned long long)cstats_load(
                          &db->stats.compact_read[l]),
                      (unsigned long long)w,
                      (double)cstats_load(&db->stats.compact_micros[l]) / 1e6);
    }
    uint64_t user = cstats_load(&db->stats.user_bytes);
    rv_text_append(&text, "compaction: %llu moves, %llu entries dropped, %d "
                  "running, %llu pending bytes\n"
                  "write amplification: %.2f (%llu bytes written by flushes "
                  "and compactions / %llu bytes written by users)\n",
                  (unsigned long long)cstats_load(&db->stats.compact_moves),
                  (unsigned long long)cstats_load(&db->stats.compact_dropped),
                  rv_db_running_compactions(db),
                  (unsigned long long)rv_db_pending_compaction_bytes(db),
                  user ? (double)written / (double)user : 0.0,
                  (unsigned long long)written, (unsigned long long)user);
    uint64_t rate = 0;
    enum rv_wc_state s = rv_db_write_controller_state(db, &rate);
    rv_mutex_lock(&db->mu.lock);
    enum rv_wc_state own = db->mu.stall.state;
    enum rv_stall_cause cause = db->mu.stall.cause;
    rv_mutex_unlock(&db->mu.lock);
    rv_text_append(&text, "write controller: %s%s, this database asks for "
                  "%s (%s), rate %llu bytes/s; %llu writes refused "
                  "(RAVEL_NO_SLOWDOWN)\n",
                  s == RV_WC_STOP ? "writes stopped"
                  : s == RV_WC_DELAY ? "writes slowed down" : "no stall",
                  s != RV_WC_NONE && own == RV_WC_NONE
                      ? " by another database" : "",
                  own == RV_WC_STOP ? "a stop"
                      : own == RV_WC_DELAY ? "a slowdown" : "nothing",
                  rv_stall_cause_name(cause), (unsigned long long)rate,
                  (unsigned long long)cstats_load(&db->stats.busy));
    for (int c = RV_CAUSE_MEMTABLES; c < RV_CAUSE_COUNT; c++) {
        uint64_t stop = cstats_load(&db->stats.stop_micros[c]);
        uint64_t delay = cstats_load(&db->stats.delay_micros[c]);
        if (stop || delay)
            rv_text_append(&text, "write stall %s: %.3f s stopped, %.3f s "
                          "slowed down\n",
                          rv_stall_cause_name((enum rv_stall_cause)c),
                          (double)stop / 1e6, (double)delay / 1e6);
    }
    return text;
}
