//! ravel-openraft: [openraft](https://docs.rs/openraft/0.9)'s storage
//! (the v2 API: [`RaftLogStorage`](openraft::storage::RaftLogStorage) and
//! [`RaftStateMachine`](openraft::storage::RaftStateMachine)) on one ravel
//! database.  docs/replication.md ("Storage for openraft") says how to use
//! it and what it guarantees; keys.rs has the on-disk layout.
//!
//! ```no_run
//! use ravel_openraft::kv::{KvCommand, KvConfig};
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! let (log_store, state_machine) = ravel_openraft::open::<KvConfig>("/var/lib/node1/raft", None)?;
//! // openraft::Raft::new(node_id, config, network, log_store, state_machine).await?
//! # Ok(()) }
//! ```

// StorageError is openraft's type, returned by every trait method.
#![allow(clippy::result_large_err)]

mod keys;
pub mod kv;
mod log_store;
mod snapshot;
mod state_machine;

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use openraft::{AnyError, RaftTypeConfig, StorageError, StorageIOError};
use ravel::{Db, Options, WriteFlags};

pub use log_store::{RavelLogReader, RavelLogStore};
pub use state_machine::{Command, RavelSnapshotBuilder, RavelStateMachine, StateReader, Writes};

/// The type configurations this store serves: openraft's own `Entry`, and
/// snapshots held in memory (`Cursor<Vec<u8>>`, openraft's default).  The
/// state machine further needs `C::D: Command<C::R>` and `C::R: Default`.
pub trait RavelTypeConfig:
    RaftTypeConfig<Entry = openraft::Entry<Self>, SnapshotData = Cursor<Vec<u8>>>
{
}

impl<C> RavelTypeConfig for C where
    C: RaftTypeConfig<Entry = openraft::Entry<C>, SnapshotData = Cursor<Vec<u8>>>
{
}

/// The two halves of a store, for `openraft::Raft::new`.
pub type Stores<C> = (RavelLogStore<C>, RavelStateMachine<C>);

/// Opens (creating it if missing, unless `options` say otherwise) the
/// ravel database at `path` and returns its log store and state machine.
pub fn open<C: RavelTypeConfig>(
    path: impl AsRef<Path>,
    options: Option<&Options>,
) -> Result<Stores<C>, StorageError<C::NodeId>> {
    let err = |e: ravel::Error| StorageError::IO { source: StorageIOError::write(&e) };
    let db = match options {
        Some(o) => Db::open(path, o),
        None => Db::open(path, &Options::new().and_then(|o| o.with("create_if_missing", true)).map_err(err)?),
    };
    with_db(Arc::new(db.map_err(err)?))
}

/// As [`open`], on a database the caller opened (and may use for keys
/// outside this crate's layout: keys.rs lists the prefixes it owns).
pub fn with_db<C: RavelTypeConfig>(db: Arc<Db>) -> Result<Stores<C>, StorageError<C::NodeId>> {
    check_layout::<C>(&db)?;
    Ok((RavelLogStore::load(db.clone())?, RavelStateMachine::load(db)?))
}

/// Writes the layout version into a database that has none, refuses one
/// written in another version.
fn check_layout<C: RavelTypeConfig>(db: &Db) -> Result<(), StorageError<C::NodeId>> {
    let err = |e: AnyError| StorageError::IO { source: StorageIOError::read(e) };
    match db.get(keys::LAYOUT_KEY).map_err(|e| err(AnyError::new(&e)))? {
        Some(v) if v == keys::LAYOUT_VERSION => Ok(()),
        Some(v) => Err(err(AnyError::error(format!(
            "ravel-openraft layout version {:?}, this build reads {:?}",
            String::from_utf8_lossy(&v),
            String::from_utf8_lossy(keys::LAYOUT_VERSION)
        )))),
        None => db
            .put_opt(keys::LAYOUT_KEY, keys::LAYOUT_VERSION, WriteFlags::SYNC)
            .map_err(|e| err(AnyError::new(&e))),
    }
}
