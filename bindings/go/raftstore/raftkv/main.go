// Command raftkv is a replicated key-value service: hashicorp/raft for
// consensus over TCP, and one ravel database per node holding raft's log,
// raft's stable store and the key-value state machine (see README.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
	ravel "github.com/ravel-kv/ravel/bindings/go"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

// config is the command line.
type config struct {
	id, dir, raftAddr, httpAddr string
	bootstrap                   bool
	join                        string // comma-separated HTTP addresses
	snapshotThreshold           uint64
	trailingLogs                uint64
	snapshotInterval            time.Duration
	unsafeLocalReads            bool // TEST ONLY: reads skip the leader check
}

func parseFlags() config {
	var c config
	flag.StringVar(&c.id, "id", "", "this node's server ID (unique in the cluster)")
	flag.StringVar(&c.dir, "dir", "", "data directory (ravel database and raft snapshots)")
	flag.StringVar(&c.raftAddr, "raft", "127.0.0.1:7000", "raft TCP address")
	flag.StringVar(&c.httpAddr, "http", "127.0.0.1:8000", "HTTP API address")
	flag.BoolVar(&c.bootstrap, "bootstrap", false, "bootstrap a new cluster with this node alone (first start only)")
	flag.StringVar(&c.join, "join", "", "HTTP addresses of cluster members to ask to add this node (first start only)")
	flag.Uint64Var(&c.snapshotThreshold, "snapshot-threshold", 8192, "raft SnapshotThreshold")
	flag.Uint64Var(&c.trailingLogs, "trailing-logs", 10240, "raft TrailingLogs")
	flag.DurationVar(&c.snapshotInterval, "snapshot-interval", 120*time.Second, "raft SnapshotInterval")
	flag.BoolVar(&c.unsafeLocalReads, "unsafe-local-reads", false, "TEST ONLY, BREAKS LINEARIZABILITY: serve reads from local state on any node")
	flag.Parse()
	if c.id == "" || c.dir == "" {
		fmt.Fprintln(os.Stderr, "raftkv: -id and -dir are required")
		flag.Usage()
		os.Exit(2)
	}
	return c
}

// node is one running server.
type node struct {
	cfg   config
	db    *ravel.DB
	store *raftstore.Store
	fsm   *kvFSM
	raft  *raft.Raft
}

func main() {
	cfg := parseFlags()
	n, err := startNode(cfg)
	if err != nil {
		log.Fatalf("raftkv: %v", err)
	}
	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		log.Fatalf("raftkv: %v", err)
	}
	go func() { log.Fatal(http.Serve(ln, n.routes())) }()
	log.Printf("raftkv: node %s serving HTTP on %s, raft on %s", cfg.id, cfg.httpAddr, cfg.raftAddr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	n.shutdown()
}

func startNode(cfg config) (*node, error) {
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return nil, err
	}
	opts := &ravel.Options{}
	opts.Set("create_if_missing", "true")
	db, err := ravel.Open(filepath.Join(cfg.dir, "ravel"), opts)
	if err != nil {
		return nil, err
	}
	n := &node{cfg: cfg, db: db}
	if n.store, err = raftstore.New(db, nil); err != nil {
		return nil, err
	}
	if n.fsm, err = newFSM(db); err != nil {
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStore(cfg.dir, 2, os.Stderr)
	if err != nil {
		return nil, err
	}
	addr, err := net.ResolveTCPAddr("tcp", cfg.raftAddr)
	if err != nil {
		return nil, err
	}
	trans, err := raft.NewTCPTransport(cfg.raftAddr, addr, 3, 5*time.Second, os.Stderr)
	if err != nil {
		return nil, err
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.id)
	rc.SnapshotThreshold = cfg.snapshotThreshold
	rc.TrailingLogs = cfg.trailingLogs
	rc.SnapshotInterval = cfg.snapshotInterval
	existing, err := raft.HasExistingState(n.store, n.store, snaps)
	if err != nil {
		return nil, err
	}
	if n.raft, err = raft.NewRaft(rc, n.fsm, n.store, n.store, snaps, trans); err != nil {
		return nil, err
	}
	if cfg.bootstrap && !existing {
		f := n.raft.BootstrapCluster(raft.Configuration{Servers: []raft.Server{
			{ID: rc.LocalID, Address: trans.LocalAddr()}}})
		if err := f.Error(); err != nil {
			return nil, err
		}
	}
	if cfg.join != "" && !existing {
		go n.joinCluster()
	}
	go n.publishAddress()
	return n, nil
}

// joinCluster asks the members named by -join to add this node, until one
// does.
func (n *node) joinCluster() {
	for {
		for _, a := range strings.Split(n.cfg.join, ",") {
			u := fmt.Sprintf("http://%s/join?id=%s&raft=%s&http=%s", a, n.cfg.id, n.cfg.raftAddr, n.cfg.httpAddr)
			resp, err := http.Post(u, "text/plain", nil)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					log.Printf("raftkv: joined through %s", a)
					return
				}
			}
		}
		time.Sleep(time.Second)
	}
}

// publishAddress records, while this node leads, its HTTP address in the
// replicated state, so that followers know where to forward requests.
func (n *node) publishAddress() {
	for range time.Tick(300 * time.Millisecond) {
		if n.raft.State() != raft.Leader {
			continue
		}
		if a, ok := n.httpAddrOf(n.cfg.id); ok && a == n.cfg.httpAddr {
			continue
		}
		n.apply(command{Op: "addr", Key: n.cfg.id, Value: n.cfg.httpAddr})
	}
}

func (n *node) httpAddrOf(id string) (string, bool) {
	v, err := n.db.Get(append(append([]byte{}, addrPrefix...), id...))
	return string(v), err == nil
}

// errNotApplied marks a write refused before it reached raft: it will
// never be applied.
var errNotApplied = errors.New("not applied")

func (n *node) apply(c command) (applyResult, error) {
	data, err := jsonMarshal(c)
	if err != nil {
		return applyResult{}, err
	}
	f := n.raft.Apply(data, 5*time.Second)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) {
			return applyResult{}, fmt.Errorf("%w: %v", errNotApplied, err)
		}
		return applyResult{}, err
	}
	return f.Response().(applyResult), nil
}

func (n *node) shutdown() {
	n.raft.Shutdown().Error()
	n.store.Close()
	n.db.Close()
}
