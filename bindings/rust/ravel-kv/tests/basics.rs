//! Point writes and reads, write flags, persistence across reopen, and the
//! maintenance calls (flush, compaction, verify, properties, version).

mod common;

use common::{open_new, options, TempDir};
use ravel::{Code, Db, Options, WriteFlags};

#[test]
fn put_get_delete_round_trip() {
    let (_dir, db) = open_new("roundtrip");
    assert_eq!(db.get(b"k").unwrap(), None);
    db.put(b"k", b"v1").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v1".to_vec()));
    db.put(b"k", b"v2").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v2".to_vec()));
    db.delete(b"k").unwrap();
    assert_eq!(db.get(b"k").unwrap(), None);
    db.delete(b"never-there").unwrap();
    // str, String and Vec work as keys and values too
    db.put("text", String::from("value")).unwrap();
    assert_eq!(db.get(Vec::from("text")).unwrap().as_deref(), Some(&b"value"[..]));
    db.close().unwrap();
}

#[test]
fn empty_and_binary_keys_and_values() {
    let (_dir, db) = open_new("binary");
    let binary_key = b"\0a\0\xff\x00";
    let binary_value: Vec<u8> = (0..=255u8).chain([0, 0, 0]).collect();
    db.put(b"", b"empty key").unwrap();
    db.put(b"empty value", b"").unwrap();
    db.put(binary_key, &binary_value).unwrap();
    assert_eq!(db.get(b"").unwrap(), Some(b"empty key".to_vec()));
    assert_eq!(db.get(b"empty value").unwrap(), Some(Vec::new()));
    assert_eq!(db.get(binary_key).unwrap(), Some(binary_value.clone()));
    // a key is its bytes: a prefix up to the NUL is another key
    assert_eq!(db.get(b"\0a").unwrap(), None);
    assert_eq!(db.get(b"\0a\0\xff").unwrap(), None);
    // iteration returns them whole, empty key first
    let all: Vec<_> = db.range(None, None).unwrap().map(Result::unwrap).collect();
    assert_eq!(all[0], (Vec::new(), b"empty key".to_vec()));
    assert_eq!(all[1], (binary_key.to_vec(), binary_value));
    assert_eq!(all[2], (b"empty value".to_vec(), Vec::new()));
    db.close().unwrap();
}

#[test]
fn get_into_a_buffer() {
    let (_dir, db) = open_new("getinto");
    db.put(b"k", b"0123456789").unwrap();
    let mut small = [0u8; 4];
    assert_eq!(db.get_into(b"k", &mut small).unwrap(), Some(10));
    assert_eq!(&small, b"0123");
    let mut big = [0u8; 16];
    assert_eq!(db.get_into(b"k", &mut big).unwrap(), Some(10));
    assert_eq!(&big[..10], b"0123456789");
    assert_eq!(db.get_into(b"absent", &mut big).unwrap(), None);
    assert_eq!(db.get_into(b"k", &mut []).unwrap(), Some(10));

    let mut vec = Vec::new();
    assert!(db.get_into_vec(b"k", &mut vec).unwrap());
    assert_eq!(vec, b"0123456789");
    let long = vec![7u8; 100_000];
    db.put(b"long", &long).unwrap();
    assert!(db.get_into_vec(b"long", &mut vec).unwrap());
    assert_eq!(vec, long);
    assert!(!db.get_into_vec(b"absent", &mut vec).unwrap());
    assert!(vec.is_empty());
    db.close().unwrap();
}

