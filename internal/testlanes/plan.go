package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// The lanes' plan. Every end-to-end test (a Test function in a file that builds only with the
// e2e tag: unit tests already ran once and are not run again) is a unit of work, weighed by its
// measured time. Tests of one of the side clusters (Kerberos, faults, Docker, privacy), found by
// what their code calls (clustertest.RequireKerberos ..., directly or through the package's own
// helpers), stay together in one lane, one after the other, and their cluster is stopped as soon
// as they are done: an idle cluster's JVMs cost CPU every other test waits for. The units are
// dealt longest first to the lane that has least, and a lane's tests of one package are cut into
// invocations of at most -split seconds each, so that every go test binary ends far inside its
// time limit even on a machine twice as slow as the one measured.

// sideClusters maps the clustertest function a test calls to the side cluster it starts.
var sideClusters = map[string]string{
	"RequireKerberos": "kerberos",
	"RequireFaults":   "faults",
	"RequireDocker":   "docker",
	"RequirePrivacy":  "privacy",
	"EachCluster":     "privacy",
	// make test's compatibility lane runs on one release's cluster (cmd/tfyarn's
	// requireCompatLane); make test-compat runs on all of them.
	"RequireHadoop": "hadoop",
}

// clusterDirs is where each side cluster lives (internal/clustertest's profiles).
var clusterDirs = map[string]string{
	"kerberos": ".testcluster-kerberos",
	"faults":   ".testcluster-faults",
	"docker":   ".testcluster-docker",
	"privacy":  ".testcluster-privacy",
	"hadoop":   ".testcluster-hadoop-3.3.6",
}

// sharedGPUs are the main cluster's tests that hold or wait for both GPUs of its gpu node: run
// at once, one would wait for the other's GPUs past its deadline. They run one after the other.
var sharedGPUs = map[string]bool{
	"TestE2EAlloc":                      true,
	"TestE2EPyTorchElasticAllocTimeout": true,
	"TestE2EWebUIHistoryGPU":            true,
}

// defaultSeconds is the weight of a test the times file does not know yet (a new test).
const defaultSeconds = 60

// e2eTest is one top-level end-to-end test.
type e2eTest struct {
	dir     string // the package's directory, relative to the module root ("cmd/tfyarn")
	name    string
	cluster string // the side cluster it needs, "" for the main one alone
	seconds float64
}

// findE2ETests lists every top-level Test function of the files under root that build with the
// e2e tag and not without it, with the side cluster each needs.
func findE2ETests(root string) ([]e2eTest, error) {
	var tests []e2eTest
	byDir := map[string][]string{} // every _test.go file of a directory
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") {
			byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		found, err := e2eTestsOf(dir, byDir[dir])
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return nil, err
		}
		for i := range found {
			found[i].dir = filepath.ToSlash(rel)
		}
		tests = append(tests, found...)
	}
	return tests, nil
}

// e2eTestsOf reads one directory's test files. The calls of every function of the directory are
// followed, so a test that reaches RequireKerberos through a helper is known to need Kerberos.
func e2eTestsOf(dir string, files []string) ([]e2eTest, error) {
	fset := token.NewFileSet()
	calls := map[string]map[string]bool{} // function name -> names it calls
	var tests []e2eTest
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		e2e := e2eOnly(f)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			called := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					switch f := call.Fun.(type) {
					case *ast.Ident:
						called[f.Name] = true
					case *ast.SelectorExpr:
						if x, ok := f.X.(*ast.Ident); ok && x.Name == "clustertest" {
							called[f.Sel.Name] = true
						}
					}
				}
				return true
			})
			calls[fn.Name.Name] = called
			if e2e && isTestFunc(fn) {
				tests = append(tests, e2eTest{dir: dir, name: fn.Name.Name})
			}
		}
	}
	for i := range tests {
		tests[i].cluster = sideClusterOf(tests[i].name, calls)
	}
	return tests, nil
}

// sideClusterOf follows the calls from fn and names the first side cluster it reaches (in
// a fixed order, so that the plan is the same every time).
func sideClusterOf(fn string, calls map[string]map[string]bool) string {
	seen := map[string]bool{fn: true}
	queue := []string{fn}
	var reached []string
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		callees := make([]string, 0, len(calls[name]))
		for c := range calls[name] {
			callees = append(callees, c)
		}
		sort.Strings(callees)
		for _, c := range callees {
			if cluster, ok := sideClusters[c]; ok {
				reached = append(reached, cluster)
			}
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	if len(reached) == 0 {
		return ""
	}
	sort.Strings(reached)
	return reached[0]
}

func isTestFunc(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if !strings.HasPrefix(name, "Test") || name == "TestMain" {
		return false
	}
	if rest := strings.TrimPrefix(name, "Test"); rest != "" && strings.ToLower(rest[:1]) == rest[:1] && !strings.HasPrefix(rest, "_") {
		return false // Testify is not a test
	}
	params := fn.Type.Params.List
	if len(params) != 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// e2eOnly reports whether the file's //go:build line holds with the e2e tag and not without it.
func e2eOnly(f *ast.File) bool {
	for _, group := range f.Comments {
		if group.Pos() > f.Package {
			break
		}
		for _, c := range group.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			with := func(tag string) bool {
				return tag == "e2e" || tag == runtime.GOOS || tag == runtime.GOARCH || tag == "unix" || tag == "gc"
			}
			without := func(tag string) bool { return tag != "e2e" && with(tag) }
			return expr.Eval(with) && !expr.Eval(without)
		}
	}
	return false
}

// readTimes reads the times file testlanes report writes (seconds, lane, package, test); a test
// measured more than once weighs its longest time. A missing file is no times at all.
func readTimes(path string) (map[string]float64, error) {
	times := map[string]float64{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return times, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			continue
		}
		s, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		key := fields[2] + " " + fields[3]
		times[key] = max(times[key], s)
	}
	return times, sc.Err()
}

