"""DB.delete_range and Batch.delete_range: the keys of [begin, end) are
gone for gets and iteration, a snapshot taken before still sees them, a
batch reads back as ("delete_range", begin, end), bad ranges raise."""
import pytest

import ravel


def test_delete_range(tmp_path):
    db = ravel.open(str(tmp_path / "db"), create_if_missing=True)
    try:
        for i in range(10):
            db.put(b"k%d" % i, b"v%d" % i)
        snap = db.snapshot()
        db.delete_range(b"k2", b"k7", sync=True)
        assert [k for k, _ in db.items()] == [b"k0", b"k1", b"k7", b"k8",
                                              b"k9"]
        assert db.get(b"k3") is None
        assert snap.get(b"k3") == b"v3"
        snap.close()
        db.flush()
        assert db.get(b"k6") is None and db.get(b"k7") == b"v7"
        with pytest.raises(ravel.InvalidArgumentError):
            db.delete_range(b"b", b"a")
        db.delete_range(b"a", b"a")  # empty: nothing
        batch = ravel.Batch()
        batch.delete_range(b"k0", b"k1")
        assert list(batch) == [("delete_range", b"k0", b"k1")]
        db.write(batch)
        assert db.get(b"k0") is None and db.get(b"k1") == b"v1"
    finally:
        db.close()
