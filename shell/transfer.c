/*
** transfer.c -- .import and .dump.
**
** .dump writes one JSON line per key (see jsonl.c for the form), in key
** order, from the snapshot when one is held.  It is byte-safe: keys and
** values that are not UTF-8 are written as hex, so .import reads back
** exactly what was dumped.
**
** .import reads JSON lines (when the first non-blank byte of the file is
** '{') or tab-separated lines, KEY<tab>VALUE, both fields taken literally
** (the value runs to the end of the line and may hold tabs; a trailing CR
** is dropped).  Blank lines are skipped.
**
** Writes are batched: a ravel_batch of up to IMPORT_BATCH_OPS operations
** or IMPORT_BATCH_BYTES bytes is written at a time, with the session's
** .sync flag.  A regular file is first checked whole, so a bad line
** imports nothing; a pipe cannot be read twice, so lines before a bad one
** are already written (the error says how many).  Inside an open batch the
** pairs join it instead, and are written (or not) by commit.  In an
** interactive session an import that runs longer than a second shows a
** progress line on stderr.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "shell.h"

#define IMPORT_BATCH_OPS 1000
#define IMPORT_BATCH_BYTES (4u << 20)

struct import_ctx {
    struct shell *s;
    const char *name;
    FILE *f;
    int json;   /* -1 until the first non-blank line decides */
    int check;  /* the checking pass: parse only, write nothing */
    long line;
    unsigned long long records;   /* pairs put (or checked) so far */
    unsigned long long written;   /* pairs in completed writes */
    ravel_batch *batch;           /* the session's open batch, or our own */
    size_t pending_bytes;
    long long size;               /* of the file, 0 if unknown */
    long long bytes_read;
    struct timespec start, last_progress;
    int progress_shown;
    struct shell_buf key, val;
};

