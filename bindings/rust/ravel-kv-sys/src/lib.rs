//! Raw FFI declarations of ravel's C API, `include/ravel.h`, written by hand.
//!
//! This crate owns nothing but declarations: every function, opaque type
//! and constant of `ravel.h`, in the header's order, with the header's
//! names.  It does no checking and has no safe wrappers; use the `ravel-kv`
//! crate (`use ravel::Db`) for those.  `tests/header_sync.rs` parses
//! `ravel.h` and fails if anything declared there is missing here or has a
//! different signature or value, so the two cannot drift apart.
//!
//! Linking: by default the build script finds an installed libravel with
//! pkg-config (`pkg-config ravel`); with the `bundled` feature it compiles
//! the amalgamation (`amalgamation/ravel.c`) into the crate instead, with
//! lz4 and zstd block compression if the `lz4` and `zstd` features ask for
//! them (the codecs come from the `lz4-sys` and `zstd-sys` crates).
//!
//! Every function here is `unsafe` to call: the rules (ownership of
//! returned memory, which objects may be used from several threads, NULL
//! only with a zero length) are the ones documented in `ravel.h`.
#![no_std]
#![warn(missing_docs)]
#![allow(non_camel_case_types)]

// The codecs the bundled ravel.c calls: named here so that their static
// libraries are linked (a dependency no code mentions is left out).
#[cfg(feature = "lz4")]
use lz4_sys as _;
#[cfg(feature = "zstd")]
use zstd_sys as _;

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::marker::{PhantomData, PhantomPinned};

// ------------------------------------------------------------ version

/// The version of the header these declarations were written from.
pub const RAVEL_VERSION: &CStr = c"0.1.0";
/// `major*1000000 + minor*1000 + patch` of the header.
pub const RAVEL_VERSION_NUMBER: c_int = 1000;

extern "C" {
    /// The version of the library actually linked ("0.1.0").
    pub fn ravel_libversion() -> *const c_char;
    /// The linked library's version as `major*1000000 + minor*1000 + patch`.
    pub fn ravel_libversion_number() -> c_int;
}

// ------------------------------------------------------- result codes

/// Success.
pub const RAVEL_OK: c_int = 0;
/// The key is absent (ravel_get, ravel_property).
pub const RAVEL_NOTFOUND: c_int = 1;
/// Bad argument, bad option, or misuse.
pub const RAVEL_INVALID: c_int = 2;
/// An I/O call failed.
pub const RAVEL_IOERR: c_int = 3;
/// A file failed a checksum or format check.
pub const RAVEL_CORRUPT: c_int = 4;
/// An allocation failed.
pub const RAVEL_NOMEM: c_int = 5;
/// Would have to wait, and the caller said not to (RAVEL_NO_SLOWDOWN).
pub const RAVEL_BUSY: c_int = 6;
/// The database directory is open elsewhere.
pub const RAVEL_LOCKED: c_int = 7;
/// Writes refused after an earlier failure, or opened read-only.
pub const RAVEL_READONLY: c_int = 8;
/// A transaction's key was written by someone else after its snapshot
/// (retriable).
pub const RAVEL_CONFLICT: c_int = 9;
/// A transaction's lock wait ran out, txn_lock_timeout (retriable).
pub const RAVEL_TIMEDOUT: c_int = 10;
/// A transaction was the youngest in a cycle of lock waits (retriable).
pub const RAVEL_DEADLOCK: c_int = 11;
/// The change feed's sequence is no longer in the WAL (ravel_updates_since).
pub const RAVEL_EXPIRED: c_int = 12;

extern "C" {
    /// A static English description of a result code; never NULL.
    pub fn ravel_errstr(rc: c_int) -> *const c_char;
    /// The calling thread's most recent failure message; never NULL.
    pub fn ravel_errmsg() -> *const c_char;
    /// Copies the calling thread's message into `buf` (cut to fit, always
    /// NUL-terminated when `size > 0`); returns its full length.
    pub fn ravel_errmsg_r(buf: *mut c_char, size: usize) -> usize;
}

