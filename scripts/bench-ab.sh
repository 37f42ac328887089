#!/bin/sh
# bench-ab.sh -- two builds of ravel-bench against each other, alternating
# (old, new, old, new ...) on a fresh database each run, for the three
# workloads a change to the engine's structure must not slow down: the
# seed's write workload, synced writes and point reads.  Prints one line
# per run and, per workload, the medians and the median of the per-round
# ratios new/old.
#
#   OLD=old/build-rel/bench/ravel-bench NEW=build-rel/bench/ravel-bench \
#       ROUNDS=5 scripts/bench-ab.sh
#
# Environment: OLD, NEW (ravel-bench binaries, required), ROUNDS (5),
# SHM (/dev/shm: the in-memory workloads), DISK (.: the synced one).
set -eu
: "${OLD:?set OLD to the old ravel-bench}" "${NEW:?set NEW to the new ravel-bench}"
ROUNDS=${ROUNDS:-5}
SHM=${SHM:-/dev/shm}
DISK=${DISK:-.}

# ops/sec of benchmark NAME from ravel-bench's output on stdin
ops_of() { awk -v n="$1" '$1 == n { for (i = 1; i <= NF; i++) if ($i == "ops/sec") v = $(i - 1) } END { print v }'; }

run() { # bin where bench-name flags...
  bin=$1 where=$2 name=$3; shift 3
  d=$(mktemp -d "$where/ab-XXXXXX")
  "$bin" --db="$d/db" "$@" 2>&1 | ops_of "$name"
  rm -rf "$d"
}

out=$(mktemp)
for w in seed sync readrandom; do
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    for v in old new; do
      bin=$OLD; [ "$v" = new ] && bin=$NEW
      case $w in
        seed) ops=$(run "$bin" "$SHM" fillrandom --benchmarks=fillrandom \
                      --threads=32 --batch_size=8 --num=10000000 \
                      --writes=30000 --disable_auto_compactions=1) ;;
        sync) ops=$(run "$bin" "$DISK" fillrandom --benchmarks=fillrandom \
                      --threads=32 --sync=1 --num=1000000 --writes=1500) ;;
        readrandom) ops=$(run "$bin" "$SHM" readrandom \
                      --benchmarks=fillrandom,compact,readrandom \
                      --threads=1 --num=500000 --reads=500000) ;;
      esac
      echo "$w $r $v $ops" | tee -a "$out"
    done
    r=$((r + 1))
  done
done
python3 - "$out" <<'PY'
import statistics as st, sys
d = {}
for line in open(sys.argv[1]):
    w, r, v, ops = line.split()
    d.setdefault(w, {}).setdefault(r, {})[v] = float(ops)
for w, rounds in d.items():
    ratios = [x["new"] / x["old"] for x in rounds.values()]
    print(f"{w}: old {st.median(x['old'] for x in rounds.values()):,.0f} "
          f"new {st.median(x['new'] for x in rounds.values()):,.0f} ops/s; "
          f"new/old per round {', '.join(f'{q:.2f}' for q in ratios)}; "
          f"median {st.median(ratios):.3f}")
PY
rm -f "$out"
