"""setup.py -- builds the C extension ravel._ravel against libravel.

Where libravel is comes from `pkg-config ravel` (its --cflags and --libs):
an installed ravel.pc, or, for a build tree, PKG_CONFIG_PATH pointing at
<build>/meson-uninstalled.  The library directories pkg-config names are
also recorded as the extension's run path, so it loads the libravel it was
built against without LD_LIBRARY_PATH (set RAVEL_NO_RPATH=1 to leave it
out, e.g. when building a wheel to be repaired by auditwheel).

Nothing an earlier build left in build/ is reused.  setuptools keeps an
extension whose sources are not newer than it, even one linked against
another libravel (another prefix, so another -I, -L and run path: a
reinstall kept loading the old library), and build/lib keeps every file
ever copied there (an older setup.py's C sources went into the wheel).
So `build` first removes its lib and temp directories, and build_ext
always compiles and links (also for `build_ext --inplace`).

Only the package is installed (Python files, the extension, the type
stubs and py.typed, listed in pyproject.toml); the C sources go into the
source distribution (MANIFEST.in), not into site-packages.
"""
import os
import shlex
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext

SOURCES = ["module.c", "db.c", "snapshot.c", "iterator.c", "batch.c",
           "options.c", "transaction.c", "ops.c", "feed.c",
           "range_delete.c"]


def pkg_config(flag):
    """The words `pkg-config FLAG ravel` prints; a clear error if it fails."""
    try:
        done = subprocess.run(["pkg-config", flag, "ravel"], check=True,
                              capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit(
            "ravel-kv: pkg-config was not found.  Install pkg-config (e.g. "
            "apt-get install pkg-config): it is how the build finds "
            "libravel.") from None
    except subprocess.CalledProcessError as e:
        raise SystemExit(
            "ravel-kv: `pkg-config %s ravel` failed: %s\n"
            "Install libravel (meson install puts ravel.pc where pkg-config "
            "looks), or set PKG_CONFIG_PATH to the directory holding ravel.pc "
            "-- for a meson build tree that is <build>/meson-uninstalled, "
            "which holds ravel-uninstalled.pc.  PKG_CONFIG_PATH is now %r."
            % (flag, e.stderr.strip(), os.environ.get("PKG_CONFIG_PATH", "")))\
            from None
    return shlex.split(done.stdout)


def extension():
    include_dirs, library_dirs, libraries = [], [], []
    compile_args, link_args = [], []
    for word in pkg_config("--cflags"):
        if word.startswith("-I"):
            include_dirs.append(word[2:])
        else:
            compile_args.append(word)
    for word in pkg_config("--libs"):
        if word.startswith("-L"):
            library_dirs.append(word[2:])
        elif word.startswith("-l"):
            libraries.append(word[2:])
        else:
            link_args.append(word)
    rpath = [] if os.environ.get("RAVEL_NO_RPATH") else library_dirs
    return Extension(
        "ravel._ravel",
        sources=[os.path.join("src", "ravel", s) for s in SOURCES],
        depends=[os.path.join("src", "ravel", "_ravel.h")],
        include_dirs=include_dirs,
        library_dirs=library_dirs,
        libraries=libraries,
        runtime_library_dirs=rpath,
        extra_compile_args=compile_args + ["-std=c11", "-Wall", "-Wextra"],
        extra_link_args=link_args,
    )


class build_afresh(build):
    """build, removing what an earlier build left (see the top)."""

    def run(self):
        for d in (self.build_lib, self.build_temp):
            shutil.rmtree(d, ignore_errors=True)
        super().run()


class build_ext_always(build_ext):
    """build_ext with --force always on (see the top of this file)."""

    def finalize_options(self):
        super().finalize_options()
        self.force = True


setup(ext_modules=[extension()],
      cmdclass={"build": build_afresh, "build_ext": build_ext_always})
