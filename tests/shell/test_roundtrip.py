#!/usr/bin/env python3
""".dump -> .import into a fresh database gives identical contents, for
keys and values holding every byte value; and large imports.

usage: test_roundtrip.py RAVEL

1. Writes random binary pairs (every byte value, empty strings, long
   values, valid and invalid UTF-8) through the shell's x'..' syntax,
   in a batch, checks them against a Python model with `.mode hex` scan,
   dumps, imports the dump into a fresh database, and checks that its scan
   and its own dump are identical.
2. Imports 25,000 tab-separated lines (many batched writes) and counts.
3. A second shell on an open database fails cleanly (the LOCK).
4. Started with standard output closed, it writes nothing into the
   database's files.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

FAILURES = []


def check(what, cond, detail=""):
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}\n{detail}")


def run(ravel, *args, stdin=b""):
    p = subprocess.run([ravel, *args], input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120,
                       env=dict(os.environ, LC_ALL="C"))
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def random_bytes(rng):
    kind = rng.randrange(6)
    if kind == 0:
        return b""
    if kind == 1:
        return rng.randbytes(rng.randrange(1, 40))
    if kind == 2:
        return "".join(chr(rng.choice([rng.randrange(32, 127),
                                       rng.randrange(0xa0, 0x3000),
                                       rng.randrange(0x10000, 0x10400)]))
                       for _ in range(rng.randrange(1, 20))).encode()
    if kind == 3:
        return rng.randbytes(rng.randrange(2000, 70000))
    if kind == 4:
        return bytes([rng.randrange(256)])
    return rng.choice([b"\x00", b"\xff\xff", b"\t\n\r", b'"\\\'', b"{}", b"--x"])


def roundtrip(ravel, tmp):
    rng = random.Random(20240610)
    model = {}
    for b in range(256):  # every byte value as a key and in a value
        model[bytes([b])] = bytes([b, 255 - b])
    for _ in range(400):
        model[random_bytes(rng)] = random_bytes(rng)
    script = ["batch"]
    for k, v in model.items():
        script.append(f"put x'{k.hex()}' x'{v.hex()}'")
    script += ["commit", ".mode hex", "scan", "count"]
    db1, db2 = os.path.join(tmp, "one"), os.path.join(tmp, "two")
    code, out, err = run(ravel, db1, stdin="\n".join(script).encode())
    check("writing the pairs", code == 0 and not err, err)
    want = "".join(f"x'{k.hex()}'\tx'{model[k].hex()}'\n"
                   for k in sorted(model)) + f"{len(model)}\n"
    check("scan in .mode hex matches the model", out.decode() == want)

    dump = os.path.join(tmp, "dump.jsonl")
    code, _, err = run(ravel, db1, f".dump {dump}")
    check(".dump to a file", code == 0 and not err, err)
    code, _, err = run(ravel, db2, f".import {dump}")
    check(".import of the dump", code == 0 and not err, err)
    _, scan2, _ = run(ravel, db2, ".mode hex", "scan", "count")
    check("the imported database scans the same", scan2.decode() == want)
    _, dump1, _ = run(ravel, db1, ".dump")
    _, dump2, _ = run(ravel, db2, ".dump")
    check("the two dumps are identical", dump1 == dump2 and
          dump1 == open(dump, "rb").read())
    check("the dump is ASCII, one line per key",
          all(c < 128 for c in dump1) and dump1.count(b"\n") == len(model))
    # The text mode never prints a raw control byte.
    _, text, _ = run(ravel, db1, "scan")
    check("text mode escapes control bytes",
          not re.search(rb"[\x00-\x08\x0b-\x1f\x7f-\xff]", text))


def big_import(ravel, tmp):
    path = os.path.join(tmp, "big.tsv")
    with open(path, "w") as f:
        for i in range(25000):
            f.write(f"key{i:06d}\tvalue {i}\twith a tab\n")
    db = os.path.join(tmp, "big")
    code, out, err = run(ravel, db, f".import {path}", "count",
                         "get key012345", "count key010000 key020000")
    check("large tab-separated import", code == 0 and not err and
          out == b"25000\nvalue 12345\\twith a tab\n10000\n", out + err.encode())


def locked(ravel, tmp):
    db = os.path.join(tmp, "locked")
    holder = subprocess.Popen([ravel, db], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    holder.stdin.write(b"put a 1\nget a\n")
    holder.stdin.flush()
    holder.stdout.readline()  # the database is open once "1" comes back
    code, out, err = run(ravel, db, "get a")
    check("a second shell is refused with a clear message",
          code == 1 and err.startswith(f"error: cannot open database '{db}'")
          and err.count("\n") == 1, err)
    holder.stdin.close()
    check("the first shell ends normally", holder.wait(timeout=30) == 0)


def closed_stdout(ravel, tmp):
    """Started with standard output closed, the shell must not let the
    database take descriptor 1 and print values into its files."""
    db = os.path.join(tmp, "closed")
    p = subprocess.run([ravel, db, "put a 1", "get a", "scan"],
                       preexec_fn=lambda: os.close(1), timeout=30)
    code, out, err = run(ravel, db, "get a")
    check("closed stdout: the database is intact",
          p.returncode == 0 and code == 0 and out == b"1\n" and not err,
          (out + err.encode()).decode())
    for name in os.listdir(db):
        with open(os.path.join(db, name), "rb") as f:
            check(f"closed stdout: nothing printed into {name}",
                  b"1\na\t1" not in f.read())


def main():
    ravel = os.path.abspath(sys.argv[1])
    os.environ["HOME"] = "/nonexistent"  # no ~/.ravelrc of whoever runs this
    tmp = tempfile.mkdtemp(prefix="ravel-shell-roundtrip-")
    try:
        roundtrip(ravel, tmp)
        big_import(ravel, tmp)
        locked(ravel, tmp)
        closed_stdout(ravel, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
