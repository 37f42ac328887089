/*
** db.c -- the DB type: opening and closing a database, point reads and
** writes, the mapping protocol (db[k], k in db, del db[k]), and the
** maintenance calls (property, flush_wal, flush, compact_range, verify);
** and the module function destroy(), deleting a closed database.
** Iterators, snapshots and batches live in their own files; this file
** owns the bookkeeping that keeps them from outliving the handle.
*/
#include "_ravel.h"

#include <time.h>

/* ------------------------------------------------------ call bookkeeping */

static PyObject *db_raise_closed(rvpy_db *db)
{
    const char *path = db->path ? PyUnicode_AsUTF8(db->path) : NULL;
    if (!path) {
        PyErr_Clear();
        path = "?";
    }
    return rvpy_raise_misuse("database %s is %s", path,
                             db->closing ? "closing" : "closed");
}

int rvpy_db_enter(rvpy_db *db)
{
    if (!db->handle || db->closing) {
        db_raise_closed(db);
        return -1;
    }
    db->active++;
    return 0;
}

void rvpy_db_leave(rvpy_db *db)
{
    db->active--;
}

void rvpy_child_link(rvpy_child *head, rvpy_child *c)
{
    c->next = head->next;
    c->prev = head;
    head->next->prev = c;
    head->next = c;
}

void rvpy_db_link(rvpy_db *db, rvpy_child *c)
{
    rvpy_child_link(&db->children, c);
}

void rvpy_db_unlink(rvpy_child *c)
{
    if (!c->next)
        return;
    c->prev->next = c->next;
    c->next->prev = c->prev;
    c->next = c->prev = NULL;
}

/* Waits, without the GIL, until no call is in progress on DB (close has
** set db->closing, so none can start).  A short sleep loop: close is rare
** and the calls it waits for are the ones ravel_close would wait for. */
static void db_wait_for_calls(rvpy_db *db)
{
    while (db->active > 0) {
        Py_BEGIN_ALLOW_THREADS
        struct timespec pause = {0, 200 * 1000};
        nanosleep(&pause, NULL);
        Py_END_ALLOW_THREADS
    }
}

/* Releases every live iterator and snapshot of DB (no call in progress). */
static void db_release_children(rvpy_db *db)
{
    while (db->children.next != &db->children) {
        rvpy_child *c = db->children.next;
        rvpy_db_unlink(c);
        c->release(c);
    }
}

/* ---------------------------------------------------------- open, close */

static PyObject *db_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args;
    (void)kw;
    rvpy_db *self = (rvpy_db *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->children.next = self->children.prev = &self->children;
    return (PyObject *)self;
}

