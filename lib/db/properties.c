/*
** properties.c -- ravel_property: text about a database for people and
** tools (ravel.stats, sequence numbers, memtables, the WAL path, why
** writes are refused, the options in force).
**
** One table (properties_table) names every property and the function
** that writes its text: the lookup and the list of known names in the
** message for an unknown name both read it, so a property added to the
** table is found and listed at once.  Update ravel.h's list with it.
*/
#include "db/db.h"
#include "util/error.h"
#include "base/options.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t properties_stat(_Atomic uint64_t *counter)
{
    return atomic_load_explicit(counter, memory_order_relaxed);
}

/* The flush, stall, table and ordering lines of ravel.stats. */
static char *properties_flush_stats(ravel_db *db, int n_files,
                                    uint64_t file_bytes)
{
    uint64_t flushes = properties_stat(&db->stats.flushes);
    uint64_t micros = properties_stat(&db->stats.flush_micros);
    char *compaction = rv_compaction_stats_text(db);
    if (!compaction)
        return NULL;
    char *s = rv_text_format(
        "flush: %llu flushes, %llu bytes, %llu entries written, %llu "
        "versions dropped, %.3f s total, %.3f s mean\n"
        "stall: %llu write groups waited for a flush, %.3f s total\n"
        "tables: %d files, %llu bytes, %llu lookups saved by filters\n"
        "wal segments deleted: %llu\n"
        "background errors: %llu\n"
        "ordering: %s, %u inserts pending, %llu switches waited for "
        "inserts, %llu writers waited to be published, %llu leader waits "
        "for room\n"
        "commit table: %llu entries, %llu evictions, max evicted %llu, "
        "commit watermark %llu, %llu reads restarted\n%s",
        (unsigned long long)flushes,
        (unsigned long long)properties_stat(&db->stats.flush_bytes),
        (unsigned long long)properties_stat(&db->stats.flush_entries),
        (unsigned long long)properties_stat(&db->stats.flush_dropped),
        (double)micros / 1e6,
        flushes ? (double)micros / 1e6 / (double)flushes : 0.0,
        (unsigned long long)properties_stat(&db->stats.stalls),
        (double)properties_stat(&db->stats.stall_micros) / 1e6,
        n_files, (unsigned long long)file_bytes,
        (unsigned long long)properties_stat(&db->stats.filter_useful),
        (unsigned long long)properties_stat(&db->stats.wal_deleted),
        (unsigned long long)properties_stat(&db->stats.bg_errors),
        rv_write_ordering_name(db->write.ordering),
        (unsigned)atomic_load_explicit(&db->write.pending_inserts,
                                       memory_order_relaxed),
        (unsigned long long)properties_stat(&db->stats.switch_waits),
        (unsigned long long)properties_stat(&db->stats.publish_waits),
        (unsigned long long)properties_stat(&db->stats.window_waits),
        (unsigned long long)(db->write.commit_table.slots
                                 ? db->write.commit_table.mask + 1 : 0),
        (unsigned long long)properties_stat(&db->write.commit_table.evictions),
        (unsigned long long)properties_stat(
            &db->write.commit_table.max_evicted_seq),
        (unsigned long long)properties_stat(&db->write.commit_watermark),
        (unsigned long long)properties_stat(&db->stats.stale_reads),
        compaction);
    free(compaction);
    return s;
}

/* The "wal direct:" line of ravel.stats (wal_io=direct), with its
** newline, into BUF; empty in the other modes. */
static void properties_wal_direct(const struct rv_wal_stats *ws, char *buf,
                                  size_t cap)
{
    if (!ws->direct) {
        buf[0] = 0;
        return;
    }
    snprintf(buf, cap, "wal direct: %u-byte blocks, sync by %s, %llu DSYNC "
             "writes, at most %llu writes in flight, %llu waits for a write "
             "slot, %llu writes moved to a new block (%llu bytes skipped); "
             "segments: %llu created, %llu recycled, %llu pooled, %llu "
             "switches waited for one\n",
             ws->block, ws->dsync ? "RWF_DSYNC writes" : "fdatasync",
             (unsigned long long)ws->dsync_writes,
             (unsigned long long)ws->max_inflight,
             (unsigned long long)ws->slot_waits,
             (unsigned long long)ws->skips,
             (unsigned long long)ws->skip_bytes,
             (unsigned long long)ws->spares_created,
             (unsigned long long)ws->spares_recycled,
             (unsigned long long)ws->pooled,
             (unsigned long long)ws->spare_waits);
}

