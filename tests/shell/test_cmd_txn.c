/*
** test_cmd_txn.c -- the shell's transactions (shell/cmd_txn.c) against
** another writer.
**
** A ravel database is held by one process, so two shells cannot race for
** a key; the other writer here is this program, writing through the same
** ravel_db between the lines it has the shell run (shell_run_line, the
** shell's own dispatch, linked in-process).  What a user relies on:
**
**   - a conflict or a lock wait that ran out inside a transaction is an
**     error that says it is retriable and that the transaction is still
**     open -- and it is: later commands go on in it, and a rollback then
**     a rerun commits;
**   - a commit that fails on a conflict ends the transaction and writes
**     nothing of it, and says so;
**   - in a script, a transaction that saw an error is not committed.
**
** The prompts, a person's session and the two-phase commit across
** processes are tested by test_interactive.py and cases/txn*.test.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shell.h"

struct session {
    struct shell s;
    struct shell_source src;
    char dir[64];
    char out[4096], err[4096]; /* what the last line printed */
};

/* Reads and empties F (a tmpfile) into BUF. */
static void slurp(FILE *f, char *buf, size_t len)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    size_t got = fread(buf, 1, n < 0 || (size_t)n >= len ? len - 1 : (size_t)n,
                       f);
    buf[got] = '\0';
    rewind(f);
    assert_int_equal(ftruncate(fileno(f), 0), 0);
}

/* Runs LINE in the session; its stdout and stderr land in t->out, t->err. */
static void run(struct session *t, const char *line)
{
    FILE *ef = tmpfile();
    assert_non_null(ef);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(ef), 2) >= 0);
    t->s.src->line++;
    shell_run_line(&t->s, line, strlen(line));
    fflush(stderr);
    assert_true(dup2(saved, 2) >= 0);
    close(saved);
    slurp(t->s.out, t->out, sizeof t->out);
    slurp(ef, t->err, sizeof t->err);
    fclose(ef);
}

static void run_ok(struct session *t, const char *line)
{
    run(t, line);
    if (strstr(t->err, "error"))
        fail_msg("'%s' failed: %s", line, t->err);
}

/* A session as a person's at a terminal (errors leave a transaction
** alone), or as a script's (KIND SHELL_SRC_CMD), on a new database. */
static struct session *session_new(enum shell_source_kind kind,
                                   const char *lock_timeout)
{
    struct session *t = calloc(1, sizeof *t);
    assert_non_null(t);
    snprintf(t->dir, sizeof t->dir, "/tmp/ravel-cmd-txn-XXXXXX");
    assert_non_null(mkdtemp(t->dir));
    t->s.out = tmpfile();
    assert_non_null(t->s.out);
    assert_int_equal(ravel_options_new(&t->s.opts), RAVEL_OK);
    assert_int_equal(ravel_options_set(t->s.opts, "create_if_missing",
                                       "true"), RAVEL_OK);
    assert_int_equal(ravel_options_set(t->s.opts, "txn_lock_timeout",
                                       lock_timeout), RAVEL_OK);
    char msg[512];
    assert_int_equal(shell_open_dir(&t->s, t->dir, msg, sizeof msg),
                     RAVEL_OK);
    t->src.kind = kind;
    t->s.src = &t->src;
    t->s.interactive = kind == SHELL_SRC_TERMINAL;
    run_ok(t, "put k 0"); /* creates the database */
    assert_non_null(t->s.db);
    return t;
}

static void session_free(struct session *t)
{
    shell_finish(&t->s);
    shell_db_close(&t->s);
    fclose(t->s.out);
    free(t->s.dir);
    ravel_options_free(t->s.opts);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
    assert_int_equal(system(cmd), 0);
    free(t);
}

/* The other writer: a plain put through the session's database. */
static void other_put(struct session *t, const char *k, const char *v)
{
    assert_int_equal(ravel_put(t->s.db, 0, k, strlen(k), v, strlen(v)),
                     RAVEL_OK);
}

/* KEY's value in the database, as another reader sees it ("" if none). */
static const char *db_value(struct session *t, const char *k)
{
    static char buf[64];
    void *v = NULL;
    size_t n = 0;
    int rc = ravel_get(t->s.db, NULL, k, strlen(k), &v, &n);
    assert_true(rc == RAVEL_OK || rc == RAVEL_NOTFOUND);
    snprintf(buf, sizeof buf, "%.*s", (int)n, rc == RAVEL_OK ? (char *)v : "");
    ravel_free(v);
    return buf;
}

static void assert_has(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("expected '%s' in: %s", part, text);
}

