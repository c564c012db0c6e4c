package core

import (
	"go/build"
	"sort"
	"strings"
	"testing"
)

// module is this repository's import path prefix.
const module = "github.com/tfyarn/tfyarn/"

// allowedImports is everything the core, and the module's packages it
// builds on, may import: the standard library's pure parts and taskspec.
// Purity is what lets every scheduling and restart rule be decided by
// feeding events, so the compiler's import graph is held to it here rather
// than by convention. net is allowed for taskspec's host:port helpers
// (JoinHostPort, SplitHostPort), which do no I/O.
var allowedImports = map[string]bool{
	"encoding/json": true, "errors": true, "fmt": true, "math": true, "net": true, "path": true,
	"regexp": true, "slices": true, "sort": true, "strconv": true, "strings": true,
	"time": true, "unicode": true, "unicode/utf8": true, "maps": true, "cmp": true,
	module + "taskspec": true,
	// The framework seam is pure too: each framework's success rule. Its
	// embed carries a file compiled into the binary: no I/O at run time.
	module + "internal/framework": true, "embed": true,
}

func TestCoreImportsOnlyPureStdlibAndTaskspec(t *testing.T) {
	seen := map[string]bool{}
	var bad []string
	var walk func(path, dir string)
	walk = func(path, dir string) {
		if seen[path] {
			return
		}
		seen[path] = true
		pkg, err := build.Default.Import(path, dir, 0)
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			if !allowedImports[imp] {
				bad = append(bad, path+" imports "+imp)
			}
			if strings.HasPrefix(imp, module) {
				walk(imp, pkg.Dir)
			}
		}
	}
	walk(module+"internal/appmaster/core", ".")
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Fatalf("the core must stay pure (standard library's pure parts and taskspec only):\n%s", strings.Join(bad, "\n"))
	}
	if !seen[module+"taskspec"] {
		t.Fatal("the walk did not reach taskspec: the check reads nothing")
	}
}
