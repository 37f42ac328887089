#!/bin/sh
# bench-read-compare.sh -- the read comparisons of the sorted-files issue,
# ravel-bench against RocksDB's db_bench on the same flags (through
# scripts/bench-compare.sh: alternating runs, medians of the per-round
# ratios, each engine's median peak RSS), and against LevelDB through
# kv-bench where it was built with LevelDB.
#
#   scripts/bench-read-compare.sh [CASE ...]
#
# Cases (all by default, in this order):
#   mem     1M keys all in one memtable (write_buffer_size 512M):
#           fillrandom, readrandom, seekrandom --seek_nexts=10, 1 thread
#   lsm1    fillrandom of 5M keys, then readrandom and seekrandom in the same
#           process, 1 thread, --disable_auto_compactions for both; also
#           times a reopen of the 5M-key database (OPEN_TIME)
#   lsm4    the same with 4 threads (--writes and --reads divided by 4, so
#           as many keys are written and read in all)
#   files1  1M keys, flushed (flush), then readrandom from the table files,
#           1 thread
#   files4  the same with 4 threads
#   leveldb kv-bench: 1M keys in files (both compacted whole), point gets
#           (ravel_get and leveldb_get, both allocating) on 1 and 4 threads
#           for KV_SECONDS each, ravel then LevelDB, ROUNDS times
#           (scripts/bench-kv-compare.sh has the full five-engine table)
#
# Flags both engines get: 16-byte keys, 100-byte values, no compression,
# 10 bloom bits per key, a 64M block cache, 4K blocks, 2 write buffers
# (db_bench's defaults differ: snappy, no bloom filter, 8M cache).
#
# Environment: ROUNDS (default 3), DB_ROOT (default /dev/shm),
# RAVEL_BENCH, DB_BENCH and KEEP_LOGS as for bench-compare.sh; KV_BENCH
# (default build/bench/kv-bench; KV_READBENCH, its old name, is read too),
# KV_SECONDS (default 5); NUM_LSM (default 5000000), NUM_MEM
# (default 1000000), READS (operations per case in all, default 1000000).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
NUM_LSM=${NUM_LSM:-5000000}
NUM_MEM=${NUM_MEM:-1000000}
READS=${READS:-1000000}
KV_BENCH=${KV_BENCH:-${KV_READBENCH:-$here/build/bench/kv-bench}}
KV_SECONDS=${KV_SECONDS:-5}
DB_ROOT=${DB_ROOT:-/dev/shm}
export ROUNDS DB_ROOT

die() { echo "bench-read-compare: $*" >&2; exit 1; }

common="--key_size=16 --value_size=100 --compression_type=none --bloom_bits=10
        --cache_size=67108864 --block_size=4096 --max_write_buffer_number=2
        --seed=1"

compare() {
    title=$1
    shift
    echo "=== $title"
    # shellcheck disable=SC2086 # common is a list of flags
    "$here/scripts/bench-compare.sh" $common "$@"
    echo
}

# lsm THREADS: fill NUM_LSM keys, then read, on THREADS threads.
lsm() {
    t=$1
    OPEN_TIME=1 compare "fillrandom $NUM_LSM keys, then reads, $t thread(s)" \
        --num="$NUM_LSM" --threads="$t" --writes=$((NUM_LSM / t)) \
        --reads=$((READS / t)) --disable_auto_compactions=true \
        --benchmarks=fillrandom,readrandom,seekrandom
}

# files THREADS: NUM_MEM keys flushed to table files, then read.
files() {
    t=$1
    compare "$NUM_MEM keys in table files (flush), readrandom, $t thread(s)" \
        --num="$NUM_MEM" --threads="$t" --writes=$((NUM_MEM / t)) \
        --reads=$((READS / t)) --disable_auto_compactions=true \
        --benchmarks=fillrandom,flush,readrandom
}

leveldb() {
    [ -x "$KV_BENCH" ] || { echo "=== leveldb: no kv-bench at $KV_BENCH, skipped"; return 0; }
    echo "=== $NUM_MEM keys in files, point gets: ravel_get and leveldb_get (both compacted whole, 64M caches), kv-bench"
    db=$DB_ROOT/bench-read-compare-$$
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        for engine in ravel leveldb; do
            rm -rf -- "$db"
            if ! out=$("$KV_BENCH" --engine=$engine --db="$db" \
                    --num="$NUM_MEM" --cache_size=67108864 --workloads=get \
                    --read_threads=1,4 --seconds="$KV_SECONDS" 2>&1); then
                case $out in
                *"not built"*)
                    echo "kv-bench has no $engine: $out"; rm -rf -- "$db"; return 0 ;;
                esac
                echo "$out" >&2
                die "kv-bench --engine=$engine failed"
            fi
            echo "$out" | sed -n "s/^result /round $r  /p"
        done
        r=$((r + 1))
    done
    rm -rf -- "$db"
    echo
}

cases=${*:-mem lsm1 lsm4 files1 files4 leveldb}
for c in $cases; do
    case $c in
    mem)
        compare "$NUM_MEM keys in one memtable, 1 thread" \
            --num="$NUM_MEM" --reads="$READS" --seek_nexts=10 \
            --write_buffer_size=536870912 \
            --benchmarks=fillrandom,readrandom,seekrandom ;;
    lsm1) lsm 1 ;;
    lsm4) lsm 4 ;;
    files1) files 1 ;;
    files4) files 4 ;;
    leveldb) leveldb ;;
    *) die "unknown case '$c' (mem lsm1 lsm4 files1 files4 leveldb)" ;;
    esac
done
