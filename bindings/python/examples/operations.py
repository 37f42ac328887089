"""Operating a live database: a checkpoint, backups (incremental and one
file), a follower applying the change feed, a bulk load, a reader that
catches up.  Runs in a fresh directory; prints what each step found."""
import os

import ravel

# wal_ttl_seconds keeps flushed WAL segments an hour for the change feed
with ravel.open("live.db", create_if_missing=True,
                wal_ttl_seconds=3600) as db:
    db.update({b"apple": b"red", b"banana": b"yellow"})

    # a reader (in another process in real life) beside the writer
    with ravel.open("live.db", read_only=True) as reader:
        db[b"cherry"] = b"dark red"
        print(reader.get(b"cherry"))        # not yet: catch up first
        reader.catch_up()
        print(reader.get(b"cherry"))

    # a checkpoint: a database of its own, opened as any other
    db.checkpoint("snapshot.db")
    with ravel.open("snapshot.db") as snap:
        print(sorted(snap.keys()))

    # incremental backups share their table files; restore one by id
    first = db.backup("backups")
    db[b"apple"] = b"green"
    second = db.backup("backups")
    print(ravel.backup_list("backups"), first, second)
    ravel.backup_verify("backups", second)
    ravel.backup_restore("backups", first, "restored.db")

    # a one-file backup, to a path (or a pipe: db.write_backup(fd))
    db.write_backup("live.backup")
    ravel.restore_backup("live.backup", "from-file.db")

    # the change feed, applied to a replica from the first sequence on
    with ravel.open("replica.db", create_if_missing=True) as replica:
        with db.updates_since(0) as feed:
            for batch in feed:
                replica.write(batch)
            resume_at = feed.last_sequence + 1
        print(dict(replica.items()) == dict(db.items()), resume_at)
    with ravel.open("short.db", create_if_missing=True) as short:
        short[b"k"] = b"v"
        short.flush()                        # no retention: the WAL is gone
        try:
            short.updates_since(1)
        except ravel.ExpiredError:           # start from a checkpoint
            print("sequence 1 expired")

    # a bulk load: a sorted table file written outside, then ingested
    with ravel.SstWriter("load.sst") as w:
        for i in range(3):
            w.put(b"fig%d" % i, b"purple")
    db.ingest(["load.sst"], move=True)
    print(db[b"fig2"], os.path.exists("load.sst"))

with ravel.open("restored.db") as old:
    print(old[b"apple"])
report = ravel.repair("from-file.db")       # a closed database
print(report.splitlines()[0])
