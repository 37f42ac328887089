/*
** prepared.c -- prepared transactions: the list, the files, the markers
** at replay (prepared.h).
*/
#include "db/prepared.h"
#include "base/batchrepr.h"
#include "base/dbformat.h"
#include "db/batch.h"
#include "util/coding.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"

#include <xxhash.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREPARED_MAGIC "RVPREP1\n"
#define PREPARED_MAGIC_LEN 8

void rv_prepared_init(struct rv_db_prepared *p)
{
    rv_mutex_init(&p->lock);
    p->list = NULL;
    p->next_number = 1;
}

static void prepared_free_entry(struct rv_prepared_txn *e)
{
    free(e->name);
    free(e->rep);
    free(e);
}

void rv_prepared_destroy(struct rv_db_prepared *p)
{
    struct rv_prepared_txn *e = p->list, *next;
    for (; e; e = next) {
        next = e->next;
        prepared_free_entry(e);
    }
    p->list = NULL;
    rv_mutex_destroy(&p->lock);
}

/* ---------------------------------------------------------- the format */

#define PREPARED_FIXED (PREPARED_MAGIC_LEN + 4 + 8 + 8 + 8)

/* Checks and splits the LEN bytes of file PATH: name and rep point into
** DATA.  RAVEL_CORRUPT naming what is wrong. */
static int prepared_parse(const char *path, const char *data, size_t len,
                          struct rv_prepared_txn *e, const char **name,
                          uint32_t *name_len, const char **rep)
{
    if (len < PREPARED_FIXED)
        return rv_error(RAVEL_CORRUPT, "%s: %zu bytes is shorter than a "
                        "prepared transaction's file can be", path, len);
    if (memcmp(data, PREPARED_MAGIC, PREPARED_MAGIC_LEN) != 0)
        return rv_error(RAVEL_CORRUPT, "%s: not a prepared transaction's "
                        "file (bad magic)", path);
    if (rv_get_fixed64(data + len - 8) != XXH3_64bits(data, len - 8))
        return rv_error(RAVEL_CORRUPT, "%s: checksum mismatch: the prepared "
                        "transaction's file is damaged", path);
    uint32_t nlen = rv_get_fixed32(data + PREPARED_MAGIC_LEN);
    if (nlen == 0 || nlen > 255 || PREPARED_FIXED + nlen > len)
        return rv_error(RAVEL_CORRUPT, "%s: bad name length %u", path, nlen);
    *name = data + PREPARED_MAGIC_LEN + 4;
    *name_len = nlen;
    e->number = rv_get_fixed64(*name + nlen);
    e->len = rv_get_fixed64(*name + nlen + 8);
    if (e->len != len - PREPARED_FIXED - nlen)
        return rv_error(RAVEL_CORRUPT, "%s: its batch is said to be %llu "
                        "bytes, the file holds %zu", path,
                        (unsigned long long)e->len,
                        len - PREPARED_FIXED - nlen);
    *rep = *name + nlen + 16;
    return RAVEL_OK;
}

/* A new entry: NAME (NLEN bytes) and a copy of REP (LEN bytes) when REP. */
static struct rv_prepared_txn *prepared_new_entry(const char *name,
                                                  size_t nlen,
                                                  const char *rep, size_t len)
{
    struct rv_prepared_txn *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->name = malloc(nlen + 1);
    e->rep = rep ? malloc(len ? len : 1) : NULL;
    if (!e->name || (rep && !e->rep)) {
        prepared_free_entry(e);
        return NULL;
    }
    memcpy(e->name, name, nlen);
    e->name[nlen] = '\0';
    if (rep) {
        memcpy(e->rep, rep, len);
        e->len = len;
    }
    return e;
}

/* Adds E to P's list; P's lock held. */
static void prepared_add(struct rv_db_prepared *p, struct rv_prepared_txn *e)
    RV_REQUIRES(p->lock);
static void prepared_add(struct rv_db_prepared *p, struct rv_prepared_txn *e)
{
    e->next = p->list;
    p->list = e;
    if (e->number >= p->next_number)
        p->next_number = e->number + 1;
}

