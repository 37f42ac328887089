//! txn.rs -- transactions (ravel.h "transactions"): [`Txn`], which borrows
//! its [`Db`] so that it cannot outlive it; reads through its snapshot and
//! own writes, writes, iterators, savepoints, two-phase commit, commit and
//! rollback; and the `Db` methods built on it: `begin`, `transaction`
//! (ravel_txn_run, the closure called back through a trampoline),
//! `recover_transaction`, `prepared_transactions`.

use std::any::Any;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use ravel_sys as sys;

use crate::db::Db;
use crate::error::{check, Result};
use crate::iter::{Iter, RangeIter};
use crate::text::{bytes_ptr, c_string};

/// How a transaction runs: [`Db::begin`], [`Db::transaction_with`].  The
/// default is pessimistic, without sync, 10 attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnOptions {
    /// No locks: the keys read with [`Txn::get_for_update`] or written are
    /// checked at commit, which fails with
    /// [`Code::Conflict`](crate::Code::Conflict) if another wrote one after
    /// the snapshot.  Otherwise (pessimistic) `get_for_update` and every
    /// write lock the key at once (waiting up to the option
    /// `txn_lock_timeout`) and check it then.
    pub optimistic: bool,
    /// The commit (and prepare, and the rollback of a prepared
    /// transaction) returns only once durable.
    pub sync: bool,
    /// How many times [`Db::transaction_with`] runs its closure in all, at
    /// most (at least 1; [`Db::begin`] ignores it).
    pub max_attempts: u32,
}

impl Default for TxnOptions {
    fn default() -> TxnOptions {
        TxnOptions { optimistic: false, sync: false, max_attempts: 10 }
    }
}

impl TxnOptions {
    fn flags(&self) -> c_int {
        let mut flags = 0;
        if self.optimistic {
            flags |= sys::RAVEL_TXN_OPTIMISTIC;
        }
        if self.sync {
            flags |= sys::RAVEL_SYNC;
        }
        flags
    }
}

/// A transaction on a [`Db`]: its reads see the database as of its begin
/// plus its own writes, and its writes become visible to others together,
/// at [`commit`](Txn::commit), and only if no key it read with
/// [`get_for_update`](Txn::get_for_update) or wrote was written by another
/// after its snapshot (snapshot isolation: lost updates are impossible,
/// write skew is possible for keys only read with [`get`](Txn::get)).
///
/// Dropping a `Txn` rolls it back (a prepared one stays prepared).
/// [`commit`](Txn::commit) and [`rollback`](Txn::rollback) take it by
/// value, so it cannot be used after it ended.
///
/// It borrows its `Db`, so it cannot outlive it, nor can the database be
/// closed under it:
///
/// ```compile_fail,E0597
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-txn-{}", std::process::id()));
/// let mut tx = {
///     let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
///     db.begin(&ravel::TxnOptions::default())? // error: `db` does not live long enough
/// };
/// tx.put(b"k", b"v")?;
/// # Ok::<(), ravel::Error>(())
/// ```
///
/// ```compile_fail,E0505
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-txn2-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// let tx = db.begin(&ravel::TxnOptions::default())?;
/// db.close()?; // error: cannot move out of `db` because it is borrowed
/// tx.commit()?;
/// # Ok::<(), ravel::Error>(())
/// ```
///
/// Ending it first compiles:
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ravel-doc-txn3-{}", std::process::id()));
/// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
/// let mut tx = db.begin(&ravel::TxnOptions::default())?;
/// tx.put(b"k", b"v")?;
/// assert_eq!(tx.get(b"k")?, Some(b"v".to_vec()));   // its own write
/// assert_eq!(db.get(b"k")?, None);                  // not yet anyone else's
/// tx.commit()?;
/// assert_eq!(db.get(b"k")?, Some(b"v".to_vec()));
/// db.close()?;
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), ravel::Error>(())
/// ```
///
/// A `Txn` is used by one thread at a time, as ravel requires: it is
/// `Send` but not `Sync`.  Writes, savepoints and prepare take `&mut self`,
/// so no iterator of the transaction is alive while it writes.
pub struct Txn<'db> {
    db: &'db Db,
    raw: NonNull<sys::ravel_txn>,
    /// False for the transaction of a [`Db::transaction`] run, which
    /// ravel_txn_run frees.
    owned: bool,
    name: Option<String>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: ravel.h: "A transaction is used by one thread at a time"; it has
