/*
** shell.h -- what the files of the ravel shell share.
**
** The shell is a client of the public API (include/ravel.h), with one
** exception: sst_dump.c reads a table file through lib/'s table reader,
** so the shell links the library's internals (the static library, as
** ravel-bench does).  Its files, one concern each:
**
**   main.c       command-line arguments, the rc file, -cmd, exit code
**   open.c       the session's database: opened lazily (created by the
**                first write), .open
**   session.c    running lines from a source (terminal, pipe, file,
**                arguments): dispatch, error locations, -bail, the prompt
**   input.c      reading lines: libedit (editing, history, completion)
**                when built with it, plain reading otherwise
**   token.c      splitting a line into byte strings (words, "C strings",
**                'sql strings', x'hex')
**   format.c     printing byte strings in the text, hex, quote, json and
**                csv modes
**   commands.c   the tables of commands, command-line options and byte
**                string syntax (the one source of .help, -help and the
**                manual page), lookup and "did you mean"
**   manpage.c    ravel.1 (the manual page), generated from those tables (ravel -manpage)
**   cmd_data.c   the database commands: put get del scan count batch ...
**   cmd_txn.c    transactions: begin, commit, rollback, savepoints,
**                prepare, prepared, recover; the session's reads and
**                writes through the open transaction
**   cmd_dot.c    the dot commands that set up the session (.mode,
**                .output, .once, .shell, ...)
**   cmd_files.c  the files on disk: flush, compact, files, .verify, .sst
**   cmd_follow.c .follow: the change feed, printed as batches commit
**   sst_dump.c   dumping one table file: .sst, and ravel-sst (sst_main.c)
**   transfer.c   .import and .dump (tab-separated, CSV and JSON lines)
**   jsonl.c      reading one JSON line of the .dump format
**   csv.c        reading one CSV record (KEY,VALUE) for .import
**
** Names: every function shared between these files starts with shell_;
** static helpers start with their module (session_, token_, data_ in
** cmd_data.c, txncmd_ in cmd_txn.c, dot_ in cmd_dot.c, files_ in
** cmd_files.c, follow_ in cmd_follow.c, sst_ in sst_dump.c, sstmain_ in
** sst_main.c, import_/transfer_ in transfer.c, open_ in open.c, csv_ in
** csv.c), so none collides with lib/ (or with the amalgamation, when the
** shell is built against it).
*/
#ifndef RAVEL_SHELL_H
#define RAVEL_SHELL_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "ravel.h"

/* ------------------------------------------------------------ byte strings */

/* A growable byte string.  Keys and values are never NUL-terminated text:
** they may hold any byte. */
struct shell_buf {
    char *p;
    size_t len, cap;
};

int shell_buf_add(struct shell_buf *b, const void *p, size_t n);
int shell_buf_addc(struct shell_buf *b, int c);
void shell_buf_free(struct shell_buf *b);

/* One argument of a command line.  QUOTED is set for "..", '..' and x'..'
** forms: a quoted token is always data, never an option such as --limit. */
struct shell_token {
    char *p; /* the bytes (NUL-terminated for convenience, may hold NULs) */
    size_t len;
    int quoted;
};

#define SHELL_MAX_TOKENS 64

struct shell_line {
    struct shell_token tok[SHELL_MAX_TOKENS];
    int n;
};

/* Splits LINE into tokens.  On a syntax error returns -1 with a message in
** ERR ("unterminated string"); the tokens are then freed. */
int shell_tokenize(const char *line, size_t len, struct shell_line *out,
                   char *err, size_t errlen);
void shell_line_free(struct shell_line *l);

/* --------------------------------------------------------------- output */

enum shell_mode {
    SHELL_MODE_TEXT,
    SHELL_MODE_HEX,
    SHELL_MODE_JSON,
    SHELL_MODE_QUOTE,
    SHELL_MODE_CSV,
    SHELL_MODE_COUNT
};

/* The names of the modes, indexed by enum shell_mode, then NULL. */
extern const char *const shell_mode_names[SHELL_MODE_COUNT + 1];
/* The mode called NAME (any case), or -1. */
int shell_mode_find(const char *name);

