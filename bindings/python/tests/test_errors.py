"""test_errors.py -- the exception classes (one per result code, with the
code and ravel's detailed message) and each way of provoking them."""
import errno
import os

import pytest

import ravel

CLASSES = {
    ravel.NOTFOUND: ravel.NotFoundError,
    ravel.INVALID: ravel.InvalidArgumentError,
    ravel.IOERR: ravel.DiskIOError,
    ravel.CORRUPT: ravel.CorruptionError,
    ravel.NOMEM: ravel.NoMemoryError,
    ravel.BUSY: ravel.BusyError,
    ravel.LOCKED: ravel.LockedError,
    ravel.READONLY: ravel.ReadOnlyError,
}


def test_class_hierarchy():
    assert issubclass(ravel.Error, Exception)
    for code, cls in CLASSES.items():
        assert issubclass(cls, ravel.Error)
        assert cls.code == code
        assert cls.__module__ == "ravel"
    assert issubclass(ravel.NotFoundError, KeyError)
    assert issubclass(ravel.InvalidArgumentError, ValueError)
    assert issubclass(ravel.DiskIOError, OSError)
    assert len(set(CLASSES.values())) == len(CLASSES)
    assert issubclass(ravel.DatabaseNotFoundError, ravel.InvalidArgumentError)
    assert issubclass(ravel.DatabaseNotFoundError, FileNotFoundError)
    assert ravel.DatabaseNotFoundError.code == ravel.INVALID
    assert ravel.DatabaseNotFoundError.__module__ == "ravel"
    # str() is the message, even for the KeyError subclass
    assert str(ravel.NotFoundError("plain text")) == "plain text"


def test_errstr():
    assert ravel.errstr(ravel.NOTFOUND) == "not found"
    assert ravel.errstr(99) == "unknown result code"


def check(info, cls, *words):
    """The raised error is CLS, carries its code and names WORDS."""
    e = info.value
    assert type(e) is cls
    assert e.code == cls.code
    assert e.message == str(e)
    for w in words:
        assert w in str(e), (w, str(e))


def test_unknown_option(path):
    with pytest.raises(ravel.InvalidArgumentError) as info:
        ravel.open(path, create_if_missing=True, no_such_option=1)
    check(info, ravel.InvalidArgumentError, "no_such_option")


def test_close_misspelled_option_suggests(path):
    with pytest.raises(ravel.InvalidArgumentError) as info:
        ravel.open(path, create_if_missing=True, write_bufer_size="1M")
    check(info, ravel.InvalidArgumentError, "write_bufer_size",
          "write_buffer_size")


def test_bad_option_value(path):
    with pytest.raises(ravel.InvalidArgumentError) as info:
        ravel.open(path, create_if_missing=True, block_size="lots")
    check(info, ravel.InvalidArgumentError, "block_size")
    with pytest.raises(TypeError):
        ravel.open(path, create_if_missing=True, block_size=4.5)


def test_missing_database(path):
    with pytest.raises(ravel.InvalidArgumentError) as info:
        ravel.open(path)
    check(info, ravel.DatabaseNotFoundError, path, "create_if_missing")


@pytest.mark.parametrize("how", ["no directory", "empty directory",
                                 "read_only"])
def test_missing_database_is_file_not_found(tmp_path, how):
    path = str(tmp_path / "db")
    if how == "empty directory":
        os.mkdir(path)
    options = {"read_only": True, "create_if_missing": True} \
        if how == "read_only" else {}
    with pytest.raises(FileNotFoundError) as info:
        ravel.open(path, **options)
    e = info.value
    assert isinstance(e, ravel.DatabaseNotFoundError)
    assert isinstance(e, ravel.InvalidArgumentError)   # as before
    assert isinstance(e, ravel.Error) and isinstance(e, ValueError)
    assert e.errno == errno.ENOENT
    assert e.filename == path
    assert e.code == ravel.INVALID
    assert str(e) == e.message == e.strerror
    assert "create_if_missing is false" in str(e)
    assert not os.path.exists(os.path.join(path, "IDENTITY"))


def test_other_open_errors_are_not_file_not_found(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    with pytest.raises(ravel.InvalidArgumentError) as info:
        ravel.open(str(blocker))                     # not a directory
    assert not isinstance(info.value, FileNotFoundError)
    with pytest.raises(ravel.InvalidArgumentError) as info:
        ravel.open(str(tmp_path / "db"), no_such_option=1)
    assert not isinstance(info.value, FileNotFoundError)


def test_error_if_exists(path):
    ravel.open(path, create_if_missing=True).close()
    with pytest.raises(ravel.InvalidArgumentError):
        ravel.open(path, error_if_exists=True)


def test_locked_by_second_open(path):
    with ravel.open(path, create_if_missing=True):
        with pytest.raises(ravel.LockedError) as info:
            ravel.open(path)
        check(info, ravel.LockedError, path)
    ravel.open(path).close()        # the lock went with the close


def test_io_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    with pytest.raises(ravel.DiskIOError) as info:
        ravel.open(str(blocker / "db"), create_if_missing=True)
    check(info, ravel.DiskIOError, "errno")
    assert isinstance(info.value, OSError)


def test_read_only(path):
    with ravel.open(path, create_if_missing=True) as db:
        db[b"a"] = b"1"
    with ravel.open(path, read_only=True) as db:
        assert db[b"a"] == b"1"
        with pytest.raises(ravel.ReadOnlyError) as info:
            db[b"b"] = b"2"
        check(info, ravel.ReadOnlyError, "read_only")
        with pytest.raises(ravel.ReadOnlyError):
            db.flush()


def test_unknown_property(db):
    with pytest.raises(ravel.NotFoundError) as info:
        db.property("ravel.no-such-thing")
    check(info, ravel.NotFoundError, "ravel.no-such-thing", "known")
    with pytest.raises(KeyError):
        db.property("nope")
    with pytest.raises(TypeError):
        db.property(b"ravel.stats")


def test_corruption_found_by_verify(path):
    with ravel.open(path, create_if_missing=True) as db:
        for i in range(2000):
            db[b"k%05d" % i] = b"v" * 100
        db.flush()
    tables = [f for f in os.listdir(path) if f.endswith(".sst")]
    assert tables
    table = os.path.join(path, tables[0])
    with open(table, "r+b") as f:
        f.seek(os.path.getsize(table) // 3)
        f.write(b"\xff" * 16)
    with ravel.open(path) as db:
        with pytest.raises(ravel.CorruptionError) as info:
            db.verify()
        check(info, ravel.CorruptionError, tables[0], "offset")


def test_busy_class_and_no_slowdown_flag(db):
    # BUSY needs a write controller that is slowing writes down, which a
    # test cannot bring about deterministically; the flag is accepted, and
    # the class is checked above.
    db.put(b"a", b"1", no_slowdown=True)
    assert ravel.BusyError.code == ravel.BUSY
