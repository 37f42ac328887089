//! Every error class a test can provoke, each with its code and ravel's
//! message for that failure: bad options, LOCKED, INVALID misuse, IOERR,
//! CORRUPT, READONLY, NOTFOUND; and the error type itself.

mod common;

use std::fs;

use common::{open_new, options, TempDir};
use ravel::{Batch, Code, Db, Error, Options};

#[test]
fn unknown_option_is_invalid_and_named() {
    let mut opts = Options::new().unwrap();
    let err = opts.set("write_bufer_size", "4M").unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("unknown option 'write_bufer_size'"), "{err}");
    assert!(err.message().contains("did you mean 'write_buffer_size'"), "{err}");
    let err = Options::new().unwrap().with("no_such_option", 1).unwrap_err();
    assert!(err.message().contains("no_such_option"), "{err}");
}

#[test]
fn bad_option_values_are_invalid_and_named() {
    let mut opts = Options::new().unwrap();
    let err = opts.set("write_buffer_size", 1).unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("write_buffer_size") && err.message().contains("out of range"), "{err}");
    let err = opts.set("create_if_missing", "maybe").unwrap_err();
    assert!(err.message().contains("create_if_missing"), "{err}");
    // RocksDB options ravel has not built are refused, not ignored
    let err = opts.set("paranoid_checks", true).unwrap_err();
    assert!(err.message().contains("not built yet"), "{err}");
    // parse stops at the first bad item and names it
    let err = opts.parse("block_size=8K; bogus=1; max_open_files=100").unwrap_err();
    assert!(err.message().contains("bogus"), "{err}");
    // ... and the items before it stay set
    let default_block_size = Options::new().unwrap().get("block_size").unwrap();
    assert_ne!(opts.get("block_size").unwrap(), default_block_size);
    assert_eq!(opts.get("max_open_files").unwrap(), Options::new().unwrap().get("max_open_files").unwrap());
    let err = opts.get("bogus").unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
}

#[test]
fn options_set_get_and_parse() {
    let mut opts = Options::new().unwrap();
    assert_eq!(opts.get("create_if_missing").unwrap(), "false");
    opts.set("create_if_missing", true).unwrap().set("max_open_files", 500).unwrap();
    opts.parse("bloom_bits_per_key = 12 ; block_size=8K;").unwrap();
    assert_eq!(opts.get("create_if_missing").unwrap(), "true");
    assert_eq!(opts.get("max_open_files").unwrap(), "500");
    assert_eq!(opts.get("bloom_bits_per_key").unwrap(), "12");
    assert_eq!(opts.get("block_size").unwrap(), "8192");
}

#[test]
fn nul_bytes_in_names_are_refused_before_reaching_c() {
    let mut opts = Options::new().unwrap();
    let err = opts.set("create_if_missing\0x", true).unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("NUL"), "{err}");
    assert!(opts.set("create_if_missing", "tr\0ue").is_err());
    let dir = TempDir::new("nul");
    let err = Db::open(dir.join("a\0b"), &options()).unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    let (_dir, db) = open_new("nulprop");
    assert_eq!(db.property("ravel.\0stats").unwrap_err().code(), Code::Invalid);
    db.close().unwrap();
}

#[test]
fn opening_twice_is_locked() {
    let dir = TempDir::new("locked");
    let path = dir.join("db");
    let db = Db::open(&path, &options()).unwrap();
    let err = Db::open(&path, &options()).unwrap_err();
    assert_eq!(err.code(), Code::Locked);
    assert!(err.message().contains("already open"), "{err}");
    assert!(err.message().contains(path.to_str().unwrap()), "{err}");
    db.close().unwrap();
    // once closed, it opens again
    Db::open(&path, &options()).unwrap().close().unwrap();
}

#[test]
fn misuse_is_invalid() {
    let dir = TempDir::new("invalid");
    let err = Db::open(dir.join("missing"), &Options::new().unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("does not exist"), "{err}");

    let path = dir.join("db");
    Db::open(&path, &options()).unwrap().close().unwrap();
    let err = Db::open(&path, &options().with("error_if_exists", true).unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::Invalid);

    let db = Db::open(&path, &options()).unwrap();
    let huge_key = vec![b'k'; ravel::sys::RAVEL_MAX_KEY_SIZE as usize + 1];
    let err = db.put(&huge_key, b"v").unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("RAVEL_MAX_KEY_SIZE"), "{err}");
    let mut batch = Batch::new().unwrap();
    assert_eq!(batch.put(&huge_key, b"v").unwrap_err().code(), Code::Invalid);

    // next on an iterator that is not positioned
    let mut it = db.iter().unwrap();
    let err = it.next().unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("ravel_iter_next"), "{err}");
    assert_eq!(it.prev().unwrap_err().code(), Code::Invalid);
    // a failed move that is misuse does not stop the iterator
    it.status().unwrap();
    drop(it);
    db.close().unwrap();
}

#[test]
fn close_with_a_leaked_snapshot_is_refused_not_a_crash() {
    // The borrow checker keeps snapshots from outliving the Db; only
    // mem::forget can leave one alive.  ravel then refuses to close, and
    // the binding leaks the handle rather than freeing it under the snapshot.
    let dir = TempDir::new("leak");
    let path = dir.join("db");
    let db = Db::open(&path, &options()).unwrap();
    std::mem::forget(db.snapshot().unwrap());
    let err = db.close().unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("snapshot"), "{err}");
    // the leaked handle still holds the directory's lock
    assert_eq!(Db::open(&path, &options()).unwrap_err().code(), Code::Locked);

    let db = Db::open(dir.join("db2"), &options()).unwrap();
    std::mem::forget(db.iter().unwrap());
    let err = db.close().unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("iterator"), "{err}");
}

