/*
** checkpoint.c -- a consistent copy of a live database (checkpoint.h):
** taking the moment, the plan of its files, writing the plan into a new
** directory, and ravel_checkpoint.
**
** Writers wait only for the memtable switch that marks the moment (the
** WAL segment's fdatasync and a new segment); the copying runs beside
** them.  RAVEL_NO_WAL writes are not in the WAL, so once a database has
** taken one, the switch is followed by a flush of every memtable it
** switched out (rv_db_flush), and the checkpoint holds them in table
** files.  The files of the prepared transactions (prepared.h) prepared
** before the moment are copied with the WAL segments, read under the
** prepared list's lock.
**
** A reader's plan (checkpoint_reader.c) names table files whose names
** the writer may delete while they are copied: each comes with the
** descriptor the reader holds.  Such a file is linked by name only when
** the name still is that file (the same inode as the descriptor), and
** copied from the descriptor otherwise.
*/
#include "db/checkpoint.h"
#include "db/db_write.h"
#include "util/clock.h"
#include "util/copy.h"
#include "util/error.h"
#include "util/file.h"
#include "util/fault.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef RAVEL_TEST_HOOKS
static _Atomic int checkpoint_no_links;
void rv_test_checkpoint_no_links(int on)
{
    atomic_store(&checkpoint_no_links, on);
}
#endif

/* Table files copied from a reader's descriptor because their name was
** gone: counted for tests and the log (relaxed: a statistic). */
static _Atomic uint64_t checkpoint_deleted_copies;
#ifdef RAVEL_TEST_HOOKS
uint64_t rv_test_checkpoint_deleted_copies(void)
{
    return atomic_load_explicit(&checkpoint_deleted_copies,
                                memory_order_relaxed);
}
#endif

/* ------------------------------------------------------------ the plan */

struct rv_cp_item *rv_checkpoint_add(struct rv_cp_plan *p, int kind,
                                     const char *name)
{
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 32;
        struct rv_cp_item *items = realloc(p->items,
                                           (size_t)cap * sizeof *items);
        if (!items)
            return NULL;
        p->items = items;
        p->cap = cap;
    }
    struct rv_cp_item *it = &p->items[p->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->fd = -1;
    snprintf(it->name, sizeof it->name, "%s", name);
    return it;
}

/* Adds the file NAME of the database directory (kind KIND, SIZE bytes,
** readable through FD too unless it is -1). */
static int checkpoint_add_file(struct rv_cp_plan *p, int kind,
                               const char *name, uint64_t size, int fd)
{
    struct rv_cp_item *it = rv_checkpoint_add(p, kind, name);
    char path[RV_PATH_MAX];
    if (!it || rv_path_join(path, p->db->dir, name) != 0 ||
        !(it->src = strdup(path)))
        return rv_error(RAVEL_NOMEM, "out of memory planning a checkpoint");
    it->size = size;
    it->fd = fd;
    return RAVEL_OK;
}

/* Adds NAME holding the LEN bytes of DATA (taken over). */
static int checkpoint_add_data(struct rv_cp_plan *p, const char *name,
                               char *data, size_t len)
{
    struct rv_cp_item *it = rv_checkpoint_add(p, RV_CP_DATA, name);
    if (!it) {
        free(data);
        return rv_error(RAVEL_NOMEM, "out of memory planning a checkpoint");
    }
    it->data = data;
    it->size = len;
    return RAVEL_OK;
}

int rv_checkpoint_add_tables(struct rv_cp_plan *p)
{
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < p->files->n[l]; i++) {
            const struct rv_file *f = p->files->level[l][i];
            char name[32];
            rv_table_file_name(name, sizeof name, f->meta.number);
            int rc = checkpoint_add_file(p, RV_CP_TABLE, name, f->meta.size,
                                         f->hold_fd);
            if (rc)
                return rc;
        }
    return RAVEL_OK;
}

