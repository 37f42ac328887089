// ops_test.go -- operating a live database (issue 22) from Go: a reader
// in another process (this test binary run again as a helper) catching up
// with a writer, checkpoints, incremental and one-file backups (through a
// pipe into another process and through plain io.Writer / io.Reader),
// the change feed applied into a second database under concurrent
// writers, ErrExpired, batches as bytes, bulk ingest and repair.

package ravel_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// The helper processes: this binary run with RAVEL_GO_HELPER set runs
// one of them instead of the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("RAVEL_GO_HELPER") {
	case "":
		os.Exit(m.Run())
	case "reader":
		os.Exit(helperReader(os.Getenv("RAVEL_GO_DIR")))
	case "restore":
		os.Exit(helperRestore(os.Getenv("RAVEL_GO_DIR")))
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(2)
	}
}

// helperReader opens dir read-only beside its writer, prints what it
// sees, waits for a line on stdin, catches up and prints again.
func helperReader(dir string) int {
	var opts ravel.Options
	if err := opts.Set("read_only", "true"); err != nil {
		fmt.Println(err)
		return 1
	}
	db, err := ravel.Open(dir, &opts)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer db.Close()
	show := func() {
		v, err := db.Get([]byte("after"))
		fmt.Printf("%q %v\n", v, errors.Is(err, ravel.ErrNotFound))
	}
	show()
	bufio.NewReader(os.Stdin).ReadString('\n')
	show()
	if err := db.CatchUp(); err != nil {
		fmt.Println(err)
		return 1
	}
	show()
	err = db.Put([]byte("x"), []byte("y"))
	fmt.Println(errors.Is(err, ravel.ErrReadOnly))
	return 0
}

// helperRestore restores the one-file backup on stdin into dir and
// prints how many keys it holds.
func helperRestore(dir string) int {
	if err := ravel.RestoreBackup(os.Stdin, dir); err != nil {
		fmt.Println(err)
		return 1
	}
	db, err := ravel.Open(dir, nil)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer db.Close()
	fmt.Println(countKeys(db))
	return 0
}

func countKeys(db *ravel.DB) int {
	it, err := db.NewIterator(nil)
	if err != nil {
		panic(err)
	}
	defer it.Close()
	n := 0
	for it.SeekToFirst(); it.Valid(); it.Next() {
		n++
	}
	return n
}

func fill(t testing.TB, db *ravel.DB, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		mustPut(t, db, fmt.Sprintf("k%05d", i), fmt.Sprintf("v%d", i))
	}
}

func helper(t *testing.T, name, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RAVEL_GO_HELPER="+name, "RAVEL_GO_DIR="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestReaderInAnotherProcessCatchesUp(t *testing.T) {
	db, dir := openFresh(t, "")
	if err := db.Put([]byte("before"), []byte("1"), ravel.Sync); err != nil {
		t.Fatal(err)
	}
	cmd := helper(t, "reader", dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	line := func() string {
		s, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("reader's output: %v", err)
		}
		return strings.TrimSpace(s)
	}
	if got := line(); got != `"" true` {
		t.Fatalf("before the write: %s", got)
	}
	if err := db.Put([]byte("after"), []byte("2"), ravel.Sync); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "go\n")
	if got := line(); got != `"" true` {
		t.Fatalf("before the catch-up: %s", got)
	}
	if got := line(); got != `"2" false` {
		t.Fatalf("after the catch-up: %s", got)
	}
	if got := line(); got != "true" {
		t.Fatalf("a reader's write: %s", got)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := db.CatchUp(); err != nil { // a writer: nothing to do
		t.Fatal(err)
	}
}

func TestReaderCatchesUpByItself(t *testing.T) {
	db, dir := openFresh(t, "")
	reader := openAt(t, dir, "read_only=true;catch_up_interval_ms=5")
	mustPut(t, db, "k", "v")
	deadline := time.Now().Add(2 * time.Minute) // a bound, not a timing claim
	for {
		if _, err := reader.Get([]byte("k")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader never caught up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	lag, err := reader.Property("ravel.reader-lag")
	if err != nil || !strings.Contains(lag, "interval_ms=5") {
		t.Fatalf("reader-lag: %q, %v", lag, err)
	}
}

func TestCheckpoint(t *testing.T) {
	db, dir := openFresh(t, "write_buffer_size=64K")
	fill(t, db, 2000)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "tail", "in the WAL")
	cp := filepath.Join(filepath.Dir(dir), "cp")
	if err := db.Checkpoint(cp); err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "later", "not in it")
	wantError(t, db.Checkpoint(cp), ravel.ErrInvalid)
	c := openAt(t, cp, "")
	if mustGet(t, c, "tail") != "in the WAL" || mustGet(t, c, "k01999") != "v1999" {
		t.Fatal("the checkpoint lacks acknowledged writes")
	}
	if _, err := c.Get([]byte("later")); !errors.Is(err, ravel.ErrNotFound) {
		t.Fatalf("a write after the checkpoint is in it: %v", err)
	}
	if n := countKeys(c); n != 2001 {
		t.Fatalf("the checkpoint holds %d keys, want 2001", n)
	}
}

