/*
** table_output.c -- the table files of one flush or compaction
** (table_output.h).
*/
#include "db/table_output.h"
#include "base/dbformat.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rv_table_output_init(struct rv_table_output *o, ravel_db *db, int level)
{
    memset(o, 0, sizeof *o);
    o->db = db;
    o->level = level;
    o->fd = -1;
}

static uint64_t table_output_new_number(ravel_db *db)
{
    rv_mutex_lock(&db->mu.lock);
    uint64_t n = db->mu.files.next_file_number++;
    rv_mutex_unlock(&db->mu.lock);
    return n;
}

static int table_output_start(struct rv_table_output *o)
{
    ravel_db *db = o->db;
    o->number = table_output_new_number(db);
    int rc = rv_table_file_path(o->path, db->dir, o->number);
    if (rc)
        return rc;
    o->fd = rv_open(o->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o->fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "create table file %s",
                              o->path);
    struct rv_table_options to = {
        .block_size = db->options.block_size,
        .block_restart_interval = db->options.block_restart_interval,
        .bloom_bits_per_key = db->options.bloom_bits_per_key,
        .compression = db->options.compression,
        .session_id = db->session_id,
    };
    o->smallest.len = 0;
    o->largest.len = 0;
    return rv_table_builder_new(o->fd, o->path, o->number, &to, &o->tb);
}

/* Closes and deletes the file being written, if any. */
static void table_output_abandon(struct rv_table_output *o)
{
    if (o->tb)
        rv_table_builder_free(o->tb);
    o->tb = NULL;
    if (o->fd >= 0) {
        close(o->fd);
        unlink(o->path);
    }
    o->fd = -1;
}

static int table_output_list(struct rv_table_output *o,
                             const struct rv_file_meta *m)
{
    if (o->n == o->cap) {
        int cap = o->cap ? o->cap * 2 : 4;
        struct rv_file_meta *f = realloc(o->files, (size_t)cap * sizeof *f);
        if (!f)
            return rv_error(RAVEL_NOMEM, "out of memory listing the table "
                            "files written");
        o->files = f;
        o->cap = cap;
    }
    o->files[o->n++] = *m;
    return RAVEL_OK;
}

/* The finished builder's bounds as the file's: its first and last keys,
** widened over its range tombstones. */
static int table_output_take_bounds(struct rv_table_output *o)
{
    const char *s, *l;
    size_t sl, ll;
    rv_table_builder_bounds(o->tb, &s, &sl, &l, &ll);
    int rc = RAVEL_OK;
    if (s && (sl != o->smallest.len ||
              memcmp(s, o->smallest.data, sl) != 0))
        rc = rv_key_buf_set(&o->smallest, s, sl);
    if (rc == RAVEL_OK && l &&
        (ll != o->largest.len || memcmp(l, o->largest.data, ll) != 0))
        rc = rv_key_buf_set(&o->largest, l, ll);
    return rc;
}

int rv_table_output_cut(struct rv_table_output *o)
{
    if (!o->tb)
        return RAVEL_OK;
    struct rv_table_props props;
    memset(&props, 0, sizeof props);
    uint64_t size = 0;
    int rc = rv_table_builder_finish(o->tb, &props, &size);
    if (rc == RAVEL_OK)
        rc = table_output_take_bounds(o);
    rv_table_builder_free(o->tb);
    o->tb = NULL;
    if (rc == RAVEL_OK && close(o->fd) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "close %s", o->path);
    else if (rc)
        close(o->fd);
    o->fd = -1;
    struct rv_file_meta m = {
        .level = o->level, .number = o->number, .size = size,
        .smallest = o->smallest.data, .smallest_len = o->smallest.len,
        .largest = o->largest.data, .largest_len = o->largest.len,
        .smallest_seq = props.smallest_seq, .largest_seq = props.largest_seq,
        .entries = props.entries,
    };
    if (rc == RAVEL_OK) {
        /* the listed meta takes the key buffers */
        rc = table_output_list(o, &m);
        if (rc == RAVEL_OK) {
            memset(&o->smallest, 0, sizeof o->smallest);
            memset(&o->largest, 0, sizeof o->largest);
            o->bytes += size;
            o->entries += props.entries;
        }
    }
    if (rc)
        unlink(o->path);
    return rc;
}

int rv_table_output_add(struct rv_table_output *o, const char *k,
                        size_t klen, const char *v, size_t vlen)
{
    int rc = RAVEL_OK;
    if (!o->tb)
        rc = table_output_start(o);
    /* the first entry (a file begun by a range tombstone has none yet) */
    if (rc == RAVEL_OK && o->smallest.len == 0)
        rc = rv_key_buf_set(&o->smallest, k, klen);
    if (rc == RAVEL_OK)
        rc = rv_table_builder_add(o->tb, k, klen, v, vlen);
    if (rc == RAVEL_OK)
        rc = rv_key_buf_set(&o->largest, k, klen);
    return rc;
}

int rv_table_output_add_range_del(struct rv_table_output *o,
                                  const char *begin, size_t blen,
                                  const char *end, size_t elen, uint64_t seq)
{
    int rc = o->tb ? RAVEL_OK : table_output_start(o);
    if (rc == RAVEL_OK)
        rc = rv_table_builder_add_range_del(o->tb, begin, blen, end, elen,
                                            seq);
    return rc;
}

uint64_t rv_table_output_file_size(const struct rv_table_output *o)
{
    return o->tb ? rv_table_builder_size(o->tb) : 0;
}

int rv_table_output_new_user_key(const struct rv_table_output *o,
                                 const char *k, size_t klen)
{
    return !o->tb || o->largest.len == 0 ||
           rv_user_key_compare(k, klen - RV_TAG_SIZE, o->largest.data,
                               o->largest.len - RV_TAG_SIZE) != 0;
}

void rv_table_output_discard(struct rv_table_output *o)
{
    table_output_abandon(o);
    for (int i = 0; i < o->n; i++) {
        char path[RV_PATH_MAX];
        if (rv_table_file_path(path, o->db->dir, o->files[i].number) == 0)
            unlink(path);
    }
}

void rv_table_output_free(struct rv_table_output *o)
{
    table_output_abandon(o);
    for (int i = 0; i < o->n; i++) {
        free(o->files[i].smallest);
        free(o->files[i].largest);
    }
    free(o->files);
    free(o->smallest.data);
    free(o->largest.data);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}
