/*
** iterator.c -- the low-level Iterator type (seek, next, prev, key, value
** over a ravel_iter) and the RangeIterator that DB.items(), keys() and
** values() return: a Python iterator over a key range built on it, whose
** bounds ravel enforces (read options iterate_lower_bound and
** iterate_upper_bound).  Both also read through a Transaction (its
** snapshot with its own writes: ravel_txn_iter_new, bounded with
** ravel_iter_set_bounds); such an iterator is closed when its transaction
** ends, and its moves count as calls on the transaction.
*/
#include "_ravel.h"

#include <string.h>

/* ------------------------------------------------------------ Iterator */

/* Frees the ravel iterator; called with the GIL, no call in progress. */
static void iter_free_handle(rvpy_iter *self)
{
    rvpy_db_unlink(&self->child);
    rvpy_db_unlink(&self->txn_child);
    if (self->handle)
        ravel_iter_free(self->handle);
    self->handle = NULL;
}

void rvpy_iter_close_handle(rvpy_iter *it)
{
    iter_free_handle(it);
}

/* The release hook DB.close() calls. */
static void iter_release_child(rvpy_child *c)
{
    rvpy_iter *self = (rvpy_iter *)((char *)c - offsetof(rvpy_iter, child));
    iter_free_handle(self);
}

/* The release hook the end of its transaction calls. */
static void iter_release_txn_child(rvpy_child *c)
{
    rvpy_iter *self = (rvpy_iter *)((char *)c -
                                    offsetof(rvpy_iter, txn_child));
    iter_free_handle(self);
}

/* A new Iterator object of DB (and TXN, or NULL) without its handle. */
static rvpy_iter *iter_alloc(rvpy_db *db, rvpy_txn *txn)
{
    rvpy_iter *self = PyObject_New(rvpy_iter, &rvpy_iter_type);
    if (!self)
        return NULL;
    self->child.prev = self->child.next = NULL;
    self->child.release = iter_release_child;
    self->txn_child.prev = self->txn_child.next = NULL;
    self->txn_child.release = iter_release_txn_child;
    Py_INCREF(db);
    self->db = db;
    Py_XINCREF(txn);
    self->txn = txn;
    self->handle = NULL;
    self->busy = 0;
    self->error_rc = RAVEL_OK;
    self->error_msg = NULL;
    self->weakrefs = NULL;
    return self;
}

/* Makes the ravel iterator: ravel_iter_new_opt with read options holding
** SNAP and the bounds (bytes or NULL), all inside one call without the
** GIL, so that the message read on failure is this call's. */
static int iter_make(ravel_db *db, const ravel_snapshot *snap,
                     PyObject *lower, PyObject *upper, ravel_iter **it,
                     char *msg, size_t msg_size)
{
    const char *lp = lower ? PyBytes_AS_STRING(lower) : NULL;
    const char *up = upper ? PyBytes_AS_STRING(upper) : NULL;
    size_t ll = lower ? (size_t)PyBytes_GET_SIZE(lower) : 0;
    size_t ul = upper ? (size_t)PyBytes_GET_SIZE(upper) : 0;
    ravel_readoptions *ro = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_readoptions_new(&ro);
    if (rc == RAVEL_OK)
        rc = ravel_readoptions_set_snapshot(ro, snap);
    if (rc == RAVEL_OK)
        rc = ravel_readoptions_set_iterate_lower_bound(ro, lp, ll);
    if (rc == RAVEL_OK)
        rc = ravel_readoptions_set_iterate_upper_bound(ro, up, ul);
    if (rc == RAVEL_OK)
        rc = ravel_iter_new_opt(db, ro, it);
    if (rc)
        ravel_errmsg_r(msg, msg_size);
    ravel_readoptions_free(ro);
    Py_END_ALLOW_THREADS
    return rc;
}

PyObject *rvpy_iter_new(rvpy_db *db, PyObject *snap)
{
    return rvpy_iter_new_bounded(db, snap, NULL, NULL);
}

