// codec_test.go -- the log encoding: its bytes are frozen (a golden value),
// an unknown version and damaged values are refused with clear errors, and
// decoding arbitrary bytes never panics (a fuzz target; go test runs its
// seeds).

package raftstore

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// The version-1 bytes of one entry, written out by hand from the layout in
// codec.go.  If this test fails, the encoding changed: old databases would
// no longer read.  Add a version instead.
func TestEncodingV1IsFrozen(t *testing.T) {
	l := &raft.Log{Index: 5, Term: 300, Type: raft.LogConfiguration,
		Data: []byte("hi"), Extensions: []byte{0xee},
		AppendedAt: time.Unix(1, 2)}
	got := appendLogValue(nil, l)
	want := "01" + // version
		"ac02" + // term 300, uvarint
		"05" + // type
		"01" + // flags: AppendedAt follows
		"02" + // seconds 1, zigzag varint
		"02" + // nanoseconds 2
		"02" + "6869" + // data
		"01" + "ee" // extensions
	if hex.EncodeToString(got) != want {
		t.Fatalf("encoding %x, want %s", got, want)
	}
	key := appendLogKey(nil, []byte("p/"), 0x0102030405060708)
	if hex.EncodeToString(key) != "702f0102030405060708" {
		t.Fatalf("key %x", key)
	}
	var back raft.Log
	if err := decodeLog(5, got, &back); err != nil {
		t.Fatal(err)
	}
	if back.Term != 300 || !back.AppendedAt.Equal(l.AppendedAt) ||
		string(back.Data) != "hi" || !bytes.Equal(back.Extensions, []byte{0xee}) {
		t.Fatalf("decoded %+v", back)
	}
}

func TestDecodeRefusesUnknownVersion(t *testing.T) {
	value := appendLogValue(nil, &raft.Log{Index: 1, Data: []byte("x")})
	value[0] = 2
	l := raft.Log{Term: 42}
	err := decodeLog(9, value, &l)
	if !errors.Is(err, ErrUnknownEncoding) {
		t.Fatalf("got %v, want ErrUnknownEncoding", err)
	}
	for _, part := range []string{"entry 9", "version 2", "version 1"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("message %q lacks %q", err, part)
		}
	}
	if l.Term != 42 {
		t.Error("a refused entry changed the log it was read into")
	}
}

func TestDecodeRefusesDamage(t *testing.T) {
	good := appendLogValue(nil, &raft.Log{Index: 1, Term: 3,
		Data: []byte("data"), Extensions: []byte("ext"), AppendedAt: time.Unix(5, 6)})
	cases := map[string][]byte{
		"empty":        {},
		"extra byte":   append(bytes.Clone(good), 0),
		"unknown flag": {1, 0, 0, 2, 0, 0},
		"bad nanos":    {1, 0, 0, 1, 0, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0, 0},
		"long length":  {1, 0, 0, 0, 5, 'a'},
	}
	for n := 1; n < len(good); n++ {
		cases[fmt.Sprintf("truncated to %d bytes", n)] = good[:n]
	}
	for name, value := range cases {
		var l raft.Log
		if err := decodeLog(1, value, &l); !errors.Is(err, ErrCorruptEntry) {
			t.Errorf("%s (%x): got %v, want ErrCorruptEntry", name, value, err)
		}
	}
}

// Decoded byte slices are capped: appending to Data cannot overwrite
// Extensions.
func TestDecodedSlicesAreCapped(t *testing.T) {
	value := appendLogValue(nil, &raft.Log{Data: []byte("ab"), Extensions: []byte("cd")})
	var l raft.Log
	if err := decodeLog(1, value, &l); err != nil {
		t.Fatal(err)
	}
	_ = append(l.Data, 'X', 'Y', 'Z')
	if string(l.Extensions) != "cd" {
		t.Fatalf("extensions became %q", l.Extensions)
	}
}

func FuzzDecodeLog(f *testing.F) {
	f.Add(appendLogValue(nil, &raft.Log{Term: 1, Data: []byte("x")}))
	f.Add(appendLogValue(nil, &raft.Log{AppendedAt: time.Unix(-5, 3), Extensions: []byte{1}}))
	f.Add([]byte{1})
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, value []byte) {
		var l raft.Log
		if err := decodeLog(7, value, &l); err != nil {
			return
		}
		// What decodes, encodes to bytes that decode to the same entry.
		again := appendLogValue(nil, &l)
		var back raft.Log
		if err := decodeLog(7, again, &back); err != nil {
			t.Fatalf("%x decoded to %+v, whose encoding %x does not decode: %v",
				value, l, again, err)
		}
		if back.Term != l.Term || back.Type != l.Type || !back.AppendedAt.Equal(l.AppendedAt) ||
			!bytes.Equal(back.Data, l.Data) || !bytes.Equal(back.Extensions, l.Extensions) {
			t.Fatalf("%x decoded to %+v, re-encoded and decoded to %+v", value, l, back)
		}
	})
}