/* Reads file NUMBER of DIR into a new entry of P. */
static int prepared_load_one(struct rv_db_prepared *p, const char *dir,
                             uint64_t number)
{
    char fname[40], path[RV_PATH_MAX];
    rv_prepared_file_name(fname, sizeof fname, number);
    int rc = rv_path_join(path, dir, fname);
    char *data = NULL;
    size_t len = 0;
    if (rc == RAVEL_OK)
        rc = rv_read_file(path, &data, &len, NULL);
    struct rv_prepared_txn parsed;
    memset(&parsed, 0, sizeof parsed);
    const char *name = NULL, *rep = NULL;
    uint32_t nlen = 0;
    if (rc == RAVEL_OK)
        rc = prepared_parse(path, data, len, &parsed, &name, &nlen, &rep);
    if (rc == RAVEL_OK && parsed.number != number)
        rc = rv_error(RAVEL_CORRUPT, "%s: holds transaction number %llu",
                      path, (unsigned long long)parsed.number);
    if (rc == RAVEL_OK && rv_batch_validate(rep, parsed.len) != RAVEL_OK)
        rc = rv_error(RAVEL_CORRUPT, "%s: its batch is malformed: %s", path,
                      rv_errmsg_get());
    struct rv_prepared_txn *e = NULL;
    if (rc == RAVEL_OK &&
        !(e = prepared_new_entry(name, nlen, rep, parsed.len)))
        rc = rv_error(RAVEL_NOMEM, "out of memory loading %s", path);
    if (rc == RAVEL_OK) {
        e->number = number;
        e->spilled = 1;
        rv_mutex_lock(&p->lock);
        prepared_add(p, e);
        rv_mutex_unlock(&p->lock);
    }
    free(data);
    return rc;
}

/* Deletes DIR/NAME.tmp if NAME is a prepared file's name (a spill that
** never got renamed into place). */
static void prepared_delete_tmp(const char *dir, const char *name)
{
    size_t n = strlen(name);
    char base[64], path[RV_PATH_MAX];
    uint64_t number;
    if (n <= 4 || n - 4 >= sizeof base || strcmp(name + n - 4, ".tmp") != 0)
        return;
    memcpy(base, name, n - 4);
    base[n - 4] = '\0';
    if (rv_parse_prepared_file_name(base, &number) &&
        rv_path_join(path, dir, name) == RAVEL_OK)
        unlink(path);
}

int rv_prepared_load(struct rv_db_prepared *p, const char *dir,
                     int read_only)
{
    DIR *d = opendir(dir);
    if (!d)
        return rv_error_errno(RAVEL_IOERR, errno, "opendir %s", dir);
    int rc = RAVEL_OK;
    struct dirent *de;
    while (rc == RAVEL_OK && (de = readdir(d)) != NULL) {
        uint64_t number;
        if (!read_only)
            prepared_delete_tmp(dir, de->d_name);
        if (rv_parse_prepared_file_name(de->d_name, &number))
            rc = prepared_load_one(p, dir, number);
    }
    closedir(d);
    return rc;
}

