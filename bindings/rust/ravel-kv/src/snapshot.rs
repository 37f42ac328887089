//! snapshot.rs -- a snapshot: the state of a database at one moment,
//! which reads through it keep seeing whatever is written after.

use std::ptr::NonNull;

use ravel_sys as sys;

use crate::db::Db;
use crate::error::Result;
use crate::iter::{Iter, RangeIter};

/// A fixed state of a [`Db`], from [`Db::snapshot`]; released on drop.
///
/// It borrows the `Db`, so the database cannot be closed while it lives:
///
/// ```compile_fail,E0505
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-snap-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// let snap = db.snapshot()?;
/// db.close()?; // error: cannot move out of `db` because it is borrowed
/// drop(snap);
/// # Ok::<(), ravel::Error>(())
/// ```
///
/// Releasing the snapshot first compiles (and is what the line above
/// must do):
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-snap-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// let snap = db.snapshot()?;
/// db.put(b"k", b"after")?;
/// assert_eq!(snap.get(b"k")?, None);
/// drop(snap);
/// db.close()?;
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), ravel::Error>(())
/// ```
pub struct Snapshot<'db> {
    db: &'db Db,
    raw: NonNull<sys::ravel_snapshot>,
}

// SAFETY: a snapshot is only ever passed to functions that take its
// ravel_db (ravel_get, ravel_get_into, ravel_iter_new,
// ravel_snapshot_release, and ravel_multi_get through read options of the
// call's own), which ravel.h makes safe from many threads at once, and to
// ravel_snapshot_sequence, which reads a field fixed at acquisition.
// ravel.h does not list it among the objects to be used by one thread at a
// time.  Release needs the Snapshot by value (Drop).
unsafe impl Send for Snapshot<'_> {}
// SAFETY: see Send above: reads through &Snapshot are thread-safe.
unsafe impl Sync for Snapshot<'_> {}

impl<'db> Snapshot<'db> {
    pub(crate) fn new(db: &'db Db, raw: NonNull<sys::ravel_snapshot>) -> Snapshot<'db> {
        Snapshot { db, raw }
    }

    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> u64 {
        // SAFETY: the snapshot is live until drop.
        unsafe { sys::ravel_snapshot_sequence(self.raw.as_ptr()) }
    }

    /// The value of KEY as of the snapshot, or `None`.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.db.get_at(self.raw.as_ptr(), key.as_ref())
    }

    /// As [`Db::get_into`], as of the snapshot: a retry with a larger
    /// buffer reads the same value.
    pub fn get_into(&self, key: impl AsRef<[u8]>, buf: &mut [u8]) -> Result<Option<usize>> {
        self.db.get_into_at(self.raw.as_ptr(), key.as_ref(), buf)
    }

    /// As [`Db::get_into_vec`], as of the snapshot.
    pub fn get_into_vec(&self, key: impl AsRef<[u8]>, buf: &mut Vec<u8>) -> Result<bool> {
        self.db.get_into_vec_at(self.raw.as_ptr(), key.as_ref(), buf)
    }

    /// As [`Db::multi_get`], as of the snapshot.
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        self.db.multi_get_at(self.raw.as_ptr(), keys)
    }

    /// An iterator over the snapshot's state (it borrows the snapshot).
    pub fn iter(&self) -> Result<Iter<'_>> {
        self.db.iter_at(self.raw.as_ptr())
    }

    /// As [`Db::range`], as of the snapshot.
    pub fn range(&self, start: Option<&[u8]>, stop: Option<&[u8]>) -> Result<RangeIter<'_>> {
        Ok(self.iter()?.range(start, stop))
    }

    /// As [`Db::range_rev`], as of the snapshot.
    pub fn range_rev(&self, start: Option<&[u8]>, stop: Option<&[u8]>) -> Result<RangeIter<'_>> {
        Ok(self.iter()?.range_rev(start, stop))
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        // SAFETY: the snapshot belongs to self.db, which outlives it; it is
        // released once.  It cannot fail for a live snapshot of its db.
        unsafe { sys::ravel_snapshot_release(self.db.as_ptr(), self.raw.as_ptr()) };
    }
}

impl std::fmt::Debug for Snapshot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("sequence", &self.sequence()).finish()
    }
}
