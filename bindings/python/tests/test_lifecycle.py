"""test_lifecycle.py -- closing (with live iterators and snapshots, twice,
by a with block), use after close, garbage collection with live objects,
and reference counting (no leaks)."""
import gc
import sys
import tracemalloc

import pytest

import ravel


def test_with_block_closes(path):
    with ravel.open(path, create_if_missing=True) as db:
        assert not db.closed
    assert db.closed
    db.close()                      # harmless
    ravel.open(path).close()        # not locked any more


def test_close_releases_live_iterators_and_snapshots(path):
    db = ravel.open(path, create_if_missing=True)
    db[b"a"] = b"1"
    db[b"b"] = b"2"
    it = db.iterator()
    it.seek_to_first()
    rng = db.items()
    assert next(rng) == (b"a", b"1")
    fresh = db.keys()               # made, not started
    snap = db.snapshot()
    db.close()                      # closes them first, as plyvel does
    assert db.closed and it.closed and snap.released
    for call in (it.next, it.key, it.valid, lambda: next(rng),
                 lambda: next(fresh), lambda: snap[b"a"], snap.iterator):
        with pytest.raises(ravel.InvalidArgumentError) as info:
            call()
        assert "closed" in str(info.value)
    it.close()
    snap.release()
    rng.close()
    ravel.open(path).close()


def test_every_method_after_close(path):
    db = ravel.open(path, create_if_missing=True)
    db.close()
    calls = [
        lambda: db[b"a"], lambda: db.get(b"a"), lambda: b"a" in db,
        lambda: db.__setitem__(b"a", b"1"), lambda: db.__delitem__(b"a"),
        lambda: db.put(b"a", b"1"), lambda: db.delete(b"a"),
        lambda: db.write(ravel.Batch()), db.write_batch, db.snapshot,
        db.iterator, db.items, db.keys, db.values, lambda: iter(db),
        lambda: db.property("ravel.stats"), db.flush_wal, db.flush,
        db.compact_range, db.verify, db.__enter__,
    ]
    for call in calls:
        with pytest.raises(ravel.Error) as info:
            call()
        assert info.value.code == ravel.INVALID
        assert "closed" in str(info.value)


def test_gc_with_live_iterator_keeps_database_open(path):
    db = ravel.open(path, create_if_missing=True)
    db[b"a"] = b"1"
    it = db.iterator()
    rng = db.values()
    snap = db.snapshot()
    del db
    gc.collect()
    it.seek_to_first()              # still works: it holds the database
    assert it.key() == b"a"
    assert snap[b"a"] == b"1"
    assert list(rng) == [b"1"]
    with pytest.raises(ravel.LockedError):
        ravel.open(path)
    del it, rng, snap
    gc.collect()
    ravel.open(path).close()        # the last reference closed it


def test_gc_of_database_in_a_cycle(path):
    class Holder:
        pass
    h = Holder()
    h.self = h
    h.db = ravel.open(path, create_if_missing=True)
    h.it = h.db.iterator()
    h.snap = h.db.snapshot()
    del h
    gc.collect()
    ravel.open(path).close()


def test_double_init_refused(path):
    db = ravel.open(path, create_if_missing=True)
    with pytest.raises(ravel.InvalidArgumentError):
        db.__init__(path)
    db.close()


def test_refcounts_unchanged_by_calls(db):
    key, value, dflt = b"refkey", b"refvalue", object()
    db[key] = value
    before = [sys.getrefcount(o) for o in (key, value, dflt, db)]
    for _ in range(100):
        db.put(key, value)
        db.get(key)
        db.get(b"missing", dflt)
        _ = key in db
        try:
            db[b"missing"]
        except KeyError:
            pass
        with db.snapshot() as s:
            s.get(key)
        with db.iterator() as it:
            it.seek(key)
            it.item()
        list(db.items())
        with db.write_batch() as b:
            b.put(key, value)
    del s, it, b                    # the last round's objects hold db
    after = [sys.getrefcount(o) for o in (key, value, dflt, db)]
    assert after == before


def test_no_memory_growth(db):
    for i in range(100):
        db[b"k%03d" % i] = b"v" * 50

    def work():
        for i in range(200):
            db.get(b"k%03d" % (i % 100))
            db.get(b"absent")
            list(db.items(b"k010", b"k020"))
            with db.snapshot() as s:
                list(s.keys(reverse=True))
            it = db.iterator()
            it.seek_to_first()
            it.close()
            b = ravel.Batch()
            b.put(b"x", b"y")
            db.write(b)
            try:
                db.property("no.such")
            except ravel.NotFoundError:
                pass

    work()                          # warm up caches and free lists
    gc.collect()
    tracemalloc.start()
    try:
        work()
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(3):
            work()
        gc.collect()
        second, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # three more rounds leave nothing behind (a leak of one object per
    # call would be tens of kilobytes)
    assert second - first < 8192, (first, second)
