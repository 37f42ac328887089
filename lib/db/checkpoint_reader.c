/*
** checkpoint_reader.c -- the plan of a checkpoint or backup made from a
** reader handle (read_only=true, reader.c): the state the reader holds
** after a catch-up, copied without writing anything into the source
** directory.
**
** A reader holds its table files open (the writer deletes their names at
** will) and has no WAL segment it could name (it replays the log into its
** memtable, and the writer deletes or recycles segments once flushed).
** So, after a catch-up (every write the writer had acknowledged to its WAL
** before the call), with no other catch-up running, the plan takes:
**   - the table files of the reader's version, a reference to the file set
**     keeping the reader's descriptors open: each item carries its
**     descriptor (rv_cp_item.fd), so checkpoint.c links it by name only
**     while the name is still that file and copies from the descriptor
**     where the writer deleted it, and backups read it through it;
**   - the reader's memtable, its entries up to the version's sequence
**     (later catch-ups add above it), written as one level-0 table file
**     into an anonymous file (memfd_create; an unlinked temporary file
**     where there is none) -- never into the source directory;
**   - IDENTITY (read), and a manifest naming exactly those files, the
**     version's sequence as the last sequence, and a log number above
**     every file number the reader knows, so the copy opens with no WAL
**     segment and starts its own; CURRENT.
** No write is made to the source: it is read only (CURRENT, the manifest
** and the WAL by the catch-up, IDENTITY and the table files here).
**
** Prepared, uncommitted transactions (two-phase commit) are not in a
** reader's state -- a reader applies a transaction at its commit record
** -- so they are not in the copy either: a copy made from a reader holds
** committed writes only (the writer's own checkpoint carries them).
*/
#include "db/checkpoint.h"
#include "db/reader.h"
#include "base/dbformat.h"
#include "memtable/range_del.h"
#include "table/table_builder.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* What the plan's callback works with. */
struct cpr_ctx {
    struct rv_cp_plan *p;
    struct rv_file_meta mem;     /* the memtable's table (number 0: none) */
};

/* An anonymous file for the memtable's table: in memory where the system
** has memfd_create, else an unlinked file in TMPDIR (or /tmp). */
static int cpr_anonymous_file(void)
{
#ifdef MFD_CLOEXEC
    int fd = rv_fd_above_stdio(
        memfd_create("ravel-checkpoint-memtable", MFD_CLOEXEC));
    if (fd >= 0)
        return fd;
#endif
    const char *dir = getenv("TMPDIR");
    char path[RV_PATH_MAX];
    snprintf(path, sizeof path, "%s/ravel-memtable-XXXXXX",
             dir && *dir ? dir : "/tmp");
    int tmp = mkostemp(path, O_CLOEXEC);
    if (tmp >= 0)
        unlink(path);
    return rv_fd_above_stdio(tmp);
}

static int cpr_key_copy(char **dst, size_t *dlen, const char *k, size_t klen)
{
    free(*dst);
    *dst = malloc(klen ? klen : 1);
    if (!*dst)
        return rv_error(RAVEL_NOMEM, "out of memory writing a memtable out");
    memcpy(*dst, k, klen);
    *dlen = klen;
    return RAVEL_OK;
}

/* Adds MEM's entries of sequence SEQ or below to builder TB; fills the
** keys of M. */
static int cpr_fill(rv_table_builder *tb, rv_memtable *mem, uint64_t seq,
                    struct rv_file_meta *m)
{
    if (rv_range_dels_count(rv_memtable_range_dels(mem)) > 0)
        return rv_error(RAVEL_INVALID, "ravel_checkpoint: a reader cannot "
                        "write out a memtable holding range deletions; take "
                        "the checkpoint from the writer");
    struct rv_iter *it = rv_memtable_iter_new(mem);
    if (!it)
        return rv_error(RAVEL_NOMEM, "out of memory for a memtable "
                        "iterator");
    int rc = RAVEL_OK;
    const char *last = NULL; /* in the memtable's arena, which MEM keeps */
    size_t last_len = 0;
    for (it->ops->seek_to_first(it); rc == RAVEL_OK && it->ops->valid(it);
         it->ops->next(it)) {
        size_t klen, vlen;
        const char *k = it->ops->key(it, &klen);
        const char *v = it->ops->value(it, &vlen);
        if (klen < RV_TAG_SIZE)
            continue;
        uint64_t tag = rv_get_fixed64(k + klen - RV_TAG_SIZE);
        if (rv_tag_sequence(tag) > seq)
            continue; /* a later catch-up's, not published with SEQ */
        if (!m->smallest)
            rc = cpr_key_copy(&m->smallest, &m->smallest_len, k, klen);
        if (rc == RAVEL_OK)
            rc = rv_table_builder_add(tb, k, klen, v, vlen);
        last = k;
        last_len = klen;
    }
    if (rc == RAVEL_OK)
        rc = it->ops->status(it);
    if (rc == RAVEL_OK && last)
        rc = cpr_key_copy(&m->largest, &m->largest_len, last, last_len);
    it->ops->destroy(it);
    return rc;
}

