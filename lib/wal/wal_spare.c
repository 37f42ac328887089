/*
** wal_spare.c -- prepares the next WAL segment in the background and
** recycles flushed ones (see wal_spare.h for what a spare is and why).
**
** Owns: the preparing thread, the one spare prepared ahead, the pool of
** flushed segments kept for reuse.  Does not own: writing into a spare
** (wal_direct.c) or what replay makes of it (wal_reader.c).
**
** Preparing segment N from a new file: create it (O_EXCL), write SIZE
** bytes of zeros with direct writes, fdatasync, fsync the directory.
** From a pooled file: zero its first block, fdatasync, rename it to N,
** fsync the directory.  Either way the sync journal (test builds) is told
** that none of its bytes are data yet, so a simulated power loss treats
** everything a later write puts there as unsynced until a sync covers it.
*/
#include "wal/wal_spare.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/mutex.h"
#include "util/sync_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPARE_ZERO_CHUNK (1u << 20)
#define SPARE_POOL_MAX 64
#define SPARE_MSG_MAX 512

struct rv_wal_spares {
    char *dir;
    uint64_t size;             /* bytes of zeros in a spare (0: none) */
    uint32_t block;
    int recycle;               /* pool capacity (recycle_log_file_num) */

    rv_mutex mu;               /* everything below */
    pthread_cond_t cv;         /* the thread's work, and its results */
    pthread_t thread;
    int stop;
    _Atomic int abort;         /* closing, or a drop: stop zeroing at once */
    uint64_t want;             /* number to prepare next, 0: none */
    uint64_t busy;             /* number being prepared now, 0: none */
    uint64_t ready;            /* number of the prepared spare, 0: none */
    int ready_fd;
    int err;                   /* the last preparation's failure ... */
    uint64_t err_number;       /* ... for this number ... */
    char msg[SPARE_MSG_MAX];   /* ... and its message */
    uint64_t pool[SPARE_POOL_MAX]; /* flushed segments kept, oldest first */
    int npool;

    uint64_t stat_created, stat_recycled, stat_waits;
};

/* ------------------------------------------------------------ preparing */

/* Writes LEN bytes of zeros at OFF to the O_DIRECT file FD, in chunks. */
static int spare_write_zeros(struct rv_wal_spares *sp, int fd, uint64_t off,
                             uint64_t len, const char *path)
{
    void *zeros = NULL;
    size_t chunk = SPARE_ZERO_CHUNK;
    if (posix_memalign(&zeros, sp->block < 4096 ? 4096 : sp->block, chunk))
        return rv_error(RAVEL_NOMEM, "out of memory zeroing %s", path);
    memset(zeros, 0, chunk);
    int rc = RAVEL_OK;
    while (len > 0 && rc == RAVEL_OK) {
        /* relaxed: a hint; the spare is deleted if zeroing stops */
        if (atomic_load_explicit(&sp->abort, memory_order_relaxed)) {
            rc = rv_error(RAVEL_IOERR, "%s: not zeroed, the WAL is closing",
                          path);
            break;
        }
        size_t n = len < chunk ? (size_t)len : chunk;
        ssize_t w = pwrite(fd, zeros, n, (off_t)off);
        if (w != (ssize_t)n)
            rc = rv_error_errno(RAVEL_IOERR, w < 0 ? errno : EIO,
                                "zeroing %s at byte offset %llu", path,
                                (unsigned long long)off);
        off += n;
        len -= n;
    }
    free(zeros);
    return rc;
}

/* A new file for segment NUMBER, zeroed, durable, its entry durable. */
static int spare_create(struct rv_wal_spares *sp, uint64_t number, int *out)
{
    char path[RV_PATH_MAX];
    int rc = rv_wal_segment_path(path, sp->dir, number);
    if (rc)
        return rc;
    int fd = rv_open(path, O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0644);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create the spare WAL "
                              "segment %s (O_DIRECT)", path);
    rc = spare_write_zeros(sp, fd, 0, sp->size, path);
    if (rc == RAVEL_OK && fdatasync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", path);
    if (rc == RAVEL_OK) {
        rv_sync_journal_file(fd, 0); /* zeros: no data of the log yet */
        rc = rv_sync_dir(sp->dir);
    }
    if (rc != RAVEL_OK) {
        close(fd);
        unlink(path);
        return rc;
    }
    *out = fd;
    return RAVEL_OK;
}

