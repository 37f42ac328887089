/*
** properties.c -- ravel_property: text about a database for people and
** tools (ravel.stats, sequence numbers, memtables, the WAL path, why
** writes are refused, the options in force).
**
** One table (properties_table) names every property, its aliases (RocksDB's
** spelling, an older ravel spelling) and the function that writes its
** text: the lookup, the list of known names in the message for an unknown
** name and rv_property_info (the shell's help, completion and manual page)
** all read it, so a property added to the table is found and listed at
** once.  Update ravel.h's list with it (tests/docs checks they agree).
*/
#include "db/db.h"
#include "wal/wal_archive.h"
#include "util/error.h"
#include "base/options.h"
#include "util/text.h"
#include "db/properties.h"

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
    /* WAL retention (wal/wal_archive.h): what archive/ holds, said only
    ** where it is in use */
    struct rv_wal_archive_stats archive;
    char archived[96] = "";
    if (rv_wal_archive_stat(db->dir, &archive) == RAVEL_OK &&
        (archive.segments || rv_db_wal_retained(db)))
        snprintf(archived, sizeof archived, "; in archive/ for the change "
                 "feed: %llu, %llu bytes",
                 (unsigned long long)archive.segments,
                 (unsigned long long)archive.bytes);
    char *s = rv_text_format(
        "flush: %llu flushes, %llu bytes, %llu entries written, %llu "
        "versions dropped, %.3f s total, %.3f s mean\n"
        "stall: %llu write groups waited for a flush, %.3f s total\n"
        "tables: %d files, %llu bytes, %llu lookups saved by filters\n"
        "wal segments deleted: %llu%s\n"
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
        archived,
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

/* TEXT (freed) cut to lines of at most 80 columns, or NULL on OOM: the
** reason the WAL's I/O path was chosen alone can take 300. */
static char *properties_wrapped(char *text)
{
    char *wrapped = text ? rv_text_wrap(text, 80) : NULL;
    free(text);
    return wrapped;
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
    char why[RV_WAL_IO_WHY_MAX] = "opened read-only";
    const char *io = "none";
    if (db->write.wal) {
        rv_wal_get_stats(db->write.wal, &ws);
        io = rv_wal_io_mode(db->write.wal, why, sizeof why);
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
        "wal: io=%s, %llu bytes, %llu appends, %llu segments created\n"
        "  why io=%s: %s\n"
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
        io, (unsigned long long)ws.bytes, (unsigned long long)ws.appends,
        (unsigned long long)ws.segments, io, why, wal_buffer, wal_direct,
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
            ? "refused (see ravel.read-only-reason)"
            : db->options.read_only ? "refused (opened read-only)"
                                    : "accepted", flush);
    free(flush);
    return properties_wrapped(s);
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
    if (!db->write.wal)
        return rv_text_format("none (opened read-only)");
    char why[RV_WAL_IO_WHY_MAX];
    const char *io = rv_wal_io_mode(db->write.wal, why, sizeof why);
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

static char *properties_prepared(ravel_db *db)
{
    return rv_prepared_names(&db->prepared);
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

/* Every property, in the order ravel.h lists them.  NAME is ravel's,
** spelled as RocksDB spells its properties (words joined by '-'), with
** RocksDB's own suffix where RocksDB has the concept; DOC says what it
** is in a phrase (ravel.h says more, the shell's help prints DOC); ROCKSDB is
** RocksDB's name, accepted where its meaning is the same; DEPRECATED is
** an older spelling programs may still use, accepted for ever.  TEXT
** returns malloc'd text, or NULL on OOM; a per-level property passes its
** level as ARG (LEVEL_TEXT), the others ignore it. */
#define PROPERTIES_PLAIN(name, doc, rocksdb, deprecated, fn) \
    {name, doc, rocksdb, deprecated, fn, NULL, -1}
#define PROPERTIES_LEVEL(n) \
    {"ravel.num-files-at-level" #n, "table files at level " #n, \
     "rocksdb.num-files-at-level" #n, NULL, NULL, properties_files_at_level, n}
static const struct properties_def {
    const char *name;
    const char *doc;
    const char *rocksdb;
    const char *deprecated;
    char *(*text)(ravel_db *db);
    char *(*level_text)(ravel_db *db, int level);
    int arg;
} properties_table[] = {
    PROPERTIES_PLAIN("ravel.stats",
                     "write-path, flush, compaction and stall statistics",
                     "rocksdb.stats", NULL, properties_stats),
    PROPERTIES_PLAIN("ravel.last-sequence",
                     "last sequence number assigned",
                     NULL, "ravel.last_sequence", properties_last_sequence),
    PROPERTIES_PLAIN("ravel.last-visible-sequence",
                     "last sequence number visible to reads",
                     NULL, "ravel.last_visible_sequence",
                     properties_last_visible_sequence),
    PROPERTIES_PLAIN("ravel.num-immutable-mem-table",
                     "memtables switched out, still in memory",
                     "rocksdb.num-immutable-mem-table",
                     "ravel.num_immutable_mem_table", properties_num_immutable),
    PROPERTIES_PLAIN("ravel.cur-size-active-mem-table",
                     "bytes in the active memtable",
                     "rocksdb.cur-size-active-mem-table",
                     "ravel.cur_size_active_mem_table", properties_active_size),
    PROPERTIES_PLAIN("ravel.wal-io",
                     "the WAL I/O path in use (sync, uring, direct) and why",
                     NULL, "ravel.wal_io", properties_wal_io),
    PROPERTIES_PLAIN("ravel.read-only-reason",
                     "why writes are refused (\"\" if they are not)",
                     NULL, "ravel.read_only_reason",
                     properties_read_only_reason),
    PROPERTIES_PLAIN("ravel.options",
                     "the options in force, \"name=value\" lines",
                     NULL, NULL, properties_options),
    PROPERTIES_LEVEL(0),
    PROPERTIES_LEVEL(1),
    PROPERTIES_LEVEL(2),
    PROPERTIES_LEVEL(3),
    PROPERTIES_LEVEL(4),
    PROPERTIES_LEVEL(5),
    PROPERTIES_LEVEL(6),
    PROPERTIES_PLAIN("ravel.sstables",
                     "one line per table file (the shell's files)",
                     "rocksdb.sstables", NULL, properties_sstables),
    PROPERTIES_PLAIN("ravel.estimate-num-keys",
                     "entries in files and memtables (all versions)",
                     "rocksdb.estimate-num-keys", NULL,
                     properties_estimate_keys),
    PROPERTIES_PLAIN("ravel.cur-size-all-mem-tables",
                     "bytes of every memtable in memory",
                     "rocksdb.cur-size-all-mem-tables", NULL,
                     properties_all_mem_size),
    PROPERTIES_PLAIN("ravel.block-cache-usage",
                     "bytes held by the block cache",
                     "rocksdb.block-cache-usage", NULL,
                     properties_block_cache_usage),
    PROPERTIES_PLAIN("ravel.background-errors",
                     "background flushes and compactions that failed",
                     "rocksdb.background-errors", NULL,
                     properties_background_errors),
    PROPERTIES_PLAIN("ravel.write-ordering",
                     "the write ordering mode in force",
                     NULL, NULL, properties_write_ordering),
    PROPERTIES_PLAIN("ravel.levelstats",
                     "per level: files, bytes, target, score",
                     "rocksdb.levelstats", NULL, properties_levelstats),
    PROPERTIES_PLAIN("ravel.compaction-pending",
                     "1 if a compaction is due, else 0",
                     "rocksdb.compaction-pending", NULL,
                     properties_compaction_pending),
    PROPERTIES_PLAIN("ravel.num-running-compactions",
                     "compactions running now",
                     "rocksdb.num-running-compactions", NULL,
                     properties_running_compactions),
    PROPERTIES_PLAIN("ravel.estimate-pending-compaction-bytes",
                     "bytes compaction must rewrite to bring every level "
                     "within its target",
                     "rocksdb.estimate-pending-compaction-bytes", NULL,
                     properties_pending_bytes),
    PROPERTIES_PLAIN("ravel.actual-delayed-write-rate",
                     "bytes/s writes are paced to now (0: not slowed down)",
                     "rocksdb.actual-delayed-write-rate", NULL,
                     properties_delayed_rate),
    PROPERTIES_PLAIN("ravel.is-write-stopped",
                     "1 if the write controller stops writes now, else 0",
                     "rocksdb.is-write-stopped", NULL,
                     properties_write_stopped),
    PROPERTIES_PLAIN("ravel.prepared-transactions",
                     "names of the prepared transactions not yet committed "
                     "or rolled back, one per line",
                     NULL, NULL, properties_prepared),
    PROPERTIES_PLAIN("ravel.reader-lag",
                     "read_only: the sequence read up to and how long ago "
                     "the last catch-up succeeded",
                     NULL, NULL, rv_reader_lag_property),
};

#define PROPERTIES_COUNT (sizeof properties_table / sizeof properties_table[0])

int rv_property_info(size_t i, struct rv_property_info *info)
{
    if (i >= PROPERTIES_COUNT)
        return 0;
    info->name = properties_table[i].name;
    info->doc = properties_table[i].doc;
    info->level = properties_table[i].level_text ? properties_table[i].arg
                                                 : -1;
    info->rocksdb = properties_table[i].rocksdb;
    info->deprecated = properties_table[i].deprecated;
    return 1;
}

/* The table's row NAME is spelled by (its name or an alias), or NULL. */
static const struct properties_def *properties_find(const char *name)
{
    for (size_t i = 0; i < PROPERTIES_COUNT; i++) {
        const struct properties_def *d = &properties_table[i];
        if (strcmp(d->name, name) == 0 ||
            (d->rocksdb && strcmp(d->rocksdb, name) == 0) ||
            (d->deprecated && strcmp(d->deprecated, name) == 0))
            return d;
    }
    return NULL;
}

/* RAVEL_NOTFOUND for NAME, with the known names in the message (which
** must fit ravel_errmsg's 512 bytes: "ravel." is said once, the names
** are separated by bare commas, and the
** per-level names once as "num-files-at-level0..6"; the aliases are not
** listed, ravel.h lists them). */
static int properties_unknown(const char *name)
{
    char known[1024];
    size_t n = 0;
    known[0] = '\0';
    for (size_t i = 0; i < PROPERTIES_COUNT && n < sizeof known; i++) {
        const struct properties_def *d = &properties_table[i];
        if (d->level_text && d->arg > 0)
            continue;
        int w = snprintf(known + n, sizeof known - n, "%s%s%s", i ? "," : "",
                         d->name + strlen("ravel."),
                         d->level_text ? "..6" : "");
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return rv_error(RAVEL_NOTFOUND, "ravel_property: unknown property "
                    "'%.32s'; known: ravel.{%s}", name, known);
}

static int db_property(ravel_db *db, const char *name, char **text)
{
    if (!name || !text)
        return rv_error(RAVEL_INVALID, "ravel_property: %s is NULL",
                        !name ? "name" : "text");
    const struct properties_def *d = properties_find(name);
    if (!d)
        return properties_unknown(name);
    char *s = d->level_text ? d->level_text(db, d->arg) : d->text(db);
    if (!s)
        return rv_error(RAVEL_NOMEM, "ravel_property: out of memory "
                        "writing %s", d->name);
    *text = s;
    return RAVEL_OK;
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
