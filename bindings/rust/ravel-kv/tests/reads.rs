//! Batches, snapshots and iterators: atomicity, isolation, cursor moves
//! and ranges forward and backward.

mod common;

use common::open_new;
use ravel::{Batch, Db, WriteFlags};

fn keys(range: ravel::RangeIter<'_>) -> Vec<String> {
    range.map(|e| String::from_utf8(e.unwrap().0).unwrap()).collect()
}

fn fill(db: &Db, keys: &[&str]) {
    for k in keys {
        db.put(k, format!("value of {k}")).unwrap();
    }
}

#[test]
fn batch_put_delete_clear_count_and_reuse() {
    let (_dir, db) = open_new("batch");
    db.put(b"doomed", b"x").unwrap();
    let mut batch = Batch::new().unwrap();
    assert!(batch.is_empty());
    batch.put(b"a", b"1").unwrap();
    batch.put(b"b", b"2").unwrap();
    batch.put(b"a", b"3").unwrap(); // later wins
    batch.delete(b"doomed").unwrap();
    assert_eq!(batch.count(), 4);
    db.write(&batch).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"3".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"doomed").unwrap(), None);
    // the batch is unchanged by the write and may be written again
    assert_eq!(batch.count(), 4);
    db.put(b"a", b"changed").unwrap();
    db.write_opt(&batch, WriteFlags::SYNC).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"3".to_vec()));
    batch.clear().unwrap();
    assert_eq!(batch.count(), 0);
    db.write(&batch).unwrap(); // empty: a no-op
    let seq: u64 = db.property("ravel.last-sequence").unwrap().trim().parse().unwrap();
    assert_eq!(seq, 1 + 4 + 1 + 4);
    db.close().unwrap();
}

#[test]
fn batch_is_all_or_nothing_for_a_snapshot() {
    let (_dir, db) = open_new("batchsnap");
    let before = db.snapshot().unwrap();
    let mut batch = Batch::new().unwrap();
    for i in 0..100 {
        batch.put(format!("k{i:03}"), b"v").unwrap();
    }
    db.write(&batch).unwrap();
    let after = db.snapshot().unwrap();
    assert_eq!(before.range(None, None).unwrap().count(), 0);
    assert_eq!(after.range(None, None).unwrap().count(), 100);
    assert_eq!(after.sequence(), before.sequence() + 100);
    drop((before, after));
    db.close().unwrap();
}

#[test]
fn snapshot_isolation() {
    let (_dir, db) = open_new("snapshot");
    db.put(b"k", b"old").unwrap();
    db.put(b"deleted later", b"here").unwrap();
    let snap = db.snapshot().unwrap();
    db.put(b"k", b"new").unwrap();
    db.put(b"added later", b"x").unwrap();
    db.delete(b"deleted later").unwrap();
    db.flush().unwrap(); // the snapshot's versions survive a flush
    db.compact_range(None, None).unwrap(); // and a compaction

    assert_eq!(snap.get(b"k").unwrap(), Some(b"old".to_vec()));
    assert_eq!(snap.get(b"added later").unwrap(), None);
    assert_eq!(snap.get(b"deleted later").unwrap(), Some(b"here".to_vec()));
    let mut buf = [0u8; 8];
    assert_eq!(snap.get_into(b"k", &mut buf).unwrap(), Some(3));
    assert_eq!(&buf[..3], b"old");
    let mut vec = Vec::new();
    assert!(snap.get_into_vec(b"k", &mut vec).unwrap());
    assert_eq!(vec, b"old");
    assert_eq!(keys(snap.range(None, None).unwrap()), ["deleted later", "k"]);
    assert_eq!(keys(snap.range_rev(None, None).unwrap()), ["k", "deleted later"]);
    let mut it = snap.iter().unwrap();
    it.seek(b"k").unwrap();
    assert_eq!(it.value(), Some(&b"old"[..]));
    drop(it);

    assert_eq!(db.get(b"k").unwrap(), Some(b"new".to_vec()));
    assert_eq!(keys(db.range(None, None).unwrap()), ["added later", "k"]);
    assert!(format!("{snap:?}").contains("sequence"));
    drop(snap);
    db.close().unwrap();
}

#[test]
fn iterator_sees_the_state_it_was_made_in() {
    let (_dir, db) = open_new("iterstate");
    fill(&db, &["a", "b"]);
    let mut it = db.iter().unwrap();
    db.put(b"c", b"later").unwrap();
    db.delete(b"a").unwrap();
    it.seek_to_first().unwrap();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.key().unwrap().to_vec());
        it.next().unwrap();
    }
    it.status().unwrap();
    assert_eq!(seen, [b"a", b"b"]);
    drop(it);
    db.close().unwrap();
}