/* WAL segments FROM .. TO-1, closed: their size is final. */
static int checkpoint_add_wal(struct rv_cp_plan *p, uint64_t from,
                              uint64_t to)
{
    for (uint64_t n = from; n < to; n++) {
        char name[32], path[RV_PATH_MAX];
        rv_wal_segment_name(name, sizeof name, n);
        int rc = rv_path_join(path, p->db->dir, name);
        struct stat st;
        if (rc == RAVEL_OK && stat(path, &st) != 0)
            rc = rv_error_errno(RAVEL_IOERR, errno, "checkpoint: stat %s",
                                path);
        if (rc == RAVEL_OK)
            rc = checkpoint_add_file(p, RV_CP_FILE, name,
                                     (uint64_t)st.st_size, -1);
        if (rc)
            return rc;
    }
    return RAVEL_OK;
}

int rv_checkpoint_add_copy_of(struct rv_cp_plan *p, const char *name)
{
    char path[RV_PATH_MAX];
    int rc = rv_path_join(path, p->db->dir, name);
    char *data = NULL;
    size_t len = 0;
    int open_errno = 0;
    if (rc == RAVEL_OK)
        rc = rv_read_file(path, &data, &len, &open_errno);
    return rc ? rc : checkpoint_add_data(p, name, data, len);
}

static int checkpoint_add_prepared_one(void *ctx, uint64_t number)
{
    char name[32];
    rv_prepared_file_name(name, sizeof name, number);
    return rv_checkpoint_add_copy_of(ctx, name);
}

/* The files of the prepared transactions prepared before WAL segment
** SEGMENT (the moment's), read while no flush or rollback can change
** them (prepared.h). */
static int checkpoint_add_prepared(struct rv_cp_plan *p, uint64_t segment)
{
    return rv_prepared_each_spilled(&p->db->prepared, segment,
                                    checkpoint_add_prepared_one, p);
}

int rv_checkpoint_add_manifest(struct rv_cp_plan *p, uint64_t number,
                               uint64_t log_number,
                               const struct rv_file_meta *extra)
{
    struct rv_version_edit e;
    rv_version_edit_init(&e);
    int rc = RAVEL_OK;
    for (int l = 0; l < RV_NUM_LEVELS && rc == RAVEL_OK; l++)
        for (int i = 0; i < p->files->n[l] && rc == RAVEL_OK; i++) {
            struct rv_file_meta m = p->files->level[l][i]->meta;
            m.level = l;
            rc = rv_version_edit_add_file(&e, &m);
        }
    if (rc == RAVEL_OK && extra)
        rc = rv_version_edit_add_file(&e, extra);
    e.has_log_number = 1;
    e.log_number = log_number;
    e.has_next_file_number = 1;
    e.next_file_number = (log_number > number ? log_number : number) + 1;
    e.has_last_sequence = 1;
    e.last_sequence = p->sequence;
    char *image = NULL;
    size_t len = 0;
    if (rc == RAVEL_OK)
        rc = rv_manifest_image(number, &e, &image, &len);
    rv_version_edit_clear(&e);
    char name[32];
    rv_manifest_name(name, sizeof name, number);
    if (rc == RAVEL_OK)
        rc = checkpoint_add_data(p, name, image, len);
    char *current = malloc(40);
    if (rc == RAVEL_OK && !current)
        rc = rv_error(RAVEL_NOMEM, "out of memory planning a checkpoint");
    if (rc == RAVEL_OK) {
        snprintf(current, 40, "%s\n", name);
        return checkpoint_add_data(p, RV_FILE_CURRENT, current,
                                   strlen(current));
    }
    free(current);
    return rc;
}

/* The moment: a memtable switch (and with RAVEL_NO_WAL writes taken, the
** flush of what it switched out). */
static int checkpoint_switch(ravel_db *db)
{
    /* relaxed: a count; a NO_WAL write racing with the call began after
    ** it, and need not be in the checkpoint */
    if (atomic_load_explicit(&db->stats.nowal_writes,
                             memory_order_relaxed) > 0)
        return rv_db_flush(db, 0);
    return rv_write_switch_for_checkpoint(db);
}