#[test]
fn io_failure_is_io() {
    let dir = TempDir::new("ioerr");
    fs::write(dir.join("file"), b"not a directory").unwrap();
    let err = Db::open(dir.join("file").join("db"), &options()).unwrap_err();
    assert_eq!(err.code(), Code::Io);
    assert!(err.message().contains("Not a directory"), "{err}");
    assert!(err.message().contains("errno"), "{err}");
}

#[test]
fn damaged_table_file_is_corrupt() {
    let dir = TempDir::new("corrupt");
    let path = dir.join("db");
    let db = Db::open(&path, &options()).unwrap();
    for i in 0..100u32 {
        db.put(format!("key{i:03}"), [b'v'; 50]).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();

    let sst = fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .expect("a table file after flush");
    let mut bytes = fs::read(&sst).unwrap();
    for b in &mut bytes[..64] {
        *b ^= 0xff;
    }
    fs::write(&sst, &bytes).unwrap();

    let db = Db::open(&path, &Options::new().unwrap()).unwrap();
    let err = db.verify().unwrap_err();
    assert_eq!(err.code(), Code::Corrupt);
    assert!(err.message().contains(sst.file_name().unwrap().to_str().unwrap()), "{err}");
    assert!(err.message().contains("checksum"), "{err}");
    assert_eq!(db.get(b"key000").unwrap_err().code(), Code::Corrupt);
    // an iterator reports it through its moves and its status
    let mut it = db.iter().unwrap();
    let err = it.seek_to_first().unwrap_err();
    assert_eq!(err.code(), Code::Corrupt);
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err(), err);
    drop(it);
    let items: Vec<_> = db.range(None, None).unwrap().collect();
    assert_eq!(items.len(), 1, "one error, then the end");
    assert_eq!(items[0].as_ref().unwrap_err().code(), Code::Corrupt);
    db.close().unwrap();
}

#[test]
fn writes_to_a_read_only_database_are_readonly() {
    let dir = TempDir::new("readonly");
    let path = dir.join("db");
    let db = Db::open(&path, &options()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.close().unwrap();

    let db = Db::open(&path, &Options::new().unwrap().with("read_only", true).unwrap()).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    let err = db.put(b"k", b"w").unwrap_err();
    assert_eq!(err.code(), Code::ReadOnly);
    assert!(err.message().contains("read_only"), "{err}");
    assert_eq!(db.delete(b"k").unwrap_err().code(), Code::ReadOnly);
    let mut batch = Batch::new().unwrap();
    batch.put(b"k", b"w").unwrap();
    assert_eq!(db.write(&batch).unwrap_err().code(), Code::ReadOnly);
    assert_eq!(db.flush().unwrap_err().code(), Code::ReadOnly);
    db.close().unwrap();
}

#[test]
fn the_message_is_of_this_failure_not_an_earlier_one() {
    let (_dir, db) = open_new("msg");
    let first = db.property("ravel.nope").unwrap_err();
    let second = Options::new().unwrap().with("nope", 1).unwrap_err();
    assert!(first.message().contains("unknown property"), "{first}");
    assert!(second.message().contains("unknown option"), "{second}");
    db.close().unwrap();
}

#[test]
fn error_display_code_and_std_error() {
    let err = Options::new().unwrap().with("nope", 1).unwrap_err();
    assert_eq!(err.to_string(), format!("invalid argument: {}", err.message()));
    assert_eq!(err.raw_code(), ravel::sys::RAVEL_INVALID);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err.clone());
    assert_eq!(boxed.to_string(), err.to_string());

    let codes = [
        (ravel::sys::RAVEL_NOTFOUND, Code::NotFound),
        (ravel::sys::RAVEL_INVALID, Code::Invalid),
        (ravel::sys::RAVEL_IOERR, Code::Io),
        (ravel::sys::RAVEL_CORRUPT, Code::Corrupt),
        (ravel::sys::RAVEL_NOMEM, Code::NoMem),
        (ravel::sys::RAVEL_BUSY, Code::Busy),
        (ravel::sys::RAVEL_LOCKED, Code::Locked),
        (ravel::sys::RAVEL_READONLY, Code::ReadOnly),
        (ravel::sys::RAVEL_CONFLICT, Code::Conflict),
        (ravel::sys::RAVEL_TIMEDOUT, Code::TimedOut),
        (ravel::sys::RAVEL_DEADLOCK, Code::Deadlock),
    ];
    for (rc, code) in codes {
        assert_eq!(Code::from_raw(rc), code);
        assert_eq!(code.raw(), Some(rc));
        let retriable = [Code::Conflict, Code::TimedOut, Code::Deadlock].contains(&code);
        assert_eq!(code.is_retriable(), retriable, "{code:?}");
    }
    assert_eq!(Code::from_raw(99), Code::Unknown);
    assert_eq!(Code::Unknown.raw(), None);
    fn takes_error(_: &dyn std::error::Error) {}
    takes_error(&Error::clone(&Options::new().unwrap().with("nope", 1).unwrap_err()));
}
