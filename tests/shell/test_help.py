#!/usr/bin/env python3
"""`ravel -help`, `.help` and the README say the same thing.

usage: test_help.py RAVEL README.md [RAVEL-SST]

- `ravel -help` ends with exactly the text of `.help` (one table in
  shell/commands.c generates both);
- the README's "The shell" section holds `ravel -help` verbatim, and
  `ravel-sst --help` too;
- every command listed has a `.help CMD` page starting with its usage;
- no line is wider than 79 columns.
"""
import os
import re
import subprocess
import sys
import tempfile


def run(ravel, *args):
    return subprocess.run([ravel, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=30,
                          env=dict(os.environ, LC_ALL="C")).stdout.decode()


def main():
    ravel, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.environ["HOME"] = "/nonexistent"  # no ~/.ravelrc of whoever runs this
    failures = []
    helptext = run(ravel, "-help")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "db")
        dothelp = run(ravel, db, ".help")
        table = dothelp.split("Keys and values are byte strings")[0]
        names = re.findall(r"^  ([.a-z][-a-z]*)\b", table, re.M)
        for name in names:
            page = run(ravel, db, f".help {name}")
            if not page.startswith(f"usage: {name}"):
                failures.append(f".help {name} does not start with its usage:"
                                f"\n{page}")
    if not helptext.endswith(dothelp):
        failures.append("ravel -help does not end with the text of .help")
    if len(names) < 20:
        failures.append(f"only {len(names)} commands found in .help")
    for line in (helptext + dothelp).split("\n"):
        if len(line) > 79:
            failures.append(f"line wider than 79 columns: {line}")
    text = open(readme, encoding="utf-8").read()
    helps = [("ravel -help", helptext)]
    if len(sys.argv) > 3:
        ssthelp = run(os.path.abspath(sys.argv[3]), "--help")
        helps.append(("ravel-sst --help", ssthelp))
        for line in ssthelp.split("\n"):
            if len(line) > 79:
                failures.append(f"line wider than 79 columns: {line}")
    for what, help in helps:
        block = "".join("    " + l + "\n" if l else "\n"
                        for l in help.rstrip("\n").split("\n"))
        if block not in text:
            failures.append(f"README.md does not hold `{what}` verbatim "
                            "(indented by four spaces); paste this:\n" +
                            block)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
