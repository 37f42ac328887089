#!/bin/sh
# bench-wal-io.sh -- the WAL write paths side by side on a real disk:
# ravel-bench once per WAL mode (--wal_io=direct, sync, uring) and RocksDB's
# db_bench, on four write workloads:
#
#   sync1     fillrandom, 1 thread, --sync=1
#   sync32    the seed workload (fillrandom, 32 threads, --batch_size=8,
#             --num=10000000) with --sync=1
#   nosync32  the same without sync
#   fillseq   fillseq, 1 thread, no sync
#
# Each round runs every workload once on every engine, the engines one after
# the other (their order turned by one each round) so that drift in the
# machine hits all alike; every run on a fresh database under DB_ROOT.  Both
# engines get --histogram=1 (p50/p99 micros per write: per put, or per batch
# with --batch_size); ravel-bench also --statistics=1, whose ravel.stats gives
# the WAL's fdatasyncs ("fsync: N issued") and the sync writers they
# acknowledged (writers per sync = acknowledged / issued; a writer is one
# write call, a whole batch with --batch_size).  db_bench gets the flags that
# keep RocksDB's background work out of a write benchmark, as in
# scripts/bench-compare.sh.  A WAL mode this ravel-bench refuses (e.g.
# --wal_io=direct before it is built) is skipped with a note.
#
# Prints a line per run, then a Markdown table of medians over the rounds:
# ops/s, the per-round ratios against db_bench and against --wal_io=sync,
# p50, p99, fdatasyncs per second, writers per sync.
#
#   RAVEL_BENCH=build-rel/bench/ravel-bench scripts/bench-wal-io.sh
#   DB_ROOT=$(scripts/mkxfs.sh) RAVEL_BENCH=... scripts/bench-wal-io.sh
#
# Arguments, if any, are further flags for both engines (--value_size=400).
#
# Environment:
#   ROUNDS           rounds (default 5)
#   DB_ROOT          where the databases go (default /var/tmp: on a disk; not
#                    tmpfs, where no write reaches one)
#   MODES            ravel's WAL modes (default "direct sync uring")
#   WORKLOADS        which of the four, in this order (default all)
#   RAVEL_BENCH      ravel-bench (default build/bench/ravel-bench; use a
#                    release build: meson setup build-rel --buildtype=release)
#   DB_BENCH         db_bench (default /usr/bin/db_bench; DB_BENCH=none: ravel only)
#   RAVEL_EXTRA      flags for ravel-bench alone
#   DB_BENCH_EXTRA   flags for db_bench alone
#   KEEP_LOGS        if set, keep every run's output in this directory
# The counts, chosen so that a --wal_io=sync run takes 3-4 s on the 2-core
# test VM's ext4 (db_bench's up to twice that):
#   SYNC1_WRITES     puts in sync1 (default 25000)
#   SYNC32_WRITES    puts per thread in sync32 (default 30000, the seed's)
#   NOSYNC32_WRITES  puts per thread in nosync32 (default 60000)
#   FILLSEQ_NUM      puts in fillseq (default 3000000)
#   COUNT_<workload>_<engine>  the count for one pair alone, e.g.
#                    COUNT_fillseq_uring=200000 (engine: a mode or db_bench)
#   CAP_S            seconds a run may take (default 15; 0: no cap).  Before
#                    the rounds each pair runs once with a twentieth of its
#                    count; a pair that would take longer than CAP_S gets a
#                    count that fits in it (io_uring on ext4 hands every
#                    buffered write to an io-wq worker, so uring's fillseq
#                    there runs at ~14 K puts/s: 3 M puts would take 4 min).
#                    Its ops/s stay comparable; the rows say which counts
#                    were cut.
set -eu

