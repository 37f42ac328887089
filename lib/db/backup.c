/*
** backup.c -- incremental backups in a backup root (ravel_backup_create,
** _list, _info, _verify, _restore, _purge).
**
**   ROOT/BACKUP-ROOT        "ravel-backup-root 1\n": marks the directory
**   ROOT/LOCK               held by a create or purge (util/lockfile.h)
**   ROOT/shared/NNNNNN-SIZE-sSESSION.sst
**                           table files, shared by every backup naming
**                           them: number, size, and "s" and the file's
**                           ravel.session_id property in hex (random for
**                           each handle that writes tables,
**                           table/table_format.h), so the same file of
**                           the same database is recognised without
**                           reading it whole, and files of two databases
**                           (restored from one backup, say) never meet
**   ROOT/shared/NNNNNN-SIZE-TAIL.sst
**                           a table file without a session id (written
**                           before the property existed, or whose footer
**                           or properties fail their checks): TAIL is the
**                           XXH3_64 of its last 4 KiB in hex
**   ROOT/private/ID/        the backup's own files: WAL segments,
**                           prepared transactions' files, IDENTITY, its
**                           MANIFEST, CURRENT
**   ROOT/meta/ID            the backup's meta file, written last
**
** The meta file is text, one field a line:
**
**   backup-meta := "ravel-backup 1" NL field-line* file-line* end-line
**   field-line  := ("id" | "time" | "sequence" | "copied") SP decimal NL
**   file-line   := "file" SP path SP size:decimal SP checksum:hex16 NL
**   end-line    := "end" SP files:decimal SP checksum:hex16 NL
**
** path is relative to ROOT ("shared/..." or "private/ID/..."), checksum
** the XXH3_64 of the file's bytes; the end line's checksum is the XXH3_64
** of every byte of the meta file before the end line.
**
** A backup exists once its meta file does: the files are copied and
** fdatasynced, the directories fsynced, then the meta file is written to
** meta/ID.tmp, fdatasynced, renamed to meta/ID and meta/ fsynced.  So a
** crash leaves either a complete backup or files no meta file names,
** which the next create or purge (holding the LOCK, so no backup is in
** progress) deletes: *.tmp files, private/ID without meta/ID, and shared
** files no meta file names.  A meta file that fails its checks (cut
** short, damaged) marks its backup damaged: never listed, restored or
** deleted, and while one exists no shared file is deleted either.
*/
#include "db/checkpoint.h"
#include "table/table.h"
#include "util/copy.h"
#include "util/error.h"
#include "util/file.h"
#include "util/filename.h"
#include "util/lockfile.h"

#include <xxhash.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BACKUP_MARKER "BACKUP-ROOT"
#define BACKUP_MARKER_TEXT "ravel-backup-root 1\n"
#define BACKUP_META_MAGIC "ravel-backup 1\n"
#define BACKUP_TAIL 4096

struct backup_file {
    char *path;         /* relative to the root */
    uint64_t size, checksum;
};

struct backup_meta {
    uint64_t id, time, sequence, copied, bytes;
    struct backup_file *files;
    int n, cap;
};

static void backup_meta_free(struct backup_meta *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->files[i].path);
    free(m->files);
    memset(m, 0, sizeof *m);
}

static int backup_meta_add(struct backup_meta *m, const char *path,
                           uint64_t size, uint64_t checksum)
{
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 32;
        struct backup_file *f = realloc(m->files, (size_t)cap * sizeof *f);
        if (!f)
            return rv_error(RAVEL_NOMEM, "out of memory listing a backup");
        m->files = f;
        m->cap = cap;
    }
    char *p = strdup(path);
    if (!p)
        return rv_error(RAVEL_NOMEM, "out of memory listing a backup");
    m->files[m->n++] = (struct backup_file){p, size, checksum};
    m->bytes += size;
    return RAVEL_OK;
}

/* ------------------------------------------------------------- paths */