#[test]
fn write_flags() {
    let (_dir, db) = open_new("flags");
    db.put_opt(b"sync", b"1", WriteFlags::SYNC).unwrap();
    db.put_opt(b"nowal", b"2", WriteFlags::NO_WAL).unwrap();
    db.put_opt(b"noslow", b"3", WriteFlags::NO_SLOWDOWN | WriteFlags::SYNC).unwrap();
    db.delete_opt(b"sync", WriteFlags::SYNC).unwrap();
    assert_eq!(db.get(b"sync").unwrap(), None);
    assert_eq!(db.get(b"nowal").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"noslow").unwrap(), Some(b"3".to_vec()));
    // ravel refuses SYNC together with NO_WAL
    let err = db.put_opt(b"k", b"v", WriteFlags::SYNC | WriteFlags::NO_WAL).unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.message().contains("RAVEL_SYNC and RAVEL_NO_WAL"), "{err}");
    assert!(WriteFlags::SYNC.contains(WriteFlags::SYNC));
    assert!(!WriteFlags::NONE.contains(WriteFlags::SYNC));
    assert_eq!((WriteFlags::SYNC | WriteFlags::NO_SLOWDOWN).bits(), 0x5);
    db.close().unwrap();
}

#[test]
fn data_survives_reopen() {
    let dir = TempDir::new("reopen");
    let path = dir.join("db");
    {
        let db = Db::open(&path, &options()).unwrap();
        db.put(b"kept", b"in the wal").unwrap();
        db.put_opt(b"no-wal", b"flushed at close", WriteFlags::NO_WAL).unwrap();
        db.put(b"gone", b"x").unwrap();
        db.delete(b"gone").unwrap();
        db.close().unwrap();
    }
    {
        // Drop closes too
        let db = Db::open(&path, &Options::new().unwrap()).unwrap();
        assert_eq!(db.get(b"kept").unwrap(), Some(b"in the wal".to_vec()));
        assert_eq!(db.get(b"no-wal").unwrap(), Some(b"flushed at close".to_vec()));
        assert_eq!(db.get(b"gone").unwrap(), None);
        db.put(b"second", b"session").unwrap();
        db.flush().unwrap();
    }
    let db = Db::open(&path, &Options::new().unwrap()).unwrap();
    assert_eq!(db.get(b"second").unwrap(), Some(b"session".to_vec()));
    assert_eq!(db.path(), path);
    db.close().unwrap();
}

#[test]
fn flush_compact_verify_and_properties() {
    let (_dir, db) = open_new("maint");
    for i in 0..1000u32 {
        db.put(format!("key{i:05}"), format!("value{i}")).unwrap();
    }
    db.flush_wal(false).unwrap();
    db.flush_wal(true).unwrap();
    db.flush().unwrap();
    assert_eq!(db.property("ravel.num-files-at-level0").unwrap().trim(), "1");
    assert!(db.property("ravel.sstables").unwrap().contains("key00000"));
    for i in 0..1000u32 {
        db.put(format!("key{i:05}"), b"newer").unwrap();
    }
    db.flush_no_wait().unwrap();
    db.compact_range(None, None).unwrap();
    db.compact_range(Some(b"key00100".as_slice()), Some(b"key00200".as_slice())).unwrap();
    assert_eq!(db.property("ravel.num-files-at-level0").unwrap().trim(), "0");
    db.verify().unwrap();
    assert_eq!(db.get(b"key00500").unwrap(), Some(b"newer".to_vec()));
    let last: u64 = db.property("ravel.last-sequence").unwrap().trim().parse().unwrap();
    assert_eq!(last, 2000);
    assert!(db.property("ravel.stats").unwrap().len() > 100);
    assert!(db.property("ravel.options").unwrap().contains("create_if_missing=true"));
    assert_eq!(db.property("ravel.read-only-reason").unwrap(), "");
    db.close().unwrap();
}

#[test]
fn unknown_property_is_not_found_with_the_known_names() {
    let (_dir, db) = open_new("prop");
    let err = db.property("ravel.no-such-thing").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("ravel.no-such-thing"), "{err}");
    assert!(err.message().contains("known:") && err.message().contains("stats"), "{err}");
    db.close().unwrap();
}

#[test]
fn library_version() {
    assert_eq!(ravel::version(), "0.1.0");
    assert_eq!(ravel::version_number(), 1000);
    assert_eq!(ravel::version_number(), ravel::sys::RAVEL_VERSION_NUMBER);
}
