//! Range deletes: [`Db::delete_range`] and [`Batch::delete_range`],
//! RocksDB's DeleteRange (`ravel_delete_range` in ravel.h).

use crate::batch::Batch;
use crate::db::{Db, WriteFlags};
use crate::error::{check, Result};
use crate::text::bytes_ptr;
use ravel_sys as sys;

impl Db {
    /// Deletes every key `k` with `begin <= k < end` (bytewise) as one
    /// operation, at the write's sequence: a snapshot taken before still
    /// sees the keys.  `begin` after `end` is [`Code::Invalid`](crate::Code);
    /// `begin == end` deletes nothing.  Refused once a transaction has
    /// begun on the database (the lock table locks keys, not ranges).
    pub fn delete_range(&self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        self.delete_range_opt(begin, end, WriteFlags::NONE)
    }

    /// [`Db::delete_range`] with FLAGS.
    pub fn delete_range_opt(
        &self,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
        flags: WriteFlags,
    ) -> Result<()> {
        let (b, e) = (begin.as_ref(), end.as_ref());
        // SAFETY: the handle is live (borrowed); B and E are valid for
        // their lengths during the call (ravel copies them).
        check(unsafe {
            sys::ravel_delete_range(self.as_ptr(), flags.bits(), bytes_ptr(b), b.len(), bytes_ptr(e), e.len())
        })
    }
}

impl Batch {
    /// Adds "delete every key in `[begin, end)`", as [`Db::delete_range`]
    /// writes it.
    pub fn delete_range(&mut self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        let (b, e) = (begin.as_ref(), end.as_ref());
        // SAFETY: the batch is live and ours (&mut); B and E are valid for
        // their lengths (ravel copies them).
        check(unsafe {
            sys::ravel_batch_delete_range(self.as_ptr(), bytes_ptr(b), b.len(), bytes_ptr(e), e.len())
        })
    }
}
