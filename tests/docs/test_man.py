#!/usr/bin/env python3
"""test_man.py -- the manual pages are complete, render cleanly, and
ravel(3)'s example runs.

usage: test_man.py RAVEL.3 RAVEL.1 RAVEL_H INCLUDE_DIR LIBRAVEL CC [CC_ARG...]
       test_man.py --tools PAGE PROGRAM [PAGE PROGRAM ...]

- ravel(3) names every function and every RAVEL_ constant (but the version
  macros) include/ravel.h declares, and the version ravel.h gives;
- ravel(1), which `ravel -manpage` generates at build time, names every
  command-line option and every command of the shell's tables (it is
  generated from them; this catches a generator that drops some);
- both render without a warning (groff -ww), where groff is installed;
- the EXAMPLE of ravel(3) compiles without warnings against the built
  library, runs, and prints the value it wrote.

With --tools, for the pages the tools print of themselves (ravel-sst(1),
ravel-bench(1)): each PAGE has its .TH, renders without a warning, and
has an entry for every flag `PROGRAM --help` lists.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from test_readme_example import compile_example

FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print('FAIL:', msg)


def roff_plain(text):
    """The words of a roff page, escapes undone enough to search in."""
    text = text.replace('\\-', '-').replace('\\e', '\\').replace('\\&', '')
    return re.sub(r'\\f[BIRP]', '', text)


def header_names(ravel_h):
    with open(ravel_h, encoding='utf-8') as f:
        text = re.sub(r'/\*.*?\*/', ' ', f.read(), flags=re.S)
    funcs = re.findall(r'RAVEL_API\s+[^;(]*?\b(ravel_\w+)\s*\(', text)
    consts = [c for c in re.findall(r'^#\s*define\s+(RAVEL_\w+)', text, re.M)
              if c not in ('RAVEL_H', 'RAVEL_API')]
    return funcs, consts


def check_render(path):
    if not shutil.which('groff'):
        print('groff not installed: rendering of %s not checked' % path)
        return
    r = subprocess.run(['groff', '-man', '-Tutf8', '-ww', '-z', path],
                       capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        fail('%s: groff warns:\n%s' % (path, r.stderr))


def check_man3(man3, ravel_h):
    with open(man3, encoding='utf-8') as f:
        page = roff_plain(f.read())
    with open(ravel_h, encoding='utf-8') as f:
        version = re.search(r'#define RAVEL_VERSION\s+"([^"]+)"', f.read())
    th = re.search(r'^\.TH RAVEL 3 "[^"]*" "ravel ([^"]+)"', page, re.M)
    if not version or not th or th.group(1) != version.group(1):
        fail('ravel(3)\'s .TH names version %s, ravel.h %s: update the page'
             % (th and th.group(1), version and version.group(1)))
    funcs, consts = header_names(ravel_h)
    if len(funcs) < 40:
        fail('only %d functions read from %s' % (len(funcs), ravel_h))
    for name in funcs + consts:
        if not re.search(r'\b%s\b' % name, page):
            fail('ravel(3) does not name %s' % name)


def check_man1(man1, shell_sources):
    source = roff_source(man1)  # tags keep their \\fB..\\fR
    if '.TH RAVEL 1' not in source:
        fail('ravel(1) has no .TH RAVEL 1 header')
    with open(shell_sources, encoding='utf-8') as f:
        src = f.read()
    options = re.findall(r'^\s*\{"(-[a-z]+)", "', src, re.M)
    commands = re.findall(r'^\s*\{"(\.?[a-z][-a-z]*)", "[^"]*", "', src, re.M)
    if len(options) < 5 or len(commands) < 20:
        fail('read only %d options and %d commands from %s'
             % (len(options), len(commands), shell_sources))
    for name in options + commands:
        if not re.search(r'^\\fB%s\\fR' % re.escape(name), source, re.M):
            fail('ravel(1) has no entry for %s' % name)


def roff_source(path):
    with open(path, encoding='utf-8') as f:
        return f.read().replace('\\-', '-').replace('\\&', '')


def check_example(man3, include, lib, cc):
    with open(man3, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'^\.SH EXAMPLE\n\.nf\n(.*?)^\.fi', text, re.S | re.M)
    if not m:
        fail('ravel(3) has no EXAMPLE in .nf/.fi')
        return
    source = m.group(1).replace('\\e', '\\').replace('\\-', '-')
    with tempfile.TemporaryDirectory() as tmp:
        exe, error = compile_example(source, tmp, include, lib, cc)
        if error:
            fail('the ravel(3) example does not compile:\n' + error)
            return
        r = subprocess.run([exe], cwd=tmp, capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0 or 'k = v' not in r.stdout:
            fail('the ravel(3) example exited %d, printing:\n%s%s'
                 % (r.returncode, r.stdout, r.stderr))


def check_tool_page(page, program):
    source = roff_source(page)
    name = os.path.basename(program).upper()
    if not re.search(r'^\.TH %s 1 ' % re.escape(name), source, re.M):
        fail('%s has no .TH %s 1 header' % (page, name))
    r = subprocess.run([program, '--help'], capture_output=True, text=True,
                       timeout=60)
    flags = re.findall(r'^\s+(--[a-z][-_a-z0-9]*)', r.stdout, re.M)
    if r.returncode != 0 or len(flags) < 5:
        fail('%s --help: exit %d, %d flags read' % (program, r.returncode,
                                                    len(flags)))
    for flag in flags:
        if not re.search(r'^\\fB%s\\fR' % re.escape(flag), source, re.M):
            fail('%s has no entry for %s' % (page, flag))
    check_render(page)


def main():
    if sys.argv[1] == '--tools':
        args = sys.argv[2:]
        for page, program in zip(args[::2], args[1::2]):
            check_tool_page(page, program)
        sys.exit(1 if FAILURES else 0)
    man3, man1, ravel_h, shell_tables, include, lib = sys.argv[1:7]
    cc = sys.argv[7:]
    check_man3(man3, ravel_h)
    check_man1(man1, shell_tables)
    check_render(man3)
    check_render(man1)
    check_example(man3, include, lib, cc)
    sys.exit(1 if FAILURES else 0)


if __name__ == '__main__':
    main()
