#!/bin/sh
# bench-wal-io.sh -- ravel-bench with the WAL written through io_uring
# (wal_io=uring) and through pwrite + fdatasync (wal_io=sync), alternating,
# on the same flags; prints each run and the median ratio uring/sync.
#
#   scripts/bench-wal-io.sh --benchmarks=fillrandom --threads=32 --batch_size=8 \
#       --num=10000000 --writes=30000
#
# Environment: ROUNDS (default 3), DB_ROOT (default /dev/shm),
# RAVEL_BENCH (default build/bench/ravel-bench).
set -eu
ROUNDS=${ROUNDS:-3}
DB_ROOT=${DB_ROOT:-/dev/shm}
here=$(cd "$(dirname "$0")/.." && pwd)
RAVEL_BENCH=${RAVEL_BENCH:-$here/build/bench/ravel-bench}
[ -x "$RAVEL_BENCH" ] || { echo "bench-wal-io: no ravel-bench at $RAVEL_BENCH" >&2; exit 1; }

db="$DB_ROOT/ravel-wal-io-$$"
results=$(mktemp)
trap 'rm -rf "$db" "$results"' EXIT
for round in $(seq 1 "$ROUNDS"); do
    for io in uring sync; do
        rm -rf "$db"
        out=$("$RAVEL_BENCH" "$@" --wal_io="$io" --db="$db")
        echo "$out" | awk -v r="$round" -v io="$io" \
            '/ ops\/sec / { for (i = 1; i <= NF; i++) if ($i == "ops/sec") print r, io, $1, $(i-1) }' \
            | tee -a "$results"
    done
done
echo
awk '{ k = $3; v[k, $2, $1] = $4; names[k] = 1; rounds[$1] = 1 }
END {
    for (k in names) {
        n = 0
        for (r in rounds) if ((k, "sync", r) in v && v[k, "sync", r] > 0) ratio[++n] = v[k, "uring", r] / v[k, "sync", r]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (ratio[j] < ratio[i]) { t = ratio[i]; ratio[i] = ratio[j]; ratio[j] = t }
        printf "%-12s uring/sync median %.2fx over %d rounds\n", k, ratio[int((n + 1) / 2)], n
    }
}' "$results"
