/*
** input.c -- reading lines: libedit at the terminal, plain reading otherwise.
**
** When meson finds libedit (Debian: libedit-dev) the build defines
** SHELL_HAVE_LIBEDIT, and an interactive session on a terminal gets line
** editing, a history kept in ~/.ravel_history across sessions, and tab
** completion of command names (from the command table), of .mode/.timer/
** .sync arguments, of scan's options, of property names (from the
** library's table), of keys after get, del, put, scan and count (from the
** open database, complete_keys.c) and of file names after .import,
** .read, .output, .once, .open and .dump.  Without libedit, or when the
** input is not a terminal, lines are read with getline(): any length, any
** byte.
**
** The libedit readline() returns NULL both at end of input and when a
** SIGINT interrupts its read(); the session tells them apart with
** shell_interrupted.
*/
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "shell.h"

#ifdef SHELL_HAVE_LIBEDIT
#include <pwd.h>
#include <editline/readline.h>
#endif

/* Waits until F has input or a SIGINT arrives.  SIGINT stays blocked from
** before the check of shell_interrupted until pselect() atomically
** unblocks it, so a ^C typed just after the prompt appeared, before the
** shell blocked, is not lost (it would otherwise set the flag, be
** swallowed by the terminal, and leave the read blocked).  F must be
** unbuffered (shell_run_interactive makes stdin so) for the wait to be
** exact.  Returns 0 when input is ready, -1 when interrupted. */
static int input_wait(FILE *f)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &old);
    int rc = shell_interrupted ? -1 : 0;
    if (rc == 0) {
        fd_set readable;
        FD_ZERO(&readable);
        FD_SET(fileno(f), &readable);
        if (pselect(fileno(f) + 1, &readable, NULL, NULL, NULL, &old) < 0 &&
            errno == EINTR)
            rc = -1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static char *input_plain(FILE *f, const char *prompt, size_t *len)
{
    if (prompt) {
        fputs(prompt, stdout);
        fflush(stdout);
        if (input_wait(f) < 0)
            return NULL; /* shell_interrupted tells the session why */
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    if (n < 0) {
        free(line);
        if (shell_interrupted)
            clearerr(f); /* ^C at the prompt is not the end of input */
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    if (n > 0 && line[n - 1] == '\r')
        line[--n] = '\0';
    *len = (size_t)n;
    return line;
}

#ifdef SHELL_HAVE_LIBEDIT

static char input_history_path[4096];
static char *input_last_added;

int shell_have_editor(void)
{
    return 1;
}

/* The words a completion generator offers; set before each call. */
static const char *const *input_words;
static const char *input_onoff_words[] = {"on", "off", NULL};
static const char *input_scan_words[] = {"--from", "--to", "--limit",
                                         "--prefix", "--reverse", NULL};
static const char *input_flush_words[] = {"--sync", NULL};
static const char *input_begin_words[] = {"--optimistic", "--sync", NULL};
static const char *input_get_words[] = {"--for-update", NULL};

static char *input_word_generator(const char *text, int state)
{
    static size_t next;
    if (!state)
        next = 0;
    size_t n = strlen(text);
    while (input_words[next]) {
        const char *w = input_words[next++];
        if (strncmp(w, text, n) == 0)
            return strdup(w);
    }
    return NULL;
}

static char *input_command_generator(const char *text, int state)
{
    static size_t next;
    if (!state)
        next = 0;
    size_t n = strlen(text);
    while (shell_commands[next].name) {
        const char *w = shell_commands[next++].name;
        if (strncmp(w, text, n) == 0)
            return strdup(w);
    }
    return NULL;
}

static char *input_property_generator(const char *text, int state)
{
    static size_t next;
    if (!state)
        next = 0;
    size_t n = strlen(text);
    for (const char *w; (w = shell_property_word(next)) != NULL;) {
        next++;
        if (strncmp(w, text, n) == 0)
            return strdup(w);
    }
    return NULL;
}

/* The session whose database keys are completed from (shell_read_line). */
static struct shell *input_shell;

/* The argument as typed, and how many of its first bytes libedit keeps
** (an opening quote alone), for input_key_generator. */
static const char *input_key_text;
static int input_key_skip;

static char *input_key_generator(const char *text, int state)
{
    static char **keys;
    static size_t next;
    (void)text; /* backslashes removed: input_key_text is as typed */
    if (!state) {
        for (size_t i = 0; keys && keys[i]; i++)
            free(keys[i]);
        free(keys);
        keys = input_shell ? shell_complete_keys(input_shell, input_key_text)
                           : NULL;
        next = 0;
    }
    if (keys && !keys[next]) {
        free(keys); /* every key was handed over */
        keys = NULL;
    }
    if (!keys)
        return NULL;
    char *w = keys[next];
    keys[next++] = NULL; /* the caller frees it */
    if (input_key_skip && w[0])
        memmove(w, w + input_key_skip, strlen(w + input_key_skip) + 1);
    return w;
}

/* Whether T is the unquoted option NAME. */
static int input_is_option(const struct shell_token *t, const char *name)
{
    return !t->quoted && strcmp(t->p, name) == 0;
}

/* Whether scan's option T takes the argument after it (a key but for
** --limit's count). */
static int input_scan_option_with_arg(const struct shell_token *t)
{
    return input_is_option(t, "--prefix") || input_is_option(t, "--from") ||
           input_is_option(t, "--to") || input_is_option(t, "--limit");
}

/* Whether the argument being typed, after the words of the line before
** it (BEFORE, tokenized: BEFORE->tok[0] is command C), is a key: the first
** argument of get (or the one after its --for-update), del and put, FROM
** and TO of scan and count, and the argument of scan's --prefix, --from
** and --to. */
static int input_is_key(const struct shell_command *c,
                        const struct shell_line *before, const char *text)
{
    int arg = before->n; /* 1 for the first argument */
    const char *name = c->name;
    if (!strcmp(name, "get") && arg == 2)
        return input_is_option(&before->tok[1], "--for-update");
    if (!strcmp(name, "get") || !strcmp(name, "del") || !strcmp(name, "put"))
        return arg == 1;
    if (!strcmp(name, "count"))
        return arg <= 2;
    if (strcmp(name, "scan") != 0 || text[0] == '-')
        return 0;
    const struct shell_token *prev = &before->tok[before->n - 1];
    if (input_scan_option_with_arg(prev))
        return !input_is_option(prev, "--limit");
    int positional = 0;
    for (int i = 1; i < before->n; i++) {
        const struct shell_token *t = &before->tok[i];
        if (input_scan_option_with_arg(t))
            i++;
        else if (t->quoted || t->p[0] != '-')
            positional++;
    }
    return positional < 2;
}

/* What libedit replaces by the completion, START .. END of the line, as
** typed (libedit hands TEXT over with backslashes removed); a quote that
** opens the argument and is all of it stays, and is not part of it. */
static char *input_raw_word(int start, int end, int *kept_quote)
{
    const char *line = rl_line_buffer;
    *kept_quote = start == end && start > 0 &&
                  (line[start - 1] == '"' || line[start - 1] == '\'') &&
                  (start == 1 || line[start - 2] == ' ' ||
                   line[start - 2] == '\t');
    if (*kept_quote)
        start--;
    return strndup(line + start, (size_t)(end - start));
}

/* The keys completing the argument typed so far (RAW): candidates whose
** first character is dropped when libedit keeps the opening quote. */
static char **input_key_matches(const char *raw, int kept_quote)
{
    input_key_text = raw;
    input_key_skip = kept_quote;
    return rl_completion_matches(raw + kept_quote, input_key_generator);
}

/* The completion of an argument of C (from START to END of the line): its
** words, or keys. */
static char **input_complete_argument(const struct shell_command *c,
                                      const char *text, int start, int end)
{
    struct shell_line before;
    char err[128];
    if (shell_tokenize(rl_line_buffer, (size_t)start, &before, err,
                       sizeof err) || before.n == 0)
        return NULL;
    int key = input_is_key(c, &before, text);
    shell_line_free(&before);
    if (!key)
        return NULL;
    int kept_quote;
    char *raw = input_raw_word(start, end, &kept_quote);
    char **matches = raw ? input_key_matches(raw, kept_quote) : NULL;
    free(raw);
    return matches;
}

static char **input_complete(const char *text, int start, int end)
{
    const char *buf = rl_line_buffer;
    size_t lead = strspn(buf, " \t");
    rl_attempted_completion_over = 1; /* no file names unless asked below */
    if ((size_t)start <= lead)
        return rl_completion_matches(text, input_command_generator);

    char first[32];
    size_t flen = strcspn(buf + lead, " \t");
    snprintf(first, sizeof first, "%.*s", (int)(flen < 31 ? flen : 31),
             buf + lead);
    const struct shell_command *c = shell_command_find(first);
    if (!c)
        return NULL;
    input_words = NULL;
    if (strcmp(c->name, ".help") == 0)
        return rl_completion_matches(text, input_command_generator);
    if (strcmp(c->name, "property") == 0)
        return rl_completion_matches(text, input_property_generator);
    if (strcmp(c->name, ".mode") == 0)
        input_words = shell_mode_names;
    else if (strcmp(c->name, ".timer") == 0 || strcmp(c->name, ".sync") == 0)
        input_words = input_onoff_words;
    else if (strcmp(c->name, "scan") == 0 && text[0] == '-')
        input_words = input_scan_words;
    else if (strcmp(c->name, "flush-wal") == 0)
        input_words = input_flush_words;
    else if (strcmp(c->name, "begin") == 0)
        input_words = input_begin_words;
    else if (strcmp(c->name, "get") == 0 && text[0] == '-')
        input_words = input_get_words;
    else if (strcmp(c->name, ".import") == 0 || strcmp(c->name, ".read") == 0 ||
             strcmp(c->name, ".output") == 0 || strcmp(c->name, ".dump") == 0 ||
             strcmp(c->name, ".once") == 0 || strcmp(c->name, ".open") == 0)
        rl_attempted_completion_over = 0; /* libedit completes file names */
    if (!input_words)
        return input_complete_argument(c, text, start, end);
    return rl_completion_matches(text, input_word_generator);
}

/* libedit's own read retries a read() interrupted by SIGINT, so a ^C at
** the prompt could go unnoticed until the next key.  This replacement
** waits with input_wait() (no ^C lost) and ends the line on ^C; the
** session then discards what was typed (shell_interrupted is set). */
static int input_getc(FILE *f)
{
    unsigned char c;
    if (input_wait(f) < 0)
        return EOF;
    ssize_t n = read(fileno(f), &c, 1);
    return n == 1 ? c : EOF;
}

void shell_editor_open(void)
{
    const char *home = getenv("HOME");
    if (!home || !home[0]) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (home)
        snprintf(input_history_path, sizeof input_history_path,
                 "%s/.ravel_history", home);
    rl_getc_function = input_getc;
    rl_readline_name = "ravel";
    rl_attempted_completion_function = input_complete;
    /* An argument is split at blanks only, so a quote typed to start a
    ** key ("a b or x'00) belongs to the word completed. */
    rl_completer_word_break_characters = " \t";
    rl_basic_word_break_characters = " \t";
    using_history();
    stifle_history(1000);
    if (input_history_path[0])
        read_history(input_history_path);
}

void shell_editor_close(void)
{
    if (input_history_path[0])
        write_history(input_history_path);
    free(input_last_added);
    input_last_added = NULL;
}

void shell_editor_add_history(const char *line)
{
    if (input_last_added && strcmp(input_last_added, line) == 0)
        return;
    add_history(line);
    free(input_last_added);
    input_last_added = strdup(line);
}

char *shell_read_line(struct shell *s, FILE *f, const char *prompt,
                      size_t *len)
{
    if (!(s->use_editor && f == stdin && prompt))
        return input_plain(f, prompt, len);
    input_shell = s;
    char *line = readline(prompt);
    if (line)
        *len = strlen(line);
    return line;
}

#else /* !SHELL_HAVE_LIBEDIT */

int shell_have_editor(void)
{
    return 0;
}

void shell_editor_open(void)
{
}

void shell_editor_close(void)
{
}

void shell_editor_add_history(const char *line)
{
    (void)line;
}

char *shell_read_line(struct shell *s, FILE *f, const char *prompt,
                      size_t *len)
{
    (void)s;
    return input_plain(f, prompt, len);
}

#endif
