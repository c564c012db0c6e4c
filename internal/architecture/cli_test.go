package architecture_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cliInternalEntryPoints are cmd/tfyarn's files that run tfyarn's own sides rather than ask the
// Go API: `tfyarn am` (the ApplicationMaster), `tfyarn task` (the in-container launcher, and its
// checkpoint store) and
// `run --local` (the local driver, which shares the shipping plan with client). Every other file
// of the CLI is a user-facing command over the public Go API (issue 23).
var cliInternalEntryPoints = map[string]string{
	"am.go":               "tfyarn am: the ApplicationMaster",
	"task.go":             "tfyarn task: the in-container launcher",
	"task_checkpoints.go": "tfyarn task: the launcher's checkpoint store on HDFS",
	"run_local.go":        "tfyarn run --local: the local driver",
}

// cliOutputHelpers are the internal packages every command may use: pure output helpers, no
// cluster, job or protocol in them (internal/buildinfo: which tfyarn this binary is).
var cliOutputHelpers = []string{"internal/cliout", "internal/progressbar", "internal/buildinfo"}

// TestCLIUsesThePublicAPI: the CLI's user-facing commands import no internal package but the
// output helpers, so that whatever they do, a Go program can do through client.
func TestCLIUsesThePublicAPI(t *testing.T) {
	dir := filepath.Join("..", "..", "cmd", "tfyarn")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		seen[name] = true
		if _, ok := cliInternalEntryPoints[name]; ok {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			r := rel(p)
			if strings.HasPrefix(r, "internal/") && !slices.Contains(cliOutputHelpers, r) {
				bad = append(bad, "cmd/tfyarn/"+name+" imports "+r)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	for name := range cliInternalEntryPoints {
		if !seen[name] {
			bad = append(bad, "cmd/tfyarn/"+name+" is named an internal entry point but does not exist: update cliInternalEntryPoints")
		}
	}
	report(t, "the CLI's user-facing commands use the public Go API only (client, taskspec, jobreport, clusterinfo), plus "+strings.Join(cliOutputHelpers, " and "), bad)
}
