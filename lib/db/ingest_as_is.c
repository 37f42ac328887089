/*
** ingest_as_is.c -- the first way of an ingest (ingest.c): files that
** nothing in the database overlaps, with no snapshot or transaction live,
** go in as they are -- hard-linked or copied byte for byte, their keys at
** sequence 0, at the last level -- installed under one check of those
** conditions, then named by the manifest edit.  Why sequence 0 is right
** then: docs/design.md, "Bulk ingest".
*/
#include "db/ingest.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 if MEM holds a key within a file's range (or memory ran out: then the
** files are copied, which always works). */
static int ingest_as_is_mem_overlaps(const struct rv_ingest_job *j,
                                     rv_memtable *mem)
{
    return rv_ingest_memtable_overlaps(j, mem) != 0;
}

/* Whether the files can go in as they are, keys at sequence 0 (with
** db->mu.lock held, as ingest.h declares it): no live
** snapshot and no transaction (either could see them appear "in the
** past"), and nothing anywhere in the database -- memtables, files of any
** level, running compactions -- overlapping their ranges, so that no
** version of their keys exists for sequence 0 to be older than. */
int rv_ingest_as_is_ok_locked(ravel_db *db, const struct rv_ingest_job *j)
{
    if (db->mu.snapshots.live > 0 ||
        atomic_load_explicit(&db->txn.state, memory_order_acquire))
        return 0;
    const struct rv_version *v = db->read.current;
    if (ingest_as_is_mem_overlaps(j, v->mem))
        return 0;
    for (int i = 0; i < v->n_imm; i++)
        if (ingest_as_is_mem_overlaps(j, v->imm[i]))
            return 0;
    for (size_t i = 0; i < j->n; i++)
        for (int l = 0; l < RV_NUM_LEVELS; l++)
            if (rv_ingest_level_overlaps(v->files, l, &j->files[i]) ||
                rv_ingest_compaction_overlaps(db->mu.compact.running, l,
                                           &j->files[i]))
                return 0;
    return 1;
}

/* Copies SRC to DST (new), with copy_file_range where it works, then
** fdatasyncs DST. */
static int ingest_as_is_copy_bytes(const char *src, const char *dst)
{
    int in = rv_open(src, O_RDONLY, 0);
    if (in < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "ravel_ingest: open %s",
                              src);
    int out = rv_open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (out < 0) {
        int err = errno;
        close(in);
        return rv_error_errno(RAVEL_IOERR, err, "ravel_ingest: create %s",
                              dst);
    }
    int rc = RAVEL_OK;
    int plain = 0;
    char *buf = NULL;
    for (;;) {
        ssize_t got;
        if (!plain) {
            got = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
            if (got < 0 && (errno == EXDEV || errno == ENOSYS ||
                            errno == EINVAL || errno == EOPNOTSUPP)) {
                plain = 1;
                continue;
            }
        } else {
            if (!buf && !(buf = malloc(1 << 20))) {
                rc = rv_error(RAVEL_NOMEM, "out of memory copying %s", src);
                break;
            }
            got = read(in, buf, 1 << 20);
            for (ssize_t done = 0; got > 0 && done < got;) {
                ssize_t w = write(out, buf + done, (size_t)(got - done));
                if (w < 0 && errno != EINTR) {
                    rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_ingest: "
                                        "write %s", dst);
                    break;
                }
                done += w > 0 ? w : 0;
            }
        }
        if (rc || got == 0)
            break;
        if (got < 0 && errno != EINTR) {
            rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_ingest: copy %s "
                                "to %s", src, dst);
            break;
        }
    }
    free(buf);
    if (rc == RAVEL_OK && fdatasync(out) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_ingest: fdatasync %s",
                            dst);
    if (close(out) != 0 && rc == RAVEL_OK)
        rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_ingest: close %s",
                            dst);
    close(in);
    if (rc)
        unlink(dst);
    return rc;
}

/* Puts F in the database as DST: a hard link with RAVEL_INGEST_MOVE (the
** source goes once the ingest is durable), else -- or where the link
** fails: another file system -- a copy; durable either way.  *LINKED
** says which. */
static int ingest_as_is_place_file(const struct rv_ingest_job *j,
                                   const struct rv_ingest_file *f,
                                   const char *dst, int *linked)
{
    *linked = 0;
    if (j->move && link(f->path, dst) == 0) {
        *linked = 1;
        int fd = rv_open(dst, O_RDONLY, 0);
        int rc = RAVEL_OK;
        if (fd < 0 || fdatasync(fd) != 0) /* written by whoever made it */
            rc = rv_error_errno(RAVEL_IOERR, errno, "ravel_ingest: "
                                "fdatasync %s", dst);
        if (fd >= 0)
            close(fd);
        if (rc)
            unlink(dst);
        return rc;
    }
    return ingest_as_is_copy_bytes(f->path, dst);
}

