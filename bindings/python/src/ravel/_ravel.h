/*
** _ravel.h -- declarations shared by the C files of the extension module
** ravel._ravel: the object layouts, the error helpers, the argument
** helpers and the bookkeeping that lets DB.close() find what is still
** open on a database.
**
** Threading model.  Every ravel call that can block runs with the GIL
** released.  Before releasing it, a method registers the call on its
** database (rvpy_db_enter, under the GIL) and unregisters it afterwards
** (rvpy_db_leave).  DB.close() refuses new calls, waits until the count is
** zero, releases the live iterators and snapshots, then calls ravel_close:
** so no ravel call can run on a freed handle, whatever the threads do.
** Objects ravel lets only one thread use at a time (iterators, batches)
** carry a busy flag, and a second thread gets an error instead of a crash.
*/
#ifndef RAVEL_PY_H
#define RAVEL_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ravel.h>

/* The signatures (__text_signature__, for inspect.signature) that open
** the docstrings of every type's __enter__ and __exit__. */
#define RVPY_ENTER_DOC "__enter__($self, /)\n--\n\n"
#define RVPY_EXIT_DOC \
    "__exit__($self, exc_type, exc_value, traceback, /)\n--\n\n"

/* Bytes kept for the detailed message of a failure: ravel's own limit. */
#define RVPY_MSG_SIZE 512

/* ------------------------------------------------------------ errors */

/* Creates ravel.Error and one subclass per result code in MODULE. */
int rvpy_errors_init(PyObject *module);

/* Raises the exception class of result code RC with message MSG (the
** text ravel_errmsg_r returned inside the failing call); an empty MSG is
** replaced by ravel_errstr(RC).  Always returns NULL. */
PyObject *rvpy_raise(int rc, const char *msg);

/* rvpy_raise for a failed ravel_open of PATH (a str): a missing database
** raises DatabaseNotFoundError (also a FileNotFoundError, errno ENOENT,
** filename PATH).  Always returns NULL. */
PyObject *rvpy_raise_open(int rc, const char *msg, PyObject *path);

/* The result code of a retriable exception class EXC_TYPE (ConflictError,
** TimedOutError, DeadlockError or a subclass), else 0. */
int rvpy_retriable_code(PyObject *exc_type);

/* Raises InvalidArgumentError (RAVEL_INVALID) with a formatted message:
** used for misuse the binding detects itself.  Always returns NULL. */
PyObject *rvpy_raise_misuse(const char *format, ...);

/* --------------------------------------------------------- arguments */

/* A byte-string argument (bytes, or any object with the buffer protocol).
** Bytes are read in place; other objects are held through a buffer view
** (which also keeps a bytearray from being resized while the GIL is
** released). */
typedef struct {
    const char *ptr;
    size_t len;
    Py_buffer view;
    int has_view;
} rvpy_bytes;

/* Fills OUT from O; WHAT names the argument in the TypeError. */
int rvpy_bytes_get(PyObject *o, rvpy_bytes *out, const char *what);
void rvpy_bytes_release(rvpy_bytes *b);

/* A new bytes object copied from a bytes-like object (for range bounds
** kept across calls); NULL with TypeError otherwise. */
PyObject *rvpy_bytes_copy(PyObject *o, const char *what);

/* Parses (key, default=None) of a METH_FASTCALL|METH_KEYWORDS get().
** Returns 0, or -1 with TypeError. */
int rvpy_get_args(PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames, PyObject **key, PyObject **dflt);

/* Reads the keyword-only write flags (sync, disable_wal, no_slowdown) of
** a METH_FASTCALL|METH_KEYWORDS call into *FLAGS (RAVEL_SYNC, ...).
** Returns 0, or -1 with TypeError for any other keyword. */
int rvpy_write_flags(PyObject *const *kwvalues, PyObject *kwnames,
                     const char *fn, int *flags);

/* ---------------------------------------------------------- database */

/* A live child of a database (an iterator or a snapshot), linked into the
** database's list so that close can release it first. */
typedef struct rvpy_child rvpy_child;
struct rvpy_child {
    rvpy_child *prev;
    rvpy_child *next;
    /* Releases the ravel object behind the child; called by DB.close()
    ** with the GIL held and no call in progress on the database. */
    void (*release)(rvpy_child *c);
};

