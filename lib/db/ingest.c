/*
** ingest.c -- ravel_ingest: adding table files written by ravel_sst_writer
** (table/sst_writer.h) to a live database, atomically.
**
** An ingest, in order:
**   1. opens every file (footer, index, properties checked against the
**      external file number), refuses what is not an external table, an
**      empty one, and files whose key ranges overlap each other; reads
**      every entry (each block's checksum, the entries' form and order,
**      their count) -- all before writes are held up;
**   2. as an exclusive writer (db_write.h: every earlier write published,
**      later writers waiting behind it), one of two ways:
**   AS THEY ARE (ingest_as_is.c), when nothing in the database -- memtables, files of any
**   level, running compactions -- overlaps the files' ranges and no
**   snapshot or transaction is live (so no version of their keys exists
**   for sequence 0 to be older than, and nothing could see them appear
**   in its past):
**      a. links each file into the directory under a new number
**         (RAVEL_INGEST_MOVE; a copy where the link fails, e.g. across
**         file systems) or copies it byte for byte, fdatasyncs it, then
**         fsyncs the directory; the keys keep sequence 0, the footer its
**         number 0 (table.c reads such a file with 0);
**      b. under db->mu.lock: checks the conditions again and installs the
**         files at the last level, held from compactions -- a snapshot
**         taken after the install comes after the ingest; if the
**         conditions went, removes the files and copies instead (below);
**      c. appends ONE version edit naming them, then lets compactions
**         have them.
**   COPIED, otherwise:
**      a. if a memtable holds a key in the files' ranges, switches the
**         active memtable out and waits until every memtable is flushed
**         (a read looks in memtables first: they must not hold older
**         versions of the ingested keys);
**      b. takes one sequence number S;
**      c. copies each file into a new table file of the database, under a
**         new file number, every key tagged with S (each block checked
**         again as it is read), then fsyncs the directory;
**      d. under db->mu.lock, picks each file's level: the deepest at and
**         above which no file and no running compaction overlaps its
**         range; registers a guard per file in the running compactions,
**         so that none picked before the install can write into its
**         level over its range;
**      e. appends ONE version edit naming every new file (rv_db_log_edit:
**         the last sequence it records is S or above);
**      f. under db->mu.lock: installs it and drops the guards;
**      g. publishes S: readers see every file at once (last_visible_seq
**         is what a read, an iterator and a snapshot compare with).
**   3. with RAVEL_INGEST_MOVE, removes the source files.
** A crash before the edit leaves table files no manifest names: the next
** open deletes them (recovery.c), as it does a crashed flush's.  A crash
** after it leaves them all named (and S covered by the manifest's last
** sequence).  A failed edit stops writes; the next open finds all of the
** files or none.  Why two ways, and why not always a link:
** docs/design.md, "Bulk ingest".
*/
#include "db/ingest.h"
#include "db/db.h"
#include "base/dbformat.h"
#include "db/keep.h"
#include "memtable/range_del.h"
#include "db/table_output.h"
#include "db/write_unordered.h"
#include "table/sst_writer.h"
#include "table/table.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/file.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------ 1: the files */

/* The message of the failure just met, kept before it is replaced. */
static int ingest_refuse(int rc, const char *path, const char *why)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", rv_errmsg_get());
    return rv_error(rc, "ravel_ingest: %s: %s%s%s", path, why,
                    *msg ? ": " : "", msg);
}

