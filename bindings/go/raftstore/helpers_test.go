// helpers_test.go -- what the tests share: opening stores, making entries
// whose contents follow from their index, and checking a store's log
// against an expected set of indexes.

package raftstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

// openStore opens (creating) a store in dir and closes it at the end of
// the test unless the test closed it.
func openStore(t testing.TB, dir string) *raftstore.Store {
	t.Helper()
	s, err := raftstore.Open(dir, nil)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, raftstore.ErrClosed) {
			t.Errorf("close at cleanup: %v", err)
		}
	})
	return s
}

// reopen closes s and opens its directory again.
func reopen(t testing.TB, s *raftstore.Store, dir string) *raftstore.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return openStore(t, dir)
}

// entry is the log entry at index whose every field follows from the
// index, so a reader can check any entry it finds.
func entry(index uint64) *raft.Log {
	l := &raft.Log{
		Index: index,
		Term:  index/7 + 1,
		Type:  raft.LogType(index % 6),
		Data:  []byte(fmt.Sprintf("data of entry %d", index)),
	}
	if index%3 == 0 {
		l.Extensions = []byte(fmt.Sprintf("ext %d", index))
	}
	if index%2 == 0 {
		l.AppendedAt = time.Unix(1700000000+int64(index), int64(index%1000)*1000+7)
	}
	return l
}

// entries are the entries lo..hi (both included).
func entries(lo, hi uint64) []*raft.Log {
	var logs []*raft.Log
	for i := lo; i <= hi; i++ {
		logs = append(logs, entry(i))
	}
	return logs
}

// sameLog reports how got differs from want ("" if it does not).
// AppendedAt is compared with time.Time.Equal (the zone and monotonic
// reading are not stored).
func sameLog(got, want *raft.Log) string {
	switch {
	case got.Index != want.Index:
		return fmt.Sprintf("index %d, want %d", got.Index, want.Index)
	case got.Term != want.Term:
		return fmt.Sprintf("term %d, want %d", got.Term, want.Term)
	case got.Type != want.Type:
		return fmt.Sprintf("type %v, want %v", got.Type, want.Type)
	case !bytes.Equal(got.Data, want.Data):
		return fmt.Sprintf("data %q, want %q", got.Data, want.Data)
	case !bytes.Equal(got.Extensions, want.Extensions):
		return fmt.Sprintf("extensions %q, want %q", got.Extensions, want.Extensions)
	case !got.AppendedAt.Equal(want.AppendedAt):
		return fmt.Sprintf("appended at %v, want %v", got.AppendedAt, want.AppendedAt)
	}
	return ""
}

// storeLogs stores logs and fails the test on an error.
func storeLogs(t testing.TB, s *raftstore.Store, logs []*raft.Log) {
	t.Helper()
	if err := s.StoreLogs(logs); err != nil {
		t.Fatalf("store logs %d..%d: %v", logs[0].Index, logs[len(logs)-1].Index, err)
	}
}

// deleteRange deletes lo..hi and fails the test on an error.
func deleteRange(t testing.TB, s *raftstore.Store, lo, hi uint64) {
	t.Helper()
	if err := s.DeleteRange(lo, hi); err != nil {
		t.Fatalf("delete range %d..%d: %v", lo, hi, err)
	}
}

// wantBounds checks FirstIndex and LastIndex.
func wantBounds(t testing.TB, s *raftstore.Store, first, last uint64) {
	t.Helper()
	gotFirst, err := s.FirstIndex()
	if err != nil {
		t.Fatalf("first index: %v", err)
	}
	gotLast, err := s.LastIndex()
	if err != nil {
		t.Fatalf("last index: %v", err)
	}
	if gotFirst != first || gotLast != last {
		t.Fatalf("bounds [%d, %d], want [%d, %d]", gotFirst, gotLast, first, last)
	}
}

// wantLog checks that the entry at index is entry(index).
func wantLog(t testing.TB, s *raftstore.Store, index uint64) {
	t.Helper()
	var got raft.Log
	if err := s.GetLog(index, &got); err != nil {
		t.Fatalf("get log %d: %v", index, err)
	}
	if diff := sameLog(&got, entry(index)); diff != "" {
		t.Fatalf("log %d: %s", index, diff)
	}
}

// wantNoLog checks that the entry at index is absent.
func wantNoLog(t testing.TB, s *raftstore.Store, index uint64) {
	t.Helper()
	var got raft.Log
	if err := s.GetLog(index, &got); err != raft.ErrLogNotFound {
		t.Fatalf("get log %d: got %v (%+v), want raft.ErrLogNotFound", index, err, got)
	}
}

// wantExactly checks that the store holds entry(i) for every i in
// present, and that the bounds are present's smallest and largest (0, 0
// when empty); every index in [lo, hi] not in present must be absent.
func wantExactly(t testing.TB, s *raftstore.Store, present map[uint64]bool, lo, hi uint64) {
	t.Helper()
	var first, last uint64
	seen := false
	for i := range present {
		if !seen || i < first {
			first = i
		}
		last = max(last, i)
		seen = true
	}
	wantBounds(t, s, first, last)
	for i := lo; i <= hi; i++ {
		if present[i] {
			wantLog(t, s, i)
		} else {
			wantNoLog(t, s, i)
		}
	}
}
