#!/usr/bin/env python3
"""mkamalgamation.py -- builds amalgamation/ravel.c and amalgamation/ravel.h.

Like SQLite's mksqlite3c.tcl, this is plain text processing that relies on
lib/'s naming convention (lib/ravel_int.h): public ravel_x, cross-file rv_x
marked RAVEL_PRIVATE, file-local statics prefixed with their module's name.

ravel.h is include/ravel.h.  ravel.c is, in order:
  - a line naming the version and a digest of the rest of the file (the
    SHA-256 of everything after that line: the same sources give the same
    digest, so the line never goes stale the way a commit id did -- a
    file cannot name the commit that contains it; `git log -1 --
    amalgamation/ravel.c` tells which commit last changed it);
  - _GNU_SOURCE, and RAVEL_PRIVATE defined as static (unless predefined:
    the amalgamation test build passes -DRAVEL_PRIVATE= to reach rv_ hooks);
  - xxHash, inlined from tools/xxhash/xxhash.h (its licence and version
    first) under XXH_INLINE_ALL, so ravel.c needs no xxhash.h installed and
    no -lxxhash;
  - include/ravel.h, then every header below lib/ once, in dependency order
    (each `#include "dir/x.h"`, a path relative to lib/, resolved
    recursively, repeats dropped);
  - every .c file below lib/, in the order of meson.build's ravel_sources
    list.
A .c file below lib/ missing from that list, or listed but missing, is an
error.

Why xxHash is inlined, and from a copy in tools/: SQLite's promise -- copy
two files, compile with one cc line -- does not hold if ravel.c includes a
header a machine may lack (and the Rust crate's `bundled` feature, which
compiles ravel.c, would need libxxhash-dev).  XXH_INLINE_ALL makes every
xxHash function static (renamed XXH_INLINE_*), so ravel.c exports no XXH
symbol and a program that links its own libxxhash, or includes xxhash.h in
another translation unit, sees no clash.  The inlined text comes from the
copy committed in tools/xxhash/ (see its README), not from the system's
/usr/include/xxhash.h: machines carry different xxHash releases, and the
generated file must be the same on each, since CI regenerates it and
compares it with the committed one byte for byte.  lib/ itself keeps using
the system's xxhash.h; XXH3's output is fixed since xxHash 0.8.0, so both
compute the same checksums.

With --line-directives, every stretch of copied text is preceded by a
`#line N "lib/dir/file.c"` directive, so that compiler messages and a
debugger stepping through a build of ravel.c point into the real source
files (useful in a checkout; the committed copy has none, since a project
that drops ravel.c in has no lib/ to point to).

Usage: tools/mkamalgamation.py [--out DIR] [--line-directives]
The output depends only on lib/, include/, meson.build and tools/xxhash/,
so the same input gives byte-identical files (CI regenerates them and
compares with the committed copy).
"""

import argparse
import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, 'lib')
INCLUDE = os.path.join(ROOT, 'include')
XXHASH = os.path.join(ROOT, 'tools', 'xxhash', 'xxhash.h')

LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
XXHASH_INCLUDE = re.compile(r'^\s*#\s*include\s+<xxhash\.h>')


def die(msg):
    sys.stderr.write('mkamalgamation: %s\n' % msg)
    sys.exit(1)


