"""test_snapshot.py -- snapshots: isolation from later writes, reads and
iteration through them, release, and the iterators made from them."""
import pytest

import ravel


def test_snapshot_isolation(db):
    db[b"a"] = b"1"
    db[b"b"] = b"1"
    with db.snapshot() as s:
        db[b"a"] = b"2"
        del db[b"b"]
        db[b"c"] = b"new"
        db.flush()                  # also across a flush
        assert s[b"a"] == b"1"
        assert s.get(b"b") == b"1"
        assert s.get(b"c") is None
        assert s.get(b"c", default=b"d") == b"d"
        assert b"c" not in s and b"b" in s
        with pytest.raises(KeyError):
            s[b"c"]
        assert list(s.items()) == [(b"a", b"1"), (b"b", b"1")]
        assert list(s.keys(reverse=True)) == [b"b", b"a"]
        assert list(s.values(b"b")) == [b"1"]
        assert list(s) == [b"a", b"b"]
        assert list(db.keys(snapshot=s)) == [b"a", b"b"]
    assert db[b"a"] == b"2" and b"b" not in db


def test_snapshot_sequence(db):
    s1 = db.snapshot()
    db[b"x"] = b"1"
    s2 = db.snapshot()
    assert s2.sequence > s1.sequence
    assert s1.db is db
    s1.release()
    s2.close()


def test_snapshot_low_level_iterator(db):
    db[b"a"] = b"1"
    s = db.snapshot()
    db[b"b"] = b"2"
    it = s.iterator()
    it2 = db.iterator(snapshot=s)
    s.release()                     # iterators outlive their snapshot
    for i in (it, it2):
        i.seek_to_first()
        assert i.item() == (b"a", b"1")
        i.next()
        assert not i.valid()
        i.close()


def test_released_snapshot(db):
    s = db.snapshot()
    s.release()
    assert s.released
    s.release()                     # harmless
    for call in (lambda: s.get(b"a"), lambda: s[b"a"], lambda: b"a" in s,
                 lambda: s.items(), s.iterator, lambda: s.sequence,
                 lambda: db.items(snapshot=s),
                 lambda: db.iterator(snapshot=s)):
        with pytest.raises(ravel.InvalidArgumentError):
            call()


def test_snapshot_of_another_database(tmp_path):
    with ravel.open(str(tmp_path / "a"), create_if_missing=True) as a, \
            ravel.open(str(tmp_path / "b"), create_if_missing=True) as b:
        with a.snapshot() as s:
            with pytest.raises(ravel.InvalidArgumentError):
                b.items(snapshot=s)
            with pytest.raises(ravel.InvalidArgumentError):
                b.iterator(snapshot=s)
