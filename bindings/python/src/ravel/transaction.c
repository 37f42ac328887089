/*
** transaction.c -- the Transaction type (ravel.h "transactions"): reads
** that see the transaction's snapshot and its own writes, writes,
** iterators, savepoints, two-phase commit, commit and rollback, and the
** with-block protocol; and what DB offers on top: transaction(),
** transact() (ravel_txn_run, the Python function called back under the
** GIL), recover_transaction() and prepared_transactions().
**
** A Transaction is used by one thread at a time, as ravel requires: a
** second thread calling it (or moving one of its iterators) during a call
** gets InvalidArgumentError.  Its iterators are closed when it ends.  A
** Transaction that transact() passes to the function is borrowed:
** ravel_txn_run commits it, so commit, rollback, prepare and close are
** refused on it, and it is unusable once the function returned.
*/
#include "_ravel.h"

#include <string.h>
#include <time.h>

static const char *const txn_state_names[] = {
    [RVPY_TXN_OPEN] = "open",
    [RVPY_TXN_PREPARED] = "prepared",
    [RVPY_TXN_COMMITTED] = "committed",
    [RVPY_TXN_ROLLED_BACK] = "rolled back",
    [RVPY_TXN_CLOSED] = "closed",
};

/* ------------------------------------------------------------ lifetime */

/* Closes SELF's live iterators (GIL held, none of them moving). */
static void txn_close_iters(rvpy_txn *self)
{
    while (self->iters.next != &self->iters) {
        rvpy_child *c = self->iters.next;
        rvpy_db_unlink(c);
        c->release(c);
    }
}

/* Ends SELF's use of its ravel transaction: its iterators closed, then
** the handle freed (ravel_txn_free rolls an open one back and leaves a
** prepared one prepared), unless borrowed.  GIL held, not busy. */
static void txn_free_handle(rvpy_txn *self, enum rvpy_txn_state state)
{
    txn_close_iters(self);
    rvpy_db_unlink(&self->child);
    if (self->handle && !self->borrowed)
        ravel_txn_free(self->handle);
    self->handle = NULL;
    self->state = state;
}

/* The release hook DB.close() calls. */
static void txn_release_child(rvpy_child *c)
{
    rvpy_txn *self = (rvpy_txn *)((char *)c - offsetof(rvpy_txn, child));
    txn_free_handle(self, RVPY_TXN_CLOSED);
}

/* A Transaction object for HANDLE, or NULL with an exception (HANDLE is
** then freed unless BORROWED).  NAME: a str or NULL. */
static rvpy_txn *txn_wrap(rvpy_db *db, ravel_txn *handle,
                          enum rvpy_txn_state state, int borrowed,
                          PyObject *name)
{
    rvpy_txn *self = PyObject_New(rvpy_txn, &rvpy_txn_type);
    if (!self) {
        if (!borrowed)
            ravel_txn_free(handle);
        return NULL;
    }
    self->child.prev = self->child.next = NULL;
    self->child.release = txn_release_child;
    Py_INCREF(db);
    self->db = db;
    self->handle = handle;
    self->state = state;
    self->busy = 0;
    self->borrowed = borrowed;
    Py_XINCREF(name);
    self->name = name;
    self->iters.next = self->iters.prev = &self->iters;
    self->iters.release = NULL;
    self->weakrefs = NULL;
    if (!borrowed)
        rvpy_db_link(db, &self->child);
    return self;
}

static void txn_dealloc(rvpy_txn *self)
{
    if (self->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)self);
    /* its iterators hold references to it: none is left */
    txn_free_handle(self, self->state);
    Py_XDECREF(self->name);
    Py_DECREF(self->db);
    PyObject_Free(self);
}

/* ------------------------------------------------------- call bookkeeping */

/* Raises the error for a transaction that can no longer be used. */
static int txn_raise_unusable(rvpy_txn *self)
{
    if (!self->db->handle)
        rvpy_raise_misuse("the transaction's database is closed");
    else if (self->borrowed)
        rvpy_raise_misuse("the transaction of a transact() run is over "
                          "once its function returned");
    else
        rvpy_raise_misuse("the transaction is %s",
                          txn_state_names[self->state]);
    return -1;
}