// ------------------------------------------------------------- limits

/// Longest key accepted (1 MiB).
pub const RAVEL_MAX_KEY_SIZE: c_uint = 1 << 20;
/// Longest value accepted (256 MiB).
pub const RAVEL_MAX_VALUE_SIZE: c_uint = 256 << 20;
/// Largest encoded batch accepted (1 GiB).
pub const RAVEL_MAX_BATCH_SIZE: c_uint = 1 << 30;

extern "C" {
    /// Frees memory returned by ravel (values, property and option text).
    pub fn ravel_free(p: *mut c_void);
}

// ------------------------------------------------------------ options

/// Opaque options object (`ravel_options`).
#[repr(C)]
pub struct ravel_options {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// A new options object holding the defaults, in `*out`.
    pub fn ravel_options_new(out: *mut *mut ravel_options) -> c_int;
    /// Frees an options object (NULL: no-op).
    pub fn ravel_options_free(opts: *mut ravel_options);
    /// Sets one option by name; RAVEL_INVALID naming an unknown name or bad value.
    pub fn ravel_options_set(opts: *mut ravel_options, name: *const c_char, value: *const c_char) -> c_int;
    /// Sets several options from `"name=value;name=value"`, stopping at the first error.
    pub fn ravel_options_parse(opts: *mut ravel_options, text: *const c_char) -> c_int;
    /// An option's current value as text in `*out` (free with ravel_free).
    pub fn ravel_options_get(opts: *const ravel_options, name: *const c_char, out: *mut *mut c_char)
        -> c_int;
}

// -------------------------------------------------------- block cache

/// Opaque shared block cache (`ravel_cache`), reference-counted.
#[repr(C)]
pub struct ravel_cache {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// A new shared block cache of CAPACITY bytes, one reference held by the caller.
    pub fn ravel_cache_new(capacity: u64, out: *mut *mut ravel_cache) -> c_int;
    /// Drops the caller's reference (NULL: no-op).
    pub fn ravel_cache_free(c: *mut ravel_cache);
    /// Bytes of blocks the cache holds now (0 for NULL).
    pub fn ravel_cache_usage(c: *const ravel_cache) -> u64;
    /// The capacity the cache was made with (0 for NULL).
    pub fn ravel_cache_capacity(c: *const ravel_cache) -> u64;
    /// Makes databases opened with OPTS share cache C (NULL clears it).
    pub fn ravel_options_set_cache(opts: *mut ravel_options, c: *mut ravel_cache) -> c_int;
}

// --------------------------------------------------- write controller

/// Opaque shared write controller (`ravel_write_controller`).
#[repr(C)]
pub struct ravel_write_controller {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// A new shared write controller, one reference held by the caller.
    pub fn ravel_write_controller_new(
        delayed_write_rate: u64,
        out: *mut *mut ravel_write_controller,
    ) -> c_int;
    /// Drops the caller's reference (NULL: no-op).
    pub fn ravel_write_controller_free(wc: *mut ravel_write_controller);
    /// Makes databases opened with OPTS share controller WC (NULL: each its own).
    pub fn ravel_options_set_write_controller(
        opts: *mut ravel_options,
        wc: *mut ravel_write_controller,
    ) -> c_int;
}

// ----------------------------------------------------------- database

/// Opaque database handle (`ravel_db`).
#[repr(C)]
pub struct ravel_db {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// Opens the database in directory DIR (OPTS may be NULL) into `*out`.
    pub fn ravel_open(dir: *const c_char, opts: *const ravel_options, out: *mut *mut ravel_db) -> c_int;
    /// Closes the database; RAVEL_INVALID (and still open) if snapshots or iterators are live.
    pub fn ravel_close(db: *mut ravel_db) -> c_int;
    /// Deletes the database in directory DIR (its files, its LOCK, then DIR
    /// if nothing else is left), as RocksDB's DestroyDB; RAVEL_LOCKED if open.
    pub fn ravel_destroy(dir: *const c_char) -> c_int;
}

