/*
** error.c -- result code names and the per-thread error message.
**
** Owns: ravel_errstr(), ravel_errmsg(), ravel_errmsg_r() and the
** thread-local buffer behind them.  The message is plain text, at most
** RV_ERRMSG_MAX-1 bytes, cut at that length if longer.  RV_ERRMSG_MAX is
** documented in ravel.h (512): change both together.
*/
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RV_ERRMSG_MAX 512

static _Thread_local char error_message[RV_ERRMSG_MAX];

const char *ravel_errstr(int rc)
{
    switch (rc) {
    case RAVEL_OK:       return "not an error";
    case RAVEL_NOTFOUND: return "not found";
    case RAVEL_INVALID:  return "invalid argument";
    case RAVEL_IOERR:    return "I/O error";
    case RAVEL_CORRUPT:  return "database file is corrupt";
    case RAVEL_NOMEM:    return "out of memory";
    case RAVEL_BUSY:     return "busy";
    case RAVEL_LOCKED:   return "database is locked";
    case RAVEL_READONLY: return "database is read-only";
    case RAVEL_CONFLICT: return "transaction conflict";
    case RAVEL_TIMEDOUT: return "lock wait timed out";
    case RAVEL_DEADLOCK: return "deadlock";
    case RAVEL_EXPIRED:  return "sequence no longer available";
    default:             return "unknown result code";
    }
}

const char *ravel_errmsg(void)
{
    return error_message;
}

size_t ravel_errmsg_r(char *buf, size_t size)
{
    size_t len = strlen(error_message);
    if (buf && size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(buf, error_message, n);
        buf[n] = '\0';
    }
    return len;
}

void rv_errmsg_clear(void)
{
    error_message[0] = '\0';
}

const char *rv_errmsg_get(void)
{
    return error_message;
}

int rv_error(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    return rc;
}

int rv_error_errno(int rc, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof error_message) {
        char buf[128];
        const char *text = strerror_r(err, buf, sizeof buf);
        snprintf(error_message + n, sizeof error_message - (size_t)n,
                 ": %s (errno %d)", text, err);
    }
    return rc;
}
