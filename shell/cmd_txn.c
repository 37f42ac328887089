/*
** cmd_txn.c -- transactions in the shell: begin, commit, rollback,
** savepoint, rollback-to-savepoint, prepare, prepared, recover; and the
** session's reads and writes through the open transaction.
**
** begin starts a ravel_txn (ravel.h, "transactions").  Until commit or
** rollback, put, del and .import write through it, and get, scan, count,
** .dump and tab completion read through it: the database as of begin,
** with the transaction's own writes merged in.  The prompt shows it
** (session.c).  commit and rollback also end a batch (cmd_data.c), the
** older way to write atomically, which stays as it was; at most one of
** the two is open, and no snapshot is held while a transaction is.
**
** Failures.  A call on the transaction (ravel_txn_put, ...) that fails
** leaves it as it was (ravel.h): the error says it is still open, and for
** the retriable codes (RAVEL_CONFLICT, RAVEL_TIMEDOUT, RAVEL_DEADLOCK)
** that rolling it back and running it again is the cure.  A commit that
** fails ends the transaction, as ravel_txn_commit does, except a prepared
** one, which stays prepared.  In a script, a transaction that saw an
** error is not committed, as a batch is not: commit rolls it back and
** says so.
**
** A transaction needs a database: begin on a DIR holding none yet (open.c)
** creates it, and says so.
**
** Two-phase commit: prepare NAME names the transaction and prepares it;
** from then on it takes reads, commit and rollback only.  One left
** prepared when the session ends stays prepared (ravel_txn_free leaves it
** so) and the session says so; a later session lists it (prepared: the
** ravel.prepared-transactions property) and takes it back with recover
** NAME, to commit or roll it back.  Any other open transaction is rolled
** back at the end of the session: a note at the terminal, an error in a
** script, whose commit was missing (as for a batch).
*/
#include <stdlib.h>
#include <string.h>

#include "shell.h"

int shell_txn_retriable(int rc)
{
    return rc == RAVEL_CONFLICT || rc == RAVEL_TIMEDOUT ||
           rc == RAVEL_DEADLOCK;
}

/* Frees the session's transaction (a prepared one stays prepared) and
** forgets everything about it. */
static void txncmd_forget(struct shell *s)
{
    ravel_txn_free(s->txn);
    s->txn = NULL;
    s->txn_flags = 0;
    s->txn_savepoints = 0;
    s->txn_prepared = 0;
    free(s->txn_name);
    s->txn_name = NULL;
    s->open_error[0] = '\0';
}

const char *shell_open_work(const struct shell *s, char *buf, size_t len)
{
    if (s->batch) {
        uint32_t n = ravel_batch_count(s->batch);
        snprintf(buf, len, "a batch is open (%u operation%s); commit or "
                 "abort it first", n, n == 1 ? "" : "s");
    } else if (s->txn && s->txn_prepared) {
        snprintf(buf, len, "the transaction '%.100s' is prepared; commit or "
                 "roll it back first", s->txn_name ? s->txn_name : "?");
    } else if (s->txn) {
        snprintf(buf, len, "a transaction is open; commit or roll it back "
                 "first");
    } else {
        return NULL;
    }
    return buf;
}

/* ----------------------------------------------------- reads and writes */

int shell_iter_new(struct shell *s, ravel_iter **out)
{
    if (s->txn)
        return ravel_txn_iter_new(s->txn, out);
    return ravel_iter_new(s->db, s->snap, out);
}

int shell_read_get(struct shell *s, const struct shell_token *k,
                   int for_update, void **val, size_t *vlen)
{
    if (!s->txn)
        return ravel_get(s->db, s->snap, k->p, k->len, val, vlen);
    if (for_update)
        return ravel_txn_get_for_update(s->txn, k->p, k->len, val, vlen);
    return ravel_txn_get(s->txn, k->p, k->len, val, vlen);
}

int shell_txn_writable(struct shell *s, const char *what)
{
    if (shell_db_read_only(s)) { /* said now, not at commit */
        shell_error(s, "%s: the database is open read-only: the transaction "
                    "can read, not write", what);
        return -1;
    }
    if (!s->txn_prepared)
        return 0;
    shell_error(s, "%s: the transaction '%s' is prepared: it takes no more "
                "writes (commit or roll it back)", what,
                s->txn_name ? s->txn_name : "?");
    return -1;
}

void shell_txn_error(struct shell *s, const char *what, int rc)
{
    if (shell_txn_retriable(rc))
        shell_error(s, "%s: %s -- retriable: the transaction is still open; "
                    "roll it back (rollback) and run it again", what,
                    shell_api_message(rc));
    else
        shell_error(s, "%s: %s (the transaction is still open)", what,
                    shell_api_message(rc));
}

/* Before savepoint, rollback-to-savepoint, prepare: an open transaction
** that is not prepared; -1 (reported) otherwise. */
static int txncmd_need_open(struct shell *s, const char *what)
{
    if (s->txn)
        return shell_txn_writable(s, what);
    shell_error(s, "%s: no transaction is open (start one with 'begin')",
                what);
    return -1;
}

