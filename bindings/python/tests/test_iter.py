"""test_iter.py -- items/keys/values over ranges, forward and reverse, and
the low-level Iterator (seek, seek_for_prev, seek_to_first/last, next,
prev, key, value, valid, status)."""
import pytest

import ravel

KEYS = [b"a", b"b", b"ba", b"bb", b"c", b"d\x00", b"e"]


@pytest.fixture
def filled(db):
    for k in KEYS:
        db[k] = k.upper()
    return db


def test_items_in_order(filled):
    assert list(filled.items()) == [(k, k.upper()) for k in KEYS]
    assert list(filled.keys()) == KEYS
    assert list(filled.values()) == [k.upper() for k in KEYS]
    assert list(filled) == KEYS     # iterating a DB yields its keys


@pytest.mark.parametrize("start,stop", [
    (None, None), (b"b", None), (None, b"c"), (b"b", b"c"), (b"ba", b"ba"),
    (b"0", b"z"), (b"bz", b"bzz"), (b"c", b"b"), (b"d", b"d\x00\x00"),
    (b"", b"b"),
])
def test_ranges(filled, start, stop):
    want = [k for k in KEYS
            if (start is None or k >= start) and (stop is None or k < stop)]
    assert list(filled.keys(start, stop)) == want
    assert list(filled.keys(start=start, stop=stop, reverse=True)) == \
        want[::-1]
    assert list(filled.items(start, stop, True)) == \
        [(k, k.upper()) for k in reversed(want)]


def test_empty_database(db):
    assert list(db.items()) == []
    assert list(db.keys(reverse=True)) == []


def test_deleted_keys_skipped(filled):
    del filled[b"b"]
    filled.flush()
    del filled[b"c"]
    assert list(filled.keys()) == [k for k in KEYS if k not in (b"b", b"c")]
    assert b"c" not in list(filled.keys(reverse=True))


def test_iteration_reads_a_fixed_state(filled):
    it = filled.keys()
    assert next(it) == b"a"
    filled[b"aa"] = b"new"
    del filled[b"e"]
    assert list(it) == KEYS[1:]     # as of the call to keys()


def test_range_iterator_close(filled):
    it = filled.items()
    next(it)
    it.close()
    assert list(it) == []
    it.close()


def test_range_argument_errors(filled):
    with pytest.raises(TypeError):
        filled.items(start="a")
    with pytest.raises(TypeError):
        filled.items(stop=1)
    with pytest.raises(TypeError):
        filled.items(snapshot="no")


def test_low_level_iterator(filled):
    with filled.iterator() as it:
        assert not it.valid()
        it.seek_to_first()
        assert it.valid() and it.key() == b"a" and it.value() == b"A"
        it.next()
        assert it.item() == (b"b", b"B")
        it.seek_to_last()
        assert it.key() == b"e"
        it.prev()
        assert it.key() == b"d\x00"
        it.seek(b"bab")
        assert it.key() == b"bb"
        it.seek_for_prev(b"bab")
        assert it.key() == b"ba"
        it.seek(b"f")
        assert not it.valid()
        it.seek_for_prev(b"0")
        assert not it.valid()
        it.status()             # no error
        it.seek_to_last()
        it.next()
        assert not it.valid()
    assert it.closed


def test_low_level_iterator_walk_both_ways(filled):
    it = filled.iterator()
    it.seek_to_first()
    seen = []
    while it.valid():
        seen.append(it.key())
        it.next()
    assert seen == KEYS
    it.seek_to_last()
    seen = []
    while it.valid():
        seen.append(it.key())
        it.prev()
    assert seen == KEYS[::-1]
    it.close()


def test_low_level_iterator_misuse(filled):
    it = filled.iterator()
    with pytest.raises(ravel.InvalidArgumentError):
        it.key()                # not positioned
    with pytest.raises(ravel.InvalidArgumentError) as info:
        it.next()               # ravel's own RAVEL_INVALID
    assert info.value.code == ravel.INVALID
    assert "not positioned" in str(info.value)
    with pytest.raises(TypeError):
        it.seek("text")
    it.close()
    it.close()                  # harmless
    for call in (it.seek_to_first, it.valid, it.key, it.next, it.status):
        with pytest.raises(ravel.InvalidArgumentError):
            call()
    with pytest.raises(ravel.InvalidArgumentError):
        with it:
            pass