def read(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if not text.endswith('\n'):
        text += '\n'
    return text


def rel(path):
    return os.path.relpath(path, ROOT)


def lib_files(suffix):
    """Every file below lib/ whose name ends with SUFFIX, sorted by path."""
    found = []
    for d, dirs, files in os.walk(LIB):
        dirs.sort()
        found += [os.path.join(d, f) for f in sorted(files) if f.endswith(suffix)]
    return sorted(found, key=rel)


def meson_sources():
    """The lib/*.c files of meson.build's `ravel_sources = files(...)`."""
    text = read(os.path.join(ROOT, 'meson.build'))
    m = re.search(r'^ravel_sources\s*=\s*files\((.*?)\)', text, re.S | re.M)
    if not m:
        die('meson.build: no `ravel_sources = files(...)` list')
    listed = re.findall(r"'([^']+)'", m.group(1))
    on_disk = sorted(rel(p) for p in lib_files('.c'))
    missing = sorted(set(on_disk) - set(listed))
    if missing:
        die('lib/ has %s, not in meson.build\'s ravel_sources: add it there '
            '(the amalgamation follows that list)' % ', '.join(missing))
    gone = sorted(set(listed) - set(on_disk))
    if gone:
        die('meson.build\'s ravel_sources lists %s, which is not in lib/'
            % ', '.join(gone))
    if len(set(listed)) != len(listed):
        die('meson.build\'s ravel_sources lists a file twice')
    return listed


STATIC_NAME = re.compile(r'^static\b[^(=;]*?\b([A-Za-z_]\w*)\s*[(\[=;]')
DEFINE_NAME = re.compile(r'^\s*#\s*define\s+([A-Za-z_]\w*)')


def check_names(sources):
    """In one translation unit a file-local static or macro of one .c file
    is visible to the files after it: two files defining the same name is
    an error here (rename it with the module's prefix, see ravel_int.h),
    not a surprise in the compiler."""
    owner = {}
    clashes = []
    for src in sources:
        for line in read(os.path.join(ROOT, src)).splitlines():
            for kind, rx in (('static', STATIC_NAME), ('macro', DEFINE_NAME)):
                m = rx.match(line)
                if not m:
                    continue
                key = (kind, m.group(1))
                first = owner.setdefault(key, src)
                if first != src:
                    clashes.append('%s %s in %s and %s'
                                   % (kind, m.group(1), first, src))
    if clashes:
        die('names that collide in one translation unit (prefix them with '
            'the module name):\n  ' + '\n  '.join(clashes))


def version():
    text = read(os.path.join(INCLUDE, 'ravel.h'))
    m = re.search(r'^#define RAVEL_VERSION\s+"([^"]+)"', text, re.M)
    if not m:
        die('include/ravel.h: no RAVEL_VERSION')
    return m.group(1)


def xxhash_version(text):
    """The release of the xxhash.h in TEXT, "0.8.1"."""
    parts = []
    for part in ('MAJOR', 'MINOR', 'RELEASE'):
        m = re.search(r'^#define XXH_VERSION_%s\s+(\d+)\s*$' % part, text, re.M)
        if not m:
            die('%s: no XXH_VERSION_%s' % (rel(XXHASH), part))
        parts.append(m.group(1))
    return '.'.join(parts)



class Amalgamation:
    def __init__(self, line_directives):
        self.out = []
        self.done = set()     # headers already inlined (or being inlined)
        self.line_directives = line_directives

    def line(self, number, path):
        if self.line_directives:
            self.emit('#line %d "%s"\n' % (number, rel(path)))

    def emit(self, text):
        self.out.append(text)

    def banner(self, what, path):
        self.emit('/************** %s %s **************/\n' % (what, rel(path)))

    def find_header(self, name, including):
        for d in (LIB, INCLUDE):
            path = os.path.join(d, name)
            if os.path.isfile(path):
                return os.path.normpath(path)
        die('%s: #include "%s" not found in lib/ or include/'
            % (rel(including), name))

    def inline(self, path):
        """Copies PATH, replacing each local #include by the header's text
        the first time it appears and by a comment after that."""
        self.banner('Begin file', path)
        self.line(1, path)
        for number, line in enumerate(read(path).splitlines(keepends=True), 1):
            m = LOCAL_INCLUDE.match(line)
            if m:
                header = self.find_header(m.group(1), path)
                if header in self.done:
                    self.emit('/* #include "%s" -- inlined above */\n'
                              % m.group(1))
                else:
                    self.done.add(header)
                    self.emit('/* #include "%s" */\n' % m.group(1))
                    self.inline(header)
                    self.banner('Continuing where we left off in', path)
                self.line(number + 1, path)
            elif XXHASH_INCLUDE.match(line):
                self.emit('/* #include <xxhash.h> -- inlined at the top, '
                          'with XXH_INLINE_ALL */\n')
            else:
                self.emit(line)
        self.banner('End of', path)

    def vendored(self, path):
        """Copies PATH, a third-party header, verbatim (its licence comment
        first, as it opens the file), named in a banner with its release.
        It must include nothing but system headers."""
        text = read(path)
        for number, line in enumerate(text.splitlines(), 1):
            if LOCAL_INCLUDE.match(line):
                die('%s:%d: #include "..." in a header the amalgamation '
                    'copies verbatim' % (rel(path), number))
        self.emit('/************** Begin file %s: xxHash %s, BSD 2-Clause '
                  'licence (verbatim below) **************/\n'
                  % (rel(path), xxhash_version(text)))
        self.line(1, path)
        self.emit(text)
        self.banner('End of', path)

    def header_first(self, path):
        path = os.path.normpath(path)
        if path not in self.done:
            self.done.add(path)
            self.inline(path)


PRELUDE = '''\
/*
** This file is an amalgamation of ravel's library: every source file of
** lib/ (and the public header, include/ravel.h) concatenated into one
** translation unit by tools/mkamalgamation.py.  Do not edit it: edit lib/
** and regenerate (ninja -C build amalgamation).
**
** Build:   cc -O2 -c ravel.c && link with -luring -lpthread
**          cc -O2 -DRAVEL_OMIT_IO_URING -c ravel.c   (pwrite only; -lpthread)
**          Block compression exists only if asked for: -DRAVEL_HAVE_LZ4
**          (link -llz4) for compression=lz4, -DRAVEL_HAVE_ZSTD (-lzstd)
**          for compression=zstd; -DRAVEL_OMIT_COMPRESSION removes both.
**          Without them only compression=none is accepted.
** Needs:   libc and pthreads; liburing.h unless RAVEL_OMIT_IO_URING;
**          lz4.h / zstd.h with those macros.  xxHash (BSD 2-Clause, its
**          licence below) is inlined, every function of it static: no
**          xxhash.h, no -lxxhash.  Only the ravel_ API is exported; every
**          internal function is static (RAVEL_PRIVATE), unless RAVEL_PRIVATE
**          is predefined (the test build uses -DRAVEL_PRIVATE= to reach
**          internal hooks).
*/
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#ifndef RAVEL_PRIVATE
# if defined(__GNUC__)
   /* unused: some rv_ functions are only called by tests and tools */
#  define RAVEL_PRIVATE static __attribute__((unused))
# else
#  define RAVEL_PRIVATE static
# endif
#endif
#define RAVEL_AMALGAMATION 1

/* xxHash, every function static and renamed XXH_INLINE_*: nothing of it is
** exported, and it cannot clash with a libxxhash linked into the same
** program. */
#ifndef XXH_INLINE_ALL
# define XXH_INLINE_ALL
#endif
'''


def generate(line_directives=False):
    ver = version()
    sources = meson_sources()
    check_names(sources)
    pub = os.path.join(INCLUDE, 'ravel.h')

    a = Amalgamation(line_directives)
    a.emit(PRELUDE)
    a.vendored(XXHASH)
    a.emit('\n')
    a.header_first(pub)
    # Every internal header, in dependency order: each pulls in what it
    # includes before itself.  Sorted, so the order does not depend on the
    # directory listing; ravel_int.h first, as every other header needs it.
    headers = lib_files('.h')
    headers.sort(key=lambda p: rel(p) != 'lib/ravel_int.h')
    for h in headers:
        a.header_first(h)
    for src in sources:
        a.emit('\n')
        a.inline(os.path.join(ROOT, src))
    body = ''.join(a.out)
    digest = hashlib.sha256(body.encode('utf-8')).hexdigest()[:16]
    gen = ('/* Generated by tools/mkamalgamation.py from ravel %s; '
           'sha256 of the rest of ravel.c: %s. */\n' % (ver, digest))
    return gen + read(pub), gen + body


def write_if_changed(path, text):
    try:
        if read(path) == text:
            return
    except FileNotFoundError:
        pass
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8', newline='\n') as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default=os.path.join(ROOT, 'amalgamation'),
                    help='output directory (default: amalgamation/)')
    ap.add_argument('--line-directives', action='store_true',
                    help='emit #line directives pointing into lib/')
    args = ap.parse_args()
    header, source = generate(args.line_directives)
    os.makedirs(args.out, exist_ok=True)
    write_if_changed(os.path.join(args.out, 'ravel.h'), header)
    write_if_changed(os.path.join(args.out, 'ravel.c'), source)


if __name__ == '__main__':
    main()
