#!/usr/bin/env bash
# Installs what ravel needs to build (Debian packages), then configures and
# builds it in ./build.  Safe to run again: it skips what is already done.
# On a fresh 2-core machine: about a minute for the packages and two for
# the build; it says what it is doing as it goes.
#   scripts/setup.sh            dependencies + build/
#   BUILD=dir scripts/setup.sh  another build directory
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
packages=(meson ninja-build pkg-config gcc python3 liburing-dev libxxhash-dev libcmocka-dev libedit-dev liblz4-dev libzstd-dev)
missing=()
echo "setup: checking the Debian packages ravel needs"
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} (apt-get; about a minute)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build=${BUILD:-build}
if [ ! -f "$build/build.ninja" ]; then
  echo "setup: configuring $build/ (meson setup)"
  meson setup "$build" >/dev/null
fi
# ninja's own progress line on a terminal; elsewhere (a CI log) a line
# every tenth of the way.
echo "setup: compiling in $build/ (ninja; about two minutes on 2 cores the first time)"
if [ -t 1 ]; then
  ninja -C "$build"
else
  log=$(mktemp)
  if ! NINJA_STATUS='[%f/%t] ' ninja -C "$build" >"$log" 2>&1; then
    tail -40 "$log"
    rm -f "$log"
    echo "setup: the build failed (above)" >&2
    exit 1
  fi &
  ninja_pid=$!
  # one line a tenth of the way, read from ninja's status lines so far
  last=0
  while kill -0 "$ninja_pid" 2>/dev/null; do
    sleep 2
    step=$(grep -o '^\[[0-9]*/[0-9]*\]' "$log" | tail -1 | tr -d '[]')
    if [ -n "$step" ] && [ $(( 10 * ${step%/*} / ${step#*/} )) -gt "$last" ]; then
      last=$(( 10 * ${step%/*} / ${step#*/} ))
      echo "setup:   ${step%/*} of ${step#*/} built"
    fi
  done
  wait "$ninja_pid"
  grep -E ': (warning|error):' "$log" || true
  rm -f "$log"
fi
echo "setup: built in $build/ ($(( $(date +%s) - start )) s)"
