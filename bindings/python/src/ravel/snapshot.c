/*
** snapshot.c -- the Snapshot type: a pinned, consistent view of a
** database (ravel_snapshot_acquire/release), with the same read methods
** as DB (get, multi_get, [], in, items, keys, values, iterator).
*/
#include "_ravel.h"

/* Releases the ravel snapshot; called with the GIL, no call in progress. */
static void snapshot_release_handle(rvpy_snapshot *self)
{
    if (self->handle && self->db->handle)
        ravel_snapshot_release(self->db->handle, self->handle);
    self->handle = NULL;
}

/* The release hook DB.close() calls. */
static void snapshot_release_child(rvpy_child *c)
{
    rvpy_snapshot *self = (rvpy_snapshot *)((char *)c -
                                            offsetof(rvpy_snapshot, child));
    snapshot_release_handle(self);
}

PyObject *rvpy_snapshot_new(rvpy_db *db)
{
    rvpy_snapshot *self = PyObject_New(rvpy_snapshot, &rvpy_snapshot_type);
    if (!self)
        return NULL;
    self->child.prev = self->child.next = NULL;
    self->child.release = snapshot_release_child;
    Py_INCREF(db);
    self->db = db;
    self->handle = NULL;
    self->users = 0;
    self->weakrefs = NULL;
    if (rvpy_db_enter(db) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    ravel_db *handle = db->handle;
    ravel_snapshot *snap = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_snapshot_acquire(handle, &snap);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    if (rc) {
        Py_DECREF(self);
        return rvpy_raise(rc, msg);
    }
    self->handle = snap;
    rvpy_db_link(db, &self->child);
    return (PyObject *)self;
}

/* Raises the error for a snapshot that can no longer be read. */
static PyObject *snapshot_raise_released(rvpy_snapshot *self)
{
    if (!self->db->handle)
        return rvpy_raise_misuse("the snapshot's database is closed");
    return rvpy_raise_misuse("the snapshot has been released");
}

int rvpy_snapshot_begin_use(PyObject *snap, rvpy_db *db,
                            const ravel_snapshot **handle)
{
    *handle = NULL;
    if (!snap || snap == Py_None)
        return 0;
    if (!PyObject_TypeCheck(snap, &rvpy_snapshot_type)) {
        PyErr_Format(PyExc_TypeError, "snapshot must be a ravel.Snapshot "
                     "or None, not %.100s", Py_TYPE(snap)->tp_name);
        return -1;
    }
    rvpy_snapshot *s = (rvpy_snapshot *)snap;
    if (s->db != db) {
        rvpy_raise_misuse("the snapshot belongs to another database");
        return -1;
    }
    if (!s->handle) {
        snapshot_raise_released(s);
        return -1;
    }
    s->users++;
    *handle = s->handle;
    return 0;
}

void rvpy_snapshot_end_use(PyObject *snap)
{
    if (snap && snap != Py_None)
        ((rvpy_snapshot *)snap)->users--;
}

static void snapshot_dealloc(rvpy_snapshot *self)
{
    if (self->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)self);
    rvpy_db_unlink(&self->child);
    snapshot_release_handle(self);
    Py_DECREF(self->db);
    PyObject_Free(self);
}

PyDoc_STRVAR(release_doc,
"release($self, /)\n--\n\n"
"Releases the snapshot (also done by a with block, by DB.close() and\n"
"when the object is freed).  Releasing twice is harmless; reading\n"
"through a released snapshot raises InvalidArgumentError.  Iterators\n"
"made from it keep working.");