// no affinity to the thread that began it, so it may move to another
// thread.  Not Sync (PhantomData<Cell>): &Txn gives get and iterators,
// which two threads must not call at once.
unsafe impl Send for Txn<'_> {}

impl<'db> Txn<'db> {
    fn new(db: &'db Db, raw: NonNull<sys::ravel_txn>, owned: bool, name: Option<String>) -> Txn<'db> {
        Txn { db, raw, owned, name, _not_sync: PhantomData }
    }

    fn as_ptr(&self) -> *mut sys::ravel_txn {
        self.raw.as_ptr()
    }

    /// The database the transaction runs on.
    pub fn db(&self) -> &'db Db {
        self.db
    }

    /// ravel_txn_get or ravel_txn_get_for_update of KEY.
    fn read(&self, key: &[u8], for_update: bool) -> Result<Option<Vec<u8>>> {
        let mut val: *mut c_void = ptr::null_mut();
        let mut vlen = 0usize;
        let f = if for_update { sys::ravel_txn_get_for_update } else { sys::ravel_txn_get };
        crate::lookups::count(1);
        // SAFETY: the transaction is live (borrowed) and used by this
        // thread only (not Sync); KEY is valid for its length; VAL and VLEN
        // are valid out-pointers.
        let rc = unsafe { f(self.as_ptr(), bytes_ptr(key), key.len(), &mut val, &mut vlen) };
        if rc == sys::RAVEL_NOTFOUND {
            return Ok(None);
        }
        check(rc)?;
        // SAFETY: on success VAL holds VLEN bytes allocated for us; copied,
        // then freed once.
        let value = unsafe { std::slice::from_raw_parts(val.cast::<u8>(), vlen).to_vec() };
        // SAFETY: as above.
        unsafe { sys::ravel_free(val) };
        Ok(Some(value))
    }

