/*
** module.c -- the module ravel._ravel: its initialisation, the exception
** classes (one per ravel result code), and the small argument helpers the
** other files share (byte strings, write flags).
*/
#include "_ravel.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* --------------------------------------------------------------- errors */

/* The exception class of each result code; [0] is ravel.Error itself. */
static PyObject *error_classes[RAVEL_EXPIRED + 1];

/* RetriableError: the base of the classes of the retriable codes
** (RAVEL_CONFLICT, RAVEL_TIMEDOUT, RAVEL_DEADLOCK). */
static PyObject *retriable_class;

/* DatabaseNotFoundError: the InvalidArgumentError of an open that found
** no database (create_if_missing false), also a FileNotFoundError. */
static PyObject *database_not_found_class;

struct error_spec {
    int code;
    const char *name;       /* the class name in module ravel */
    const char *doc;
};

static const struct error_spec error_specs[] = {
    {RAVEL_NOTFOUND, "NotFoundError",
     "A name is unknown (RAVEL_NOTFOUND), e.g. DB.property('no.such').  "
     "Also a KeyError.  A missing key is not an error: db[key] raises a "
     "plain KeyError and db.get() returns the default."},
    {RAVEL_INVALID, "InvalidArgumentError",
     "A bad argument, a bad option, or misuse such as a call on a closed "
     "database (RAVEL_INVALID).  Also a ValueError."},
    {RAVEL_IOERR, "DiskIOError",
     "An I/O call failed (RAVEL_IOERR); the message names the file and "
     "the errno.  Also an OSError."},
    {RAVEL_CORRUPT, "CorruptionError",
     "A file failed a checksum or format check (RAVEL_CORRUPT)."},
    {RAVEL_NOMEM, "NoMemoryError",
     "ravel could not allocate memory (RAVEL_NOMEM)."},
    {RAVEL_BUSY, "BusyError",
     "The write would have had to wait and no_slowdown=True was given "
     "(RAVEL_BUSY)."},
    {RAVEL_LOCKED, "LockedError",
     "The database directory is open elsewhere, in this process or "
     "another (RAVEL_LOCKED)."},
    {RAVEL_READONLY, "ReadOnlyError",
     "Writes are refused: the database was opened read_only, or an earlier "
     "failure stopped writes (RAVEL_READONLY).  Reads still work."},
    {RAVEL_CONFLICT, "ConflictError",
     "A key the transaction read for update or wrote was written by "
     "another after the transaction's snapshot (RAVEL_CONFLICT): roll back "
     "and run the transaction again.  A RetriableError."},
    {RAVEL_TIMEDOUT, "TimedOutError",
     "A pessimistic transaction waited for a key's lock longer than the "
     "option txn_lock_timeout (RAVEL_TIMEDOUT); the message names the key "
     "and the holder.  A RetriableError."},
    {RAVEL_DEADLOCK, "DeadlockError",
     "The transaction was the youngest in a cycle of lock waits and was "
     "chosen to fail (RAVEL_DEADLOCK); the message names the key and the "
     "other transaction.  A RetriableError."},
    {RAVEL_EXPIRED, "ExpiredError",
     "The change feed: the sequence asked for is no longer in the WAL "
     "(flushed and deleted, or past the retention options "
     "wal_ttl_seconds / wal_size_limit_mb); the message names the oldest "
     "available (RAVEL_EXPIRED).  Start the follower again from a "
     "checkpoint."},
};

/* 1 for the codes after which running the transaction again may
** succeed (ravel.h). */
static int code_is_retriable(int code)
{
    return code == RAVEL_CONFLICT || code == RAVEL_TIMEDOUT
           || code == RAVEL_DEADLOCK;
}

/* The builtin exception a subclass also derives from, or NULL. */
static PyObject *error_builtin_base(int code)
{
    switch (code) {
    case RAVEL_NOTFOUND: return PyExc_KeyError;
    case RAVEL_INVALID:  return PyExc_ValueError;
    case RAVEL_IOERR:    return PyExc_OSError;
    default:             return NULL;
    }
}

/* PyModule_AddObject with a reference of its own (PyModule_AddObjectRef
** needs Python 3.10). */
static int module_add(PyObject *module, const char *name, PyObject *o)
{
    Py_INCREF(o);
    if (PyModule_AddObject(module, name, o) < 0) {
        Py_DECREF(o);
        return -1;
    }
    return 0;
}

