#!/usr/bin/env python3
"""test_randomtransaction.py -- ravel-bench's randomtransaction.

usage: test_randomtransaction.py RAVEL_BENCH RAVEL_SHELL

db_bench's randomtransaction, run briefly on 4 threads over few keys (so
that transactions collide), checks:
  - with --transaction_db (pessimistic) and --optimistic_transaction_db,
    each for a counted number of operations and once more with --sync:
    it exits 0, prints db_bench's result line with its message
    "( transactions:N aborts:M)", the line of all threads' counts (most
    pessimistic transactions prepared before their commit, as db_bench's,
    no optimistic one), and
    "RandomTransactionVerify Success." -- each set's sum grew by exactly
    the committed increments, read back after the threads stopped;
  - the sums it verifies are the database's: a second run over the same
    database (--use_existing_db) verifies again, from the sums the first
    left; and a value that is not a count, put with the shell, ends the
    run with status 1 and names the key;
  - with neither flag it runs plain batches ("( batches:N )") and says
    there is nothing to verify, as db_bench;
  - the two kinds together, and --transaction_sets outside 1 .. 9999, are
    refused.
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


def run(db, args):
    cmd = [BENCH, '--db=' + db, '--seed=1', '--benchmarks=randomtransaction',
           '--threads=4', '--num=50'] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
    return p.returncode, p.stdout + p.stderr


def test_prepared(what, kind, prepared, out):
    """Pessimistic transactions are prepared nine times in ten (db_bench's
    two-phase commit), optimistic ones never."""
    if kind == '--optimistic_transaction_db':
        check(prepared == 0, '%s: none prepared' % what, out)
        return
    if 'committed without prepare' in out and 'not built yet' in out:
        print('SKIP %s: prepared transactions: ravel_txn_prepare is not '
              'built yet on this branch (issue 21\'s two-phase commit)' % what)
        return
    check('committed without prepare' not in out,
          '%s: prepare is not refused' % what, out)
    check(prepared > 12000 * 0.7,
          '%s: most transactions prepared (%d)' % (what, prepared), out)


def test_verified(db, kind, extra):
    what = ' '.join([kind] + extra)
    rc, out = run(db, [kind, '--writes=3000'] + extra)
    check(rc == 0, '%s: exits 0 (got %d)' % (what, rc), out)
    m = re.search(r'^randomtransaction : .* ops/sec .* 12000 operations;.*'
                  r'\( transactions:3000 aborts:(\d+)\)$', out, re.M)
    check(m, '%s: db_bench\'s result line with its message' % what, out)
    m = re.search(r'^randomtransaction : all threads: 12000 operations, '
                  r'(\d+) aborts \([0-9.]+ per operation: (\d+) conflicts, '
                  r'(\d+) lock timeouts, (\d+) deadlocks\), (\d+) prepared, '
                  r'(\d+) rolled back by choice$', out, re.M)
    check(m, '%s: the counts of all threads' % what, out)
    if m:
        check(int(m.group(1)) == sum(int(m.group(i)) for i in (2, 3, 4)),
              '%s: aborts are the sum of their kinds' % what, out)
        check(int(m.group(6)) > 0, '%s: one in twenty rolled back' % what,
              out)
        test_prepared(what, kind, int(m.group(5)), out)
    check('RandomTransactionVerify Success.' in out,
          '%s: the verification passes' % what, out)
    check('FAILED' not in out, '%s: nothing failed' % what, out)


def test_existing_and_corrupt(db):
    rc, out = run(db, ['--transaction_db', '--writes=500'])
    check(rc == 0 and 'RandomTransactionVerify Success.' in out,
          'a first run passes', out)
    rc, out = run(db, ['--optimistic_transaction_db', '--writes=500',
                       '--use_existing_db'])
    check(rc == 0 and 'RandomTransactionVerify Success.' in out,
          'a second run over the first one\'s sums passes', out)
    subprocess.run([SHELL, db, 'put 00017 x1'], check=True, timeout=30,
                   capture_output=True)
    rc, out = run(db, ['--transaction_db', '--writes=10',
                       '--use_existing_db'])
    check(rc == 1, 'a value that is not a count fails the run (got %d)' % rc,
          out)
    check('00017' in out and 'not a positive count' in out,
          'the failure names the key', out)


def test_plain(db):
    rc, out = run(db, ['--writes=200'])
    check(rc == 0, 'plain batches: exits 0', out)
    check(re.search(r'\( batches:200 \)', out),
          'plain batches: db_bench\'s message', out)
    check('RandomTransactionVerify skipped' in out,
          'plain batches: nothing to verify, said', out)


def test_refused(db):
    for args, what in (
            (['--transaction_db', '--optimistic_transaction_db'],
             'choose one'),
            (['--transaction_sets=0'], 'must be 1 .. 9999'),
            (['--transaction_sets=10000'], 'must be 1 .. 9999')):
        rc, out = run(db, args + ['--writes=1'])
        check(rc == 1 and what in out, 'refused: %s' % ' '.join(args), out)


def main():
    global BENCH
    global SHELL
    BENCH = os.path.abspath(sys.argv[1])
    SHELL = os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, 'db')
        for kind in ('--transaction_db', '--optimistic_transaction_db'):
            test_verified(db, kind, [])
            test_verified(db, kind, ['--sync', '--transaction_sets=3'])
        test_verified(db, '--transaction_db',
                      ['--transaction_set_snapshot',
                       '--transaction_sleep=50',
                       '--transaction_lock_timeout=5'])
        test_existing_and_corrupt(os.path.join(tmp, 'db2'))
        test_plain(os.path.join(tmp, 'db3'))
        test_refused(db)
    if FAILURES:
        sys.stderr.write('%d check(s) failed\n' % len(FAILURES))
        sys.exit(1)
    print('ok')


if __name__ == '__main__':
    main()
