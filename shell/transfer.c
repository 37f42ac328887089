/*
** transfer.c -- .import and .dump.
**
** .dump writes one JSON line per key (see jsonl.c for the form), in key
** order, as the session reads: through the open transaction (its writes
** included), else from the snapshot when one is held.  It is byte-safe:
** keys and values that are not UTF-8 are written as hex, so .import reads
** back exactly what was dumped.
**
** .import reads JSON lines, CSV records (KEY,VALUE; see csv.c) or
** tab-separated lines, KEY<tab>VALUE, both fields taken literally (the
** value runs to the end of the line and may hold tabs; a trailing CR is
** dropped).  Blank lines are skipped.  The format is the one named by
** --json, --csv or --tsv; else the one the file's extension names (.json,
** .jsonl, .ndjson; .csv; .tsv, .tab); else JSON lines if the first
** non-blank byte is '{'; else CSV in .mode csv; else tab-separated.
**
** Writes are batched: a ravel_batch of up to IMPORT_BATCH_OPS operations
** or IMPORT_BATCH_BYTES bytes is written at a time, with the session's
** .sync flag.  A regular file is first checked whole, so a bad line
** imports nothing; a pipe cannot be read twice, so lines before a bad one
** are already written (the error says how many).  Inside an open batch or
** transaction the pairs join it instead, and are written (or not) by its
** commit.  In an
** interactive session an import that runs longer than a second shows a
** progress line on stderr.
**
** .import --sst OUT writes the pairs to a new table file OUT with
** ravel_sst_writer instead (for .ingest): no database is needed, the keys
** must come in strictly increasing order (the writer's refusal names the
** line), and OUT is removed unless the whole input went in.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "shell.h"

#define IMPORT_BATCH_OPS 1000

enum import_format { IMPORT_GUESS, IMPORT_TSV, IMPORT_JSON, IMPORT_CSV };
static const char *const import_format_names[] = {
    "?", "tab-separated", "JSON lines", "CSV"};
#define IMPORT_BATCH_BYTES (4u << 20)

struct import_ctx {
    struct shell *s;
    const char *name;
    FILE *f;
    enum import_format given; /* by an option or the extension */
    enum import_format fmt;   /* IMPORT_GUESS until the first line decides */
    struct shell_buf record;  /* a CSV record spanning lines */
    long record_line;         /* where it started */
    int check;  /* the checking pass: parse only, write nothing */
    long line;
    unsigned long long records;   /* pairs put (or checked) so far */
    unsigned long long written;   /* pairs in completed writes */
    ravel_batch *batch;           /* the session's open batch, or our own;
                                  ** NULL in a transaction */
    const char *joined;           /* "batch", "transaction": the pairs join
                                  ** the session's open one; NULL if not */
    ravel_sst_writer *sst;        /* .import --sst: the pairs go here */
    const char *sst_path;         /* ... the table file's name */
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
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->progress_shown)
        fputc('\n', stderr);
    c->progress_shown = 0;
    if (c->sst_path)
        shell_error(c->s, ".import: %s: line %ld: %s; %s not written",
                    c->name, c->line, msg, c->sst_path);
    else if (c->joined && !c->check && c->records)
        shell_error(c->s, ".import: %s: line %ld: %s; the %llu pairs before "
                    "it were added to the open %s", c->name, c->line, msg,
                    c->records, c->joined);
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
    if (c->check || c->joined || c->sst) {
        c->written = c->records;
        return 0;
    }
    if (ravel_batch_count(c->batch) == 0)
        return 0;
    if (shell_db_for_write(c->s, ".import"))
        return -1;
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
static int import_parse(struct import_ctx *c, const char *line, size_t len,
                        char *err, size_t errlen)
{
    if (c->fmt == IMPORT_JSON)
        return shell_jsonl_parse(line, len, &c->key, &c->val, err, errlen);
    if (c->fmt == IMPORT_CSV)
        return shell_csv_parse(line, len, &c->key, &c->val, err, errlen);
    if (len && line[len - 1] == '\r')
        len--;
    const char *tab = memchr(line, '\t', len);
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

/* Adds the pair read to the open transaction, or to the batch. */
static int import_put(struct import_ctx *c)
{
    int rc;
    if (c->sst) {
        rc = ravel_sst_writer_put(c->sst, c->key.p, c->key.len, c->val.p,
                                  c->val.len);
        if (rc)
            import_error(c, "%s", shell_api_message(rc));
        return rc ? -1 : 0;
    }
    if (c->s->txn) {
        rc = ravel_txn_put(c->s->txn, c->key.p, c->key.len, c->val.p,
                           c->val.len);
        if (rc)
            import_error(c, "%s (the transaction is still open%s)",
                         shell_api_message(rc),
                         shell_txn_retriable(rc)
                             ? "; retriable: roll it back and run it again"
                             : "");
        return rc ? -1 : 0;
    }
    rc = ravel_batch_put(c->batch, c->key.p, c->key.len, c->val.p,
                         c->val.len);
    if (rc)
        import_error(c, "%s", ravel_errmsg());
    return rc ? -1 : 0;
}

/* A bad line or ^C: what was read before it is written, then reported,
** so "the N pairs before it were imported" is exact. */
static void import_stop(struct import_ctx *c, const char *why)
{
    if (import_flush(c) == 0)
        import_error(c, "%s", why);
}

/* A CSV record may span lines (a quoted field holding a line break):
** gathers them in c->record.  Returns 1 when a whole record is in *REC
** (LINE itself, or c->record, which the caller empties after parsing),
** 0 to read on, -1 out of memory. */
static int import_record(struct import_ctx *c, const char *line, size_t len,
                         const char **rec, size_t *rec_len)
{
    *rec = line;
    *rec_len = len;
    if (c->fmt != IMPORT_CSV ||
        (c->record.len == 0 && shell_csv_complete(line, len)))
        return 1;
    if (c->record.len == 0)
        c->record_line = c->line;
    else if (shell_buf_addc(&c->record, '\n'))
        return -1;
    if (shell_buf_add(&c->record, line, len))
        return -1;
    if (!shell_csv_complete(c->record.p, c->record.len))
        return 0;
    *rec = c->record.p;
    *rec_len = c->record.len;
    return 1;
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
    c->record.len = 0;
    c->fmt = c->given;
    while ((n = getline(&line, &cap, c->f)) >= 0) {
        c->line++;
        c->bytes_read += n;
        size_t len = (size_t)n;
        if (len && line[len - 1] == '\n')
            len--;
        size_t blank = 0;
        while (blank < len && strchr(" \t\r", line[blank]))
            blank++;
        if (blank == len && c->record.len == 0)
            continue; /* (a blank line inside a quoted field is data) */
        if (c->fmt == IMPORT_GUESS)
            c->fmt = line[blank] == '{' ? IMPORT_JSON
                     : c->s->mode == SHELL_MODE_CSV ? IMPORT_CSV
                                                    : IMPORT_TSV;
        char err[200];
        if (shell_interrupted) {
            import_stop(c, "interrupted");
            goto out;
        }
        const char *rec;
        size_t rec_len;
        int whole = import_record(c, line, len, &rec, &rec_len);
        if (whole < 0) {
            import_stop(c, "out of memory");
            goto out;
        }
        if (!whole)
            continue; /* a quoted CSV field goes on to the next line */
        long at = c->line;
        if (rec != line) /* errors name the line the record started on */
            c->line = c->record_line;
        if (import_parse(c, rec, rec_len, err, sizeof err)) {
            import_stop(c, err);
            goto out;
        }
        c->line = at;
        c->record.len = 0;
        c->records++;
        if (c->check)
            continue;
        if (import_put(c))
            goto out;
        c->pending_bytes += c->key.len + c->val.len + 16;
        if (!c->joined &&
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
    if (c->record.len) {
        c->line = c->record_line;
        import_stop(c, "unterminated quoted field (its closing quote is "
                       "missing)");
        goto out;
    }
    rc = import_flush(c);
out:
    free(line);
    return rc;
}

/* The format a file's extension names, or IMPORT_GUESS. */
static enum import_format import_by_extension(const char *name)
{
    static const struct {
        const char *ext;
        enum import_format fmt;
    } exts[] = {{".csv", IMPORT_CSV},    {".tsv", IMPORT_TSV},
                {".tab", IMPORT_TSV},    {".json", IMPORT_JSON},
                {".jsonl", IMPORT_JSON}, {".ndjson", IMPORT_JSON}};
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof exts / sizeof *exts; i++)
        if (strcasecmp(dot, exts[i].ext) == 0)
            return exts[i].fmt;
    return IMPORT_GUESS;
}

/* .import [--csv|--tsv|--json] [--sst OUT] FILE: the file name and the
** format given (and *SST, OUT or NULL); NULL after reporting a usage
** error. */
static const char *import_args(struct shell *s, struct shell_line *l,
                               enum import_format *fmt, const char **sst)
{
    static const char *const flags[] = {NULL, "--tsv", "--json", "--csv"};
    const char *name = NULL;
    *fmt = IMPORT_GUESS;
    *sst = NULL;
    for (int i = 1; i < l->n; i++) {
        const struct shell_token *t = &l->tok[i];
        if (!t->quoted && strcmp(t->p, "--sst") == 0 && !*sst &&
            i + 1 < l->n && l->tok[i + 1].len &&
            strlen(l->tok[i + 1].p) == l->tok[i + 1].len) {
            *sst = l->tok[++i].p;
            continue;
        }
        int flag = 0;
        for (int k = 1; k < 4 && !t->quoted; k++)
            if (strcmp(t->p, flags[k]) == 0)
                flag = k;
        if (flag && *fmt == IMPORT_GUESS) {
            *fmt = (enum import_format)flag;
        } else if (!flag && !name) {
            name = t->p;
            if (strlen(t->p) != t->len || !t->len) {
                shell_error(s, ".import: not a usable file name");
                return NULL;
            }
        } else {
            name = NULL;
            break;
        }
    }
    if (!name)
        shell_usage_error(s, shell_command_find(".import"));
    else if (*fmt == IMPORT_GUESS)
        *fmt = import_by_extension(name);
    return name;
}

void shell_cmd_import(struct shell *s, struct shell_line *l)
{
    enum import_format given;
    const char *sst = NULL;
    const char *name = import_args(s, l, &given, &sst);
    if (!name || (!sst && s->txn && shell_txn_writable(s, ".import")))
        return;
    struct import_ctx c = {.s = s, .name = name, .given = given,
                           .sst_path = sst};
    c.f = fopen(name, "r");
    if (!c.f) {
        shell_error(s, ".import: cannot open '%s': %s", name, strerror(errno));
        return;
    }
    struct stat st;
    int seekable = fstat(fileno(c.f), &st) == 0 && S_ISREG(st.st_mode);
    c.size = seekable ? (long long)st.st_size : 0;
    if (sst) {
        int rc = ravel_sst_writer_open(sst, NULL, &c.sst);
        if (rc) {
            shell_api_error(s, ".import --sst", rc);
            goto out;
        }
    } else if (s->txn) {
        c.joined = "transaction";
    } else if (s->batch) {
        c.batch = s->batch;
        c.joined = "batch";
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
        rewind(c.f);
    }
    int rc = import_pass(&c);
    if (rc == 0 && c.sst) {
        rc = ravel_sst_writer_finish(c.sst, NULL);
        if (rc)
            shell_api_error(s, ".import --sst", rc);
        else
            shell_note(s, "wrote %llu pairs from %s (%s) to table file %s "
                       "in %.2f s", c.records, name,
                       import_format_names[c.fmt == IMPORT_GUESS ? IMPORT_TSV
                                                                 : c.fmt],
                       sst, transfer_since(&c.start));
    } else if (rc == 0) {
        if (c.progress_shown)
            fputc('\n', stderr);
        shell_note(s, "%s %llu pairs from %s (%s) in %.2f s",
                   c.joined ? "added" : "imported", c.records, name,
                   import_format_names[c.fmt == IMPORT_GUESS ? IMPORT_TSV
                                                             : c.fmt],
                   transfer_since(&c.start));
    }
out:
    ravel_sst_writer_free(c.sst); /* removes OUT unless finished */
    if (c.batch && c.batch != s->batch)
        ravel_batch_free(c.batch);
    shell_buf_free(&c.key);
    shell_buf_free(&c.val);
    shell_buf_free(&c.record);
    fclose(c.f);
}

/* Writes every pair (as the session reads) to F as JSON lines;
** counts them in *N.  -1 after reporting an error. */
static int transfer_dump_pairs(struct shell *s, FILE *f, unsigned long long *n)
{
    if (shell_db_for_read(s)) /* no database yet: nothing to dump */
        return s->failed ? -1 : 0;
    ravel_iter *it = NULL;
    int rc = shell_iter_new(s, &it);
    if (rc) {
        shell_api_error(s, ".dump", rc);
        return -1;
    }
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it), (*n)++) {
        if (shell_interrupted) {
            shell_error(s, ".dump: interrupted after %llu keys", *n);
            ravel_iter_free(it);
            return -1;
        }
        if (ferror(f))
            break; /* reported by the caller, or after the command */
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
    ravel_iter_free(it);
    if (rc) {
        shell_api_error(s, ".dump", rc);
        return -1;
    }
    return 0;
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
    unsigned long long n = 0;
    int rc = transfer_dump_pairs(s, f, &n);
    if (!name)
        return;
    if ((ferror(f) | fclose(f)) && rc == 0) {
        shell_error(s, ".dump: writing '%s' failed: %s", name,
                    strerror(errno));
        return;
    }
    if (rc == 0)
        shell_note(s, "dumped %llu keys to %s", n, name);
}