static int backup_path(char *buf, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int backup_path(char *buf, const char *root, const char *fmt, ...)
{
    char rel[RV_PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof rel)
        return rv_error(RAVEL_INVALID, "path too long in backup root %s",
                        root);
    return rv_path_join(buf, root, rel);
}

static int backup_mkdir(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return RAVEL_OK;
    return rv_error_errno(RAVEL_IOERR, errno, "mkdir %s", path);
}

/* Checks ROOT is a backup root; with CREATE, makes it one if it is new or
** empty.  RAVEL_NOTFOUND naming it otherwise. */
static int backup_open_root(const char *root, int create)
{
    if (!root || !*root)
        return rv_error(RAVEL_INVALID, "the backup root's name is empty or "
                        "NULL");
    char path[RV_PATH_MAX];
    int rc = rv_path_join(path, root, BACKUP_MARKER);
    if (rc)
        return rc;
    struct stat st;
    if (stat(path, &st) == 0)
        return RAVEL_OK;
    if (!create)
        return rv_error(RAVEL_NOTFOUND, "%s is not a backup root (no %s "
                        "in it)", root, BACKUP_MARKER);
    rc = backup_mkdir(root);
    DIR *d = rc ? NULL : opendir(root);
    if (!rc && !d)
        rc = rv_error_errno(RAVEL_IOERR, errno, "opendir %s", root);
    for (struct dirent *e; !rc && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = rv_error(RAVEL_INVALID, "%s is not empty and not a backup "
                          "root: refusing to make it one", root);
    if (d)
        closedir(d);
    const char *subs[] = {"shared", "private", "meta"};
    for (int i = 0; i < 3 && rc == RAVEL_OK; i++)
        if ((rc = rv_path_join(path, root, subs[i])) == RAVEL_OK)
            rc = backup_mkdir(path);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(root);
    if (rc == RAVEL_OK)
        rc = rv_replace_file(root, BACKUP_MARKER, BACKUP_MARKER_TEXT,
                             strlen(BACKUP_MARKER_TEXT));
    return rc;
}

/* Takes ROOT's LOCK: RAVEL_LOCKED while another create or purge runs. */
static int backup_lock(const char *root, struct rv_lockfile *lock)
{
    int rc = rv_lockfile_acquire(root, lock);
    if (rc == RAVEL_LOCKED)
        rc = rv_error(RAVEL_LOCKED, "backup root %s is in use by another "
                      "backup or purge", root);
    return rc;
}

/* 1 and *ID if NAME is all decimal digits (a backup's id). */
static int backup_parse_id(const char *name, uint64_t *id)
{
    if (!*name || strlen(name) > 19)
        return 0;
    uint64_t v = 0;
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *id = v;
    return v > 0;
}

/* ---------------------------------------------------------- meta files */

/* 1 if PATH is one a backup's meta file may name: "shared/NAME" or
** "private/ID/NAME", NAME a plain file name (never "..", never leaving
** the root). */
static int backup_path_ok(const char *path)
{
    const char *name;
    if (strncmp(path, "shared/", 7) == 0) {
        name = path + 7;
    } else if (strncmp(path, "private/", 8) == 0) {
        const char *slash = strchr(path + 8, '/');
        char id[24];
        uint64_t v;
        size_t n = slash ? (size_t)(slash - (path + 8)) : 0;
        if (!slash || n == 0 || n >= sizeof id)
            return 0;
        memcpy(id, path + 8, n);
        id[n] = '\0';
        if (!backup_parse_id(id, &v))
            return 0;
        name = slash + 1;
    } else {
        return 0;
    }
    return *name && !strchr(name, '/') && strcmp(name, ".") != 0 &&
           strcmp(name, "..") != 0;
}

static int backup_meta_parse_line(struct backup_meta *m, const char *line)
{
    char word[16], path[RV_PATH_MAX];
    unsigned long long a, b;
    if (sscanf(line, "file %4095s %llu %llx", path, &a, &b) == 3)
        return !backup_path_ok(path) || backup_meta_add(m, path, a, b) ? -1
                                                                      : 0;
    if (sscanf(line, "%15s %llu", word, &a) != 2)
        return -1;
    if (strcmp(word, "id") == 0)
        m->id = a;
    else if (strcmp(word, "time") == 0)
        m->time = a;
    else if (strcmp(word, "sequence") == 0)
        m->sequence = a;
    else if (strcmp(word, "copied") == 0)
        m->copied = a;
    else
        return -1;
    return 0;
}

/* Parses the meta file TEXT (LEN bytes) of PATH into M. */
static int backup_meta_parse(struct backup_meta *m, char *text, size_t len,
                             const char *path)
{
    size_t magic = strlen(BACKUP_META_MAGIC);
    if (len < magic || memcmp(text, BACKUP_META_MAGIC, magic) != 0)
        return rv_error(RAVEL_CORRUPT, "%s: not a backup meta file (bad "
                        "first line)", path);
    /* the end line: the last line, "end N HEX\n" */
    if (text[len - 1] != '\n')
        return rv_error(RAVEL_CORRUPT, "%s: cut short (no end line)", path);
    text[len - 1] = '\0';
    char *end = strrchr(text, '\n');
    text[len - 1] = '\n';
    unsigned long long files, sum;
    if (!end || sscanf(end + 1, "end %llu %llx", &files, &sum) != 2)
        return rv_error(RAVEL_CORRUPT, "%s: cut short (no end line)", path);
    size_t body = (size_t)(end + 1 - text);
    if (XXH3_64bits(text, body) != sum)
        return rv_error(RAVEL_CORRUPT, "%s: checksum mismatch: the meta "
                        "file is damaged", path);
    for (char *line = text + magic; line < text + body;) {
        char *nl = memchr(line, '\n', (size_t)(text + body - line));
        *nl = '\0';
        int bad = backup_meta_parse_line(m, line);
        *nl = '\n';
        if (bad)
            return rv_error(RAVEL_CORRUPT, "%s: malformed line at offset "
                            "%zu", path, (size_t)(line - text));
        line = nl + 1;
    }
    if ((unsigned long long)m->n != files || m->id == 0)
        return rv_error(RAVEL_CORRUPT, "%s: names %d files, its end line "
                        "says %llu", path, m->n, files);
    return RAVEL_OK;
}

/* Reads backup ID's meta file.  RAVEL_NOTFOUND if absent. */
static int backup_meta_read(const char *root, uint64_t id,
                            struct backup_meta *m)
{
    memset(m, 0, sizeof *m);
    char path[RV_PATH_MAX];
    int rc = backup_path(path, root, "meta/%" PRIu64, id);
    char *text = NULL;
    size_t len = 0;
    int open_errno = 0;
    if (rc == RAVEL_OK)
        rc = rv_read_file(path, &text, &len, &open_errno);
    if (rc && open_errno == ENOENT)
        return rv_error(RAVEL_NOTFOUND, "backup root %s has no backup %"
                        PRIu64, root, id);
    if (rc == RAVEL_OK)
        rc = backup_meta_parse(m, text, len, path);
    if (rc == RAVEL_OK && m->id != id)
        rc = rv_error(RAVEL_CORRUPT, "%s: holds backup %" PRIu64, path,
                      m->id);
    free(text);
    if (rc)
        backup_meta_free(m);
    return rc;
}

/* Text appended to a growing buffer. */
struct backup_text {
    char *p;
    size_t len, cap;
    int failed;
};

static void backup_text_add(struct backup_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void backup_text_add(struct backup_text *t, const char *fmt, ...)
{
    char line[RV_PATH_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line) {
        t->failed = 1;
        return;
    }
    if (t->len + (size_t)n > t->cap) {
        size_t cap = (t->cap + (size_t)n) * 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, line, (size_t)n);
    t->len += (size_t)n;
}

/* Writes M as meta/ID, last: .tmp, fdatasync, rename, fsync of meta/. */
static int backup_meta_write(const char *root, const struct backup_meta *m)
{
    struct backup_text t = {0};
    backup_text_add(&t, "%s", BACKUP_META_MAGIC);
    backup_text_add(&t, "id %" PRIu64 "\ntime %" PRIu64 "\nsequence %"
                    PRIu64 "\ncopied %" PRIu64 "\n", m->id, m->time,
                    m->sequence, m->copied);
    for (int i = 0; i < m->n; i++)
        backup_text_add(&t, "file %s %" PRIu64 " %016" PRIx64 "\n",
                        m->files[i].path, m->files[i].size,
                        m->files[i].checksum);
    uint64_t sum = t.failed ? 0 : XXH3_64bits(t.p, t.len);
    backup_text_add(&t, "end %d %016" PRIx64 "\n", m->n, sum);
    int rc = t.failed ? rv_error(RAVEL_NOMEM, "out of memory writing a "
                                 "backup's meta file") : RAVEL_OK;
    char dir[RV_PATH_MAX], name[32];
    snprintf(name, sizeof name, "%" PRIu64, m->id);
    if (rc == RAVEL_OK)
        rc = rv_path_join(dir, root, "meta");
    if (rc == RAVEL_OK)
        rc = rv_replace_file(dir, name, t.p, t.len);
    free(t.p);
    return rc;
}

/* ------------------------------------------------------------ scanning */

/* The ids of DIR's entries that are backup ids, ascending (*N). */
static int backup_ids_in(const char *dir, uint64_t **ids, int *n)
{
    *ids = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return rv_error_errno(RAVEL_IOERR, errno, "opendir %s", dir);
    int cap = 0, rc = RAVEL_OK;
    for (struct dirent *e; rc == RAVEL_OK && (e = readdir(d)) != NULL;) {
        uint64_t id;
        if (!backup_parse_id(e->d_name, &id))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *p = realloc(*ids, (size_t)cap * sizeof *p);
            if (!p) {
                rc = rv_error(RAVEL_NOMEM, "out of memory listing %s", dir);
                break;
            }
            *ids = p;
        }
        (*ids)[(*n)++] = id;
    }
    closedir(d);
    for (int i = 1; i < *n; i++) /* insertion sort: a few hundred ids */
        for (int j = i; j > 0 && (*ids)[j - 1] > (*ids)[j]; j--) {
            uint64_t x = (*ids)[j];
            (*ids)[j] = (*ids)[j - 1];
            (*ids)[j - 1] = x;
        }
    return rc;
}

/* The backups of ROOT: the complete ones (meta files read, ascending by
** id) and how many meta files are damaged; and every file they name,
** sorted by path, for lookups. */
struct backup_set {
    struct backup_meta *good;
    int n_good, damaged;
    uint64_t max_id;    /* the highest id anywhere (meta/ or private/) */
    const struct backup_file **named; /* into GOOD's files */
    size_t n_named;
};

static void backup_set_free(struct backup_set *s)
{
    for (int i = 0; i < s->n_good; i++)
        backup_meta_free(&s->good[i]);
    free(s->good);
    free(s->named);
    memset(s, 0, sizeof *s);
}

static int backup_file_order(const void *a, const void *b)
{
    const struct backup_file *x = *(const struct backup_file *const *)a;
    const struct backup_file *y = *(const struct backup_file *const *)b;
    return strcmp(x->path, y->path);
}

/* Fills S's sorted index of the files its complete backups name. */
static int backup_set_index(struct backup_set *s)
{
    size_t n = 0;
    for (int i = 0; i < s->n_good; i++)
        n += (size_t)s->good[i].n;
    free(s->named);
    s->named = n ? malloc(n * sizeof *s->named) : NULL;
    s->n_named = 0;
    if (n && !s->named)
        return rv_error(RAVEL_NOMEM, "out of memory listing backups");
    for (int i = 0; i < s->n_good; i++)
        for (int j = 0; j < s->good[i].n; j++)
            s->named[s->n_named++] = &s->good[i].files[j];
    if (s->n_named)
        qsort(s->named, s->n_named, sizeof *s->named, backup_file_order);
    return RAVEL_OK;
}

static int backup_scan(const char *root, struct backup_set *s)
{
    memset(s, 0, sizeof *s);
    char dir[RV_PATH_MAX];
    uint64_t *ids = NULL;
    int n = 0;
    int rc = rv_path_join(dir, root, "meta");
    if (rc == RAVEL_OK)
        rc = backup_ids_in(dir, &ids, &n);
    if (rc == RAVEL_OK && n > 0 && !(s->good = calloc((size_t)n,
                                                      sizeof *s->good)))
        rc = rv_error(RAVEL_NOMEM, "out of memory listing %s", root);
    for (int i = 0; i < n && rc == RAVEL_OK; i++) {
        if (ids[i] > s->max_id)
            s->max_id = ids[i];
        int r = backup_meta_read(root, ids[i], &s->good[s->n_good]);
        if (r == RAVEL_OK)
            s->n_good++;
        else if (r == RAVEL_CORRUPT)
            s->damaged++;
        else if (r != RAVEL_NOTFOUND)
            rc = r;
    }
    free(ids);
    ids = NULL;
    if (rc == RAVEL_OK)
        rc = rv_path_join(dir, root, "private");
    if (rc == RAVEL_OK)
        rc = backup_ids_in(dir, &ids, &n);
    if (rc == RAVEL_OK && n > 0 && ids[n - 1] > s->max_id)
        s->max_id = ids[n - 1];
    free(ids);
    if (rc == RAVEL_OK)
        rc = backup_set_index(s);
    if (rc)
        backup_set_free(s);
    return rc;
}

/* 1 if a complete backup of S names PATH (relative to the root); its
** checksum into *CHECKSUM. */
static int backup_set_names(const struct backup_set *s, const char *path,
                            uint64_t *checksum)
{
    struct backup_file key = {.path = (char *)path};
    const struct backup_file *k = &key;
    const struct backup_file **f =
        s->n_named ? bsearch(&k, s->named, s->n_named, sizeof *s->named,
                             backup_file_order)
                   : NULL;
    if (f && checksum)
        *checksum = (*f)->checksum;
    return f != NULL;
}

/* 1 if NAME ends with ".tmp". */
static int backup_is_tmp(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".tmp") == 0;
}

/* Deletes what no complete backup needs: *.tmp files, private dirs with
** no meta file, and (when no meta file is damaged) shared files no meta
** file names.  Called with the LOCK held.  *FREED counts bytes. */
static int backup_collect_garbage(const char *root, const struct backup_set *s,
                                  uint64_t *freed)
{
    char dir[RV_PATH_MAX], path[RV_PATH_MAX];
    int rc = rv_path_join(dir, root, "private");
    uint64_t *ids = NULL;
    int n = 0;
    if (rc == RAVEL_OK)
        rc = backup_ids_in(dir, &ids, &n);
    for (int i = 0; i < n && rc == RAVEL_OK; i++) {
        struct stat st;
        rc = backup_path(path, root, "meta/%" PRIu64, ids[i]);
        if (rc == RAVEL_OK && stat(path, &st) != 0 && errno == ENOENT &&
            backup_path(path, root, "private/%" PRIu64, ids[i]) == 0)
            rv_copy_remove_dir(path);
    }
    free(ids);
    const char *subs[] = {"meta", "shared"};
    for (int k = 0; k < 2 && rc == RAVEL_OK; k++) {
        rc = rv_path_join(dir, root, subs[k]);
        DIR *d = rc ? NULL : opendir(dir);
        if (!rc && !d)
            rc = rv_error_errno(RAVEL_IOERR, errno, "opendir %s", dir);
        for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.')
                continue;
            char rel[300];
            snprintf(rel, sizeof rel, "%s/%s", subs[k], e->d_name);
            int garbage = backup_is_tmp(e->d_name) ||
                          (k == 1 && !s->damaged &&
                           !backup_set_names(s, rel, NULL));
            struct stat st;
            if (!garbage || rv_path_join(path, dir, e->d_name) != 0)
                continue;
            if (stat(path, &st) == 0 && unlink(path) == 0 && freed)
                *freed += (uint64_t)st.st_size;
        }
        if (d)
            closedir(d);
        if (rc == RAVEL_OK)
            rc = rv_sync_dir(dir);
    }
    return rc;
}