#[test]
fn cursor_moves() {
    let (_dir, db) = open_new("cursor");
    fill(&db, &["b", "d", "f"]);
    let mut it = db.iter().unwrap();
    assert!(!it.valid());
    assert_eq!(it.key(), None);
    assert_eq!(it.value(), None);

    it.seek(b"c").unwrap();
    assert_eq!(it.key(), Some(&b"d"[..]));
    assert_eq!(it.value(), Some(&b"value of d"[..]));
    it.seek(b"d").unwrap();
    assert_eq!(it.key(), Some(&b"d"[..]));
    it.seek_for_prev(b"c").unwrap();
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.seek_for_prev(b"f").unwrap();
    assert_eq!(it.key(), Some(&b"f"[..]));
    it.seek(b"g").unwrap();
    assert!(!it.valid());
    it.seek_for_prev(b"a").unwrap();
    assert!(!it.valid());

    it.seek_to_first().unwrap();
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.next().unwrap();
    assert_eq!(it.key(), Some(&b"d"[..]));
    it.prev().unwrap();
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.prev().unwrap();
    assert!(!it.valid());

    it.seek_to_last().unwrap();
    assert_eq!(it.key(), Some(&b"f"[..]));
    it.next().unwrap();
    assert!(!it.valid());
    it.status().unwrap();
    drop(it);
    db.close().unwrap();
}

#[test]
fn ranges_forward_and_reverse() {
    let (_dir, db) = open_new("ranges");
    fill(&db, &["a", "b", "c", "d", "e"]);
    let s = |k: &'static str| Some(k.as_bytes());

    assert_eq!(keys(db.range(None, None).unwrap()), ["a", "b", "c", "d", "e"]);
    assert_eq!(keys(db.range(s("b"), s("d")).unwrap()), ["b", "c"]);
    assert_eq!(keys(db.range(s("bb"), s("dd")).unwrap()), ["c", "d"]);
    assert_eq!(keys(db.range(s("c"), None).unwrap()), ["c", "d", "e"]);
    assert_eq!(keys(db.range(None, s("c")).unwrap()), ["a", "b"]);
    assert_eq!(keys(db.range(s("x"), None).unwrap()), Vec::<String>::new());
    assert_eq!(keys(db.range(s("c"), s("c")).unwrap()), Vec::<String>::new());
    assert_eq!(keys(db.range(s("d"), s("b")).unwrap()), Vec::<String>::new());

    assert_eq!(keys(db.range_rev(None, None).unwrap()), ["e", "d", "c", "b", "a"]);
    assert_eq!(keys(db.range_rev(s("b"), s("d")).unwrap()), ["c", "b"]);
    assert_eq!(keys(db.range_rev(s("bb"), s("dd")).unwrap()), ["d", "c"]);
    assert_eq!(keys(db.range_rev(s("c"), None).unwrap()), ["e", "d", "c"]);
    assert_eq!(keys(db.range_rev(None, s("c")).unwrap()), ["b", "a"]);
    assert_eq!(keys(db.range_rev(None, s("0")).unwrap()), Vec::<String>::new());
    assert_eq!(keys(db.range_rev(s("d"), s("b")).unwrap()), Vec::<String>::new());

    // values come along, and the adaptor is fused
    let mut r = db.iter().unwrap().range(s("e"), None);
    assert_eq!(r.next().unwrap().unwrap(), (b"e".to_vec(), b"value of e".to_vec()));
    assert!(r.next().is_none());
    assert!(r.next().is_none());
    drop(r);
    // std adaptors work on it
    let total: usize = db.range(None, None).unwrap().map(|e| e.unwrap().1.len()).sum();
    assert_eq!(total, 5 * "value of a".len());
    db.close().unwrap();
}

#[test]
fn ranges_over_many_keys_across_memtable_and_files() {
    let (_dir, db) = open_new("manykeys");
    for i in (0..2000u32).step_by(2) {
        db.put(format!("{i:06}"), i.to_string()).unwrap();
    }
    db.flush().unwrap();
    for i in (1..2000u32).step_by(2) {
        db.put(format!("{i:06}"), i.to_string()).unwrap();
    }
    for i in (0..2000u32).step_by(10) {
        db.delete(format!("{i:06}")).unwrap();
    }
    let expected: Vec<String> = (0..2000u32).filter(|i| i % 10 != 0).map(|i| format!("{i:06}")).collect();
    assert_eq!(keys(db.range(None, None).unwrap()), expected);
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(keys(db.range_rev(None, None).unwrap()), reversed);
    let mid: Vec<String> =
        expected.iter().filter(|k| k.as_str() >= "000500" && k.as_str() < "001500").cloned().collect();
    assert_eq!(keys(db.range(Some(b"000500".as_slice()), Some(b"001500".as_slice())).unwrap()), mid);
    db.close().unwrap();
}