    /// The value of KEY as the transaction sees it (its snapshot and its
    /// own writes), or `None`; locks nothing.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.read(key.as_ref(), false)
    }

    /// As [`get`](Txn::get), and KEY becomes the transaction's: locked now
    /// (pessimistic) or checked at commit (optimistic).
    /// [`Code::Conflict`](crate::Code::Conflict) if another wrote it after
    /// the snapshot; [`Code::TimedOut`](crate::Code::TimedOut) and
    /// [`Code::Deadlock`](crate::Code::Deadlock) from the lock wait.  The
    /// transaction is still open after any of them.
    pub fn get_for_update(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.read(key.as_ref(), true)
    }

    /// Sets KEY to VALUE in the transaction: seen by its reads at once, by
    /// others once it commits.  Pessimistic, it locks KEY (errors as
    /// [`get_for_update`](Txn::get_for_update)'s).
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let (k, v) = (key.as_ref(), value.as_ref());
        // SAFETY: the transaction is live and ours (&mut); K and V are valid
        // for their lengths (ravel copies them).
        check(unsafe { sys::ravel_txn_put(self.as_ptr(), bytes_ptr(k), k.len(), bytes_ptr(v), v.len()) })
    }

    /// Deletes KEY in the transaction (no error if absent); locks it as
    /// [`put`](Txn::put) does.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let k = key.as_ref();
        // SAFETY: as in put.
        check(unsafe { sys::ravel_txn_delete(self.as_ptr(), bytes_ptr(k), k.len()) })
    }

    /// A cursor over the database as the transaction sees it: its snapshot
    /// with its own writes merged in.  It borrows the transaction, which
    /// therefore cannot write, commit or roll back while it lives.
    pub fn iter(&self) -> Result<TxnIter<'_>> {
        let mut raw = ptr::null_mut();
        // SAFETY: the transaction is live; RAW is a valid out-pointer.
        check(unsafe { sys::ravel_txn_iter_new(self.as_ptr(), &mut raw) })?;
        let iter = Iter::new(NonNull::new(raw).expect("ravel_txn_iter_new gave NULL"));
        Ok(TxnIter { iter, _txn: PhantomData })
    }

    /// The entries with START <= key < STOP (`None`: no bound) as the
    /// transaction sees them, in key order.
    pub fn range(&self, start: Option<&[u8]>, stop: Option<&[u8]>) -> Result<TxnRange<'_>> {
        Ok(self.iter()?.range(start, stop))
    }

    /// The same entries as [`range`](Txn::range), from the last to the first.
    pub fn range_rev(&self, start: Option<&[u8]>, stop: Option<&[u8]>) -> Result<TxnRange<'_>> {
        Ok(self.iter()?.range_rev(start, stop))
    }

    /// Sets a savepoint (they nest): [`rollback_to_savepoint`](Txn::rollback_to_savepoint)
    /// undoes the writes made after it and releases the locks taken since.
    pub fn savepoint(&mut self) -> Result<()> {
        // SAFETY: the transaction is live and ours.
        check(unsafe { sys::ravel_txn_savepoint(self.as_ptr()) })
    }

    /// Undoes the writes made since the last savepoint and forgets it;
    /// [`Code::NotFound`](crate::Code::NotFound) if none is set.
    pub fn rollback_to_savepoint(&mut self) -> Result<()> {
        // SAFETY: the transaction is live and ours.
        check(unsafe { sys::ravel_txn_rollback_to_savepoint(self.as_ptr()) })
    }

    /// Names the transaction for two-phase commit: 1 to 255 bytes, unique
    /// among the database's open and prepared transactions; once, before
    /// [`prepare`](Txn::prepare).
    pub fn set_name(&mut self, name: &str) -> Result<()> {
        let cname = c_string("transaction name", name)?;
        // SAFETY: the transaction is live and ours; CNAME is NUL-terminated
        // (ravel copies it).
        check(unsafe { sys::ravel_txn_set_name(self.as_ptr(), cname.as_ptr()) })?;
        self.name = Some(name.to_string());
        Ok(())
    }

    /// The name [`set_name`](Txn::set_name) gave (or
    /// [`Db::recover_transaction`] found), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The first phase of a two-phase commit ([`set_name`](Txn::set_name)
    /// first): the writes go to the WAL and the memtable, invisible to
    /// readers, the keys stay locked, and the transaction survives a crash
    /// (with `sync`, power loss too).  Afterwards it can be read from,
    /// committed or rolled back, not written to.  Dropped (or its database
    /// closed, or the process killed) after this, it stays prepared:
    /// [`Db::prepared_transactions`] lists it and
    /// [`Db::recover_transaction`] gives it back.
    pub fn prepare(&mut self) -> Result<()> {
        // SAFETY: the transaction is live and ours.
        check(unsafe { sys::ravel_txn_prepare(self.as_ptr()) })
    }

    /// Writes everything atomically, or nothing
    /// ([`is_retriable`](crate::Error::is_retriable) errors: run it
    /// again).  A prepared transaction whose commit failed stays prepared
    /// (recover it with [`Db::recover_transaction`]).
    pub fn commit(self) -> Result<()> {
        // SAFETY: the transaction is live and ours (by value); Drop frees it.
        check(unsafe { sys::ravel_txn_commit(self.as_ptr()) })
    }

    /// Discards the writes and releases the locks; a prepared
    /// transaction's writes become invisible for good (if that fails, it
    /// stays prepared).  Dropping the transaction rolls back too, without
    /// an error to report.
    pub fn rollback(self) -> Result<()> {
        // SAFETY: as in commit.
        check(unsafe { sys::ravel_txn_rollback(self.as_ptr()) })
    }
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: ours, freed once; no iterator of it is alive (they
            // borrow it).  Rolls back an open one, leaves a prepared one.
            unsafe { sys::ravel_txn_free(self.as_ptr()) }
        }
    }
}

impl std::fmt::Debug for Txn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Txn").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A cursor over a transaction's view ([`Txn::iter`]): an [`Iter`] (all
/// of its moves, through `Deref`) that borrows the transaction.  Not
/// `Send`: it reads the transaction, which is used by one thread at a time.
pub struct TxnIter<'t> {
    iter: Iter<'t>,
    _txn: PhantomData<&'t Txn<'t>>,
}

