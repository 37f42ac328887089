//! log_store.rs -- openraft's RaftLogStorage and RaftLogReader on ravel:
//! the raft log (one key per entry), the vote, the committed log id and
//! the last purged log id (keys.rs has the layout).

use std::fmt::Debug;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{AnyError, LogId, OptionalSend, RaftLogId, RaftLogReader, StorageError, StorageIOError, Vote};
use ravel::{Batch, Db, WriteFlags};

use crate::keys::{self, io, ToAny};
use crate::RavelTypeConfig;

/// Deletes the log entries with indexes in `[from, to)`, inside `batch`:
/// one range delete of their keys (`ravel_batch_delete_range`), however
/// many entries it covers; nothing is read.  Empty when `from >= to`.
pub(crate) fn delete_log_range(batch: &mut Batch, from: u64, to: u64) -> ravel::Result<()> {
    if from >= to {
        return Ok(());
    }
    batch.delete_range(keys::log_key(from), keys::log_key(to))
}

/// The log part of the store; `crate::open` makes it.  Raft calls it from
/// one task (`&mut self`); the log id of the first and last entries are
/// kept in memory, so `get_log_state` reads nothing.
pub struct RavelLogStore<C: RavelTypeConfig> {
    db: Arc<Db>,
    /// The last purged log id, as in `m/purged`.
    last_purged: Option<LogId<C::NodeId>>,
    /// The log id of the last entry present, or None when there is none.
    last_present: Option<LogId<C::NodeId>>,
}

/// Reads entries for replication; cloned for each replication task.
pub struct RavelLogReader<C: RavelTypeConfig> {
    db: Arc<Db>,
    _config: PhantomData<C>,
}

impl<C: RavelTypeConfig> Clone for RavelLogReader<C> {
    fn clone(&self) -> Self {
        RavelLogReader { db: self.db.clone(), _config: PhantomData }
    }
}

fn read_err<NID: openraft::NodeId>(e: impl ToAny) -> StorageError<NID> {
    io(StorageIOError::read_logs(e.any()))
}

fn write_err<NID: openraft::NodeId>(e: impl ToAny) -> StorageError<NID> {
    io(StorageIOError::write_logs(e.any()))
}

/// The entries with indexes in `range`, in order, reading the database.
fn read_entries<C: RavelTypeConfig>(
    db: &Db,
    range: impl RangeBounds<u64>,
) -> Result<Vec<C::Entry>, StorageError<C::NodeId>> {
    let start = match range.start_bound() {
        Bound::Included(&i) => i,
        Bound::Excluded(&i) if i == u64::MAX => return Ok(Vec::new()),
        Bound::Excluded(&i) => i + 1,
        Bound::Unbounded => 0,
    };
    let stop = match range.end_bound() {
        Bound::Included(&i) if i == u64::MAX => None,
        Bound::Included(&i) => Some(keys::log_key(i + 1)),
        Bound::Excluded(&i) => Some(keys::log_key(i)),
        Bound::Unbounded => None,
    };
    let begin = keys::log_key(start);
    let end: &[u8] = match &stop {
        Some(k) => k,
        None => keys::LOG_END,
    };
    if begin.as_slice() >= end {
        return Ok(Vec::new());
    }
    let mut entries = Vec::new();
    for item in db.range(Some(&begin), Some(end)).map_err(read_err)? {
        let (key, value) = item.map_err(read_err)?;
        let entry: C::Entry = keys::decode_entry(&value).map_err(read_err)?;
        if keys::log_index(&key) != Some(entry.get_log_id().index) {
            return Err(read_err(AnyError::error(format!(
                "log key {key:?} holds entry {}",
                entry.get_log_id()
            ))));
        }
        entries.push(entry);
    }
    Ok(entries)
}

fn get_json<T: serde::de::DeserializeOwned>(db: &Db, key: &[u8]) -> Result<Option<T>, AnyError> {
    match db.get(key).map_err(|e| AnyError::new(&e))? {
        Some(v) => keys::from_json(&v).map(Some),
        None => Ok(None),
    }
}

impl<C: RavelTypeConfig> RavelLogStore<C> {
    /// Loads the purged and last log ids of the log in `db`.
    pub(crate) fn load(db: Arc<Db>) -> Result<Self, StorageError<C::NodeId>> {
        let last_purged = get_json(&db, keys::PURGED).map_err(read_err)?;
        let mut last_present = None;
        if let Some(item) = db.range_rev(Some(keys::LOG_BEGIN), Some(keys::LOG_END)).map_err(read_err)?.next()
        {
            let (_, value) = item.map_err(read_err)?;
            let entry: C::Entry = keys::decode_entry(&value).map_err(read_err)?;
            last_present = Some(entry.get_log_id().clone());
        }
        Ok(RavelLogStore { db, last_purged, last_present })
    }

    /// The index of the first entry that can be present.
    fn first_index(&self) -> u64 {
        self.last_purged.as_ref().map_or(0, |id| id.index + 1)
    }

    /// The database, shared with the state machine.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }
}

impl<C: RavelTypeConfig> RaftLogReader<C> for RavelLogStore<C> {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<C::Entry>, StorageError<C::NodeId>> {
        read_entries::<C>(&self.db, range)
    }
}

