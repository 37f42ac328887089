#!/usr/bin/env python3
"""test_check_abi.py -- tools/check-abi.py reports every kind of ABI break.

usage: test_check_abi.py CHECK_ABI SRCDIR LIBRAVEL.so

Copies include/ravel.h, lib/ravel.map and lib/ravel.abi into a scratch
tree, checks that the unchanged copy passes, then damages it one way at a
time and checks that the checker fails naming the damage:
  - a function removed from the header (and the map);
  - a prototype changed (a parameter's type);
  - a constant's value changed;
  - a function added to an earlier release's version node (RAVEL_0.1
    while RAVEL_VERSION says 0.2.0);
  - a function added in a new node but not recorded (and that --update
    records it, attributes dropped, after which the check passes), then
    a parameter type changed from long long to long;
  - an enum, which the checker cannot read;
  - the built library exporting a symbol the map does not name;
  - a line of lib/ravel.abi removed in a later commit (git history).
"""
import os
import shutil
import subprocess
import sys
import tempfile

CHECKER = SRC = LIB = None
FAILURES = []


def scratch(tmp, name):
    root = os.path.join(tmp, name)
    for rel in ('include/ravel.h', 'lib/ravel.map', 'lib/ravel.abi'):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        shutil.copy(os.path.join(SRC, rel), os.path.join(root, rel))
    return root


def edit(root, rel, old, new):
    path = os.path.join(root, rel)
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if old not in text:
        raise SystemExit('%s: %r not found (update this test)' % (rel, old))
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text.replace(old, new, 1))


def check(root, expect_ok, expect_text, what, extra=()):
    p = subprocess.run([sys.executable, CHECKER, root] + list(extra),
                       capture_output=True, text=True)
    out = p.stdout + p.stderr
    ok = (p.returncode == 0) == expect_ok and expect_text in out
    if not ok:
        FAILURES.append(what)
        sys.stderr.write('FAIL: %s (exit %d)\n%s\n' % (what, p.returncode, out))


def git(root, *args):
    subprocess.run(['git', '-C', root, '-c', 'user.name=t',
                    '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false']
                   + list(args), check=True, capture_output=True)


def main():
    global CHECKER, SRC, LIB
    CHECKER, SRC, LIB = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        root = scratch(tmp, 'same')
        check(root, True, 'the ABI only grew', 'the unchanged copy passes',
              ['--lib', LIB])

        root = scratch(tmp, 'removed')
        edit(root, 'include/ravel.h',
             'RAVEL_API int ravel_verify(ravel_db *db);', '')
        edit(root, 'lib/ravel.map', '    ravel_verify;\n', '')
        check(root, False, 'ABI break: ravel_verify is gone',
              'a removed function')

        root = scratch(tmp, 'prototype')
        edit(root, 'include/ravel.h',
             'RAVEL_API int ravel_flush(ravel_db *db, int flags);',
             'RAVEL_API int ravel_flush(ravel_db *db, unsigned flags);')
        check(root, False, 'ABI break: ravel_flush changed',
              'a changed prototype')

        root = scratch(tmp, 'constant')
        edit(root, 'include/ravel.h', '#define RAVEL_LOCKED    7',
             '#define RAVEL_LOCKED    9')
        check(root, False, 'ABI break: RAVEL_LOCKED changed',
              'a changed constant')

        root = scratch(tmp, 'added-to-released-node')
        edit(root, 'include/ravel.h', '#define RAVEL_VERSION        "0.1.0"',
             '#define RAVEL_VERSION        "0.2.0"')
        edit(root, 'include/ravel.h',
             'RAVEL_API int ravel_verify(ravel_db *db);',
             'RAVEL_API int ravel_verify(ravel_db *db);\n'
             'RAVEL_API int ravel_new_thing(ravel_db *db, long long n);')
        edit(root, 'lib/ravel.map', '    ravel_verify;\n',
             '    ravel_verify;\n    ravel_new_thing;\n')
        check(root, False, 'new functions go in RAVEL_0.2',
              'an addition to an earlier release\'s version node')

        root = scratch(tmp, 'added')
        edit(root, 'include/ravel.h', '#define RAVEL_VERSION        "0.1.0"',
             '#define RAVEL_VERSION        "0.2.0"')
        edit(root, 'include/ravel.h',
             'RAVEL_API int ravel_verify(ravel_db *db);',
             'RAVEL_API int ravel_verify(ravel_db *db);\n'
             'RAVEL_API __attribute__((deprecated("use (x)")))\n'
             'int ravel_new_thing(ravel_db *db, const void *k, size_t klen,\n'
             '                    long long n);')
        with open(os.path.join(root, 'lib/ravel.map'), 'a') as f:
            f.write('RAVEL_0.2 {\n  global:\n    ravel_new_thing;\n'
                    '} RAVEL_0.1;\n')
        check(root, False, 'not yet in lib/ravel.abi', 'an unrecorded addition')
        check(root, True, 'recorded 1 new item', '--update records it',
              ['--update'])
        check(root, True, 'the ABI only grew', 'after --update it passes')
        with open(os.path.join(root, 'lib/ravel.abi'), encoding='utf-8') as f:
            if ('RAVEL_0.2 func int ravel_new_thing(ravel_db *, const void *, '
                    'size_t, long long)') not in f.read():
                FAILURES.append('--update writes the prototype (attributes '
                                'dropped, long long kept whole)')
        # long long -> long is a change, not a rename
        edit(root, 'include/ravel.h', 'long long n', 'long n')
        check(root, False, 'ABI break: ravel_new_thing changed',
              'a parameter type losing a word')

        root = scratch(tmp, 'enum')
        edit(root, 'include/ravel.h', '#define RAVEL_OK        0',
             'enum ravel_level { RAVEL_LEVEL_0 };\n#define RAVEL_OK        0')
        check(root, False, 'which tools/check-abi.py does not read',
              'an enum it cannot check')

        root = scratch(tmp, 'leak')
        edit(root, 'lib/ravel.map', '    ravel_verify;\n', '')
        edit(root, 'include/ravel.h',
             'RAVEL_API int ravel_verify(ravel_db *db);', '')
        check(root, False, 'exports ravel_verify, which lib/ravel.map does '
              'not name', 'a symbol the map does not name', ['--lib', LIB])

        root = scratch(tmp, 'history')
        git(root, 'init', '-q')
        git(root, 'add', '.')
        git(root, 'commit', '-q', '-m', 'first')
        edit(root, 'lib/ravel.abi', 'RAVEL_0.1 func int ravel_verify(ravel_db *)\n',
             '')
        edit(root, 'lib/ravel.map', '    ravel_verify;\n', '')
        edit(root, 'include/ravel.h',
             'RAVEL_API int ravel_verify(ravel_db *db);', '')
        git(root, 'commit', '-q', '-am', 'drop ravel_verify from the list')
        check(root, False, 'which the current list lacks',
              'a line dropped from the committed list')
    if FAILURES:
        sys.exit('%d check(s) failed: %s' % (len(FAILURES), '; '.join(FAILURES)))
    print('ok')


if __name__ == '__main__':
    main()
