import ravel

with ravel.open("example.db", create_if_missing=True) as db:
    db[b"apple"] = b"red"
    with db.write_batch(sync=True) as batch:   # atomic, written at the end
        batch.put(b"banana", b"yellow")
        batch.delete(b"apple")
    with db.snapshot() as snap:
        db[b"cherry"] = b"dark red"
        print(list(snap.keys()))               # [b'banana']: cherry is later
    for key, value in db.items(start=b"b", stop=b"d"):
        print(key.decode(), value.decode())
    print(db.get(b"apple", b"(deleted)"))
