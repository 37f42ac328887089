//! An error ends an iteration with the error, never with a silent early
//! end, and no entry follows it.
//!
//! The database is layered so that going on past damage would show wrong
//! data (as tests/test_iter_corruption.c builds it): every key written at
//! version 1 and compacted to the last level, then every key rewritten at
//! version 2 (every fifth one deleted instead) and flushed to level 0
//! above it.  One bit of a data block in the middle of a table file is
//! flipped.  The database is then read with the loops a user writes --
//! `for entry in db.range(..)? { let (k, v) = entry?; .. }`, forward,
//! reversed, bounded, at a snapshot, and the cursor's
//! `while it.valid() { ..; it.next()?; }` -- and every entry must be the
//! version 2 entry of the next live key, the loop must end with an
//! `Err(Corrupt)` item (or a move's `Err`), nothing may follow it, and
//! every later move of the stopped cursor must return that same error.

mod common;

use std::fs;

use common::TempDir;
use ravel::{Code, Db, Error, Iter, Options, RangeIter};

const KEYS: usize = 2000;
const OPTIONS: &str = "write_buffer_size=64K;target_file_size_base=64K;disable_auto_compactions=true";

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: usize, version: u32) -> Vec<u8> {
    format!("v{version}-{i}-{i:060}").into_bytes()
}

/// Whether key I is live at the end (version 2 deleted every fifth key).
fn live(i: usize) -> bool {
    i % 5 != 0
}

fn options(create: bool) -> Options {
    let mut o = Options::new().unwrap().with("create_if_missing", create).unwrap();
    o.parse(OPTIONS).unwrap();
    o
}

/// The table files of each level, from the ravel.sstables property
/// ("level 1: 000006.sst 67711 bytes, ...").
fn tables_by_level(db: &Db) -> Vec<(u32, String)> {
    let text = db.property("ravel.sstables").unwrap();
    text.lines()
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            (words[1].trim_end_matches(':').parse().unwrap(), words[2].to_string())
        })
        .collect()
}

