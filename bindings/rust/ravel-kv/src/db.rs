//! db.rs -- an open database: opening and closing it, writes, point reads
//! and the maintenance calls (flush, compaction, verification,
//! properties); and [`destroy`], deleting a closed one.  Snapshots and iterators borrow a `Db` (snapshot.rs,
//! iter.rs), which is what makes closing it under them impossible.

use std::ffi::{c_char, c_int, c_void};
use std::ops::BitOr;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use ravel_sys as sys;

use crate::batch::Batch;
use crate::error::{check, Result};
use crate::iter::{Iter, RangeIter};
use crate::options::Options;
use crate::snapshot::Snapshot;
use crate::text::{bytes_ptr, c_path, c_string, take_ravel_text};

/// Flags of a write ([`Db::put_opt`], [`Db::delete_opt`],
/// [`Db::write_opt`]), combined with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct WriteFlags(c_int);

impl WriteFlags {
    /// No flag: the write reaches the WAL (the OS) before it returns.
    pub const NONE: WriteFlags = WriteFlags(0);
    /// Return only once the write is on stable storage (survives power loss).
    pub const SYNC: WriteFlags = WriteFlags(sys::RAVEL_SYNC);
    /// Skip the write-ahead log: lost on a crash unless flushed first.
    pub const NO_WAL: WriteFlags = WriteFlags(sys::RAVEL_NO_WAL);
    /// Fail with [`Code::Busy`](crate::Code::Busy) instead of waiting when
    /// the write controller would delay the write.
    pub const NO_SLOWDOWN: WriteFlags = WriteFlags(sys::RAVEL_NO_SLOWDOWN);

    /// The `RAVEL_*` bits.
    pub fn bits(self) -> c_int {
        self.0
    }

    /// True if every flag of OTHER is set in self.
    pub fn contains(self, other: WriteFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for WriteFlags {
    type Output = WriteFlags;
    fn bitor(self, other: WriteFlags) -> WriteFlags {
        WriteFlags(self.0 | other.0)
    }
}

/// An open ravel database.
///
/// Every method takes `&self` and may be called from many threads at once
/// (`Db` is `Send + Sync`; share it with `std::thread::scope` or an `Arc`).
/// [`Snapshot`]s and [`Iter`]s borrow the `Db`, so it cannot be closed or
/// dropped while one is alive.  Dropping a `Db` closes it, ignoring any
/// error; call [`close`](Db::close) to see the error.
pub struct Db {
    raw: NonNull<sys::ravel_db>,
    path: PathBuf,
    closed: bool,
}

// SAFETY: ravel.h: "All functions taking a ravel_db are safe to call from
// many threads at once."  The handle has no affinity to the thread that
// opened it, so it may move (Send) and be used through &Db from many
// threads (Sync).  Close needs the Db by value (or Drop), which the borrow
// checker allows only once no thread holds a reference.
unsafe impl Send for Db {}
// SAFETY: see Send above.
unsafe impl Sync for Db {}

impl Db {
    /// Opens the database in directory PATH with OPTIONS (copied: they may
    /// be dropped afterwards).  Fails with [`Code::Locked`](crate::Code::Locked)
    /// if PATH is open elsewhere, in this process or another, and with
    /// [`Code::Invalid`](crate::Code::Invalid) if it holds no database and
    /// `create_if_missing` is not set.
    pub fn open(path: impl AsRef<Path>, options: &Options) -> Result<Db> {
        let path = path.as_ref();
        let dir = c_path(path)?;
        let mut raw = ptr::null_mut();
        // SAFETY: DIR is NUL-terminated, OPTIONS is live and not used by
        // another thread (Options is not Sync), RAW is a valid out-pointer.
        check(unsafe { sys::ravel_open(dir.as_ptr(), options.as_ptr(), &mut raw) })?;
        Ok(Db {
            raw: NonNull::new(raw).expect("ravel_open gave NULL"),
            path: path.to_path_buf(),
            closed: false,
        })
    }

    /// The directory the database was opened in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the database: waits for background work, makes the WAL
    /// durable and releases the directory's lock, reporting a failure of
    /// that final sync.
    ///
    /// No snapshot or iterator can be alive here, as they borrow the `Db`.
    /// Only one leaked with `std::mem::forget` can be: ravel then refuses
    /// to close ([`Code::Invalid`](crate::Code::Invalid)) and the handle is
    /// leaked, keeping the directory locked until the process exits.
    pub fn close(mut self) -> Result<()> {
        self.close_once()
    }

    fn close_once(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        // SAFETY: the handle is live and, as we hold it mutably, no other
        // thread is using it; it is not used again whatever the result.
        check(unsafe { sys::ravel_close(self.raw.as_ptr()) })
    }

    // ------------------------------------------------------------ writes

    /// Sets KEY to VALUE.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_opt(key, value, WriteFlags::NONE)
    }

    /// Sets KEY to VALUE with FLAGS.
    pub fn put_opt(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, flags: WriteFlags) -> Result<()> {
        let (k, v) = (key.as_ref(), value.as_ref());
        // SAFETY: the handle is live (borrowed); K and V are valid for
        // their lengths during the call.
        check(unsafe { sys::ravel_put(self.as_ptr(), flags.0, bytes_ptr(k), k.len(), bytes_ptr(v), v.len()) })
    }

    /// Deletes KEY (no error if it is absent).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_opt(key, WriteFlags::NONE)
    }