/* Removes KEY from the dict KWARGS and returns it (a new reference), or
** Py_None if absent; NULL on error. */
static PyObject *db_pop_kwarg(PyObject *kwargs, const char *key)
{
    PyObject *v = kwargs ? PyDict_GetItemString(kwargs, key) : NULL;
    if (!v)
        Py_RETURN_NONE;
    Py_INCREF(v);
    if (PyDict_DelItemString(kwargs, key) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

static int db_open(rvpy_db *self, const char *dir, ravel_options *opts)
{
    char msg[RVPY_MSG_SIZE] = "";
    ravel_db *handle = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_open(dir, opts, &handle);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    if (rc) {
        rvpy_raise_open(rc, msg, self->path);
        return -1;
    }
    self->handle = handle;
    return 0;
}

static int db_init(rvpy_db *self, PyObject *args, PyObject *kwargs)
{
    PyObject *path_arg, *options = Py_None;
    if (self->handle || self->path) {
        rvpy_raise_misuse("DB.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "O|O:DB", &path_arg, &options))
        return -1;
    PyObject *kw = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
    if (!kw)
        return -1;
    PyObject *cache = NULL, *wc = NULL, *options_kw = NULL;
    PyObject *path_bytes = NULL;
    ravel_options *opts = NULL;
    int result = -1;
    if (!(cache = db_pop_kwarg(kw, "cache"))
        || !(wc = db_pop_kwarg(kw, "write_controller"))
        || !(options_kw = db_pop_kwarg(kw, "options")))
        goto done;
    if (options_kw != Py_None) {
        if (options != Py_None) {
            PyErr_SetString(PyExc_TypeError, "DB() got options twice");
            goto done;
        }
        options = options_kw;
    }
    if (!PyUnicode_FSConverter(path_arg, &path_bytes))
        goto done;
    self->path = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(path_bytes));
    if (!self->path)
        goto done;
    opts = rvpy_options_build(options, kw, cache, wc);
    if (opts)
        result = db_open(self, PyBytes_AS_STRING(path_bytes), opts);
done:
    ravel_options_free(opts);
    Py_XDECREF(path_bytes);
    Py_XDECREF(options_kw);
    Py_XDECREF(wc);
    Py_XDECREF(cache);
    Py_DECREF(kw);
    return result;
}

/* Closes DB: returns 0, or -1 with an exception. */
static int db_close(rvpy_db *self)
{
    if (!self->handle)
        return 0;
    if (self->closing) {
        db_raise_closed(self);
        return -1;
    }
    self->closing = 1;
    db_wait_for_calls(self);
    db_release_children(self);
    ravel_db *handle = self->handle;
    char msg[RVPY_MSG_SIZE] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_close(handle);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    self->closing = 0;
    if (rc != RAVEL_INVALID)  /* RAVEL_INVALID alone leaves it open */
        self->handle = NULL;
    if (rc) {
        rvpy_raise(rc, msg);
        return -1;
    }
    return 0;
}

static void db_dealloc(rvpy_db *self)
{
    if (self->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)self);
    if (self->handle) {
        /* children hold references: none is left, but be safe */
        db_release_children(self);
        ravel_db *handle = self->handle;
        self->handle = NULL;
        Py_BEGIN_ALLOW_THREADS
        ravel_close(handle);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ------------------------------------------------------------- destroy */

const char rvpy_destroy_doc[] =
"destroy(path, /)\n--\n\n"
"Deletes the database in directory PATH, as RocksDB's DestroyDB: its\n"
"files (CURRENT, IDENTITY, LOG, LOG.old, MANIFEST-*, wal-*.log, *.sst,\n"
"their .tmp files, lost/ and what it holds) and its LOCK, then PATH\n"
"itself if nothing else is left in it.  Files of other names stay, and\n"
"so does PATH with them.  Raises LockedError, deleting nothing, if the\n"
"database is open (a DB of this process not yet closed, or another\n"
"process); DiskIOError naming the file that could not be removed (those\n"
"before it are gone).  A PATH that does not exist is not an error.";

PyObject *rvpy_destroy(PyObject *module, PyObject *path_arg)
{
    (void)module;
    PyObject *path_bytes = NULL;
    if (!PyUnicode_FSConverter(path_arg, &path_bytes))
        return NULL;
    const char *dir = PyBytes_AS_STRING(path_bytes);
    char msg[RVPY_MSG_SIZE] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_destroy(dir);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_bytes);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(close_doc,
"close($self, /)\n--\n\n"
"Closes the database.  Live iterators, snapshots and transactions are\n"
"closed first (an open transaction is rolled back, a prepared one stays\n"
"prepared; using them afterwards raises InvalidArgumentError); calls in\n"
"progress in other threads are waited for.  Closing twice is harmless.");

static PyObject *db_close_method(rvpy_db *self, PyObject *unused)
{
    (void)unused;
    if (db_close(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *db_enter_ctx(rvpy_db *self, PyObject *unused)
{
    (void)unused;
    if (!self->handle)
        return db_raise_closed(self);
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *db_exit_ctx(rvpy_db *self, PyObject *args)
{
    (void)args;
    if (db_close(self) < 0)
        return NULL;
    Py_RETURN_FALSE;
}

/* ------------------------------------------------------------ point reads */

PyObject *rvpy_read(rvpy_db *db, PyObject *snap, PyObject *key)
{
    rvpy_bytes k;
    const ravel_snapshot *snap_handle = NULL;
    if (rvpy_bytes_get(key, &k, "key") < 0)
        return NULL;
    if (rvpy_snapshot_begin_use(snap, db, &snap_handle) < 0) {
        rvpy_bytes_release(&k);
        return NULL;
    }
    if (rvpy_db_enter(db) < 0) {
        rvpy_snapshot_end_use(snap);
        rvpy_bytes_release(&k);
        return NULL;
    }
    ravel_db *handle = db->handle;
    char msg[RVPY_MSG_SIZE];
    void *val = NULL;
    size_t vlen = 0;
    int rc;
    /* One lookup whatever the value's size: ravel's copy, made without
    ** the GIL, is copied once more into the bytes object (which needs the
    ** GIL) and freed. */
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_get(handle, snap_handle, k.ptr, k.len, &val, &vlen);
    if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    rvpy_snapshot_end_use(snap);
    rvpy_bytes_release(&k);
    if (rc == RAVEL_NOTFOUND)
        return NULL;
    if (rc)
        return rvpy_raise(rc, msg);
    PyObject *value = PyBytes_FromStringAndSize(val, (Py_ssize_t)vlen);
    ravel_free(val);
    return value;
}

int rvpy_contains(rvpy_db *db, PyObject *snap, PyObject *key)
{
    rvpy_bytes k;
    const ravel_snapshot *snap_handle = NULL;
    if (rvpy_bytes_get(key, &k, "key") < 0)
        return -1;
    if (rvpy_snapshot_begin_use(snap, db, &snap_handle) < 0) {
        rvpy_bytes_release(&k);
        return -1;
    }
    if (rvpy_db_enter(db) < 0) {
        rvpy_snapshot_end_use(snap);
        rvpy_bytes_release(&k);
        return -1;
    }
    ravel_db *handle = db->handle;
    char msg[RVPY_MSG_SIZE];
    size_t vlen = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_get_into(handle, snap_handle, k.ptr, k.len, NULL, 0, &vlen);
    if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    rvpy_snapshot_end_use(snap);
    rvpy_bytes_release(&k);
    if (rc == RAVEL_OK)
        return 1;
    if (rc == RAVEL_NOTFOUND)
        return 0;
    rvpy_raise(rc, msg);
    return -1;
}

/* The arrays of one ravel_multi_get: the keys' buffers (the first GOT of
** them filled) and the call's outputs. */
struct multi_read {
    size_t n, got;
    rvpy_bytes *keys;
    const void **kptrs;
    size_t *klens;
    void **vals;
    size_t *vlens;
    int *rcs;
};

static void multi_read_free(struct multi_read *m)
{
    for (size_t i = 0; i < m->got; i++)
        rvpy_bytes_release(&m->keys[i]);
    if (m->vals)
        for (size_t i = 0; i < m->n; i++)
            ravel_free(m->vals[i]);
    PyMem_Free(m->keys);
    PyMem_Free(m->kptrs);
    PyMem_Free(m->klens);
    PyMem_Free(m->vals);
    PyMem_Free(m->vlens);
    PyMem_Free(m->rcs);
}

/* Sizes M for the keys of the tuple KEYS and reads their buffers.
** Returns 0, or -1 with an exception (M is then freed by the caller). */
static int multi_read_keys(struct multi_read *m, PyObject *keys)
{
    size_t n = (size_t)PyTuple_GET_SIZE(keys);
    m->n = n;
    m->keys = PyMem_Calloc(n ? n : 1, sizeof *m->keys);
    m->kptrs = PyMem_Calloc(n ? n : 1, sizeof *m->kptrs);
    m->klens = PyMem_Calloc(n ? n : 1, sizeof *m->klens);
    m->vals = PyMem_Calloc(n ? n : 1, sizeof *m->vals);
    m->vlens = PyMem_Calloc(n ? n : 1, sizeof *m->vlens);
    m->rcs = PyMem_Calloc(n ? n : 1, sizeof *m->rcs);
    if (!m->keys || !m->kptrs || !m->klens || !m->vals || !m->vlens ||
        !m->rcs) {
        PyErr_NoMemory();
        return -1;
    }
    for (; m->got < n; m->got++) {
        rvpy_bytes *k = &m->keys[m->got];
        if (rvpy_bytes_get(PyTuple_GET_ITEM(keys, m->got), k, "key") < 0)
            return -1;
        m->kptrs[m->got] = k->ptr;
        m->klens[m->got] = k->len;
    }
    return 0;
}

/* ravel_multi_get as of SNAP_HANDLE (NULL: the latest state), through
** read options made for the call; its message copied into MSG on failure
** (called without the GIL). */
static int multi_read_call(ravel_db *handle,
                           const ravel_snapshot *snap_handle,
                           struct multi_read *m, char *msg)
{
    ravel_readoptions *ro = NULL;
    int rc = RAVEL_OK;
    if (snap_handle) {
        rc = ravel_readoptions_new(&ro);
        if (rc == RAVEL_OK)
            rc = ravel_readoptions_set_snapshot(ro, snap_handle);
    }
    if (rc == RAVEL_OK)
        rc = ravel_multi_get(handle, ro, m->n, m->kptrs, m->klens, m->vals,
                             m->vlens, m->rcs);
    if (rc != RAVEL_OK)
        ravel_errmsg_r(msg, RVPY_MSG_SIZE);
    ravel_readoptions_free(ro);
    return rc;
}

/* The list of M's values: bytes, or None for a key not found. */
static PyObject *multi_read_values(const struct multi_read *m)
{
    PyObject *list = PyList_New((Py_ssize_t)m->n);
    for (size_t i = 0; list && i < m->n; i++) {
        PyObject *v;
        if (m->rcs[i] == RAVEL_OK)
            v = PyBytes_FromStringAndSize(m->vals[i], (Py_ssize_t)m->vlens[i]);
        else {
            Py_INCREF(Py_None);
            v = Py_None;
        }
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

PyObject *rvpy_multi_read(rvpy_db *db, PyObject *snap, PyObject *keys)
{
    if (PyUnicode_Check(keys) || PyObject_CheckBuffer(keys))
        return PyErr_Format(PyExc_TypeError, "multi_get() takes an iterable "
                            "of keys, not one key (%.200s)",
                            Py_TYPE(keys)->tp_name);
    /* a tuple of its own holds every key while the GIL is released (a
    ** list could be changed meanwhile by another thread) */
    PyObject *tuple = PySequence_Tuple(keys);
    if (!tuple)
        return NULL;
    struct multi_read m = {0};
    const ravel_snapshot *snap_handle = NULL;
    PyObject *values = NULL;
    if (multi_read_keys(&m, tuple) < 0)
        goto out;
    if (rvpy_snapshot_begin_use(snap, db, &snap_handle) < 0)
        goto out;
    if (rvpy_db_enter(db) < 0) {
        rvpy_snapshot_end_use(snap);
        goto out;
    }
    ravel_db *handle = db->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = multi_read_call(handle, snap_handle, &m, msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    rvpy_snapshot_end_use(snap);
    if (rc)
        rvpy_raise(rc, msg);
    else
        values = multi_read_values(&m);
out:
    multi_read_free(&m);
    Py_DECREF(tuple);
    return values;
}

PyDoc_STRVAR(multi_get_doc,
"multi_get($self, keys, /, *, snapshot=None)\n--\n\n"
"The values of KEYS (an iterable of bytes-like keys), as a list in their\n"
"order: bytes, or None for a key that is absent.  All are read from one\n"
"state of the database (SNAPSHOT's, or the latest): a batch written\n"
"meanwhile is seen whole or not at all, which get() key by key does not\n"
"promise.  Keys may repeat and come in any order.  It costs about what as\n"
"many get() calls cost, without the GIL; its point is the one state.  An\n"
"error (a key longer than 1 MiB is InvalidArgumentError) returns no value.");

static PyObject *db_multi_get(rvpy_db *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"", "snapshot", NULL};
    PyObject *keys, *snap = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O:multi_get", kwlist,
                                     &keys, &snap))
        return NULL;
    return rvpy_multi_read(self, snap, keys);
}

PyDoc_STRVAR(get_doc,
"get($self, key, /, default=None)\n--\n\n"
"The value of KEY (bytes-like), or DEFAULT if it is absent.");

static PyObject *db_get(rvpy_db *self, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *key, *dflt;
    if (rvpy_get_args(args, nargs, kwnames, &key, &dflt) < 0)
        return NULL;
    PyObject *value = rvpy_read(self, NULL, key);
    if (value || PyErr_Occurred())
        return value;
    Py_INCREF(dflt);
    return dflt;
}

static PyObject *db_subscript(rvpy_db *self, PyObject *key)
{
    PyObject *value = rvpy_read(self, NULL, key);
    if (!value && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, key);
    return value;
}

static int db_contains(rvpy_db *self, PyObject *key)
{
    return rvpy_contains(self, NULL, key);
}

/* ---------------------------------------------------------------- writes */

/* Puts VALUE at KEY, or deletes KEY if VALUE is NULL. */
static int db_write_one(rvpy_db *self, PyObject *key, PyObject *value,
                        int flags)
{
    rvpy_bytes k, v = {0};
    if (rvpy_bytes_get(key, &k, "key") < 0)
        return -1;
    if (value && rvpy_bytes_get(value, &v, "value") < 0) {
        rvpy_bytes_release(&k);
        return -1;
    }
    int rc = -1;
    char msg[RVPY_MSG_SIZE];
    if (rvpy_db_enter(self) == 0) {
        ravel_db *handle = self->handle;
        Py_BEGIN_ALLOW_THREADS
        rc = value ? ravel_put(handle, flags, k.ptr, k.len, v.ptr, v.len)
                   : ravel_delete(handle, flags, k.ptr, k.len);
        if (rc)
            ravel_errmsg_r(msg, sizeof msg);
        Py_END_ALLOW_THREADS
        rvpy_db_leave(self);
        if (rc)
            rvpy_raise(rc, msg);
    }
    rvpy_bytes_release(&v);
    rvpy_bytes_release(&k);
    return rc ? -1 : 0;
}

static int db_ass_subscript(rvpy_db *self, PyObject *key, PyObject *value)
{
    return db_write_one(self, key, value, 0);
}

PyDoc_STRVAR(put_doc,
"put($self, key, value, /, *, sync=False, disable_wal=False,\n"
"    no_slowdown=False)\n--\n\n"
"Stores VALUE at KEY.  sync: return once the write is on stable storage;\n"
"disable_wal: skip the write-ahead log (lost on a crash); no_slowdown:\n"
"raise BusyError instead of waiting for the write controller.");

static PyObject *db_put(rvpy_db *self, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames)
{
    int flags = 0;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "put() takes a key and a value");
        return NULL;
    }
    if (kwnames && rvpy_write_flags(args + nargs, kwnames, "put", &flags) < 0)
        return NULL;
    if (db_write_one(self, args[0], args[1], flags) < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(delete_doc,
"delete($self, key, /, *, sync=False, disable_wal=False, no_slowdown=False)\n"
"--\n\n"
"Deletes KEY; deleting an absent key is not an error.");

static PyObject *db_delete(rvpy_db *self, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames)
{
    int flags = 0;
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "delete() takes a key");
        return NULL;
    }
    if (kwnames
        && rvpy_write_flags(args + nargs, kwnames, "delete", &flags) < 0)
        return NULL;
    if (db_write_one(self, args[0], NULL, flags) < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(write_doc,
"write($self, batch, /, *, sync=False, disable_wal=False, no_slowdown=False)\n"
"--\n\n"
"Applies a Batch atomically.  The batch is left as it was.");

static PyObject *db_write(rvpy_db *self, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    int flags = 0;
    if (nargs != 1 || !PyObject_TypeCheck(args[0], &rvpy_batch_type)) {
        PyErr_SetString(PyExc_TypeError, "write() takes a ravel.Batch");
        return NULL;
    }
    if (kwnames
        && rvpy_write_flags(args + nargs, kwnames, "write", &flags) < 0)
        return NULL;
    return rvpy_batch_write(self, (rvpy_batch *)args[0], flags);
}

PyDoc_STRVAR(write_batch_doc,
"write_batch($self, /, *, sync=False, disable_wal=False, no_slowdown=False)\n"
"--\n\n"
"A new Batch for a with block, written with these flags when the block\n"
"ends without an exception (and discarded if it raises).");

static PyObject *db_write_batch(rvpy_db *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames)
{
    int flags = 0;
    (void)args;
    if (nargs != 0) {
        PyErr_SetString(PyExc_TypeError, "write_batch() takes keyword "
                        "arguments only");
        return NULL;
    }
    if (kwnames
        && rvpy_write_flags(args, kwnames, "write_batch", &flags) < 0)
        return NULL;
    if (!self->handle)
        return db_raise_closed(self);
    return rvpy_batch_bound(self, flags);
}

PyDoc_STRVAR(update_doc,
"update($self, other=(), /, *, sync=False, disable_wal=False,\n"
"       no_slowdown=False)\n--\n\n"
"Stores the pairs of OTHER -- a mapping (its keys(), then other[key], as\n"
"dict.update reads one) or an iterable of (key, value) pairs -- as one\n"
"atomic batch: every pair or, if one is refused, none.  A key given\n"
"twice keeps its last value.  The batch is built in memory first.");

static PyObject *db_update(rvpy_db *self, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames)
{
    int flags = 0;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "update() takes a mapping or an "
                        "iterable of pairs (one argument)");
        return NULL;
    }
    if (kwnames
        && rvpy_write_flags(args + nargs, kwnames, "update", &flags) < 0)
        return NULL;
    return rvpy_db_update(self, nargs ? args[0] : NULL, flags);
}

/* ------------------------------------------------- snapshots, iteration */

PyDoc_STRVAR(snapshot_doc,
"snapshot($self, /)\n--\n\n"
"A consistent view of the database as of now; release it with\n"
"release() or a with block.");

static PyObject *db_snapshot(rvpy_db *self, PyObject *unused)
{
    (void)unused;
    return rvpy_snapshot_new(self);
}

PyDoc_STRVAR(iterator_doc,
"iterator($self, /, snapshot=None)\n--\n\n"
"A low-level iterator (seek, next, key, ...) over the database as of\n"
"now, or as of SNAPSHOT.  It starts unpositioned.");

static PyObject *db_iterator(rvpy_db *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"snapshot", NULL};
    PyObject *snap = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:iterator", names,
                                     &snap))
        return NULL;
    return rvpy_iter_new(self, snap);
}

PyDoc_STRVAR(items_doc,
"items($self, /, start=None, stop=None, reverse=False, *, prefix=None,\n"
"      snapshot=None)\n--\n\n"
"Iterates over (key, value) pairs in key order, from START (included)\n"
"to STOP (excluded), or over the keys that begin with PREFIX (not with\n"
"START or STOP), backwards if REVERSE.  The state read is fixed when\n"
"items() is called.  An error (CorruptionError at a damaged block) ends\n"
"the iteration by raising it, after every entry before it and none past\n"
"it.");

PyDoc_STRVAR(keys_doc,
"keys($self, /, start=None, stop=None, reverse=False, *, prefix=None,\n"
"     snapshot=None)\n--\n\n"
"As items(), yielding keys only.");

PyDoc_STRVAR(values_doc,
"values($self, /, start=None, stop=None, reverse=False, *, prefix=None,\n"
"       snapshot=None)\n--\n\n"
"As items(), yielding values only.");

/* items()/keys()/values() of a DB: the snapshot= keyword is taken out of
** KWARGS, the rest parsed by rvpy_range_from_args. */
static PyObject *db_range(rvpy_db *self, PyObject *args, PyObject *kwargs,
                          int kind)
{
    PyObject *snap = kwargs ? PyDict_GetItemString(kwargs, "snapshot") : NULL;
    if (!snap)
        return rvpy_range_from_args(self, Py_None, args, kwargs, kind);
    PyObject *rest = PyDict_Copy(kwargs);
    if (!rest)
        return NULL;
    Py_INCREF(snap);
    PyObject *range = NULL;
    if (PyDict_DelItemString(rest, "snapshot") == 0)
        range = rvpy_range_from_args(self, snap, args, rest, kind);
    Py_DECREF(snap);
    Py_DECREF(rest);
    return range;
}

static PyObject *db_items(rvpy_db *self, PyObject *args, PyObject *kwargs)
{
    return db_range(self, args, kwargs, RVPY_ITEMS);
}

static PyObject *db_keys(rvpy_db *self, PyObject *args, PyObject *kwargs)
{
    return db_range(self, args, kwargs, RVPY_KEYS);
}

static PyObject *db_values(rvpy_db *self, PyObject *args, PyObject *kwargs)
{
    return db_range(self, args, kwargs, RVPY_VALUES);
}

static PyObject *db_iter(rvpy_db *self)
{
    return rvpy_range_new(self, Py_None, Py_None, Py_None, 0, RVPY_KEYS);
}

/* ----------------------------------------------------------- transactions */

/* Parses the keyword-only (optimistic=False, sync=False) of FN, and
** max_attempts=10 if MAX_ATTEMPTS is not NULL, after POSITIONAL
** positional arguments (given in *ARG0 when 1). */
static int db_txn_args(PyObject *args, PyObject *kwargs, const char *fn,
                       int positional, PyObject **arg0, int *flags,
                       int *max_attempts)
{
    static char *names1[] = {"", "optimistic", "sync", "max_attempts", NULL};
    static char *names0[] = {"optimistic", "sync", NULL};
    char format[48];
    int optimistic = 0, sync = 0;
    int ok;
    if (positional) {
        PyOS_snprintf(format, sizeof format, "O|$ppi:%s", fn);
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, format, names1, arg0,
                                         &optimistic, &sync, max_attempts);
    } else {
        PyOS_snprintf(format, sizeof format, "|$pp:%s", fn);
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, format, names0,
                                         &optimistic, &sync);
    }
    if (!ok)
        return -1;
    *flags = (optimistic ? RAVEL_TXN_OPTIMISTIC : 0) | (sync ? RAVEL_SYNC : 0);
    return 0;
}

PyDoc_STRVAR(transaction_doc,
"transaction($self, /, *, optimistic=False, sync=False)\n--\n\n"
"Begins a Transaction: its reads see the database as of now plus its own\n"
"writes, and its writes become visible together when it commits.  In a\n"
"with block it commits when the block ends normally and rolls back if it\n"
"raises.  optimistic: no locks, keys checked at commit (else each key\n"
"read for update or written is locked at once); sync: commit returns once\n"
"durable.  Catch RetriableError (or use transact()) to run it again.");

static PyObject *db_transaction(rvpy_db *self, PyObject *args,
                                PyObject *kwargs)
{
    int flags = 0;
    if (db_txn_args(args, kwargs, "transaction", 0, NULL, &flags, NULL) < 0)
        return NULL;
    return rvpy_txn_begin(self, flags);
}

PyDoc_STRVAR(transact_doc,
"transact($self, fn, /, *, optimistic=False, sync=False, max_attempts=10)\n"
"--\n\n"
"Runs FN(transaction) in a new transaction and commits it; returns what\n"
"FN returned.  On ConflictError, TimedOutError or DeadlockError (raised\n"
"in FN by a transaction call, or by the commit) it rolls back, waits a\n"
"short random time that doubles each try, and runs FN again, at most\n"
"MAX_ATTEMPTS times in all; then the last of those errors is raised.\n"
"Any other exception from FN rolls back and propagates unchanged, not\n"
"retried.  FN may run more than once: it must have no effects outside\n"
"the transaction that a second run would repeat.  (ravel_txn_run, with\n"
"FN called back under the GIL.)");

static PyObject *db_transact(rvpy_db *self, PyObject *args, PyObject *kwargs)
{
    PyObject *fn = NULL;
    int flags = 0, max_attempts = 10;
    if (db_txn_args(args, kwargs, "transact", 1, &fn, &flags,
                    &max_attempts) < 0)
        return NULL;
    return rvpy_txn_transact(self, fn, flags, max_attempts);
}

PyDoc_STRVAR(recover_transaction_doc,
"recover_transaction($self, name, /)\n--\n\n"
"The prepared transaction named NAME (left by a crash, a close, or a\n"
"Transaction closed after prepare()), as a Transaction to commit or roll\n"
"back.  NotFoundError if there is none of that name.");

static PyObject *db_recover_transaction(rvpy_db *self, PyObject *name)
{
    return rvpy_txn_recover(self, name);
}

PyDoc_STRVAR(prepared_transactions_doc,
"prepared_transactions($self, /)\n--\n\n"
"The names of the prepared transactions not yet committed or rolled\n"
"back, as a list of str (the property ravel.prepared-transactions).");

static PyObject *db_prepared_transactions(rvpy_db *self, PyObject *unused)
{
    (void)unused;
    return rvpy_txn_prepared_names(self);
}

/* ------------------------------------------------------------ maintenance */

PyDoc_STRVAR(property_doc,
"property($self, name, /)\n--\n\n"
"Text about the database, e.g. property('ravel.stats'); an unknown name\n"
"raises NotFoundError listing the known ones.");

static PyObject *db_property(rvpy_db *self, PyObject *name_obj)
{
    const char *name = PyUnicode_Check(name_obj)
                           ? PyUnicode_AsUTF8(name_obj) : NULL;
    if (!name) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "property name must be a str");
        return NULL;
    }
    if (rvpy_db_enter(self) < 0)
        return NULL;
    ravel_db *handle = self->handle;
    char msg[RVPY_MSG_SIZE];
    char *text = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_property(handle, name, &text);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(self);
    if (rc)
        return rvpy_raise(rc, msg);
    PyObject *result = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
                                            "replace");
    ravel_free(text);
    return result;
}

