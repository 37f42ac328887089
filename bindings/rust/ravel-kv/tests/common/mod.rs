//! Helpers shared by the integration tests: a scratch directory removed
//! when dropped, and opening a fresh database in one.  (Written here
//! rather than taken from a crate, to keep the binding free of
//! dependencies.)

#![allow(dead_code)] // each test file uses a part

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use ravel::{Db, Options};

/// A directory of its own under the system's temp dir, removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("ravel-rs-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path inside the directory, not created.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The default options with create_if_missing set.
pub fn options() -> Options {
    Options::new().unwrap().with("create_if_missing", true).unwrap()
}

/// A new database in a new directory; the directory goes with the TempDir.
pub fn open_new(label: &str) -> (TempDir, Db) {
    let dir = TempDir::new(label);
    let db = Db::open(dir.join("db"), &options()).unwrap();
    (dir, db)
}