// ------------------------------------------------------------- writes

/// Write flag: return only once the write is on stable storage.
pub const RAVEL_SYNC: c_int = 0x1;
/// Write flag: skip the write-ahead log.
pub const RAVEL_NO_WAL: c_int = 0x2;
/// Write flag: return RAVEL_BUSY instead of waiting for the write controller.
pub const RAVEL_NO_SLOWDOWN: c_int = 0x4;

/// Opaque write batch (`ravel_batch`).
#[repr(C)]
pub struct ravel_batch {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// A new empty write batch in `*out`.
    pub fn ravel_batch_new(out: *mut *mut ravel_batch) -> c_int;
    /// Frees a batch (NULL: no-op).
    pub fn ravel_batch_free(b: *mut ravel_batch);
    /// Adds "set KEY to VAL" to the batch.
    pub fn ravel_batch_put(
        b: *mut ravel_batch,
        key: *const c_void,
        klen: usize,
        val: *const c_void,
        vlen: usize,
    ) -> c_int;
    /// Adds "delete KEY" to the batch.
    pub fn ravel_batch_delete(b: *mut ravel_batch, key: *const c_void, klen: usize) -> c_int;
    /// Adds "delete every key in [BEGIN, END)" to the batch.
    pub fn ravel_batch_delete_range(
        b: *mut ravel_batch,
        begin: *const c_void,
        blen: usize,
        end: *const c_void,
        elen: usize,
    ) -> c_int;
    /// Removes every operation from the batch.
    pub fn ravel_batch_clear(b: *mut ravel_batch) -> c_int;
    /// Number of operations in the batch (0 for NULL).
    pub fn ravel_batch_count(b: *const ravel_batch) -> u32;

    /// Applies a batch atomically with FLAGS (RAVEL_SYNC, RAVEL_NO_WAL, RAVEL_NO_SLOWDOWN).
    pub fn ravel_write(db: *mut ravel_db, flags: c_int, batch: *mut ravel_batch) -> c_int;
    /// Sets KEY to VAL with FLAGS.
    pub fn ravel_put(
        db: *mut ravel_db,
        flags: c_int,
        key: *const c_void,
        klen: usize,
        val: *const c_void,
        vlen: usize,
    ) -> c_int;
    /// Deletes KEY with FLAGS.
    pub fn ravel_delete(db: *mut ravel_db, flags: c_int, key: *const c_void, klen: usize) -> c_int;
    /// Deletes every key in [BEGIN, END) with FLAGS, as one operation.
    pub fn ravel_delete_range(
        db: *mut ravel_db,
        flags: c_int,
        begin: *const c_void,
        blen: usize,
        end: *const c_void,
        elen: usize,
    ) -> c_int;

    /// Makes the WAL reach the OS and, with SYNC non-zero, stable storage.
    pub fn ravel_flush_wal(db: *mut ravel_db, sync: c_int) -> c_int;
}

/// Flush flag: start the flush and return without waiting for it.
pub const RAVEL_FLUSH_NO_WAIT: c_int = 0x1;

extern "C" {
    /// Writes the memtables to table files (RAVEL_FLUSH_NO_WAIT: without waiting).
    pub fn ravel_flush(db: *mut ravel_db, flags: c_int) -> c_int;
    /// Compacts the keys from BEGIN to END, both included (NULL: unbounded).
    pub fn ravel_compact_range(
        db: *mut ravel_db,
        begin: *const c_void,
        blen: usize,
        end: *const c_void,
        elen: usize,
    ) -> c_int;
    /// Reads and checks every block of every table file.
    pub fn ravel_verify(db: *mut ravel_db) -> c_int;
}