static PyObject *error_new_class(const char *name, const char *doc,
                                 PyObject *bases, int code)
{
    char qualified[64];
    PyOS_snprintf(qualified, sizeof qualified, "ravel.%s", name);
    PyObject *dict = PyDict_New();
    if (!dict)
        return NULL;
    PyObject *code_obj = code ? PyLong_FromLong(code) : Py_None;
    if (!code)
        Py_INCREF(Py_None);
    if (!code_obj || PyDict_SetItemString(dict, "code", code_obj) < 0) {
        Py_XDECREF(code_obj);
        Py_DECREF(dict);
        return NULL;
    }
    Py_DECREF(code_obj);
    /* str(error) is the message, even where a builtin base (KeyError)
    ** would show its repr */
    PyObject *str = PyObject_GetAttrString(PyExc_BaseException, "__str__");
    if (!str || PyDict_SetItemString(dict, "__str__", str) < 0) {
        Py_XDECREF(str);
        Py_DECREF(dict);
        return NULL;
    }
    Py_DECREF(str);
    PyObject *cls = PyErr_NewExceptionWithDoc(qualified, doc, bases, dict);
    Py_DECREF(dict);
    return cls;
}

/* Creates DatabaseNotFoundError(InvalidArgumentError, FileNotFoundError). */
static int database_not_found_init(PyObject *module)
{
    PyObject *bases = PyTuple_Pack(2, error_classes[RAVEL_INVALID],
                                   PyExc_FileNotFoundError);
    if (!bases)
        return -1;
    PyObject *cls = error_new_class(
        "DatabaseNotFoundError",
        "The directory holds no database (or does not exist) and "
        "create_if_missing is false.  An InvalidArgumentError (the code is "
        "RAVEL_INVALID, as ravel returns) and a FileNotFoundError: .errno "
        "is errno.ENOENT and .filename the path given to open().",
        bases, RAVEL_INVALID);
    Py_DECREF(bases);
    if (!cls || module_add(module, "DatabaseNotFoundError", cls) < 0)
        return -1;
    database_not_found_class = cls;
    return 0;
}

int rvpy_errors_init(PyObject *module)
{
    PyObject *base = error_new_class(
        "Error",
        "Base class of every error ravel reports.  .code is the ravel "
        "result code (an int), .message the detailed message ravel gave "
        "(also str(error)).",
        PyExc_Exception, 0);
    if (!base || module_add(module, "Error", base) < 0)
        return -1;
    error_classes[0] = base;
    retriable_class = error_new_class(
        "RetriableError",
        "Base class of the errors after which running the transaction "
        "again may succeed: ConflictError, TimedOutError, DeadlockError.  "
        "The transaction is still open after one (roll it back); "
        "DB.transact() retries on them.",
        base, 0);
    if (!retriable_class
        || module_add(module, "RetriableError", retriable_class) < 0)
        return -1;
    for (size_t i = 0; i < sizeof error_specs / sizeof error_specs[0]; i++) {
        const struct error_spec *s = &error_specs[i];
        PyObject *builtin = error_builtin_base(s->code);
        PyObject *first = code_is_retriable(s->code) ? retriable_class : base;
        PyObject *bases = builtin ? PyTuple_Pack(2, first, builtin)
                                  : PyTuple_Pack(1, first);
        if (!bases)
            return -1;
        PyObject *cls = error_new_class(s->name, s->doc, bases, s->code);
        Py_DECREF(bases);
        if (!cls || module_add(module, s->name, cls) < 0)
            return -1;
        error_classes[s->code] = cls;
    }
    return database_not_found_init(module);
}

static PyObject *error_class(int rc)
{
    if (rc > 0 && rc <= RAVEL_EXPIRED && error_classes[rc])
        return error_classes[rc];
    return error_classes[0];
}

/* Sets .code and .message on a new exception instance. */
static int error_set_fields(PyObject *exc, int rc, PyObject *text)
{
    PyObject *code = PyLong_FromLong(rc);
    if (!code)
        return -1;
    int r = PyObject_SetAttrString(exc, "code", code);
    Py_DECREF(code);
    if (r == 0)
        r = PyObject_SetAttrString(exc, "message", text);
    return r;
}

int rvpy_retriable_code(PyObject *exc_type)
{
    for (int code = RAVEL_CONFLICT; code <= RAVEL_DEADLOCK; code++)
        if (PyErr_GivenExceptionMatches(exc_type, error_classes[code]))
            return code;
    return 0;
}

