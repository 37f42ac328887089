/*
** feed.c -- the change feed (issue 22): DB.updates_since() and the
** Updates iterator over committed batches (ravel_updates_*), and what a
** follower needs of a Batch: its operations (iter(batch)), its sequence,
** its bytes (bytes(batch)) and Batch.from_bytes().
*/
#include "_ravel.h"

/* ------------------------------------------------ Batch: reading back */

/* A new list of (op, key, value) tuples: ("put", key, value) or
** ("delete", key, None), in B's order. */
static PyObject *feed_batch_ops(const ravel_batch *b)
{
    PyObject *ops = PyList_New(0);
    size_t pos = 0;
    for (;;) {
        if (!ops)
            return NULL;
        int op;
        const void *key, *val;
        size_t klen, vlen;
        char msg[RVPY_MSG_SIZE];
        int rc = ravel_batch_next_op(b, &pos, &op, &key, &klen, &val, &vlen);
        if (rc == RAVEL_NOTFOUND)
            return ops;
        if (rc) {
            ravel_errmsg_r(msg, sizeof msg);
            Py_DECREF(ops);
            return rvpy_raise(rc, msg);
        }
        PyObject *t = op != RAVEL_OP_DELETE /* a range's value: its end */
            ? Py_BuildValue("(sy#y#)",
                            op == RAVEL_OP_PUT ? "put" : "delete_range",
                            (const char *)key, (Py_ssize_t)klen,
                            (const char *)val, (Py_ssize_t)vlen)
            : Py_BuildValue("(sy#O)", "delete", (const char *)key,
                            (Py_ssize_t)klen, Py_None);
        if (!t || PyList_Append(ops, t) < 0)
            Py_CLEAR(ops);
        Py_XDECREF(t);
    }
}

PyObject *rvpy_batch_iter(rvpy_batch *self)
{
    PyObject *ops = feed_batch_ops(self->handle);
    if (!ops)
        return NULL;
    PyObject *it = PyObject_GetIter(ops);
    Py_DECREF(ops);
    return it;
}

PyObject *rvpy_batch_bytes(rvpy_batch *self, PyObject *unused)
{
    (void)unused;
    size_t len = 0;
    const void *data = ravel_batch_data(self->handle, &len);
    return PyBytes_FromStringAndSize(data, (Py_ssize_t)len);
}

PyObject *rvpy_batch_sequence(rvpy_batch *self, void *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(ravel_batch_sequence(self->handle));
}

/* A new Batch of TYPE holding a copy of LEN bytes at DATA. */
static PyObject *feed_batch_from(PyTypeObject *type, const void *data,
                                 size_t len)
{
    rvpy_batch *self = (rvpy_batch *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_batch_from_data(data, len, &self->handle);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        Py_DECREF(self);  /* batch_dealloc frees a NULL handle: a no-op */
        return rvpy_raise(rc, msg);
    }
    return (PyObject *)self;
}

PyObject *rvpy_batch_from_bytes(PyObject *cls, PyObject *data)
{
    rvpy_bytes d;
    if (rvpy_bytes_get(data, &d, "data") < 0)
        return NULL;
    PyObject *b = feed_batch_from((PyTypeObject *)cls, d.ptr, d.len);
    rvpy_bytes_release(&d);
    return b;
}

/* ------------------------------------------------------------ Updates */

typedef struct {
    PyObject_HEAD
    rvpy_child child;
    rvpy_db *db;              /* strong reference */
    ravel_updates *handle;    /* NULL once closed */
    int busy;                 /* a next() is in progress */
    uint64_t last_sequence;   /* kept for after close */
    PyObject *weakrefs;
} rvpy_updates;

static void updates_release_handle(rvpy_updates *self)
{
    if (self->handle)
        self->last_sequence = ravel_updates_last_sequence(self->handle);
    ravel_updates_free(self->handle);
    self->handle = NULL;
}

/* The release hook DB.close() calls. */
static void updates_release_child(rvpy_child *c)
{
    rvpy_updates *self = (rvpy_updates *)((char *)c -
                                          offsetof(rvpy_updates, child));
    updates_release_handle(self);
}

PyObject *rvpy_updates_new(rvpy_db *db, unsigned long long seq)
{
    rvpy_updates *self = PyObject_New(rvpy_updates, &rvpy_updates_type);
    if (!self)
        return NULL;
    self->child.prev = self->child.next = NULL;
    self->child.release = updates_release_child;
    Py_INCREF(db);
    self->db = db;
    self->handle = NULL;
    self->busy = 0;
    self->last_sequence = 0;
    self->weakrefs = NULL;
    if (rvpy_db_enter(db) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    ravel_db *handle = db->handle;
    ravel_updates *u = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_updates_since(handle, seq, 0, &u);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    if (rc) {
        Py_DECREF(self);
        return rvpy_raise(rc, msg);
    }
    self->handle = u;
    rvpy_db_link(db, &self->child);
    return (PyObject *)self;
}

static void updates_dealloc(rvpy_updates *self)
{
    if (self->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)self);
    rvpy_db_unlink(&self->child);
    updates_release_handle(self);
    Py_DECREF(self->db);
    PyObject_Free(self);
}