/* Which maintenance call db_maintain makes. */
enum maintenance { FLUSH_WAL, FLUSH, VERIFY };

/* Runs one maintenance call without the GIL; ARG is its int argument. */
static PyObject *db_maintain(rvpy_db *self, enum maintenance what, int arg)
{
    if (rvpy_db_enter(self) < 0)
        return NULL;
    ravel_db *handle = self->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    switch (what) {
    case FLUSH_WAL: rc = ravel_flush_wal(handle, arg); break;
    case FLUSH:     rc = ravel_flush(handle, arg); break;
    default:        rc = ravel_verify(handle); break;
    }
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(self);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(flush_wal_doc,
"flush_wal($self, /, sync=False)\n--\n\n"
"Writes ravel's WAL buffer to the file (with manual_wal_flush=True) and,\n"
"with sync, makes every acknowledged write durable.");

static PyObject *db_flush_wal(rvpy_db *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"sync", NULL};
    int sync = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:flush_wal", names, &sync))
        return NULL;
    return db_maintain(self, FLUSH_WAL, sync);
}

PyDoc_STRVAR(flush_doc,
"flush($self, /, wait=True)\n--\n\n"
"Writes the memtables to table files; with wait=False, only starts it.");

static PyObject *db_flush(rvpy_db *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"wait", NULL};
    int wait = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:flush", names, &wait))
        return NULL;
    return db_maintain(self, FLUSH, wait ? 0 : RAVEL_FLUSH_NO_WAIT);
}

