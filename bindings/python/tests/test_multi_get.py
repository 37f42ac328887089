"""test_multi_get.py -- DB.multi_get and Snapshot.multi_get: values in the
caller's order, None for absent and deleted keys, repeated keys, memtable
and table files, any iterable of bytes-like keys, a snapshot's state, no
value on an error, and -- with a writer thread keeping every key equal in
each batch -- one state per call."""
import threading

import pytest

import ravel


def fill(db):
    for k, v in [(b"b", b"vb"), (b"a", b"va"), (b"d", b"vd"),
                 (b"gone", b"x"), (b"empty", b"")]:
        db.put(k, v)
    db.delete(b"gone")


def test_values_in_callers_order(db):
    fill(db)
    keys = [b"d", b"zz", b"a", b"gone", b"b", b"a", b"empty", b""]
    want = [b"vd", None, b"va", None, b"vb", b"va", b"", None]
    assert db.multi_get(keys) == want
    db.flush()                       # now from a table file
    assert db.multi_get(keys) == want
    assert db.multi_get([]) == []


def test_any_iterable_of_bytes_like_keys(db):
    fill(db)
    got = db.multi_get(k for k in (bytearray(b"a"), memoryview(b"b"), b"d"))
    assert got == [b"va", b"vb", b"vd"]
    assert all(type(v) is bytes for v in got)
    assert db.multi_get((b"a",)) == [b"va"]


def test_a_single_key_or_a_str_is_a_type_error(db):
    with pytest.raises(TypeError, match="iterable of keys"):
        db.multi_get(b"ab")
    with pytest.raises(TypeError, match="iterable of keys"):
        db.multi_get("ab")
    with pytest.raises(TypeError, match="key"):
        db.multi_get([b"a", "b"])
    with pytest.raises(TypeError):
        db.multi_get(3)


def test_snapshot(db):
    db.put(b"a", b"old")
    db.put(b"b", b"old")
    with db.snapshot() as snap:
        db.put(b"a", b"new")
        db.delete(b"b")
        db.put(b"c", b"new")
        assert snap.multi_get([b"a", b"b", b"c"]) == [b"old", b"old", None]
        assert db.multi_get([b"a", b"b", b"c"]) == [b"new", None, b"new"]
        assert db.multi_get([b"c", b"a"], snapshot=snap) == [None, b"old"]
        with pytest.raises(TypeError, match="snapshot must be"):
            db.multi_get([b"a"], snapshot=b"a")
    with pytest.raises(ravel.InvalidArgumentError):
        snap.multi_get([b"a"])
    with pytest.raises(ravel.InvalidArgumentError):
        db.multi_get([b"a"], snapshot=snap)


def test_error_returns_no_value(db):
    db.put(b"a", b"va")
    with pytest.raises(ravel.InvalidArgumentError,
                       match="ravel_multi_get.*RAVEL_MAX_KEY_SIZE"):
        db.multi_get([b"a", b"k" * ((1 << 20) + 1)])
    assert db.multi_get([b"a"]) == [b"va"]      # the handle is still fine
    db.close()
    with pytest.raises(ravel.InvalidArgumentError, match="closed"):
        db.multi_get([b"a"])


def test_one_state_while_a_writer_runs(db):
    """A writer sets every key to round r in one batch, round after round;
    each multi_get must see one round for all keys (get() key by key would
    not, as the GIL is released in each)."""
    keys = [b"k%02d" % i for i in range(16)]
    batch = ravel.Batch()
    for k in keys:
        batch.put(k, b"0")
    db.write(batch)
    done = threading.Event()
    failure = []

    def writer():
        try:
            b = ravel.Batch()
            for r in range(1, 1501):
                b.clear()
                for k in keys:
                    b.put(k, b"%d" % r)
                db.write(b)
                if r % 500 == 0:
                    db.flush(wait=False)
        except BaseException as e:           # reported below
            failure.append(e)
        finally:
            done.set()

    t = threading.Thread(target=writer)
    t.start()
    try:
        calls, last = 0, 0
        while not done.is_set() or calls < 100:
            values = db.multi_get(keys)
            assert values == [values[0]] * len(keys), \
                "two states in call %d: %r" % (calls, values)
            r = int(values[0])
            assert r >= last
            last, calls = r, calls + 1
    finally:
        t.join()
    assert not failure, failure
