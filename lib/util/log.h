/*
** log.h -- the LOG file of a database: human-readable, timestamped lines
** about what happened (opens, recovery, fallbacks, failures, closes).
**
** Informational only: never read back, and a line that cannot be written
** is not an error (the event it describes has its own error path).
*/
#ifndef RAVEL_LOG_H
#define RAVEL_LOG_H

#include "ravel_int.h"

#include <stdarg.h>

/* Opens (creating) DIR/LOG for appending, first renaming a LOG over 1 MiB
** to LOG.old; -1 if it cannot be opened.  Called with the LOCK held. */
RAVEL_PRIVATE int rv_log_open(const char *dir);

/* Appends "2026-11-22T02:52:00.037988Z message\n" to the LOG open on FD
** (nothing when FD < 0).  Lines are cut at 1 KiB. */
RAVEL_PRIVATE void rv_log_vprintf(int fd, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif /* RAVEL_LOG_H */
