#!/bin/sh
# bench-raftstore.sh -- the Go raft log store on ravel (bindings/go/raftstore)
# against raft-boltdb/v2 and raft-wal, with hashicorp/raft's own benchmark
# package, on the same machine in the same run.
#
#   scripts/bench-raftstore.sh
#
# Builds the benchmark (bindings/go/raftstore/benchcmp, a Go module of its
# own) once, then runs it ROUNDS times; in each round every store runs every
# benchmark, the stores alternating and their order rotating from round to
# round so that drift in the machine hits all three alike.  Each store is
# opened with its defaults: every write is synced (raft-boltdb commits a
# bolt transaction, raft-wal fsyncs its segment, raftstore writes with
# RAVEL_SYNC).  Prints every run's ns/op, then per benchmark each store's
# median and the median of the per-round ratios boltdb/ravel and wal/ravel
# (above 1: ravel is faster).
#
# Environment:
#   ROUNDS     rounds (default 5)
#   BENCHTIME  go test -benchtime per benchmark (default 1s)
#   BENCH      -test.bench's first level (default
#              '^Benchmark(StoreLogs|GetLog|DeleteRangeHead|DeleteRange)$')
#   DB_ROOT    where the stores' directories go (default /var/tmp: a real
#              disk; on tmpfs such as /dev/shm an fsync costs nothing)
#   BUILD      the ravel build whose libravel.so is measured (default
#              build-rel, made with: meson setup build-rel
#              --buildtype=release -Db_ndebug=true && ninja -C build-rel)
#   KEEP_LOGS  if set, a directory that keeps every run's output
set -eu

ROUNDS=${ROUNDS:-5}
BENCHTIME=${BENCHTIME:-1s}
BENCH=${BENCH:-'^Benchmark(StoreLogs|GetLog|DeleteRangeHead|DeleteRange)$'}
DB_ROOT=${DB_ROOT:-/var/tmp}
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build-rel}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac

die() { echo "bench-raftstore: $*" >&2; exit 1; }
case $ROUNDS in ''|*[!0-9]*|0) die "ROUNDS=$ROUNDS: must be a positive integer" ;; esac
[ -f "$BUILD/meson-uninstalled/ravel-uninstalled.pc" ] ||
    die "no ravel build in $BUILD (see BUILD above)"
[ -d "$DB_ROOT" ] || die "DB_ROOT=$DB_ROOT is not a directory"
command -v go >/dev/null 2>&1 || die "go is not on PATH"

export PKG_CONFIG_PATH="$BUILD/meson-uninstalled"
export LD_LIBRARY_PATH="$BUILD"
export GOTOOLCHAIN=local CGO_ENABLED=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== building the benchmark (bindings/go/raftstore/benchcmp) against $BUILD"
(cd "$here/bindings/go/raftstore/benchcmp" && go test -c -o "$work/benchcmp.test" .)
[ -z "${KEEP_LOGS:-}" ] || mkdir -p "$KEEP_LOGS"

stores="ravel bolt wal"
round=1
while [ "$round" -le "$ROUNDS" ]; do
    for store in $stores; do
        echo "== round $round: $store"
        out="$work/round$round-$store.txt"
        # TMPDIR: where b.TempDir puts the store
        (cd "$work" && TMPDIR="$DB_ROOT" "$work/benchcmp.test" -test.run='^$' \
            -test.bench="$BENCH/^store=$store\$" -test.benchtime="$BENCHTIME" \
            -test.count=1) >"$out" 2>&1 || { cat "$out"; die "the $store run failed"; }
        grep '^Benchmark' "$out" || true
        [ -z "${KEEP_LOGS:-}" ] || cp "$out" "$KEEP_LOGS/"
    done
    # rotate the order: ravel bolt wal, bolt wal ravel, wal ravel bolt, ...
    set -- $stores
    first=$1; shift
    stores="$* $first"
    round=$((round + 1))
done

echo
echo "== medians of $ROUNDS rounds (ns/op; ratio = the other store's time / ravel's, per round, median)"
python3 - "$work" <<'EOF'
import glob, os, re, statistics, sys
from collections import defaultdict

runs = defaultdict(lambda: defaultdict(dict))  # bench -> round -> store -> ns/op
line = re.compile(r'^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op')
for path in sorted(glob.glob(os.path.join(sys.argv[1], 'round*-*.txt'))):
    rnd, store = re.match(r'round(\d+)-(\w+)\.txt', os.path.basename(path)).groups()
    for text in open(path):
        m = line.match(text)
        if m:
            name = m.group(1).replace('/store=' + store, '')
            runs[name][int(rnd)][store] = float(m.group(2))

def fmt(ns):
    return '%.0f' % ns if ns >= 100 else '%.1f' % ns

print('%-28s %12s %12s %12s %11s %10s' % ('benchmark', 'ravel', 'boltdb', 'wal',
                                           'bolt/ravel', 'wal/ravel'))
for name in sorted(runs):
    by_store = defaultdict(list)
    ratios = defaultdict(list)
    for rnd, stores in runs[name].items():
        for store, ns in stores.items():
            by_store[store].append(ns)
        for other in ('bolt', 'wal'):
            if other in stores and 'ravel' in stores:
                ratios[other].append(stores[other] / stores['ravel'])
    cell = lambda s: fmt(statistics.median(by_store[s])) if by_store[s] else '-'
    ratio = lambda s: '%.2fx' % statistics.median(ratios[s]) if ratios[s] else '-'
    print('%-28s %12s %12s %12s %11s %10s' % (name.replace('Benchmark', ''), cell('ravel'),
          cell('bolt'), cell('wal'), ratio('bolt'), ratio('wal')))
EOF
