// jepsen_test.go -- the linearizability test: a three-node raftkv cluster
// as separate processes on loopback, concurrent clients, a nemesis that
// kills (SIGKILL), pauses (SIGSTOP/SIGCONT), restarts nodes and once
// wipes a node's directory, and porcupine checking the recorded history.
//
//	RAFTKV_DURATION=10m  how long the clients and the nemesis run (60s)
//	RAFTKV_BROKEN=1      run TestBrokenReadsAreCaught (expects a rejection)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func TestLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster run takes a minute")
	}
	res, h := runJepsen(t, false)
	if res != porcupine.Ok {
		t.Fatalf("porcupine: %v (%d operations)", res, h)
	}
}

// TestBrokenReadsAreCaught runs the same workload on nodes started with
// -unsafe-local-reads (reads served from any node's local state, no
// leader check) and expects porcupine to reject the history: the proof
// that the test can fail.  Not every run catches it (see README.md).
func TestBrokenReadsAreCaught(t *testing.T) {
	if os.Getenv("RAFTKV_BROKEN") == "" {
		t.Skip("set RAFTKV_BROKEN=1")
	}
	res, h := runJepsen(t, true)
	if res != porcupine.Illegal {
		t.Fatalf("porcupine accepted the broken variant's history (%v, %d operations)", res, h)
	}
	t.Logf("porcupine rejected the broken variant's history, as it should")
}

// proc is one node: its identity, addresses and the running process.
type proc struct {
	name               string // n1, n2, n3
	gen                int    // bumped when the node is replaced after a wipe
	dir, log           string
	raftAddr, httpAddr string
	mu                 sync.Mutex
	cmd                *exec.Cmd     // nil while down
	exited             chan struct{} // closed when cmd has been reaped
	paused             bool
}

func (p *proc) id() string {
	if p.gen == 0 {
		return p.name
	}
	return fmt.Sprintf("%s-g%d", p.name, p.gen)
}

type cluster struct {
	t      *testing.T
	bin    string
	broken bool
	nodes  []*proc
}

// freeAddrs returns n loopback addresses with free ports (all listened on
// at once, so no two are the same).
func freeAddrs(t *testing.T, n int) []string {
	var addrs []string
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// start runs p's process with the given extra flags.
func (c *cluster) start(p *proc, extra ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	args := []string{"-id", p.id(), "-dir", p.dir, "-raft", p.raftAddr, "-http", p.httpAddr,
		"-snapshot-threshold", "64", "-trailing-logs", "32", "-snapshot-interval", "1s"}
	if c.broken {
		args = append(args, "-unsafe-local-reads")
	}
	args = append(args, extra...)
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(logf, "=== start %v\n", args)
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// dies with the test process even if the test is killed
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.cmd, p.exited, p.paused = cmd, exited, false
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		p.cmd = nil
	}
}

func (p *proc) signal(s syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		p.cmd.Process.Signal(s)
		p.paused = s == syscall.SIGSTOP
	}
}

func buildBinary(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "raftkv")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func newCluster(t *testing.T, broken bool) *cluster {
	c := &cluster{t: t, bin: buildBinary(t), broken: broken}
	root := t.TempDir()
	addrs := freeAddrs(t, 6)
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("n%d", i)
		c.nodes = append(c.nodes, &proc{name: name, dir: filepath.Join(root, name),
			log: filepath.Join(root, name+".log"), raftAddr: addrs[2*i-2], httpAddr: addrs[2*i-1]})
	}
	t.Cleanup(func() {
		for _, p := range c.nodes {
			p.kill()
		}
		if t.Failed() {
			for _, p := range c.nodes {
				if b, err := os.ReadFile(p.log); err == nil {
					t.Logf("--- %s log (last 3000 bytes):\n%s", p.name, tail(b, 3000))
				}
			}
		}
	})
	c.start(c.nodes[0], "-bootstrap")
	c.waitFor(c.nodes[0], func(s status) bool { return s.State == "Leader" }, "n1 leads")
	for _, p := range c.nodes[1:] {
		c.start(p, "-join", c.nodes[0].httpAddr)
	}
	for _, p := range c.nodes[1:] {
		c.waitFor(p, func(s status) bool { return s.Leader != "" && s.Applied > 0 }, p.name+" joined")
	}
	return c
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

type status struct {
	State, Leader    string
	Applied          uint64
	SnapshotRestores uint64 `json:"snapshot_restores"`
	Servers          []string
}

var statusClient = &http.Client{Timeout: time.Second}

func getStatus(addr string) (status, error) {
	var s status
	resp, err := statusClient.Get("http://" + addr + "/status")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

func (c *cluster) waitFor(p *proc, ok func(status) bool, what string) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if s, err := getStatus(p.httpAddr); err == nil && ok(s) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("timed out waiting for: %s", what)
}

