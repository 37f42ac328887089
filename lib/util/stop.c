/*
** stop.c -- the failure that stopped writes (see stop.h).
**
** The reason is written under mu before the code is published, and read
** under mu.  The mutex is a leaf: callers may hold their own locks (the
** WAL holds sync_mu when it records an I/O failure), and nothing that
** takes a lock is called while it is held (only formatting into the
** calling thread's message, rv_error).
*/
#include "util/stop.h"
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void rv_stop_init(struct rv_stop *s)
{
    atomic_init(&s->code, 0);
    atomic_init(&s->io_failed, 0);
    rv_mutex_init(&s->mu);
    s->reason[0] = '\0';
}

void rv_stop_destroy(struct rv_stop *s)
{
    rv_mutex_destroy(&s->mu);
}

int rv_stop_set(struct rv_stop *s, int code, const char *reason)
{
    rv_mutex_lock(&s->mu);
    /* relaxed: under mu, which every writer of code and io_failed holds */
    int first = atomic_load_explicit(&s->code, memory_order_relaxed) == 0;
    int new_io = code == RAVEL_IOERR &&
                 !atomic_load_explicit(&s->io_failed, memory_order_relaxed);
    if (first) {
        snprintf(s->reason, sizeof s->reason, "%s", reason);
    } else if (new_io) {
        /* The first reason stays first; the I/O failure that now forbids
        ** syncing is worth naming too. */
        size_t n = strlen(s->reason);
        snprintf(s->reason + n, sizeof s->reason - n, "; then: %s", reason);
    }
    /* release: pairs with the acquire loads of stop.h, so the reason (and
    ** what the recorder did before) is visible to whoever sees the flag */
    if (new_io)
        atomic_store_explicit(&s->io_failed, 1, memory_order_release);
    if (first)
        atomic_store_explicit(&s->code, code, memory_order_release);
    rv_mutex_unlock(&s->mu);
    return first;
}

int rv_stop_error(struct rv_stop *s, int rc, const char *fmt, ...)
{
    char prefix[RV_STOP_REASON_MAX] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
    }
    rv_mutex_lock(&s->mu);
    rv_error(rc, "%s%s%s", prefix, fmt ? ": " : "", s->reason);
    rv_mutex_unlock(&s->mu);
    return rc;
}

void rv_stop_reason(struct rv_stop *s, char *buf, size_t cap)
{
    rv_mutex_lock(&s->mu);
    snprintf(buf, cap, "%s", s->reason);
    rv_mutex_unlock(&s->mu);
}