typedef struct {
    PyObject_HEAD
    ravel_db *handle;       /* NULL before open and after close */
    PyObject *path;         /* str: the directory, for repr and messages */
    int closing;            /* close has begun: no new calls */
    Py_ssize_t active;      /* calls in progress with the GIL released */
    rvpy_child children;    /* list head of the live iterators/snapshots */
    PyObject *weakrefs;
} rvpy_db;

extern PyTypeObject rvpy_db_type;

/* ravel.destroy(path): ravel_destroy with the GIL released. */
PyObject *rvpy_destroy(PyObject *module, PyObject *path);
extern const char rvpy_destroy_doc[];

/* Registers a call that will release the GIL.  Returns 0, or -1 with
** InvalidArgumentError if the database is closed or closing. */
int rvpy_db_enter(rvpy_db *db);

/* range_delete.c: DB.delete_range, and Batch.delete_range's body (the
** batch checked idle by the caller) */
extern const char rvpy_delete_range_doc[];
PyObject *rvpy_db_delete_range(rvpy_db *self, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames);
PyObject *rvpy_batch_add_range(ravel_batch *b, PyObject *begin,
                               PyObject *end);
/* Unregisters it (GIL held). */
void rvpy_db_leave(rvpy_db *db);

/* Links C into DB's list of children / unlinks it (idempotent). */
void rvpy_db_link(rvpy_db *db, rvpy_child *c);
void rvpy_db_unlink(rvpy_child *c);
/* Links C into the list whose head is HEAD (rvpy_db_unlink unlinks it). */
void rvpy_child_link(rvpy_child *head, rvpy_child *c);

/* -------------------------------------------------------- snapshots */

typedef struct {
    PyObject_HEAD
    rvpy_child child;
    rvpy_db *db;              /* strong reference */
    ravel_snapshot *handle;   /* NULL once released */
    Py_ssize_t users;         /* reads in progress through it */
    PyObject *weakrefs;
} rvpy_snapshot;

extern PyTypeObject rvpy_snapshot_type;

/* Acquires a snapshot of DB (DB.snapshot()). */
PyObject *rvpy_snapshot_new(rvpy_db *db);

/* Checks that SNAP (a Snapshot or None) may be read through and, for a
** Snapshot, counts one more user; *HANDLE is its ravel handle or NULL.
** Returns 0, or -1 with an exception.  rvpy_snapshot_end_use undoes it. */
int rvpy_snapshot_begin_use(PyObject *snap, rvpy_db *db,
                            const ravel_snapshot **handle);
void rvpy_snapshot_end_use(PyObject *snap);

/* ------------------------------------------------------- point reads */

/* Looks KEY up in DB as of SNAP (a Snapshot or None).  Returns a new
** bytes object, or NULL: with an exception set on failure, with none set
** when the key is absent (the caller decides between KeyError and a
** default). */
PyObject *rvpy_read(rvpy_db *db, PyObject *snap, PyObject *key);

/* 1 if KEY is present as of SNAP, 0 if absent, -1 with an exception. */
int rvpy_contains(rvpy_db *db, PyObject *snap, PyObject *key);

/* The values of the iterable KEYS in DB as of SNAP (a Snapshot or None),
** read by one ravel_multi_get without the GIL: a new list of bytes or
** None (absent), or NULL with an exception. */
PyObject *rvpy_multi_read(rvpy_db *db, PyObject *snap, PyObject *keys);

/* ------------------------------------------------------ transactions */

/* Where a Transaction stands. */
enum rvpy_txn_state {
    RVPY_TXN_OPEN,
    RVPY_TXN_PREPARED,
    RVPY_TXN_COMMITTED,
    RVPY_TXN_ROLLED_BACK,
    RVPY_TXN_CLOSED          /* freed unfinished: by close(), DB.close()
                             ** or the end of a transact() run */
};

