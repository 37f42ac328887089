"""_libpath.py -- where libravel.so and ravel.h are, from pkg-config, for
the ctypes and cffi prototypes the benchmarks compare against."""
import os
import shlex
import subprocess


def _words(flag):
    out = subprocess.run(["pkg-config", flag, "ravel"], check=True,
                         capture_output=True, text=True).stdout
    return shlex.split(out)


def library_dirs():
    return [w[2:] for w in _words("--libs") if w.startswith("-L")]


def include_dirs():
    return [w[2:] for w in _words("--cflags") if w.startswith("-I")]


def library_file():
    """The path of libravel.so (a bare name for the loader to search)."""
    for d in library_dirs():
        path = os.path.join(d, "libravel.so")
        if os.path.exists(path):
            return path
    return "libravel.so"
