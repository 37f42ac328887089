"""test_iter_corruption.py -- an error ends an iteration with the error,
never with a silent early end, and nothing is yielded after it.

The database is layered so that going on past damage would show wrong
data (as tests/test_iter_corruption.c builds it): every key written at
version 1 and compacted to the last level, then every key rewritten at
version 2 (every fifth one deleted instead) and flushed to level 0 above
it.  One bit of a data block in the middle of a table file is flipped.
The database is then read with the loops a user writes -- for over
items()/keys()/values(), forward, reversed and bounded, and the
low-level Iterator's while valid(): ... next() -- and every entry yielded
must be the version 2 entry of the next live key, the loop must end with
CorruptionError, and every later call must raise that error again
without yielding anything."""
import os

import pytest

import ravel

KEYS = 2000
OPTIONS = dict(write_buffer_size="64K", target_file_size_base="64K",
               disable_auto_compactions=True)


def key(i):
    return b"key%06d" % i


def value(i, version):
    return b"v%d-%d-%060d" % (version, i, i)


def live(i):
    return i % 5 != 0


def tables(db):
    """{level: [file name, ...]} from the ravel.sstables property."""
    levels = {}
    for line in db.property("ravel.sstables").splitlines():
        # "level 1: 000006.sst 67711 bytes, ..."
        words = line.split()
        levels.setdefault(int(words[1].rstrip(":")), []).append(words[2])
    return levels


def damage(path, name):
    """Flips one bit in a data block in the middle of table NAME: the
    80-byte footer starts with the index block's offset (little-endian
    u64), and the data blocks lie before it."""
    table = os.path.join(path, name)
    with open(table, "rb") as f:
        data = bytearray(f.read())
    index_offset = int.from_bytes(data[-80:-72], "little")
    assert 0 < index_offset < len(data) - 80
    data[index_offset // 2] ^= 0x10
    with open(table, "wb") as f:
        f.write(data)


@pytest.fixture(scope="module", params=["level 0", "last level"])
def damaged(request, tmp_path_factory):
    """The path of the layered database, one of whose files (the middle
    one of level 0, or of the last level) has a damaged data block."""
    path = str(tmp_path_factory.mktemp("itercorrupt") / "db")
    with ravel.open(path, create_if_missing=True, **OPTIONS) as db:
        for i in range(KEYS):
            db[key(i)] = value(i, 1)
        db.compact_range()
        for i in range(KEYS):
            if live(i):
                db[key(i)] = value(i, 2)
            else:
                del db[key(i)]
        db.flush()
        levels = tables(db)
    assert 0 in levels and len(levels) == 2, levels
    files = levels[0] if request.param == "level 0" else levels[max(levels)]
    assert len(files) >= 3, levels     # entries on both sides of the damage
    damage(path, files[len(files) // 2])
    return path


@pytest.fixture
def db(damaged):
    d = ravel.open(damaged, **OPTIONS)
    yield d
    d.close()


def expected(first, step, stop=None):
    """The live keys from key FIRST on (included), stepping by STEP, while
    within [0, KEYS) and, if STOP is given, before STOP (excluded)."""
    out = []
    i = first
    while 0 <= i < KEYS and i != stop:
        if live(i):
            out.append(i)
        i += step
    return out


def read_until_error(iterable, want, shape):
    """Runs `for x in iterable` as a user would, recording what it yields;
    asserts it ends with CorruptionError (not a silent end) after a correct
    prefix of WANT (indices, shaped to what the loop yields by SHAPE), and
    that the stopped iterator raises that error again on every later
    next() without yielding anything.  Returns how many were yielded."""
    got = []
    with pytest.raises(ravel.CorruptionError) as info:
        for x in iterable:
            got.append(x)
    assert len(got) < len(want), "the loop ran to the end past the damage"
    assert got == [shape(i) for i in want[:len(got)]], \
        "an entry yielded before the error is not the next live key at " \
        "version 2"
    message = str(info.value)
    assert ".sst" in message, message
    for _ in range(3):
        with pytest.raises(ravel.CorruptionError) as again:
            x = next(iterable)
            pytest.fail("yielded %r after the error" % (x,))
        assert str(again.value) == message
    return len(got)


def item(i):
    return (key(i), value(i, 2))


def test_items_forward(db):
    n = read_until_error(db.items(), expected(0, 1), item)
    assert n > 0     # the damage is in the middle: entries come before it


def test_items_reversed(db):
    n = read_until_error(db.items(reverse=True), expected(KEYS - 1, -1), item)
    assert n > 0


def test_keys_and_values(db):
    read_until_error(db.keys(), expected(0, 1), key)
    read_until_error(db.values(reverse=True), expected(KEYS - 1, -1),
                     lambda i: value(i, 2))


def test_items_from_a_seek(db):
    read_until_error(db.items(start=key(KEYS // 3)),
                     expected(KEYS // 3, 1), item)
    read_until_error(db.items(stop=key(2 * KEYS // 3), reverse=True),
                     expected(2 * KEYS // 3 - 1, -1), item)


def test_items_bounded(db):
    # both bounds set: the binding's own bound checks must not turn the
    # error into an end of the range
    lo, hi = 7, KEYS - 7
    read_until_error(db.items(key(lo), key(hi)), expected(lo, 1, hi), item)
    read_until_error(db.keys(key(lo), key(hi), reverse=True),
                     expected(hi - 1, -1, lo - 1), key)


def test_snapshot_items(db):
    with db.snapshot() as s:
        read_until_error(s.items(), expected(0, 1), item)
        read_until_error(db.items(snapshot=s, reverse=True),
                         expected(KEYS - 1, -1), item)


def low_level_scan(it, position, move, want):
    """The low-level loop a user writes: position, then while valid():
    use the entry and move.  It must raise CorruptionError from a move
    after correct entries only, and leave the iterator stopped."""
    got = []
    with pytest.raises(ravel.CorruptionError) as info:
        position()
        while it.valid():
            got.append(it.item())
            move()
    assert len(got) < len(want)
    assert got == [item(i) for i in want[:len(got)]]
    return str(info.value)


def check_stopped(it, message):
    """Every call on a stopped iterator raises its error (with its
    message), and it shows no entry."""
    calls = [it.status, it.next, it.prev, it.seek_to_first, it.seek_to_last,
             lambda: it.seek(key(KEYS // 2)),
             lambda: it.seek_for_prev(key(KEYS // 2)), it.status]
    for call in calls:
        with pytest.raises(ravel.CorruptionError) as info:
            call()
        assert str(info.value) == message
        assert not it.valid()
        with pytest.raises(ravel.InvalidArgumentError):
            it.key()
        with pytest.raises(ravel.InvalidArgumentError):
            it.value()


@pytest.mark.parametrize("how", ["first", "last", "seek", "seek_for_prev"])
def test_low_level_iterator(db, how):
    with db.iterator() as it:
        if how == "first":
            position, move, want = it.seek_to_first, it.next, expected(0, 1)
        elif how == "last":
            position, move = it.seek_to_last, it.prev
            want = expected(KEYS - 1, -1)
        elif how == "seek":
            position = lambda: it.seek(key(KEYS // 3))
            move, want = it.next, expected(KEYS // 3, 1)
        else:
            position = lambda: it.seek_for_prev(key(2 * KEYS // 3))
            move, want = it.prev, expected(2 * KEYS // 3, -1)
        message = low_level_scan(it, position, move, want)
        check_stopped(it, message)
