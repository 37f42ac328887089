/*
** properties.c -- ravel_property: text about a database for people and
** tools (ravel.stats, sequence numbers, memtables, the WAL path, why
** writes are refused, the options in force).
*/
#include "db/db.h"
#include "util/error.h"
#include "util/options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *db_format(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static char *db_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static char *db_stats_text(ravel_db *db)
{
    uint64_t groups = atomic_load_explicit(&db->queue.groups,
                                           memory_order_relaxed);
    uint64_t writers = atomic_load_explicit(&db->queue.writers,
                                            memory_order_relaxed);
    uint64_t max_group = atomic_load_explicit(&db->queue.max_group,
                                              memory_order_relaxed);
    struct rv_wal_stats ws;
    memset(&ws, 0, sizeof ws);
    const char *why = "opened read-only";
    int uring = 0;
    if (db->wal) {
        rv_wal_get_stats(db->wal, &ws);
        uring = rv_wal_uses_uring(db->wal, &why);
    }
    struct rv_version *v = rv_db_ref_version(db);
    size_t mem_bytes = rv_memtable_memory_usage(v->mem);
    int n_imm = v->n_imm;
    rv_version_unref(v);
    char *s = db_format(
        "write groups: %llu formed, %llu writers, mean size %.2f, max size "
        "%llu\n"
        "wal: io=%s%s%s, %llu bytes, %llu appends, %llu segments created\n"
        "fsync: %llu issued, %llu sync writers acknowledged, %.2f writers "
        "per fsync\n"
        "writes without wal: %llu\n"
        "memtables: active %zu bytes, %d immutable, %llu switches\n"
        "sequence: last %llu, visible %llu\n"
        "stall: 0 micros (no write controller yet)\n"
        "writes: %s\n",
        (unsigned long long)groups, (unsigned long long)writers,
        groups ? (double)writers / (double)groups : 0.0,
        (unsigned long long)max_group,
        uring ? "uring" : "sync", uring ? "" : " -- ", uring ? "" : why,
        (unsigned long long)ws.bytes, (unsigned long long)ws.appends,
        (unsigned long long)ws.segments, (unsigned long long)ws.fsyncs,
        (unsigned long long)ws.sync_acks,
        ws.fsyncs ? (double)ws.sync_acks / (double)ws.fsyncs : 0.0,
        (unsigned long long)atomic_load_explicit(&db->stat_nowal_writes,
                                                 memory_order_relaxed),
        mem_bytes, n_imm,
        (unsigned long long)atomic_load_explicit(&db->stat_memtable_switches,
                                                 memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&db->last_seq_stat,
                                                 memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&db->last_visible_seq,
                                                 memory_order_acquire),
        rv_stop_code(&db->stop)
            ? "refused (see ravel.read_only_reason)"
            : db->options.read_only ? "refused (opened read-only)"
                                    : "accepted");
    return s;
}

static char *db_property_text(ravel_db *db, const char *name)
{
    if (strcmp(name, "ravel.stats") == 0)
        return db_stats_text(db);
    if (strcmp(name, "ravel.last_sequence") == 0)
        return db_format("%llu", (unsigned long long)atomic_load_explicit(
                                     &db->last_seq_stat, memory_order_relaxed));
    if (strcmp(name, "ravel.last_visible_sequence") == 0)
        return db_format("%llu", (unsigned long long)atomic_load_explicit(
                                     &db->last_visible_seq,
                                     memory_order_acquire));
    if (strcmp(name, "ravel.num_immutable_mem_table") == 0 ||
        strcmp(name, "ravel.cur_size_active_mem_table") == 0) {
        struct rv_version *v = rv_db_ref_version(db);
        char *s = name[6] == 'n'
                      ? db_format("%d", v->n_imm)
                      : db_format("%zu", rv_memtable_memory_usage(v->mem));
        rv_version_unref(v);
        return s;
    }
    if (strcmp(name, "ravel.wal_io") == 0) {
        const char *why = "opened read-only";
        if (db->wal && rv_wal_uses_uring(db->wal, &why))
            return db_format("uring");
        return db_format("sync (%s)", why);
    }
    if (strcmp(name, "ravel.read_only_reason") == 0) {
        if (db->options.read_only)
            return db_format("opened with read_only=true");
        char why[RV_STOP_REASON_MAX];
        rv_stop_reason(&db->stop, why, sizeof why);
        return db_format("%s", why);
    }
    if (strcmp(name, "ravel.options") == 0)
        return rv_options_describe(&db->options);
    errno = ENOENT;
    return NULL;
}

static int db_property(ravel_db *db, const char *name, char **text)
{
    if (!name || !text)
        return rv_error(RAVEL_INVALID, "ravel_property: %s is NULL",
                        !name ? "name" : "text");
    errno = 0;
    char *s = db_property_text(db, name);
    if (!s && errno == ENOENT)
        return rv_error(RAVEL_NOTFOUND, "ravel_property: unknown property "
                        "'%s'", name);
    if (!s)
        return rv_error(RAVEL_NOMEM, "ravel_property: out of memory");
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
