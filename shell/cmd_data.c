/*
** cmd_data.c -- the commands that read and write the database.
**
** put and del write at once (RAVEL_SYNC under .sync on), or join the open
** batch, or go through the open transaction (cmd_txn.c); commit hands the
** whole batch to one ravel_write, so a batch is written entirely or not at
** all -- the shell never writes part of one.  Reads (get, scan, count) go
** through the open transaction, seeing its writes, or the snapshot when
** one is held; they do not see the open batch's pending writes.  Before
** the database exists (open.c) reads see it empty and the first write
** creates it.
**
** scan and count walk a range [FROM, TO) narrowed by --prefix: the prefix
** P is turned into the range [P, S), where S, the successor of P, drops
** P's trailing 0xff bytes and increments the last byte (none left: no
** upper bound).  A range that can hold no key (FROM >= TO) is an error
** that says so, rather than an empty listing that looks like no data: a
** reversed scan is written with FROM below TO too, `scan a b --reverse`.
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
    if (shell_db_for_write(s, what))
        return -1;
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
    int rc;
    if (s->txn) {
        if (shell_txn_writable(s, "put"))
            return;
        rc = ravel_txn_put(s->txn, k->p, k->len, v->p, v->len);
        if (rc)
            shell_txn_error(s, "put", rc);
        return;
    }
    if (!s->batch && shell_db_for_write(s, "put"))
        return;
    rc = s->batch ? ravel_batch_put(s->batch, k->p, k->len, v->p, v->len)
                  : ravel_put(s->db, shell_write_flags(s), k->p, k->len, v->p,
                              v->len);
    if (rc)
        shell_api_error(s, "put", rc);
}

void shell_cmd_del(struct shell *s, struct shell_line *l)
{
    struct shell_token *k = &l->tok[1];
    int rc;
    if (s->txn) {
        if (shell_txn_writable(s, "del"))
            return;
        rc = ravel_txn_delete(s->txn, k->p, k->len);
        if (rc)
            shell_txn_error(s, "del", rc);
        return;
    }
    if (!s->batch && shell_db_for_write(s, "del"))
        return;
    rc = s->batch ? ravel_batch_delete(s->batch, k->p, k->len)
                  : ravel_delete(s->db, shell_write_flags(s), k->p, k->len);
    if (rc)
        shell_api_error(s, "del", rc);
}

void shell_cmd_del_range(struct shell *s, struct shell_line *l)
{
    struct shell_token *b = &l->tok[1], *e = &l->tok[2];
    int rc;
    if (s->txn) {
        if (shell_txn_writable(s, "del-range"))
            return;
        rc = ravel_txn_delete_range(s->txn, b->p, b->len, e->p, e->len);
        if (rc)
            shell_txn_error(s, "del-range", rc);
        return;
    }
    if (!s->batch && shell_db_for_write(s, "del-range"))
        return;
    rc = s->batch ? ravel_batch_delete_range(s->batch, b->p, b->len, e->p,
                                             e->len)
                  : ravel_delete_range(s->db, shell_write_flags(s), b->p,
                                       b->len, e->p, e->len);
    if (rc)
        shell_api_error(s, "del-range", rc);
}

/* get K, or get --for-update K (either order): the key, and whether
** --for-update was given; NULL after reporting a usage error. */
static const struct shell_token *data_get_args(struct shell *s,
                                               struct shell_line *l,
                                               int *for_update)
{
    const struct shell_token *k = NULL;
    int extra = 0;
    *for_update = 0;
    for (int i = 1; i < l->n; i++) {
        const struct shell_token *t = &l->tok[i];
        if (!t->quoted && !*for_update && strcmp(t->p, "--for-update") == 0)
            *for_update = 1;
        else if (!k)
            k = t;
        else
            extra = 1;
    }
    if (!k || extra) {
        shell_usage_error(s, shell_command_find("get"));
        return NULL;
    }
    if (*for_update && !s->txn) {
        shell_error(s, "get: --for-update needs an open transaction (begin "
                    "one with 'begin')");
        return NULL;
    }
    return k;
}

void shell_cmd_get(struct shell *s, struct shell_line *l)
{
    int for_update;
    const struct shell_token *k = data_get_args(s, l, &for_update);
    if (!k)
        return;
    void *val = NULL;
    size_t vlen = 0;
    int absent = shell_db_for_read(s);
    if (absent && s->failed)
        return; /* a database that cannot be read: said */
    int rc = absent ? RAVEL_NOTFOUND
                    : shell_read_get(s, k, for_update, &val, &vlen);
    if (rc == RAVEL_OK || rc == RAVEL_NOTFOUND)
        shell_put_value(s->out, s->mode, k->p, k->len,
                        rc == RAVEL_OK ? val : NULL, vlen);
    else if (s->txn)
        shell_txn_error(s, "get", rc);
    else
        shell_api_error(s, "get", rc);
    ravel_free(val);
}

