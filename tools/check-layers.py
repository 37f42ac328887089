#!/usr/bin/env python3
"""check-layers.py -- the folders of lib/ are layers: a file may include
only headers of its own folder and of the folders below it.

    util      what any C program could use: errors, files, coding, arena,
              cache, locks, the clock, the write controller, test hooks
    base      ravel's data model, shared by every layer above: internal
              keys and levels (dbformat.h), the batch layout
              (batchrepr.h), read views and the visibility rule
              (read_view.h), the commit table, the options
    iter      the internal iterator interface and the merging iterator
    memtable, table, wal
              the three storage components, side by side: none includes
              another
    db        the database: everything that takes a ravel_db
    txn       transactions, on top of the database: the write index, the
              merged iterator, the lock table (later txn.c)

lib/ravel_int.h (the root) may be included by every file.  Usage:
check-layers.py SOURCE_ROOT; exits 1 naming each include that goes up or
sideways, 0 otherwise.  docs/design.md states the same rule.
"""
import os
import re
import sys

RANK = {"util": 0, "base": 1, "iter": 2, "memtable": 3, "table": 3,
        "wal": 3, "db": 4, "txn": 5}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def check(root):
    lib = os.path.join(root, "lib")
    bad = []
    for folder in sorted(os.listdir(lib)):
        path = os.path.join(lib, folder)
        if not os.path.isdir(path):
            continue
        if folder not in RANK:
            bad.append(f"lib/{folder}/: a folder with no layer "
                       f"(add it to tools/check-layers.py and docs/design.md)")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            with open(os.path.join(path, name), encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target == folder:
                        continue
                    if target not in RANK:
                        bad.append(f"lib/{folder}/{name}:{lineno}: includes "
                                   f"from {target}/, which is not a layer")
                    elif RANK[target] >= RANK[folder]:
                        how = "up" if RANK[target] > RANK[folder] else \
                              "sideways"
                        bad.append(f"lib/{folder}/{name}:{lineno}: {folder}/ "
                                   f"includes {line.strip()[9:]} ({how}: "
                                   f"{target}/ is not below {folder}/)")
    return bad


def main():
    if len(sys.argv) != 2:
        print("usage: check-layers.py SOURCE_ROOT", file=sys.stderr)
        return 2
    bad = check(sys.argv[1])
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} include(s) break the layers (docs/design.md, "
              f"\"Layers\")")
        return 1
    print("layers hold: every include of lib/ goes down or stays in its "
          "folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