/* Segment NUMBER made from the pooled file of segment OLD: first block
** zeroed and durable, then renamed, then the directory fsynced.  Returns
** RAVEL_NOTFOUND (nothing changed but OLD deleted) when the file is too
** small to be worth it, or RAVEL_NOTFOUND when it does not exist. */
static int spare_reuse(struct rv_wal_spares *sp, uint64_t old,
                       uint64_t number, int *out)
{
    char from[RV_PATH_MAX], to[RV_PATH_MAX];
    int rc = rv_wal_segment_path(from, sp->dir, old);
    if (rc == RAVEL_OK)
        rc = rv_wal_segment_path(to, sp->dir, number);
    if (rc)
        return rc;
    int fd = rv_open(from, O_RDWR | O_DIRECT, 0);
    if (fd < 0 && errno == ENOENT)
        return RAVEL_NOTFOUND; /* gone (never created): nothing to reuse */
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s to recycle it",
                              from);
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sp->size ||
        (uint64_t)st.st_size < sp->block) {
        close(fd);
        unlink(from); /* flushed: nobody needs it */
        return RAVEL_NOTFOUND;
    }
    rc = spare_write_zeros(sp, fd, 0, sp->block, from);
    if (rc == RAVEL_OK && fdatasync(fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "fdatasync %s", from);
    if (rc == RAVEL_OK) {
        rv_sync_journal_file(fd, 0);
        if (rename(from, to) != 0)
            rc = rv_error_errno(RAVEL_IOERR, errno, "rename %s to %s", from,
                                to);
    }
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(sp->dir);
    if (rc != RAVEL_OK) {
        close(fd);
        return rc;
    }
    *out = fd;
    return RAVEL_OK;
}

/* Prepares segment NUMBER's spare, from the pool when it has a file.
** Called without mu; *RECYCLED says which way it was made. */
static int spare_prepare(struct rv_wal_spares *sp, uint64_t number, int *fd,
                         int *recycled)
{
    for (;;) {
        rv_mutex_lock(&sp->mu);
        uint64_t old = 0;
        if (sp->npool > 0) {
            old = sp->pool[0];
            memmove(sp->pool, sp->pool + 1,
                    sizeof sp->pool[0] * (size_t)--sp->npool);
        }
        rv_mutex_unlock(&sp->mu);
        *recycled = old != 0;
        if (!old)
            return spare_create(sp, number, fd);
        int rc = spare_reuse(sp, old, number, fd);
        if (rc != RAVEL_NOTFOUND)
            return rc;
    }
}

/* Records the outcome of preparing NUMBER.  mu held. */
static void spare_finish_locked(struct rv_wal_spares *sp, uint64_t number,
                                int rc, int fd, int recycled)
    RV_REQUIRES(sp->mu);
static void spare_finish_locked(struct rv_wal_spares *sp, uint64_t number,
                                int rc, int fd, int recycled)
{
    sp->busy = 0;
    if (rc == RAVEL_OK) {
        sp->ready = number;
        sp->ready_fd = fd;
        if (recycled)
            sp->stat_recycled++;
        else
            sp->stat_created++;
    } else {
        sp->err = rc;
        sp->err_number = number;
        snprintf(sp->msg, sizeof sp->msg, "%s", rv_errmsg_get());
    }
    pthread_cond_broadcast(&sp->cv);
}

static void *spare_thread_main(void *arg)
{
    struct rv_wal_spares *sp = arg;
    rv_mutex_lock(&sp->mu);
    for (;;) {
        while (!sp->stop && (!sp->want || sp->ready))
            rv_cond_wait(&sp->cv, &sp->mu);
        if (sp->stop)
            break;
        uint64_t number = sp->want;
        sp->want = 0;
        sp->busy = number;
        rv_mutex_unlock(&sp->mu);
        int fd = -1, recycled = 0;
        int rc = spare_prepare(sp, number, &fd, &recycled);
        rv_mutex_lock(&sp->mu);
        spare_finish_locked(sp, number, rc, fd, recycled);
    }
    rv_mutex_unlock(&sp->mu);
    return NULL;
}

/* Deletes the prepared spare nobody took.  mu held. */
static void spare_discard_ready_locked(struct rv_wal_spares *sp)
    RV_REQUIRES(sp->mu);
static void spare_discard_ready_locked(struct rv_wal_spares *sp)
{
    if (!sp->ready)
        return;
    char path[RV_PATH_MAX];
    close(sp->ready_fd);
    if (rv_wal_segment_path(path, sp->dir, sp->ready) == RAVEL_OK &&
        unlink(path) == 0)
        (void)rv_sync_dir(sp->dir); /* best effort: replay ignores spares */
    sp->ready = 0;
    sp->ready_fd = -1;
}

/* -------------------------------------------------------------- the API */

