/*
** db.c -- the database handle: open (directory, LOCK, recovery), close,
** the version of memtables that reads see, properties, the LOG file.
**
** Files in a database directory:
**   IDENTITY            "ravel-db 1\n": marks the directory as a database
**   LOCK                held with an OFD lock while open (lockfile.c)
**   LOG                 human-readable events: opens, recovery, fallbacks,
**                       I/O failures
**   wal-NNNNNNNN.log    WAL segments (wal_format.h); each open starts a new
**                       one, and so does each memtable switch
*/
#include "db/batch.h"
#include "util/file.h"
#include "db/db.h"
#include "util/error.h"
#include "util/lockfile.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DB_IDENTITY "ravel-db 1\n"

const char *ravel_libversion(void)
{
    return RAVEL_VERSION;
}

int ravel_libversion_number(void)
{
    return RAVEL_VERSION_NUMBER;
}

void ravel_free(void *p)
{
    free(p);
}

int rv_db_check(ravel_db *db, const char *fn)
{
    if (!db)
        return rv_error(RAVEL_INVALID, "%s: database handle is NULL", fn);
    if (db->magic == RV_DB_DEAD)
        return rv_error(RAVEL_INVALID, "%s: database handle is closed", fn);
    if (db->magic != RV_DB_MAGIC)
        return rv_error(RAVEL_INVALID, "%s: not a database handle", fn);
    return RAVEL_OK;
}

/* ----------------------------------------------------------------- LOG */

void rv_db_log(ravel_db *db, const char *fmt, ...)
{
    if (db->log_fd < 0)
        return;
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%06ldZ ",
                  ts.tv_nsec / 1000);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = m < 0 ? n : n + m;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* The LOG is informational: a failed write is not an error. */
    ssize_t ignored = write(db->log_fd, line, (size_t)n);
    RV_UNUSED(ignored);
}

static void db_open_log(ravel_db *db)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/LOG", db->dir);
    int flags = O_WRONLY | O_APPEND | O_CREAT;
    db->log_fd = db->options.read_only ? -1 : rv_open(path, flags, 0644);
}

/* ------------------------------------------------------------ versions */

static struct rv_version *db_version_new(rv_memtable *mem, int n_imm)
{
    struct rv_version *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->imm = calloc((size_t)n_imm + 1, sizeof *v->imm);
    v->imm_wal = calloc((size_t)n_imm + 1, sizeof *v->imm_wal);
    if (!v->imm || !v->imm_wal) {
        free(v->imm);
        free(v->imm_wal);
        free(v);
        return NULL;
    }
    atomic_init(&v->refs, 1);
    rv_memtable_ref(mem);
    v->mem = mem;
    v->n_imm = n_imm;
    return v;
}

void rv_version_unref(struct rv_version *v)
{
    /* acq_rel: the last owner must see all uses before freeing. */
    if (atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) != 1)
        return;
    rv_memtable_unref(v->mem);
    for (int i = 0; i < v->n_imm; i++)
        rv_memtable_unref(v->imm[i]);
    free(v->imm);
    free(v->imm_wal);
    free(v);
}

struct rv_version *rv_db_ref_version(ravel_db *db)
{
    pthread_mutex_lock(&db->mu);
    struct rv_version *v = db->current;
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&db->mu);
    return v;
}

int rv_db_install_memtable(ravel_db *db, rv_memtable *mem,
                           uint64_t wal_segment)
{
    pthread_mutex_lock(&db->mu);
    struct rv_version *old = db->current;
    struct rv_version *v = db_version_new(mem, old->n_imm + 1);
    if (!v) {
        pthread_mutex_unlock(&db->mu);
        return rv_error(RAVEL_NOMEM, "out of memory switching memtables");
    }
    rv_memtable_ref(old->mem);
    v->imm[0] = old->mem;
    v->imm_wal[0] = db->mem_wal_segment;
    for (int i = 0; i < old->n_imm; i++) {
        rv_memtable_ref(old->imm[i]);
        v->imm[i + 1] = old->imm[i];
        v->imm_wal[i + 1] = old->imm_wal[i];
    }
    rv_memtable *old_mem = db->mem;
    rv_memtable_ref(mem); /* db->mem owns a reference of its own */
    db->current = v;
    db->mem = mem;
    db->mem_wal_segment = wal_segment;
    pthread_mutex_unlock(&db->mu);
    rv_memtable_unref(old_mem);
    rv_version_unref(old);
    return RAVEL_OK;
}

void rv_db_stop_writes(ravel_db *db, const char *reason)
{
    pthread_mutex_lock(&db->mu);
    int first = !atomic_load_explicit(&db->read_only, memory_order_relaxed);
    if (first) {
        snprintf(db->read_only_reason, sizeof db->read_only_reason, "%s",
                 reason);
        /* release: a writer that sees the flag reads the reason under mu
        ** anyway; the flag itself is the fast-path check. */
        atomic_store_explicit(&db->read_only, RAVEL_READONLY,
                              memory_order_release);
    }
    pthread_mutex_unlock(&db->mu);
    if (first)
        rv_db_log(db, "writes stopped until reopen: %s", reason);
}

