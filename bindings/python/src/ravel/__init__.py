"""ravel -- Python binding of ravel, an embedded key-value storage engine.

    import ravel
    with ravel.open("my.db", create_if_missing=True) as db:
        db[b"key"] = b"value"
        print(db[b"key"], db.get(b"absent"))

Everything is implemented by the C extension ravel._ravel over libravel;
this file re-exports it and adds open().  See README.md for the API
overview and the error classes; _ravel.pyi holds the types.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for the annotations only (they are not evaluated)
    import os
    from typing import Optional, Union

from ravel._ravel import (
    DB,
    Batch,
    Snapshot,
    Iterator,
    RangeIterator,
    Transaction,
    Options,
    Cache,
    WriteController,
    Error,
    NotFoundError,
    InvalidArgumentError,
    DiskIOError,
    CorruptionError,
    NoMemoryError,
    BusyError,
    LockedError,
    ReadOnlyError,
    DatabaseNotFoundError,
    RetriableError,
    ConflictError,
    TimedOutError,
    DeadlockError,
    ExpiredError,
    Updates,
    SstWriter,
    backup_list,
    backup_info,
    backup_verify,
    backup_restore,
    backup_purge,
    restore_backup,
    repair,
    errstr,
    destroy,
    lib_version,
    lib_version_number,
    header_version,
    OK,
    NOTFOUND,
    INVALID,
    IOERR,
    CORRUPT,
    NOMEM,
    BUSY,
    LOCKED,
    READONLY,
    CONFLICT,
    TIMEDOUT,
    DEADLOCK,
    EXPIRED,
)

#: The version of this binding (the distribution ravel-kv).
__version__ = "0.1.0"

__all__ = [
    "open", "DB", "Batch", "Snapshot", "Iterator", "RangeIterator",
    "Transaction",
    "Options", "Cache", "WriteController",
    "Error", "NotFoundError", "InvalidArgumentError", "DiskIOError",
    "CorruptionError", "NoMemoryError", "BusyError", "LockedError",
    "ReadOnlyError", "DatabaseNotFoundError", "RetriableError",
    "ConflictError", "TimedOutError", "DeadlockError", "ExpiredError",
    "Updates", "SstWriter", "backup_list", "backup_info", "backup_verify",
    "backup_restore", "backup_purge", "restore_backup", "repair",
    "errstr", "destroy",
    "lib_version",
    "lib_version_number", "header_version",
    "OK", "NOTFOUND", "INVALID", "IOERR", "CORRUPT", "NOMEM", "BUSY",
    "LOCKED", "READONLY", "CONFLICT", "TIMEDOUT", "DEADLOCK", "EXPIRED",
]


def open(path: Union[str, bytes, os.PathLike[str], os.PathLike[bytes]],
         options: Optional[Options] = None, *,
         cache: Optional[Cache] = None,
         write_controller: Optional[WriteController] = None,
         **option_values: Union[bool, int, str]) -> DB:
    """Opens (with create_if_missing=True: creates) the database in PATH;
    a missing one raises DatabaseNotFoundError (a FileNotFoundError).

    Keyword arguments are ravel option names with bool, int or str values
    (``write_buffer_size="64M"``, ``create_if_missing=True``); an unknown
    name or a bad value raises InvalidArgumentError naming it.  OPTIONS, an
    Options object, is applied first.  CACHE (a Cache) and
    WRITE_CONTROLLER (a WriteController) are shared with other databases.
    Returns a DB, which is also a context manager that closes it.
    """
    return DB(path, options, cache=cache, write_controller=write_controller,
              **option_values)
