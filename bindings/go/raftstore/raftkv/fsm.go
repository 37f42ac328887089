// fsm.go -- the replicated state machine: the key-value map in the node's
// ravel database, applied one raft entry per ravel batch, snapshotted
// through a consistent ravel snapshot and restored in one batch.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync/atomic"

	"github.com/hashicorp/raft"
	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// Key layout of the state machine, beside raftstore's "raft/" prefix.
var (
	kvPrefix      = []byte("kv/")        // the user's keys
	addrPrefix    = []byte("meta/http/") // a server ID's HTTP address
	appliedKey    = []byte("meta/applied")
	stateSpans    = [][]byte{kvPrefix, addrPrefix} // what a snapshot carries
	snapshotMagic = []byte("raftkv-snapshot-1\n")
)

// command is one raft log entry's data.
type command struct {
	Op           string `json:"op"` // put, delete, cas, addr
	Key          string `json:"key"`
	Value        string `json:"value,omitempty"`
	Expect       string `json:"expect,omitempty"`        // cas: the value expected
	ExpectAbsent bool   `json:"expect_absent,omitempty"` // cas: expect no value
}

// applyResult is what Apply returns to the leader's raft.Apply caller.
type applyResult struct {
	Swapped bool // cas: the condition held and the value was written
}

// kvFSM is a raft.FSM on a ravel database.  Apply, Snapshot and Restore
// are called by raft's FSM goroutine one at a time; applied is also read
// by the HTTP handlers (atomic).
type kvFSM struct {
	db       *ravel.DB
	applied  atomic.Uint64 // index of the last entry in the database
	restores atomic.Uint64 // snapshots that replaced the state (for tests)
}

func newFSM(db *ravel.DB) (*kvFSM, error) {
	f := &kvFSM{db: db}
	v, err := db.Get(appliedKey)
	switch {
	case errors.Is(err, ravel.ErrNotFound):
	case err != nil:
		return nil, err
	case len(v) != 8:
		return nil, fmt.Errorf("raftkv: %s has %d bytes, not 8", appliedKey, len(v))
	default:
		f.applied.Store(binary.BigEndian.Uint64(v))
	}
	return f, nil
}

func userKey(k string) []byte { return append(append([]byte{}, kvPrefix...), k...) }

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// get reads a user key from the local state.
func (f *kvFSM) get(key string) (string, bool, error) {
	v, err := f.db.Get(userKey(key))
	if errors.Is(err, ravel.ErrNotFound) {
		return "", false, nil
	}
	return string(v), err == nil, err
}

// Apply writes the entry's effect and its index in one batch: after a
// crash both are there or neither, so an entry is never applied twice.
// An entry at or below the applied index (raft replaying its log after a
// restart) is skipped.
func (f *kvFSM) Apply(l *raft.Log) interface{} {
	if l.Index <= f.applied.Load() {
		return applyResult{}
	}
	var c command
	if err := json.Unmarshal(l.Data, &c); err != nil {
		panic(fmt.Sprintf("raftkv: entry %d does not decode: %v", l.Index, err))
	}
	b := ravel.NewBatch()
	defer b.Close()
	res := applyResult{}
	var err error
	switch c.Op {
	case "put":
		err = b.Put(userKey(c.Key), []byte(c.Value))
	case "delete":
		err = b.Delete(userKey(c.Key))
	case "cas":
		cur, ok, gerr := f.get(c.Key)
		if gerr != nil {
			panic(fmt.Sprintf("raftkv: entry %d: %v", l.Index, gerr))
		}
		if (c.ExpectAbsent && !ok) || (!c.ExpectAbsent && ok && cur == c.Expect) {
			res.Swapped = true
			err = b.Put(userKey(c.Key), []byte(c.Value))
		}
	case "addr":
		err = b.Put(append(append([]byte{}, addrPrefix...), c.Key...), []byte(c.Value))
	default:
		panic(fmt.Sprintf("raftkv: entry %d has unknown op %q", l.Index, c.Op))
	}
	if err == nil {
		err = b.Put(appliedKey, u64(l.Index))
	}
	if err == nil {
		err = f.db.Write(b)
	}
	if err != nil {
		// the state machine cannot go on without this entry
		panic(fmt.Sprintf("raftkv: applying entry %d: %v", l.Index, err))
	}
	f.applied.Store(l.Index)
	return res
}