/* Writes E's file into DIR from REP (LEN bytes, COUNT ops: its header
** may still count a marker appended after them). */
static int prepared_write_file(const char *dir,
                               const struct rv_prepared_txn *e,
                               const char *rep, size_t len, uint32_t count)
{
    char header[RV_BATCH_HEADER_SIZE];
    if (len < sizeof header)
        return rv_error(RAVEL_INVALID, "prepared transaction '%s': a %zu-byte "
                        "batch", e->name, len);
    rv_put_fixed64(header, 0);
    rv_put_fixed32(header + 8, count);
    size_t nlen = strlen(e->name);
    char head[PREPARED_MAGIC_LEN + 4], nums[16], sum[8], fname[40];
    memcpy(head, PREPARED_MAGIC, PREPARED_MAGIC_LEN);
    rv_put_fixed32(head + PREPARED_MAGIC_LEN, (uint32_t)nlen);
    rv_put_fixed64(nums, e->number);
    rv_put_fixed64(nums + 8, len);
    XXH3_state_t *h = XXH3_createState();
    if (!h)
        return rv_error(RAVEL_NOMEM, "out of memory writing prepared "
                        "transaction '%s'", e->name);
    XXH3_64bits_reset(h);
    XXH3_64bits_update(h, head, sizeof head);
    XXH3_64bits_update(h, e->name, nlen);
    XXH3_64bits_update(h, nums, sizeof nums);
    XXH3_64bits_update(h, header, sizeof header);
    XXH3_64bits_update(h, rep + sizeof header, len - sizeof header);
    rv_put_fixed64(sum, XXH3_64bits_digest(h));
    XXH3_freeState(h);
    struct rv_file_part parts[] = {
        {head, sizeof head}, {e->name, nlen}, {nums, sizeof nums},
        {header, sizeof header}, {rep + sizeof header, len - sizeof header},
        {sum, sizeof sum},
    };
    rv_prepared_file_name(fname, sizeof fname, e->number);
    return rv_replace_file_parts(dir, fname, parts, 6);
}

/* Deletes file NUMBER of DIR (not syncing DIR).  RAVEL_IOERR, or RAVEL_OK
** if it is gone. */
static int prepared_unlink(const char *dir, uint64_t number)
{
    char name[40], path[RV_PATH_MAX];
    rv_prepared_file_name(name, sizeof name, number);
    int rc = rv_path_join(path, dir, name);
    if (rc == RAVEL_OK && unlink(path) != 0 && errno != ENOENT)
        rc = rv_error_errno(RAVEL_IOERR, errno, "delete %s", path);
    return rc;
}

/* ------------------------------------------------------------ the list */

/* The entry of NUMBER, or NULL; P's lock held. */
static struct rv_prepared_txn *prepared_find(struct rv_db_prepared *p,
                                             uint64_t number)
    RV_REQUIRES(p->lock);
static struct rv_prepared_txn *prepared_find(struct rv_db_prepared *p,
                                             uint64_t number)
{
    for (struct rv_prepared_txn *e = p->list; e; e = e->next)
        if (e->number == number)
            return e;
    return NULL;
}

/* 1 if E is waiting: prepared, neither committed nor rolled back. */
static int prepared_waiting(const struct rv_prepared_txn *e)
{
    return !e->committed && !e->rolled_back;
}

/* The waiting entry named NAME, or NULL; P's lock held. */
static struct rv_prepared_txn *prepared_find_name(struct rv_db_prepared *p,
                                                  const char *name)
    RV_REQUIRES(p->lock);
