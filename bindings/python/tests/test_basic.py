"""test_basic.py -- point reads and writes: round trips of all kinds of
keys and values, missing keys, deletes, the mapping protocol, argument
types, write flags, and persistence across a reopen."""
import pytest

import ravel


def test_round_trip(db):
    db[b"k"] = b"v"
    assert db[b"k"] == b"v"
    assert db.get(b"k") == b"v"
    db.put(b"k", b"v2")
    assert db[b"k"] == b"v2"


@pytest.mark.parametrize("key,value", [
    (b"", b"empty key"),
    (b"empty value", b""),
    (b"", b""),
    (b"\x00", b"\x00\x00"),
    (b"a\x00b", b"x\x00y\x00"),
    (bytes(range(256)), bytes(range(255, -1, -1))),
])
def test_binary_and_empty(db, key, value):
    db[key] = value
    assert db[key] == value
    assert key in db


@pytest.mark.parametrize("size", [1023, 1024, 1025, 5000, 1 << 20])
def test_value_sizes(db, size):
    # around the 1 KiB stack buffer of get, and well above it
    value = bytes(i % 251 for i in range(size))
    db[b"big"] = value
    assert db[b"big"] == value
    assert db.get(b"big") == value


def test_missing_key(db):
    with pytest.raises(KeyError) as info:
        db[b"nope"]
    assert info.value.args == (b"nope",)
    assert db.get(b"nope") is None
    assert db.get(b"nope", b"dflt") == b"dflt"
    assert db.get(b"nope", default=7) == 7
    assert b"nope" not in db


def test_delete(db):
    db[b"a"] = b"1"
    del db[b"a"]
    assert b"a" not in db
    db[b"b"] = b"2"
    db.delete(b"b", sync=True)
    assert db.get(b"b") is None
    # deleting an absent key is not an error (a blind delete)
    del db[b"never"]
    db.delete(b"never")


def test_bytes_like_arguments(db):
    db[bytearray(b"ba")] = memoryview(b"mv")
    assert db[b"ba"] == b"mv"
    assert db[memoryview(b"ba")] == b"mv"
    assert isinstance(db[b"ba"], bytes)


@pytest.mark.parametrize("bad", ["text", 1, None, 1.5])
def test_keys_must_be_bytes(db, bad):
    with pytest.raises(TypeError):
        db[bad] = b"v"
    with pytest.raises(TypeError):
        db.get(bad)
    with pytest.raises(TypeError):
        db.put(b"k", bad)


def test_write_flags(db):
    db.put(b"a", b"1", sync=True)
    db.put(b"b", b"2", disable_wal=True)
    db.put(b"c", b"3", no_slowdown=True, sync=False)
    assert [db[k] for k in (b"a", b"b", b"c")] == [b"1", b"2", b"3"]
    with pytest.raises(TypeError):
        db.put(b"d", b"4", fsync=True)
    with pytest.raises(TypeError):
        db.put(b"d")


def test_key_too_large(db):
    with pytest.raises(ravel.InvalidArgumentError) as info:
        db[b"k" * ((1 << 20) + 1)] = b"v"
    assert "RAVEL_MAX_KEY_SIZE" in str(info.value)


def test_reopen_persists(path):
    with ravel.open(path, create_if_missing=True) as db:
        db[b"wal"] = b"1"
        db.put(b"nowal", b"2", disable_wal=True)   # kept by the flush at close
        db.put(b"synced", b"3", sync=True)
        db[b"gone"] = b"4"
        del db[b"gone"]
    with ravel.open(path) as db:
        assert db[b"wal"] == b"1"
        assert db[b"nowal"] == b"2"
        assert db[b"synced"] == b"3"
        assert b"gone" not in db


def test_reopen_after_flush_and_compaction(path):
    with ravel.open(path, create_if_missing=True) as db:
        for i in range(1000):
            db[b"k%04d" % i] = b"v%d" % i
        db.flush()
        db.compact_range()
        db.verify()
    with ravel.open(path) as db:
        assert db[b"k0999"] == b"v999"
        assert len(list(db.keys())) == 1000


def test_path_like_and_bytes_paths(tmp_path):
    with ravel.open(tmp_path / "p", create_if_missing=True) as db:
        db[b"a"] = b"1"
        assert db.path == str(tmp_path / "p")
    with ravel.open(str(tmp_path / "p").encode()) as db:
        assert db[b"a"] == b"1"