PyObject *rvpy_iter_new_bounded(rvpy_db *db, PyObject *snap,
                                PyObject *lower, PyObject *upper)
{
    rvpy_iter *self = iter_alloc(db, NULL);
    if (!self)
        return NULL;

    const ravel_snapshot *snap_handle = NULL;
    if (rvpy_snapshot_begin_use(snap, db, &snap_handle) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (rvpy_db_enter(db) < 0) {
        rvpy_snapshot_end_use(snap);
        Py_DECREF(self);
        return NULL;
    }
    ravel_iter *it = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = iter_make(db->handle, snap_handle, lower, upper, &it, msg,
                       sizeof msg);
    rvpy_db_leave(db);
    rvpy_snapshot_end_use(snap);
    if (rc) {
        Py_DECREF(self);
        return rvpy_raise(rc, msg);
    }
    self->handle = it;
    rvpy_db_link(db, &self->child);
    return (PyObject *)self;
}

/* ravel_txn_iter_new, then the bounds (bytes or NULL) if any, in one
** call without the GIL; MSG gets the message on failure. */
static int iter_make_txn(ravel_txn *txn, PyObject *lower, PyObject *upper,
                         ravel_iter **out, char *msg, size_t msg_size)
{
    const char *lp = lower ? PyBytes_AS_STRING(lower) : NULL;
    const char *up = upper ? PyBytes_AS_STRING(upper) : NULL;
    size_t ll = lower ? (size_t)PyBytes_GET_SIZE(lower) : 0;
    size_t ul = upper ? (size_t)PyBytes_GET_SIZE(upper) : 0;
    ravel_iter *it = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_txn_iter_new(txn, &it);
    if (rc == RAVEL_OK && (lp || up))
        rc = ravel_iter_set_bounds(it, lp, ll, up, ul);
    if (rc) {
        ravel_errmsg_r(msg, msg_size);
        ravel_iter_free(it);
        it = NULL;
    }
    Py_END_ALLOW_THREADS
    *out = it;
    return rc;
}

PyObject *rvpy_iter_new_txn(rvpy_txn *txn, PyObject *lower, PyObject *upper)
{
    rvpy_iter *self = iter_alloc(txn->db, txn);
    if (!self)
        return NULL;
    if (rvpy_txn_iter_enter(txn) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (rvpy_db_enter(txn->db) < 0) {
        rvpy_txn_iter_leave(txn);
        Py_DECREF(self);
        return NULL;
    }
    ravel_iter *it = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = iter_make_txn(txn->handle, lower, upper, &it, msg, sizeof msg);
    rvpy_db_leave(txn->db);
    rvpy_txn_iter_leave(txn);
    if (rc) {
        Py_DECREF(self);
        return rvpy_raise(rc, msg);
    }
    self->handle = it;
    rvpy_db_link(txn->db, &self->child);
    rvpy_child_link(&txn->iters, &self->txn_child);
    return (PyObject *)self;
}

static void iter_dealloc(rvpy_iter *self)
{
    if (self->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)self);
    iter_free_handle(self);
    Py_XDECREF(self->error_msg);
    Py_XDECREF(self->txn);
    Py_DECREF(self->db);
    PyObject_Free(self);
}

/* Checks that SELF may be used now: open, and not in use by another
** thread.  Returns 0, or -1 with InvalidArgumentError. */
static int iter_check(rvpy_iter *self)
{
    if (!self->handle) {
        if (!self->db->handle)
            rvpy_raise_misuse("the iterator's database is closed");
        else if (self->txn && !self->txn->handle)
            rvpy_raise_misuse("the iterator's transaction is over");
        else
            rvpy_raise_misuse("the iterator is closed");
        return -1;
    }
    if (self->busy) {
        rvpy_raise_misuse("the iterator is in use by another thread");
        return -1;
    }
    return 0;
}

/* The moves of an iterator. */
enum step { SEEK, SEEK_FOR_PREV, SEEK_TO_FIRST, SEEK_TO_LAST, NEXT, PREV };

/* Remembers the failure of a step, for status(), and raises it. */
static int iter_fail(rvpy_iter *self, int rc, const char *msg)
{
    self->error_rc = rc;
    Py_XDECREF(self->error_msg);
    self->error_msg = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg),
                                           "replace");
    if (!self->error_msg)
        PyErr_Clear();  /* status() will say ravel_errstr(rc) instead */
    rvpy_raise(rc, msg);
    return -1;
}

