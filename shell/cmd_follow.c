/*
** cmd_follow.c -- .follow: the change feed (ravel_updates_since) printed
** as batches commit, one line per operation in the session's mode, or
** one JSON line per batch in .mode json (-json).
**
** Owns: the command's options and its output format.  Does not own: the
** feed (lib/db/updates.c) or how bytes are escaped (format.c).
*/
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell.h"

#define FOLLOW_POLL_US 10000 /* the pause at the end of the log */

struct follow_args {
    uint64_t from;      /* 0: what commits from now on */
    int has_from;
    uint64_t limit;     /* batches to print at most; 0: no limit */
    int no_wait;        /* stop at the end of what the WAL holds now */
};

/* Parses [SEQ] [--limit N] [--no-wait]; -1 (reported) if it cannot. */
static int follow_parse(struct shell *s, struct shell_line *l,
                        struct follow_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < l->n; i++) {
        const struct shell_token *t = &l->tok[i];
        char *end;
        if (!t->quoted && strcmp(t->p, "--no-wait") == 0) {
            a->no_wait = 1;
            continue;
        }
        if (!t->quoted && strcmp(t->p, "--limit") == 0 && i + 1 < l->n) {
            errno = 0;
            a->limit = strtoull(l->tok[++i].p, &end, 10);
            if (errno || *end || !l->tok[i].len || !a->limit ||
                l->tok[i].p[0] == '-') { /* strtoull takes "-1" */
                shell_error(s, ".follow: --limit takes a number of batches "
                            "above 0, not '%s'", l->tok[i].p);
                return -1;
            }
            continue;
        }
        errno = 0;
        uint64_t v = strtoull(t->p, &end, 10);
        if (a->has_from || errno || *end || !t->len || t->p[0] == '-') {
            shell_usage_error(s, shell_command_find(".follow"));
            return -1;
        }
        a->from = v;
        a->has_from = 1;
    }
    return 0;
}

static const char *follow_op_name(int op)
{
    return op == RAVEL_OP_PUT ? "put"
           : op == RAVEL_OP_DELETE_RANGE ? "del-range" /* value: its end */
                                         : "del";
}

/* One operation of the batch at SEQ, as a line in the session's mode:
** SEQ, the operation, the key and (for a put) the value. */
static void follow_put_op(struct shell *s, uint64_t seq, int op,
                          const void *k, size_t kl, const void *v, size_t vl)
{
    FILE *f = s->out;
    switch (s->mode) {
    case SHELL_MODE_CSV:
        fprintf(f, "%" PRIu64 ",%s,", seq, follow_op_name(op));
        shell_put_pair(f, s->mode, k, kl, v, vl);
        return;
    case SHELL_MODE_QUOTE:
        fprintf(f, "%" PRIu64 " %s ", seq, follow_op_name(op));
        shell_put_quoted(f, k, kl);
        if (v) {
            fputc(' ', f);
            shell_put_quoted(f, v, vl);
        }
        break;
    case SHELL_MODE_HEX:
        fprintf(f, "%" PRIu64 "\t%s\t", seq, follow_op_name(op));
        shell_put_hex(f, k, kl);
        if (v) {
            fputc('\t', f);
            shell_put_hex(f, v, vl);
        }
        break;
    default:
        fprintf(f, "%" PRIu64 "\t%s\t", seq, follow_op_name(op));
        shell_put_text(f, k, kl);
        if (v) {
            fputc('\t', f);
            shell_put_text(f, v, vl);
        }
        break;
    }
    fputc('\n', f);
}

/* The batch B at SEQ: its operations' lines, or one JSON line
** {"seq":N,"ops":[{"op":"put","key":..,"value":..},...]}.  -1 (reported)
** if it cannot be read. */
static int follow_put_batch(struct shell *s, uint64_t seq,
                            const ravel_batch *b)
{
    size_t pos = 0, kl, vl;
    int op, rc, first = 1;
    uint64_t i = 0;
    const void *k, *v;
    if (s->mode == SHELL_MODE_JSON)
        fprintf(s->out, "{\"seq\":%" PRIu64 ",\"ops\":[", seq);
    while ((rc = ravel_batch_next_op(b, &pos, &op, &k, &kl, &v, &vl)) ==
           RAVEL_OK) {
        uint64_t at = seq + i++; /* each operation's own sequence */
        if (s->mode != SHELL_MODE_JSON) {
            follow_put_op(s, at, op, k, kl, v, vl);
            continue;
        }
        fprintf(s->out, "%s{\"op\":\"%s\",", first ? "" : ",",
                follow_op_name(op));
        shell_put_json_member(s->out, "key", k, kl);
        if (v) {
            fputc(',', s->out);
            shell_put_json_member(s->out, "value", v, vl);
        }
        fputc('}', s->out);
        first = 0;
    }
    if (s->mode == SHELL_MODE_JSON)
        fputs("]}\n", s->out);
    fflush(s->out);
    if (rc != RAVEL_NOTFOUND) {
        shell_api_error(s, ".follow", rc);
        return -1;
    }
    return 0;
}

/* Where to start without SEQ: after the last sequence written now. */
static int follow_start(struct shell *s, uint64_t *from)
{
    char *text = NULL;
    int rc = ravel_property(s->db, "ravel.last-sequence", &text);
    if (rc) {
        shell_api_error(s, ".follow", rc);
        return -1;
    }
    *from = strtoull(text, NULL, 10) + 1;
    ravel_free(text);
    return 0;
}

void shell_cmd_follow(struct shell *s, struct shell_line *l)
{
    struct follow_args a;
    if (follow_parse(s, l, &a) || shell_db_needed(s, ".follow"))
        return;
    if (!a.has_from && follow_start(s, &a.from))
        return;
    ravel_updates *u = NULL;
    int rc = ravel_updates_since(s->db, a.from, 0, &u);
    if (rc) {
        shell_api_error(s, ".follow", rc);
        return;
    }
    uint64_t printed = 0;
    while (!a.limit || printed < a.limit) {
        if (shell_interrupted) { /* Ctrl-C: where to go on from */
            shell_note(s, ".follow: stopped after %" PRIu64 " batches "
                       "(next: .follow %" PRIu64 ")", printed,
                       ravel_updates_last_sequence(u) + 1);
            break;
        }
        rc = ravel_updates_next(u);
        if (rc == RAVEL_NOTFOUND) {
            if (a.no_wait)
                break;
            usleep(FOLLOW_POLL_US);
            continue;
        }
        if (rc) {
            shell_api_error(s, ".follow", rc);
            break;
        }
        if (follow_put_batch(s, ravel_updates_sequence(u),
                             ravel_updates_batch(u)))
            break;
        printed++;
        if (ferror(s->out))
            break; /* reported after the command */
    }
    ravel_updates_free(u);
}
