#!/bin/bash
# hang-hunt.sh -- run one test program again and again; if a run outlives
# LIMIT seconds, print every thread's backtrace (gdb) and stop.  For rare
# hangs that a single run does not show.
#
#   scripts/hang-hunt.sh build-tsan/tests/test_faults [RUNS] [LIMIT]
#
# Environment is passed through, e.g. RAVEL_TEST_WAL_IO=uring
# TSAN_OPTIONS=halt_on_error=1.  Needs gdb for the backtraces.  (Under
# meson test, the programs that call tu_init print their own backtraces
# when they hang: RAVEL_TEST_WATCHDOG, tests/testutil.c.)
set -u
prog=${1:?usage: hang-hunt.sh PROGRAM [RUNS] [LIMIT]}
runs=${2:-50}
limit=${3:-120}
for i in $(seq 1 "$runs"); do
    "$prog" > /tmp/hang-hunt.$$.log 2>&1 &
    pid=$!
    for _ in $(seq 1 "$limit"); do
        sleep 1
        kill -0 "$pid" 2>/dev/null || break
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "run $i: still running after ${limit}s; output so far:"
        tail -20 /tmp/hang-hunt.$$.log
        gdb -p "$pid" -batch -ex "thread apply all bt" 2>&1 | grep -E "^(Thread|#)"
        kill -9 "$pid"
        exit 1
    fi
    wait "$pid"
    echo "run $i: exit $?"
done
rm -f /tmp/hang-hunt.$$.log
