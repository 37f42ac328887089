//! iter.rs -- iterators: `Iter`, the cursor over one fixed state of a
//! database with ravel's own moves (seek, next, prev, ...), and
//! `RangeIter`, a std `Iterator` over the keys of a range, forward or
//! backward, built on it (ravel enforces the range: the cursor's bounds,
//! `ravel_iter_set_bounds`).

use std::ffi::{c_int, c_void};
use std::iter::FusedIterator;
use std::marker::PhantomData;
use std::ptr::NonNull;

use ravel_sys as sys;

use crate::db::Db;
use crate::error::{check, Code, Error, Result};
use crate::text::bytes_ptr;

/// A cursor over a fixed state of a [`Db`] (the state when it was made, or
/// its [`Snapshot`](crate::Snapshot)'s), in bytewise key order.  Writes
/// made after it was created are invisible to it.
///
/// It borrows what it reads (the `Db` or the `Snapshot`), so it cannot
/// outlive it:
///
/// ```compile_fail,E0597
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-iter-{}", std::process::id()));
/// let mut it = {
///     let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
///     db.iter()? // error: `db` does not live long enough
/// };
/// it.seek_to_first()?;
/// # Ok::<(), ravel::Error>(())
/// ```
///
/// Moving it (next, prev, a seek) needs `&mut self`, so the slices
/// returned by [`key`](Iter::key) and [`value`](Iter::value) cannot be
/// held across a move:
///
/// ```compile_fail,E0502
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-iter2-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// let mut it = db.iter()?;
/// it.seek_to_first()?;
/// let key = it.key();
/// it.next()?; // error: cannot borrow `it` as mutable because it is also borrowed as immutable
/// println!("{key:?}");
/// # Ok::<(), ravel::Error>(())
/// ```
///
/// Copying the key first compiles:
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-iter3-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// let mut it = db.iter()?;
/// it.seek_to_first()?;
/// let key = it.key().map(|k| k.to_vec());
/// it.next()?;
/// assert_eq!(key.as_deref(), Some(&b"a"[..]));
/// assert_eq!(it.key(), Some(&b"b"[..]));
/// drop(it);
/// db.close()?;
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), ravel::Error>(())
/// ```
pub struct Iter<'a> {
    raw: NonNull<sys::ravel_iter>,
    /// The error of the last move that failed, with its message, for
    /// `status`, which returns only the code.
    last_error: Option<Error>,
    _reads: PhantomData<&'a Db>,
}

// SAFETY: ravel.h: a ravel_iter "must be used by one thread at a time";
// it has no affinity to the thread that made it (ravel_iter_free drops an
// atomic count), so moving it is allowed.  PhantomData<&Db> keeps it Send
// only because Db is Sync.  Not Sync: &Iter gives key/value/valid/status,
// which two threads must not call at once.
unsafe impl Send for Iter<'_> {}