// step is one line of the plan: run some tests of one package, or stop a side cluster.
type step struct {
	dir     string   // the package to test ("" for a stop)
	tests   []string // the tests, longest first
	seconds float64
	stop    string // the side cluster's directory to stop, for a stop
}

// unit is what is dealt to a lane: a side cluster's tests, the GPU holders, or one other test.
type unit struct {
	cluster string
	tests   []e2eTest
	seconds float64
}

// plan deals the tests to lanes and cuts each lane into steps.
func plan(tests []e2eTest, lanes int, split float64) [][]step {
	groups := map[string]*unit{}
	var units []*unit
	for _, t := range tests {
		key := t.cluster
		if key == "" && sharedGPUs[t.name] {
			key = "gpu"
		}
		if key == "" {
			units = append(units, &unit{tests: []e2eTest{t}, seconds: t.seconds})
			continue
		}
		g := groups[key]
		if g == nil {
			g = &unit{cluster: t.cluster}
			groups[key] = g
			units = append(units, g)
		}
		g.tests = append(g.tests, t)
		g.seconds += t.seconds
	}
	sort.SliceStable(units, func(i, j int) bool {
		if units[i].seconds != units[j].seconds {
			return units[i].seconds > units[j].seconds
		}
		return units[i].tests[0].dir+units[i].tests[0].name < units[j].tests[0].dir+units[j].tests[0].name
	})
	dealt := make([][]*unit, lanes)
	load := make([]float64, lanes)
	for _, u := range units {
		least := 0
		for i := range load {
			if load[i] < load[least] {
				least = i
			}
		}
		dealt[least] = append(dealt[least], u)
		load[least] += u.seconds
	}
	out := make([][]step, lanes)
	for i, us := range dealt {
		// Side clusters first, so that each is stopped as early as it can be; then the GPU
		// holders; then the main cluster's other tests, longest first.
		var free []e2eTest
		for _, u := range us {
			if u.cluster != "" {
				out[i] = append(out[i], steps(u.tests, split)...)
				out[i] = append(out[i], step{stop: clusterDirs[u.cluster]})
			}
		}
		for _, u := range us {
			if u.cluster == "" && len(u.tests) > 1 {
				out[i] = append(out[i], steps(u.tests, split)...)
			}
		}
		for _, u := range us {
			if u.cluster == "" && len(u.tests) == 1 {
				free = append(free, u.tests[0])
			}
		}
		out[i] = append(out[i], steps(free, split)...)
	}
	return out
}

// steps cuts tests into go test invocations: one package each, at most split seconds each
// (a test longer than that alone), packages in the order of their longest test.
func steps(tests []e2eTest, split float64) []step {
	sorted := append([]e2eTest(nil), tests...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].seconds != sorted[j].seconds {
			return sorted[i].seconds > sorted[j].seconds
		}
		return sorted[i].name < sorted[j].name
	})
	var out []step
	open := map[string]int{} // package -> index in out of its step being filled
	for _, t := range sorted {
		i, ok := open[t.dir]
		if !ok || out[i].seconds+t.seconds > split {
			out = append(out, step{dir: t.dir})
			i = len(out) - 1
			open[t.dir] = i
		}
		out[i].tests = append(out[i].tests, t.name)
		out[i].seconds += t.seconds
	}
	return out
}

// runPattern is the -run pattern that selects exactly these top-level tests (and all their
// subtests).
func runPattern(tests []string) string {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// writePlan prints the plan for scripts/test.sh, one step a line, tab-separated:
//
//	LANE run ./DIR PATTERN SECONDS
//	LANE stop CLUSTER-DIR
func writePlan(w io.Writer, lanes [][]step) {
	for i, steps := range lanes {
		for _, s := range steps {
			if s.stop != "" {
				fmt.Fprintf(w, "%d\tstop\t%s\n", i+1, s.stop)
				continue
			}
			fmt.Fprintf(w, "%d\trun\t./%s\t%s\t%.0f\n", i+1, s.dir, runPattern(s.tests), s.seconds)
		}
	}
}

// runPlan is `testlanes plan`: find the tests under the module root, weigh them by the times
// file, print the plan.
func runPlan(root, timesPath, module string, lanes int, split float64, w io.Writer) error {
	tests, err := findE2ETests(root)
	if err != nil {
		return err
	}
	times, err := readTimes(timesPath)
	if err != nil {
		return err
	}
	for i, t := range tests {
		s, ok := times[module+"/"+t.dir+" "+t.name]
		if t.dir == "." {
			s, ok = times[module+" "+t.name]
		}
		if !ok {
			s = defaultSeconds
		}
		tests[i].seconds = s
	}
	writePlan(w, plan(tests, lanes, split))
	return nil
}
