"""test_destroy.py -- ravel.destroy(path): a closed database goes with its
directory; a file of another name keeps the directory; an open database
raises LockedError with nothing deleted; a missing directory is no error;
str, bytes and os.PathLike paths, as ravel.open takes."""
import os
import pathlib

import pytest

import ravel


def closed_db_with_data(path):
    """Makes a database at PATH with a table file and a WAL, closed."""
    with ravel.open(path, create_if_missing=True) as db:
        db[b"flushed"] = b"1"
        db.flush()
        db[b"in-wal"] = b"2"
    assert os.path.isfile(os.path.join(path, "CURRENT"))
    return path


def test_closed_database_goes_with_its_directory(path):
    closed_db_with_data(path)
    assert ravel.destroy(path) is None
    assert not os.path.exists(path)
    assert os.path.isdir(os.path.dirname(path))


@pytest.mark.parametrize("kind", ["str", "bytes", "pathlib"])
def test_path_types(path, kind):
    closed_db_with_data(path)
    arg = {"str": path, "bytes": os.fsencode(path),
           "pathlib": pathlib.Path(path)}[kind]
    ravel.destroy(arg)
    assert not os.path.exists(path)


def test_foreign_file_stays_and_keeps_the_directory(path):
    closed_db_with_data(path)
    notes = os.path.join(path, "notes.txt")
    with open(notes, "w") as f:
        f.write("mine")
    ravel.destroy(path)
    assert os.listdir(path) == ["notes.txt"]
    with open(notes) as f:
        assert f.read() == "mine"
    with pytest.raises(ravel.DatabaseNotFoundError):
        ravel.open(path)


def test_open_database_is_locked_and_kept(path):
    closed_db_with_data(path)
    db = ravel.open(path)
    try:
        with pytest.raises(ravel.LockedError) as info:
            ravel.destroy(path)
        assert info.value.code == ravel.LOCKED
        assert info.value.message
        assert db[b"flushed"] == b"1"
    finally:
        db.close()
    with ravel.open(path) as db:
        assert db[b"flushed"] == b"1"
        assert db[b"in-wal"] == b"2"
    ravel.destroy(path)
    assert not os.path.exists(path)


def test_missing_directory_is_no_error(tmp_path):
    missing = tmp_path / "never-made"
    ravel.destroy(missing)
    assert not missing.exists()


def test_bad_paths(path):
    closed_db_with_data(path)
    # C would see PATH alone: refused before ravel is called
    with pytest.raises(ValueError):
        ravel.destroy(path + "\0/elsewhere")
    assert os.path.isfile(os.path.join(path, "CURRENT"))
    with pytest.raises(TypeError):
        ravel.destroy(42)
    with pytest.raises(TypeError):
        ravel.destroy()
