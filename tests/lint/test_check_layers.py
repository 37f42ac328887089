#!/usr/bin/env python3
"""The layer checker (tools/check-layers.py) refuses an include that goes
up, one that goes sideways and a folder with no layer, and passes a tree
whose includes go down."""
import os
import subprocess
import sys
import tempfile


def tree(files):
    root = tempfile.mkdtemp(prefix="layers-")
    for path, text in files.items():
        full = os.path.join(root, "lib", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


def run(checker, root):
    return subprocess.run([sys.executable, checker, root],
                          capture_output=True, text=True)


def main():
    checker = sys.argv[1]
    good = {"util/a.h": "", "base/b.h": '#include "util/a.h"\n',
            "memtable/m.c": '#include "base/b.h"\n#include "memtable/m.h"\n',
            "db/d.c": '#include "memtable/m.h"\n#include "ravel_int.h"\n'}
    cases = {
        "up": {"util/a.c": '#include "db/db.h"\n'},
        "sideways": {"wal/w.c": '#include "table/table.h"\n'},
        "below base": {"util/a.c": '#include "base/dbformat.h"\n'},
        "no layer": {"misc/x.c": '#include "util/a.h"\n'},
    }
    r = run(checker, tree(good))
    if r.returncode != 0:
        print("a good tree was refused:\n" + r.stdout + r.stderr)
        return 1
    for name, files in cases.items():
        r = run(checker, tree({**good, **files}))
        if r.returncode != 1 or "lib/" not in r.stdout:
            print(f"{name}: not refused (exit {r.returncode}):\n{r.stdout}")
            return 1
        print(f"# {name}: {r.stdout.splitlines()[0]}")
    print("4 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
