//! Build script of ravel-kv-sys: decides how libravel gets linked.
//!
//! Default: an installed libravel, found with pkg-config (`pkg-config
//! ravel`; point PKG_CONFIG_PATH at build/meson-uninstalled to use a build
//! tree).  Feature `bundled`: compile the amalgamation, ravel.c, with the
//! `cc` crate and link it statically, so no installed libravel is needed.
//! The amalgamation is taken from `amalgamation/` inside this crate if a
//! release copied it there, else from the repository's `amalgamation/`.
//! It needs a C compiler and libc; xxHash is inlined in ravel.c (no
//! xxhash.h, no libxxhash), and liburing is used if found, else omitted.
//! Features `lz4` and `zstd` compile block compression in: ravel.c gets
//! -DRAVEL_HAVE_LZ4 / -DRAVEL_HAVE_ZSTD and the headers of the lz4-sys /
//! zstd-sys crates (DEP_LZ4_INCLUDE, DEP_ZSTD_INCLUDE), which build and
//! link the codecs themselves.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_BUNDLED").is_some() {
        build_bundled();
    } else {
        link_installed();
    }
}

/// Links the libravel that pkg-config finds.
fn link_installed() {
    if let Err(e) = pkg_config::Config::new().atleast_version("0.1.0").probe("ravel") {
        panic!(
            "\n\nravel-kv-sys: libravel was not found by pkg-config:\n{e}\n\n\
             Either install libravel (meson setup build && ninja -C build && \
             ninja -C build install), or point PKG_CONFIG_PATH at a build \
             tree (export PKG_CONFIG_PATH=$PWD/build/meson-uninstalled), or \
             build the bundled copy instead: cargo build --features bundled\n"
        );
    }
}

/// Compiles amalgamation/ravel.c into a static library and links it.
fn build_bundled() {
    let dir = amalgamation_dir();
    let source = dir.join("ravel.c");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed={}", dir.join("ravel.h").display());
    println!("cargo:rerun-if-env-changed=RAVEL_SYS_OMIT_IO_URING");

    let mut build = cc::Build::new();
    build.file(&source).include(&dir).flag_if_supported("-std=c11");
    // Only the ravel_ API is exported from the amalgamation; its own
    // warnings are the C project's business, not this build's.
    build.warnings(false);

    if env::var_os("CARGO_FEATURE_LZ4").is_some() {
        use_codec(&mut build, "LZ4");
    }
    if env::var_os("CARGO_FEATURE_ZSTD").is_some() {
        use_codec(&mut build, "ZSTD");
    }
    if use_io_uring(&mut build) {
        // pkg-config has printed the -luring link line.
    } else {
        build.define("RAVEL_OMIT_IO_URING", None);
    }
    build.compile("ravel_bundled");
    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:include={}", dir.display());
}

/// The directory holding ravel.c: a copy inside the crate (a published
/// crate) or the repository's amalgamation/ (a checkout).
fn amalgamation_dir() -> PathBuf {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let candidates = [manifest.join("amalgamation"), manifest.join("../../../amalgamation")];
    for dir in &candidates {
        if dir.join("ravel.c").is_file() {
            return dir.clone();
        }
    }
    panic!(
        "\n\nravel-kv-sys (feature bundled): amalgamation/ravel.c not found in {} or {}\n",
        candidates[0].display(),
        candidates[1].display()
    );
}

/// Compiles the codec NAME ("LZ4", "ZSTD") into ravel.c: RAVEL_HAVE_<NAME>,
/// and the include directories the codec's -sys crate exports (a list
/// separated by ';', empty for the system's own include path when zstd-sys
/// links a system libzstd, ZSTD_SYS_USE_PKG_CONFIG=1).  The -sys crate
/// prints the link lines.
fn use_codec(build: &mut cc::Build, name: &str) {
    let var = format!("DEP_{name}_INCLUDE");
    println!("cargo:rerun-if-env-changed={var}");
    let dirs = env::var(&var).unwrap_or_else(|_| {
        panic!(
            "ravel-kv-sys: {var} is not set: the {} crate should have set it",
            name.to_lowercase() + "-sys"
        )
    });
    for dir in dirs.split(';').filter(|d| !d.is_empty()) {
        build.include(dir);
    }
    build.define(&format!("RAVEL_HAVE_{name}"), None);
}

/// True if liburing is usable: its pkg-config entry exists (the link line
/// is printed) and its header compiles.  RAVEL_SYS_OMIT_IO_URING=1 forces
/// the build without io_uring (WAL writes with pwrite + fdatasync only).
fn use_io_uring(build: &mut cc::Build) -> bool {
    if env::var("RAVEL_SYS_OMIT_IO_URING").is_ok_and(|v| v != "0" && !v.is_empty()) {
        println!("cargo:warning=ravel-kv-sys: RAVEL_SYS_OMIT_IO_URING set, building without io_uring");
        return false;
    }
    // Probe without printing link lines first, so a header that does not
    // compile leaves no -luring behind.
    let Ok(lib) = pkg_config::Config::new().cargo_metadata(false).probe("liburing") else {
        println!(
            "cargo:warning=ravel-kv-sys: liburing not found (pkg-config liburing), building without io_uring"
        );
        return false;
    };
    build.includes(&lib.include_paths);
    if !header_compiles(build, "liburing.h") {
        println!("cargo:warning=ravel-kv-sys: liburing.h does not compile, building without io_uring");
        return false;
    }
    pkg_config::Config::new().probe("liburing").expect("liburing was found a moment ago");
    true
}

/// Runs the C preprocessor of BUILD on a file that includes HEADER.
fn header_compiles(build: &cc::Build, header: &str) -> bool {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let probe = out_dir.join(format!("probe_{}.c", header.replace('.', "_")));
    std::fs::write(&probe, format!("#include <{header}>\n")).unwrap();
    let mut cmd: Command = build.get_compiler().to_command();
    cmd.arg("-E").arg(&probe).arg("-o").arg(null_device());
    matches!(cmd.output(), Ok(out) if out.status.success())
}

fn null_device() -> &'static Path {
    Path::new("/dev/null")
}