PyDoc_STRVAR(verify_doc,
"verify($self, /)\n--\n\n"
"Reads and checks every block of every table file; raises\n"
"CorruptionError naming the first damaged file and offset.");

static PyObject *db_verify(rvpy_db *self, PyObject *unused)
{
    (void)unused;
    return db_maintain(self, VERIFY, 0);
}

PyDoc_STRVAR(compact_range_doc,
"compact_range($self, /, start=None, stop=None)\n--\n\n"
"Compacts the keys from START to STOP, BOTH INCLUDED (ravel's bounds;\n"
"None: from the first key / to the last) down to the last level.");

static PyObject *db_compact_range(rvpy_db *self, PyObject *args,
                                  PyObject *kw)
{
    static char *names[] = {"start", "stop", NULL};
    PyObject *start = Py_None, *stop = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:compact_range", names,
                                     &start, &stop))
        return NULL;
    rvpy_bytes b = {0}, e = {0};
    if (start != Py_None && rvpy_bytes_get(start, &b, "start") < 0)
        return NULL;
    if (stop != Py_None && rvpy_bytes_get(stop, &e, "stop") < 0) {
        rvpy_bytes_release(&b);
        return NULL;
    }
    PyObject *result = NULL;
    if (rvpy_db_enter(self) == 0) {
        ravel_db *handle = self->handle;
        const void *bp = start == Py_None ? NULL : b.ptr;
        const void *ep = stop == Py_None ? NULL : e.ptr;
        char msg[RVPY_MSG_SIZE];
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ravel_compact_range(handle, bp, b.len, ep, e.len);
        if (rc)
            ravel_errmsg_r(msg, sizeof msg);
        Py_END_ALLOW_THREADS
        rvpy_db_leave(self);
        if (rc)
            rvpy_raise(rc, msg);
        else
            result = Py_None;
        Py_XINCREF(result);
    }
    rvpy_bytes_release(&e);
    rvpy_bytes_release(&b);
    return result;
}