static int ingest_open_file(struct rv_ingest_file *f)
{
    int fd = rv_open(f->path, O_RDONLY, 0);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            return rv_error(RAVEL_NOTFOUND, "ravel_ingest: %s: no such "
                            "file", f->path);
        return rv_error_errno(RAVEL_IOERR, err, "ravel_ingest: open %s",
                              f->path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return rv_error_errno(RAVEL_IOERR, err, "ravel_ingest: stat %s",
                              f->path);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return rv_error(RAVEL_INVALID, "ravel_ingest: %s: not a regular "
                        "file", f->path);
    }
    struct rv_table_read_options ro = {.verify_checksums = 1,
                                       .block_cache = NULL};
    int rc = rv_table_open(fd, f->path, RV_SST_EXTERNAL_NUMBER,
                           (uint64_t)st.st_size, &ro, &f->t);
    if (rc == RAVEL_CORRUPT)
        return ingest_refuse(rc, f->path, "not a table file written by "
                             "ravel_sst_writer, or damaged");
    if (rc)
        return ingest_refuse(rc, f->path, "cannot open");
    /* ravel_sst_writer writes none; a tombstone at sequence 0 would hide
    ** nothing, and one given the ingest's sequence would hide keys
    ** already there: neither is what its writer meant */
    if (rv_table_range_frags(f->t))
        return rv_error(RAVEL_INVALID, "ravel_ingest: %s: holds range "
                        "tombstones, which an ingest does not take",
                        f->path);
    const struct rv_table_props *p = rv_table_props(f->t);
    if (p->entries == 0)
        return rv_error(RAVEL_INVALID, "ravel_ingest: %s: holds no keys",
                        f->path);
    if (p->smallest_seq != 0 || p->largest_seq != 0)
        return rv_error(RAVEL_CORRUPT, "ravel_ingest: %s: its keys carry "
                        "sequence numbers (%llu .. %llu): not a file "
                        "written by ravel_sst_writer", f->path,
                        (unsigned long long)p->smallest_seq,
                        (unsigned long long)p->largest_seq);
    size_t sl, ll;
    const char *s = rv_table_smallest_key(f->t, &sl);
    const char *l = rv_table_largest_key(f->t, &ll);
    if (sl < RV_TAG_SIZE || ll < RV_TAG_SIZE)
        return rv_error(RAVEL_CORRUPT, "ravel_ingest: %s: malformed "
                        "smallest or largest key", f->path);
    f->smallest = s;
    f->smallest_len = sl - RV_TAG_SIZE;
    f->largest = l;
    f->largest_len = ll - RV_TAG_SIZE;
    return RAVEL_OK;
}

static int ingest_file_order(const void *a, const void *b)
{
    const struct rv_ingest_file *x = a, *y = b;
    return rv_user_key_compare(x->smallest, x->smallest_len, y->smallest,
                               y->smallest_len);
}

/* Sorts the files by smallest key; refuses two whose ranges meet. */
static int ingest_check_overlaps(struct rv_ingest_job *j)
{
    qsort(j->files, j->n, sizeof *j->files, ingest_file_order);
    for (size_t i = 0; i + 1 < j->n; i++) {
        const struct rv_ingest_file *a = &j->files[i], *b = &j->files[i + 1];
        if (rv_user_key_compare(a->largest, a->largest_len, b->smallest,
                                b->smallest_len) >= 0)
            return rv_error(RAVEL_INVALID, "ravel_ingest: the key ranges "
                            "of %s and %s overlap (files ingested together "
                            "must not)", a->path, b->path);
    }
    return RAVEL_OK;
}

/* ------------------------------------------- 2a: memtables in the way */

static int ingest_user_overlap(const char *s1, size_t s1l, const char *l1,
                               size_t l1l, const char *s2, size_t s2l,
                               const char *l2, size_t l2l)
{
    return rv_user_key_compare(l1, l1l, s2, s2l) >= 0 &&
           rv_user_key_compare(l2, l2l, s1, s1l) >= 0;
}

/* 1 if MEM holds a key within a file's range, -1 out of memory. */
int rv_ingest_memtable_overlaps(const struct rv_ingest_job *j,
                                    rv_memtable *mem)
{
    if (rv_memtable_is_empty(mem))
        return 0;
    /* a range deletion over a file's keys is in the way too: the
    ** memtable is flushed first (its deletions then reach only older
    ** data, as their sequence says) */
    for (size_t i = 0; i < j->n; i++)
        if (rv_range_dels_overlap(rv_memtable_range_dels(mem),
                                  j->files[i].smallest,
                                  j->files[i].smallest_len,
                                  j->files[i].largest,
                                  j->files[i].largest_len))
            return 1;
    struct rv_iter *it = rv_memtable_iter_new(mem);
    if (!it)
        return -1;
    int hit = 0;
    char stack[256];
    for (size_t i = 0; i < j->n && !hit; i++) {
        const struct rv_ingest_file *f = &j->files[i];
        size_t tl = f->smallest_len + RV_TAG_SIZE;
        char *target = tl <= sizeof stack ? stack : malloc(tl);
        if (!target) {
            hit = -1;
            break;
        }
        memcpy(target, f->smallest, f->smallest_len);
        /* the highest tag: before every version of the key */
        rv_put_fixed64(target + f->smallest_len,
                       (RV_MAX_SEQUENCE << 8) | 0xff);
        it->ops->seek(it, target, tl);
        if (it->ops->valid(it)) {
            size_t kl;
            const char *k = it->ops->key(it, &kl);
            hit = rv_user_key_compare(k, kl - RV_TAG_SIZE, f->largest,
                                      f->largest_len) <= 0;
        }
        if (target != stack)
            free(target);
    }
    it->ops->destroy(it);
    return hit;
}