impl<'a> Iter<'a> {
    pub(crate) fn new(raw: NonNull<sys::ravel_iter>) -> Iter<'a> {
        Iter { raw, last_error: None, _reads: PhantomData }
    }

    /// Keeps the error of a failed move for `status`.
    fn moved(&mut self, rc: c_int) -> Result<()> {
        let result = check(rc);
        if let Err(e) = &result {
            self.last_error = Some(e.clone());
        }
        result
    }

    /// Positions at the first key >= KEY.
    pub fn seek(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let k = key.as_ref();
        // SAFETY: the iterator is live and ours (&mut); K is valid for its length.
        let rc = unsafe { sys::ravel_iter_seek(self.raw.as_ptr(), bytes_ptr(k), k.len()) };
        self.moved(rc)
    }

    /// Positions at the last key <= KEY.
    pub fn seek_for_prev(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let k = key.as_ref();
        // SAFETY: as in seek.
        let rc = unsafe { sys::ravel_iter_seek_for_prev(self.raw.as_ptr(), bytes_ptr(k), k.len()) };
        self.moved(rc)
    }

    /// Positions at the first key.
    pub fn seek_to_first(&mut self) -> Result<()> {
        // SAFETY: the iterator is live and ours.
        let rc = unsafe { sys::ravel_iter_seek_to_first(self.raw.as_ptr()) };
        self.moved(rc)
    }

    /// Positions at the last key.
    pub fn seek_to_last(&mut self) -> Result<()> {
        // SAFETY: the iterator is live and ours.
        let rc = unsafe { sys::ravel_iter_seek_to_last(self.raw.as_ptr()) };
        self.moved(rc)
    }

    /// Moves to the next key; [`Code::Invalid`] if not [`valid`](Iter::valid),
    /// or the error that stopped the iterator (see [`status`](Iter::status)).
    #[allow(clippy::should_implement_trait)] // a cursor move, not Iterator::next
    pub fn next(&mut self) -> Result<()> {
        // SAFETY: the iterator is live and ours.
        let rc = unsafe { sys::ravel_iter_next(self.raw.as_ptr()) };
        self.moved(rc)
    }

    /// Moves to the previous key; [`Code::Invalid`] if not [`valid`](Iter::valid),
    /// or the error that stopped the iterator (see [`status`](Iter::status)).
    pub fn prev(&mut self) -> Result<()> {
        // SAFETY: the iterator is live and ours.
        let rc = unsafe { sys::ravel_iter_prev(self.raw.as_ptr()) };
        self.moved(rc)
    }

    /// True if positioned at an entry.
    pub fn valid(&self) -> bool {
        // SAFETY: the iterator is live; not Sync, so only this thread uses it.
        unsafe { sys::ravel_iter_valid(self.raw.as_ptr()) != 0 }
    }

    /// The current key, or `None` if not valid.  Borrowed until the
    /// iterator moves.
    pub fn key(&self) -> Option<&[u8]> {
        let mut len = 0usize;
        // SAFETY: the iterator is live; LEN is a valid out-pointer.
        let p = unsafe { sys::ravel_iter_key(self.raw.as_ptr(), &mut len) };
        // SAFETY: P holds LEN bytes valid until the iterator moves or is
        // freed, both of which need &mut self or self, so not while the
        // returned slice (borrowing &self) lives.
        (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
    }

    /// The current value, or `None` if not valid.  Borrowed until the
    /// iterator moves.
    pub fn value(&self) -> Option<&[u8]> {
        let mut len = 0usize;
        // SAFETY: as in key.
        let p = unsafe { sys::ravel_iter_value(self.raw.as_ptr(), &mut len) };
        // SAFETY: as in key.
        (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
    }

    /// Ok, or the error that stopped the iterator (with the message its
    /// failed move had).  Check it when [`valid`](Iter::valid) turns false
    /// to tell the end of the data from a failure.  An iterator stops at
    /// its first error (a damaged block, a failed read) for good, as in C:
    /// it is never valid again, and every later move returns that error.
    pub fn status(&self) -> Result<()> {
        // SAFETY: the iterator is live.
        let rc = unsafe { sys::ravel_iter_status(self.raw.as_ptr()) };
        if rc == sys::RAVEL_OK {
            return Ok(());
        }
        match &self.last_error {
            Some(e) if e.raw_code() == rc => Err(e.clone()),
            _ => Err(Error::new(Code::from_raw(rc), "the iterator stopped")),
        }
    }

    /// A std iterator over the entries with START <= key < STOP, in key
    /// order (`None`: no bound).  It positions this iterator itself.
    pub fn range(self, start: Option<&[u8]>, stop: Option<&[u8]>) -> RangeIter<'a> {
        RangeIter::new(self, start, stop, false)
    }

    /// The entries with START <= key < STOP, from the last to the first.
    pub fn range_rev(self, start: Option<&[u8]>, stop: Option<&[u8]>) -> RangeIter<'a> {
        RangeIter::new(self, start, stop, true)
    }

    /// Makes ravel show only keys with START <= key < STOP (`None`: no
    /// bound); the iterator is left unpositioned, on the same state.
    fn set_bounds(&mut self, start: Option<&[u8]>, stop: Option<&[u8]>) -> Result<()> {
        fn raw(bound: Option<&[u8]>) -> (*const c_void, usize) {
            bound.map_or((std::ptr::null(), 0), |b| (bytes_ptr(b), b.len()))
        }
        let ((lower, llen), (upper, ulen)) = (raw(start), raw(stop));
        // SAFETY: the iterator is live and ours (&mut); each bound is NULL
        // or valid for its length, and ravel copies it.
        let rc = unsafe { sys::ravel_iter_set_bounds(self.raw.as_ptr(), lower, llen, upper, ulen) };
        self.moved(rc)
    }
}