/* Admits a call on SELF: open (or prepared), not in use by another
** thread, its database open.  Returns 0 (SELF busy until txn_leave), or
** -1 with InvalidArgumentError. */
static int txn_enter(rvpy_txn *self)
{
    if (!self->handle)
        return txn_raise_unusable(self);
    if (self->busy) {
        rvpy_raise_misuse("the transaction is in use by another thread");
        return -1;
    }
    if (rvpy_db_enter(self->db) < 0)
        return -1;
    self->busy = 1;
    return 0;
}

static void txn_leave(rvpy_txn *self)
{
    self->busy = 0;
    rvpy_db_leave(self->db);
}

int rvpy_txn_iter_enter(rvpy_txn *txn)
{
    if (!txn->handle)
        return txn_raise_unusable(txn);
    if (txn->busy) {
        rvpy_raise_misuse("the transaction is in use by another thread");
        return -1;
    }
    txn->busy = 1;
    return 0;
}

void rvpy_txn_iter_leave(rvpy_txn *txn)
{
    txn->busy = 0;
}

/* ---------------------------------------------------------------- reads */

/* KEY as SELF sees it (FOR_UPDATE: ravel_txn_get_for_update), without the
** GIL.  A new bytes object, or NULL: with an exception on failure, with
** none when the key is absent. */
static PyObject *txn_read(rvpy_txn *self, PyObject *key, int for_update)
{
    rvpy_bytes k;
    if (rvpy_bytes_get(key, &k, "key") < 0)
        return NULL;
    if (txn_enter(self) < 0) {
        rvpy_bytes_release(&k);
        return NULL;
    }
    ravel_txn *t = self->handle;
    char msg[RVPY_MSG_SIZE];
    void *val = NULL;
    size_t vlen = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = for_update ? ravel_txn_get_for_update(t, k.ptr, k.len, &val, &vlen)
                    : ravel_txn_get(t, k.ptr, k.len, &val, &vlen);
    if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    txn_leave(self);
    rvpy_bytes_release(&k);
    if (rc == RAVEL_NOTFOUND)
        return NULL;
    if (rc)
        return rvpy_raise(rc, msg);
    PyObject *value = PyBytes_FromStringAndSize(val, (Py_ssize_t)vlen);
    ravel_free(val);
    return value;
}

/* get() and get_for_update(): the value, or the default. */
static PyObject *txn_get_common(rvpy_txn *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames,
                                int for_update)
{
    PyObject *key, *dflt;
    if (rvpy_get_args(args, nargs, kwnames, &key, &dflt) < 0)
        return NULL;
    PyObject *value = txn_read(self, key, for_update);
    if (value || PyErr_Occurred())
        return value;
    Py_INCREF(dflt);
    return dflt;
}

PyDoc_STRVAR(get_doc,
"get($self, key, /, default=None)\n--\n\n"
"The value of KEY as the transaction sees it (its snapshot and its own\n"
"writes), or DEFAULT if absent.  Locks nothing.");

static PyObject *txn_get(rvpy_txn *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames)
{
    return txn_get_common(self, args, nargs, kwnames, 0);
}

PyDoc_STRVAR(get_for_update_doc,
"get_for_update($self, key, /, default=None)\n--\n\n"
"As get(), and KEY becomes the transaction's: locked now (pessimistic)\n"
"or checked at commit (optimistic).  ConflictError if another wrote it\n"
"after the transaction's snapshot; TimedOutError, DeadlockError from the\n"
"lock wait.  After any of them the transaction is still open.");

static PyObject *txn_get_for_update(rvpy_txn *self, PyObject *const *args,
                                    Py_ssize_t nargs, PyObject *kwnames)
{
    return txn_get_common(self, args, nargs, kwnames, 1);
}

static PyObject *txn_subscript(rvpy_txn *self, PyObject *key)
{
    PyObject *value = txn_read(self, key, 0);
    if (!value && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, key);
    return value;
}

static int txn_contains(rvpy_txn *self, PyObject *key)
{
    PyObject *value = txn_read(self, key, 0);
    if (!value)
        return PyErr_Occurred() ? -1 : 0;
    Py_DECREF(value);
    return 1;
}

/* --------------------------------------------------------------- writes */

