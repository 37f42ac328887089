#!/usr/bin/env python3
"""check-abi.py -- the ABI only grows.

usage: check-abi.py SRCDIR [--lib LIBRAVEL.so] [--update] [--require-history]

The ABI of libravel is written down in lib/ravel.abi, one line per item:

    RAVEL_0.1 func int ravel_open(const char *, const ravel_options *, ravel_db **)
    - const RAVEL_NOTFOUND 1

A function line names the version node of lib/ravel.map that exports it and
its prototype with the parameter names dropped (they are not part of the
ABI); a constant line gives the value of a #define of include/ravel.h (the
result codes, flags and limits callers compile into their binaries; the
version macros, which change at each release, are not in it).

The check fails when:
  - an item of lib/ravel.abi is gone or changed: a function removed, its
    prototype or version node changed, a constant's value changed.  This
    is an ABI break and is never allowed;
  - an earlier committed version of lib/ravel.abi (git history) holds an
    item the current one lacks or holds differently, so the list cannot be
    edited to hide a break;
  - include/ravel.h and lib/ravel.map disagree: every RAVEL_API function
    is exported by exactly one version node, and the map exports nothing
    else;
  - with --lib, the shared library exports anything but the map's
    functions, or exports one under another version node;
  - include/ravel.h has items lib/ravel.abi lacks: new functions or
    constants are allowed, but must be recorded (rerun with --update,
    which adds them, and commit the list);
  - a new function is not in the version node of the release being built
    (RAVEL_<major>.<minor> of RAVEL_VERSION): an earlier release's node
    never grows, a new one inherits it;
  - include/ravel.h declares an enum or a function-like macro, which this
    script does not read (so it could not check them).
Without git history (a tarball) or with only part of it (a shallow
clone) the earlier lists are not all compared: a warning, or with
--require-history (CI) an error.
"""
import os
import re
import subprocess
import sys

ABI_FILE = os.path.join('lib', 'ravel.abi')
MAP_FILE = os.path.join('lib', 'ravel.map')
HEADER = os.path.join('include', 'ravel.h')
# Macros whose value is expected to change from release to release.
NOT_ABI_MACROS = {'RAVEL_H', 'RAVEL_API', 'RAVEL_VERSION',
                  'RAVEL_VERSION_NUMBER'}


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


# Words that are part of a type, never a parameter's name.
TYPE_WORDS = {'void', 'char', 'short', 'int', 'long', 'float', 'double',
              'signed', 'unsigned', 'const', 'volatile', 'restrict',
              '_Bool', 'bool'}


def is_type_name(word):
    """A typedef name: size_t, uint64_t, ravel_db ... (never a parameter
    name in ravel.h, whose parameters are lower-case words)."""
    return word in TYPE_WORDS or word.endswith('_t') or \
        word.startswith('ravel_')


def normalize_param(param):
    """'const void *key' -> 'const void *'; 'long long' stays; 'void' stays.
    The trailing word is dropped only when it is a name: after a '*', or
    after a type when it is no type word itself (nor struct/enum's tag)."""
    words = re.findall(r'[A-Za-z_]\w*|\*|\[\w*\]', param)
    if len(words) >= 2 and re.match(r'[A-Za-z_]', words[-1]):
        last, before = words[-1], words[-2]
        if before == '*' or (not is_type_name(last) and
                             before not in ('struct', 'enum', 'union')):
            words = words[:-1]
    text = ' '.join(words)
    text = re.sub(r' ?\* ?', ' *', text).strip()
    return re.sub(r'\* \*', '**', re.sub(r'\* \*', '**', text))


def strip_attributes(code):
    """CODE without __attribute__((...)) (balanced parentheses), which a
    deprecated or annotated declaration carries."""
    out, i = [], 0
    while True:
        j = code.find('__attribute__', i)
        if j < 0:
            return ''.join(out) + code[i:]
        out.append(code[i:j])
        k = code.index('(', j)
        depth = 0
        while True:
            depth += {'(': 1, ')': -1}.get(code[k], 0)
            k += 1
            if depth == 0:
                break
        i = k


