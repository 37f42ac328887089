/*
** repair_report.c -- the report of ravel_repair (repair.h): lines handed
** to the caller's callback as they are made and kept as one text, keys
** shown escaped, and the lost key ranges the merge checks kept entries
** against.
*/
#include "db/repair.h"
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void repair_report_keep(struct rv_repair_report *r, const char *line,
                               size_t n)
{
    if (r->nomem)
        return;
    if (r->len + n + 2 > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        while (cap < r->len + n + 2)
            cap *= 2;
        char *p = realloc(r->text, cap);
        if (!p) {
            r->nomem = 1;
            return;
        }
        r->text = p;
        r->cap = cap;
    }
    memcpy(r->text + r->len, line, n);
    r->len += n;
    r->text[r->len++] = '\n';
    r->text[r->len] = '\0';
}

void rv_repair_say(struct rv_repair_report *r, int kind, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    repair_report_keep(r, line, len);
    if (r->fn)
        r->fn(r->ctx, kind, line);
}

const char *rv_repair_key(char *buf, size_t size, const char *key,
                          size_t len)
{
    size_t o = 0, shown = len > 48 ? 48 : len;
    if (size < 16) {
        buf[0] = '\0';
        return buf;
    }
    buf[o++] = '"';
    for (size_t i = 0; i < shown && o + 8 < size; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
    }
    buf[o++] = '"';
    if (shown < len && o + 4 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

/* ---------------------------------------------------- lost key ranges */

static char *repair_dup(const char *p, size_t n)
{
    char *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

int rv_repair_ranges_add(struct rv_repair_ranges *rs, uint64_t file,
                         const char *lo, size_t lo_len, const char *hi,
                         size_t hi_len, uint64_t max_seq)
{
    if (rs->n == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 8;
        struct rv_repair_range *v = realloc(rs->v, (size_t)cap * sizeof *v);
        if (!v)
            return rv_error(RAVEL_NOMEM, "out of memory listing lost ranges");
        rs->v = v;
        rs->cap = cap;
    }
    struct rv_repair_range *g = &rs->v[rs->n];
    memset(g, 0, sizeof *g);
    if ((lo && !(g->lo = repair_dup(lo, lo_len))) ||
        (hi && !(g->hi = repair_dup(hi, hi_len)))) {
        free(g->lo);
        return rv_error(RAVEL_NOMEM, "out of memory listing lost ranges");
    }
    g->lo_len = lo_len;
    g->hi_len = hi_len;
    g->file = file;
    g->max_seq = max_seq;
    rs->n++;
    return RAVEL_OK;
}

void rv_repair_ranges_free(struct rv_repair_ranges *rs)
{
    for (int i = 0; i < rs->n; i++) {
        free(rs->v[i].lo);
        free(rs->v[i].hi);
    }
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}