static struct rv_prepared_txn *prepared_find_name(struct rv_db_prepared *p,
                                                  const char *name)
{
    for (struct rv_prepared_txn *e = p->list; e; e = e->next)
        if (prepared_waiting(e) && strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* Unlinks E from P's list and frees it; P's lock held. */
static void prepared_remove(struct rv_db_prepared *p,
                            struct rv_prepared_txn *e) RV_REQUIRES(p->lock);
static void prepared_remove(struct rv_db_prepared *p,
                            struct rv_prepared_txn *e)
{
    for (struct rv_prepared_txn **at = &p->list; *at; at = &(*at)->next)
        if (*at == e) {
            *at = e->next;
            prepared_free_entry(e);
            return;
        }
}

/* ------------------------------------------------------------- replay */

int rv_prepared_replay_record(struct rv_db_prepared *p, const char *rep,
                              size_t len)
{
    uint32_t count = rv_batch_rep_count(rep);
    size_t off = RV_BATCH_HEADER_SIZE, at = 0;
    struct rv_batch_op op, marker;
    int found = 0;
    for (uint32_t i = 0; i < count; i++) {
        at = off;
        int rc = rv_batch_decode_op(rep, len, &off, i, &op);
        if (rc)
            return -rc;
        if (op.type == RV_TYPE_TXN_PREPARE) {
            marker = op;
            found = 1;
            break;
        }
    }
    if (!found)
        return 0;
    if (marker.vlen != 8 || marker.klen == 0 || marker.klen > 255 ||
        off != len)
        return -rv_error(RAVEL_CORRUPT, "batch: a prepare marker that is "
                         "not its batch's last op, or has a bad value");
    uint64_t number = rv_get_fixed64(marker.val);
    struct rv_prepared_txn *e =
        prepared_new_entry(marker.key, marker.klen, rep, at);
    if (!e)
        return -rv_error(RAVEL_NOMEM, "out of memory replaying a prepared "
                         "transaction");
    rv_put_fixed32(e->rep + 8, count - 1); /* without its marker */
    rv_put_fixed64(e->rep, 0);
    e->number = number;
    rv_mutex_lock(&p->lock);
    if (prepared_find(p, number)) /* its file was read already */
        prepared_free_entry(e);
    else
        prepared_add(p, e);
    rv_mutex_unlock(&p->lock);
    return 1;
}

void rv_prepared_replayed_marker(struct rv_db_prepared *p, int type,
                                 uint64_t number)
{
    rv_mutex_lock(&p->lock);
    if (number >= p->next_number) /* never given out again: a marker of it
                                  ** may be replayed at the next open too */
        p->next_number = number + 1;
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e) {
        if (type == RV_TYPE_TXN_COMMIT) {
            e->committed = 1;
            e->commit_segment = UINT64_MAX; /* rv_prepared_replay_done */
        } else {
            e->rolled_back = 1;
        }
        free(e->rep);
        e->rep = NULL;
    }
    rv_mutex_unlock(&p->lock);
}

void rv_prepared_replay_done(struct rv_db_prepared *p, const char *dir,
                             uint64_t last_segment, int read_only)
{
    int deleted = 0;
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = p->list, *next;
    for (; e; e = next) {
        next = e->next;
        if (e->committed && e->commit_segment == UINT64_MAX)
            e->commit_segment = last_segment;
        if (!e->rolled_back || read_only)
            continue;
        if (e->spilled && prepared_unlink(dir, e->number) != RAVEL_OK)
            continue; /* the next open tries again */
        deleted += e->spilled;
        prepared_remove(p, e);
    }
    rv_mutex_unlock(&p->lock);
    if (deleted)
        (void)rv_sync_dir(dir);
}

/* ----------------------------------------------------------- a handle's */

/* Appends to B a marker of TYPE naming E, and reads E's writes from B's
** bytes before it from then on; *LEN and *COUNT receive B as it was.  P's
** lock held. */
static int prepared_mark_locked(struct rv_db_prepared *p,
                                struct rv_prepared_txn *e,
                                struct ravel_batch *b, int type, size_t *len,
                                uint32_t *count) RV_REQUIRES(p->lock);
static int prepared_mark_locked(struct rv_db_prepared *p,
                                struct rv_prepared_txn *e,
                                struct ravel_batch *b, int type, size_t *len,
                                uint32_t *count)
{
    (void)p;
    char value[8];
    rv_put_fixed64(value, e->number);
    *len = b->len;
    *count = b->count;
    int rc = rv_batch_add(b, type, e->name, strlen(e->name), value,
                          sizeof value);
    if (rc == RAVEL_OK) {
        e->live = b;
        e->live_len = *len;
        e->live_count = *count;
    }
    return rc;
}

int rv_prepared_begin(struct rv_db_prepared *p, const char *name,
                      uint64_t segment_floor, struct ravel_batch *b,
                      uint64_t *number, size_t *len, uint32_t *count)
{
    struct rv_prepared_txn *e = prepared_new_entry(name, strlen(name), NULL,
                                                   0);
    if (!e)
        return rv_error(RAVEL_NOMEM, "out of memory preparing transaction "
                        "'%s'", name);
    e->claimed = 1;
    e->wal_segment = segment_floor;
    /* one hold: a spill never finds the entry without its writes */
    rv_mutex_lock(&p->lock);
    int rc = prepared_find_name(p, name)
                 ? rv_error(RAVEL_INVALID, "ravel_txn_prepare: a transaction "
                            "named '%s' is prepared already", name)
                 : RAVEL_OK;
    if (rc == RAVEL_OK) {
        e->number = p->next_number;
        rc = prepared_mark_locked(p, e, b, RV_TYPE_TXN_PREPARE, len, count);
    }
    if (rc == RAVEL_OK) {
        prepared_add(p, e);
        *number = e->number;
        e = NULL;
    }
    rv_mutex_unlock(&p->lock);
    if (e)
        prepared_free_entry(e);
    return rc;
}

void rv_prepared_abort(struct rv_db_prepared *p, const char *dir,
                       uint64_t number)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    int spilled = e && e->spilled;
    /* a flush may have spilled it while its record was being written */
    if (spilled && prepared_unlink(dir, number) != RAVEL_OK)
        e->rolled_back = 1; /* hidden; the next open deletes the file */
    else if (e)
        prepared_remove(p, e);
    rv_mutex_unlock(&p->lock);
    if (spilled)
        (void)rv_sync_dir(dir);
}

