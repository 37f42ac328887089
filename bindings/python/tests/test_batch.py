"""test_batch.py -- Batch (put, delete, clear, len), DB.write, the
write_batch() context manager, and atomicity."""
import pytest

import ravel


def test_batch_operations(db):
    b = ravel.Batch()
    assert len(b) == 0
    b.put(b"a", b"1")
    b.put(b"b", b"2")
    b.delete(b"c")
    assert len(b) == 3
    db[b"c"] = b"old"
    db.write(b)
    assert db[b"a"] == b"1" and db[b"b"] == b"2"
    assert b"c" not in db
    assert len(b) == 3          # the batch is left as it was
    b.clear()
    assert len(b) == 0
    db.write(b)                 # an empty batch is a no-op


def test_batch_reused(db):
    b = ravel.Batch()
    b.put(b"x", b"1")
    db.write(b, sync=True)
    del db[b"x"]
    db.write(b)
    assert db[b"x"] == b"1"


def test_write_batch_context_writes_on_clean_exit(db):
    with db.write_batch(sync=True) as b:
        b.put(b"a", b"1")
        b.put(b"b", b"2")
        assert b"a" not in db   # nothing is written before the end
    assert db[b"a"] == b"1" and db[b"b"] == b"2"


def test_write_batch_context_discards_on_exception(db):
    with pytest.raises(RuntimeError):
        with db.write_batch() as b:
            b.put(b"a", b"1")
            raise RuntimeError("abandon")
    assert b"a" not in db


def test_plain_batch_in_with_block_writes_nothing(db):
    with ravel.Batch() as b:
        b.put(b"a", b"1")
    assert b"a" not in db


def test_write_argument_checks(db):
    with pytest.raises(TypeError):
        db.write([(b"a", b"1")])
    with pytest.raises(TypeError):
        ravel.Batch(1)
    with pytest.raises(TypeError):
        db.write_batch(True)
    with pytest.raises(TypeError):
        ravel.Batch().put(b"a")


def test_batch_is_atomic_for_snapshots(db):
    # every snapshot sees all of a batch or none of it
    for i in range(200):
        with db.write_batch() as b:
            b.put(b"left", b"%d" % i)
            b.put(b"right", b"%d" % i)
        with db.snapshot() as s:
            assert s[b"left"] == s[b"right"]


def test_batch_write_after_close(path):
    db = ravel.open(path, create_if_missing=True)
    b = db.write_batch()
    b.put(b"a", b"1")
    db.close()
    with pytest.raises(ravel.InvalidArgumentError):
        b.__exit__(None, None, None)
    with pytest.raises(ravel.InvalidArgumentError):
        db.write(ravel.Batch())