/* The "wal buffer:" line of ravel.stats (manual_wal_flush) into BUF. */
static void properties_wal_buffer(const struct rv_wal_stats *ws,
                                  const char *why_none, char *buf, size_t cap)
{
    if (!ws->manual) {
        snprintf(buf, cap, "wal buffer: none (%s)", why_none);
        return;
    }
    snprintf(buf, cap, "wal buffer: manual_wal_flush=true, %llu bytes "
             "buffered (lost by a crash), %llu writes: %llu full, %llu "
             "sync, %llu ravel_flush_wal, %llu segment end",
             (unsigned long long)ws->buffered,
             (unsigned long long)(ws->writes_full + ws->writes_sync +
                                  ws->writes_flush_wal +
                                  ws->writes_segment_end),
             (unsigned long long)ws->writes_full,
             (unsigned long long)ws->writes_sync,
             (unsigned long long)ws->writes_flush_wal,
             (unsigned long long)ws->writes_segment_end);
}

static char *properties_stats(ravel_db *db)
{
    uint64_t groups = atomic_load_explicit(&db->write.queue.groups,
                                           memory_order_relaxed);
    uint64_t writers = atomic_load_explicit(&db->write.queue.writers,
                                            memory_order_relaxed);
    uint64_t max_group = atomic_load_explicit(&db->write.queue.max_group,
                                              memory_order_relaxed);
    struct rv_wal_stats ws;
    memset(&ws, 0, sizeof ws);
    const char *why = "opened read-only", *io = "none";
    if (db->write.wal) {
        rv_wal_get_stats(db->write.wal, &ws);
        io = rv_wal_io_mode(db->write.wal, &why);
    }
    struct rv_version *v = rv_db_ref_version(db);
    size_t mem_bytes = rv_memtable_memory_usage(v->mem);
    int n_imm = v->n_imm;
    int n_files = rv_files_count(v->files);
    uint64_t file_bytes = rv_files_bytes(v->files);
    rv_version_unref(v);
    char *flush = properties_flush_stats(db, n_files, file_bytes);
    if (!flush)
        return NULL;
    char wal_buffer[256];
    properties_wal_buffer(&ws, db->write.wal ? "manual_wal_flush=false: every "
                          "group is written before it is acknowledged"
                          : "opened read-only", wal_buffer,
                          sizeof wal_buffer);
    char wal_direct[512];
    properties_wal_direct(&ws, wal_direct, sizeof wal_direct);
    char *s = rv_text_format(
        "write groups: %llu formed, %llu writers, mean size %.2f, max size "
        "%llu\n"
        "wal: io=%s -- %s, %llu bytes, %llu appends, %llu segments created\n"
        "%s\n"
        "%s"
        "fsync: %llu issued, %llu sync writers acknowledged, %.2f writers "
        "per fsync\n"
        "writes without wal: %llu\n"
        "memtables: active %zu bytes, %d immutable, %llu switches\n"
        "sequence: last %llu, visible %llu\n"
        "writes: %s\n"
        "%s",
        (unsigned long long)groups, (unsigned long long)writers,
        groups ? (double)writers / (double)groups : 0.0,
        (unsigned long long)max_group,
        io, why,
        (unsigned long long)ws.bytes, (unsigned long long)ws.appends,
        (unsigned long long)ws.segments, wal_buffer, wal_direct,
        (unsigned long long)ws.fsyncs,
        (unsigned long long)ws.sync_acks,
        ws.fsyncs ? (double)ws.sync_acks / (double)ws.fsyncs : 0.0,
        (unsigned long long)atomic_load_explicit(&db->stats.nowal_writes,
                                                 memory_order_relaxed),
        mem_bytes, n_imm,
        (unsigned long long)atomic_load_explicit(&db->stats.memtable_switches,
                                                 memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&db->write.last_seq,
                                                 memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&db->write.last_visible_seq,
                                                 memory_order_acquire),
        rv_stop_code(&db->stop)
            ? "refused (see ravel.read_only_reason)"
            : db->options.read_only ? "refused (opened read-only)"
                                    : "accepted", flush);
    free(flush);
    return s;
}

static char *properties_last_sequence(ravel_db *db)
{
    return rv_text_format("%llu", (unsigned long long)atomic_load_explicit(
                                 &db->write.last_seq, memory_order_relaxed));
}

static char *properties_last_visible_sequence(ravel_db *db)
{
    uint64_t seq = atomic_load_explicit(&db->write.last_visible_seq,
                                        memory_order_acquire);
    return rv_text_format("%llu", (unsigned long long)seq);
}

static char *properties_num_immutable(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    char *s = rv_text_format("%d", v->n_imm);
    rv_version_unref(v);
    return s;
}

static char *properties_active_size(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    char *s = rv_text_format("%zu", rv_memtable_memory_usage(v->mem));
    rv_version_unref(v);
    return s;
}

static char *properties_wal_io(ravel_db *db)
{
    const char *why = "opened read-only";
    if (!db->write.wal)
        return rv_text_format("none (%s)", why);
    const char *io = rv_wal_io_mode(db->write.wal, &why);
    return rv_text_format("%s (%s)", io, why);
}

