//! feed.rs -- the change feed (issue 22): [`Db::updates_since`] and
//! [`Updates`], an iterator over the committed batches read back from the
//! WAL; and what a follower needs of a [`Batch`]: its operations
//! ([`Batch::ops`]), its sequence, its bytes ([`Batch::data`]) and
//! [`Batch::from_data`].

use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use ravel_sys as sys;

use crate::batch::Batch;
use crate::db::Db;
use crate::error::{check, Result};
use crate::text::bytes_ptr;

/// One operation of a batch, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Remove `key`.
    Delete {
        /// The key.
        key: &'a [u8],
    },
    /// Remove every key in `[begin, end)`.
    DeleteRange {
        /// The first key removed.
        begin: &'a [u8],
        /// The first key after the range (kept).
        end: &'a [u8],
    },
}

/// The operations of a batch in order, from [`Batch::ops`].
pub struct Ops<'a> {
    batch: &'a Batch,
    pos: usize,
    done: bool,
}

/// SAFETY helper: a slice of N bytes at P (empty for NULL or 0).
///
/// # Safety
/// P is valid for N bytes for 'a.
unsafe fn slice<'a>(p: *const c_void, n: usize) -> &'a [u8] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p.cast(), n)
    }
}

impl<'a> Iterator for Ops<'a> {
    type Item = Result<Op<'a>>;

    fn next(&mut self) -> Option<Result<Op<'a>>> {
        if self.done {
            return None;
        }
        let (mut op, mut key, mut klen, mut val, mut vlen) = (0 as c_int, ptr::null(), 0, ptr::null(), 0);
        // SAFETY: the batch is live for 'a and not changed meanwhile (the
        // borrow is shared, Batch is not Sync); every pointer is a valid
        // out-pointer.
        let rc = unsafe {
            sys::ravel_batch_next_op(
                self.batch.as_ptr(),
                &mut self.pos,
                &mut op,
                &mut key,
                &mut klen,
                &mut val,
                &mut vlen,
            )
        };
        if rc == sys::RAVEL_NOTFOUND {
            self.done = true;
            return None;
        }
        if let Err(e) = check(rc) {
            self.done = true;
            return Some(Err(e));
        }
        // SAFETY: KEY and VAL point into the batch, borrowed for 'a.
        let key = unsafe { slice(key, klen) };
        Some(Ok(if op == sys::RAVEL_OP_PUT {
            Op::Put { key, value: unsafe { slice(val, vlen) } }
        } else if op == sys::RAVEL_OP_DELETE_RANGE {
            Op::DeleteRange { begin: key, end: unsafe { slice(val, vlen) } }
        } else {
            Op::Delete { key }
        }))
    }
}

impl Batch {
    /// The batch's operations, in the order they were added (and are
    /// applied).
    pub fn ops(&self) -> Ops<'_> {
        Ops { batch: self, pos: 0, done: false }
    }

    /// The sequence of the batch's first operation for a batch from the
    /// change feed (operation i has `sequence() + i`), 0 for a batch
    /// never written.
    pub fn sequence(&self) -> u64 {
        // SAFETY: the batch is live.
        unsafe { sys::ravel_batch_sequence(self.as_ptr()) }
    }

    /// The batch's bytes (its sequence, count and operations):
    /// [`Batch::from_data`] makes the same batch again, in this process or
    /// another.
    pub fn data(&self) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: the batch is live; the bytes point into it and stay
        // valid while it is borrowed and unchanged.
        unsafe {
            let p = sys::ravel_batch_data(self.as_ptr(), &mut len);
            slice(p, len)
        }
    }

    /// A new batch holding a copy of DATA (from [`Batch::data`]), checked
    /// whole first: [`Code::Corrupt`](crate::Code::Corrupt) naming what is
    /// wrong and its byte offset.
    pub fn from_data(data: &[u8]) -> Result<Batch> {
        let mut raw = ptr::null_mut();
        // SAFETY: DATA is valid for its length; RAW is a valid out-pointer.
        check(unsafe { sys::ravel_batch_from_data(bytes_ptr(data), data.len(), &mut raw) })?;
        Ok(Batch::from_raw(NonNull::new(raw).expect("ravel_batch_from_data gave NULL")))
    }
}

/// The change feed of a database, from [`Db::updates_since`]: each
/// committed batch, in commit order, as a [`Batch`] of its own (apply it
/// with [`Db::write`], read it with [`Batch::ops`], send it with
/// [`Batch::data`]).
///
/// `next` returns `None` at the end of what the WAL holds now; calling it
/// again later goes on with the batches committed since, so a follower
/// loops, pausing on `None`.  A follower too far behind gets an error with
/// [`Code::Expired`](crate::Code::Expired), after which every call fails
/// the same way.  It borrows the database, and is freed when dropped.
pub struct Updates<'a> {
    raw: NonNull<sys::ravel_updates>,
    _db: PhantomData<&'a Db>,
}

// SAFETY: ravel.h: an iterator is used by one thread at a time; it holds
// no thread affinity, so it may move (not Sync: next needs &mut anyway).
unsafe impl Send for Updates<'_> {}

impl Db {
    /// The change feed from sequence SEQ on: the first batch is the one
    /// holding SEQ (whole, even when SEQ is inside it), or the first after
    /// it; 0 means from the first.  A database opened `read_only` can be
    /// followed too.  [`Code::Expired`](crate::Code::Expired) if SEQ is no
    /// longer in the WAL (see the options `wal_ttl_seconds` and
    /// `wal_size_limit_mb`).
    pub fn updates_since(&self, seq: u64) -> Result<Updates<'_>> {
        let mut raw = ptr::null_mut();
        // SAFETY: the handle is live; RAW is a valid out-pointer.
        check(unsafe { sys::ravel_updates_since(self.as_ptr(), seq, 0, &mut raw) })?;
        Ok(Updates { raw: NonNull::new(raw).expect("ravel_updates_since gave NULL"), _db: PhantomData })
    }
}

impl Updates<'_> {
    /// The last sequence the feed has passed: the last batch's last one,
    /// or more when it passed records the feed does not show (a prepare, a
    /// rollback); 0 before the first.  A follower that stops resumes with
    /// `updates_since(last_sequence() + 1)`.
    pub fn last_sequence(&self) -> u64 {
        // SAFETY: the iterator is live.
        unsafe { sys::ravel_updates_last_sequence(self.raw.as_ptr()) }
    }
}

impl Iterator for Updates<'_> {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        // SAFETY: the iterator is live and ours (&mut).
        let rc = unsafe { sys::ravel_updates_next(self.raw.as_ptr()) };
        if rc == sys::RAVEL_NOTFOUND {
            return None;
        }
        if let Err(e) = check(rc) {
            return Some(Err(e));
        }
        let mut len = 0usize;
        // SAFETY: after RAVEL_OK the iterator has a current batch, valid
        // until its next call; its bytes are copied by from_data.
        let data = unsafe {
            let b = sys::ravel_updates_batch(self.raw.as_ptr());
            slice(sys::ravel_batch_data(b, &mut len), len)
        };
        Some(Batch::from_data(data))
    }
}

impl Drop for Updates<'_> {
    fn drop(&mut self) {
        // SAFETY: the iterator is live and freed once, before the Db it
        // borrows is closed.
        unsafe { sys::ravel_updates_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Updates<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Updates").field("last_sequence", &self.last_sequence()).finish()
    }
}
