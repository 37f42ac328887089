"""test_build.py -- the packaging of the binding, through pip as a user
runs it: a rebuild against another libravel links that one (not the one a
leftover build/ directory was linked to), and the wheel holds the package
(Python files, the extension, the type stubs), never its C sources.

Two copies of the libravel pkg-config finds are made, in prefixes A and B,
and a copy of the binding's source tree is built into a wheel against A,
then against B in the same tree (so pip meets A's build/ directory), as
`pip install ./bindings/python` would.  Each wheel's extension is imported
with LD_LIBRARY_PATH unset, and /proc/self/maps says which libravel the
loader took.  Needs pkg-config, a C compiler, setuptools (77 or later)
and wheel in this Python (ci.sh installs them); skipped without them.
"""
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile

from conftest import skip_without

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def pkg_config(*args):
    return subprocess.run(["pkg-config", *args, "ravel"], check=True,
                          capture_output=True, text=True).stdout.strip()


def build_tools_missing():
    if shutil.which("pkg-config") is None or shutil.which("cc") is None:
        return "pkg-config or cc is missing"
    if subprocess.run(["pkg-config", "--exists", "ravel"]).returncode:
        return "pkg-config cannot find ravel"
    for module in ("setuptools", "wheel"):
        if importlib.util.find_spec(module) is None:
            return module + " is not installed in this Python"
    import setuptools
    if int(setuptools.__version__.split(".")[0]) < 77:
        return "setuptools %s is older than pyproject.toml needs (77)" % (
            setuptools.__version__)
    return None


skip_without(build_tools_missing())


def make_prefix(prefix):
    """A copy of the libravel pkg-config names (library and header) in
    PREFIX, with a ravel.pc of its own; returns its pkgconfig directory."""
    libdir = pkg_config("--variable=libdir")
    header = None
    for word in pkg_config("--cflags-only-I").split():
        if os.path.exists(os.path.join(word[2:], "ravel.h")):
            header = os.path.join(word[2:], "ravel.h")
            break
    assert header, "pkg-config's include directories hold no ravel.h"
    os.makedirs(os.path.join(prefix, "lib", "pkgconfig"))
    os.makedirs(os.path.join(prefix, "include"))
    shutil.copy(header, os.path.join(prefix, "include"))
    names = glob.glob(os.path.join(libdir, "libravel.so*"))
    assert names, "no libravel.so in " + libdir
    for name in names:  # the file and its links (libravel.so.0 -> ...)
        shutil.copy2(name, os.path.join(prefix, "lib"),
                     follow_symlinks=False)
    pcdir = os.path.join(prefix, "lib", "pkgconfig")
    with open(os.path.join(pcdir, "ravel.pc"), "w") as f:
        f.write("prefix=%s\nlibdir=${prefix}/lib\n"
                "includedir=${prefix}/include\n\n"
                "Name: ravel\nDescription: a copy for test_build.py\n"
                "Version: %s\nLibs: -L${libdir} -lravel\n"
                "Cflags: -I${includedir}\n"
                % (prefix, pkg_config("--modversion")))
    return pcdir


def copy_source(dest):
    """The binding's source tree as a checkout has it, without build
    products (the tree under test is not touched)."""
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", ".pytest_cache", "*.so",
        "dist", "wheelhouse"))


def build_wheel(src, pcdir, out):
    """`pip wheel` of SRC against the ravel.pc in PCDIR; the wheel's path."""
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("RAVEL_NO_RPATH", None)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps",
         "--no-build-isolation", "-q", "-w", out, src],
        env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    wheels = glob.glob(os.path.join(out, "*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def loaded_libravel(wheel, where):
    """Unpacks WHEEL in WHERE, imports ravel from it without
    LD_LIBRARY_PATH, and returns the path of the libravel it loaded."""
    with zipfile.ZipFile(wheel) as z:
        z.extractall(where)
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    code = ("import sys; sys.path.insert(0, %r); import ravel\n"
            "assert ravel.__file__.startswith(%r), ravel.__file__\n"
            "for line in open('/proc/self/maps'):\n"
            "    if 'libravel' in line:\n"
            "        print(line.split()[-1]); break\n" % (where, where))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=where,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_rebuild_links_the_new_library(tmp_path):
    a = make_prefix(str(tmp_path / "a"))
    b = make_prefix(str(tmp_path / "b"))
    src = str(tmp_path / "src")
    copy_source(src)
    wheel_a = build_wheel(src, a, str(tmp_path / "wheel-a"))
    assert loaded_libravel(wheel_a, str(tmp_path / "site-a")).startswith(
        str(tmp_path / "a" / "lib") + os.sep)
    # the same tree again, its build/ directory left by the build against
    # A, with the C sources an older setup.py copied into build/lib
    stale = glob.glob(os.path.join(src, "build", "lib*", "ravel"))
    assert stale
    for d in stale:
        shutil.copy(os.path.join(src, "src", "ravel", "db.c"), d)
    wheel_b = build_wheel(src, b, str(tmp_path / "wheel-b"))
    assert loaded_libravel(wheel_b, str(tmp_path / "site-b")).startswith(
        str(tmp_path / "b" / "lib") + os.sep)
    assert_package_files(wheel_b)


def assert_package_files(wheel):
    """WHEEL holds the package and no C sources."""
    with zipfile.ZipFile(wheel) as z:
        package = sorted(n for n in z.namelist() if n.startswith("ravel/"))
    assert [n for n in package if n.endswith((".c", ".h"))] == []
    so = [n for n in package if n.endswith(".so")]
    assert len(so) == 1 and so[0].startswith("ravel/_ravel.")
    assert sorted(set(package) - set(so)) == [
        "ravel/__init__.py", "ravel/_ravel.pyi", "ravel/py.typed"]


def test_wheel_holds_no_c_sources(tmp_path):
    src = str(tmp_path / "src")
    copy_source(src)
    wheel = build_wheel(src, make_prefix(str(tmp_path / "prefix")),
                        str(tmp_path / "wheel"))
    assert_package_files(wheel)
