#!/bin/sh
# bench-reopen-reads.sh -- reads after a reopen: load
# NUM keys with fillrandom, then readrandom and seekrandom on that database
# with 1 and 4 threads, for ravel-bench and RocksDB's db_bench with the same
# flags (auto compactions off for both), alternating, ROUNDS rounds.
# Prints every run's ops/sec and peak RSS, the open time of the loaded
# database (a readrandom of one key), and the median ravel/rocksdb ratio per
# benchmark.
#
#   ROUNDS=3 NUM=5000000 scripts/bench-reopen-reads.sh
#
# Environment: ROUNDS (3), NUM (5000000), READS (per thread, 500000),
# DB_ROOT (/tmp), RAVEL_BENCH, DB_BENCH, CACHE (33554432), EXTRA (more
# flags for both).
set -eu

ROUNDS=${ROUNDS:-3}
NUM=${NUM:-5000000}
READS=${READS:-500000}
DB_ROOT=${DB_ROOT:-/tmp}
CACHE=${CACHE:-33554432}
EXTRA=${EXTRA:-}
here=$(cd "$(dirname "$0")/.." && pwd)
RAVEL_BENCH=${RAVEL_BENCH:-$here/build/bench/ravel-bench}
DB_BENCH=${DB_BENCH:-db_bench}
[ -x "$RAVEL_BENCH" ] || { echo "no $RAVEL_BENCH" >&2; exit 1; }
command -v "$DB_BENCH" >/dev/null || { echo "no db_bench" >&2; exit 1; }

common="--num=$NUM --key_size=16 --value_size=100 --cache_size=$CACHE \
--bloom_bits=10 --disable_auto_compactions=1 --seek_nexts=10 $EXTRA"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# run ENGINE LABEL FLAGS...: appends "label ops rss_kb" to $out/ENGINE
run() {
    engine=$1 label=$2
    shift 2
    bin=$RAVEL_BENCH
    [ "$engine" = rocksdb ] && bin=$DB_BENCH
    /usr/bin/time -f "%M" -o "$out/time" "$bin" --db="$DB_ROOT/brc-$engine" \
        $common "$@" >"$out/log" 2>&1 || { cat "$out/log" >&2; exit 1; }
    rss=$(cat "$out/time")
    for b in fillrandom readrandom seekrandom; do
        ops=$(awk -v b="$b" '$1 == b { for (i = 1; i <= NF; i++)
                if ($i == "ops/sec") print $(i - 1) }' "$out/log")
        [ -n "$ops" ] && echo "$label-$b $ops $rss" >>"$out/$engine"
    done
    return 0
}

for r in $(seq 1 "$ROUNDS"); do
    for engine in ravel rocksdb; do
        rm -rf "$DB_ROOT/brc-$engine"
        run $engine fill --benchmarks=fillrandom --threads=1
        s=$(date +%s%N)
        run $engine open --use_existing_db=1 --benchmarks=readrandom \
            --reads=1 --threads=1
        e=$(date +%s%N)
        echo "open-ms $(( (e - s) / 1000000 )) 0" >>"$out/$engine"
        run $engine t1 --use_existing_db=1 \
            --benchmarks=readrandom,seekrandom --reads="$READS" --threads=1
        run $engine t4 --use_existing_db=1 \
            --benchmarks=readrandom,seekrandom --reads="$READS" --threads=4
        echo "round $r $engine done" >&2
    done
done

echo "benchmark          ravel ops/s  rocksdb ops/s  ratio  ravel RSS KB  rocksdb RSS KB"
for label in fill-fillrandom t1-readrandom t1-seekrandom t4-readrandom \
             t4-seekrandom open-ms; do
    rv=$(awk -v l="$label" '$1 == l { print $2 }' "$out/ravel" | sort -n |
         awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    rk=$(awk -v l="$label" '$1 == l { print $2 }' "$out/rocksdb" | sort -n |
         awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    rvm=$(awk -v l="$label" '$1 == l { print $3 }' "$out/ravel" | sort -n |
          awk '{ a[NR] = $1 } END { print a[NR] }')
    rkm=$(awk -v l="$label" '$1 == l { print $3 }' "$out/rocksdb" | sort -n |
          awk '{ a[NR] = $1 } END { print a[NR] }')
    ratio=$(awk -v a="$rv" -v b="$rk" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
    printf "%-18s %11s  %13s  %5s  %12s  %14s\n" "$label" "$rv" "$rk" \
        "$ratio" "$rvm" "$rkm"
done
