//! What ravel-openraft keeps across a close and across a SIGKILL: a
//! reopened store has the vote, the committed and purged log ids, the log,
//! the applied state, the data and the current snapshot; a child process
//! killed with SIGKILL while appending loses no entry whose append
//! callback fired (the child prints the index once `blocking_append`,
//! which waits for that callback, returned); one killed while installing
//! snapshots reopens with one whole snapshot's state, never a mix.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::{
    CommittedLeaderId, Entry, EntryPayload, LogId, Membership, RaftLogReader, RaftSnapshotBuilder, Vote,
};
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
    let command =
        KvCommand::Put { key: format!("k{index}").into_bytes(), value: format!("v{index}").into_bytes() };
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
        let entries: Vec<_> =
            (1..=20).map(|i| if i == 3 { membership_entry(2, i) } else { put_entry(2, i) }).collect();
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
            sm2.apply(vec![
                put_entry(1, 1),
                Entry {
                    log_id: log_id(1, 2),
                    payload: EntryPayload::Normal(KvCommand::Put {
                        key: b"stale".to_vec(),
                        value: b"x".to_vec(),
                    }),
                },
            ])
            .await
            .unwrap();
            sm2.install_snapshot(&current.meta, current.snapshot).await.unwrap();
        }
        let (_, mut sm2) = open(&other);
        assert_eq!(sm2.applied_state().await.unwrap(), (applied, membership));
        assert_eq!(sm2.get("stale").unwrap(), None, "keys absent from the snapshot are gone");
        assert_eq!(sm2.get("k14").unwrap(), Some(b"v14".to_vec()));
        assert_eq!(
            sm2.get("k1").unwrap(),
            Some(b"v1".to_vec()),
            "a key in both: the snapshot's put wins over the delete"
        );
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
            let Some(n) = line.unwrap().strip_prefix("durable ").map(|n| n.parse::<u64>().unwrap()) else {
                continue;
            };
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

const INSTALL_CHILD_ENV: &str = "RAVEL_OPENRAFT_INSTALL_CHILD";

/// Generation g of the state: keys k0 .. k(n-1) all set to "g{g}", with n
/// varying by generation so that a key left from another one shows.
fn generation_keys(g: u64) -> u64 {
    300 + (g * 137) % 400
}

/// Generations cycle through 1..=GENERATIONS.
const GENERATIONS: u64 = 4;

/// The child's side of `sigkill_during_installs`: builds the snapshots of
/// generations 1..=4 on scratch state machines, then installs them on the
/// target in turn (1, 2, 3, 4, 1, ...), printing "installed g" after each,
/// until killed.  A no-op in a normal run.
#[test]
fn child_installs() {
    let Ok(dir) = std::env::var(INSTALL_CHILD_ENV) else { return };
    runtime().block_on(async {
        let mut snapshots = Vec::new();
        for g in 1..=GENERATIONS {
            let source_dir = PathBuf::from(format!("{dir}-source{g}"));
            let _ = std::fs::remove_dir_all(&source_dir);
            let (_l, mut source) = open(&source_dir);
            let value = format!("g{g}").into_bytes();
            let writes = (0..generation_keys(g)).map(|k| {
                let command = KvCommand::Put { key: format!("k{k}").into_bytes(), value: value.clone() };
                Entry { log_id: log_id(g, g), payload: EntryPayload::Normal(command) }
            });
            source.apply(writes.collect::<Vec<_>>()).await.unwrap();
            snapshots.push(source.get_snapshot_builder().await.build_snapshot().await.unwrap());
            drop((_l, source));
            let _ = std::fs::remove_dir_all(&source_dir);
        }
        let (_log, mut target) = open(Path::new(&dir));
        let mut out = std::io::stdout().lock();
        for g in (1..=GENERATIONS).cycle() {
            let snap = &snapshots[g as usize - 1];
            let data = Box::new(std::io::Cursor::new(snap.snapshot.get_ref().clone()));
            target.install_snapshot(&snap.meta, data).await.unwrap();
            writeln!(out, "installed {g}").unwrap();
            out.flush().unwrap();
        }
    });
}

#[test]
fn sigkill_during_installs() {
    let dir = scratch("sigkill-install");
    let exe = std::env::current_exe().unwrap();
    let seed = std::process::id() as u64;
    for (round, lines_before_kill) in [5usize, 13, 22, 31].into_iter().enumerate() {
        let mut child = Command::new(&exe)
            .args(["--exact", "child_installs", "--nocapture", "--test-threads=1"])
            .env(INSTALL_CHILD_ENV, &dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the child");
        let mut installed = 0;
        let mut seen = 0;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for line in lines.by_ref() {
            let Some(g) = line.unwrap().strip_prefix("installed ").map(|g| g.parse::<u64>().unwrap()) else {
                continue;
            };
            installed = g;
            seen += 1;
            if seen == lines_before_kill {
                break;
            }
        }
        assert_eq!(seen, lines_before_kill, "round {round}: the child stopped early");
        // a kill point somewhere in the next installs, not always just after a line
        std::thread::sleep(std::time::Duration::from_micros((seed * 7919 + round as u64 * 104729) % 20_000));
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        // what the child printed before the kill landed also counts
        for line in lines {
            let Ok(line) = line else { break };
            if let Some(g) = line.strip_prefix("installed ") {
                installed = g.parse().unwrap();
            }
        }

        runtime().block_on(async {
            let (_log, mut sm) = open(&dir);
            let (applied, _) = sm.applied_state().await.unwrap();
            let g = applied.as_ref().expect("an installed snapshot").index;
            let next = installed % GENERATIONS + 1;
            assert!(g == installed || g == next, "round {round}: state {g}, last installed {installed}");
            let want = format!("g{g}").into_bytes();
            for k in 0..700 {
                let got = sm.get(format!("k{k}")).unwrap();
                let expected = (k < generation_keys(g)).then(|| want.clone());
                assert_eq!(got, expected, "round {round}: key k{k} in generation {g}'s state");
            }
            assert_eq!(sm.get_current_snapshot().await.unwrap().unwrap().meta.last_log_id, applied);
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}
