"""getsizes.py -- ns per read of db.get, a snapshot's get and a
transaction's get for values of 100, 4096 and 65536 bytes: 16-byte keys
(as many as 64 MiB of values takes, 10,000 at most), written and flushed,
then each call made --reads times cycling through them; printed as the
thread's CPU time per call (ns/op: the read runs on the calling thread
without the GIL; on a loaded machine wall time says more about the other
processes).  One thread.

    python bench/getsizes.py [--reads N] [--db DIR]
"""
import argparse
import shutil
import tempfile
import time

import ravel

SIZES = [100, 4096, 65536]


def timed(reads, keys, f):
    """CPU ns per call of F(key) over READS calls cycling through KEYS."""
    n = len(keys)
    start = time.thread_time_ns()
    for i in range(reads):
        f(keys[i % n])
    return (time.thread_time_ns() - start) / reads


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reads", type=int, default=200_000)
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    top = args.db or tempfile.mkdtemp(prefix="ravel-getsizes-")
    try:
        for size in SIZES:
            path = top + "/db%d" % size
            shutil.rmtree(path, ignore_errors=True)
            db = ravel.open(path, create_if_missing=True)
            keys = [b"%016d" % i for i in range(min(10_000, (64 << 20) // size))]
            value = b"v" * size
            for k in keys:
                db[k] = value
            db.flush()
            get = timed(args.reads, keys, db.get)
            with db.snapshot() as snap:
                snap_get = timed(args.reads, keys, snap.get)
            with db.transaction() as txn:
                txn_get = timed(args.reads, keys, txn.get)
                txn.rollback()
            db.close()
            shutil.rmtree(path, ignore_errors=True)
            print("value=%d get %.0f snapshot.get %.0f txn.get %.0f ns/op"
                  % (size, get, snap_get, txn_get))
    finally:
        if args.db is None:
            shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
