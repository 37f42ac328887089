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
  - --duration stops a run long before --num operations;
  - each benchmark db_bench users run most (readmissing, readhot,
    deleteseq, deleterandom, fill100K, updaterandom, readrandomwriterandom,
    seekrandomwhilewriting, multireadrandom, mixgraph, compactall) prints
    db_bench's result line with its message, and the meta operations
    levelstats, sstables, memstats print their properties;
  - one write amplification: a fill's result line says what ravel.stats
    then says, in the same words, and so does waitforcompaction;
  - --use_existing_db on a path with no database fails, creating nothing;
  - db_bench's option names (--compression_type, --bloom_bits,
    --cache_size, --open_files=-1, --max_background_compactions) are taken;
  - --help gives every flag's default.
"""
import os
import re
import subprocess
import sys
import tempfile

BENCH = None
SHELL = None
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


RESULT = re.compile(r'^(\S+)\s*:\s+[\d.]+ micros/op (\d+) ops/sec '
                    r'[\d.]+ seconds (\d+) operations;(.*)$', re.M)


def results(out):
    """db_bench's result lines: name -> (operations, the rest)."""
    return {m.group(1): (int(m.group(3)), m.group(4))
            for m in RESULT.finditer(out)}


def test_new_benchmarks(db):
    rc, out, err = run(db, [
        '--benchmarks=fillseq,readmissing,readhot,multireadrandom,'
        'updaterandom,readrandomwriterandom,seekrandomwhilewriting,mixgraph,'
        'deleteseq,deleterandom,fill100K,compactall,levelstats,sstables,'
        'memstats', '--num=2000', '--threads=2', '--batch_size=4'])
    check(rc == 0, 'the new benchmarks run and exit 0', out + err)
    r = results(out)
    want = {
        'readmissing': (4000, r'\(0 of 2000 found\)'),
        'readhot': (4000, r'\(2000 of 2000 found\)'),
        'multireadrandom': (4000, r'\(2000 of 2000 found\)'),
        'updaterandom': (4000, r'\( updates:2000 found:\d+\)'),
        'readrandomwriterandom': (4000, r'\( reads:1800 writes:200 '
                                        r'total:2000 found:\d+\)'),
        'seekrandomwhilewriting': (4000, r'\(\d+ of 2000 found\)'),
        'mixgraph': (4000, r'\( Gets:2000 Puts:0 Seek:0, reads \d+ in 2000 '
                           r'found, avg size: 0\.0 value, 0\.0 scan\)'),
        'deleteseq': (4000, r'^$'),
        'deleterandom': (4000, r'^$'),
        'fill100K': (4000, r'MB/s \(2 ops\)'),
        'compactall': (1, r'^$'),
    }
    for name, (ops, message) in want.items():
        check(name in r, '%s prints db_bench\'s result line' % name, out)
        if name in r:
            check(r[name][0] == ops, '%s: %d operations (got %d)'
                  % (name, ops, r[name][0]), out)
            check(re.search(message, r[name][1].strip()) is not None,
                  '%s: message matches %s (got %r)'
                  % (name, message, r[name][1]), out)
    check(re.search(r'^level files bytes target score', out, re.M),
          'levelstats prints ravel.levelstats', out)
    check(re.search(r'^level [1-6]: \d+\.sst', out, re.M),
          'sstables lists the compacted table files', out)
    for prop in ('num-immutable-mem-table', 'cur-size-active-mem-table',
                 'cur-size-all-mem-tables'):
        check(re.search(r'^ravel\.%s: \d+$' % prop, out, re.M),
              'memstats prints ravel.%s' % prop, out)


