//! Db::multi_get and Snapshot::multi_get: values in the caller's order,
//! missing and deleted keys None, repeated keys, memtable and table files,
//! a snapshot's state, no value at all on an error, and -- with a writer
//! keeping every key equal in each batch -- never two states in one call.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use common::open_new;
use ravel::{Batch, Code};

fn some(v: &str) -> Option<Vec<u8>> {
    Some(v.as_bytes().to_vec())
}

#[test]
fn values_come_in_the_callers_order() {
    let (_dir, db) = open_new("mget-order");
    db.put("b", "vb").unwrap();
    db.put("a", "va").unwrap();
    db.put("d", "vd").unwrap();
    db.put("gone", "x").unwrap();
    db.delete("gone").unwrap();
    db.put("empty", "").unwrap();
    let keys = ["d", "zz", "a", "gone", "b", "a", "empty", ""];
    let want = [some("vd"), None, some("va"), None, some("vb"), some("va"), some(""), None];
    assert_eq!(db.multi_get(&keys).unwrap(), want);
    db.flush().unwrap(); // now from a table file
    assert_eq!(db.multi_get(&keys).unwrap(), want);
    // keys of any AsRef<[u8]> type; no keys at all
    let owned: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec()];
    assert_eq!(db.multi_get(&owned).unwrap(), [some("va"), some("vb")]);
    assert_eq!(db.multi_get::<&[u8]>(&[]).unwrap(), Vec::<Option<Vec<u8>>>::new());
    db.close().unwrap();
}

#[test]
fn a_snapshot_reads_its_own_state() {
    let (_dir, db) = open_new("mget-snap");
    db.put("a", "old").unwrap();
    db.put("b", "old").unwrap();
    let snap = db.snapshot().unwrap();
    db.put("a", "new").unwrap();
    db.delete("b").unwrap();
    db.put("c", "new").unwrap();
    assert_eq!(snap.multi_get(&["a", "b", "c"]).unwrap(), [some("old"), some("old"), None]);
    assert_eq!(db.multi_get(&["a", "b", "c"]).unwrap(), [some("new"), None, some("new")]);
    drop(snap);
    db.close().unwrap();
}

#[test]
fn an_error_returns_no_value() {
    let (_dir, db) = open_new("mget-error");
    db.put("a", "va").unwrap();
    let too_long = vec![b'k'; (1 << 20) + 1];
    let err = db.multi_get(&[&b"a"[..], &too_long]).unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    assert!(err.to_string().contains("ravel_multi_get"), "{err}");
    // the handle is still fine
    assert_eq!(db.multi_get(&["a"]).unwrap(), [some("va")]);
    db.close().unwrap();
}

/// A writer sets every key to round R in one batch, round after round;
/// each multi_get must see one round for all keys (N gets would not).
#[test]
fn one_call_reads_one_state_while_a_writer_runs() {
    const KEYS: usize = 16;
    let (_dir, db) = open_new("mget-state");
    let keys: Vec<String> = (0..KEYS).map(|i| format!("k{i:02}")).collect();
    let mut batch = Batch::new().unwrap();
    for k in &keys {
        batch.put(k, "0").unwrap();
    }
    db.write(&batch).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut batch = Batch::new().unwrap();
            for round in 1..=3000u32 {
                batch.clear().unwrap();
                for k in &keys {
                    batch.put(k, round.to_string()).unwrap();
                }
                db.write(&batch).unwrap();
                if round % 1000 == 0 {
                    db.flush_no_wait().unwrap(); // some reads from table files
                }
            }
            done.store(true, Ordering::Release);
        });
        let mut calls = 0u32;
        let mut last = 0u32;
        while !done.load(Ordering::Acquire) || calls < 100 {
            let values = db.multi_get(&keys).unwrap();
            let first = values[0].as_deref().expect("k00 is always set");
            for (k, v) in keys.iter().zip(&values) {
                assert_eq!(v.as_deref(), Some(first), "{k} differs from k00 in one call");
            }
            let round: u32 = std::str::from_utf8(first).unwrap().parse().unwrap();
            assert!(round >= last, "went back from round {last} to {round}");
            last = round;
            calls += 1;
        }
    });
    db.close().unwrap();
}
