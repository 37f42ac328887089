//! Block compression and the build's codecs: `compression=lz4|zstd` is
//! accepted exactly when the build has the codec (the `lz4` / `zstd`
//! features give the bundled build both), a database written with one
//! reads back, and a database written by another ravel with a codec this
//! build lacks fails with `Code::Invalid` naming the file and the codec,
//! never with a silent or a "corrupt" answer.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{options, TempDir};
use ravel::{Code, Db, Options};

/// Whether this build of ravel has the codec NAME ("lz4", "zstd").
fn available(name: &str) -> bool {
    Options::new().unwrap().set("compression", name).is_ok()
}

/// A value that compresses well, different for each key.
fn value(i: usize) -> String {
    format!("{i:08}-{}", "abcdefgh".repeat(16))
}

#[test]
fn features_give_the_bundled_build_its_codecs() {
    if cfg!(feature = "lz4") {
        assert!(available("lz4"), "built with the lz4 feature, but compression=lz4 is refused");
    }
    if cfg!(feature = "zstd") {
        assert!(available("zstd"), "built with the zstd feature, but compression=zstd is refused");
    }
    for name in ["lz4", "zstd"] {
        if cfg!(feature = "bundled") && !available(name) {
            let err = Options::new().unwrap().set("compression", name).unwrap_err();
            assert_eq!(err.code(), Code::Invalid);
            assert!(err.message().contains(&format!("built without lib{name}")), "{err}");
        }
    }
}

/// Each codec the build has: written, flushed, reopened with the default
/// options (compression=none) and read back, smaller than the raw data.
#[test]
fn each_available_codec_round_trips() {
    for name in ["lz4", "zstd"] {
        if !available(name) {
            continue;
        }
        let dir = TempDir::new(name);
        let db = Db::open(dir.join("db"), &options().with("compression", name).unwrap()).unwrap();
        for i in 0..2000 {
            db.put(format!("key{i:05}"), value(i)).unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
        let tables: u64 = std::fs::read_dir(dir.join("db"))
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
            .map(|e| e.metadata().unwrap().len())
            .sum();
        let raw = 2000 * (8 + value(0).len()) as u64;
        assert!(tables < raw / 2, "{name}: {tables} bytes of tables for {raw} bytes of data");
        let db = Db::open(dir.join("db"), &Options::new().unwrap()).unwrap();
        for i in (0..2000).step_by(97) {
            assert_eq!(db.get(format!("key{i:05}")).unwrap(), Some(value(i).into_bytes()), "{name}");
        }
        assert_eq!(db.range(None, None).unwrap().count(), 2000);
        db.verify().unwrap();
        db.close().unwrap();
    }
}

/// The `ravel` shell of the installed library: `RAVEL_SHELL`, else
/// `bin/ravel` under the prefix `pkg-config ravel` names (ci.sh installs
/// the library into a staging prefix, shell included).
fn ravel_shell() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("RAVEL_SHELL") {
        return Some(path.into());
    }
    let out = Command::new("pkg-config").args(["--variable=prefix", "ravel"]).output().ok()?;
    let shell = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim()).join("bin/ravel");
    shell.is_file().then_some(shell)
}

/// A database written with compression=zstd by another ravel (the
/// installed library's shell, built with libzstd) is read if this build
/// has zstd, and otherwise fails with Code::Invalid saying which file
/// and that zstd is missing from this build.
#[test]
fn zstd_database_from_another_build() {
    let Some(shell) = ravel_shell() else {
        eprintln!("skipped: no ravel shell (set RAVEL_SHELL, or install ravel where pkg-config finds it)");
        return;
    };
    let dir = TempDir::new("zstd-shell");
    let path = dir.join("db");
    let mut child = Command::new(&shell)
        .args(["-batch", "-bail", "-o", "compression=zstd"])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", shell.display()));
    {
        let mut stdin = child.stdin.take().unwrap();
        for i in 0..500 {
            writeln!(stdin, "put key{i:05} {}", value(i)).unwrap();
        }
        writeln!(stdin, "flush").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("built without libzstd") {
        eprintln!("skipped: {} has no zstd either", shell.display());
        return;
    }
    assert!(out.status.success(), "{}: {stderr}", shell.display());

    let db = Db::open(&path, &Options::new().unwrap()).unwrap();
    let got = db.get("key00007");
    if available("zstd") {
        assert_eq!(got.unwrap(), Some(value(7).into_bytes()));
        assert_eq!(db.range(None, None).unwrap().count(), 500);
    } else {
        let err = got.unwrap_err();
        assert_eq!(err.code(), Code::Invalid, "{err}");
        assert!(err.message().contains(".sst: data block at byte offset"), "{err}");
        assert!(err.message().contains("but this build of ravel has no zstd"), "{err}");
        let err =
            db.range(None, None).unwrap().find_map(|e| e.err()).expect("a range over zstd blocks fails");
        assert_eq!(err.code(), Code::Invalid, "{err}");
    }
    db.close().unwrap();
}
