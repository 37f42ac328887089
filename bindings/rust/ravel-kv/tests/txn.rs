//! Transactions: reads see the transaction's own writes, commit and
//! rollback (and drop), conflicts between two transactions, the retriable
//! error codes, savepoints, iterators, `Db::transaction` retrying with
//! real threads incrementing one counter, errors and panics of the closure,
//! and two-phase commit across a reopen.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Barrier;

use common::{open_new, options, TempDir};
use ravel::{Code, Db, Error, Options, TxnOptions};

fn pessimistic() -> TxnOptions {
    TxnOptions::default()
}

#[test]
fn reads_see_own_writes_and_commit_publishes() {
    let (_dir, db) = open_new("txn-own");
    db.put(b"a", b"1").unwrap();
    let mut tx = db.begin(&pessimistic()).unwrap();
    tx.put(b"b", b"2").unwrap();
    tx.delete(b"a").unwrap();
    assert_eq!(tx.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(tx.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"b").unwrap(), None, "visible before the commit");
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    tx.commit().unwrap();
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"a").unwrap(), None);
}

#[test]
fn snapshot_isolation() {
    let (_dir, db) = open_new("txn-snap");
    db.put(b"k", b"old").unwrap();
    let tx = db.begin(&pessimistic()).unwrap();
    db.put(b"k", b"new").unwrap();
    assert_eq!(tx.get(b"k").unwrap(), Some(b"old".to_vec()));
}

#[test]
fn rollback_and_drop_discard() {
    let dir = TempDir::new("txn-rollback");
    let db = Db::open(dir.join("db"), &options()).unwrap();
    let mut tx = db.begin(&pessimistic()).unwrap();
    tx.put(b"x", b"1").unwrap();
    tx.rollback().unwrap();
    let mut tx = db.begin(&pessimistic()).unwrap();
    tx.put(b"y", b"1").unwrap();
    drop(tx);
    assert_eq!(db.get(b"x").unwrap(), None);
    assert_eq!(db.get(b"y").unwrap(), None);
    db.close().unwrap();
    let db = Db::open(dir.join("db"), &Options::new().unwrap()).unwrap();
    assert_eq!(db.get(b"y").unwrap(), None);
}

#[test]
fn conflict_between_two_transactions() {
    let (_dir, db) = open_new("txn-conflict");
    db.put(b"acct", b"100").unwrap();
    let mut t1 = db.begin(&pessimistic()).unwrap();
    let t2 = db.begin(&pessimistic()).unwrap();
    assert_eq!(t1.get_for_update(b"acct").unwrap(), Some(b"100".to_vec()));
    t1.put(b"acct", b"90").unwrap();
    t1.commit().unwrap();
    let err = t2.get_for_update(b"acct").unwrap_err();
    assert_eq!(err.code(), Code::Conflict);
    assert!(err.is_retriable() && err.code().is_retriable());
    assert!(err.message().contains("acct"), "{err}");
    // still open after a retriable error
    assert_eq!(t2.get(b"acct").unwrap(), Some(b"100".to_vec()));
    t2.rollback().unwrap();
    assert_eq!(db.get(b"acct").unwrap(), Some(b"90".to_vec()));
}

#[test]
fn optimistic_conflict_at_commit() {
    let (_dir, db) = open_new("txn-optimistic");
    db.put(b"k", b"0").unwrap();
    let mut tx = db.begin(&TxnOptions { optimistic: true, ..TxnOptions::default() }).unwrap();
    assert_eq!(tx.get_for_update(b"k").unwrap(), Some(b"0".to_vec()));
    tx.put(b"k", b"1").unwrap();
    db.put(b"k", b"other").unwrap();
    assert_eq!(tx.commit().unwrap_err().code(), Code::Conflict);
    assert_eq!(db.get(b"k").unwrap(), Some(b"other".to_vec()));
}

#[test]
fn lock_timeout_names_the_key() {
    let dir = TempDir::new("txn-timeout");
    let db = Db::open(dir.join("db"), &options().with("txn_lock_timeout", 50).unwrap()).unwrap();
    let mut t1 = db.begin(&pessimistic()).unwrap();
    t1.put(b"held", b"1").unwrap();
    let mut t2 = db.begin(&pessimistic()).unwrap();
    let err = t2.put(b"held", b"2").unwrap_err();
    assert_eq!(err.code(), Code::TimedOut);
    assert!(err.is_retriable());
    assert!(err.message().contains("held"), "{err}");
    drop(t2);
    t1.commit().unwrap();
}