impl<C: RavelTypeConfig> RaftLogReader<C> for RavelLogReader<C> {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<C::Entry>, StorageError<C::NodeId>> {
        read_entries::<C>(&self.db, range)
    }
}

impl<C: RavelTypeConfig> RaftLogStorage<C> for RavelLogStore<C> {
    type LogReader = RavelLogReader<C>;

    async fn get_log_state(&mut self) -> Result<LogState<C>, StorageError<C::NodeId>> {
        let last_log_id = self.last_present.clone().or_else(|| self.last_purged.clone());
        Ok(LogState { last_purged_log_id: self.last_purged.clone(), last_log_id })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        RavelLogReader { db: self.db.clone(), _config: PhantomData }
    }

    /// One put with RAVEL_SYNC: returns when the vote is on stable storage.
    async fn save_vote(&mut self, vote: &Vote<C::NodeId>) -> Result<(), StorageError<C::NodeId>> {
        let value = keys::to_json(vote).map_err(|e| io(StorageIOError::write_vote(e.any())))?;
        self.db.put_opt(keys::VOTE, value, WriteFlags::SYNC).map_err(|e| io(StorageIOError::write_vote(&e)))
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<C::NodeId>>, StorageError<C::NodeId>> {
        get_json(&self.db, keys::VOTE).map_err(|e| io(StorageIOError::read_vote(e.any())))
    }

    /// One put to the WAL, not synced: openraft saves the committed log
    /// id at every advance, and an fsync each time would double the
    /// leader's fsyncs for nothing: a committed log id older than the
    /// truth (all a power loss can leave, the WAL being replayed in order
    /// and every append synced) only means fewer entries re-applied at
    /// start-up; the leader brings the rest.
    async fn save_committed(
        &mut self,
        committed: Option<LogId<C::NodeId>>,
    ) -> Result<(), StorageError<C::NodeId>> {
        let value = keys::to_json(&committed).map_err(write_err)?;
        self.db.put(keys::COMMITTED, value).map_err(write_err)
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<C::NodeId>>, StorageError<C::NodeId>> {
        Ok(get_json::<Option<LogId<C::NodeId>>>(&self.db, keys::COMMITTED).map_err(read_err)?.flatten())
    }

    /// All the entries in one batch written with RAVEL_SYNC; `callback`
    /// is called after that write returned (so once they are durable),
    /// with its error if it failed.
    async fn append<I>(&mut self, entries: I, callback: LogFlushed<C>) -> Result<(), StorageError<C::NodeId>>
    where
        I: IntoIterator<Item = C::Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = Batch::new().map_err(write_err)?;
        let mut last = None;
        for entry in entries {
            let value = keys::encode_entry(&entry).map_err(|e| write_err(&e))?;
            batch.put(keys::log_key(entry.get_log_id().index), value).map_err(write_err)?;
            last = Some(entry.get_log_id().clone());
        }
        if last.is_none() {
            callback.log_io_completed(Ok(()));
            return Ok(());
        }
        match self.db.write_opt(&batch, WriteFlags::SYNC) {
            Ok(()) => {
                self.last_present = last;
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                callback.log_io_completed(Err(std::io::Error::other(e.to_string())));
                Err(write_err(&e))
            }
        }
    }

    /// Deletes `[log_id.index, last]` in one batch written with RAVEL_SYNC.
    async fn truncate(&mut self, log_id: LogId<C::NodeId>) -> Result<(), StorageError<C::NodeId>> {
        let Some(last) = self.last_present.clone() else { return Ok(()) };
        if log_id.index > last.index {
            return Ok(());
        }
        let mut batch = Batch::new().map_err(write_err)?;
        delete_log_range(&mut batch, log_id.index.max(self.first_index()), last.index + 1)
            .map_err(write_err)?;
        self.db.write_opt(&batch, WriteFlags::SYNC).map_err(write_err)?;
        self.last_present = match log_id.index.checked_sub(1) {
            Some(prev) if prev >= self.first_index() => {
                read_entries::<C>(&self.db, prev..=prev)?.first().map(|e| e.get_log_id().clone())
            }
            _ => None,
        };
        Ok(())
    }

    /// Sets `m/purged` and deletes `[first, log_id.index]` in one batch
    /// written with RAVEL_SYNC.
    async fn purge(&mut self, log_id: LogId<C::NodeId>) -> Result<(), StorageError<C::NodeId>> {
        if self.last_purged.as_ref().is_some_and(|p| p.index >= log_id.index) {
            return Ok(());
        }
        let mut batch = Batch::new().map_err(write_err)?;
        batch.put(keys::PURGED, keys::to_json(&log_id).map_err(write_err)?).map_err(write_err)?;
        let stop = match &self.last_present {
            Some(last) => last.index.min(log_id.index) + 1,
            None => self.first_index(),
        };
        delete_log_range(&mut batch, self.first_index(), stop.max(self.first_index())).map_err(write_err)?;
        self.db.write_opt(&batch, WriteFlags::SYNC).map_err(write_err)?;
        if self.last_present.as_ref().is_some_and(|last| last.index <= log_id.index) {
            self.last_present = None;
        }
        self.last_purged = Some(log_id);
        Ok(())
    }
}
