"""proto_ctypes.py -- a throw-away ctypes binding of ravel (open, get,
put, close), just enough for bench/overhead.py to measure what a ctypes
binding would cost per call.  Not the shipped binding: it cannot read the
error message inside the failing foreign call (ctypes has no C shim), so
it calls ravel_errmsg afterwards, which ravel.h warns against."""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_void_p

from _libpath import library_file

_lib = ctypes.CDLL(library_file())
_lib.ravel_options_new.argtypes = [POINTER(c_void_p)]
_lib.ravel_options_set.argtypes = [c_void_p, c_char_p, c_char_p]
_lib.ravel_options_free.argtypes = [c_void_p]
_lib.ravel_open.argtypes = [c_char_p, c_void_p, POINTER(c_void_p)]
_lib.ravel_close.argtypes = [c_void_p]
_lib.ravel_errmsg.restype = c_char_p
_lib.ravel_get_into.argtypes = [c_void_p, c_void_p, c_char_p, c_size_t,
                                c_void_p, c_size_t, POINTER(c_size_t)]
_lib.ravel_put.argtypes = [c_void_p, c_int, c_char_p, c_size_t, c_char_p,
                           c_size_t]

_BUF = 1024


class Error(Exception):
    pass


def _check(rc):
    if rc:
        raise Error(rc, _lib.ravel_errmsg().decode())


class DB:
    def __init__(self, path):
        opts = c_void_p()
        _check(_lib.ravel_options_new(byref(opts)))
        _check(_lib.ravel_options_set(opts, b"create_if_missing", b"true"))
        self._db = c_void_p()
        rc = _lib.ravel_open(path.encode(), opts, byref(self._db))
        _lib.ravel_options_free(opts)
        _check(rc)
        self._buf = ctypes.create_string_buffer(_BUF)
        self._vlen = c_size_t()
        self._vlen_ref = byref(self._vlen)

    def get(self, key, default=None):
        rc = _lib.ravel_get_into(self._db, None, key, len(key), self._buf,
                                 _BUF, self._vlen_ref)
        if rc == 0:
            n = self._vlen.value
            if n <= _BUF:
                return ctypes.string_at(self._buf, n)
            raise NotImplementedError("large values")
        if rc == 1:
            return default
        _check(rc)

    def put(self, key, value):
        rc = _lib.ravel_put(self._db, 0, key, len(key), value, len(value))
        if rc:
            _check(rc)

    def close(self):
        _check(_lib.ravel_close(self._db))
