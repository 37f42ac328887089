/*
** cmd_data.c -- the commands that read and write the database.
**
** put and del write at once (RAVEL_SYNC under .sync on), or join the open
** batch; commit hands the whole batch to one ravel_write, so a batch is
** written entirely or not at all -- the shell never writes part of one.
** Reads (get, scan, count) go through the snapshot when one is held, and
** do not see the open batch's pending writes.
**
** scan and count walk a range [FROM, TO) narrowed by --prefix: the prefix
** P is turned into the range [P, S), where S, the successor of P, drops
** P's trailing 0xff bytes and increments the last byte (none left: no
** upper bound).
*/
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

int shell_write_flags(const struct shell *s)
{
    return s->sync ? RAVEL_SYNC : 0;
}

int shell_write_batch(struct shell *s, ravel_batch *b, const char *what)
{
    int rc = ravel_write(s->db, shell_write_flags(s), b);
    if (rc) {
        shell_api_error(s, what, rc);
        return -1;
    }
    return 0;
}

void shell_cmd_put(struct shell *s, struct shell_line *l)
{
    struct shell_token *k = &l->tok[1], *v = &l->tok[2];
    int rc = s->batch
                 ? ravel_batch_put(s->batch, k->p, k->len, v->p, v->len)
                 : ravel_put(s->db, shell_write_flags(s), k->p, k->len, v->p,
                             v->len);
    if (rc)
        shell_api_error(s, "put", rc);
}

void shell_cmd_del(struct shell *s, struct shell_line *l)
{
    struct shell_token *k = &l->tok[1];
    int rc = s->batch ? ravel_batch_delete(s->batch, k->p, k->len)
                      : ravel_delete(s->db, shell_write_flags(s), k->p, k->len);
    if (rc)
        shell_api_error(s, "del", rc);
}

void shell_cmd_get(struct shell *s, struct shell_line *l)
{
    struct shell_token *k = &l->tok[1];
    void *val = NULL;
    size_t vlen = 0;
    int rc = ravel_get(s->db, s->snap, k->p, k->len, &val, &vlen);
    if (rc == RAVEL_OK || rc == RAVEL_NOTFOUND)
        shell_put_value(s->out, s->mode, k->p, k->len,
                        rc == RAVEL_OK ? val : NULL, vlen);
    else
        shell_api_error(s, "get", rc);
    ravel_free(val);
}

/* ------------------------------------------------------------ scan, count */

struct data_range {
    const struct shell_token *from, *to, *prefix;
    struct shell_token prefix_view; /* the P of --prefix=P */
    struct shell_buf lo, hi; /* effective bounds */
    int has_lo, has_hi;
    uint64_t limit; /* 0: none */
    int has_limit, reverse;
};

