#!/usr/bin/env python3
"""check-thread-safety.py -- compiles every file of lib/ with clang's
thread-safety analysis (-Wthread-safety -Werror), with the flags the
meson build BUILD_DIR uses for the shared library (its
compile_commands.json), syntax only.  lib/util/mutex.h says what the
analysis holds: every RV_REQUIRES function is called with its lock held,
every path releases what it takes, nothing is taken twice.

Usage: check-thread-safety.py BUILD_DIR [CLANG]   (CLANG: clang)
Exits 1 with clang's diagnostics if any file warns, 0 otherwise.
"""
import json
import os
import shlex
import subprocess
import sys


def lib_commands(build_dir):
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    seen = {}
    for e in entries:
        src = e["file"]
        # the shared library's objects: each lib/ file once
        if "/lib/" not in "/" + src or src in seen:
            continue
        if ".so." not in e["command"] and "libravel.so" not in e["command"]:
            continue
        seen[src] = e
    return list(seen.values())


def clang_args(command, clang):
    args = shlex.split(command)
    out = [clang]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
            continue
        if a in ("-c", "-MD") or a.startswith("-fdiagnostics-color"):
            continue
        out.append(a)
    return out + ["-fsyntax-only", "-Wthread-safety", "-Werror"]


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    build_dir = sys.argv[1]
    clang = sys.argv[2] if len(sys.argv) == 3 else "clang"
    cmds = lib_commands(build_dir)
    if not cmds:
        print(f"no lib/ file in {build_dir}/compile_commands.json",
              file=sys.stderr)
        return 2
    failed = 0
    for e in cmds:
        r = subprocess.run(clang_args(e["command"], clang), cwd=e["directory"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            sys.stdout.write(r.stdout + r.stderr)
    if failed:
        print(f"{failed} of {len(cmds)} files of lib/ break the locking "
              f"rules (lib/util/mutex.h)")
        return 1
    print(f"thread-safety analysis: {len(cmds)} files of lib/, no warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
