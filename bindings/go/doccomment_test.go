// doccomment_test.go -- the doc comments follow Go's conventions
// (go.dev/doc/comment): every exported identifier has one, it begins with
// the identifier's name, it is made of full sentences, and it names
// parameters as they are spelled (not in capitals, as C comments do); a
// group of constants has a comment for the group or for each of them.

package ravel_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

func TestDocComments(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/ravel-kv/ravel/bindings/go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Doc, "Package ravel ") {
		t.Errorf("the package comment does not begin with \"Package ravel\": %.40q", p.Doc)
	}
	checkValues(t, p.Consts)
	checkValues(t, p.Vars)
	for _, f := range p.Funcs {
		checkDoc(t, f.Name, f.Name, f.Doc)
		checkParams(t, f.Name, f)
	}
	for _, ty := range p.Types {
		checkDoc(t, ty.Name, ty.Name, ty.Doc)
		checkValues(t, ty.Consts)
		checkValues(t, ty.Vars)
		for _, f := range ty.Funcs {
			checkDoc(t, f.Name, f.Name, f.Doc)
			checkParams(t, f.Name, f)
		}
		for _, m := range ty.Methods {
			checkDoc(t, ty.Name+"."+m.Name, m.Name, m.Doc)
			checkParams(t, ty.Name+"."+m.Name, m)
		}
	}
}

// checkDoc checks the doc comment TEXT of the identifier NAME (shown as
// WHAT): present, beginning with NAME (after "A", "An" or "The"), and
// ending a sentence (or a code block).
func checkDoc(t *testing.T, what, name, text string) {
	t.Helper()
	text = strings.TrimSpace(text)
	if text == "" {
		t.Errorf("%s has no doc comment", what)
		return
	}
	first := strings.Fields(text)
	words := first
	if words[0] == "A" || words[0] == "An" || words[0] == "The" {
		words = words[1:]
	}
	if len(words) == 0 || strings.TrimRight(words[0], ",.:;") != name {
		t.Errorf("%s: the doc comment begins %q, not with the name %s", what, strings.Join(first[:min(3, len(first))], " "), name)
	}
	if len(words) < 3 {
		t.Errorf("%s: the doc comment %q is not a sentence", what, text)
	}
	lines := strings.Split(text, "\n")
	last := lines[len(lines)-1]
	isCode := strings.HasPrefix(last, "\t") || strings.HasPrefix(last, "  ")
	if !isCode && !strings.HasSuffix(last, ".") && !strings.HasSuffix(last, ".)") {
		t.Errorf("%s: the doc comment does not end a sentence: %q", what, last)
	}
}

// checkParams checks that the doc comment of F names its parameters as
// they are spelled ("key"), not in C's capitals ("KEY").
func checkParams(t *testing.T, what string, f *doc.Func) {
	t.Helper()
	words := strings.FieldsFunc(f.Doc, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, field := range f.Decl.Type.Params.List {
		for _, param := range field.Names {
			shout := strings.ToUpper(param.Name)
			if shout == param.Name {
				continue
			}
			for _, w := range words {
				if w == shout {
					t.Errorf("%s: the doc comment says %s for the parameter %s", what, shout, param.Name)
					break
				}
			}
		}
	}
}

// checkValues checks constant or variable declarations: one name alone is
// documented as checkDoc says; a group has a comment for the group or for
// each name in it.
func checkValues(t *testing.T, values []*doc.Value) {
	t.Helper()
	for _, v := range values {
		exported := exportedNames(v.Names)
		if len(exported) == 0 {
			continue
		}
		if len(v.Names) == 1 {
			checkDoc(t, exported[0], exported[0], v.Doc)
			continue
		}
		if strings.TrimSpace(v.Doc) != "" {
			continue
		}
		for _, spec := range v.Decl.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Doc == nil && vs.Comment == nil {
				t.Errorf("%s: neither its group nor itself has a comment", vs.Names[0].Name)
			}
		}
	}
}

func exportedNames(names []string) []string {
	var out []string
	for _, n := range names {
		if token.IsExported(n) {
			out = append(out, n)
		}
	}
	return out
}
