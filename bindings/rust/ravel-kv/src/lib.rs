//! Safe Rust API of [ravel](https://github.com/ravel-kv/ravel), an embedded
//! key-value storage engine (an LSM tree: write-ahead log, memtable,
//! sorted table files, compaction), over the C library's `ravel.h`.
//!
//! ```
//! use ravel::{Db, Options, WriteFlags};
//! # let dir = std::env::temp_dir().join(format!("ravel-doc-lib-{}", std::process::id()));
//! let db = Db::open(&dir, &Options::new()?.with("create_if_missing", true)?)?;
//! db.put(b"k1", b"v1")?;
//! db.put_opt(b"k2", b"v2", WriteFlags::SYNC)?;
//! assert_eq!(db.get(b"k1")?, Some(b"v1".to_vec()));
//! assert_eq!(db.get(b"nope")?, None);
//! // Db is Send + Sync: threads may share it.
//! std::thread::scope(|s| {
//!     for t in 0..4 {
//!         let db = &db;
//!         s.spawn(move || db.put(format!("thread{t}"), b"x"));
//!     }
//! });
//! assert_eq!(db.range(None, None)?.count(), 6);
//! db.close()?;
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! The types mirror ravel.h: [`Options`] (set by name), [`Cache`] and
//! [`WriteController`] (shared by several databases), [`Db`], [`Batch`],
//! [`Snapshot`], [`Iter`] and its std-`Iterator` adaptor [`RangeIter`],
//! and transactions: [`Txn`] ([`Db::begin`], and [`Db::transaction`],
//! which retries on the errors that are
//! [`is_retriable`](Error::is_retriable)).
//! Every fallible call returns [`Result`], whose [`Error`] carries the
//! result [`Code`] and ravel's detailed message for that very failure.
//!
//! # What the compiler checks
//!
//! A closed database cannot be used: [`Db::close`] takes it by value.
//!
//! ```compile_fail,E0382
//! # let dir = std::env::temp_dir().join(format!("ravel-doc-closed-{}", std::process::id()));
//! let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
//! db.close()?;
//! db.put(b"k", b"v")?; // error: borrow of moved value: `db`
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! (With the two calls the other way round, it compiles and runs:)
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("ravel-doc-closed-{}", std::process::id()));
//! let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
//! db.put(b"k", b"v")?;
//! db.close()?;
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! Snapshots and iterators borrow the database, so it cannot be closed
//! under them (see [`Snapshot`] and [`Iter`]).  A [`Batch`], an [`Iter`]
//! and an [`Options`] must be used by one thread at a time: they are
//! `Send` but not `Sync`, so they cannot be shared between threads:
//!
//! ```compile_fail,E0277
//! let batch = ravel::Batch::new()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| batch.count()); // error[E0277]: `NonNull<ravel_batch>` cannot be shared between threads safely
//! });
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! ```compile_fail,E0277
//! let opts = ravel::Options::new()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| opts.get("block_size")); // error[E0277]: cannot be shared between threads safely
//! });
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! ```compile_fail,E0277
//! # let dir = std::env::temp_dir().join(format!("ravel-doc-itersync-{}", std::process::id()));
//! let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
//! let it = db.iter()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| it.valid()); // error[E0277]: cannot be shared between threads safely
//! });
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! A [`Txn`] is used by one thread at a time too (`Send`, not `Sync`),
//! and the cursor of a transaction ([`TxnIter`]) stays on the
//! transaction's thread (not `Send`):
//!
//! ```compile_fail,E0277
//! # let dir = std::env::temp_dir().join(format!("ravel-doc-txnsync-{}", std::process::id()));
//! let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
//! let tx = db.begin(&ravel::TxnOptions::default())?;
//! std::thread::scope(|s| {
//!     s.spawn(|| tx.get(b"k")); // error[E0277]: cannot be shared between threads safely
//! });
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! ```compile_fail,E0277
//! # let dir = std::env::temp_dir().join(format!("ravel-doc-txniter-{}", std::process::id()));
//! let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
//! let tx = db.begin(&ravel::TxnOptions::default())?;
//! let it = tx.iter()?;
//! std::thread::scope(|s| {
//!     s.spawn(move || it.valid()); // error[E0277]: cannot be sent between threads safely
//! });
//! # Ok::<(), ravel::Error>(())
//! ```
//!
//! Moving one to another thread is fine:
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("ravel-doc-send-{}", std::process::id()));
//! let db = ravel::Db::open(&dir, &ravel::Options::new()?.with("create_if_missing", true)?)?;
//! let mut batch = ravel::Batch::new()?;
//! let opts = ravel::Options::new()?;
//! let it = db.iter()?;
//! std::thread::scope(|s| {
//!     s.spawn(move || { batch.put(b"k", b"v").unwrap(); batch.count() });
//!     s.spawn(move || opts.get("block_size"));
//!     s.spawn(move || it.valid());
//! });
//! db.close()?;
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), ravel::Error>(())
//! ```

#![warn(missing_docs)]

mod batch;
mod db;
mod error;
mod feed;
mod ingest;
mod iter;
mod lookups;
mod ops;
mod options;
mod range_delete;
mod repair;
mod snapshot;
mod text;
mod txn;

use std::ffi::CStr;

pub use batch::Batch;
pub use db::{destroy, Db, WriteFlags};
pub use error::{Code, Error, Result};
pub use feed::{Op, Ops, Updates};
pub use ingest::{IngestFlags, SstWriter};
pub use iter::{Iter, RangeIter};
pub use ops::backup;
pub use options::{Cache, Options, WriteController};
pub use repair::{repair, RepairKind, RepairReport};
pub use snapshot::Snapshot;
pub use txn::{Txn, TxnIter, TxnOptions, TxnRange};

/// The raw declarations this crate is built on, for anything the safe API
/// does not cover.
pub use ravel_sys as sys;

/// The version of the C library actually linked, e.g. `"0.1.0"`.
pub fn version() -> &'static str {
    // SAFETY: ravel_libversion returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(sys::ravel_libversion()) };
    v.to_str().unwrap_or("?")
}

/// The version of the C library actually linked, as
/// `major*1000000 + minor*1000 + patch`.
pub fn version_number() -> i32 {
    // SAFETY: takes nothing, returns a number.
    unsafe { sys::ravel_libversion_number() }
}

/// Which types may cross threads, checked when the crate compiles: this
/// fails to build if a type loses Send or Sync (or gains one by accident:
/// the compile_fail examples above check the "not Sync" side).
const _: () = {
    const fn send_and_sync<T: Send + Sync>() {}
    const fn send<T: Send>() {}
    send_and_sync::<Db>();
    send_and_sync::<Snapshot<'static>>();
    send_and_sync::<Cache>();
    send_and_sync::<WriteController>();
    send_and_sync::<Error>();
    send::<Batch>();
    send::<Iter<'static>>();
    send::<RangeIter<'static>>();
    send::<Options>();
    send::<Txn<'static>>();
    send_and_sync::<TxnOptions>();
    send::<Updates<'static>>();
    send::<SstWriter>();
};
