/*
** cmd_files.c -- the commands about the database's files on disk: flush
** (memtables to table files), compact (ravel_compact_range), files (the ravel.sstables listing), .verify
** (every block of every table file checked) and .sst (one table file
** dumped, by sst_dump.c, the code ravel-sst runs too; a name as files
** prints it, or its number, names the file in the database's directory).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell.h"
#include "sst_dump.h"

void shell_cmd_flush(struct shell *s, struct shell_line *l)
{
    int flags = 0;
    for (int i = 1; i < l->n; i++) {
        if (!l->tok[i].quoted && strcmp(l->tok[i].p, "--no-wait") == 0) {
            flags |= RAVEL_FLUSH_NO_WAIT;
        } else {
            shell_usage_error(s, shell_command_find("flush"));
            return;
        }
    }
    if (shell_db_for_write(s, "flush"))
        return;
    int rc = ravel_flush(s->db, flags);
    if (rc)
        shell_api_error(s, "flush", rc);
}

void shell_cmd_compact(struct shell *s, struct shell_line *l)
{
    const struct shell_token *from = l->n > 1 ? &l->tok[1] : NULL;
    const struct shell_token *to = l->n > 2 ? &l->tok[2] : NULL;
    /* compact takes keys only: an unquoted --word is an option that it
    ** does not have (scan's --prefix, say), not a key; a key that starts
    ** with -- is written quoted */
    for (int i = 1; i < l->n; i++)
        if (!l->tok[i].quoted && strncmp(l->tok[i].p, "--", 2) == 0) {
            shell_error(s, "compact: unknown option '%s' (compact takes "
                        "FROM and TO; a key starting with -- is written "
                        "quoted)", l->tok[i].p);
            return;
        }
    if (shell_db_for_write(s, "compact"))
        return;
    int rc = ravel_compact_range(s->db, from ? from->p : NULL,
                                 from ? from->len : 0, to ? to->p : NULL,
                                 to ? to->len : 0);
    if (rc)
        shell_api_error(s, "compact", rc);
}

/* The ravel.sstables property in a new string, or NULL (reported). */
static char *files_listing(struct shell *s, const char *what)
{
    char *text = NULL;
    int rc = ravel_property(s->db, "ravel.sstables", &text);
    if (rc) {
        shell_api_error(s, what, rc);
        return NULL;
    }
    return text;
}

void shell_cmd_files(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (shell_db_note_absent(s)) {
        if (!s->failed)
            fputs("(no table files)\n", s->out);
        return;
    }
    char *text = files_listing(s, "files");
    if (!text)
        return;
    size_t n = strlen(text);
    if (n == 0)
        fputs("(no table files)\n", s->out);
    fputs(text, s->out);
    if (n && text[n - 1] != '\n')
        fputc('\n', s->out);
    ravel_free(text);
}

/* The number of lines of the listing: one per table file. */
static long files_count(const char *text)
{
    long n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

void shell_cmd_verify(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (shell_db_note_absent(s)) {
        if (!s->failed)
            fputs("ok: 0 files checked\n", s->out);
        return;
    }
    /* Counted first: a flush finishing meanwhile adds a file the check
    ** may also cover, never removes one. */
    char *text = files_listing(s, ".verify");
    if (!text)
        return;
    long n = files_count(text);
    ravel_free(text);
    int rc = ravel_verify(s->db);
    if (rc) {
        shell_api_error(s, ".verify", rc);
        return;
    }
    fprintf(s->out, "ok: %ld file%s checked\n", n, n == 1 ? "" : "s");
}

/* FILE as .sst opens it: a bare name that is in the database's directory
** (000012.sst, as files prints it) or a number alone (12) names the table
** file there; anything else is a path.  A new string, or NULL on OOM. */
static char *files_sst_path(const struct shell *s, const char *file)
{
    char *path = NULL;
    size_t digits = strspn(file, "0123456789");
    if (digits && !file[digits] && digits < 20) {
        if (asprintf(&path, "%s/%06llu.sst", s->dir,
                     strtoull(file, NULL, 10)) < 0)
            return NULL;
        return path;
    }
    if (!strchr(file, '/') && asprintf(&path, "%s/%s", s->dir, file) >= 0) {
        if (access(path, F_OK) == 0 && access(file, F_OK) != 0)
            return path;
        free(path);
    }
    return strdup(file);
}

void shell_cmd_sst(struct shell *s, struct shell_line *l)
{
    struct shell_sst_options o = {.mode = s->mode};
    const char *file = NULL;
    char err[600];
    for (int i = 1; i < l->n; i++) {
        struct shell_token *t = &l->tok[i];
        const char *next = i + 1 < l->n ? l->tok[i + 1].p : NULL;
        int used = t->quoted ? 0 : shell_sst_parse_option(t->p, next, &o, err,
                                                          sizeof err);
        if (used < 0) {
            shell_error(s, ".sst: %s", err);
            return;
        }
        if (used > 0) {
            i += used - 1;
            continue;
        }
        if (file) {
            shell_error(s, ".sst: one file at a time ('%s' and '%s')", file,
                        t->p);
            return;
        }
        if (strlen(t->p) != t->len || t->len == 0) {
            shell_error(s, ".sst: %s: not a usable file name",
                        t->len ? "NUL byte" : "empty name");
            return;
        }
        file = t->p;
    }
    if (!file) {
        shell_usage_error(s, shell_command_find(".sst"));
        return;
    }
    char *path = files_sst_path(s, file);
    if (!path) {
        shell_error(s, ".sst: out of memory");
        return;
    }
    if (shell_sst_dump(s->out, path, &o, err, sizeof err))
        shell_error(s, ".sst: %s", err);
    free(path);
}
