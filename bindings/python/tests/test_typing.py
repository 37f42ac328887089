"""test_typing.py -- mypy sees ravel's API: the installed package carries
py.typed and _ravel.pyi, a typed program passes `mypy --strict`, misuse
(str keys, a value taken for bytes when it may be None) is reported, and
mypy's stubtest finds the stub and the extension in agreement.  Needs
mypy in this Python (ci.sh installs it); skipped without it."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import ravel
from conftest import skip_without

skip_without(None if importlib.util.find_spec("mypy") else
             "mypy is not installed in this Python")

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(ravel.__file__)

GOOD = '''
    from typing import Dict, List, Optional, Tuple

    import ravel


    def load(path: str) -> Dict[bytes, bytes]:
        try:
            db = ravel.open(path)
        except FileNotFoundError as e:
            assert e.filename == path
            return {}
        with db:
            db[b"a"] = b"1"
            db.put(b"b", bytearray(b"2"), sync=True)
            db.update({b"c": b"3"})
            db.update([(b"d", memoryview(b"4"))], disable_wal=False)
            v: Optional[bytes] = db.get(b"a")
            w: bytes = db.get(b"zz", b"default")
            n: int = len(db.get(b"a", b""))
            pairs: List[Tuple[bytes, bytes]] = list(db.items(prefix=b"a"))
            keys: List[bytes] = list(db.keys(b"a", b"c", reverse=True))
            with db.snapshot() as snap:
                seq: int = snap.sequence
                old: Optional[bytes] = snap.get(b"a")
                values: List[bytes] = list(snap.values(prefix=b""))
            with db.write_batch(sync=True) as batch:
                batch.put(b"e", b"5")
                batch.delete(b"a")
            with db.iterator() as it:
                it.seek_to_first()
                while it.valid():
                    k: bytes = it.key()
                    it.next()
            opts = ravel.Options(create_if_missing=True)
            opts["write_buffer_size"] = "4M"
            size: str = opts["write_buffer_size"]
            cache = ravel.Cache(1 << 20)
            used: int = cache.usage
            try:
                db.property("ravel.no-such")
            except ravel.NotFoundError as e:
                code: int = e.code
                message: str = e.message
            with db.transaction(optimistic=True) as t:
                cur: Optional[bytes] = t.get_for_update(b"a")
                t.put(b"a", (cur or b"") + b"!")
                own: List[bytes] = list(t.keys(prefix=b"a"))

            def bump(t: ravel.Transaction) -> int:
                n = int(t.get_for_update(b"n", b"0"))
                t.put(b"n", str(n + 1).encode())
                return n + 1
            count: int = db.transact(bump, max_attempts=5)
            try:
                db.transact(bump)
            except ravel.RetriableError as e:
                retry_code: int = e.code
            names: List[str] = db.prepared_transactions()
            print(v, w, n, pairs, keys, seq, old, values, size, used, own,
                  count, names)
            return dict(db.items())
'''

BAD = '''
    import ravel

    db = ravel.open("x", create_if_missing=True)
    db.put("key", b"value")
    db["key"] = "value"
    n: bytes = db.get(b"a")
    db.items(prefix="a")
    db.update({"a": "b"})
    db.put(b"k", b"v", fsync=True)
    ravel.open("x", create_if_missing=[1])
    it: ravel.Iterator = db.snapshot()
'''


def run_mypy(tmp_path, source, *options):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(source))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), *options, str(prog)],
        cwd=str(tmp_path), capture_output=True, text=True, timeout=600)


def test_package_is_marked_typed():
    assert os.path.exists(os.path.join(PACKAGE, "py.typed"))
    assert os.path.exists(os.path.join(PACKAGE, "_ravel.pyi"))


def test_typed_program_passes_strict(tmp_path):
    done = run_mypy(tmp_path, GOOD, "--strict")
    assert done.returncode == 0, done.stdout + done.stderr


def test_misuse_is_reported(tmp_path):
    done = run_mypy(tmp_path, BAD)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line.split(":")[1] for line in done.stdout.splitlines()
             if ": error:" in line]
    # one error (at least) on each line of BAD after the open
    assert sorted(set(int(n) for n in lines)) == list(range(5, 13)), \
        done.stdout


def test_stubtest_agrees(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "ravel", "--allowlist",
         os.path.join(HERE, "stubtest-allowlist.txt")],
        cwd=str(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
