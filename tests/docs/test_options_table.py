#!/usr/bin/env python3
"""test_options_table.py -- the option lists agree with the options table.

usage: test_options_table.py OPTIONS_TABLE RAVEL_H RAVEL.3 [RAVEL.1]

The options table of lib/base/options.c is the one home of each option's
name, default, range and doc.  OPTIONS_TABLE is a test program
(options_table.c) that prints it as JSON, from the built library.  This
checks, against it:

- the table itself: each default within its range (an enum's among its
  values), each conflict an option that lists this one back;
- include/ravel.h, the list in the comment above ravel_options_set: every
  option of the table has an entry "name=default", no entry names an option
  the table lacks, each default is the table's, and each range written in
  an entry ("4K .. 4G") is the table's -- every option with a range gives
  it there; an enum's entry names each of its values;
- ravel(1), whose DATABASE OPTIONS section `ravel -manpage` prints from the
  table: every option with the table's default and range (this catches a
  generator that drops or misprints some);
- ravel(3): every option it names in its OPTIONS section exists.

Sizes compare by value: ravel.h's 64M is the table's 64M or 67108864.
"""
import json
import re
import subprocess
import sys

FAILURES = []
SUFFIXES = 'KMGTP'


def fail(msg):
    FAILURES.append(msg)
    print('FAIL:', msg)


def number(text):
    """A quantity as the parser reads it (64M, 4096), or None."""
    m = re.fullmatch(r'(\d+)([KMGTPkmgtp]?)', text)
    if not m:
        return None
    shift = 10 * (SUFFIXES.index(m.group(2).upper()) + 1) if m.group(2) else 0
    return int(m.group(1)) << shift


def same_value(opt, written):
    """Whether WRITTEN (ravel.h's or a page's text) is OPT's default."""
    if opt['kind'] in ('bool', 'enum'):
        return written == opt['default']
    return number(written) is not None and \
        number(written) == number(opt['default'])


RANGE = re.compile(r'(?<![\w.])(\d+[KMGTP]?) \.\. (\d+[KMGTP]?)(?!\w)')


def check_range(opt, text, where):
    """TEXT's ranges are OPT's; an option with a range must give it."""
    ranges = RANGE.findall(text)
    if opt['min'] and not ranges:
        fail('%s: %s gives no range; the table says %s .. %s'
             % (where, opt['name'], opt['min'], opt['max']))
    for lo, hi in ranges:
        if not opt['min']:
            fail('%s: %s gives a range %s .. %s, the table none (a %s)'
                 % (where, opt['name'], lo, hi, opt['kind']))
        elif (number(lo), number(hi)) != (number(opt['min']),
                                          number(opt['max'])):
            fail('%s: %s\'s range is %s .. %s, the table\'s %s .. %s'
                 % (where, opt['name'], lo, hi, opt['min'], opt['max']))


def check_table(table):
    names = [o['name'] for o in table]
    if len(names) < 30 or len(set(names)) != len(names):
        fail('the table dump lists %d options, %d distinct'
             % (len(names), len(set(names))))
    by_name = {o['name']: o for o in table}
    for o in table:
        if o['kind'] == 'enum':
            if o['default'] not in o['choices']:
                fail('table: %s\'s default %s is not one of %s'
                     % (o['name'], o['default'], o['choices']))
        elif o['kind'] == 'bool':
            if o['default'] not in ('true', 'false'):
                fail('table: %s\'s default is %s' % (o['name'], o['default']))
        elif not (number(o['min']) <= number(o['default'])
                  <= number(o['max'])):
            fail('table: %s\'s default %s is outside %s .. %s'
                 % (o['name'], o['default'], o['min'], o['max']))
        if not o['doc']:
            fail('table: %s has no doc' % o['name'])
        for c in o['conflicts']:
            if c not in by_name:
                fail('table: %s conflicts with %s, which is no option'
                     % (o['name'], c))
            elif o['name'] not in by_name[c]['conflicts']:
                fail('table: %s lists %s as a conflict, but not the other '
                     'way round' % (o['name'], c))


