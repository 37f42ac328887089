//! state_machine.rs -- openraft's RaftStateMachine and RaftSnapshotBuilder
//! on ravel: the application's keys under `d/`, the last applied log id
//! and membership beside them, the current snapshot (keys.rs).

use std::collections::BTreeMap;
use std::io::Cursor;
use std::sync::{Arc, Mutex};

use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{
    AnyError, EntryPayload, LogId, OptionalSend, RaftSnapshotBuilder, RaftTypeConfig, SnapshotMeta,
    StorageError, StorageIOError, StoredMembership,
};
use ravel::{Batch, Db, WriteFlags};

use crate::keys::{self, io, ToAny};
use crate::snapshot::{self, SnapshotWriter};
use crate::RavelTypeConfig;

/// What a normal log entry's payload (`C::D`) does to the state machine:
/// reads and writes through `Writes`, returns the response.  Blank and
/// membership entries get `R::default()`.
pub trait Command<R> {
    fn apply(&self, writes: &mut Writes<'_>) -> ravel::Result<R>;
}

/// The state machine's keys as one `apply` call sees them: the database
/// plus the writes of the entries before in the same call, all of which
/// go to ravel in one batch at the end of the call.
pub struct Writes<'a> {
    db: &'a Db,
    batch: &'a mut Batch,
    pending: &'a mut BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Writes<'_> {
    /// The value of `key`, with the writes of this apply call so far.
    pub fn get(&self, key: impl AsRef<[u8]>) -> ravel::Result<Option<Vec<u8>>> {
        let key = keys::data_key(key.as_ref());
        match self.pending.get(&key) {
            Some(v) => Ok(v.clone()),
            None => self.db.get(&key),
        }
    }

    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> ravel::Result<()> {
        let key = keys::data_key(key.as_ref());
        self.batch.put(&key, value.as_ref())?;
        self.pending.insert(key, Some(value.as_ref().to_vec()));
        Ok(())
    }

    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> ravel::Result<()> {
        let key = keys::data_key(key.as_ref());
        self.batch.delete(&key)?;
        self.pending.insert(key, None);
        Ok(())
    }
}

/// The state machine part of the store; `crate::open` makes it.
pub struct RavelStateMachine<C: RavelTypeConfig> {
    db: Arc<Db>,
    /// As in `s/applied` and `s/membership`; changed only after the batch
    /// that changes those keys was written.
    applied: Option<LogId<C::NodeId>>,
    membership: StoredMembership<C::NodeId, C::Node>,
    /// Held by an install while it writes and by a builder while it
    /// compares and stores `s/snapshot`: a build that ran beside an
    /// install cannot put back an older snapshot after it.
    snapshot_slot: Arc<Mutex<()>>,
}

/// Builds a snapshot from a ravel snapshot of the state machine's keys.
pub struct RavelSnapshotBuilder<C: RavelTypeConfig> {
    db: Arc<Db>,
    snapshot_slot: Arc<Mutex<()>>,
    _config: std::marker::PhantomData<C>,
}

fn sm_read_err<NID: openraft::NodeId>(e: impl ToAny) -> StorageError<NID> {
    io(StorageIOError::read_state_machine(e.any()))
}

fn sm_write_err<NID: openraft::NodeId>(e: impl ToAny) -> StorageError<NID> {
    io(StorageIOError::write_state_machine(e.any()))
}

fn snap_err<NID: openraft::NodeId>(e: impl ToAny) -> StorageError<NID> {
    io(StorageIOError::write_snapshot(None, e.any()))
}

fn read_json<T: serde::de::DeserializeOwned>(value: Option<Vec<u8>>) -> Result<Option<T>, AnyError> {
    value.map(|v| keys::from_json(&v)).transpose()
}

impl<C: RavelTypeConfig> RavelStateMachine<C> {
    pub(crate) fn load(db: Arc<Db>) -> Result<Self, StorageError<C::NodeId>> {
        let applied = read_json::<Option<LogId<C::NodeId>>>(db.get(keys::APPLIED).map_err(sm_read_err)?)
            .map_err(sm_read_err)?
            .flatten();
        let membership = read_json(db.get(keys::MEMBERSHIP).map_err(sm_read_err)?).map_err(sm_read_err)?;
        Ok(RavelStateMachine {
            db,
            applied,
            membership: membership.unwrap_or_default(),
            snapshot_slot: Arc::new(Mutex::new(())),
        })
    }

