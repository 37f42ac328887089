/*
** options.c -- option handling (keyword options of DB(), the Options
** type over ravel_options) and the two shareable objects an Options or
** DB() takes: Cache (ravel_cache) and WriteController
** (ravel_write_controller).
*/
#include "_ravel.h"

/* ------------------------------------------------------- option values */

PyObject *rvpy_option_text(PyObject *name, PyObject *value)
{
    if (PyBool_Check(value))
        return PyUnicode_FromString(value == Py_True ? "true" : "false");
    if (PyLong_Check(value))
        return PyObject_Str(value);
    if (PyUnicode_Check(value)) {
        Py_INCREF(value);
        return value;
    }
    PyErr_Format(PyExc_TypeError, "option %R: the value must be a bool, an "
                 "int or a str, not %.100s", name, Py_TYPE(value)->tp_name);
    return NULL;
}

/* Sets option NAME (str) to VALUE (bool, int or str) in OPTS.  Returns 0,
** or -1 with ravel's error naming the option. */
static int options_set(ravel_options *opts, PyObject *name, PyObject *value)
{
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "option names must be str");
        return -1;
    }
    PyObject *text = rvpy_option_text(name, value);
    if (!text)
        return -1;
    const char *n = PyUnicode_AsUTF8(name);
    const char *t = n ? PyUnicode_AsUTF8(text) : NULL;
    int rc = -1;
    char msg[RVPY_MSG_SIZE];
    if (t) {
        rc = ravel_options_set(opts, n, t);
        if (rc) {
            ravel_errmsg_r(msg, sizeof msg);
            rvpy_raise(rc, msg);
        }
    }
    Py_DECREF(text);
    return rc ? -1 : 0;
}

/* Applies "name=value;..." TEXT (str) to OPTS. */
static int options_parse(ravel_options *opts, PyObject *text)
{
    const char *t = PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : NULL;
    if (!t) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "options text must be a str");
        return -1;
    }
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_options_parse(opts, t);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        rvpy_raise(rc, msg);
        return -1;
    }
    return 0;
}

/* A new ravel_options holding the defaults; NULL with an exception. */
static ravel_options *options_new_handle(void)
{
    ravel_options *opts = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_options_new(&opts);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        rvpy_raise(rc, msg);
        return NULL;
    }
    return opts;
}

/* Gives OPTS the cache CACHE (None: its own) and the write controller WC
** (None: its own). */
static int options_share(ravel_options *opts, PyObject *cache, PyObject *wc)
{
    if (cache != Py_None) {
        if (!PyObject_TypeCheck(cache, &rvpy_cache_type)) {
            PyErr_SetString(PyExc_TypeError, "cache must be a ravel.Cache");
            return -1;
        }
        ravel_options_set_cache(opts, ((rvpy_cache *)cache)->handle);
    }
    if (wc != Py_None) {
        if (!PyObject_TypeCheck(wc, &rvpy_write_controller_type)) {
            PyErr_SetString(PyExc_TypeError, "write_controller must be a "
                            "ravel.WriteController");
            return -1;
        }
        ravel_options_set_write_controller(
            opts, ((rvpy_write_controller *)wc)->handle);
    }
    return 0;
}

/* Replays the settings of the Options object BASE into OPTS. */
static int options_replay(ravel_options *opts, rvpy_options *base)
{
    Py_ssize_t n = PyList_GET_SIZE(base->settings);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(base->settings, i);
        PyObject *name = PyTuple_GET_ITEM(item, 0);
        PyObject *text = PyTuple_GET_ITEM(item, 1);
        int r = name == Py_None ? options_parse(opts, text)
                                : options_set(opts, name, text);
        if (r < 0)
            return -1;
    }
    return options_share(opts,
                         base->cache ? base->cache : Py_None,
                         base->write_controller ? base->write_controller
                                                : Py_None);
}

ravel_options *rvpy_options_build(PyObject *base, PyObject *kwargs,
                                  PyObject *cache, PyObject *write_controller)
{
    if (base != Py_None && !PyObject_TypeCheck(base, &rvpy_options_type)) {
        PyErr_SetString(PyExc_TypeError, "options must be a ravel.Options");
        return NULL;
    }
    ravel_options *opts = options_new_handle();
    if (!opts)
        return NULL;
    if (base != Py_None && options_replay(opts, (rvpy_options *)base) < 0)
        goto fail;
    PyObject *name, *value;
    Py_ssize_t pos = 0;
    while (kwargs && PyDict_Next(kwargs, &pos, &name, &value))
        if (options_set(opts, name, value) < 0)
            goto fail;
    if (options_share(opts, cache, write_controller) < 0)
        goto fail;
    return opts;
fail:
    ravel_options_free(opts);
    return NULL;
}

