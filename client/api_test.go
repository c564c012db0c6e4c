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
	"strconv"
	"strings"
	"testing"
)

// importablePackages are the module's packages another module can import, as `go list` finds
// them: every package outside internal/ that is not a program, nor part of the benchmarks
// (bench/) or the test cluster (testcluster/), which no other module builds on, nor python/
// (the Python package the binary carries: it sits beside its sources for go:embed, and is for the
// release and the launcher, not for other modules). The Go API.
func importablePackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}}", "github.com/tfyarn/tfyarn/...")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, name, _ := strings.Cut(line, " ")
		rel := strings.TrimPrefix(path, "github.com/tfyarn/tfyarn")
		if name == "main" || strings.Contains(path+"/", "/internal/") ||
			strings.HasPrefix(rel+"/", "/bench/") || strings.HasPrefix(rel+"/", "/testcluster/") || strings.HasPrefix(rel+"/", "/python/") {
			continue
		}
		pkgs = append(pkgs, path)
	}
	if !slices.Contains(pkgs, "github.com/tfyarn/tfyarn/client") {
		t.Fatalf("go list found no client package among %v", pkgs)
	}
	return pkgs
}

// maxExported bounds the Go API's size (issue 23, issue 32): package-level exported names, the
// exported methods of exported types and the exported fields of exported struct types, over
// importablePackages. A ratchet at today's count: the public client is to become thinner, never
// larger. 515 after issue 32's thinning; 517 since client.Event and client.Result became aliases
// of their one definition in jobreport (two names, no copy to keep in step); 518 since
// jobreport.Report says which tfyarn its AM runs (TfyarnVersion, issue 34); 524 after issue 36
// (MLflow); 539 for checkpoints (issue 37: taskspec.Job.Checkpoint, taskspec.Checkpoint and its 3
// fields, MaxCheckpointKeep; client.Checkpoint and its 6 fields, Client.Checkpoints and
// DeleteCheckpoints); 553 for the tasks' results (issue 35: Client.Results, TaskResult,
// DeleteResults, ErrNoResult, ResultInfo and its two fields, ResultsExpired; jobreport's
// Task.ResultBytes and ResultNotSaved, Result.ResultFiles, Event.Warning), Client.Attach (tfyarn
// wait) and jobreport.TaskProgress (--output events); 576 for bad nodes (issue 39: 23 names).
const maxExported = 584

// loadAPI type-checks the importable packages from the compiler's export
// data (go list -export): what another module's code sees of them.
func loadAPI(t *testing.T) []*types.Package {
	t.Helper()
	importable := importablePackages(t)
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, importable...)
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
	for _, path := range importable {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("importing %s: %v", path, err)
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs
}

// exportedObjects are pkg's exported package-level objects, the exported methods its exported
// types declare (Type.Method) and the exported fields of its exported struct types (Type.Field),
// by name.
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
			if st, ok := named.Underlying().(*types.Struct); ok {
				for i := range st.NumFields() {
					if f := st.Field(i); f.Exported() {
						objs[pkg.Name()+"."+name+"."+f.Name()] = f
					}
				}
			}
		}
	}
	return objs
}

// TestAPISize keeps the Go API from growing: docs/go-api.md "at most 524 exported names, methods
// and struct fields".
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
					if p != nil && !strings.Contains(p.Path()+"/", "/internal/") && strings.HasPrefix(p.Path(), "github.com/tfyarn/tfyarn") && !t.Obj().Exported() {
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

// TestAPISizeIsWhatTheDocsSay: the number docs/go-api.md gives is maxExported.
func TestAPISizeIsWhatTheDocsSay(t *testing.T) {
	doc, err := os.ReadFile("../docs/go-api.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "at most " + strconv.Itoa(maxExported) + " exported names, methods and struct fields"
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/go-api.md does not say %q", want)
	}
}