    /// Deletes KEY with FLAGS.
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, flags: WriteFlags) -> Result<()> {
        let k = key.as_ref();
        // SAFETY: as in put_opt.
        check(unsafe { sys::ravel_delete(self.as_ptr(), flags.0, bytes_ptr(k), k.len()) })
    }

    /// Applies BATCH atomically: readers see all of it or none of it.  The
    /// batch is left as it was and may be reused.
    pub fn write(&self, batch: &Batch) -> Result<()> {
        self.write_opt(batch, WriteFlags::NONE)
    }

    /// Applies BATCH atomically with FLAGS.
    pub fn write_opt(&self, batch: &Batch, flags: WriteFlags) -> Result<()> {
        // SAFETY: the handle is live; ravel_write does not modify the batch
        // (ravel.h), and Batch is not Sync, so no other thread touches it
        // during the call.
        check(unsafe { sys::ravel_write(self.as_ptr(), flags.0, batch.as_ptr()) })
    }

    // ------------------------------------------------------------- reads

    /// The value of KEY, or `None` if it is absent or deleted.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_at(ptr::null(), key.as_ref())
    }

    /// Copies the value of KEY into BUF without allocating.  Returns the
    /// value's whole length, which may exceed `buf.len()`: then only the
    /// first `buf.len()` bytes were copied.  `None` if KEY is absent.
    pub fn get_into(&self, key: impl AsRef<[u8]>, buf: &mut [u8]) -> Result<Option<usize>> {
        self.get_into_at(ptr::null(), key.as_ref(), buf)
    }

    /// Reads the value of KEY into BUF (replacing its contents), reusing
    /// its allocation and growing it if the value does not fit.  Returns
    /// false, with BUF empty, if KEY is absent.  One lookup when BUF's
    /// capacity holds the value or is zero; when it is non-zero but too
    /// small, the key is read again once (and BUF then fits next time).
    pub fn get_into_vec(&self, key: impl AsRef<[u8]>, buf: &mut Vec<u8>) -> Result<bool> {
        self.get_into_vec_at(ptr::null(), key.as_ref(), buf)
    }

    /// The values of KEYS, in their order (`None` for a key absent or
    /// deleted), all read from one state of the database: a batch written
    /// meanwhile is seen whole or not at all, which calls of
    /// [`get`](Db::get) one by one do not promise.  Keys may repeat and come
    /// in any order.  It costs about what as many `get`s cost; its point is
    /// the one state.  On an error (a key longer than 1 MiB is
    /// [`Code::Invalid`](crate::Code::Invalid); a damaged table file
    /// [`Code::Corrupt`](crate::Code::Corrupt)) no value is returned.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("ravel-doc-mget-{}", std::process::id()));
    /// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// let values = db.multi_get(&[&b"b"[..], b"missing", b"a"])?;
    /// assert_eq!(values, [Some(b"2".to_vec()), None, Some(b"1".to_vec())]);
    /// # db.close()?;
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), ravel::Error>(())
    /// ```
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        self.multi_get_at(ptr::null(), keys)
    }

    /// A snapshot of the current state: reads through it never change.
    pub fn snapshot(&self) -> Result<Snapshot<'_>> {
        let mut raw = ptr::null_mut();
        // SAFETY: the handle is live; RAW is a valid out-pointer.
        check(unsafe { sys::ravel_snapshot_acquire(self.as_ptr(), &mut raw) })?;
        Ok(Snapshot::new(self, NonNull::new(raw).expect("ravel_snapshot_acquire gave NULL")))
    }

    /// An iterator over the current state, not positioned yet (call a
    /// seek first).
    pub fn iter(&self) -> Result<Iter<'_>> {
        self.iter_at(ptr::null())
    }

    /// The entries with START <= key < STOP in key order (`None`: no
    /// bound), as a std [`Iterator`] of `Result<(key, value)>`.
    pub fn range(&self, start: Option<&[u8]>, stop: Option<&[u8]>) -> Result<RangeIter<'_>> {
        Ok(self.iter()?.range(start, stop))
    }

    /// The same entries as [`range`](Db::range), from the last to the first.
    pub fn range_rev(&self, start: Option<&[u8]>, stop: Option<&[u8]>) -> Result<RangeIter<'_>> {
        Ok(self.iter()?.range_rev(start, stop))
    }

    // ------------------------------------------------------- maintenance

    /// Text about the database (`ravel.stats`, `ravel.sstables`,
    /// `ravel.num-files-at-level0`, ...; ravel.h lists them).  An unknown
    /// name is [`Code::NotFound`](crate::Code::NotFound), with a message
    /// listing the known ones.
    pub fn property(&self, name: &str) -> Result<String> {
        let name = c_string("property name", name)?;
        let mut text: *mut c_char = ptr::null_mut();
        // SAFETY: the handle is live; NAME is NUL-terminated; TEXT is a
        // valid out-pointer.
        check(unsafe { sys::ravel_property(self.as_ptr(), name.as_ptr(), &mut text) })?;
        // SAFETY: on success TEXT is text ravel allocated for us.
        Ok(unsafe { take_ravel_text(text) })
    }

    /// Makes every write acknowledged so far reach the operating system
    /// (with `manual_wal_flush` they wait in ravel's buffer) and, with
    /// SYNC, stable storage.
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        // SAFETY: the handle is live.
        check(unsafe { sys::ravel_flush_wal(self.as_ptr(), c_int::from(sync)) })
    }

    /// Writes the memtables to table files and waits until they are on
    /// stable storage and in the manifest.
    pub fn flush(&self) -> Result<()> {
        // SAFETY: the handle is live.
        check(unsafe { sys::ravel_flush(self.as_ptr(), 0) })
    }

    /// Starts a flush of the memtables and returns without waiting for it.
    pub fn flush_no_wait(&self) -> Result<()> {
        // SAFETY: the handle is live.
        check(unsafe { sys::ravel_flush(self.as_ptr(), sys::RAVEL_FLUSH_NO_WAIT) })
    }

    /// Compacts the keys from BEGIN to END, both included (`None`: from the
    /// first key / to the last), down to the last level holding data, in
    /// the calling thread.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        let (b, blen) = begin.map_or((ptr::null(), 0), |b| (bytes_ptr(b), b.len()));
        let (e, elen) = end.map_or((ptr::null(), 0), |e| (bytes_ptr(e), e.len()));
        // SAFETY: the handle is live; each bound is NULL with length 0 or
        // valid for its length.
        check(unsafe { sys::ravel_compact_range(self.as_ptr(), b, blen, e, elen) })
    }

    /// Reads and checks every block of every table file:
    /// [`Code::Corrupt`](crate::Code::Corrupt) names the first damaged
    /// file and offset.
    pub fn verify(&self) -> Result<()> {
        // SAFETY: the handle is live.
        check(unsafe { sys::ravel_verify(self.as_ptr()) })
    }

    // ------------------------------------------ shared with Snapshot

    /// The raw handle, for the read calls of snapshot.rs and iter.rs.
    pub(crate) fn as_ptr(&self) -> *mut sys::ravel_db {
        self.raw.as_ptr()
    }

    /// ravel_get as of SNAP (NULL: the latest state): one lookup
    /// whatever the value's size.
    pub(crate) fn get_at(&self, snap: *const sys::ravel_snapshot, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.with_value_at(snap, key, <[u8]>::to_vec)
    }

    /// F of the value of KEY as of SNAP, read with one ravel_get (F sees
    /// ravel's copy, freed after it returns); `None` if KEY is absent.
    fn with_value_at<T>(
        &self,
        snap: *const sys::ravel_snapshot,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>> {
        let mut val: *mut c_void = ptr::null_mut();
        let mut vlen = 0usize;
        crate::lookups::count(1);
        // SAFETY: the handle is live; SNAP is NULL or a live snapshot of
        // this db (a Snapshot borrowing it); KEY is valid for its length;
        // VAL and VLEN are valid out-pointers.
        let rc =
            unsafe { sys::ravel_get(self.as_ptr(), snap, bytes_ptr(key), key.len(), &mut val, &mut vlen) };
        if rc == sys::RAVEL_NOTFOUND {
            return Ok(None);
        }
        check(rc)?;
        // SAFETY: on success VAL holds VLEN bytes allocated for us (non-NULL
        // even when empty); F reads them before VAL is freed, once.
        let result = f(unsafe { std::slice::from_raw_parts(val.cast::<u8>(), vlen) });
        // SAFETY: VAL came from ravel_get and is freed once.
        unsafe { sys::ravel_free(val) };
        Ok(Some(result))
    }

    /// ravel_multi_get as of SNAP (NULL: the latest state, taken once).
    pub(crate) fn multi_get_at<K: AsRef<[u8]>>(
        &self,
        snap: *const sys::ravel_snapshot,
        keys: &[K],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let n = keys.len();
        let key_ptrs: Vec<*const c_void> = keys.iter().map(|k| bytes_ptr(k.as_ref())).collect();
        let klens: Vec<usize> = keys.iter().map(|k| k.as_ref().len()).collect();
        let mut vals: Vec<*mut c_void> = vec![ptr::null_mut(); n];
        let mut vlens = vec![0usize; n];
        let mut rcs: Vec<c_int> = vec![sys::RAVEL_NOTFOUND; n];
        let ro = ReadOptionsAt::new(snap)?;
        crate::lookups::count(n);
        // SAFETY: the handle is live; RO is NULL or live read options whose
        // snapshot is NULL or a live snapshot of this db; each of the N
        // KEY_PTRS is valid for its KLENS bytes (borrowed from KEYS), and
        // VALS, VLENS and RCS have N writable elements.
        let rc = unsafe {
            sys::ravel_multi_get(
                self.as_ptr(),
                ro.as_ptr(),
                n,
                key_ptrs.as_ptr(),
                klens.as_ptr(),
                vals.as_mut_ptr(),
                vlens.as_mut_ptr(),
                rcs.as_mut_ptr(),
            )
        };
        // the error's message is read before anything else calls ravel
        let result = check(rc);
        drop(ro);
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            let val = vals[i];
            if val.is_null() {
                values.push(None); // RAVEL_NOTFOUND, or no value on an error
                continue;
            }
            // SAFETY: a non-NULL VALS[i] holds VLENS[i] bytes allocated for
            // us; we copy them and free it once.
            values.push(Some(unsafe { std::slice::from_raw_parts(val.cast::<u8>(), vlens[i]).to_vec() }));
            // SAFETY: VAL came from ravel_multi_get and is freed once.
            unsafe { sys::ravel_free(val) };
        }
        result?;
        debug_assert!(rcs.iter().zip(&values).all(|(rc, v)| (*rc == sys::RAVEL_OK) == v.is_some()));
        Ok(values)
    }

    /// ravel_get_into as of SNAP.
    pub(crate) fn get_into_at(
        &self,
        snap: *const sys::ravel_snapshot,
        key: &[u8],
        buf: &mut [u8],
    ) -> Result<Option<usize>> {
        let mut vlen = 0usize;
        crate::lookups::count(1);
        // SAFETY: as in with_value_at; BUF is writable for its length.
        let rc = unsafe {
            sys::ravel_get_into(
                self.as_ptr(),
                snap,
                bytes_ptr(key),
                key.len(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut vlen,
            )
        };
        if rc == sys::RAVEL_NOTFOUND {
            return Ok(None);
        }
        check(rc)?;
        Ok(Some(vlen))
    }

    /// Reads into BUF's spare capacity with ravel_get_into; a value too
    /// long for it is read again, once, with ravel_get and copied into BUF
    /// grown to fit (so a reused BUF takes one lookup from then on).  With
    /// no spare capacity at all, the one read is ravel_get's.
    pub(crate) fn get_into_vec_at(
        &self,
        snap: *const sys::ravel_snapshot,
        key: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<bool> {
        buf.clear();
        let cap = buf.capacity();
        if cap > 0 {
            let mut vlen = 0usize;
            crate::lookups::count(1);
            // SAFETY: as in with_value_at; BUF's allocation is writable for
            // CAP bytes (spare capacity; nothing is read from it).
            let rc = unsafe {
                sys::ravel_get_into(
                    self.as_ptr(),
                    snap,
                    bytes_ptr(key),
                    key.len(),
                    buf.as_mut_ptr().cast(),
                    cap,
                    &mut vlen,
                )
            };
            if rc == sys::RAVEL_NOTFOUND {
                return Ok(false);
            }
            check(rc)?;
            if vlen <= cap {
                // SAFETY: ravel copied the whole value, VLEN bytes, into
                // the first VLEN bytes of the allocation.
                unsafe { buf.set_len(vlen) };
                return Ok(true);
            }
        }
        Ok(self.with_value_at(snap, key, |value| buf.extend_from_slice(value))?.is_some())
    }

    /// ravel_iter_new as of SNAP; the iterator borrows for 'a, which the
    /// caller ties to the Db (or the Snapshot) it reads.
    pub(crate) fn iter_at<'a>(&'a self, snap: *const sys::ravel_snapshot) -> Result<Iter<'a>> {
        let mut raw = ptr::null_mut();
        // SAFETY: the handle is live; SNAP is NULL or a live snapshot of
        // this db; RAW is a valid out-pointer.
        check(unsafe { sys::ravel_iter_new(self.as_ptr(), snap, &mut raw) })?;
        Ok(Iter::new(NonNull::new(raw).expect("ravel_iter_new gave NULL")))
    }
}

