#!/bin/sh
# bench-multi-db.sh -- Speedb's global delayed write experiment on ravel:
# three databases in one process on one disk, written at once with low
# slowdown triggers, each with a write controller of its own ("separate")
# and all three on one shared controller ("shared",
# --use_shared_write_controller).  Without sharing, the databases that are
# not slowed down take the disk and the CPU from the one that must catch up
# with its compactions, which then stalls for long stretches; with one
# controller enforcing the most restrictive delay on all three, throughput
# should be steadier.
#
#   scripts/bench-multi-db.sh
#   DURATION=10 NUM=100000 OUT_DIR=/tmp scripts/bench-multi-db.sh  # a smoke test
#
# Each run is one ravel-bench process:
#   --benchmarks=fillrandom,stats --num_multi_db=3 --threads=3 (thread i
#   writes database i) --duration=DURATION --report_interval_seconds=1
#   and Speedb's flags scaled to this machine (below; FLAGS replaces them).
# For each run, from its report file: the mean per-second throughput, its
# coefficient of variation (standard deviation / mean) and the longest
# stretch of consecutive seconds below 10% of the mean, for the three
# databases together and for each one (against its own mean).  The runs
# alternate separate, shared, ROUNDS times; the last round's reports are
# drawn by scripts/plot-report.sh as OUT_DIR/multi-db-separate.png and
# OUT_DIR/multi-db-shared.png (OUT_DIR defaults to docs/).
#
# Environment: ROUNDS (1), DURATION (seconds per run, 120), NUM (key
# range, 100000000), VALUE_SIZE (1000, Speedb's), DB_ROOT (/tmp: the
# machine's disk), RAVEL_BENCH, OUT_DIR (docs), KEEP_LOGS (a directory to
# keep every run's output and report in), FLAGS (the engine flags, default
# below), EXTRA (flags added to them).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-1}
DURATION=${DURATION:-120}
NUM=${NUM:-100000000}
VALUE_SIZE=${VALUE_SIZE:-1000}
DB_ROOT=${DB_ROOT:-/tmp}
RAVEL_BENCH=${RAVEL_BENCH:-$here/build/bench/ravel-bench}
OUT_DIR=${OUT_DIR:-$here/docs}
# Speedb's test: 4 write buffers, level-0 slowdown at 8 files (the stop at
# the default 36), no WAL, dynamic delay, bloom filters, an 8M cache; its
# 256M buffers are 64M here and its 512M/s delayed rate 128M/s (a smaller
# machine: about what this one sustains).  With a delayed rate far below
# what the machine sustains (the 16M/s default), every slowdown is a cliff
# whichever controller is used, and sharing it makes all databases crawl
# together (docs/performance.md has both runs).
FLAGS=${FLAGS:---compression_type=none --write_buffer_size=67108864
  --max_write_buffer_number=4 --level0_slowdown_writes_trigger=8
  --delayed_write_rate=134217728
  --use_dynamic_delay=true --disable_wal=true --bloom_bits=10
  --cache_size=8388608 --max_background_jobs=2}
EXTRA=${EXTRA:-}

die() { echo "bench-multi-db: $*" >&2; exit 1; }

for v in ROUNDS DURATION NUM VALUE_SIZE; do
    eval "x=\${$v}"
    # shellcheck disable=SC2154 # x is set by the eval
    case $x in ''|*[!0-9]*|0) die "$v=$x: must be a positive integer" ;; esac
