/*
** text.c -- building text in new strings (text.h).
*/
#include "util/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