/// Deletes the database in directory PATH, as RocksDB's `DestroyDB`: its
/// files (`CURRENT`, `IDENTITY`, `LOG`, `LOG.old`, `MANIFEST-*`,
/// `wal-*.log`, `*.sst`, their `.tmp` files, `lost/` and what it holds) and
/// its `LOCK`, then PATH itself if nothing else is left in it.  Files of
/// other names stay, and so does PATH with them.
///
/// Fails with [`Code::Locked`](crate::Code::Locked), deleting nothing, if
/// the database is open, in this process (a [`Db`] not yet closed or
/// dropped) or another.  A PATH that does not exist is `Ok(())`.  Fails
/// with [`Code::Io`](crate::Code::Io) naming the file that could not be
/// removed (the files before it are gone).
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-destroy-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// db.put(b"k", b"v")?;
/// assert_eq!(ravel::destroy(&dir).unwrap_err().code(), ravel::Code::Locked);
/// db.close()?;
/// ravel::destroy(&dir)?;
/// assert!(!dir.exists());
/// # Ok::<(), ravel::Error>(())
/// ```
pub fn destroy<P: AsRef<Path>>(path: P) -> Result<()> {
    let dir = c_path(path.as_ref())?;
    // SAFETY: DIR is NUL-terminated and lives through the call.
    check(unsafe { sys::ravel_destroy(dir.as_ptr()) })
}

