//! Operating a live database (issue 22) from Rust: a reader in another
//! process (this test binary run again) catching up with a writer,
//! checkpoints, incremental and one-file backups (through a pipe into
//! another process), the change feed applied into a second database under
//! concurrent writers, `Code::Expired`, batches as bytes, bulk ingest and
//! repair.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{open_new, options, TempDir};
use ravel::{backup, Batch, Code, Db, IngestFlags, Op, Options, RepairKind, SstWriter};

fn fill(db: &Db, n: usize) {
    for i in 0..n {
        db.put(format!("k{i:05}"), format!("v{i}")).unwrap();
    }
}

fn all(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.range(None, None).unwrap().map(|e| e.unwrap()).collect()
}

/// This test binary, run again to execute the helper test NAME.
fn helper(name: &str, dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env("RAVEL_RS_HELPER", name)
        .env("RAVEL_RS_DIR", dir);
    cmd
}

fn helper_dir(name: &str) -> Option<std::path::PathBuf> {
    (std::env::var("RAVEL_RS_HELPER").ok()? == name).then(|| std::env::var_os("RAVEL_RS_DIR").unwrap().into())
}

/// The reader process: opens read-only beside the writer, shows what it
/// sees, waits for a line, shows again, catches up, shows again.
#[test]
fn helper_reader() {
    let Some(dir) = helper_dir("helper_reader") else { return };
    let db = Db::open(&dir, &Options::new().unwrap().with("read_only", true).unwrap()).unwrap();
    let show = |db: &Db| println!("READER {:?}", db.get("after").unwrap());
    show(&db);
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    show(&db);
    db.catch_up().unwrap();
    show(&db);
    println!("READER {:?}", db.put("x", "y").unwrap_err().code());
}

#[test]
fn reader_in_another_process_catches_up() {
    if helper_dir("helper_reader").is_some() {
        return;
    }
    let (dir, db) = open_new("reader");
    db.put("before", "1").unwrap();
    db.flush_wal(true).unwrap();
    let mut child = helper("helper_reader", &dir.join("db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut next = || loop {
        let mut l = String::new();
        assert!(out.read_line(&mut l).unwrap() > 0, "the reader ended early");
        if let Some(rest) = l.strip_prefix("READER ") {
            return rest.trim().to_string();
        }
    };
    assert_eq!(next(), "None");
    db.put("after", "2").unwrap();
    db.flush_wal(true).unwrap();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert_eq!(next(), "None");
    assert_eq!(next(), "Some([50])");
    assert_eq!(next(), "ReadOnly");
    assert!(child.wait().unwrap().success());
    db.catch_up().unwrap(); // a writer: nothing to do
}

#[test]
fn reader_catches_up_by_itself() {
    let (dir, db) = open_new("auto");
    let opts =
        Options::new().unwrap().with("read_only", true).unwrap().with("catch_up_interval_ms", 5).unwrap();
    let reader = Db::open(dir.join("db"), &opts).unwrap();
    db.put("k", "v").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120); // a bound, not a timing claim
    while reader.get("k").unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "the reader never caught up");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(reader.property("ravel.reader-lag").unwrap().contains("interval_ms=5"));
}

#[test]
fn checkpoint_opens_with_the_state() {
    let dir = TempDir::new("checkpoint");
    let db = Db::open(dir.join("db"), &options().with("write_buffer_size", "64K").unwrap()).unwrap();
    fill(&db, 2000);
    db.flush().unwrap();
    db.put("tail", "in the WAL").unwrap();
    db.checkpoint(dir.join("cp")).unwrap();
    db.put("later", "not in it").unwrap();
    assert_eq!(db.checkpoint(dir.join("cp")).unwrap_err().code(), Code::Invalid);
    let cp = Db::open(dir.join("cp"), &Options::new().unwrap()).unwrap();
    assert_eq!(cp.get("tail").unwrap().as_deref(), Some(&b"in the WAL"[..]));
    assert_eq!(cp.get("later").unwrap(), None);
    assert_eq!(all(&cp).len(), 2001);
}

