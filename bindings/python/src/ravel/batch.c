/*
** batch.c -- the Batch type: a list of puts and deletes applied
** atomically by DB.write(), the `with db.write_batch() as b:` form that
** writes it when the block ends cleanly, and DB.update(), which writes
** the pairs of a mapping or an iterable as one batch.
*/
#include "_ravel.h"

/* A new empty batch of TYPE. */
static PyObject *batch_alloc(PyTypeObject *type)
{
    rvpy_batch *self = (rvpy_batch *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_batch_new(&self->handle);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        Py_DECREF(self);
        return rvpy_raise(rc, msg);
    }
    return (PyObject *)self;
}

static PyObject *batch_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kw && PyDict_GET_SIZE(kw) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Batch() takes no arguments");
        return NULL;
    }
    return batch_alloc(type);
}

PyObject *rvpy_batch_bound(rvpy_db *db, int flags)
{
    rvpy_batch *self = (rvpy_batch *)batch_alloc(&rvpy_batch_type);
    if (!self)
        return NULL;
    Py_INCREF(db);
    self->db = db;
    self->flags = flags;
    return (PyObject *)self;
}

static void batch_dealloc(rvpy_batch *self)
{
    ravel_batch_free(self->handle);
    Py_XDECREF(self->db);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* 0 if the batch may be changed now, else -1 with an exception. */
static int batch_check_idle(rvpy_batch *self)
{
    if (self->busy) {
        rvpy_raise_misuse("the batch is being written by another thread");
        return -1;
    }
    return 0;
}

/* Adds a put of VALUE at KEY, or a delete of KEY if VALUE is NULL. */
static PyObject *batch_add(rvpy_batch *self, PyObject *key, PyObject *value)
{
    rvpy_bytes k, v = {0};
    if (rvpy_bytes_get(key, &k, "key") < 0)
        return NULL;
    if ((value && rvpy_bytes_get(value, &v, "value") < 0)
        || batch_check_idle(self) < 0) {
        rvpy_bytes_release(&v);
        rvpy_bytes_release(&k);
        return NULL;
    }
    char msg[RVPY_MSG_SIZE];
    int rc = value ? ravel_batch_put(self->handle, k.ptr, k.len, v.ptr, v.len)
                   : ravel_batch_delete(self->handle, k.ptr, k.len);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    rvpy_bytes_release(&v);
    rvpy_bytes_release(&k);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

static PyObject *batch_put(rvpy_batch *self, PyObject *const *args,
                           Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "put() takes a key and a value");
        return NULL;
    }
    return batch_add(self, args[0], args[1]);
}

static PyObject *batch_delete(rvpy_batch *self, PyObject *key)
{
    return batch_add(self, key, NULL);
}

static PyObject *batch_clear(rvpy_batch *self, PyObject *unused)
{
    (void)unused;
    if (batch_check_idle(self) < 0)
        return NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_batch_clear(self->handle);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        return rvpy_raise(rc, msg);
    }
    Py_RETURN_NONE;
}

static Py_ssize_t batch_len(rvpy_batch *self)
{
    return (Py_ssize_t)ravel_batch_count(self->handle);
}

PyObject *rvpy_batch_write(rvpy_db *db, rvpy_batch *batch, int flags)
{
    if (batch_check_idle(batch) < 0 || rvpy_db_enter(db) < 0)
        return NULL;
    ravel_db *handle = db->handle;
    ravel_batch *b = batch->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    batch->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_write(handle, flags, b);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    batch->busy = 0;
    rvpy_db_leave(db);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------- DB.update() */

/* Adds a put of each key of the mapping OTHER (its keys(), then
** OTHER[key], as dict.update reads a mapping). */
static int batch_add_mapping(rvpy_batch *self, PyObject *other)
{
    PyObject *keys = PyMapping_Keys(other);
    if (!keys)
        return -1;
    int r = 0;
    for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(keys); i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        PyObject *value = PyObject_GetItem(other, key);
        PyObject *done = value ? batch_add(self, key, value) : NULL;
        r = done ? 0 : -1;
        Py_XDECREF(done);
        Py_XDECREF(value);
    }
    Py_DECREF(keys);
    return r;
}

