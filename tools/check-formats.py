#!/usr/bin/env python3
"""check-formats.py -- each on-disk format's grammar has one home: the
comment at the top of the file of lib/ that owns the format.
docs/formats.md describes the formats in prose and tables, and where it
gives a grammar it quotes that home: every grammar line of the document
(a line of an indented block defining a production with ":=") must be a
grammar line of lib/ as it is (spaces collapsed).  And no grammar line is
written twice in lib/ (a copy in a second file drifts).

Usage: check-formats.py SOURCE_ROOT; exits 1 naming each line that breaks
this, 0 otherwise.
"""
import os
import re
import sys

GRAMMAR = re.compile(r"^\s*\*\*\s+(\S.*?:=.*)$")


def norm(line):
    return " ".join(line.split())


def grammar_lines(root):
    found = []
    for dirpath, _, files in os.walk(os.path.join(root, "lib")):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    m = GRAMMAR.match(line)
                    if m:
                        found.append((os.path.relpath(path, root), lineno,
                                      norm(m.group(1))))
    return found


def doc_grammar(root):
    path = os.path.join(root, "docs", "formats.md")
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("    ") and ":=" in line:
                out.append((lineno, norm(line)))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    bad = []
    code = grammar_lines(root)
    first = {}
    for path, lineno, g in code:
        if g in first and first[g][0] != path:
            bad.append(f"{path}:{lineno}: this grammar line is also in "
                       f"{first[g][0]}:{first[g][1]}: one home, point to it")
        first.setdefault(g, (path, lineno))
    for lineno, g in doc_grammar(root):
        if g not in first:
            bad.append(f"docs/formats.md:{lineno}: not the grammar of lib/ "
                       f"(quote the header that owns the format): {g}")
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} problem(s) (tools/check-formats.py)")
        return 1
    print(f"formats: {len(code)} grammar lines in lib/, one home each; "
          f"docs/formats.md quotes them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