/* ------------------------------------------------------------ attributes */

static PyObject *db_get_path(rvpy_db *self, void *closure)
{
    (void)closure;
    if (!self->path)
        Py_RETURN_NONE;
    Py_INCREF(self->path);
    return self->path;
}

static PyObject *db_get_closed(rvpy_db *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle == NULL);
}

static PyObject *db_repr(rvpy_db *self)
{
    return PyUnicode_FromFormat("<ravel.DB %R%s>",
                                self->path ? self->path : Py_None,
                                self->handle ? "" : " closed");
}

static PyGetSetDef db_getset[] = {
    {"path", (getter)db_get_path, NULL, "The database directory.", NULL},
    {"closed", (getter)db_get_closed, NULL, "True once closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef db_methods[] = {
    {"get", (PyCFunction)(void (*)(void))db_get,
     METH_FASTCALL | METH_KEYWORDS, get_doc},
    {"multi_get", (PyCFunction)(void (*)(void))db_multi_get,
     METH_VARARGS | METH_KEYWORDS, multi_get_doc},
    {"put", (PyCFunction)(void (*)(void))db_put,
     METH_FASTCALL | METH_KEYWORDS, put_doc},
    {"delete", (PyCFunction)(void (*)(void))db_delete,
     METH_FASTCALL | METH_KEYWORDS, delete_doc},
    {"delete_range", (PyCFunction)(void (*)(void))rvpy_db_delete_range,
     METH_FASTCALL | METH_KEYWORDS, rvpy_delete_range_doc},
    {"write", (PyCFunction)(void (*)(void))db_write,
     METH_FASTCALL | METH_KEYWORDS, write_doc},
    {"write_batch", (PyCFunction)(void (*)(void))db_write_batch,
     METH_FASTCALL | METH_KEYWORDS, write_batch_doc},
    {"update", (PyCFunction)(void (*)(void))db_update,
     METH_FASTCALL | METH_KEYWORDS, update_doc},
    {"snapshot", (PyCFunction)db_snapshot, METH_NOARGS, snapshot_doc},
    {"iterator", (PyCFunction)(void (*)(void))db_iterator,
     METH_VARARGS | METH_KEYWORDS, iterator_doc},
    {"items", (PyCFunction)(void (*)(void))db_items,
     METH_VARARGS | METH_KEYWORDS, items_doc},
    {"keys", (PyCFunction)(void (*)(void))db_keys,
     METH_VARARGS | METH_KEYWORDS, keys_doc},
    {"values", (PyCFunction)(void (*)(void))db_values,
     METH_VARARGS | METH_KEYWORDS, values_doc},
    {"transaction", (PyCFunction)(void (*)(void))db_transaction,
     METH_VARARGS | METH_KEYWORDS, transaction_doc},
    {"transact", (PyCFunction)(void (*)(void))db_transact,
     METH_VARARGS | METH_KEYWORDS, transact_doc},
    {"recover_transaction", (PyCFunction)db_recover_transaction, METH_O,
     recover_transaction_doc},
    {"prepared_transactions", (PyCFunction)db_prepared_transactions,
     METH_NOARGS, prepared_transactions_doc},
    {"property", (PyCFunction)db_property, METH_O, property_doc},
    {"flush_wal", (PyCFunction)(void (*)(void))db_flush_wal,
     METH_VARARGS | METH_KEYWORDS, flush_wal_doc},
    {"flush", (PyCFunction)(void (*)(void))db_flush,
     METH_VARARGS | METH_KEYWORDS, flush_doc},
    {"compact_range", (PyCFunction)(void (*)(void))db_compact_range,
     METH_VARARGS | METH_KEYWORDS, compact_range_doc},
    {"verify", (PyCFunction)db_verify, METH_NOARGS, verify_doc},
    /* operating a live database: ops.c, feed.c */
    {"catch_up", (PyCFunction)rvpy_db_catch_up, METH_NOARGS,
     rvpy_catch_up_doc},
    {"checkpoint", (PyCFunction)rvpy_db_checkpoint, METH_O,
     rvpy_checkpoint_doc},
    {"backup", (PyCFunction)rvpy_db_backup, METH_O, rvpy_backup_doc},
    {"write_backup", (PyCFunction)rvpy_db_write_backup, METH_O,
     rvpy_write_backup_doc},
    {"ingest", (PyCFunction)(void (*)(void))rvpy_db_ingest,
     METH_VARARGS | METH_KEYWORDS, rvpy_ingest_doc},
    {"updates_since", (PyCFunction)rvpy_db_updates_since, METH_VARARGS,
     rvpy_updates_since_doc},
    {"close", (PyCFunction)db_close_method, METH_NOARGS, close_doc},
    {"__enter__", (PyCFunction)db_enter_ctx, METH_NOARGS, RVPY_ENTER_DOC},
    {"__exit__", (PyCFunction)db_exit_ctx, METH_VARARGS,
     RVPY_EXIT_DOC "Closes the database."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods db_as_mapping = {
    .mp_subscript = (binaryfunc)db_subscript,
    .mp_ass_subscript = (objobjargproc)db_ass_subscript,
};

static PySequenceMethods db_as_sequence = {
    .sq_contains = (objobjproc)db_contains,
};

PyDoc_STRVAR(db_doc,
"DB(path, options=None, *, cache=None, write_controller=None,\n"
"   **option_values)\n--\n\n"
"An open ravel database (ravel.open() is the usual way to make one).\n"
"Keyword arguments are ravel option names (create_if_missing=True,\n"
"write_buffer_size='64M', ...); OPTIONS is an Options object applied\n"
"first; CACHE a Cache and WRITE_CONTROLLER a WriteController to share.\n"
"Keys and values are bytes (any bytes-like object is accepted).");

PyTypeObject rvpy_db_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.DB",
    .tp_basicsize = sizeof(rvpy_db),
    .tp_dealloc = (destructor)db_dealloc,
    .tp_repr = (reprfunc)db_repr,
    .tp_as_sequence = &db_as_sequence,
    .tp_as_mapping = &db_as_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = db_doc,
    .tp_weaklistoffset = offsetof(rvpy_db, weakrefs),
    .tp_iter = (getiterfunc)db_iter,
    .tp_methods = db_methods,
    .tp_getset = db_getset,
    .tp_init = (initproc)db_init,
    .tp_new = db_new,
};