int rv_wal_spares_new(const char *dir, uint64_t size, uint32_t block,
                      int recycle, struct rv_wal_spares **out)
{
    struct rv_wal_spares *sp = calloc(1, sizeof *sp);
    if (!sp || !(sp->dir = strdup(dir))) {
        free(sp);
        return rv_error(RAVEL_NOMEM, "out of memory for the WAL's spares");
    }
    sp->size = (size + block - 1) / block * block;
    sp->block = block;
    sp->recycle = recycle < SPARE_POOL_MAX ? recycle : SPARE_POOL_MAX;
    sp->ready_fd = -1;
    rv_mutex_init(&sp->mu);
    pthread_cond_init(&sp->cv, NULL);
    int r = pthread_create(&sp->thread, NULL, spare_thread_main, sp);
    if (r != 0) {
        pthread_cond_destroy(&sp->cv);
        rv_mutex_destroy(&sp->mu);
        free(sp->dir);
        free(sp);
        return rv_error_errno(RAVEL_IOERR, r, "cannot start the thread that "
                              "prepares WAL segments");
    }
    *out = sp;
    return RAVEL_OK;
}

void rv_wal_spares_free(struct rv_wal_spares *sp)
{
    if (!sp)
        return;
    rv_mutex_lock(&sp->mu);
    sp->stop = 1;
    atomic_store_explicit(&sp->abort, 1, memory_order_relaxed);
    pthread_cond_broadcast(&sp->cv);
    rv_mutex_unlock(&sp->mu);
    pthread_join(sp->thread, NULL);
    /* the thread is gone: the lock is uncontended, taken for the rule */
    rv_mutex_lock(&sp->mu);
    spare_discard_ready_locked(sp);
    rv_mutex_unlock(&sp->mu);
    pthread_cond_destroy(&sp->cv);
    rv_mutex_destroy(&sp->mu);
    free(sp->dir);
    free(sp);
}

void rv_wal_spares_request(struct rv_wal_spares *sp, uint64_t number)
{
    rv_mutex_lock(&sp->mu);
    if (sp->ready != number && sp->busy != number) {
        sp->want = number;
        pthread_cond_broadcast(&sp->cv);
    }
    rv_mutex_unlock(&sp->mu);
}

int rv_wal_spares_take(struct rv_wal_spares *sp, uint64_t number, int *fd)
{
    rv_mutex_lock(&sp->mu);
    if (sp->busy == number || sp->want == number) {
        sp->stat_waits++;
        while (sp->busy == number || sp->want == number)
            rv_cond_wait(&sp->cv, &sp->mu);
    }
    if (sp->ready == number) {
        *fd = sp->ready_fd;
        sp->ready = 0;
        sp->ready_fd = -1;
        rv_mutex_unlock(&sp->mu);
        return RAVEL_OK;
    }
    int rc = RAVEL_OK;
    if (sp->err && sp->err_number == number) {
        rc = rv_error(sp->err, "%s", sp->msg);
        sp->err = 0;
    }
    /* A spare for another number is of no use: a switch asks for them in
    ** order, so this happens only after a failure. */
    spare_discard_ready_locked(sp);
    rv_mutex_unlock(&sp->mu);
    if (rc != RAVEL_OK)
        return rc;
    int recycled;
    rc = spare_prepare(sp, number, fd, &recycled);
    rv_mutex_lock(&sp->mu);
    if (rc == RAVEL_OK && recycled)
        sp->stat_recycled++;
    else if (rc == RAVEL_OK)
        sp->stat_created++;
    rv_mutex_unlock(&sp->mu);
    return rc;
}

int rv_wal_spares_ready(struct rv_wal_spares *sp, uint64_t number)
{
    rv_mutex_lock(&sp->mu);
    int ready = sp->ready == number;
    rv_mutex_unlock(&sp->mu);
    return ready;
}

void rv_wal_spares_drop(struct rv_wal_spares *sp, uint64_t number)
{
    rv_mutex_lock(&sp->mu);
    if (sp->want == number)
        sp->want = 0;
    if (sp->busy == number) {
        /* relaxed: a hint; the preparation deletes its file and records
        ** a failure for NUMBER, cleared below */
        atomic_store_explicit(&sp->abort, 1, memory_order_relaxed);
        while (sp->busy == number)
            rv_cond_wait(&sp->cv, &sp->mu);
        atomic_store_explicit(&sp->abort, 0, memory_order_relaxed);
    }
    if (sp->err && sp->err_number == number)
        sp->err = 0;
    if (sp->ready == number)
        spare_discard_ready_locked(sp);
    rv_mutex_unlock(&sp->mu);
}

int rv_wal_spares_recycle(struct rv_wal_spares *sp, uint64_t number)
{
    rv_mutex_lock(&sp->mu);
    int kept = sp->npool < sp->recycle;
    if (kept)
        sp->pool[sp->npool++] = number;
    rv_mutex_unlock(&sp->mu);
    return kept;
}

void rv_wal_spares_stats(struct rv_wal_spares *sp, struct rv_wal_spare_stats *s)
{
    rv_mutex_lock(&sp->mu);
    s->created = sp->stat_created;
    s->recycled = sp->stat_recycled;
    s->waits = sp->stat_waits;
    s->pooled = (uint64_t)sp->npool;
    rv_mutex_unlock(&sp->mu);
}
