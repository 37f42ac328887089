//! openraft's own storage conformance suite (openraft::testing::Suite,
//! written by openraft's authors), run on ravel: every case, unchanged.

// Suite::test_all returns openraft's StorageError.
#![allow(clippy::result_large_err)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use openraft::testing::{StoreBuilder, Suite};
use openraft::StorageError;
use ravel_openraft::kv::KvConfig;
use ravel_openraft::{RavelLogStore, RavelStateMachine};

/// A scratch database directory, removed when the case is over.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct RavelBuilder;

impl StoreBuilder<KvConfig, RavelLogStore<KvConfig>, RavelStateMachine<KvConfig>, ScratchDir>
    for RavelBuilder
{
    async fn build(
        &self,
    ) -> Result<(ScratchDir, RavelLogStore<KvConfig>, RavelStateMachine<KvConfig>), StorageError<u64>> {
        static CASE: AtomicUsize = AtomicUsize::new(0);
        let n = CASE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ravel-openraft-suite-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (log_store, state_machine) = ravel_openraft::open(&dir, None)?;
        Ok((ScratchDir(dir), log_store, state_machine))
    }
}

#[test]
fn openraft_storage_suite() -> Result<(), StorageError<u64>> {
    Suite::test_all(RavelBuilder)
}