func TestIncrementalBackups(t *testing.T) {
	db, dir := openFresh(t, "")
	root := filepath.Join(t.TempDir(), "backups")
	fill(t, db, 1000)
	db.Flush()
	if id, err := db.Backup(root); err != nil || id != 1 {
		t.Fatalf("first backup: %d, %v", id, err)
	}
	mustPut(t, db, "k00000", "changed")
	if id, err := db.Backup(root); err != nil || id != 2 {
		t.Fatalf("second backup: %d, %v", id, err)
	}
	list, err := ravel.Backups(root)
	if err != nil || len(list) != 2 || list[0].ID != 1 || list[1].ID != 2 {
		t.Fatalf("backups: %+v, %v", list, err)
	}
	if b := list[1]; b.Copied >= b.Bytes || b.Sequence != 1001 || b.Files == 0 ||
		b.Time.IsZero() {
		t.Fatalf("the second backup: %+v", b)
	}
	if err := ravel.BackupVerify(root, 1); err != nil {
		t.Fatal(err)
	}
	base := filepath.Dir(dir)
	if err := ravel.BackupRestore(root, 1, filepath.Join(base, "r1")); err != nil {
		t.Fatal(err)
	}
	if err := ravel.BackupRestore(root, 0, filepath.Join(base, "newest")); err != nil {
		t.Fatal(err)
	}
	if v := mustGet(t, openAt(t, filepath.Join(base, "r1"), ""), "k00000"); v != "v0" {
		t.Fatalf("backup 1 restored %q", v)
	}
	if v := mustGet(t, openAt(t, filepath.Join(base, "newest"), ""), "k00000"); v != "changed" {
		t.Fatalf("the newest backup restored %q", v)
	}
	if err := ravel.BackupPurge(root, 1); err != nil {
		t.Fatal(err)
	}
	if list, _ := ravel.Backups(root); len(list) != 1 || list[0].ID != 2 {
		t.Fatalf("after purge: %+v", list)
	}
	wantError(t, ravel.BackupVerify(root, 1), ravel.ErrNotFound)
	wantError(t, ravel.BackupPurge(root, 0), ravel.ErrInvalid)
	_, err = ravel.Backups(filepath.Join(base, "nothing"))
	wantError(t, err, ravel.ErrNotFound)
}

func TestBackupsFromAReaderHandle(t *testing.T) {
	db, dir := openFresh(t, "write_buffer_size=64K")
	fill(t, db, 3000)
	mustPut(t, db, "last", "acknowledged")
	reader := openAt(t, dir, "read_only=true")
	base := filepath.Dir(dir)
	if err := reader.Checkpoint(filepath.Join(base, "cp")); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Backup(filepath.Join(base, "root")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := reader.WriteBackup(&buf); err != nil {
		t.Fatal(err)
	}
	if err := ravel.RestoreBackup(&buf, filepath.Join(base, "piped")); err != nil {
		t.Fatal(err)
	}
	if err := ravel.BackupRestore(filepath.Join(base, "root"), 1, filepath.Join(base, "restored")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cp", "restored", "piped"} {
		c := openAt(t, filepath.Join(base, name), "")
		if mustGet(t, c, "last") != "acknowledged" || countKeys(c) != 3001 {
			t.Fatalf("%s lacks acknowledged writes", name)
		}
	}
}

func TestDamagedBackupIsRefused(t *testing.T) {
	db, dir := openFresh(t, "")
	root := filepath.Join(t.TempDir(), "backups")
	fill(t, db, 500)
	db.Flush()
	if _, err := db.Backup(root); err != nil {
		t.Fatal(err)
	}
	var tables []string
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
		if strings.HasSuffix(p, ".sst") {
			tables = append(tables, p)
		}
		return nil
	})
	if len(tables) == 0 {
		t.Fatal("no table file in the backup")
	}
	data, _ := os.ReadFile(tables[0])
	data[100] ^= 0xff
	os.WriteFile(tables[0], data, 0o644)
	wantError(t, ravel.BackupVerify(root, 1), ravel.ErrCorrupt)
	target := filepath.Join(filepath.Dir(dir), "r")
	wantError(t, ravel.BackupRestore(root, 1, target), ravel.ErrCorrupt)
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a refused restore left %s", target)
	}
}