/* Text mode: printable ASCII as is, everything else escaped (\n, \t, \\,
** \xHH); valid UTF-8 as is when the locale's charset is UTF-8. */
void shell_put_text(FILE *f, const void *p, size_t n);
/* x'6869' */
void shell_put_hex(FILE *f, const void *p, size_t n);
/* "hi\x00", the shell's C-string syntax: put reads it back exactly. */
void shell_put_quoted(FILE *f, const void *p, size_t n);
/* A JSON member "name":"..." for valid UTF-8 (escaped to ASCII), else
** "name_hex":"6869".  Used by .mode json and by .dump. */
void shell_put_json_member(FILE *f, const char *name, const void *p,
                           size_t n);
/* One key/value pair (VAL NULL: absent) in MODE, with a newline. */
void shell_put_pair(FILE *f, enum shell_mode mode, const void *key,
                    size_t klen, const void *val, size_t vlen);
/* One value alone (get) in MODE, with a newline; VAL NULL: not found. */
void shell_put_value(FILE *f, enum shell_mode mode, const void *key,
                     size_t klen, const void *val, size_t vlen);
/* Decides once, from the locale, whether UTF-8 text may be shown as is. */
void shell_format_init(void);
int shell_utf8_valid(const unsigned char *p, size_t n);

/* Parses one JSON line of the .dump format, {"key":..,"value":..} (or
** key_hex / value_hex), into KEY and VAL.  -1 with a message in ERR. */
int shell_jsonl_parse(const char *p, size_t n, struct shell_buf *key,
                      struct shell_buf *val, char *err, size_t errlen);
/* Whether the CSV text P holds a whole record: its quotes are balanced
** (a quoted field may hold line breaks). */
int shell_csv_complete(const char *p, size_t n);
/* Parses one CSV record, KEY,VALUE (RFC 4180 quoting), into KEY and VAL.
** -1 with a message in ERR. */
int shell_csv_parse(const char *p, size_t n, struct shell_buf *key,
                    struct shell_buf *val, char *err, size_t errlen);

/* ------------------------------------------------------------- sessions */

/* Where lines come from; decides how errors name their location. */
enum shell_source_kind {
    SHELL_SRC_TERMINAL, /* typed by a person: no location needed */
    SHELL_SRC_STDIN,    /* piped: "line N" */
    SHELL_SRC_FILE,     /* .read FILE: "FILE: line N" */
    SHELL_SRC_ARGS,     /* ravel DIR "cmd" ...: "argument N" */
    SHELL_SRC_CMD       /* ravel -cmd "cmd" DIR: "-cmd N" */
};

struct shell_source {
    enum shell_source_kind kind;
    const char *name; /* the file, for SHELL_SRC_FILE */
    long line;        /* 1-based number of the line being run */
};

struct shell {
    /* The database (open.c).  DB is NULL while DIR holds no database yet:
    ** reads then see an empty database and the first write creates it
    ** with OPTS.  Code that uses DB checks it through open.c's calls. */
    ravel_db *db;
    char *dir;
    ravel_options *opts; /* the session's options (-o, -readonly) */
    int readonly;
    int absent_noted;    /* "no database yet" was said */

    /* Settings (command line and dot commands). */
    enum shell_mode mode;
    int timer;
    int sync;        /* writes use RAVEL_SYNC */
    int bail;        /* stop at the first error */
    int interactive; /* prompts, banner, notes, progress lines */
    int use_editor;  /* libedit reads the terminal */

    FILE *out;       /* stdout, or the file (or pipe) of .output/.once */
    int out_pipe;    /* OUT was opened by popen (.output |COMMAND) */
    long once;       /* the .once in effect (a serial number), or 0 */
    long once_serial;