/* ------------------------------------------------------------- create */

/* The XXH3_64 of the last 4 KiB of FD (SIZE bytes; SRC in messages):
** the shared name's last part for a file without a session id. */
static int backup_tail_hash(int fd, const char *src, uint64_t size,
                            uint64_t *hash)
{
    char tail[BACKUP_TAIL];
    size_t want = size < BACKUP_TAIL ? (size_t)size : BACKUP_TAIL;
    ssize_t got = pread(fd, tail, want, (off_t)(size - want));
    if (got < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "read %s", src);
    if ((size_t)got != want)
        return rv_error(RAVEL_CORRUPT, "%s: shorter than the %" PRIu64
                        " bytes the manifest says", src, size);
    *hash = XXH3_64bits(tail, want);
    return RAVEL_OK;
}

/* The shared name of table item IT (SIZE bytes, number NUMBER), read
** through its descriptor if it has one (a reader's), else by path:
** NNNNNN-SIZE-sSESSION.sst by its ravel.session_id, or, for a file
** without one (older, or whose footer or properties fail their checks),
** NNNNNN-SIZE-TAIL.sst by the hash of its last 4 KiB. */
static int backup_shared_name(char *rel, size_t cap,
                              const struct rv_cp_item *it, uint64_t number,
                              uint64_t size)
{
    const char *src = it->src ? it->src : it->name;
    int fd = it->fd >= 0 ? it->fd : rv_open(src, O_RDONLY, 0);
    if (fd < 0)
        return rv_error_errno(RAVEL_IOERR, errno, "open %s", src);
    uint64_t session = 0, hash = 0;
    int rc = rv_table_file_session_id(fd, src, number, size, &session);
    if (rc == RAVEL_CORRUPT)
        rc = RAVEL_OK; /* named by its tail, copied as it is */
    if (rc == RAVEL_OK && session == 0)
        rc = backup_tail_hash(fd, src, size, &hash);
    if (fd != it->fd)
        close(fd);
    if (rc)
        return rc;
    if (session)
        snprintf(rel, cap, "shared/%06" PRIu64 "-%" PRIu64 "-s%016" PRIx64
                 ".sst", number, size, session);
    else
        snprintf(rel, cap, "shared/%06" PRIu64 "-%" PRIu64 "-%016" PRIx64
                 ".sst", number, size, hash);
    return RAVEL_OK;
}

