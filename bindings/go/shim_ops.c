/*
** shim_ops.c -- the shims declared in shim_ops.h (issue 22's calls).
*/
#include <string.h>

#include "shim_ops.h"

/* A malloc'd copy of this thread's current ravel message, or NULL. */
static char *ops_message(void)
{
    size_t len = ravel_errmsg_r(NULL, 0);
    char *msg = malloc(len + 1);
    if (msg)
        ravel_errmsg_r(msg, len + 1);
    return msg;
}

static shim_status ops_status(int rc)
{
    shim_status s = {rc, NULL};
    if (rc != RAVEL_OK)
        s.msg = ops_message();
    return s;
}

static shim_handle ops_handle(int rc, void *handle)
{
    shim_handle h = {rc, NULL, rc == RAVEL_OK ? handle : NULL};
    if (rc != RAVEL_OK)
        h.msg = ops_message();
    return h;
}

static shim_u64 ops_number(int rc, uint64_t n)
{
    shim_u64 v = {rc, NULL, rc == RAVEL_OK ? n : 0};
    if (rc != RAVEL_OK)
        v.msg = ops_message();
    return v;
}

/* ------------------------------------- readers, checkpoints, backups */

shim_status shim_catch_up(ravel_db *db)
{
    return ops_status(ravel_catch_up(db));
}

shim_status shim_checkpoint(ravel_db *db, const char *dir)
{
    return ops_status(ravel_checkpoint(db, dir));
}

shim_u64 shim_backup_create(ravel_db *db, const char *root)
{
    uint64_t id = 0;
    int rc = ravel_backup_create(db, root, &id);
    return ops_number(rc, id);
}

/* The ids ravel_backup_list gives, gathered in a growing array. */
struct ops_ids {
    uint64_t *ids;
    size_t n, cap;
    int failed;  /* an allocation failed: the listing stopped */
};

static int ops_collect_id(void *ctx, uint64_t id)
{
    struct ops_ids *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        uint64_t *grown = realloc(l->ids, cap * sizeof *grown);
        if (!grown) {
            l->failed = 1;
            return RAVEL_NOMEM;
        }
        l->ids = grown;
        l->cap = cap;
    }
    l->ids[l->n++] = id;
    return 0;
}

shim_value shim_backup_list(const char *root)
{
    struct ops_ids l = {NULL, 0, 0, 0};
    int rc = ravel_backup_list(root, ops_collect_id, &l);
    shim_value v = {rc, NULL, NULL, 0};
    if (rc != RAVEL_OK) {
        /* the callback's RAVEL_NOMEM sets no message of ravel's */
        v.msg = l.failed ? NULL : ops_message();
        free(l.ids);
        return v;
    }
    v.data = l.ids;
    v.len = l.n;
    return v;
}

shim_u64 shim_backup_info(const char *root, uint64_t id, int what)
{
    uint64_t value = 0;
    int rc = ravel_backup_info(root, id, what, &value);
    return ops_number(rc, value);
}

shim_status shim_backup_verify(const char *root, uint64_t id)
{
    return ops_status(ravel_backup_verify(root, id));
}

shim_status shim_backup_restore(const char *root, uint64_t id,
                                const char *dir)
{
    return ops_status(ravel_backup_restore(root, id, dir));
}

shim_status shim_backup_purge(const char *root, int keep)
{
    return ops_status(ravel_backup_purge(root, keep));
}

shim_status shim_backup_write_file(ravel_db *db, const char *path)
{
    return ops_status(ravel_backup_write_file(db, path));
}

shim_status shim_backup_write_fd(ravel_db *db, int fd)
{
    return ops_status(ravel_backup_write_fd(db, fd));
}

shim_status shim_backup_restore_file(const char *path, const char *dir)
{
    return ops_status(ravel_backup_restore_file(path, dir));
}

shim_status shim_backup_restore_fd(int fd, const char *dir)
{
    return ops_status(ravel_backup_restore_fd(fd, dir));
}