/* ------------------------------------------------------ begin and end */

/* begin's options: RAVEL_TXN_OPTIMISTIC, RAVEL_SYNC (also under .sync on);
** -1 after a usage error. */
static int txncmd_begin_flags(struct shell *s, struct shell_line *l)
{
    int flags = shell_write_flags(s);
    for (int i = 1; i < l->n; i++) {
        const struct shell_token *t = &l->tok[i];
        if (!t->quoted && strcmp(t->p, "--optimistic") == 0) {
            flags |= RAVEL_TXN_OPTIMISTIC;
        } else if (!t->quoted && strcmp(t->p, "--sync") == 0) {
            flags |= RAVEL_SYNC;
        } else {
            shell_usage_error(s, shell_command_find("begin"));
            return -1;
        }
    }
    return flags;
}

void shell_cmd_begin(struct shell *s, struct shell_line *l)
{
    int flags = txncmd_begin_flags(s, l);
    if (flags < 0)
        return;
    char work[300];
    if (shell_open_work(s, work, sizeof work)) {
        shell_error(s, "begin: %s", work);
        return;
    }
    if (s->snap || s->snap_empty) {
        shell_error(s, "begin: a snapshot is held; release it first (a "
                    "transaction reads the state at its begin, and its own "
                    "writes)");
        return;
    }
    int absent = shell_db_absent(s);
    if (shell_db_for_write(s, "begin"))
        return;
    if (absent && s->db) {
        fflush(s->out);
        fprintf(stderr, "note: begin: created the database '%s' (a "
                "transaction needs one)\n", s->dir);
    }
    int rc = ravel_txn_begin(s->db, flags, &s->txn);
    if (rc) {
        s->txn = NULL;
        shell_api_error(s, "begin", rc);
        return;
    }
    s->txn_flags = flags;
    s->open_error[0] = '\0';
}

/* commit of the open transaction. */
static void txncmd_commit(struct shell *s)
{
    if (s->open_error[0] && !s->txn_prepared) {
        char where[sizeof s->open_error];
        memcpy(where, s->open_error, sizeof where);
        txncmd_forget(s); /* rolls it back */
        shell_error(s, "commit: the transaction had an error (%s); rolled "
                    "back, nothing written", where);
        return;
    }
    int rc = ravel_txn_commit(s->txn);
    if (rc == RAVEL_OK) {
        txncmd_forget(s);
        shell_note(s, "committed");
        return;
    }
    if (s->txn_prepared) { /* its commit record was not written (ravel.h) */
        shell_error(s, "commit: %s; the transaction '%s' stays prepared "
                    "(commit or roll it back again)", shell_api_message(rc),
                    s->txn_name ? s->txn_name : "?");
        return;
    }
    char msg[512];
    snprintf(msg, sizeof msg, "%s", shell_api_message(rc));
    txncmd_forget(s);
    if (shell_txn_retriable(rc))
        shell_error(s, "commit: %s -- retriable, but a failed commit ends "
                    "the transaction: nothing written; begin and run it "
                    "again", msg);
    else
        shell_error(s, "commit: %s; the transaction is over, nothing "
                    "written", msg);
}

void shell_cmd_commit(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (s->batch)
        shell_batch_commit(s);
    else if (s->txn)
        txncmd_commit(s);
    else
        shell_error(s, "commit: no batch or transaction is open (start one "
                    "with 'batch' or 'begin')");
}

/* rollback (or abort) of the open transaction. */
static void txncmd_rollback(struct shell *s, const char *what)
{
    int rc = ravel_txn_rollback(s->txn);
    if (rc && s->txn_prepared) {
        shell_error(s, "%s: %s; the transaction '%s' stays prepared (roll it "
                    "back or commit it again)", what, shell_api_message(rc),
                    s->txn_name ? s->txn_name : "?");
        return;
    }
    if (rc) /* (not prepared: over all the same) */
        shell_api_error(s, what, rc);
    txncmd_forget(s);
    if (!rc)
        shell_note(s, "rolled back");
}

void shell_cmd_rollback(struct shell *s, struct shell_line *l)
{
    const char *what = shell_command_find(l->tok[0].p)->name;
    if (s->batch)
        shell_batch_abort(s);
    else if (s->txn)
        txncmd_rollback(s, what);
    else
        shell_error(s, "%s: no batch or transaction is open", what);
}

void shell_txn_finish(struct shell *s)
{
    if (!s->txn)
        return;
    if (s->txn_prepared) {
        char *name = s->txn_name;
        s->txn_name = NULL;
        txncmd_forget(s); /* ravel_txn_free: it stays prepared */
        fflush(s->out);
        fprintf(stderr, "note: the transaction '%s' stays prepared (its keys "
                "locked): 'recover %s' in a later session commits or rolls "
                "it back\n", name, name);
        free(name);
        return;
    }
    txncmd_forget(s); /* ravel_txn_free rolls it back */
    if (s->interactive) {
        shell_note(s, "the open transaction was rolled back (nothing "
                   "written)");
    } else {
        s->bail = 0;
        shell_error(s, "a transaction was still open at the end: rolled "
                    "back, nothing written (no commit)");
    }
}

