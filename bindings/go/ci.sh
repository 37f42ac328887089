#!/bin/sh
# ci.sh -- builds and tests the Go binding; what the project's CI runs.
#
# Run from the repository root, with the C library freshly built and
#   PKG_CONFIG_PATH pointing at it (e.g. $PWD/build/meson-uninstalled)
#   LD_LIBRARY_PATH pointing at its libravel.so (e.g. $PWD/build)
# Installs what a fresh Debian machine may lack (a C compiler and
# pkg-config, from apt; Go itself only if absent, which must then be 1.24
# or later), then vets, tests (with -race), and smoke-runs the benchmark.
# Then raftstore/ (hashicorp/raft storage, a module of its own that needs
# Go 1.25 and fetches hashicorp/raft from the Go module proxy): vet, and
# its suite with -race.  Then raftstore/raftkv/ (the replicated key-value
# example, a module of its own that fetches porcupine): vet, and its
# linearizability test, about 60 s (a three-node cluster as separate
# processes under a nemesis, the history checked by porcupine), run in a
# process group of its own which is killed whole at the end, pass or fail.
# Exits non-zero on any failure.  Writes nothing into the source tree.
set -eu

here=bindings/go
[ -f "$here/go.mod" ] || { echo "ci.sh: run me from the repository root" >&2; exit 2; }

apt_install() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "ci.sh: $* missing and not root to install it" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v go >/dev/null 2>&1 || apt_install golang-go
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || apt_install gcc libc6-dev
command -v pkg-config >/dev/null 2>&1 || apt_install pkg-config

# Never fetch a toolchain: use the go on PATH, and say so if it is too old.
export GOTOOLCHAIN=local
export CGO_ENABLED=1
go_minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
if [ -z "$go_minor" ] || [ "$go_minor" -lt 24 ]; then
    echo "ci.sh: Go 1.24 or later is needed, found $(go env GOVERSION)" >&2
    exit 1
fi

if ! pkg-config --exists ravel; then
    echo "ci.sh: pkg-config does not find ravel; set PKG_CONFIG_PATH (see bindings/go/README.md)" >&2
    exit 1
fi

# Go's build cache does not key a cgo package on what pkg-config printed:
# a package compiled against a libravel staged (or installed) elsewhere is
# reused with that other place's -I and -L, and the link fails ("cannot
# find -lravel") once it is gone.  That failed CI on a machine whose cache
# outlived the staging directory of an earlier run.  CGO_CFLAGS and
# CGO_LDFLAGS are in the key: naming the library's directories there
# rebuilds the cgo package whenever they change (pure Go packages stay
# cached).  -O2 -g is Go's default for both.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} $(pkg-config --cflags ravel)"
export CGO_LDFLAGS="${CGO_LDFLAGS:--O2 -g} $(pkg-config --libs-only-L ravel)"

cd "$here"
echo "== go $(go env GOVERSION), ravel $(pkg-config --modversion ravel)"

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
    echo "ci.sh: not gofmt-formatted: $unformatted" >&2
    exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 ./...

echo "== go test (no race detector: the examples and cgocheck at full speed)"
go test -count=1 ./...

echo "== benchmark smoke run"
go run ./bench --num=20000 --benchmarks=fillrandom,readrandom,readrandom_get --seed=1

# raftstore: vet, then the whole suite (conformance, model check, SIGKILL
# crashes, concurrency, a three-node raft cluster) once, with -race.
# benchcmp/ (the comparison with raft-boltdb and raft-wal, a module of its
# own) is not built here: it would fetch and compile bbolt and raft-wal for
# nothing CI checks; scripts/bench-raftstore.sh builds it.
if [ "$go_minor" -lt 25 ]; then
    echo "ci.sh: raftstore needs Go 1.25 or later (hashicorp/raft v1.8), found $(go env GOVERSION)" >&2
    exit 1
fi
echo "== raftstore: go vet"
(cd raftstore && go vet ./...)
echo "== raftstore: go test -race"
(cd raftstore && go test -race -count=1 ./...)


# raftkv: the test starts node processes (killed by the test, and by
# Pdeathsig if the test dies); setsid puts the test and everything it
# starts in a new process group, which is killed at the end whatever
# happened, so no node survives on the CI machine.
echo "== raftkv: go vet"
(cd raftstore/raftkv && go vet ./...)
echo "== raftkv: linearizability test (${RAFTKV_DURATION:-60s})"
raftkv_status=0
(cd raftstore/raftkv && exec setsid go test -count=1 -timeout 15m ./...) &
raftkv_pid=$!
trap 'kill -KILL -- -$raftkv_pid 2>/dev/null || true' EXIT INT TERM
wait $raftkv_pid || raftkv_status=$?
kill -KILL -- -$raftkv_pid 2>/dev/null || true
trap - EXIT INT TERM
[ "$raftkv_status" -eq 0 ] || { echo "ci.sh: raftkv test failed" >&2; exit 1; }

echo "== Go binding: all passed"
