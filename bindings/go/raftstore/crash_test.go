// crash_test.go -- a child process appends to the log (one goroutine, as
// raft does, truncating the head now and then) while another goroutine
// raises the stable store's term, each printing what it is about to write
// and what was acknowledged; the parent kills it with SIGKILL in the middle
// of its writes, reopens the directory and checks that everything
// acknowledged is there, nothing acknowledged as deleted came back, and
// each batch is there whole or not at all.  Three rounds on one directory,
// so recovery also runs over a log that was itself recovered.

package raftstore_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

const crashDirEnv = "RAFTSTORE_CRASH_DIR"

// crashLog is what the parent read from one child: the last line of each
// kind.
type crashLog struct {
	acks       int
	tryHi      uint64 // the last batch begun ends here
	ackHi      uint64 // the last batch acknowledged ends here
	tryDel     uint64 // the last head truncation begun deletes up to here
	ackDel     uint64 // the last head truncation acknowledged
	tryTerm    uint64
	ackTerm    uint64
	childError string
}

func TestCrashKeepsAcknowledged(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("in the child")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 7))
	var prev recovered
	for round := range 3 {
		killAfter := 20 + rng.IntN(60)
		got := runAndKill(t, dir, killAfter)
		if got.childError != "" {
			t.Fatalf("round %d: the child failed: %s", round, got.childError)
		}
		if got.acks < killAfter {
			t.Fatalf("round %d: the child stopped after %d acknowledgements", round, got.acks)
		}
		prev = checkAfterCrash(t, dir, got, prev)
		t.Logf("round %d: killed after %d acknowledged writes; the log is [%d, %d], "+
			"%d acknowledged", round, got.acks, prev.first, prev.last, got.ackHi)
	}
}

// recovered is what a reopen found: the log's bounds and the term.
type recovered struct {
	first, last, term uint64
}

// runAndKill starts the child on dir, kills it with SIGKILL once it has
// acknowledged killAfter writes, and returns what it printed.
func runAndKill(t *testing.T, dir string, killAfter int) crashLog {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got crashLog
	killed := false
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		got.read(lines.Text())
		if !killed && got.acks >= killAfter {
			cmd.Process.Kill() // SIGKILL: in the middle of a write
			killed = true
		}
	}
	cmd.Wait()
	if !killed && got.childError == "" {
		got.childError = "exited by itself: " + stderr.String()
	}
	return got
}

// read takes in one line of the child's output.
func (c *crashLog) read(line string) {
	f := strings.Fields(line)
	if len(f) != 2 {
		if strings.HasPrefix(line, "error") {
			c.childError = line
		}
		return
	}
	n, _ := strconv.ParseUint(f[1], 10, 64)
	switch f[0] {
	case "try":
		c.tryHi = n
	case "ack":
		c.ackHi, c.acks = n, c.acks+1
	case "trydel":
		c.tryDel = n
	case "ackdel":
		c.ackDel, c.acks = n, c.acks+1
	case "tryterm":
		c.tryTerm = n
	case "ackterm":
		c.ackTerm, c.acks = n, c.acks+1
	case "error":
		c.childError = line
	}
}

// checkAfterCrash reopens dir and checks it against what the child
// acknowledged and what the round before found (prev), and returns what it
// found.
func checkAfterCrash(t *testing.T, dir string, got crashLog, prev recovered) recovered {
	t.Helper()
	s := openStore(t, dir)
	defer s.Close()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	ackHi := max(got.ackHi, prev.last)
	ackDel := max(got.ackDel, max(prev.first, 1)-1)
	// The whole of the last batch acknowledged, or of the one after it.
	if last != ackHi && last != got.tryHi {
		t.Fatalf("last index %d: neither the last batch acknowledged (up to %d) "+
			"nor the one begun after it (up to %d), whole", last, ackHi, got.tryHi)
	}
	if first != ackDel+1 && first != got.tryDel+1 {
		t.Fatalf("first index %d: want %d (acknowledged truncation) or %d "+
			"(the one begun)", first, ackDel+1, got.tryDel+1)
	}
	for i := first; i <= last; i++ {
		wantLog(t, s, i)
	}
	wantNoLog(t, s, first-1)
	wantNoLog(t, s, last+1)
	term, err := s.GetUint64([]byte("CurrentTerm"))
	if err != nil && got.ackTerm > 0 {
		t.Fatalf("term: %v", err)
	}
	if term < max(got.ackTerm, prev.term) || term > max(got.tryTerm, prev.term) {
		t.Fatalf("term %d: acknowledged %d, begun %d, found before %d",
			term, got.ackTerm, got.tryTerm, prev.term)
	}
	return recovered{first: first, last: last, term: term}
}

// TestCrashChild is the child: it writes until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestCrashKeepsAcknowledged")
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	s, err := raftstore.Open(dir, nil)
	if err != nil {
		say("error open: %v", err)
		return
	}
	go raiseTerm(s, say)
	appendUntilKilled(s, say)
}

// appendUntilKilled appends batches of 1 to 32 entries after the last, and
// every 16th batch deletes the head up to 200 entries before the end.
func appendUntilKilled(s *raftstore.Store, say func(string, ...any)) {
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	last, _ := s.LastIndex()
	for batch := 1; ; batch++ {
		lo, hi := last+1, last+uint64(1+rng.IntN(32))
		say("try %d", hi)
		if err := s.StoreLogs(entries(lo, hi)); err != nil {
			say("error store logs: %v", err)
			return
		}
		say("ack %d", hi)
		last = hi
		if batch%16 == 0 && last > 200 {
			say("trydel %d", last-200)
			if err := s.DeleteRange(0, last-200); err != nil {
				say("error delete range: %v", err)
				return
			}
			say("ackdel %d", last-200)
		}
	}
}

// raiseTerm sets CurrentTerm to 1, 2, 3, ... above what is stored.
func raiseTerm(s *raftstore.Store, say func(string, ...any)) {
	term, _ := s.GetUint64([]byte("CurrentTerm"))
	for {
		term++
		say("tryterm %d", term)
		if err := s.SetUint64([]byte("CurrentTerm"), term); err != nil {
			say("error set term: %v", err)
			return
		}
		say("ackterm %d", term)
	}
}
