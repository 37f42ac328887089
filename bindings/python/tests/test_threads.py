"""test_threads.py -- several Python threads using one database at once
(checked invariants, no timing assertions), a thread that makes progress
while another is blocked inside a ravel call, and close racing with
calls in other threads."""
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import ravel

WRITERS = 3
ROUNDS = 300


def run_threads(targets):
    """Runs the callables in threads; re-raises the first failure."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:       # reported to the test
                errors.append(e)
        return run
    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_concurrent_writers_and_readers(db):
    stop = threading.Event()

    def writer(w):
        def run():
            for i in range(ROUNDS):
                with db.write_batch() as b:
                    b.put(b"w%d-left" % w, b"%d" % i)
                    b.put(b"w%d-right" % w, b"%d" % i)
                db.put(b"w%d-solo-%04d" % (w, i), b"x", sync=(i % 50 == 0))
        return run

    def snapshot_reader():
        while not stop.is_set():
            with db.snapshot() as s:
                for w in range(WRITERS):
                    # a batch is seen whole or not at all
                    assert s.get(b"w%d-left" % w) == s.get(b"w%d-right" % w)

    def range_reader():
        while not stop.is_set():
            keys = list(db.keys())
            assert keys == sorted(keys)
            for w in range(WRITERS):
                solo = list(db.keys(b"w%d-solo-" % w, b"w%d-solo." % w))
                # writes of one thread appear in the order it made them
                assert solo == [b"w%d-solo-%04d" % (w, i)
                                for i in range(len(solo))]

    def writers_then_stop():
        try:
            run_threads([writer(w) for w in range(WRITERS)])
        finally:
            stop.set()

    run_threads([writers_then_stop, snapshot_reader, range_reader])
    for w in range(WRITERS):
        assert db[b"w%d-left" % w] == b"%d" % (ROUNDS - 1)
        assert len(list(db.keys(b"w%d-solo-" % w, b"w%d-solo." % w))) == \
            ROUNDS


def test_other_thread_runs_while_one_is_blocked_in_ravel(tmp_path):
    # CURRENT is replaced by a FIFO, so ravel_open blocks reading it until
    # someone writes it -- and that someone is the main Python thread,
    # which could never run if the opening thread held the GIL.  Run in a
    # child process so that a regression hangs the child, not pytest.
    script = textwrap.dedent("""
        import os, sys, threading, ravel
        path = sys.argv[1]
        with ravel.open(path, create_if_missing=True) as db:
            db[b"a"] = b"1"
        current = open(os.path.join(path, "CURRENT"), "rb").read()
        os.remove(os.path.join(path, "CURRENT"))
        os.mkfifo(os.path.join(path, "CURRENT"))
        result = []
        def opener():
            result.append(ravel.open(path))
        t = threading.Thread(target=opener)
        t.start()
        # blocks until the opener, inside ravel_open, opens the FIFO
        with open(os.path.join(path, "CURRENT"), "wb") as f:
            f.write(current)
        t.join()
        print(result[0][b"a"].decode())
        result[0].close()
    """)
    done = subprocess.run([sys.executable, "-c", script,
                           str(tmp_path / "db")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def test_close_while_other_threads_work(path):
    db = ravel.open(path, create_if_missing=True)
    for i in range(100):
        db[b"k%03d" % i] = b"v"
    started = threading.Barrier(4)

    def worker(kind):
        def run():
            started.wait()
            n = 0
            try:
                while True:
                    n += 1
                    if kind == 0:
                        db.put(b"k%03d" % (n % 100), b"w")
                    elif kind == 1:
                        db.get(b"k%03d" % (n % 100))
                    else:
                        for _ in db.items(b"k050"):
                            pass
            except ravel.InvalidArgumentError as e:
                assert "clos" in str(e)     # closed or closing
        return run

    def closer():
        started.wait()
        db.get(b"k000")
        db.close()

    run_threads([worker(0), worker(1), worker(2), closer])
    assert db.closed
    ravel.open(path).close()


def test_iterator_shared_by_threads_never_crashes(db):
    for i in range(200):
        db[b"k%03d" % i] = b"v"
    it = db.iterator()
    it.seek_to_first()
    refused = []

    def walker():
        for _ in range(2000):
            try:
                if it.valid():
                    it.next()
                else:
                    it.seek_to_first()
            except ravel.InvalidArgumentError as e:
                # "in use by another thread", or a next() that lost a
                # race with the other thread's step off the end
                refused.append(str(e))

    run_threads([walker, walker])
    for msg in refused:
        assert "another thread" in msg or "not positioned" in msg
    it.close()
