package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// importablePackages are the packages outside internal/: the Go API.
var importablePackages = []string{"github.com/tfyarn/tfyarn/client", "github.com/tfyarn/tfyarn/taskspec"}

// maxExported bounds the Go API's size (issue 23): package-level exported
// names plus the exported methods of exported types, over importablePackages.
const maxExported = 200

// loadAPI type-checks the importable packages from the compiler's export
// data (go list -export): what another module's code sees of them.
func loadAPI(t *testing.T) []*types.Package {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, importablePackages...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(exports[path])
	})
	var pkgs []*types.Package
	for _, path := range importablePackages {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("importing %s: %v", path, err)
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs
}

// exportedObjects are pkg's exported package-level objects and the
// exported methods its exported types declare, by name (Type.Method).
func exportedObjects(pkg *types.Package) map[string]types.Object {
	objs := map[string]types.Object{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		objs[pkg.Name()+"."+name] = obj
		tn, ok := obj.(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		if named, ok := tn.Type().(*types.Named); ok {
			for i := range named.NumMethods() {
				if m := named.Method(i); m.Exported() {
					objs[pkg.Name()+"."+name+"."+m.Name()] = m
				}
			}
		}
	}
	return objs
}

// TestAPISize keeps the Go API small: at most maxExported exported names.
func TestAPISize(t *testing.T) {
	total := 0
	for _, pkg := range loadAPI(t) {
		n := len(exportedObjects(pkg))
		t.Logf("%s: %d exported identifiers", pkg.Path(), n)
		total += n
	}
	t.Logf("Go API: %d exported identifiers (at most %d)", total, maxExported)
	if total > maxExported {
		t.Errorf("the Go API has %d exported identifiers, more than %d: unexport what only the CLI or tests use", total, maxExported)
	}
}

// TestAPINamesNoInternalType: an outside user can name every type the Go
// API's exported signatures, fields and constants mention.
func TestAPINamesNoInternalType(t *testing.T) {
	var leaks []string
	for _, pkg := range loadAPI(t) {
		for name, obj := range exportedObjects(pkg) {
			seen := map[types.Type]bool{}
			var walk func(where string, typ types.Type)
			walk = func(where string, typ types.Type) {
				if seen[typ] {
					return
				}
				seen[typ] = true
				switch t := typ.(type) {
				case *types.Alias:
					walk(where, types.Unalias(t))
				case *types.Named:
					p := t.Obj().Pkg()
					if p != nil && strings.Contains(p.Path()+"/", "/internal/") {
						leaks = append(leaks, where+" mentions "+p.Path()+"."+t.Obj().Name())
						return
					}
					for i := range t.TypeArgs().Len() {
						walk(where, t.TypeArgs().At(i))
					}
					// The API's own exported types are checked as objects
					// of their own, its unexported ones here (their
					// exported fields and methods show); other packages'
					// (the standard library's) are public.
					if p != nil && slices.Contains(importablePackages, p.Path()) && !t.Obj().Exported() {
						walk(where, t.Underlying())
					}
				case *types.Pointer:
					walk(where, t.Elem())
				case *types.Slice:
					walk(where, t.Elem())
				case *types.Array:
					walk(where, t.Elem())
				case *types.Map:
					walk(where, t.Key())
					walk(where, t.Elem())
				case *types.Chan:
					walk(where, t.Elem())
				case *types.Signature:
					for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
						for i := range tup.Len() {
							walk(where, tup.At(i).Type())
						}
					}
				case *types.Struct:
					for i := range t.NumFields() {
						if f := t.Field(i); f.Exported() {
							walk(where+"."+f.Name(), f.Type())
						}
					}
				case *types.Interface:
					for i := range t.NumMethods() {
						if m := t.Method(i); m.Exported() {
							walk(where+"."+m.Name(), m.Type())
						}
					}
				}
			}
			if tn, ok := obj.(*types.TypeName); ok {
				if tn.IsAlias() {
					walk(name, tn.Type())
				} else {
					walk(name, tn.Type().Underlying())
				}
				continue
			}
			walk(name, obj.Type())
		}
	}
	sort.Strings(leaks)
	for _, l := range leaks {
		t.Error(l)
	}
}