PyObject *rvpy_raise(int rc, const char *msg)
{
    if (!msg || !*msg)
        msg = ravel_errstr(rc);
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg),
                                          "replace");
    if (!text)
        return NULL;
    PyObject *cls = error_class(rc);
    PyObject *exc = PyObject_CallOneArg(cls, text);
    if (exc && error_set_fields(exc, rc, text) == 0)
        PyErr_SetObject(cls, exc);
    Py_XDECREF(exc);
    Py_DECREF(text);
    return NULL;
}

/* ravel_open has no result code of its own for "no database here": it
** returns RAVEL_INVALID, as for a bad combination of options, and its two
** messages for it (a missing directory, a directory without a database)
** both end "create_if_missing is false)".  The phrase tells them apart;
** test_errors.py fails if ravel rewords it. */
static int open_found_no_database(int rc, const char *msg)
{
    return rc == RAVEL_INVALID && msg
           && strstr(msg, "create_if_missing is false") != NULL;
}

PyObject *rvpy_raise_open(int rc, const char *msg, PyObject *path)
{
    if (!open_found_no_database(rc, msg))
        return rvpy_raise(rc, msg);
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg),
                                          "replace");
    if (!text)
        return NULL;
    PyObject *exc = PyObject_CallOneArg(database_not_found_class, text);
    PyObject *err = exc ? PyLong_FromLong(ENOENT) : NULL;
    if (err && error_set_fields(exc, rc, text) == 0
        && PyObject_SetAttrString(exc, "errno", err) == 0
        && PyObject_SetAttrString(exc, "strerror", text) == 0
        && PyObject_SetAttrString(exc, "filename", path) == 0)
        PyErr_SetObject(database_not_found_class, exc);
    Py_XDECREF(err);
    Py_XDECREF(exc);
    Py_DECREF(text);
    return NULL;
}

PyObject *rvpy_raise_misuse(const char *format, ...)
{
    char msg[RVPY_MSG_SIZE];
    va_list ap;
    va_start(ap, format);
    PyOS_vsnprintf(msg, sizeof msg, format, ap);
    va_end(ap);
    return rvpy_raise(RAVEL_INVALID, msg);
}

/* ------------------------------------------------------------ arguments */

int rvpy_bytes_get(PyObject *o, rvpy_bytes *out, const char *what)
{
    if (PyBytes_Check(o)) {
        out->ptr = PyBytes_AS_STRING(o);
        out->len = (size_t)PyBytes_GET_SIZE(o);
        out->has_view = 0;
        return 0;
    }
    if (PyUnicode_Check(o) || !PyObject_CheckBuffer(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes-like, not %.100s",
                     what, Py_TYPE(o)->tp_name);
        return -1;
    }
    if (PyObject_GetBuffer(o, &out->view, PyBUF_SIMPLE) < 0)
        return -1;
    out->ptr = out->view.buf;
    out->len = (size_t)out->view.len;
    out->has_view = 1;
    return 0;
}

void rvpy_bytes_release(rvpy_bytes *b)
{
    if (b->has_view) {
        PyBuffer_Release(&b->view);
        b->has_view = 0;
    }
}

PyObject *rvpy_bytes_copy(PyObject *o, const char *what)
{
    if (PyBytes_CheckExact(o)) {
        Py_INCREF(o);
        return o;
    }
    rvpy_bytes b;
    if (rvpy_bytes_get(o, &b, what) < 0)
        return NULL;
    PyObject *copy = PyBytes_FromStringAndSize(b.ptr, (Py_ssize_t)b.len);
    rvpy_bytes_release(&b);
    return copy;
}

int rvpy_get_args(PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames, PyObject **key, PyObject **dflt)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs < 1 || nargs + nkw > 2) {
        PyErr_SetString(PyExc_TypeError, "get() takes a key and an optional "
                        "default");
        return -1;
    }
    if (nkw == 1 && PyUnicode_CompareWithASCIIString(
                        PyTuple_GET_ITEM(kwnames, 0), "default") != 0) {
        PyErr_Format(PyExc_TypeError, "get() got an unexpected keyword "
                     "argument '%U'", PyTuple_GET_ITEM(kwnames, 0));
        return -1;
    }
    *key = args[0];
    *dflt = nargs + nkw == 2 ? args[1] : Py_None;
    return 0;
}

/* The flag bit of write keyword NAME, or 0 if it is not one. */
static int write_flag_of(PyObject *name)
{
    if (PyUnicode_CompareWithASCIIString(name, "sync") == 0)
        return RAVEL_SYNC;
    if (PyUnicode_CompareWithASCIIString(name, "disable_wal") == 0)
        return RAVEL_NO_WAL;
    if (PyUnicode_CompareWithASCIIString(name, "no_slowdown") == 0)
        return RAVEL_NO_SLOWDOWN;
    return 0;
}

