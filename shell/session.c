/*
** session.c -- running lines: dispatch, error locations, -bail, timers.
**
** A session runs lines from a stack of sources: the rc file (-init), the
** -cmd options, the terminal, standard input, the command-line arguments,
** and .read files nested inside them.  Each source numbers its lines so
** that an error says where it happened ("error: line 3: unterminated
** string", "error: setup.txt: line 7: ...", "error: argument 2: ...",
** "error: -cmd 1: ...").  Lines typed at the terminal need no location.
**
** The prompt says what the session holds -- "ravel (batch 3)> " while a
** batch of 3 operations waits for commit, "ravel (snapshot 42)> " while
** reads see sequence 42, "ravel (txn)> " or "ravel (txn optimistic)> "
** while a transaction is open, "ravel (prepared NAME)> " once it is
** prepared -- so that none is a surprise.
**
** Errors never stop the session unless -bail is given; they are counted
** for the exit code.  An error while a batch or a transaction is open in a
** script marks it, so that commit refuses to write one missing the line
** that failed (a person at the terminal sees the error and can simply
** retype).
*/
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "shell.h"

volatile sig_atomic_t shell_interrupted;

static void session_location(const struct shell *s, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!s->src)
        return;
    switch (s->src->kind) {
    case SHELL_SRC_TERMINAL:
        break;
    case SHELL_SRC_STDIN:
        snprintf(buf, len, "line %ld: ", s->src->line);
        break;
    case SHELL_SRC_FILE:
        snprintf(buf, len, "%s: line %ld: ", s->src->name, s->src->line);
        break;
    case SHELL_SRC_ARGS:
        snprintf(buf, len, "argument %ld: ", s->src->line);
        break;
    case SHELL_SRC_CMD:
        snprintf(buf, len, "-cmd %ld: ", s->src->line);
        break;
    }
}

void shell_error(struct shell *s, const char *fmt, ...)
{
    char loc[300];
    session_location(s, loc, sizeof loc);
    /* Output and errors often share a terminal or a file: keep order. */
    fflush(s->out);
    fflush(stdout);
    fprintf(stderr, "error: %s", loc);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);

    s->failed = 1;
    s->errors++;
    if (s->bail)
        s->quit = 1;
    if ((s->batch || (s->txn && !s->txn_prepared)) && !s->open_error[0] &&
        s->src &&
        s->src->kind != SHELL_SRC_TERMINAL) {
        if (loc[0])
            snprintf(s->open_error, sizeof s->open_error, "%.*s",
                     (int)strlen(loc) - 2, loc);
        else
            snprintf(s->open_error, sizeof s->open_error, "an earlier line");
    }
}

const char *shell_api_message(int rc)
{
    const char *msg = ravel_errmsg();
    /* "ravel_put: ..." -- the shell names the command instead. */
    if (msg && strncmp(msg, "ravel_", 6) == 0) {
        size_t n = strspn(msg + 6, "abcdefghijklmnopqrstuvwxyz_");
        if (strncmp(msg + 6 + n, ": ", 2) == 0)
            msg += 6 + n + 2;
    }
    return msg && msg[0] ? msg : ravel_errstr(rc);
}

void shell_api_error(struct shell *s, const char *what, int rc)
{
    shell_error(s, "%s: %s", what, shell_api_message(rc));
}