typedef struct rvpy_txn {
    PyObject_HEAD
    rvpy_child child;         /* in the database's list (not when borrowed) */
    rvpy_db *db;              /* strong reference */
    ravel_txn *handle;        /* NULL once freed */
    enum rvpy_txn_state state;
    int busy;                 /* a call (or one of its iterators' moves) is
                              ** in progress on it */
    int borrowed;             /* transact(): ravel_txn_run owns HANDLE */
    PyObject *name;           /* str, or NULL */
    rvpy_child iters;         /* list head of its live iterators */
    PyObject *weakrefs;
} rvpy_txn;

extern PyTypeObject rvpy_txn_type;

/* DB.transaction(), DB.recover_transaction(), DB.transact(),
** DB.prepared_transactions(): transaction.c. */
PyObject *rvpy_txn_begin(rvpy_db *db, int flags);
PyObject *rvpy_txn_recover(rvpy_db *db, PyObject *name);
PyObject *rvpy_txn_transact(rvpy_db *db, PyObject *fn, int flags,
                            int max_attempts);
PyObject *rvpy_txn_prepared_names(rvpy_db *db);

/* Checks that an iterator of TXN may move now and marks TXN busy: 0, or
** -1 with InvalidArgumentError.  rvpy_txn_iter_leave undoes it. */
int rvpy_txn_iter_enter(rvpy_txn *txn);
void rvpy_txn_iter_leave(rvpy_txn *txn);

/* --------------------------------------------------------- iterators */

typedef struct {
    PyObject_HEAD
    rvpy_child child;
    rvpy_db *db;              /* strong reference */
    rvpy_txn *txn;            /* strong reference: the transaction it reads
                              ** through, or NULL */
    rvpy_child txn_child;     /* in the transaction's list of iterators */
    ravel_iter *handle;       /* NULL once closed */
    int busy;                 /* a call is in progress on it */
    int error_rc;             /* result code of the last failed step */
    PyObject *error_msg;      /* its message (str), or NULL */
    PyObject *weakrefs;
} rvpy_iter;

extern PyTypeObject rvpy_iter_type;
extern PyTypeObject rvpy_range_type;

/* A new low-level Iterator on DB as of SNAP (a Snapshot or None). */
PyObject *rvpy_iter_new(rvpy_db *db, PyObject *snap);

/* The same, bounded by ravel (its iterate_lower_bound and
** iterate_upper_bound): LOWER included, UPPER excluded, each a bytes
** object or NULL for no bound. */
PyObject *rvpy_iter_new_bounded(rvpy_db *db, PyObject *snap,
                                PyObject *lower, PyObject *upper);

/* A new low-level Iterator over TXN's view (its snapshot and its own
** writes), bounded as rvpy_iter_new_bounded (ravel_iter_set_bounds). */
PyObject *rvpy_iter_new_txn(rvpy_txn *txn, PyObject *lower, PyObject *upper);

/* Frees the ravel iterator of IT now (GIL held, no move in progress). */
void rvpy_iter_close_handle(rvpy_iter *it);

/* What a range iterator yields. */
enum { RVPY_KEYS, RVPY_VALUES, RVPY_ITEMS };

/* A new Python iterator over the keys, values or items of DB as of SNAP
** from START (included) to STOP (excluded), either may be None, in
** reverse order if REVERSE. */
PyObject *rvpy_range_new(rvpy_db *db, PyObject *snap, PyObject *start,
                         PyObject *stop, int reverse, int kind);

/* Parses (start=None, stop=None, reverse=False) of items()/keys()/values()
** and makes the range iterator. */
PyObject *rvpy_range_from_args(rvpy_db *db, PyObject *snap, PyObject *args,
                               PyObject *kwargs, int kind);

/* The same over TXN's view (Transaction.items() ...). */
PyObject *rvpy_range_from_args_txn(rvpy_txn *txn, PyObject *args,
                                   PyObject *kwargs, int kind);

/* ----------------------------------------------------------- batches */

typedef struct {
    PyObject_HEAD
    ravel_batch *handle;
    int busy;                 /* a write of it is in progress */
    rvpy_db *db;              /* DB.write_batch(): written by __exit__ */
    int flags;                /* ... with these write flags */
} rvpy_batch;

extern PyTypeObject rvpy_batch_type;

