#!/usr/bin/env python3
"""test_seed_cmdline.py -- the seed's db_bench command line runs unchanged.

usage: test_seed_cmdline.py RAVEL_BENCH

The command line below is the seed's (the unordered_write page of RocksDB's
wiki, "Experimental Results"), copied verbatim, single dashes and the bare
-disable_auto_compactions included.  Only the counts are made small (--num,
and --writes, which is per thread) and --db points into a temporary
directory, as TEST_TMPDIR does for db_bench.  ravel-bench must accept every
flag, exit 0 and print db_bench's result line; the flags it does not
implement must be listed, none of them one that changes what is measured.
"""
import re
import subprocess
import sys
import tempfile

SEED = ('TEST_TMPDIR=/dev/shm/ ~/db_bench --benchmarks=fillrandom --threads=32 '
        '--num=10000000 -max_write_buffer_number=16 --max_background_jobs=64 '
        '--batch_size=8 --writes=3000000 '
        '-level0_file_num_compaction_trigger=99999 '
        '--level0_slowdown_writes_trigger=99999 '
        '--level0_stop_writes_trigger=99999 -enable_pipelined_write=false '
        '-disable_auto_compactions --transaction_db=true --unordered_write=1 '
        '--disable_wal=1')

SMALL = {'num': '2000', 'writes': '64'}


def seed_flags():
    """The seed's flags, with the counts of SMALL; the environment and the
    program name dropped."""
    flags = []
    for word in SEED.split()[2:]:
        name = word.lstrip('-').split('=', 1)[0]
        if name in SMALL:
            word = word.split('=', 1)[0] + '=' + SMALL[name]
        flags.append(word)
    return flags


def main():
    bench = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory(prefix='ravel-seed-') as tmp:
        cmd = [bench] + seed_flags() + ['--db=' + tmp + '/dbbench']
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
        out = p.stdout + p.stderr
        if p.returncode != 0:
            failures.append('exit code %d' % p.returncode)
        result = re.search(r'^fillrandom +: +[\d.]+ micros/op (\d+) ops/sec '
                           r'[\d.]+ seconds (\d+) operations;', p.stdout,
                           re.M)
        if not result:
            failures.append('no fillrandom result line')
        elif int(result.group(2)) != 32 * 64:
            failures.append('%s operations, expected 32 threads x 64 writes'
                            % result.group(2))
        # The engine options are set, with their values as given.
        for opt in ('max_write_buffer_number=16', 'max_background_jobs=64',
                    'level0_file_num_compaction_trigger=99999',
                    'level0_slowdown_writes_trigger=99999',
                    'level0_stop_writes_trigger=99999',
                    'disable_auto_compactions=true', 'unordered_write=1'):
            if not re.search(r'^Options:.*\b%s\b' % re.escape(opt), p.stdout,
                             re.M):
                failures.append('option %s not listed as set' % opt)
        if 'Writes:     no WAL' not in p.stdout:
            failures.append('--disable_wal=1 not in effect')
        # Nothing that changes the measurement is ignored.
        ignored = re.search(r'^ignored.*$', p.stdout, re.M)
        if ignored:
            failures.append('flags ignored: ' + ignored.group(0))
        if not re.search(r'^as ravel does anyway: enable_pipelined_write=false',
                         p.stdout, re.M):
            failures.append('enable_pipelined_write=false not listed as what '
                            'ravel does anyway')
    for f in failures:
        sys.stderr.write('FAIL: %s\n' % f)
    if failures:
        sys.stderr.write('command: %s\noutput:\n%s\n' % (' '.join(cmd),
                                                       out[-4000:]))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
