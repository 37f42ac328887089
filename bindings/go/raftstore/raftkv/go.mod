module github.com/ravel-kv/ravel/bindings/go/raftstore/raftkv

go 1.25.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/hashicorp/raft v1.8.0
	github.com/ravel-kv/ravel/bindings/go v0.0.0-00010101000000-000000000000
	github.com/ravel-kv/ravel/bindings/go/raftstore v0.0.0-00010101000000-000000000000
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/hashicorp/go-hclog v1.6.3 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-metrics v0.7.0 // indirect
	github.com/hashicorp/go-msgpack/v2 v2.1.5 // indirect
	github.com/hashicorp/golang-lru v1.0.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace (
	github.com/ravel-kv/ravel/bindings/go => ../../
	github.com/ravel-kv/ravel/bindings/go/raftstore => ../
)