def header_items(srcdir):
    """{name: ('func', prototype) or ('const', value)} of include/ravel.h."""
    with open(os.path.join(srcdir, HEADER), encoding='utf-8') as f:
        raw = f.read()
    text = strip_comments(raw).replace('\\\n', ' ')  # continued lines
    code = re.sub(r'^\s*#[^\n]*', ' ', text, flags=re.M)  # no directives
    code = strip_attributes(code)
    # What this checker cannot read must not pass unchecked.
    for what, pattern in (('an enum', r'\benum\b'),
                          ('a function-like macro',
                           r'^\s*#\s*define\s+RAVEL_\w+\(')):
        if re.search(pattern, code if what == 'an enum' else text, re.M):
            raise SystemExit('%s declares %s, which tools/check-abi.py does '
                             'not read: teach it first' % (HEADER, what))
    items = {}
    for m in re.finditer(r'RAVEL_API\s+([^;{]*?)\(([^;{]*?)\)\s*;', code):
        head = ' '.join(m.group(1).split())
        name_m = re.search(r'([A-Za-z_]\w*)$', head)
        if not name_m:
            raise SystemExit('%s: cannot read the declaration %r'
                             % (HEADER, m.group(0)))
        name = name_m.group(1)
        ret = re.sub(r'\s*\*\s*', ' *', head[:name_m.start()]).strip()
        params = [normalize_param(p) for p in m.group(2).split(',')]
        sep = '' if ret.endswith('*') else ' '
        items[name] = ('func', '%s%s%s(%s)' % (ret, sep, name,
                                               ', '.join(params)))
    for m in re.finditer(r'^#\s*define\s+(RAVEL_\w+)\s+(.+)$', text, re.M):
        name, value = m.group(1), ' '.join(m.group(2).split())
        if name in NOT_ABI_MACROS:
            continue
        items[name] = ('const', value)
    return items


def version_node(srcdir):
    """RAVEL_<major>.<minor> of include/ravel.h's RAVEL_VERSION."""
    with open(os.path.join(srcdir, HEADER), encoding='utf-8') as f:
        m = re.search(r'#\s*define\s+RAVEL_VERSION\s+"(\d+)\.(\d+)\.',
                      f.read())
    if not m:
        raise SystemExit('%s: no RAVEL_VERSION "X.Y.Z"' % HEADER)
    return 'RAVEL_%s.%s' % m.groups()


def latest_node(nodes, other_than):
    """The newest node of the map but OTHER_THAN, which a new one inherits."""
    def key(node):
        return [int(x) for x in re.findall(r'\d+', node)]
    older = sorted({v for v in nodes.values() if v != other_than}, key=key)
    return older[-1] if older else 'RAVEL_0.1'


def map_nodes(srcdir):
    """{function: version node} of lib/ravel.map."""
    with open(os.path.join(srcdir, MAP_FILE), encoding='utf-8') as f:
        text = re.sub(r'#[^\n]*', ' ', f.read())
    exported = {}
    for node in re.finditer(r'(\w[\w.]*)\s*\{(.*?)\}\s*[\w.]*\s*;', text,
                            re.S):
        body = node.group(2)
        glob = re.search(r'global\s*:(.*?)(local\s*:|$)', body, re.S)
        if not glob:
            continue
        for sym in re.findall(r'([A-Za-z_]\w*)\s*;', glob.group(1)):
            if sym in exported:
                raise SystemExit('%s: %s is in two version nodes (%s, %s)'
                                 % (MAP_FILE, sym, exported[sym],
                                    node.group(1)))
            exported[sym] = node.group(1)
    return exported


def format_item(name, item, node):
    kind, value = item
    if kind == 'func':
        return '%s func %s' % (node, value)
    return '- const %s %s' % (name, value)


def parse_abi(text, where):
    """{name: line} of an abi file's text."""
    items = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        parts = line.split(' ', 2)
        if len(parts) < 3 or parts[1] not in ('func', 'const'):
            raise SystemExit('%s: bad line %r' % (where, line))
        if parts[1] == 'func':
            name = re.search(r'([A-Za-z_]\w*)\(', parts[2]).group(1)
        else:
            name = parts[2].split(' ', 1)[0]
        items[name] = line
    return items