int rv_checkpoint_plan(ravel_db *db, struct rv_cp_plan *p)
{
    if (db->options.read_only)
        return rv_checkpoint_plan_reader(db, p);
    memset(p, 0, sizeof *p);
    p->db = db;
    if (rv_stop_code(&db->stop))
        return rv_write_refusal(db);
    /* The state's sequence: the last one given out before the switch is
    ** asked for.  Every sequence up to it is in the state: its group
    ** wrote its WAL record before the switch's group was formed, so it is
    ** in a segment before the moment's, or in a table file flushed from
    ** one.  Not the value after the switch: writes acknowledged after the
    ** moment (in the new segment, not copied) take sequences meanwhile, and
    ** a follower re-seeded from the copy resumes after this sequence.
    ** Batches just above it may be in the state too (written before the
    ** switch, after this load): an open of the copy finds its last
    ** sequence in its WAL and files anyway (recovery.c).  Relaxed: the
    ** write queue the switch joins orders it after those groups. */
    p->sequence = atomic_load_explicit(&db->write.last_seq,
                                       memory_order_relaxed);
    uint64_t start = rv_now_micros();
    int rc = checkpoint_switch(db);
    p->pause_micros = rv_now_micros() - start;
    if (rc)
        return rc;

    rv_mutex_lock(&db->mu.lock);
    p->files = db->read.current->files;
    rv_files_ref(p->files);
    uint64_t log_number = db->mu.files.log_number;
    /* the active memtable's segment: every segment before it is closed,
    ** and the last switch to it came after the one made above */
    uint64_t segment = db->read.current->mem_wal;
    uint64_t manifest_number = db->mu.files.next_file_number;
    db->mu.files.wal_holds++;
    p->wal_held = 1;
    rv_mutex_unlock(&db->mu.lock);

    rc = rv_checkpoint_add_tables(p);
    if (rc == RAVEL_OK)
        rc = checkpoint_add_wal(p, log_number,
                                segment > log_number ? segment : log_number);
    if (rc == RAVEL_OK)
        rc = checkpoint_add_prepared(p, segment);
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_add_copy_of(p, RV_FILE_IDENTITY);
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_add_manifest(p, manifest_number, log_number,
                                        NULL);
    if (rc)
        rv_checkpoint_plan_free(p);
    return rc;
}

void rv_checkpoint_plan_free(struct rv_cp_plan *p)
{
    ravel_db *db = p->db;
    uint64_t from = 0, to = 0;
    if (p->wal_held) {
        rv_mutex_lock(&db->mu.lock);
        if (--db->mu.files.wal_holds == 0) {
            from = db->mu.files.wal_held_from;
            to = db->mu.files.wal_held_to;
            db->mu.files.wal_held_from = db->mu.files.wal_held_to = 0;
        }
        rv_mutex_unlock(&db->mu.lock);
        p->wal_held = 0;
    }
    if (to > from)
        rv_db_delete_wal_segments(db, from, to);
    if (p->files)
        rv_files_unref(p->files);
    for (int i = 0; i < p->n; i++) {
        free(p->items[i].src);
        free(p->items[i].data);
        if (p->items[i].own_fd && p->items[i].fd >= 0)
            close(p->items[i].fd);
    }
    free(p->items);
    memset(p, 0, sizeof *p);
    p->db = db;
}

int rv_checkpoint_defer_wal_locked(ravel_db *db, uint64_t from, uint64_t to)
{
    struct rv_db_files *f = &db->mu.files;
    if (f->wal_holds == 0 || to <= from)
        return 0;
    if (f->wal_held_to == 0) {
        f->wal_held_from = from;
        f->wal_held_to = to;
    } else {
        if (from < f->wal_held_from)
            f->wal_held_from = from;
        if (to > f->wal_held_to)
            f->wal_held_to = to;
    }
    return 1;
}

/* ------------------------------------------------- into a directory */

