//! getsizes -- the cost of one read through each of the binding's get
//! calls (Db::get, Db::get_into_vec with a fresh and with a reused Vec,
//! Txn::get) for values of 100, 4096 and 65536 bytes: keys of 16 bytes
//! (as many as 64 MiB of values takes, 10,000 at most), written and
//! flushed, then each call made --reads times (200,000) cycling through
//! them; printed as the thread's CPU time per call (ns/op: on a loaded
//! machine wall time says more about the other processes).  One thread.
//!
//!   cargo run --release -p ravel-kv-bench --bin getsizes -- [--reads=N] [--db=DIR]

use ravel::{Db, Options, TxnOptions};

const SIZES: [usize; 3] = [100, 4096, 65536];

fn key(i: usize) -> [u8; 16] {
    let mut k = *b"0000000000000000";
    k[..8].copy_from_slice(&(i as u64).to_be_bytes());
    k
}

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// Linux's CLOCK_THREAD_CPUTIME_ID.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// The CPU time (ns) the calling thread has used.
fn thread_cpu() -> i64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: TS is a valid out-pointer of the layout libc's timespec has
    // on 64-bit Linux.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.sec * 1_000_000_000 + ts.nsec
}

/// CPU ns per call of F(key index) over READS calls cycling through N keys.
fn time(reads: usize, n: usize, mut f: impl FnMut(usize)) -> f64 {
    let start = thread_cpu();
    for i in 0..reads {
        f(i % n);
    }
    (thread_cpu() - start) as f64 / reads as f64
}

fn main() -> ravel::Result<()> {
    let mut reads = 200_000usize;
    let mut dir = std::env::temp_dir().join(format!("ravel-getsizes-{}", std::process::id()));
    for arg in std::env::args().skip(1) {
        if let Some(v) = arg.strip_prefix("--reads=") {
            reads = v.parse().expect("--reads: a number");
        } else if let Some(v) = arg.strip_prefix("--db=") {
            dir = v.into();
        } else {
            eprintln!("usage: getsizes [--reads=N] [--db=DIR]");
            std::process::exit(2);
        }
    }
    for size in SIZES {
        let _ = std::fs::remove_dir_all(&dir);
        let db = Db::open(&dir, &Options::new()?.with("create_if_missing", true)?)?;
        let n = (64 << 20) / size;
        let n = n.min(10_000);
        let value = vec![7u8; size];
        for i in 0..n {
            db.put(key(i), &value)?;
        }
        db.flush()?;
        let get = time(reads, n, |i| {
            db.get(key(i)).unwrap().unwrap();
        });
        let fresh = time(reads, n, |i| {
            let mut buf = Vec::new();
            assert!(db.get_into_vec(key(i), &mut buf).unwrap());
        });
        let mut buf = Vec::new();
        let reused = time(reads, n, |i| {
            assert!(db.get_into_vec(key(i), &mut buf).unwrap());
        });
        let txn = db.begin(&TxnOptions::default())?;
        let txn_get = time(reads, n, |i| {
            txn.get(key(i)).unwrap().unwrap();
        });
        txn.rollback()?;
        println!("value={size} get {get:.0} get_into_vec(new) {fresh:.0} get_into_vec(reused) {reused:.0} txn_get {txn_get:.0} ns/op");
        drop(db);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
