#!/bin/sh
# bench-ordering.sh -- the seed's table of ordering modes (docs/ordering.md),
# ravel against RocksDB's own implementation of each mode, with the WAL and
# without it (--disable_wal=1).
#
#   ROUNDS=5 scripts/bench-ordering.sh
#
# Each row is one scripts/bench-compare.sh run (ravel and db_bench
# alternating, ROUNDS rounds, fresh databases under DB_ROOT) of the seed's
# workload with the mode's flags:
#   default          --unordered_write=0
#   unordered        --unordered_write=1
#   WritePrepared    --transaction_db=true --unordered_write=1
#   in-order         ravel: --unordered_write=1 --in_order_publication=1;
#                    RocksDB has no such mode: compared to its unordered
# Prints each row's medians and ratio, then each mode's gain over its own
# engine's default.  WORKLOAD overrides the workload flags.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
WORKLOAD=${WORKLOAD:---benchmarks=fillrandom --threads=32 --batch_size=8 --num=10000000 --writes=30000}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-ordering.XXXXXX")
trap 'rm -rf -- "$out"' EXIT

row() { # NAME WAL RAVEL_EXTRA FLAGS...
    name=$1 wal=$2 extra=$3
    shift 3
    echo "== $name, $wal: $*${extra:+ (ravel: $extra)}"
    # shellcheck disable=SC2086 # WORKLOAD is a list of words
    RAVEL_EXTRA=$extra "$here/bench-compare.sh" $WORKLOAD "$@" |
        tee "$out/$name-$wal.log" | sed -n '/^benchmark/,$p'
    awk -v n="$name" -v w="$wal" '$1 == "fillrandom" { print n, w, $2, $3, $4 }' \
        "$out/$name-$wal.log" >>"$out/table"
}

: >"$out/table"
for wal in wal nowal; do
    if [ "$wal" = nowal ]; then set -- --disable_wal=1; else set -- --disable_wal=0; fi
    row default "$wal" "" --unordered_write=0 "$@"
    row unordered "$wal" "" --unordered_write=1 "$@"
    row writeprepared "$wal" "" --transaction_db=true --unordered_write=1 "$@"
    row inorder "$wal" "--in_order_publication=1" --unordered_write=1 "$@"
done

echo
echo "mode            wal    ravel ops/s  rocksdb ops/s  ravel/rocksdb  ravel gain  rocksdb gain"
awk '
{ r[$1, $2] = $3; k[$1, $2] = $4; x[$1, $2] = $5; order[++n] = $1 " " $2 }
END {
    for (i = 1; i <= n; i++) {
        split(order[i], p, " ")
        m = p[1]; w = p[2]
        rg = r["default", w] ? sprintf("%+.0f%%", (r[m, w] / r["default", w] - 1) * 100) : "-"
        kg = k["default", w] ? sprintf("%+.0f%%", (k[m, w] / k["default", w] - 1) * 100) : "-"
        printf "%-15s %-6s %11d %14d %14s %11s %13s\n", m, w, r[m, w], k[m, w], x[m, w], rg, kg
    }
}' "$out/table"
