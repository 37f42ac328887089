/*
** format.c -- how byte strings are shown: .mode text, hex, quote, json
** and csv.
**
** Keys and values may hold any byte; nothing raw that could move the
** cursor, ring the bell or garble a terminal is ever printed.
**
**   text   printable ASCII as is; \\ \n \t \r for those; every other byte
**          as \xHH.  Multi-byte UTF-8 is shown as is when the locale's
**          charset is UTF-8, except C1 controls and the invisible
**          direction/zero-width marks, which are escaped like bytes.
**          scan prints KEY<TAB>VALUE: a tab in the data is always \t, so
**          the line splits unambiguously.
**   hex    x'6869', the shell's own input syntax.
**   quote  "hi\x00", the shell's C-string syntax: printable ASCII as is,
**          \\ \" \n \t \r, every other byte \xHH.  scan prints
**          "KEY" "VALUE", so `put` followed by the line writes it back.
**   json   one object per line, {"key":"..","value":".."}; strings are
**          escaped to plain ASCII (\uXXXX); a key or value that is not
**          valid UTF-8 becomes "key_hex":"6869" instead.  This is also
**          the .dump format, which .import reads back.
**   csv    KEY,VALUE per line (RFC 4180): a field holding a comma, a
**          quote, a line break or a leading or trailing blank is quoted,
**          "" standing for ", and an empty value is "" (a key not found
**          by get has an empty, unquoted value).  Bytes are written as
**          they are, for spreadsheets and files: .import reads it back
**          exactly.
*/
#include <langinfo.h>
#include <locale.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "shell.h"

static int format_utf8_terminal;

const char *const shell_mode_names[SHELL_MODE_COUNT + 1] = {
    [SHELL_MODE_TEXT] = "text",   [SHELL_MODE_HEX] = "hex",
    [SHELL_MODE_JSON] = "json",   [SHELL_MODE_QUOTE] = "quote",
    [SHELL_MODE_CSV] = "csv",
};

int shell_mode_find(const char *name)
{
    for (int i = 0; i < SHELL_MODE_COUNT; i++)
        if (strcasecmp(name, shell_mode_names[i]) == 0)
            return i;
    return -1;
}

void shell_format_init(void)
{
    setlocale(LC_CTYPE, "");
    const char *cs = nl_langinfo(CODESET);
    format_utf8_terminal = cs && (strcasecmp(cs, "UTF-8") == 0 ||
                                  strcasecmp(cs, "utf8") == 0);
}

/* Decodes one UTF-8 sequence at P (N bytes left): its length, or 0 if it
** is not a valid, shortest-form, non-surrogate sequence. */
static size_t format_utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
    unsigned c = p[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        len = 2, v = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, v = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

int shell_utf8_valid(const unsigned char *p, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        size_t k = format_utf8_seq(p + i, n - i, &cp);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

/* Code points that are valid but invisible or reorder text around them. */
static int format_unsafe_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0xfeff;
}

void shell_put_text(FILE *f, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            fputc((int)c, f);
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = c >= 0x80 && format_utf8_terminal
                       ? format_utf8_seq(p + i, n - i, &cp)
                       : 0;
        if (k > 1 && !format_unsafe_cp(cp)) {
            fwrite(p + i, 1, k, f);
            i += k;
            continue;
        }
        switch (c) {
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default: {
            char esc[4] = {'\\', 'x', "0123456789abcdef"[c >> 4],
                           "0123456789abcdef"[c & 15]};
            fwrite(esc, 1, 4, f);
            break;
        }
        }
        i++;
    }
}

/* Hex digits, a chunk at a time: dumps of large values stay fast. */
static void format_hex_digits(FILE *f, const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char buf[512];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        buf[k++] = digits[p[i] >> 4];
        buf[k++] = digits[p[i] & 15];
        if (k == sizeof buf) {
            fwrite(buf, 1, k, f);
            k = 0;
        }
    }
    fwrite(buf, 1, k, f);
}

void shell_put_hex(FILE *f, const void *data, size_t n)
{
    fputs("x'", f);
    format_hex_digits(f, data, n);
    fputc('\'', f);
}

