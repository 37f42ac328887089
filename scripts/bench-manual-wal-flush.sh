#!/bin/sh
# bench-manual-wal-flush.sh -- the gain of --manual_wal_flush=1 over =0,
# for ravel-bench and RocksDB's db_bench, with the same other flags.
#
#   scripts/bench-manual-wal-flush.sh --benchmarks=fillrandom --threads=32 \
#       --batch_size=8 --num=10000000 --writes=30000
#
# Each round runs, in this order, ravel 0, ravel 1, rocksdb 0, rocksdb 1,
# each on a fresh database under DB_ROOT, so that drift in the machine hits
# every configuration alike.  Prints every run's ops/sec, then per engine
# the median ops/sec with the option off and on and the median of the
# per-round gains (on/off).  db_bench gets the flags bench-compare.sh adds
# to keep RocksDB's background work out of a write benchmark.
#
# Environment: ROUNDS (default 5), DB_ROOT (default /dev/shm), RAVEL_BENCH
# (default build/bench/ravel-bench), DB_BENCH (default db_bench).
set -eu

ROUNDS=${ROUNDS:-5}
DB_ROOT=${DB_ROOT:-/dev/shm}
DB_BENCH=${DB_BENCH:-db_bench}
here=$(cd "$(dirname "$0")/.." && pwd)
RAVEL_BENCH=${RAVEL_BENCH:-$here/build/bench/ravel-bench}
ROCKSDB_EXTRA="-enable_pipelined_write=false -disable_auto_compactions=true
 -level0_file_num_compaction_trigger=99999 -level0_slowdown_writes_trigger=99999
 -level0_stop_writes_trigger=99999 -max_write_buffer_number=16"

die() { echo "bench-manual-wal-flush: $*" >&2; exit 1; }
[ -x "$RAVEL_BENCH" ] || die "no ravel-bench at $RAVEL_BENCH"
command -v "$DB_BENCH" >/dev/null 2>&1 || die "no db_bench ($DB_BENCH)"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-mwf.XXXXXX")
trap 'rm -rf -- "$work" "$DB_ROOT"/bench-mwf-$$' EXIT
trap 'exit 130' INT TERM

# run ENGINE MANUAL ROUND COMMAND...: one run; appends "engine manual ops".
run() {
    engine=$1 manual=$2 round=$3
    shift 3
    db=$DB_ROOT/bench-mwf-$$
    rm -rf -- "$db"
    env -u TEST_TMPDIR "$@" --manual_wal_flush="$manual" --db="$db" \
        >"$work/log" 2>"$work/err" || { cat "$work/log" "$work/err" >&2;
                                         die "$engine failed: $*"; }
    rm -rf -- "$db"
    ops=$(awk '$2 == ":" && $6 == "ops/sec" { print $5; exit }' "$work/log")
    [ -n "$ops" ] || { cat "$work/log" >&2; die "$engine: no result line"; }
    printf "round %d  %-8s manual_wal_flush=%d %12d ops/sec\n" "$round" \
        "$engine" "$manual" "$ops"
    echo "$engine $manual $ops" >>"$work/results"
}

echo "flags: $*"
: >"$work/results"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    run ravel 0 "$r" "$RAVEL_BENCH" "$@"
    run ravel 1 "$r" "$RAVEL_BENCH" "$@"
    # shellcheck disable=SC2086 # ROCKSDB_EXTRA is a list of words
    run rocksdb 0 "$r" "$DB_BENCH" "$@" $ROCKSDB_EXTRA
    # shellcheck disable=SC2086
    run rocksdb 1 "$r" "$DB_BENCH" "$@" $ROCKSDB_EXTRA
    r=$((r + 1))
done

awk '
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ n[$1, $2]++; v[$1, $2, n[$1, $2]] = $3 }
END {
    printf "%-8s %14s %14s %10s\n", "engine", "off ops/s", "on ops/s",
           "gain"
    split("ravel rocksdb", engines, " ")
    for (e = 1; e <= 2; e++) {
        off = ""; on = ""; gain = ""
        for (i = 1; i <= n[engines[e], 0]; i++) {
            off = off " " v[engines[e], 0, i]
            on = on " " v[engines[e], 1, i]
            gain = gain " " v[engines[e], 1, i] / v[engines[e], 0, i]
        }
        printf "%-8s %14d %14d %+9.1f%%\n", engines[e], median(off),
               median(on), (median(gain) - 1) * 100
    }
}' "$work/results"
