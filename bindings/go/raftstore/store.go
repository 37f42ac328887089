// store.go -- Store: opening a raft store on a ravel database (its own, or
// one shared with the application's state machine), its options and
// prefixes, and Close.  The log methods are in logstore.go, the stable
// store's in stable.go.

package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// The prefixes used when Options leaves them empty.  Both start with
// "raft/": an application sharing the database keeps its own keys outside
// that prefix.
const (
	DefaultLogPrefix    = "raft/log/"
	DefaultStablePrefix = "raft/stable/"
)

// ErrClosed is returned by every method of a Store after Close.
var ErrClosed = errors.New("raftstore: store is closed")

// Options choose how a Store is opened.  The zero value (or nil) opens or
// creates the database with ravel's defaults and the default prefixes.
type Options struct {
	// Ravel are the options of the ravel database Open opens (nil: the
	// defaults).  Open sets create_if_missing on a copy of them (see
	// MustExist); everything else is passed through as given.  New ignores
	// them: its database is already open.
	Ravel *ravel.Options

	// MustExist makes Open fail if dir holds no database, instead of
	// creating one (create_if_missing=false).
	MustExist bool

	// LogPrefix is the prefix of the log entries' keys (empty:
	// DefaultLogPrefix).
	LogPrefix []byte

	// StablePrefix is the prefix of the stable store's keys (empty:
	// DefaultStablePrefix).  Neither prefix may be a prefix of the other.
	StablePrefix []byte
}

// Store is a raft.LogStore, raft.MonotonicLogStore and raft.StableStore on
// a ravel database.  Its methods are safe for concurrent use.
type Store struct {
	db       *ravel.DB
	ownsDB   bool // Open opened db, so Close closes it
	logPre   []byte
	logEnd   []byte // the first key past every log key (prefix successor)
	stablePr []byte

	// writeMu orders the log's writers: StoreLogs holds it shared (many
	// run at once, so their syncs share one write group), DeleteRange and
	// Close hold it exclusively.
	writeMu sync.RWMutex

	// bounds are the log's first and last index; see bounds.go.
	bounds bounds

	// closed is set by Close under writeMu; read by every method.
	closed atomic.Bool

	// batches recycles the ravel batches and encode buffers of StoreLogs.
	batches sync.Pool
}

// The interfaces Store implements, checked by the compiler.
var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
	_ raft.StableStore       = (*Store)(nil)
)

// Open opens the ravel database in the directory dir (creating it and its
// parents unless opts.MustExist) and returns a Store on it.  Close closes
// the database.
func Open(dir string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	var ropts ravel.Options
	if opts.Ravel != nil {
		ropts = *opts.Ravel // a copy: the caller's value is not changed
	}
	create := "true"
	if opts.MustExist {
		create = "false"
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("raftstore: %w", err)
	}
	if err := ropts.Set("create_if_missing", create); err != nil {
		return nil, err
	}
	db, err := ravel.Open(dir, &ropts)
	if err != nil {
		return nil, err
	}
	s, err := newStore(db, true, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// New returns a Store on a database the caller opened and keeps, so that
// the raft log, the stable store and the application's state machine live
// in one database (one directory, one WAL).  The application keeps its own
// keys outside both prefixes.  Close of the Store does not close db; close
// the Store first, then db.
func New(db *ravel.DB, opts *Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("raftstore: New needs an open database")
	}
	if opts == nil {
		opts = &Options{}
	}
	return newStore(db, false, opts)
}

func newStore(db *ravel.DB, owns bool, opts *Options) (*Store, error) {
	logPre := prefixOr(opts.LogPrefix, DefaultLogPrefix)
	stablePre := prefixOr(opts.StablePrefix, DefaultStablePrefix)
	if bytes.HasPrefix(logPre, stablePre) || bytes.HasPrefix(stablePre, logPre) {
		return nil, fmt.Errorf("raftstore: the log prefix %q and the "+
			"stable prefix %q overlap: their keys would mix", logPre, stablePre)
	}
	s := &Store{db: db, ownsDB: owns, logPre: logPre,
		logEnd: prefixEnd(logPre), stablePr: stablePre}
	s.batches.New = func() any { return &writeBuffer{batch: ravel.NewBatch()} }
	if err := s.loadBounds(); err != nil {
		return nil, err
	}
	return s, nil
}

// prefixOr is a copy of p, or def when p is empty.
func prefixOr(p []byte, def string) []byte {
	if len(p) == 0 {
		return []byte(def)
	}
	return bytes.Clone(p)
}

// prefixEnd is the smallest key greater than every key starting with p,
// or nil (no bound) when p is all 0xff bytes.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// DB returns the database the store writes to, for a state machine that
// shares it.  It stays the caller's to use until the Store is closed (and,
// for a Store made by New, after).
func (s *Store) DB() *ravel.DB {
	return s.db
}

// LogPrefix returns the prefix of the log's keys (a copy).
func (s *Store) LogPrefix() []byte {
	return bytes.Clone(s.logPre)
}

// StablePrefix returns the prefix of the stable store's keys (a copy).
func (s *Store) StablePrefix() []byte {
	return bytes.Clone(s.stablePr)
}

// Close waits for the writes in progress, then makes every later call fail
// with ErrClosed.  It closes the database if Open opened it (ravel makes
// the WAL durable then); a database given to New stays open.  A second
// Close returns ErrClosed.
func (s *Store) Close() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed.Swap(true) {
		return ErrClosed
	}
	if s.ownsDB {
		return s.db.Close()
	}
	return nil
}

// checkErr maps a ravel error to what the store returns: ErrClosed for a
// closed database, the error itself otherwise.
func checkErr(err error) error {
	if errors.Is(err, ravel.ErrClosed) {
		return ErrClosed
	}
	return err
}
