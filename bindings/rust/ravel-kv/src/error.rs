//! error.rs -- the binding's error type: which result code a call of ravel
//! failed with, and the detailed message ravel gave for that failure.
//!
//! The message lives in a per-OS-thread buffer of the C library, overwritten
//! by the thread's next failure.  Every wrapper therefore reads it with
//! `ravel_errmsg_r` in the same function, on the same thread, right after
//! the call that failed and before any other ravel call (see `check`).
//! Rust threads are OS threads and never move, so this reads the message of
//! that very failure.

use std::ffi::{c_char, c_int, CStr};
use std::fmt;

use ravel_sys as sys;

/// The result of every fallible call of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which result code a failure had: one variant per `RAVEL_*` result code
/// of ravel.h except `RAVEL_OK`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// `RAVEL_NOTFOUND`: the name is unknown ([`Db::property`](crate::Db::property));
    /// a missing key is `Ok(None)`, not this.
    NotFound,
    /// `RAVEL_INVALID`: a bad argument, a bad option, or misuse; also a
    /// table block compressed with a codec this build of ravel lacks (a
    /// `bundled` build without the `zstd` feature reading a database
    /// written with `compression=zstd`, say): the message names the file
    /// and the codec (the block passed its checksum: a build with the
    /// codec reads it).
    Invalid,
    /// `RAVEL_IOERR`: an I/O call failed.
    Io,
    /// `RAVEL_CORRUPT`: a file failed a checksum or format check.
    Corrupt,
    /// `RAVEL_NOMEM`: an allocation failed.
    NoMem,
    /// `RAVEL_BUSY`: the write would have had to wait and
    /// [`WriteFlags::NO_SLOWDOWN`](crate::WriteFlags::NO_SLOWDOWN) said not to.
    Busy,
    /// `RAVEL_LOCKED`: the database directory is open elsewhere.
    Locked,
    /// `RAVEL_READONLY`: writes are refused (opened read-only, or stopped by
    /// an earlier failure); reads still work.
    ReadOnly,
    /// `RAVEL_CONFLICT`: a key the transaction read for update or wrote was
    /// written by another after its snapshot.  Retriable.
    Conflict,
    /// `RAVEL_TIMEDOUT`: a pessimistic transaction's lock wait passed the
    /// option `txn_lock_timeout` (the message names the key and the
    /// holder).  Retriable.
    TimedOut,
    /// `RAVEL_DEADLOCK`: the transaction was the youngest in a cycle of
    /// lock waits and was chosen to fail (the message names the cycle).
    /// Retriable.
    Deadlock,
    /// `RAVEL_EXPIRED`: the change feed's sequence is no longer in the WAL
    /// (flushed and deleted, or past the retention options
    /// `wal_ttl_seconds` / `wal_size_limit_mb`); the message names the
    /// oldest available.  Start the follower again from a checkpoint.
    Expired,
    /// A result code newer than this binding; [`Error::raw_code`] has it.
    Unknown,
}

impl Code {
    /// The code of a non-zero result RC of a ravel function.
    pub fn from_raw(rc: c_int) -> Code {
        match rc {
            sys::RAVEL_NOTFOUND => Code::NotFound,
            sys::RAVEL_INVALID => Code::Invalid,
            sys::RAVEL_IOERR => Code::Io,
            sys::RAVEL_CORRUPT => Code::Corrupt,
            sys::RAVEL_NOMEM => Code::NoMem,
            sys::RAVEL_BUSY => Code::Busy,
            sys::RAVEL_LOCKED => Code::Locked,
            sys::RAVEL_READONLY => Code::ReadOnly,
            sys::RAVEL_CONFLICT => Code::Conflict,
            sys::RAVEL_TIMEDOUT => Code::TimedOut,
            sys::RAVEL_DEADLOCK => Code::Deadlock,
            sys::RAVEL_EXPIRED => Code::Expired,
            _ => Code::Unknown,
        }
    }