/* 1 if a memtable of the current version holds a key of the files. */
static int ingest_memtables_overlap(struct rv_ingest_job *j)
{
    struct rv_version *v = rv_db_ref_version(j->db);
    int hit = rv_ingest_memtable_overlaps(j, v->mem);
    for (int i = 0; i < v->n_imm && hit == 0; i++)
        hit = rv_ingest_memtable_overlaps(j, v->imm[i]);
    rv_version_unref(v);
    return hit;
}

/* Waits until no immutable memtable is left (they are all flushed). */
static int ingest_wait_flushed(ravel_db *db)
{
    int stopped = 0;
    rv_mutex_lock(&db->mu.lock);
    while (db->read.current->n_imm > 0) {
        if (rv_stop_code(&db->stop)) {
            stopped = 1;
            break;
        }
        rv_cond_wait_ms(&db->mu.bg.flush_cv, &db->mu.lock, CLOCK_REALTIME,
                        100);
    }
    rv_mutex_unlock(&db->mu.lock);
    return stopped ? rv_write_refusal(db) : RAVEL_OK;
}

/* Step 2a. */
static int ingest_clear_memtables(struct rv_ingest_job *j,
                                  struct rv_writer *self)
{
    int hit = ingest_memtables_overlap(j);
    if (hit < 0)
        return rv_error(RAVEL_NOMEM, "ravel_ingest: out of memory reading "
                        "the memtables");
    if (!hit)
        return RAVEL_OK;
    int rc = RAVEL_OK;
    if (!rv_memtable_is_empty(rv_db_active_memtable(j->db)))
        rc = rv_write_switch_memtable_exclusive(j->db, self);
    if (rc == RAVEL_OK)
        rc = ingest_wait_flushed(j->db);
    return rc;
}

/* ------------------------------------------------------- 2c: the copy */

/* Checks the entry K (KLEN bytes) of F read after the user key PREV
** (PREV_LEN bytes; NULL for the first). */
static int ingest_check_entry(const struct rv_ingest_file *f, uint64_t n,
                              const char *k, size_t klen, const char *prev,
                              size_t prev_len)
{
    if (klen < RV_TAG_SIZE)
        return rv_error(RAVEL_CORRUPT, "ravel_ingest: %s: entry %llu: key "
                        "of %zu bytes", f->path, (unsigned long long)n,
                        klen);
    uint64_t tag = rv_get_fixed64(k + klen - RV_TAG_SIZE);
    int type = rv_tag_type(tag);
    if (rv_tag_sequence(tag) != 0 ||
        (type != RV_TYPE_PUT && type != RV_TYPE_DELETE))
        return rv_error(RAVEL_CORRUPT, "ravel_ingest: %s: entry %llu has "
                        "sequence %llu and type %d (ravel_sst_writer writes "
                        "puts and deletes at sequence 0)", f->path,
                        (unsigned long long)n,
                        (unsigned long long)rv_tag_sequence(tag), type);
    if (prev && rv_user_key_compare(prev, prev_len, k,
                                    klen - RV_TAG_SIZE) >= 0)
        return rv_error(RAVEL_CORRUPT, "ravel_ingest: %s: entry %llu is not "
                        "greater than entry %llu (the keys are out of "
                        "order)", f->path, (unsigned long long)n,
                        (unsigned long long)(n - 1));
    return RAVEL_OK;
}

