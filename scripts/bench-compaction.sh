#!/bin/sh
# bench-compaction.sh -- leveled compaction, ravel against RocksDB: the
# comparison of the compaction issue, ravel-bench and RocksDB's db_bench
# with the same flags, alternating engine by engine, ROUNDS rounds, medians.
#
#   ROUNDS=3 NUM=20000000 scripts/bench-compaction.sh
#
# Each round, each engine (ravel first), on a fresh directory under DB_ROOT:
#   fill  --benchmarks=fillrandom,waitforcompaction,stats: NUM random keys
#         (16-byte keys, 100-byte values, FILL_THREADS threads writing
#         NUM / FILL_THREADS each) with compactions on; the throughput is the
#         fillrandom line's; the write amplification is the bytes flushes and
#         compactions wrote until no compaction was left (waitforcompaction),
#         over the bytes put (keys and values): ravel prints it on its
#         waitforcompaction line, RocksDB's is its "Cumulative compaction:
#         X GB write" (flushes included, in GiB with two decimals: coarse
#         for a small NUM) over the same bytes put;
#   reads on that database, each in a new process (--use_existing_db):
#         readrandom with 1 and 4 threads, seekrandom (--seek_nexts=10) with
#         1 and 4 threads, READS operations in all per run.
# Then, where bench/kv-bench was built with LevelDB (libleveldb-dev), the
# LevelDB point: 1M keys loaded and compacted by each engine (ravel with
# ravel_compact_range, LevelDB with leveldb_compact_range), a block cache
# holding all of it (256M), point gets with one thread for KV_SECONDS
# (ravel_get against leveldb_get, both allocating the value), ROUNDS runs
# each, against the 548k gets/s LevelDB's own benchmark page reports.
#
# Both engines get the same flags, set explicitly (their defaults differ):
# no compression, 10 bloom bits, a 64M block cache, 4K blocks, 64M write
# buffers (2), 64M target files, a 256M level 1, multiplier 10, 7 levels,
# level-0 triggers 4/20/36, 2 background jobs, delayed_write_rate 16M, the
# pending-compaction-bytes limits 64G/256G.  db_bench gets nothing else:
# compactions and stalls run as they do for any user.
#
# Environment: ROUNDS (3), NUM (20000000), FILL_THREADS (1), READS
# (1000000), DB_ROOT (/dev/shm; /work/benchdb for ext4), RAVEL_BENCH,
# DB_BENCH, KV_BENCH (build/bench/kv-bench, or KV_READBENCH, its old
# name; LEVELDB=0 skips it), KV_SECONDS (5),
# LEVELDB_NUM (1000000), KEEP_LOGS (a directory to keep every run's
# output in), EXTRA (more flags for both engines).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
NUM=${NUM:-20000000}
FILL_THREADS=${FILL_THREADS:-1}
READS=${READS:-1000000}
DB_ROOT=${DB_ROOT:-/dev/shm}
RAVEL_BENCH=${RAVEL_BENCH:-$here/build/bench/ravel-bench}
DB_BENCH=${DB_BENCH:-db_bench}
KV_BENCH=${KV_BENCH:-${KV_READBENCH:-$here/build/bench/kv-bench}}
KV_SECONDS=${KV_SECONDS:-5}
LEVELDB=${LEVELDB:-1}
LEVELDB_NUM=${LEVELDB_NUM:-1000000}
EXTRA=${EXTRA:-}

die() { echo "bench-compaction: $*" >&2; exit 1; }

for v in ROUNDS NUM FILL_THREADS READS LEVELDB_NUM; do
    eval "x=\${$v}"
    # shellcheck disable=SC2154 # x is set by the eval
    case $x in ''|*[!0-9]*|0) die "$v=$x: must be a positive integer" ;; esac
done
[ -x "$RAVEL_BENCH" ] || die "no ravel-bench at $RAVEL_BENCH (build it, or set RAVEL_BENCH)"
command -v "$DB_BENCH" >/dev/null 2>&1 || die "no db_bench ($DB_BENCH); apt-get install rocksdb-tools, or set DB_BENCH"
[ -d "$DB_ROOT" ] || die "DB_ROOT=$DB_ROOT is not a directory"