void shell_note(struct shell *s, const char *fmt, ...)
{
    if (!s->interactive)
        return;
    fflush(s->out);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static double session_seconds(const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static void session_unknown(struct shell *s, const struct shell_token *t)
{
    char name[64], *shown = NULL;
    size_t shown_len = 0;
    FILE *m = open_memstream(&shown, &shown_len);
    if (m) {
        shell_put_text(m, t->p, t->len > 40 ? 40 : t->len);
        fclose(m);
    }
    snprintf(name, sizeof name, "%s%s", shown ? shown : "?",
             t->len > 40 ? "..." : "");
    free(shown);
    const char *hint = shell_command_suggest(name);
    if (hint)
        shell_error(s, "unknown command '%s' (did you mean '%s'?)", name, hint);
    else
        shell_error(s, "unknown command '%s' (.help lists the commands)", name);
}

/* After a command: output that cannot be written is an error, once. */
static void session_check_output(struct shell *s)
{
    if (fflush(s->out) == 0 && !ferror(s->out))
        return;
    int e = errno;
    if (s->out != stdout && s->out_pipe && e == EPIPE) {
        /* .output |head: the command read what it wanted and left, as
        ** sqlite3 lets it; the rest of the output goes nowhere */
        shell_output_reset(s);
    } else if (s->out != stdout) {
        shell_output_reset(s);
        shell_error(s, "cannot write output: %s (output back on stdout)",
                    strerror(e));
    } else if (e == EPIPE) {
        /* The reader went away (ravel DIR scan | head): stop quietly, as
        ** SIGPIPE would have, but with a failing exit code. */
        s->errors++;
        s->quit = 1;
    } else {
        clearerr(stdout);
        shell_error(s, "cannot write output: %s", strerror(e));
        s->quit = 1;
    }
}

/* The commands whose argument is the rest of the line as typed, handed to
** /bin/sh: .shell and .system, and .output or .once given |COMMAND.  Such
** a line need not follow the shell's own quoting ('echo it'"'"'s' is the
** system shell's business): when it does not tokenize, L becomes the
** command and the raw rest of the line as one token.  0 if it did. */
static int session_raw_tail(const char *line, size_t len, struct shell_line *l)
{
    size_t a = 0;
    while (a < len && (line[a] == ' ' || line[a] == '\t'))
        a++;
    size_t b = a;
    while (b < len && line[b] != ' ' && line[b] != '\t')
        b++;
    size_t c = b;
    while (c < len && (line[c] == ' ' || line[c] == '\t'))
        c++;
    size_t w = b - a;
    int raw = (w == 6 && memcmp(line + a, ".shell", 6) == 0) ||
              (w == 7 && memcmp(line + a, ".system", 7) == 0) ||
              (((w == 7 && memcmp(line + a, ".output", 7) == 0) ||
                (w == 5 && memcmp(line + a, ".once", 5) == 0)) &&
               c < len && line[c] == '|');
    char err[16];
    if (!raw || c == len || shell_tokenize(line + a, w, l, err, sizeof err))
        return -1;
    l->tok[1].p = strndup(line + c, len - c);
    if (!l->tok[1].p) {
        shell_line_free(l);
        return -1;
    }
    l->tok[1].len = len - c;
    l->tok[1].quoted = 0;
    l->n = 2;
    return 0;
}

void shell_run_line(struct shell *s, const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == len || line[i] == '#' ||
        (line[i] == '-' && i + 1 < len && line[i + 1] == '-'))
        return;

    struct shell_line l;
    char err[160];
    long once = s->once; /* a .once before this line: it is for this one */
    s->failed = 0;
    s->line = line;
    s->line_len = len;
    if (shell_tokenize(line, len, &l, err, sizeof err) &&
        session_raw_tail(line, len, &l) != 0) {
        shell_error(s, "%s", err);
        goto out; /* (the tokens are freed) */
    }
    const struct shell_command *c =
        strlen(l.tok[0].p) == l.tok[0].len ? shell_command_find(l.tok[0].p)
                                           : NULL;
    if (!c) {
        session_unknown(s, &l.tok[0]);
        goto out;
    }
    int nargs = l.n - 1;
    if (c->min_args >= 0 && (nargs < c->min_args || nargs > c->max_args)) {
        shell_usage_error(s, c);
        goto out;
    }

    struct timespec t0, t1;
    struct rusage r0, r1;
    int timed = s->timer; /* not for the .timer command that changes it */
    if (timed) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        getrusage(RUSAGE_SELF, &r0);
    }
    c->run(s, &l);
    if (timed && s->timer) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        getrusage(RUSAGE_SELF, &r1);
        fprintf(s->out, "Run Time: real %.6f user %.6f sys %.6f\n",
                (double)(t1.tv_sec - t0.tv_sec) +
                    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                session_seconds(&r1.ru_utime) - session_seconds(&r0.ru_utime),
                session_seconds(&r1.ru_stime) - session_seconds(&r0.ru_stime));
    }
    session_check_output(s);