static int data_cmp(const void *a, size_t al, const void *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

/* Parses scan/count arguments; ALLOW_OPTIONS is 0 for count. */
static int data_range_parse(struct shell *s, struct shell_line *l,
                            int allow_options, struct data_range *r)
{
    const char *cmd = l->tok[0].p;
    int npos = 0;
    for (int i = 1; i < l->n; i++) {
        struct shell_token *t = &l->tok[i];
        if (t->quoted || strncmp(t->p, "--", 2) != 0 || t->len == 2) {
            if (npos == 2) {
                shell_usage_error(s, shell_command_find(cmd));
                return -1;
            }
            if (npos++ == 0)
                r->from = t;
            else
                r->to = t;
            continue;
        }
        const char *eq = strchr(t->p, '=');
        size_t nlen = eq ? (size_t)(eq - t->p) : t->len;
        const char *val = NULL;
        int takes_value = allow_options &&
                          ((nlen == 7 && !strncmp(t->p, "--limit", 7)) ||
                           (nlen == 8 && !strncmp(t->p, "--prefix", 8)));
        if (allow_options && strcmp(t->p, "--reverse") == 0) {
            r->reverse = 1;
            continue;
        }
        if (!takes_value) {
            shell_error(s, "%s: unknown option '%.*s'", cmd, (int)nlen, t->p);
            return -1;
        }
        struct shell_token *vt = NULL;
        if (!eq) {
            if (i + 1 >= l->n) {
                shell_error(s, "%s: %s needs a value", cmd, t->p);
                return -1;
            }
            vt = &l->tok[++i];
            val = vt->p;
        } else {
            val = eq + 1;
        }
        if (t->p[2] == 'p') {
            if (!vt) { /* --prefix=P: a view of the token's tail */
                r->prefix_view.p = (char *)val;
                r->prefix_view.len = t->len - (size_t)(val - t->p);
                vt = &r->prefix_view;
            }
            r->prefix = vt;
        } else {
            char *end;
            unsigned long long n = strtoull(val, &end, 10);
            if (!val[0] || *end || val[0] == '-') {
                shell_error(s, "%s: --limit needs a whole number, not '%s'",
                            cmd, val);
                return -1;
            }
            r->limit = n;
            r->has_limit = 1;
        }
    }
    return 0;
}

/* Turns FROM, TO and the prefix into the bounds [lo, hi). */
static int data_range_bounds(struct data_range *r)
{
    if (r->from) {
        r->has_lo = 1;
        if (shell_buf_add(&r->lo, r->from->p, r->from->len))
            return -1;
    }
    if (r->to) {
        r->has_hi = 1;
        if (shell_buf_add(&r->hi, r->to->p, r->to->len))
            return -1;
    }
    if (!r->prefix)
        return 0;
    const struct shell_token *p = r->prefix;
    if (!r->has_lo || data_cmp(p->p, p->len, r->lo.p, r->lo.len) > 0) {
        r->lo.len = 0;
        r->has_lo = 1;
        if (shell_buf_add(&r->lo, p->p, p->len))
            return -1;
    }
    size_t n = p->len;
    while (n > 0 && (unsigned char)p->p[n - 1] == 0xff)
        n--;
    if (n == 0)
        return 0; /* all 0xff (or empty): no upper bound from the prefix */
    struct shell_buf succ = {0};
    if (shell_buf_add(&succ, p->p, n))
        return -1;
    succ.p[n - 1] = (char)((unsigned char)succ.p[n - 1] + 1);
    if (!r->has_hi || data_cmp(succ.p, succ.len, r->hi.p, r->hi.len) < 0) {
        shell_buf_free(&r->hi);
        r->hi = succ;
        r->has_hi = 1;
    } else {
        shell_buf_free(&succ);
    }
    return 0;
}

typedef void (*data_visit_fn)(struct shell *s, const void *k, size_t kl,
                              const void *v, size_t vl);

/* Visits the range in order; returns the number of entries visited, or -1
** after reporting an error. */
static int64_t data_walk(struct shell *s, const char *what,
                         struct data_range *r, data_visit_fn visit)
{
    ravel_iter *it = NULL;
    int64_t n = 0;
    int rc = ravel_iter_new(s->db, s->snap, &it);
    if (rc) {
        shell_api_error(s, what, rc);
        return -1;
    }
    if (r->reverse) {
        if (r->has_hi) {
            ravel_iter_seek_for_prev(it, r->hi.p, r->hi.len);
            size_t kl;
            const void *k = ravel_iter_key(it, &kl);
            if (ravel_iter_valid(it) && !data_cmp(k, kl, r->hi.p, r->hi.len))
                ravel_iter_prev(it);
        } else {
            ravel_iter_seek_to_last(it);
        }
    } else if (r->has_lo) {
        ravel_iter_seek(it, r->lo.p, r->lo.len);
    } else {
        ravel_iter_seek_to_first(it);
    }
    while (ravel_iter_valid(it)) {
        if (r->has_limit && (uint64_t)n >= r->limit)
            break;
        if (visit && ferror(s->out))
            break; /* reported after the command */
        if (shell_interrupted) {
            shell_error(s, "%s: interrupted after %" PRId64 " keys", what, n);
            n = -1;
            goto out;
        }
        size_t kl, vl;
        const void *k = ravel_iter_key(it, &kl);
        if (!r->reverse && r->has_hi &&
            data_cmp(k, kl, r->hi.p, r->hi.len) >= 0)
            break;
        if (r->reverse && r->has_lo && data_cmp(k, kl, r->lo.p, r->lo.len) < 0)
            break;
        if (visit) {
            const void *v = ravel_iter_value(it, &vl);
            visit(s, k, kl, v, vl);
        }
        n++;
        if (r->reverse)
            ravel_iter_prev(it);
        else
            ravel_iter_next(it);
    }
    rc = ravel_iter_status(it);
    if (rc) {
        shell_api_error(s, what, rc);
        n = -1;
    }
out:
    ravel_iter_free(it);
    return n;
}

static void data_print_pair(struct shell *s, const void *k, size_t kl,
                            const void *v, size_t vl)
{
    shell_put_pair(s->out, s->mode, k, kl, v, vl);
}

static void data_range_run(struct shell *s, struct shell_line *l,
                           int allow_options, data_visit_fn visit)
{
    struct data_range r = {0};
    const char *what = l->tok[0].p;
    if (data_range_parse(s, l, allow_options, &r))
        goto out;
    if (data_range_bounds(&r)) {
        shell_error(s, "%s: out of memory", what);
        goto out;
    }
    int64_t n = data_walk(s, what, &r, visit);
    if (n >= 0 && !visit)
        fprintf(s->out, "%" PRId64 "\n", n);
out:
    shell_buf_free(&r.lo);
    shell_buf_free(&r.hi);
}

void shell_cmd_scan(struct shell *s, struct shell_line *l)
{
    data_range_run(s, l, 1, data_print_pair);
}

void shell_cmd_count(struct shell *s, struct shell_line *l)
{
    data_range_run(s, l, 0, NULL);
}

/* -------------------------------------------------------------- batches */

void shell_cmd_batch(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (s->batch) {
        shell_error(s, "batch: a batch is already open (%u operations); "
                    "commit or abort it first", ravel_batch_count(s->batch));
        return;
    }
    int rc = ravel_batch_new(&s->batch);
    if (rc) {
        shell_api_error(s, "batch", rc);
        return;
    }
    s->batch_error[0] = '\0';
}

void shell_cmd_commit(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (!s->batch) {
        shell_error(s, "commit: no batch is open (start one with 'batch')");
        return;
    }
    ravel_batch *b = s->batch;
    uint32_t n = ravel_batch_count(b);
    s->batch = NULL; /* committed or not, this batch is over */
    if (s->batch_error[0]) {
        shell_error(s, "commit: the batch had an error (%s); nothing written, "
                    "batch discarded", s->batch_error);
    } else if (shell_write_batch(s, b, "commit") == 0) {
        shell_note(s, "committed %u operation%s", n, n == 1 ? "" : "s");
    }
    ravel_batch_free(b);
}

void shell_cmd_abort(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (!s->batch) {
        shell_error(s, "abort: no batch is open");
        return;
    }
    uint32_t n = ravel_batch_count(s->batch);
    ravel_batch_free(s->batch);
    s->batch = NULL;
    shell_note(s, "discarded %u operation%s", n, n == 1 ? "" : "s");
}

/* ------------------------------------------------------------ snapshots */

void shell_cmd_snapshot(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (s->snap) {
        shell_error(s, "snapshot: a snapshot is already held (at sequence "
                    "%" PRIu64 "); release it first",
                    ravel_snapshot_sequence(s->snap));
        return;
    }
    int rc = ravel_snapshot_acquire(s->db, &s->snap);
    if (rc) {
        s->snap = NULL;
        shell_api_error(s, "snapshot", rc);
        return;
    }
    fprintf(s->out, "snapshot at sequence %" PRIu64 "\n",
            ravel_snapshot_sequence(s->snap));
}

void shell_cmd_release(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (!s->snap) {
        shell_error(s, "release: no snapshot is held");
        return;
    }
    int rc = ravel_snapshot_release(s->db, s->snap);
    s->snap = NULL;
    if (rc)
        shell_api_error(s, "release", rc);
}

/* --------------------------------------------------------- introspection */

static void data_property(struct shell *s, const char *what, const char *name)
{
    char *text = NULL;
    int rc = ravel_property(s->db, name, &text);
    if (rc) {
        shell_api_error(s, what, rc);
        return;
    }
    size_t n = strlen(text);
    fputs(text, s->out);
    if (n == 0 || text[n - 1] != '\n')
        fputc('\n', s->out);
    ravel_free(text);
}

void shell_cmd_stats(struct shell *s, struct shell_line *l)
{
    (void)l;
    data_property(s, "stats", "ravel.stats");
}

void shell_cmd_property(struct shell *s, struct shell_line *l)
{
    if (strlen(l->tok[1].p) != l->tok[1].len) {
        shell_error(s, "property: a property name cannot hold a NUL byte");
        return;
    }
    data_property(s, "property", l->tok[1].p);
}

void shell_cmd_flush_wal(struct shell *s, struct shell_line *l)
{
    int sync = 0;
    for (int i = 1; i < l->n; i++) {
        if (!l->tok[i].quoted && strcmp(l->tok[i].p, "--sync") == 0) {
            sync = 1;
        } else {
            shell_usage_error(s, shell_command_find("flush-wal"));
            return;
        }
    }
    int rc = ravel_flush_wal(s->db, sync);
    if (rc)
        shell_api_error(s, "flush-wal", rc);
}
