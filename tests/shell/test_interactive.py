#!/usr/bin/env python3
"""The shell as a person uses it: on a pseudo-terminal, typing keys.

usage: test_interactive.py RAVEL basic|editing|completion|txn HAVE_LIBEDIT(yes|no)

basic    banner, prompts (showing an open batch or a held snapshot), errors
         without a line number, Control-C at the prompt and during a
         blocked .import, the progress line of a long .import, .quit.
         Works with or without libedit.
editing  needs libedit (exits 77 otherwise): up-arrow recalls the previous
         command, the history is saved in ~/.ravel_history and recalled by
         the next session, tab completes command names and arguments.
completion  needs libedit: tab completes property names (RocksDB's too)
         and keys of the database (or of the open transaction) after get,
         del, scan --prefix, written in the shell's quoting when they
         need it; begin's and get's options.
txn      transactions: begin on a new directory says it creates the
         database; the prompt shows the open transaction (optimistic,
         savepoints, prepared); reads see its writes; the end of input
         rolls it back with a note (exit 0: not an error at a terminal),
         and a prepared one stays prepared, also said.  Works with or
         without libedit.

The screen is what the terminal received: escape sequences (cursor moves
that libedit uses to redraw a line) are removed before matching.
"""
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import threading
import time

UP = b"\x1b[A"
FAILURES = []
HAVE_LIBEDIT = False  # the shell reads lines with libedit (main sets it)


class Term:
    def __init__(self, ravel, db, home, editing=False):
        self.editing = editing
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.update(HOME=home, TERM="xterm", LC_ALL="C")
            os.chdir(home)
            os.execv(ravel, [ravel, db])
        self.screen = ""

    # Generous: a loaded machine (CI builds beside the tests) can stall the
    # shell for seconds; a passing run returns as soon as UNTIL matches.
    def read(self, until=None, timeout=30.0):
        """Reads output until the screen (since the last call) matches
        UNTIL, or the timeout; returns the new text, escapes removed."""
        new, end = b"", time.time() + timeout
        while time.time() < end:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                new += chunk
            text = clean(new)
            if until is not None and re.search(until, text):
                break
        text = clean(new)
        self.screen += text
        return text

    def type(self, keys, until="\n(ravel|ravel \\([^)]*\\))> $",
             at_prompt=True):
        # With libedit the keys of a line must arrive once it reads them:
        # typed before, the terminal cooks them (a ^C becomes a SIGINT
        # that lands before the shell's line read, the letters are echoed
        # by the terminal), and the test races with the shell.
        if at_prompt and (self.editing or HAVE_LIBEDIT):
            self.wait_for_editor()
        os.write(self.fd, keys)
        return self.read(until)

    def wait_for_editor(self):
        """libedit puts the terminal in raw mode only while it reads a
        line; keys typed before that are cooked by the terminal (echoed,
        ^D turned into end of file) and the test would race with it."""
        deadline = time.time() + 30
        while time.time() < deadline:
            if not termios.tcgetattr(self.fd)[3] & termios.ICANON:
                return
            time.sleep(0.01)

    def wait(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            self.read(timeout=0.1)
        os.kill(self.pid, signal.SIGKILL)
        return "hung"


def clean(raw):
    text = raw.decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return text.replace("\x07", "").replace("\r\n", "\n").replace("\r", "")


def check(what, cond, context=""):
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}\n--- screen\n{context}\n---")