/* Moves SELF without the GIL; KEY (bytes-like) only for SEEK and
** SEEK_FOR_PREV.  Returns 0, or -1 with an exception. */
static int iter_step(rvpy_iter *self, enum step op, PyObject *key)
{
    rvpy_bytes k = {0};
    /* the key first: nothing between the check and the call runs Python */
    if (key && rvpy_bytes_get(key, &k, "key") < 0)
        return -1;
    if (iter_check(self) < 0) {
        rvpy_bytes_release(&k);
        return -1;
    }
    if (self->txn && rvpy_txn_iter_enter(self->txn) < 0) {
        rvpy_bytes_release(&k);
        return -1;
    }
    if (rvpy_db_enter(self->db) < 0) {
        if (self->txn)
            rvpy_txn_iter_leave(self->txn);
        rvpy_bytes_release(&k);
        return -1;
    }
    ravel_iter *it = self->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    switch (op) {
    case SEEK:          rc = ravel_iter_seek(it, k.ptr, k.len); break;
    case SEEK_FOR_PREV: rc = ravel_iter_seek_for_prev(it, k.ptr, k.len); break;
    case SEEK_TO_FIRST: rc = ravel_iter_seek_to_first(it); break;
    case SEEK_TO_LAST:  rc = ravel_iter_seek_to_last(it); break;
    case NEXT:          rc = ravel_iter_next(it); break;
    default:            rc = ravel_iter_prev(it); break;
    }
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    rvpy_db_leave(self->db);
    if (self->txn)
        rvpy_txn_iter_leave(self->txn);
    rvpy_bytes_release(&k);
    return rc ? iter_fail(self, rc, msg) : 0;
}

