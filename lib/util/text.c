/*
** text.c -- building text in new strings (text.h).
*/
#include "util/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* vasprintf into a new string; NULL on OOM. */
static char *text_vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    return s;
}

char *rv_text_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = text_vformat(fmt, ap);
    va_end(ap);
    return s;
}

void rv_text_append(char **text, const char *fmt, ...)
{
    if (!*text)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *add = text_vformat(fmt, ap);
    va_end(ap);
    char *joined = add ? rv_text_format("%s%s", *text, add) : NULL;
    free(add);
    free(*text);
    *text = joined;
}

/* Where to end the first line of the WIDTH columns of LINE (LEN > WIDTH
** bytes): after the last ", " or "; " past the middle, else at the last
** space; WIDTH if there is no space to break at. */
static size_t text_break(const char *line, size_t width)
{
    size_t space = 0;
    for (size_t i = width; i > 0; i--) {
        if (line[i] != ' ')
            continue;
        if (i > width / 2 && (line[i - 1] == ',' || line[i - 1] == ';'))
            return i;
        if (!space)
            space = i;
    }
    return space ? space : width;
}

char *rv_text_wrap(const char *text, size_t width)
{
    size_t len = strlen(text);
    /* each break adds "\n  " and takes at least one byte of TEXT */
    char *out = malloc(len * 4 + 1);
    if (!out)
        return NULL;
    size_t n = 0;
    const char *p = text;
    while (*p) {
        size_t line = strcspn(p, "\n"), indent = 0;
        while (line > width - indent) {
            size_t cut = text_break(p, width - indent);
            memcpy(out + n, p, cut);
            n += cut;
            memcpy(out + n, "\n  ", 3);
            n += 3;
            indent = 2;
            p += cut;
            line -= cut;
            while (*p == ' ' && line) {
                p++;
                line--;
            }
        }
        memcpy(out + n, p, line);
        n += line;
        p += line;
        if (*p == '\n')
            out[n++] = *p++;
    }
    out[n] = '\0';
    return out;
}
