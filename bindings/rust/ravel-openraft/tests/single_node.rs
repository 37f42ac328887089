//! The store under openraft's real core: a one-node cluster (no network
//! needed) initialized, written through `client_write`, snapshotted and
//! purged, shut down, restarted from the same directory, written again.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{InstallSnapshotError, RPCError, RaftError};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, Config, Raft, ServerState};
use ravel_openraft::kv::{KvCommand, KvConfig, KvResponse};
use ravel_openraft::StateReader;

/// A one-node cluster sends nothing.
struct NoNetwork;

impl RaftNetworkFactory<KvConfig> for NoNetwork {
    type Network = NoNetwork;
    async fn new_client(&mut self, _target: u64, _node: &BasicNode) -> NoNetwork {
        NoNetwork
    }
}

impl RaftNetwork<KvConfig> for NoNetwork {
    async fn append_entries(
        &mut self,
        _rpc: AppendEntriesRequest<KvConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        unreachable!("a one-node cluster sends no append-entries")
    }
    async fn install_snapshot(
        &mut self,
        _rpc: InstallSnapshotRequest<KvConfig>,
        _option: RPCOption,
    ) -> Result<InstallSnapshotResponse<u64>, RPCError<u64, BasicNode, RaftError<u64, InstallSnapshotError>>>
    {
        unreachable!("a one-node cluster sends no snapshot")
    }
    async fn vote(
        &mut self,
        _rpc: VoteRequest<u64>,
        _option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        unreachable!("a one-node cluster asks no one for votes")
    }
}

fn config() -> Arc<Config> {
    let c = Config {
        heartbeat_interval: 50,
        election_timeout_min: 150,
        election_timeout_max: 300,
        ..Default::default()
    };
    Arc::new(c.validate().expect("a valid config"))
}

/// Starts node 1 on `dir`; waits (generously: this is no timing check)
/// until it leads.  A restart may find the directory still locked for a
/// moment: openraft's `shutdown` returns before its storage tasks have
/// dropped their handles, so the open is tried again while it says
/// "locked" (up to a minute), and any other error fails at once.
async fn start(dir: &Path) -> (Raft<KvConfig>, StateReader) {
    let mut tries = 0;
    let (log_store, state_machine) = loop {
        match ravel_openraft::open::<KvConfig>(dir, None) {
            Ok(stores) => break stores,
            Err(e) if tries < 600 && e.to_string().contains("database is locked") => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("open: {e:?}"),
        }
    };
    let reader = state_machine.reader();
    let raft = Raft::new(1, config(), NoNetwork, log_store, state_machine).await.expect("a raft node");
    (raft, reader)
}

async fn wait_leader(raft: &Raft<KvConfig>) {
    raft.wait(Some(Duration::from_secs(60)))
        .state(ServerState::Leader, "node 1 leads")
        .await
        .expect("leader");
}

async fn put(raft: &Raft<KvConfig>, key: &str, value: &str) -> KvResponse {
    let command = KvCommand::Put { key: key.as_bytes().to_vec(), value: value.as_bytes().to_vec() };
    raft.client_write(command).await.expect("client_write").data
}

#[test]
fn one_node_cluster_writes_snapshots_restarts() {
    let dir = std::env::temp_dir().join(format!("ravel-openraft-one-node-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (raft, reader) = start(&dir).await;
        raft.initialize(BTreeSet::from([1u64])).await.expect("initialize");
        wait_leader(&raft).await;
        for i in 0..50 {
            put(&raft, &format!("k{i}"), &format!("v{i}")).await;
        }
        assert_eq!(put(&raft, "k7", "seven").await.previous, Some(b"v7".to_vec()));
        assert_eq!(reader.get("k7").unwrap(), Some(b"seven".to_vec()));

        raft.trigger().snapshot().await.unwrap();
        let m = raft
            .wait(Some(Duration::from_secs(60)))
            .metrics(|m| m.snapshot.is_some_and(|s| s.index >= 51), "a snapshot at 51 or later")
            .await
            .expect("a snapshot");
        let upto = m.snapshot.unwrap().index;
        raft.trigger().purge_log(upto).await.unwrap();
        raft.wait(Some(Duration::from_secs(60)))
            .metrics(|m| m.purged.is_some_and(|p| p.index >= upto), "log purged up to the snapshot")
            .await
            .expect("purged");
        raft.shutdown().await.unwrap();
        drop(raft);
        drop(reader);
    });
    rt.block_on(async {
        let (raft, reader) = start(&dir).await;
        wait_leader(&raft).await;
        for i in 0..50 {
            let want = if i == 7 { "seven".to_string() } else { format!("v{i}") };
            assert_eq!(reader.get(format!("k{i}")).unwrap(), Some(want.into_bytes()), "k{i} after restart");
        }
        assert_eq!(put(&raft, "k1", "one").await.previous, Some(b"v1".to_vec()));
        assert_eq!(reader.get("k1").unwrap(), Some(b"one".to_vec()));
        raft.shutdown().await.unwrap();
    });
    let _ = std::fs::remove_dir_all(&dir);
}