/* Runs a step and returns None, for the methods below. */
static PyObject *iter_step_method(rvpy_iter *self, enum step op,
                                  PyObject *key)
{
    if (iter_step(self, op, key) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *iter_seek(rvpy_iter *self, PyObject *key)
{
    return iter_step_method(self, SEEK, key);
}

static PyObject *iter_seek_for_prev(rvpy_iter *self, PyObject *key)
{
    return iter_step_method(self, SEEK_FOR_PREV, key);
}

static PyObject *iter_seek_to_first(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    return iter_step_method(self, SEEK_TO_FIRST, NULL);
}

static PyObject *iter_seek_to_last(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    return iter_step_method(self, SEEK_TO_LAST, NULL);
}

static PyObject *iter_next(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    return iter_step_method(self, NEXT, NULL);
}

static PyObject *iter_prev(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    return iter_step_method(self, PREV, NULL);
}

static PyObject *iter_valid(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    if (iter_check(self) < 0)
        return NULL;
    return PyBool_FromLong(ravel_iter_valid(self->handle));
}

/* Which part of the current entry iter_entry returns. */
enum part { KEY, VALUE, ITEM };

/* The current entry of a valid iterator, as bytes (or a pair). */
static PyObject *iter_entry(ravel_iter *it, enum part part)
{
    size_t klen = 0, vlen = 0;
    const void *k = part != VALUE ? ravel_iter_key(it, &klen) : NULL;
    const void *v = part != KEY ? ravel_iter_value(it, &vlen) : NULL;
    PyObject *key = NULL, *value = NULL;
    if (part != VALUE
        && !(key = PyBytes_FromStringAndSize(k, (Py_ssize_t)klen)))
        return NULL;
    if (part != KEY
        && !(value = PyBytes_FromStringAndSize(v, (Py_ssize_t)vlen))) {
        Py_XDECREF(key);
        return NULL;
    }
    if (part == KEY)
        return key;
    if (part == VALUE)
        return value;
    PyObject *pair = PyTuple_New(2);
    if (!pair) {
        Py_DECREF(key);
        Py_DECREF(value);
        return NULL;
    }
    PyTuple_SET_ITEM(pair, 0, key);
    PyTuple_SET_ITEM(pair, 1, value);
    return pair;
}

static PyObject *iter_part(rvpy_iter *self, enum part part)
{
    if (iter_check(self) < 0)
        return NULL;
    if (!ravel_iter_valid(self->handle))
        return rvpy_raise_misuse("the iterator is not positioned at an "
                                 "entry");
    return iter_entry(self->handle, part);
}

static PyObject *iter_key(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    return iter_part(self, KEY);
}

static PyObject *iter_value(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    return iter_part(self, VALUE);
}

static PyObject *iter_item(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    return iter_part(self, ITEM);
}

static PyObject *iter_status(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    if (iter_check(self) < 0)
        return NULL;
    int rc = ravel_iter_status(self->handle);
    if (rc == RAVEL_OK)
        Py_RETURN_NONE;
    const char *msg = NULL;
    if (rc == self->error_rc && self->error_msg)
        msg = PyUnicode_AsUTF8(self->error_msg);
    return rvpy_raise(rc, msg ? msg : "");
}

static PyObject *iter_close(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    if (self->busy)
        return rvpy_raise_misuse("the iterator is in use by another thread");
    iter_free_handle(self);
    Py_RETURN_NONE;
}

static PyObject *iter_enter_ctx(rvpy_iter *self, PyObject *unused)
{
    (void)unused;
    if (iter_check(self) < 0)
        return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *iter_exit_ctx(rvpy_iter *self, PyObject *args)
{
    (void)args;
    PyObject *r = iter_close(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *iter_get_closed(rvpy_iter *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle == NULL);
}

static PyGetSetDef iter_getset[] = {
    {"closed", (getter)iter_get_closed, NULL,
     "True once closed (or its database closed).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef iter_methods[] = {
    {"seek", (PyCFunction)iter_seek, METH_O,
     "seek($self, key, /)\n--\n\nPositions at the first key >= KEY."},
    {"seek_for_prev", (PyCFunction)iter_seek_for_prev, METH_O,
     "seek_for_prev($self, key, /)\n--\n\n"
     "Positions at the last key <= KEY."},
    {"seek_to_first", (PyCFunction)iter_seek_to_first, METH_NOARGS,
     "seek_to_first($self, /)\n--\n\nPositions at the first key."},
    {"seek_to_last", (PyCFunction)iter_seek_to_last, METH_NOARGS,
     "seek_to_last($self, /)\n--\n\nPositions at the last key."},
    {"next", (PyCFunction)iter_next, METH_NOARGS,
     "next($self, /)\n--\n\n"
     "Moves to the next key (InvalidArgumentError if not valid(), or the "
     "error that stopped the iterator)."},
    {"prev", (PyCFunction)iter_prev, METH_NOARGS,
     "prev($self, /)\n--\n\n"
     "Moves to the previous key (InvalidArgumentError if not valid(), or "
     "the error that stopped the iterator)."},
    {"valid", (PyCFunction)iter_valid, METH_NOARGS,
     "valid($self, /)\n--\n\nTrue if positioned at an entry."},
    {"key", (PyCFunction)iter_key, METH_NOARGS,
     "key($self, /)\n--\n\n"
     "The current key (InvalidArgumentError if not valid())."},
    {"value", (PyCFunction)iter_value, METH_NOARGS,
     "value($self, /)\n--\n\n"
     "The current value (InvalidArgumentError if not valid())."},
    {"item", (PyCFunction)iter_item, METH_NOARGS,
     "item($self, /)\n--\n\nThe current (key, value) pair."},
    {"status", (PyCFunction)iter_status, METH_NOARGS,
     "status($self, /)\n--\n\n"
     "Raises the error that stopped the iterator, if any; else None."},
    {"close", (PyCFunction)iter_close, METH_NOARGS,
     "close($self, /)\n--\n\n"
     "Frees the iterator (also done by a with block, DB.close() and when "
     "the object is freed).  Closing twice is harmless."},
    {"__enter__", (PyCFunction)iter_enter_ctx, METH_NOARGS,
     RVPY_ENTER_DOC},
    {"__exit__", (PyCFunction)iter_exit_ctx, METH_VARARGS,
     RVPY_EXIT_DOC "Closes the iterator."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject rvpy_iter_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.Iterator",
    .tp_basicsize = sizeof(rvpy_iter),
    .tp_dealloc = (destructor)iter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A low-level iterator over a fixed state of a database "
              "(DB.iterator()), or over a transaction's view "
              "(Transaction.iterator()).  It starts unpositioned: call a "
              "seek method first.  One thread at a time.",
    .tp_weaklistoffset = offsetof(rvpy_iter, weakrefs),
    .tp_methods = iter_methods,
    .tp_getset = iter_getset,
};

/* ------------------------------------------------------- RangeIterator */

typedef struct {
    PyObject_HEAD
    rvpy_iter *it;        /* bounded by the range; NULL once it is
                          ** exhausted or closed */
    int reverse;
    int kind;             /* RVPY_KEYS, RVPY_VALUES or RVPY_ITEMS */
    int positioned;       /* the first step has been made */
} rvpy_range;

/* A range iterator of DB as of SNAP, or through TXN if not NULL. */
static PyObject *range_make(rvpy_db *db, PyObject *snap, rvpy_txn *txn,
                            PyObject *start, PyObject *stop, int reverse,
                            int kind)
{
    rvpy_range *self = PyObject_New(rvpy_range, &rvpy_range_type);
    if (!self)
        return NULL;
    self->it = NULL;
    self->reverse = reverse;
    self->kind = kind;
    self->positioned = 0;
    PyObject *lower = NULL, *upper = NULL;
    if (start != Py_None && !(lower = rvpy_bytes_copy(start, "start")))
        goto out;
    if (stop != Py_None && !(upper = rvpy_bytes_copy(stop, "stop")))
        goto out;
    self->it = txn ? (rvpy_iter *)rvpy_iter_new_txn(txn, lower, upper)
                   : (rvpy_iter *)rvpy_iter_new_bounded(db, snap, lower,
                                                        upper);
out:
    Py_XDECREF(lower);
    Py_XDECREF(upper);
    if (!self->it) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

PyObject *rvpy_range_new(rvpy_db *db, PyObject *snap, PyObject *start,
                         PyObject *stop, int reverse, int kind)
{
    return range_make(db, snap, NULL, start, stop, reverse, kind);
}

/* The first key after every key that begins with PREFIX (bytes): PREFIX
** with its trailing 0xff bytes dropped and its last byte incremented.
** Py_None (a new reference) when there is none: PREFIX is empty or all
** 0xff, and the range runs to the last key. */
static PyObject *prefix_end(PyObject *prefix)
{
    const unsigned char *p =
        (const unsigned char *)PyBytes_AS_STRING(prefix);
    Py_ssize_t n = PyBytes_GET_SIZE(prefix);
    while (n > 0 && p[n - 1] == 0xff)
        n--;
    if (n == 0)
        Py_RETURN_NONE;
    /* a new object to write into (from a string, a one-byte result
    ** would be the interpreter's shared bytes object of that byte) */
    PyObject *end = PyBytes_FromStringAndSize(NULL, n);
    if (end) {
        memcpy(PyBytes_AS_STRING(end), p, (size_t)n);
        PyBytes_AS_STRING(end)[n - 1] = (char)(p[n - 1] + 1);
    }
    return end;
}

/* A range over the keys that begin with PREFIX: [PREFIX, prefix_end). */
static PyObject *range_of_prefix(rvpy_db *db, PyObject *snap, rvpy_txn *txn,
                                 PyObject *prefix_arg, int reverse, int kind)
{
    PyObject *prefix = rvpy_bytes_copy(prefix_arg, "prefix");
    if (!prefix)
        return NULL;
    PyObject *range = NULL, *end = prefix_end(prefix);
    if (end)
        range = range_make(db, snap, txn, prefix, end, reverse, kind);
    Py_XDECREF(end);
    Py_DECREF(prefix);
    return range;
}

/* rvpy_range_from_args, through TXN if not NULL. */
static PyObject *range_from_args(rvpy_db *db, PyObject *snap, rvpy_txn *txn,
                                 PyObject *args, PyObject *kwargs, int kind)
{
    static char *names[] = {"start", "stop", "reverse", "prefix", NULL};
    static const char *fn[] = {"keys", "values", "items"};
    char format[32];
    PyObject *start = Py_None, *stop = Py_None, *prefix = Py_None;
    int reverse = 0;
    PyOS_snprintf(format, sizeof format, "|OOp$O:%s", fn[kind]);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, names, &start,
                                     &stop, &reverse, &prefix))
        return NULL;
    if (prefix == Py_None)
        return range_make(db, snap, txn, start, stop, reverse, kind);
    if (start != Py_None || stop != Py_None) {
        PyErr_Format(PyExc_TypeError, "%s(): prefix cannot be used together "
                     "with start or stop", fn[kind]);
        return NULL;
    }
    return range_of_prefix(db, snap, txn, prefix, reverse, kind);
}

PyObject *rvpy_range_from_args(rvpy_db *db, PyObject *snap, PyObject *args,
                               PyObject *kwargs, int kind)
{
    return range_from_args(db, snap, NULL, args, kwargs, kind);
}

PyObject *rvpy_range_from_args_txn(rvpy_txn *txn, PyObject *args,
                                   PyObject *kwargs, int kind)
{
    return range_from_args(txn->db, Py_None, txn, args, kwargs, kind);
}

static void range_dealloc(rvpy_range *self)
{
    Py_XDECREF(self->it);
    PyObject_Free(self);
}

/* Ends the range: frees its iterator at once. */
static void range_finish(rvpy_range *self)
{
    if (self->it)
        iter_free_handle(self->it);
    Py_CLEAR(self->it);
}

static PyObject *range_next(rvpy_range *self)
{
    if (!self->it)
        return NULL;
    /* the first step goes to the range's first key (its last, in
    ** reverse): ravel's bounds make seek_to_first/last land there */
    enum step op = self->positioned ? (self->reverse ? PREV : NEXT)
                                    : (self->reverse ? SEEK_TO_LAST
                                                     : SEEK_TO_FIRST);
    int r = iter_step(self->it, op, NULL);
    self->positioned = 1;
    if (r < 0)
        return NULL;
    size_t klen = 0;
    const void *key = ravel_iter_key(self->it->handle, &klen);
    if (!key) {
        /* not positioned and no error from the move: the end of the keys,
        ** unless the iterator stopped at an error (which ravel returns
        ** from the move that meets it; checked again so that an error can
        ** never end the range silently) */
        int rc = ravel_iter_status(self->it->handle);
        if (rc) {
            char msg[RVPY_MSG_SIZE];
            ravel_errmsg_r(msg, sizeof msg);   /* status set it again */
            iter_fail(self->it, rc, msg);
            return NULL;
        }
    }
    if (!key) {
        range_finish(self);
        return NULL;
    }
    return iter_entry(self->it->handle, (enum part)(self->kind == RVPY_KEYS
                      ? KEY : self->kind == RVPY_VALUES ? VALUE : ITEM));
}

static PyObject *range_close(rvpy_range *self, PyObject *unused)
{
    (void)unused;
    if (self->it && self->it->busy)
        return rvpy_raise_misuse("the iterator is in use by another thread");
    range_finish(self);
    Py_RETURN_NONE;
}

static PyMethodDef range_methods[] = {
    {"close", (PyCFunction)range_close, METH_NOARGS,
     "close($self, /)\n--\n\n"
     "Stops the iteration and frees its ravel iterator now."},
    /* RangeIterator[bytes] in annotations evaluated at run time, as the
    ** stub declares it generic (items() yields pairs, keys() bytes) */
    {"__class_getitem__", Py_GenericAlias, METH_O | METH_CLASS,
     "See PEP 585."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject rvpy_range_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.RangeIterator",
    .tp_basicsize = sizeof(rvpy_range),
    .tp_dealloc = (destructor)range_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The iterator DB.items(), keys() and values() return.  Its "
              "ravel iterator is freed when it is exhausted, closed or "
              "freed.",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)range_next,
    .tp_methods = range_methods,
};