impl<'t> TxnIter<'t> {
    /// A std iterator over the entries with START <= key < STOP (`None`:
    /// no bound), in key order; it positions this cursor itself.
    pub fn range(self, start: Option<&[u8]>, stop: Option<&[u8]>) -> TxnRange<'t> {
        TxnRange { range: self.iter.range(start, stop), _txn: PhantomData }
    }

    /// The same entries, from the last to the first.
    pub fn range_rev(self, start: Option<&[u8]>, stop: Option<&[u8]>) -> TxnRange<'t> {
        TxnRange { range: self.iter.range_rev(start, stop), _txn: PhantomData }
    }
}

impl<'t> Deref for TxnIter<'t> {
    type Target = Iter<'t>;
    fn deref(&self) -> &Iter<'t> {
        &self.iter
    }
}

impl<'t> DerefMut for TxnIter<'t> {
    fn deref_mut(&mut self) -> &mut Iter<'t> {
        &mut self.iter
    }
}

impl std::fmt::Debug for TxnIter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TxnIter").field(&self.iter).finish()
    }
}

/// A std [`Iterator`] over a key range of a transaction's view
/// ([`Txn::range`], [`TxnIter::range`]), as [`RangeIter`] is for a `Db`.
pub struct TxnRange<'t> {
    range: RangeIter<'t>,
    _txn: PhantomData<&'t Txn<'t>>,
}

impl Iterator for TxnRange<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.range.next()
    }
}

impl std::iter::FusedIterator for TxnRange<'_> {}

impl std::fmt::Debug for TxnRange<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TxnRange").field(&self.range).finish()
    }
}

// ------------------------------------------------------------ Db methods

/// What one [`Db::transaction_with`] call shares with its trampoline.
struct Run<'db, T, F> {
    db: &'db Db,
    f: F,
    /// The closure's result in the last run.
    out: Option<Result<T>>,
    /// A panic of the closure, resumed once ravel_txn_run returned.
    panic: Option<Box<dyn Any + Send>>,
}