/* ------------------------------------------------------------ scan, count */

struct data_range {
    struct shell_token from, to, prefix; /* len 0 and p NULL: not given */
    int has_from, has_to, has_prefix;
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

/* Sets a bound (FROM, TO or the prefix) once; a second one is an error. */
static int data_set_bound(struct shell *s, const char *cmd, const char *name,
                          struct shell_token *bound, int *has,
                          const struct shell_token *value)
{
    if (*has) {
        shell_error(s, "%s: %s given twice", cmd, name);
        return -1;
    }
    *bound = *value;
    *has = 1;
    return 0;
}

static int data_set_limit(struct shell *s, const char *cmd, const char *val,
                          struct data_range *r)
{
    char *end;
    unsigned long long n = strtoull(val, &end, 10);
    if (!val[0] || *end || val[0] == '-') {
        shell_error(s, "%s: --limit needs a whole number, not '%s'", cmd, val);
        return -1;
    }
    r->limit = n;
    r->has_limit = 1;
    return 0;
}

/* Parses scan/count arguments: FROM and TO by position or as --from and
** --to, --prefix, and for scan (LISTING) --limit and --reverse. */
static int data_range_parse(struct shell *s, struct shell_line *l,
                            int listing, struct data_range *r)
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
            int rc = npos++ == 0 ? data_set_bound(s, cmd, "FROM", &r->from,
                                                  &r->has_from, t)
                                 : data_set_bound(s, cmd, "TO", &r->to,
                                                  &r->has_to, t);
            if (rc)
                return -1;
            continue;
        }
        if (listing && strcmp(t->p, "--reverse") == 0) {
            r->reverse = 1;
            continue;
        }
        const char *eq = strchr(t->p, '=');
        size_t nlen = eq ? (size_t)(eq - t->p) : t->len;
        static const char *const names[] = {"--from", "--to", "--prefix",
                                            "--limit"};
        int opt = -1;
        for (int k = 0; k < (listing ? 4 : 3); k++)
            if (strlen(names[k]) == nlen && !strncmp(t->p, names[k], nlen))
                opt = k;
        if (opt < 0) {
            shell_error(s, "%s: unknown option '%.*s'", cmd, (int)nlen, t->p);
            return -1;
        }
        struct shell_token v;
        if (eq) { /* --prefix=P: a view of the token's tail */
            v.p = (char *)eq + 1;
            v.len = t->len - (size_t)(v.p - t->p);
            v.quoted = 0;
        } else if (i + 1 < l->n) {
            v = l->tok[++i];
        } else {
            shell_error(s, "%s: %s needs a value", cmd, t->p);
            return -1;
        }
        int rc = opt == 0 ? data_set_bound(s, cmd, "FROM", &r->from,
                                           &r->has_from, &v)
               : opt == 1 ? data_set_bound(s, cmd, "TO", &r->to, &r->has_to,
                                           &v)
               : opt == 2 ? data_set_bound(s, cmd, "--prefix", &r->prefix,
                                           &r->has_prefix, &v)
                          : data_set_limit(s, cmd, v.p, r);
        if (rc)
            return -1;
    }
    return 0;
}

/* Turns FROM, TO and the prefix into the bounds [lo, hi). */
static int data_range_bounds(struct data_range *r)
{
    if (r->has_from) {
        r->has_lo = 1;
        if (shell_buf_add(&r->lo, r->from.p, r->from.len))
            return -1;
    }
    if (r->has_to) {
        r->has_hi = 1;
        if (shell_buf_add(&r->hi, r->to.p, r->to.len))
            return -1;
    }
    if (!r->has_prefix)
        return 0;
    const struct shell_token *p = &r->prefix;
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

/* A byte string as the text mode shows it, cut at 40 bytes, in BUF. */
static const char *data_shown(const struct shell_token *t, char *buf,
                              size_t len)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *m = open_memstream(&text, &text_len);
    if (m) {
        shell_put_text(m, t->p, t->len > 40 ? 40 : t->len);
        fclose(m);
    }
    snprintf(buf, len, "%s%s", text ? text : "?", t->len > 40 ? "..." : "");
    free(text);
    return buf;
}

