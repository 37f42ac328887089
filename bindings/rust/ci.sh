#!/bin/sh
# bindings/rust/ci.sh -- what the project's CI runs for the Rust binding,
# from the repository root, with PKG_CONFIG_PATH and LD_LIBRARY_PATH
# already pointing at a freshly built libravel (build/meson-uninstalled,
# build/).  Installs what a fresh Debian machine might lack (apt-get, only
# for what is missing), then builds the workspace and runs every test
# three times: linked to that libravel, with the bundled amalgamation, and
# with the bundled amalgamation and its lz4 and zstd features (crates
# fetched from crates.io, as for any cargo build); then the openraft
# storage crate ravel-openraft (its own cargo project), linked.
# Exits non-zero on any failure.  Build output goes to
# bindings/rust/target/, which .gitignore covers.
set -eu

cd "$(dirname "$0")"

apt_install() {
    echo "ci.sh: installing $*" >&2
    if [ -z "${APT_UPDATED:-}" ]; then
        apt-get update -qq
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v cargo >/dev/null || apt_install cargo
command -v cc >/dev/null || apt_install gcc
command -v pkg-config >/dev/null || apt_install pkg-config
# the bundled build compiles ravel.c (xxHash inlined): liburing.h if present
pkg-config --exists liburing || apt_install liburing-dev

# rust-version in Cargo.toml; Debian's own cargo may be older
rustc_minor=$(rustc --version | sed -n 's/^rustc 1\.\([0-9]*\).*/\1/p')
if [ "${rustc_minor:-0}" -lt 77 ]; then
    echo "ci.sh: $(rustc --version) is too old: the binding needs Rust 1.77 or newer" >&2
    exit 1
fi

pkg-config --exists ravel || {
    echo "ci.sh: pkg-config finds no ravel: set PKG_CONFIG_PATH to build/meson-uninstalled" >&2
    exit 1
}

echo "== cargo test (linked to $(pkg-config --variable=prefix ravel))"
cargo test --locked --workspace
echo "== cargo test --features bundled (the amalgamation, no libravel)"
cargo test --locked --workspace --features bundled
echo "== cargo test --features bundled,lz4,zstd (the amalgamation with the lz4-sys and zstd-sys codecs)"
cargo test --locked --workspace --features bundled,lz4,zstd
echo "== README example and a short benchmark run"
cargo run --locked --quiet -p ravel-kv --example readme
cargo run --locked --quiet -p ravel-kv-bench -- --num=20000 --seed=1
echo "== ravel-openraft: openraft's storage suite on ravel (its own cargo project; openraft, tokio, serde from crates.io)"
# its locked dependency tree (openraft 0.9.25) needs Rust 1.88 (Cargo.toml)
if [ "${rustc_minor:-0}" -lt 88 ]; then
    echo "ci.sh: $(rustc --version) is too old for ravel-openraft: it needs Rust 1.88 or newer" >&2
    exit 1
fi
(cd ravel-openraft && cargo test --locked)
echo "ci.sh: Rust binding OK"
