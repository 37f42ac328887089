//! ops.rs -- operating a live database (issue 22): a reader's catch-up,
//! checkpoints, incremental backups in a backup root (module [`backup`]),
//! and one-file backups to and from a path or a file descriptor.
//!
//! [`backup`]: crate::backup

use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;

use ravel_sys as sys;

use crate::db::Db;
use crate::error::{check, Result};
use crate::text::c_path;

impl Db {
    /// Catches a reader (a database opened with `read_only=true`, beside a
    /// writer in another process or with none) up with the writer: once it
    /// returns `Ok`, reads see every write the writer had acknowledged
    /// before the call.  Snapshots and iterators made before keep their
    /// state.  On a writer it does nothing.  [`Code::Busy`] if the writer
    /// kept moving its log, [`Code::Corrupt`] / [`Code::Io`] naming the
    /// file; the reader keeps its previous state then.  The option
    /// `catch_up_interval_ms` makes a thread of the handle catch up by
    /// itself; the property `ravel.reader-lag` says how far behind it is.
    ///
    /// [`Code::Busy`]: crate::Code::Busy
    /// [`Code::Corrupt`]: crate::Code::Corrupt
    /// [`Code::Io`]: crate::Code::Io
    pub fn catch_up(&self) -> Result<()> {
        // SAFETY: the handle is live.
        check(unsafe { sys::ravel_catch_up(self.as_ptr()) })
    }

    /// Makes DIR (which must not exist) a database holding this one's
    /// state at one moment during the call: table files hard-linked where
    /// DIR is on the same file system, copied where not, everything
    /// fsynced before it returns.  Writers go on meanwhile.  On a reader
    /// (`read_only=true`, beside a writer in another process) it catches
    /// up first, then copies what the reader reads, writing nothing into
    /// the database's directory; so do [`Db::backup`],
    /// [`Db::write_backup_file`] and [`Db::write_backup_to`].
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = c_path(dir.as_ref())?;
        // SAFETY: the handle is live; DIR is NUL-terminated.
        check(unsafe { sys::ravel_checkpoint(self.as_ptr(), dir.as_ptr()) })
    }

    /// Takes an incremental backup into the backup root ROOT (created if
    /// missing) and returns its id (1, 2, ...).  Table files already in
    /// ROOT are shared with earlier backups, not copied again.
    /// [`Code::Locked`](crate::Code::Locked) if another backup or purge of
    /// ROOT is running.  The functions of [`backup`](crate::backup) list,
    /// verify, restore and purge them.
    pub fn backup(&self, root: impl AsRef<Path>) -> Result<u64> {
        let root = c_path(root.as_ref())?;
        let mut id = 0u64;
        // SAFETY: the handle is live; ROOT is NUL-terminated; ID is a
        // valid out-pointer.
        check(unsafe { sys::ravel_backup_create(self.as_ptr(), root.as_ptr(), &mut id) })?;
        Ok(id)
    }

    /// Writes a full backup as one checksummed file at PATH, which must
    /// not exist (written to PATH.partial, fsynced, renamed).
    /// [`backup::restore_file`](crate::backup::restore_file) restores it.
    pub fn write_backup_file(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        // SAFETY: the handle is live; PATH is NUL-terminated.
        check(unsafe { sys::ravel_backup_write_file(self.as_ptr(), path.as_ptr()) })
    }

    /// Writes a full backup as one checksummed stream to the open file
    /// FD (a `File`, a pipe such as a child's `ChildStdin`, a socket),
    /// front to back, never seeking; FD is neither closed nor synced.  A
    /// reader that goes away is [`Code::Io`](crate::Code::Io) (EPIPE).
    /// [`backup::restore_from`](crate::backup::restore_from) reads it
    /// back.
    pub fn write_backup_to(&self, fd: impl AsFd) -> Result<()> {
        let fd = fd.as_fd();
        // SAFETY: the handle is live; FD is open for as long as the
        // borrow lasts, which covers the call.
        check(unsafe { sys::ravel_backup_write_fd(self.as_ptr(), fd.as_raw_fd()) })
    }
}

/// Backup roots (made by [`Db::backup`]) and one-file backups (made by
/// [`Db::write_backup_file`] and [`Db::write_backup_to`]): listing,
/// verifying, restoring, purging.
pub mod backup {
    use std::ffi::c_void;
    use std::os::fd::{AsFd, AsRawFd};
    use std::path::Path;
    use std::time::{Duration, SystemTime};

    use ravel_sys as sys;

    use crate::error::{check, Code, Error, Result};
    use crate::text::c_path;