static char *properties_read_only_reason(ravel_db *db)
{
    if (db->options.read_only)
        return rv_text_format("opened with read_only=true");
    char why[RV_STOP_REASON_MAX];
    rv_stop_reason(&db->stop, why, sizeof why);
    return rv_text_format("%s", why);
}

static char *properties_options(ravel_db *db)
{
    return rv_options_describe(&db->options);
}

/* The bytes of every memtable of V. */
static size_t properties_mem_bytes(const struct rv_version *v)
{
    size_t bytes = rv_memtable_memory_usage(v->mem);
    for (int i = 0; i < v->n_imm; i++)
        bytes += rv_memtable_memory_usage(v->imm[i]);
    return bytes;
}

static char *properties_all_mem_size(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    char *s = rv_text_format("%zu", properties_mem_bytes(v));
    rv_version_unref(v);
    return s;
}

static char *properties_files_at_level(ravel_db *db, int level)
{
    struct rv_version *v = rv_db_ref_version(db);
    char *s = rv_text_format("%d", v->files->n[level]);
    rv_version_unref(v);
    return s;
}

static char *properties_levelstats(ravel_db *db)
{
    return rv_levelstats_text(db);
}

static char *properties_compaction_pending(ravel_db *db)
{
    return rv_text_format("%d", rv_db_compaction_pending(db));
}

static char *properties_running_compactions(ravel_db *db)
{
    return rv_text_format("%d", rv_db_running_compactions(db));
}

static char *properties_pending_bytes(ravel_db *db)
{
    return rv_text_format("%llu", (unsigned long long)
                             rv_db_pending_compaction_bytes(db));
}

static char *properties_delayed_rate(ravel_db *db)
{
    uint64_t rate = 0;
    rv_db_write_controller_state(db, &rate);
    return rv_text_format("%llu", (unsigned long long)rate);
}

static char *properties_write_stopped(ravel_db *db)
{
    uint64_t rate = 0;
    return rv_text_format("%d", rv_db_write_controller_state(db, &rate) ==
                                       RV_WC_STOP);
}

/* Entries in table files, plus one per sequence number above the newest
** file's (each entry written takes one, and what is not in a file is in
** a memtable): counts overwritten and deleted keys too, as RocksDB's
** estimate does. */
static char *properties_estimate_keys(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    uint64_t entries = rv_memtable_entries(v->mem);
    for (int i = 0; i < v->n_imm; i++)
        entries += rv_memtable_entries(v->imm[i]);
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < v->files->n[l]; i++)
            entries += v->files->level[l][i]->meta.entries;
    rv_version_unref(v);
    return rv_text_format("%llu", (unsigned long long)entries);
}

