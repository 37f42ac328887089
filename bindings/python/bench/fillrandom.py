"""fillrandom.py -- throughput of the Python binding, db_bench style, to
set beside C's `ravel-bench --benchmarks=fillrandom --num=1000000
--batch_size=100`:

  fillrandom  NUM writes of random keys (uniform in [0, NUM), as db_bench
              picks them), 16-byte keys (8 bytes big-endian, then '0'
              padding) and 100-byte values, applied in Batch objects of
              BATCH_SIZE puts with DB.write, default options;
  readrandom  READS gets of uniform random keys in [0, NUM) (about 63%
              are found after fillrandom, as in db_bench).

Keys and values are made before the clock starts, so the figures are the
cost of the binding and the library, not of building bytes in Python.
--plyvel runs the same through plyvel (LevelDB) for comparison.  Usage:
    python bench/fillrandom.py [--num N] [--batch_size B] [--reads R]
                               [--benchmarks fillrandom,readrandom]
                               [--db DIR] [--plyvel]
"""
import argparse
import os
import random
import shutil
import sys
import tempfile
import time


def make_keys(count, key_range, seed):
    rng = random.Random(seed)
    pad = b"0" * 8
    return [rng.randrange(key_range).to_bytes(8, "big") + pad
            for _ in range(count)]


def make_values(size=100, pool=1 << 20, seed=301):
    """db_bench-like values: windows of a 1 MiB buffer of printable text."""
    rng = random.Random(seed)
    data = bytes(rng.randrange(32, 127) for _ in range(pool))
    return [data[i:i + size] for i in range(0, pool - size, size)]


def report(name, ops, seconds, nbytes):
    print("%-11s : %9.3f micros/op; %10.0f ops/s; %6.1f MB/s (%d ops in "
          "%.2f s)" % (name, seconds * 1e6 / ops, ops / seconds,
                       nbytes / seconds / 1048576, ops, seconds))


def fillrandom_ravel(db, keys, values, batch_size):
    import ravel
    batch = ravel.Batch()
    put, clear, write = batch.put, batch.clear, db.write
    nv = len(values)
    t0 = time.perf_counter()
    for start in range(0, len(keys), batch_size):
        clear()
        for i in range(start, min(start + batch_size, len(keys))):
            put(keys[i], values[i % nv])
        write(batch)
    return time.perf_counter() - t0


def fillrandom_plyvel(db, keys, values, batch_size):
    nv = len(values)
    t0 = time.perf_counter()
    for start in range(0, len(keys), batch_size):
        wb = db.write_batch()
        put = wb.put
        for i in range(start, min(start + batch_size, len(keys))):
            put(keys[i], values[i % nv])
        wb.write()
    return time.perf_counter() - t0


def readrandom(db, keys):
    get = db.get
    found = 0
    t0 = time.perf_counter()
    for k in keys:
        if get(k) is not None:
            found += 1
    return time.perf_counter() - t0, found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--batch_size", type=int, default=100)
    ap.add_argument("--reads", type=int, default=None,
                    help="gets in readrandom (default: --num)")
    ap.add_argument("--benchmarks", default="fillrandom,readrandom")
    ap.add_argument("--db", default=None,
                    help="database directory (default: a temporary one, "
                         "removed afterwards)")
    ap.add_argument("--plyvel", action="store_true",
                    help="run through plyvel (LevelDB) instead")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    benchmarks = args.benchmarks.split(",")
    reads = args.num if args.reads is None else args.reads

    tmp = None
    path = args.db
    if path is None:
        tmp = tempfile.mkdtemp(prefix="ravel-fillrandom-")
        path = os.path.join(tmp, "db")
    if args.plyvel:
        import plyvel
        db = plyvel.DB(path, create_if_missing=True)
        engine = "plyvel %s (LevelDB %s)" % (plyvel.__version__,
                                             plyvel.__leveldb_version__)
    else:
        import ravel
        db = ravel.open(path, create_if_missing=True)
        engine = "ravel-kv %s (libravel %s)" % (ravel.__version__,
                                                ravel.lib_version)
    print("# %s, Python %s" % (engine, sys.version.split()[0]))
    print("# keys 16 bytes, values 100 bytes, num %d, batch_size %d"
          % (args.num, args.batch_size))
    try:
        if "fillrandom" in benchmarks:
            keys = make_keys(args.num, args.num, args.seed)
            values = make_values()
            fill = fillrandom_plyvel if args.plyvel else fillrandom_ravel
            secs = fill(db, keys, values, args.batch_size)
            report("fillrandom", args.num, secs, args.num * 116)
            del keys
        if "readrandom" in benchmarks:
            keys = make_keys(reads, args.num, args.seed + 1)
            secs, found = readrandom(db, keys)
            report("readrandom", reads, secs, found * 116)
            print("# readrandom found %d of %d" % (found, reads))
    finally:
        db.close()
        if tmp:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