    /// The value of an application key, as of the last apply.
    pub fn get(&self, key: impl AsRef<[u8]>) -> ravel::Result<Option<Vec<u8>>> {
        self.db.get(keys::data_key(key.as_ref()))
    }

    /// The database, shared with the log store.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// A handle reading the application's keys, for the application to
    /// keep when it hands the state machine to `openraft::Raft::new`.
    pub fn reader(&self) -> StateReader {
        StateReader { db: self.db.clone() }
    }
}

/// Reads the state machine's application keys as of the last apply (for
/// linearizable reads, after openraft's `ensure_linearizable`).  Holds the
/// database open while it lives.
#[derive(Clone)]
pub struct StateReader {
    db: Arc<Db>,
}

impl StateReader {
    pub fn get(&self, key: impl AsRef<[u8]>) -> ravel::Result<Option<Vec<u8>>> {
        self.db.get(keys::data_key(key.as_ref()))
    }
}

/// The current snapshot's meta and data.
type StoredSnapshot<C> = (SnapshotMeta<<C as RaftTypeConfig>::NodeId, <C as RaftTypeConfig>::Node>, Vec<u8>);

/// Reads `s/snapshot` as openraft's meta and data.
fn current_snapshot<C: RavelTypeConfig>(db: &Db) -> Result<Option<StoredSnapshot<C>>, AnyError> {
    let Some(value) = db.get(keys::SNAPSHOT).map_err(|e| AnyError::new(&e))? else { return Ok(None) };
    let (meta, data) = snapshot::decode_stored(&value)?;
    Ok(Some((keys::from_json(meta)?, data.to_vec())))
}

impl<C: RavelTypeConfig> RaftSnapshotBuilder<C> for RavelSnapshotBuilder<C> {
    /// Reads the last applied log id, the membership and every `d/` key
    /// through one ravel snapshot, so they are of the same apply; stores
    /// the result as the current snapshot (RAVEL_SYNC) unless a newer one
    /// was installed meanwhile.
    async fn build_snapshot(&mut self) -> Result<Snapshot<C>, StorageError<C::NodeId>> {
        let (meta, data) = {
            let snap = self.db.snapshot().map_err(sm_read_err)?;
            let applied: Option<LogId<C::NodeId>> =
                read_json::<Option<_>>(snap.get(keys::APPLIED).map_err(sm_read_err)?)
                    .map_err(sm_read_err)?
                    .flatten();
            let membership: StoredMembership<C::NodeId, C::Node> =
                read_json(snap.get(keys::MEMBERSHIP).map_err(sm_read_err)?)
                    .map_err(sm_read_err)?
                    .unwrap_or_default();
            let mut w = SnapshotWriter::new();
            for item in snap.range(Some(keys::DATA_BEGIN), Some(keys::DATA_END)).map_err(sm_read_err)? {
                let (key, value) = item.map_err(sm_read_err)?;
                w.pair(&key[keys::DATA_BEGIN.len()..], &value).map_err(sm_read_err)?;
            }
            let snapshot_id = match &applied {
                Some(id) => format!("{}-{}-{}", id.leader_id, id.index, snap.sequence()),
                None => format!("--{}", snap.sequence()),
            };
            (SnapshotMeta { last_log_id: applied, last_membership: membership, snapshot_id }, w.finish())
        };
        let _slot = self.snapshot_slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let newer = current_snapshot::<C>(&self.db).map_err(snap_err)?.map(|(m, _)| m.last_log_id);
        if newer.is_none() || newer.flatten() <= meta.last_log_id {
            let stored = snapshot::encode_stored(&keys::to_json(&meta).map_err(snap_err)?, &data);
            self.db.put_opt(keys::SNAPSHOT, stored, WriteFlags::SYNC).map_err(snap_err)?;
        }
        Ok(Snapshot { meta, snapshot: Box::new(Cursor::new(data)) })
    }
}

impl<C: RavelTypeConfig> RaftStateMachine<C> for RavelStateMachine<C>
where
    C::D: Command<C::R>,
    C::R: Default,
{
    type SnapshotBuilder = RavelSnapshotBuilder<C>;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId<C::NodeId>>, StoredMembership<C::NodeId, C::Node>), StorageError<C::NodeId>>
    {
        Ok((self.applied.clone(), self.membership.clone()))
    }