/* MEM's entries up to SEQ as table file NUMBER, an item of the plan (none
** when there are no such entries); its meta into C->mem. */
static int cpr_add_memtable(struct cpr_ctx *c, rv_memtable *mem,
                            uint64_t seq, uint64_t number)
{
    ravel_db *db = c->p->db;
    char name[32];
    rv_table_file_name(name, sizeof name, number);
    int fd = cpr_anonymous_file();
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "creating an anonymous "
                              "file for the reader's memtable (%s)", name);
    struct rv_table_options to = {
        .block_size = db->options.block_size,
        .block_restart_interval = db->options.block_restart_interval,
        .bloom_bits_per_key = db->options.bloom_bits_per_key,
        .compression = db->options.compression,
        .session_id = db->session_id,
    };
    struct rv_file_meta *m = &c->mem;
    rv_table_builder *tb = NULL;
    struct rv_table_props props;
    memset(&props, 0, sizeof props);
    uint64_t size = 0;
    int rc = rv_table_builder_new(fd, name, number, &to, &tb);
    if (rc == RAVEL_OK)
        rc = cpr_fill(tb, mem, seq, m);
    if (rc == RAVEL_OK && m->smallest)
        rc = rv_table_builder_finish(tb, &props, &size);
    if (tb)
        rv_table_builder_free(tb);
    struct rv_cp_item *it = NULL;
    if (rc == RAVEL_OK && m->smallest &&
        !(it = rv_checkpoint_add(c->p, RV_CP_TABLE, name)))
        rc = rv_error(RAVEL_NOMEM, "out of memory planning a checkpoint");
    if (rc || !it) {
        close(fd);
        free(m->smallest);
        free(m->largest);
        memset(m, 0, sizeof *m);
        return rc;
    }
    it->fd = fd;
    it->own_fd = 1;
    it->size = size;
    m->level = 0;
    m->number = number;
    m->size = size;
    m->smallest_seq = props.smallest_seq;
    m->largest_seq = props.largest_seq;
    m->entries = props.entries;
    return RAVEL_OK;
}

static uint64_t cpr_max_table_number(const struct rv_files *fs)
{
    uint64_t top = 0;
    for (int l = 0; l < RV_NUM_LEVELS; l++)
        for (int i = 0; i < fs->n[l]; i++)
            if (fs->level[l][i]->meta.number > top)
                top = fs->level[l][i]->meta.number;
    return top;
}

/* After the catch-up, no other one running: the plan of the state. */
static int cpr_then(ravel_db *db, void *arg)
    RV_REQUIRES(db->reader.catch_up);
static int cpr_then(ravel_db *db, void *arg)
{
    struct cpr_ctx *c = arg;
    struct rv_cp_plan *p = c->p;
    struct rv_version *v = rv_db_ref_version(db);
    p->files = v->files;
    rv_files_ref(p->files);
    p->sequence = v->visible_seq;
    uint64_t top = rv_reader_top_number_locked(db);
    uint64_t files_top = cpr_max_table_number(p->files);
    if (files_top > top)
        top = files_top;
    int rc = rv_checkpoint_add_tables(p);
    if (rc == RAVEL_OK && v->mem)
        rc = cpr_add_memtable(c, v->mem, p->sequence, top + 1);
    /* a reader's versions have no immutable memtable (reader_install) */
    rv_version_unref(v);
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_add_copy_of(p, RV_FILE_IDENTITY);
    /* top+1: the memtable's table; top+2: the manifest; top+3: the log
    ** number, no segment's: the copy's first segment */
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_add_manifest(p, top + 2, top + 3,
                                        c->mem.number ? &c->mem : NULL);
    return rc;
}

int rv_checkpoint_plan_reader(ravel_db *db, struct rv_cp_plan *p)
{
    memset(p, 0, sizeof *p);
    p->db = db;
    struct cpr_ctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    int rc = rv_reader_catch_up_then(db, cpr_then, &c);
    free(c.mem.smallest);
    free(c.mem.largest);
    if (rc)
        rv_checkpoint_plan_free(p);
    return rc;
}
