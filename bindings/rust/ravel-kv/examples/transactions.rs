use ravel::{Code, Db, Options, TxnOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("ravel-txn-example-{}", std::process::id()));
    let db = Db::open(&dir, &Options::new()?.with("create_if_missing", true)?)?;
    db.put(b"alice", b"100")?;
    db.put(b"bob", b"0")?;

    // begin, read for update (locks the key), write, commit
    let mut tx = db.begin(&TxnOptions::default())?;
    let alice: u32 = String::from_utf8(tx.get_for_update(b"alice")?.unwrap())?.parse()?;
    tx.put(b"alice", (alice - 30).to_string())?;
    tx.put(b"bob", b"30")?;
    assert_eq!(tx.get(b"bob")?, Some(b"30".to_vec())); // its own write
    assert_eq!(db.get(b"bob")?, Some(b"0".to_vec())); // others: not yet
    tx.commit()?;

    // run again on Conflict, TimedOut, Deadlock: threads, one counter
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..100 {
                    let opts = TxnOptions { max_attempts: 100, ..TxnOptions::default() };
                    db.transaction_with(&opts, |tx| {
                        let n: u32 = match tx.get_for_update(b"visits")? {
                            Some(v) => String::from_utf8_lossy(&v).parse().unwrap(),
                            None => 0,
                        };
                        tx.put(b"visits", (n + 1).to_string())
                    })
                    .unwrap();
                }
            });
        }
    });
    assert_eq!(db.get(b"visits")?, Some(b"400".to_vec())); // none lost

    // the error codes a caller retries on
    let late = db.begin(&TxnOptions::default())?;
    db.put(b"alice", b"0")?; // written after late's snapshot
    let err = late.get_for_update(b"alice").unwrap_err();
    assert_eq!(err.code(), Code::Conflict);
    assert!(err.is_retriable());
    drop(late); // rolls back

    db.close()?;
    Ok(std::fs::remove_dir_all(&dir)?)
}