/* A table file into shared/, unless it is there already. */
static int backup_put_table(const char *root, const struct backup_set *s,
                            const struct rv_cp_item *it, struct backup_meta *m)
{
    uint64_t number = 0;
    rv_parse_table_file_name(it->name, &number);
    char rel[300], path[RV_PATH_MAX], tmp[RV_PATH_MAX];
    int rc = backup_shared_name(rel, sizeof rel, it, number, it->size);
    if (rc == RAVEL_OK)
        rc = rv_path_join(path, root, rel);
    if (rc)
        return rc;
    uint64_t checksum = 0, size = 0;
    struct stat st;
    if (backup_set_names(s, rel, &checksum))
        return backup_meta_add(m, rel, it->size, checksum);
    if (stat(path, &st) == 0) { /* whole (renamed into place), unnamed */
        rc = rv_copy_checksum_file(path, &size, &checksum);
        if (rc == RAVEL_OK && size == it->size)
            return backup_meta_add(m, rel, size, checksum);
        unlink(path);
    }
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return rv_error(RAVEL_INVALID, "path too long: %s", path);
    unlink(tmp);
    rc = rv_checkpoint_copy_item(it, tmp, &checksum);
    if (rc == RAVEL_OK && rename(tmp, path) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "rename %s", tmp);
    if (rc) {
        unlink(tmp);
        return rc;
    }
    m->copied += it->size;
    return backup_meta_add(m, rel, it->size, checksum);
}