/// Read options holding SNAP, or none (NULL) for the latest state; freed
/// on drop.
struct ReadOptionsAt(*mut sys::ravel_readoptions);

impl ReadOptionsAt {
    fn new(snap: *const sys::ravel_snapshot) -> Result<ReadOptionsAt> {
        if snap.is_null() {
            return Ok(ReadOptionsAt(ptr::null_mut()));
        }
        let mut raw = ptr::null_mut();
        // SAFETY: RAW is a valid out-pointer.
        check(unsafe { sys::ravel_readoptions_new(&mut raw) })?;
        let ro = ReadOptionsAt(raw);
        // SAFETY: RO is live and ours alone; SNAP is a live snapshot that
        // outlives RO (its owner borrows it for the whole call).
        check(unsafe { sys::ravel_readoptions_set_snapshot(ro.0, snap) })?;
        Ok(ro)
    }

    fn as_ptr(&self) -> *const sys::ravel_readoptions {
        self.0
    }
}

impl Drop for ReadOptionsAt {
    fn drop(&mut self) {
        // SAFETY: NULL or read options from ravel_readoptions_new, freed once.
        unsafe { sys::ravel_readoptions_free(self.0) };
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // An error here has no one to go to; close() reports it.
        let _ = self.close_once();
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("path", &self.path).finish_non_exhaustive()
    }
}