impl Drop for Iter<'_> {
    fn drop(&mut self) {
        // SAFETY: the iterator is live and freed once, before the Db it
        // borrows can be closed.
        unsafe { sys::ravel_iter_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iter").field("key", &self.key()).finish_non_exhaustive()
    }
}

/// Where a [`RangeIter`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// Not positioned yet: the first `next` seeks.
    Start,
    /// At an entry already returned: the next `next` moves first.
    Returned,
    /// Past the range, or after an error was returned.
    Done,
}

/// A std [`Iterator`] over the entries of a key range, from
/// [`Db::range`], [`Db::range_rev`], [`Iter::range`] and the like: each item
/// is `Ok((key, value))`, copied, or, once, the error that stopped it.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-range-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// for k in ["a", "b", "c", "d"] {
///     db.put(k, k.to_uppercase())?;
/// }
/// let keys = |r: ravel::RangeIter| r.map(|e| e.map(|(k, _)| k)).collect::<Result<Vec<_>, _>>();
/// assert_eq!(keys(db.range(Some(b"b".as_slice()), Some(b"d".as_slice()))?)?, [b"b", b"c"]);
/// assert_eq!(keys(db.range_rev(Some(b"b".as_slice()), None)?)?, [b"d", b"c", b"b"]);
/// db.close()?;
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), ravel::Error>(())
/// ```
pub struct RangeIter<'a> {
    /// Bounded by ravel to the range.
    iter: Iter<'a>,
    /// The failure to set the bounds, the first item.
    bounds_error: Option<Error>,
    reverse: bool,
    position: Position,
}

impl<'a> RangeIter<'a> {
    fn new(mut iter: Iter<'a>, start: Option<&[u8]>, stop: Option<&[u8]>, reverse: bool) -> RangeIter<'a> {
        let bounds_error = iter.set_bounds(start, stop).err();
        RangeIter { iter, bounds_error, reverse, position: Position::Start }
    }

    fn step(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match self.position {
            Position::Done => return Ok(None),
            Position::Start => {
                if let Some(e) = self.bounds_error.take() {
                    return Err(e);
                }
                // ravel's bounds put the first (last) key of the range there
                if self.reverse {
                    self.iter.seek_to_last()?
                } else {
                    self.iter.seek_to_first()?
                }
            }
            Position::Returned if self.reverse => self.iter.prev()?,
            Position::Returned => self.iter.next()?,
        }
        if !self.iter.valid() {
            self.iter.status()?;
            return Ok(None);
        }
        let key = self.iter.key().unwrap_or_default().to_vec();
        Ok(Some((key, self.iter.value().unwrap_or_default().to_vec())))
    }
}

impl Iterator for RangeIter<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Ok(Some(entry)) => {
                self.position = Position::Returned;
                Some(Ok(entry))
            }
            Ok(None) => {
                self.position = Position::Done;
                None
            }
            Err(e) => {
                self.position = Position::Done;
                Some(Err(e))
            }
        }
    }
}

impl FusedIterator for RangeIter<'_> {}

impl std::fmt::Debug for RangeIter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeIter")
            .field("iter", &self.iter)
            .field("reverse", &self.reverse)
            .finish_non_exhaustive()
    }
}
