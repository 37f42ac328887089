// cluster_test.go -- a real hashicorp/raft cluster of three nodes in this
// process (raft.InmemTransport), each with a Store for its log and stable
// store and a file snapshot store: it elects a leader, applies entries,
// snapshots (truncating the log's head through DeleteRange), survives the
// leader's shutdown, and takes the old leader back from its ravel
// directory, which catches up.  The state machines must end equal and hold
// every command applied.  Waits are bounded (a failure, not a hang) but
// nothing asserts how long anything takes.

package raftstore_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

// listFSM is a state machine that keeps the commands applied, in order.
type listFSM struct {
	mu       sync.Mutex
	commands []string
}

func (f *listFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands = append(f.commands, string(l.Data))
	return len(f.commands)
}

func (f *listFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return listSnapshot(slices.Clone(f.commands)), nil
}

func (f *listFSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	var commands []string
	if err := json.NewDecoder(r).Decode(&commands); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands = commands
	return nil
}

func (f *listFSM) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.commands)
}

type listSnapshot []string

func (s listSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode([]string(s)); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s listSnapshot) Release() {}

// node is one member of the cluster: its directory, its store and its
// raft, made again by start after a stop.
type node struct {
	id    raft.ServerID
	addr  raft.ServerAddress
	dir   string
	store *raftstore.Store
	trans *raft.InmemTransport
	fsm   *listFSM
	raft  *raft.Raft

	// the log's bounds when stop closed the store
	stoppedFirst, stoppedLast uint64
}

// syncBuffer collects raft's log lines, shown if the test fails.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start opens the node's store and snapshots from its directory and starts
// its raft, connected to the running peers.
func (n *node) start(t *testing.T, peers []*node, logs *syncBuffer) {
	t.Helper()
	store, err := raftstore.Open(filepath.Join(n.dir, "ravel"), nil)
	if err != nil {
		t.Fatalf("%s: open store: %v", n.id, err)
	}
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(n.dir, "snapshots"), 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, trans := raft.NewInmemTransport(n.addr)
	for _, p := range peers {
		if p != n && p.raft != nil {
			trans.Connect(p.addr, p.trans)
			p.trans.Connect(n.addr, trans)
		}
	}
	conf := raft.DefaultConfig()
	conf.LocalID = n.id
	conf.HeartbeatTimeout = 200 * time.Millisecond
	conf.ElectionTimeout = 200 * time.Millisecond
	conf.LeaderLeaseTimeout = 100 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.TrailingLogs = 20
	conf.SnapshotThreshold = 1 << 30 // snapshots only when the test asks
	conf.SnapshotInterval = time.Hour
	conf.Logger = hclog.New(&hclog.LoggerOptions{Name: string(n.id),
		Output: logs, Level: hclog.Info})
	n.fsm = &listFSM{}
	r, err := raft.NewRaft(conf, n.fsm, store, store, snaps, trans)
	if err != nil {
		store.Close()
		t.Fatalf("%s: new raft: %v", n.id, err)
	}
	n.store, n.trans, n.raft = store, trans, r
}

// stop shuts the node's raft down, disconnects it and closes its store.
func (n *node) stop(t *testing.T, peers []*node) {
	t.Helper()
	if err := n.raft.Shutdown().Error(); err != nil {
		t.Fatalf("%s: shutdown: %v", n.id, err)
	}
	for _, p := range peers {
		if p != n && p.raft != nil {
			p.trans.Disconnect(n.addr)
		}
	}
	n.trans.Close()
	n.stoppedFirst, _ = n.store.FirstIndex()
	n.stoppedLast, _ = n.store.LastIndex()
	if err := n.store.Close(); err != nil {
		t.Fatalf("%s: close store: %v", n.id, err)
	}
	n.raft = nil
}

