#!/bin/sh
# bench-kv-compare.sh -- issue 23's table: ravel against LevelDB, RocksDB,
# LMDB and SQLite through their own C APIs, one harness for all
# (bench/kv-bench.c: the methodology is described at its top).
#
#   ROUNDS=5 scripts/bench-kv-compare.sh [kv-bench flags...]
#   e.g. scripts/bench-kv-compare.sh --num=500000 --seconds=2
#
# Each round runs every engine once, in turn (ravel, leveldb, rocksdb,
# lmdb, sqlite, then the next round), each on a fresh database: load,
# compaction, warming scan, then the timed workloads (get, get_into for
# ravel, seek + 10 next, put at 1/4/32 threads, synced put at 32, the long
# scan).  Prints every run's lines, then the table as markdown: the median
# over the rounds of each engine's ops/s, and ravel's ratio against each
# peer as the median of the per-round ratios (each round's engines ran
# minutes apart, not in parallel).
#
# Environment:
#   ROUNDS=5          rounds
#   KV_BENCH          the harness (default build-rel/bench/kv-bench, else
#                     build/bench/kv-bench; KV_READBENCH is read as well)
#   DB_ROOT           where the databases go (default /var/tmp, on this
#                     machine's ext4 root; the file system is printed:
#                     synced puts on tmpfs measure nothing)
#   ENGINES           default "ravel leveldb rocksdb lmdb sqlite"; engines
#                     the harness was built without are skipped, said so
#   WORKLOADS         default get,get_into,seek,put,syncput,scan
#   KEEP_LOG=FILE     keep every run's raw lines
#   TABLE_FROM=FILE   run nothing: print the table from FILE, a KEEP_LOG
#                     (or this script's output) of an earlier run, with
#                     the engines and rounds it holds
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "bench-kv-compare.sh: $*" >&2; exit 1; }

ROUNDS=${ROUNDS:-5}
ENGINES=${ENGINES:-"ravel leveldb rocksdb lmdb sqlite"}
WORKLOADS=${WORKLOADS:-get,get_into,seek,put,syncput,scan}
DB_ROOT=${DB_ROOT:-/var/tmp}
# The table, from the runs' lines in $work/all.
print_table() {
awk -v engines="$run_engines" -v rounds="$ROUNDS" '
function median(list,    a, n, i, j, t) {
    n = split(list, a, " ")
    if (n == 0) return ""
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function fmt(x) {
    if (x == "") return "-"
    if (x >= 10000) return sprintf("%.0fk", x / 1000)
    if (x >= 1000) return sprintf("%.1fk", x / 1000)
    return sprintf("%.0f", x)
}
function us(x) {
    if (x == "") return "-"
    if (x >= 10000) return sprintf("%.1f ms", x / 1000)
    if (x >= 100) return sprintf("%.0f", x)
    if (x >= 10) return sprintf("%.1f", x)
    return sprintf("%.2f", x)
}
function field(name,    i) {
    for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2)
    return ""
}
$2 == "result" {
    r = field("round"); e = field("engine"); w = field("workload"); t = field("threads")
    k = w SUBSEP t
    ops[e, k] = ops[e, k] " " field("ops_per_sec")
    p50[e, k] = p50[e, k] " " field("p50_us")
    p99[e, k] = p99[e, k] " " field("p99_us")
    nx[e, k] = nx[e, k] " " field("next_ns")
    byround[e, k, r] = field("ops_per_sec")
    seen[k] = 1
}
function row(label, w, t, ravel_w,    k, kr, line, ratios, n, i, e, x, rs, rr) {
    k = w SUBSEP t; kr = ravel_w SUBSEP t
    if (!((k in seen) || (kr in seen))) return
    line = "| " label
    ratios = "| " label
    for (i = 1; i <= ne; i++) {
        e = E[i]
        x = median(ops[e, (e == "ravel" ? kr : k)])
        line = line " | " fmt(x)
        if (e == "ravel") continue
        rs = ""
        for (rr = 1; rr <= rounds; rr++)
            if (byround["ravel", kr, rr] != "" && byround[e, k, rr] + 0 > 0)
                rs = rs " " byround["ravel", kr, rr] / byround[e, k, rr]
        ratios = ratios " | " (rs == "" ? "-" : sprintf("%.2fx", median(rs)))
    }
    body = body line " |\n"
    rbody = rbody ratios " |\n"
}
function lat(label, w, t,    k, i, e, line) {
    k = w SUBSEP t
    if (!(k in seen)) return
    line = "| " label
    for (i = 1; i <= ne; i++) {
        e = E[i]
        if (ops[e, k] == "") { line = line " | -"; continue }
        line = line sprintf(" | %s / %s", us(median(p50[e, k])), us(median(p99[e, k])))
        if (median(nx[e, k]) != "") line = line sprintf(" / %.0f ns", median(nx[e, k]))
    }
    lbody = lbody line " |\n"
}
END {
    ne = split(engines, E, " ")
    name["ravel"] = "ravel"; name["leveldb"] = "LevelDB"; name["rocksdb"] = "RocksDB"
    name["lmdb"] = "LMDB"; name["sqlite"] = "SQLite"
    head = "| operation, ops/s (median of " rounds ")"; rhead = "| ravel / peer (median of per-round ratios)"; sep = "|---"; rsep = "|---"
    for (i = 1; i <= ne; i++) {
        head = head " | " name[E[i]]; sep = sep "|---:"
        if (E[i] != "ravel") { rhead = rhead " | vs " name[E[i]]; rsep = rsep "|---:" }
    }
    row("point get, 1 thread", "get", 1, "get")
    row("point get, 4 threads", "get", 4, "get")
    row("point get, 1 thread: ravel_get_into (peers: their get again)", "get", 1, "get_into")
    row("point get, 4 threads: ravel_get_into (peers: their get again)", "get", 4, "get_into")
    row("seek + 10 next, 1 thread", "seek", 1, "seek")
    row("seek + 10 next, 4 threads", "seek", 4, "seek")
    row("put, 1 key per write, 1 thread", "put", 1, "put")
    row("put, 1 key per write, 4 threads", "put", 4, "put")
    row("put, 1 key per write, 32 threads", "put", 32, "put")
    row("synced put, 32 threads", "syncput", 32, "syncput")
    row("long scan (seek + 100 next, 1 KB values), 1 thread", "scan", 1, "scan")
    print head " |"; print sep "|"; printf "%s", body
    print ""
    print rhead " |"; print rsep "|"; printf "%s", rbody
    print ""
    lhead = "| latency, p50 / p99 in us (scans: then ns per next)"
    for (i = 1; i <= ne; i++) lhead = lhead " | " name[E[i]]
    print lhead " |"; print sep "|"
    lat("point get, 1 thread", "get", 1)
    lat("ravel_get_into, 1 thread", "get_into", 1)
    lat("seek + 10 next, 1 thread", "seek", 1)
    lat("put, 32 threads", "put", 32)
    lat("synced put, 32 threads", "syncput", 32)
    lat("long scan, 1 thread", "scan", 1)
    printf "%s", lbody
}' "$work/all"
}