func TestOneFileBackups(t *testing.T) {
	db, dir := openFresh(t, "")
	fill(t, db, 300)
	base := filepath.Dir(dir)

	// through a pipe into another process
	cmd := helper(t, "restore", filepath.Join(base, "piped"))
	stdin, _ := cmd.StdinPipe()
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteBackup(stdin.(*os.File)); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil || strings.TrimSpace(out.String()) != "300" {
		t.Fatalf("restore in another process: %v, %q", err, out.String())
	}

	// through any io.Writer and io.Reader
	var buf bytes.Buffer
	if err := db.WriteBackup(&buf); err != nil {
		t.Fatal(err)
	}
	if err := ravel.RestoreBackup(bytes.NewReader(buf.Bytes()), filepath.Join(base, "mem")); err != nil {
		t.Fatal(err)
	}
	if v := mustGet(t, openAt(t, filepath.Join(base, "mem"), ""), "k00299"); v != "v299" {
		t.Fatalf("restored %q", v)
	}
	half := filepath.Join(base, "half")
	err := ravel.RestoreBackup(bytes.NewReader(buf.Bytes()[:buf.Len()/2]), half)
	wantError(t, err, ravel.ErrCorrupt)
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Fatal("a refused restore left its directory")
	}

	// to and from a path
	file := filepath.Join(base, "db.backup")
	if err := db.WriteBackupFile(file); err != nil {
		t.Fatal(err)
	}
	if err := ravel.RestoreBackupFile(file, filepath.Join(base, "fromfile")); err != nil {
		t.Fatal(err)
	}
	if n := countKeys(openAt(t, filepath.Join(base, "fromfile"), "")); n != 300 {
		t.Fatalf("restored %d keys", n)
	}
}

func TestBatchOpsAndData(t *testing.T) {
	b := ravel.NewBatch()
	defer b.Close()
	b.Put([]byte("a"), []byte("1"))
	b.Delete([]byte("b"))
	b.Put([]byte("c"), nil)
	want := []ravel.Op{{ravel.OpPut, []byte("a"), []byte("1")},
		{ravel.OpDelete, []byte("b"), nil}, {ravel.OpPut, []byte("c"), []byte{}}}
	check := func(b *ravel.Batch) {
		ops, err := b.Ops()
		if err != nil || fmt.Sprint(ops) != fmt.Sprint(want) {
			t.Fatalf("ops: %v, %v", ops, err)
		}
	}
	check(b)
	if b.Sequence() != 0 {
		t.Fatal("a batch never written has a sequence")
	}
	c, err := ravel.BatchFromData(b.Data())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	check(c)
	_, err = ravel.BatchFromData(b.Data()[:len(b.Data())-1])
	wantError(t, err, ravel.ErrCorrupt)
}

