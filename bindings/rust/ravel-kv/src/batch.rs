//! batch.rs -- a write batch: puts and deletes collected in memory and
//! applied atomically by `Db::write`.

use std::ptr::{self, NonNull};

use ravel_sys as sys;

use crate::error::{check, Result};
use crate::text::bytes_ptr;

/// Puts and deletes applied together by [`Db::write`](crate::Db::write):
/// readers see all of them or none.  Later operations on a key win.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-batch-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// let mut batch = ravel::Batch::new()?;
/// batch.put(b"from", b"90")?;
/// batch.put(b"to", b"110")?;
/// batch.delete(b"pending")?;
/// assert_eq!(batch.count(), 3);
/// db.write(&batch)?;
/// assert_eq!(db.get(b"to")?.as_deref(), Some(&b"110"[..]));
/// db.close()?;
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), ravel::Error>(())
/// ```
pub struct Batch {
    raw: NonNull<sys::ravel_batch>,
}

// SAFETY: ravel.h: a ravel_batch "must be used by one thread at a time";
// it is plain heap data with no affinity to a thread, so it may move.  Not
// Sync: Db::write reads it through &Batch, and two threads must not use
// it at once.
unsafe impl Send for Batch {}

impl Batch {
    /// An empty batch.
    pub fn new() -> Result<Batch> {
        let mut raw = ptr::null_mut();
        // SAFETY: RAW is a valid out-pointer.
        check(unsafe { sys::ravel_batch_new(&mut raw) })?;
        Ok(Batch { raw: NonNull::new(raw).expect("ravel_batch_new gave NULL") })
    }

    /// Adds "set KEY to VALUE".
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let (k, v) = (key.as_ref(), value.as_ref());
        // SAFETY: the batch is live and ours (&mut); K and V are valid for
        // their lengths (ravel copies them).
        check(unsafe {
            sys::ravel_batch_put(self.raw.as_ptr(), bytes_ptr(k), k.len(), bytes_ptr(v), v.len())
        })
    }

    /// Adds "delete KEY".
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let k = key.as_ref();
        // SAFETY: as in put.
        check(unsafe { sys::ravel_batch_delete(self.raw.as_ptr(), bytes_ptr(k), k.len()) })
    }

    /// Removes every operation, keeping the memory for reuse.
    pub fn clear(&mut self) -> Result<()> {
        // SAFETY: the batch is live and ours.
        check(unsafe { sys::ravel_batch_clear(self.raw.as_ptr()) })
    }

    /// The number of operations in the batch.
    pub fn count(&self) -> u32 {
        // SAFETY: the batch is live; not Sync, so only this thread uses it.
        unsafe { sys::ravel_batch_count(self.raw.as_ptr()) }
    }

    /// True if the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The raw batch, for Db::write.
    pub(crate) fn as_ptr(&self) -> *mut sys::ravel_batch {
        self.raw.as_ptr()
    }

    /// Wraps a batch ravel made (ravel_batch_from_data), which this
    /// `Batch` now owns.
    pub(crate) fn from_raw(raw: NonNull<sys::ravel_batch>) -> Batch {
        Batch { raw }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // SAFETY: the batch is live and freed once.
        unsafe { sys::ravel_batch_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch").field("count", &self.count()).finish()
    }
}
