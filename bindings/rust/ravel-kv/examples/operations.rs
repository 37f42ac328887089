// Operating a live database: a reader that catches up, a checkpoint,
// backups (incremental and one file), a follower applying the change
// feed, a bulk load, a repair.

use ravel::{backup, Code, Db, IngestFlags, Options, SstWriter};

fn main() -> ravel::Result<()> {
    let base = std::env::temp_dir().join(format!("ravel-ops-example-{}", std::process::id()));
    let at = |name: &str| base.join(name);
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("a scratch directory");

    // wal_ttl_seconds keeps flushed WAL segments an hour for the feed
    let opts = Options::new()?.with("create_if_missing", true)?.with("wal_ttl_seconds", 3600)?;
    let db = Db::open(at("live"), &opts)?;
    db.put("apple", "red")?;

    // a reader (in another process in real life) beside the writer
    let reader = Db::open(at("live"), &Options::new()?.with("read_only", true)?)?;
    db.put("cherry", "dark red")?;
    assert_eq!(reader.get("cherry")?, None); // not yet
    reader.catch_up()?;
    assert_eq!(reader.get("cherry")?.as_deref(), Some(&b"dark red"[..]));
    drop(reader);

    // a checkpoint, and backups: incremental ones and one file
    db.checkpoint(at("snapshot"))?;
    let first = db.backup(at("backups"))?;
    db.put("apple", "green")?;
    let second = db.backup(at("backups"))?;
    let infos = backup::list(at("backups"))?;
    println!("{} backups, the second copied {} of {} bytes", infos.len(), infos[1].copied, infos[1].bytes);
    backup::verify(at("backups"), second)?;
    backup::restore(at("backups"), first, at("restored"))?;
    let file = std::fs::File::create(at("live.backup")).expect("a file");
    db.write_backup_to(&file)?; // any descriptor: a pipe, a socket ...
    drop(file);
    backup::restore_file(at("live.backup"), at("from-file"))?;

    // the change feed, applied to a replica
    let replica = Db::open(at("replica"), &Options::new()?.with("create_if_missing", true)?)?;
    let mut feed = db.updates_since(0)?;
    for batch in feed.by_ref() {
        replica.write(&batch?)?;
    }
    let resume_at = feed.last_sequence() + 1; // caught up; resume there
    drop(feed);
    assert_eq!(replica.get("apple")?.as_deref(), Some(&b"green"[..]));
    let short = Db::open(at("short"), &Options::new()?.with("create_if_missing", true)?)?;
    short.put("k", "v")?;
    short.flush()?; // no retention: its WAL is gone, start from a checkpoint
    assert_eq!(short.updates_since(1).unwrap_err().code(), Code::Expired);

    // a bulk load: a sorted table file written outside, then ingested
    let mut w = SstWriter::create(at("load.sst"), None)?;
    w.put("fig", "purple")?;
    w.finish()?;
    db.ingest(&[at("load.sst")], IngestFlags::MOVE)?;
    assert_eq!(db.get("fig")?.as_deref(), Some(&b"purple"[..]));

    // a closed database's repair
    let report = ravel::repair(at("from-file"), None)?;
    println!("resume at {resume_at}; repair lost {} things", report.lost().count());
    drop((db, replica, short));
    let _ = std::fs::remove_dir_all(&base);
    Ok(())
}