int rvpy_write_flags(PyObject *const *kwvalues, PyObject *kwnames,
                     const char *fn, int *flags)
{
    Py_ssize_t n = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        int bit = write_flag_of(name);
        if (!bit) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword "
                         "argument '%U'", fn, name);
            return -1;
        }
        int on = PyObject_IsTrue(kwvalues[i]);
        if (on < 0)
            return -1;
        if (on)
            *flags |= bit;
        else
            *flags &= ~bit;
    }
    return 0;
}

/* --------------------------------------------------------------- module */

static int add_type(PyObject *module, PyTypeObject *type, const char *name)
{
    if (PyType_Ready(type) < 0)
        return -1;
    if (!name)
        return 0;
    return module_add(module, name, (PyObject *)type);
}

static int add_result_codes(PyObject *module)
{
    static const struct { const char *name; int code; } codes[] = {
        {"OK", RAVEL_OK}, {"NOTFOUND", RAVEL_NOTFOUND},
        {"INVALID", RAVEL_INVALID}, {"IOERR", RAVEL_IOERR},
        {"CORRUPT", RAVEL_CORRUPT}, {"NOMEM", RAVEL_NOMEM},
        {"BUSY", RAVEL_BUSY}, {"LOCKED", RAVEL_LOCKED},
        {"READONLY", RAVEL_READONLY}, {"CONFLICT", RAVEL_CONFLICT},
        {"TIMEDOUT", RAVEL_TIMEDOUT}, {"DEADLOCK", RAVEL_DEADLOCK},
        {"EXPIRED", RAVEL_EXPIRED},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (PyModule_AddIntConstant(module, codes[i].name, codes[i].code) < 0)
            return -1;
    return 0;
}

static int add_versions(PyObject *module)
{
    if (PyModule_AddStringConstant(module, "lib_version",
                                   ravel_libversion()) < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "lib_version_number",
                                ravel_libversion_number()) < 0)
        return -1;
    /* the header the extension was compiled against */
    return PyModule_AddStringConstant(module, "header_version",
                                      RAVEL_VERSION);
}

PyDoc_STRVAR(errstr_doc,
"errstr(code, /)\n--\n\n"
"ravel's static English description of a result code.");

static PyObject *module_errstr(PyObject *module, PyObject *arg)
{
    (void)module;
    long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(ravel_errstr((int)code));
}

static PyMethodDef module_methods[] = {
    {"errstr", module_errstr, METH_O, errstr_doc},
    {"destroy", rvpy_destroy, METH_O, rvpy_destroy_doc},
    /* operating a live database: ops.c */
    {"backup_list", rvpy_backup_list, METH_O, rvpy_backup_list_doc},
    {"backup_info", rvpy_backup_info, METH_VARARGS, rvpy_backup_info_doc},
    {"backup_verify", rvpy_backup_verify, METH_VARARGS,
     rvpy_backup_verify_doc},
    {"backup_restore", rvpy_backup_restore, METH_VARARGS,
     rvpy_backup_restore_doc},
    {"backup_purge", rvpy_backup_purge, METH_VARARGS, rvpy_backup_purge_doc},
    {"restore_backup", rvpy_restore_backup, METH_VARARGS,
     rvpy_restore_backup_doc},
    {"repair", (PyCFunction)(void (*)(void))rvpy_repair,
     METH_VARARGS | METH_KEYWORDS, rvpy_repair_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "ravel._ravel",
    "The C extension behind the ravel package; import ravel instead.",
    -1,
    module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ravel(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (rvpy_errors_init(m) < 0
        || add_type(m, &rvpy_db_type, "DB") < 0
        || add_type(m, &rvpy_snapshot_type, "Snapshot") < 0
        || add_type(m, &rvpy_iter_type, "Iterator") < 0
        || add_type(m, &rvpy_range_type, "RangeIterator") < 0
        || add_type(m, &rvpy_batch_type, "Batch") < 0
        || add_type(m, &rvpy_txn_type, "Transaction") < 0
        || add_type(m, &rvpy_options_type, "Options") < 0
        || add_type(m, &rvpy_cache_type, "Cache") < 0
        || add_type(m, &rvpy_write_controller_type, "WriteController") < 0
        || add_type(m, &rvpy_updates_type, "Updates") < 0
        || add_type(m, &rvpy_sst_writer_type, "SstWriter") < 0
        || add_result_codes(m) < 0
        || add_versions(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
