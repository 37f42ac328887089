// model_test.go -- the porcupine model of the key-value service: one
// register per key (partitioned by key), with get, put, delete and
// compare-and-set; a write whose outcome is unknown may have happened.
package main

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
)

type kvInput struct {
	Op     string // get, put, delete, cas
	Key    string
	Value  string // put, cas: the value written
	Expect string // cas: the value expected
	Absent bool   // cas: expect no value
}

type kvOutput struct {
	Value   string // get
	Exists  bool   // get: the key had a value
	Swapped bool   // cas: the condition held
	Unknown bool   // a write whose outcome nobody knows
}

// kvState is one key's value (comparable, so porcupine's == works).
type kvState struct {
	Value  string
	Exists bool
}

// endOfTime is the return time of an operation whose outcome is unknown:
// it may take effect at any point after its call.
const endOfTime = int64(1) << 62

var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(kvInput).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		var parts [][]porcupine.Operation
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() interface{} { return kvState{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st, in, out := state.(kvState), input.(kvInput), output.(kvOutput)
		switch in.Op {
		case "get":
			return out.Exists == st.Exists && (!st.Exists || out.Value == st.Value), st
		case "put":
			return true, kvState{in.Value, true}
		case "delete":
			return true, kvState{}
		case "cas":
			holds := (in.Absent && !st.Exists) || (!in.Absent && st.Exists && st.Value == in.Expect)
			next := st
			if holds {
				next = kvState{in.Value, true}
			}
			if out.Unknown {
				return true, next
			}
			return out.Swapped == holds, next
		}
		return false, st
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(kvInput), output.(kvOutput)
		res := ""
		switch {
		case out.Unknown:
			res = " -> ?"
		case in.Op == "get" && !out.Exists:
			res = " -> absent"
		case in.Op == "get":
			res = fmt.Sprintf(" -> %q", out.Value)
		case in.Op == "cas":
			res = fmt.Sprintf(" -> swapped=%v", out.Swapped)
		}
		switch {
		case in.Op == "put":
			return fmt.Sprintf("put(%s, %q)%s", in.Key, in.Value, res)
		case in.Op == "cas" && in.Absent:
			return fmt.Sprintf("cas(%s, absent, %q)%s", in.Key, in.Value, res)
		case in.Op == "cas":
			return fmt.Sprintf("cas(%s, %q, %q)%s", in.Key, in.Expect, in.Value, res)
		}
		return fmt.Sprintf("%s(%s)%s", in.Op, in.Key, res)
	},
	DescribeState: func(state interface{}) string {
		if st := state.(kvState); st.Exists {
			return fmt.Sprintf("%q", st.Value)
		}
		return "absent"
	},
}

// TestModelRejectsStaleReads checks the checker and the model on small
// histories written by hand: a stale read and a lost CAS are illegal, an
// unknown write may or may not have happened.
func TestModelRejectsStaleReads(t *testing.T) {
	op := func(call, ret int64, in kvInput, out kvOutput) porcupine.Operation {
		return porcupine.Operation{Input: in, Output: out, Call: call, Return: ret}
	}
	put := kvInput{Op: "put", Key: "x", Value: "1"}
	get := kvInput{Op: "get", Key: "x"}
	cases := []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"read after write sees it", []porcupine.Operation{
			op(0, 10, put, kvOutput{}), op(20, 30, get, kvOutput{Value: "1", Exists: true})}, porcupine.Ok},
		{"stale read after write", []porcupine.Operation{
			op(0, 10, put, kvOutput{}), op(20, 30, get, kvOutput{})}, porcupine.Illegal},
		{"concurrent read may miss it", []porcupine.Operation{
			op(0, 10, put, kvOutput{}), op(5, 30, get, kvOutput{})}, porcupine.Ok},
		{"unknown write may have happened", []porcupine.Operation{
			op(0, endOfTime, put, kvOutput{Unknown: true}), op(20, 30, get, kvOutput{Value: "1", Exists: true})}, porcupine.Ok},
		{"unknown write may not have happened", []porcupine.Operation{
			op(0, endOfTime, put, kvOutput{Unknown: true}), op(20, 30, get, kvOutput{})}, porcupine.Ok},
		{"two CAS from absent both won", []porcupine.Operation{
			op(0, 10, kvInput{Op: "cas", Key: "x", Value: "a", Absent: true}, kvOutput{Swapped: true}),
			op(0, 10, kvInput{Op: "cas", Key: "x", Value: "b", Absent: true}, kvOutput{Swapped: true})}, porcupine.Illegal},
		{"read of a value never written", []porcupine.Operation{
			op(0, 10, get, kvOutput{Value: "9", Exists: true})}, porcupine.Illegal},
	}
	for _, c := range cases {
		if got := porcupine.CheckOperationsTimeout(kvModel, c.history, 0); got != c.want {
			t.Errorf("%s: porcupine says %v, want %v", c.name, got, c.want)
		}
	}
}