/* A WAL segment or made file into private/ID/. */
static int backup_put_private(const char *root, const struct rv_cp_item *it,
                              struct backup_meta *m)
{
    char rel[300], path[RV_PATH_MAX];
    snprintf(rel, sizeof rel, "private/%" PRIu64 "/%s", m->id, it->name);
    int rc = rv_path_join(path, root, rel);
    uint64_t checksum = 0;
    if (rc == RAVEL_OK && it->kind == RV_CP_DATA) {
        rc = rv_copy_write_file(path, it->data, (size_t)it->size);
        checksum = XXH3_64bits(it->data, (size_t)it->size);
    } else if (rc == RAVEL_OK) {
        rc = rv_copy_file(it->src, path, it->size, &checksum);
    }
    if (rc == RAVEL_OK)
        m->copied += it->size;
    return rc ? rc : backup_meta_add(m, rel, it->size, checksum);
}

static int backup_write_plan(const char *root, const struct backup_set *s,
                             const struct rv_cp_plan *p, struct backup_meta *m)
{
    char dir[RV_PATH_MAX];
    int rc = backup_path(dir, root, "private/%" PRIu64, m->id);
    if (rc == RAVEL_OK && mkdir(dir, 0755) != 0)
        rc = rv_error_errno(RAVEL_IOERR, errno, "mkdir %s", dir);
    for (int i = 0; i < p->n && rc == RAVEL_OK; i++)
        rc = p->items[i].kind == RV_CP_TABLE
                 ? backup_put_table(root, s, &p->items[i], m)
                 : backup_put_private(root, &p->items[i], m);
    if (rc == RAVEL_OK)
        rc = rv_sync_dir(dir);
    if (rc == RAVEL_OK && (rc = backup_path(dir, root, "private")) == 0)
        rc = rv_sync_dir(dir);
    if (rc == RAVEL_OK && (rc = backup_path(dir, root, "shared")) == 0)
        rc = rv_sync_dir(dir);
    return rc;
}