    /* The open batch (between "batch" and "commit"/"abort"), or NULL. */
    ravel_batch *batch;
    /* The open transaction (between "begin" or "recover" and "commit" or
    ** "rollback"; cmd_txn.c), or NULL.  At most one of BATCH and TXN is
    ** set, and no snapshot is held while TXN is: reads go through it. */
    ravel_txn *txn;
    int txn_flags;      /* RAVEL_TXN_OPTIMISTIC, RAVEL_SYNC, as begun */
    int txn_savepoints; /* savepoints set and not rolled back to */
    int txn_prepared;   /* prepared (or recovered): reads, commit, rollback */
    char *txn_name;     /* given by prepare (or recover), or NULL */
    /* Where the first error inside the open batch or transaction happened,
    ** "" if none: one that saw an error in a script is never committed. */
    char open_error[128];
    ravel_snapshot *snap; /* reads go through it when set */
    int snap_empty;       /* a snapshot taken before the database existed:
                          ** reads see nothing (SNAP is NULL) */
    int snap_noted;       /* the one-time note on reading through it */

    const char *line;     /* the text of the line being run */
    size_t line_len;

    struct shell_source *src; /* the source being run */
    int read_depth;           /* nesting of .read */
    int failed;               /* the current command reported an error */
    int errors;               /* commands that failed, for the exit code */
    int quit;                 /* .quit, -bail, or output lost */
};

/* Set by SIGINT in an interactive session; long commands (scan, count,
** .import, .dump) stop when they see it. */
extern volatile sig_atomic_t shell_interrupted;