def test_mixgraph_model(db):
    """The Facebook model's parameters (the mixgraph example of RocksDB's
    wiki): the mix of operations and the value sizes follow them."""
    rc, out, err = run(db, [
        '--benchmarks=fillrandom,mixgraph', '--num=20000',
        '--mix_get_ratio=0.83', '--mix_put_ratio=0.14',
        '--mix_seek_ratio=0.03', '--key_dist_a=0.002312',
        '--key_dist_b=0.3467', '--keyrange_dist_a=14.18',
        '--keyrange_dist_b=-2.917', '--keyrange_dist_c=0.0164',
        '--keyrange_dist_d=-0.08082', '--keyrange_num=30',
        '--value_k=0.2615', '--value_sigma=25.45', '--iter_k=2.517',
        '--iter_sigma=14.236', '--mix_max_scan_len=1000'])
    check(rc == 0, 'mixgraph with the model\'s parameters exits 0', out + err)
    m = re.search(r'Gets:(\d+) Puts:(\d+) Seek:(\d+), reads (\d+) in (\d+) '
                  r'found, avg size: ([\d.]+) value, ([\d.]+) scan', out)
    check(m is not None, 'mixgraph prints its mix', out)
    if m:
        gets, puts, seeks = int(m.group(1)), int(m.group(2)), int(m.group(3))
        # the QueryDecider's shares of 1000: 830, 140, 30
        check(abs(gets - 16600) < 600 and abs(puts - 2800) < 300 and
              abs(seeks - 600) < 150, 'the mix follows the ratios', out)
        # db_bench 7.8.3 with these flags: about 30 bytes a value
        check(20 < float(m.group(6)) < 45, 'value sizes follow the Pareto '
              'model (got %s)' % m.group(6), out)


def test_one_write_amplification(db):
    rc, out, err = run(db, ['--benchmarks=fillrandom,stats,waitforcompaction,'
                            'stats', '--num=60000', '--write_buffer_size=1M',
                            '--disable_auto_compactions=true'])
    check(rc == 0, 'fillrandom,stats exits 0', out + err)
    line = re.search(r'^fillrandom   : (write amplification [\d.]+ \(\d+ bytes '
                     r'written by flushes and compactions / (\d+) bytes '
                     r'written by users\))$', out, re.M)
    # ravel.stats wraps at 80 columns, continuing a line indented by two
    logical = re.sub(r'\n  (?=\S)', ' ', out)
    stats = re.findall(r'^(write amplification): ([\d.]+ \(\d+ bytes written '
                       r'by flushes and compactions / \d+ bytes written by '
                       r'users\))$', logical, re.M)
    check(line is not None and len(stats) == 2,
          'the result line and ravel.stats give a write amplification', out)
    if line and stats:
        # the fill's writes as the engine counts them: 15 bytes of batch
        # header, tag and lengths over the 116 of key and value
        check(int(line.group(2)) == 60000 * (16 + 100 + 15),
              'bytes written by users as the engine counts them', out)
        # no compaction runs; a flush of the last memtable may still end
        # between the two, so compare the ratio's words and denominator,
        # then the number after waitforcompaction, when nothing runs
        wait = re.search(r'^waitforcompaction : [\d.]+ seconds waited; since '
                         r'open: write amplification (.*)$', out, re.M)
        check(wait is not None and wait.group(1) == stats[1][1],
              'waitforcompaction and the stats after it print one number',
              out)
        check(line.group(1).split(' (')[1].split(' / ')[1] ==
              stats[0][1].split(' / ')[1],
              'the result line and the stats count the same user bytes', out)


def test_use_existing_db_missing(tmp):
    missing = os.path.join(tmp, 'no-such-db')
    rc, out, err = run(missing, ['--benchmarks=readrandom', '--num=100',
                                 '--use_existing_db=true'])
    check(rc != 0, '--use_existing_db on a missing database fails', out)
    check('--use_existing_db' in err and missing in err,
          'the message names the flag and the path', err)
    check(not os.path.exists(missing), 'no database is created', err)
    check('readrandom   :' not in out, 'no benchmark runs', out)


