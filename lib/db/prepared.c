/*
** prepared.c -- prepared transactions' files and list (prepared.h).
*/
#include "db/prepared.h"
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

/* Checks and splits the LEN bytes of file PATH: name and rep point into
** DATA.  RAVEL_CORRUPT naming what is wrong. */
static int prepared_parse(const char *path, const char *data, size_t len,
                          const char **name, uint32_t *name_len,
                          const char **rep, uint64_t *rep_len)
{
    size_t fixed = PREPARED_MAGIC_LEN + 4 + 8 + 8;
    if (len < fixed)
        return rv_error(RAVEL_CORRUPT, "%s: %zu bytes is shorter than a "
                        "prepared transaction's file can be", path, len);
    if (memcmp(data, PREPARED_MAGIC, PREPARED_MAGIC_LEN) != 0)
        return rv_error(RAVEL_CORRUPT, "%s: not a prepared transaction's "
                        "file (bad magic)", path);
    uint64_t sum = rv_get_fixed64(data + len - 8);
    if (sum != XXH3_64bits(data, len - 8))
        return rv_error(RAVEL_CORRUPT, "%s: checksum mismatch: the prepared "
                        "transaction's file is damaged", path);
    *name_len = rv_get_fixed32(data + PREPARED_MAGIC_LEN);
    if (*name_len == 0 || *name_len > 255 || fixed + *name_len > len)
        return rv_error(RAVEL_CORRUPT, "%s: bad name length %u", path,
                        *name_len);
    *name = data + PREPARED_MAGIC_LEN + 4;
    *rep_len = rv_get_fixed64(*name + *name_len);
    if (*rep_len != len - fixed - *name_len)
        return rv_error(RAVEL_CORRUPT, "%s: its batch is said to be %llu "
                        "bytes, the file holds %zu", path,
                        (unsigned long long)*rep_len, len - fixed - *name_len);
    *rep = *name + *name_len + 8;
    return RAVEL_OK;
}

/* Reads file NUMBER of DIR into a new entry. */
static int prepared_load_one(const char *dir, uint64_t number,
                             struct rv_prepared_txn **out)
{
    char name[40], path[RV_PATH_MAX];
    rv_prepared_file_name(name, sizeof name, number);
    int rc = rv_path_join(path, dir, name);
    char *data = NULL;
    size_t len = 0;
    if (rc == RAVEL_OK)
        rc = rv_read_file(path, &data, &len, NULL);
    const char *tname = NULL, *rep = NULL;
    uint32_t tlen = 0;
    uint64_t rlen = 0;
    if (rc == RAVEL_OK)
        rc = prepared_parse(path, data, len, &tname, &tlen, &rep, &rlen);
    struct rv_prepared_txn *e = rc ? NULL : calloc(1, sizeof *e);
    if (rc == RAVEL_OK && e) {
        e->name = malloc(tlen + 1);
        e->rep = malloc(rlen ? rlen : 1);
    }
    if (rc == RAVEL_OK && (!e || !e->name || !e->rep)) {
        if (e)
            prepared_free_entry(e);
        e = NULL;
        rc = rv_error(RAVEL_NOMEM, "out of memory loading %s", path);
    }
    if (rc == RAVEL_OK) {
        memcpy(e->name, tname, tlen);
        e->name[tlen] = '\0';
        memcpy(e->rep, rep, rlen);
        e->len = rlen;
        e->number = number;
        *out = e;
    }
    free(data);
    return rc;
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
        size_t n = strlen(de->d_name);
        if (n > 4 && strcmp(de->d_name + n - 4, ".tmp") == 0) {
            char base[64];
            if (n - 4 < sizeof base) {
                memcpy(base, de->d_name, n - 4);
                base[n - 4] = '\0';
                char path[RV_PATH_MAX];
                if (!read_only &&
                    rv_parse_prepared_file_name(base, &number) &&
                    rv_path_join(path, dir, de->d_name) == RAVEL_OK)
                    unlink(path); /* a prepare that never returned */
            }
            continue;
        }
        if (!rv_parse_prepared_file_name(de->d_name, &number))
            continue;
        struct rv_prepared_txn *e = NULL;
        rc = prepared_load_one(dir, number, &e);
        if (rc)
            break;
        rv_mutex_lock(&p->lock);
        e->next = p->list;
        p->list = e;
        if (number >= p->next_number)
            p->next_number = number + 1;
        rv_mutex_unlock(&p->lock);
    }
    closedir(d);
    return rc;
}

/* ------------------------------------------------------------ the list */

/* The entry of file NUMBER, or NULL; P's lock held. */
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

void rv_prepared_replayed_commit(struct rv_db_prepared *p, uint64_t number)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e) {
        e->committed = 1;
        e->commit_segment = UINT64_MAX; /* rv_prepared_replay_done */
        free(e->rep);
        e->rep = NULL;
    }
    rv_mutex_unlock(&p->lock);
}

void rv_prepared_replay_done(struct rv_db_prepared *p, uint64_t last_segment)
{
    rv_mutex_lock(&p->lock);
    for (struct rv_prepared_txn *e = p->list; e; e = e->next)
        if (e->committed && e->commit_segment == UINT64_MAX)
            e->commit_segment = last_segment;
    rv_mutex_unlock(&p->lock);
}

/* The entry of the transaction named NAME prepared and not committed, or
** NULL; P's lock held. */
static struct rv_prepared_txn *prepared_find_name(struct rv_db_prepared *p,
                                                  const char *name)
    RV_REQUIRES(p->lock);