/* ------------------------------------------------------------- Options */

static PyObject *opt_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args;
    (void)kw;
    rvpy_options *self = (rvpy_options *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->settings = PyList_New(0);
    self->handle = self->settings ? options_new_handle() : NULL;
    if (!self->handle) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* Records one setting (NAME None: a parse of TEXT) for DB() to replay. */
static int opt_record(rvpy_options *self, PyObject *name, PyObject *text)
{
    PyObject *item = PyTuple_Pack(2, name, text);
    if (!item)
        return -1;
    int r = PyList_Append(self->settings, item);
    Py_DECREF(item);
    return r;
}

static int opt_set_item(rvpy_options *self, PyObject *name, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "options cannot be deleted");
        return -1;
    }
    if (options_set(self->handle, name, value) < 0)
        return -1;
    PyObject *text = rvpy_option_text(name, value);
    if (!text)
        return -1;
    int r = opt_record(self, name, text);
    Py_DECREF(text);
    return r;
}

/* Parses TEXT into the options all or nothing: ravel_options_parse keeps
** the items before a bad one, which the settings a DB replays at open
** would not hold, so the text is tried on a scratch object first. */
static int opt_parse_all(rvpy_options *self, PyObject *text)
{
    ravel_options *scratch = NULL;
    if (ravel_options_new(&scratch) != RAVEL_OK) {
        PyErr_NoMemory();
        return -1;
    }
    int r = options_parse(scratch, text);
    ravel_options_free(scratch);
    if (r < 0 || options_parse(self->handle, text) < 0)
        return -1;
    return opt_record(self, Py_None, text);
}

static int opt_init(rvpy_options *self, PyObject *args, PyObject *kwargs)
{
    PyObject *text = NULL;
    if (!PyArg_ParseTuple(args, "|U:Options", &text))
        return -1;
    if (text && opt_parse_all(self, text) < 0)
        return -1;
    PyObject *name, *value;
    Py_ssize_t pos = 0;
    while (kwargs && PyDict_Next(kwargs, &pos, &name, &value))
        if (opt_set_item(self, name, value) < 0)
            return -1;
    return 0;
}

static void opt_dealloc(rvpy_options *self)
{
    ravel_options_free(self->handle);
    Py_XDECREF(self->settings);
    Py_XDECREF(self->cache);
    Py_XDECREF(self->write_controller);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *opt_subscript(rvpy_options *self, PyObject *name)
{
    const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!n) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "option names must be str");
        return NULL;
    }
    char *text = NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_options_get(self->handle, n, &text);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        return rvpy_raise(rc, msg);
    }
    PyObject *result = PyUnicode_FromString(text);
    ravel_free(text);
    return result;
}

