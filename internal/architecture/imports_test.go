package architecture_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// module is this repository's import path.
const module = "github.com/tfyarn/tfyarn"

// layers lists every package of the module, bottom up, as module-relative paths. A package's own
// (non-test) imports of the module's packages go strictly downwards: to a package of an earlier
// layer. The order follows README's Layout table: the Hadoop protocol and foundations, the RPC
// client and the job model's pure neighbours, what the sides agree on, the Hadoop clients, the
// features, the two sides (the AM and the in-container launcher), the local driver, the public Go
// API, the programs.
var layers = []struct {
	name string
	pkgs []string
}{
	{"rule languages of Hadoop's configuration, pure (auth_to_local)", []string{"internal/authtolocal"}},
	{"what servers refused, clipped and counted (for the foundations' servers too)", []string{"internal/refusals"}},
	{"foundations: the job model, the job's and the cluster's reports, Hadoop configuration and credentials, generated messages, small single-purpose packages", []string{
		"taskspec", "jobreport", "clusterinfo", "internal/hadoopconf", "internal/security", "internal/yarnpb", "internal/yarnpb/hadoopcommon",
		"internal/atomicfile", "internal/connlimit", "internal/pause", "internal/torchstore", "internal/cliout", "internal/progressbar", "internal/buildinfo",
		"internal/tasklogs/aggregated", "internal/tasklogs/nodemanager", "internal/tasklogs/prefix",
		"internal/syncbuf", "internal/procio", "internal/clustertest", "internal/containerexit", "internal/reqsign",
	}},
	{"the Python package the binary carries (the SDK's sources, written into wheels and tasks)", []string{"python"}},
	{"the success rules' seam: what decides a job, for the frameworks and the AM's core", []string{"internal/success"}},
	{"the RPC client, the other generated messages, the framework seam", []string{
		"internal/ipc", "internal/yarnpb/hadoophdfs", "internal/yarnpb/hadoopyarn", "internal/framework", "internal/transcript",
	}},
	{"the frameworks, each behind the seam", []string{
		"internal/framework/tensorflow", "internal/framework/pytorch", "internal/framework/jax", "internal/framework/xgboost", "internal/framework/lightgbm",
	}},
	{"the frameworks' registry", []string{"internal/frameworks"}},
	{"what client, AM and launcher agree on; the AM's pure core; the placement check; environment archives", []string{
		"internal/contract", "internal/appmaster/core", "internal/placement", "internal/envpack",
	}},
	{"the Hadoop clients and the launcher-AM channel", []string{
		"internal/yarn", "internal/hdfs", "internal/rendezvous",
	}},
	{"features shared by several programs", []string{
		"internal/shipplan", "internal/connect", "internal/amattempt", "internal/tasklogs", "internal/appmaster/webui", "internal/mlflow",
	}},
	{"the two sides of a running job: the AM and the in-container launcher", []string{
		"internal/appmaster", "internal/executor",
	}},
	{"run --local", []string{"internal/localrun"}},
	{"the engine behind the public Go API: submission, following a job, errors in words, the cluster's report", []string{
		"internal/submit", "internal/follow", "internal/explain", "internal/clusterquery",
	}},
	{"the public Go API", []string{"client"}},
	{"the release's writers: binaries, tarballs, wheels, SBOMs (make release)", []string{"internal/release"}},
	{"programs and tests of the whole", []string{
		"cmd/tfyarn", "examples/go/runonyarn", "bench", "bench/uploadwin", "testcluster/containerexecutor", "internal/testlanes",
		"internal/architecture", "internal/release/mkrelease",
	}},
}

