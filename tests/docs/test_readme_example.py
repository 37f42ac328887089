#!/usr/bin/env python3
"""test_readme_example.py -- the README's C example is a program that
compiles without warnings against the built library and runs.

usage: test_readme_example.py README.md INCLUDE_DIR LIBRAVEL CC [CC_ARG...]

Extracts the first ```c block of README.md, compiles it with the C compiler
meson found (-Wall -Wextra -Werror) against INCLUDE_DIR and the shared
library LIBRAVEL, runs it in a temporary directory (where it creates its
database), and checks that it exits 0 and prints what it read.
"""
import os
import re
import subprocess
import sys
import tempfile


def first_c_block(readme):
    with open(readme, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'^```c\n(.*?)^```', text, re.S | re.M)
    if not m:
        sys.exit('%s: no ```c block' % readme)
    return m.group(1)


def compile_example(source, tmp, include, lib, cc):
    """Compiles SOURCE in TMP (-Wall -Wextra -Werror) against INCLUDE and
    the shared library LIB; returns (program, None) or (None, the
    compiler's command and output)."""
    app = os.path.join(tmp, 'app.c')
    with open(app, 'w') as f:
        f.write(source)
    exe = os.path.join(tmp, 'app')
    libdir = os.path.dirname(os.path.abspath(lib))
    cmd = cc + ['-std=c11', '-Wall', '-Wextra', '-Werror',
                '-I', include, app, os.path.abspath(lib),
                '-Wl,-rpath,' + libdir, '-o', exe]
    r = subprocess.run(cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return None, '$ %s\n%s' % (' '.join(cmd), r.stdout)
    return exe, None


def main():
    readme, include, lib = sys.argv[1:4]
    cc = sys.argv[4:]
    source = first_c_block(readme)
    with tempfile.TemporaryDirectory() as tmp:
        exe, error = compile_example(source, tmp, include, lib, cc)
        if error:
            print('the README example does not compile:\n' + error)
            return 1
        for run in (1, 2):  # the second run reopens the database
            r = subprocess.run([exe], cwd=tmp, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               timeout=60)
            if r.returncode != 0:
                print('run %d: the README example exited %d\nstdout:\n%s'
                      'stderr:\n%s' % (run, r.returncode, r.stdout,
                                       r.stderr))
                return 1
            if 'a = 1' not in r.stdout:
                print('run %d: the README example did not print "a = 1":\n%s'
                      % (run, r.stdout))
                return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