def is_shallow(srcdir):
    r = subprocess.run(['git', '-C', srcdir, 'rev-parse',
                        '--is-shallow-repository'],
                       capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() == 'true'


def git_history(srcdir):
    """[(commit, text)] of every committed version of lib/ravel.abi."""
    try:
        commits = subprocess.run(
            ['git', '-C', srcdir, 'log', '--format=%H', '--', ABI_FILE],
            capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    out = []
    for c in commits:
        r = subprocess.run(['git', '-C', srcdir, 'show', '%s:%s' % (c, ABI_FILE)],
                           capture_output=True, text=True)
        if r.returncode == 0:  # absent in a commit that deleted it
            out.append((c, r.stdout))
    return out


def library_exports(lib):
    """{symbol: version node} the shared library exports (defined, dynamic)."""
    r = subprocess.run(['readelf', '--dyn-syms', '--wide', lib],
                       capture_output=True, text=True, check=True)
    exported = {}
    for line in r.stdout.splitlines():
        f = line.split()
        # UND: imported; ABS: the version node's own definition symbol
        if len(f) < 8 or f[6] in ('UND', 'ABS') or \
                f[4] not in ('GLOBAL', 'WEAK'):
            continue
        if f[3] not in ('FUNC', 'OBJECT', 'NOTYPE', 'IFUNC'):
            continue
        name, _, node = f[7].partition('@')
        node = node.lstrip('@')
        exported[name] = node
    return exported


def main():
    args = sys.argv[1:]
    update = '--update' in args
    require_history = '--require-history' in args
    lib = None
    if '--lib' in args:
        lib = args[args.index('--lib') + 1]
    positional = [a for i, a in enumerate(args)
                  if not a.startswith('--') and (i == 0 or args[i - 1] != '--lib')]
    srcdir = positional[0] if positional else '.'
    errors = []

    header = header_items(srcdir)
    nodes = map_nodes(srcdir)
    funcs = {n for n, it in header.items() if it[0] == 'func'}
    for n in sorted(funcs - set(nodes)):
        errors.append('%s declares %s but %s does not export it'
                      % (HEADER, n, MAP_FILE))
    for n in sorted(set(nodes) - funcs):
        errors.append('%s exports %s, which %s does not declare'
                      % (MAP_FILE, n, HEADER))

    current = {n: format_item(n, it, nodes.get(n, '?'))
               for n, it in header.items()}
    abi_path = os.path.join(srcdir, ABI_FILE)
    with open(abi_path, encoding='utf-8') as f:
        abi_text = f.read()
    committed = parse_abi(abi_text, ABI_FILE)
    for n, line in sorted(committed.items()):
        if n not in current:
            errors.append('ABI break: %s is gone (was: %s)' % (n, line))
        elif current[n] != line:
            errors.append('ABI break: %s changed\n    was: %s\n    now: %s'
                          % (n, line, current[n]))
    history = git_history(srcdir)
    if history is None or is_shallow(srcdir):
        what = ('not a git checkout' if history is None else
                'a shallow clone (git fetch --unshallow gives the rest)')
        if require_history:
            errors.append('%s: the earlier lists cannot be compared' % what)
        else:
            print('check-abi: WARNING: %s; only the history present is '
                  'compared' % what, file=sys.stderr)
    for commit, text in history or []:
        for n, line in parse_abi(text, '%s:%s' % (commit[:10], ABI_FILE)).items():
            if committed.get(n) != line:
                errors.append('%s at %s had %r, which the current list %s'
                              % (ABI_FILE, commit[:10], line,
                                 'lacks' if n not in committed
                                 else 'holds differently'))

    if lib:
        exports = library_exports(lib)
        for n in sorted(set(exports) - set(nodes)):
            errors.append('%s exports %s, which %s does not name'
                          % (lib, n, MAP_FILE))
        for n in sorted(set(nodes) - set(exports)):
            errors.append('%s does not export %s' % (lib, n))
        for n in sorted(set(nodes) & set(exports)):
            if exports[n] != nodes[n]:
                errors.append('%s exports %s under version %r, not %s'
                              % (lib, n, exports[n], nodes[n]))

    added = sorted(set(current) - set(committed))
    # New functions go into the version node of the release being built,
    # named after RAVEL_VERSION (0.2.x: RAVEL_0.2): the nodes of earlier
    # releases never grow, since binaries may already use them.
    open_node = version_node(srcdir)
    for n in added:
        if header[n][0] == 'func' and nodes.get(n) != open_node:
            errors.append('%s is added to version node %s: new functions go '
                          'in %s, the node of RAVEL_VERSION (add it to %s, '
                          'e.g. %s { global: %s; } %s;)'
                          % (n, nodes.get(n), open_node, MAP_FILE, open_node,
                             n, latest_node(nodes, open_node)))
    if added and update and not errors:
        with open(abi_path, 'a', encoding='utf-8') as f:
            for n in added:
                f.write(current[n] + '\n')
        print('check-abi: recorded %d new item(s) in %s: %s'
              % (len(added), ABI_FILE, ', '.join(added)))
    elif added:
        errors.append('%d new item(s) not yet in %s (run tools/check-abi.py '
                      '--update and commit it): %s'
                      % (len(added), ABI_FILE, ', '.join(added)))

    for e in errors:
        print('check-abi: ' + e, file=sys.stderr)
    if errors:
        return 1
    print('check-abi: %d functions, %d constants; the ABI only grew'
          % (len(funcs), len(current) - len(funcs)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
