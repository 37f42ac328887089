//! options.rs -- the options a database is opened with, and the two
//! objects several databases can share through them: a block cache and a
//! write controller.

use std::ffi::c_char;
use std::fmt::Display;
use std::ptr::{self, NonNull};

use ravel_sys as sys;

use crate::error::{check, Result};
use crate::text::{c_string, take_ravel_text};

/// Options for [`Db::open`](crate::Db::open), set by name as listed in
/// ravel.h (RocksDB's names wherever the concept is the same).
///
/// An unknown name, or a value that does not parse, is an error of code
/// [`Code::Invalid`](crate::Code::Invalid) whose message names it:
///
/// ```
/// use ravel::{Code, Options};
/// let mut opts = Options::new()?;
/// opts.set("create_if_missing", true)?.set("write_buffer_size", "4M")?;
/// let err = opts.set("write_bufer_size", "4M").unwrap_err();
/// assert_eq!(err.code(), Code::Invalid);
/// assert!(err.message().contains("write_bufer_size"));
/// # Ok::<(), ravel::Error>(())
/// ```
///
/// The database copies the options at open, so they may be dropped or
/// reused afterwards.
pub struct Options {
    raw: NonNull<sys::ravel_options>,
}

// SAFETY: a ravel_options is plain heap data plus references on caches and
// write controllers, whose counts are atomic; ravel.h only asks that it be
// used by one thread at a time, which moving it to another thread keeps.
// It is not Sync: two threads reading it at once (`get`) is not allowed.
unsafe impl Send for Options {}

impl Options {
    /// Options holding ravel's defaults (note `create_if_missing=false`).
    pub fn new() -> Result<Options> {
        let mut raw = ptr::null_mut();
        // SAFETY: RAW is a valid out-pointer.
        check(unsafe { sys::ravel_options_new(&mut raw) })?;
        Ok(Options { raw: NonNull::new(raw).expect("ravel_options_new gave NULL") })
    }

    /// Sets option NAME to VALUE (a string, a number or a bool: anything
    /// printed with `Display`).  Booleans accept true/false/1/0/on/off/
    /// yes/no; sizes accept a K, M, G, T or P suffix.
    pub fn set(&mut self, name: &str, value: impl Display) -> Result<&mut Options> {
        let name = c_string("option name", name)?;
        let value = c_string("option value", &value.to_string())?;
        // SAFETY: self.raw is live and used by this thread only (&mut);
        // both strings are NUL-terminated and outlive the call.
        check(unsafe { sys::ravel_options_set(self.raw.as_ptr(), name.as_ptr(), value.as_ptr()) })?;
        Ok(self)
    }

    /// As [`set`](Options::set), but takes and returns the options, for a
    /// chain: `Options::new()?.with("create_if_missing", true)?`.
    pub fn with(mut self, name: &str, value: impl Display) -> Result<Options> {
        self.set(name, value)?;
        Ok(self)
    }

    /// Sets several options from `"name=value;name=value"`.  Stops at the
    /// first error, which names the item; earlier items stay set.
    pub fn parse(&mut self, text: &str) -> Result<&mut Options> {
        let text = c_string("options text", text)?;
        // SAFETY: as in `set`.
        check(unsafe { sys::ravel_options_parse(self.raw.as_ptr(), text.as_ptr()) })?;
        Ok(self)
    }

    /// The current value of option NAME, as text.
    pub fn get(&self, name: &str) -> Result<String> {
        let name = c_string("option name", name)?;
        let mut out: *mut c_char = ptr::null_mut();
        // SAFETY: self.raw is live; Options is not Sync, so no other thread
        // uses it now; OUT is a valid out-pointer.
        check(unsafe { sys::ravel_options_get(self.raw.as_ptr(), name.as_ptr(), &mut out) })?;
        // SAFETY: on success OUT is text ravel allocated for us.
        Ok(unsafe { take_ravel_text(out) })
    }

    /// Makes databases opened with these options share CACHE instead of
    /// each making its own (`block_cache_size` is then ignored); `None`
    /// clears it.  The options and each database hold their own reference,
    /// so the [`Cache`] value may be dropped at any time.
    pub fn set_cache(&mut self, cache: Option<&Cache>) -> Result<&mut Options> {
        let c = cache.map_or(ptr::null_mut(), |c| c.raw.as_ptr());
        // SAFETY: self.raw is live and ours; C is NULL or a live cache, on
        // which ravel takes its own reference.
        check(unsafe { sys::ravel_options_set_cache(self.raw.as_ptr(), c) })?;
        Ok(self)
    }

