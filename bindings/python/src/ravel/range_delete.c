/*
** range_delete.c -- range deletes: DB.delete_range(begin, end, *, sync,
** disable_wal, no_slowdown) and the body of Batch.delete_range
** (ravel_delete_range and ravel_batch_delete_range in ravel.h).
*/
#include "_ravel.h"

const char rvpy_delete_range_doc[] =
"delete_range($self, begin, end, /, *, sync=False, disable_wal=False,\n"
"    no_slowdown=False)\n--\n\n"
"Deletes every key k with begin <= k < end (bytewise) as one operation.\n"
"begin after end is InvalidArgumentError; begin == end deletes nothing.\n"
"Refused (InvalidArgumentError) once a transaction has begun on the\n"
"database.";

/* The two keys of a range, or -1 with an exception set. */
static int range_keys(PyObject *begin, PyObject *end, rvpy_bytes *b,
                      rvpy_bytes *e)
{
    if (rvpy_bytes_get(begin, b, "begin") < 0)
        return -1;
    if (rvpy_bytes_get(end, e, "end") < 0) {
        rvpy_bytes_release(b);
        return -1;
    }
    return 0;
}

PyObject *rvpy_db_delete_range(rvpy_db *self, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames)
{
    int flags = 0;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "delete_range() takes a begin and an end");
        return NULL;
    }
    if (kwnames
        && rvpy_write_flags(args + nargs, kwnames, "delete_range", &flags) < 0)
        return NULL;
    rvpy_bytes b, e;
    if (range_keys(args[0], args[1], &b, &e) < 0)
        return NULL;
    int rc = -1;
    char msg[RVPY_MSG_SIZE];
    if (rvpy_db_enter(self) == 0) {
        ravel_db *handle = self->handle;
        Py_BEGIN_ALLOW_THREADS
        rc = ravel_delete_range(handle, flags, b.ptr, b.len, e.ptr, e.len);
        if (rc)
            ravel_errmsg_r(msg, sizeof msg);
        Py_END_ALLOW_THREADS
        rvpy_db_leave(self);
        if (rc)
            rvpy_raise(rc, msg);
    }
    rvpy_bytes_release(&e);
    rvpy_bytes_release(&b);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *rvpy_batch_add_range(ravel_batch *batch, PyObject *begin,
                               PyObject *end)
{
    rvpy_bytes b, e;
    if (range_keys(begin, end, &b, &e) < 0)
        return NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_batch_delete_range(batch, b.ptr, b.len, e.ptr, e.len);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    rvpy_bytes_release(&e);
    rvpy_bytes_release(&b);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}
