//! What ravel-openraft keeps across a close and across a SIGKILL: a
//! reopened store has the vote, the committed and purged log ids, the log,
//! the applied state, the data and the current snapshot; a child process
//! killed with SIGKILL while appending loses no entry whose append
//! callback fired (the child prints the index once `blocking_append`,
//! which waits for that callback, returned).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::{CommittedLeaderId, Entry, EntryPayload, LogId, Membership, RaftLogReader, RaftSnapshotBuilder, Vote};
use ravel_openraft::kv::{KvCommand, KvConfig};
use ravel_openraft::{RavelLogStore, RavelStateMachine};

type Store = (RavelLogStore<KvConfig>, RavelStateMachine<KvConfig>);

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ravel-openraft-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn open(dir: &Path) -> Store {
    ravel_openraft::open::<KvConfig>(dir, None).expect("open")
}

fn log_id(term: u64, index: u64) -> LogId<u64> {
    LogId::new(CommittedLeaderId::new(term, 1), index)
}

fn put_entry(term: u64, index: u64) -> Entry<KvConfig> {
    let command = KvCommand::Put { key: format!("k{index}").into_bytes(), value: format!("v{index}").into_bytes() };
    Entry { log_id: log_id(term, index), payload: EntryPayload::Normal(command) }
}

fn membership_entry(term: u64, index: u64) -> Entry<KvConfig> {
    let m = Membership::new(vec![BTreeSet::from([1u64, 2, 3])], None);
    Entry { log_id: log_id(term, index), payload: EntryPayload::Membership(m) }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().expect("a tokio runtime")
}

#[test]
fn reopen_keeps_everything() {
    let dir = scratch("reopen");
    let rt = runtime();
    let snapshot_meta = rt.block_on(async {
        let (mut log, mut sm) = open(&dir);
        log.save_vote(&Vote::new(7, 1)).await.unwrap();
        let entries: Vec<_> = (1..=20).map(|i| if i == 3 { membership_entry(2, i) } else { put_entry(2, i) }).collect();
        log.blocking_append(entries.clone()).await.unwrap();
        log.save_committed(Some(log_id(2, 15))).await.unwrap();
        sm.apply(entries[..15].to_vec()).await.unwrap();
        let snap = sm.get_snapshot_builder().await.build_snapshot().await.unwrap();
        log.purge(log_id(2, 10)).await.unwrap();
        log.truncate(log_id(2, 19)).await.unwrap();
        snap.meta
    });
    rt.block_on(async {
        let (mut log, mut sm) = open(&dir);
        assert_eq!(log.read_vote().await.unwrap(), Some(Vote::new(7, 1)));
        assert_eq!(log.read_committed().await.unwrap(), Some(log_id(2, 15)));
        let state = log.get_log_state().await.unwrap();
        assert_eq!(state.last_purged_log_id, Some(log_id(2, 10)));
        assert_eq!(state.last_log_id, Some(log_id(2, 18)));
        let got = log.try_get_log_entries(0..100).await.unwrap();
        assert_eq!(got, (11..=18).map(|i| put_entry(2, i)).collect::<Vec<_>>());
        let (applied, membership) = sm.applied_state().await.unwrap();
        assert_eq!(applied, Some(log_id(2, 15)));
        assert_eq!(*membership.log_id(), Some(log_id(2, 3)));
        for i in 1..=20u64 {
            let want = (i != 3 && i <= 15).then(|| format!("v{i}").into_bytes());
            assert_eq!(sm.get(format!("k{i}")).unwrap(), want, "key k{i}");
        }
        let current = sm.get_current_snapshot().await.unwrap().expect("a current snapshot");
        assert_eq!(current.meta, snapshot_meta);

        // install it on a second store, reopen that one: same state
        let other = scratch("reopen-install");
        {
            let (_, mut sm2) = open(&other);
            sm2.apply(vec![put_entry(1, 1), Entry { log_id: log_id(1, 2), payload: EntryPayload::Normal(KvCommand::Put { key: b"stale".to_vec(), value: b"x".to_vec() }) }]).await.unwrap();
            sm2.install_snapshot(&current.meta, current.snapshot).await.unwrap();
        }
        let (_, mut sm2) = open(&other);
        assert_eq!(sm2.applied_state().await.unwrap(), (applied, membership));
        assert_eq!(sm2.get("stale").unwrap(), None, "keys absent from the snapshot are gone");
        assert_eq!(sm2.get("k14").unwrap(), Some(b"v14".to_vec()));
        assert_eq!(sm2.get_current_snapshot().await.unwrap().unwrap().meta, snapshot_meta);
        drop(sm2);
        let _ = std::fs::remove_dir_all(&other);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

const CHILD_ENV: &str = "RAVEL_OPENRAFT_APPEND_CHILD";

/// The child's side of `sigkill_during_appends`: appends batches of 1 to
/// 16 entries after the last one present, printing "durable N" after each
/// append's callback fired, until killed.  A no-op in a normal test run.
#[test]
fn child_appends() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    runtime().block_on(async {
        let (mut log, _sm) = open(Path::new(&dir));
        let mut next = log.get_log_state().await.unwrap().last_log_id.map_or(1, |id| id.index + 1);
        let mut out = std::io::stdout().lock();
        for round in 0u64.. {
            let n = 1 + (round * 7 + next) % 16;
            let batch: Vec<_> = (next..next + n).map(|i| put_entry(3, i)).collect();
            log.blocking_append(batch).await.unwrap();
            next += n;
            writeln!(out, "durable {}", next - 1).unwrap();
            out.flush().unwrap();
        }
    });
}

#[test]
fn sigkill_during_appends() {
    let dir = scratch("sigkill");
    let exe = std::env::current_exe().unwrap();
    let mut durable = 0;
    for (round, lines_before_kill) in [40usize, 97, 151].into_iter().enumerate() {
        let mut child = Command::new(&exe)
            .args(["--exact", "child_appends", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the child");
        let mut seen = 0;
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let Some(n) = line.unwrap().strip_prefix("durable ").map(|n| n.parse::<u64>().unwrap()) else { continue };
            assert!(n > durable, "round {round}: index {n} after {durable}");
            durable = n;
            seen += 1;
            if seen == lines_before_kill {
                break;
            }
        }
        assert_eq!(seen, lines_before_kill, "round {round}: the child stopped early");
        child.kill().expect("SIGKILL"); // std's kill is SIGKILL on unix
        child.wait().unwrap();

        let rt = runtime();
        rt.block_on(async {
            let (mut log, _sm) = open(&dir);
            let last = log.get_log_state().await.unwrap().last_log_id.expect("entries").index;
            assert!(last >= durable, "round {round}: {durable} was acknowledged, the log ends at {last}");
            let got = log.try_get_log_entries(1..=last).await.unwrap();
            assert_eq!(got.len() as u64, last, "round {round}: a hole in the log");
            for (i, entry) in got.iter().enumerate() {
                assert_eq!(*entry, put_entry(3, i as u64 + 1), "round {round}");
            }
            durable = last;
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}