    /// What a backup's meta file says of it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct BackupInfo {
        /// Its id in the backup root.
        pub id: u64,
        /// When it was taken.
        pub time: SystemTime,
        /// The last sequence number it holds.
        pub sequence: u64,
        /// The bytes of all its files.
        pub bytes: u64,
        /// The bytes it copied when taken (the rest it shares with older
        /// backups).
        pub copied: u64,
        /// The number of its files.
        pub files: u64,
    }

    unsafe extern "C" fn collect_id(ctx: *mut c_void, id: u64) -> std::ffi::c_int {
        // SAFETY: CTX is the Vec list() passed, alive for the call.
        let ids = unsafe { &mut *ctx.cast::<Vec<u64>>() };
        ids.push(id);
        0
    }

    /// The complete backups of ROOT, oldest first (those whose meta file
    /// verifies: [`verify`] reads the rest).  [`Code::NotFound`] if ROOT
    /// is not a backup root.
    pub fn list(root: impl AsRef<Path>) -> Result<Vec<BackupInfo>> {
        let croot = c_path(root.as_ref())?;
        let mut ids: Vec<u64> = Vec::new();
        // SAFETY: CROOT is NUL-terminated; COLLECT_ID only pushes onto
        // IDS, which outlives the call and is not otherwise touched in it.
        check(unsafe {
            sys::ravel_backup_list(croot.as_ptr(), Some(collect_id), (&mut ids as *mut Vec<u64>).cast())
        })?;
        ids.into_iter().map(|id| info(root.as_ref(), id)).collect()
    }

    /// What backup ID of ROOT holds, from its meta file.
    /// [`Code::NotFound`] if there is no complete backup ID,
    /// [`Code::Corrupt`] if its meta file is damaged.
    pub fn info(root: impl AsRef<Path>, id: u64) -> Result<BackupInfo> {
        let croot = c_path(root.as_ref())?;
        let field = |what| {
            let mut v = 0u64;
            // SAFETY: CROOT is NUL-terminated; V is a valid out-pointer.
            check(unsafe { sys::ravel_backup_info(croot.as_ptr(), id, what, &mut v) }).map(|()| v)
        };
        Ok(BackupInfo {
            id,
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(field(sys::RAVEL_BACKUP_TIME)?),
            sequence: field(sys::RAVEL_BACKUP_SEQUENCE)?,
            bytes: field(sys::RAVEL_BACKUP_BYTES)?,
            copied: field(sys::RAVEL_BACKUP_COPIED)?,
            files: field(sys::RAVEL_BACKUP_FILES)?,
        })
    }

    /// Reads every file of backup ID of ROOT and checks its size and
    /// checksum: [`Code::Corrupt`] naming the first file missing, short or
    /// damaged; [`Code::NotFound`] if there is no backup ID.
    pub fn verify(root: impl AsRef<Path>, id: u64) -> Result<()> {
        let croot = c_path(root.as_ref())?;
        // SAFETY: CROOT is NUL-terminated.
        check(unsafe { sys::ravel_backup_verify(croot.as_ptr(), id) })
    }

    /// Restores backup ID of ROOT (0: the newest complete one) into DIR,
    /// which must not exist; every file is checked as it is copied.  A
    /// backup that fails a check is [`Code::Corrupt`] and leaves no DIR.
    pub fn restore(root: impl AsRef<Path>, id: u64, dir: impl AsRef<Path>) -> Result<()> {
        let croot = c_path(root.as_ref())?;
        let cdir = c_path(dir.as_ref())?;
        // SAFETY: both NUL-terminated.
        check(unsafe { sys::ravel_backup_restore(croot.as_ptr(), id, cdir.as_ptr()) })
    }

    /// Deletes all but the KEEP (at least 1) newest complete backups of
    /// ROOT, the shared files no remaining backup names, and what a
    /// crashed backup left.
    pub fn purge(root: impl AsRef<Path>, keep: u32) -> Result<()> {
        let croot = c_path(root.as_ref())?;
        let keep = i32::try_from(keep)
            .map_err(|_| Error::new(Code::Invalid, format!("purge: keep {keep} is too large")))?;
        // SAFETY: CROOT is NUL-terminated.
        check(unsafe { sys::ravel_backup_purge(croot.as_ptr(), keep) })
    }

    /// Restores the one-file backup at PATH into DIR, which must not
    /// exist.  A damaged or cut-short backup is [`Code::Corrupt`] naming
    /// the byte offset, and leaves no DIR.
    pub fn restore_file(path: impl AsRef<Path>, dir: impl AsRef<Path>) -> Result<()> {
        let cpath = c_path(path.as_ref())?;
        let cdir = c_path(dir.as_ref())?;
        // SAFETY: both NUL-terminated.
        check(unsafe { sys::ravel_backup_restore_file(cpath.as_ptr(), cdir.as_ptr()) })
    }

    /// Restores a one-file backup read from the open file FD (a pipe too,
    /// such as `std::io::stdin()` or a child's `ChildStdout`) to the
    /// backup's end, into DIR, which must not exist.  ravel reads FD
    /// itself: nothing may have been read from it into a buffer before.
    pub fn restore_from(fd: impl AsFd, dir: impl AsRef<Path>) -> Result<()> {
        let cdir = c_path(dir.as_ref())?;
        let fd = fd.as_fd();
        // SAFETY: FD is open for the borrow; CDIR is NUL-terminated.
        check(unsafe { sys::ravel_backup_restore_fd(fd.as_raw_fd(), cdir.as_ptr()) })
    }
}