/* A Batch bound to DB, written with FLAGS on a clean exit of `with`. */
PyObject *rvpy_batch_bound(rvpy_db *db, int flags);

/* Writes BATCH to DB with FLAGS (DB.write). */
PyObject *rvpy_batch_write(rvpy_db *db, rvpy_batch *batch, int flags);

/* Writes the pairs of OTHER (a mapping, or an iterable of (key, value)
** pairs; NULL for none) to DB with FLAGS as one batch (DB.update). */
PyObject *rvpy_db_update(rvpy_db *db, PyObject *other, int flags);

/* ------------------------------------- options, cache, write controller */

typedef struct {
    PyObject_HEAD
    ravel_options *handle;
    PyObject *settings;       /* list of (name, text); name None: parse */
    PyObject *cache;          /* Cache or NULL */
    PyObject *write_controller; /* WriteController or NULL */
} rvpy_options;

typedef struct {
    PyObject_HEAD
    ravel_cache *handle;
} rvpy_cache;

typedef struct {
    PyObject_HEAD
    ravel_write_controller *handle;
    unsigned long long rate;
} rvpy_write_controller;

extern PyTypeObject rvpy_options_type;
extern PyTypeObject rvpy_cache_type;
extern PyTypeObject rvpy_write_controller_type;

/* The text of an option value: bool -> "true"/"false", int -> decimal,
** str as is.  A new reference, or NULL with TypeError naming NAME. */
PyObject *rvpy_option_text(PyObject *name, PyObject *value);

/* Builds the ravel options for DB(...): the settings of BASE (an Options
** or None), then the keyword options KWARGS (name -> value; may be NULL),
** then CACHE and WRITE_CONTROLLER (None or objects of those types).
** Returns NULL with an exception on failure. */
ravel_options *rvpy_options_build(PyObject *base, PyObject *kwargs,
                                  PyObject *cache, PyObject *write_controller);

/* ------------------------------ operating a live database (issue 22) */

/* ops.c: a reader's catch-up, checkpoints, backups, ingest, repair */
PyObject *rvpy_db_catch_up(rvpy_db *self, PyObject *unused);
PyObject *rvpy_db_checkpoint(rvpy_db *self, PyObject *path);
PyObject *rvpy_db_backup(rvpy_db *self, PyObject *root);
PyObject *rvpy_db_write_backup(rvpy_db *self, PyObject *target);
PyObject *rvpy_db_ingest(rvpy_db *self, PyObject *args, PyObject *kw);
extern const char rvpy_catch_up_doc[], rvpy_checkpoint_doc[],
    rvpy_backup_doc[], rvpy_write_backup_doc[], rvpy_ingest_doc[];
PyObject *rvpy_backup_list(PyObject *module, PyObject *root);
PyObject *rvpy_backup_info(PyObject *module, PyObject *args);
PyObject *rvpy_backup_verify(PyObject *module, PyObject *args);
PyObject *rvpy_backup_restore(PyObject *module, PyObject *args);
PyObject *rvpy_backup_purge(PyObject *module, PyObject *args);
PyObject *rvpy_restore_backup(PyObject *module, PyObject *args);
PyObject *rvpy_repair(PyObject *module, PyObject *args, PyObject *kw);
extern const char rvpy_backup_list_doc[], rvpy_backup_info_doc[],
    rvpy_backup_verify_doc[], rvpy_backup_restore_doc[],
    rvpy_backup_purge_doc[], rvpy_restore_backup_doc[], rvpy_repair_doc[];
extern PyTypeObject rvpy_sst_writer_type;

/* feed.c: the change feed and a batch's operations and bytes */
extern PyTypeObject rvpy_updates_type;
PyObject *rvpy_db_updates_since(rvpy_db *self, PyObject *args);
extern const char rvpy_updates_since_doc[];
PyObject *rvpy_batch_iter(rvpy_batch *self);
PyObject *rvpy_batch_bytes(rvpy_batch *self, PyObject *unused);
PyObject *rvpy_batch_sequence(rvpy_batch *self, void *unused);
PyObject *rvpy_batch_from_bytes(PyObject *cls, PyObject *data);

#endif /* RAVEL_PY_H */