/* The manifest's view of F placed as file NUMBER at LEVEL. */
static int ingest_as_is_meta(const struct rv_ingest_file *f,
                             uint64_t number, int level, const char *path,
                             struct rv_file_meta *m)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return rv_error_errno(RAVEL_IOERR, errno, "ravel_ingest: stat %s",
                              path);
    memset(m, 0, sizeof *m);
    m->level = level;
    m->number = number;
    m->size = (uint64_t)st.st_size;
    m->smallest = (char *)rv_table_smallest_key(f->t, &m->smallest_len);
    m->largest = (char *)rv_table_largest_key(f->t, &m->largest_len);
    m->smallest_seq = m->largest_seq = 0;
    m->entries = rv_table_props(f->t)->entries;
    return RAVEL_OK;
}

/* Marks (or clears) the files of E compacting in the current version: no
** compaction may take them until their edit is in the manifest. */
static void ingest_as_is_hold_locked(ravel_db *db,
                                     const struct rv_version_edit *e,
                                     int hold)
    RV_REQUIRES(db->mu.lock);
static void ingest_as_is_hold_locked(ravel_db *db,
                                     const struct rv_version_edit *e,
                                     int hold)
{
    const struct rv_files *fs = db->read.current->files;
    for (int k = 0; k < e->n_added; k++) {
        int l = e->added[k].level;
        for (int i = 0; i < fs->n[l]; i++)
            if (fs->level[l][i]->meta.number == e->added[k].number)
                fs->level[l][i]->compacting = hold;
    }
    if (!hold)
        pthread_cond_broadcast(&db->mu.bg.cv);
}

/* Installs E if the files can still go in as they are (then holds them
** from compactions): RAVEL_OK, RV_INGEST_NOT_AS_IS, or a failure. */
static int ingest_as_is_install(struct rv_ingest_job *j,
                                const struct rv_version_edit *e)
{
    ravel_db *db = j->db;
    rv_mutex_lock(&db->mu.lock);
    int rc = rv_ingest_as_is_ok_locked(db, j) ? RAVEL_OK : RV_INGEST_NOT_AS_IS;
    if (rc == RAVEL_OK)
        rc = rv_db_install_edit_locked(db, NULL, e);
    if (rc == RAVEL_OK)
        ingest_as_is_hold_locked(db, e, 1);
    rv_mutex_unlock(&db->mu.lock);
    return rc;
}

/* The files as they are, at the last level, sequence 0: linked (moved)
** or copied byte for byte, made durable, then -- if nothing appeared
** meanwhile that they could overlap or a snapshot could see -- installed
** and THEN named by the manifest edit, all under one check of the
** conditions (a snapshot taken after the install sees them: it comes
** after the ingest).  A failure of the edit after the install is a
** failure of durability of what readers have seen, as a failed WAL sync:
** writes stop, and the next open has all of the files or none.
** RV_INGEST_NOT_AS_IS if the conditions went before the install: nothing is
** left of the attempt. */
int rv_ingest_as_is(struct rv_ingest_job *j)
{
    ravel_db *db = j->db;
    int level = db->options.num_levels - 1;
    struct rv_version_edit edit;
    rv_version_edit_init(&edit);
    uint64_t *numbers = calloc(j->n, sizeof *numbers);
    int rc = numbers ? RAVEL_OK
                     : rv_error(RAVEL_NOMEM, "ravel_ingest: out of memory");
    size_t placed = 0;
    for (size_t i = 0; i < j->n && rc == RAVEL_OK; i++) {
        rv_mutex_lock(&db->mu.lock);
        numbers[i] = db->mu.files.next_file_number++;
        rv_mutex_unlock(&db->mu.lock);
        char dst[RV_PATH_MAX];
        rc = rv_table_file_path(dst, db->dir, numbers[i]);
        int linked = 0;
        if (rc == RAVEL_OK)
            rc = ingest_as_is_place_file(j, &j->files[i], dst, &linked);
        if (rc)
            break;
        placed++;
        j->linked += linked;
        struct rv_file_meta m;
        rc = ingest_as_is_meta(&j->files[i], numbers[i], level, dst, &m);
        if (rc == RAVEL_OK)
            rc = rv_version_edit_add_file(&edit, &m);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_INGEST_FILE_COPIED);
    }
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(db->dir);
    if (rc == RAVEL_OK)
        rc = ingest_as_is_install(j, &edit);
    if (rc != RAVEL_OK) {
        for (size_t i = 0; i < placed; i++) {
            char dst[RV_PATH_MAX];
            if (rv_table_file_path(dst, db->dir, numbers[i]) == RAVEL_OK)
                unlink(dst);
        }
        j->linked = 0;
    } else {
        j->fast = 1;
        j->levels[level] += (int)j->n;
        rv_pause_here(RV_PAUSE_INGEST_BEFORE_EDIT);
        rc = rv_db_log_edit(db, &edit);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_INGEST_LOGGED);
        rv_mutex_lock(&db->mu.lock);
        ingest_as_is_hold_locked(db, &edit, 0);
        rv_mutex_unlock(&db->mu.lock);
        if (rc != RAVEL_OK) {
            char why[RV_STOP_REASON_MAX];
            snprintf(why, sizeof why, "an ingest failed: %.450s",
                     rv_errmsg_get());
            rv_db_stop_writes(db, rc, why);
        }
    }
    rv_version_edit_clear(&edit);
    free(numbers);
    return rc;
}