def header_entries(ravel_h):
    """The entries of the option list above ravel_options_set: name ->
    (default as written, the entry's text with its lines joined)."""
    with open(ravel_h, encoding='utf-8') as f:
        text = f.read()
    end = text.index('RAVEL_API int ravel_options_set(')
    start = text.rindex('/*', 0, end)
    entries = {}
    current = None
    for line in text[start:end].split('\n'):
        m = re.match(r'^\*\*   (\w+)=(\S+)(.*)$', line)
        if m:
            if m.group(1) in entries:
                fail('ravel.h lists %s twice' % m.group(1))
            current = [m.group(2), m.group(3)]
            entries[m.group(1)] = current
        elif current and re.match(r'^\*\*\s{4,}\S', line):
            current[1] += ' ' + line[2:].strip()
        else:
            current = None
    return {n: (d, re.sub(r'\s+', ' ', t)) for n, (d, t) in entries.items()}


def check_header(table, ravel_h):
    entries = header_entries(ravel_h)
    by_name = {o['name']: o for o in table}
    for name in entries:
        if name not in by_name:
            fail('ravel.h lists %s=%s, which the options table lacks'
                 % (name, entries[name][0]))
    for o in table:
        if o['name'] not in entries:
            fail('ravel.h does not list %s (%s=%s)'
                 % (o['name'], o['name'], o['default']))
            continue
        default, text = entries[o['name']]
        if not same_value(o, default):
            fail('ravel.h: %s=%s, the table\'s default is %s'
                 % (o['name'], default, o['default']))
        check_range(o, text, 'ravel.h')
        for choice in o['choices']:
            if not re.search(r'(?<!\w)%s(?!\w)' % re.escape(choice),
                             default + ' ' + text):
                fail('ravel.h: %s\'s entry does not name its value %s'
                     % (o['name'], choice))


def roff_plain(text):
    text = text.replace('\\-', '-').replace('\\e', '\\').replace('\\&', '')
    return text


def check_man1(table, man1):
    with open(man1, encoding='utf-8') as f:
        page = roff_plain(f.read())
    m = re.search(r'^\.SH DATABASE OPTIONS\n(.*?)^\.SH ', page, re.S | re.M)
    if not m:
        fail('ravel(1) has no DATABASE OPTIONS section')
        return
    items = {}
    for item in m.group(1).split('.TP\n')[1:]:
        head, _, body = item.partition('\n')
        h = re.fullmatch(r'\\fB(\w+)\\fR=\\fI(\S+)\\fR', head)
        if not h:
            fail('ravel(1): an option\'s tag is not NAME=DEFAULT: %s' % head)
            continue
        items[h.group(1)] = (h.group(2), re.sub(r'\s+', ' ', body))
    by_name = {o['name']: o for o in table}
    for name in items:
        if name not in by_name:
            fail('ravel(1) lists %s, which the options table lacks' % name)
    for o in table:
        if o['name'] not in items:
            fail('ravel(1) does not list %s' % o['name'])
            continue
        default, body = items[o['name']]
        if not same_value(o, default):
            fail('ravel(1): %s=%s, the table\'s default is %s'
                 % (o['name'], default, o['default']))
        check_range(o, body, 'ravel(1)')


def check_man3(table, man3):
    with open(man3, encoding='utf-8') as f:
        page = roff_plain(f.read())
    m = re.search(r'^\.SH OPTIONS\n(.*?)^\.SH ', page, re.S | re.M)
    if not m:
        fail('ravel(3) has no OPTIONS section')
        return
    names = {o['name'] for o in table}
    named = [w for w in re.findall(r'\\fB([a-z][a-z0-9_]*)\\fR', m.group(1))
             if '_' in w and not w.startswith('ravel_')]
    if len(named) < 3:
        fail('ravel(3) names only %d options' % len(named))
    for w in named:
        if w not in names:
            fail('ravel(3) names option %s, which the options table lacks'
                 % w)


def main():
    dump, ravel_h, man3 = sys.argv[1:4]
    man1 = sys.argv[4] if len(sys.argv) > 4 else None
    r = subprocess.run([dump], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail('%s exited %d: %s' % (dump, r.returncode, r.stderr))
        sys.exit(1)
    table = json.loads(r.stdout)
    check_table(table)
    check_header(table, ravel_h)
    check_man3(table, man3)
    if man1:
        check_man1(table, man1)
    else:
        print('ravel(1) not built: its option list not checked')
    print('%d options checked' % len(table))
    sys.exit(1 if FAILURES else 0)


if __name__ == '__main__':
    main()