/* Puts VALUE at KEY through SELF, or deletes KEY if VALUE is NULL. */
static int txn_write(rvpy_txn *self, PyObject *key, PyObject *value)
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
    if (txn_enter(self) == 0) {
        ravel_txn *t = self->handle;
        Py_BEGIN_ALLOW_THREADS
        rc = value ? ravel_txn_put(t, k.ptr, k.len, v.ptr, v.len)
                   : ravel_txn_delete(t, k.ptr, k.len);
        if (rc)
            ravel_errmsg_r(msg, sizeof msg);
        Py_END_ALLOW_THREADS
        txn_leave(self);
        if (rc)
            rvpy_raise(rc, msg);
    }
    rvpy_bytes_release(&v);
    rvpy_bytes_release(&k);
    return rc ? -1 : 0;
}

static int txn_ass_subscript(rvpy_txn *self, PyObject *key, PyObject *value)
{
    return txn_write(self, key, value);
}

PyDoc_STRVAR(put_doc,
"put($self, key, value, /)\n--\n\n"
"Stores VALUE at KEY in the transaction: seen by its reads at once, by\n"
"others once it commits.  Pessimistic: locks KEY (ConflictError,\n"
"TimedOutError, DeadlockError as get_for_update()).");

static PyObject *txn_put(rvpy_txn *self, PyObject *const *args,
                         Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "put() takes a key and a value");
        return NULL;
    }
    if (txn_write(self, args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(delete_doc,
"delete($self, key, /)\n--\n\n"
"Deletes KEY in the transaction (an absent key is not an error); locks\n"
"it as put() does.");

static PyObject *txn_delete(rvpy_txn *self, PyObject *key)
{
    if (txn_write(self, key, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------- savepoints, control */

/* The calls txn_control makes. */
enum control { SAVEPOINT, ROLLBACK_TO_SAVEPOINT, PREPARE, COMMIT, ROLLBACK };

static const char *const control_names[] = {
    "savepoint", "rollback_to_savepoint", "prepare", "commit", "rollback",
};

/* Runs one control call on SELF without the GIL.  Returns its result code
** (with MSG filled on failure), or -1 with an exception set. */
static int txn_control_call(rvpy_txn *self, enum control op, char *msg)
{
    if (self->borrowed && op >= PREPARE) {
        rvpy_raise_misuse("%s(): transact() commits or rolls back its "
                          "transaction itself: return from the function, or "
                          "raise", control_names[op]);
        return -1;
    }
    if (txn_enter(self) < 0)
        return -1;
    if (op == COMMIT || op == ROLLBACK)
        txn_close_iters(self);  /* ravel wants them freed before the end;
                                ** none is moving: SELF was not busy */
    ravel_txn *t = self->handle;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    switch (op) {
    case SAVEPOINT:             rc = ravel_txn_savepoint(t); break;
    case ROLLBACK_TO_SAVEPOINT: rc = ravel_txn_rollback_to_savepoint(t); break;
    case PREPARE:               rc = ravel_txn_prepare(t); break;
    case COMMIT:                rc = ravel_txn_commit(t); break;
    default:                    rc = ravel_txn_rollback(t); break;
    }
    if (rc)
        ravel_errmsg_r(msg, RVPY_MSG_SIZE);
    Py_END_ALLOW_THREADS
    txn_leave(self);
    return rc;
}

/* Where SELF stands after OP returned RC. */
static void txn_after(rvpy_txn *self, enum control op, int rc)
{
    if (op == PREPARE && rc == RAVEL_OK)
        self->state = RVPY_TXN_PREPARED;
    if (op != COMMIT && op != ROLLBACK)
        return;
    /* a failed commit or rollback of a prepared transaction leaves it
    ** prepared; any other commit or rollback ends it */
    if (rc != RAVEL_OK && self->state == RVPY_TXN_PREPARED)
        return;
    txn_free_handle(self, op == COMMIT && rc == RAVEL_OK
                              ? RVPY_TXN_COMMITTED
                              : RVPY_TXN_ROLLED_BACK);
}

/* Runs OP: None, or NULL with its error raised. */
static PyObject *txn_control(rvpy_txn *self, enum control op)
{
    char msg[RVPY_MSG_SIZE];
    int rc = txn_control_call(self, op, msg);
    if (rc < 0)
        return NULL;
    txn_after(self, op, rc);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(savepoint_doc,
"savepoint($self, /)\n--\n\n"
"Sets a savepoint (they nest): rollback_to_savepoint() undoes the writes\n"
"made after it and releases the locks taken since.");

static PyObject *txn_savepoint(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    return txn_control(self, SAVEPOINT);
}

PyDoc_STRVAR(rollback_to_savepoint_doc,
"rollback_to_savepoint($self, /)\n--\n\n"
"Undoes the writes made since the last savepoint and forgets it;\n"
"NotFoundError if none is set.");

static PyObject *txn_rollback_to_savepoint(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    return txn_control(self, ROLLBACK_TO_SAVEPOINT);
}

PyDoc_STRVAR(prepare_doc,
"prepare($self, /)\n--\n\n"
"The first phase of a two-phase commit (set_name() first): the writes go\n"
"to the WAL and the memtable, invisible to readers, the keys stay locked,\n"
"and the transaction survives a crash (DB.prepared_transactions() lists\n"
"it after a reopen, DB.recover_transaction() gives it back).  Afterwards\n"
"it can be read from, committed or rolled back, not written to.");

static PyObject *txn_prepare(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    return txn_control(self, PREPARE);
}

PyDoc_STRVAR(commit_doc,
"commit($self, /)\n--\n\n"
"Writes everything atomically, or nothing (ConflictError, TimedOutError,\n"
"DeadlockError: run the transaction again).  The transaction is over\n"
"either way, except that a prepared one whose commit failed stays\n"
"prepared.  Its iterators are closed.");

static PyObject *txn_commit(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    return txn_control(self, COMMIT);
}

PyDoc_STRVAR(rollback_doc,
"rollback($self, /)\n--\n\n"
"Discards the writes and releases the locks; a prepared transaction's\n"
"writes become invisible for good (if that fails, it stays prepared).\n"
"Its iterators are closed.");

static PyObject *txn_rollback(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    return txn_control(self, ROLLBACK);
}

PyDoc_STRVAR(close_doc,
"close($self, /)\n--\n\n"
"Frees the transaction: rolls it back if still open; a prepared one\n"
"stays prepared (recover it with DB.recover_transaction()).  Also done\n"
"by DB.close() and when the object is freed.  Twice is harmless.");

static PyObject *txn_close(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    if (self->borrowed && self->handle)
        return rvpy_raise_misuse("close(): transact() ends its transaction "
                                 "itself");
    if (self->busy)
        return rvpy_raise_misuse("the transaction is in use by another "
                                 "thread");
    if (self->handle)
        txn_free_handle(self, RVPY_TXN_CLOSED);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_name_doc,
"set_name($self, name, /)\n--\n\n"
"Names the transaction for two-phase commit: 1 to 255 bytes of UTF-8,\n"
"unique among the database's open and prepared transactions; once,\n"
"before prepare().");

/* The bytes of a transaction name (a str; surrogateescape, so that a name
** read back from prepared_transactions() round-trips): a new bytes object
** without NUL, or NULL with an exception. */
static PyObject *txn_name_bytes(PyObject *name)
{
    if (!PyUnicode_Check(name))
        return PyErr_Format(PyExc_TypeError, "a transaction name must be a "
                            "str, not %.100s", Py_TYPE(name)->tp_name);
    PyObject *b = PyUnicode_AsEncodedString(name, "utf-8", "surrogateescape");
    if (b && strlen(PyBytes_AS_STRING(b)) != (size_t)PyBytes_GET_SIZE(b)) {
        Py_DECREF(b);
        return rvpy_raise_misuse("a transaction name cannot contain a NUL "
                                 "character");
    }
    return b;
}

static PyObject *txn_set_name(rvpy_txn *self, PyObject *name)
{
    PyObject *b = txn_name_bytes(name);
    if (!b)
        return NULL;
    if (txn_enter(self) < 0) {
        Py_DECREF(b);
        return NULL;
    }
    ravel_txn *t = self->handle;
    const char *cname = PyBytes_AS_STRING(b);
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_txn_set_name(t, cname);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    txn_leave(self);
    Py_DECREF(b);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_INCREF(name);
    Py_XSETREF(self->name, name);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ iteration */

PyDoc_STRVAR(iterator_doc,
"iterator($self, /)\n--\n\n"
"A low-level Iterator over the database as the transaction sees it: its\n"
"snapshot with its own writes merged in (a key it writes later is shown\n"
"when reached).  Closed when the transaction ends.");

static PyObject *txn_iterator(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    return rvpy_iter_new_txn(self, NULL, NULL);
}

static PyObject *txn_items(rvpy_txn *self, PyObject *args, PyObject *kw)
{
    return rvpy_range_from_args_txn(self, args, kw, RVPY_ITEMS);
}

static PyObject *txn_keys(rvpy_txn *self, PyObject *args, PyObject *kw)
{
    return rvpy_range_from_args_txn(self, args, kw, RVPY_KEYS);
}

static PyObject *txn_values(rvpy_txn *self, PyObject *args, PyObject *kw)
{
    return rvpy_range_from_args_txn(self, args, kw, RVPY_VALUES);
}

static PyObject *txn_iter(rvpy_txn *self)
{
    PyObject *args = PyTuple_New(0);
    if (!args)
        return NULL;
    PyObject *range = rvpy_range_from_args_txn(self, args, NULL, RVPY_KEYS);
    Py_DECREF(args);
    return range;
}

/* ------------------------------------------------------ with block, attrs */

static PyObject *txn_enter_ctx(rvpy_txn *self, PyObject *unused)
{
    (void)unused;
    if (self->borrowed)
        return rvpy_raise_misuse("a transact() transaction is not a with "
                                 "block's");
    if (!self->handle) {
        txn_raise_unusable(self);
        return NULL;
    }
    Py_INCREF(self);
    return (PyObject *)self;
}

/* Commits on a clean exit, rolls back when the block raised (that
** exception then propagates; a failed rollback's error is raised in its
** place, with the block's as its __context__). */
static PyObject *txn_exit_ctx(rvpy_txn *self, PyObject *args)
{
    PyObject *exc_type = PyTuple_GET_SIZE(args) > 0
                             ? PyTuple_GET_ITEM(args, 0) : Py_None;
    if (!self->handle)
        Py_RETURN_FALSE;  /* ended in the block */
    PyObject *r = txn_control(self, exc_type == Py_None ? COMMIT : ROLLBACK);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *txn_get_name(rvpy_txn *self, void *closure)
{
    (void)closure;
    if (!self->name)
        Py_RETURN_NONE;
    Py_INCREF(self->name);
    return self->name;
}

static PyObject *txn_get_state(rvpy_txn *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(txn_state_names[self->state]);
}

static PyObject *txn_get_db(rvpy_txn *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->db);
    return (PyObject *)self->db;
}

static PyObject *txn_repr(rvpy_txn *self)
{
    if (self->name)
        return PyUnicode_FromFormat("<ravel.Transaction %R %s>", self->name,
                                    txn_state_names[self->state]);
    return PyUnicode_FromFormat("<ravel.Transaction %s>",
                                txn_state_names[self->state]);
}

static PyGetSetDef txn_getset[] = {
    {"name", (getter)txn_get_name, NULL,
     "The name set_name() gave (or recover_transaction() found), or None.",
     NULL},
    {"state", (getter)txn_get_state, NULL,
     "'open', 'prepared', 'committed', 'rolled back' or 'closed' (freed "
     "unfinished: by close(), DB.close(), the end of a transact() run).",
     NULL},
    {"db", (getter)txn_get_db, NULL, "The database.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef txn_methods[] = {
    {"get", (PyCFunction)(void (*)(void))txn_get,
     METH_FASTCALL | METH_KEYWORDS, get_doc},
    {"get_for_update", (PyCFunction)(void (*)(void))txn_get_for_update,
     METH_FASTCALL | METH_KEYWORDS, get_for_update_doc},
    {"put", (PyCFunction)(void (*)(void))txn_put, METH_FASTCALL, put_doc},
    {"delete", (PyCFunction)txn_delete, METH_O, delete_doc},
    {"items", (PyCFunction)(void (*)(void))txn_items,
     METH_VARARGS | METH_KEYWORDS,
     "items($self, /, start=None, stop=None, reverse=False, *, "
     "prefix=None)\n--\n\nAs DB.items(), as the transaction sees the "
     "database (its own writes included)."},
    {"keys", (PyCFunction)(void (*)(void))txn_keys,
     METH_VARARGS | METH_KEYWORDS,
     "keys($self, /, start=None, stop=None, reverse=False, *, prefix=None)"
     "\n--\n\nAs items(), yielding keys."},
    {"values", (PyCFunction)(void (*)(void))txn_values,
     METH_VARARGS | METH_KEYWORDS,
     "values($self, /, start=None, stop=None, reverse=False, *, "
     "prefix=None)\n--\n\nAs items(), yielding values."},
    {"iterator", (PyCFunction)txn_iterator, METH_NOARGS, iterator_doc},
    {"savepoint", (PyCFunction)txn_savepoint, METH_NOARGS, savepoint_doc},
    {"rollback_to_savepoint", (PyCFunction)txn_rollback_to_savepoint,
     METH_NOARGS, rollback_to_savepoint_doc},
    {"set_name", (PyCFunction)txn_set_name, METH_O, set_name_doc},
    {"prepare", (PyCFunction)txn_prepare, METH_NOARGS, prepare_doc},
    {"commit", (PyCFunction)txn_commit, METH_NOARGS, commit_doc},
    {"rollback", (PyCFunction)txn_rollback, METH_NOARGS, rollback_doc},
    {"close", (PyCFunction)txn_close, METH_NOARGS, close_doc},
    {"__enter__", (PyCFunction)txn_enter_ctx, METH_NOARGS, RVPY_ENTER_DOC},
    {"__exit__", (PyCFunction)txn_exit_ctx, METH_VARARGS,
     RVPY_EXIT_DOC "Commits if the block ended normally, rolls back if it "
     "raised."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods txn_as_mapping = {
    .mp_subscript = (binaryfunc)txn_subscript,
    .mp_ass_subscript = (objobjargproc)txn_ass_subscript,
};

static PySequenceMethods txn_as_sequence = {
    .sq_contains = (objobjproc)txn_contains,
};

PyTypeObject rvpy_txn_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.Transaction",
    .tp_basicsize = sizeof(rvpy_txn),
    .tp_dealloc = (destructor)txn_dealloc,
    .tp_repr = (reprfunc)txn_repr,
    .tp_as_sequence = &txn_as_sequence,
    .tp_as_mapping = &txn_as_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A transaction (DB.transaction(), DB.transact(), "
              "DB.recover_transaction()): reads see the database as of its "
              "begin plus its own writes; its writes become visible "
              "together at commit.  One thread at a time.",
    .tp_weaklistoffset = offsetof(rvpy_txn, weakrefs),
    .tp_iter = (getiterfunc)txn_iter,
    .tp_methods = txn_methods,
    .tp_getset = txn_getset,
};

/* ------------------------------------------------------- DB's methods */

PyObject *rvpy_txn_begin(rvpy_db *db, int flags)
{
    if (rvpy_db_enter(db) < 0)
        return NULL;
    ravel_db *handle = db->handle;
    ravel_txn *t = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_txn_begin(handle, flags, &t);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    if (rc)
        return rvpy_raise(rc, msg);
    return (PyObject *)txn_wrap(db, t, RVPY_TXN_OPEN, 0, NULL);
}

PyObject *rvpy_txn_recover(rvpy_db *db, PyObject *name)
{
    PyObject *b = txn_name_bytes(name);
    if (!b)
        return NULL;
    if (rvpy_db_enter(db) < 0) {
        Py_DECREF(b);
        return NULL;
    }
    ravel_db *handle = db->handle;
    const char *cname = PyBytes_AS_STRING(b);
    ravel_txn *t = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_txn_recover(handle, cname, &t);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    Py_DECREF(b);
    if (rc)
        return rvpy_raise(rc, msg);
    return (PyObject *)txn_wrap(db, t, RVPY_TXN_PREPARED, 0, name);
}

PyObject *rvpy_txn_prepared_names(rvpy_db *db)
{
    if (rvpy_db_enter(db) < 0)
        return NULL;
    ravel_db *handle = db->handle;
    char msg[RVPY_MSG_SIZE];
    char *text = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_property(handle, "ravel.prepared-transactions", &text);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    if (rc)
        return rvpy_raise(rc, msg);
    PyObject *names = PyList_New(0);
    for (const char *line = text; names && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (n > 0) {
            PyObject *s = PyUnicode_DecodeUTF8(line, (Py_ssize_t)n,
                                               "surrogateescape");
            if (!s || PyList_Append(names, s) < 0)
                Py_CLEAR(names);
            Py_XDECREF(s);
        }
        line += n + (end ? 1 : 0);
    }
    ravel_free(text);
    return names;
}

/* -------------------------------------------------------------- transact */

/* One transact() call: the function and what its last run left. */
struct transact_run {
    rvpy_db *db;
    PyObject *fn;
    PyObject *result;         /* FN's result, or NULL */
    PyObject *exc_type;       /* ... or the exception it raised */
    PyObject *exc_value;
    PyObject *exc_tb;
    int rc;                   /* what the body returned to ravel */
};

static void transact_clear(struct transact_run *r)
{
    Py_CLEAR(r->result);
    Py_CLEAR(r->exc_type);
    Py_CLEAR(r->exc_value);
    Py_CLEAR(r->exc_tb);
}

/* Takes the exception being raised into R. */
static void transact_fetch(struct transact_run *r)
{
#if PY_VERSION_HEX >= 0x030C0000
    r->exc_value = PyErr_GetRaisedException();
    r->exc_type = r->exc_value ? Py_NewRef(Py_TYPE(r->exc_value)) : NULL;
#else
    PyErr_Fetch(&r->exc_type, &r->exc_value, &r->exc_tb);
#endif
}

/* Raises R's exception again, as it was. */
static void transact_restore(struct transact_run *r)
{
#if PY_VERSION_HEX >= 0x030C0000
    Py_CLEAR(r->exc_type);
    PyErr_SetRaisedException(r->exc_value);
#else
    PyErr_Restore(r->exc_type, r->exc_value, r->exc_tb);
#endif
    r->exc_type = r->exc_value = r->exc_tb = NULL;
}

/* Waits, without the GIL, until no call is in progress on SELF (another
** thread given the borrowed transaction, against the rules): ravel_txn_run
** frees it next. */
static void txn_wait_idle(rvpy_txn *self)
{
    while (self->busy) {
        Py_BEGIN_ALLOW_THREADS
        struct timespec pause = {0, 200 * 1000};
        nanosleep(&pause, NULL);
        Py_END_ALLOW_THREADS
    }
}

/* The ravel_txn_fn of transact(): calls FN(transaction) under the GIL.
** A retriable exception (ConflictError, ...) returns its code, so that
** ravel_txn_run runs FN again; any other exception returns RAVEL_INVALID,
** which ravel_txn_run does not retry, and transact() raises it as it is. */
static int transact_body(ravel_txn *t, void *arg)
{
    struct transact_run *r = arg;
    PyGILState_STATE gil = PyGILState_Ensure();
    transact_clear(r);
    rvpy_txn *tx = txn_wrap(r->db, t, RVPY_TXN_OPEN, 1, NULL);
    if (tx)
        r->result = PyObject_CallOneArg(r->fn, (PyObject *)tx);
    r->rc = RAVEL_OK;
    if (!r->result) {
        transact_fetch(r);
        int code = r->exc_type ? rvpy_retriable_code(r->exc_type) : 0;
        r->rc = code ? code : RAVEL_INVALID;
    }
    if (tx) {
        txn_wait_idle(tx);
        txn_free_handle(tx, RVPY_TXN_CLOSED);  /* borrowed: not freed */
        Py_DECREF(tx);
    }
    PyGILState_Release(gil);
    return r->rc;
}

PyObject *rvpy_txn_transact(rvpy_db *db, PyObject *fn, int flags,
                            int max_attempts)
{
    if (!PyCallable_Check(fn))
        return PyErr_Format(PyExc_TypeError, "transact() takes a function, "
                            "not %.100s", Py_TYPE(fn)->tp_name);
    if (max_attempts < 1)
        return rvpy_raise_misuse("transact(): max_attempts is %d (at least "
                                 "1)", max_attempts);
    if (rvpy_db_enter(db) < 0)
        return NULL;
    struct transact_run r = {db, fn, NULL, NULL, NULL, NULL, RAVEL_OK};
    ravel_db *handle = db->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_txn_run(handle, flags, transact_body, &r, max_attempts);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    if (rc == RAVEL_OK) {
        PyObject *result = r.result;
        r.result = NULL;
        transact_clear(&r);
        return result;
    }
    if (r.exc_type && rc == r.rc) {
        /* the function's own exception, unchanged */
        transact_restore(&r);
        transact_clear(&r);
        return NULL;
    }
    transact_clear(&r);
    return rvpy_raise(rc, msg);  /* begin or commit failed */
}
