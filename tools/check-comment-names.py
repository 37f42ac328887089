#!/usr/bin/env python3
"""check-comment-names.py -- every name a comment gives must exist in code.

A comment that names a function which was renamed or deleted sends the
reader looking for something that is not there.  This check makes the
rule mechanical for the C files of lib/, include/ and shell/:

  1. Each file is split into code and comments (string and character
     literals are dropped from the code; comments are kept with their line
     numbers).
  2. Every identifier of the code of all those files is collected: what is
     defined, called, or used as a macro, type or field.
  3. In comments, these look like names of things in code:
       rv_NAME, ravel_NAME     internal and public names (any case after
                               the prefix: rv_wal_open, RAVEL_OK is not
                               matched, lower-case prefixes only)
       NAME( or NAME()         a call, whatever its prefix
       MODULE_NAME             a word starting with the module prefix of
                               some static function of these files (wal_,
                               skiplist_, options_ ...: lib/ravel_int.h's
                               convention for file-local helpers), such as
                               wal_sync_sleep
     Each must occur in the code of step 2, or it is reported.  A
     MODULE_NAME may also occur inside a string literal instead (option
     names such as wal_io and wal_recovery_mode live in strings).

Not checked (these are not names of ravel's code):
  - text in an indented block of a comment (4 or more spaces after the
    comment's leading '**' or '*'): example code such as a binding's shim;
  - a name followed by a file extension (ravel_int.h, wal_writer.c) or
    preceded by '.', '/', '-' or '~' (file and path names such as
    .ravel_history);
  - a name followed by '(' that is a C keyword (sizeof(x), defined(X));
  - the names in ALLOWED below, each with the reason it may appear.

Usage: tools/check-comment-names.py [ROOT]
Prints FILE:LINE: NAME for each name not found and exits 1 if there is
any; exits 0 (printing how many names were checked) otherwise.
"""

import os
import re
import sys

DIRS = ('lib', 'include', 'shell')

# Names a comment may give that are not (and need not be) in ravel's code.
ALLOWED = {
    # the naming convention of lib/ravel_int.h, written with placeholders
    'ravel_x': 'placeholder in the naming rules',
    'rv_x': 'placeholder in the naming rules',
    'module_x': 'placeholder in the naming rules',
    # tools of other projects that comments compare ravel with
    'db_bench': "RocksDB's benchmark tool (ravel-bench takes its flags)",
}

C_KEYWORDS = {
    'sizeof', 'defined', 'if', 'while', 'for', 'switch', 'return',
    'alignof', '_Alignof', '_Static_assert', 'static_assert', 'offsetof',
    '__attribute__', 'typeof', '__typeof__', '_Generic',
}

IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
PREFIXED = re.compile(r'(?<![A-Za-z0-9_])(?:rv|ravel)_[A-Za-z0-9_]+')
CALL = re.compile(r'(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\(')
FILE_SUFFIX = re.compile(r'\.(?:c|h|md|py|txt|log|test|sh|build|pc)\b')


STATIC_FN = re.compile(r'^static\b[^;{}=()]*?\b([a-z][a-z0-9]*)_[a-z0-9_]*\s*\(',
                       re.M)


def split_code_comments(text):
    """Returns (code, comments, strings): code with comments, strings and
    character literals blanked out (newlines kept); comments as (line,
    text) pairs, one per line of comment text; the text of the string
    literals."""
    code = []
    comments = []
    strings = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            end = text.find('*/', i + 2)
            end = n if end < 0 else end + 2
            body = text[i:end]
            for k, part in enumerate(body.split('\n')):
                comments.append((line + k, part))
            line += body.count('\n')
            code.append('\n' * body.count('\n'))
            i = end
        elif text.startswith('//', i):
            end = text.find('\n', i)
            end = n if end < 0 else end
            comments.append((line, text[i:end]))
            i = end
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            lit = text[i:j]
            strings.append(lit)
            line += lit.count('\n')
            code.append(' ' + '\n' * lit.count('\n'))
            i = j
        else:
            if c == '\n':
                line += 1
            code.append(c)
            i += 1
    return ''.join(code), comments, strings


def comment_text(raw):
    """The text of one comment line without its markers, or None if the
    line is part of an indented example block."""
    s = raw
    s = re.sub(r'^\s*/\*+', '', s)
    s = re.sub(r'\*+/\s*$', '', s)
    s = re.sub(r'^\s*//+', '', s)
    m = re.match(r'^\s*\*+', s)
    if m:
        s = s[m.end():]
    if s.startswith('    ') and s.strip():
        return None
    return s


def names_in_comment(s, modules):
    """(name, may_be_in_a_string) for every name-like word in comment text
    S; MODULES is the set of static-function module prefixes."""
    found = {}
    for m in PREFIXED.finditer(s):
        found.setdefault(m.start(), (m.group(0), False))
    for m in CALL.finditer(s):
        if m.group(1) not in C_KEYWORDS:
            found.setdefault(m.start(1), (m.group(1), False))
    for m in IDENT.finditer(s):
        word = m.group(0)
        if '_' in word.strip('_') and word.split('_', 1)[0] in modules \
                and (m.start() == 0 or not (s[m.start() - 1].isalnum()
                                            or s[m.start() - 1] == '_')):
            found.setdefault(m.start(), (word, True))
    for pos, (name, in_string) in sorted(found.items()):
        end = pos + len(name)
        if FILE_SUFFIX.match(s, end):
            continue
        if pos > 0 and s[pos - 1] in './-~':
            continue
        if name.isdigit():
            continue
        yield name, in_string


def c_files(root):
    for d in DIRS:
        top = os.path.join(root, d)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(('.c', '.h')):
                    yield os.path.join(dirpath, f)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = list(c_files(root))
    if not files:
        sys.stderr.write('check-comment-names: no C files under %s\n' % root)
        return 2
    code_names = set()
    string_names = set()
    modules = set()
    all_comments = []
    for path in files:
        with open(path, encoding='utf-8') as f:
            code, comments, strings = split_code_comments(f.read())
        code_names.update(IDENT.findall(code))
        for lit in strings:
            string_names.update(IDENT.findall(lit))
        modules.update(STATIC_FN.findall(code))
        all_comments.append((path, comments))

    bad = []
    checked = 0
    for path, comments in all_comments:
        for line, raw in comments:
            s = comment_text(raw)
            if s is None:
                continue
            for name, in_string in names_in_comment(s, modules):
                checked += 1
                if name in code_names or name in ALLOWED:
                    continue
                if in_string and name in string_names:
                    continue
                bad.append('%s:%d: %s' % (os.path.relpath(path, root), line,
                                          name))
    if bad:
        print('\n'.join(bad))
        print('check-comment-names: %d name(s) in comments not found in the '
              'code of %s' % (len(bad), ', '.join(DIRS)))
        return 1
    print('check-comment-names: %d names in comments, all found in code'
          % checked)
    return 0


if __name__ == '__main__':
    sys.exit(main())
