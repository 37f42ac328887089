#!/bin/sh
# bench-txn.sh -- the transaction comparison of docs/performance.md
# ("Transactions"): bench/txn-compare's bank transfers through ravel
# (pessimistic, optimistic), RocksDB (TransactionDB,
# OptimisticTransactionDB), LMDB and SQLite, on 1, 4 and 32 threads, with
# and without sync, RUNS times each, then a table of the medians.
#
# usage: bench/bench-txn.sh [BUILD_DIR]        (default: build)
# environment:
#   RUNS=5            runs of each cell (engine, threads, sync)
#   SECONDS_PER_RUN=5 transfers are timed this long in each run
#   THREADS="1 4 32"  SYNCS="0 1"
#   ENGINES="ravel-pessimistic ravel-optimistic rocksdb-txn rocksdb-occ
#            lmdb sqlite"
#   DIR=/var/tmp/ravel-bench-txn   every engine's database is made here,
#                     fresh for each run (the same file system for all)
#   OUT=$DIR/results.txt           one line per run (written afresh)
#   SUMMARY_ONLY=1    run nothing: print the table of the lines in OUT
#                     (the files of several sessions put together, say)
#
# Within each run and cell the engines take turns, the order rotated one
# place per run, so that no engine always runs first or last on a machine
# whose load changes.  A run whose total balance changed stops the script
# (txn-compare exits 1).  The table gives, per cell, the median ops/s of
# the runs with their minimum and maximum, the median retries per
# transfer, and for ravel with sync the median transactions per fdatasync
# (ravel.stats: sync writers acknowledged per fsync issued); then ravel's
# ratios to the others, paired run by run (engines of one round run next
# to each other).
set -eu

BUILD=${1:-build}
TC=$BUILD/bench/txn-compare
RUNS=${RUNS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
THREADS=${THREADS:-"1 4 32"}
SYNCS=${SYNCS:-"0 1"}
ENGINES=${ENGINES:-"ravel-pessimistic ravel-optimistic rocksdb-txn rocksdb-occ lmdb sqlite"}
DIR=${DIR:-/var/tmp/ravel-bench-txn}
OUT=${OUT:-$DIR/results.txt}

if [ "${SUMMARY_ONLY:-0}" = 1 ]; then
    RUNS=0
elif [ ! -x "$TC" ]; then
    echo "bench-txn.sh: no $TC (it is built where librocksdb-dev is" \
         "installed; liblmdb-dev and libsqlite3-dev add LMDB and SQLite)" >&2
    exit 1
fi
if [ "$RUNS" -gt 0 ]; then
    mkdir -p "$DIR"
    : > "$OUT"
fi

# The engines, rotated left by $1 places.
rotated() {
    set -- "$1" $ENGINES
    n=$1
    shift
    count=$#
    n=$((n % count))
    while [ "$n" -gt 0 ]; do
        first=$1
        shift
        set -- "$@" "$first"
        n=$((n - 1))
    done
    echo "$@"
}

run=1
while [ "$run" -le "$RUNS" ]; do
    for threads in $THREADS; do
        for sync in $SYNCS; do
            for engine in $(rotated $((run - 1))); do
                db=$DIR/db-$engine
                rm -rf "$db"
                flag=
                [ "$sync" = 1 ] && flag=--sync
                line=$("$TC" "$engine" --dir="$db" --threads="$threads" \
                       --seconds="$SECONDS_PER_RUN" $flag)
                rm -rf "$db"
                echo "run=$run $line" | tee -a "$OUT"
            done
        done
    done
    run=$((run + 1))
done

python3 - "$OUT" "$ENGINES" "$THREADS" "$SYNCS" <<'EOF'
import statistics
import sys

out, engines, threads, syncs = sys.argv[1], sys.argv[2].split(), \
    sys.argv[3].split(), sys.argv[4].split()
cells = {}
for line in open(out):
    f = dict(w.split('=', 1) for w in line.split())
    if f.get('total') != 'ok':
        continue
    cells.setdefault((f['engine'], f['threads'], f['sync']), []).append(f)


def med(rows, key):
    vals = [float(r[key]) for r in rows if r[key] != '-']
    return statistics.median(vals) if vals else None


print('| sync | threads | engine | ops/s (median) | min .. max | runs '
      '| retries/op | txns/fdatasync |')
print('|---|---|---|---:|---|---:|---:|---:|')
for sync in syncs:
    for t in threads:
        for e in engines:
            rows = cells.get((e, t, sync))
            if not rows:
                continue
            ops = [float(r['ops_per_s']) for r in rows]
            fs = med(rows, 'txns_per_fsync')
            print('| %s | %s | %s | %s | %s .. %s | %d | %.5f | %s |' % (
                'yes' if sync == '1' else 'no', t, e,
                format(int(statistics.median(ops)), ','),
                format(int(min(ops)), ','), format(int(max(ops)), ','),
                len(ops), med(rows, 'retries_per_op'),
                '%.1f' % fs if fs is not None and sync == '1' else '-'))
print()
# Ratios paired run by run: the k-th run of engine A in a cell against
# the k-th of engine B, which ran next to it (same round, same minute).
pairs = [('ravel-pessimistic', 'rocksdb-txn'),
         ('ravel-optimistic', 'rocksdb-occ'),
         ('ravel-pessimistic', 'lmdb'),
         ('ravel-optimistic', 'lmdb'),
         ('ravel-pessimistic', 'sqlite')]
print('Ratios: the median of the runs\' ratios (their minimum .. maximum)')
print()
print('| sync | threads | ' + ' | '.join('%s / %s' % p for p in pairs) + ' |')
print('|---|---|' + '---:|' * len(pairs))
for sync in syncs:
    for t in threads:
        row = []
        for a, b in pairs:
            ra, rb = cells.get((a, t, sync)), cells.get((b, t, sync))
            if not ra or not rb:
                row.append('-')
                continue
            rs = [float(x['ops_per_s']) / float(y['ops_per_s'])
                  for x, y in zip(ra, rb)]
            row.append('%.2fx (%.2f .. %.2f)' % (statistics.median(rs),
                                                min(rs), max(rs)))
        print('| %s | %s | %s |' % ('yes' if sync == '1' else 'no', t,
                                    ' | '.join(row)))
EOF
