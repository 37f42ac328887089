/*
** ops.c -- operating a live database (issue 22): a reader's catch-up,
** checkpoints, incremental and one-file backups, bulk ingest with the
** SstWriter type, and repair.  The change feed is feed.c's.  Every ravel
** call here runs with the GIL released; the DB methods register the call
** (rvpy_db_enter) as db.c's do.
*/
#include "_ravel.h"

#include <string.h>

/* ------------------------------------------------------------ helpers */

/* The file-system path O (str, bytes or os.PathLike) as a new bytes
** object, or NULL with TypeError. */
static PyObject *ops_path(PyObject *o)
{
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(o, &bytes))
        return NULL;
    return bytes;
}

/* 1 if O stands for a file descriptor (an int, or an object with
** fileno()), 0 if it is a path. */
static int ops_is_fd(PyObject *o)
{
    return PyLong_Check(o) || (!PyUnicode_Check(o) && !PyBytes_Check(o)
                               && PyObject_HasAttrString(o, "fileno"));
}

/* Flushes the Python-level buffer of a file object O (if it has one) so
** that what it holds reaches the descriptor before ravel writes to it. */
static int ops_flush_file(PyObject *o)
{
    if (PyLong_Check(o) || !PyObject_HasAttrString(o, "flush"))
        return 0;
    PyObject *r = PyObject_CallMethod(o, "flush", NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

typedef int (*ops_db_path_fn)(ravel_db *db, const char *path);
typedef int (*ops_db_fd_fn)(ravel_db *db, int fd);

/* Calls FN(DB's handle, PATH) without the GIL. */
static PyObject *ops_db_path_call(rvpy_db *db, PyObject *path_arg,
                                  ops_db_path_fn fn)
{
    PyObject *path = ops_path(path_arg);
    if (!path)
        return NULL;
    if (rvpy_db_enter(db) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    ravel_db *handle = db->handle;
    const char *p = PyBytes_AS_STRING(path);
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fn(handle, p);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(db);
    Py_DECREF(path);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

/* ------------------------------------------------- readers: catch-up */

const char rvpy_catch_up_doc[] =
"catch_up($self, /)\n--\n\n"
"On a database opened with read_only=True (a reader beside a writer in\n"
"another process): catches up with the writer, so reads see every write\n"
"it had acknowledged before the call.  Snapshots and iterators taken\n"
"before keep their state.  A no-op on a writer.  BusyError if the writer\n"
"kept moving its log; CorruptionError / DiskIOError naming the file\n"
"(the reader keeps its previous state then).  The option\n"
"catch_up_interval_ms makes a thread of the handle do it by itself;\n"
"DB.property('ravel.reader-lag') reports how far behind it is.";

static int ops_catch_up(ravel_db *db, const char *unused)
{
    (void)unused;
    return ravel_catch_up(db);
}

PyObject *rvpy_db_catch_up(rvpy_db *self, PyObject *unused)
{
    (void)unused;
    PyObject *none = PyUnicode_FromString("");
    if (!none)
        return NULL;
    PyObject *r = ops_db_path_call(self, none, ops_catch_up);
    Py_DECREF(none);
    return r;
}

/* ------------------------------------------- checkpoints and backups */

const char rvpy_checkpoint_doc[] =
"checkpoint($self, path, /)\n--\n\n"
"Makes PATH (which must not exist) a database holding this one's state\n"
"at one moment during the call: table files hard-linked where PATH is\n"
"on the same file system, copied where not; everything fsynced before\n"
"it returns.  PATH opens as a database (ravel.open(path)).  On a\n"
"reader (read_only=True, beside a writer in another process) it catches\n"
"up first, then copies what the reader reads, writing nothing into the\n"
"database's directory (so does backup() and write_backup()).";

PyObject *rvpy_db_checkpoint(rvpy_db *self, PyObject *path)
{
    return ops_db_path_call(self, path, ravel_checkpoint);
}

const char rvpy_backup_doc[] =
"backup($self, root, /)\n--\n\n"
"Takes an incremental backup into the backup root ROOT (created if\n"
"missing) and returns its id (1, 2, ...).  Table files already in ROOT\n"
"are shared, not copied again.  LockedError if another backup or purge\n"
"of ROOT is running.  See ravel.backup_list(), backup_info(),\n"
"backup_verify(), backup_restore(), backup_purge().";

PyObject *rvpy_db_backup(rvpy_db *self, PyObject *root_arg)
{
    PyObject *root = ops_path(root_arg);
    if (!root)
        return NULL;
    if (rvpy_db_enter(self) < 0) {
        Py_DECREF(root);
        return NULL;
    }
    ravel_db *handle = self->handle;
    const char *r = PyBytes_AS_STRING(root);
    char msg[RVPY_MSG_SIZE];
    uint64_t id = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_backup_create(handle, r, &id);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(self);
    Py_DECREF(root);
    if (rc)
        return rvpy_raise(rc, msg);
    return PyLong_FromUnsignedLongLong(id);
}

const char rvpy_write_backup_doc[] =
"write_backup($self, target, /)\n--\n\n"
"Writes a full backup as one checksummed file.  TARGET is a path (which\n"
"must not exist: written to TARGET.partial, fsynced, renamed), or an\n"
"open file: an int file descriptor or an object with fileno() (a pipe,\n"
"a socket, sys.stdout.buffer), which is flushed first and neither\n"
"closed nor fsynced.  A reader that goes away is DiskIOError (EPIPE).\n"
"ravel.restore_backup() restores it.";

PyObject *rvpy_db_write_backup(rvpy_db *self, PyObject *target)
{
    if (!ops_is_fd(target))
        return ops_db_path_call(self, target, ravel_backup_write_file);
    int fd = PyObject_AsFileDescriptor(target);
    if (fd < 0 || ops_flush_file(target) < 0 || rvpy_db_enter(self) < 0)
        return NULL;
    ravel_db *handle = self->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_backup_write_fd(handle, fd);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(self);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

/* Module functions on a backup root; ROOT is a bytes path. */

const char rvpy_backup_list_doc[] =
"backup_list(root, /)\n--\n\n"
"The ids of the complete backups in ROOT, oldest first (those whose\n"
"meta file verifies).  NotFoundError if ROOT is not a backup root.";

static int ops_list_one(void *ctx, uint64_t id)
{
    /* called by ravel_backup_list on the calling thread, GIL held */
    PyObject *n = PyLong_FromUnsignedLongLong(id);
    if (!n || PyList_Append((PyObject *)ctx, n) < 0) {
        Py_XDECREF(n);
        return -1;
    }
    Py_DECREF(n);
    return 0;
}

PyObject *rvpy_backup_list(PyObject *module, PyObject *root_arg)
{
    (void)module;
    PyObject *root = ops_path(root_arg);
    PyObject *ids = root ? PyList_New(0) : NULL;
    if (!ids) {
        Py_XDECREF(root);
        return NULL;
    }
    char msg[RVPY_MSG_SIZE];
    /* no GIL release: the callback appends to a list (reading the meta
    ** files is short) */
    int rc = ravel_backup_list(PyBytes_AS_STRING(root), ops_list_one, ids);
    if (rc > 0)
        ravel_errmsg_r(msg, sizeof msg);
    Py_DECREF(root);
    if (rc < 0 || PyErr_Occurred()) {
        Py_DECREF(ids);
        return NULL;
    }
    if (rc) {
        Py_DECREF(ids);
        return rvpy_raise(rc, msg);
    }
    return ids;
}

const char rvpy_backup_info_doc[] =
"backup_info(root, id, /)\n--\n\n"
"What backup ID of ROOT holds, from its meta file, as a dict of ints:\n"
"time (seconds since 1970), sequence (the last one it holds), bytes (of\n"
"all its files), copied (bytes it copied when taken; the rest it shares\n"
"with older backups), files.  NotFoundError if there is no complete\n"
"backup ID; CorruptionError if its meta file is damaged.";

PyObject *rvpy_backup_info(PyObject *module, PyObject *args)
{
    (void)module;
    static const struct { const char *name; int what; } fields[] = {
        {"time", RAVEL_BACKUP_TIME}, {"sequence", RAVEL_BACKUP_SEQUENCE},
        {"bytes", RAVEL_BACKUP_BYTES}, {"copied", RAVEL_BACKUP_COPIED},
        {"files", RAVEL_BACKUP_FILES},
    };
    PyObject *root = NULL;
    unsigned long long id;
    if (!PyArg_ParseTuple(args, "O&K:backup_info", PyUnicode_FSConverter,
                          &root, &id))
        return NULL;
    PyObject *info = PyDict_New();
    for (size_t i = 0; info && i < sizeof fields / sizeof fields[0]; i++) {
        char msg[RVPY_MSG_SIZE];
        uint64_t value = 0;
        int rc = ravel_backup_info(PyBytes_AS_STRING(root), id,
                                   fields[i].what, &value);
        PyObject *v = NULL;
        if (rc) {
            ravel_errmsg_r(msg, sizeof msg);
            rvpy_raise(rc, msg);
        } else {
            v = PyLong_FromUnsignedLongLong(value);
        }
        if (!v || PyDict_SetItemString(info, fields[i].name, v) < 0)
            Py_CLEAR(info);
        Py_XDECREF(v);
    }
    Py_DECREF(root);
    return info;
}

const char rvpy_backup_verify_doc[] =
"backup_verify(root, id, /)\n--\n\n"
"Reads every file of backup ID of ROOT and checks its size and checksum:\n"
"CorruptionError naming the first file missing, short or damaged;\n"
"NotFoundError if there is no backup ID.";

const char rvpy_backup_restore_doc[] =
"backup_restore(root, id, path, /)\n--\n\n"
"Restores backup ID of ROOT (0: the newest complete one) into PATH,\n"
"which must not exist; every file is checked as it is copied.  A backup\n"
"that fails a check raises CorruptionError and leaves no PATH.";

const char rvpy_backup_purge_doc[] =
"backup_purge(root, keep, /)\n--\n\n"
"Deletes all but the KEEP (>= 1) newest complete backups of ROOT, the\n"
"shared files no remaining backup names, and what a crashed backup\n"
"left.";

/* The three calls of (root, number[, path]) without the GIL. */
enum ops_root_call { OPS_VERIFY, OPS_RESTORE, OPS_PURGE };

static PyObject *ops_root_call(PyObject *args, enum ops_root_call what)
{
    PyObject *root = NULL, *dir = NULL;
    unsigned long long n;
    int ok = what == OPS_RESTORE
        ? PyArg_ParseTuple(args, "O&KO&:backup_restore",
                           PyUnicode_FSConverter, &root, &n,
                           PyUnicode_FSConverter, &dir)
        : PyArg_ParseTuple(args, what == OPS_VERIFY ? "O&K:backup_verify"
                                                    : "O&K:backup_purge",
                           PyUnicode_FSConverter, &root, &n);
    if (!ok)
        return NULL;
    if (what == OPS_PURGE && n > 0x7fffffffULL) {
        Py_DECREF(root);
        return rvpy_raise_misuse("backup_purge: keep %llu is too large", n);
    }
    const char *r = PyBytes_AS_STRING(root);
    const char *d = dir ? PyBytes_AS_STRING(dir) : NULL;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = what == OPS_VERIFY    ? ravel_backup_verify(r, n)
         : what == OPS_RESTORE ? ravel_backup_restore(r, n, d)
                               : ravel_backup_purge(r, (int)n);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    Py_DECREF(root);
    Py_XDECREF(dir);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

PyObject *rvpy_backup_verify(PyObject *module, PyObject *args)
{
    (void)module;
    return ops_root_call(args, OPS_VERIFY);
}

PyObject *rvpy_backup_restore(PyObject *module, PyObject *args)
{
    (void)module;
    return ops_root_call(args, OPS_RESTORE);
}

PyObject *rvpy_backup_purge(PyObject *module, PyObject *args)
{
    (void)module;
    return ops_root_call(args, OPS_PURGE);
}

const char rvpy_restore_backup_doc[] =
"restore_backup(source, path, /)\n--\n\n"
"Restores a one-file backup (DB.write_backup()) into PATH, which must\n"
"not exist.  SOURCE is the backup's path, or an open file (an int file\n"
"descriptor or an object with fileno(), a pipe too) read to the backup's\n"
"end: give an unbuffered one (open(..., 'rb', buffering=0), a\n"
"subprocess's stdout not yet read from), as ravel reads the descriptor\n"
"itself.  A damaged or cut-short backup raises CorruptionError naming\n"
"the byte offset and leaves no PATH.";

PyObject *rvpy_restore_backup(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *source, *dir = NULL;
    if (!PyArg_ParseTuple(args, "OO&:restore_backup", &source,
                          PyUnicode_FSConverter, &dir))
        return NULL;
    int fd = -1;
    PyObject *path = NULL;
    if (ops_is_fd(source))
        fd = PyObject_AsFileDescriptor(source);
    else
        path = ops_path(source);
    if (fd < 0 && !path) {
        Py_DECREF(dir);
        return NULL;
    }
    const char *d = PyBytes_AS_STRING(dir);
    const char *p = path ? PyBytes_AS_STRING(path) : NULL;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = p ? ravel_backup_restore_file(p, d) : ravel_backup_restore_fd(fd, d);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    Py_XDECREF(path);
    Py_DECREF(dir);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

/* --------------------------------------------------------- bulk ingest */

const char rvpy_ingest_doc[] =
"ingest($self, paths, /, *, move=False)\n--\n\n"
"Adds the table files PATHS (written by SstWriter) to the database\n"
"atomically: readers see all of them or none, and their keys replace\n"
"every value written before.  With move=True the files are hard-linked\n"
"where they can go in as they are and removed once the ingest is\n"
"durable; without it they are copied and kept.  Overlapping files, an\n"
"empty list, unsorted or damaged files are refused (InvalidArgumentError,\n"
"CorruptionError naming the file) with nothing ingested.";

PyObject *rvpy_db_ingest(rvpy_db *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"paths", "move", NULL};
    PyObject *paths_arg;
    int move = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$p:ingest", names,
                                     &paths_arg, &move))
        return NULL;
    if (PyUnicode_Check(paths_arg) || PyBytes_Check(paths_arg)) {
        PyErr_SetString(PyExc_TypeError, "ingest() takes a list of paths, "
                        "not one path");
        return NULL;
    }
    PyObject *list = PySequence_Fast(paths_arg, "ingest() takes a list of "
                                     "paths");
    if (!list)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
    PyObject *bytes = PyList_New(n);
    const char **paths = PyMem_Calloc(n ? (size_t)n : 1, sizeof *paths);
    PyObject *result = NULL;
    if (!bytes || !paths) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = ops_path(PySequence_Fast_GET_ITEM(list, i));
        if (!p)
            goto done;
        PyList_SET_ITEM(bytes, i, p);
        paths[i] = PyBytes_AS_STRING(p);
    }
    if (rvpy_db_enter(self) < 0)
        goto done;
    ravel_db *handle = self->handle;
    char msg[RVPY_MSG_SIZE];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_ingest(handle, paths, (size_t)n, move ? RAVEL_INGEST_MOVE : 0);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    rvpy_db_leave(self);
    if (rc)
        rvpy_raise(rc, msg);
    else
        {
        Py_INCREF(Py_None);
        result = Py_None;
    }
done:
    PyMem_Free(paths);
    Py_XDECREF(bytes);
    Py_DECREF(list);
    return result;
}

/* SstWriter: ravel_sst_writer_*, one thread at a time. */
typedef struct {
    PyObject_HEAD
    ravel_sst_writer *handle;  /* NULL once finished or closed */
    int busy;                  /* a call is in progress on it */
} rvpy_sst_writer;

static PyObject *sst_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *path = NULL, *options = Py_None;
    if (!PyArg_ParseTuple(args, "O&|O:SstWriter", PyUnicode_FSConverter,
                          &path, &options))
        return NULL;
    ravel_options *opts = rvpy_options_build(options, kw, Py_None, Py_None);
    rvpy_sst_writer *self = opts ? (rvpy_sst_writer *)type->tp_alloc(type, 0)
                                 : NULL;
    if (self) {
        const char *p = PyBytes_AS_STRING(path);
        char msg[RVPY_MSG_SIZE];
        ravel_sst_writer *w = NULL;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ravel_sst_writer_open(p, opts, &w);
        if (rc)
            ravel_errmsg_r(msg, sizeof msg);
        Py_END_ALLOW_THREADS
        if (rc) {
            Py_CLEAR(self);
            rvpy_raise(rc, msg);
        } else {
            self->handle = w;
        }
    }
    ravel_options_free(opts);
    Py_DECREF(path);
    return (PyObject *)self;
}

static void sst_dealloc(rvpy_sst_writer *self)
{
    ravel_sst_writer_free(self->handle);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* 0 if the writer can take a call now, else -1 with an exception. */
static int sst_check(rvpy_sst_writer *self)
{
    if (!self->handle) {
        rvpy_raise_misuse("the SstWriter is finished or closed");
        return -1;
    }
    if (self->busy) {
        rvpy_raise_misuse("the SstWriter is in use by another thread");
        return -1;
    }
    return 0;
}

/* Adds a put of KEY (VALUE not NULL) or a delete. */
static PyObject *sst_add(rvpy_sst_writer *self, PyObject *key,
                         PyObject *value)
{
    rvpy_bytes k, v = {0};
    if (rvpy_bytes_get(key, &k, "key") < 0)
        return NULL;
    if ((value && rvpy_bytes_get(value, &v, "value") < 0)
        || sst_check(self) < 0) {
        rvpy_bytes_release(&v);
        rvpy_bytes_release(&k);
        return NULL;
    }
    char msg[RVPY_MSG_SIZE];
    int rc = value
        ? ravel_sst_writer_put(self->handle, k.ptr, k.len, v.ptr, v.len)
        : ravel_sst_writer_delete(self->handle, k.ptr, k.len);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    rvpy_bytes_release(&v);
    rvpy_bytes_release(&k);
    if (rc)
        return rvpy_raise(rc, msg);
    Py_RETURN_NONE;
}

static PyObject *sst_put(rvpy_sst_writer *self, PyObject *const *args,
                         Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "put() takes a key and a value");
        return NULL;
    }
    return sst_add(self, args[0], args[1]);
}

static PyObject *sst_delete(rvpy_sst_writer *self, PyObject *key)
{
    return sst_add(self, key, NULL);
}

static PyObject *sst_finish(rvpy_sst_writer *self, PyObject *unused)
{
    (void)unused;
    if (sst_check(self) < 0)
        return NULL;
    ravel_sst_writer *w = self->handle;
    char msg[RVPY_MSG_SIZE];
    uint64_t entries = 0;
    int rc;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_sst_writer_finish(w, &entries);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (rc)
        return rvpy_raise(rc, msg);
    self->handle = NULL;
    ravel_sst_writer_free(w);
    return PyLong_FromUnsignedLongLong(entries);
}

static PyObject *sst_close(rvpy_sst_writer *self, PyObject *unused)
{
    (void)unused;
    if (self->busy)
        return rvpy_raise_misuse("the SstWriter is in use by another thread");
    ravel_sst_writer_free(self->handle);
    self->handle = NULL;
    Py_RETURN_NONE;
}

static PyObject *sst_enter_ctx(PyObject *self, PyObject *unused)
{
    (void)unused;
    Py_INCREF(self);
    return self;
}

static PyObject *sst_exit_ctx(rvpy_sst_writer *self, PyObject *args)
{
    PyObject *type = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0)
                                                 : Py_None;
    PyObject *r = type == Py_None && self->handle
                      ? sst_finish(self, NULL) : sst_close(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *sst_get_finished(rvpy_sst_writer *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->handle == NULL);
}

static PyMethodDef sst_methods[] = {
    {"put", (PyCFunction)(void (*)(void))sst_put, METH_FASTCALL,
     "put($self, key, value, /)\n--\n\n"
     "Adds a put of KEY; keys go in strictly increasing bytewise order\n"
     "(InvalidArgumentError naming both positions otherwise)."},
    {"delete", (PyCFunction)sst_delete, METH_O,
     "delete($self, key, /)\n--\n\n"
     "Adds a delete of KEY (it hides the key's older values once\n"
     "ingested), in the same order as puts."},
    {"finish", (PyCFunction)sst_finish, METH_NOARGS,
     "finish($self, /)\n--\n\n"
     "Writes the rest of the file, makes it durable and returns the number\n"
     "of keys added.  InvalidArgumentError if none was (the file is\n"
     "removed then)."},
    {"close", (PyCFunction)sst_close, METH_NOARGS,
     "close($self, /)\n--\n\n"
     "Abandons the writer: a file not finished is removed.  Harmless after\n"
     "finish() and when repeated."},
    {"__enter__", (PyCFunction)sst_enter_ctx, METH_NOARGS, RVPY_ENTER_DOC},
    {"__exit__", (PyCFunction)sst_exit_ctx, METH_VARARGS,
     RVPY_EXIT_DOC
     "Finishes the file if the block raised nothing, else removes it."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef sst_getset[] = {
    {"finished", (getter)sst_get_finished, NULL,
     "True once finish() or close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject rvpy_sst_writer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.SstWriter",
    .tp_basicsize = sizeof(rvpy_sst_writer),
    .tp_dealloc = (destructor)sst_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SstWriter(path, options=None, **option_values)\n--\n\n"
              "Writes a table file at PATH (which must not exist) for\n"
              "DB.ingest(), outside any database.  Keyword arguments are\n"
              "ravel options (block_size, compression, ...).  A with\n"
              "block finishes it when the block ends cleanly and removes\n"
              "it otherwise.  One thread at a time.",
    .tp_methods = sst_methods,
    .tp_getset = sst_getset,
    .tp_new = sst_new,
};

/* -------------------------------------------------------------- repair */

const char rvpy_repair_doc[] =
"repair(path, options=None, *, callback=None, **option_values)\n--\n\n"
"Salvages the damaged database directory PATH (a lost or damaged\n"
"manifest, WAL damage, partly damaged table files): keeps every entry\n"
"that verifies, moves every original file into PATH/lost-repair-*/\n"
"(nothing is deleted) and returns the report: what was kept and what was\n"
"lost (files, key ranges, counts).  CALLBACK, if given, is called with\n"
"(kind, line) for each line as it is made, kind one of 'note', 'kept',\n"
"'lost', 'warn'; what it raises is raised once the repair is done.\n"
"Options (block_size, compression, target_file_size_base, num_levels)\n"
"shape the new table files.  LockedError, changing nothing, if the\n"
"database is open for writing (close the readers too).";

/* What repair's callback needs: the Python callable and the first
** exception it raised (kept, re-raised when ravel_repair returns). */
struct ops_repair_ctx {
    PyObject *callback;
    PyObject *exc_type, *exc_value, *exc_tb;
};

static void ops_repair_line(void *ctx, int kind, const char *line)
{
    static const char *const kinds[] = {"note", "kept", "lost", "warn"};
    struct ops_repair_ctx *c = ctx;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (!c->exc_type) {
        const char *k = kind >= 0 && kind < 4 ? kinds[kind] : "note";
        PyObject *r = PyObject_CallFunction(c->callback, "ss", k, line);
        if (r)
            Py_DECREF(r);
        else
            PyErr_Fetch(&c->exc_type, &c->exc_value, &c->exc_tb);
    }
    PyGILState_Release(gil);
}

PyObject *rvpy_repair(PyObject *module, PyObject *args, PyObject *kw)
{
    (void)module;
    PyObject *path = NULL, *options = Py_None;
    if (!PyArg_ParseTuple(args, "O&|O:repair", PyUnicode_FSConverter, &path,
                          &options))
        return NULL;
    PyObject *kwcopy = kw ? PyDict_Copy(kw) : PyDict_New();
    struct ops_repair_ctx ctx = {0};
    PyObject *result = NULL;
    ravel_options *opts = NULL;
    if (!kwcopy)
        goto done;
    ctx.callback = PyDict_GetItemString(kwcopy, "callback");
    if (ctx.callback) {
        Py_INCREF(ctx.callback);
        if (PyDict_DelItemString(kwcopy, "callback") < 0)
            goto done;
        if (ctx.callback == Py_None)
            Py_CLEAR(ctx.callback);
        else if (!PyCallable_Check(ctx.callback)) {
            PyErr_SetString(PyExc_TypeError, "callback must be callable");
            goto done;
        }
    }
    opts = rvpy_options_build(options, kwcopy, Py_None, Py_None);
    if (!opts)
        goto done;
    const char *p = PyBytes_AS_STRING(path);
    char msg[RVPY_MSG_SIZE];
    char *report = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ravel_repair(p, opts, ctx.callback ? ops_repair_line : NULL, &ctx,
                      &report);
    if (rc)
        ravel_errmsg_r(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    if (ctx.exc_type) {
        PyErr_Restore(ctx.exc_type, ctx.exc_value, ctx.exc_tb);
        ctx.exc_type = NULL;
    } else if (rc) {
        rvpy_raise(rc, msg);
    } else {
        result = PyUnicode_DecodeUTF8(report ? report : "",
                                      report ? (Py_ssize_t)strlen(report) : 0,
                                      "replace");
    }
    ravel_free(report);
done:
    ravel_options_free(opts);
    Py_XDECREF(ctx.callback);
    Py_XDECREF(kwcopy);
    Py_DECREF(path);
    return result;
}
