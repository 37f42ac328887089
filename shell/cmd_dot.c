/*
** cmd_dot.c -- the dot commands that shape the session rather than the
** data: .help, .quit, .timer, .mode, .sync, .options, .read, .output,
** .once and .shell.  (.import and .dump live in
** transfer.c, .open in open.c, .backup and .restore in cmd_backup.c.)
**
** Output goes to s->out: stdout, a file (.output FILE), or a command's
** standard input (.output |COMMAND, through popen), as sqlite3 does.
** .once sends the output of the next command only; session.c puts it back
** after that command.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "shell.h"

#define DOT_MAX_READ_DEPTH 16

/* A file name from a token, refusing embedded NUL bytes. */
static const char *dot_filename(struct shell *s, const struct shell_token *t)
{
    if (strlen(t->p) != t->len || t->len == 0) {
        shell_error(s, "%s: not a usable file name", t->len ? "NUL byte" :
                    "empty name");
        return NULL;
    }
    return t->p;
}

/* The rest of the line after the command's name, as typed (.shell's
** command, .output's |COMMAND); empty if none. */
static const char *dot_rest_of_line(const struct shell *s, size_t *len)
{
    const char *p = s->line, *end = s->line + s->line_len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (p < end && *p != ' ' && *p != '\t') /* the command's name */
        p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    *len = (size_t)(end - p);
    return p;
}

/* on/off and their usual spellings; -1 if neither. */
static int dot_bool(const char *v)
{
    static const char *on[] = {"on", "1", "yes", "true"};
    static const char *off[] = {"off", "0", "no", "false"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, on[i]) == 0)
            return 1;
        if (strcasecmp(v, off[i]) == 0)
            return 0;
    }
    return -1;
}

/* Sets *FLAG from the optional on|off argument, or prints it. */
static void dot_onoff(struct shell *s, struct shell_line *l, int *flag)
{
    if (l->n == 1) {
        fprintf(s->out, "%s\n", *flag ? "on" : "off");
        return;
    }
    int v = dot_bool(l->tok[1].p);
    if (v < 0) {
        shell_error(s, "%s: expected on or off, not '%s'", l->tok[0].p,
                    l->tok[1].p);
        return;
    }
    *flag = v;
}

void shell_cmd_help(struct shell *s, struct shell_line *l)
{
    if (l->n == 1) {
        shell_help_all(s->out);
        return;
    }
    const char *name = l->tok[1].p;
    if (shell_help_one(s->out, name) == 0)
        return;
    const char *hint = shell_command_suggest(name);
    if (hint)
        shell_error(s, ".help: unknown command '%s' (did you mean '%s'?)", name,
                    hint);
    else
        shell_error(s, ".help: unknown command '%s'", name);
}

void shell_cmd_quit(struct shell *s, struct shell_line *l)
{
    (void)l;
    s->quit = 1;
}

void shell_cmd_timer(struct shell *s, struct shell_line *l)
{
    dot_onoff(s, l, &s->timer);
}

void shell_cmd_sync(struct shell *s, struct shell_line *l)
{
    dot_onoff(s, l, &s->sync);
}

void shell_cmd_mode(struct shell *s, struct shell_line *l)
{
    if (l->n == 1) {
        fprintf(s->out, "%s\n", shell_mode_names[s->mode]);
        return;
    }
    int mode = shell_mode_find(l->tok[1].p);
    if (mode < 0) {
        shell_error(s, ".mode: unknown mode '%s' (text, hex, quote, json or "
                    "csv)", l->tok[1].p);
        return;
    }
    s->mode = (enum shell_mode)mode;
}

void shell_cmd_options(struct shell *s, struct shell_line *l)
{
    (void)l;
    char *text = NULL;
    if (shell_db_needed(s, ".options"))
        return;
    int rc = ravel_property(s->db, "ravel.options", &text);
    if (rc) {
        shell_api_error(s, ".options", rc);
        return;
    }
    size_t n = strlen(text);
    fputs(text, s->out);
    if (n && text[n - 1] != '\n')
        fputc('\n', s->out);
    ravel_free(text);
}

