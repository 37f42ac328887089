/*
** main.c -- the ravel shell's entry point: arguments, opening the
** database, the rc file and -cmd, choosing how to read commands, and the
** exit code.
**
**   ravel [OPTIONS] DIR                   a session (interactive on a tty)
**   ravel [OPTIONS] DIR "put a 1" "get a" run these commands, then exit
**   ravel [OPTIONS] DIR < script          run standard input, no prompts
**
** Options are spelled as sqlite3 spells its own (-bail, -batch, -cmd,
** -init, -json, ...); the GNU spelling with two dashes is accepted too.
** As sqlite3 does, the shell first runs ~/.ravelrc (or the -init FILE
** instead), then each -cmd COMMAND in order, then the session; -bail
** stops at the first error in any of them.  The exit code is 0 when every
** command succeeded, 1 otherwise (or when the database did not open or
** the arguments were wrong).
*/
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "close_stdout.h"
#include "shell.h"

struct main_args {
    const char *dir;
    char **commands; /* the COMMAND arguments */
    int ncommands;
    char **cmds;     /* the -cmd options */
    int ncmds;
    const char *init; /* -init FILE, or NULL: ~/.ravelrc */
    int mode;         /* -json, -csv, ...; -1 if none */
    int bail, batch, interactive, readonly;
    ravel_options *opts;
};

/* If the shell was started with standard input, output or error closed,
** the database would get descriptor 1 and printed values would be written
** into its files.  Hold 0, 1 and 2 open on /dev/null, as sqlite3 does. */
static void main_guard_std_fds(void)
{
    for (;;) {
        int fd = open("/dev/null", O_RDWR);
        if (fd < 0)
            return;
        if (fd > 2) {
            close(fd);
            return;
        }
    }
}

static void main_sigint(int sig)
{
    (void)sig;
    shell_interrupted = 1;
}

/* Applies -o NAME=VALUE; returns 0 or reports the problem. */
static int main_option(ravel_options *opts, const char *arg)
{
    const char *eq = arg ? strchr(arg, '=') : NULL;
    if (!eq || eq == arg) {
        fprintf(stderr, "error: -o needs NAME=VALUE, not '%s'\n",
                arg ? arg : "");
        return -1;
    }
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    if (ravel_options_set(opts, name, eq + 1) != RAVEL_OK) {
        fprintf(stderr, "error: -o %s: %s\n", arg, ravel_errmsg());
        return -1;
    }
    return 0;
}

/* Returns -1 on a bad argument, 1 if the program is done (-help,
** -version), 0 to go on. */
static int main_parse(int argc, char **argv, struct main_args *a)
{
    int only_positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (!a->dir)
                a->dir = arg;
            else
                a->commands[a->ncommands++] = argv[i];
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
            continue;
        }
        const char *o = arg + (arg[1] == '-' ? 2 : 1);
        if (strcmp(o, "help") == 0 || strcmp(o, "h") == 0) {
            shell_usage(stdout);
            shell_help_all(stdout);
            return 1;
        } else if (strcmp(o, "manpage") == 0) {
            shell_print_manpage(stdout);
            return 1;
        } else if (strcmp(o, "version") == 0) {
            printf("ravel %s (library %s)\n", RAVEL_VERSION,
                   ravel_libversion());
            return 1;
        } else if (strcmp(o, "bail") == 0) {
            a->bail = 1;
        } else if (strcmp(o, "batch") == 0) {
            a->batch = 1, a->interactive = 0;
        } else if (strcmp(o, "interactive") == 0) {
            a->interactive = 1, a->batch = 0;
        } else if (strcmp(o, "readonly") == 0) {
            a->readonly = 1;
            if (main_option(a->opts, "read_only=true") ||
                main_option(a->opts, "create_if_missing=false"))
                return -1;
        } else if (strcmp(o, "cmd") == 0 || strcmp(o, "init") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "error: %s needs %s\n", arg,
                        o[0] == 'c' ? "a COMMAND" : "a FILE");
                return -1;
            }
            if (o[0] == 'c')
                a->cmds[a->ncmds++] = argv[++i];
            else
                a->init = argv[++i];
        } else if (shell_mode_find(o) >= 0) {
            a->mode = shell_mode_find(o);
        } else if (strcmp(o, "o") == 0) {
            if (main_option(a->opts, i + 1 < argc ? argv[++i] : NULL))
                return -1;
        } else if (strncmp(o, "o", 1) == 0 && strchr(o, '=')) {
            if (main_option(a->opts, o + 1)) /* -oNAME=VALUE */
                return -1;
        } else {
            fprintf(stderr, "error: unknown option '%s' (ravel -help lists "
                    "them)\n", arg);
            return -1;
        }
    }
    if (!a->dir) {
        fprintf(stderr, "error: no database directory given\n"
                "usage: ravel [OPTIONS] DIR [COMMAND ...]   (ravel -help "
                "tells more)\n");
        return -1;
    }
    return 0;
}

