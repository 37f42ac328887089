/*
** cmd_repair.c -- the shell's .repair [DIR]: ravel_repair on DIR, or on
** the session's own database (closed first, since repair refuses an open
** database, and opened again after), its report printed line by line.
*/
#include "shell.h"
#include "repair_lines.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether paths A and B name one directory. */
static int repair_same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void shell_cmd_repair(struct shell *s, struct shell_line *l)
{
    char msg[512];
    if (shell_open_work(s, msg, sizeof msg)) {
        shell_error(s, ".repair: %s", msg);
        return;
    }
    const char *dir = l->n > 1 ? l->tok[1].p : s->dir;
    if (!dir || !dir[0]) {
        shell_error(s, ".repair: no database directory given");
        return;
    }
    char *copy = strdup(dir);
    if (!copy) {
        shell_error(s, ".repair: out of memory");
        return;
    }
    int ours = s->dir && repair_same_dir(copy, s->dir);
    if (ours && s->db && shell_db_close(s)) {
        free(copy);
        return;
    }
    struct shell_repair_out out = {.f = s->out};
    int rc = ravel_repair(copy, s->opts, shell_repair_print, &out, NULL);
    if (rc)
        shell_api_error(s, ".repair", rc);
    if (ours && shell_open_dir(s, s->dir, msg, sizeof msg) != RAVEL_OK)
        shell_error(s, ".repair: cannot open '%s' again: %s", s->dir, msg);
    free(copy);
}
