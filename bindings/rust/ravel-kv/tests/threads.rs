//! Several threads sharing one Db (it is Send + Sync), with invariants
//! checked while they run: batches are seen whole, values never go back,
//! each thread gets the message of its own failure.  Also the shared
//! block cache and write controller.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{open_new, options, TempDir};
use ravel::{Batch, Cache, Code, Db, Options, WriteController};

const WRITERS: u32 = 4;
const ROUNDS: u32 = 150;

fn decode(v: &[u8]) -> u32 {
    std::str::from_utf8(v).unwrap().parse().unwrap()
}

/// Writer T sets "t{T}/a" and "t{T}/b" to round R in one batch, for each
/// round; readers check in snapshots that a == b, and that the values a
/// reader sees never decrease.
#[test]
fn batches_are_seen_whole_by_concurrent_readers() {
    let (_dir, db) = open_new("threads");
    let writers_done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    let mut batch = Batch::new().unwrap();
                    for r in 0..ROUNDS {
                        batch.clear().unwrap();
                        batch.put(format!("t{t}/a"), r.to_string()).unwrap();
                        batch.put(format!("t{t}/b"), r.to_string()).unwrap();
                        db.write(&batch).unwrap();
                        if r % 50 == 0 {
                            db.put(format!("t{t}/log{r:04}"), b"x").unwrap();
                        }
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (db, writers_done) = (&db, &writers_done);
                s.spawn(move || {
                    let mut last_seen = [0u32; WRITERS as usize];
                    let mut checks = 0u64;
                    // at least a few rounds, then until the writers finish
                    while checks < 20 || !writers_done.load(Ordering::Acquire) {
                        let snap = db.snapshot().unwrap();
                        for t in 0..WRITERS {
                            let a = snap.get(format!("t{t}/a")).unwrap();
                            let b = snap.get(format!("t{t}/b")).unwrap();
                            assert_eq!(a, b, "writer {t}'s batch seen in part");
                            if let Some(a) = a {
                                let r = decode(&a);
                                assert!(r >= last_seen[t as usize], "writer {t} went back");
                                last_seen[t as usize] = r;
                            }
                        }
                        // a scan of the snapshot sees the same pairs
                        let entries: Vec<_> = snap.range(None, None).unwrap().map(Result::unwrap).collect();
                        for t in 0..WRITERS {
                            let find =
                                |k: String| entries.iter().find(|e| e.0 == k.as_bytes()).map(|e| e.1.clone());
                            assert_eq!(find(format!("t{t}/a")), find(format!("t{t}/b")));
                        }
                        checks += 1;
                    }
                    checks
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        writers_done.store(true, Ordering::Release);
        for r in readers {
            assert!(r.join().unwrap() >= 20);
        }
    });
    for t in 0..WRITERS {
        assert_eq!(decode(&db.get(format!("t{t}/a")).unwrap().unwrap()), ROUNDS - 1);
        assert_eq!(
            db.range(Some(format!("t{t}/log").as_bytes()), Some(format!("t{t}/loh").as_bytes()))
                .unwrap()
                .count(),
            3
        );
    }
    let seq: u64 = db.property("ravel.last-sequence").unwrap().trim().parse().unwrap();
    assert_eq!(seq, u64::from(WRITERS * (ROUNDS * 2 + 3)));
    db.close().unwrap();
}

#[test]
fn each_thread_gets_the_message_of_its_own_failure() {
    let (_dir, db) = open_new("threadmsg");
    std::thread::scope(|s| {
        for t in 0..4 {
            let db = &db;
            s.spawn(move || {
                for i in 0..200 {
                    let name = format!("ravel.bogus-{t}-{i}");
                    let err = db.property(&name).unwrap_err();
                    assert_eq!(err.code(), Code::NotFound);
                    assert!(err.message().contains(&name), "thread {t} got {err}");
                    db.put(format!("{t}-{i}"), b"v").unwrap();
                }
            });
        }
    });
    db.close().unwrap();
}

#[test]
fn an_arc_db_moves_between_threads_and_closes_after() {
    let (_dir, db) = open_new("arc");
    let db = Arc::new(db);
    let handles: Vec<_> = (0..3)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for i in 0..100 {
                    db.put(format!("{t}/{i:03}"), format!("{i}")).unwrap();
                }
                db.flush_wal(true).unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let db = Arc::try_unwrap(db).expect("threads are done");
    assert_eq!(db.range(None, None).unwrap().count(), 300);
    db.close().unwrap();
}

#[test]
fn a_snapshot_is_shared_and_an_iterator_moved_between_threads() {
    let (_dir, db) = open_new("snapthreads");
    for i in 0..100 {
        db.put(format!("{i:03}"), b"before").unwrap();
    }
    let snap = db.snapshot().unwrap();
    let mut it = db.iter().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..100 {
                db.put(format!("{i:03}"), b"after").unwrap();
            }
        });
        for _ in 0..2 {
            s.spawn(|| {
                for i in 0..100 {
                    assert_eq!(snap.get(format!("{i:03}")).unwrap().unwrap(), b"before");
                }
            });
        }
        s.spawn(move || {
            it.seek_to_first().unwrap();
            let mut n = 0;
            while it.valid() {
                assert_eq!(it.value(), Some(&b"before"[..]));
                it.next().unwrap();
                n += 1;
            }
            assert_eq!(n, 100);
        });
    });
    drop(snap);
    assert_eq!(db.get(b"050").unwrap().unwrap(), b"after");
    db.close().unwrap();
}

