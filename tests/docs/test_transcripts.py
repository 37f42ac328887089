#!/usr/bin/env python3
"""Runs every shell transcript in the README and the docs and compares.

usage: test_transcripts.py SOURCE_ROOT BUILD_ROOT

A transcript is an indented (four-space) block of a Markdown file under
the source root (README.md, docs/*.md, bindings/*/README.md) whose first
line starts with "$ " (a command line) or "ravel> " (a shell session).

  $ COMMAND       runs COMMAND with bash in a fresh directory (one per
                  block; $HOME is that directory, so no ~/.ravelrc is
                  read); the lines up to the next "$ " are its output,
                  standard output and error merged
  ravel> INPUT    a line typed at the shell's prompt (so is any prompt:
  ...> INPUT      "ravel (batch 2)> ", the continuation "...> "); the
                  lines after it, up to the next prompt, are what the
                  shell printed

A block that starts with a prompt is a session of `ravel demo.db` on a new
database, its banner not shown.  A `ravel` command followed by prompt
lines is run with -interactive and the prompt lines as its input, so the
prompts are printed as on a terminal; the output is then put together as
a terminal shows it (each input after its prompt) and compared with the
block, after replacing a table file's creation time and session id (which
change on every run) with <time> and <id> on both sides.

The programs are the build's: build/shell (ravel, ravel-sst) and
build/bench (ravel-bench) come first in $PATH.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

PROMPT = re.compile(r'^(ravel[^\n>]*> |\s*\.\.\.> )')
TIME = re.compile(r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+\)')
SESSION = re.compile(r'(session id: )[0-9a-f]{16}')


def blocks(path):
    """Yields (first line number, lines) of each transcript in PATH."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    i, fenced = 0, False
    while i < len(lines):
        if lines[i].startswith('```'):
            fenced = not fenced
        if fenced or not lines[i].startswith('    ') or \
                (i > 0 and lines[i - 1].strip() != ''):
            i += 1
            continue
        start, body = i, []
        while i < len(lines) and (lines[i].startswith('    ') or
                                  (lines[i] == '' and i + 1 < len(lines) and
                                   lines[i + 1].startswith('    '))):
            body.append(lines[i][4:])
            i += 1
        if body[0].startswith('$ ') or PROMPT.match(body[0]):
            yield start + 1, body


def steps(body):
    """Splits a block into (command, input lines, expected lines)."""
    out = []
    if not body[0].startswith('$ '):
        body = ['$ ravel demo.db'] + body
    for line in body:
        if line.startswith('$ '):
            out.append([line[2:], [], []])
            continue
        m = PROMPT.match(line)
        if m:
            out[-1][1].append(line[m.end():])
        out[-1][2].append(line)
    return out


def interleave(output, inputs):
    """Puts each input line after the prompt that read it."""
    res, pos, k = [], 0, 0
    while k < len(inputs):
        m = None
        for cand in re.finditer(r'(?m)^(ravel[^\n>]*> |\s*\.\.\.> )',
                                output[pos:]):
            m = cand
            break
        if not m:
            break
        end = pos + m.end()
        res.append(output[pos:end] + inputs[k] + '\n')
        pos, k = end, k + 1
    rest = output[pos:]
    # the prompt printed when the input ended (no .quit) is not shown
    rest = re.sub(r'(?m)^(ravel[^\n>]*> |\s*\.\.\.> )\n?\Z', '', rest)
    res.append(rest)
    return ''.join(res)


def run_step(cmd, inputs, cwd, env, banner_hidden):
    if inputs:
        cmd = re.sub(r'^ravel ', 'ravel -interactive ', cmd)
    p = subprocess.run(['bash', '-c', cmd], cwd=cwd, env=env,
                       input=''.join(i + '\n' for i in inputs),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    text = interleave(p.stdout, inputs) if inputs else p.stdout
    if banner_hidden:
        m = re.search(r'(?m)^ravel[^\n>]*> ', text)
        text = text[m.start():] if m else text
    return text


def norm(lines):
    text = '\n'.join(lines).rstrip('\n')
    text = SESSION.sub(r'\1<id>', TIME.sub('<time>', text))
    return text.split('\n')


def main():
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    files = [os.path.join(src, 'README.md')]
    files += sorted(glob.glob(os.path.join(src, 'docs', '*.md')))
    files += sorted(glob.glob(os.path.join(src, 'bindings', '*', 'README.md')))
    env = dict(os.environ, LC_ALL='C', TERM='dumb',
               PATH=os.pathsep.join([os.path.join(build, 'shell'),
                                     os.path.join(build, 'bench'),
                                     os.environ.get('PATH', '')]))
    failures = checked = 0
    for path in files:
        for lineno, body in blocks(path):
            checked += 1
            where = '%s:%d' % (os.path.relpath(path, src), lineno)
            with tempfile.TemporaryDirectory() as tmp:
                env['HOME'] = tmp
                got = []
                hidden = not body[0].startswith('$ ')
                for cmd, inputs, expected in steps(body):
                    if not hidden:
                        got.append('$ ' + cmd)
                    got += run_step(cmd, inputs, tmp, env,
                                    hidden).rstrip('\n').split('\n')
                want = norm(body)
                got = norm(got)
            if got != want:
                failures += 1
                print('%s: the transcript differs from a run of it' % where)
                import difflib
                for d in difflib.unified_diff(want, got, 'documented', 'run',
                                              lineterm='', n=2):
                    print('    ' + d)
    print('%d transcripts run, %d differ' % (checked, failures))
    if checked == 0:
        print('no transcript found: the test would check nothing')
        return 1
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