static PyObject *snapshot_release(rvpy_snapshot *self, PyObject *unused)
{
    (void)unused;
    if (!self->handle || self->db->closing)
        Py_RETURN_NONE;  /* released, or about to be by DB.close() */
    if (self->users > 0)
        return rvpy_raise_misuse("the snapshot is in use by another thread");
    if (rvpy_db_enter(self->db) < 0)
        return NULL;
    ravel_db *db = self->db->handle;
    ravel_snapshot *snap = self->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    rvpy_db_unlink(&self->child);
    self->handle = NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_snapshot_release(db, snap);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(self->db);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

static PyObject *snapshot_enter_ctx(rvpy_snapshot *self, PyObject *unused)
{
    (void)unused;
    if (!self->handle)
        return snapshot_raise_released(self);
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *snapshot_exit_ctx(rvpy_snapshot *self, PyObject *args)
{
    (void)args;
    PyObject *r = snapshot_release(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

PyDoc_STRVAR(get_doc,
"get($self, key, /, default=None)\n--\n\n"
"The value of KEY as of the snapshot, or DEFAULT if it was absent.");

static PyObject *snapshot_get(rvpy_snapshot *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *key, *dflt;
    if (rvpy_get_args(args, nargs, kwnames, &key, &dflt) < 0)
        return NULL;
    PyObject *value = rvpy_read(self->db, (PyObject *)self, key);
    if (value || PyErr_Occurred())
        return value;
    Py_INCREF(dflt);
    return dflt;
}

PyDoc_STRVAR(multi_get_doc,
"multi_get($self, keys, /)\n--\n\n"
"As DB.multi_get(), as of the snapshot.");

static PyObject *snapshot_multi_get(rvpy_snapshot *self, PyObject *keys)
{
    return rvpy_multi_read(self->db, (PyObject *)self, keys);
}

static PyObject *snapshot_subscript(rvpy_snapshot *self, PyObject *key)
{
    PyObject *value = rvpy_read(self->db, (PyObject *)self, key);
    if (!value && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, key);
    return value;
}

static int snapshot_contains(rvpy_snapshot *self, PyObject *key)
{
    return rvpy_contains(self->db, (PyObject *)self, key);
}

static PyObject *snapshot_items(rvpy_snapshot *self, PyObject *args,
                                PyObject *kwargs)
{
    return rvpy_range_from_args(self->db, (PyObject *)self, args, kwargs,
                                RVPY_ITEMS);
}

static PyObject *snapshot_keys(rvpy_snapshot *self, PyObject *args,
                               PyObject *kwargs)
{
    return rvpy_range_from_args(self->db, (PyObject *)self, args, kwargs,
                                RVPY_KEYS);
}

static PyObject *snapshot_values(rvpy_snapshot *self, PyObject *args,
                                 PyObject *kwargs)
{
    return rvpy_range_from_args(self->db, (PyObject *)self, args, kwargs,
                                RVPY_VALUES);
}

static PyObject *snapshot_iter(rvpy_snapshot *self)
{
    return rvpy_range_new(self->db, (PyObject *)self, Py_None, Py_None, 0,
                          RVPY_KEYS);
}

static PyObject *snapshot_iterator(rvpy_snapshot *self, PyObject *unused)
{
    (void)unused;
    return rvpy_iter_new(self->db, (PyObject *)self);
}

static PyObject *snapshot_get_sequence(rvpy_snapshot *self, void *closure)
{
    (void)closure;
    if (!self->handle)
        return snapshot_raise_released(self);
    return PyLong_FromUnsignedLongLong(ravel_snapshot_sequence(self->handle));
}

static PyObject *snapshot_get_released(rvpy_snapshot *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle == NULL);
}

static PyObject *snapshot_get_db(rvpy_snapshot *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->db);
    return (PyObject *)self->db;
}

static PyGetSetDef snapshot_getset[] = {
    {"sequence", (getter)snapshot_get_sequence, NULL,
     "The sequence number the snapshot reads at.", NULL},
    {"released", (getter)snapshot_get_released, NULL,
     "True once released (or its database closed).", NULL},
    {"db", (getter)snapshot_get_db, NULL, "The database.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef snapshot_methods[] = {
    {"get", (PyCFunction)(void (*)(void))snapshot_get,
     METH_FASTCALL | METH_KEYWORDS, get_doc},
    {"multi_get", (PyCFunction)snapshot_multi_get, METH_O, multi_get_doc},
    {"items", (PyCFunction)(void (*)(void))snapshot_items,
     METH_VARARGS | METH_KEYWORDS,
     "items($self, /, start=None, stop=None, reverse=False, *, "
     "prefix=None)\n--\n\nAs DB.items(), as of the snapshot."},
    {"keys", (PyCFunction)(void (*)(void))snapshot_keys,
     METH_VARARGS | METH_KEYWORDS,
     "keys($self, /, start=None, stop=None, reverse=False, *, prefix=None)"
     "\n--\n\nAs items(), yielding keys."},
    {"values", (PyCFunction)(void (*)(void))snapshot_values,
     METH_VARARGS | METH_KEYWORDS,
     "values($self, /, start=None, stop=None, reverse=False, *, "
     "prefix=None)\n--\n\nAs items(), yielding values."},
    {"iterator", (PyCFunction)snapshot_iterator, METH_NOARGS,
     "iterator($self, /)\n--\n\n"
     "A low-level Iterator reading as of the snapshot."},
    {"release", (PyCFunction)snapshot_release, METH_NOARGS, release_doc},
    {"close", (PyCFunction)snapshot_release, METH_NOARGS,
     "close($self, /)\n--\n\nThe same as release()."},
    {"__enter__", (PyCFunction)snapshot_enter_ctx, METH_NOARGS,
     RVPY_ENTER_DOC},
    {"__exit__", (PyCFunction)snapshot_exit_ctx, METH_VARARGS,
     RVPY_EXIT_DOC "Releases the snapshot."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods snapshot_as_mapping = {
    .mp_subscript = (binaryfunc)snapshot_subscript,
};

static PySequenceMethods snapshot_as_sequence = {
    .sq_contains = (objobjproc)snapshot_contains,
};

PyTypeObject rvpy_snapshot_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.Snapshot",
    .tp_basicsize = sizeof(rvpy_snapshot),
    .tp_dealloc = (destructor)snapshot_dealloc,
    .tp_as_sequence = &snapshot_as_sequence,
    .tp_as_mapping = &snapshot_as_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A consistent view of a database as of DB.snapshot().  Use it "
              "in a with block, or call release().",
    .tp_weaklistoffset = offsetof(rvpy_snapshot, weakrefs),
    .tp_iter = (getiterfunc)snapshot_iter,
    .tp_methods = snapshot_methods,
    .tp_getset = snapshot_getset,
};
