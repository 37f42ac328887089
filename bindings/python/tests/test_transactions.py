"""test_transactions.py -- Transaction, DB.transaction(), DB.transact()
and two-phase commit: reads see the transaction's own writes, commit and
rollback (and the with block's choice between them), conflicts between
two transactions, the retriable errors, savepoints, iterators, the
retrying helper with real threads incrementing one counter, and a
prepared transaction surviving a close and reopen."""
import threading

import pytest

import ravel


def test_reads_see_own_writes_and_commit_publishes(db):
    db[b"a"] = b"1"
    t = db.transaction()
    assert t.state == "open"
    t.put(b"b", b"2")
    t[b"c"] = b"3"
    t.delete(b"a")
    assert t.get(b"b") == b"2" and t[b"c"] == b"3"
    assert t.get(b"a") is None and b"a" not in t and b"b" in t
    assert t.get(b"a", b"gone") == b"gone"
    with pytest.raises(KeyError):
        t[b"a"]
    # others see nothing before the commit
    assert db.get(b"b") is None and db[b"a"] == b"1"
    t.commit()
    assert t.state == "committed"
    assert dict(db.items()) == {b"b": b"2", b"c": b"3"}
    with pytest.raises(ravel.InvalidArgumentError, match="committed"):
        t.get(b"b")


def test_snapshot_isolation(db):
    db[b"k"] = b"old"
    t = db.transaction()
    db[b"k"] = b"new"
    assert t.get(b"k") == b"old"     # as of its begin
    t.rollback()


def test_rollback_discards(db):
    t = db.transaction()
    t.put(b"x", b"1")
    t.rollback()
    assert t.state == "rolled back"
    assert db.get(b"x") is None
    t.close()                        # harmless after the end
    assert t.state == "rolled back"


def test_with_block_commits_or_rolls_back(db):
    with db.transaction() as t:
        t.put(b"kept", b"1")
    assert t.state == "committed" and db[b"kept"] == b"1"

    class Boom(Exception):
        pass
    with pytest.raises(Boom):
        with db.transaction() as t:
            t.put(b"dropped", b"1")
            raise Boom()
    assert t.state == "rolled back" and db.get(b"dropped") is None

    with db.transaction() as t:      # ended in the block: exit does nothing
        t.put(b"y", b"1")
        t.rollback()
    assert db.get(b"y") is None


def test_close_rolls_back_and_db_close_ends_open_ones(path):
    db = ravel.open(path, create_if_missing=True)
    t = db.transaction()
    t.put(b"a", b"1")
    t.close()
    assert t.state == "closed" and db.get(b"a") is None
    t2 = db.transaction()
    t2.put(b"b", b"1")
    it = t2.iterator()
    db.close()                       # rolls t2 back, closes its iterator
    assert t2.state == "closed" and it.closed
    with pytest.raises(ravel.InvalidArgumentError, match="closed"):
        t2.get(b"b")
    db = ravel.open(path)
    assert db.get(b"b") is None
    db.close()


def test_conflict_between_two_transactions(db):
    db[b"acct"] = b"100"
    t1 = db.transaction()
    t2 = db.transaction()
    assert t1.get_for_update(b"acct") == b"100"
    t1.put(b"acct", b"90")
    t1.commit()
    # t2's snapshot predates t1's commit: reading for update conflicts
    with pytest.raises(ravel.ConflictError) as info:
        t2.get_for_update(b"acct")
    e = info.value
    assert isinstance(e, ravel.RetriableError) and e.code == ravel.CONFLICT
    assert "acct" in e.message
    assert t2.state == "open"        # still open after a retriable error
    t2.rollback()
    assert db[b"acct"] == b"90"


def test_optimistic_conflict_at_commit(db):
    db[b"k"] = b"0"
    t = db.transaction(optimistic=True)
    assert t.get_for_update(b"k") == b"0"
    t.put(b"k", b"1")
    db[b"k"] = b"other"              # written after t's snapshot
    with pytest.raises(ravel.ConflictError):
        t.commit()
    assert t.state == "rolled back"
    assert db[b"k"] == b"other"


def test_lock_timeout_is_retriable_and_names_the_key(path):
    db = ravel.open(path, create_if_missing=True, txn_lock_timeout=50)
    t1 = db.transaction()
    t1.put(b"held", b"1")
    t2 = db.transaction()
    with pytest.raises(ravel.TimedOutError) as info:
        t2.put(b"held", b"2")
    assert isinstance(info.value, ravel.RetriableError)
    assert info.value.code == ravel.TIMEDOUT
    assert "held" in info.value.message
    t2.rollback()
    t1.commit()
    assert db[b"held"] == b"1"
    db.close()


