#!/bin/sh
# bench-put-scaling.sh -- writes per second against the number of writer
# threads, for ravel and LevelDB through bench/put-scaling (issue 23,
# items 3 and 4).
#
#   ROUNDS=5 scripts/bench-put-scaling.sh                  # unsynced, tmpfs
#   SYNC=1 DB_ROOT=/var/tmp THREADS=32 scripts/bench-put-scaling.sh
#
# For each round, each batch size in BATCHES and each thread count in
# THREADS, runs every engine in ENGINES one after the other (alternating,
# so drift in the machine hits all alike), each on a fresh database under
# DB_ROOT, for SECONDS.  Prints every run, then per configuration the
# median ops/s, p99 and CPU per write of each engine, ravel's median
# ratio to LevelDB over the rounds, and per batch size ravel's median
# ratio of its largest thread count to its smallest.
#
# Environment:
#   ROUNDS     rounds (default 5)
#   THREADS    thread counts (default "1 4 32")
#   BATCHES    keys per write (default "1 8")
#   SYNC       1: synced writes (default 0)
#   SECONDS    per run (default 5)
#   ENGINES    default "ravel leveldb" (leveldb only if put-scaling has it)
#   DB_ROOT    where databases go (default /dev/shm; use a disk for SYNC=1)
#   PUT_SCALING  the binary (default build/bench/put-scaling)
#   RAVEL_OPTIONS  ravel options for every ravel run (--options=...)
set -eu

ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-"1 4 32"}
BATCHES=${BATCHES:-"1 8"}
SYNC=${SYNC:-0}
SECONDS_PER_RUN=${SECONDS:-5}
ENGINES=${ENGINES:-"ravel leveldb"}
DB_ROOT=${DB_ROOT:-/dev/shm}
here=$(cd "$(dirname "$0")/.." && pwd)
PUT_SCALING=${PUT_SCALING:-$here/build/bench/put-scaling}

die() { echo "bench-put-scaling: $*" >&2; exit 1; }
[ -x "$PUT_SCALING" ] || die "no put-scaling at $PUT_SCALING (build it, or set PUT_SCALING)"
[ -d "$DB_ROOT" ] || die "DB_ROOT=$DB_ROOT is not a directory"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-put-scaling.XXXXXX")
db=$DB_ROOT/bench-put-scaling-$$
trap 'rm -rf -- "$work" "$db"' EXIT
trap 'exit 130' INT TERM
results=$work/results # lines: round engine threads batch ops p99 cpu

echo "machine: $(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rounds $ROUNDS, threads $THREADS, batches $BATCHES, sync $SYNC," \
     "${SECONDS_PER_RUN}s per run, databases under $DB_ROOT"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for b in $BATCHES; do
        for t in $THREADS; do
            for e in $ENGINES; do
                rm -rf -- "$db"
                opts=""
                [ "$e" = ravel ] && [ -n "${RAVEL_OPTIONS:-}" ] &&
                    opts="--options=$RAVEL_OPTIONS"
                # shellcheck disable=SC2086 # opts is one word or none
                line=$("$PUT_SCALING" --engine="$e" --db="$db" --threads="$t" \
                    --batch="$b" --sync="$SYNC" --seconds="$SECONDS_PER_RUN" \
                    $opts) || die "$e run failed"
                echo "round $r $line"
                echo "$line" | awk -v r="$r" '{
                    for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                    print r, f["engine"], f["threads"], f["batch"], f["ops/s"],
                          f["p99_us"], f["cpu_us/write"] }' >>"$results"
            done
        done
    done
    r=$((r + 1))
done
rm -rf -- "$db"

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo
echo "medians over $ROUNDS rounds (loaded machine: indicative only):"
for b in $BATCHES; do
    for t in $THREADS; do
        for e in $ENGINES; do
            sel() { awk -v e="$e" -v t="$t" -v b="$b" -v c="$1" \
                '$2 == e && $3 == t && $4 == b { print $c }' "$results"; }
            printf '  batch %-3s threads %-3s %-8s ops/s %9.0f  p99 %8.1f us  cpu %6.2f us/write\n' \
                "$b" "$t" "$e" "$(sel 5 | median)" "$(sel 6 | median)" "$(sel 7 | median)"
        done
        case " $ENGINES " in *" ravel "*) has_ravel=1 ;; *) has_ravel=0 ;; esac
        case " $ENGINES " in
        *" leveldb "*) [ "$has_ravel" = 0 ] ||
            ratio=$(awk -v t="$t" -v b="$b" '$3 == t && $4 == b { ops[$1 " " $2] = $5; rs[$1] = 1 }
                END { for (r in rs) if (ops[r " leveldb"] > 0) print ops[r " ravel"] / ops[r " leveldb"] }' \
                "$results" | median)
            [ "$has_ravel" = 0 ] || printf '  batch %-3s threads %-3s ravel/leveldb %.2fx (median of per-round ratios)\n' "$b" "$t" "$ratio" ;;
        esac
    done
    lo=$(echo "$THREADS" | tr ' ' '\n' | sort -n | head -n 1)
    hi=$(echo "$THREADS" | tr ' ' '\n' | sort -n | tail -n 1)
    if [ "$lo" != "$hi" ]; then
        scale=$(awk -v lo="$lo" -v hi="$hi" -v b="$b" '$2 == "ravel" && $4 == b {
                if ($3 == lo) l[$1] = $5; if ($3 == hi) h[$1] = $5 }
            END { for (r in l) if (l[r] > 0 && r in h) print h[r] / l[r] }' "$results" | median)
        printf '  batch %-3s ravel %s threads / %s thread(s): %.2fx (median of per-round ratios)\n' \
            "$b" "$hi" "$lo" "$scale"
    fi
done