static PyObject *opt_set(rvpy_options *self, PyObject *const *args,
                         Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "set() takes a name and a value");
        return NULL;
    }
    if (opt_set_item(self, args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *opt_parse(rvpy_options *self, PyObject *text)
{
    if (opt_parse_all(self, text) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Getter and setter of the cache and write_controller attributes. */
static PyObject *opt_get_shared(rvpy_options *self, void *closure)
{
    PyObject *o = closure ? self->write_controller : self->cache;
    if (!o)
        o = Py_None;
    Py_INCREF(o);
    return o;
}

static int opt_set_shared(rvpy_options *self, PyObject *value, void *closure)
{
    int is_wc = closure != NULL;
    if (!value)
        value = Py_None;
    if (value == Py_None && is_wc)
        ravel_options_set_write_controller(self->handle, NULL);
    else if (value == Py_None)
        ravel_options_set_cache(self->handle, NULL);
    else if (options_share(self->handle, is_wc ? Py_None : value,
                           is_wc ? value : Py_None) < 0)
        return -1;
    PyObject **slot = is_wc ? &self->write_controller : &self->cache;
    Py_XDECREF(*slot);
    *slot = value == Py_None ? NULL : value;
    Py_XINCREF(*slot);
    return 0;
}

static PyObject *opt_repr(rvpy_options *self)
{
    return PyUnicode_FromFormat("<ravel.Options %R>", self->settings);
}

static PyGetSetDef opt_getset[] = {
    {"cache", (getter)opt_get_shared, (setter)opt_set_shared,
     "The shared Cache, or None.", NULL},
    {"write_controller", (getter)opt_get_shared, (setter)opt_set_shared,
     "The shared WriteController, or None.", (void *)1},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef opt_methods[] = {
    {"set", (PyCFunction)(void (*)(void))opt_set, METH_FASTCALL,
     "set($self, name, value, /)\n--\n\n"
     "The same as options[name] = value."},
    {"parse", (PyCFunction)opt_parse, METH_O,
     "parse($self, text, /)\n--\n\n"
     "Sets several options from 'name=value;name=value', all or none."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods opt_as_mapping = {
    .mp_subscript = (binaryfunc)opt_subscript,
    .mp_ass_subscript = (objobjargproc)opt_set_item,
};

PyTypeObject rvpy_options_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.Options",
    .tp_basicsize = sizeof(rvpy_options),
    .tp_dealloc = (destructor)opt_dealloc,
    .tp_repr = (reprfunc)opt_repr,
    .tp_as_mapping = &opt_as_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Options(text=None, /, **options)\n--\n\n"
              "ravel options set by name, "
              "checked as they are set.  options[name] = value (bool, int "
              "or str); options[name] reads the current value as text, "
              "defaults included.  Pass it to ravel.open(path, options).",
    .tp_methods = opt_methods,
    .tp_getset = opt_getset,
    .tp_init = (initproc)opt_init,
    .tp_new = opt_new,
};

/* --------------------------------------------------------------- Cache */

static PyObject *cache_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"capacity", NULL};
    PyObject *capacity_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:Cache", names,
                                     &capacity_obj))
        return NULL;
    unsigned long long capacity = PyLong_AsUnsignedLongLong(capacity_obj);
    if (capacity == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    rvpy_cache *self = (rvpy_cache *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_cache_new(capacity, &self->handle);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        Py_DECREF(self);
        return rvpy_raise(rc, msg);
    }
    return (PyObject *)self;
}

static void cache_dealloc(rvpy_cache *self)
{
    ravel_cache_free(self->handle);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *cache_get_capacity(rvpy_cache *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(ravel_cache_capacity(self->handle));
}

static PyObject *cache_get_usage(rvpy_cache *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(ravel_cache_usage(self->handle));
}

static PyGetSetDef cache_getset[] = {
    {"capacity", (getter)cache_get_capacity, NULL,
     "Bytes the cache may hold.", NULL},
    {"usage", (getter)cache_get_usage, NULL,
     "Bytes of blocks it holds now.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject rvpy_cache_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.Cache",
    .tp_basicsize = sizeof(rvpy_cache),
    .tp_dealloc = (destructor)cache_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Cache(capacity)\n--\n\n"
              "A block cache of CAPACITY bytes that "
              "several databases share (ravel.open(..., cache=c)).  The "
              "databases keep it alive as long as they need it.",
    .tp_getset = cache_getset,
    .tp_new = cache_new,
};

/* ------------------------------------------------------ WriteController */

static PyObject *wc_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"delayed_write_rate", NULL};
    PyObject *rate_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:WriteController", names,
                                     &rate_obj))
        return NULL;
    unsigned long long rate = PyLong_AsUnsignedLongLong(rate_obj);
    if (rate == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    rvpy_write_controller *self =
        (rvpy_write_controller *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    char msg[RVPY_MSG_SIZE];
    int rc = ravel_write_controller_new(rate, &self->handle);
    if (rc) {
        ravel_errmsg_r(msg, sizeof msg);
        Py_DECREF(self);
        return rvpy_raise(rc, msg);
    }
    self->rate = rate;
    return (PyObject *)self;
}

static void wc_dealloc(rvpy_write_controller *self)
{
    ravel_write_controller_free(self->handle);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *wc_get_rate(rvpy_write_controller *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(self->rate);
}

static PyGetSetDef wc_getset[] = {
    {"delayed_write_rate", (getter)wc_get_rate, NULL,
     "The rate (bytes/s) delayed writes started at.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject rvpy_write_controller_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ravel.WriteController",
    .tp_basicsize = sizeof(rvpy_write_controller),
    .tp_dealloc = (destructor)wc_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "WriteController(delayed_write_rate)\n--\n\n"
              "One write controller "
              "shared by several databases (ravel.open(..., "
              "write_controller=wc)), slowing or stopping the writers of "
              "all of them when one falls behind.",
    .tp_getset = wc_getset,
    .tp_new = wc_new,
};