// --- clients -------------------------------------------------------------

var (
	keys         = []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	clientHTTP   = &http.Client{Timeout: 3 * time.Second}
	errNoOutcome = errors.New("no effect") // the write was refused: drop it
)

// history collects operations from every client.
type history struct {
	mu    sync.Mutex
	ops   []porcupine.Operation
	start time.Time
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

func (h *history) add(op porcupine.Operation) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// do runs one HTTP request for in against node addr and says what it
// returned; errNoOutcome when it certainly had no effect, another error
// when the outcome is unknown.
func do(ctx context.Context, addr string, in kvInput) (kvOutput, error) {
	u := "http://" + addr + "/kv/" + in.Key
	method, body := http.MethodGet, ""
	switch in.Op {
	case "put":
		method, body = http.MethodPut, in.Value
	case "delete":
		method = http.MethodDelete
	case "cas":
		method, body = http.MethodPost, in.Value
		u = "http://" + addr + "/cas/" + in.Key + "?expect=" + url.QueryEscape(in.Expect)
		if in.Absent {
			u = "http://" + addr + "/cas/" + in.Key + "?absent=1"
		}
	}
	req, _ := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	resp, err := clientHTTP.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return kvOutput{}, errNoOutcome // never reached a node
		}
		return kvOutput{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return kvOutput{}, err
	}
	switch {
	case in.Op == "get" && resp.StatusCode == http.StatusOK:
		return kvOutput{Value: string(b), Exists: true}, nil
	case in.Op == "get" && resp.StatusCode == http.StatusNotFound:
		return kvOutput{}, nil
	case in.Op == "cas" && resp.StatusCode == http.StatusOK:
		return kvOutput{Swapped: true}, nil
	case in.Op == "cas" && resp.StatusCode == http.StatusConflict:
		return kvOutput{}, nil
	case resp.StatusCode == http.StatusNoContent:
		return kvOutput{}, nil
	case resp.Header.Get(outcomeHeader) == "none":
		return kvOutput{}, errNoOutcome
	}
	return kvOutput{}, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
}

// client runs operations until ctx ends, each on a node picked at random
// (a follower forwards to the leader); a failed attempt is retried as a
// new operation on another node.
func (c *cluster) client(ctx context.Context, id int, h *history, stats *clientStats) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	last := map[string]*string{} // the value this client last saw per key
	for seq := 0; ctx.Err() == nil; seq++ {
		key := keys[rng.IntN(len(keys))]
		in := kvInput{Key: key}
		switch r := rng.IntN(100); {
		case r < 45:
			in.Op = "get"
		case r < 70:
			in.Op, in.Value = "put", fmt.Sprintf("c%d-%d", id, seq)
		case r < 75:
			in.Op = "delete"
		default:
			in.Op, in.Value = "cas", fmt.Sprintf("c%d-%d", id, seq)
			if v := last[key]; v != nil {
				in.Expect = *v
			} else {
				in.Absent = true
			}
		}
		p := c.nodes[rng.IntN(len(c.nodes))]
		call := h.now()
		out, err := do(ctx, p.httpAddr, in)
		ret := h.now()
		switch {
		case ctx.Err() != nil && err != nil:
			if in.Op != "get" {
				h.add(porcupine.Operation{ClientId: id, Input: in, Call: call,
					Output: kvOutput{Unknown: true}, Return: endOfTime})
			}
			return
		case errors.Is(err, errNoOutcome):
			stats.refused.Add(1)
		case err != nil && in.Op == "get":
			stats.failedReads.Add(1) // a read that failed changed nothing
		case err != nil:
			stats.unknown.Add(1)
			h.add(porcupine.Operation{ClientId: id, Input: in, Call: call,
				Output: kvOutput{Unknown: true}, Return: endOfTime})
		default:
			stats.ok.Add(1)
			h.add(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
			switch {
			case in.Op == "get" && out.Exists:
				v := out.Value
				last[key] = &v
			case in.Op == "get", in.Op == "delete":
				last[key] = nil
			case in.Op == "put", in.Op == "cas" && out.Swapped:
				v := in.Value
				last[key] = &v
			}
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
		} else {
			time.Sleep(time.Duration(rng.IntN(10)) * time.Millisecond)
		}
	}
}

// --- nemesis -------------------------------------------------------------

