"""ops.py -- what issue 22's calls cost through the Python binding (one
run, indicative):

  feed       a follower's rate: NUM batches of BATCH_SIZE puts (16-byte
             keys, 100-byte values) are written, then read back through
             DB.updates_since and applied to a replica with DB.write;
             batches/s read alone and read + applied
  follower   the writer's rate with and without a follower thread
             reading the feed at the same time (the cost of a continuous
             follower as seen from Python: the GIL is released in both);
             each twice, alternated, the better kept
  backup     a one-file backup of the database through a pipe to a
             child process that discards it (MB/s), and restore_backup
             from a file
  ingest     NUM*BATCH_SIZE sorted keys loaded by SstWriter + ingest
             against the same keys written in batches

Usage:  python bench/ops.py [--num N] [--batch_size B] [--dir DIR]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import ravel

VALUE = b"v" * 100


def key(i):
    return b"%016d" % i


def write_batches(db, num, batch_size, start=0):
    for n in range(num):
        with db.write_batch() as b:
            base = start + n * batch_size
            for i in range(base, base + batch_size):
                b.put(key(i), VALUE)


def rate(count, seconds):
    return count / seconds if seconds > 0 else float("inf")


def bench_feed(dirname, num, batch_size):
    with ravel.open(os.path.join(dirname, "feed-src"), create_if_missing=True,
                    wal_ttl_seconds=3600) as src, \
         ravel.open(os.path.join(dirname, "feed-dst"),
                    create_if_missing=True) as dst:
        write_batches(src, num, batch_size)
        t = time.perf_counter()
        n = sum(1 for _ in src.updates_since(0))
        read = time.perf_counter() - t
        t = time.perf_counter()
        for batch in src.updates_since(0):
            dst.write(batch)
        applied = time.perf_counter() - t
        assert n == num
        print("feed       : %10.0f batches/s read, %10.0f batches/s read and "
              "applied (%d batches of %d)" % (rate(n, read),
                                              rate(n, applied), n,
                                              batch_size))


def bench_follower(dirname, num, batch_size):
    results = {False: 0.0, True: 0.0}
    # alternated and repeated, the best of each kept: the first run of a
    # process is slower whichever it is
    for run, follow in enumerate((False, True, False, True)):
        path = os.path.join(dirname, "follow-%d" % run)
        with ravel.open(path, create_if_missing=True) as db:
            stop = threading.Event()
            seen = [0]

            def follower():
                with db.updates_since(0) as feed:
                    while not stop.is_set():
                        for _ in feed:
                            seen[0] += 1
                        time.sleep(0.001)
                    for _ in feed:
                        seen[0] += 1
            th = threading.Thread(target=follower) if follow else None
            if th:
                th.start()
            t = time.perf_counter()
            write_batches(db, num, batch_size)
            took = time.perf_counter() - t
            stop.set()
            if th:
                th.join()
                assert seen[0] == num, seen[0]
            results[follow] = max(results[follow], rate(num, took))
    print("follower   : %10.0f batches/s written alone, %10.0f with a "
          "follower thread (%.1f%%)" % (results[False], results[True],
                                         100.0 * (results[True] /
                                                  results[False] - 1)))


def bench_backup(dirname, num, batch_size):
    path = os.path.join(dirname, "backup-src")
    with ravel.open(path, create_if_missing=True) as db:
        write_batches(db, num, batch_size)
        db.flush()
        child = subprocess.Popen([sys.executable, "-c",
                                  "import sys; n = 0\n"
                                  "while True:\n"
                                  "    b = sys.stdin.buffer.read1(1 << 20)\n"
                                  "    if not b: break\n"
                                  "    n += len(b)\n"
                                  "print(n)"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        t = time.perf_counter()
        db.write_backup(child.stdin)
        child.stdin.close()
        size = int(child.stdout.read())
        child.wait()
        piped = time.perf_counter() - t
        db.write_backup(os.path.join(dirname, "one.backup"))
    t = time.perf_counter()
    ravel.restore_backup(os.path.join(dirname, "one.backup"),
                         os.path.join(dirname, "restored"))
    restored = time.perf_counter() - t
    mb = size / 1e6
    print("backup     : %10.1f MB/s through a pipe, %10.1f MB/s restored "
          "from a file (%.1f MB)" % (mb / piped, mb / restored, mb))


def bench_ingest(dirname, num, batch_size):
    total = num * batch_size
    sst = os.path.join(dirname, "load.sst")
    with ravel.open(os.path.join(dirname, "ingest"),
                    create_if_missing=True) as db:
        t = time.perf_counter()
        with ravel.SstWriter(sst) as w:
            for i in range(total):
                w.put(key(i), VALUE)
        db.ingest([sst], move=True)
        ingest = time.perf_counter() - t
    with ravel.open(os.path.join(dirname, "batches"),
                    create_if_missing=True) as db:
        t = time.perf_counter()
        write_batches(db, num, batch_size)
        db.flush()
        batches = time.perf_counter() - t
    print("ingest     : %10.0f keys/s by SstWriter + ingest, %10.0f keys/s "
          "by batches + flush (%.1fx)" % (rate(total, ingest),
                                          rate(total, batches),
                                          batches / ingest))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num", type=int, default=20000)
    ap.add_argument("--batch_size", type=int, default=10)
    ap.add_argument("--dir")
    args = ap.parse_args()
    dirname = args.dir or tempfile.mkdtemp(prefix="ravel-ops-bench-")
    try:
        print("ravel %s (Python binding), %d batches of %d puts, 16-byte "
              "keys, 100-byte values" % (ravel.lib_version, args.num,
                                         args.batch_size))
        bench_feed(dirname, args.num, args.batch_size)
        bench_follower(dirname, args.num, args.batch_size)
        bench_backup(dirname, args.num, args.batch_size)
        bench_ingest(dirname, args.num, args.batch_size)
    finally:
        if not args.dir:
            shutil.rmtree(dirname, ignore_errors=True)


if __name__ == "__main__":
    main()
