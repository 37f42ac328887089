/*
** stop.h -- "writes stopped": the one record of the failure after which a
** database refuses writes until it is reopened.
**
** Owns: the first failure's result code and reason text, and whether an
** I/O failure has happened at all.  Does not own: deciding what is a
** failure (the write path and the WAL writer report theirs here), nor the
** messages writers get (built from the reason).
**
** The database owns one rv_stop and hands it to its WAL writer at
** rv_wal_open.  Anyone may record a failure; the first one wins, so the
** code and the reason name what went wrong first.  The code is an atomic,
** so the write path's check is one load.
**
** An I/O failure (code RAVEL_IOERR: a WAL write or fdatasync that failed)
** is also remembered on its own, even when it is not the first failure:
** after one, nothing may ever be acknowledged as durable, so the WAL
** refuses appends and syncs once rv_stop_io_failed says so.  After a
** failure of another kind (RAVEL_NOMEM: a memtable insert, a WAL buffer)
** writes are refused by the database, but what the WAL already holds can
** still be made durable (sync waiters of earlier groups, the final sync
** of ravel_close).
*/
#ifndef RAVEL_STOP_H
#define RAVEL_STOP_H

#include "ravel_int.h"
#include "util/mutex.h"

#include <pthread.h>

#define RV_STOP_REASON_MAX 512

struct rv_stop {
    /* 0 while writes are accepted, else the result code of the first
    ** failure.  Written once, under mu, after the reason (release). */
    _Atomic int code;
    /* 1 once a RAVEL_IOERR failure has been recorded, first or not.
    ** Written once, under mu (release). */
    _Atomic int io_failed;
    rv_mutex mu;              /* guards reason and the writes above */
    char reason[RV_STOP_REASON_MAX]; /* the first failure's message (and a
                                     ** later I/O failure's, appended) */
};

RAVEL_PRIVATE void rv_stop_init(struct rv_stop *s);
RAVEL_PRIVATE void rv_stop_destroy(struct rv_stop *s);

/* Records a failure with result code CODE (non-zero) and REASON unless one
** is already recorded; a RAVEL_IOERR also sets the I/O flag (and, if it
** is not the first failure, is appended to the reason).  Returns 1 if
** this call recorded the first failure. */
RAVEL_PRIVATE int rv_stop_set(struct rv_stop *s, int code,
                              const char *reason);

/* 0 while writes are accepted, else the code of the first failure.  One
** acquire load: the write path's fast-path check. */
static inline int rv_stop_code(struct rv_stop *s)
{
    /* acquire: pairs with rv_stop_set's release, so a caller that sees the
    ** code also sees what the recorder did before recording it. */
    return atomic_load_explicit(&s->code, memory_order_acquire);
}

/* 1 once an I/O failure has been recorded: nothing may be acknowledged
** as durable any more. */
static inline int rv_stop_io_failed(struct rv_stop *s)
{
    /* acquire: pairs with rv_stop_set's release */
    return atomic_load_explicit(&s->io_failed, memory_order_acquire);
}

/* Sets the calling thread's message to "PREFIX: reason", PREFIX formatted
** printf-style from FMT (just the reason if FMT is NULL), and returns RC.
** Call once a failure is recorded. */
RAVEL_PRIVATE int rv_stop_error(struct rv_stop *s, int rc, const char *fmt,
                                ...) __attribute__((format(printf, 3, 4)));

/* Copies the reason ("" if writes are accepted) into BUF of CAP bytes. */
RAVEL_PRIVATE void rv_stop_reason(struct rv_stop *s, char *buf, size_t cap);

#endif /* RAVEL_STOP_H */
