//! kv.rs -- a ready-made key-value state machine: `KvCommand` (put,
//! delete) as the log's payload, `KvConfig` the openraft type
//! configuration using it.  Used by the tests; a starting point for
//! applications, which declare their own `C::D` implementing `Command`.

use serde::{Deserialize, Serialize};

use crate::state_machine::{Command, Writes};

/// A write to the replicated key-value map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KvCommand {
    Put { key: Vec<u8>, value: Vec<u8> },
    Delete { key: Vec<u8> },
}

/// What a `KvCommand` returns: the value the key had before.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvResponse {
    pub previous: Option<Vec<u8>>,
}

impl Command<KvResponse> for KvCommand {
    fn apply(&self, writes: &mut Writes<'_>) -> ravel::Result<KvResponse> {
        match self {
            KvCommand::Put { key, value } => {
                let previous = writes.get(key)?;
                writes.put(key, value)?;
                Ok(KvResponse { previous })
            }
            KvCommand::Delete { key } => {
                let previous = writes.get(key)?;
                writes.delete(key)?;
                Ok(KvResponse { previous })
            }
        }
    }
}

use std::io::Cursor;

openraft::declare_raft_types!(
    /// openraft's defaults (u64 node ids, BasicNode, in-memory snapshots)
    /// with `KvCommand` entries.
    pub KvConfig:
        D = KvCommand,
        R = KvResponse,
);