/* The user key of internal key IKEY (LEN bytes) made printable into BUF
** (SIZE bytes): bytes outside printable ASCII as \xNN, cut with "..."
** past 48 bytes. */
static void properties_key_text(char *buf, size_t size, const char *ikey,
                                size_t len)
{
    size_t ulen = len >= 8 ? len - 8 : 0, n = 0;
    for (size_t i = 0; i < ulen && i < 48 && n + 8 < size; i++) {
        unsigned char c = (unsigned char)ikey[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
            buf[n++] = (char)c;
        else
            n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
    }
    if (ulen > 48 && n + 4 < size)
        n += (size_t)snprintf(buf + n, size - n, "...");
    buf[n] = '\0';
}

/* One line per file of FS, in a new string. */
static char *properties_file_lines(const struct rv_files *fs)
{
    char *text = rv_text_format("%s", "");
    for (int l = 0; text && l < RV_NUM_LEVELS; l++) {
        for (int i = 0; text && i < fs->n[l]; i++) {
            const struct rv_file_meta *m = &fs->level[l][i]->meta;
            char lo[256], hi[256];
            properties_key_text(lo, sizeof lo, m->smallest, m->smallest_len);
            properties_key_text(hi, sizeof hi, m->largest, m->largest_len);
            char *line = rv_text_format(
                "%slevel %d: %06llu.sst %llu bytes, %llu entr%s, keys '%s' "
                ".. '%s', seq %llu .. %llu\n", text, l,
                (unsigned long long)m->number, (unsigned long long)m->size,
                (unsigned long long)m->entries, m->entries == 1 ? "y" : "ies",
                lo, hi,
                (unsigned long long)m->smallest_seq,
                (unsigned long long)m->largest_seq);
            free(text);
            text = line;
        }
    }
    return text;
}

static char *properties_sstables(ravel_db *db)
{
    struct rv_version *v = rv_db_ref_version(db);
    char *s = properties_file_lines(v->files);
    rv_version_unref(v);
    return s;
}

static char *properties_block_cache_usage(ravel_db *db)
{
    return rv_text_format("%zu", db->block_cache
                                        ? rv_cache_usage(db->block_cache)
                                        : (size_t)0);
}

static char *properties_background_errors(ravel_db *db)
{
    return rv_text_format("%llu", (unsigned long long)
                             atomic_load_explicit(&db->stats.bg_errors,
                                                  memory_order_relaxed));
}

static char *properties_write_ordering(ravel_db *db)
{
    return rv_text_format("%s", rv_write_ordering_name(
                                       rv_options_ordering(&db->options)));
}

/* Every property, in the order ravel.h lists them.  Each function returns
** malloc'd text, or NULL on OOM. */
static const struct properties_def {
    const char *name;
    char *(*text)(ravel_db *db);
} properties_table[] = {
    {"ravel.stats", properties_stats},
    {"ravel.last_sequence", properties_last_sequence},
    {"ravel.last_visible_sequence", properties_last_visible_sequence},
    {"ravel.num_immutable_mem_table", properties_num_immutable},
    {"ravel.cur_size_active_mem_table", properties_active_size},
    {"ravel.wal_io", properties_wal_io},
    {"ravel.read_only_reason", properties_read_only_reason},
    {"ravel.options", properties_options},
    /* no function: db_property reads the level from the name */
    {"ravel.num-files-at-level0", NULL},
    {"ravel.num-files-at-level1", NULL},
    {"ravel.num-files-at-level2", NULL},
    {"ravel.num-files-at-level3", NULL},
    {"ravel.num-files-at-level4", NULL},
    {"ravel.num-files-at-level5", NULL},
    {"ravel.num-files-at-level6", NULL},
    {"ravel.sstables", properties_sstables},
    {"ravel.estimate-num-keys", properties_estimate_keys},
    {"ravel.cur-size-all-mem-tables", properties_all_mem_size},
    {"ravel.block-cache-usage", properties_block_cache_usage},
    {"ravel.background-errors", properties_background_errors},
    {"ravel.write-ordering", properties_write_ordering},
    {"ravel.levelstats", properties_levelstats},
    {"ravel.compaction-pending", properties_compaction_pending},
    {"ravel.num-running-compactions", properties_running_compactions},
    {"ravel.estimate-pending-compaction-bytes", properties_pending_bytes},
    {"ravel.actual-delayed-write-rate", properties_delayed_rate},
    {"ravel.is-write-stopped", properties_write_stopped},
};

#define PROPERTIES_LEVEL_PREFIX "ravel.num-files-at-level"

/* ravel.num-files-at-levelN: N (NAME is one of the table's). */
static int properties_level_of(const char *name)
{
    return name[strlen(PROPERTIES_LEVEL_PREFIX)] - '0';
}

#define PROPERTIES_COUNT (sizeof properties_table / sizeof properties_table[0])

/* RAVEL_NOTFOUND for NAME, with the known names in the message (which
** must fit ravel_errmsg's 512 bytes: "ravel." is said once, and the
** per-level names once as "num-files-at-level0..6"). */
static int properties_unknown(const char *name)
{
    char known[1024];
    size_t n = 0;
    known[0] = '\0';
    for (size_t i = 0; i < PROPERTIES_COUNT && n < sizeof known; i++) {
        const char *p = properties_table[i].name + strlen("ravel.");
        int level = properties_table[i].text ? -1
                                             : properties_level_of(
                                                   properties_table[i].name);
        if (level > 0)
            continue;
        int w = snprintf(known + n, sizeof known - n, "%s%s%s", i ? ", " : "",
                         level == 0 ? &PROPERTIES_LEVEL_PREFIX[6] : p,
                         level == 0 ? "0..6" : "");
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return rv_error(RAVEL_NOTFOUND, "ravel_property: unknown property "
                    "'%.60s'; known: ravel.{%s}", name, known);
}

static int db_property(ravel_db *db, const char *name, char **text)
{
    if (!name || !text)
        return rv_error(RAVEL_INVALID, "ravel_property: %s is NULL",
                        !name ? "name" : "text");
    for (size_t i = 0; i < PROPERTIES_COUNT; i++) {
        if (strcmp(properties_table[i].name, name) != 0)
            continue;
        char *s = properties_table[i].text
                      ? properties_table[i].text(db)
                      : properties_files_at_level(db, properties_level_of(name));
        if (!s)
            return rv_error(RAVEL_NOMEM, "ravel_property: out of memory "
                            "writing %s", name);
        *text = s;
        return RAVEL_OK;
    }
    return properties_unknown(name);
}

int ravel_property(ravel_db *db, const char *name, char **text)
{
    int rc = rv_db_enter(db, "ravel_property");
    if (rc)
        return rc;
    rc = db_property(db, name, text);
    rv_db_leave(db);
    return rc;
}