/* Reads every entry of F: each block's checksum, the entries' form and
** order, their count. */
static int ingest_validate_file(const struct rv_ingest_file *f)
{
    struct rv_iter *it = rv_table_iter_new(f->t, RV_TABLE_READ_VERIFY |
                                                 RV_TABLE_READ_NO_CACHE);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory reading %s", f->path);
    struct rv_key_buf prev = {NULL, 0, 0};
    uint64_t n = 0;
    int rc = RAVEL_OK;
    for (it->ops->seek_to_first(it); rc == RAVEL_OK && it->ops->valid(it);
         it->ops->next(it), n++) {
        size_t klen;
        const char *k = it->ops->key(it, &klen);
        rc = ingest_check_entry(f, n, k, klen, n ? prev.data : NULL,
                                prev.len);
        if (rc == RAVEL_OK)
            rc = rv_key_buf_set(&prev, k, klen - RV_TAG_SIZE);
    }
    if (rc == RAVEL_OK && it->ops->status(it))
        rc = ingest_refuse(it->ops->status(it), f->path, "damaged");
    it->ops->destroy(it);
    free(prev.data);
    uint64_t want = rv_table_props(f->t)->entries;
    if (rc == RAVEL_OK && n != want)
        rc = rv_error(RAVEL_CORRUPT, "ravel_ingest: %s: holds %llu entries "
                      "but its properties say %llu", f->path,
                      (unsigned long long)n, (unsigned long long)want);
    return rc;
}

/* Validating several files at once: up to INGEST_CHECK_THREADS threads
** (the caller's among them) take the files in turn; each file's result
** and message are kept in its slot, and the first failure in the files'
** order is the call's. */
#define INGEST_CHECK_THREADS 4

struct ingest_checks {
    struct rv_ingest_file *files;
    size_t n;
    _Atomic size_t next;          /* the next file to take */
    int *rc;                      /* per file, written by its taker */
    char (*msg)[512];
};

static void *ingest_check_main(void *p)
{
    struct ingest_checks *c = p;
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&c->next, 1,
                                             memory_order_relaxed);
        if (i >= c->n)
            return NULL;
        c->rc[i] = ingest_validate_file(&c->files[i]);
        if (c->rc[i])
            snprintf(c->msg[i], sizeof c->msg[i], "%s", rv_errmsg_get());
    }
}

static int ingest_validate_files(struct rv_ingest_file *files, size_t n)
{
    struct ingest_checks c = {.files = files, .n = n};
    atomic_init(&c.next, 0);
    c.rc = calloc(n, sizeof *c.rc);
    c.msg = calloc(n, sizeof *c.msg);
    if (!c.rc || !c.msg) {
        free(c.rc);
        free(c.msg);
        return rv_error(RAVEL_NOMEM, "ravel_ingest: out of memory");
    }
    pthread_t th[INGEST_CHECK_THREADS - 1];
    int started = 0;
    while ((size_t)started + 1 < n && started < INGEST_CHECK_THREADS - 1 &&
           pthread_create(&th[started], NULL, ingest_check_main, &c) == 0)
        started++;
    ingest_check_main(&c);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    int rc = RAVEL_OK;
    for (size_t i = 0; i < n && rc == RAVEL_OK; i++)
        if (c.rc[i])
            rc = rv_error(c.rc[i], "%s", c.msg[i]);
    free(c.rc);
    free(c.msg);
    return rc;
}