    /// Makes databases opened with these options share the write controller
    /// WC (`None`: each its own, the default).  Reference-counted like
    /// [`set_cache`](Options::set_cache).
    pub fn set_write_controller(&mut self, wc: Option<&WriteController>) -> Result<&mut Options> {
        let w = wc.map_or(ptr::null_mut(), |w| w.raw.as_ptr());
        // SAFETY: as in `set_cache`.
        check(unsafe { sys::ravel_options_set_write_controller(self.raw.as_ptr(), w) })?;
        Ok(self)
    }

    pub(crate) fn as_ptr(&self) -> *const sys::ravel_options {
        self.raw.as_ptr()
    }
}

impl Drop for Options {
    fn drop(&mut self) {
        // SAFETY: self.raw is live and dropped only here.
        unsafe { sys::ravel_options_free(self.raw.as_ptr()) }
    }
}

/// A block cache several databases can share, so one memory budget covers
/// them all; give it to [`Options::set_cache`].
pub struct Cache {
    raw: NonNull<sys::ravel_cache>,
}

// SAFETY: ravel.h says a cache is "safe to use from many threads at once",
// and its reference count (dropped by ravel_cache_free) is atomic.
unsafe impl Send for Cache {}
// SAFETY: as for Send: usage() and capacity() may run in many threads.
unsafe impl Sync for Cache {}

impl Cache {
    /// A cache holding up to CAPACITY bytes of blocks (0: nothing kept).
    pub fn new(capacity: u64) -> Result<Cache> {
        let mut raw = ptr::null_mut();
        // SAFETY: RAW is a valid out-pointer.
        check(unsafe { sys::ravel_cache_new(capacity, &mut raw) })?;
        Ok(Cache { raw: NonNull::new(raw).expect("ravel_cache_new gave NULL") })
    }

    /// Bytes of blocks the cache holds now.
    pub fn usage(&self) -> u64 {
        // SAFETY: self.raw is live; the cache is thread-safe.
        unsafe { sys::ravel_cache_usage(self.raw.as_ptr()) }
    }

    /// The capacity it was made with.
    pub fn capacity(&self) -> u64 {
        // SAFETY: as in `usage`.
        unsafe { sys::ravel_cache_capacity(self.raw.as_ptr()) }
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        // SAFETY: drops our reference only; options and databases keep theirs.
        unsafe { sys::ravel_cache_free(self.raw.as_ptr()) }
    }
}

/// A write controller several databases in one process can share, so
/// that the one that must catch up on compaction slows all their writers
/// (Speedb's "global delayed write"); give it to
/// [`Options::set_write_controller`].
pub struct WriteController {
    raw: NonNull<sys::ravel_write_controller>,
}

// SAFETY: a write controller has no functions but new and free; ravel.h
// makes it reference-counted like ravel_cache (atomic counts), and the
// databases attached to it use it from all their threads under its own lock.
unsafe impl Send for WriteController {}
// SAFETY: a shared reference allows nothing but reading the pointer.
unsafe impl Sync for WriteController {}

impl WriteController {
    /// A controller whose delayed writes start at DELAYED_WRITE_RATE bytes
    /// per second (1024 .. 2^40); it replaces the `delayed_write_rate` of
    /// the databases attached.
    pub fn new(delayed_write_rate: u64) -> Result<WriteController> {
        let mut raw = ptr::null_mut();
        // SAFETY: RAW is a valid out-pointer.
        check(unsafe { sys::ravel_write_controller_new(delayed_write_rate, &mut raw) })?;
        Ok(WriteController { raw: NonNull::new(raw).expect("ravel_write_controller_new gave NULL") })
    }
}

impl Drop for WriteController {
    fn drop(&mut self) {
        // SAFETY: drops our reference only.
        unsafe { sys::ravel_write_controller_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("capacity", &self.capacity()).field("usage", &self.usage()).finish()
    }
}

impl std::fmt::Debug for WriteController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteController").finish_non_exhaustive()
    }
}