void shell_put_quoted(FILE *f, const void *data, size_t n)
{
    const unsigned char *p = data;
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        switch (c) {
        case '\\': fputs("\\\\", f); continue;
        case '"': fputs("\\\"", f); continue;
        case '\n': fputs("\\n", f); continue;
        case '\t': fputs("\\t", f); continue;
        case '\r': fputs("\\r", f); continue;
        default: break;
        }
        if (c >= 0x20 && c < 0x7f)
            fputc((int)c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
    fputc('"', f);
}

/* One CSV field, quoted when it must be: empty ("" tells an empty value
** from none), or holding a separator, a quote or blanks at an end. */
static void format_csv_field(FILE *f, const unsigned char *p, size_t n)
{
    int quote = n == 0 || p[0] == ' ' || p[n - 1] == ' ';
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r';
    if (!quote) {
        fwrite(p, 1, n, f);
        return;
    }
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"')
            fputc('"', f);
        fputc(p[i], f);
    }
    fputc('"', f);
}

static void format_json_string(FILE *f, const unsigned char *p, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = format_utf8_seq(p + i, n - i, &cp);
        i += k; /* the caller checked that the whole string is valid */
        switch (cp) {
        case '"': fputs("\\\"", f); continue;
        case '\\': fputs("\\\\", f); continue;
        case '\n': fputs("\\n", f); continue;
        case '\t': fputs("\\t", f); continue;
        case '\r': fputs("\\r", f); continue;
        case '\b': fputs("\\b", f); continue;
        case '\f': fputs("\\f", f); continue;
        default: break;
        }
        if (cp >= 0x20 && cp < 0x7f) {
            fputc((int)cp, f);
        } else if (cp < 0x10000) {
            fprintf(f, "\\u%04x", (unsigned)cp);
        } else {
            cp -= 0x10000;
            fprintf(f, "\\u%04x\\u%04x", (unsigned)(0xd800 + (cp >> 10)),
                    (unsigned)(0xdc00 + (cp & 0x3ff)));
        }
    }
    fputc('"', f);
}

void shell_put_json_member(FILE *f, const char *name, const void *data,
                           size_t n)
{
    const unsigned char *p = data;
    if (shell_utf8_valid(p, n)) {
        fprintf(f, "\"%s\":", name);
        format_json_string(f, p, n);
        return;
    }
    fprintf(f, "\"%s_hex\":\"", name);
    format_hex_digits(f, p, n);
    fputc('"', f);
}

void shell_put_pair(FILE *f, enum shell_mode mode, const void *key,
                    size_t klen, const void *val, size_t vlen)
{
    switch (mode) {
    case SHELL_MODE_TEXT:
        shell_put_text(f, key, klen);
        fputc('\t', f);
        shell_put_text(f, val, vlen);
        break;
    case SHELL_MODE_HEX:
        shell_put_hex(f, key, klen);
        fputc('\t', f);
        shell_put_hex(f, val, vlen);
        break;
    case SHELL_MODE_JSON:
        fputc('{', f);
        shell_put_json_member(f, "key", key, klen);
        fputc(',', f);
        if (val)
            shell_put_json_member(f, "value", val, vlen);
        else
            fputs("\"value\":null", f);
        fputc('}', f);
        break;
    case SHELL_MODE_QUOTE:
        shell_put_quoted(f, key, klen);
        fputc(' ', f);
        if (val)
            shell_put_quoted(f, val, vlen);
        else
            fputs("(not found)", f);
        break;
    case SHELL_MODE_CSV:
        format_csv_field(f, key, klen);
        fputc(',', f);
        if (val)
            format_csv_field(f, val, vlen);
        break;
    case SHELL_MODE_COUNT:
        break;
    }
    fputc('\n', f);
}

void shell_put_value(FILE *f, enum shell_mode mode, const void *key,
                     size_t klen, const void *val, size_t vlen)
{
    switch (mode) {
    case SHELL_MODE_TEXT:
        if (val)
            shell_put_text(f, val, vlen);
        else
            fputs("(not found)", f);
        fputc('\n', f);
        break;
    case SHELL_MODE_HEX:
        if (val)
            shell_put_hex(f, val, vlen);
        else
            fputs("(not found)", f);
        fputc('\n', f);
        break;
    case SHELL_MODE_QUOTE:
        if (val)
            shell_put_quoted(f, val, vlen);
        else
            fputs("(not found)", f);
        fputc('\n', f);
        break;
    case SHELL_MODE_JSON:
    case SHELL_MODE_CSV:
    case SHELL_MODE_COUNT:
        shell_put_pair(f, mode, key, klen, val, vlen);
        break;
    }
}