def test_deadlock_fails_one_of_two(path):
    # a long lock timeout: the cycle, not a timeout, must end the wait
    db = ravel.open(path, create_if_missing=True, txn_lock_timeout=60000)
    both_locked = threading.Barrier(2)
    outcome = {}

    def run(name, first, second):
        t = db.transaction()
        t.put(first, name.encode())
        both_locked.wait()
        try:
            t.put(second, name.encode())
        except ravel.DeadlockError as e:
            outcome[name] = e
            t.rollback()
            return
        t.commit()
        outcome[name] = "committed"

    threads = [threading.Thread(target=run, args=("one", b"a", b"b")),
               threading.Thread(target=run, args=("two", b"b", b"a"))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    results = sorted(outcome.values(), key=str)
    assert len(results) == 2
    failed = [r for r in results if isinstance(r, ravel.DeadlockError)]
    assert len(failed) == 1 and "committed" in results
    assert isinstance(failed[0], ravel.RetriableError)
    assert failed[0].code == ravel.DEADLOCK
    winner = [n for n, r in outcome.items() if r == "committed"][0]
    assert db[b"a"] == db[b"b"] == winner.encode()
    db.close()


def test_error_classes():
    for cls, code in [(ravel.ConflictError, ravel.CONFLICT),
                      (ravel.TimedOutError, ravel.TIMEDOUT),
                      (ravel.DeadlockError, ravel.DEADLOCK)]:
        assert issubclass(cls, ravel.RetriableError)
        assert issubclass(cls, ravel.Error)
        assert cls.code == code
        assert ravel.errstr(code) != "unknown result code"
    assert (ravel.CONFLICT, ravel.TIMEDOUT, ravel.DEADLOCK) == (9, 10, 11)
    assert not issubclass(ravel.InvalidArgumentError, ravel.RetriableError)


def test_savepoints(db):
    t = db.transaction()
    t.put(b"a", b"1")
    t.savepoint()
    t.put(b"b", b"2")
    t.savepoint()
    t.put(b"c", b"3")
    t.rollback_to_savepoint()
    assert t.get(b"c") is None and t.get(b"b") == b"2"
    t.rollback_to_savepoint()
    assert t.get(b"b") is None and t.get(b"a") == b"1"
    with pytest.raises(ravel.NotFoundError):
        t.rollback_to_savepoint()
    t.commit()
    assert dict(db.items()) == {b"a": b"1"}


def test_iterators_see_own_writes(db):
    for k in (b"a", b"c", b"e"):
        db[k] = b"db"
    t = db.transaction()
    t.put(b"b", b"txn")
    t.put(b"c", b"txn")
    t.delete(b"e")
    db[b"d"] = b"later"              # after the snapshot: unseen
    assert list(t.items()) == [(b"a", b"db"), (b"b", b"txn"), (b"c", b"txn")]
    assert list(t.keys(reverse=True)) == [b"c", b"b", b"a"]
    assert list(t.keys(b"b", b"c")) == [b"b"]
    assert list(t.values(prefix=b"c")) == [b"txn"]
    assert list(t) == [b"a", b"b", b"c"]
    with t.iterator() as it:
        it.seek(b"b")
        assert it.item() == (b"b", b"txn")
        it.next()
        assert it.key() == b"c"
        it.next()
        assert not it.valid()
    it = t.iterator()
    it.seek_to_first()
    t.commit()                       # closes it
    assert it.closed
    with pytest.raises(ravel.InvalidArgumentError, match="transaction"):
        it.seek_to_first()


def test_transact_returns_and_commits(db):
    def body(t):
        t.put(b"k", b"v")
        return 42
    assert db.transact(body) == 42
    assert db[b"k"] == b"v"


def test_transact_propagates_other_exceptions_unchanged(db):
    runs = []

    class Boom(Exception):
        pass
    boom = Boom("no")

    def body(t):
        runs.append(1)
        t.put(b"k", b"v")
        raise boom
    with pytest.raises(Boom) as info:
        db.transact(body)
    assert info.value is boom and len(runs) == 1   # not retried
    assert db.get(b"k") is None                    # rolled back


def test_transact_retries_retriable_then_gives_up(db):
    db[b"k"] = b"0"
    runs = []

    def always_conflicts(t):
        runs.append(1)
        t.get(b"k")
        db[b"k"] = str(len(runs)).encode()   # someone else writes it
        t.get_for_update(b"k")               # ConflictError
    with pytest.raises(ravel.ConflictError):
        db.transact(always_conflicts, max_attempts=3)
    assert len(runs) == 3

    runs.clear()

    def conflicts_once(t):
        runs.append(1)
        if len(runs) == 1:
            db[b"k"] = b"x"
        t.put(b"k", t.get_for_update(b"k") + b"!")
        return len(runs)
    assert db.transact(conflicts_once) == 2
    assert db[b"k"] == b"x!"


def test_transaction_is_not_usable_after_transact(db):
    kept = []
    db.transact(lambda t: kept.append(t))
    with pytest.raises(ravel.InvalidArgumentError, match="transact"):
        kept[0].get(b"k")

    def commits_itself(t):
        t.commit()
    with pytest.raises(ravel.InvalidArgumentError, match="transact"):
        db.transact(commits_itself)
    with pytest.raises(ravel.InvalidArgumentError):
        db.transact(lambda t: None, max_attempts=0)


@pytest.mark.parametrize("optimistic", [False, True])
def test_transact_counter_from_threads(path, optimistic):
    """Threads increment one counter through transact(): no increment is
    lost, whatever the interleaving (get_for_update makes a concurrent
    change a conflict, which transact retries)."""
    db = ravel.open(path, create_if_missing=True)
    threads, per_thread = 4, 50
    errors = []

    def increment(t):
        n = int(t.get_for_update(b"counter", b"0"))
        t.put(b"counter", str(n + 1).encode())

    def worker():
        try:
            for _ in range(per_thread):
                db.transact(increment, optimistic=optimistic,
                            max_attempts=1000)
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert int(db[b"counter"]) == threads * per_thread
    db.close()


def test_one_thread_at_a_time(path):
    """While one thread's call waits inside ravel (for a lock), another
    thread's call on the same transaction is refused, not run at once."""
    db = ravel.open(path, create_if_missing=True, txn_lock_timeout=60000)
    holder = db.transaction()
    holder.put(b"k", b"holder")
    t = db.transaction()
    failures = []

    def put():
        while True:
            try:
                t.put(b"k", b"t")           # waits for the lock
                return
            except ravel.InvalidArgumentError as e:
                if "another thread" not in e.message:
                    failures.append(e)
                    return
                # refused while the loop below was in a call: again
            except Exception as e:  # checked below
                failures.append(e)
                return
    waiting = threading.Thread(target=put)
    waiting.start()
    refused = None
    for _ in range(300000):          # until the put is waiting in ravel
        try:
            t.get(b"other")
        except ravel.InvalidArgumentError as e:
            refused = e
            break
    holder.rollback()                # lets the put through
    waiting.join()
    assert failures == []
    assert refused is not None and "another thread" in refused.message
    t.commit()
    assert db[b"k"] == b"t"
    db.close()


def test_two_phase_commit_survives_reopen(path):
    db = ravel.open(path, create_if_missing=True)
    t = db.transaction(sync=True)
    t.set_name("xfer-1")
    assert t.name == "xfer-1"
    t.put(b"acct", b"prepared value")
    t.prepare()
    assert t.state == "prepared"
    assert db.get(b"acct") is None           # invisible until commit
    assert t.get(b"acct") == b"prepared value"
    with pytest.raises(ravel.InvalidArgumentError):
        t.put(b"more", b"x")                  # no writes after prepare
    t.close()                                 # stays prepared
    assert t.state == "closed"
    t2 = db.transaction(sync=True)
    t2.set_name("xfer-2")
    t2.put(b"other", b"rolled back later")
    t2.prepare()                              # left to DB.close()
    assert sorted(db.prepared_transactions()) == ["xfer-1", "xfer-2"]
    db.close()
    assert t2.state == "closed"

    db = ravel.open(path)
    assert sorted(db.prepared_transactions()) == ["xfer-1", "xfer-2"]
    assert db.get(b"acct") is None and db.get(b"other") is None
    with pytest.raises(ravel.NotFoundError):
        db.recover_transaction("no-such")
    r = db.recover_transaction("xfer-1")
    assert r.name == "xfer-1" and r.state == "prepared"
    r.commit()
    assert r.state == "committed"
    assert db[b"acct"] == b"prepared value"
    r2 = db.recover_transaction("xfer-2")
    r2.rollback()
    assert r2.state == "rolled back"
    assert db.get(b"other") is None
    assert db.prepared_transactions() == []
    db.close()
    db = ravel.open(path)                     # and so after another reopen
    assert db.prepared_transactions() == []
    assert db[b"acct"] == b"prepared value" and db.get(b"other") is None
    db.close()


def test_set_name_checks(db):
    t = db.transaction()
    with pytest.raises(TypeError):
        t.set_name(b"bytes")
    with pytest.raises(ravel.InvalidArgumentError):
        t.set_name("nul\0inside")
    with pytest.raises(ravel.InvalidArgumentError):
        t.set_name("")
    t.set_name("ok")
    assert t.name == "ok"
    with pytest.raises(ravel.InvalidArgumentError):
        t.set_name("again")
    t.rollback()