/// Builds the layered database and flips a bit in a data block in the
/// middle of the middle table file of level 0 (`last_level` false) or of
/// the last level.
fn build_damaged(label: &str, last_level: bool) -> TempDir {
    let dir = TempDir::new(label);
    let db = Db::open(dir.join("db"), &options(true)).unwrap();
    for i in 0..KEYS {
        db.put(key(i), value(i, 1)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 0..KEYS {
        if live(i) {
            db.put(key(i), value(i, 2)).unwrap();
        } else {
            db.delete(key(i)).unwrap();
        }
    }
    db.flush().unwrap();
    let tables = tables_by_level(&db);
    db.close().unwrap();
    let deepest = tables.iter().map(|t| t.0).max().unwrap();
    assert!(deepest > 0 && tables.iter().all(|t| t.0 == 0 || t.0 == deepest), "{tables:?}");
    let level = if last_level { deepest } else { 0 };
    let files: Vec<&String> = tables.iter().filter(|t| t.0 == level).map(|t| &t.1).collect();
    assert!(files.len() >= 3, "want entries on both sides of the damaged file: {tables:?}");
    let path = dir.join("db").join(files[files.len() / 2]);
    let mut bytes = fs::read(&path).unwrap();
    // the 80-byte footer starts with the index block's offset; the data
    // blocks lie before it
    let footer = bytes.len() - 80;
    let index_offset = u64::from_le_bytes(bytes[footer..footer + 8].try_into().unwrap()) as usize;
    assert!(index_offset > 0 && index_offset < footer, "{path:?}: index at {index_offset}");
    bytes[index_offset / 2] ^= 0x10;
    fs::write(&path, &bytes).unwrap();
    dir
}

/// The live keys from FIRST on (included), stepping down if REVERSE,
/// while in 0..KEYS and before STOP (excluded).
fn live_keys(first: usize, reverse: bool, stop: Option<usize>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = first as isize;
    while i >= 0 && (i as usize) < KEYS && Some(i as usize) != stop {
        if live(i as usize) {
            out.push(i as usize);
        }
        i += if reverse { -1 } else { 1 };
    }
    out
}

/// Checks that GOT, the entries before the error, are a proper prefix of
/// WANT's version 2 entries.
fn check_entries(what: &str, got: &[(Vec<u8>, Vec<u8>)], want: &[usize]) {
    assert!(
        got.len() < want.len(),
        "{what}: {} of {} entries: went on past the damage",
        got.len(),
        want.len()
    );
    for (n, (k, v)) in got.iter().enumerate() {
        assert_eq!(k, &key(want[n]), "{what}: entry {n} is not the next live key");
        assert!(v == &value(want[n], 2), "{what}: entry {n} is not the version 2 value");
    }
}

/// The loop over a range a user writes (`let (k, v) = entry?`), except
/// that it goes on after the error to count what follows it.
fn read_range(what: &str, range: RangeIter, want: &[usize]) -> Error {
    let mut got = Vec::new();
    let mut error = None;
    let mut after = 0;
    for entry in range {
        if error.is_some() {
            after += 1;
            continue;
        }
        match entry {
            Ok(kv) => got.push(kv),
            Err(e) => error = Some(e),
        }
    }
    let error = error.unwrap_or_else(|| panic!("{what}: ended without an error after {} entries", got.len()));
    assert_eq!(error.code(), Code::Corrupt, "{what}: {error}");
    assert!(error.message().contains(".sst"), "{what}: {error}");
    assert_eq!(after, 0, "{what}: {after} items after the error {error}");
    check_entries(what, &got, want);
    error
}

/// Every move of the stopped cursor, and its status, return FIRST; it
/// shows no entry.
fn expect_stopped(what: &str, it: &mut Iter, first: &Error) {
    let mid = key(KEYS / 2);
    let moves: [(&str, fn(&mut Iter, &[u8]) -> ravel::Result<()>); 7] = [
        ("status", |it, _| it.status()),
        ("next", |it, _| it.next()),
        ("prev", |it, _| it.prev()),
        ("seek_to_first", |it, _| it.seek_to_first()),
        ("seek_to_last", |it, _| it.seek_to_last()),
        ("seek", |it, k| it.seek(k)),
        ("seek_for_prev", |it, k| it.seek_for_prev(k)),
    ];
    for (name, call) in moves {
        assert_eq!(call(it, &mid).as_ref(), Err(first), "{what}: {name} on the stopped iterator");
        assert!(!it.valid() && it.key().is_none() && it.value().is_none(), "{what}: {name}: an entry shows");
    }
    assert_eq!(it.status().as_ref(), Err(first), "{what}: status at the end");
}

fn ranges_end_with_the_error(last_level: bool) {
    let where_ = if last_level { "last level" } else { "level 0" };
    let dir = build_damaged("itercorrupt", last_level);
    let db = Db::open(dir.join("db"), &options(false)).unwrap();
    let (third, two_thirds) = (key(KEYS / 3), key(2 * KEYS / 3));
    let (lo, hi) = (7, KEYS - 7);
    let (lo_key, hi_key) = (key(lo), key(hi));

    let forward = read_range("range", db.range(None, None).unwrap(), &live_keys(0, false, None));
    let backward =
        read_range("range_rev", db.range_rev(None, None).unwrap(), &live_keys(KEYS - 1, true, None));
    for e in [&forward, &backward] {
        assert!(e.message().contains("checksum"), "{where_}: {e}");
    }
    read_range(
        "range from start",
        db.range(Some(third.as_slice()), None).unwrap(),
        &live_keys(KEYS / 3, false, None),
    );
    read_range(
        "range_rev to stop",
        db.range_rev(None, Some(two_thirds.as_slice())).unwrap(),
        &live_keys(2 * KEYS / 3 - 1, true, None),
    );
    // both bounds: the binding's own bound checks must not make the error
    // the end of the range
    read_range(
        "bounded range",
        db.range(Some(lo_key.as_slice()), Some(hi_key.as_slice())).unwrap(),
        &live_keys(lo, false, Some(hi)),
    );
    read_range(
        "bounded range_rev",
        db.range_rev(Some(lo_key.as_slice()), Some(hi_key.as_slice())).unwrap(),
        &live_keys(hi - 1, true, Some(lo - 1)),
    );
    let snap = db.snapshot().unwrap();
    read_range("snapshot range", snap.range(None, None).unwrap(), &live_keys(0, false, None));
    read_range("snapshot range_rev", snap.range_rev(None, None).unwrap(), &live_keys(KEYS - 1, true, None));
    drop(snap);

    // the cursor: position, then read and move while valid, with `?`
    type Position = fn(&mut Iter) -> ravel::Result<()>;
    let cursors: [(&str, Position, bool, Vec<usize>); 4] = [
        ("seek_to_first/next", |it| it.seek_to_first(), false, live_keys(0, false, None)),
        ("seek_to_last/prev", |it| it.seek_to_last(), true, live_keys(KEYS - 1, true, None)),
        ("seek/next", |it| it.seek(key(KEYS / 3)), false, live_keys(KEYS / 3, false, None)),
        (
            "seek_for_prev/prev",
            |it| it.seek_for_prev(key(2 * KEYS / 3)),
            true,
            live_keys(2 * KEYS / 3, true, None),
        ),
    ];
    for (name, position, reverse, want) in cursors {
        let what = format!("{where_}, {name}");
        let mut it = db.iter().unwrap();
        let mut got = Vec::new();
        let mut scan = |it: &mut Iter| -> ravel::Result<()> {
            position(it)?;
            while it.valid() {
                got.push((it.key().unwrap().to_vec(), it.value().unwrap().to_vec()));
                if reverse {
                    it.prev()?;
                } else {
                    it.next()?;
                }
            }
            Ok(())
        };
        let error = scan(&mut it).expect_err(&format!("{what}: the loop ended without an error"));
        assert_eq!(error.code(), Code::Corrupt, "{what}: {error}");
        check_entries(&what, &got, &want);
        expect_stopped(&what, &mut it, &error);
        // a range made of the stopped cursor yields its error, then ends
        let items: Vec<_> = it.range(None, None).collect();
        assert_eq!(items.len(), 1, "{what}: a range over the stopped cursor: {items:?}");
        assert_eq!(items[0].as_ref().unwrap_err(), &error);
    }
    db.close().unwrap();
}

#[test]
fn damaged_level_0_file_ends_every_loop_with_its_error() {
    ranges_end_with_the_error(false);
}

#[test]
fn damaged_last_level_file_ends_every_loop_with_its_error() {
    ranges_end_with_the_error(true);
}