static PyObject *updates_next(rvpy_updates *self)
{
    if (!self->handle)
        return rvpy_raise_misuse(self->db->handle
                                     ? "the Updates iterator is closed"
                                     : "the Updates iterator's database is "
                                       "closed");
    if (self->busy)
        return rvpy_raise_misuse("the Updates iterator is in use by another "
                                 "thread");
    if (rvpy_db_enter(self->db) < 0)
        return NULL;
    ravel_updates *u = self->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_updates_next(u);
    if (rc && rc != RAVEL_NOTFOUND)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    rvpy_db_leave(self->db);
    if (rc == RAVEL_NOTFOUND)
        return NULL;  /* StopIteration: nothing more for now */
    if (rc)
        return rvpy_raise(rc, msg);
    size_t len = 0;
    const void *data = ravel_batch_data(ravel_updates_batch(u), &len);
    return feed_batch_from(&rvpy_batch_type, data, len);
}

static PyObject *updates_close(rvpy_updates *self, PyObject *unused)
{
    (void)unused;
    if (self->busy)
        return rvpy_raise_misuse("the Updates iterator is in use by another "
                                 "thread");
    rvpy_db_unlink(&self->child);
    updates_release_handle(self);
    Py_RETURN_NONE;
}

static PyObject *updates_enter_ctx(PyObject *self, PyObject *unused)
{
    (void)unused;
    Py_INCREF(self);
    return self;
}

static PyObject *updates_exit_ctx(rvpy_updates *self, PyObject *args)
{
    (void)args;
    PyObject *r = updates_close(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *updates_get_last_sequence(rvpy_updates *self, void *unused)
{
    (void)unused;
    uint64_t s = self->handle ? ravel_updates_last_sequence(self->handle)
                              : self->last_sequence;
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *updates_get_closed(rvpy_updates *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->handle == NULL);
}

static PyMethodDef updates_methods[] = {
    {"close", (PyCFunction)updates_close, METH_NOARGS,
     "close($self, /)\n--\n\n"
     "Frees the iterator (also done by a with block, DB.close() and when\n"
     "the object is freed).  Closing twice is harmless."},
    {"__enter__", (PyCFunction)updates_enter_ctx, METH_NOARGS,
     RVPY_ENTER_DOC},
    {"__exit__", (PyCFunction)updates_exit_ctx, METH_VARARGS,
     RVPY_EXIT_DOC "Closes the iterator."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef updates_getset[] = {
    {"last_sequence", (getter)updates_get_last_sequence, NULL,
     "The last sequence passed (the last batch's last one, or more when\n"
     "records the feed does not show were passed); 0 before the first.\n"
     "A follower resumes with db.updates_since(last_sequence + 1).", NULL},
    {"closed", (getter)updates_get_closed, NULL,
     "True once the iterator is closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject rvpy_updates_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.Updates",
    .tp_basicsize = sizeof(rvpy_updates),
    .tp_dealloc = (destructor)updates_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The change feed from DB.updates_since(seq): iterating yields\n"
              "each committed batch (a Batch, with .sequence) in commit\n"
              "order.  Iteration stops at the end of what the WAL holds\n"
              "now; iterating again later goes on with the batches\n"
              "committed since.  ExpiredError if what comes next was\n"
              "deleted before it was read.  One thread at a time.",
    .tp_weaklistoffset = offsetof(rvpy_updates, weakrefs),
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)updates_next,
    .tp_methods = updates_methods,
    .tp_getset = updates_getset,
};

const char rvpy_updates_since_doc[] =
"updates_since($self, seq=0, /)\n--\n\n"
"The change feed: an Updates iterator over the committed batches from\n"
"sequence SEQ on (the batch holding SEQ first; 0: from the first), each\n"
"a Batch with its .sequence, in commit order, read from the WAL (a\n"
"database opened read_only too).  ExpiredError if SEQ is no longer in\n"
"the WAL (see the options wal_ttl_seconds and wal_size_limit_mb): start\n"
"again from a checkpoint.";

PyObject *rvpy_db_updates_since(rvpy_db *self, PyObject *args)
{
    unsigned long long seq = 0;
    if (!PyArg_ParseTuple(args, "|K:updates_since", &seq))
        return NULL;
    return rvpy_updates_new(self, seq);
}