#[test]
fn incremental_backups_round_trip() {
    let (dir, db) = open_new("backups");
    let root = dir.join("backups");
    fill(&db, 1000);
    db.flush().unwrap();
    assert_eq!(db.backup(&root).unwrap(), 1);
    db.put("k00000", "changed").unwrap();
    assert_eq!(db.backup(&root).unwrap(), 2);
    let list = backup::list(&root).unwrap();
    assert_eq!(list.iter().map(|b| b.id).collect::<Vec<_>>(), [1, 2]);
    assert!(list[1].copied < list[1].bytes, "{:?}", list[1]);
    assert_eq!(list[1].sequence, 1001);
    backup::verify(&root, 1).unwrap();
    backup::restore(&root, 1, dir.join("r1")).unwrap();
    backup::restore(&root, 0, dir.join("newest")).unwrap();
    let plain = Options::new().unwrap();
    assert_eq!(Db::open(dir.join("r1"), &plain).unwrap().get("k00000").unwrap().unwrap(), b"v0");
    assert_eq!(Db::open(dir.join("newest"), &plain).unwrap().get("k00000").unwrap().unwrap(), b"changed");
    backup::purge(&root, 1).unwrap();
    assert_eq!(backup::list(&root).unwrap().len(), 1);
    assert_eq!(backup::verify(&root, 1).unwrap_err().code(), Code::NotFound);
    assert_eq!(backup::purge(&root, 0).unwrap_err().code(), Code::Invalid);
    assert_eq!(backup::list(dir.join("none")).unwrap_err().code(), Code::NotFound);
}

#[test]
fn backups_from_a_reader_handle() {
    let dir = TempDir::new("from-reader");
    let db = Db::open(dir.join("db"), &options().with("write_buffer_size", "64K").unwrap()).unwrap();
    fill(&db, 3000);
    db.put("last", "acknowledged").unwrap();
    let reader = Db::open(dir.join("db"), &Options::new().unwrap().with("read_only", true).unwrap()).unwrap();
    reader.checkpoint(dir.join("cp")).unwrap();
    assert_eq!(reader.backup(dir.join("root")).unwrap(), 1);
    reader.write_backup_file(dir.join("one.backup")).unwrap();
    backup::restore(dir.join("root"), 1, dir.join("restored")).unwrap();
    backup::restore_file(dir.join("one.backup"), dir.join("from-file")).unwrap();
    for name in ["cp", "restored", "from-file"] {
        let c = Db::open(dir.join(name), &Options::new().unwrap()).unwrap();
        assert_eq!(c.get("last").unwrap().as_deref(), Some(&b"acknowledged"[..]), "{name}");
        assert_eq!(all(&c).len(), 3001, "{name}");
    }
}

/// The restoring process: a one-file backup on stdin into RAVEL_RS_DIR.
#[test]
fn helper_restore() {
    let Some(dir) = helper_dir("helper_restore") else { return };
    backup::restore_from(std::io::stdin(), &dir).unwrap();
    let db = Db::open(&dir, &Options::new().unwrap()).unwrap();
    println!("RESTORED {}", all(&db).len());
}

#[test]
fn one_file_backup_through_a_pipe_and_a_file() {
    if helper_dir("helper_restore").is_some() {
        return;
    }
    let (dir, db) = open_new("onefile");
    fill(&db, 300);
    let mut child = helper("helper_restore", &dir.join("piped"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    db.write_backup_to(&stdin).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("RESTORED 300"));

    db.write_backup_file(dir.join("db.backup")).unwrap();
    backup::restore_file(dir.join("db.backup"), dir.join("fromfile")).unwrap();
    assert_eq!(all(&Db::open(dir.join("fromfile"), &Options::new().unwrap()).unwrap()).len(), 300);
    let data = std::fs::read(dir.join("db.backup")).unwrap();
    std::fs::write(dir.join("short"), &data[..data.len() / 2]).unwrap();
    let e = backup::restore_file(dir.join("short"), dir.join("bad")).unwrap_err();
    assert_eq!(e.code(), Code::Corrupt);
    assert!(!dir.join("bad").exists());
}

#[test]
fn batch_ops_and_bytes() {
    let mut b = Batch::new().unwrap();
    b.put("a", "1").unwrap();
    b.delete("b").unwrap();
    b.put("c", "").unwrap();
    let want =
        [Op::Put { key: b"a", value: b"1" }, Op::Delete { key: b"b" }, Op::Put { key: b"c", value: b"" }];
    assert_eq!(b.ops().collect::<Result<Vec<_>, _>>().unwrap(), want);
    assert_eq!(b.sequence(), 0);
    let copy = Batch::from_data(b.data()).unwrap();
    assert_eq!(copy.ops().collect::<Result<Vec<_>, _>>().unwrap(), want);
    let short = &b.data()[..b.data().len() - 1];
    assert_eq!(Batch::from_data(short).unwrap_err().code(), Code::Corrupt);
}

#[test]
fn follower_replicates_under_concurrent_writers() {
    let dir = TempDir::new("follower");
    let src =
        Arc::new(Db::open(dir.join("src"), &options().with("write_buffer_size", "64K").unwrap()).unwrap());
    let dst = Db::open(dir.join("dst"), &options()).unwrap();
    const WRITERS: usize = 4;
    const PER_WRITER: usize = 300;
    let done = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let src = Arc::clone(&src);
            std::thread::spawn(move || {
                let mut b = Batch::new().unwrap();
                for i in 0..PER_WRITER {
                    b.clear().unwrap();
                    b.put(format!("w{w}-{i:04}"), i.to_string()).unwrap();
                    if i % 3 == 0 {
                        b.delete(format!("w{w}-{:04}", i / 2)).unwrap();
                    }
                    src.write(&b).unwrap();
                }
            })
        })
        .collect();
    let watcher = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            for w in writers {
                w.join().unwrap();
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let (mut applied, mut next) = (0, 0u64);
    let mut feed = src.updates_since(0).unwrap();
    loop {
        let finished = done.load(Ordering::SeqCst); // this pass reads the rest
        for batch in feed.by_ref() {
            let batch = batch.unwrap();
            assert!(next == 0 || batch.sequence() == next, "batch at {}, want {next}", batch.sequence());
            next = batch.sequence() + u64::from(batch.count());
            dst.write(&batch).unwrap();
            applied += 1;
        }
        if finished {
            break;
        }
    }
    watcher.join().unwrap();
    assert_eq!(applied, WRITERS * PER_WRITER);
    assert_eq!(feed.last_sequence(), next - 1);
    drop(feed);
    assert_eq!(all(&src), all(&dst));
}