/* ------------------------------------------------------------ open */

static int db_path_exists(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static int db_write_identity(ravel_db *db)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/IDENTITY", db->dir);
    int fd = rv_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create %s", path);
    int rc = RAVEL_OK;
    size_t len = strlen(DB_IDENTITY);
    if (write(fd, DB_IDENTITY, len) != (ssize_t)len)
        rc = rv_error_errno(RAVEL_IOERR, errno ? errno : EIO, "write %s", path);
    else if (fsync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fsync %s", path);
    close(fd);
    return rc;
}

static int db_check_identity(ravel_db *db)
{
    char path[4096], buf[64];
    snprintf(path, sizeof path, "%s/IDENTITY", db->dir);
    int fd = rv_open(path, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", path);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return rv_error_errno(RAVEL_IOERR, err, "read %s", path);
    buf[n] = 0;
    if (strcmp(buf, DB_IDENTITY) != 0)
        return rv_error(RAVEL_CORRUPT, "%s: not a ravel database identity "
                        "(expected \"ravel-db 1\")", path);
    return RAVEL_OK;
}

/* Creates the directory and IDENTITY if asked, or checks they exist. */
static int db_prepare_dir(ravel_db *db)
{
    const struct ravel_options *o = &db->options;
    struct stat st;
    if (stat(db->dir, &st) != 0) {
        if (errno != ENOENT)
            return rv_error_errno(RAVEL_IOERR, errno, "stat %s", db->dir);
        if (!o->create_if_missing || o->read_only)
            return rv_error(RAVEL_INVALID, "database %s does not exist "
                            "(create_if_missing is false)", db->dir);
        if (mkdir(db->dir, 0755) != 0 && errno != EEXIST)
            return rv_error_errno(RAVEL_IOERR, errno, "mkdir %s", db->dir);
    } else if (!S_ISDIR(st.st_mode)) {
        return rv_error(RAVEL_INVALID, "%s is not a directory", db->dir);
    }
    if (db_path_exists(db->dir, "IDENTITY")) {
        if (o->error_if_exists)
            return rv_error(RAVEL_INVALID, "database %s already exists "
                            "(error_if_exists is true)", db->dir);
        return RAVEL_OK;
    }
    if (!o->create_if_missing || o->read_only)
        return rv_error(RAVEL_INVALID, "%s holds no ravel database (no "
                        "IDENTITY file; create_if_missing is false)", db->dir);
    return RAVEL_OK;
}

static int db_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Lists the WAL segments of the directory in ascending order. */
static int db_list_segments(ravel_db *db, uint64_t **out, int *count)
{
    DIR *d = opendir(db->dir);
    if (!d)
        return rv_error_errno(RAVEL_IOERR, errno, "opendir %s", db->dir);
    uint64_t *numbers = NULL;
    int n = 0, cap = 0, rc = RAVEL_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t number;
        if (!rv_wal_parse_segment_name(e->d_name, &number))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *p = realloc(numbers, (size_t)cap * sizeof *p);
            if (!p) {
                rc = rv_error(RAVEL_NOMEM, "out of memory listing %s", db->dir);
                break;
            }
            numbers = p;
        }
        numbers[n++] = number;
    }
    closedir(d);
    if (rc) {
        free(numbers);
        return rc;
    }
    if (n > 1)
        qsort(numbers, (size_t)n, sizeof *numbers, db_cmp_u64);
    *out = numbers;
    *count = n;
    return RAVEL_OK;
}

static int db_replay_op(void *ctx, uint64_t seq, int type, const char *key,
                        size_t klen, const char *val, size_t vlen)
{
    return rv_memtable_add(ctx, seq, type, key, klen, val, vlen);
}

static int db_replay_record(void *ctx, const char *rep, size_t len)
{
    /* wal_reader.c validated the rep before handing it over */
    return rv_batch_apply(rep, len, rv_batch_rep_sequence(rep),
                            db_replay_op, ctx);
}

/* Replays every WAL segment into the active memtable. */
static int db_recover(ravel_db *db)
{
    uint64_t *numbers = NULL;
    int n = 0;
    int rc = db_list_segments(db, &numbers, &n);
    if (rc)
        return rc;
    struct rv_wal_replay_result r;
    memset(&r, 0, sizeof r);
    if (n > 0)
        rc = rv_wal_replay(db->dir, numbers, n, db->options.wal_recovery_mode,
                           db->options.read_only, db_replay_record, db->mem,
                           &r);
    uint64_t first = n > 0 ? numbers[0] : 0;
    free(numbers);
    if (rc) {
        rv_db_log(db, "recovery failed: %s", rv_errmsg_get());
        return rc;
    }
    db->last_seq = r.max_sequence;
    db->next_segment = (r.last_segment > first ? r.last_segment : first) + 1;
    db->mem_wal_segment = first ? first : db->next_segment;
    rv_db_log(db, "recovered %d WAL segment(s): %llu records replayed, "
              "%llu dropped, %llu tail bytes truncated, last sequence %llu",
              n, (unsigned long long)r.records,
              (unsigned long long)r.records_dropped,
              (unsigned long long)r.bytes_truncated,
              (unsigned long long)r.max_sequence);
    return RAVEL_OK;
}

