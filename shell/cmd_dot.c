/*
** cmd_dot.c -- the dot commands that shape the session rather than the
** data: .help, .quit, .timer, .mode, .sync, .options, .read, .output.
** (.import and .dump live in transfer.c.)
*/
#include <errno.h>
#include <string.h>
#include <strings.h>

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
    static const char *names[] = {"text", "hex", "json"};
    if (l->n == 1) {
        fprintf(s->out, "%s\n", names[s->mode]);
        return;
    }
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(l->tok[1].p, names[i]) == 0) {
            s->mode = (enum shell_mode)i;
            return;
        }
    }
    shell_error(s, ".mode: unknown mode '%s' (text, hex or json)", l->tok[1].p);
}

void shell_cmd_options(struct shell *s, struct shell_line *l)
{
    (void)l;
    char *text = NULL;
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

void shell_cmd_output(struct shell *s, struct shell_line *l)
{
    FILE *f = stdout;
    if (l->n == 2 && strcmp(l->tok[1].p, "-") != 0) {
        const char *name = dot_filename(s, &l->tok[1]);
        if (!name)
            return;
        f = fopen(name, "w");
        if (!f) {
            shell_error(s, ".output: cannot open '%s': %s", name,
                        strerror(errno));
            return;
        }
    }
    FILE *old = s->out;
    s->out = f;
    if (old != stdout && fclose(old) != 0)
        shell_error(s, ".output: writing the previous output file failed: %s",
                    strerror(errno));
}
