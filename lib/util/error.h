/*
** error.h -- result codes and the calling thread's last error message.
**
** An error message is set once, where the error is born, and the result
** code travels up unchanged: callers return rc without touching the text.
*/
#ifndef RAVEL_ERROR_H
#define RAVEL_ERROR_H

#include "ravel_int.h"

/* Sets the calling thread's message (printf-style) and returns RC. */
RAVEL_PRIVATE int rv_error(int rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Like rv_error, appending ": strerror(ERR) (errno ERR)". */
RAVEL_PRIVATE int rv_error_errno(int rc, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Empties the calling thread's message: for a caller that must tell
** whether code it called (a user's callback) set one. */
RAVEL_PRIVATE void rv_errmsg_clear(void);

/* The calling thread's current message (never NULL). */
RAVEL_PRIVATE const char *rv_errmsg_get(void);

#endif /* RAVEL_ERROR_H */