    /// The `RAVEL_*` value of this code (`None` for [`Code::Unknown`]).
    pub fn raw(self) -> Option<c_int> {
        match self {
            Code::NotFound => Some(sys::RAVEL_NOTFOUND),
            Code::Invalid => Some(sys::RAVEL_INVALID),
            Code::Io => Some(sys::RAVEL_IOERR),
            Code::Corrupt => Some(sys::RAVEL_CORRUPT),
            Code::NoMem => Some(sys::RAVEL_NOMEM),
            Code::Busy => Some(sys::RAVEL_BUSY),
            Code::Locked => Some(sys::RAVEL_LOCKED),
            Code::ReadOnly => Some(sys::RAVEL_READONLY),
            Code::Conflict => Some(sys::RAVEL_CONFLICT),
            Code::TimedOut => Some(sys::RAVEL_TIMEDOUT),
            Code::Deadlock => Some(sys::RAVEL_DEADLOCK),
            Code::Expired => Some(sys::RAVEL_EXPIRED),
            Code::Unknown => None,
        }
    }

    /// True for the codes after which running the transaction again may
    /// succeed: [`Conflict`](Code::Conflict), [`TimedOut`](Code::TimedOut)
    /// and [`Deadlock`](Code::Deadlock).
    pub fn is_retriable(self) -> bool {
        matches!(self, Code::Conflict | Code::TimedOut | Code::Deadlock)
    }
}

/// A failure of a ravel call: its [`Code`] and the detailed message ravel
/// gave for it (naming the file, offset, option or errno involved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: Code,
    raw: c_int,
    message: String,
}

impl Error {
    /// The error of the call that just returned RC (non-zero) on this
    /// thread.  Must be called before any other ravel call on this thread,
    /// which could overwrite the message: use [`check`].
    fn from_failed_call(rc: c_int) -> Error {
        let mut buf = [0 as c_char; 512];
        // SAFETY: BUF is writable for its length; ravel_errmsg_r never
        // fails and NUL-terminates what it copies.
        unsafe { sys::ravel_errmsg_r(buf.as_mut_ptr(), buf.len()) };
        // SAFETY: NUL-terminated above, within BUF.
        let text = unsafe { CStr::from_ptr(buf.as_ptr()) };
        Error { code: Code::from_raw(rc), raw: rc, message: text.to_string_lossy().into_owned() }
    }

    /// An error found by the binding itself before calling ravel (a NUL
    /// byte in a name, for example).
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, raw: code.raw().unwrap_or(-1), message: message.into() }
    }

    /// Which result code the call failed with.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The raw `RAVEL_*` result code.
    pub fn raw_code(&self) -> c_int {
        self.raw
    }

    /// True if running the transaction again may succeed (a conflict, a
    /// lock wait that timed out, a deadlock): [`Code::is_retriable`].
    /// [`Db::transaction`](crate::Db::transaction) retries on these.
    pub fn is_retriable(&self) -> bool {
        self.code.is_retriable()
    }

    /// ravel's detailed message, e.g. `unknown option "write_bufer_size"
    /// (did you mean "write_buffer_size"?)`.  Empty only if ravel gave none.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: ravel_errstr takes any int and returns a static string;
        // it does not touch the per-thread message.
        let what = unsafe { CStr::from_ptr(sys::ravel_errstr(self.raw)) };
        let what = what.to_string_lossy();
        if self.message.is_empty() {
            write!(f, "{what}")
        } else {
            write!(f, "{what}: {}", self.message)
        }
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `RAVEL_OK`, else the error of the call that returned RC,
/// with its message.  Call it on a call's result right away, in the same
/// function, with no ravel call in between.
pub(crate) fn check(rc: c_int) -> Result<()> {
    if rc == sys::RAVEL_OK {
        Ok(())
    } else {
        Err(Error::from_failed_call(rc))
    }
}