/* ------------------------------------------------------------ savepoints */

void shell_cmd_savepoint(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (txncmd_need_open(s, "savepoint"))
        return;
    int rc = ravel_txn_savepoint(s->txn);
    if (rc)
        shell_txn_error(s, "savepoint", rc);
    else
        s->txn_savepoints++;
}

void shell_cmd_rollback_to_savepoint(struct shell *s, struct shell_line *l)
{
    (void)l;
    const char *what = "rollback-to-savepoint";
    if (txncmd_need_open(s, what))
        return;
    int rc = ravel_txn_rollback_to_savepoint(s->txn);
    if (rc == RAVEL_NOTFOUND)
        shell_error(s, "%s: no savepoint is set (set one with 'savepoint')",
                    what);
    else if (rc)
        shell_txn_error(s, what, rc);
    else
        s->txn_savepoints--;
}

/* ------------------------------------------------------ two-phase commit */

/* NAME of prepare and recover: a word without NUL bytes; NULL (reported)
** if it cannot be one. */
static const char *txncmd_name(struct shell *s, const char *what,
                               const struct shell_token *t)
{
    if (t->len == 0 || strlen(t->p) != t->len) {
        shell_error(s, "%s: a transaction's name is 1 to 255 bytes, without "
                    "NUL bytes", what);
        return NULL;
    }
    return t->p;
}

/* Names the transaction NAME, once; a failed prepare leaves it named. */
static int txncmd_set_name(struct shell *s, const char *name)
{
    if (s->txn_name && strcmp(s->txn_name, name) == 0)
        return 0;
    if (s->txn_name) {
        shell_error(s, "prepare: the transaction is named '%s' already (by a "
                    "prepare that failed): prepare it as '%s'", s->txn_name,
                    s->txn_name);
        return -1;
    }
    int rc = ravel_txn_set_name(s->txn, name);
    if (rc == RAVEL_OK && !(s->txn_name = strdup(name)))
        rc = RAVEL_NOMEM;
    if (rc)
        shell_txn_error(s, "prepare", rc);
    return rc ? -1 : 0;
}

void shell_cmd_prepare(struct shell *s, struct shell_line *l)
{
    const char *name = txncmd_name(s, "prepare", &l->tok[1]);
    if (!name || txncmd_need_open(s, "prepare"))
        return;
    if (s->open_error[0]) {
        char where[sizeof s->open_error];
        memcpy(where, s->open_error, sizeof where);
        txncmd_forget(s);
        shell_error(s, "prepare: the transaction had an error (%s); rolled "
                    "back, nothing prepared", where);
        return;
    }
    if (txncmd_set_name(s, name))
        return;
    int rc = ravel_txn_prepare(s->txn);
    if (rc) {
        shell_txn_error(s, "prepare", rc);
        return;
    }
    s->txn_prepared = 1;
    shell_note(s, "prepared '%s': commit or roll it back now, or later with "
               "'recover %s'", name, name);
}

void shell_cmd_prepared(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (shell_db_note_absent(s))
        return; /* no database, no prepared transaction (or an error) */
    char *text = NULL;
    int rc = ravel_property(s->db, "ravel.prepared-transactions", &text);
    if (rc) {
        shell_api_error(s, "prepared", rc);
        return;
    }
    size_t n = strlen(text);
    if (n == 0)
        shell_note(s, "(no prepared transactions)");
    fputs(text, s->out);
    if (n > 0 && text[n - 1] != '\n')
        fputc('\n', s->out);
    ravel_free(text);
}

void shell_cmd_recover(struct shell *s, struct shell_line *l)
{
    const char *name = txncmd_name(s, "recover", &l->tok[1]);
    if (!name)
        return;
    char work[300];
    if (shell_open_work(s, work, sizeof work)) {
        shell_error(s, "recover: %s", work);
        return;
    }
    if (s->snap || s->snap_empty) {
        shell_error(s, "recover: a snapshot is held; release it first");
        return;
    }
    if (shell_db_needed(s, "recover"))
        return;
    char *copy = strdup(name);
    ravel_txn *t = NULL;
    int rc = copy ? ravel_txn_recover(s->db, name, &t) : RAVEL_NOMEM;
    if (rc) {
        free(copy);
        if (rc == RAVEL_NOTFOUND)
            shell_error(s, "recover: %s ('prepared' lists the prepared "
                        "transactions)", shell_api_message(rc));
        else
            shell_api_error(s, "recover", rc);
        return;
    }
    s->txn = t;
    s->txn_prepared = 1;
    s->txn_name = copy;
    s->open_error[0] = '\0';
    shell_note(s, "recovered the prepared transaction '%s': commit or roll "
               "it back", name);
}
