#!/usr/bin/env python3
"""test_bench_cli.py -- ravel-bench does what db_bench users lean on.

usage: test_bench_cli.py RAVEL_BENCH

Runs small benchmarks in a temporary directory and checks:
  - the progress line "... finished N ops" on standard error when it is a
    terminal (a pseudo-terminal here), and not when it is a pipe or with
    --progress_reports=false;
  - --stats_interval=N: each thread prints db_bench's interval line every N
    operations, with the interval and total counts;
  - --stats_interval_seconds: the line appears (a run of --duration longer
    than the interval), and --stats_per_interval adds ravel.stats;
  - --statistics prints ravel.stats once, even after a `stats` benchmark;
  - readwhilewriting reports its readers, with the keys found;
  - --duration stops a run long before --num operations.
"""
import os
import re
import subprocess
import sys
import tempfile

BENCH = None
FAILURES = []


def check(cond, what, output=''):
    if not cond:
        FAILURES.append(what)
        sys.stderr.write('FAIL: %s\n%s\n' % (what, output[-3000:]))


def run(db, args, stderr_tty=False):
    """Runs ravel-bench; returns (exit code, stdout, stderr)."""
    cmd = [BENCH, '--db=' + db, '--seed=1'] + args
    if not stderr_tty:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
        return p.returncode, p.stdout, p.stderr
    master, slave = os.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b''
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = p.stdout.read().decode()
    p.wait(timeout=100)
    os.close(master)
    return p.returncode, out, err.decode(errors='replace')


def test_progress(db):
    rc, out, err = run(db, ['--benchmarks=fillseq', '--num=3000'],
                       stderr_tty=True)
    check(rc == 0, 'fillseq on a terminal exits 0', out + err)
    counts = [int(n) for n in re.findall(r'\.\.\. finished (\d+) ops', err)]
    # db_bench's schedule: every 100 up to 1000, then every 500.
    check(counts[:12] == [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000,
                          1500, 2000],
          'progress follows db_bench schedule (got %s)' % counts[:12], err)
    check('\r' in err, 'progress lines end in a carriage return', err)
    check('fillseq      :' in out, 'result line on stdout', out)

    rc, out, err = run(db, ['--benchmarks=fillseq', '--num=3000'])
    check(rc == 0 and 'finished' not in err,
          'no progress line when standard error is a pipe', err)
    rc, out, err = run(db, ['--benchmarks=fillseq', '--num=3000',
                            '--progress_reports=false'], stderr_tty=True)
    check(rc == 0 and 'finished' not in err,
          'no progress line with --progress_reports=false', err)


INTERVAL = re.compile(r'^\d{4}/\d\d/\d\d-\d\d:\d\d:\d\d \.\.\. thread (\d+): '
                      r'\((\d+),(\d+)\) ops and \(([\d.]+),([\d.]+)\) '
                      r'ops/second in \(([\d.]+),([\d.]+)\) seconds$', re.M)


def test_stats_interval(db):
    rc, out, err = run(db, ['--benchmarks=fillrandom', '--num=5000',
                            '--threads=2', '--stats_interval=1000'])
    check(rc == 0, 'fillrandom with --stats_interval exits 0', out + err)
    lines = INTERVAL.findall(err)
    for tid in ('0', '1'):
        totals = [int(l[2]) for l in lines if l[0] == tid]
        check(totals == [1000, 2000, 3000, 4000, 5000],
              'thread %s prints every 1000 ops (got %s)' % (tid, totals), err)
        check(all(int(l[1]) == 1000 for l in lines if l[0] == tid),
              'thread %s interval counts are 1000' % tid, err)

    rc, out, err = run(db, ['--benchmarks=fillrandom', '--num=1000000000',
                            '--duration=2', '--stats_interval_seconds=1',
                            '--stats_per_interval=true'])
    check(rc == 0, '--duration with --stats_interval_seconds exits 0',
          out + err)
    lines = INTERVAL.findall(err)
    check(len(lines) >= 1, 'a 2 s run prints at least one 1 s interval line',
          err)
    check(all(float(l[5]) >= 1.0 for l in lines),
          'each interval spans at least --stats_interval_seconds', err)
    check('write groups:' in err, '--stats_per_interval prints ravel.stats',
          err)
    m = re.search(r'fillrandom\s+:.* (\d+) operations;', out)
    check(m is not None and 0 < int(m.group(1)) < 1000000000,
          '--duration stops before --num operations', out)


def test_statistics_once(db):
    for benchmarks in ('fillseq,stats', 'fillseq', 'stats,fillseq,stats'):
        rc, out, err = run(db, ['--benchmarks=' + benchmarks, '--num=1000',
                                '--statistics=true'])
        want = benchmarks.count('stats') if benchmarks.endswith('stats') \
            else benchmarks.count('stats') + 1
        check(rc == 0 and out.count('ravel.stats:') == want,
              '--benchmarks=%s --statistics prints ravel.stats %d times '
              '(got %d)' % (benchmarks, want, out.count('ravel.stats:')), out)


def test_readwhilewriting(db):
    rc, out, err = run(db, ['--benchmarks=fillseq,readwhilewriting',
                            '--num=20000', '--threads=2'])
    check(rc == 0, 'readwhilewriting exits 0', out + err)
    m = re.search(r'^readwhilewriting :.* (\d+) operations;.*\((\d+) of '
                  r'(\d+) found\)', out, re.M)
    check(m is not None, 'readwhilewriting prints its readers result', out)
    if m:
        # Two readers of 20000 reads each; the writer is not counted.
        check(int(m.group(1)) == 40000, 'readers alone are reported', out)
        check(int(m.group(2)) > 0, 'readers find the filled keys', out)


def main():
    global BENCH
    BENCH = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, 'db')
        test_progress(db)
        test_stats_interval(db)
        test_statistics_once(db)
        test_readwhilewriting(db)
    if FAILURES:
        sys.exit('%d check(s) failed' % len(FAILURES))
    print('ok')


if __name__ == '__main__':
    main()