/* ------------------------------------------------------ the change feed */

shim_op shim_batch_next_op(const ravel_batch *b, size_t pos)
{
    shim_op o;
    memset(&o, 0, sizeof o);
    o.pos = pos;
    o.rc = ravel_batch_next_op(b, &o.pos, &o.op, &o.key, &o.klen, &o.val,
                               &o.vlen);
    if (o.rc != RAVEL_OK && o.rc != RAVEL_NOTFOUND)
        o.msg = ops_message();
    return o;
}

shim_handle shim_batch_from_data(const void *data, size_t len)
{
    static const char empty[1];
    ravel_batch *b = NULL;
    int rc = ravel_batch_from_data(data ? data : empty, len, &b);
    return ops_handle(rc, b);
}

shim_handle shim_updates_since(ravel_db *db, uint64_t seq)
{
    ravel_updates *u = NULL;
    int rc = ravel_updates_since(db, seq, 0, &u);
    return ops_handle(rc, u);
}

shim_status shim_updates_next(ravel_updates *u)
{
    int rc = ravel_updates_next(u);
    if (rc == RAVEL_NOTFOUND) {
        shim_status s = {rc, NULL};
        return s;
    }
    return ops_status(rc);
}

/* --------------------------------------------------------- bulk ingest */

shim_handle shim_sst_writer_open(const char *path, const ravel_options *o)
{
    ravel_sst_writer *w = NULL;
    int rc = ravel_sst_writer_open(path, o, &w);
    return ops_handle(rc, w);
}

shim_status shim_sst_writer_put(ravel_sst_writer *w, const void *key,
                                size_t klen, const void *val, size_t vlen)
{
    static const char empty[1];
    return ops_status(ravel_sst_writer_put(w, key ? key : empty, klen,
                                           val ? val : empty, vlen));
}

shim_status shim_sst_writer_delete(ravel_sst_writer *w, const void *key,
                                   size_t klen)
{
    static const char empty[1];
    return ops_status(ravel_sst_writer_delete(w, key ? key : empty, klen));
}

shim_u64 shim_sst_writer_finish(ravel_sst_writer *w)
{
    uint64_t entries = 0;
    int rc = ravel_sst_writer_finish(w, &entries);
    return ops_number(rc, entries);
}

shim_status shim_ingest(ravel_db *db, const char *const *paths, size_t n,
                        int flags)
{
    return ops_status(ravel_ingest(db, paths, n, flags));
}

/* -------------------------------------------------------------- repair */

/* The report's lines, each "K line\n", gathered as ravel makes them. */
struct ops_text {
    char *text;
    size_t len, cap;
    int failed;
};

static void ops_collect_line(void *ctx, int kind, const char *line)
{
    struct ops_text *t = ctx;
    size_t n = strlen(line);
    if (t->failed)
        return;
    if (t->len + n + 4 > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (t->len + n + 4 > cap)
            cap *= 2;
        char *grown = realloc(t->text, cap);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->text = grown;
        t->cap = cap;
    }
    t->text[t->len++] = (char)('0' + (kind >= 0 && kind <= 9 ? kind : 0));
    t->text[t->len++] = ' ';
    memcpy(t->text + t->len, line, n);
    t->len += n;
    t->text[t->len++] = '\n';
    t->text[t->len] = '\0';
}

shim_value shim_repair(const char *dir, const ravel_options *o)
{
    struct ops_text t = {NULL, 0, 0, 0};
    int rc = ravel_repair(dir, o, ops_collect_line, &t, NULL);
    shim_value v = {rc, NULL, NULL, 0};
    if (rc == RAVEL_OK && t.failed)
        rc = v.rc = RAVEL_NOMEM;  /* repaired, but the report was lost */
    if (rc != RAVEL_OK) {
        v.msg = t.failed ? NULL : ops_message();
        free(t.text);
        return v;
    }
    v.data = t.text;
    v.len = t.len;
    return v;
}