int rv_prepared_mark(struct rv_db_prepared *p, uint64_t number,
                     const char *name, struct ravel_batch *b, int type,
                     size_t *len, uint32_t *count)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    *len = b->len;
    *count = b->count;
    int rc = e ? prepared_mark_locked(p, e, b, type, len, count)
               : rv_error(RAVEL_INVALID, "transaction '%s' is not prepared",
                          name);
    rv_mutex_unlock(&p->lock);
    return rc;
}

void rv_prepared_unmark(struct rv_db_prepared *p, struct ravel_batch *b,
                        size_t len, uint32_t count)
{
    rv_mutex_lock(&p->lock);
    rv_batch_truncate(b, len, count);
    rv_mutex_unlock(&p->lock);
}

void rv_prepared_committed(struct rv_db_prepared *p, uint64_t number,
                           uint64_t segment)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e && !e->spilled) {
        prepared_remove(p, e); /* no file: nothing left to do */
    } else if (e) {
        e->committed = 1;
        e->commit_segment = segment;
        e->claimed = 0;
        e->live = NULL;
        free(e->rep);
        e->rep = NULL;
    }
    rv_mutex_unlock(&p->lock);
}

int rv_prepared_rolled_back(struct rv_db_prepared *p, const char *dir,
                            uint64_t number)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    int rc = RAVEL_OK;
    if (e && e->spilled) {
        rc = prepared_unlink(dir, number);
        if (rc == RAVEL_OK)
            rc = rv_sync_dir(dir);
        if (rc == RAVEL_OK)
            e->spilled = 0;
    }
    /* on failure it stays, for its handle (which can try again, or be
    ** freed: its keys stay locked for the next holder) */
    if (e && rc == RAVEL_OK)
        prepared_remove(p, e);
    rv_mutex_unlock(&p->lock);
    return rc;
}

int rv_prepared_claim(struct rv_db_prepared *p, const char *name,
                      struct rv_prepared_txn *out)
{
    memset(out, 0, sizeof *out);
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find_name(p, name);
    int rc = RAVEL_OK;
    if (!e || e->claimed || !e->rep)
        rc = rv_error(RAVEL_NOTFOUND, "ravel_txn_recover: no prepared "
                      "transaction named '%s'%s", name,
                      e ? " is free to recover (a transaction handle has "
                          "it)" : "");
    if (rc == RAVEL_OK && !(out->name = strdup(e->name)))
        rc = rv_error(RAVEL_NOMEM, "out of memory recovering '%s'", name);
    if (rc == RAVEL_OK) {
        out->number = e->number;
        out->owner = e->owner;
        out->rep = e->rep; /* lent until rv_prepared_attach */
        out->len = e->len;
        e->claimed = 1;
    }
    rv_mutex_unlock(&p->lock);
    return rc;
}

void rv_prepared_attach(struct rv_db_prepared *p, uint64_t number,
                        const struct ravel_batch *b)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e) {
        e->live = b;
        e->live_len = b->len;
        e->live_count = b->count;
        free(e->rep); /* the handle's batch holds the same writes */
        e->rep = NULL;
    }
    rv_mutex_unlock(&p->lock);
}