static int main_open(struct shell *s, struct main_args *a)
{
    char msg[512];
    int rc = shell_open_dir(s, a->dir, msg, sizeof msg);
    if (rc) {
        fprintf(stderr, "error: cannot open database '%s': %s\n", a->dir,
                msg);
        if (rc == RAVEL_CORRUPT)
            fprintf(stderr, "hint: ravel-repair '%s' salvages what still "
                    "verifies (the originals are kept)\n", a->dir);
        return -1;
    }
    return 0;
}

/* ~/.ravelrc, in BUF; NULL if there is no home directory. */
static const char *main_rc_path(char *buf, size_t len)
{
    const char *home = getenv("HOME");
    if (!home || !home[0]) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home)
        return NULL;
    snprintf(buf, len, "%s/.ravelrc", home);
    return buf;
}

/* Runs the -init FILE, else ~/.ravelrc if there is one (as sqlite3 runs
** ~/.sqliterc): a missing -init FILE is an error, a missing rc file not. */
static void main_run_rc(struct shell *s, struct main_args *a)
{
    char buf[4096];
    const char *path = a->init ? a->init : main_rc_path(buf, sizeof buf);
    if (!path)
        return;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (a->init) {
            int e = errno;
            shell_error(s, "-init: cannot open '%s': %s", path, strerror(e));
        }
        return;
    }
    if (s->interactive)
        fprintf(stderr, "-- Loading resources from %s\n", path);
    struct shell_source src = {SHELL_SRC_FILE, path, 0};
    shell_run_file(s, f, &src);
    fclose(f);
}

/* Runs the N command lines LINES (the -cmd options, or the commands after
** DIR), each named in errors as KIND number i. */
static void main_run_lines(struct shell *s, enum shell_source_kind kind,
                           char **lines, int n)
{
    struct shell_source src = {kind, NULL, 0};
    s->src = &src;
    for (int i = 0; i < n && !s->quit; i++) {
        src.line = i + 1;
        shell_run_line(s, lines[i], strlen(lines[i]));
    }
    s->src = NULL;
}

static void main_banner(struct shell *s, struct main_args *a)
{
    printf("ravel %s -- ", RAVEL_VERSION);
    if (shell_db_absent(s))
        printf("no database at '%s' yet: the first write creates it\n",
               s->dir);
    else
        printf("opened database '%s'%s\n", s->dir,
               a->readonly ? " (read-only)" : "");
    printf("Enter \".help\" for usage hints.\n");
    fflush(stdout);
}

static void main_session(struct shell *s, struct main_args *a)
{
    if (a->ncommands > 0) {
        main_run_lines(s, SHELL_SRC_ARGS, a->commands, a->ncommands);
        return;
    }
    if (!s->interactive) {
        struct shell_source src = {SHELL_SRC_STDIN, NULL, 0};
        shell_run_file(s, stdin, &src);
        return;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = main_sigint; /* no SA_RESTART: ^C ends a blocked read */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);

    main_banner(s, a);
    if (s->use_editor)
        shell_editor_open();
    shell_run_interactive(s);
    if (s->use_editor)
        shell_editor_close();
}

int main(int argc, char **argv)
{
    struct shell s = {0};
    struct main_args a = {.mode = -1};
    int status = 1;

    main_guard_std_fds();
    signal(SIGPIPE, SIG_IGN); /* a closed pipe is a write error, reported */
    shell_close_stdout_at_exit("ravel");
    shell_format_init();
    a.commands = calloc((size_t)argc, sizeof *a.commands);
    a.cmds = calloc((size_t)argc, sizeof *a.cmds);
    if (!a.commands || !a.cmds || ravel_options_new(&a.opts) ||
        ravel_options_set(a.opts, "create_if_missing", "true")) {
        fprintf(stderr, "error: out of memory\n");
        goto out;
    }
    int rc = main_parse(argc, argv, &a);
    if (rc) {
        status = rc > 0 ? 0 : 1;
        goto out;
    }

    s.out = stdout;
    s.opts = a.opts;
    s.readonly = a.readonly;
    s.mode = a.mode >= 0 ? (enum shell_mode)a.mode : SHELL_MODE_TEXT;
    s.bail = a.bail;
    s.interactive = a.ncommands == 0 &&
                    (a.interactive || (!a.batch && isatty(STDIN_FILENO)));
    s.use_editor = s.interactive && shell_have_editor() &&
                   isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    if (main_open(&s, &a))
        goto out;

    main_run_rc(&s, &a);
    if (!s.quit)
        main_run_lines(&s, SHELL_SRC_CMD, a.cmds, a.ncmds);
    if (!s.quit)
        main_session(&s, &a);
    shell_finish(&s);
    fflush(stdout);
    shell_db_close(&s);
    status = s.errors ? 1 : 0;
out:
    free(s.dir);
    ravel_options_free(a.opts);
    free(a.commands);
    free(a.cmds);
    return status;
}
