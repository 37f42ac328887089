/*
** csv.c -- reading one CSV record, KEY,VALUE, for .import.
**
** The form is RFC 4180's, the one .mode csv writes and spreadsheets
** export: two fields separated by a comma; a field may be quoted with ",
** and then holds commas, line breaks and "" (one quote) as data.  Bytes
** are taken as they are.  A record whose quotes are not balanced goes on
** to the next line (transfer.c joins the lines, asking shell_csv_complete).
** Anything else is an error naming what is wrong -- a quote inside an
** unquoted field, text after a closing quote, one field or three -- so a
** record is read back exactly or refused, never guessed at.  A CR ending
** the record (a CRLF file) is dropped.
*/
#include <stdio.h>
#include <string.h>

#include "shell.h"

int shell_csv_complete(const char *p, size_t n)
{
    /* A quote opens a quoted field only at the start of a field: in
    ** a"b it is an error csv_field reports, not the start of a string. */
    int quoted = 0, field_start = 1;
    for (size_t i = 0; i < n; i++) {
        if (quoted) {
            if (p[i] == '"' && i + 1 < n && p[i + 1] == '"')
                i++; /* "" inside a quoted field */
            else if (p[i] == '"')
                quoted = 0;
        } else {
            quoted = p[i] == '"' && field_start;
            field_start = p[i] == ',';
        }
    }
    return !quoted;
}

/* Reads the field at *AT (up to END) into OUT; leaves *AT on the comma
** after it, or at END.  -1 with a message in ERR. */
static int csv_field(const char **at, const char *end, struct shell_buf *out,
                     char *err, size_t errlen)
{
    const char *p = *at;
    out->len = 0;
    if (p < end && *p == '"') {
        for (p++;; p++) {
            if (p >= end) {
                snprintf(err, errlen, "unterminated quoted field");
                return -1;
            }
            if (*p == '"') {
                if (p + 1 < end && p[1] == '"') {
                    p++;
                } else {
                    p++;
                    break;
                }
            }
            if (shell_buf_addc(out, *p))
                goto nomem;
        }
        if (p < end && *p != ',') {
            snprintf(err, errlen, "text after the closing quote of a field "
                     "(a quote inside a field is written \"\")");
            return -1;
        }
    } else {
        const char *stop = memchr(p, ',', (size_t)(end - p));
        if (!stop)
            stop = end;
        if (memchr(p, '"', (size_t)(stop - p))) {
            snprintf(err, errlen, "a quote inside an unquoted field (quote "
                     "the whole field, writing the quote as \"\")");
            return -1;
        }
        if (shell_buf_add(out, p, (size_t)(stop - p)))
            goto nomem;
        p = stop;
    }
    *at = p;
    if (!out->p && shell_buf_add(out, "", 0)) /* an empty field: "" */
        goto nomem;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int shell_csv_parse(const char *p, size_t n, struct shell_buf *key,
                    struct shell_buf *val, char *err, size_t errlen)
{
    if (n && p[n - 1] == '\r')
        n--;
    const char *at = p, *end = p + n;
    if (csv_field(&at, end, key, err, errlen))
        return -1;
    if (at == end) {
        snprintf(err, errlen, "one field; expected two, KEY,VALUE");
        return -1;
    }
    at++; /* the comma */
    if (csv_field(&at, end, val, err, errlen))
        return -1;
    if (at != end) {
        snprintf(err, errlen, "more than two fields; expected KEY,VALUE "
                 "(quote a value holding a comma)");
        return -1;
    }
    return 0;
}