    /// All the entries' writes, the last applied log id and the membership
    /// in one batch (without RAVEL_SYNC: see docs/replication.md).
    async fn apply<I>(&mut self, entries: I) -> Result<Vec<C::R>, StorageError<C::NodeId>>
    where
        I: IntoIterator<Item = C::Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = Batch::new().map_err(sm_write_err)?;
        let mut pending = BTreeMap::new();
        let mut applied = self.applied.clone();
        let mut membership = None;
        let mut replies = Vec::new();
        for entry in entries {
            applied = Some(entry.log_id.clone());
            let reply = match &entry.payload {
                EntryPayload::Blank => C::R::default(),
                EntryPayload::Normal(data) => {
                    let mut writes = Writes { db: &self.db, batch: &mut batch, pending: &mut pending };
                    data.apply(&mut writes).map_err(|e| sm_write_err(&e))?
                }
                EntryPayload::Membership(m) => {
                    membership = Some(StoredMembership::new(Some(entry.log_id.clone()), m.clone()));
                    C::R::default()
                }
            };
            replies.push(reply);
        }
        if replies.is_empty() {
            return Ok(replies);
        }
        batch.put(keys::APPLIED, keys::to_json(&applied).map_err(sm_write_err)?).map_err(sm_write_err)?;
        if let Some(m) = &membership {
            batch.put(keys::MEMBERSHIP, keys::to_json(m).map_err(sm_write_err)?).map_err(sm_write_err)?;
        }
        self.db.write(&batch).map_err(sm_write_err)?;
        self.applied = applied;
        if let Some(m) = membership {
            self.membership = m;
        }
        Ok(replies)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        RavelSnapshotBuilder {
            db: self.db.clone(),
            snapshot_slot: self.snapshot_slot.clone(),
            _config: std::marker::PhantomData,
        }
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>, StorageError<C::NodeId>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    /// Checks the whole snapshot first, then replaces the state machine
    /// in one batch written with RAVEL_SYNC: every old `d/` key deleted,
    /// every key of the snapshot put, `s/applied`, `s/membership` and
    /// `s/snapshot` set.  A crash leaves the old state or the new one.
    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<C::NodeId, C::Node>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError<C::NodeId>> {
        let err = |e: AnyError| io(StorageIOError::write_snapshot(Some(meta.signature()), e));
        let ravel_err = |e: ravel::Error| err(AnyError::new(&e));
        let data = snapshot.into_inner();
        let pairs = snapshot::parse(&data).map_err(err)?;
        let mut batch = Batch::new().map_err(ravel_err)?;
        for item in self.db.range(Some(keys::DATA_BEGIN), Some(keys::DATA_END)).map_err(ravel_err)? {
            let (key, _) = item.map_err(ravel_err)?;
            batch.delete(key).map_err(ravel_err)?;
        }
        for (key, value) in pairs {
            batch.put(keys::data_key(key), value).map_err(ravel_err)?;
        }
        batch.put(keys::APPLIED, keys::to_json(&meta.last_log_id).map_err(err)?).map_err(ravel_err)?;
        batch.put(keys::MEMBERSHIP, keys::to_json(&meta.last_membership).map_err(err)?).map_err(ravel_err)?;
        let stored = snapshot::encode_stored(&keys::to_json(meta).map_err(err)?, &data);
        batch.put(keys::SNAPSHOT, stored).map_err(ravel_err)?;
        let slot = self.snapshot_slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        self.db.write_opt(&batch, WriteFlags::SYNC).map_err(ravel_err)?;
        drop(slot);
        self.applied = meta.last_log_id.clone();
        self.membership = meta.last_membership.clone();
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<C>>, StorageError<C::NodeId>> {
        let current =
            current_snapshot::<C>(&self.db).map_err(|e| io(StorageIOError::read_snapshot(None, e)))?;
        Ok(current.map(|(meta, data)| Snapshot { meta, snapshot: Box::new(Cursor::new(data)) }))
    }
}
