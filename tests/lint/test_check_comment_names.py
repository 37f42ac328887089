#!/usr/bin/env python3
"""test_check_comment_names.py -- tools/check-comment-names.py fails on a
stale name in a comment and passes what it should.

usage: test_check_comment_names.py CHECKER

Builds a small tree (lib/, include/, shell/) in a temporary directory whose
comments name things that exist, things that do not, and words the checker
must leave alone, then checks the reported FILE:LINE: NAME lines exactly.
"""
import os
import subprocess
import sys
import tempfile

LIB_C = r'''/*
** demo.c -- a module.  rv_demo_open() opens; demo_helper does the rest.
** See ravel_int.h and wal_writer.c; the history is in ~/.ravel_history.
** The naming rules use ravel_x and rv_x as placeholders.
*/
#include "ravel_int.h"

static int demo_helper(int x)
{
    return x + (int)sizeof(int); /* sizeof(x) is not a name */
}

/* Calls rv_demo_gone (deleted) and demo_vanished_locked (renamed). */
int rv_demo_open(void)
{
    const char *s = "rv_only_in_a_string demo_option_name";
    (void)s;
    return demo_helper(1); /* like old_function() used to */
}

/* demo_option_name is an option name: it lives in a string. */
/* Example code in a comment is not checked:
**
**     int rc = shim_call(db);
*/
// a line comment naming ravel_missing_api
'''

INCLUDE_H = r'''/* ravel.h -- ravel_open_demo() is declared below; not ravel_nope(). */
int ravel_open_demo(void);
'''

WANT = [
    'lib/demo.c:13: rv_demo_gone',
    'lib/demo.c:13: demo_vanished_locked',
    'lib/demo.c:18: old_function',
    'lib/demo.c:26: ravel_missing_api',
    'include/ravel.h:1: ravel_nope',
]


def run(checker, root):
    return subprocess.run([sys.executable, checker, root],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def main():
    checker = sys.argv[1]
    with tempfile.TemporaryDirectory() as root:
        for d in ('lib', 'include', 'shell'):
            os.mkdir(os.path.join(root, d))
        with open(os.path.join(root, 'lib', 'demo.c'), 'w') as f:
            f.write(LIB_C)
        with open(os.path.join(root, 'include', 'ravel.h'), 'w') as f:
            f.write(INCLUDE_H)
        r = run(checker, root)
        got = [l for l in r.stdout.splitlines()
               if not l.startswith('check-comment-names:')]
        ok = True
        if r.returncode != 1:
            print('exit %d, want 1' % r.returncode)
            ok = False
        if sorted(got) != sorted(WANT):
            print('reported:\n  ' + '\n  '.join(got))
            print('wanted:\n  ' + '\n  '.join(WANT))
            ok = False

        # With the stale names fixed, it passes.
        fixed = LIB_C.replace('rv_demo_gone', 'rv_demo_open') \
            .replace('demo_vanished_locked', 'demo_helper') \
            .replace('old_function()', 'demo_helper()') \
            .replace('ravel_missing_api', 'ravel_open_demo')
        with open(os.path.join(root, 'lib', 'demo.c'), 'w') as f:
            f.write(fixed)
        with open(os.path.join(root, 'include', 'ravel.h'), 'w') as f:
            f.write(INCLUDE_H.replace('ravel_nope', 'ravel_open_demo'))
        r = run(checker, root)
        if r.returncode != 0:
            print('fixed tree: exit %d, want 0:\n%s' % (r.returncode,
                                                         r.stdout))
            ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