// nemesis injects one fault at a time until ctx ends: SIGKILL and restart,
// SIGSTOP and SIGCONT, and once, at about a third of the run, a wipe: the
// node is killed, its directory deleted, it is removed from the cluster
// and comes back under a new ID, empty, to be filled by a snapshot from
// the leader.
func (c *cluster) nemesis(ctx context.Context, dur time.Duration, log func(string, ...any)) *proc {
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	sleep := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	wipeAt := time.Now().Add(dur / 3)
	var wiped *proc
	for ctx.Err() == nil {
		sleep(time.Duration(1000+rng.IntN(2000)) * time.Millisecond)
		p := c.nodes[rng.IntN(len(c.nodes))]
		switch {
		case wiped == nil && time.Now().After(wipeAt):
			wiped = p
			c.wipe(p, log)
		case rng.IntN(2) == 0:
			log("nemesis: SIGKILL %s", p.id())
			p.kill()
			sleep(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
			log("nemesis: restart %s", p.id())
			c.start(p)
		default:
			log("nemesis: SIGSTOP %s", p.id())
			p.signal(syscall.SIGSTOP)
			sleep(time.Duration(200+rng.IntN(2500)) * time.Millisecond)
			log("nemesis: SIGCONT %s", p.id())
			p.signal(syscall.SIGCONT)
		}
	}
	return wiped
}

func (c *cluster) wipe(p *proc, log func(string, ...any)) {
	old := p.id()
	log("nemesis: SIGKILL %s and delete %s", old, p.dir)
	p.kill()
	if err := os.RemoveAll(p.dir); err != nil {
		c.t.Errorf("wipe: %v", err)
	}
	var others []string
	for _, o := range c.nodes {
		if o != p {
			others = append(others, o.httpAddr)
		}
	}
	// remove the lost server first: an empty node must not vote under an
	// identity that may have voted before (it forgot its votes)
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := clientHTTP.Post("http://"+others[rand.IntN(len(others))]+"/remove?id="+old, "", nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			c.t.Errorf("wipe: could not remove %s", old)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.gen++
	log("nemesis: removed %s; starting it empty as %s", old, p.id())
	c.start(p, "-join", strings.Join(others, ","))
}

type clientStats struct {
	ok, unknown, refused, failedReads atomicInt
}

type atomicInt struct {
	mu sync.Mutex
	n  int
}

func (a *atomicInt) Add(d int) { a.mu.Lock(); a.n += d; a.mu.Unlock() }
func (a *atomicInt) Load() int { a.mu.Lock(); defer a.mu.Unlock(); return a.n }

// runJepsen runs the whole experiment and returns porcupine's verdict and
// the history's length.
func runJepsen(t *testing.T, broken bool) (porcupine.CheckResult, int) {
	dur := 60 * time.Second
	if s := os.Getenv("RAFTKV_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("RAFTKV_DURATION: %v", err)
		}
		dur = d
	}
	c := newCluster(t, broken)
	h := &history{start: time.Now()}
	var stats clientStats
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.client(ctx, i, h, &stats) }()
	}
	wiped := c.nemesis(ctx, dur, t.Logf)
	wg.Wait()
	for _, p := range c.nodes {
		p.signal(syscall.SIGCONT)
	}
	t.Logf("clients: %d operations acknowledged, %d writes with unknown outcome, %d refused, %d failed reads",
		stats.ok.Load(), stats.unknown.Load(), stats.refused.Load(), stats.failedReads.Load())
	if stats.ok.Load() < 100 {
		t.Errorf("only %d operations succeeded: the cluster made no progress", stats.ok.Load())
	}
	// the wiped node must have been filled by a snapshot from the leader
	// (its log, kept across restarts, says so: raft logs the install)
	if wiped != nil {
		deadline := time.Now().Add(60 * time.Second)
		for !installedSnapshot(wiped) {
			if time.Now().After(deadline) {
				t.Errorf("%s (wiped) never installed a snapshot from the leader", wiped.id())
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("%s (wiped) came back through raft's snapshot install", wiped.id())
	} else if dur >= 10*time.Second {
		t.Errorf("the nemesis never wiped a node")
	}
	// porcupine's verdict is Unknown if it runs out of time: a failure
	checkTime := max(2*time.Minute, dur)
	started := time.Now()
	res, info := porcupine.CheckOperationsVerbose(kvModel, h.ops, checkTime)
	t.Logf("porcupine: %v after %v on %d operations", res, time.Since(started).Round(time.Millisecond), len(h.ops))
	if res != porcupine.Ok {
		dir, err := os.MkdirTemp("", "raftkv-porcupine-")
		if err == nil {
			path := filepath.Join(dir, "history.html")
			if err := porcupine.VisualizePath(kvModel, info, path); err == nil {
				t.Logf("porcupine visualization: %s", path)
			}
		}
	}
	return res, len(h.ops)
}

// installedSnapshot says whether p's log shows raft installing a snapshot
// sent by the leader since p started under its current ID.
func installedSnapshot(p *proc) bool {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return false
	}
	i := strings.Index(string(b), "=== start [-id "+p.id()+" ")
	return i >= 0 && strings.Contains(string(b[i:]), "Installed remote snapshot")
}