int ravel_backup_create(ravel_db *db, const char *root, uint64_t *id)
{
    int rc = rv_db_enter(db, "ravel_backup_create");
    if (rc)
        return rc;
    if (id)
        *id = 0;
    struct rv_lockfile lock = {.fd = -1};
    struct backup_set s = {0};
    struct backup_meta m = {0};
    struct rv_cp_plan p = {.db = db};
    rc = backup_open_root(root, 1);
    if (rc == RAVEL_OK)
        rc = backup_lock(root, &lock);
    if (rc == RAVEL_OK)
        rc = backup_scan(root, &s);
    if (rc == RAVEL_OK)
        rc = backup_collect_garbage(root, &s, NULL);
    if (rc == RAVEL_OK)
        rc = rv_checkpoint_plan(db, &p);
    if (rc == RAVEL_OK) {
        m.id = s.max_id + 1;
        m.time = (uint64_t)time(NULL);
        m.sequence = p.sequence;
        rc = backup_write_plan(root, &s, &p, &m);
    }
    if (rc == RAVEL_OK)
        rc = backup_meta_write(root, &m);
    if (rc == RAVEL_OK) {
        if (id)
            *id = m.id;
        rv_db_log(db, "backup %" PRIu64 " in %s: sequence %" PRIu64 ", %"
                  PRIu64 " bytes, %" PRIu64 " copied, writers paused %"
                  PRIu64 " us", m.id, root, m.sequence, m.bytes, m.copied,
                  p.pause_micros);
    } else if (m.id) {
        char dir[RV_PATH_MAX];
        if (backup_path(dir, root, "private/%" PRIu64, m.id) == 0)
            rv_copy_remove_dir(dir); /* shared copies: the next create */
    }
    rv_checkpoint_plan_free(&p);
    backup_meta_free(&m);
    backup_set_free(&s);
    rv_lockfile_release(&lock);
    rv_db_leave(db);
    return rc;
}

