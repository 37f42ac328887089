/*
** sst_writer.c -- the public table-file writer (ravel_sst_writer_open,
** _put, _delete, _finish, _free in ravel.h): a table file built outside
** any database, for ravel_ingest.
**
** The file is an ordinary table (table_format.h) whose footer carries
** file number RV_SST_EXTERNAL_NUMBER (0, a number no database file ever
** has: its checksums are seeded with it) and whose keys all carry
** sequence 0.  ravel_ingest (db/ingest.c) verifies it and rewrites it
** under the database's own number and the sequence it assigns; it is
** never named by a manifest as it is.
*/
#include "table/sst_writer.h"
#include "base/dbformat.h"
#include "base/options.h"
#include "table/table_builder.h"
#include "util/error.h"
#include "util/file.h"
#include "util/random.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ravel_sst_writer {
    char *path;
    int fd;                  /* -1 once closed */
    rv_table_builder *tb;    /* NULL once finished */
    char *ikey;              /* the last internal key added (user key +
                             ** tag), grown as needed */
    size_t ikey_len, ikey_cap;
    uint64_t added;          /* keys added */
    int status;              /* the first failure, kept */
    int finished;
};

/* Sets W's status to RC (the message already set) and returns it. */
static int sst_writer_fail(ravel_sst_writer *w, int rc)
{
    if (!w->status)
        w->status = rc;
    return rc;
}

int ravel_sst_writer_open(const char *path, const ravel_options *opts,
                          ravel_sst_writer **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_sst_writer_open: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return rv_error(RAVEL_INVALID, "ravel_sst_writer_open: no path");
    struct ravel_options defaults;
    if (!opts) {
        rv_options_init_defaults(&defaults);
        opts = &defaults;
    }
    struct rv_table_options to = {
        .block_size = opts->block_size,
        .block_restart_interval = opts->block_restart_interval,
        .bloom_bits_per_key = opts->bloom_bits_per_key,
        .compression = opts->compression,
        .session_id = rv_random_id(), /* this writer's (table_format.h) */
    };
    ravel_sst_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return rv_error(RAVEL_NOMEM, "out of memory for a table writer");
    }
    w->fd = rv_open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (w->fd < 0) {
        int err = errno;
        free(w->path);
        free(w);
        if (err == EEXIST)
            return rv_error(RAVEL_INVALID, "ravel_sst_writer_open: %s "
                            "exists (the writer never overwrites a file)",
                            path);
        return rv_error_errno(RAVEL_IOERR, err, "create table file %s", path);
    }
    int rc = rv_table_builder_new(w->fd, path, RV_SST_EXTERNAL_NUMBER, &to,
                                  &w->tb);
    if (rc) {
        ravel_sst_writer_free(w);
        return rc;
    }
    *out = w;
    return RAVEL_OK;
}

/* Checks that user key KEY comes after the last one added. */
static int sst_writer_check_order(ravel_sst_writer *w, const char *fn,
                                  const void *key, size_t klen)
{
    if (w->added == 0)
        return RAVEL_OK;
    int c = rv_user_key_compare(key, klen, w->ikey,
                                w->ikey_len - RV_TAG_SIZE);
    if (c > 0)
        return RAVEL_OK;
    return rv_error(RAVEL_INVALID, "%s: %s: the key at position %llu is %s "
                    "the key at position %llu (keys must be added in "
                    "strictly increasing bytewise order); not added", fn,
                    w->path, (unsigned long long)w->added,
                    c == 0 ? "equal to" : "less than",
                    (unsigned long long)(w->added - 1));
}

/* Keeps KEY with a sequence-0 tag of TYPE as the last internal key. */
static int sst_writer_set_key(ravel_sst_writer *w, const void *key,
                              size_t klen, int type)
{
    size_t need = klen + RV_TAG_SIZE;
    if (need > w->ikey_cap) {
        size_t cap = w->ikey_cap ? w->ikey_cap : 64;
        while (cap < need)
            cap *= 2;
        char *p = realloc(w->ikey, cap);
        if (!p)
            return rv_error(RAVEL_NOMEM, "out of memory writing %s",
                            w->path);
        w->ikey = p;
        w->ikey_cap = cap;
    }
    memcpy(w->ikey, key, klen);
    rv_put_fixed64(w->ikey + klen, rv_pack_tag(0, type));
    w->ikey_len = need;
    return RAVEL_OK;
}

