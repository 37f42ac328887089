/*
** text.h -- building text in new strings (properties, statistics).
*/
#ifndef RAVEL_TEXT_H
#define RAVEL_TEXT_H

#include "ravel_int.h"

/* printf into a new string (free with free()); NULL on OOM. */
RAVEL_PRIVATE char *rv_text_format(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Appends printf output to *TEXT, replacing it by a new string; on OOM
** frees it and leaves NULL.  A NULL *TEXT stays NULL. */
RAVEL_PRIVATE void rv_text_append(char **text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* TEXT with every line longer than WIDTH columns (WIDTH >= 20) broken
** after a ", " or "; ", else at a space, its continuation lines indented
** by two spaces, in a new string; NULL on OOM.  Printable ASCII text. */
RAVEL_PRIVATE char *rv_text_wrap(const char *text, size_t width);

#endif /* RAVEL_TEXT_H */
