#!/usr/bin/env python3
"""test_properties.py -- ravel.h's list of properties is the library's.

usage: test_properties.py RAVEL RAVEL_H

The table of lib/db/properties.c is the one home of each property's name
and aliases; `.help property` prints it (shell/property_names.c).  This
checks, against that list:

- include/ravel.h, the table in the comment above ravel_property: every
  name, every RocksDB alias (rocksdb.X for a name marked *) and every
  deprecated name is in it, and it names no property the library lacks;
- each name and alias reads through the shell (`property NAME` succeeds)
  and an unknown one fails, naming the known ones.
"""
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print('FAIL:', msg)


def library_names(ravel, db):
    """{name: [aliases]} from `.help property`."""
    out = subprocess.run([ravel, db, '.help property'], capture_output=True,
                         text=True, timeout=60).stdout
    names = {}
    for m in re.finditer(r'^  (ravel\.[-a-z]+N?)( \*)?(?:  \(was (\S+)\))?$',
                         out, re.M):
        name, star, was = m.groups()
        aliases = []
        if star:
            aliases.append('rocksdb.' + name[len('ravel.'):])
        if was:
            aliases.append(was)
        names[name] = aliases
    if len(names) < 20:
        fail('read only %d properties from .help property:\n%s'
             % (len(names), out))
    return names


def header_names(ravel_h):
    with open(ravel_h, encoding='utf-8') as f:
        text = f.read()
    end = text.index('RAVEL_API int ravel_property(')
    start = text.rindex('/*', 0, text.rindex('*/', 0, end))
    return set(re.findall(r'\b((?:ravel|rocksdb)\.[-a-zA-Z_]+N?)', 
                          text[start:end]))


def expand(name):
    """ravel.num-files-at-levelN is seven names."""
    if name.endswith('levelN'):
        return [name[:-1] + str(level) for level in range(7)]
    return [name]


def main():
    ravel, ravel_h = os.path.abspath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, 'db')
        subprocess.run([ravel, db, 'put a 1'], check=True, timeout=60,
                       capture_output=True)
        names = library_names(ravel, db)
        in_header = header_names(ravel_h)
        listed = set()
        for name, aliases in names.items():
            for n in [name] + aliases:
                listed.add(n)
                if n not in in_header:
                    fail('ravel.h does not list %s' % n)
        for n in sorted(in_header - listed):
            if n.startswith('ravel.') and n.endswith('.h'):
                continue
            fail('ravel.h lists %s, which the library does not know' % n)
        words = [w for name, aliases in names.items()
                 for n in [name] + aliases for w in expand(n)]
        cmds = ['property ' + w for w in words]
        r = subprocess.run([ravel, db] + cmds, capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            fail('reading every name and alias failed:\n%s' % r.stderr)
        r = subprocess.run([ravel, db, 'property rocksdb.num-snapshots'],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0 or 'known: ravel.{stats,' not in r.stderr:
            fail('an unknown name: exit %d, %s' % (r.returncode, r.stderr))
    sys.exit(1 if FAILURES else 0)


if __name__ == '__main__':
    main()