static struct rv_prepared_txn *prepared_find_name(struct rv_db_prepared *p,
                                                  const char *name)
{
    for (struct rv_prepared_txn *e = p->list; e; e = e->next)
        if (!e->committed && strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

int rv_prepared_name_taken(struct rv_db_prepared *p, const char *name)
{
    rv_mutex_lock(&p->lock);
    int taken = prepared_find_name(p, name) != NULL;
    rv_mutex_unlock(&p->lock);
    return taken;
}

int rv_prepared_write(struct rv_db_prepared *p, const char *dir,
                      const char *name, const char *rep, size_t len,
                      uint64_t *number)
{
    size_t nlen = strlen(name);
    struct rv_prepared_txn *e = calloc(1, sizeof *e);
    if (e)
        e->name = strdup(name);
    if (!e || !e->name) {
        free(e);
        return rv_error(RAVEL_NOMEM, "out of memory preparing transaction "
                        "'%s'", name);
    }
    /* the entry is listed (claimed) before the file is written, so that
    ** no second prepare of the name can start meanwhile */
    rv_mutex_lock(&p->lock);
    int taken = prepared_find_name(p, name) != NULL;
    if (!taken) {
        e->number = p->next_number++;
        e->claimed = 1;
        e->next = p->list;
        p->list = e;
    }
    rv_mutex_unlock(&p->lock);
    if (taken) {
        prepared_free_entry(e);
        return rv_error(RAVEL_INVALID, "ravel_txn_prepare: a transaction "
                        "named '%s' is prepared already", name);
    }
    char head[PREPARED_MAGIC_LEN + 4], rlen[8], sum[8], fname[40];
    memcpy(head, PREPARED_MAGIC, PREPARED_MAGIC_LEN);
    rv_put_fixed32(head + PREPARED_MAGIC_LEN, (uint32_t)nlen);
    rv_put_fixed64(rlen, len);
    XXH3_state_t *h = XXH3_createState();
    int rc = h ? RAVEL_OK : rv_error(RAVEL_NOMEM, "out of memory preparing "
                                     "transaction '%s'", name);
    if (rc == RAVEL_OK) {
        XXH3_64bits_reset(h);
        XXH3_64bits_update(h, head, sizeof head);
        XXH3_64bits_update(h, name, nlen);
        XXH3_64bits_update(h, rlen, sizeof rlen);
        XXH3_64bits_update(h, rep, len);
        rv_put_fixed64(sum, XXH3_64bits_digest(h));
        XXH3_freeState(h);
        struct rv_file_part parts[] = {
            {head, sizeof head}, {name, nlen}, {rlen, sizeof rlen},
            {rep, len}, {sum, sizeof sum},
        };
        rv_prepared_file_name(fname, sizeof fname, e->number);
        rc = rv_replace_file_parts(dir, fname, parts, 5);
    }
    rv_mutex_lock(&p->lock);
    if (rc)
        prepared_remove(p, e);
    else
        *number = e->number;
    rv_mutex_unlock(&p->lock);
    return rc;
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

int rv_prepared_drop(struct rv_db_prepared *p, const char *dir,
                     uint64_t number)
{
    int rc = prepared_unlink(dir, number);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(dir);
    if (rc)
        return rc;
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e)
        prepared_remove(p, e);
    rv_mutex_unlock(&p->lock);
    return RAVEL_OK;
}

void rv_prepared_committed(struct rv_db_prepared *p, uint64_t number,
                           uint64_t segment)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e) {
        e->committed = 1;
        e->commit_segment = segment;
        e->claimed = 0;
        free(e->rep);
        e->rep = NULL;
    }
    rv_mutex_unlock(&p->lock);
}

void rv_prepared_release_flushed(struct rv_db_prepared *p, const char *dir,
                                 uint64_t log_number,
                                 void (*log)(void *ctx, const char *msg),
                                 void *log_ctx)
{
    int deleted = 0;
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = p->list, *next;
    for (; e; e = next) {
        next = e->next;
        if (!e->committed || e->commit_segment >= log_number)
            continue;
        /* unlink under the lock: a few files, rarely, and it keeps the
        ** list and the directory in step */
        if (prepared_unlink(dir, e->number) == RAVEL_OK) {
            prepared_remove(p, e);
            deleted++;
        } else if (log) {
            log(log_ctx, rv_errmsg_get());
        }
    }
    rv_mutex_unlock(&p->lock);
    if (deleted && rv_sync_dir(dir) != RAVEL_OK && log)
        log(log_ctx, rv_errmsg_get());
}

char *rv_prepared_names(struct rv_db_prepared *p)
{
    rv_mutex_lock(&p->lock);
    size_t n = 1;
    for (struct rv_prepared_txn *e = p->list; e; e = e->next)
        if (!e->committed)
            n += strlen(e->name) + 1;
    char *text = malloc(n), *at = text;
    for (struct rv_prepared_txn *e = p->list; text && e; e = e->next)
        if (!e->committed)
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
        if (!e->committed)
            fn(ctx, e);
    rv_mutex_unlock(&p->lock);
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
        out->rep = e->rep; /* moved: held once */
        out->len = e->len;
        e->rep = NULL;
        e->claimed = 1;
    }
    rv_mutex_unlock(&p->lock);
    return rc;
}

void rv_prepared_unclaim(struct rv_db_prepared *p, uint64_t number,
                         uint64_t owner, char *rep, size_t len)
{
    rv_mutex_lock(&p->lock);
    struct rv_prepared_txn *e = prepared_find(p, number);
    if (e && !e->committed) {
        e->claimed = 0;
        e->owner = owner;
        if (!e->rep) {
            e->rep = rep;
            e->len = len;
            rep = NULL;
        }
    }
    rv_mutex_unlock(&p->lock);
    free(rep);
}