def basic(ravel, tmp):
    t = Term(ravel, os.path.join(tmp, "db"), tmp)
    banner = t.read("ravel> $")
    check("banner", "no database at" in banner and
          'Enter ".help" for usage hints.' in banner, banner)
    out = t.type(b"put greeting \"hello world\"\r")
    out = t.type(b"get greeting\r")
    check("get prints the value", "\nhello world\nravel> " in out, out)
    out = t.type(b"gte greeting\r")
    check("error without a line number",
          "error: unknown command 'gte' (did you mean 'get'?)" in out, out)
    out = t.type(b"batch\r")
    check("the prompt shows the open batch", out.endswith("ravel (batch 0)> "),
          out)
    out = t.type(b"put a 1\r")
    check("the prompt counts the batch", out.endswith("ravel (batch 1)> "), out)
    out = t.type(b"commit\r")
    check("commit note", "committed 1 operation" in out and
          out.endswith("ravel> "), out)
    out = t.type(b"half a comm\x03", until="ravel> $")
    check("^C at the prompt gives a fresh prompt", out.endswith("ravel> "), out)
    out = t.type(b"count\r")
    check("the session goes on after ^C", "\n2\n" in out, out)
    out = t.type(b"snapshot\r")
    check("the prompt shows the snapshot",
          re.search(r"\nravel \(snapshot \d+\)> $", out), out)
    t.type(b"put greeting changed\r")
    out = t.type(b"get greeting\r")
    check("a read through the snapshot says so, the first time",
          "reading through the snapshot" in out and "hello world" in out, out)
    out = t.type(b"get greeting\r")
    check("once", "reading through" not in out, out)
    out = t.type(b"release\r")
    check("release: the plain prompt", out.endswith("\nravel> "), out)

    # A slow .import from a pipe: a progress line once it runs > 1 s, and
    # ^C stops it, keeping the pairs read before.
    fifo = os.path.join(tmp, "slow.fifo")
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "w") as f:
            for i in range(5):
                f.write(f"slow{i}\tv\n")
            f.flush()
            time.sleep(1.5)
            for i in range(5, 8):
                f.write(f"slow{i}\tv\n")
            f.flush()
            time.sleep(30)  # never finishes: ^C must stop the import
    w = threading.Thread(target=writer, daemon=True)
    w.start()
    os.write(t.fd, b".import slow.fifo\r")
    out = t.read(r"importing slow\.fifo: \d+ pairs")
    check("progress line of a long import",
          re.search(r"importing slow\.fifo: [678] pairs, 0\.0 MB", out), out)
    time.sleep(0.5)  # let it read what the writer sent, then block
    out = t.type(b"\x03", until="ravel> $", at_prompt=False)
    m = re.search(r"slow\.fifo: line (\d+): interrupted; the (\d+) pairs "
                  r"before it were imported", out)
    check("^C stops a blocked import, keeping what was read",
          m and int(m.group(1)) == int(m.group(2)) + 1, out)
    out = t.type(b"count slow\r")
    check("the pairs before ^C are in",
          m and f"\n{m.group(2)}\n" in out, out)

    # .follow waits for changes until ^C, then says where to go on from.
    os.write(t.fd, b".follow 1\r")
    out = t.read(r"\n1\tput\tgreeting\thello world\r?\n")
    check(".follow prints the feed from sequence 1",
          "1\tput\tgreeting\thello world" in out, out)
    out = t.type(b"\x03", until="ravel> $", at_prompt=False)
    check("^C stops .follow, naming where to go on",
          re.search(r"\.follow: stopped after \d+ batches \(next: \.follow "
                    r"\d+\)", out), out)

    out = t.type(b".quit\r", until=None)
    code = t.wait()
    check(".quit exits 1 after errors", code == 1, f"exit {code}\n{t.screen}")


def editing(ravel, tmp):
    db = os.path.join(tmp, "db")
    t = Term(ravel, db, tmp, editing=True)
    t.read("ravel> $")
    t.type(b"put k1 v1\r")
    t.type(b"get k1\r")
    out = t.type(UP + b"\r")
    check("up-arrow recalls the last command", "get k1\nv1\nravel> " in out, out)
    out = t.type(UP + UP + UP + b"\r")
    check("up-arrow walks back through the history",
          "put k1 v1\nravel> " in out, out)
    out = t.type(b"ge\tk1\r")
    check("tab completes a command name", "get k1\nv1\n" in out, out)
    out = t.type(b".mo\tjs\t\r")
    check("tab completes a dot command and its argument",
          ".mode json" in out, out)
    out = t.type(b"get k1\r")
    check(".mode json took effect", '{"key":"k1","value":"v1"}' in out, out)
    t.type(b"put last-of-first-session 1\r")
    t.type(b".quit\r", until=None)
    code = t.wait()
    check("first session exits 0", code == 0, f"exit {code}\n{t.screen}")

    hist = os.path.join(tmp, ".ravel_history")
    saved = open(hist, encoding="utf-8", errors="replace").read() \
        if os.path.exists(hist) else ""
    check("history saved in ~/.ravel_history", "last-of-first-session" in
          saved.replace("\\040", " "), saved)

    t = Term(ravel, db, tmp, editing=True)
    t.read("ravel> $")
    out = t.type(UP + UP + b"\r")
    check("history recalled in a new session",
          "put last-of-first-session 1\nravel> " in out, out)
    t.wait_for_editor()
    os.write(t.fd, b"\x04")  # ^D at an empty prompt ends the session
    code = t.wait()
    check("^D exits 0", code == 0, f"exit {code}\n{t.screen}")


