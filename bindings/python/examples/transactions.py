import threading

import ravel

with ravel.open("bank.db", create_if_missing=True) as db:
    db.update({b"alice": b"100", b"bob": b"0"})

    # commits when the block ends, rolls back if it raises
    with db.transaction() as t:
        alice = int(t.get_for_update(b"alice"))   # locked until the end
        t.put(b"alice", str(alice - 30).encode())
        t.put(b"bob", str(int(t[b"bob"]) + 30).encode())
        print(list(t.items()))                     # its own writes
    print(db[b"alice"], db[b"bob"])

    # run again on ConflictError, TimedOutError, DeadlockError
    def increment(t):
        n = int(t.get_for_update(b"visits", b"0"))
        t.put(b"visits", str(n + 1).encode())

    def worker():
        for _ in range(100):
            db.transact(increment, max_attempts=100)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    print(db[b"visits"])                           # no increment lost
