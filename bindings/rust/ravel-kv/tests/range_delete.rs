//! Db::delete_range and Batch::delete_range: the keys of [begin, end) are
//! gone for gets and iteration, a snapshot taken before still sees them,
//! the batch reads back as Op::DeleteRange, a reversed range is refused.

mod common;

use ravel::{Batch, Code, Op};

#[test]
fn delete_range() {
    let (_dir, db) = common::open_new("range_delete");
    for i in 0..10 {
        let k = format!("k{i}");
        db.put(&k, &k).unwrap();
    }
    let snap = db.snapshot().unwrap();
    db.delete_range("k2", "k7").unwrap();
    for i in 0..10 {
        let k = format!("k{i}");
        let deleted = (2..7).contains(&i);
        assert_eq!(db.get(&k).unwrap().is_none(), deleted, "{k}");
        assert!(snap.get(&k).unwrap().is_some(), "snapshot {k}");
    }
    let keys: Vec<Vec<u8>> = db.iter().unwrap().range(None, None).map(|r| r.unwrap().0).collect();
    assert_eq!(keys.len(), 5);
    let back: Vec<Vec<u8>> = db.iter().unwrap().range_rev(None, None).map(|r| r.unwrap().0).collect();
    assert_eq!(back, keys.iter().rev().cloned().collect::<Vec<_>>());
    drop(snap);
    db.flush().unwrap();
    assert!(db.get("k3").unwrap().is_none());
    assert_eq!(db.delete_range("b", "a").unwrap_err().code(), Code::Invalid);
    db.delete_range("a", "a").unwrap();
    let mut b = Batch::new().unwrap();
    b.delete_range("k0", "k1").unwrap();
    let ops: Vec<Op> = b.ops().map(|r| r.unwrap()).collect();
    assert_eq!(ops, vec![Op::DeleteRange { begin: b"k0", end: b"k1" }]);
    db.write(&b).unwrap();
    assert!(db.get("k0").unwrap().is_none());
    assert!(db.get("k1").unwrap().is_some());
}
