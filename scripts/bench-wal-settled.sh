#!/bin/sh
# bench-wal-settled.sh -- wal_io=auto starting in the mode it last settled
# on (issue 23, item 5; docs/performance.md "The adaptive WAL"): short
# synced runs on a reopened database, OLD's auto, NEW's auto, forced
# direct and forced sync (NEW), alternating, 5 rounds.  Each variant first
# runs a settle run on a fresh database (256 KiB memtables, 8000 synced
# puts: auto can switch there), then the measured run reopens it (3000
# synced overwrites, the default 64 MiB memtable: no switch possible in
# it).  Prints one line per run with the cache's settled line.
#
#   OLD=old-build/bench/ravel-bench NEW=build-rel/bench/ravel-bench \
#     DB_ROOT=/var/tmp scripts/bench-wal-settled.sh
OLD=${OLD:?set OLD to the ravel-bench of the build before the change}
NEW=${NEW:-build-rel/bench/ravel-bench}
ROOT=${DB_ROOT:-/var/tmp}
for r in 1 2 3 4 5; do
  for v in old-auto new-auto direct sync; do
    case $v in old-auto) B=$OLD m=auto ;; new-auto) B=$NEW m=auto ;; *) B=$NEW m=$v ;; esac
    db=$ROOT/bench-wal-settled-$v; rm -rf $db
    nice -n 19 $B --db=$db --benchmarks=fillrandom --sync=1 --wal_io=$m --write_buffer_size=262144 --num=1000000 --writes=8000 >/dev/null 2>&1
    settled=$(grep '^settled' $db/wal-probe.cache 2>/dev/null | tr ' ' '=')
    out=$(nice -n 19 $B --db=$db --use_existing_db=1 --benchmarks=overwrite --sync=1 --wal_io=$m --num=1000000 --writes=3000 2>&1 | grep "^overwrite")
    echo "round=$r variant=$v cache=${settled:-none} $out"
  done
done
rm -rf $ROOT/bench-wal-settled-*