void shell_cmd_read(struct shell *s, struct shell_line *l)
{
    const char *name = dot_filename(s, &l->tok[1]);
    if (!name)
        return;
    if (s->read_depth >= DOT_MAX_READ_DEPTH) {
        shell_error(s, ".read: files nested more than %d deep (does '%s' "
                    "read itself?)", DOT_MAX_READ_DEPTH, name);
        return;
    }
    FILE *f = fopen(name, "r");
    if (!f) {
        shell_error(s, ".read: cannot open '%s': %s", name, strerror(errno));
        return;
    }
    struct shell_source src = {SHELL_SRC_FILE, name, 0};
    s->read_depth++;
    shell_run_file(s, f, &src);
    s->read_depth--;
    fclose(f);
}

int shell_output_reset(struct shell *s)
{
    FILE *old = s->out;
    int was_pipe = s->out_pipe;
    s->out = stdout;
    s->out_pipe = 0;
    s->once = 0;
    if (old == stdout)
        return 0;
    if (was_pipe) {
        int status = pclose(old);
        return status == -1 ? -1 : 0; /* the command's status is its own */
    }
    return fclose(old) == 0 ? 0 : -1;
}

/* Sends the output to NAME: a file, or |COMMAND's standard input, or
** stdout for "-" or no name.  WHAT names the command in errors. */
static int dot_redirect(struct shell *s, const struct shell_token *t,
                        const char *what)
{
    FILE *f = stdout;
    int pipe = 0;
    if (t && strcmp(t->p, "-") != 0) {
        const char *name = dot_filename(s, t);
        if (!name)
            return -1;
        fflush(stdout); /* what was printed comes before the command's */
        pipe = name[0] == '|';
        f = pipe ? popen(name + 1, "w") : fopen(name, "w");
        if (!f) {
            shell_error(s, "%s: cannot open '%s': %s", what, name,
                        strerror(errno));
            return -1;
        }
    }
    if (shell_output_reset(s))
        shell_error(s, "%s: writing the previous output failed: %s", what,
                    strerror(errno));
    s->out = f;
    s->out_pipe = pipe;
    return 0;
}

/* The target of .output/.once: one word (FILE, '|COMMAND' quoted), or an
** unquoted |COMMAND with arguments, taken as the rest of the line as
** sqlite3 takes it (.output |head -2).  Returns 0 with *T pointing at the
** target (NULL: none), or -1 after a usage error. */
static int dot_target(struct shell *s, struct shell_line *l, const char *name,
                      int required, struct shell_token *rest,
                      const struct shell_token **t)
{
    *t = NULL;
    if (l->n == 2) {
        *t = &l->tok[1];
        return 0;
    }
    if (l->n > 2 && l->tok[1].p[0] == '|' && !l->tok[1].quoted) {
        size_t len;
        const char *p = dot_rest_of_line(s, &len);
        rest->p = strndup(p, len);
        rest->len = len;
        rest->quoted = 0;
        if (!rest->p) {
            shell_error(s, "out of memory");
            return -1;
        }
        *t = rest;
        return 0;
    }
    if (l->n == 1 && !required)
        return 0;
    shell_usage_error(s, shell_command_find(name));
    return -1;
}

void shell_cmd_output(struct shell *s, struct shell_line *l)
{
    struct shell_token rest = {0};
    const struct shell_token *t;
    if (dot_target(s, l, ".output", 0, &rest, &t) == 0)
        dot_redirect(s, t, ".output");
    free(rest.p);
}

void shell_cmd_once(struct shell *s, struct shell_line *l)
{
    struct shell_token rest = {0};
    const struct shell_token *t;
    if (dot_target(s, l, ".once", 1, &rest, &t) == 0 &&
        dot_redirect(s, t, ".once") == 0)
        s->once = ++s->once_serial;
    free(rest.p);
}

/* .shell CMD runs the rest of the line, as typed, with /bin/sh. */
void shell_cmd_shell(struct shell *s, struct shell_line *l)
{
    size_t len;
    const char *p = dot_rest_of_line(s, &len);
    if (len == 0 || l->n < 2) {
        shell_usage_error(s, shell_command_find(".shell"));
        return;
    }
    char *cmd = strndup(p, len);
    if (!cmd) {
        shell_error(s, ".shell: out of memory");
        return;
    }
    fflush(s->out);
    fflush(stdout);
    int status = system(cmd);
    if (status == -1)
        shell_error(s, ".shell: cannot run '%s': %s", cmd, strerror(errno));
    else if (WIFSIGNALED(status))
        shell_error(s, ".shell: '%s' was killed by signal %d", cmd,
                    WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
        shell_error(s, ".shell: '%s' exited with status %d", cmd,
                    WEXITSTATUS(status));
    free(cmd);
}
