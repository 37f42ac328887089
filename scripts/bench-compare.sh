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
# the per-round ratios ravel/rocksdb, and each engine's median peak RSS
# (/usr/bin/time -v, where it is installed).
#
# Environment:
#   ROUNDS       rounds (default 5)
#   DB_ROOT      where the database directories go (default /dev/shm)
#   RAVEL_BENCH  ravel-bench binary (default build/bench/ravel-bench)
#   DB_BENCH     db_bench binary (default db_bench on PATH)
#   KEEP_LOGS    if set, keep the full output of every run in this directory
#   RAVEL_EXTRA  flags for ravel-bench alone (a ravel mode RocksDB has no
#                flag for, e.g. --in_order_publication=1)
#   OPEN_TIME    if set, after each run time a second process that reopens
#                the database and reads one key (--use_existing_db
#                --benchmarks=readrandom --reads=1 --threads=1): the median
#                wall-clock seconds are reported as "open+close"
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
resources=$work/resources # lines: engine round what value

timer=""
[ -x /usr/bin/time ] && timer="/usr/bin/time -v -o $work/time.out"

# Peak RSS (KiB) and wall-clock seconds from /usr/bin/time -v's report.
time_rss() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.out"; }
time_wall() {
    awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0
        for (i = 1; i <= n; i++) s = s * 60 + p[i]
        print s }' "$work/time.out"
}

# run ENGINE ROUND COMMAND...: one run on a fresh db, its result lines kept.
run() {
    engine=$1 round=$2
    shift 2
    dbdir=$DB_ROOT/bench-compare-$$-$engine-$round
    rm -rf -- "$dbdir"
    log=$work/$engine-$round.log
    # stdout only: db_bench's progress lines go to stderr.
    # shellcheck disable=SC2086 # timer is a command and its flags
    if ! env -u TEST_TMPDIR $timer "$@" --db="$dbdir" >"$log" 2>"$log.err"; then
        cat "$log" "$log.err" >&2
        die "$engine run $round failed: $*"
    fi
    if [ -n "$timer" ]; then
        echo "$engine $round peak_rss_mb $(time_rss | awk '{ printf "%.1f", $1 / 1024 }')" >>"$resources"
    fi
    if [ -n "${OPEN_TIME:-}" ]; then
        # shellcheck disable=SC2086
        if ! env -u TEST_TMPDIR $timer "$@" --db="$dbdir" --use_existing_db=true \
                --benchmarks=readrandom --reads=1 --threads=1 \
                >"$log.open" 2>&1; then
            cat "$log.open" >&2
            die "$engine reopen $round failed"
        fi
        [ -n "$timer" ] && echo "$engine $round open+close_s $(time_wall)" >>"$resources"
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
echo "ravel+:   ${RAVEL_EXTRA:-}"
echo "rounds:   $ROUNDS, databases under $DB_ROOT"
echo

: >"$results"
: >"$resources"
i=1
while [ "$i" -le "$ROUNDS" ]; do
    # shellcheck disable=SC2086 # RAVEL_EXTRA is a list of words
    run ravel "$i" "$RAVEL_BENCH" "$@" ${RAVEL_EXTRA:-}
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

# Per resource (peak RSS, reopen time): each engine's median.
[ -s "$resources" ] && awk '
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    if (!($3 in seen)) { seen[$3] = 1; names[++n] = $3 }
    v[$1, $3] = v[$1, $3] " " $4
}
END {
    for (k = 1; k <= n; k++)
        printf "%-12s %14s %14s %14s  (ravel:%s; rocksdb:%s)\n", names[k],
               median(v["ravel", names[k]]), median(v["rocksdb", names[k]]),
               "", v["ravel", names[k]], v["rocksdb", names[k]]
}' "$resources"
exit 0
