#!/bin/sh
# raftkv-jepsen.sh -- the long form of raftkv's linearizability test: a
# three-node cluster of separate processes under a nemesis (SIGKILL,
# SIGSTOP/SIGCONT, restarts, one node's directory wiped), its history
# checked by porcupine.
#
#   scripts/raftkv-jepsen.sh [DURATION]        default 10m: rounds of
#       ROUND (default 60s) each, a fresh cluster and its own porcupine
#       check per round, until DURATION has passed; stops at the first
#       failure.  (One history of 10 minutes has ~900 writes of unknown
#       outcome, which porcupine must leave pending to the end: its search
#       did not finish in 2 minutes.  Rounds keep each check tractable.)
#   BROKEN_RUNS=5 scripts/raftkv-jepsen.sh  then also runs the broken
#       variant (-unsafe-local-reads) 5 times, ROUND each, and counts how many porcupine
#       rejected (it must reject; the count says how often it manages to)
#   ONLY_BROKEN=1 BROKEN_RUNS=5 ...  the broken runs alone
#
# Run from the repository root with the library built (build/ or $BUILD).
# Everything runs in a process group of its own, killed whole at the end.
set -eu
dur=${1:-10m}
build=${BUILD:-$PWD/build}
[ -f bindings/go/raftstore/raftkv/go.mod ] || { echo "run me from the repository root" >&2; exit 2; }
export PKG_CONFIG_PATH="$build/meson-uninstalled" LD_LIBRARY_PATH="$build" GOTOOLCHAIN=local
cd bindings/go/raftstore/raftkv

run() { # run NAME ENV... -- in a new process group, killed at the end
    name=$1; shift
    (exec setsid env "$@" go test -count=1 -timeout 0 -run "$name" -v .) > "$log" 2>&1 &
    pid=$!
    trap 'kill -KILL -- -$pid 2>/dev/null || true' EXIT INT TERM
    status=0; wait $pid || status=$?
    kill -KILL -- -$pid 2>/dev/null || true
    trap - EXIT INT TERM
    grep -E '^(---|ok|FAIL)|clients:|porcupine|wiped' "$log" || true
    return $status
}

round=${ROUND:-60s}
seconds() { # a Go-style duration of s, m or h units, in seconds
    case $1 in
    *h) echo $(( ${1%h} * 3600 )) ;; *m) echo $(( ${1%m} * 60 )) ;;
    *s) echo "${1%s}" ;; *) echo "$1" ;;
    esac
}
if [ -z "${ONLY_BROKEN:-}" ]; then
    end=$(( $(date +%s) + $(seconds "$dur") ))
    rounds=0
    while [ "$(date +%s)" -lt "$end" ]; do
        rounds=$((rounds + 1))
        log=$(mktemp /tmp/raftkv-jepsen-XXXXXX.log)
        echo "== TestLinearizable round $rounds, $round (log: $log)"
        run '^TestLinearizable$' RAFTKV_DURATION="$round"
    done
    echo "== TestLinearizable: $rounds rounds of $round passed"
fi

n=${BROKEN_RUNS:-0}
caught=0
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    log=$(mktemp /tmp/raftkv-broken-XXXXXX.log)
    echo "== broken variant, run $i of $n, $round (log: $log)"
    if run '^TestBrokenReadsAreCaught$' RAFTKV_BROKEN=1 RAFTKV_DURATION="$round"; then
        caught=$((caught + 1))
    fi
done
[ "$n" -eq 0 ] || echo "== broken variant: porcupine rejected $caught of $n runs"
