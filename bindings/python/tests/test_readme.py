"""test_readme.py -- the README's example is examples/example.py, byte for
byte, and it runs and prints what the README says."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLE = os.path.join(ROOT, "examples", "example.py")
TXN_EXAMPLE = os.path.join(ROOT, "examples", "transactions.py")
OPS_EXAMPLE = os.path.join(ROOT, "examples", "operations.py")


def readme_example(name="example.py"):
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    m = re.search(r"<!-- example: examples/" + re.escape(name) +
                  r" -->\n```python\n(.*?)```", text, re.S)
    assert m, "README.md lost its example block of " + name
    return m.group(1)


def test_readme_example_is_the_file():
    with open(EXAMPLE) as f:
        assert readme_example() == f.read()
    with open(TXN_EXAMPLE) as f:
        assert readme_example("transactions.py") == f.read()
    with open(OPS_EXAMPLE) as f:
        assert readme_example("operations.py") == f.read()


def test_operations_example_runs(tmp_path):
    done = subprocess.run([sys.executable, OPS_EXAMPLE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:8] == [
        "None",
        "b'dark red'",
        "[b'apple', b'banana', b'cherry']",
        "[1, 2] 1 2",
        "True 5",
        "sequence 1 expired",
        "b'purple' False",
        "b'red'",
    ]
    assert len(lines) == 9 and lines[8]


def test_transactions_example_runs(tmp_path):
    done = subprocess.run([sys.executable, TXN_EXAMPLE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[(b'alice', b'70'), (b'bob', b'30')]",
        "b'70' b'30'",
        "b'400'",
    ]


def test_example_runs(tmp_path):
    done = subprocess.run([sys.executable, EXAMPLE], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[b'banana']",
        "banana yellow",
        "cherry dark red",
        "b'(deleted)'",
    ]