static int sst_writer_add(ravel_sst_writer *w, const char *fn, int type,
                          const void *key, size_t klen, const void *val,
                          size_t vlen)
{
    if (!w)
        return rv_error(RAVEL_INVALID, "%s: writer is NULL", fn);
    if (w->status)
        return rv_error(w->status, "%s: %s: the writer failed before%s", fn,
                        w->path, w->finished ? " (or was finished)" : "");
    if (!key || klen == 0 || klen > RAVEL_MAX_KEY_SIZE)
        return rv_error(RAVEL_INVALID, "%s: %s: key of %zu bytes (1 .. %u "
                        "allowed)", fn, w->path, key ? klen : 0,
                        (unsigned)RAVEL_MAX_KEY_SIZE);
    if ((!val && vlen) || vlen > RAVEL_MAX_VALUE_SIZE)
        return rv_error(RAVEL_INVALID, "%s: %s: value of %zu bytes (at most "
                        "%u, and not NULL unless empty)", fn, w->path, vlen,
                        (unsigned)RAVEL_MAX_VALUE_SIZE);
    int rc = sst_writer_check_order(w, fn, key, klen);
    if (rc)
        return rc; /* the writer stays usable: nothing was added */
    rc = sst_writer_set_key(w, key, klen, type);
    if (rc == RAVEL_OK)
        rc = rv_table_builder_add(w->tb, w->ikey, w->ikey_len, val, vlen);
    if (rc)
        return sst_writer_fail(w, rc);
    w->added++;
    return RAVEL_OK;
}

int ravel_sst_writer_put(ravel_sst_writer *w, const void *key, size_t klen,
                         const void *val, size_t vlen)
{
    return sst_writer_add(w, "ravel_sst_writer_put", RV_TYPE_PUT, key, klen,
                          val ? val : "", vlen);
}

int ravel_sst_writer_delete(ravel_sst_writer *w, const void *key,
                            size_t klen)
{
    return sst_writer_add(w, "ravel_sst_writer_delete", RV_TYPE_DELETE, key,
                          klen, "", 0);
}

/* fsyncs the directory holding PATH. */
static int sst_writer_sync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return rv_sync_dir(".");
    if (slash == path)
        return rv_sync_dir("/");
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return rv_error(RAVEL_NOMEM, "out of memory syncing %s", path);
    int rc = rv_sync_dir(dir);
    free(dir);
    return rc;
}

int ravel_sst_writer_finish(ravel_sst_writer *w, uint64_t *entries)
{
    if (!w)
        return rv_error(RAVEL_INVALID, "ravel_sst_writer_finish: writer is "
                        "NULL");
    if (w->status)
        return rv_error(w->status, "ravel_sst_writer_finish: %s: the writer "
                        "failed before%s", w->path,
                        w->finished ? " (or was finished)" : "");
    if (w->added == 0) {
        int rc = rv_error(RAVEL_INVALID, "ravel_sst_writer_finish: %s: no "
                          "key was added (the file is removed)", w->path);
        return sst_writer_fail(w, rc);
    }
    struct rv_table_props props;
    uint64_t size = 0;
    int rc = rv_table_builder_finish(w->tb, &props, &size);
    rv_table_builder_free(w->tb);
    w->tb = NULL;
    if (rc == RAVEL_OK && close(w->fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "close %s", w->path);
    else if (rc)
        close(w->fd);
    w->fd = -1;
    if (rc == RAVEL_OK)
        rc = sst_writer_sync_parent(w->path);
    if (rc)
        return sst_writer_fail(w, rc);
    w->finished = 1;
    w->status = RAVEL_INVALID; /* nothing more may be added */
    if (entries)
        *entries = w->added;
    return RAVEL_OK;
}

void ravel_sst_writer_free(ravel_sst_writer *w)
{
    if (!w)
        return;
    if (w->tb)
        rv_table_builder_free(w->tb);
    if (w->fd >= 0)
        close(w->fd);
    if (!w->finished)
        unlink(w->path);
    free(w->ikey);
    free(w->path);
    free(w);
}