ROUNDS=${ROUNDS:-5}
DB_ROOT=${DB_ROOT:-/var/tmp}
MODES=${MODES:-direct sync uring}
WORKLOADS=${WORKLOADS:-sync1 sync32 nosync32 fillseq}
DB_BENCH=${DB_BENCH:-/usr/bin/db_bench}
SYNC1_WRITES=${SYNC1_WRITES:-25000}
SYNC32_WRITES=${SYNC32_WRITES:-30000}
NOSYNC32_WRITES=${NOSYNC32_WRITES:-60000}
FILLSEQ_NUM=${FILLSEQ_NUM:-3000000}
CAP_S=${CAP_S:-15}
here=$(cd "$(dirname "$0")/.." && pwd)
RAVEL_BENCH=${RAVEL_BENCH:-$here/build/bench/ravel-bench}

die() { echo "bench-wal-io: $*" >&2; exit 1; }

positive() {
    case $2 in ''|*[!0-9]*|0) die "$1=$2: must be a positive integer" ;; esac
}
positive ROUNDS "$ROUNDS"
positive SYNC1_WRITES "$SYNC1_WRITES"
positive SYNC32_WRITES "$SYNC32_WRITES"
positive NOSYNC32_WRITES "$NOSYNC32_WRITES"
positive FILLSEQ_NUM "$FILLSEQ_NUM"
case $CAP_S in ''|*[!0-9]*) die "CAP_S=$CAP_S: must be a number of seconds (0: no cap)" ;; esac
[ -x "$RAVEL_BENCH" ] || die "no ravel-bench at $RAVEL_BENCH (build it, or set RAVEL_BENCH)"
[ -d "$DB_ROOT" ] || die "DB_ROOT=$DB_ROOT is not a directory"
if [ "$DB_BENCH" != none ]; then
    command -v "$DB_BENCH" >/dev/null 2>&1 || die "no db_bench at $DB_BENCH; set DB_BENCH (or DB_BENCH=none)"
fi
for arg in "$@"; do
    case $arg in
    --db=*|-db=*) die "--db is chosen by this script (a fresh directory per run under DB_ROOT)" ;;
    --wal_io=*|-wal_io=*) die "--wal_io is chosen by this script (MODES)" ;;
    -*) ;;
    *) die "unexpected argument '$arg' (flags are --name=value)" ;;
    esac
done
extra_args=$* # flags are --name=value words

# workload_flags WORKLOAD COUNT: the flags of a workload, for both engines.
workload_flags() {
    case $1 in
    sync1) echo "--benchmarks=fillrandom --threads=1 --num=10000000 --writes=$2 --sync=1" ;;
    sync32) echo "--benchmarks=fillrandom --threads=32 --batch_size=8 --num=10000000 --writes=$2 --sync=1" ;;
    nosync32) echo "--benchmarks=fillrandom --threads=32 --batch_size=8 --num=10000000 --writes=$2 --sync=0" ;;
    fillseq) echo "--benchmarks=fillseq --threads=1 --num=$2 --sync=0" ;;
    esac
}
default_count() {
    case $1 in
    sync1) echo "$SYNC1_WRITES" ;;
    sync32) echo "$SYNC32_WRITES" ;;
    nosync32) echo "$NOSYNC32_WRITES" ;;
    fillseq) echo "$FILLSEQ_NUM" ;;
    *) die "unknown workload '$1' in WORKLOADS (sync1 sync32 nosync32 fillseq)" ;;
    esac
}
for w in $WORKLOADS; do default_count "$w" >/dev/null; done