/* Pessimistic: a key written by another after begin cannot be taken for
** update; the transaction stays open (its writes kept), and after a
** rollback the same commands succeed. */
static void conflict_keeps_the_transaction_open(void **state)
{
    (void)state;
    struct session *t = session_new(SHELL_SRC_TERMINAL, "1000");
    run_ok(t, "begin");
    run_ok(t, "put mine 1");
    other_put(t, "k", "1");
    run(t, "get --for-update k");
    assert_has(t->err, "error: get: ");
    assert_has(t->err, "'k' was written by another");
    assert_has(t->err, "retriable: the transaction is still open; roll it "
                       "back (rollback) and run it again");
    assert_string_equal(t->out, "");
    run_ok(t, "get mine"); /* still open: its own write is there */
    assert_string_equal(t->out, "1\n");
    assert_string_equal(db_value(t, "mine"), "");
    run_ok(t, "rollback");
    assert_has(t->err, "rolled back");
    run_ok(t, "begin");
    run_ok(t, "get --for-update k");
    assert_string_equal(t->out, "1\n");
    run_ok(t, "put k 2");
    run_ok(t, "commit");
    assert_has(t->err, "committed");
    assert_string_equal(db_value(t, "k"), "2");
    assert_string_equal(db_value(t, "mine"), "");
    session_free(t);
}

/* Optimistic: the conflict shows at commit, which ends the transaction
** and writes none of it. */
static void failed_commit_ends_the_transaction(void **state)
{
    (void)state;
    struct session *t = session_new(SHELL_SRC_TERMINAL, "1000");
    run_ok(t, "begin --optimistic");
    run_ok(t, "get --for-update k");
    assert_string_equal(t->out, "0\n");
    run_ok(t, "put k 1");
    run_ok(t, "put other 1");
    other_put(t, "k", "theirs");
    run(t, "commit");
    assert_has(t->err, "error: commit: ");
    assert_has(t->err, "retriable, but a failed commit ends the transaction: "
                       "nothing written; begin and run it again");
    assert_string_equal(db_value(t, "k"), "theirs");
    assert_string_equal(db_value(t, "other"), "");
    run(t, "rollback"); /* nothing left to roll back */
    assert_has(t->err, "rollback: no batch or transaction is open");
    run_ok(t, "get k");
    assert_string_equal(t->out, "theirs\n");
    /* run again, it commits */
    run_ok(t, "begin --optimistic");
    run_ok(t, "get --for-update k");
    run_ok(t, "put k 1");
    run_ok(t, "put other 1");
    run_ok(t, "commit");
    assert_string_equal(db_value(t, "k"), "1");
    assert_string_equal(db_value(t, "other"), "1");
    session_free(t);
}

/* A key another transaction holds locked: the wait runs out at once
** (txn_lock_timeout=0), the error says so and that it is retriable, and
** the shell's transaction goes on. */
static void lock_timeout_keeps_the_transaction_open(void **state)
{
    (void)state;
    struct session *t = session_new(SHELL_SRC_TERMINAL, "0");
    ravel_txn *other;
    assert_int_equal(ravel_txn_begin(t->s.db, 0, &other), RAVEL_OK);
    assert_int_equal(ravel_txn_put(other, "k", 1, "o", 1), RAVEL_OK);
    run_ok(t, "begin");
    run_ok(t, "put a 1");
    run(t, "put k 1");
    assert_has(t->err, "error: put: ");
    assert_has(t->err, "retriable: the transaction is still open");
    run(t, ".import /nonexistent-file"); /* (an unrelated error) */
    run_ok(t, "put b 1");
    run_ok(t, "count");
    assert_string_equal(t->out, "3\n"); /* a, b, and k as of begin */
    assert_int_equal(ravel_txn_commit(other), RAVEL_OK);
    ravel_txn_free(other);
    run_ok(t, "rollback");
    assert_string_equal(db_value(t, "a"), "");
    run_ok(t, "begin");
    run_ok(t, "put a 1");
    run_ok(t, "put k 1");
    run_ok(t, "commit");
    assert_string_equal(db_value(t, "a"), "1");
    assert_string_equal(db_value(t, "k"), "1");
    session_free(t);
}

/* In a script, an error inside the transaction -- a conflict here --
** keeps commit from writing any of it; so does the end of the input. */
static void script_error_is_never_committed(void **state)
{
    (void)state;
    struct session *t = session_new(SHELL_SRC_CMD, "1000");
    run_ok(t, "begin");
    run_ok(t, "put y 1");
    other_put(t, "k", "1");
    run(t, "get --for-update k");
    assert_has(t->err, "error: -cmd 4: get: ");
    run_ok(t, "put z 1");
    run(t, "commit");
    assert_has(t->err, "error: -cmd 6: commit: the transaction had an error "
                       "(-cmd 4); rolled back, nothing written");
    assert_string_equal(db_value(t, "y"), "");
    assert_string_equal(db_value(t, "z"), "");
    /* the end of a script with a transaction open: rolled back, an error */
    run_ok(t, "begin");
    run_ok(t, "put y 1");
    int errors = t->s.errors;
    shell_finish(&t->s);
    assert_int_equal(t->s.errors, errors + 1);
    assert_null(t->s.txn);
    assert_string_equal(db_value(t, "y"), "");
    session_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conflict_keeps_the_transaction_open),
        cmocka_unit_test(failed_commit_ends_the_transaction),
        cmocka_unit_test(lock_timeout_keeps_the_transaction_open),
        cmocka_unit_test(script_error_is_never_committed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