def test_live_database_kept(tmp):
    """A fresh run deletes the old database as db_bench's DestroyDB does:
    never one another process has open, never files of other names."""
    live = os.path.join(tmp, 'live')
    subprocess.run([SHELL, live, 'put keep me'], check=True, timeout=30)
    holder = subprocess.Popen([SHELL, '-interactive', live],
                              stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        # its banner comes once the database is open (and its LOCK held)
        banner = holder.stdout.readline()
        check('opened database' in banner, 'the holder opened it', banner)
        rc, out, err = run(live, ['--benchmarks=fillseq', '--num=100'])
        check(rc != 0, 'a database open in another process is not removed',
              out + err)
        check('open in another process' in err, 'the message says why', err)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    p = subprocess.run([SHELL, live, 'get keep'], capture_output=True,
                       text=True, timeout=30)
    check(p.stdout == 'me\n', 'its data is all there', p.stdout + p.stderr)
    notes = os.path.join(live, 'notes.txt')
    with open(notes, 'w') as f:
        f.write('mine')
    rc, out, err = run(live, ['--benchmarks=fillseq', '--num=100'])
    check(rc == 0, 'a closed database is replaced', out + err)
    check(os.path.exists(notes), 'a file of another name stays', err)


def test_dbbench_option_names(db):
    rc, out, err = run(db, ['--benchmarks=fillseq', '--num=100',
                            '--compression_type=none', '--bloom_bits=7',
                            '--cache_size=1048576', '--open_files=-1',
                            '--max_background_compactions=3'])
    check(rc == 0, 'db_bench\'s option names are taken', out + err)
    for opt in ('compression=none', 'bloom_bits_per_key=7',
                'block_cache_size=1048576', 'max_open_files=-1',
                'max_background_jobs=4'):
        check(opt in out, 'the header lists %s' % opt, out)
    rc, out, err = run(db, ['--benchmarks=fillseq', '--num=100',
                            '--compression_type=snappy'])
    check(rc == 0, '--compression_type=snappy runs', out + err)
    check(re.search(r'^Options: .*compression=lz4 \(from '
                    r'compression_type=snappy: ravel has no snappy', out,
                    re.M), 'snappy runs as lz4, and the Options line says so',
          out)
    # values db_bench takes that ravel's options refuse are read as
    # RocksDB reads them, saying so; gflags' "--flag value" form
    rc, out, err = run(db, ['--benchmarks', 'fillseq', '--num', '100',
                            '--open_files=5', '--bloom_bits=200',
                            '--max_background_compactions=100'])
    check(rc == 0, 'db_bench values RocksDB clamps are taken', out + err)
    for note in ('max_open_files=20 (from open_files=5',
                 'bloom_bits_per_key=100 (from bloom_bits=200',
                 'max_background_jobs=64 (from max_background_compactions'
                 '=100'):
        check(note in out, 'the Options line says %s' % note, out)
    check(re.search(r'^fillseq +:.* 100 operations;', out, re.M),
          '--num 100 (a space, as gflags takes it) is read', out)
    rc, out, err = run(db, ['--benchmarks=fillseq', '--num=100',
                            '--level0_file_num_compaction_trigger=99999',
                            '--level0_slowdown_writes_trigger=99999',
                            '--level0_stop_writes_trigger=99999'])
    check(rc == 0, 'level-0 triggers of 99999 are taken', out + err)


def test_help_defaults(db):
    p = subprocess.run([BENCH, '--help'], capture_output=True, text=True,
                       timeout=30)
    check(p.returncode == 0, '--help exits 0', p.stderr)
    flags = re.findall(r'^  --(\w+)', p.stdout, re.M)
    lines = re.findall(r'^  --(\w+) \(default: ([^)]*)', p.stdout, re.M)
    check(len(flags) > 60 and len(flags) == len(lines),
          'every flag in --help gives its default (%d of %d)'
          % (len(lines), len(flags)), p.stdout)
    d = dict(lines)
    for name, want in (('num', '1000000'), ('value_size', '100'),
                       ('sync', 'false'), ('write_buffer_size', '64M'),
                       ('mix_get_ratio', '1')):
        check(d.get(name, '').startswith(want), '--help: --%s default %s '
              '(got %r)' % (name, want, d.get(name)), p.stdout)


def main():
    global BENCH
    global SHELL
    BENCH = os.path.abspath(sys.argv[1])
    SHELL = os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, 'db')
        test_progress(db)
        test_stats_interval(db)
        test_statistics_once(db)
        test_readwhilewriting(db)
        test_new_benchmarks(db)
        test_mixgraph_model(db)
        test_one_write_amplification(db)
        test_use_existing_db_missing(tmp)
        test_live_database_kept(tmp)
        test_dbbench_option_names(db)
        test_help_defaults(db)
    if FAILURES:
        sys.exit('%d check(s) failed' % len(FAILURES))
    print('ok')


if __name__ == '__main__':
    main()
