//! fillrandom / readrandom through the Rust binding, for comparison with
//! the C library's own `ravel-bench --benchmarks=fillrandom,readrandom`.
//!
//! The workload copies ravel-bench's (db_bench's): N random keys drawn
//! with splitmix64 (with repeats, from 0..N), 16 bytes each (the integer
//! big-endian in 8 bytes, then '0' padding), 100-byte values from
//! db_bench's RandomGenerator (compression ratio 0.5), written in batches
//! of --batch_size with Db::write and default options (create_if_missing
//! aside).  readrandom then reads N random keys with Db::get_into into one
//! buffer, as ravel-bench does with ravel_get_into.  One thread.
//!
//! Usage (from bindings/rust):
//!   cargo run --release -p ravel-kv-bench -- [--num=1000000] [--batch_size=100]
//!       [--benchmarks=fillrandom,readrandom] [--db=DIR] [--seed=N]

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ravel::{Batch, Db, Options};

const KEY_SIZE: usize = 16;
const VALUE_SIZE: usize = 100;

struct Flags {
    num: u64,
    batch_size: u64,
    benchmarks: String,
    db: std::path::PathBuf,
    seed: u64,
}

fn parse_flags() -> Flags {
    let mut flags = Flags {
        num: 1_000_000,
        batch_size: 100,
        benchmarks: "fillrandom,readrandom".to_string(),
        db: std::env::temp_dir().join("ravel-rs-bench"),
        seed: 0,
    };
    for arg in std::env::args().skip(1) {
        let (name, value) = arg
            .strip_prefix("--")
            .and_then(|a| a.split_once('='))
            .unwrap_or_else(|| usage(&format!("bad argument {arg:?}")));
        let number = || value.parse::<u64>().unwrap_or_else(|_| usage(&format!("--{name}: not a number")));
        match name {
            "num" => flags.num = number(),
            "batch_size" => flags.batch_size = number().max(1),
            "benchmarks" => flags.benchmarks = value.to_string(),
            "db" => flags.db = value.into(),
            "seed" => flags.seed = number(),
            _ => usage(&format!("unknown flag --{name}")),
        }
    }
    if flags.seed == 0 {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        flags.seed = now.as_micros() as u64;
        println!("Set seed to {} because --seed was 0", flags.seed);
    }
    flags
}

fn usage(problem: &str) -> ! {
    eprintln!("fillrandom: {problem}");
    eprintln!("usage: fillrandom [--num=N] [--batch_size=N] [--benchmarks=fillrandom,readrandom] [--db=DIR] [--seed=N]");
    std::process::exit(2)
}

/// splitmix64, ravel-bench's key generator.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// db_bench's GenerateKeyFromInt: big-endian V, then '0' padding.
fn key_from_int(v: u64, key: &mut [u8; KEY_SIZE]) {
    key[..8].copy_from_slice(&v.to_be_bytes());
    key[8..].fill(b'0');
}

/// db_bench's RandomGenerator data: 100-byte pieces, each 50 random
/// printable bytes (LevelDB's Random(301)) repeated, 1 MiB in all.
fn value_data() -> Vec<u8> {
    let mut seed: u32 = 301;
    let mut lehmer = || {
        const M: u32 = 2_147_483_647;
        let product = u64::from(seed) * 16807;
        let mut s = ((product >> 31) + (product & u64::from(M))) as u32;
        if s > M {
            s -= M;
        }
        seed = s;
        s
    };
    let raw = 50;
    let mut data = Vec::with_capacity(1 << 20);
    while data.len() < 1 << 20 {
        let mut piece = [0u8; 100];
        for b in piece.iter_mut().take(raw) {
            *b = b' ' + (lehmer() % 95) as u8;
        }
        for i in raw..100 {
            piece[i] = piece[i % raw];
        }
        data.extend_from_slice(&piece);
    }
    data
}

fn report(name: &str, ops: u64, seconds: f64, bytes: u64, extra: &str) {
    println!(
        "{name:<12} : {:>11.3} micros/op {} ops/sec {seconds:.3} seconds {ops} operations; {:6.1} MB/s{extra}",
        seconds * 1e6 / ops as f64,
        (ops as f64 / seconds) as u64,
        bytes as f64 / 1048576.0 / seconds
    );
}

fn fillrandom(db: &Db, flags: &Flags) -> ravel::Result<()> {
    let values = value_data();
    let mut rng = flags.seed + 1;
    let mut key = [0u8; KEY_SIZE];
    let mut vpos = 0usize;
    let mut batch = Batch::new()?;
    let mut done = 0u64;
    let start = Instant::now();
    while done < flags.num {
        batch.clear()?;
        for _ in 0..flags.batch_size {
            key_from_int(next_random(&mut rng) % flags.num, &mut key);
            if vpos + VALUE_SIZE > values.len() {
                vpos = 0;
            }
            batch.put(key, &values[vpos..vpos + VALUE_SIZE])?;
            vpos += VALUE_SIZE;
        }
        db.write(&batch)?;
        done += flags.batch_size;
    }
    let seconds = start.elapsed().as_secs_f64();
    report("fillrandom", done, seconds, done * (KEY_SIZE + VALUE_SIZE) as u64, "");
    Ok(())
}

fn readrandom(db: &Db, flags: &Flags) -> ravel::Result<()> {
    let mut rng = flags.seed + 2;
    let mut key = [0u8; KEY_SIZE];
    let mut buf = vec![0u8; 4096];
    let (mut found, mut bytes) = (0u64, 0u64);
    let start = Instant::now();
    for _ in 0..flags.num {
        key_from_int(next_random(&mut rng) % flags.num, &mut key);
        if let Some(len) = db.get_into(key, &mut buf)? {
            assert!(len <= buf.len(), "values are {VALUE_SIZE} bytes");
            found += 1;
            bytes += (KEY_SIZE + len) as u64;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    report("readrandom", flags.num, seconds, bytes, &format!(" ({found} of {} found)", flags.num));
    Ok(())
}

fn main() -> ravel::Result<()> {
    let flags = parse_flags();
    println!(
        "ravel {} through the Rust binding: keys {KEY_SIZE} bytes, values {VALUE_SIZE} bytes, \
         num {}, batch_size {}, db {}",
        ravel::version(),
        flags.num,
        flags.batch_size,
        flags.db.display()
    );
    let _ = std::fs::remove_dir_all(&flags.db);
    let db = Db::open(&flags.db, &Options::new()?.with("create_if_missing", true)?)?;
    for name in flags.benchmarks.split(',') {
        match name {
            "fillrandom" => fillrandom(&db, &flags)?,
            "readrandom" => readrandom(&db, &flags)?,
            "" => {}
            other => usage(&format!("unknown benchmark {other:?}")),
        }
    }
    db.close()?;
    // the data is only a means: leave no 100 MB directory behind
    let _ = std::fs::remove_dir_all(&flags.db);
    Ok(())
}
