package architecture_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a hand-written function may be, counted from its `func` line to its
// closing brace inclusive. A function longer than this is split into named steps, so that a
// newcomer reads what it does before how.
const maxFuncLines = 100

// longFunc is one function over maxFuncLines.
type longFunc struct {
	name  string // the function's name, without its receiver
	where string // module-relative file:line of the `func` keyword
	lines int
}

// longFuncs parses every non-test, hand-written Go file of the module (whatever its build tags)
// and returns the functions over maxFuncLines. Generated files (marked "Code generated ... DO NOT
// EDIT.") and testdata are skipped.
func longFuncs(t *testing.T) (long []longFunc, files int) {
	t.Helper()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(file) {
			return nil
		}
		files++
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				long = append(long, longFunc{
					name:  fn.Name.Name,
					where: fmt.Sprintf("%s:%d", rel, start.Line),
					lines: n,
				})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return long, files
}

// TestNoLongFunctions: no hand-written function is over maxFuncLines lines.
func TestNoLongFunctions(t *testing.T) {
	long, files := longFuncs(t)
	if files < 100 {
		t.Fatalf("read %d Go files: the check reads nothing", files)
	}
	for _, f := range long {
		t.Errorf("%s: %s is %d lines long (at most %d): split it into named steps", f.where, f.name, f.lines, maxFuncLines)
	}
}