static void db_free(ravel_db *db)
{
    if (db->current)
        rv_version_unref(db->current);
    if (db->mem)
        rv_memtable_unref(db->mem);
    rv_lockfile_release(db->lock_fd);
    if (db->log_fd >= 0)
        close(db->log_fd);
    rv_write_queue_destroy(&db->queue);
    pthread_mutex_destroy(&db->mu);
    db->magic = RV_DB_DEAD;
    free(db->dir);
    free(db);
}

static ravel_db *db_alloc(const char *dir, const ravel_options *opts)
{
    ravel_db *db = calloc(1, sizeof *db);
    if (!db)
        return NULL;
    db->dir = strdup(dir);
    db->mem = rv_memtable_new(opts ? opts->write_buffer_size : 0);
    if (!db->dir || !db->mem) {
        if (db->mem)
            rv_memtable_unref(db->mem);
        free(db->dir);
        free(db);
        return NULL;
    }
    if (opts)
        db->options = *opts;
    else
        rv_options_init_defaults(&db->options);
    db->magic = RV_DB_MAGIC;
    db->lock_fd = -1;
    db->log_fd = -1;
    pthread_mutex_init(&db->mu, NULL);
    rv_write_queue_init(&db->queue);
    return db;
}

static void db_log_open(ravel_db *db)
{
    const char *why = "";
    int uring = db->wal && rv_wal_uses_uring(db->wal, &why);
    rv_db_log(db, "opened %s%s; WAL I/O: %s%s%s", db->dir,
              db->options.read_only ? " read-only" : "",
              db->wal ? (uring ? "io_uring" : "pwrite+fdatasync") : "none",
              uring || !db->wal ? "" : " -- ", uring || !db->wal ? "" : why);
}

int ravel_open(const char *dir, const ravel_options *opts, ravel_db **out)
{
    if (!dir || !*dir || !out)
        return rv_error(RAVEL_INVALID, "ravel_open: %s",
                        !out ? "out is NULL" : "directory name is empty or "
                        "NULL");
    ravel_db *db = db_alloc(dir, opts);
    if (!db)
        return rv_error(RAVEL_NOMEM, "out of memory opening %s", dir);

    int rc = db_prepare_dir(db);
    if (rc == RAVEL_OK)
        rc = rv_lockfile_acquire(db->dir, &db->lock_fd);
    if (rc)
        goto out;
    if (!db_path_exists(db->dir, "IDENTITY"))
        rc = db_write_identity(db);
    else
        rc = db_check_identity(db);
    if (rc)
        goto out;
    db_open_log(db);
    rc = db_recover(db);
    if (rc == RAVEL_OK && !db->options.read_only)
        rc = rv_wal_open(db->dir, db->next_segment++, &db->options, &db->wal);
    if (rc)
        goto out;
    db->current = db_version_new(db->mem, 0);
    if (!db->current) {
        rc = rv_error(RAVEL_NOMEM, "out of memory opening %s", dir);
        goto out;
    }
    atomic_store_explicit(&db->last_seq_stat, db->last_seq,
                          memory_order_relaxed);
    atomic_store_explicit(&db->last_visible_seq, db->last_seq,
                          memory_order_relaxed);
    db_log_open(db);
    *out = db;
out:
    if (rc) {
        if (db->wal)
            rv_wal_close(db->wal);
        db_free(db);
    }
    return rc;
}

int ravel_close(ravel_db *db)
{
    if (!db)
        return RAVEL_OK;
    int rc = rv_db_check(db, "ravel_close");
    if (rc)
        return rc;
    pthread_mutex_lock(&db->mu);
    int snaps = db->live_snapshots, iters = db->live_iterators;
    pthread_mutex_unlock(&db->mu);
    if (snaps || iters)
        return rv_error(RAVEL_INVALID, "ravel_close: %d snapshot(s) and %d "
                        "iterator(s) are still open; release them first",
                        snaps, iters);

    /* Wait for the write in progress, if any: queue up and lead nothing. */
    struct rv_writer closer;
    memset(&closer, 0, sizeof closer);
    rv_write_queue_join(&db->queue, &closer);

    rc = rv_wal_close(db->wal);
    rv_db_log(db, "closed%s%s", rc ? ": " : "", rc ? rv_errmsg_get() : "");
    db_free(db);
    return rc;
}

/* ----------------------------------------------------------- properties */

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
        atomic_load_explicit(&db->read_only, memory_order_acquire)
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
        pthread_mutex_lock(&db->mu);
        char *s = db_format("%s", db->read_only_reason);
        pthread_mutex_unlock(&db->mu);
        return s;
    }
    if (strcmp(name, "ravel.options") == 0)
        return rv_options_describe(&db->options);
    errno = ENOENT;
    return NULL;
}

int ravel_property(ravel_db *db, const char *name, char **text)
{
    int rc = rv_db_check(db, "ravel_property");
    if (rc)
        return rc;
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