if [ -n "${TABLE_FROM:-}" ]; then
    [ -r "$TABLE_FROM" ] || die "TABLE_FROM=$TABLE_FROM: cannot read it"
    work=$(mktemp -d)
    trap 'rm -rf -- "$work"' EXIT INT TERM
    grep '^round=[0-9]* ' "$TABLE_FROM" >"$work/all" || die "$TABLE_FROM: no round= lines"
    run_engines=""
    for e in ravel leveldb rocksdb lmdb sqlite; do
        grep -q " engine=$e " "$work/all" && run_engines="$run_engines $e"
    done
    ROUNDS=$(sed 's/^round=\([0-9]*\) .*/\1/' "$work/all" | sort -n | tail -1)
    echo "table from $TABLE_FROM: rounds 1 .. $ROUNDS; engines:$run_engines"
    echo
    print_table
    exit 0
fi
if [ -z "${KV_BENCH:-}" ]; then
    KV_BENCH=${KV_READBENCH:-}
    for c in "$here/build-rel/bench/kv-bench" "$here/build/bench/kv-bench"; do
        [ -n "$KV_BENCH" ] && break
        [ -x "$c" ] && KV_BENCH=$c
    done
fi
[ -n "$KV_BENCH" ] && [ -x "$KV_BENCH" ] ||
    die "no kv-bench (build it: ninja -C build-rel bench/kv-bench; or set KV_BENCH)"

built=$("$KV_BENCH" --help | sed -n 's/.*(built in: \(.*\)).*/\1/p')
run_engines=""
for e in $ENGINES; do
    case ",$built," in
    *",$e,"*) run_engines="$run_engines $e" ;;
    *) echo "skipped: $e (kv-bench was built without it: install its -dev package and rebuild)" ;;
    esac
done
[ -n "$run_engines" ] || die "no engine to run"

mkdir -p "$DB_ROOT"
fstype=$(df -T "$DB_ROOT" | awk 'NR == 2 { print $2 }')
work=$(mktemp -d)
db=$DB_ROOT/bench-kv-compare-$$
trap 'rm -rf -- "$work" "$db" "$db-scan"' EXIT INT TERM

version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null | sed 's/-[^-]*$//' || true; }

echo "kv-bench: $KV_BENCH $*"
echo "databases: $DB_ROOT ($fstype); rounds: $ROUNDS; engines:$run_engines"
echo "workloads: $WORKLOADS"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "versions: ravel $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')," \
     "LevelDB $(version libleveldb-dev), RocksDB $(version librocksdb-dev)," \
     "LMDB $(version liblmdb-dev), SQLite $(version libsqlite3-dev)"
[ "$fstype" = tmpfs ] && echo "warning: $DB_ROOT is tmpfs: the synced puts measure nothing there"

r=1
while [ "$r" -le "$ROUNDS" ]; do
    for e in $run_engines; do
        rm -rf -- "$db" "$db-scan"
        "$KV_BENCH" --engine="$e" --db="$db" --workloads="$WORKLOADS" "$@" \
            >"$work/out" 2>&1 || { cat "$work/out" >&2; die "kv-bench --engine=$e failed"; }
        sed "s/^/round=$r /" "$work/out" | tee -a "$work/all"
    done
    r=$((r + 1))
done
rm -rf -- "$db" "$db-scan"
[ -n "${KEEP_LOG:-}" ] && cp "$work/all" "$KEEP_LOG"

echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(date -u '+%H:%M UTC')"
echo
print_table