/* Reports a range that can hold no key; 0 if the range is not empty. */
static int data_range_empty(struct shell *s, const char *cmd,
                            const struct data_range *r)
{
    if (!r->has_lo || !r->has_hi ||
        data_cmp(r->lo.p, r->lo.len, r->hi.p, r->hi.len) < 0)
        return 0;
    char a[64], b[64], c[64];
    const char *hint = r->reverse ? " (--reverse walks [FROM, TO) from its "
                                    "end: give FROM below TO)"
                                  : "";
    if (!r->has_prefix)
        shell_error(s, "%s: empty range: FROM '%s' is not below TO '%s'%s",
                    cmd, data_shown(&r->from, a, sizeof a),
                    data_shown(&r->to, b, sizeof b), hint);
    else if (r->has_from && r->has_to)
        shell_error(s, "%s: empty range: no key starting with '%s' is in "
                    "[FROM '%s', TO '%s')%s", cmd,
                    data_shown(&r->prefix, a, sizeof a),
                    data_shown(&r->from, b, sizeof b),
                    data_shown(&r->to, c, sizeof c), hint);
    else
        shell_error(s, "%s: empty range: no key starting with '%s' is %s "
                    "'%s'", cmd, data_shown(&r->prefix, a, sizeof a),
                    r->has_from ? "at or after FROM" : "below TO",
                    data_shown(r->has_from ? &r->from : &r->to, b,
                               sizeof b));
    return -1;
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
    if (shell_db_for_read(s))
        return s->failed ? -1 : 0; /* failed: a database that cannot be read */
    int rc = shell_iter_new(s, &it);
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
                           int listing, data_visit_fn visit)
{
    struct data_range r = {0};
    const char *what = shell_command_find(l->tok[0].p)->name;
    if (data_range_parse(s, l, listing, &r))
        goto out;
    if (data_range_bounds(&r)) {
        shell_error(s, "%s: out of memory", what);
        goto out;
    }
    if (data_range_empty(s, what, &r))
        goto out;
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
    if (s->txn) {
        char work[300];
        shell_error(s, "batch: %s (inside a transaction, put and del wait "
                    "for commit already)",
                    shell_open_work(s, work, sizeof work));
        return;
    }
    int rc = ravel_batch_new(&s->batch);
    if (rc) {
        shell_api_error(s, "batch", rc);
        return;
    }
    s->open_error[0] = '\0';
}

void shell_batch_commit(struct shell *s)
{
    ravel_batch *b = s->batch;
    uint32_t n = ravel_batch_count(b);
    s->batch = NULL; /* committed or not, this batch is over */
    if (s->open_error[0]) {
        shell_error(s, "commit: the batch had an error (%s); nothing written, "
                    "batch discarded", s->open_error);
    } else if (n == 0 || shell_write_batch(s, b, "commit") == 0) {
        /* (An empty batch writes nothing, and creates no database.) */
        shell_note(s, "committed %u operation%s", n, n == 1 ? "" : "s");
    }
    ravel_batch_free(b);
}

void shell_batch_abort(struct shell *s)
{
    uint32_t n = ravel_batch_count(s->batch);
    ravel_batch_free(s->batch);
    s->batch = NULL;
    shell_note(s, "discarded %u operation%s", n, n == 1 ? "" : "s");
}

/* ------------------------------------------------------------ snapshots */

void shell_cmd_snapshot(struct shell *s, struct shell_line *l)
{
    (void)l;
    if (s->txn) {
        shell_error(s, "snapshot: a transaction is open: its reads see the "
                    "state at its begin already (and its own writes)");
        return;
    }
    if (s->snap || s->snap_empty) {
        shell_error(s, "snapshot: a snapshot is already held (at sequence "
                    "%" PRIu64 "); release it first",
                    s->snap ? ravel_snapshot_sequence(s->snap) : 0);
        return;
    }
    s->snap_noted = 0;
    if (shell_db_absent(s)) { /* the empty state, as of sequence 0 */
        s->snap_empty = 1;
        fprintf(s->out, "snapshot at sequence 0\n");
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
    if (s->snap_empty) {
        s->snap_empty = 0;
        return;
    }
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
    if (shell_db_needed(s, what))
        return;
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
    if (shell_db_for_write(s, "flush-wal"))
        return;
    int rc = ravel_flush_wal(s->db, sync);
    if (rc)
        shell_api_error(s, "flush-wal", rc);
}
