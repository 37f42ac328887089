// Package raftstore is storage for hashicorp/raft (v1.8) on ravel: a Store
// is a raft.LogStore, a raft.MonotonicLogStore and a raft.StableStore, the
// role raft-boltdb and raft-wal play for Consul, Nomad and Vault.
//
//	store, err := raftstore.Open("/var/lib/myapp/raft", nil)
//	...
//	r, err := raft.NewRaft(conf, fsm, store, store, snapshots, transport)
//
// # What each call costs
//
// StoreLogs writes its entries as one ravel batch with RAVEL_SYNC: one
// fdatasync per call however many entries, all of them or none after a
// crash, and calls made at once by several goroutines share one sync
// through ravel's write group.  GetLog is one point get.  FirstIndex and
// LastIndex read no disk: the bounds are found at open (two seeks) and kept
// in memory, updated after each StoreLogs and DeleteRange under a lock.
// DeleteRange is one batch written with RAVEL_SYNC.  Set and SetUint64 are
// one put each, with RAVEL_SYNC.
//
// # One database for the log, the stable store and the state machine
//
// New makes a Store on a database the application opened, so that raft's
// log, its stable store and the application's state machine share one
// directory and one WAL.  Each lives under its own key prefix: the log
// under Options.LogPrefix (default "raft/log/"), the stable store under
// Options.StablePrefix (default "raft/stable/"); the application keeps its
// own keys outside both (outside "raft/" with the defaults).  Two Stores
// with different prefixes may share a database too.
//
// # Encoding (version 1)
//
// A log entry's key is the log prefix followed by its index as 8 bytes
// big-endian, so keys sort in index order.  Its value is
//
//	version     1 byte, 1
//	term        uvarint
//	type        1 byte (raft.LogType)
//	flags       1 byte; bit 0: AppendedAt is set; other bits 0
//	appendedAt  if bit 0: Unix seconds (varint, zigzag) then nanoseconds
//	            (uvarint, below 1e9); a zero AppendedAt is not stored
//	data        uvarint length, then the bytes
//	extensions  uvarint length, then the bytes
//
// (the index is the key's).  A stable store key is the stable prefix
// followed by the key raft gives; SetUint64 stores 8 bytes big-endian.
// GetLog refuses a value whose version byte it does not know with an error
// matching ErrUnknownEncoding, and a value that does not decode with one
// matching ErrCorruptEntry.  A later layout will take a new version byte;
// version 1 will stay readable.
//
// Round trip: every field of raft.Log comes back, except that an empty
// Data or Extensions comes back nil and AppendedAt comes back in the local
// time zone without a monotonic clock reading (time.Time.Equal holds).
//
// # Errors
//
// GetLog returns raft.ErrLogNotFound for an absent entry; Get and GetUint64
// return ErrKeyNotFound (text "not found", which hashicorp/raft checks for)
// for an absent key; every method returns ErrClosed after Close.  ravel's
// own errors (*ravel.Error) are returned as they are.
package raftstore
