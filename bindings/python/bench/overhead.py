"""overhead.py -- per-call cost (ns/call) of get and put through each way
of calling ravel from Python, next to plyvel (LevelDB) on the same machine.

  get: an existing 16-byte key with a 100-byte value, in the memtable
  put: a 16-byte key and a 100-byte value, no sync (cycling over 1,000 keys)

Default options, except for one more ravel-kv row with LevelDB's memtable
size (write_buffer_size=4M), as puts cost more in a larger memtable.

Measured: ravel-kv (this binding, a C extension), the ctypes prototype,
the cffi prototypes (ABI and API mode, if cffi is installed), the same
calls in a C loop (the floor: what the library itself costs; built with
cffi) and plyvel (if installed: pip install plyvel).  Each figure is the
best of several rounds of a tight loop, the mechanisms taking turns in
each round; loop overhead is included (it is printed too), so the numbers
compare; they are not absolute.  Usage:
    python bench/overhead.py [--calls N] [--repeat R]
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

KEYS = [b"key%013d" % i for i in range(1000)]
VALUE = b"v" * 100


def best_ns(fn, calls, repeat):
    """The best time per call of fn(calls) over REPEAT runs."""
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn(calls)
        t = (time.perf_counter_ns() - t0) / calls
        best = t if best is None else min(best, t)
    return best


def bench_get(get):
    key = KEYS[500]
    def run(n):
        for _ in range(n):
            get(key)
    return run


def bench_put(put):
    keys = KEYS
    def run(n):
        for i in range(n):
            put(keys[i % 1000], VALUE)
    return run


def bench_loop():
    keys = KEYS
    def nothing(k, v=None):
        pass
    def run(n):
        for i in range(n):
            nothing(keys[i % 1000], VALUE)
    return run


def openers():
    """(name, open(path) -> db with get/put/close) for each mechanism."""
    import ravel
    yield "ravel-kv (C extension)", \
        lambda p: ravel.open(p, create_if_missing=True)
    # LevelDB flushes its memtable at 4 MiB, ravel at 64 MiB: the put loop
    # then inserts into a far larger skiplist.  The same memtable size:
    yield "ravel-kv, write_buffer_size=4M", \
        lambda p: ravel.open(p, create_if_missing=True,
                             write_buffer_size="4M")
    import proto_ctypes
    yield "ctypes prototype", proto_ctypes.DB
    try:
        import proto_cffi
    except ImportError:
        print("# cffi not installed: cffi prototypes skipped")
    else:
        yield "cffi ABI-mode prototype", proto_cffi.AbiDB
        yield "cffi API-mode prototype", proto_cffi.ApiDB
        yield "C loop, no Python (the floor)", proto_cffi.CLoop
    try:
        import plyvel
    except ImportError:
        print("# plyvel not installed (pip install plyvel): skipped")
    else:
        yield "plyvel %s (LevelDB %s)" % (plyvel.__version__,
                                          plyvel.__leveldb_version__), \
            lambda p: plyvel.DB(p, create_if_missing=True)


def runners(db):
    """(get, put) loops of n calls for DB."""
    if hasattr(db, "get_loop"):     # the C loop of proto_cffi.CLoop
        return (lambda n: db.get_loop(KEYS[500], n),
                lambda n: db.put_loop(KEYS, VALUE, n))
    return bench_get(db.get), bench_put(db.put)


def measure(dbs, calls, repeat):
    """{name: (get, put)}: the best ns/call of each over REPEAT rounds.
    Each round measures every mechanism in turn, so that a change of load
    on the machine hits them all alike."""
    best = {name: [float("inf"), float("inf")] for name in dbs}
    for _ in range(repeat):
        for name, db in dbs.items():
            best[name][0] = min(best[name][0],
                                best_ns(runners(db)[0], calls, 1))
        for name, db in dbs.items():
            best[name][1] = min(best[name][1],
                                best_ns(runners(db)[1], calls, 1))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ravel-overhead-")
    dbs = {}
    try:
        for i, (name, opener) in enumerate(openers()):
            db = opener(os.path.join(tmp, "db%d" % i))
            for k in KEYS:
                db.put(k, VALUE)
            assert db.get(KEYS[500]) == VALUE
            dbs[name] = db
        best = measure(dbs, args.calls, args.repeat)
        loop = best_ns(bench_loop(), args.calls, args.repeat)
    finally:
        for db in dbs.values():
            db.close()
        shutil.rmtree(tmp)
    print("%-34s %12s %12s" % ("mechanism", "get ns/call", "put ns/call"))
    for name, (get, put) in best.items():
        print("%-34s %12.0f %12.0f" % (name, get, put))
    print("%-34s %12.0f %12.0f" % ("(empty Python call, for scale)", loop,
                                    loop))


if __name__ == "__main__":
    main()