// -------------------------------------------------------------- reads

/// Opaque snapshot (`ravel_snapshot`).
#[repr(C)]
pub struct ravel_snapshot {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// A snapshot of the current state in `*out`.
    pub fn ravel_snapshot_acquire(db: *mut ravel_db, out: *mut *mut ravel_snapshot) -> c_int;
    /// Releases a snapshot of DB.
    pub fn ravel_snapshot_release(db: *mut ravel_db, snap: *mut ravel_snapshot) -> c_int;
    /// The sequence number a snapshot reads at (0 for NULL).
    pub fn ravel_snapshot_sequence(snap: *const ravel_snapshot) -> u64;
}

/// Opaque read options (`ravel_readoptions`).
#[repr(C)]
pub struct ravel_readoptions {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// New read options holding the defaults in `*out`.
    pub fn ravel_readoptions_new(out: *mut *mut ravel_readoptions) -> c_int;
    /// Frees read options (NULL: no-op).
    pub fn ravel_readoptions_free(ro: *mut ravel_readoptions);
    /// The snapshot read (NULL: the latest state); not copied.
    pub fn ravel_readoptions_set_snapshot(ro: *mut ravel_readoptions, snap: *const ravel_snapshot) -> c_int;
    /// An iterator's lower bound, included (KEY NULL: none); copied.
    pub fn ravel_readoptions_set_iterate_lower_bound(
        ro: *mut ravel_readoptions,
        key: *const c_void,
        klen: usize,
    ) -> c_int;
    /// An iterator's upper bound, excluded (KEY NULL: none); copied.
    pub fn ravel_readoptions_set_iterate_upper_bound(
        ro: *mut ravel_readoptions,
        key: *const c_void,
        klen: usize,
    ) -> c_int;
    /// Whether data blocks read from files have their checksums checked.
    pub fn ravel_readoptions_set_verify_checksums(ro: *mut ravel_readoptions, verify: c_int) -> c_int;
    /// Whether data blocks read from files are put in the block cache.
    pub fn ravel_readoptions_set_fill_cache(ro: *mut ravel_readoptions, fill: c_int) -> c_int;

    /// Looks KEY up as of SNAP (NULL: latest); the value in `*val` is freed with ravel_free.
    pub fn ravel_get(
        db: *mut ravel_db,
        snap: *const ravel_snapshot,
        key: *const c_void,
        klen: usize,
        val: *mut *mut c_void,
        vlen: *mut usize,
    ) -> c_int;
    /// As ravel_get, but copies the value into BUF; `*vlen` is the value's whole length.
    pub fn ravel_get_into(
        db: *mut ravel_db,
        snap: *const ravel_snapshot,
        key: *const c_void,
        klen: usize,
        buf: *mut c_void,
        cap: usize,
        vlen: *mut usize,
    ) -> c_int;
    /// ravel_get with read options RO (NULL: the defaults).
    pub fn ravel_get_opt(
        db: *mut ravel_db,
        ro: *const ravel_readoptions,
        key: *const c_void,
        klen: usize,
        val: *mut *mut c_void,
        vlen: *mut usize,
    ) -> c_int;
    /// ravel_get_into with read options RO (NULL: the defaults).
    pub fn ravel_get_into_opt(
        db: *mut ravel_db,
        ro: *const ravel_readoptions,
        key: *const c_void,
        klen: usize,
        buf: *mut c_void,
        cap: usize,
        vlen: *mut usize,
    ) -> c_int;
    /// Looks up the N keys `keys[i]` (`klens[i]` bytes) all at one sequence
    /// (RO's snapshot, or the latest state taken once); `rcs[i]` is RAVEL_OK
    /// (`vals[i]` freed with ravel_free) or RAVEL_NOTFOUND.  Any other
    /// return gives no value: every `vals[i]` NULL and `rcs[i]` that code.
    pub fn ravel_multi_get(
        db: *mut ravel_db,
        ro: *const ravel_readoptions,
        n: usize,
        keys: *const *const c_void,
        klens: *const usize,
        vals: *mut *mut c_void,
        vlens: *mut usize,
        rcs: *mut c_int,
    ) -> c_int;
}