def completion(ravel, tmp):
    """What a completed line runs shows what tab put in it (the echo of
    the line is redrawn with backspaces, which the screen here keeps)."""
    db = os.path.join(tmp, "db")
    t = Term(ravel, db, tmp, editing=True)
    t.read("ravel> $")
    for cmd in [b'put zebra z', b'put user:1 one', b'put user:2 two',
                b'put "space key" sp', b'put "\\x01bin" b',
                b"put \"it's\" q"]:
        t.type(cmd + b"\r")
    out = t.type(b"property ravel.num-imm\t\r")
    check("tab completes a property name", "\n0\nravel> " in out, out)
    out = t.type(b"property rocksdb.estimate-n\t\r")
    check("tab completes RocksDB's name of a property",
          "\n6\nravel> " in out, out)
    out = t.type(b"get zeb\t\r")
    check("tab completes a key", "\nz\nravel> " in out, out)
    out = t.type(b"get us\t2\r")
    check("tab completes the common prefix of keys",
          "\ntwo\nravel> " in out, out)
    out = t.type(b"get us\t\t", until="user:2")
    check("a second tab lists the keys", "user:1" in out and "user:2" in out,
          out)
    out = t.type(b"1\r")
    check("the line goes on after the list", "\none\nravel> " in out, out)
    out = t.type(b"get sp\t\r")
    check("a key with a blank is offered quoted", "\nsp\nravel> " in out,
          out)
    out = t.type(b'get "sp\t\r')
    check("a quoted prefix completes", "\nsp\nravel> " in out, out)
    out = t.type(b'get "\\x0\t\r')
    check("a binary key is offered escaped", "\nb\nravel> " in out, out)
    out = t.type(b"get 'it\t\r")
    check("a 'SQL string' completes in its quoting", "\nq\nravel> " in out,
          out)
    out = t.type(b"scan --prefix use\t\r")
    check("tab completes scan --prefix",
          "\nuser:1\tone\nuser:2\ttwo\nravel> " in out, out)
    out = t.type(b"scan --from user:\t2 --to zeb\t\r")
    check("tab completes scan --from and --to", "\nuser:2\ttwo\nravel> " in out,
          out)
    t.type(b"del zeb\t\r")
    out = t.type(b"get zeb\t\r")
    check("a deleted key is not offered", "\n(not found)\nravel> " in out,
          out)
    out = t.type(b"begin --opt\t\r")
    check("tab completes begin's options",
          out.endswith("ravel (txn optimistic)> "), out)
    t.type(b"put txnkey t\r")
    out = t.type(b"get --for\t txnk\t\r")
    check("tab completes get's --for-update, and keys the transaction "
          "wrote", "\nt\nravel (txn optimistic)> " in out, out)
    t.type(b"rollback\r")
    t.type(b".quit\r", until=None)
    code = t.wait()
    check("the session exits 0", code == 0, f"exit {code}\n{t.screen}")


def txn(ravel, tmp):
    db = os.path.join(tmp, "db")
    t = Term(ravel, db, tmp)
    t.read("ravel> $")
    out = t.type(b"begin\r")
    check("begin on a new directory says it creates the database",
          "note: begin: created the database" in out, out)
    check("the prompt shows the transaction", out.endswith("\nravel (txn)> "),
          out)
    t.type(b"put a 1\r")
    out = t.type(b"get a\r")
    check("a read sees the transaction's write", "\n1\nravel (txn)> " in out,
          out)
    out = t.type(b"savepoint\r")
    check("the prompt counts savepoints",
          out.endswith("\nravel (txn, 1 savepoint)> "), out)
    t.type(b"put a 2\r")
    out = t.type(b"rollback-to-savepoint\r")
    check("rollback-to-savepoint: the prompt again",
          out.endswith("\nravel (txn)> "), out)
    out = t.type(b"get a\r")
    check("rollback-to-savepoint undid the write after it",
          "\n1\nravel (txn)> " in out, out)
    out = t.type(b"commit\r")
    check("commit says so, the plain prompt",
          "committed" in out and out.endswith("\nravel> "), out)
    out = t.type(b"begin --optimistic\r")
    check("the prompt shows an optimistic transaction",
          out.endswith("\nravel (txn optimistic)> "), out)
    out = t.type(b"put b 2\r")
    out = t.type(b"batch\r")
    check("an error at the terminal leaves the transaction open",
          "error: batch: a transaction is open" in out and
          out.endswith("\nravel (txn optimistic)> "), out)
    out = t.type(b"\x04", until=None)
    code = t.wait()
    check("end of input rolls the transaction back, with a note",
          "the open transaction was rolled back (nothing written)" in t.screen,
          t.screen)
    check("exit 1 (one command failed)", code == 1, f"exit {code}\n{t.screen}")
    p = subprocess.run([ravel, db, "get a", "get b"], capture_output=True,
                       text=True, timeout=30)
    check("the committed write is there, the rolled back one is not",
          p.stdout == "1\n(not found)\n", p.stdout + p.stderr)

    # prepare: the prompt, and the end of the session leaves it prepared
    t = Term(ravel, db, tmp)
    t.read("ravel> $")
    t.type(b"begin\r")
    t.type(b"put c 3\r")
    out = t.type(b"prepare t1\r")
    if "not built yet" in out:
        print("note: the prepared prompt is not tested: two-phase commit is "
              "not built yet (ravel_txn_prepare refuses)")
        t.type(b"rollback\r")
        t.type(b".quit\r", until=None)
        t.wait()
        return
    check("the prompt shows the prepared transaction",
          "prepared 't1'" in out and out.endswith("\nravel (prepared t1)> "),
          out)
    t.type(b".quit\r", until=None)
    code = t.wait()
    check("a prepared transaction stays prepared at the end, and says so",
          "note: the transaction 't1' stays prepared" in t.screen and code == 0,
          f"exit {code}\n{t.screen}")


def main():
    ravel = os.path.abspath(sys.argv[1])
    which, have = sys.argv[2], sys.argv[3]
    global HAVE_LIBEDIT
    HAVE_LIBEDIT = have == "yes"
    if which in ("editing", "completion") and have != "yes":
        print("skipped: the shell was built without libedit "
              "(install libedit-dev and reconfigure)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="ravel-shell-pty-")
    try:
        {"basic": basic, "editing": editing, "completion": completion,
         "txn": txn}[which](ravel, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
