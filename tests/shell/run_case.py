#!/usr/bin/env python3
"""Runs one shell test case: pipes scripts into `ravel`, compares output.

usage: run_case.py RAVEL CASE.test [NAME=PROGRAM ...]

A case file is a sequence of steps sharing one database ($DB) and one
scratch directory ($TMP).  Each step is made of sections:

    --- file NAME          write NAME into $TMP (text up to the next ---;
                           NAME may be a path: its directories are made)
    --- file NAME escaped  the same, after Python backslash escapes
    --- copy FROM TO       copy file FROM to TO (relative to $TMP)
    --- flip FILE OFFSET   flip the lowest bit of the byte at OFFSET of
                           FILE (a negative OFFSET counts from its end)
    --- program NAME       run the program given as NAME=PROGRAM instead
                           of `ravel`
    --- args               the command line after the program, split like
                           a shell would (default: $DB)
    --- input              standard input (default: nothing)
    --- output             expected stdout and stderr, merged, exactly
    --- output regex       the same, each line a regular expression
    --- file-equals NAME   $TMP/NAME must hold exactly this text
    --- skip-if            a regular expression (one line); if a line the
                           step printed matches it, the case is skipped
                           (exit 77, that line given as the reason): for
                           a feature the library does not have yet
    --- exit N             expected exit code; ends the step

Lines before the first section, and lines starting with "#!" anywhere,
are comments.  $DB, $TMP and $RAVEL (the shell) are replaced everywhere,
and so are $SST1, $SST2, ...: the table files (*.sst) of $DB in name
order, as they are when the step begins.  Sections run in their order; the program runs
at the end of the step.
"""
import codecs
import glob
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
    # $SST10 before $SST1: the longer names first.
    for name in sorted((k for k in env if k.startswith("SST")),
                       key=len, reverse=True):
        text = text.replace("$" + name, env[name])
    text = text.replace("$RAVEL", env["RAVEL"])
    return text.replace("$DB", env["DB"]).replace("$TMP", env["TMP"])


def table_files(env):
    """$SST1, $SST2, ...: the table files of $DB in name order."""
    for k in [k for k in env if k.startswith("SST")]:
        del env[k]
    tables = sorted(glob.glob(os.path.join(env["DB"], "*.sst")))
    for i, path in enumerate(tables, 1):
        env[f"SST{i}"] = path


def flip(path, offset):
    with open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        at = offset if offset >= 0 else size + offset
        if not 0 <= at < size:
            raise SystemExit(f"flip: offset {offset} is outside {path} "
                             f"({size} bytes)")
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ 1]))


class Skip(Exception):
    """A skip-if section matched: the case cannot run in this build."""


def run_step(programs, step, env, n):
    args, stdin = [env["DB"]], ""
    program = programs["ravel"]
    checks = []
    table_files(env)
    for kind, opts, lines in step.get("sections", []):
        body = subst(text_of(lines), env)
        opts = [subst(o, env) for o in opts]
        if kind == "copy":
            shutil.copyfile(os.path.join(env["TMP"], opts[0]),
                            os.path.join(env["TMP"], opts[1]))
        elif kind == "flip":
            flip(os.path.join(env["TMP"], opts[0]), int(opts[1]))
        elif kind == "program":
            if opts[0] not in programs:
                raise SystemExit(f"program '{opts[0]}' was not given")
            program = programs[opts[0]]
        elif kind == "file":
            data = body.encode()
            if "escaped" in opts:
                data = codecs.escape_decode(body.encode())[0]
            path = os.path.join(env["TMP"], opts[0])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        elif kind == "args":
            args = shlex.split(subst(" ".join(lines), env))
        elif kind == "input":
            stdin = body
        elif kind in ("output", "file-equals"):
            checks.append((kind, opts, body))
        elif kind == "skip-if":
            checks.insert(0, (kind, opts, body.rstrip("\n")))
        else:
            raise SystemExit(f"unknown section '{kind}'")
    p = subprocess.run([program] + args, input=stdin.encode(),
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
        if kind == "skip-if":
            for line in out.split("\n"):
                if re.search(body, line):
                    raise Skip(f"step {n}: {line}")
        elif kind == "output" and "regex" in opts:
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
    programs = {"ravel": ravel}
    for arg in sys.argv[3:]:
        name, _, path = arg.partition("=")
        programs[name] = os.path.abspath(path)
    tmp = tempfile.mkdtemp(prefix="ravel-shell-test-")
    env = {"TMP": tmp, "DB": os.path.join(tmp, "db"), "RAVEL": ravel}
    try:
        ok = True
        for n, step in enumerate(parse(case), 1):
            ok = run_step(programs, step, env, n) and ok
    except Skip as e:
        print(f"skipped: {e}")
        sys.exit(77)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
