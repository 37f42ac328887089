package ravel_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// Operating a live database: a reader that catches up, a checkpoint,
// backups (incremental and one file), a follower applying the change
// feed, a bulk load, a repair.
func Example_operations() {
	base, _ := os.MkdirTemp("", "ravel-example-ops")
	defer os.RemoveAll(base)
	at := func(name string) string { return filepath.Join(base, name) }
	open := func(name, settings string) *ravel.DB {
		var opts ravel.Options
		opts.Parse(settings)
		db, err := ravel.Open(at(name), &opts)
		if err != nil {
			log.Fatal(err)
		}
		return db
	}
	// wal_ttl_seconds keeps flushed WAL segments an hour for the feed
	db := open("live", "create_if_missing=true;wal_ttl_seconds=3600")
	defer db.Close()
	db.Put([]byte("apple"), []byte("red"))

	// a reader (in another process in real life) beside the writer
	reader := open("live", "read_only=true")
	db.Put([]byte("cherry"), []byte("dark red"))
	_, err := reader.Get([]byte("cherry"))
	fmt.Println(errors.Is(err, ravel.ErrNotFound)) // not yet
	reader.CatchUp()
	v, _ := reader.Get([]byte("cherry"))
	fmt.Printf("%s\n", v)
	reader.Close()

	// a checkpoint, and backups: incremental ones and one file
	if err := db.Checkpoint(at("snapshot")); err != nil {
		log.Fatal(err)
	}
	first, _ := db.Backup(at("backups"))
	db.Put([]byte("apple"), []byte("green"))
	second, _ := db.Backup(at("backups"))
	infos, _ := ravel.Backups(at("backups"))
	fmt.Println(len(infos), first, second, ravel.BackupVerify(at("backups"), second))
	ravel.BackupRestore(at("backups"), first, at("restored"))
	f, _ := os.Create(at("live.backup")) // any io.Writer: a pipe, ssh ...
	db.WriteBackup(f)
	f.Close()
	f, _ = os.Open(at("live.backup"))
	fmt.Println(ravel.RestoreBackup(f, at("from-file")))
	f.Close()

	// the change feed, applied to a replica
	replica := open("replica", "create_if_missing=true")
	defer replica.Close()
	feed, _ := db.UpdatesSince(0)
	for feed.Next() {
		b := feed.Batch()
		replica.Write(b)
		b.Close()
	}
	fmt.Println(feed.Err(), feed.LastSequence()+1) // caught up; resume there
	feed.Close()
	short := open("short", "create_if_missing=true") // no retention
	short.Put([]byte("k"), []byte("v"))
	short.Flush() // its WAL is gone: a follower starts from a checkpoint
	_, err = short.UpdatesSince(1)
	fmt.Println(errors.Is(err, ravel.ErrExpired))
	short.Close()

	// a bulk load: a sorted table file written outside, then ingested
	w, _ := ravel.NewSSTWriter(at("load.sst"), nil)
	w.Put([]byte("fig"), []byte("purple"))
	w.Finish()
	db.Ingest([]string{at("load.sst")}, ravel.IngestMove)
	v, _ = db.Get([]byte("fig"))
	fmt.Printf("%s\n", v)

	// a closed database's repair
	report, err := ravel.Repair(at("from-file"), nil)
	fmt.Println(err, len(report.Lost()))
	// Output:
	// true
	// dark red
	// 2 1 2 <nil>
	// <nil>
	// <nil> 4
	// true
	// purple
	// <nil> 0
}
