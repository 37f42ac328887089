/*
** text.c -- building text in new strings (text.h).
*/
#include "util/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

char *rv_text_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

void rv_text_append(char **text, const char *fmt, ...)
{
    if (!*text)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *add = NULL;
    if (vasprintf(&add, fmt, ap) < 0)
        add = NULL;
    va_end(ap);
    char *joined = add ? rv_text_format("%s%s", *text, add) : NULL;
    free(add);
    free(*text);
    *text = joined;
}
