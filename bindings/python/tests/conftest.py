"""conftest.py -- fixtures shared by the tests: a fresh database path and an
open database in pytest's temporary directory."""
import pytest

import ravel


@pytest.fixture
def path(tmp_path):
    """The path of a database that does not exist yet."""
    return str(tmp_path / "db")


@pytest.fixture
def db(path):
    """An open, empty database, closed after the test."""
    d = ravel.open(path, create_if_missing=True)
    yield d
    d.close()
