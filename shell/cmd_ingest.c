/*
** cmd_ingest.c -- .ingest: adding table files written by ravel_sst_writer
** (or by .import --sst) to the database, with ravel_ingest.
**
**   .ingest [--move] FILE...
**
** Every FILE is added at once, or none is (ravel_ingest's refusals are
** reported as they are: overlapping files, a missing, damaged or foreign
** one).  --move removes the files once the ingest is durable.
*/
#include <stdlib.h>
#include <string.h>

#include "shell.h"

void shell_cmd_ingest(struct shell *s, struct shell_line *l)
{
    int flags = 0, n = 0;
    const char *paths[SHELL_MAX_TOKENS];
    for (int i = 1; i < l->n; i++) {
        const struct shell_token *t = &l->tok[i];
        if (!t->quoted && strcmp(t->p, "--move") == 0) {
            flags |= RAVEL_INGEST_MOVE;
            continue;
        }
        if (!t->len || strlen(t->p) != t->len) {
            shell_error(s, ".ingest: not a usable file name");
            return;
        }
        paths[n++] = t->p;
    }
    if (n == 0) {
        shell_usage_error(s, shell_command_find(".ingest"));
        return;
    }
    if (s->txn || s->batch) {
        shell_error(s, ".ingest: not inside a %s (an ingest is a write of "
                    "its own)", s->txn ? "transaction" : "batch");
        return;
    }
    if (shell_db_for_write(s, ".ingest"))
        return;
    int rc = ravel_ingest(s->db, paths, (size_t)n, flags);
    if (rc) {
        shell_api_error(s, ".ingest", rc);
        return;
    }
    shell_note(s, "ingested %d file%s%s", n, n == 1 ? "" : "s",
               flags & RAVEL_INGEST_MOVE ? " (moved)" : "");
}