/// Opaque iterator (`ravel_iter`).
#[repr(C)]
pub struct ravel_iter {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// A new iterator over SNAP (NULL: the current state) in `*out`.
    pub fn ravel_iter_new(db: *mut ravel_db, snap: *const ravel_snapshot, out: *mut *mut ravel_iter)
        -> c_int;
    /// A new iterator reading with options RO (NULL: the defaults) in `*out`.
    pub fn ravel_iter_new_opt(
        db: *mut ravel_db,
        ro: *const ravel_readoptions,
        out: *mut *mut ravel_iter,
    ) -> c_int;
    /// Replaces the iterator's bounds (NULL: none), copied; leaves it unpositioned.
    pub fn ravel_iter_set_bounds(
        it: *mut ravel_iter,
        lower: *const c_void,
        llen: usize,
        upper: *const c_void,
        ulen: usize,
    ) -> c_int;
    /// Frees an iterator (NULL: no-op).
    pub fn ravel_iter_free(it: *mut ravel_iter);
    /// Positions at the first key >= KEY.
    pub fn ravel_iter_seek(it: *mut ravel_iter, key: *const c_void, klen: usize) -> c_int;
    /// Positions at the last key <= KEY.
    pub fn ravel_iter_seek_for_prev(it: *mut ravel_iter, key: *const c_void, klen: usize) -> c_int;
    /// Positions at the first key.
    pub fn ravel_iter_seek_to_first(it: *mut ravel_iter) -> c_int;
    /// Positions at the last key.
    pub fn ravel_iter_seek_to_last(it: *mut ravel_iter) -> c_int;
    /// Moves to the next key; RAVEL_INVALID if not valid.
    pub fn ravel_iter_next(it: *mut ravel_iter) -> c_int;
    /// Moves to the previous key; RAVEL_INVALID if not valid.
    pub fn ravel_iter_prev(it: *mut ravel_iter) -> c_int;
    /// 1 if positioned at an entry, 0 otherwise (and for NULL).
    pub fn ravel_iter_valid(it: *const ravel_iter) -> c_int;
    /// The current key (valid until the iterator moves); NULL with `*len = 0` if not valid.
    pub fn ravel_iter_key(it: *const ravel_iter, len: *mut usize) -> *const c_void;
    /// The current value (valid until the iterator moves); NULL with `*len = 0` if not valid.
    pub fn ravel_iter_value(it: *const ravel_iter, len: *mut usize) -> *const c_void;
    /// RAVEL_OK, or the error that stopped the iterator.
    pub fn ravel_iter_status(it: *const ravel_iter) -> c_int;
}

// ------------------------------------------------------- transactions