out:
    if (once && s->once == once && shell_output_reset(s))
        shell_error(s, ".once: writing the output failed: %s",
                    strerror(errno));
    shell_line_free(&l);
    s->line = NULL;
}

void shell_run_file(struct shell *s, FILE *f, struct shell_source *src)
{
    struct shell_source *saved = s->src;
    s->src = src;
    while (!s->quit) {
        size_t len;
        char *line = shell_read_line(s, f, NULL, &len);
        if (!line)
            break;
        src->line++;
        shell_run_line(s, line, len);
        free(line);
    }
    s->src = saved;
}

/* The open transaction for the prompt: "txn", "txn optimistic", "txn, 2
** savepoints", "prepared NAME" (a long name cut at 40 bytes). */
static size_t session_txn_prompt(const struct shell *s, char *buf, size_t len)
{
    if (s->txn_prepared)
        return (size_t)snprintf(buf, len, "prepared %.40s%s",
                                s->txn_name ? s->txn_name : "?",
                                s->txn_name && strlen(s->txn_name) > 40 ? "..."
                                                                        : "");
    int n = snprintf(buf, len, "txn%s", s->txn_flags & RAVEL_TXN_OPTIMISTIC
                                            ? " optimistic"
                                            : "");
    if (s->txn_savepoints)
        n += snprintf(buf + n, len - (size_t)n, ", %d savepoint%s",
                      s->txn_savepoints, s->txn_savepoints == 1 ? "" : "s");
    return (size_t)n;
}

/* "ravel> ", or what the session holds: "ravel (batch 3)> ", "ravel
** (snapshot 42)> ", "ravel (txn optimistic)> ". */
static void session_prompt(const struct shell *s, char *buf, size_t len)
{
    char held[128] = "";
    size_t n = 0;
    if (s->txn)
        n = session_txn_prompt(s, held, sizeof held);
    if (s->batch)
        n += (size_t)snprintf(held + n, sizeof held - n, "batch %u",
                              ravel_batch_count(s->batch));
    if (s->snap || s->snap_empty)
        n += (size_t)snprintf(held + n, sizeof held - n,
                              "%ssnapshot %" PRIu64, n ? ", " : "",
                              s->snap ? ravel_snapshot_sequence(s->snap) : 0);
    if (n)
        snprintf(buf, len, "ravel (%s)> ", held);
    else
        snprintf(buf, len, "ravel> ");
}

void shell_run_interactive(struct shell *s)
{
    struct shell_source src = {SHELL_SRC_TERMINAL, NULL, 0};
    s->src = &src;
    /* Unbuffered: what the terminal has sent is never hidden in a stdio
    ** buffer, so waiting for input (input.c) sees exactly what is there. */
    setvbuf(stdin, NULL, _IONBF, 0);
    while (!s->quit) {
        size_t len;
        shell_interrupted = 0;
        char prompt[160];
        session_prompt(s, prompt, sizeof prompt);
        char *line = shell_read_line(s, stdin, prompt, &len);
        if (shell_interrupted) { /* ^C at the prompt: drop what was typed */
            free(line);
            fputc('\n', stdout);
            continue;
        }
        if (!line) {
            fputc('\n', stdout); /* ^D: end the prompt's line */
            break;
        }
        src.line++;
        if (s->use_editor && strspn(line, " \t") < len)
            shell_editor_add_history(line);
        shell_run_line(s, line, len);
        free(line);
    }
    s->src = NULL;
}

void shell_finish(struct shell *s)
{
    s->src = NULL;
    shell_txn_finish(s);
    if (s->batch) {
        uint32_t n = ravel_batch_count(s->batch);
        ravel_batch_free(s->batch);
        s->batch = NULL;
        if (s->interactive) {
            shell_note(s, "the open batch was discarded (%u operation%s not "
                       "written)", n, n == 1 ? "" : "s");
        } else {
            s->bail = 0;
            shell_error(s, "a batch was still open at the end: %u "
                        "operation%s not written (no commit)", n,
                        n == 1 ? "" : "s");
        }
    }
    if (s->snap) {
        ravel_snapshot_release(s->db, s->snap);
        s->snap = NULL;
    }
    s->snap_empty = 0;
    if (shell_output_reset(s))
        shell_error(s, "writing the output failed: %s", strerror(errno));
}