#[test]
fn deadlock_fails_one_of_two() {
    let dir = TempDir::new("txn-deadlock");
    // a long lock timeout: the cycle, not a timeout, must end the wait
    let db = Db::open(dir.join("db"), &options().with("txn_lock_timeout", 60000).unwrap()).unwrap();
    let both_locked = Barrier::new(2);
    let results: Vec<Result<(), Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = [("0", b"a", b"b"), ("1", b"b", b"a")]
            .into_iter()
            .map(|(name, first, second)| {
                let (db, both_locked) = (&db, &both_locked);
                s.spawn(move || {
                    let mut tx = db.begin(&pessimistic()).unwrap();
                    tx.put(first, name).unwrap();
                    both_locked.wait();
                    tx.put(second, name)?; // dropped (rolled back) on error
                    tx.commit()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failed: Vec<&Error> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    assert_eq!(failed[0].code(), Code::Deadlock);
    assert!(failed[0].is_retriable());
    let winner = if results[0].is_ok() { b"0" } else { b"1" };
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&winner[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&winner[..]));
}

#[test]
fn savepoints() {
    let (_dir, db) = open_new("txn-savepoints");
    let mut tx = db.begin(&pessimistic()).unwrap();
    tx.put(b"a", b"1").unwrap();
    tx.savepoint().unwrap();
    tx.put(b"b", b"2").unwrap();
    tx.savepoint().unwrap();
    tx.put(b"c", b"3").unwrap();
    tx.rollback_to_savepoint().unwrap();
    assert_eq!(tx.get(b"c").unwrap(), None);
    assert_eq!(tx.get(b"b").unwrap(), Some(b"2".to_vec()));
    tx.rollback_to_savepoint().unwrap();
    assert_eq!(tx.get(b"b").unwrap(), None);
    assert_eq!(tx.rollback_to_savepoint().unwrap_err().code(), Code::NotFound);
    tx.commit().unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), None);
}

#[test]
fn iterator_sees_own_writes() {
    let (_dir, db) = open_new("txn-iter");
    for k in ["a", "c", "e"] {
        db.put(k, b"db").unwrap();
    }
    let mut tx = db.begin(&pessimistic()).unwrap();
    tx.put(b"b", b"txn").unwrap();
    tx.put(b"c", b"txn").unwrap();
    tx.delete(b"e").unwrap();
    db.put(b"d", b"later").unwrap(); // after the snapshot: unseen
    let all: Vec<(Vec<u8>, Vec<u8>)> = tx.range(None, None).unwrap().collect::<Result<_, _>>().unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = [("a", "db"), ("b", "txn"), ("c", "txn")]
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    assert_eq!(all, want);
    let keys: Vec<Vec<u8>> =
        tx.range_rev(Some(b"b"), None).unwrap().map(|e| e.map(|(k, _)| k)).collect::<Result<_, _>>().unwrap();
    assert_eq!(keys, [b"c".to_vec(), b"b".to_vec()]);
    let mut it = tx.iter().unwrap();
    it.seek(b"b").unwrap();
    assert_eq!(it.key(), Some(&b"b"[..]));
    assert_eq!(it.value(), Some(&b"txn"[..]));
    it.next().unwrap();
    assert_eq!(it.key(), Some(&b"c"[..]));
    drop(it);
    tx.commit().unwrap();
}

#[test]
fn transaction_returns_the_closure_value_and_commits() {
    let (_dir, db) = open_new("txn-run");
    let n = db.transaction(|tx| {
        tx.put(b"k", b"v")?;
        Ok(42)
    });
    assert_eq!(n.unwrap(), 42);
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn transaction_returns_other_errors_unchanged_and_resumes_panics() {
    let (_dir, db) = open_new("txn-run-errors");
    let mut runs = 0;
    // an error of the binding's own (a NUL byte in a name), not retriable
    let err = db
        .transaction(|tx| {
            runs += 1;
            tx.put(b"k", b"dropped")?;
            tx.set_name("nul\0byte")
        })
        .unwrap_err();
    assert_eq!((err.code(), runs), (Code::Invalid, 1));
    assert!(err.message().contains("NUL"), "{err}");
    assert_eq!(db.get(b"k").unwrap(), None);

    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        db.transaction(|tx| -> ravel::Result<()> {
            tx.put(b"k", b"panicked")?;
            panic!("boom");
        })
    }));
    assert_eq!(*panicked.unwrap_err().downcast::<&str>().unwrap(), "boom");
    assert_eq!(db.get(b"k").unwrap(), None);
    let zero = TxnOptions { max_attempts: 0, ..TxnOptions::default() };
    assert_eq!(db.transaction_with(&zero, |_| Ok(())).unwrap_err().code(), Code::Invalid);
}