// Snapshot takes a ravel snapshot (a consistent view, no copy) on the FSM
// goroutine; Persist streams it later while Apply goes on.
func (f *kvFSM) Snapshot() (raft.FSMSnapshot, error) {
	s, err := f.db.NewSnapshot()
	if err != nil {
		return nil, err
	}
	return &kvSnapshot{db: f.db, snap: s, applied: f.applied.Load()}, nil
}

type kvSnapshot struct {
	db      *ravel.DB
	snap    *ravel.Snapshot
	applied uint64
}

// Persist writes: the magic line, the applied index (8 bytes big-endian),
// then records (byte 1, uvarint key length, key, uvarint value length,
// value), then byte 0 and the CRC-32C of everything before it.
func (s *kvSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *kvSnapshot) write(sink io.Writer) error {
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	w := bufio.NewWriterSize(io.MultiWriter(sink, crc), 1<<16)
	w.Write(snapshotMagic)
	w.Write(u64(s.applied))
	for _, prefix := range stateSpans {
		it, err := s.db.NewIterator(&ravel.IterOptions{Snapshot: s.snap,
			Start: prefix, Stop: prefixEnd(prefix)})
		if err != nil {
			return err
		}
		for e, err := range it.All() {
			if err != nil {
				it.Close()
				return err
			}
			w.WriteByte(1)
			w.Write(binary.AppendUvarint(nil, uint64(len(e.Key))))
			w.Write(e.Key)
			w.Write(binary.AppendUvarint(nil, uint64(len(e.Value))))
			w.Write(e.Value)
		}
		it.Close()
	}
	w.WriteByte(0)
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := sink.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

func (s *kvSnapshot) Release() { s.snap.Close() }

// prefixEnd is the first key after every key starting with prefix.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte{}, prefix...)
	end[len(end)-1]++ // the prefixes end in '/', never 0xff
	return end
}

// snapshotRecord is one key of a snapshot being restored.
type snapshotRecord struct{ key, value []byte }

// Restore replaces the state machine with the snapshot's.  The whole
// snapshot is read and checked (CRC) first; then one batch, written with
// RAVEL_SYNC, deletes every key of the old state, puts every key of the
// new one and the snapshot's applied index: a crash during the restore
// leaves the old state whole or the new one whole, never a mixture.  A
// snapshot no newer than the local state (raft restoring its latest local
// snapshot at start, when Apply had already gone beyond it) is skipped:
// both are prefixes of the same committed log, the local one the longer.
func (f *kvFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	applied, records, err := readSnapshot(rc)
	if err != nil {
		return err
	}
	if applied <= f.applied.Load() {
		return nil
	}
	b := ravel.NewBatch()
	defer b.Close()
	for _, prefix := range stateSpans {
		it, err := f.db.NewIterator(&ravel.IterOptions{Start: prefix, Stop: prefixEnd(prefix)})
		if err != nil {
			return err
		}
		for e, err := range it.All() {
			if err == nil {
				err = b.Delete(e.Key)
			}
			if err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
	}
	for _, r := range records {
		if err := b.Put(r.key, r.value); err != nil {
			return err
		}
	}
	if err := b.Put(appliedKey, u64(applied)); err != nil {
		return err
	}
	if err := f.db.Write(b, ravel.Sync); err != nil {
		return err
	}
	f.applied.Store(applied)
	f.restores.Add(1)
	return nil
}

// readSnapshot decodes and checks a whole snapshot stream.
func readSnapshot(r io.Reader) (uint64, []snapshotRecord, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, nil, err
	}
	bad := func(what string) error { return fmt.Errorf("raftkv: snapshot: %s", what) }
	if len(data) < len(snapshotMagic)+8+1+4 || !bytes.HasPrefix(data, snapshotMagic) {
		return 0, nil, bad("not a raftkv snapshot (version 1)")
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != sum {
		return 0, nil, bad("checksum mismatch")
	}
	p := body[len(snapshotMagic):]
	applied := binary.BigEndian.Uint64(p)
	p = p[8:]
	var records []snapshotRecord
	field := func() ([]byte, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || uint64(len(p)-k) < n {
			return nil, false
		}
		v := p[k : k+int(n)]
		p = p[k+int(n):]
		return v, true
	}
	for len(p) > 0 && p[0] == 1 {
		p = p[1:]
		k, ok1 := field()
		v, ok2 := field()
		if !ok1 || !ok2 {
			return 0, nil, bad("truncated record")
		}
		records = append(records, snapshotRecord{k, v})
	}
	if len(p) != 1 || p[0] != 0 {
		return 0, nil, bad("no end marker")
	}
	return applied, records, nil
}