done
[ -x "$RAVEL_BENCH" ] || die "no ravel-bench at $RAVEL_BENCH (build it, or set RAVEL_BENCH)"
[ -d "$DB_ROOT" ] || die "DB_ROOT=$DB_ROOT is not a directory"
mkdir -p "$OUT_DIR"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-multi-db.XXXXXX")
db=$DB_ROOT/bench-multi-db-$$
cleanup() {
    rm -rf -- "$db" "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The report's numbers: per column (all, db0, db1, db2) the mean ops/s,
# the coefficient of variation and the longest stretch below 10% of the
# mean.  Lines: "MODE ROUND COLUMN MEAN CV LONGEST".
summarize() {
    mode=$1 round=$2 csv=$3
    awk -F, -v mode="$mode" -v round="$round" '
    NR == 1 { for (i = 2; i <= NF; i++) name[i] = $i == "interval_qps" ? "all" : substr($i, 14); ncol = NF; next }
    {
        dt = $1 - prev; prev = $1; if (dt <= 0) dt = 1
        n++; secs[n] = dt
        for (i = 2; i <= ncol; i++) { q = $i / dt; v[n, i] = q; sum[i] += q; sq[i] += q * q }
    }
    END {
        if (n == 0) exit 1
        for (i = 2; i <= ncol; i++) {
            mean = sum[i] / n
            var = sq[i] / n - mean * mean; if (var < 0) var = 0
            cv = mean > 0 ? sqrt(var) / mean : 0
            run = 0; longest = 0
            for (k = 1; k <= n; k++) {
                if (v[k, i] < 0.1 * mean) { run += secs[k]; if (run > longest) longest = run }
                else run = 0
            }
            printf "%s %d %s %.0f %.3f %d\n", mode, round, name[i], mean, cv, longest
        }
    }' "$csv"
}

echo "machine:  $(nproc) CPUs, $(uname -sr)"
echo "ravel:    $("$RAVEL_BENCH" --version)"
# shellcheck disable=SC2086,SC2116 # the flags as one line
echo "flags:    $(echo $FLAGS $EXTRA)"
echo "runs:     $ROUNDS x (separate, shared), $DURATION s each, 3 databases under $DB_ROOT"
echo

: >"$work/summary"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for mode in separate shared; do
        shared=0
        [ "$mode" = shared ] && shared=1
        csv=$work/multi-db-$mode.csv
        log=$work/multi-db-$mode-$r.log
        rm -rf -- "$db"
        # shellcheck disable=SC2086 # FLAGS and EXTRA are lists of flags
        if ! env -u TEST_TMPDIR "$RAVEL_BENCH" --db="$db" \
                --benchmarks=fillrandom,stats --num_multi_db=3 --threads=3 \
                --num="$NUM" --duration="$DURATION" --value_size="$VALUE_SIZE" \
                --key_size=16 --seed=1 --report_interval_seconds=1 \
                --report_file="$csv" --use_shared_write_controller="$shared" \
                $FLAGS $EXTRA >"$log" 2>&1; then
            tail -n 30 "$log" >&2
            die "$mode run $r failed"
        fi
        rm -rf -- "$db"
        if [ -n "${KEEP_LOGS:-}" ]; then
            mkdir -p "$KEEP_LOGS"
            cp "$log" "$KEEP_LOGS/"
            cp "$csv" "$KEEP_LOGS/multi-db-$mode-$r.csv"
        fi
        summarize "$mode" "$r" "$csv" >>"$work/summary" ||
            die "$mode run $r: its report $csv has no interval"
        printf 'round %d  %-8s %s\n' "$r" "$mode" \
            "$(awk '$1 == "fillrandom" && $2 == ":"' "$log")"
        # what the write controller did, from each database's ravel.stats
        # (an entry longer than 80 columns goes on in lines indented by
        # two spaces: those are printed with it)
        awk '/^(ravel.stats of|write controller|write stall|stall:)/ { on = 1; print "    " $0; next }
             on && /^  / { print "    " $0; next }
             { on = 0 }' "$log" || true
    done
    r=$((r + 1))
done

echo
printf '%-9s %-6s %5s %12s %8s %22s\n' mode column round "mean ops/s" CV \
    "longest <10% of mean"
sort -k3,3 -k1,1 -s "$work/summary" | awk '{
    printf "%-9s %-6s %5d %12d %8.3f %20d s\n", $1, $3, $2, $4, $5, $6 }'

# Medians over the rounds of the CV and the longest stretch, per mode and
# column, when there are several rounds.
if [ "$ROUNDS" -gt 1 ]; then
    echo
    echo "medians over $ROUNDS rounds:"
    awk '
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
                t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
            }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $1 " " $3; if (!(k in seen)) { seen[k] = 1; keys[++n] = k }
      mean[k] = mean[k] " " $4; cv[k] = cv[k] " " $5; lo[k] = lo[k] " " $6 }
    END { for (i = 1; i <= n; i++) { split(keys[i], p, " ")
        printf "%-9s %-6s %12d %8.3f %20d s\n", p[1], p[2], median(mean[keys[i]]),
               median(cv[keys[i]]), median(lo[keys[i]]) } }' "$work/summary"
fi

echo
for mode in separate shared; do
    title="ravel, 3 databases, write controller: $mode (fillrandom, ops/s per database)"
    "$here/scripts/plot-report.sh" "$work/multi-db-$mode.csv" \
        "$OUT_DIR/multi-db-$mode.png" "$title" >/dev/null
    echo "chart: $OUT_DIR/multi-db-$mode.png"
done
