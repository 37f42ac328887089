"""proto_cffi.py -- two throw-away cffi bindings of ravel (open, get, put,
close), just enough for bench/overhead.py to measure what a cffi binding
would cost per call:

  ABI mode (ffi.dlopen; no compiler, but like ctypes no C shim, so the
  error message would be read by a second foreign call), and
  API mode (ffi.set_source, compiled into a temporary directory, with C
  shims that read the message inside the failing call, as ravel.h asks).
"""
import importlib
import os
import sys
import tempfile

import cffi

from _libpath import include_dirs, library_dirs, library_file

_CDEF = """
typedef struct ravel_db ravel_db;
typedef struct ravel_options ravel_options;
typedef struct ravel_snapshot ravel_snapshot;
int ravel_options_new(ravel_options **out);
int ravel_options_set(ravel_options *opts, const char *name,
                      const char *value);
void ravel_options_free(ravel_options *opts);
int ravel_open(const char *dir, const ravel_options *opts, ravel_db **out);
int ravel_close(ravel_db *db);
const char *ravel_errmsg(void);
int ravel_get_into(ravel_db *db, const ravel_snapshot *snap,
                   const void *key, size_t klen, void *buf, size_t cap,
                   size_t *vlen);
int ravel_put(ravel_db *db, int flags, const void *key, size_t klen,
              const void *val, size_t vlen);
"""

_SHIMS_CDEF = """
int shim_get_into(ravel_db *db, const void *key, size_t klen, void *buf,
                  size_t cap, size_t *vlen, char *msg);
int shim_put(ravel_db *db, int flags, const void *key, size_t klen,
             const void *val, size_t vlen, char *msg);
int c_get_loop(ravel_db *db, const void *key, size_t klen, long n);
int c_put_loop(ravel_db *db, const void *const *keys, size_t klen,
               long nkeys, const void *val, size_t vlen, long n);
"""

_SHIMS_SOURCE = """
#include <ravel.h>
int shim_get_into(ravel_db *db, const void *key, size_t klen, void *buf,
                  size_t cap, size_t *vlen, char *msg)
{
    int rc = ravel_get_into(db, NULL, key, klen, buf, cap, vlen);
    if (rc && rc != RAVEL_NOTFOUND)
        ravel_errmsg_r(msg, 512);
    return rc;
}
int shim_put(ravel_db *db, int flags, const void *key, size_t klen,
             const void *val, size_t vlen, char *msg)
{
    int rc = ravel_put(db, flags, key, klen, val, vlen);
    if (rc)
        ravel_errmsg_r(msg, 512);
    return rc;
}
/* the floor: the same calls in a C loop, no Python per call */
int c_get_loop(ravel_db *db, const void *key, size_t klen, long n)
{
    char buf[1024];
    size_t vlen;
    int rc = 0;
    for (long i = 0; i < n && rc == 0; i++)
        rc = ravel_get_into(db, NULL, key, klen, buf, sizeof buf, &vlen);
    return rc;
}
int c_put_loop(ravel_db *db, const void *const *keys, size_t klen,
               long nkeys, const void *val, size_t vlen, long n)
{
    int rc = 0;
    for (long i = 0; i < n && rc == 0; i++)
        rc = ravel_put(db, 0, keys[i % nkeys], klen, val, vlen);
    return rc;
}
"""

_BUF = 1024


class Error(Exception):
    pass


def _open(ffi, lib, path):
    opts = ffi.new("ravel_options **")
    lib.ravel_options_new(opts)
    lib.ravel_options_set(opts[0], b"create_if_missing", b"true")
    db = ffi.new("ravel_db **")
    rc = lib.ravel_open(path.encode(), opts[0], db)
    lib.ravel_options_free(opts[0])
    if rc:
        raise Error(rc, ffi.string(lib.ravel_errmsg()).decode())
    return db[0]


class AbiDB:
    """cffi ABI mode: calls libravel directly."""
    _ffi = None

    def __init__(self, path):
        if AbiDB._ffi is None:
            AbiDB._ffi = cffi.FFI()
            AbiDB._ffi.cdef(_CDEF)
            AbiDB._lib = AbiDB._ffi.dlopen(library_file())
        ffi, lib = self._ffi, self._lib
        self._db = _open(ffi, lib, path)
        self._buf = ffi.new("char[]", _BUF)
        self._vlen = ffi.new("size_t *")

    def get(self, key, default=None):
        rc = self._lib.ravel_get_into(self._db, self._ffi.NULL, key, len(key),
                                      self._buf, _BUF, self._vlen)
        if rc == 0:
            return self._ffi.unpack(self._buf, self._vlen[0])
        if rc == 1:
            return default
        raise Error(rc, self._ffi.string(self._lib.ravel_errmsg()).decode())

    def put(self, key, value):
        rc = self._lib.ravel_put(self._db, 0, key, len(key), value,
                                 len(value))
        if rc:
            raise Error(rc,
                        self._ffi.string(self._lib.ravel_errmsg()).decode())

    def close(self):
        self._lib.ravel_close(self._db)


_api = None


def _build_api():
    """Compiles the API-mode module once into a temporary directory."""
    global _api
    if _api is None:
        ffi = cffi.FFI()
        ffi.cdef(_CDEF + _SHIMS_CDEF)
        ffi.set_source("_ravel_cffi_proto", _SHIMS_SOURCE,
                       include_dirs=include_dirs(),
                       library_dirs=library_dirs(),
                       runtime_library_dirs=library_dirs(),
                       libraries=["ravel"])
        tmp = tempfile.mkdtemp(prefix="ravel-cffi-")
        ffi.compile(tmpdir=tmp, verbose=False)
        sys.path.insert(0, tmp)
        _api = importlib.import_module("_ravel_cffi_proto")
    return _api


class ApiDB:
    """cffi API mode: compiled C shims reading the message in the call."""

    def __init__(self, path):
        api = _build_api()
        self._ffi, self._lib = api.ffi, api.lib
        self._db = _open(self._ffi, self._lib, path)
        self._buf = self._ffi.new("char[]", _BUF)
        self._vlen = self._ffi.new("size_t *")
        self._msg = self._ffi.new("char[]", 512)

    def get(self, key, default=None):
        rc = self._lib.shim_get_into(self._db, key, len(key), self._buf,
                                     _BUF, self._vlen, self._msg)
        if rc == 0:
            return self._ffi.unpack(self._buf, self._vlen[0])
        if rc == 1:
            return default
        raise Error(rc, self._ffi.string(self._msg).decode())

    def put(self, key, value):
        rc = self._lib.shim_put(self._db, 0, key, len(key), value, len(value),
                                self._msg)
        if rc:
            raise Error(rc, self._ffi.string(self._msg).decode())

    def close(self):
        self._lib.ravel_close(self._db)


class CLoop(ApiDB):
    """Not a binding: the floor.  get_loop and put_loop run N calls in a C
    loop, with no Python between them."""

    def get_loop(self, key, n):
        if self._lib.c_get_loop(self._db, key, len(key), n):
            raise Error("c_get_loop failed")

    def put_loop(self, keys, value, n):
        bufs = [self._ffi.from_buffer(k) for k in keys]
        ptrs = self._ffi.new("const void *[]", bufs)
        if self._lib.c_put_loop(self._db, ptrs, len(keys[0]), len(keys),
                                value, len(value), n):
            raise Error("c_put_loop failed")