// never lists the arrows that must not exist, each with why; they hold for tests' imports too.
// Most also follow from the layers: they are spelled out so that moving a package between layers
// cannot silently allow them.
var never = []struct {
	from, to string // module-relative; "x/..." is x and everything under it
	why      string
}{
	{"...", "cmd/...", "cmd/ holds programs; what they share belongs in a package"},
	{"...", "examples/...", "examples use the public API, nothing uses them"},
	{"...", "bench/...", "benchmarks measure the code, nothing builds on them"},
	{"internal/executor", "internal/appmaster/...", "the launcher and the AM meet only in contract, rendezvous and amattempt"},
	{"internal/appmaster", "internal/executor", "the launcher and the AM meet only in contract, rendezvous and amattempt"},
	{"internal/amattempt", "internal/appmaster/...", "the launchers use it too: it holds what both sides of an AM attempt share"},
	{"internal/localrun", "internal/appmaster", "run --local drives the core itself; the AM's loop is YARN's"},
	{"internal/localrun", "internal/appmaster/webui", "run --local drives the core itself; the AM's page is YARN's"},
	{"internal/rendezvous", "internal/appmaster/...", "the channel serves both sides and belongs to neither"},
	{"internal/rendezvous", "internal/executor", "the channel serves both sides and belongs to neither"},
	{"client", "internal/localrun", "the shipping plan (internal/shipplan) is what YARN and --local share"},
	{"client", "internal/appmaster/...", "the client talks to the AM over the wire only"},
	{"client", "internal/executor", "the client talks to the launchers through YARN only"},
}

// neverLinks lists what a package must not build on at all, directly or through the packages it
// imports (its own code, not its tests').
var neverLinks = []struct {
	from, to string // module-relative, or a third-party import path; "x/..." is x and everything under it
	why      string
}{
	{"internal/executor", "internal/hdfs", "a task talks only to its AM, never to HDFS"},
	{"internal/executor", "github.com/colinmarc/hdfs/v2/...", "a task talks only to its AM, never to HDFS"},
	{"internal/executor", "internal/yarn", "a task talks only to its AM, never to YARN"},
	{"internal/executor", "internal/ipc", "a task talks only to its AM, never to Hadoop's RPC"},
	{"client", "internal/localrun", "the shipping plan (internal/shipplan) is what YARN and --local share, also for the engine behind client"},
	{"client", "internal/appmaster/...", "the client and its engine talk to the AM over the wire only"},
	{"client", "internal/executor", "the client and its engine talk to the launchers through YARN only"},
}

// testOnly packages help tests; no package's own code imports them.
var testOnly = []string{"internal/clustertest", "internal/procio", "internal/transcript", "internal/syncbuf"}

// thirdParty names the one home of each third-party module that is somebody's job to wrap (tests
// may use it to check that package against the real thing).
var thirdParty = map[string][]string{
	"github.com/colinmarc/hdfs/v2":   {"internal/hdfs", "bench/uploadwin"},
	"github.com/jcmturner/gokrb5/v8": {"internal/security", "internal/ipc"},
	"github.com/urfave/cli/v2":       {"cmd/tfyarn"},
}

// coreImports is everything the AM's core, and the module's packages it builds on, may import: the
// standard library's pure parts, taskspec and the success rules' seam (internal/success): the
// core consults whatever Policy it is given, which the AM and run --local get from the frameworks'
// registry, so it imports no framework nor the registry (whose frameworks carry side services,
// servers). Purity is what lets every scheduling and restart rule be decided by feeding events
// (transcript tests), so the compiler's import graph is held to it here rather than by convention.
// net is allowed for taskspec's host:port helpers (JoinHostPort, SplitHostPort), which do no I/O.
// internal/containerexit is YARN's exit statuses and their words, pure, shared with the client's
// `run` lines.
var coreImports = []string{
	"cmp", "encoding/json", "errors", "fmt", "maps", "math", "net", "path", "regexp", "slices",
	"sort", "strconv", "strings", "time", "unicode", "unicode/utf8",
	"taskspec", "internal/success", "internal/containerexit",
}

type goPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// rel is p relative to the module, or "" for a package outside it.
func rel(p string) string {
	if p == module {
		return "."
	}
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r
	}
	return ""
}

var listed struct {
	once sync.Once
	pkgs map[string]goPackage
	err  error
}

// goList reads `go list -json ./...` from the module's root (once), with every build tag the
// repository uses so that tagged tests count.
func goList(t *testing.T) map[string]goPackage {
	t.Helper()
	listed.once.Do(func() { listed.pkgs, listed.err = readGoList() })
	if listed.err != nil {
		t.Fatal(listed.err)
	}
	if len(listed.pkgs) < 10 {
		t.Fatalf("go list found %d packages: the check reads nothing", len(listed.pkgs))
	}
	return listed.pkgs
}