/// The `ravel_txn_fn` of [`Db::transaction_with`]: runs the closure on a
/// `Txn` wrapping T (not owned: ravel_txn_run commits and frees it), and
/// returns its error's code, so that ravel_txn_run retries the retriable
/// ones; a panic is caught (it must not unwind into C) and ends the run.
unsafe extern "C" fn run_body<T, F>(raw: *mut sys::ravel_txn, ctx: *mut c_void) -> c_int
where
    F: FnMut(&mut Txn<'_>) -> Result<T>,
{
    // SAFETY: CTX is the &mut Run that transaction_with passed, alive and
    // not otherwise used during ravel_txn_run.
    let run = unsafe { &mut *ctx.cast::<Run<'_, T, F>>() };
    let raw = NonNull::new(raw).expect("ravel_txn_run gave a NULL transaction");
    let mut tx = Txn::new(run.db, raw, false, None);
    let f = &mut run.f;
    let result = panic::catch_unwind(AssertUnwindSafe(|| f(&mut tx)));
    drop(tx);
    match result {
        Ok(Ok(value)) => {
            run.out = Some(Ok(value));
            sys::RAVEL_OK
        }
        Ok(Err(e)) => {
            let rc = if e.raw_code() > 0 { e.raw_code() } else { sys::RAVEL_INVALID };
            run.out = Some(Err(e));
            rc
        }
        Err(payload) => {
            run.out = None;
            run.panic = Some(payload);
            sys::RAVEL_INVALID // not retriable: ends the run
        }
    }
}

impl Db {
    /// Begins a transaction with OPTS (`&TxnOptions::default()`:
    /// pessimistic, no sync).  It borrows the database: it must end before
    /// the database closes.
    pub fn begin(&self, opts: &TxnOptions) -> Result<Txn<'_>> {
        let mut raw = ptr::null_mut();
        // SAFETY: the handle is live; RAW is a valid out-pointer.
        check(unsafe { sys::ravel_txn_begin(self.as_ptr(), opts.flags(), &mut raw) })?;
        Ok(Txn::new(self, NonNull::new(raw).expect("ravel_txn_begin gave NULL"), true, None))
    }

    /// Runs F in a new pessimistic transaction and commits it, retrying on
    /// the retriable errors: [`transaction_with`](Db::transaction_with)
    /// with the default [`TxnOptions`].
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("ravel-doc-transaction-{}", std::process::id()));
    /// let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| {
    ///             for _ in 0..25 {
    ///                 db.transaction(|tx| {
    ///                     let n = match tx.get_for_update(b"counter")? {
    ///                         Some(v) => String::from_utf8_lossy(&v).parse::<u64>().unwrap(),
    ///                         None => 0,
    ///                     };
    ///                     tx.put(b"counter", (n + 1).to_string())
    ///                 })
    ///                 .unwrap();
    ///             }
    ///         });
    ///     }
    /// });
    /// assert_eq!(db.get(b"counter")?, Some(b"100".to_vec()));
    /// # db.close()?;
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), ravel::Error>(())
    /// ```
    pub fn transaction<T, F>(&self, f: F) -> Result<T>
    where
        F: FnMut(&mut Txn<'_>) -> Result<T>,
    {
        self.transaction_with(&TxnOptions::default(), f)
    }

    /// Runs F in a new transaction with OPTS and commits it if F returns
    /// `Ok`; returns F's value.  If F or the commit fails with a retriable
    /// error ([`Error::is_retriable`](crate::Error::is_retriable): a
    /// conflict, a lock wait that timed out, a deadlock), the transaction
    /// is rolled back and, after a short random sleep that doubles with
    /// each try, F runs again, at most `opts.max_attempts` times in all;
    /// then that error is returned.  Any other error of F rolls back and
    /// is returned as it is, not retried; a panic of F rolls back and is
    /// resumed.  This is `ravel_txn_run`, F called through a trampoline.
    ///
    /// F may run more than once: it must have no effects outside the
    /// transaction that a second run would repeat.  It gets `&mut Txn`, so
    /// it cannot commit, roll back or keep the transaction.
    pub fn transaction_with<T, F>(&self, opts: &TxnOptions, f: F) -> Result<T>
    where
        F: FnMut(&mut Txn<'_>) -> Result<T>,
    {
        let max_attempts = c_int::try_from(opts.max_attempts).unwrap_or(c_int::MAX);
        if max_attempts < 1 {
            return Err(crate::Error::new(
                crate::Code::Invalid,
                "transaction: max_attempts is 0 (at least 1)",
            ));
        }
        let mut run = Run { db: self, f, out: None, panic: None };
        // SAFETY: the handle is live; run_body::<T, F> matches RUN's type,
        // and RUN outlives the call.
        let rc = unsafe {
            sys::ravel_txn_run(
                self.as_ptr(),
                opts.flags(),
                Some(run_body::<T, F>),
                ptr::addr_of_mut!(run).cast(),
                max_attempts,
            )
        };
        // the message of a failed begin or commit, read before anything
        // else can call ravel (dropping a T might)
        let result = check(rc);
        if let Some(payload) = run.panic.take() {
            panic::resume_unwind(payload);
        }
        match (result, run.out.take()) {
            (Ok(()), Some(Ok(value))) => Ok(value),
            // the closure's own error, if it is what ended the run
            (Err(e), Some(Err(mine)))
                if mine.raw_code() == rc || (mine.raw_code() <= 0 && rc == sys::RAVEL_INVALID) =>
            {
                drop(e);
                Err(mine)
            }
            (Err(e), _) => Err(e),
            (Ok(()), _) => unreachable!("ravel_txn_run committed without a run of the closure"),
        }
    }

    /// The prepared transaction named NAME (left by a crash, a close, or a
    /// [`Txn`] dropped after [`prepare`](Txn::prepare)), to commit or roll
    /// back.  [`Code::NotFound`](crate::Code::NotFound) if there is none of
    /// that name.
    pub fn recover_transaction(&self, name: &str) -> Result<Txn<'_>> {
        let cname = c_string("transaction name", name)?;
        let mut raw = ptr::null_mut();
        // SAFETY: the handle is live; CNAME is NUL-terminated; RAW is a
        // valid out-pointer.
        check(unsafe { sys::ravel_txn_recover(self.as_ptr(), cname.as_ptr(), &mut raw) })?;
        let raw = NonNull::new(raw).expect("ravel_txn_recover gave NULL");
        Ok(Txn::new(self, raw, true, Some(name.to_string())))
    }

    /// The names of the prepared transactions not yet committed or rolled
    /// back (the property `ravel.prepared-transactions`).
    pub fn prepared_transactions(&self) -> Result<Vec<String>> {
        let text = self.property("ravel.prepared-transactions")?;
        Ok(text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect())
    }
}