rocksdb_flags="-enable_pipelined_write=false -disable_auto_compactions=true \
-level0_file_num_compaction_trigger=99999 -level0_slowdown_writes_trigger=99999 \
-level0_stop_writes_trigger=99999 -max_write_buffer_number=16"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-wal-io.XXXXXX")
dbdir=""
cleanup() {
    [ -n "$dbdir" ] && rm -rf -- "$dbdir"
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
results=$work/results # workload round engine ops secs p50 p99 fsyncs acks io count
cut_notes=""

# Which WAL modes this ravel-bench takes here: one put with each.
engines=""
notes=""
for mode in $MODES; do
    dbdir=$DB_ROOT/bench-wal-io-$$-probe
    rm -rf -- "$dbdir"
    if err=$(env -u TEST_TMPDIR "$RAVEL_BENCH" --benchmarks=fillseq --num=1 \
            --wal_io="$mode" --db="$dbdir" 2>&1 >/dev/null); then
        engines="$engines $mode"
    else
        notes="${notes}note: --wal_io=$mode skipped, ravel-bench refused it: $(echo "$err" | tail -n 1)
"
    fi
    rm -rf -- "$dbdir"
    dbdir=""
done
[ "$DB_BENCH" != none ] && engines="$engines db_bench"
engines=${engines# }
[ -n "$engines" ] || { printf '%s' "$notes" >&2; die "nothing to run: every mode in MODES was refused"; }

# bench ENGINE WORKLOAD COUNT LOG [FLAGS...]: one run on a fresh database,
# its output in LOG.
bench() {
    engine=$1 workload=$2 count=$3 log=$4
    shift 4
    flags=$(workload_flags "$workload" "$count")
    dbdir=$DB_ROOT/bench-wal-io-$$-$engine
    rm -rf -- "$dbdir"
    # shellcheck disable=SC2086 # flags are lists of words
    if [ "$engine" = db_bench ]; then
        set -- "$DB_BENCH" $flags --histogram=1 $rocksdb_flags ${DB_BENCH_EXTRA:-} "$@"
    else
        set -- "$RAVEL_BENCH" $flags --histogram=1 --statistics=1 \
            --wal_io="$engine" ${RAVEL_EXTRA:-} "$@"
    fi
    # stdout only: db_bench's progress lines go to stderr.
    if ! env -u TEST_TMPDIR "$@" --db="$dbdir" >"$log" 2>"$log.err"; then
        cat "$log" "$log.err" >&2
        die "$engine $workload failed: $*"
    fi
    rm -rf -- "$dbdir"
    dbdir=""
    if [ -n "${KEEP_LOGS:-}" ]; then
        mkdir -p "$KEEP_LOGS" && cp "$log" "$log.err" "$KEEP_LOGS/"
    fi
}

# result LOG: "ops secs p50 p99 fsyncs acks io" from a run's output: the
# result line "name : x micros/op N ops/sec S seconds ...", the first
# "Percentiles: P50: a P75: b P99: c ..." and, from ravel.stats,
# "wal: io=X..." and "fsync: N issued, M sync writers acknowledged, ...";
# with wal_io=direct the RWF_DSYNC writes ("wal direct: ... N DSYNC
# writes") count as syncs too.  An entry of ravel.stats longer than 80
# columns goes on in lines indented by two spaces: joined first.
result() {
    awk 'NR > 1 && /^  / { line = line " " substr($0, 3); next }
         { if (NR > 1) print line; line = $0 }
         END { print line }' "$1" | awk '
        $2 == ":" && $6 == "ops/sec" && ops == "" { ops = $5; secs = $7 }
        $1 == "Percentiles:" && p50 == "" {
            for (i = 2; i < NF; i++) {
                if ($i == "P50:") p50 = $(i + 1)
                if ($i == "P99:") p99 = $(i + 1)
            }
        }
        /^wal: io=/ { io = $2; sub(/^io=/, "", io); sub(/,$/, "", io) }
        /^fsync: / && $3 == "issued," { fsyncs = $2; acks = $4 }
        /^wal direct: / {
            for (i = 3; i < NF; i++) if ($(i + 1) == "DSYNC") dsync = $i
        }
        END {
            if (dsync != "") fsyncs += dsync # direct: a DSYNC write is a sync
            if (ops == "") exit 1
            print ops, secs, (p50 == "" ? "-" : p50), (p99 == "" ? "-" : p99),
                  (fsyncs == "" ? "-" : fsyncs), (acks == "" ? "-" : acks),
                  (io == "" ? "-" : io)
        }' || { cat "$1" >&2; die "$1: no result line"; }
}

# The count of each pair (workload, engine) is kept in count_<w>_<e>.
count_of() { eval "echo \$count_$1_$2"; }

# calibrate WORKLOAD ENGINE: the pair's count: COUNT_<w>_<e> if set, else
# the workload's, cut to fit CAP_S by a run with a twentieth of it.
calibrate() {
    full=$(default_count "$1")
    given=$(eval "echo \${COUNT_$1_$2:-}")
    if [ -n "$given" ]; then
        positive "COUNT_$1_$2" "$given"
        eval "count_$1_$2=$given"
        [ "$given" = "$full" ] || cut_notes="$cut_notes$1 $2: $given puts instead of $full (COUNT_$1_$2)
"
        return 0
    fi
    eval "count_$1_$2=$full"
    [ "$CAP_S" -gt 0 ] || return 0
    probe=$((full / 20))
    [ "$probe" -gt 0 ] || probe=1
    bench "$2" "$1" "$probe" "$work/calibrate.log"
    secs=$(result "$work/calibrate.log" | awk '{ print $2 }')
    fit=$(awk -v s="$secs" -v p="$probe" -v f="$full" -v cap="$CAP_S" 'BEGIN {
        if (s * f / p <= cap) { print f; exit }
        n = int(p * cap / s); m = 1
        while (n >= 100) { n = int(n / 10); m *= 10 }   # two digits
        print (n < 1 ? 1 : n) * m }')
    if [ "$fit" != "$full" ]; then
        eval "count_$1_$2=$fit"
        msg="$1 $2: $fit puts instead of $full (with $probe it took $secs s; CAP_S=$CAP_S)"
        echo "cut: $msg"
        cut_notes="$cut_notes$msg
"
    fi
}

# run WORKLOAD ROUND ENGINE: one measured run, its numbers kept and shown.
run() {
    workload=$1 round=$2 engine=$3
    shift 3
    count=$(count_of "$workload" "$engine")
    log=$work/$workload-$round-$engine.log
    bench "$engine" "$workload" "$count" "$log" "$@"
    echo "$workload $round $engine $(result "$log") $count" >>"$results"
    tail -n 1 "$results" | awk -v full="$(default_count "$workload")" '{
        fs = "-"; wps = "-"
        if ($8 != "-" && $5 > 0) fs = sprintf("%.0f", $8 / $5)
        if ($8 != "-" && $8 > 0) wps = sprintf("%.2f", $9 / $8)
        printf "round %-2d %-9s %-9s %10d ops/s  p50 %9s  p99 %9s  fsyncs/s %7s  writers/sync %6s%s%s\n",
            $2, $1, $3, $4, $6, $7, fs, wps, ($10 == "-" ? "" : "  (wal io=" $10 ")"),
            ($11 == full ? "" : "  [" $11 " puts]")
    }'
}

fs_of_root=$(findmnt -n -o FSTYPE,SOURCE -T "$DB_ROOT" 2>/dev/null || echo unknown)
echo "machine:   $(nproc) CPUs, $(uname -sr)"
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$model" ] && echo "cpu:       $model"
echo "ravel:     $("$RAVEL_BENCH" --version) ($RAVEL_BENCH)"
[ "$DB_BENCH" != none ] && echo "rocksdb:   $("$DB_BENCH" --version 2>&1 | head -n 1) ($DB_BENCH)"
echo "db root:   $DB_ROOT ($fs_of_root)"
echo "rounds:    $ROUNDS; engines: $engines; workloads: $WORKLOADS"
for w in $WORKLOADS; do printf '  %-9s %s\n' "$w" "$(workload_flags "$w" "$(default_count "$w")")"; done
echo "both+:     --histogram=1 $extra_args"
echo "ravel+:    --statistics=1 --wal_io=MODE ${RAVEL_EXTRA:-}"
[ "$DB_BENCH" != none ] && echo "db_bench+: $rocksdb_flags ${DB_BENCH_EXTRA:-}"
case $fs_of_root in
tmpfs*|ramfs*) echo "warning: $DB_ROOT is on ${fs_of_root%% *}: no WAL write reaches a disk" ;;
esac
printf '%s' "$notes"
echo