KEY=16
VALUE=100
common="--key_size=$KEY --value_size=$VALUE --compression_type=none
  --bloom_bits=10 --cache_size=67108864 --block_size=4096
  --write_buffer_size=67108864 --max_write_buffer_number=2
  --target_file_size_base=67108864 --max_bytes_for_level_base=268435456
  --max_bytes_for_level_multiplier=10 --num_levels=7
  --level0_file_num_compaction_trigger=4 --level0_slowdown_writes_trigger=20
  --level0_stop_writes_trigger=36 --max_background_jobs=2
  --delayed_write_rate=16777216
  --soft_pending_compaction_bytes_limit=68719476736
  --hard_pending_compaction_bytes_limit=274877906944
  --num=$NUM $EXTRA"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compaction.XXXXXX")
db=""
cleanup() {
    [ -n "$db" ] && rm -rf -- "$db"
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

results=$work/results # lines: engine round label value

# run ENGINE ROUND TAG FLAGS...: one process on $db; its output in $log.
run() {
    engine=$1 round=$2 tag=$3
    shift 3
    bin=$RAVEL_BENCH
    [ "$engine" = rocksdb ] && bin=$DB_BENCH
    log=$work/$engine-$round-$tag.log
    # shellcheck disable=SC2086 # common is a list of flags
    if ! env -u TEST_TMPDIR "$bin" --db="$db" $common "$@" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        die "$engine round $round ($tag) failed: $bin $*"
    fi
    if [ -n "${KEEP_LOGS:-}" ]; then
        mkdir -p "$KEEP_LOGS" && cp "$log" "$KEEP_LOGS/"
    fi
}

# ops LOG BENCHMARK: the ops/sec of BENCHMARK's result line.
ops() {
    awk -v b="$2" '$1 == b && $2 == ":" && $6 == "ops/sec" { print $5; n++ }
        END { if (!n) exit 1 }' "$1" ||
        { tail -n 30 "$1" >&2; die "no $2 result in $1"; }
}

# ops_count LOG BENCHMARK: the operations its result line counts.
ops_count() {
    awk -v b="$2" '$1 == b && $2 == ":" && $6 == "ops/sec" {
        for (i = 7; i <= NF; i++) if ($i ~ /^operations;?$/) print $(i - 1) }' "$1"
}

# The write amplification of a fill, over the same base for both engines
# (the key and value bytes put): the table bytes of ravel's
# waitforcompaction line (whose own ratio divides by the bytes users wrote
# as the engine counts them, batch headers, tags and lengths included), or
# RocksDB's cumulative compaction bytes (GiB).
wamp() {
    engine=$1 log=$2
    if [ "$engine" = ravel ]; then
        put=$(ops_count "$log" fillrandom)
        awk -v put="$put" -v kv=$((KEY + VALUE)) '$1 == "waitforcompaction" {
                for (i = 1; i < NF; i++) if ($i == "amplification") { e = $(i + 2); sub(/^\(/, "", e); n++ } }
             END { if (!n || put == 0) print "-"
                   else printf "%.3f\n", e / (put * kv) }' "$log"
    else
        put=$(ops_count "$log" fillrandom)
        awk -v put="$put" -v kv=$((KEY + VALUE)) '
            /^Cumulative compaction:/ { gb = $3 }
            END { if (gb == "" || put == 0) print "-"
                  else printf "%.3f\n", gb * 1073741824 / (put * kv) }' "$log"
    fi
}

echo "machine:  $(nproc) CPUs, $(uname -sr)"
echo "ravel:    $("$RAVEL_BENCH" --version)"
echo "rocksdb:  $("$DB_BENCH" --version 2>&1 | head -n 1)"
# shellcheck disable=SC2086,SC2116 # the flags as one line
echo "flags:    $(echo $common)"
echo "rounds:   $ROUNDS, fill threads $FILL_THREADS, $READS reads per run, databases under $DB_ROOT"
echo

