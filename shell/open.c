/*
** open.c -- the session's database: opened lazily, created by the first
** write, and .open.
**
** As sqlite3 creates its file only when the first write needs it, the
** shell opens a DIR that does not exist (or is a directory holding none of
** a database's files) without creating anything.  Until a write, reads (get, scan, count, .dump) see
** an empty database; the first command that writes (put, del, commit,
** .import, flush, flush-wal, compact) creates it with the session's
** options, and so does begin (a transaction needs a database); commands
** that describe the files (stats, property, files, .verify, .options, and
** recover) say there is no database yet.  A session that never
** writes leaves nothing on disk, so a mistyped `ravel typo.db "get a"`
** leaves no typo.db behind.
**
** With create_if_missing false (-readonly sets it) nothing is lazy: a DIR
** without a database is an error naming it, from the library.
**
** Every use of s->db goes through the calls here, which is where "no
** database yet" is decided; s->db is NULL exactly while it holds.
*/
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shell.h"

/* Whether NAME is one of the files a ravel database directory holds (the
** library's names: lib/util/filename.h), or its lost/ directory. */
static int open_is_database_file(const char *name)
{
    static const char *const exact[] = {"CURRENT", "IDENTITY", "LOCK", "LOG",
                                        "lost", NULL};
    for (int i = 0; exact[i]; i++)
        if (strcmp(name, exact[i]) == 0)
            return 1;
    size_t n = strlen(name);
    return strncmp(name, "MANIFEST-", 9) == 0 ||
           strncmp(name, "LOG.", 4) == 0 ||
           (strncmp(name, "wal-", 4) == 0 && n > 4 &&
            strcmp(name + n - 4, ".log") == 0) ||
           (n > 4 && strcmp(name + n - 4, ".sst") == 0);
}

/* Whether DIR holds no database yet: no such path, or a directory with
** none of a database's files in it (empty, or a project directory with
** other files: `ravel . "get x"` must not turn it into a database).  A
** directory with any of them -- even a damaged database missing CURRENT --
** is opened, so that the library reports what is wrong instead of the
** shell showing an empty database. */
static int open_is_absent(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT;
    if (!S_ISDIR(st.st_mode))
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int none = 1;
    struct dirent *e;
    while (none && (e = readdir(d)) != NULL)
        none = !open_is_database_file(e->d_name);
    closedir(d);
    return none;
}

/* Whether option NAME of OPTS is "true". */
static int open_option_is_true(const ravel_options *opts, const char *name)
{
    char *v = NULL;
    int yes = ravel_options_get(opts, name, &v) == RAVEL_OK &&
              strcmp(v, "true") == 0;
    ravel_free(v);
    return yes;
}

/* Whether the options let a write create the database (create_if_missing,
** and not read_only: -o read_only=true on a missing database is an error
** at once, as -readonly's is, not a promise of a write that will fail). */
static int open_may_create(const ravel_options *opts)
{
    return open_option_is_true(opts, "create_if_missing") &&
           !open_option_is_true(opts, "read_only");
}

/* Opens DIR with OPTS into *DB; *DB stays NULL when DIR holds nothing yet
** and OPTS let a write create it.  A ravel code, with the message in MSG. */
static int open_dir(const ravel_options *opts, const char *dir,
                    ravel_db **db, char *msg, size_t len)
{
    *db = NULL;
    if (open_may_create(opts) && open_is_absent(dir))
        return RAVEL_OK;
    int rc = ravel_open(dir, opts, db);
    if (rc) {
        *db = NULL;
        const char *m = ravel_errmsg();
        snprintf(msg, len, "%s", m && m[0] ? m : ravel_errstr(rc));
    }
    return rc;
}

int shell_open_dir(struct shell *s, const char *dir, char *msg, size_t len)
{
    char *copy = strdup(dir);
    if (!copy) {
        snprintf(msg, len, "out of memory");
        return RAVEL_NOMEM;
    }
    ravel_db *db;
    int rc = open_dir(s->opts, dir, &db, msg, len);
    if (rc) {
        free(copy);
        return rc;
    }
    s->db = db;
    free(s->dir);
    s->dir = copy;
    s->absent_noted = 0;
    return RAVEL_OK;
}

int shell_db_read_only(const struct shell *s)
{
    return open_option_is_true(s->opts, "read_only");
}

int shell_db_absent(const struct shell *s)
{
    return s->db == NULL;
}

