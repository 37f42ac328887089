/*
** token.c -- splitting a command line into byte strings.
**
** Tokens are separated by spaces and tabs.  A token is one of:
**
**   word            any run of non-blank bytes, taken literally
**   "C string"      with the escapes \n \t \r \0 \a \b \f \v \e \\ \" \'
**                   \xHH (two hex digits) and \NNN (one to three octal)
**   'SQL string'    taken literally, '' stands for one quote
**   x'68656c6c6f'   hex digits (either case, an even number of them);
**                   X'..' too
**
** A quoted token must end at a blank or at the end of the line, so
** "a"b is an error rather than a guess.  Quoted tokens are marked: they are
** always data, so "--limit" is a key while --limit is an option.
**
** Also here: the growable byte buffer every other file uses.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

int shell_buf_add(struct shell_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            return -1;
        b->p = np;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int shell_buf_addc(struct shell_buf *b, int c)
{
    char ch = (char)c;
    return shell_buf_add(b, &ch, 1);
}

void shell_buf_free(struct shell_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int token_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int token_blank(int c)
{
    return c == ' ' || c == '\t';
}

/* Reads a "C string" starting after the opening quote at *pos. */
static int token_cstring(const char *s, size_t len, size_t *pos,
                         struct shell_buf *b, char *err, size_t errlen)
{
    size_t i = *pos;
    for (;;) {
        if (i >= len) {
            snprintf(err, errlen, "unterminated string");
            return -1;
        }
        unsigned char c = (unsigned char)s[i++];
        if (c == '"')
            break;
        if (c != '\\') {
            if (shell_buf_addc(b, c))
                goto nomem;
            continue;
        }
        if (i >= len) {
            snprintf(err, errlen, "unterminated string");
            return -1;
        }
        c = (unsigned char)s[i++];
        int out;
        switch (c) {
        case 'n': out = '\n'; break;
        case 't': out = '\t'; break;
        case 'r': out = '\r'; break;
        case 'a': out = '\a'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'v': out = '\v'; break;
        case 'e': out = 0x1b; break;
        case '\\': case '"': case '\'': out = c; break;
        case 'x': {
            int hi = i < len ? token_hexval(s[i]) : -1;
            int lo = i + 1 < len ? token_hexval(s[i + 1]) : -1;
            if (hi < 0 || lo < 0) {
                snprintf(err, errlen, "\\x needs two hex digits");
                return -1;
            }
            out = hi * 16 + lo;
            i += 2;
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                out = c - '0';
                for (int k = 0; k < 2 && i < len && s[i] >= '0' && s[i] <= '7';
                     k++)
                    out = out * 8 + (s[i++] - '0');
                if (out > 255) {
                    snprintf(err, errlen, "octal escape above \\377");
                    return -1;
                }
                break;
            }
            if (c >= 0x21 && c < 0x7f)
                snprintf(err, errlen, "unknown escape '\\%c' in string", c);
            else
                snprintf(err, errlen, "unknown escape '\\x%02x' in string", c);
            return -1;
        }
        if (shell_buf_addc(b, out))
            goto nomem;
    }
    *pos = i;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Reads a 'SQL string' starting after the opening quote at *pos. */
static int token_sqlstring(const char *s, size_t len, size_t *pos,
                           struct shell_buf *b, char *err, size_t errlen)
{
    size_t i = *pos;
    for (;;) {
        if (i >= len) {
            snprintf(err, errlen, "unterminated string");
            return -1;
        }
        char c = s[i++];
        if (c == '\'') {
            if (i < len && s[i] == '\'') {
                i++;
            } else {
                break;
            }
        }
        if (shell_buf_addc(b, c)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    *pos = i;
    return 0;
}

/* Reads x'..' hex starting after the opening quote at *pos. */
static int token_hex(const char *s, size_t len, size_t *pos,
                     struct shell_buf *b, char *err, size_t errlen)
{
    size_t i = *pos, digits = 0;
    int hi = 0;
    for (;;) {
        if (i >= len) {
            snprintf(err, errlen, "unterminated hex string");
            return -1;
        }
        char c = s[i++];
        if (c == '\'')
            break;
        int v = token_hexval(c);
        if (v < 0) {
            if ((unsigned char)c >= 0x21 && (unsigned char)c < 0x7f)
                snprintf(err, errlen, "invalid hex digit '%c'", c);
            else
                snprintf(err, errlen, "invalid hex digit (byte 0x%02x)",
                         (unsigned char)c);
            return -1;
        }
        if (digits++ % 2 == 0) {
            hi = v;
        } else if (shell_buf_addc(b, hi * 16 + v)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (digits % 2) {
        snprintf(err, errlen, "odd number of hex digits in x'...'");
        return -1;
    }
    *pos = i;
    return 0;
}

static int token_one(const char *s, size_t len, size_t *pos,
                     struct shell_token *t, char *err, size_t errlen)
{
    struct shell_buf b = {0};
    size_t i = *pos;
    int rc = 0;
    t->quoted = 1;
    if (s[i] == '"') {
        i++;
        rc = token_cstring(s, len, &i, &b, err, errlen);
    } else if (s[i] == '\'') {
        i++;
        rc = token_sqlstring(s, len, &i, &b, err, errlen);
    } else if ((s[i] == 'x' || s[i] == 'X') && i + 1 < len &&
               s[i + 1] == '\'') {
        i += 2;
        rc = token_hex(s, len, &i, &b, err, errlen);
    } else {
        size_t start = i;
        while (i < len && !token_blank(s[i]))
            i++;
        t->quoted = 0;
        if (shell_buf_add(&b, s + start, i - start)) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0 && t->quoted && i < len && !token_blank(s[i])) {
        snprintf(err, errlen, "unexpected '%c' after a closing quote "
                 "(put a space between arguments)", s[i]);
        rc = -1;
    }
    if (rc == 0 && !b.p && shell_buf_add(&b, "", 0)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc) {
        shell_buf_free(&b);
        return -1;
    }
    t->p = b.p;
    t->len = b.len;
    *pos = i;
    return 0;
}

int shell_tokenize(const char *line, size_t len, struct shell_line *out,
                   char *err, size_t errlen)
{
    size_t i = 0;
    out->n = 0;
    for (;;) {
        while (i < len && token_blank(line[i]))
            i++;
        if (i >= len)
            return 0;
        if (out->n == SHELL_MAX_TOKENS) {
            snprintf(err, errlen, "too many arguments (at most %d)",
                     SHELL_MAX_TOKENS - 1);
            shell_line_free(out);
            return -1;
        }
        if (token_one(line, len, &i, &out->tok[out->n], err, errlen)) {
            shell_line_free(out);
            return -1;
        }
        out->n++;
    }
}

void shell_line_free(struct shell_line *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->tok[i].p);
    l->n = 0;
}