: >"$results"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for engine in ravel rocksdb; do
        db=$DB_ROOT/bench-compaction-$$-$engine
        rm -rf -- "$db"
        run "$engine" "$r" fill --benchmarks=fillrandom,waitforcompaction,stats \
            --threads="$FILL_THREADS" --writes=$((NUM / FILL_THREADS)) --seed=1
        fill=$(ops "$log" fillrandom)
        wa=$(wamp "$engine" "$log")
        echo "$engine $r fillrandom $fill" >>"$results"
        echo "$engine $r write-amp $wa" >>"$results"
        printf 'round %d  %-8s %-16s %10s ops/sec, write amplification %s\n' \
            "$r" "$engine" fillrandom "$fill" "$wa"
        for bench in readrandom seekrandom; do
            for t in 1 4; do
                run "$engine" "$r" "$bench-t$t" --use_existing_db=1 \
                    --benchmarks="$bench" --threads="$t" \
                    --reads=$((READS / t)) --seek_nexts=10 --seed=2
                v=$(ops "$log" "$bench")
                echo "$engine $r $bench-t$t $v" >>"$results"
                printf 'round %d  %-8s %-16s %10s ops/sec\n' "$r" "$engine" \
                    "$bench-t$t" "$v"
            done
        done
        rm -rf -- "$db"
        db=""
    done
    r=$((r + 1))
done

# Per label: each engine's median and the median of the per-round ratios.
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
    if (!($3 in seen)) { seen[$3] = 1; names[++n] = $3 }
    v[$1, $2, $3] = $4
}
END {
    printf "%-16s %14s %14s %14s  %s\n", "benchmark", "ravel", "rocksdb",
           "ravel/rocksdb", "(each round)"
    for (k = 1; k <= n; k++) {
        l = names[k]; rv = ""; rk = ""; ratio = ""; each = ""
        for (r = 1; r <= nrounds; r++) {
            a = v["ravel", r, l]; b = v["rocksdb", r, l]
            if (a == "-" || b == "-" || a == "" || b == "") continue
            rv = rv " " a; rk = rk " " b
            if (b > 0) { ratio = ratio " " a / b; each = each sprintf(" %.2f", a / b) }
        }
        if (rv == "") { printf "%-16s %14s %14s %14s\n", l, "-", "-", "-"; continue }
        fmt = l == "write-amp" ? "%-16s %14.3f %14.3f" : "%-16s %14d %14d"
        printf fmt, l, median(rv), median(rk)
        if (ratio == "") printf " %14s\n", "-"
        else printf " %13.2fx  (%s)\n", median(ratio), substr(each, 2)
    }
    print "(ops/sec, except write-amp: bytes written by flushes and compactions / bytes put; lower is better)"
}' "$results"

# The LevelDB point, through one harness for both engines.
[ "$LEVELDB" = 0 ] && exit 0
if [ ! -x "$KV_BENCH" ]; then
    echo; echo "leveldb: no kv-bench at $KV_BENCH, skipped"; exit 0
fi
echo
echo "point get, 1 thread, $LEVELDB_NUM keys loaded and compacted, 256M cache (kv-bench: ravel_get, leveldb_get):"
: >"$work/kv"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for engine in ravel leveldb; do
        db=$DB_ROOT/bench-compaction-$$-kv-$engine
        rm -rf -- "$db"
        if ! out=$("$KV_BENCH" --engine=$engine --db="$db" \
                --num="$LEVELDB_NUM" --seconds="$KV_SECONDS" \
                --cache_size=268435456 --read_threads=1 --workloads=get 2>&1); then
            case $out in
            *"not built"*) echo "kv-bench has no $engine: $out"; rm -rf -- "$db"; exit 0 ;;
            esac
            echo "$out" >&2
            die "kv-bench --engine=$engine failed"
        fi
        rm -rf -- "$db"
        db=""
        v=$(echo "$out" | sed -n 's/^result .* ops_per_sec=\([0-9]*\) .*/\1/p')
        echo "$engine $v" >>"$work/kv"
        printf 'round %d  %-8s get %10s ops/sec\n' "$r" "$engine" "$v"
    done
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
{ v[$1] = v[$1] " " $2 }
END {
    rv = median(v["ravel"]); lv = median(v["leveldb"])
    x = lv > 0 ? rv / lv : 0
    printf "median: ravel %d, leveldb %d ops/sec: ravel/leveldb %.2fx; ravel/548k %.2fx\n",
           rv, lv, x, rv / 548000
}' "$work/kv"