/* Reports an error for the current command: "error: LOCATION: message". */
void shell_error(struct shell *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* An error from a ravel call: "WHAT: <ravel_errmsg or ravel_errstr>". */
void shell_api_error(struct shell *s, const char *what, int rc);
/* The message of the ravel call that just failed with RC: ravel_errmsg
** without its "ravel_x: " head, or ravel_errstr(RC). */
const char *shell_api_message(int rc);
/* A note for a person (interactive sessions only), on stderr. */
void shell_note(struct shell *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Runs one line (a command, a dot command, a comment or nothing). */
void shell_run_line(struct shell *s, const char *line, size_t len);
/* Runs every line of F as SRC, until EOF or s->quit. */
void shell_run_file(struct shell *s, FILE *f, struct shell_source *src);
/* Runs the interactive loop on the terminal (or forced -interactive). */
void shell_run_interactive(struct shell *s);
/* At the end of the session: discards an open batch and rolls back an
** open transaction (an error unless the session is interactive; a
** prepared one stays prepared, with a note) and releases the snapshot. */
void shell_finish(struct shell *s);
/* Sends output back to stdout, closing the .output/.once file or pipe;
** -1 (errno set) if closing it failed. */
int shell_output_reset(struct shell *s);

/* ------------------------------------------------------ the database */

/* Opens DIR for the session: lazily (nothing created) when DIR does not
** exist or is an empty directory and s->opts allow creating.  On failure
** returns a ravel code with the message in MSG, and changes nothing. */
int shell_open_dir(struct shell *s, const char *dir, char *msg, size_t len);
/* Whether the session's options open the database read-only (-readonly,
** -o read_only=true). */
int shell_db_read_only(const struct shell *s);
/* Whether the session has no database yet (nothing on disk). */
int shell_db_absent(const struct shell *s);
/* Before a write: creates the database if it does not exist yet; -1
** (reported, naming WHAT) if it cannot. */
int shell_db_for_write(struct shell *s, const char *what);
/* Whether there is no database yet; if so, says it once (on stderr, in a
** session without a person: the banner tells a person).  A database
** another process made meanwhile is opened; one that is there but cannot
** be opened is an error, reported (s->failed set), and also returns 1:
** the caller then shows nothing. */
int shell_db_note_absent(struct shell *s);
/* Before a read: 1 when it must see an empty database (none yet, or a
** snapshot taken before there was one), else 0.  Gives the one-time notes
** ("no database yet", "reading through the snapshot"). */
int shell_db_for_read(struct shell *s);
/* Before a command that needs a database on disk (stats, files, ...):
** -1 (reported: "no database at DIR yet") when there is none. */
int shell_db_needed(struct shell *s, const char *what);
/* Closes the database; -1 (reported) if closing failed. */
int shell_db_close(struct shell *s);

/* -------------------------------------------------------------- commands */

typedef void (*shell_command_fn)(struct shell *s, struct shell_line *l);

struct shell_command {
    const char *name;
    const char *args;    /* after the name, for usage lines */
    const char *summary; /* one line, for .help */
    const char *details; /* for .help CMD; may be NULL */
    int min_args, max_args; /* after the name; -1: the command checks */
    shell_command_fn run;
};

extern const struct shell_command shell_commands[];
/* The names ravel_property takes (property_names.c): the Ith word tab
** completion offers (NULL past the last), the list .help property prints,
** and the same as roff paragraphs for ravel.1, TEXT escaping. */
const char *shell_property_word(size_t i);
void shell_property_help(FILE *f);
void shell_property_manpage(FILE *f, void (*text)(FILE *f, const char *s));
/* The keys of S's database starting with the partly typed argument TEXT,
** written as they would be typed, at most SHELL_COMPLETE_MAX_KEYS, in a
** NULL-terminated array (free each and the array); NULL on OOM
** (complete_keys.c). */
#define SHELL_COMPLETE_MAX_KEYS 100
char **shell_complete_keys(struct shell *s, const char *text);
const struct shell_command *shell_command_find(const char *name);
/* The closest command name to NAME, or NULL if none is close. */
const char *shell_command_suggest(const char *name);
/* A command-line option of `ravel`, for -help and the manual page. */
struct shell_option {
    const char *name; /* "-bail" */
    const char *arg;  /* "NAME=VALUE", or "" */
    const char *help; /* may hold newlines */
};

/* A way of writing a byte string, for .help and the manual page. */
struct shell_syntax {
    const char *form;    /* an example */
    const char *meaning;
};

extern const struct shell_option shell_options[];      /* NULL-terminated */
extern const struct shell_syntax shell_syntaxes[];     /* NULL-terminated */
extern const char shell_description[]; /* what ravel does, for both */
extern const char shell_syntax_notes[]; /* after the syntax table */
extern const char shell_exit_status[];

/* The text of -help before the .help text. */
void shell_usage(FILE *f);
/* The text of .help (and of the end of -help). */
void shell_help_all(FILE *f);
/* The manual page ravel.1 in roff, from the tables above (manpage.c). */
void shell_print_manpage(FILE *f);
int shell_help_one(FILE *f, const char *name);
/* Reports "usage: NAME ARGS" as an error. */
void shell_usage_error(struct shell *s, const struct shell_command *c);

/* Implementations, in cmd_data.c, cmd_dot.c, cmd_files.c and transfer.c. */
void shell_cmd_put(struct shell *s, struct shell_line *l);
void shell_cmd_get(struct shell *s, struct shell_line *l);
void shell_cmd_del(struct shell *s, struct shell_line *l);
void shell_cmd_del_range(struct shell *s, struct shell_line *l);
void shell_cmd_scan(struct shell *s, struct shell_line *l);
void shell_cmd_count(struct shell *s, struct shell_line *l);
void shell_cmd_batch(struct shell *s, struct shell_line *l);
void shell_cmd_commit(struct shell *s, struct shell_line *l);
void shell_cmd_rollback(struct shell *s, struct shell_line *l);
void shell_cmd_begin(struct shell *s, struct shell_line *l);
void shell_cmd_savepoint(struct shell *s, struct shell_line *l);
void shell_cmd_rollback_to_savepoint(struct shell *s, struct shell_line *l);
void shell_cmd_prepare(struct shell *s, struct shell_line *l);
void shell_cmd_prepared(struct shell *s, struct shell_line *l);
void shell_cmd_recover(struct shell *s, struct shell_line *l);
void shell_cmd_snapshot(struct shell *s, struct shell_line *l);
void shell_cmd_release(struct shell *s, struct shell_line *l);
void shell_cmd_stats(struct shell *s, struct shell_line *l);
void shell_cmd_property(struct shell *s, struct shell_line *l);
void shell_cmd_flush_wal(struct shell *s, struct shell_line *l);
void shell_cmd_flush(struct shell *s, struct shell_line *l);
void shell_cmd_files(struct shell *s, struct shell_line *l);
/* .follow (cmd_follow.c) */
void shell_cmd_follow(struct shell *s, struct shell_line *l);
void shell_cmd_compact(struct shell *s, struct shell_line *l);
void shell_cmd_verify(struct shell *s, struct shell_line *l);
void shell_cmd_sst(struct shell *s, struct shell_line *l);
void shell_cmd_repair(struct shell *s, struct shell_line *l);
void shell_cmd_help(struct shell *s, struct shell_line *l);
void shell_cmd_quit(struct shell *s, struct shell_line *l);
void shell_cmd_timer(struct shell *s, struct shell_line *l);
void shell_cmd_mode(struct shell *s, struct shell_line *l);
void shell_cmd_sync(struct shell *s, struct shell_line *l);
void shell_cmd_catchup(struct shell *s, struct shell_line *l);
void shell_cmd_options(struct shell *s, struct shell_line *l);
void shell_cmd_read(struct shell *s, struct shell_line *l);
void shell_cmd_output(struct shell *s, struct shell_line *l);
void shell_cmd_import(struct shell *s, struct shell_line *l);
void shell_cmd_dump(struct shell *s, struct shell_line *l);
void shell_cmd_ingest(struct shell *s, struct shell_line *l);
void shell_cmd_open(struct shell *s, struct shell_line *l);
void shell_cmd_once(struct shell *s, struct shell_line *l);
void shell_cmd_shell(struct shell *s, struct shell_line *l);
void shell_cmd_checkpoint(struct shell *s, struct shell_line *l);
void shell_cmd_backup(struct shell *s, struct shell_line *l);
void shell_cmd_backups(struct shell *s, struct shell_line *l);
void shell_cmd_restore(struct shell *s, struct shell_line *l);

/* A write (put/del) either joins the open batch or goes straight to the
** database; returns 0 on success (errors reported). */
int shell_write_batch(struct shell *s, ravel_batch *b, const char *what);
int shell_write_flags(const struct shell *s);
/* The open batch ends (cmd_data.c): commit writes it, abort discards it. */
void shell_batch_commit(struct shell *s);
void shell_batch_abort(struct shell *s);

/* ----------------------------------------------------- the transaction */

/* An iterator as the session reads (cmd_txn.c): through the open
** transaction (its writes merged in), else the held snapshot, else the
** latest state.  The caller has checked that there is a database. */
int shell_iter_new(struct shell *s, ravel_iter **out);
/* get as the session reads; FOR_UPDATE (ravel_txn_get_for_update) needs
** an open transaction.  A ravel code; a failure inside the transaction is
** reported by the caller with shell_txn_error. */
int shell_read_get(struct shell *s, const struct shell_token *k,
                   int for_update, void **val, size_t *vlen);
/* Before a write inside the open transaction: -1 (reported, naming WHAT)
** when it takes no more writes (prepared), or the database is read-only. */
int shell_txn_writable(struct shell *s, const char *what);
/* Whether RC is one of the codes that mean "roll back and run the
** transaction again": RAVEL_CONFLICT, RAVEL_TIMEDOUT, RAVEL_DEADLOCK. */
int shell_txn_retriable(int rc);
/* An error from a call on the transaction (ravel_txn_put, ...), which
** leaves it open: says so, and for RAVEL_CONFLICT, RAVEL_TIMEDOUT and
** RAVEL_DEADLOCK that it can be rolled back and run again. */
void shell_txn_error(struct shell *s, const char *what, int rc);
/* A sentence for an error: "a batch is open (3 operations)", "a
** transaction is open", "the transaction 'x' is prepared", or NULL when
** neither is; for the commands that need neither (.open, batch, begin). */
const char *shell_open_work(const struct shell *s, char *buf, size_t len);
/* The end of the session's transaction (shell_finish, .quit). */
void shell_txn_finish(struct shell *s);

/* ------------------------------------------------------------------ input */

/* Reads one line without its newline into a malloc'd buffer (*len bytes,
** NUL-terminated); NULL at end of input.  With PROMPT set, prints it first
** (through libedit when s->use_editor). */
char *shell_read_line(struct shell *s, FILE *f, const char *prompt,
                      size_t *len);
/* Whether the build has libedit. */
int shell_have_editor(void);
/* Loads ~/.ravel_history and sets up completion / saves the history. */
void shell_editor_open(void);
void shell_editor_close(void);
void shell_editor_add_history(const char *line);

#endif /* RAVEL_SHELL_H */