/* Adds a put of each (key, value) pair OTHER yields. */
static int batch_add_pairs(rvpy_batch *self, PyObject *other)
{
    PyObject *it = PyObject_GetIter(other);
    if (!it)
        return -1;
    PyObject *item;
    Py_ssize_t i = 0;
    int r = 0;
    while (r == 0 && (item = PyIter_Next(it))) {
        PyObject *pair = PySequence_Fast(item, "update() takes a mapping "
                                         "or an iterable of (key, value) "
                                         "pairs");
        PyObject *done = NULL;
        if (pair && PySequence_Fast_GET_SIZE(pair) != 2)
            PyErr_Format(PyExc_ValueError, "update() sequence element #%zd "
                         "has length %zd; 2 is required", i,
                         PySequence_Fast_GET_SIZE(pair));
        else if (pair)
            done = batch_add(self, PySequence_Fast_GET_ITEM(pair, 0),
                             PySequence_Fast_GET_ITEM(pair, 1));
        r = done ? 0 : -1;
        Py_XDECREF(done);
        Py_XDECREF(pair);
        Py_DECREF(item);
        i++;
    }
    Py_DECREF(it);
    return r == 0 && PyErr_Occurred() ? -1 : r;
}

PyObject *rvpy_db_update(rvpy_db *db, PyObject *other, int flags)
{
    rvpy_batch *batch = (rvpy_batch *)batch_alloc(&rvpy_batch_type);
    if (!batch)
        return NULL;
    int r = 0;
    if (other && PyObject_HasAttrString(other, "keys"))
        r = batch_add_mapping(batch, other);
    else if (other)
        r = batch_add_pairs(batch, other);
    PyObject *result = r < 0 ? NULL : rvpy_batch_write(db, batch, flags);
    Py_DECREF(batch);
    return result;
}

/* ---------------------------------------------------------- with blocks */

static PyObject *batch_enter_ctx(rvpy_batch *self, PyObject *unused)
{
    (void)unused;
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *batch_exit_ctx(rvpy_batch *self, PyObject *args)
{
    PyObject *type = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0)
                                                 : Py_None;
    if (type == Py_None && self->db) {
        PyObject *r = rvpy_batch_write(self->db, self, self->flags);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_FALSE;
}

static PyObject *batch_delete_range(rvpy_batch *self, PyObject *const *args,
                                    Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "delete_range() takes a begin and an end");
        return NULL;
    }
    if (batch_check_idle(self) < 0)
        return NULL;
    return rvpy_batch_add_range(self->handle, args[0], args[1]);
}

static PyMethodDef batch_methods[] = {
    {"delete_range", (PyCFunction)(void (*)(void))batch_delete_range,
     METH_FASTCALL,
     "delete_range($self, begin, end, /)\n--\n\n"
     "Adds a range delete of every key k with begin <= k < end."},
    {"put", (PyCFunction)(void (*)(void))batch_put, METH_FASTCALL,
     "put($self, key, value, /)\n--\n\nAdds a put."},
    {"delete", (PyCFunction)batch_delete, METH_O,
     "delete($self, key, /)\n--\n\nAdds a delete."},
    {"clear", (PyCFunction)batch_clear, METH_NOARGS,
     "clear($self, /)\n--\n\nRemoves every operation."},
    {"__bytes__", (PyCFunction)rvpy_batch_bytes, METH_NOARGS,
     "__bytes__($self, /)\n--\n\n"
     "The batch's bytes (its sequence, count and operations):\n"
     "Batch.from_bytes() makes the same batch again, in any process."},
    {"from_bytes", (PyCFunction)rvpy_batch_from_bytes, METH_O | METH_CLASS,
     "from_bytes($type, data, /)\n--\n\n"
     "A new Batch from the bytes of bytes(batch), checked whole first:\n"
     "CorruptionError naming what is wrong and its offset."},
    {"__enter__", (PyCFunction)batch_enter_ctx, METH_NOARGS,
     RVPY_ENTER_DOC},
    {"__exit__", (PyCFunction)batch_exit_ctx, METH_VARARGS,
     RVPY_EXIT_DOC
     "Writes a batch made by DB.write_batch() if the block raised "
     "nothing."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods batch_as_sequence = {
    .sq_length = (lenfunc)batch_len,
};

static PyGetSetDef batch_getset[] = {
    {"sequence", (getter)rvpy_batch_sequence, NULL,
     "The sequence of the batch's first operation for a batch from the\n"
     "change feed (operation i has sequence + i); 0 for one never written.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject rvpy_batch_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.Batch",
    .tp_basicsize = sizeof(rvpy_batch),
    .tp_dealloc = (destructor)batch_dealloc,
    .tp_as_sequence = &batch_as_sequence,
    .tp_iter = (getiterfunc)rvpy_batch_iter,
    .tp_getset = batch_getset,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Batch()\n--\n\n"
              "Puts and deletes applied atomically by DB.write().  "
              "len(batch) is the number of operations.  One thread at a "
              "time.  Iterating yields its operations: ('put', key, value) and "
              "('delete', key, None).",
    .tp_methods = batch_methods,
    .tp_new = batch_new,
};