// waitFor polls cond until it holds, failing the test after a bound that
// only a hang reaches.
func waitFor(t *testing.T, logs *syncBuffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 60 s; raft's log:\n%s", what, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leaderOf waits for one of the running nodes to be leader.
func leaderOf(t *testing.T, nodes []*node, logs *syncBuffer) *node {
	t.Helper()
	var leader *node
	waitFor(t, logs, "leader", func() bool {
		for _, n := range nodes {
			if n.raft != nil && n.raft.State() == raft.Leader {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// apply applies each command through the leader, waiting for a new leader
// and trying again when leadership moves (a command may then be applied
// twice: the checks allow it).
func apply(t *testing.T, nodes []*node, logs *syncBuffer, commands []string) {
	t.Helper()
	for _, c := range commands {
		for attempt := 0; ; attempt++ {
			leader := leaderOf(t, nodes, logs)
			err := leader.raft.Apply([]byte(c), 10*time.Second).Error()
			if err == nil {
				break
			}
			if attempt == 20 {
				t.Fatalf("apply %q: %v; raft's log:\n%s", c, err, logs)
			}
		}
	}
}

// commands are "prefix-1" ... "prefix-n".
func commands(prefix string, n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func TestRaftCluster(t *testing.T) {
	logs := &syncBuffer{}
	root := t.TempDir()
	nodes := make([]*node, 3)
	var servers []raft.Server
	for i := range nodes {
		id := raft.ServerID(fmt.Sprintf("node%d", i))
		nodes[i] = &node{id: id, addr: raft.ServerAddress(id),
			dir: filepath.Join(root, string(id))}
		servers = append(servers, raft.Server{ID: id, Address: nodes[i].addr})
	}
	for _, n := range nodes {
		n.start(t, nodes, logs)
	}
	defer func() {
		for _, n := range nodes {
			if n.raft != nil {
				n.stop(t, nodes)
			}
		}
	}()
	if err := nodes[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}

	first := commands("first", 100)
	apply(t, nodes, logs, first)
	leader := leaderOf(t, nodes, logs)
	if err := leader.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	// The snapshot truncated the log's head, keeping TrailingLogs.
	if firstIndex, _ := leader.store.FirstIndex(); firstIndex <= 1 {
		t.Fatalf("after a snapshot the leader's log still starts at %d", firstIndex)
	}

	leader.stop(t, nodes)
	firstBefore, lastBefore := leader.stoppedFirst, leader.stoppedLast
	second := commands("second", 100)
	apply(t, nodes, logs, second)
	newLeader := leaderOf(t, nodes, logs)
	t.Logf("%s led and snapshotted (its log [%d, %d] at shutdown), then %s led",
		leader.id, firstBefore, lastBefore, newLeader.id)

	// Its directory holds the log it had, term and vote included.
	reopened, err := raftstore.Open(filepath.Join(leader.dir, "ravel"), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantBounds(t, reopened, firstBefore, lastBefore)
	if term, err := reopened.GetUint64([]byte("CurrentTerm")); err != nil || term == 0 {
		t.Fatalf("CurrentTerm in the stopped leader's store: %d, %v", term, err)
	}
	reopened.Close()

	leader.start(t, nodes, logs) // from its ravel directory
	third := commands("third", 20)
	apply(t, nodes, logs, third)
	if err := leaderOf(t, nodes, logs).raft.Barrier(10 * time.Second).Error(); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	want := slices.Concat(first, second, third)
	// Every node's state machine holds every command, in one order, and
	// every node's log ends at the same index (followers may still be
	// receiving the barrier: wait for them).
	var lastIndexes []uint64
	waitFor(t, logs, "equal state machines and logs", func() bool {
		ref := nodes[0].fsm.list()
		lastIndexes = lastIndexes[:0]
		for _, n := range nodes {
			if !slices.Equal(n.fsm.list(), ref) {
				return false
			}
			last, _ := n.store.LastIndex()
			lastIndexes = append(lastIndexes, last)
		}
		return containsAll(ref, want) &&
			lastIndexes[0] == lastIndexes[1] && lastIndexes[1] == lastIndexes[2]
	})

	// The last entry is the same on every node.
	var ref raft.Log
	for i, n := range nodes {
		var l raft.Log
		if err := n.store.GetLog(lastIndexes[0], &l); err != nil {
			t.Fatalf("%s: last entry: %v", n.id, err)
		}
		if i == 0 {
			ref = l
		} else if l.Term != ref.Term || !bytes.Equal(l.Data, ref.Data) || l.Type != ref.Type {
			t.Fatalf("%s's last entry %+v differs from %s's %+v", n.id, l, nodes[0].id, ref)
		}
	}
}

// containsAll reports whether every command in want is in got.
func containsAll(got, want []string) bool {
	have := map[string]bool{}
	for _, c := range got {
		have[c] = true
	}
	for _, c := range want {
		if !have[c] {
			return false
		}
	}
	return true
}