func TestFollowerReplicatesUnderConcurrentWriters(t *testing.T) {
	src, _ := openFresh(t, "write_buffer_size=64K")
	dst, _ := openFresh(t, "")
	const writers, perWriter = 4, 300
	var wg sync.WaitGroup
	var running sync.WaitGroup
	running.Add(writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer running.Done()
			b := ravel.NewBatch()
			defer b.Close()
			for i := 0; i < perWriter; i++ {
				b.Clear()
				b.Put([]byte(fmt.Sprintf("w%d-%04d", w, i)), []byte(fmt.Sprint(i)))
				if i%3 == 0 {
					b.Delete([]byte(fmt.Sprintf("w%d-%04d", w, i/2)))
				}
				if err := src.Write(b); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { running.Wait(); close(done) }()
	u, err := src.UpdatesSince(0)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	applied, next := 0, uint64(0)
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true // this pass reads the rest
		default:
		}
		for u.Next() {
			b := u.Batch()
			if next != 0 && b.Sequence() != next {
				t.Fatalf("batch at %d, want %d", b.Sequence(), next)
			}
			next = b.Sequence() + uint64(b.Count())
			if err := dst.Write(b); err != nil {
				t.Fatal(err)
			}
			b.Close()
			applied++
		}
		if err := u.Err(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if applied != writers*perWriter || u.LastSequence() != next-1 {
		t.Fatalf("applied %d batches up to %d, want %d up to %d", applied,
			u.LastSequence(), writers*perWriter, next-1)
	}
	if a, b := dump(t, src), dump(t, dst); a != b {
		t.Fatal("the replica differs from its source")
	}
}

func dump(t *testing.T, db *ravel.DB) string {
	it, err := db.NewIterator(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var b strings.Builder
	for e, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%q=%q\n", e.Key, e.Value)
	}
	return b.String()
}

func TestFeedExpiredAndRetention(t *testing.T) {
	db, _ := openFresh(t, "")
	fill(t, db, 100)
	db.Flush() // the WAL holding 1..100 is deleted
	mustPut(t, db, "after", "x")
	_, err := db.UpdatesSince(1)
	wantError(t, err, ravel.ErrExpired)
	u, err := db.UpdatesSince(101)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Next() || u.Sequence() != 101 || u.Next() || u.Err() != nil {
		t.Fatalf("from 101: %d, %v", u.Sequence(), u.Err())
	}
	wantError(t, db.Close(), ravel.ErrInvalid) // the feed is open
	u.Close()

	kept, _ := openFresh(t, "wal_ttl_seconds=3600")
	fill(t, kept, 100)
	kept.Flush()
	u, err = kept.UpdatesSince(1)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	n := 0
	for u.Next() {
		n++
	}
	if n != 100 || u.Err() != nil {
		t.Fatalf("the archive kept %d batches (%v), want 100", n, u.Err())
	}
}

func TestIngest(t *testing.T) {
	db, dir := openFresh(t, "")
	sst := filepath.Join(filepath.Dir(dir), "load.sst")
	w, err := ravel.NewSSTWriter(sst, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if err := w.Put([]byte(fmt.Sprintf("i%05d", i)), []byte(fmt.Sprint("ingested ", i))); err != nil {
			t.Fatal(err)
		}
	}
	w.Delete([]byte("z-gone"))
	if n, err := w.Finish(); err != nil || n != 1001 {
		t.Fatalf("finish: %d, %v", n, err)
	}
	mustPut(t, db, "i00005", "old")
	mustPut(t, db, "z-gone", "old")
	if err := db.Ingest([]string{sst}, ravel.IngestMove); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sst); !os.IsNotExist(err) {
		t.Fatal("IngestMove left the source file")
	}
	if v := mustGet(t, db, "i00005"); v != "ingested 5" {
		t.Fatalf("got %q", v)
	}
	if _, err := db.Get([]byte("z-gone")); !errors.Is(err, ravel.ErrNotFound) {
		t.Fatal("the ingested delete did not hide the key")
	}
	wantError(t, db.Ingest(nil), ravel.ErrInvalid)
	wantError(t, db.Ingest([]string{sst}), ravel.ErrNotFound)

	bad := filepath.Join(filepath.Dir(dir), "bad.sst")
	w, _ = ravel.NewSSTWriter(bad, nil)
	w.Put([]byte("b"), nil)
	wantError(t, w.Put([]byte("a"), nil), ravel.ErrInvalid)
	w.Close()
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatal("an abandoned writer left its file")
	}
}

func TestRepair(t *testing.T) {
	db, dir := openFresh(t, "")
	fill(t, db, 500)
	db.Flush()
	if err := db.Put([]byte("in-wal"), []byte("yes"), ravel.Sync); err != nil {
		t.Fatal(err)
	}
	_, err := ravel.Repair(dir, nil)
	wantError(t, err, ravel.ErrLocked)
	db.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	for _, n := range append(names, filepath.Join(dir, "CURRENT")) {
		os.Remove(n)
	}
	report, err := ravel.Repair(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, l := range report.Lines {
		kept = kept || l.Kind == ravel.RepairKept
	}
	if !kept || report.String() == "" {
		t.Fatalf("the report says nothing was kept:\n%s", report)
	}
	if lost, _ := filepath.Glob(filepath.Join(dir, "lost-repair-*")); len(lost) == 0 {
		t.Fatal("the original files were not moved aside")
	}
	r := openAt(t, dir, "")
	if mustGet(t, r, "k00499") != "v499" || mustGet(t, r, "in-wal") != "yes" {
		t.Fatal("repair lost data")
	}
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("the destination is full")
	}
	w.n -= len(p)
	return len(p), nil
}

// failingReader yields n bytes of r, then fails.
type failingReader struct {
	r io.Reader
	n int
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("the source broke")
	}
	if len(p) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

// A writer or reader that fails midway fails the backup or the restore
// (never a hang, never a restored directory).
func TestOneFileBackupThroughFailingStreams(t *testing.T) {
	db, dir := openFresh(t, "")
	fill(t, db, 3000)
	err := db.WriteBackup(&failingWriter{n: 4096})
	wantError(t, err, ravel.ErrIO)

	var buf bytes.Buffer
	if err := db.WriteBackup(&buf); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(filepath.Dir(dir), "broken")
	err = ravel.RestoreBackup(&failingReader{r: bytes.NewReader(buf.Bytes()), n: buf.Len() / 2}, target)
	wantError(t, err, ravel.ErrIO, "the source broke")
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("a failed restore left its directory")
	}
}
