#!/usr/bin/env bash
# ci.sh -- the CI stage of the Python binding.  Run from the repository
# root with PKG_CONFIG_PATH and LD_LIBRARY_PATH pointing at a freshly built
# libravel (e.g. PKG_CONFIG_PATH=$PWD/build/meson-uninstalled,
# LD_LIBRARY_PATH=$PWD/build).  Installs what a fresh Debian machine may
# lack (from Debian, or PyPI into a throw-away virtual environment),
# builds and installs the binding with pip, runs its test suite (with
# mypy, setuptools and wheel installed, so the typing and packaging tests
# run too) and a short run of each benchmark, then builds the wheel that
# carries libravel and checks it in a fresh environment (wheel.sh).
# Exits non-zero on any failure.  Leaves nothing in the source tree that
# git would see.
set -euo pipefail

here=bindings/python
[ -f "$here/pyproject.toml" ] || { echo "ci.sh: run me from the repository root" >&2; exit 2; }

apt_updated=
apt_install() {
    echo "ci.sh: installing $* from Debian"
    if [ -z "$apt_updated" ]; then
        apt-get update -qq
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v python3 >/dev/null || apt_install python3
command -v pkg-config >/dev/null || apt_install pkg-config
command -v cc >/dev/null || apt_install gcc
python3 - <<'PY' || apt_install python3-dev
import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))
PY

pkg-config --exists ravel || {
    echo "ci.sh: pkg-config cannot find ravel; set PKG_CONFIG_PATH (now '${PKG_CONFIG_PATH:-}')" >&2
    exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/ravel-py-ci.XXXXXX")
clean() {
    rm -rf "$work" "$here/build" "$here"/src/*.egg-info
}
trap clean EXIT
rm -rf "$here/build" "$here"/src/*.egg-info   # no stale objects

python3 -m venv "$work/venv" 2>/dev/null || {
    apt_install python3-venv
    python3 -m venv "$work/venv"
}
py="$work/venv/bin/python"
# pytest; mypy for test_typing.py; setuptools and wheel for test_build.py
# (which builds wheels without build isolation)
"$py" -m pip install -q pytest mypy "setuptools>=77" wheel
"$py" -m pip install -q "./$here"

echo "ci.sh: ravel-kv $("$py" -c 'import ravel; print(ravel.__version__, "on libravel", ravel.lib_version)')"
(cd "$here" && RAVEL_PY_REQUIRE_TOOLS=1 "$py" -m pytest -q -rs -p no:cacheprovider tests)

# the benchmarks must keep working; tiny runs, no figures checked
"$py" "$here/bench/fillrandom.py" --num 20000 >/dev/null
"$py" "$here/bench/overhead.py" --calls 2000 --repeat 1 >/dev/null
"$py" "$here/bench/ops.py" --num 500 >/dev/null

# the wheel a user without libravel could install (not published)
"$here/wheel.sh" "$work/wheelhouse"
echo "ci.sh: python binding OK"
