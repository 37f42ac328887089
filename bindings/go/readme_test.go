// readme_test.go -- the README's example is example_test.go, character
// for character, so that the example go test runs is the one readers see;
// and its recipe for a new module works as written.

package ravel_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadmeExampleIsExampleTestGo(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	const open, fence = "```go\n", "```\n"
	text := string(readme)
	start := strings.Index(text, open)
	if start < 0 {
		t.Fatal("README.md has no ```go code block")
	}
	block := text[start+len(open):]
	end := strings.Index(block, fence)
	if end < 0 {
		t.Fatal("README.md's ```go code block is not closed")
	}
	if block[:end] != string(example) {
		t.Fatalf("README.md's first go code block differs from example_test.go:\n"+
			"--- README.md\n%s\n--- example_test.go\n%s", block[:end], example)
	}
}

// The README's transactions example is example_txn_test.go, character for
// character.
func TestReadmeTxnExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_txn_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := fencedBlock(t, string(readme), "<!-- example: example_txn_test.go -->\n```go\n")
	if block != string(example) {
		t.Fatalf("README.md's transactions example differs from example_txn_test.go:\n"+
			"--- README.md\n%s\n--- example_txn_test.go\n%s", block, example)
	}
}

// The README's operations example is example_ops_test.go, character for
// character.
func TestReadmeOpsExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_ops_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := fencedBlock(t, string(readme), "<!-- example: example_ops_test.go -->\n```go\n")
	if block != string(example) {
		t.Fatalf("README.md's operations example differs from example_ops_test.go:\n"+
			"--- README.md\n%s\n--- example_ops_test.go\n%s", block, example)
	}
}

// The README's recipe for using the binding from a new module (its ```sh
// block) works as written: run with sh in an empty directory, with
// /path/to/ravel replaced by this checkout, without network (GOPROXY=off)
// and with no GOFLAGS (a -mod=mod would hide a missing require), it prints
// what the README says.
func TestReadmeModuleRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new module (-short)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	script := fencedBlock(t, string(readme), "```sh\n")
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script = strings.ReplaceAll(script, "/path/to/ravel", checkout)
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOWORK=off",
		"GOTOOLCHAIN=local", "CGO_ENABLED=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's recipe failed: %v\n%s", err, stderr.String())
	}
	if string(out) != "hello world\n" {
		t.Fatalf("the README's recipe printed %q, the README says \"hello world\"", out)
	}
	if !strings.Contains(string(readme), "prints `hello world`") {
		t.Fatal("the README no longer says what the recipe prints")
	}
}

// fencedBlock returns the contents of the first code block of TEXT opened
// by OPEN.
func fencedBlock(t *testing.T, text, open string) string {
	t.Helper()
	start := strings.Index(text, open)
	if start < 0 {
		t.Fatalf("README.md has no %q code block", strings.TrimSpace(open))
	}
	block := text[start+len(open):]
	end := strings.Index(block, "\n```\n")
	if end < 0 {
		t.Fatalf("README.md's %q code block is not closed", strings.TrimSpace(open))
	}
	return block[:end+1]
}