fulls=""
for w in $WORKLOADS; do
    for e in $engines; do calibrate "$w" "$e"; done
    fulls="$fulls $w=$(default_count "$w")"
done
[ -n "$cut_notes" ] && echo

: >"$results"
i=1
while [ "$i" -le "$ROUNDS" ]; do
    # The engines' order turns by one each round.
    # shellcheck disable=SC2086 # engines is a list of words
    set -- $engines
    k=1
    while [ "$k" -lt "$i" ] && [ $# -gt 1 ]; do
        first=$1
        shift
        set -- "$@" "$first"
        k=$((k + 1))
    done
    order=$*
    for w in $WORKLOADS; do
        for e in $order; do
            # shellcheck disable=SC2086 # the caller's flags, as words
            run "$w" "$i" "$e" $extra_args
        done
    done
    i=$((i + 1))
done

# Medians over the rounds per workload and engine; the ratios are medians of
# the per-round ratios (rounds where both ran).
echo
printf '%s' "$notes"
awk -v nrounds="$ROUNDS" -v engines="$engines" -v workloads="$WORKLOADS" \
    -v fulls="$fulls" '
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    if (n == 0) return ""
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function ratios(w, e, base,   r, list) {
    list = ""
    if (e == base) return ""
    for (r = 1; r <= nrounds; r++)
        if (((w, r, e) in ops) && ((w, r, base) in ops) && ops[w, r, base] > 0)
            list = list " " ops[w, r, e] / ops[w, r, base]
    return list
}
function show(x, fmt) { return x == "" ? "-" : sprintf(fmt, x) }
{
    ops[$1, $2, $3] = $4
    k = $1 SUBSEP $3
    all_ops[k] = all_ops[k] " " $4
    if ($6 != "-") p50[k] = p50[k] " " $6
    if ($7 != "-") p99[k] = p99[k] " " $7
    if ($8 != "-" && $5 > 0) fps[k] = fps[k] " " $8 / $5
    if ($8 != "-" && $8 > 0) wps[k] = wps[k] " " $9 / $8
    if ($11 != full[$1]) cut[k] = 1
}
BEGIN {
    n = split(fulls, f, " ")
    for (i = 1; i <= n; i++) { split(f[i], kv, "="); full[kv[1]] = kv[2] }
}
END {
    ne = split(engines, en, " ")
    nw = split(workloads, wl, " ")
    print "| workload | mode | ops/s | ratio vs db_bench | ratio vs sync | p50 us | p99 us | fsyncs/s | writers/sync |"
    print "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    for (a = 1; a <= nw; a++)
        for (b = 1; b <= ne; b++) {
            w = wl[a]; e = en[b]; k = w SUBSEP e
            if (!(k in all_ops)) continue
            printf "| %s | %s%s | %s | %s | %s | %s | %s | %s | %s |\n", w, e,
                (k in cut ? " *" : ""),
                show(median(all_ops[k]), "%.0f"),
                show(median(ratios(w, e, "db_bench")), "%.2fx"),
                show(median(ratios(w, e, "sync")), "%.2fx"),
                show(median(p50[k]), "%.1f"), show(median(p99[k]), "%.1f"),
                show(median(fps[k]), "%.0f"), show(median(wps[k]), "%.2f")
        }
    printf "\n%d round(s); medians over the rounds; ratios are medians of the per-round ratios.\n", nrounds
}' "$results"
if [ -n "$cut_notes" ]; then
    echo "* a count other than the workload's (ops/s still comparable):"
    printf '%s' "$cut_notes" | sed 's/^/  /'
fi
exit 0
