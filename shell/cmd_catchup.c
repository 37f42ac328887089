/*
** cmd_catchup.c -- .catchup: a shell opened with -readonly beside a running
** application follows its writes (ravel_catch_up, docs/operations.md,
** "Readers in other processes").
**
**   .catchup            catch up once; print the sequence now seen
**   .catchup auto MS    reopen the database with catch_up_interval_ms=MS:
**                       a thread of the library catches up every MS ms
**   .catchup off        reopen it with catch_up_interval_ms=0
**   .catchup auto       print the interval in force (0: off)
**
** Reopening releases the session's snapshot, as .open does; the database
** is read-only, so there is no batch or transaction to lose.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* The sequence a reader sees, from ravel.reader-lag; 0 if unknown. */
static unsigned long long catchup_sequence(struct shell *s)
{
    char *text = NULL;
    if (ravel_property(s->db, "ravel.reader-lag", &text) != RAVEL_OK)
        return 0;
    const char *at = strstr(text, "sequence=");
    unsigned long long seq = at ? strtoull(at + 9, NULL, 10) : 0;
    ravel_free(text);
    return seq;
}

/* Reopens the session's database with catch_up_interval_ms=MS (text). */
static void catchup_reopen(struct shell *s, const char *ms)
{
    if (ravel_options_set(s->opts, "catch_up_interval_ms", ms) != RAVEL_OK) {
        shell_error(s, ".catchup: %s", ravel_errmsg());
        return;
    }
    ravel_db *db = NULL;
    /* a reader takes no lock: the new handle opens beside the old one */
    int rc = ravel_open(s->dir, s->opts, &db);
    if (rc) {
        shell_api_error(s, ".catchup", rc);
        return;
    }
    int had_snapshot = s->snap || s->snap_empty;
    shell_db_close(s);
    if (had_snapshot)
        shell_note(s, "the snapshot was released");
    s->db = db;
}

void shell_cmd_catchup(struct shell *s, struct shell_line *l)
{
    if (shell_db_needed(s, ".catchup"))
        return;
    if (!s->readonly) {
        shell_error(s, ".catchup: the database is open for writing, so it "
                    "sees every write already (open it with -readonly "
                    "beside the application that writes it)");
        return;
    }
    if (l->n == 1) {
        int rc = ravel_catch_up(s->db);
        if (rc) {
            shell_api_error(s, ".catchup", rc);
            return;
        }
        fprintf(s->out, "sequence %llu\n", catchup_sequence(s));
        return;
    }
    const char *what = l->tok[1].p;
    if (strcmp(what, "off") == 0 && l->n == 2) {
        catchup_reopen(s, "0");
    } else if (strcmp(what, "auto") == 0 && l->n == 2) {
        char *v = NULL;
        if (ravel_options_get(s->opts, "catch_up_interval_ms", &v) == 0) {
            fprintf(s->out, "%s\n", v);
            ravel_free(v);
        }
    } else if (strcmp(what, "auto") == 0 && l->n == 3) {
        char *end;
        long ms = strtol(l->tok[2].p, &end, 10);
        if (*end || ms <= 0) {
            shell_error(s, ".catchup auto: expected a number of "
                        "milliseconds above 0, not '%s'", l->tok[2].p);
            return;
        }
        catchup_reopen(s, l->tok[2].p);
    } else {
        shell_error(s, "usage: .catchup [auto MS | auto | off]");
    }
}
