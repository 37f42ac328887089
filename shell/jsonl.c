/*
** jsonl.c -- reading one line of the .dump format (JSON lines).
**
** Each line is one JSON object with exactly one of "key" / "key_hex" and
** exactly one of "value" / "value_hex":
**
**   {"key":"user:1","value":"{\"name\":\"ann\"}"}
**   {"key_hex":"00ff","value":"binary key"}
**
** "key"/"value" are JSON strings: their \uXXXX escapes (surrogate pairs
** included) become UTF-8.  "key_hex"/"value_hex" hold bytes that are not
** valid UTF-8 as hex digits.  Any other member, a missing or repeated one,
** or a value that is not a string is an error: a line is read back exactly
** or refused, never guessed at.  (format.c writes this form.)
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shell.h"

struct jsonl_cursor {
    const char *p, *end;
    char *err;
    size_t errlen;
};

static void jsonl_ws(struct jsonl_cursor *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
        c->p++;
}

static int jsonl_fail(struct jsonl_cursor *c, const char *msg)
{
    snprintf(c->err, c->errlen, "%s", msg);
    return -1;
}

static int jsonl_hex4(struct jsonl_cursor *c, uint32_t *out)
{
    if (c->end - c->p < 4)
        return jsonl_fail(c, "\\u needs four hex digits");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = *c->p++;
        v <<= 4;
        if (ch >= '0' && ch <= '9')
            v |= (uint32_t)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            v |= (uint32_t)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            v |= (uint32_t)(ch - 'A' + 10);
        else
            return jsonl_fail(c, "\\u needs four hex digits");
    }
    *out = v;
    return 0;
}

static int jsonl_put_utf8(struct shell_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    return shell_buf_add(b, u, n);
}

/* A JSON string at the cursor (which must be at its opening quote). */
static int jsonl_string(struct jsonl_cursor *c, struct shell_buf *b)
{
    if (c->p >= c->end || *c->p != '"')
        return jsonl_fail(c, "expected a string");
    c->p++;
    b->len = 0;
    if (shell_buf_add(b, "", 0))
        return jsonl_fail(c, "out of memory");
    for (;;) {
        if (c->p >= c->end)
            return jsonl_fail(c, "unterminated string");
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '"')
            return 0;
        if (ch < 0x20)
            return jsonl_fail(c, "control character in a string (escape it)");
        if (ch != '\\') {
            if (shell_buf_addc(b, ch))
                return jsonl_fail(c, "out of memory");
            continue;
        }
        if (c->p >= c->end)
            return jsonl_fail(c, "unterminated string");
        int out;
        switch (*c->p++) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        case 'u': {
            uint32_t cp, lo;
            if (jsonl_hex4(c, &cp))
                return -1;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return jsonl_fail(c, "lone low surrogate in \\u escape");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (c->end - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u')
                    return jsonl_fail(c, "high surrogate without a low one");
                c->p += 2;
                if (jsonl_hex4(c, &lo))
                    return -1;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return jsonl_fail(c, "high surrogate without a low one");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (jsonl_put_utf8(b, cp))
                return jsonl_fail(c, "out of memory");
            continue;
        }
        default:
            return jsonl_fail(c, "unknown escape in a string");
        }
        if (shell_buf_addc(b, out))
            return jsonl_fail(c, "out of memory");
    }
}

static int jsonl_unhex(struct jsonl_cursor *c, const struct shell_buf *hex,
                       struct shell_buf *out)
{
    out->len = 0;
    if (shell_buf_add(out, "", 0))
        return jsonl_fail(c, "out of memory");
    if (hex->len % 2)
        return jsonl_fail(c, "odd number of hex digits");
    for (size_t i = 0; i < hex->len; i += 2) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char ch = hex->p[i + (size_t)k];
            v <<= 4;
            if (ch >= '0' && ch <= '9')
                v |= ch - '0';
            else if (ch >= 'a' && ch <= 'f')
                v |= ch - 'a' + 10;
            else if (ch >= 'A' && ch <= 'F')
                v |= ch - 'A' + 10;
            else
                return jsonl_fail(c, "invalid hex digit");
        }
        if (shell_buf_addc(out, v))
            return jsonl_fail(c, "out of memory");
    }
    return 0;
}

int shell_jsonl_parse(const char *p, size_t n, struct shell_buf *key,
                      struct shell_buf *val, char *err, size_t errlen)
{
    struct jsonl_cursor c = {p, p + n, err, errlen};
    struct shell_buf name = {0}, str = {0};
    int have_key = 0, have_val = 0, rc = -1;

    jsonl_ws(&c);
    if (c.p >= c.end || *c.p++ != '{') {
        jsonl_fail(&c, "expected '{'");
        goto out;
    }
    jsonl_ws(&c);
    while (c.p < c.end && *c.p != '}') {
        if (jsonl_string(&c, &name))
            goto out;
        jsonl_ws(&c);
        if (c.p >= c.end || *c.p++ != ':') {
            jsonl_fail(&c, "expected ':' after a member name");
            goto out;
        }
        jsonl_ws(&c);
        if (c.p >= c.end || *c.p != '"') {
            snprintf(err, errlen, "\"%.40s\" must be a string", name.p);
            goto out;
        }
        if (jsonl_string(&c, &str))
            goto out;
        int is_key = !strcmp(name.p, "key") || !strcmp(name.p, "key_hex");
        int is_val = !strcmp(name.p, "value") || !strcmp(name.p, "value_hex");
        if (!is_key && !is_val) {
            snprintf(err, errlen, "unknown member \"%.40s\" (expected key or "
                     "key_hex, and value or value_hex)", name.p);
            goto out;
        }
        if ((is_key && have_key) || (is_val && have_val)) {
            snprintf(err, errlen, "more than one %s", is_key ? "key" : "value");
            goto out;
        }
        struct shell_buf *dst = is_key ? key : val;
        if (strstr(name.p, "_hex")) {
            if (jsonl_unhex(&c, &str, dst))
                goto out;
        } else {
            dst->len = 0;
            if (shell_buf_add(dst, str.p, str.len)) {
                jsonl_fail(&c, "out of memory");
                goto out;
            }
        }
        have_key |= is_key;
        have_val |= is_val;
        jsonl_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            jsonl_ws(&c);
            continue;
        }
        if (c.p >= c.end || *c.p != '}') {
            jsonl_fail(&c, "expected ',' or '}'");
            goto out;
        }
    }
    if (c.p >= c.end) {
        jsonl_fail(&c, "unterminated object");
        goto out;
    }
    c.p++;
    jsonl_ws(&c);
    if (c.p != c.end) {
        jsonl_fail(&c, "text after the closing '}'");
        goto out;
    }
    if (!have_key || !have_val) {
        snprintf(err, errlen, "missing \"%s\"", have_key ? "value" : "key");
        goto out;
    }
    rc = 0;
out:
    shell_buf_free(&name);
    shell_buf_free(&str);
    return rc;
}
