// readme_test.go -- the README's example is example_test.go, character
// for character, so that the example go test runs is the one readers see.

package ravel_test

import (
	"os"
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