/* Copies F into the job's output, tagging every key with the job's
** sequence, then cuts the output file. */
static int ingest_copy_file(struct rv_ingest_job *j, const struct rv_ingest_file *f)
{
    struct rv_iter *it = rv_table_iter_new(f->t, RV_TABLE_READ_VERIFY |
                                                 RV_TABLE_READ_NO_CACHE);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory reading %s", f->path);
    char *key = NULL;
    size_t cap = 0, prev_len = 0;
    uint64_t n = 0;
    int rc = RAVEL_OK;
    for (it->ops->seek_to_first(it); rc == RAVEL_OK && it->ops->valid(it);
         it->ops->next(it), n++) {
        size_t klen, vlen;
        const char *k = it->ops->key(it, &klen);
        const char *v = it->ops->value(it, &vlen);
        rc = ingest_check_entry(f, n, k, klen, n ? key : NULL, prev_len);
        if (rc == RAVEL_OK && klen > cap) {
            char *grown = realloc(key, klen * 2);
            if (!grown)
                rc = rv_error(RAVEL_NOMEM, "out of memory copying %s",
                              f->path);
            else {
                key = grown;
                cap = klen * 2;
            }
        }
        if (rc != RAVEL_OK)
            break;
        int type = rv_tag_type(rv_get_fixed64(k + klen - RV_TAG_SIZE));
        memcpy(key, k, klen - RV_TAG_SIZE);
        rv_put_fixed64(key + klen - RV_TAG_SIZE, rv_pack_tag(j->seq, type));
        prev_len = klen - RV_TAG_SIZE;
        rc = rv_table_output_add(&j->out, key, klen, v, vlen);
    }
    if (rc == RAVEL_OK && it->ops->status(it))
        rc = ingest_refuse(it->ops->status(it), f->path, "damaged");
    it->ops->destroy(it);
    free(key);
    uint64_t want = rv_table_props(f->t)->entries;
    if (rc == RAVEL_OK && n != want)
        rc = rv_error(RAVEL_CORRUPT, "ravel_ingest: %s: holds %llu entries "
                      "but its properties say %llu", f->path,
                      (unsigned long long)n, (unsigned long long)want);
    if (rc == RAVEL_OK)
        rc = rv_table_output_cut(&j->out);
    j->entries += n;
    return rc;
}

static int ingest_copy_files(struct rv_ingest_job *j)
{
    int rc = RAVEL_OK;
    for (size_t i = 0; i < j->n && rc == RAVEL_OK; i++) {
        rc = ingest_copy_file(j, &j->files[i]);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_INGEST_FILE_COPIED);
    }
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(j->db->dir);
    return rc;
}

/* ------------------------------------------------------ 2d: the levels */

/* 1 if a file of level L of FS overlaps F's range. */
int rv_ingest_level_overlaps(const struct rv_files *fs, int l,
                                 const struct rv_ingest_file *f)
{
    for (int i = 0; i < fs->n[l]; i++) {
        const struct rv_file_meta *m = &fs->level[l][i]->meta;
        if (ingest_user_overlap(m->smallest, m->smallest_len - RV_TAG_SIZE,
                                m->largest, m->largest_len - RV_TAG_SIZE,
                                f->smallest, f->smallest_len, f->largest,
                                f->largest_len))
            return 1;
    }
    return 0;
}

/* 1 if a running compaction reads or writes level L over F's range: its
** output may land anywhere from its input level to its output level. */
int rv_ingest_compaction_overlaps(const struct rv_compaction *c, int l,
                                      const struct rv_ingest_file *f)
{
    for (; c; c = c->next)
        if (c->level <= l && l <= c->output_level &&
            ingest_user_overlap(c->smallest, c->smallest_len, c->largest,
                                c->largest_len, f->smallest, f->smallest_len,
                                f->largest, f->largest_len))
            return 1;
    return 0;
}

/* The deepest level at and above which nothing overlaps F. */
static int ingest_pick_level_locked(ravel_db *db, const struct rv_ingest_file *f)
    RV_REQUIRES(db->mu.lock);
static int ingest_pick_level_locked(ravel_db *db, const struct rv_ingest_file *f)
{
    const struct rv_files *fs = db->read.current->files;
    int target = 0;
    for (int l = 0; l < db->options.num_levels; l++) {
        if (rv_ingest_level_overlaps(fs, l, f) ||
            rv_ingest_compaction_overlaps(db->mu.compact.running, l, f))
            break;
        target = l;
    }
    return target;
}

/* Picks every file's level and registers the guards (step 2d). */
static void ingest_place_locked(ravel_db *db, struct rv_ingest_job *j)
    RV_REQUIRES(db->mu.lock);
static void ingest_place_locked(ravel_db *db, struct rv_ingest_job *j)
{
    for (size_t i = 0; i < j->n; i++) {
        const struct rv_ingest_file *f = &j->files[i];
        int level = ingest_pick_level_locked(db, f);
        j->out.files[i].level = level;
        j->levels[level]++;
        struct rv_compaction *g = &j->guards[i];
        g->level = g->output_level = level;
        /* the guard's range points into the open table (freed after) */
        g->smallest = (char *)f->smallest;
        g->smallest_len = f->smallest_len;
        g->largest = (char *)f->largest;
        g->largest_len = f->largest_len;
    }
    for (size_t i = 0; i < j->n; i++) {
        j->guards[i].next = db->mu.compact.running;
        db->mu.compact.running = &j->guards[i];
    }
    j->guarded = 1;
}

