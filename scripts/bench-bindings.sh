#!/usr/bin/env bash
# What each binding costs: fillrandom (1M keys of 16 bytes, 100-byte
# values, batches of 100, default options) then readrandom (1M gets) in C
# (ravel-bench), Rust, Go and Python, all on the same release build of the
# library, in turns, ROUNDS times; then the Python per-call overhead of get
# and put against plyvel.  Prints each run and the medians.
#
#   scripts/bench-bindings.sh               release build in build-rel/
#   BUILD=dir ROUNDS=5 NUM=1000000 scripts/bench-bindings.sh
#
# Needs the toolchains of the bindings (cargo, go, python3 with venv) and
# network access to PyPI for plyvel and cffi (the overhead comparison).
# Run it on a quiet machine: the figures are ratios to C in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD:-build-rel}
rounds=${ROUNDS:-3}
num=${NUM:-1000000}

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dbuildtype=release >/dev/null
fi
ninja -C "$build" >/dev/null
export PKG_CONFIG_PATH=$root/$build/meson-uninstalled
export LD_LIBRARY_PATH=$root/$build
work=$(mktemp -d "${TMPDIR:-/tmp}/ravel-bench-bindings.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== building the bindings against $build"
(cd bindings/rust && cargo build --release --quiet -p ravel-kv-bench)
(cd bindings/go && GOTOOLCHAIN=local go build -o "$work/go-bench" ./bench)
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q ./bindings/python plyvel cffi
rm -rf bindings/python/build bindings/python/src/*.egg-info

flags=(--num="$num" --batch_size=100 --seed=1)
declare -A results
run() { # NAME COMMAND...: runs it on a fresh database, keeps its two rates
  local name=$1 out
  shift
  rm -rf "$work/db"
  out=$("$@" 2>&1)
  echo "$out" | grep -E '^(fillrandom|readrandom) ' | sed "s/^/$name  /"
  for b in fillrandom readrandom; do
    results[$name/$b]+="$(echo "$out" | awk -v b="$b" '$1 == b {for (i = 1; i <= NF; i++) if ($(i+1) ~ /^ops\/s/) print $i}') "
  done
}
for r in $(seq "$rounds"); do
  echo "== round $r"
  run C "$build/bench/ravel-bench" --benchmarks=fillrandom,readrandom \
    --db="$work/db" "${flags[@]}"
  run Rust bindings/rust/target/release/fillrandom --db="$work/db" \
    "${flags[@]}"
  run Go "$work/go-bench" --db="$work/db" "${flags[@]}"
  run Python "$work/venv/bin/python" bindings/python/bench/fillrandom.py \
    --db "$work/db" --num "$num" --batch_size 100 --seed 1
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "== medians of $rounds rounds (ops/s, and the ratio to C)"
for b in fillrandom readrandom; do
  c=$(echo "${results[C/$b]}" | median)
  for lang in C Rust Go Python; do
    m=$(echo "${results[$lang/$b]}" | median)
    printf '%-10s %-7s %9s  %.2fx\n' "$b" "$lang" "$m" "$(echo "$m / $c" | bc -l)"
  done
done

echo "== Python per-call overhead (bindings/python/bench/overhead.py)"
"$work/venv/bin/python" bindings/python/bench/overhead.py