int shell_db_for_write(struct shell *s, const char *what)
{
    if (s->db)
        return 0;
    int rc = ravel_open(s->dir, s->opts, &s->db);
    if (rc) {
        s->db = NULL;
        const char *m = ravel_errmsg();
        shell_error(s, "%s: cannot create the database '%s': %s", what, s->dir,
                    m && m[0] ? m : ravel_errstr(rc));
        return -1;
    }
    return 0;
}

int shell_db_note_absent(struct shell *s)
{
    if (s->db)
        return 0;
    /* Another process may have created it since (a script's other shell):
    ** then it is opened, and read, instead of shown empty.  A snapshot
    ** taken while it was absent stays empty (shell_db_for_read). */
    if (!s->snap_empty && !open_is_absent(s->dir)) {
        char msg[512];
        if (open_dir(s->opts, s->dir, &s->db, msg, sizeof msg) == RAVEL_OK &&
            s->db)
            return 0;
        s->db = NULL;
        /* there is a database now, but it cannot be read (another process
        ** holds it, say): an error, not an empty answer given as true */
        shell_error(s, "the database '%s' exists now but cannot be opened: "
                    "%s", s->dir, msg);
        return 1;
    }
    if (!s->absent_noted && !s->interactive) {
        /* (A person saw it in the banner, or from .open.) */
        fflush(s->out);
        fprintf(stderr, "note: no database at '%s' yet: reads see it empty, "
                "and the first write creates it\n", s->dir);
        s->absent_noted = 1;
    }
    return 1;
}

int shell_db_for_read(struct shell *s)
{
    if (shell_db_note_absent(s) || s->snap_empty)
        return 1;
    if (s->snap && !s->snap_noted) {
        s->snap_noted = 1;
        shell_note(s, "(reading through the snapshot at sequence %" PRIu64
                   "; 'release' reads the latest)",
                   ravel_snapshot_sequence(s->snap));
    }
    return 0;
}

int shell_db_needed(struct shell *s, const char *what)
{
    if (s->db)
        return 0;
    shell_error(s, "%s: no database at '%s' yet (the first write creates it)",
                what, s->dir);
    return -1;
}

int shell_db_close(struct shell *s)
{
    if (s->snap) {
        ravel_snapshot_release(s->db, s->snap);
        s->snap = NULL;
    }
    s->snap_empty = 0;
    if (!s->db)
        return 0;
    int rc = ravel_close(s->db);
    s->db = NULL;
    if (rc) {
        const char *m = ravel_errmsg();
        shell_error(s, "closing the database '%s': %s", s->dir,
                    m && m[0] ? m : ravel_errstr(rc));
        return -1;
    }
    return 0;
}

/* .open DIR: the new database is opened before the old one is closed, so
** a failure leaves the session as it was -- unless the new one is the
** same directory (its lock is ours): then the old is closed first, and
** opened again if the new open fails. */
/* Whether paths A and B name one directory (the same device and inode). */
static int open_same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

void shell_cmd_open(struct shell *s, struct shell_line *l)
{
    const struct shell_token *t = &l->tok[1];
    if (strlen(t->p) != t->len || t->len == 0) {
        shell_error(s, ".open: not a usable directory name");
        return;
    }
    char *dir, msg[512];
    if (shell_open_work(s, msg, sizeof msg)) {
        shell_error(s, ".open: %s", msg);
        return;
    }
    dir = strdup(t->p);
    if (!dir) {
        shell_error(s, ".open: out of memory");
        return;
    }
    int had_snapshot = s->snap || s->snap_empty;
    ravel_db *db;
    int rc = open_dir(s->opts, dir, &db, msg, sizeof msg);
    /* the same database again: this session holds its LOCK, so it is
    ** closed first (a database another process holds stays untouched) */
    if (rc == RAVEL_LOCKED && s->db && open_same_dir(dir, s->dir)) {
        shell_db_close(s);
        rc = open_dir(s->opts, dir, &db, msg, sizeof msg);
        if (rc) {
            char ignored[512];
            open_dir(s->opts, s->dir, &s->db, ignored, sizeof ignored);
        }
    }
    if (rc) {
        shell_error(s, ".open: cannot open database '%s': %s", dir, msg);
        free(dir);
        return;
    }
    shell_db_close(s);
    if (had_snapshot)
        shell_note(s, "the snapshot was released");
    free(s->dir);
    s->db = db;
    s->dir = dir;
    s->absent_noted = 0;
    if (!s->db)
        shell_note(s, "no database at '%s' yet: the first write creates it",
                   s->dir);
}