/* A link made at DST of a name whose file may have been replaced: 1 if
** DST is the file FD holds, else 0 (DST removed: the caller copies). */
static int checkpoint_link_is(const char *dst, int fd)
{
    struct stat a, b;
    if (stat(dst, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return 1;
    unlink(dst);
    return 0;
}

/* A hard link of SRC at DST: *LINKED = 1 if made, 0 if the caller must
** copy (another file system, or links refused there; for an item with a
** descriptor FD, also a name the writer deleted or that is no longer its
** file); RAVEL_IOERR for any other failure. */
static int checkpoint_link(const char *src, const char *dst, int fd,
                           int *linked)
{
    *linked = 0;
#ifdef RAVEL_TEST_HOOKS
    if (atomic_load(&checkpoint_no_links))
        return RAVEL_OK;
#endif
    if (link(src, dst) == 0) {
        *linked = fd < 0 || checkpoint_link_is(dst, fd);
        return RAVEL_OK;
    }
    if (errno == ENOENT && fd >= 0) {
        /* relaxed: a statistic */
        atomic_fetch_add_explicit(&checkpoint_deleted_copies, 1,
                                  memory_order_relaxed);
        return RAVEL_OK; /* the writer deleted it: copy what we hold */
    }
    if (errno == EXDEV || errno == EPERM || errno == EMLINK ||
        errno == ENOTSUP || errno == EOPNOTSUPP)
        return RAVEL_OK; /* copy instead */
    return rv_error_errno(RAVEL_IOERR, errno, "link %s to %s", src, dst);
}

int rv_checkpoint_copy_item(const struct rv_cp_item *it, const char *dst,
                            uint64_t *checksum)
{
    if (it->fd >= 0)
        return rv_copy_fd(it->fd, it->src ? it->src : it->name, dst,
                          it->size, checksum);
    return rv_copy_file(it->src, dst, it->size, checksum);
}

static int checkpoint_write_item(const struct rv_cp_item *it,
                                 const char *dir, uint64_t *linked,
                                 uint64_t *copied)
{
    char dst[RV_PATH_MAX];
    int rc = rv_path_join(dst, dir, it->name);
    if (rc)
        return rc;
    if (it->kind == RV_CP_DATA) {
        rc = rv_copy_write_file(dst, it->data, (size_t)it->size);
        *copied += rc ? 0 : it->size;
        return rc;
    }
    int was_linked = 0;
    if (it->kind == RV_CP_TABLE && it->src)
        rc = checkpoint_link(it->src, dst, it->fd, &was_linked);
    if (rc == RAVEL_OK && was_linked) {
        *linked += it->size;
        return RAVEL_OK;
    }
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_copy_item(it, dst, NULL);
    *copied += rc ? 0 : it->size;
    return rc;
}

int rv_checkpoint_write_dir(const struct rv_cp_plan *p, const char *dir,
                            uint64_t *linked, uint64_t *copied)
{
    uint64_t l = 0, c = 0;
    char partial[RV_PATH_MAX];
    int rc = rv_copy_dir_begin(dir, partial);
    if (rc)
        return rc;
    for (int i = 0; i < p->n && rc == RAVEL_OK; i++) {
        rc = checkpoint_write_item(&p->items[i], partial, &l, &c);
        rv_pause_here(RV_PAUSE_CHECKPOINT_ITEM);
    }
    if (rc == RAVEL_OK)
        rc = rv_copy_dir_commit(partial, dir);
    if (rc)
        rv_copy_remove_dir(partial);
    if (linked)
        *linked = l;
    if (copied)
        *copied = c;
    return rc;
}

/* ------------------------------------------------------------- the API */

int ravel_checkpoint(ravel_db *db, const char *dir)
{
    int rc = rv_db_enter(db, "ravel_checkpoint");
    if (rc)
        return rc;
    if (!dir || !*dir) {
        rc = rv_error(RAVEL_INVALID, "ravel_checkpoint: the directory name "
                      "is empty or NULL");
        rv_db_leave(db);
        return rc;
    }
    struct rv_cp_plan p;
    rc = rv_checkpoint_plan(db, &p);
    uint64_t linked = 0, copied = 0;
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_write_dir(&p, dir, &linked, &copied);
    if (rc == RAVEL_OK)
        rv_db_log(db, "checkpoint %s: sequence %llu, %llu bytes linked, "
                  "%llu copied, writers paused %llu us", dir,
                  (unsigned long long)p.sequence,
                  (unsigned long long)linked, (unsigned long long)copied,
                  (unsigned long long)p.pause_micros);
    rv_checkpoint_plan_free(&p);
    rv_db_leave(db);
    return rc;
}
