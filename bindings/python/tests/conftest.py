"""conftest.py -- fixtures shared by the tests: a fresh database path and an
open database in pytest's temporary directory; and skip_without, which
skips a module whose tools are missing, unless RAVEL_PY_REQUIRE_TOOLS=1
(ci.sh sets it, so a missing tool fails there instead of hiding tests)."""
import os

import pytest


def skip_without(reason):
    """Skips the calling test module for REASON (a str; None: run it)."""
    if reason is None:
        return
    if os.environ.get("RAVEL_PY_REQUIRE_TOOLS") == "1":
        raise RuntimeError("RAVEL_PY_REQUIRE_TOOLS=1 but " + reason)
    pytest.skip(reason, allow_module_level=True)

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
