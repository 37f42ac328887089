// The example of docs/replication.md, "Storage for openraft": an
// application's own log payload and state machine on ravel-openraft.
// `cargo test` builds it; `cargo run --example counter` applies three
// entries directly (no raft node: that needs a network) and prints the
// counter.

use ravel_openraft::{Command, Writes};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    Incr { key: String },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Response {
    pub value: u64,
}

impl Command<Response> for Request {
    fn apply(&self, kv: &mut Writes<'_>) -> ravel::Result<Response> {
        let Request::Incr { key } = self;
        let n = kv.get(key)?.map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap())) + 1;
        kv.put(key, n.to_be_bytes())?;
        Ok(Response { value: n })
    }
}

use std::io::Cursor; // the macro names it
openraft::declare_raft_types!(pub Config: D = Request, R = Response);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    use openraft::storage::RaftStateMachine;
    use openraft::{CommittedLeaderId, Entry, EntryPayload, LogId};

    let dir = std::env::temp_dir().join(format!("ravel-openraft-counter-{}", std::process::id()));
    let (_log_store, mut state_machine) = ravel_openraft::open::<Config>(&dir, None)?;
    let entries = (1..=3).map(|i| Entry::<Config> {
        log_id: LogId::new(CommittedLeaderId::new(1, 1), i),
        payload: EntryPayload::Normal(Request::Incr { key: "visits".into() }),
    });
    let replies =
        tokio::runtime::Runtime::new()?.block_on(state_machine.apply(entries.collect::<Vec<_>>()))?;
    println!("visits = {}", replies.last().unwrap().value);
    drop((_log_store, state_machine));
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