#[test]
fn a_shared_cache_serves_two_databases() {
    let dir = TempDir::new("cache");
    let cache = Cache::new(8 << 20).unwrap();
    assert_eq!(cache.capacity(), 8 << 20);
    assert_eq!(cache.usage(), 0);
    let mut opts = options();
    opts.set_cache(Some(&cache)).unwrap();
    let db1 = Db::open(dir.join("one"), &opts).unwrap();
    let db2 = Db::open(dir.join("two"), &opts).unwrap();
    drop(opts);
    for db in [&db1, &db2] {
        for i in 0..200 {
            db.put(format!("{i:04}"), [b'x'; 100]).unwrap();
        }
        db.flush().unwrap();
    }
    let _ = db1.get(b"0100").unwrap().unwrap();
    let after_one = cache.usage();
    assert!(after_one > 0);
    let _ = db2.get(b"0100").unwrap().unwrap();
    assert!(cache.usage() > after_one, "the second database's block went to the same cache");
    let reported: u64 = db1.property("ravel.block-cache-usage").unwrap().trim().parse().unwrap();
    assert_eq!(reported, cache.usage());
    // the databases hold their own references: the Cache value may go first
    drop(cache);
    assert!(db2.get(b"0199").unwrap().is_some());
    db1.close().unwrap();
    db2.close().unwrap();

    let mut opts = Options::new().unwrap();
    opts.set_cache(None).unwrap();
}

#[test]
fn a_shared_write_controller_serves_two_databases() {
    let dir = TempDir::new("wc");
    assert_eq!(WriteController::new(10).unwrap_err().code(), Code::Invalid);
    let wc = WriteController::new(64 << 20).unwrap();
    let mut opts = options();
    opts.set_write_controller(Some(&wc)).unwrap();
    drop(wc);
    let db1 = Db::open(dir.join("one"), &opts).unwrap();
    let db2 = Db::open(dir.join("two"), &opts).unwrap();
    opts.set_write_controller(None).unwrap();
    std::thread::scope(|s| {
        for db in [&db1, &db2] {
            s.spawn(move || {
                for i in 0..200 {
                    db.put(format!("{i:04}"), b"v").unwrap();
                }
            });
        }
    });
    assert_eq!(db1.property("ravel.is-write-stopped").unwrap().trim(), "0");
    assert_eq!(db2.range(None, None).unwrap().count(), 200);
    db1.close().unwrap();
    db2.close().unwrap();
}