func readGoList() (map[string]goPackage, error) {
	cmd := exec.Command("go", "list", "-json", "-tags", "e2e,bench,soak", "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.String())
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs[rel(p.ImportPath)] = p
	}
	return pkgs, nil
}

// matches reports whether package p is named by pattern ("..." is any, "x/..." is x and below).
func matches(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// moduleImports is the module-relative form of the module's packages among imports.
func moduleImports(imports ...[]string) []string {
	var out []string
	for _, list := range imports {
		for _, imp := range list {
			if r := rel(imp); r != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

func report(t *testing.T, what string, bad []string) {
	t.Helper()
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Errorf("%s:\n  %s", what, strings.Join(slices.Compact(bad), "\n  "))
	}
}

func TestImportsGoDownTheLayers(t *testing.T) {
	pkgs := goList(t)
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l.pkgs {
			if _, dup := layerOf[p]; dup {
				t.Errorf("%s is in two layers", p)
			}
			layerOf[p] = i
		}
	}
	var unplaced, gone, upward []string
	for p := range pkgs {
		if _, ok := layerOf[p]; !ok {
			unplaced = append(unplaced, p)
		}
	}
	for p := range layerOf {
		if _, ok := pkgs[p]; !ok {
			gone = append(gone, p)
		}
	}
	for p, pkg := range pkgs {
		from, ok := layerOf[p]
		if !ok {
			continue
		}
		for _, imp := range moduleImports(pkg.Imports) {
			if to, ok := layerOf[imp]; ok && to >= from {
				upward = append(upward, p+" ("+layers[from].name+") imports "+imp+" ("+layers[to].name+")")
			}
		}
	}
	report(t, "packages in no layer (give each a place in layers, and a row in docs/development.md's Layout table)", unplaced)
	report(t, "layers name packages that do not exist", gone)
	report(t, "imports that do not go to an earlier layer", upward)
}

func TestNeverArrows(t *testing.T) {
	pkgs := goList(t)
	var bad []string
	for p, pkg := range pkgs {
		for _, imp := range moduleImports(pkg.Imports, pkg.TestImports, pkg.XTestImports) {
			if imp == p {
				continue // an external test package importing its own package
			}
			for _, n := range never {
				if matches(n.from, p) && matches(n.to, imp) && !matches(n.to, p) {
					bad = append(bad, p+" imports "+imp+": "+n.why)
				}
			}
		}
		for _, imp := range moduleImports(pkg.Imports) {
			if slices.Contains(testOnly, imp) {
				bad = append(bad, p+" imports "+imp+" outside its tests: it is a test helper")
			}
		}
		for _, imp := range pkg.Imports {
			for mod, homes := range thirdParty {
				if matches(mod+"/...", imp) && !slices.Contains(homes, p) {
					bad = append(bad, p+" imports "+imp+": "+mod+" is wrapped by "+strings.Join(homes, " and ")+" only")
				}
			}
		}
	}
	report(t, "arrows that must never exist", bad)
}

func TestNeverLinks(t *testing.T) {
	pkgs := goList(t)
	var bad []string
	for _, n := range neverLinks {
		seen := map[string]bool{}
		var walk func(p string, path []string)
		walk = func(p string, path []string) {
			if seen[p] {
				return
			}
			seen[p] = true
			for _, imp := range pkgs[p].Imports {
				r := rel(imp)
				if r == "" {
					r = imp
				}
				via := append(slices.Clone(path), r)
				if matches(n.to, r) {
					bad = append(bad, strings.Join(via, " → ")+": "+n.why)
				}
				if rel(imp) != "" {
					walk(r, via)
				}
			}
		}
		if _, ok := pkgs[n.from]; !ok {
			t.Errorf("neverLinks names %s, which does not exist", n.from)
		}
		walk(n.from, []string{n.from})
	}
	report(t, "what must never be linked", bad)
}

// frameworkOwned are packages that belong to one framework (the servers of its side services):
// only that framework's package imports them, so that the launcher, the AM and run --local run a
// side service without knowing its protocol.
var frameworkOwned = map[string]string{
	"internal/torchstore": "internal/framework/pytorch",
}

// seam are the packages every side may import about frameworks: the interface and its side
// services (internal/framework), the success rules (internal/success), the registry
// (internal/frameworks).
var seam = []string{"internal/framework", "internal/success", "internal/frameworks"}

// isFramework reports whether module-relative p is one framework's package (under
// internal/framework/, not the seam itself).
func isFramework(p string) bool {
	rest, ok := strings.CutPrefix(p, "internal/framework/")
	return ok && rest != ""
}

// TestOnlyTheRegistryImportsAFramework: every package asks the frameworks' registry
// (internal/frameworks) about a job's framework; none but the registry imports one framework's
// package (a framework's package not another's either), none but its framework imports what a
// framework owns (frameworkOwned), and the registry imports every framework, so that a new
// framework is one package and a line in the registry. The AM's core imports not even the
// registry: it consults the Policy it is given (TestCoreIsPure holds the rest of its imports).
func TestOnlyTheRegistryImportsAFramework(t *testing.T) {
	pkgs := goList(t)
	var bad []string
	registered := map[string]bool{}
	for p, pkg := range pkgs {
		for _, imp := range moduleImports(pkg.Imports) {
			switch {
			case isFramework(imp) && p == "internal/frameworks":
				registered[imp] = true
			case isFramework(imp):
				bad = append(bad, p+" imports "+imp+": ask the registry (internal/frameworks)")
			case frameworkOwned[imp] != "" && frameworkOwned[imp] != p:
				bad = append(bad, p+" imports "+imp+": it is "+frameworkOwned[imp]+"'s own (a side service runs behind framework.SideService)")
			}
		}
	}
	for p := range pkgs {
		if isFramework(p) && !registered[p] {
			bad = append(bad, p+" is a framework the registry does not import: add its line to internal/frameworks")
		}
	}
	for _, host := range []string{"internal/appmaster/core"} {
		for _, imp := range moduleImports(pkgs[host].Imports) {
			if imp == "internal/frameworks" {
				bad = append(bad, host+" imports "+imp+": its driver asks the registry and hands it the Policy")
			}
		}
	}
	sort.Strings(bad)
	report(t, "a framework's package imported beside the registry", bad)
}

// TestHostsKnowOnlyTheSeam: the programs that launch, decide and submit a job (the AM and its
// core, the launcher, run --local, the client and the CLI) import, of the frameworks, the seam
// alone (framework, success, the registry), never a framework's package nor what one owns: a
// framework added in its package needs no line of theirs. (Their tests may name a framework's
// policy, e.g. TensorFlow's chief rule with a short stop timeout.)
func TestHostsKnowOnlyTheSeam(t *testing.T) {
	hosts := []string{"internal/appmaster/...", "internal/executor", "internal/localrun", "client", "cmd/..."}
	var bad, seen []string
	for p, pkg := range goList(t) {
		isHost := false
		for _, h := range hosts {
			isHost = isHost || matches(h, p)
		}
		if !isHost {
			continue
		}
		seen = append(seen, p)
		for _, imp := range moduleImports(pkg.Imports) {
			if isFramework(imp) || frameworkOwned[imp] != "" {
				bad = append(bad, p+" imports "+imp)
			}
		}
	}
	if len(seen) < len(hosts) {
		t.Fatalf("found %d host packages for %d patterns: the check reads nothing", len(seen), len(hosts))
	}
	report(t, "hosts that know a framework beyond the seam ("+strings.Join(seam, ", ")+")", bad)
}

// TestCoreIsPure walks the core's imports and those of the module's packages it builds on.
func TestCoreIsPure(t *testing.T) {
	pkgs := goList(t)
	allowed := map[string]bool{}
	for _, p := range coreImports {
		if strings.Contains(p, "/") && !strings.HasPrefix(p, "internal/") || !strings.Contains(p, "/") && p != "taskspec" {
			allowed[p] = true // the standard library
		} else {
			allowed[module+"/"+p] = true
		}
	}
	seen := map[string]bool{}
	var bad []string
	var walk func(p string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, imp := range pkgs[p].Imports {
			if !allowed[imp] {
				bad = append(bad, p+" imports "+imp)
			}
			if r := rel(imp); r != "" {
				walk(r)
			}
		}
	}
	walk("internal/appmaster/core")
	if !seen["taskspec"] {
		t.Fatal("the walk did not reach taskspec: the check reads nothing")
	}
	report(t, "the core must stay pure (the standard library's pure parts, taskspec, internal/success and internal/containerexit only)", bad)
}