void rv_prepared_unclaim(struct rv_db_prepared *p, uint64_t number,
                         uint64_t owner, char *rep, size_t len)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e && prepared_waiting(e)) {
        e->claimed = 0;
        e->owner = owner;
        e->live = NULL;
        if (!e->rep) {
            e->rep = rep;
            e->len = len;
            rep = NULL;
        }
    }
    rv_mutex_unlock(&p->lock);
    free(rep);
}

/* ------------------------------------------------------------ flushes */

int rv_prepared_spill(struct rv_db_prepared *p, const char *dir,
                      uint64_t log_number)
{
    int rc = RAVEL_OK;
    /* under the lock: a handle changes its batch only with it held, and
    ** spills are rare (a transaction prepared across a flush) */
    rv_mutex_lock(&p->lock);
    for (struct rv_prepared_txn *e = p->list; e && rc == RAVEL_OK;
         e = e->next) {
        if (!prepared_waiting(e) || e->spilled || e->wal_segment >= log_number)
            continue;
        if (e->rep)
            rc = prepared_write_file(dir, e, e->rep, e->len,
                                     rv_batch_rep_count(e->rep));
        else if (e->live)
            rc = prepared_write_file(dir, e, e->live->rep, e->live_len,
                                     e->live_count);
        else
            rc = rv_error(RAVEL_INVALID, "prepared transaction '%s': its "
                          "writes are nowhere to spill", e->name);
        if (rc == RAVEL_OK)
            e->spilled = 1;
    }
    rv_mutex_unlock(&p->lock);
    return rc;
}

int rv_prepared_release_flushed(struct rv_db_prepared *p, const char *dir,
                                uint64_t log_number)
{
    int deleted = 0, rc = RAVEL_OK;
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = p->list, *next;
    for (; e && rc == RAVEL_OK; e = next) {
        next = e->next;
        if (!e->committed || e->commit_segment >= log_number)
            continue;
        rc = prepared_unlink(dir, e->number);
        if (rc == RAVEL_OK) {
            deleted += e->spilled;
            prepared_remove(p, e);
        }
    }
    rv_mutex_unlock(&p->lock);
    if (rc == RAVEL_OK && deleted)
        rc = rv_sync_dir(dir);
    return rc;
}

/* ------------------------------------------------------------- lookups */

int rv_prepared_each_spilled(struct rv_db_prepared *p, uint64_t before,
                             int (*fn)(void *ctx, uint64_t number), void *ctx)
{
    int rc = 0;
    rv_mutex_lock(&p->lock);
    for (struct rv_prepared_txn *e = p->list; e && rc == 0; e = e->next)
        if (e->spilled && e->wal_segment < before)
            rc = fn(ctx, e->number);
    rv_mutex_unlock(&p->lock);
    return rc;
}

int rv_prepared_name_taken(struct rv_db_prepared *p, const char *name)
{
    rv_mutex_lock(&p->lock);
    int taken = prepared_find_name(p, name) != NULL;
    rv_mutex_unlock(&p->lock);
    return taken;
}

char *rv_prepared_names(struct rv_db_prepared *p)
{
    rv_mutex_lock(&p->lock);
    size_t n = 1;
    for (struct rv_prepared_txn *e = p->list; e; e = e->next)
        if (prepared_waiting(e))
            n += strlen(e->name) + 1;
    char *text = malloc(n), *at = text;
    for (struct rv_prepared_txn *e = p->list; text && e; e = e->next)
        if (prepared_waiting(e))
            at += sprintf(at, "%s\n", e->name);
    if (text)
        *at = '\0';
    rv_mutex_unlock(&p->lock);
    return text;
}

void rv_prepared_for_each(struct rv_db_prepared *p,
                          void (*fn)(void *ctx, struct rv_prepared_txn *e),
                          void *ctx)
{
    rv_mutex_lock(&p->lock);
    for (struct rv_prepared_txn *e = p->list; e; e = e->next)
        if (prepared_waiting(e))
            fn(ctx, e);
    rv_mutex_unlock(&p->lock);
}