#[test]
fn transaction_retries_then_gives_up() {
    let (_dir, db) = open_new("txn-retry");
    db.put(b"k", b"0").unwrap();
    let mut runs = 0u32;
    let three = TxnOptions { max_attempts: 3, ..TxnOptions::default() };
    let err = db
        .transaction_with(&three, |tx| {
            runs += 1;
            tx.get(b"k")?;
            db.put(b"k", runs.to_string())?; // another writer
            tx.get_for_update(b"k")
        })
        .unwrap_err();
    assert_eq!((err.code(), runs), (Code::Conflict, 3));

    runs = 0;
    db.transaction(|tx| {
        runs += 1;
        if runs == 1 {
            db.put(b"k", b"x")?;
        }
        let mut v = tx.get_for_update(b"k")?.unwrap();
        v.push(b'!');
        tx.put(b"k", v)
    })
    .unwrap();
    assert_eq!(runs, 2);
    assert_eq!(db.get(b"k").unwrap(), Some(b"x!".to_vec()));
}

fn counter_from_threads(optimistic: bool) {
    let (_dir, db) = open_new("txn-counter");
    const THREADS: u32 = 8;
    const EACH: u32 = 50;
    let runs = AtomicU32::new(0);
    let opts = TxnOptions { optimistic, max_attempts: 1000, ..TxnOptions::default() };
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..EACH {
                    db.transaction_with(&opts, |tx| {
                        runs.fetch_add(1, Ordering::Relaxed);
                        let n: u32 = match tx.get_for_update(b"counter")? {
                            Some(v) => std::str::from_utf8(&v).unwrap().parse().unwrap(),
                            None => 0,
                        };
                        tx.put(b"counter", (n + 1).to_string())
                    })
                    .unwrap();
                }
            });
        }
    });
    let total = (THREADS * EACH).to_string();
    assert_eq!(
        db.get(b"counter").unwrap(),
        Some(total.into_bytes()),
        "runs: {}",
        runs.load(Ordering::Relaxed)
    );
}

#[test]
fn counter_from_threads_pessimistic() {
    counter_from_threads(false);
}

#[test]
fn counter_from_threads_optimistic() {
    counter_from_threads(true);
}

/// Begins a sync transaction named NAME, writes KEY = VALUE and prepares it.
fn prepared<'db>(db: &'db Db, name: &str, key: &[u8], value: &[u8]) -> ravel::Txn<'db> {
    let mut tx = db.begin(&TxnOptions { sync: true, ..TxnOptions::default() }).unwrap();
    tx.set_name(name).unwrap();
    assert_eq!(tx.name(), Some(name));
    tx.put(key, value).unwrap();
    tx.prepare().unwrap();
    tx
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[test]
fn two_phase_commit_survives_reopen() {
    let dir = TempDir::new("txn-2pc");
    let db = Db::open(dir.join("db"), &options()).unwrap();
    let mut tx = prepared(&db, "xfer-1", b"acct", b"prepared value");
    assert_eq!(db.get(b"acct").unwrap(), None, "a prepared write is visible");
    assert_eq!(tx.get(b"acct").unwrap(), Some(b"prepared value".to_vec()));
    assert_eq!(tx.put(b"more", b"x").unwrap_err().code(), Code::Invalid);
    drop(tx); // stays prepared
    drop(prepared(&db, "xfer-2", b"other", b"rolled back later"));
    assert_eq!(sorted(db.prepared_transactions().unwrap()), ["xfer-1", "xfer-2"]);
    db.close().unwrap();

    let db = Db::open(dir.join("db"), &Options::new().unwrap()).unwrap();
    assert_eq!(sorted(db.prepared_transactions().unwrap()), ["xfer-1", "xfer-2"]);
    assert_eq!(db.get(b"acct").unwrap(), None);
    assert_eq!(db.get(b"other").unwrap(), None);
    assert_eq!(db.recover_transaction("no-such").unwrap_err().code(), Code::NotFound);
    let r = db.recover_transaction("xfer-1").unwrap();
    assert_eq!(r.name(), Some("xfer-1"));
    r.commit().unwrap();
    assert_eq!(db.get(b"acct").unwrap(), Some(b"prepared value".to_vec()));
    db.recover_transaction("xfer-2").unwrap().rollback().unwrap();
    assert_eq!(db.get(b"other").unwrap(), None);
    assert!(db.prepared_transactions().unwrap().is_empty());
    db.close().unwrap();

    let db = Db::open(dir.join("db"), &Options::new().unwrap()).unwrap();
    assert!(db.prepared_transactions().unwrap().is_empty());
    assert_eq!(db.get(b"acct").unwrap(), Some(b"prepared value".to_vec()));
    assert_eq!(db.get(b"other").unwrap(), None);
}

#[test]
fn set_name_checks() {
    let (_dir, db) = open_new("txn-names");
    let mut tx = db.begin(&pessimistic()).unwrap();
    assert_eq!(tx.set_name("nul\0inside").unwrap_err().code(), Code::Invalid);
    assert_eq!(tx.set_name("").unwrap_err().code(), Code::Invalid);
    tx.set_name("ok").unwrap();
    assert_eq!(tx.set_name("again").unwrap_err().code(), Code::Invalid);
    assert_eq!(tx.name(), Some("ok"));
}
