//! keys.rs -- the key layout and value encodings of a ravel-openraft
//! database (layout version 1).  Everything this crate writes is here, once.
//!
//! | key                    | value                                                     | written by |
//! |------------------------|-----------------------------------------------------------|------------|
//! | `\0ravel-openraft`     | ASCII layout version, `"1"`                               | open       |
//! | `l/` + index (u64 BE)  | log entry: byte `0x01` (entry encoding 1), then the JSON (serde) of `openraft::Entry<C>` | append; deleted by truncate, purge |
//! | `m/vote`               | JSON of `Vote<NodeId>`                                     | save_vote  |
//! | `m/committed`          | JSON of `Option<LogId<NodeId>>`                            | save_committed |
//! | `m/purged`             | JSON of `LogId<NodeId>`: the last purged log id            | purge      |
//! | `s/applied`            | JSON of `Option<LogId<NodeId>>`: the state machine's last applied | apply, install |
//! | `s/membership`         | JSON of `StoredMembership<NodeId, Node>`                   | apply, install |
//! | `s/snapshot`           | the current snapshot: u32 BE length, JSON of `SnapshotMeta`, then the snapshot data (snapshot.rs) | build, install |
//! | `d/` + user key        | the user's value: the state machine's data                 | apply (through `Writes`), install |
//!
//! Big-endian indexes make ravel's key order the log order.  A new
//! encoding of entries gets a new first byte; a new layout a new version.

use openraft::{AnyError, StorageError, StorageIOError};

/// The key holding the layout version, and the version this build writes.
pub(crate) const LAYOUT_KEY: &[u8] = b"\0ravel-openraft";
pub(crate) const LAYOUT_VERSION: &[u8] = b"1";

pub(crate) const VOTE: &[u8] = b"m/vote";
pub(crate) const COMMITTED: &[u8] = b"m/committed";
pub(crate) const PURGED: &[u8] = b"m/purged";
pub(crate) const APPLIED: &[u8] = b"s/applied";
pub(crate) const MEMBERSHIP: &[u8] = b"s/membership";
pub(crate) const SNAPSHOT: &[u8] = b"s/snapshot";

/// The log's keys are `[LOG_BEGIN, LOG_END)`; the data's `[DATA_BEGIN, DATA_END)`.
pub(crate) const LOG_BEGIN: &[u8] = b"l/";
pub(crate) const LOG_END: &[u8] = b"l0";
pub(crate) const DATA_BEGIN: &[u8] = b"d/";
pub(crate) const DATA_END: &[u8] = b"d0";

/// First byte of a log entry's value: the entry encoding.
pub(crate) const ENTRY_ENCODING_JSON: u8 = 1;

pub(crate) fn log_key(index: u64) -> [u8; 10] {
    let mut key = [0u8; 10];
    key[..2].copy_from_slice(LOG_BEGIN);
    key[2..].copy_from_slice(&index.to_be_bytes());
    key
}

pub(crate) fn log_index(key: &[u8]) -> Option<u64> {
    if key.len() != 10 || &key[..2] != LOG_BEGIN {
        return None;
    }
    Some(u64::from_be_bytes(key[2..].try_into().ok()?))
}

pub(crate) fn data_key(user_key: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(DATA_BEGIN.len() + user_key.len());
    key.extend_from_slice(DATA_BEGIN);
    key.extend_from_slice(user_key);
    key
}

pub(crate) fn encode_entry<T: serde::Serialize>(entry: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut value = vec![ENTRY_ENCODING_JSON];
    serde_json::to_writer(&mut value, entry)?;
    Ok(value)
}

pub(crate) fn decode_entry<T: serde::de::DeserializeOwned>(value: &[u8]) -> Result<T, AnyError> {
    match value.first() {
        Some(&ENTRY_ENCODING_JSON) => serde_json::from_slice(&value[1..]).map_err(|e| AnyError::new(&e)),
        Some(other) => {
            Err(AnyError::error(format!("log entry in unknown encoding {other} (this build reads 1)")))
        }
        None => Err(AnyError::error("empty log entry value")),
    }
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, AnyError> {
    serde_json::to_vec(value).map_err(|e| AnyError::new(&e))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(value: &[u8]) -> Result<T, AnyError> {
    serde_json::from_slice(value).map_err(|e| AnyError::new(&e))
}

/// Shorthands: a ravel or decoding error as the StorageError openraft wants.
pub(crate) fn io<NID: openraft::NodeId>(e: StorageIOError<NID>) -> StorageError<NID> {
    StorageError::IO { source: e }
}

/// The errors this crate meets, as openraft's AnyError.
pub(crate) trait ToAny {
    fn any(self) -> AnyError;
}

impl ToAny for AnyError {
    fn any(self) -> AnyError {
        self
    }
}

impl ToAny for ravel::Error {
    fn any(self) -> AnyError {
        AnyError::new(&self)
    }
}

impl ToAny for &ravel::Error {
    fn any(self) -> AnyError {
        AnyError::new(self)
    }
}

impl ToAny for &serde_json::Error {
    fn any(self) -> AnyError {
        AnyError::new(self)
    }
}
