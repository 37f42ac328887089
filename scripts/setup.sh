#!/usr/bin/env bash
# Installs what ravel needs to build (Debian packages), then configures and
# builds it in ./build.  Safe to run again: it skips what is already done.
#   scripts/setup.sh            dependencies + build/
#   BUILD=dir scripts/setup.sh  another build directory
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build pkg-config gcc python3 liburing-dev libxxhash-dev libcmocka-dev libedit-dev liblz4-dev libzstd-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build=${BUILD:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" >/dev/null
fi
ninja -C "$build" >/dev/null
echo "setup: built in $build/"
