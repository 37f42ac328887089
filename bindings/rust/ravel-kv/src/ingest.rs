//! ingest.rs -- bulk ingest (issue 22): [`SstWriter`] builds table files
//! outside any database, [`Db::ingest`] adds them to one atomically.

use std::ffi::{c_char, c_int};
use std::ops::BitOr;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use ravel_sys as sys;

use crate::db::Db;
use crate::error::{check, Result};
use crate::options::Options;
use crate::text::{bytes_ptr, c_path};

/// Writes a table file for [`Db::ingest`], outside any database.  Keys go
/// in strictly increasing bytewise order, each once, as puts or deletes;
/// [`finish`](SstWriter::finish) completes the file and makes it durable.
/// A writer dropped unfinished removes its file.
pub struct SstWriter {
    raw: NonNull<sys::ravel_sst_writer>,
    path: PathBuf,
}

// SAFETY: ravel.h: one thread at a time per writer; no thread affinity.
unsafe impl Send for SstWriter {}

impl SstWriter {
    /// Creates PATH ([`Code::Invalid`](crate::Code::Invalid) if it exists)
    /// and a writer for it; its blocks are laid out as OPTIONS says
    /// (`block_size`, `compression`, `bloom_bits_per_key`; `None`: the
    /// defaults).
    pub fn create(path: impl AsRef<Path>, options: Option<&Options>) -> Result<SstWriter> {
        let cpath = c_path(path.as_ref())?;
        let opts = options.map_or(ptr::null(), |o| o.as_ptr());
        let mut raw = ptr::null_mut();
        // SAFETY: CPATH is NUL-terminated; OPTS is NULL or live and not
        // used by another thread; RAW is a valid out-pointer.
        check(unsafe { sys::ravel_sst_writer_open(cpath.as_ptr(), opts, &mut raw) })?;
        Ok(SstWriter {
            raw: NonNull::new(raw).expect("ravel_sst_writer_open gave NULL"),
            path: path.as_ref().to_path_buf(),
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds a put of KEY with VALUE.  A key not greater than the one added
    /// before it is [`Code::Invalid`](crate::Code::Invalid), and nothing
    /// is added.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let (k, v) = (key.as_ref(), value.as_ref());
        // SAFETY: the writer is live and ours; K and V valid for their lengths.
        check(unsafe {
            sys::ravel_sst_writer_put(self.raw.as_ptr(), bytes_ptr(k), k.len(), bytes_ptr(v), v.len())
        })
    }

    /// Adds a delete of KEY (it hides the key's older values once
    /// ingested), in the same order as puts.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let k = key.as_ref();
        // SAFETY: as in put.
        check(unsafe { sys::ravel_sst_writer_delete(self.raw.as_ptr(), bytes_ptr(k), k.len()) })
    }

    /// Writes the rest of the file, makes it durable and returns the
    /// number of keys added.  A writer given no key is
    /// [`Code::Invalid`](crate::Code::Invalid) (its file is removed).
    pub fn finish(self) -> Result<u64> {
        let mut entries = 0u64;
        // SAFETY: the writer is live and ours; ENTRIES a valid out-pointer.
        // It is freed by Drop afterwards (a finished file stays).
        check(unsafe { sys::ravel_sst_writer_finish(self.raw.as_ptr(), &mut entries) })?;
        Ok(entries)
    }
}

impl Drop for SstWriter {
    fn drop(&mut self) {
        // SAFETY: the writer is live and freed once.
        unsafe { sys::ravel_sst_writer_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for SstWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SstWriter").field("path", &self.path).finish()
    }
}

/// Flags of [`Db::ingest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IngestFlags(c_int);

impl IngestFlags {
    /// Copy the files in and keep them.
    pub const NONE: IngestFlags = IngestFlags(0);
    /// Hard-link the files where they can go in as they are, and remove
    /// them once the ingest is durable (`RAVEL_INGEST_MOVE`).
    pub const MOVE: IngestFlags = IngestFlags(sys::RAVEL_INGEST_MOVE);

    /// The C flag bits.
    pub fn bits(self) -> c_int {
        self.0
    }
}

impl BitOr for IngestFlags {
    type Output = IngestFlags;
    fn bitor(self, other: IngestFlags) -> IngestFlags {
        IngestFlags(self.0 | other.0)
    }
}

impl Db {
    /// Adds the table files PATHS (written by an [`SstWriter`]) to the
    /// database atomically: every reader sees all of them or none, and
    /// their keys replace every value written before the call.
    /// Overlapping files, no files, unsorted or damaged ones are refused
    /// ([`Code::Invalid`](crate::Code::Invalid),
    /// [`Code::Corrupt`](crate::Code::Corrupt),
    /// [`Code::NotFound`](crate::Code::NotFound) naming the file) with
    /// nothing ingested.
    pub fn ingest<P: AsRef<Path>>(&self, paths: &[P], flags: IngestFlags) -> Result<()> {
        let cpaths = paths.iter().map(|p| c_path(p.as_ref())).collect::<Result<Vec<_>>>()?;
        let ptrs: Vec<*const c_char> = cpaths.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: the handle is live; PTRS holds ptrs.len() NUL-terminated
        // strings alive for the call (CPATHS owns them).
        check(unsafe { sys::ravel_ingest(self.as_ptr(), ptrs.as_ptr(), ptrs.len(), flags.bits()) })
    }
}
