//! lookups.rs -- counts the engine lookups (ravel get calls) the binding
//! makes on the calling thread, for the crate's own tests: with
//! `cfg(test)` a thread-local counter, otherwise nothing at all.

#[cfg(test)]
thread_local! {
    static LOOKUPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts N engine lookups about to be made by this thread.
#[inline(always)]
pub(crate) fn count(n: usize) {
    #[cfg(test)]
    LOOKUPS.with(|c| c.set(c.get() + n as u64));
    #[cfg(not(test))]
    let _ = n;
}

/// The engine lookups this thread has made so far.
#[cfg(test)]
pub(crate) fn made() -> u64 {
    LOOKUPS.with(|c| c.get())
}

/// Every get-like call reads a value of any size (empty, small, a block,
/// 64 KiB, 1 MiB; in the memtable and in a table file) whole and with one
/// engine lookup; get_into_vec with a too-small buffer with two.
#[cfg(test)]
mod tests {
    use super::made;
    use crate::{Db, Options, TxnOptions};

    const SIZES: [usize; 7] = [0, 1, 511, 4096, 4097, 65536, 1 << 20];

    /// N bytes that differ with N and position.
    fn patterned(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + n) as u8).collect()
    }

    /// F's result and the engine lookups it made.
    fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
        let before = made();
        let result = f();
        (result, made() - before)
    }

    fn open(label: &str) -> (std::path::PathBuf, Db) {
        let dir = std::env::temp_dir().join(format!("ravel-rs-lookups-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = Options::new().unwrap().with("create_if_missing", true).unwrap();
        let db = Db::open(&dir, &opts).unwrap();
        (dir, db)
    }

    #[test]
    fn every_get_reads_any_size_with_one_lookup() {
        let (dir, db) = open("sizes");
        for flush in [false, true] {
            for size in SIZES {
                let key = format!("key-{size}");
                let value = patterned(size);
                db.put(&key, &value).unwrap();
                if flush {
                    db.flush().unwrap();
                }
                let what = format!("size {size} (flushed {flush})");
                let expect = Some(value.clone());
                assert_eq!(counted(|| db.get(&key).unwrap()), (expect.clone(), 1), "{what}: get");
                let mut buf = Vec::new();
                assert_eq!(
                    counted(|| db.get_into_vec(&key, &mut buf).unwrap()),
                    (true, 1),
                    "{what}: get_into_vec"
                );
                assert_eq!(buf, value, "{what}: get_into_vec");
                // BUF now fits: one lookup again, through ravel_get_into
                assert_eq!(counted(|| db.get_into_vec(&key, &mut buf).unwrap()), (true, 1), "{what}: reused");
                assert_eq!(buf, value, "{what}: reused");
                let mut exact = vec![0u8; size];
                assert_eq!(
                    counted(|| db.get_into(&key, &mut exact).unwrap()),
                    (Some(size), 1),
                    "{what}: get_into"
                );
                assert_eq!(exact, value, "{what}: get_into");
                let (vals, n) = counted(|| db.multi_get(&[key.as_bytes(), b"absent"]).unwrap());
                assert_eq!((vals, n), (vec![expect.clone(), None], 2), "{what}: multi_get");
                let snap = db.snapshot().unwrap();
                assert_eq!(counted(|| snap.get(&key).unwrap()), (expect.clone(), 1), "{what}: snapshot get");
                let mut sbuf = Vec::new();
                assert_eq!(
                    counted(|| snap.get_into_vec(&key, &mut sbuf).unwrap()),
                    (true, 1),
                    "{what}: snapshot"
                );
                assert_eq!(sbuf, value, "{what}: snapshot get_into_vec");
                drop(snap);
                let txn = db.begin(&TxnOptions::default()).unwrap();
                assert_eq!(counted(|| txn.get(&key).unwrap()), (expect.clone(), 1), "{what}: txn get");
                assert_eq!(
                    counted(|| txn.get_for_update(&key).unwrap()),
                    (expect, 1),
                    "{what}: get_for_update"
                );
                txn.rollback().unwrap();
            }
        }
        assert_eq!(counted(|| db.get(b"absent").unwrap()), (None, 1));
        let mut buf = Vec::with_capacity(8);
        assert_eq!(counted(|| db.get_into_vec(b"absent", &mut buf).unwrap()), (false, 1));
        drop(db);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn get_into_vec_too_small_reads_again_once() {
        let (dir, db) = open("small");
        let value = patterned(1 << 20);
        db.put(b"k", &value).unwrap();
        let mut buf = Vec::with_capacity(10);
        buf.extend_from_slice(b"old");
        assert_eq!(counted(|| db.get_into_vec(b"k", &mut buf).unwrap()), (true, 2));
        assert_eq!(buf, value);
        drop(db);
        let _ = std::fs::remove_dir_all(dir);
    }
}