static double transfer_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) +
           (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

static void import_error(struct import_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void import_error(struct import_ctx *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->progress_shown)
        fputc('\n', stderr);
    c->progress_shown = 0;
    if (c->batch == c->s->batch && !c->check && c->records)
        shell_error(c->s, ".import: %s: line %ld: %s; the %llu pairs before "
                    "it were added to the open batch", c->name, c->line, msg,
                    c->records);
    else if (c->check || c->written == 0)
        shell_error(c->s, ".import: %s: line %ld: %s; nothing imported",
                    c->name, c->line, msg);
    else
        shell_error(c->s, ".import: %s: line %ld: %s; the %llu pairs before "
                    "it were imported", c->name, c->line, msg, c->written);
}

static void import_progress(struct import_ctx *c)
{
    if (!c->s->interactive || c->check)
        return;
    if (transfer_since(&c->start) < 1.0 ||
        transfer_since(&c->last_progress) < 0.25)
        return;
    clock_gettime(CLOCK_MONOTONIC, &c->last_progress);
    fprintf(stderr, "\rimporting %s: %llu pairs, %.1f MB", c->name, c->records,
            (double)c->bytes_read / 1e6);
    if (c->size > 0)
        fprintf(stderr, " (%d%%)", (int)(100.0 * (double)c->bytes_read /
                                         (double)c->size));
    fputs("   ", stderr);
    fflush(stderr);
    c->progress_shown = 1;
}

/* Writes our own batch (not the session's open batch). */
static int import_flush(struct import_ctx *c)
{
    if (c->check || c->batch == c->s->batch) {
        c->written = c->records;
        return 0;
    }
    if (ravel_batch_count(c->batch) == 0)
        return 0;
    int rc = ravel_write(c->s->db, shell_write_flags(c->s), c->batch);
    if (rc) {
        const char *m = ravel_errmsg();
        import_error(c, "%s", m && m[0] ? m : ravel_errstr(rc));
        return -1;
    }
    c->written = c->records;
    c->pending_bytes = 0;
    ravel_batch_clear(c->batch);
    return 0;
}

/* Splits one line into c->key and c->val; -1 with a message in ERR. */
static int import_parse(struct import_ctx *c, char *line, size_t len,
                        char *err, size_t errlen)
{
    if (c->json)
        return shell_jsonl_parse(line, len, &c->key, &c->val, err, errlen);
    if (len && line[len - 1] == '\r')
        len--;
    char *tab = memchr(line, '\t', len);
    if (!tab) {
        snprintf(err, errlen, "no tab (expected KEY<tab>VALUE)");
        return -1;
    }
    c->key.len = c->val.len = 0;
    if (shell_buf_add(&c->key, line, (size_t)(tab - line)) ||
        shell_buf_add(&c->val, tab + 1, len - (size_t)(tab - line) - 1)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* A bad line or ^C: what was read before it is written, then reported,
** so "the N pairs before it were imported" is exact. */
static void import_stop(struct import_ctx *c, const char *why)
{
    if (import_flush(c) == 0)
        import_error(c, "%s", why);
}

static int import_pass(struct import_ctx *c)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = -1;
    c->line = 0;
    c->records = c->written = 0;
    c->bytes_read = 0;
    while ((n = getline(&line, &cap, c->f)) >= 0) {
        c->line++;
        c->bytes_read += n;
        size_t len = (size_t)n;
        if (len && line[len - 1] == '\n')
            len--;
        size_t blank = 0;
        while (blank < len && strchr(" \t\r", line[blank]))
            blank++;
        if (blank == len)
            continue;
        if (c->json < 0)
            c->json = line[blank] == '{';
        char err[200];
        if (shell_interrupted) {
            import_stop(c, "interrupted");
            goto out;
        }
        if (import_parse(c, line, len, err, sizeof err)) {
            import_stop(c, err);
            goto out;
        }
        c->records++;
        if (c->check)
            continue;
        int prc = ravel_batch_put(c->batch, c->key.p, c->key.len, c->val.p,
                                  c->val.len);
        if (prc) {
            import_error(c, "%s", ravel_errmsg());
            goto out;
        }
        c->pending_bytes += c->key.len + c->val.len + 16;
        if (c->batch != c->s->batch &&
            (ravel_batch_count(c->batch) >= IMPORT_BATCH_OPS ||
             c->pending_bytes >= IMPORT_BATCH_BYTES) &&
            import_flush(c))
            goto out;
        import_progress(c);
    }
    if (shell_interrupted) { /* ^C while blocked reading the next line */
        c->line++;
        import_stop(c, "interrupted");
        goto out;
    }
    if (ferror(c->f)) {
        import_error(c, "read error: %s", strerror(errno));
        goto out;
    }
    rc = import_flush(c);
out:
    free(line);
    return rc;
}

void shell_cmd_import(struct shell *s, struct shell_line *l)
{
    const char *name = l->tok[1].p;
    if (strlen(name) != l->tok[1].len || !name[0]) {
        shell_error(s, ".import: not a usable file name");
        return;
    }
    struct import_ctx c = {.s = s, .name = name, .json = -1};
    c.f = fopen(name, "r");
    if (!c.f) {
        shell_error(s, ".import: cannot open '%s': %s", name, strerror(errno));
        return;
    }
    struct stat st;
    int seekable = fstat(fileno(c.f), &st) == 0 && S_ISREG(st.st_mode);
    c.size = seekable ? (long long)st.st_size : 0;
    if (s->batch) {
        c.batch = s->batch;
    } else if (ravel_batch_new(&c.batch)) {
        shell_error(s, ".import: out of memory");
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &c.start);
    if (seekable) {
        c.check = 1;
        if (import_pass(&c))
            goto out;
        c.check = 0;
        c.json = -1;
        rewind(c.f);
    }
    if (import_pass(&c) == 0) {
        if (c.progress_shown)
            fputc('\n', stderr);
        shell_note(s, "%s %llu pairs from %s (%s) in %.2f s",
                   s->batch ? "added" : "imported", c.records, name,
                   c.json == 1 ? "JSON lines" : "tab-separated",
                   transfer_since(&c.start));
    }
out:
    if (c.batch && c.batch != s->batch)
        ravel_batch_free(c.batch);
    shell_buf_free(&c.key);
    shell_buf_free(&c.val);
    fclose(c.f);
}

void shell_cmd_dump(struct shell *s, struct shell_line *l)
{
    FILE *f = s->out;
    const char *name = NULL;
    if (l->n == 2) {
        name = l->tok[1].p;
        if (strlen(name) != l->tok[1].len || !name[0]) {
            shell_error(s, ".dump: not a usable file name");
            return;
        }
        f = fopen(name, "w");
        if (!f) {
            shell_error(s, ".dump: cannot open '%s': %s", name,
                        strerror(errno));
            return;
        }
    }
    ravel_iter *it = NULL;
    unsigned long long n = 0;
    int rc = ravel_iter_new(s->db, s->snap, &it);
    if (rc) {
        shell_api_error(s, ".dump", rc);
        goto out;
    }
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it), n++) {
        if (shell_interrupted) {
            shell_error(s, ".dump: interrupted after %llu keys", n);
            goto out;
        }
        if (ferror(f))
            break; /* reported below, or after the command */
        size_t kl, vl;
        const void *k = ravel_iter_key(it, &kl);
        const void *v = ravel_iter_value(it, &vl);
        fputc('{', f);
        shell_put_json_member(f, "key", k, kl);
        fputc(',', f);
        shell_put_json_member(f, "value", v, vl);
        fputs("}\n", f);
    }
    rc = ravel_iter_status(it);
    if (rc) {
        shell_api_error(s, ".dump", rc);
        goto out;
    }
    if (name) {
        FILE *done = f;
        f = NULL;
        if (ferror(done) | fclose(done)) {
            shell_error(s, ".dump: writing '%s' failed: %s", name,
                        strerror(errno));
            goto out;
        }
        shell_note(s, "dumped %llu keys to %s", n, name);
    }
out:
    ravel_iter_free(it);
    if (name && f)
        fclose(f);
}