#[test]
fn expired_sequence_and_retention() {
    let (_dir, db) = open_new("expired");
    fill(&db, 100);
    db.flush().unwrap(); // the WAL holding 1..100 is deleted
    db.put("after", "x").unwrap();
    let e = db.updates_since(1).unwrap_err();
    assert_eq!(e.code(), Code::Expired);
    let seqs: Vec<u64> = db.updates_since(101).unwrap().map(|b| b.unwrap().sequence()).collect();
    assert_eq!(seqs, [101]);

    let dir = TempDir::new("retention");
    let kept = Db::open(dir.join("db"), &options().with("wal_ttl_seconds", 3600).unwrap()).unwrap();
    fill(&kept, 100);
    kept.flush().unwrap();
    assert_eq!(kept.updates_since(1).unwrap().count(), 100);
}

#[test]
fn sst_writer_and_ingest() {
    let (dir, db) = open_new("ingest");
    let sst = dir.join("load.sst");
    let mut w = SstWriter::create(&sst, None).unwrap();
    for i in 0..1000 {
        w.put(format!("i{i:05}"), format!("ingested {i}")).unwrap();
    }
    w.delete("z-gone").unwrap();
    assert_eq!(w.finish().unwrap(), 1001);
    db.put("i00005", "old").unwrap();
    db.put("z-gone", "old").unwrap();
    db.ingest(&[&sst], IngestFlags::MOVE).unwrap();
    assert!(!sst.exists());
    assert_eq!(db.get("i00005").unwrap().unwrap(), b"ingested 5");
    assert_eq!(db.get("z-gone").unwrap(), None);
    let none: [&str; 0] = [];
    assert_eq!(db.ingest(&none, IngestFlags::NONE).unwrap_err().code(), Code::Invalid);
    assert_eq!(db.ingest(&[&sst], IngestFlags::NONE).unwrap_err().code(), Code::NotFound);

    let bad = dir.join("bad.sst");
    let mut w = SstWriter::create(&bad, None).unwrap();
    w.put("b", "").unwrap();
    assert_eq!(w.put("a", "").unwrap_err().code(), Code::Invalid);
    drop(w);
    assert!(!bad.exists(), "a writer dropped unfinished left its file");
}

#[test]
fn repair_salvages_a_lost_manifest() {
    let (dir, db) = open_new("repair");
    fill(&db, 500);
    db.flush().unwrap();
    db.put("in-wal", "yes").unwrap();
    assert_eq!(ravel::repair(dir.join("db"), None).unwrap_err().code(), Code::Locked);
    db.close().unwrap();
    for entry in std::fs::read_dir(dir.join("db")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("MANIFEST-") || name == "CURRENT" {
            std::fs::remove_file(dir.join("db").join(name)).unwrap();
        }
    }
    let report = ravel::repair(dir.join("db"), None).unwrap();
    assert!(report.lines.iter().any(|(k, _)| *k == RepairKind::Kept), "{}", report.text);
    assert!(!report.text.is_empty());
    let db = Db::open(dir.join("db"), &Options::new().unwrap()).unwrap();
    assert_eq!(db.get("k00499").unwrap().unwrap(), b"v499");
    assert_eq!(db.get("in-wal").unwrap().unwrap(), b"yes");
}
