"""test_value_sizes.py -- every get-like call (db.get, db[k], multi_get,
a snapshot's get and [], a transaction's get and get_for_update) returns
an empty value, a small one, one past the old 1 KiB stack buffer and a
1 MiB one whole, from the memtable and from a table file.  Each read is
one call of ravel_get in db.c and transaction.c (a value of any size is
looked up once); Python cannot count the engine's lookups, the Go and
Rust bindings' tests do."""
import pytest

import ravel

SIZES = [0, 1, 1024, 1025, 65536, 1 << 20]


def patterned(n):
    """N bytes that differ with N and position."""
    return bytes((i * 7 + n) % 256 for i in range(n))


@pytest.mark.parametrize("flush", [False, True])
def test_every_get_reads_any_size(db, flush):
    values = {b"k%d" % n: patterned(n) for n in SIZES}
    for key, value in values.items():
        db[key] = value
    if flush:
        db.flush()
    for key, value in values.items():
        assert db.get(key) == value
        assert db[key] == value
        assert key in db
    keys = list(values) + [b"absent"]
    assert db.multi_get(keys) == list(values.values()) + [None]
    with db.snapshot() as snap:
        for key, value in values.items():
            assert snap.get(key) == value
            assert snap[key] == value
        assert snap.multi_get(keys) == list(values.values()) + [None]
    with db.transaction() as txn:
        for key, value in values.items():
            assert txn.get(key) == value
            assert txn.get_for_update(key) == value
            assert txn[key] == value
        txn.rollback()
    assert db.get(b"absent") is None
    empty = db.get(b"k0")
    assert isinstance(empty, bytes) and empty == b""
