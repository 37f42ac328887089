module github.com/ravel-kv/ravel/bindings/go

go 1.24
