// stable.go -- the raft.StableStore methods: small values under the stable
// prefix (raft keeps its current term and last vote there), each Set one
// put written with ravel.Sync.
//
//	key   := stable_prefix user_key
//	value := the bytes given to Set, or for SetUint64 the value as fixed64be

package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// ErrKeyNotFound is what Get and GetUint64 return for a key never set.  Its
// text is "not found", which is what hashicorp/raft compares a StableStore
// error with to tell a new server from a failed read (as with raft-boltdb's
// and raft.InmemStore's errors).
var ErrKeyNotFound = errors.New("not found")

// Set stores val under key and returns once it is on stable storage.
func (s *Store) Set(key, val []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return checkErr(s.db.Put(s.stableKey(key), val, ravel.Sync))
}

// Get returns the value stored under key (a new slice), or ErrKeyNotFound.
func (s *Store) Get(key []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	val, err := s.db.Get(s.stableKey(key))
	if err == ravel.ErrNotFound {
		return nil, ErrKeyNotFound
	}
	if err != nil {
		return nil, checkErr(err)
	}
	return val, nil
}

// SetUint64 stores val under key (as 8 bytes, big-endian) and returns once
// it is on stable storage.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 returns the value SetUint64 stored under key, or
// ErrKeyNotFound.  A value of another length (set by Set) is an error.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	val, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(val) != 8 {
		return 0, fmt.Errorf("raftstore: stable key %q holds %d bytes, "+
			"not the 8 of a uint64", key, len(val))
	}
	return binary.BigEndian.Uint64(val), nil
}

// stableKey is the database key of the stable store's key.
func (s *Store) stableKey(key []byte) []byte {
	k := make([]byte, 0, len(s.stablePr)+len(key))
	return append(append(k, s.stablePr...), key...)
}
