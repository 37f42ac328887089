#!/bin/sh
# bench-compaction-ab.sh -- two builds of ravel-bench against each other on
# scripts/bench-compaction.sh's workload, alternating (old, new, old, new
# ...) on a fresh database each run: fillrandom with compactions on, then
# waitforcompaction; the write amplification (bytes flushes and
# compactions wrote over the keys and values put, bench-compaction.sh's
# definition) and, on the filled database in a new process, readrandom
# with one thread.  Prints one line per run, then per measure the medians
# and the median of the per-round ratios new/old.
#
#   OLD=old/build-rel/bench/ravel-bench NEW=build-rel/bench/ravel-bench \
#       ROUNDS=5 NUM=2000000 SCALE=10 scripts/bench-compaction-ab.sh
#
# SCALE divides bench-compaction.sh's sizes (write buffers, target files,
# level 1's target) so that NUM keys give the level shape NUM * SCALE keys
# give it: NUM=2000000 SCALE=10 is the 20M run's shape (levels 0-2, level
# 2 within its target) in a tenth of the bytes.  Environment: OLD, NEW
# (required), ROUNDS (5), NUM (2000000), SCALE (10), READS (300000),
# DB_ROOT (/dev/shm), EXTRA (more flags for both).
set -eu
: "${OLD:?set OLD to the old ravel-bench}" "${NEW:?set NEW to the new ravel-bench}"
ROUNDS=${ROUNDS:-5}
NUM=${NUM:-2000000}
SCALE=${SCALE:-10}
READS=${READS:-300000}
DB_ROOT=${DB_ROOT:-/dev/shm}
EXTRA=${EXTRA:-}

wb=$((67108864 / SCALE))
l1=$((268435456 / SCALE))
common="--key_size=16 --value_size=100 --compression_type=none
  --bloom_bits=10 --cache_size=67108864 --block_size=4096
  --write_buffer_size=$wb --max_write_buffer_number=2
  --target_file_size_base=$wb --max_bytes_for_level_base=$l1
  --max_bytes_for_level_multiplier=10 --num_levels=7
  --level0_file_num_compaction_trigger=4 --level0_slowdown_writes_trigger=20
  --level0_stop_writes_trigger=36 --max_background_jobs=2
  --delayed_write_rate=16777216
  --soft_pending_compaction_bytes_limit=68719476736
  --hard_pending_compaction_bytes_limit=274877906944
  --num=$NUM $EXTRA"

out=$(mktemp)
log=$(mktemp)
db=$DB_ROOT/bench-compaction-ab-$$
trap 'rm -rf -- "$db" "$out" "$log"' EXIT

# ops/sec of benchmark NAME in $log
ops_of() { awk -v n="$1" '$1 == n && $2 == ":" { for (i = 1; i <= NF; i++) if ($i == "ops/sec") v = $(i - 1) } END { print v }' "$log"; }

echo "flags: $(echo $common)"
r=1
while [ "$r" -le "$ROUNDS" ]; do
  for v in old new; do
    bin=$OLD; [ "$v" = new ] && bin=$NEW
    rm -rf -- "$db"
    # shellcheck disable=SC2086 # common is a list of flags
    "$bin" --db="$db" $common --benchmarks=fillrandom,waitforcompaction \
        --writes="$NUM" --seed=1 >"$log" 2>&1 || { tail "$log"; exit 1; }
    fill=$(ops_of fillrandom)
    wa=$(awk -v put="$NUM" '$1 == "waitforcompaction" {
            for (i = 1; i < NF; i++) if ($i == "amplification") { e = $(i + 2); sub(/^\(/, "", e) } }
         END { printf "%.3f", e / (put * 116) }' "$log")
    # shellcheck disable=SC2086
    "$bin" --db="$db" $common --use_existing_db=1 --benchmarks=readrandom \
        --reads="$READS" --seed=2 >"$log" 2>&1 || { tail "$log"; exit 1; }
    read1=$(ops_of readrandom)
    echo "$v $r fillrandom $fill" >>"$out"
    echo "$v $r write-amp $wa" >>"$out"
    echo "$v $r readrandom $read1" >>"$out"
    printf 'round %d %-4s fillrandom %8s ops/s  write-amp %s  readrandom %8s ops/s\n' \
        "$r" "$v" "$fill" "$wa" "$read1"
  done
  r=$((r + 1))
done
rm -rf -- "$db"

awk -v nrounds="$ROUNDS" '
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1, $2, $3] = $4; seen[$3] = 1 }
END {
    split("fillrandom write-amp readrandom", names, " ")
    for (k = 1; k <= 3; k++) {
        l = names[k]; o = ""; nw = ""; ratio = ""; each = ""
        for (r = 1; r <= nrounds; r++) {
            a = v["old", r, l]; b = v["new", r, l]
            o = o " " a; nw = nw " " b
            if (a > 0) { ratio = ratio " " b / a; each = each sprintf(" %.3f", b / a) }
        }
        printf "%-11s old %10.3f  new %10.3f  new/old %.3f  (%s)\n", l,
               median(o), median(nw), median(ratio), substr(each, 2)
    }
}' "$out"