/* Unlinks the guards from the running compactions. */
static void ingest_unguard_locked(ravel_db *db, struct rv_ingest_job *j)
    RV_REQUIRES(db->mu.lock);
static void ingest_unguard_locked(ravel_db *db, struct rv_ingest_job *j)
{
    if (!j->guarded)
        return;
    struct rv_compaction **p = &db->mu.compact.running;
    while (*p) {
        if (*p >= j->guards && *p < j->guards + j->n)
            *p = (*p)->next;
        else
            p = &(*p)->next;
    }
    j->guarded = 0;
    pthread_cond_broadcast(&db->mu.bg.cv); /* compactions may be due */
}

/* ----------------------------------------------- 2: the exclusive part */

/* Steps 2d-2f: the edit, logged and installed. */
static int ingest_install(struct rv_ingest_job *j)
{
    ravel_db *db = j->db;
    rv_mutex_lock(&db->mu.lock);
    ingest_place_locked(db, j);
    rv_mutex_unlock(&db->mu.lock);

    struct rv_version_edit edit;
    rv_version_edit_init(&edit);
    int rc = RAVEL_OK;
    for (int i = 0; i < j->out.n && rc == RAVEL_OK; i++)
        rc = rv_version_edit_add_file(&edit, &j->out.files[i]);
    int logged = 0;
    if (rc == RAVEL_OK) {
        rv_pause_here(RV_PAUSE_INGEST_BEFORE_EDIT);
        logged = 1;
        rc = rv_db_log_edit(db, &edit);
        if (rc == RAVEL_OK)
            rv_pause_here(RV_PAUSE_INGEST_LOGGED);
    }
    rv_mutex_lock(&db->mu.lock);
    if (rc == RAVEL_OK)
        rc = rv_db_install_edit_locked(db, NULL, &edit);
    ingest_unguard_locked(db, j);
    rv_mutex_unlock(&db->mu.lock);
    rv_version_edit_clear(&edit);
    if (rc != RAVEL_OK && logged) {
        /* the manifest may name the files: they stay for the next open,
        ** which the stop makes the only way on (as after a flush) */
        char why[RV_STOP_REASON_MAX];
        snprintf(why, sizeof why, "an ingest failed: %.450s",
                 rv_errmsg_get());
        rv_db_stop_writes(db, rc, why);
    }
    j->logged = logged;
    return rc;
}

static int ingest_exclusive(void *ctx, struct rv_writer *self)
{
    struct rv_ingest_job *j = ctx;
    ravel_db *db = j->db;
    rv_mutex_lock(&db->mu.lock);
    int fast = rv_ingest_as_is_ok_locked(db, j);
    rv_mutex_unlock(&db->mu.lock);
    if (fast) {
        int frc = rv_ingest_as_is(j);
        if (frc != RV_INGEST_NOT_AS_IS)
            return frc;
    }
    int rc = ingest_clear_memtables(j, self);
    if (rc)
        return rc;
    rc = rv_write_reserve_sequences(db, 1, &j->seq);
    if (rc)
        return rc;
    j->seq_taken = 1;
    rc = ingest_copy_files(j);
    if (rc == RAVEL_OK && (size_t)j->out.n != j->n)
        rc = rv_error(RAVEL_CORRUPT, "ravel_ingest: %zu files copied into "
                      "%d", j->n, j->out.n);
    if (rc == RAVEL_OK)
        rc = ingest_install(j);
    if (rc != RAVEL_OK && !j->logged)
        rv_table_output_discard(&j->out);
    /* Published even after a failure (nothing holds the sequence then):
    ** the next group publishes past it anyway.  Release: a reader that
    ** sees S sees the version installed before. */
    atomic_store_explicit(&db->write.last_visible_seq, j->seq,
                          memory_order_release);
    return rc;
}

/* ------------------------------------------------------------- the API */