/* ------------------------------------------------ list, info, verify */

int ravel_backup_list(const char *root, ravel_backup_fn fn, void *ctx)
{
    if (!fn)
        return rv_error(RAVEL_INVALID, "ravel_backup_list: fn is NULL");
    struct backup_set s;
    int rc = backup_open_root(root, 0);
    if (rc == RAVEL_OK)
        rc = backup_scan(root, &s);
    if (rc)
        return rc;
    for (int i = 0; i < s.n_good && rc == RAVEL_OK; i++)
        rc = fn(ctx, s.good[i].id);
    backup_set_free(&s);
    return rc;
}

/* The newest complete backup's id into *ID (RAVEL_NOTFOUND if none). */
static int backup_newest(const char *root, uint64_t *id)
{
    struct backup_set s;
    int rc = backup_scan(root, &s);
    if (rc)
        return rc;
    if (s.n_good == 0)
        rc = rv_error(RAVEL_NOTFOUND, "backup root %s holds no complete "
                      "backup", root);
    else
        *id = s.good[s.n_good - 1].id;
    backup_set_free(&s);
    return rc;
}

int ravel_backup_info(const char *root, uint64_t id, int what,
                      uint64_t *value)
{
    if (!value)
        return rv_error(RAVEL_INVALID, "ravel_backup_info: value is NULL");
    struct backup_meta m;
    int rc = backup_open_root(root, 0);
    if (rc == RAVEL_OK)
        rc = backup_meta_read(root, id, &m);
    if (rc)
        return rc;
    switch (what) {
    case RAVEL_BACKUP_TIME: *value = m.time; break;
    case RAVEL_BACKUP_SEQUENCE: *value = m.sequence; break;
    case RAVEL_BACKUP_BYTES: *value = m.bytes; break;
    case RAVEL_BACKUP_COPIED: *value = m.copied; break;
    case RAVEL_BACKUP_FILES: *value = (uint64_t)m.n; break;
    default:
        rc = rv_error(RAVEL_INVALID, "ravel_backup_info: unknown item %d "
                      "(RAVEL_BACKUP_TIME .. RAVEL_BACKUP_FILES)", what);
    }
    backup_meta_free(&m);
    return rc;
}

/* Checks file F of a backup of ROOT: present, its size and checksum. */
static int backup_check_file(const char *root, const struct backup_file *f)
{
    char path[RV_PATH_MAX];
    uint64_t size = 0, checksum = 0;
    int rc = rv_path_join(path, root, f->path);
    struct stat st;
    if (rc == RAVEL_OK && stat(path, &st) != 0)
        return rv_error_errno(RAVEL_CORRUPT, errno, "backup file %s is "
                              "missing", path);
    if (rc == RAVEL_OK)
        rc = rv_copy_checksum_file(path, &size, &checksum);
    if (rc == RAVEL_OK && size != f->size)
        rc = rv_error(RAVEL_CORRUPT, "backup file %s: %" PRIu64 " bytes, "
                      "the meta file says %" PRIu64, path, size, f->size);
    else if (rc == RAVEL_OK && checksum != f->checksum)
        rc = rv_error(RAVEL_CORRUPT, "backup file %s: checksum mismatch "
                      "(damaged)", path);
    return rc;
}

int ravel_backup_verify(const char *root, uint64_t id)
{
    struct backup_meta m;
    int rc = backup_open_root(root, 0);
    if (rc == RAVEL_OK)
        rc = backup_meta_read(root, id, &m);
    if (rc)
        return rc;
    for (int i = 0; i < m.n && rc == RAVEL_OK; i++)
        rc = backup_check_file(root, &m.files[i]);
    backup_meta_free(&m);
    return rc;
}

/* ------------------------------------------------------------ restore */

