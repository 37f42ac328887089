// codec.go -- the on-disk encoding of a raft log entry: its key (a prefix
// and the big-endian index) and its value (a version byte and the fields of
// raft.Log).  This file is the one place the layout is written; the package
// documentation and README.md describe it in prose.
//
//	key   := log_prefix index:fixed64be
//	value := version:byte(=1) term:uvarint type:byte flags:byte
//	         [appended_at_sec:varint appended_at_nsec:uvarint]   (flags bit 0)
//	         data_len:uvarint data:byte[data_len]
//	         ext_len:uvarint  extensions:byte[ext_len]
//
// DO NOT CHANGE the meaning of version 1: a database written by this
// package must stay readable.  A new layout takes a new version byte, and
// decodeLog keeps reading the old ones.

package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/raft"
)

// logEncodingV1 is the version byte of the layout above.
const logEncodingV1 = 1

// flagAppendedAt (flags bit 0) says that AppendedAt is set and its two
// fields follow; a zero AppendedAt is stored as the bit clear.
const flagAppendedAt = 1 << 0

// ErrUnknownEncoding is matched (errors.Is) by the error GetLog returns for
// a stored entry whose version byte this package does not know: the
// database was written by a newer version of raftstore, or is not a
// raftstore log.
var ErrUnknownEncoding = errors.New("raftstore: unknown log encoding version")

// ErrCorruptEntry is matched (errors.Is) by the error GetLog returns for a
// stored entry of a known version that does not decode (truncated, or with
// bytes left over).
var ErrCorruptEntry = errors.New("raftstore: corrupt log entry")

// appendLogKey appends the key of the entry at index under prefix to dst.
func appendLogKey(dst, prefix []byte, index uint64) []byte {
	dst = append(dst, prefix...)
	return binary.BigEndian.AppendUint64(dst, index)
}

// logIndexOfKey is the index in a key written by appendLogKey, and false
// for a key of another length.
func logIndexOfKey(key, prefix []byte) (uint64, bool) {
	if len(key) != len(prefix)+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[len(prefix):]), true
}

// appendLogValue appends the version-1 encoding of l (all but its Index,
// which is in the key) to dst.
func appendLogValue(dst []byte, l *raft.Log) []byte {
	dst = append(dst, logEncodingV1)
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	if l.AppendedAt.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = append(dst, flagAppendedAt)
		dst = binary.AppendVarint(dst, l.AppendedAt.Unix())
		dst = binary.AppendUvarint(dst, uint64(l.AppendedAt.Nanosecond()))
	}
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	return append(dst, l.Extensions...)
}

// decodeLog fills l from the value stored at index.  l.Data and
// l.Extensions are views of value (nil when empty): the caller hands over a
// value nobody else holds.  AppendedAt comes back in the local time zone
// and without a monotonic clock reading; compare it with time.Time.Equal.
func decodeLog(index uint64, value []byte, l *raft.Log) error {
	if len(value) == 0 {
		return fmt.Errorf("%w: entry %d is empty", ErrCorruptEntry, index)
	}
	if value[0] != logEncodingV1 {
		return fmt.Errorf("%w: entry %d has version %d; this raftstore "+
			"reads version %d (was the database written by a newer raftstore?)",
			ErrUnknownEncoding, index, value[0], logEncodingV1)
	}
	d := decoder{buf: value[1:]}
	out := raft.Log{Index: index, Term: d.uvarint()}
	out.Type = raft.LogType(d.u8())
	if flags := d.u8(); flags&flagAppendedAt != 0 {
		sec, nsec := d.varint(), d.uvarint()
		if nsec >= uint64(time.Second) {
			d.fail("nanoseconds out of range")
		}
		out.AppendedAt = time.Unix(sec, int64(nsec))
	} else if flags != 0 {
		d.fail("unknown flags")
	}
	out.Data = d.bytes()
	out.Extensions = d.bytes()
	if d.err == "" && len(d.buf) != 0 {
		d.fail("bytes left over")
	}
	if d.err != "" {
		return fmt.Errorf("%w: entry %d: %s", ErrCorruptEntry, index, d.err)
	}
	*l = out
	return nil
}

// decoder reads the fields of a value in order; the first failure is kept
// in err and every read after it returns zero.
type decoder struct {
	buf []byte
	err string
}

func (d *decoder) fail(why string) {
	if d.err == "" {
		d.err = why
	}
	d.buf = nil
}

func (d *decoder) u8() byte {
	if len(d.buf) < 1 {
		d.fail("truncated")
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("truncated or overlong varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("truncated or overlong varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// bytes reads a length and that many bytes: a view capped at its length
// (an append to it cannot overwrite what follows), or nil when empty.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != "" {
		return nil
	}
	if n > uint64(len(d.buf)) || n > math.MaxInt {
		d.fail("length past the end")
		return nil
	}
	if n == 0 {
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}