static int ingest_check_call(ravel_db *db, const char *const *paths,
                             size_t n, int flags)
{
    if (flags & ~RAVEL_INGEST_MOVE)
        return rv_error(RAVEL_INVALID, "ravel_ingest: unknown flags 0x%x",
                        (unsigned)(flags & ~RAVEL_INGEST_MOVE));
    if (n == 0 || !paths)
        return rv_error(RAVEL_INVALID, "ravel_ingest: no files given");
    for (size_t i = 0; i < n; i++)
        if (!paths[i] || !*paths[i])
            return rv_error(RAVEL_INVALID, "ravel_ingest: path %zu is "
                            "empty", i);
    if (db->options.read_only)
        return rv_error(RAVEL_READONLY, "ravel_ingest: database %s was "
                        "opened with read_only=true", db->dir);
    if (db->write.ordering != RV_ORDERING_ORDERED)
        return rv_error(RAVEL_INVALID, "ravel_ingest: not supported with "
                        "write ordering %s (only the default, ordered)",
                        rv_write_ordering_name(db->write.ordering));
    if (rv_stop_code(&db->stop))
        return rv_write_refusal(db);
    return RAVEL_OK;
}

/* With RAVEL_INGEST_MOVE: the sources go, once the ingest is durable. */
static void ingest_remove_sources(ravel_db *db, const char *const *paths,
                                  size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (unlink(paths[i]) != 0)
            rv_db_log(db, "ingest: could not remove the source file %s: %s",
                      paths[i], strerror(errno));
}

static void ingest_log(struct rv_ingest_job *j)
{
    char where[128] = "";
    size_t used = 0;
    for (int l = 0; l < RV_NUM_LEVELS && used < sizeof where; l++)
        if (j->levels[l])
            used += (size_t)snprintf(where + used, sizeof where - used,
                                     " L%d:%d", l, j->levels[l]);
    if (j->fast)
        rv_db_log(j->db, "ingested %zu file(s) as they are (%d linked, %zu "
                  "copied), at sequence 0 (nothing overlapped them, no "
                  "snapshot); files per level:%s", j->n, j->linked,
                  j->n - (size_t)j->linked, where);
    else
        rv_db_log(j->db, "ingested %zu file(s), %llu entries, %llu bytes, "
                  "copied at sequence %llu; files per level:%s", j->n,
                  (unsigned long long)j->entries,
                  (unsigned long long)j->out.bytes,
                  (unsigned long long)j->seq, where);
}

static int ingest_run(ravel_db *db, const char *const *paths, size_t n,
                      int flags)
{
    struct rv_ingest_job j;
    memset(&j, 0, sizeof j);
    j.db = db;
    j.n = n;
    j.files = calloc(n, sizeof *j.files);
    j.guards = calloc(n, sizeof *j.guards);
    rv_table_output_init(&j.out, db, 0);
    int rc = j.files && j.guards ? RAVEL_OK
                                 : rv_error(RAVEL_NOMEM, "ravel_ingest: out "
                                            "of memory for %zu files", n);
    for (size_t i = 0; i < n && rc == RAVEL_OK; i++) {
        j.files[i].path = paths[i];
        rc = ingest_open_file(&j.files[i]);
    }
    if (rc == RAVEL_OK)
        rc = ingest_check_overlaps(&j);
    /* every block read and checked before writes are held up */
    if (rc == RAVEL_OK)
        rc = ingest_validate_files(j.files, n);
    j.move = (flags & RAVEL_INGEST_MOVE) != 0;
    if (rc == RAVEL_OK)
        rc = rv_write_exclusive(db, ingest_exclusive, &j);
    if (rc == RAVEL_OK) {
        ingest_log(&j);
        if (flags & RAVEL_INGEST_MOVE)
            ingest_remove_sources(db, paths, n);
    }
    rv_table_output_free(&j.out);
    for (size_t i = 0; j.files && i < n; i++)
        rv_table_close(j.files[i].t);
    free(j.files);
    free(j.guards);
    return rc;
}

int ravel_ingest(ravel_db *db, const char *const *paths, size_t n, int flags)
{
    int rc = rv_db_enter(db, "ravel_ingest");
    if (rc)
        return rc;
    rc = ingest_check_call(db, paths, n, flags);
    if (rc == RAVEL_OK)
        rc = ingest_run(db, paths, n, flags);
    rv_db_leave(db);
    return rc;
}
