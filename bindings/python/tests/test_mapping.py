"""test_mapping.py -- the dict-like parts of DB beyond [], get, in and del:
prefix ranges (items/keys/values(prefix=...)), update() as one atomic
batch, and the dict methods DB deliberately lacks (len, pop, setdefault:
README.md "Not offered" says why)."""
import threading

import pytest

import ravel

KEYS = sorted([b"", b"a", b"a\x00", b"a\xff", b"a\xff\xff", b"ab", b"abc",
               b"b", b"b\x00", b"\xff", b"\xff\xff", b"\xff\xff\x01"])


@pytest.fixture
def filled(db):
    db.update((k, b"v" + k) for k in KEYS)
    return db


@pytest.mark.parametrize("prefix", [
    b"", b"a", b"ab", b"abc", b"abcd", b"a\xff", b"a\xff\xff", b"b", b"c",
    b"\xff", b"\xff\xff", b"\xff\xff\x01", b"\x00",
])
def test_prefix(filled, prefix):
    want = [k for k in KEYS if k.startswith(prefix)]
    assert list(filled.keys(prefix=prefix)) == want
    assert list(filled.keys(prefix=prefix, reverse=True)) == want[::-1]
    assert list(filled.items(prefix=prefix)) == [(k, b"v" + k) for k in want]
    assert list(filled.values(prefix=bytearray(prefix))) == \
        [b"v" + k for k in want]
    with filled.snapshot() as snap:
        filled[prefix + b"later"] = b"x"
        assert list(snap.keys(prefix=prefix)) == want
        assert list(snap.items(prefix=prefix, reverse=True)) == \
            [(k, b"v" + k) for k in reversed(want)]
        del filled[prefix + b"later"]
    with filled.snapshot() as snap:
        assert list(filled.keys(prefix=prefix, snapshot=snap)) == want


def test_prefix_leaves_the_shared_one_byte_objects_alone(filled):
    # the bound after b"a" is b"b": made in a new object, never by writing
    # into the interpreter's shared one-byte bytes objects
    assert list(filled.keys(prefix=b"a"))
    assert list(filled.keys(prefix=b"\xfe")) == []
    assert [ord(b"a"), ord(b"b"), ord(b"\xfe"), ord(b"\xff")] == \
        [97, 98, 254, 255]


def test_prefix_is_not_combined_with_start_or_stop(filled):
    with pytest.raises(TypeError, match="prefix"):
        filled.items(b"a", prefix=b"a")
    with pytest.raises(TypeError, match="prefix"):
        filled.keys(stop=b"b", prefix=b"a")
    with pytest.raises(TypeError):
        filled.keys(None, None, False, b"a")    # prefix is keyword-only
    with pytest.raises(TypeError):
        filled.values(prefix="a")


def test_update_from_mapping_and_pairs(db):
    db.update({b"a": b"1", b"b": b"2"})
    db.update([(b"c", b"3"), (bytearray(b"d"), memoryview(b"4"))], sync=True)
    db.update(iter([(b"a", b"5"), (b"a", b"6")]))     # the last one wins
    db.update()
    db.update({})
    assert dict(db.items()) == {b"a": b"6", b"b": b"2", b"c": b"3",
                                b"d": b"4"}


def test_update_from_another_database(db, tmp_path):
    with ravel.open(str(tmp_path / "other"), create_if_missing=True) as o:
        o.update({b"x": b"1", b"y": b"2"})
        db.update(o)        # a mapping: keys(), then o[key]
    assert list(db.items()) == [(b"x", b"1"), (b"y", b"2")]


def test_update_is_all_or_nothing(db):
    db[b"keep"] = b"old"
    bad = [(b"keep", b"new"), (b"k2", b"v"), (b"k3", 3)]
    with pytest.raises(TypeError):
        db.update(bad)
    with pytest.raises(ValueError, match="element #1 has length 3"):
        db.update([(b"keep", b"new"), (b"a", b"b", b"c")])
    with pytest.raises(TypeError):
        db.update([b"ab"[0]])
    with pytest.raises(TypeError):
        db.update({"str": b"v"})

    def gen():
        yield b"keep", b"new"
        raise RuntimeError("the iterable failed")
    with pytest.raises(RuntimeError):
        db.update(gen())
    assert list(db.items()) == [(b"keep", b"old")]


def test_update_is_one_atomic_write(db):
    # a reader never sees part of an update
    pairs = {b"k%03d" % i: b"x" for i in range(200)}
    stop = threading.Event()
    seen = set()

    def reader():
        while not stop.is_set():
            seen.add(len(list(db.keys())))
    t = threading.Thread(target=reader)
    t.start()
    for _ in range(20):
        db.update(pairs)
        with db.write_batch() as b:
            for k in pairs:
                b.delete(k)
    stop.set()
    t.join()
    assert seen <= {0, 200}


def test_update_arguments(db):
    with pytest.raises(TypeError, match="unexpected keyword argument 'a'"):
        db.update(a=b"1")
    with pytest.raises(TypeError):
        db.update({b"a": b"1"}, {b"b": b"2"})
    with pytest.raises(TypeError):
        db.update(5)
    db.close()
    with pytest.raises(ravel.InvalidArgumentError, match="closed"):
        db.update({b"a": b"1"})


def test_dict_methods_not_offered(db):
    # len: an LSM tree has no exact count without reading every key;
    # pop/setdefault: a read then a write, not atomic without transactions
    for name in ("__len__", "pop", "popitem", "setdefault", "clear"):
        assert not hasattr(db, name), name
    with pytest.raises(TypeError):
        len(db)
    with db.snapshot() as snap:
        with pytest.raises(TypeError):
            len(snap)
