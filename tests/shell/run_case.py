#!/usr/bin/env python3
"""Runs one shell test case: pipes scripts into `ravel`, compares output.

usage: run_case.py RAVEL CASE.test

A case file is a sequence of steps sharing one database ($DB) and one
scratch directory ($TMP).  Each step is made of sections:

    --- file NAME          write NAME into $TMP (text up to the next ---)
    --- file NAME escaped  the same, after Python backslash escapes
    --- args               the command line after `ravel`, split like a
                           shell would (default: $DB)
    --- input              standard input (default: nothing)
    --- output             expected stdout and stderr, merged, exactly
    --- output regex       the same, each line a regular expression
    --- file-equals NAME   $TMP/NAME must hold exactly this text
    --- exit N             expected exit code; ends the step

Lines before the first section, and lines starting with "#!" anywhere,
are comments.  $DB and $TMP are replaced everywhere.
"""
import codecs
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile


def parse(path):
    steps, step, section = [], {}, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if line.startswith("#!"):
            continue
        if line.startswith("--- "):
            words = line[4:].split()
            kind = words[0]
            if kind == "exit":
                step["exit"] = int(words[1])
                steps.append(step)
                step, section = {}, None
                continue
            section = [kind, words[1:], []]
            step.setdefault("sections", []).append(section)
            continue
        if section is not None:
            section[2].append(line)
    if step:
        raise SystemExit(f"{path}: a step does not end with '--- exit N'")
    return steps


def text_of(lines):
    return "".join(l + "\n" for l in lines)


def subst(text, env):
    return text.replace("$DB", env["DB"]).replace("$TMP", env["TMP"])


def run_step(ravel, step, env, n):
    args, stdin = [env["DB"]], ""
    checks = []
    for kind, opts, lines in step.get("sections", []):
        body = subst(text_of(lines), env)
        if kind == "file":
            data = body.encode()
            if "escaped" in opts:
                data = codecs.escape_decode(body.encode())[0]
            with open(os.path.join(env["TMP"], opts[0]), "wb") as f:
                f.write(data)
        elif kind == "args":
            args = shlex.split(subst(" ".join(lines), env))
        elif kind == "input":
            stdin = body
        elif kind in ("output", "file-equals"):
            checks.append((kind, opts, body))
        else:
            raise SystemExit(f"unknown section '{kind}'")
    p = subprocess.run([ravel] + args, input=stdin.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       cwd=env["TMP"], timeout=60,
                       env=dict(os.environ, HOME=env["TMP"], LC_ALL="C"))
    out = p.stdout.decode("utf-8", "backslashreplace")
    ok = True

    def fail(what, want, got):
        nonlocal ok
        ok = False
        print(f"step {n}: {what} differs\n--- expected\n{want}--- got\n{got}---")

    for kind, opts, body in checks:
        if kind == "output" and "regex" in opts:
            want, got = body.split("\n")[:-1], out.split("\n")[:-1]
            if len(want) != len(got) or not all(
                    re.fullmatch(w, g) for w, g in zip(want, got)):
                fail("output", body, out)
        elif kind == "output":
            if out != body:
                fail("output", body, out)
        else:
            path = os.path.join(env["TMP"], opts[0])
            got = open(path, encoding="utf-8").read() if os.path.exists(path) \
                else "(missing)\n"
            if got != body:
                fail(f"file {opts[0]}", body, got)
    if p.returncode != step["exit"]:
        ok = False
        print(f"step {n}: exit code {p.returncode}, expected {step['exit']}"
              f"\n--- output\n{out}---")
    return ok


def main():
    ravel, case = os.path.abspath(sys.argv[1]), sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="ravel-shell-test-")
    env = {"TMP": tmp, "DB": os.path.join(tmp, "db")}
    try:
        ok = True
        for n, step in enumerate(parse(case), 1):
            ok = run_step(ravel, step, env, n) and ok
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