/// Opaque transaction (`ravel_txn`).
#[repr(C)]
pub struct ravel_txn {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Validate at commit instead of locking (a flag of ravel_txn_begin).
pub const RAVEL_TXN_OPTIMISTIC: c_int = 0x100;

/// The body of a transaction for ravel_txn_run: RAVEL_OK to commit,
/// anything else to roll back (a retriable code makes it run again).
pub type ravel_txn_fn = Option<unsafe extern "C" fn(t: *mut ravel_txn, ctx: *mut c_void) -> c_int>;

extern "C" {
    /// Begins a transaction in `*out`; FLAGS: RAVEL_SYNC, RAVEL_TXN_OPTIMISTIC.
    pub fn ravel_txn_begin(db: *mut ravel_db, flags: c_int, out: *mut *mut ravel_txn) -> c_int;
    /// As ravel_get, as the transaction sees it (free `*val` with ravel_free).
    pub fn ravel_txn_get(
        t: *mut ravel_txn,
        key: *const c_void,
        klen: usize,
        val: *mut *mut c_void,
        vlen: *mut usize,
    ) -> c_int;
    /// As ravel_txn_get, and the key is locked (pessimistic) or checked at commit.
    pub fn ravel_txn_get_for_update(
        t: *mut ravel_txn,
        key: *const c_void,
        klen: usize,
        val: *mut *mut c_void,
        vlen: *mut usize,
    ) -> c_int;
    /// Writes KEY = VAL in the transaction.
    pub fn ravel_txn_put(
        t: *mut ravel_txn,
        key: *const c_void,
        klen: usize,
        val: *const c_void,
        vlen: usize,
    ) -> c_int;
    /// Deletes KEY in the transaction.
    pub fn ravel_txn_delete(t: *mut ravel_txn, key: *const c_void, klen: usize) -> c_int;
    /// Always RAVEL_INVALID: a transaction refuses range deletes.
    pub fn ravel_txn_delete_range(
        t: *mut ravel_txn,
        begin: *const c_void,
        blen: usize,
        end: *const c_void,
        elen: usize,
    ) -> c_int;
    /// An iterator over the transaction's view in `*out` (free before it ends).
    pub fn ravel_txn_iter_new(t: *mut ravel_txn, out: *mut *mut ravel_iter) -> c_int;
    /// Sets a savepoint (they nest).
    pub fn ravel_txn_savepoint(t: *mut ravel_txn) -> c_int;
    /// Undoes the writes since the last savepoint; RAVEL_NOTFOUND if none.
    pub fn ravel_txn_rollback_to_savepoint(t: *mut ravel_txn) -> c_int;
    /// Names the transaction for two-phase commit (1 to 255 bytes, unique).
    pub fn ravel_txn_set_name(t: *mut ravel_txn, name: *const c_char) -> c_int;
    /// The first phase of a two-phase commit.
    pub fn ravel_txn_prepare(t: *mut ravel_txn) -> c_int;
    /// Commits; the transaction is over either way (unless prepared and the commit failed).
    pub fn ravel_txn_commit(t: *mut ravel_txn) -> c_int;
    /// Rolls back.
    pub fn ravel_txn_rollback(t: *mut ravel_txn) -> c_int;
    /// Frees T, rolling it back if open; a prepared T stays prepared.
    pub fn ravel_txn_free(t: *mut ravel_txn);
    /// The prepared transaction NAME in `*out`; RAVEL_NOTFOUND if none.
    pub fn ravel_txn_recover(db: *mut ravel_db, name: *const c_char, out: *mut *mut ravel_txn) -> c_int;
    /// Runs FUNC in a transaction and commits, retrying on the retriable codes
    /// up to MAX_ATTEMPTS times (0: 10).
    pub fn ravel_txn_run(
        db: *mut ravel_db,
        flags: c_int,
        func: ravel_txn_fn,
        ctx: *mut c_void,
        max_attempts: c_int,
    ) -> c_int;
}

// ------------------------------------------------------ introspection

extern "C" {
    /// Text about the database for property NAME in `*text` (free with ravel_free).
    pub fn ravel_property(db: *mut ravel_db, name: *const c_char, text: *mut *mut c_char) -> c_int;
}

// -------------------------------------- bulk ingest (issue 22: ingest)

/// Opaque table-file writer for bulk ingest (`ravel_sst_writer`).
#[repr(C)]
pub struct ravel_sst_writer {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// Creates PATH (RAVEL_INVALID if it exists) and a writer for it in `*out`.
    pub fn ravel_sst_writer_open(
        path: *const c_char,
        opts: *const ravel_options,
        out: *mut *mut ravel_sst_writer,
    ) -> c_int;
    /// Adds a put of KEY; keys in strictly increasing bytewise order.
    pub fn ravel_sst_writer_put(
        w: *mut ravel_sst_writer,
        key: *const c_void,
        klen: usize,
        val: *const c_void,
        vlen: usize,
    ) -> c_int;
    /// Adds a delete of KEY, in the same order as puts.
    pub fn ravel_sst_writer_delete(w: *mut ravel_sst_writer, key: *const c_void, klen: usize) -> c_int;
    /// Completes the file and makes it durable; `*entries` the keys added.
    pub fn ravel_sst_writer_finish(w: *mut ravel_sst_writer, entries: *mut u64) -> c_int;
    /// Frees the writer; a file it did not finish is removed (NULL: no-op).
    pub fn ravel_sst_writer_free(w: *mut ravel_sst_writer);
}

/// Ingest flag: hard-link and remove the source files (else copy and keep).
pub const RAVEL_INGEST_MOVE: c_int = 0x1;

extern "C" {
    /// Adds the N table files PATHS to DB atomically.
    pub fn ravel_ingest(db: *mut ravel_db, paths: *const *const c_char, n: usize, flags: c_int) -> c_int;
}

// ------------------------------------------------ repair (issue 22: repair)

/// A repair report line: what was found and done.
pub const RAVEL_REPAIR_NOTE: c_int = 0;
/// A repair report line: what was recovered.
pub const RAVEL_REPAIR_KEPT: c_int = 1;
/// A repair report line: what was lost.
pub const RAVEL_REPAIR_LOST: c_int = 2;
/// A repair report line: what was kept but may be stale or wrong.
pub const RAVEL_REPAIR_WARN: c_int = 3;

/// Called by ravel_repair with each report line and its kind.
pub type ravel_repair_fn = Option<unsafe extern "C" fn(ctx: *mut c_void, kind: c_int, line: *const c_char)>;

extern "C" {
    /// Salvages the damaged database directory DIR; the report in `*report`
    /// (free with ravel_free) and line by line to FN.
    pub fn ravel_repair(
        dir: *const c_char,
        opts: *const ravel_options,
        func: ravel_repair_fn,
        ctx: *mut c_void,
        report: *mut *mut c_char,
    ) -> c_int;
}

// ------------------------------------ checkpoints and backups (issue 22)

extern "C" {
    /// Makes DIR (which must not exist) a database holding DB's state at one moment.
    pub fn ravel_checkpoint(db: *mut ravel_db, dir: *const c_char) -> c_int;
    /// Takes an incremental backup of DB into ROOT; its id in `*id`.
    pub fn ravel_backup_create(db: *mut ravel_db, root: *const c_char, id: *mut u64) -> c_int;
}

/// Called by ravel_backup_list with each complete backup's id; non-zero stops it.
pub type ravel_backup_fn = Option<unsafe extern "C" fn(ctx: *mut c_void, id: u64) -> c_int>;

extern "C" {
    /// Lists the complete backups of ROOT, oldest first.
    pub fn ravel_backup_list(root: *const c_char, func: ravel_backup_fn, ctx: *mut c_void) -> c_int;
}

/// ravel_backup_info: when it was taken, seconds since 1970.
pub const RAVEL_BACKUP_TIME: c_int = 1;
/// ravel_backup_info: the last sequence number it holds.
pub const RAVEL_BACKUP_SEQUENCE: c_int = 2;
/// ravel_backup_info: bytes of all its files.
pub const RAVEL_BACKUP_BYTES: c_int = 3;
/// ravel_backup_info: bytes it copied when taken.
pub const RAVEL_BACKUP_COPIED: c_int = 4;
/// ravel_backup_info: number of files.
pub const RAVEL_BACKUP_FILES: c_int = 5;

extern "C" {
    /// Sets `*value` to WHAT (RAVEL_BACKUP_*) of backup ID in ROOT.
    pub fn ravel_backup_info(root: *const c_char, id: u64, what: c_int, value: *mut u64) -> c_int;
    /// Checks every file of backup ID against its size and checksum.
    pub fn ravel_backup_verify(root: *const c_char, id: u64) -> c_int;
    /// Restores backup ID of ROOT (0: the newest) into DIR, which must not exist.
    pub fn ravel_backup_restore(root: *const c_char, id: u64, dir: *const c_char) -> c_int;
    /// Deletes all but the KEEP newest complete backups of ROOT.
    pub fn ravel_backup_purge(root: *const c_char, keep: c_int) -> c_int;
    /// Writes a full backup of DB as one file at PATH, which must not exist.
    pub fn ravel_backup_write_file(db: *mut ravel_db, path: *const c_char) -> c_int;
    /// Writes a full one-file backup of DB to the open descriptor FD.
    pub fn ravel_backup_write_fd(db: *mut ravel_db, fd: c_int) -> c_int;
    /// Restores a one-file backup from PATH into DIR, which must not exist.
    pub fn ravel_backup_restore_file(path: *const c_char, dir: *const c_char) -> c_int;
    /// Restores a one-file backup read from FD into DIR, which must not exist.
    pub fn ravel_backup_restore_fd(fd: c_int, dir: *const c_char) -> c_int;
}

// ------------------------------- readers in other processes (issue 22)

extern "C" {
    /// Catches the reader (read_only) DB up with the writer; RAVEL_OK at once on a writer.
    pub fn ravel_catch_up(db: *mut ravel_db) -> c_int;
}

// ---------------------------------------------- change feed (issue 22)

/// An operation of a batch: a delete.
pub const RAVEL_OP_DELETE: c_int = 0;
/// An operation of a batch: a put.
pub const RAVEL_OP_PUT: c_int = 1;
/// An operation of a batch: a range delete (key: its begin, value: its end).
pub const RAVEL_OP_DELETE_RANGE: c_int = 2;

/// Opaque change-feed iterator (`ravel_updates`).
#[repr(C)]
pub struct ravel_updates {
    _opaque: [u8; 0],
    _not_send_sync_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

extern "C" {
    /// Reads the operation of B at `*pos` and moves `*pos` past it; RAVEL_NOTFOUND after the last.
    pub fn ravel_batch_next_op(
        b: *const ravel_batch,
        pos: *mut usize,
        op: *mut c_int,
        key: *mut *const c_void,
        klen: *mut usize,
        val: *mut *const c_void,
        vlen: *mut usize,
    ) -> c_int;
    /// B's bytes, `*len` of them, pointing into B.
    pub fn ravel_batch_data(b: *const ravel_batch, len: *mut usize) -> *const c_void;
    /// A new batch holding a copy of DATA (from ravel_batch_data), checked whole.
    pub fn ravel_batch_from_data(data: *const c_void, len: usize, out: *mut *mut ravel_batch) -> c_int;
    /// The sequence in B's header (0 for a batch never written).
    pub fn ravel_batch_sequence(b: *const ravel_batch) -> u64;
    /// A new change-feed iterator over the batches from SEQ on.
    pub fn ravel_updates_since(
        db: *mut ravel_db,
        seq: u64,
        flags: c_int,
        out: *mut *mut ravel_updates,
    ) -> c_int;
    /// Moves to the next batch; RAVEL_NOTFOUND at the end of what the WAL holds now.
    pub fn ravel_updates_next(u: *mut ravel_updates) -> c_int;
    /// The current batch's sequence (0 when none).
    pub fn ravel_updates_sequence(u: *const ravel_updates) -> u64;
    /// The current batch (NULL when none), owned by the iterator.
    pub fn ravel_updates_batch(u: *const ravel_updates) -> *const ravel_batch;
    /// The last sequence the iterator has passed.
    pub fn ravel_updates_last_sequence(u: *const ravel_updates) -> u64;
    /// Frees the iterator (NULL: no-op).
    pub fn ravel_updates_free(u: *mut ravel_updates);
}
