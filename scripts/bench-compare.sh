#!/bin/sh
# bench-compare.sh -- run ravel-bench and RocksDB's db_bench with the same
# flags and report ravel's throughput relative to RocksDB's.
#
#   scripts/bench-compare.sh --benchmarks=fillrandom --threads=32 \
#       --batch_size=8 --num=10000000 --writes=30000
#
# The two alternate (ravel, rocksdb, ravel, ...) for ROUNDS rounds so that
# drift in the machine (thermal, other load) hits both alike, each run on a
# fresh database directory under DB_ROOT.  For db_bench the flags that keep
# RocksDB's background work out of a write benchmark are added unless the
# caller gave them (pipelined write off, no compactions, no stalls, 16
# memtables).  Prints every run's ops/sec and, per benchmark, the median of
# the per-round ratios ravel/rocksdb.
#
# Environment:
#   ROUNDS       rounds (default 5)
#   DB_ROOT      where the database directories go (default /dev/shm)
#   RAVEL_BENCH  ravel-bench binary (default build/bench/ravel-bench)
#   DB_BENCH     db_bench binary (default db_bench on PATH)
#   KEEP_LOGS    if set, keep the full output of every run in this directory
set -eu

ROUNDS=${ROUNDS:-5}
DB_ROOT=${DB_ROOT:-/dev/shm}
DB_BENCH=${DB_BENCH:-db_bench}
here=$(cd "$(dirname "$0")/.." && pwd)
RAVEL_BENCH=${RAVEL_BENCH:-$here/build/bench/ravel-bench}

die() { echo "bench-compare: $*" >&2; exit 1; }

case $ROUNDS in ''|*[!0-9]*|0) die "ROUNDS=$ROUNDS: must be a positive integer" ;; esac
[ -x "$RAVEL_BENCH" ] || die "no ravel-bench at $RAVEL_BENCH (build it, or set RAVEL_BENCH)"
command -v "$DB_BENCH" >/dev/null 2>&1 || die "no db_bench ($DB_BENCH); set DB_BENCH"
[ -d "$DB_ROOT" ] || die "DB_ROOT=$DB_ROOT is not a directory"

# The caller's flag names, without dashes or values, to see what was given.
given=" "
for arg in "$@"; do
    case $arg in
    -*) name=${arg#-}; name=${name#-}; name=${name%%=*}; given="$given$name " ;;
    *) die "unexpected argument '$arg' (flags are --name=value)" ;;
    esac
    case $name in
    db) die "--db is chosen by this script (a fresh directory per run under DB_ROOT)" ;;
    esac
done

rocksdb_extra=""
for flag in enable_pipelined_write=false disable_auto_compactions=true \
            level0_file_num_compaction_trigger=99999 \
            level0_slowdown_writes_trigger=99999 \
            level0_stop_writes_trigger=99999 max_write_buffer_number=16; do
    case $given in
    *" ${flag%%=*} "*) ;;
    *) rocksdb_extra="$rocksdb_extra -$flag" ;;
    esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
dbdir=""
cleanup() {
    [ -n "$dbdir" ] && rm -rf -- "$dbdir"
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

results=$work/results # lines: engine round benchmark ops_per_sec

# run ENGINE ROUND COMMAND...: one run on a fresh db, its result lines kept.
run() {
    engine=$1 round=$2
    shift 2
    dbdir=$DB_ROOT/bench-compare-$$-$engine-$round
    rm -rf -- "$dbdir"
    log=$work/$engine-$round.log
    # stdout only: db_bench's progress lines go to stderr.
    if ! env -u TEST_TMPDIR "$@" --db="$dbdir" >"$log" 2>"$log.err"; then
        cat "$log" "$log.err" >&2
        die "$engine run $round failed: $*"
    fi
    rm -rf -- "$dbdir"
    dbdir=""
    if [ -n "${KEEP_LOGS:-}" ]; then
        mkdir -p "$KEEP_LOGS" && cp "$log" "$log.err" "$KEEP_LOGS/"
    fi
    # db_bench's result line: "name : x micros/op N ops/sec ..." ($5 = N)
    awk -v e="$engine" -v r="$round" '
        $2 == ":" && $6 == "ops/sec" { print e, r, $1, $5; n++ }
        END { if (!n) exit 1 }' "$log" >>"$results" ||
        { cat "$log" >&2; die "$engine run $round printed no result line"; }
    awk -v e="$engine" -v r="$round" '$2 == ":" && $6 == "ops/sec" {
        printf "round %d  %-8s %-12s %12d ops/sec\n", r, e, $1, $5 }' "$log"
}

echo "machine:  $(nproc) CPUs, $(uname -sr)"
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$model" ] && echo "cpu:      $model"
echo "ravel:    $("$RAVEL_BENCH" --version)"
echo "rocksdb:  $("$DB_BENCH" --version 2>&1 | head -n 1)"
echo "flags:    $*"
echo "rocksdb+: $rocksdb_extra"
echo "rounds:   $ROUNDS, databases under $DB_ROOT"
echo

: >"$results"
i=1
while [ "$i" -le "$ROUNDS" ]; do
    run ravel "$i" "$RAVEL_BENCH" "$@"
    # shellcheck disable=SC2086 # rocksdb_extra is a list of words
    run rocksdb "$i" "$DB_BENCH" "$@" $rocksdb_extra
    i=$((i + 1))
done

# Per benchmark: median ops/sec of each engine and the median of the
# per-round ratios ravel/rocksdb (a benchmark run twice in one list is
# matched by occurrence).
echo
awk -v nrounds="$ROUNDS" '
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    key = $3 "#" (++seen[$1, $2, $3])
    if (!(key in order)) { order[key] = ++norder; names[norder] = key }
    ops[$1, $2, key] = $4
}
END {
    printf "%-12s %14s %14s %14s  %s\n", "benchmark", "ravel ops/s",
           "rocksdb ops/s", "ravel/rocksdb", "(each round)"
    for (k = 1; k <= norder; k++) {
        key = names[k]; rv = ""; rk = ""; ratio = ""; each = ""
        for (r = 1; r <= nrounds; r++) {
            if ((("ravel", r, key) in ops) && (("rocksdb", r, key) in ops) &&
                ops["rocksdb", r, key] > 0) {
                rv = rv " " ops["ravel", r, key]
                rk = rk " " ops["rocksdb", r, key]
                x = ops["ravel", r, key] / ops["rocksdb", r, key]
                ratio = ratio " " x
                each = each sprintf(" %.2f", x)
            }
        }
        name = key; sub(/#1$/, "", name)
        if (ratio == "")
            printf "%-12s %14s %14s %14s\n", name, "-", "-", "-"
        else
            printf "%-12s %14d %14d %13.2fx  (%s)\n", name, median(rv),
                   median(rk), median(ratio), substr(each, 2)
    }
}' "$results"