/* The name file F of a backup has in a database directory. */
static int backup_restored_name(const struct backup_file *f, char *name,
                                size_t cap)
{
    const char *base = strrchr(f->path, '/');
    base = base ? base + 1 : f->path;
    uint64_t number;
    if (strncmp(f->path, "shared/", 7) == 0) {
        if (sscanf(base, "%" SCNu64 "-", &number) != 1)
            return rv_error(RAVEL_CORRUPT, "backup file %s: not a shared "
                            "table file name", f->path);
        rv_table_file_name(name, cap, number);
        return RAVEL_OK;
    }
    if (!rv_is_database_file_name(base))
        return rv_error(RAVEL_CORRUPT, "backup file %s: not a database "
                        "file name", f->path);
    snprintf(name, cap, "%s", base);
    return RAVEL_OK;
}

static int backup_restore_file(const char *root, const struct backup_file *f,
                               const char *partial)
{
    char name[64], src[RV_PATH_MAX], dst[RV_PATH_MAX];
    uint64_t checksum = 0;
    int rc = backup_restored_name(f, name, sizeof name);
    if (rc == RAVEL_OK)
        rc = rv_path_join(src, root, f->path);
    if (rc == RAVEL_OK)
        rc = rv_path_join(dst, partial, name);
    if (rc == RAVEL_OK)
        rc = rv_copy_file(src, dst, f->size, &checksum);
    if (rc == RAVEL_CORRUPT || (rc == RAVEL_IOERR && access(src, F_OK)))
        return rv_error(RAVEL_CORRUPT, "backup file %s is missing or "
                        "shorter than its %" PRIu64 " bytes", src, f->size);
    if (rc == RAVEL_OK && checksum != f->checksum)
        rc = rv_error(RAVEL_CORRUPT, "backup file %s: checksum mismatch "
                      "(damaged); restore refused", src);
    return rc;
}

int ravel_backup_restore(const char *root, uint64_t id, const char *dir)
{
    struct backup_meta m = {0};
    char partial[RV_PATH_MAX];
    int rc = backup_open_root(root, 0);
    if (rc == RAVEL_OK && id == 0)
        rc = backup_newest(root, &id);
    if (rc == RAVEL_OK)
        rc = backup_meta_read(root, id, &m);
    if (rc)
        return rc;
    rc = rv_copy_dir_begin(dir, partial);
    if (rc) {
        backup_meta_free(&m);
        return rc;
    }
    for (int i = 0; i < m.n && rc == RAVEL_OK; i++)
        rc = backup_restore_file(root, &m.files[i], partial);
    if (rc == RAVEL_OK)
        rc = rv_copy_dir_commit(partial, dir);
    if (rc)
        rv_copy_remove_dir(partial);
    backup_meta_free(&m);
    return rc;
}

/* -------------------------------------------------------------- purge */

int ravel_backup_purge(const char *root, int keep)
{
    if (keep < 1)
        return rv_error(RAVEL_INVALID, "ravel_backup_purge: keep is %d; at "
                        "least 1 backup is kept", keep);
    struct rv_lockfile lock = {.fd = -1};
    struct backup_set s = {0};
    int rc = backup_open_root(root, 0);
    if (rc == RAVEL_OK)
        rc = backup_lock(root, &lock);
    if (rc == RAVEL_OK)
        rc = backup_scan(root, &s);
    char path[RV_PATH_MAX], dir[RV_PATH_MAX];
    int drop = rc == RAVEL_OK && s.n_good > keep ? s.n_good - keep : 0;
    /* the meta files first: once one is gone its backup no longer
    ** exists, and what it named is garbage */
    for (int i = 0; i < drop && rc == RAVEL_OK; i++) {
        rc = backup_path(path, root, "meta/%" PRIu64, s.good[i].id);
        if (rc == RAVEL_OK && unlink(path) != 0)
            rc = rv_error_errno(RAVEL_IOERR, errno, "unlink %s", path);
    }
    if (rc == RAVEL_OK && drop && (rc = rv_path_join(dir, root, "meta")) == 0)
        rc = rv_sync_dir(dir);
    if (rc == RAVEL_OK) {
        for (int i = 0; i < drop; i++)
            backup_meta_free(&s.good[i]);
        memmove(s.good, s.good + drop, (size_t)(s.n_good - drop) *
                sizeof *s.good);
        s.n_good -= drop;
        rc = backup_set_index(&s);
        if (rc == RAVEL_OK)
            rc = backup_collect_garbage(root, &s, NULL);
    }
    backup_set_free(&s);
    rv_lockfile_release(&lock);
    return rc;
}
