"""test_ops.py -- operating a live database (issue 22) from Python: a
reader in another process beside a writer and its catch-up, checkpoints,
incremental and one-file backups (through a pipe into another process),
the change feed applied into a second database by a follower under
concurrent writers, ExpiredError, batches as bytes, bulk ingest, repair."""
import glob
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import ravel


def fill(db, n, prefix=b"k", value=b"v"):
    for i in range(n):
        db.put(b"%s%05d" % (prefix, i), b"%s%d" % (value, i))


# ----------------------------------------------------------- readers

READER = textwrap.dedent("""
    import sys, ravel
    db = ravel.open(sys.argv[1], read_only=True)
    print(db.get(b"before"), db.get(b"after"), flush=True)
    sys.stdin.readline()                  # the writer wrote "after"
    print(db.get(b"after"), flush=True)   # not yet caught up
    db.catch_up()
    print(db.get(b"after"), flush=True)
    lag = dict(l.split("=") for l in
               db.property("ravel.reader-lag").split())
    print(int(lag["sequence"]) >= 2, flush=True)
    try:
        db.put(b"x", b"y")
    except ravel.ReadOnlyError:
        print("read-only", flush=True)
    db.close()
""")


def test_reader_in_another_process_catches_up(tmp_path):
    path = str(tmp_path / "db")
    with ravel.open(path, create_if_missing=True) as db:
        db.put(b"before", b"1", sync=True)
        child = subprocess.Popen([sys.executable, "-c", READER, path],
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().split() == ["b'1'", "None"]
            db.put(b"after", b"2", sync=True)
            child.stdin.write("go\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "None"
            assert child.stdout.readline().strip() == "b'2'"
            assert child.stdout.readline().strip() == "True"
            assert child.stdout.readline().strip() == "read-only"
        finally:
            child.stdin.close()
            assert child.wait(timeout=120) == 0


def test_second_writer_is_locked_but_a_reader_opens(tmp_path):
    path = str(tmp_path / "db")
    with ravel.open(path, create_if_missing=True) as db:
        db.put(b"k", b"v")
        with pytest.raises(ravel.LockedError):
            ravel.open(path)
        with ravel.open(path, read_only=True) as reader:
            assert reader[b"k"] == b"v"
            db.put(b"k2", b"v2")
            reader.catch_up()
            assert reader[b"k2"] == b"v2"
        db.catch_up()   # a writer: nothing to do


WRITER = textwrap.dedent("""
    import sys, ravel
    db = ravel.open(sys.argv[1], create_if_missing=True,
                    write_buffer_size="64K")
    i = 0
    while True:
        db.put(b"n%08d" % i, b"x" * 100, sync=True)
        print(i, flush=True)              # acknowledged
        i += 1
""")


def test_writer_killed_readers_serve_and_one_becomes_the_writer(tmp_path):
    import signal
    path = str(tmp_path / "db")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path],
                              stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(2000):             # flushes happen meanwhile
            acknowledged = int(writer.stdout.readline())
        reader = ravel.open(path, read_only=True)
        with pytest.raises(ravel.LockedError):
            ravel.open(path)              # the writer holds the LOCK
        snap = reader.snapshot()
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    for line in writer.stdout:            # what it acknowledged before
        acknowledged = int(line)
    writer.stdout.close()
    # the reader keeps serving what it had
    assert reader.get(b"n%08d" % 0) == b"x" * 100
    reader.catch_up()
    assert reader.get(b"n%08d" % acknowledged) == b"x" * 100
    # the same process opens it read-write, the reader still open
    with ravel.open(path) as db:
        assert db.get(b"n%08d" % acknowledged) == b"x" * 100
        db.put(b"after", b"the writer")
        assert snap.get(b"after") is None     # a snapshot keeps its state
        reader.catch_up()
        assert reader.get(b"after") == b"the writer"
        snap.release()
        reader.close()


def test_reader_catches_up_by_itself(tmp_path):
    path = str(tmp_path / "db")
    with ravel.open(path, create_if_missing=True) as db, \
         ravel.open(path, read_only=True, catch_up_interval_ms=5) as reader:
        db.put(b"k", b"v")
        deadline = time.monotonic() + 120     # a bound, not a timing claim
        while reader.get(b"k") is None:
            assert time.monotonic() < deadline, "the reader never caught up"
            time.sleep(0.005)
        lag = dict(line.split("=") for line in
                   reader.property("ravel.reader-lag").split())
        assert lag["interval_ms"] == "5" and int(lag["catch_ups"]) >= 1


# -------------------------------------------------------- checkpoints

def test_checkpoint_opens_with_the_state(tmp_path):
    with ravel.open(str(tmp_path / "db"), create_if_missing=True,
                    write_buffer_size="64K") as db:
        fill(db, 2000)
        db.flush()
        db.put(b"tail", b"in the WAL")
        db.checkpoint(tmp_path / "cp")
        db.put(b"later", b"not in it")
        with pytest.raises(ravel.InvalidArgumentError):
            db.checkpoint(tmp_path / "cp")     # exists
    with ravel.open(str(tmp_path / "cp")) as cp:
        assert cp[b"tail"] == b"in the WAL"
        assert cp.get(b"later") is None
        assert cp[b"k01999"] == b"v1999"
        assert len(list(cp.keys())) == 2001


# ------------------------------------------------------------ backups

def test_incremental_backups_round_trip(tmp_path):
    root = tmp_path / "backups"
    with ravel.open(str(tmp_path / "db"), create_if_missing=True) as db:
        fill(db, 1000)
        db.flush()
        first = db.backup(root)
        db.put(b"k00000", b"changed")
        second = db.backup(str(root))
    assert (first, second) == (1, 2)
    assert ravel.backup_list(root) == [1, 2]
    info = ravel.backup_info(root, 2)
    assert set(info) == {"time", "sequence", "bytes", "copied", "files"}
    assert info["copied"] < info["bytes"]     # the table files are shared
    assert info["sequence"] == 1001
    ravel.backup_verify(root, 1)
    ravel.backup_restore(root, 1, tmp_path / "r1")
    ravel.backup_restore(root, 0, tmp_path / "newest")
    with ravel.open(str(tmp_path / "r1")) as r1, \
         ravel.open(str(tmp_path / "newest")) as r2:
        assert r1[b"k00000"] == b"v0"
        assert r2[b"k00000"] == b"changed"
    ravel.backup_purge(root, 1)
    assert ravel.backup_list(root) == [2]
    with pytest.raises(ravel.NotFoundError):
        ravel.backup_info(root, 1)
    with pytest.raises(ravel.InvalidArgumentError):
        ravel.backup_purge(root, 0)


BACKUP_FROM_READER = textwrap.dedent("""
    import sys, ravel
    with ravel.open(sys.argv[1], read_only=True) as reader:
        reader.checkpoint(sys.argv[2])
        print(reader.backup(sys.argv[3]), file=sys.stderr, flush=True)
        reader.write_backup(sys.stdout.buffer)   # ravel writes the fd
""")


def test_backups_from_a_reader_in_another_process(tmp_path):
    path = str(tmp_path / "db")
    with ravel.open(path, create_if_missing=True,
                    write_buffer_size="64K") as db:
        fill(db, 3000)                     # table files and a memtable
        db.put(b"last", b"acknowledged", sync=True)
        child = subprocess.Popen(
            [sys.executable, "-c", BACKUP_FROM_READER, path,
             str(tmp_path / "cp"), str(tmp_path / "root")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ravel.restore_backup(child.stdout, tmp_path / "piped")
        assert child.wait(timeout=120) == 0
        assert child.stderr.read().strip() == b"1"
        db.put(b"after", b"not in them")
    ravel.backup_restore(tmp_path / "root", 1, tmp_path / "restored")
    for copy in ("cp", "restored", "piped"):
        with ravel.open(str(tmp_path / copy)) as c:
            assert c[b"last"] == b"acknowledged", copy
            assert c.get(b"after") is None, copy
            assert len(list(c.keys())) == 3001, copy


def test_damaged_backup_is_refused(tmp_path):
    root = tmp_path / "backups"
    with ravel.open(str(tmp_path / "db"), create_if_missing=True) as db:
        fill(db, 500)
        db.flush()
        db.backup(root)
    tables = [p for p in glob.glob(str(root / "**" / "*"), recursive=True)
              if p.endswith(".sst")]
    assert tables
    with open(tables[0], "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ravel.CorruptionError):
        ravel.backup_verify(root, 1)
    with pytest.raises(ravel.CorruptionError):
        ravel.backup_restore(root, 1, tmp_path / "r")
    assert not os.path.exists(tmp_path / "r")


RESTORE_FROM_STDIN = textwrap.dedent("""
    import sys, ravel
    ravel.restore_backup(sys.stdin.fileno(), sys.argv[1])
    with ravel.open(sys.argv[1]) as db:
        print(len(list(db.keys())), db[b"k00007"].decode())
""")


def test_one_file_backup_through_a_pipe_and_a_file(tmp_path):
    with ravel.open(str(tmp_path / "db"), create_if_missing=True) as db:
        fill(db, 300)
        child = subprocess.Popen(
            [sys.executable, "-c", RESTORE_FROM_STDIN,
             str(tmp_path / "piped")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=False)
        db.write_backup(child.stdin)      # a file object: its fileno()
        child.stdin.close()
        out = child.stdout.read()
        assert child.wait(timeout=120) == 0
        assert out.split() == [b"300", b"v7"]
        db.write_backup(tmp_path / "db.backup")
    ravel.restore_backup(tmp_path / "db.backup", tmp_path / "from-file")
    with ravel.open(str(tmp_path / "from-file")) as db:
        assert db[b"k00299"] == b"v299"
    # cut short: refused, no directory left
    data = open(tmp_path / "db.backup", "rb").read()
    with open(tmp_path / "short.backup", "wb") as f:
        f.write(data[:len(data) // 2])
    with pytest.raises(ravel.CorruptionError):
        ravel.restore_backup(str(tmp_path / "short.backup"),
                             tmp_path / "bad")
    assert not os.path.exists(tmp_path / "bad")


# -------------------------------------------------------- change feed

def test_batch_operations_and_bytes():
    b = ravel.Batch()
    b.put(b"a", b"1")
    b.delete(b"b")
    b.put(b"c", b"")
    assert list(b) == [("put", b"a", b"1"), ("delete", b"b", None),
                       ("put", b"c", b"")]
    assert b.sequence == 0
    copy = ravel.Batch.from_bytes(bytes(b))
    assert list(copy) == list(b) and len(copy) == 3
    with pytest.raises(ravel.CorruptionError):
        ravel.Batch.from_bytes(bytes(b)[:-1])


def test_follower_replicates_under_concurrent_writers(tmp_path):
    writers, per_writer = 4, 300
    with ravel.open(str(tmp_path / "src"), create_if_missing=True,
                    write_buffer_size="64K") as src, \
         ravel.open(str(tmp_path / "dst"), create_if_missing=True) as dst:
        def write(w):
            for i in range(per_writer):
                with src.write_batch() as b:
                    b.put(b"w%d-%04d" % (w, i), b"%d" % i)
                    if i % 3 == 0:
                        b.delete(b"w%d-%04d" % (w, i // 2))
        threads = [threading.Thread(target=write, args=(w,))
                   for w in range(writers)]
        for t in threads:
            t.start()
        applied, expected_seq = 0, None
        with src.updates_since(0) as feed:
            done = False
            while not done:
                # the writers' state before this pass: once they had all
                # finished, this pass reads the rest
                done = not any(t.is_alive() for t in threads)
                for batch in feed:
                    if expected_seq is not None:
                        assert batch.sequence == expected_seq
                    expected_seq = batch.sequence + len(batch)
                    dst.write(batch)
                    applied += 1
            last = feed.last_sequence
        for t in threads:
            t.join()
        assert applied == writers * per_writer
        assert last == expected_seq - 1
        assert list(src.items()) == list(dst.items())


def test_resume_from_every_sequence(tmp_path):
    with ravel.open(str(tmp_path / "db"), create_if_missing=True) as db:
        for i in range(20):
            with db.write_batch() as b:
                b.put(b"a%d" % i, b"1")
                b.put(b"b%d" % i, b"2")
        for seq in range(1, 41):
            with db.updates_since(seq) as feed:
                first = next(feed)
                # the batch holding seq is shown whole
                assert first.sequence <= seq < first.sequence + 2
                rest = list(feed)
                assert len(rest) == 20 - (seq + 1) // 2
                assert feed.last_sequence == 40


def test_expired_sequence_raises_expired_error(tmp_path):
    with ravel.open(str(tmp_path / "db"), create_if_missing=True) as db:
        fill(db, 100)
        db.flush()               # the WAL holding 1..100 is deleted
        db.put(b"after", b"x")
        with pytest.raises(ravel.ExpiredError) as e:
            db.updates_since(1)
        assert e.value.code == ravel.EXPIRED
        assert isinstance(e.value, ravel.Error)
        assert [b.sequence for b in db.updates_since(101)] == [101]


def test_retention_keeps_the_feed_after_a_flush(tmp_path):
    with ravel.open(str(tmp_path / "db"), create_if_missing=True,
                    wal_ttl_seconds=3600) as db:
        fill(db, 100)
        db.flush()
        assert len(list(db.updates_since(1))) == 100


def test_feed_needs_closing_before_its_database(tmp_path):
    db = ravel.open(str(tmp_path / "db"), create_if_missing=True)
    db.put(b"k", b"v")
    feed = db.updates_since()
    db.close()           # releases the feed first
    assert feed.closed
    with pytest.raises(ravel.InvalidArgumentError):
        next(feed)


# -------------------------------------------------------- bulk ingest

def test_sst_writer_and_ingest(tmp_path):
    sst = str(tmp_path / "load.sst")
    with ravel.SstWriter(sst) as w:
        for i in range(1000):
            w.put(b"i%05d" % i, b"ingested %d" % i)
        w.delete(b"z-gone")
    assert w.finished
    with ravel.open(str(tmp_path / "db"), create_if_missing=True) as db:
        db.put(b"i00005", b"old")
        db.put(b"z-gone", b"old")
        db.ingest([sst], move=True)
        assert not os.path.exists(sst)
        assert db[b"i00005"] == b"ingested 5"
        assert db.get(b"z-gone") is None
        assert len(list(db.keys(prefix=b"i"))) == 1000
        with pytest.raises(ravel.InvalidArgumentError):
            db.ingest([])
        with pytest.raises(ravel.NotFoundError):
            db.ingest([str(tmp_path / "missing.sst")])


def test_sst_writer_refuses_unsorted_keys_and_removes_on_error(tmp_path):
    sst = str(tmp_path / "bad.sst")
    with pytest.raises(ravel.InvalidArgumentError):
        with ravel.SstWriter(sst, block_size=4096) as w:
            w.put(b"b", b"1")
            w.put(b"a", b"2")
    assert not os.path.exists(sst)
    with pytest.raises(ravel.InvalidArgumentError):
        ravel.SstWriter(sst, no_such_option=1)


# -------------------------------------------------------------- repair

def test_repair_salvages_a_lost_manifest(tmp_path):
    path = str(tmp_path / "db")
    with ravel.open(path, create_if_missing=True) as db:
        fill(db, 500)
        db.flush()
        db.put(b"in-wal", b"yes", sync=True)
    for name in os.listdir(path):
        if name.startswith("MANIFEST-") or name == "CURRENT":
            os.remove(os.path.join(path, name))
    lines = []
    report = ravel.repair(path, callback=lambda kind, line:
                          lines.append((kind, line)))
    assert report
    assert {k for k, _ in lines} <= {"note", "kept", "lost", "warn"}
    assert any(k == "kept" for k, _ in lines)
    assert glob.glob(os.path.join(path, "lost-repair-*"))
    with ravel.open(path) as db:
        assert db[b"k00499"] == b"v499"
        assert db[b"in-wal"] == b"yes"
    with ravel.open(path):
        with pytest.raises(ravel.LockedError):
            ravel.repair(path)


def test_repair_callback_exception_is_raised(tmp_path):
    path = str(tmp_path / "db")
    with ravel.open(path, create_if_missing=True) as db:
        db.put(b"k", b"v")

    def boom(kind, line):
        raise RuntimeError("from the callback")
    with pytest.raises(RuntimeError):
        ravel.repair(path, callback=boom)
