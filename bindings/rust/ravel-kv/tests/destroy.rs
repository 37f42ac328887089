//! ravel::destroy: a closed database goes with its directory; a file of
//! another name keeps the directory; an open database is refused
//! (Code::Locked) with nothing deleted; a missing directory is Ok.

mod common;

use std::path::PathBuf;

use common::{options, TempDir};
use ravel::{Code, Db};

/// A database at DIR/db with a table file and a WAL, closed.
fn closed_db_with_data(dir: &TempDir) -> PathBuf {
    let path = dir.join("db");
    let db = Db::open(&path, &options()).unwrap();
    db.put("flushed", "1").unwrap();
    db.flush().unwrap();
    db.put("in-wal", "2").unwrap();
    db.close().unwrap();
    path
}

#[test]
fn a_closed_database_goes_with_its_directory() {
    let dir = TempDir::new("destroy-closed");
    let path = closed_db_with_data(&dir);
    assert!(path.join("CURRENT").is_file());
    ravel::destroy(&path).unwrap();
    assert!(!path.exists(), "{} is still there", path.display());
    assert!(dir.path().is_dir(), "the parent stays");
}

#[test]
fn a_foreign_file_stays_and_keeps_the_directory() {
    let dir = TempDir::new("destroy-foreign");
    let path = closed_db_with_data(&dir);
    std::fs::write(path.join("notes.txt"), "mine").unwrap();
    ravel::destroy(path.as_path()).unwrap();
    let left: Vec<String> =
        std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(left, ["notes.txt"]);
    assert_eq!(std::fs::read_to_string(path.join("notes.txt")).unwrap(), "mine");
    // No database is left: opening without create_if_missing fails.
    let plain = ravel::Options::new().unwrap();
    assert_eq!(Db::open(&path, &plain).unwrap_err().code(), Code::Invalid);
}

#[test]
fn an_open_database_is_locked_and_kept() {
    let dir = TempDir::new("destroy-open");
    let path = closed_db_with_data(&dir);
    let db = Db::open(&path, &options()).unwrap();
    let err = ravel::destroy(path.to_str().unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::Locked, "{err}");
    assert!(!err.message().is_empty());
    // Still usable, and every file is still there once closed.
    assert_eq!(db.get("flushed").unwrap(), Some(b"1".to_vec()));
    db.close().unwrap();
    let db = Db::open(&path, &ravel::Options::new().unwrap()).unwrap();
    assert_eq!(db.get("flushed").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get("in-wal").unwrap(), Some(b"2".to_vec()));
    db.close().unwrap();
    ravel::destroy(path.clone()).unwrap();
    assert!(!path.exists());
}

#[test]
fn a_missing_directory_is_ok() {
    let dir = TempDir::new("destroy-missing");
    ravel::destroy(dir.join("never-made")).unwrap();
    assert!(!dir.join("never-made").exists());
}

#[test]
fn a_nul_byte_in_the_path_is_invalid() {
    let err = ravel::destroy("a\0b").unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("NUL"), "{err}");
}
