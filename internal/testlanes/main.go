// Command testlanes plans and reports `make test`'s end-to-end lanes (scripts/test.sh).
//
//	testlanes plan [-times FILE] [-lanes N] [-split SECONDS]
//
// deals every end-to-end test to N lanes by its measured time (see plan.go) and prints the steps.
//
//	testlanes report [-times FILE] [-slowest N] LANE.json...
//
// reads the lanes' `go test -json` streams and says what a person needs from them: each package's
// outcome and time, the full output of every failed test, for a package that hit its time limit
// the tests that were still running with their last lines (the step they were in), and the
// slowest tests of the run. It writes every top-level test's time to the times file, the
// measurement the next plan deals by.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "plan" {
		mainPlan(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "report" {
		os.Args = append(os.Args[:1], os.Args[2:]...)
	}
	times := flag.String("times", "", "write each top-level test's seconds to this file (TSV: seconds, lane, package, test)")
	slowest := flag.Int("slowest", 25, "list this many of the slowest tests")
	limit := flag.Duration("limit", 0, "each go test invocation's -timeout: say how much of it the longest used")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "testlanes: name at least one go test -json file (one per lane)")
		os.Exit(2)
	}
	var lanes []*lane
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testlanes: %v\n", err)
			os.Exit(2)
		}
		l, err := readLane(strings.TrimSuffix(filepath.Base(path), ".json"), f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testlanes: %s: %v\n", path, err)
			os.Exit(2)
		}
		lanes = append(lanes, l)
	}
	w := bufio.NewWriter(os.Stdout)
	writeFailures(w, lanes)
	for _, l := range lanes {
		l.report(w)
	}
	writeSlowest(w, lanes, *slowest)
	if *limit > 0 {
		writeLongestStep(w, lanes, limit.Seconds())
	}
	w.Flush()
	if *times != "" {
		if err := writeTimes(*times, lanes); err != nil {
			fmt.Fprintf(os.Stderr, "testlanes: %v\n", err)
			os.Exit(1)
		}
	}
}

func mainPlan(args []string) {
	fs := flag.NewFlagSet("plan", flag.ExitOnError)
	times := fs.String("times", "bench/results/maketest-times.tsv", "the measured times (testlanes report -times)")
	lanes := fs.Int("lanes", 4, "how many lanes run at once")
	split := fs.Float64("split", 300, "the most measured seconds one go test invocation is given")
	module := fs.String("module", "github.com/tfyarn/tfyarn", "the module's path (the times file names packages by it)")
	fs.Parse(args)
	if *lanes < 1 || *split <= 0 {
		fmt.Fprintln(os.Stderr, "testlanes plan: -lanes must be at least 1 and -split above 0")
		os.Exit(2)
	}
	if err := runPlan(".", *times, *module, *lanes, *split, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testlanes plan: %v\n", err)
		os.Exit(1)
	}
}

// event is one line of test2json's output (go doc test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// test is one test of one package: its outcome, its time and its output lines in order.
type test struct {
	name    string
	action  string // pass, fail, skip; "" while it runs
	elapsed float64
	output  []string
	// began is when it ran last (its run, or its cont after a pause as a parallel test),
	// ended when it passed or failed; zero when the stream had no times.
	began, ended time.Time
}

type pkg struct {
	path    string
	action  string
	elapsed float64
	output  []string // lines of the package itself (its summary, a timeout's panic, build errors)
	tests   map[string]*test
	order   []string // tests in the order they started
}

type lane struct {
	name string
	pkgs []*pkg
	// junk is what the stream held that was not JSON (a build error printed before the tests).
	junk []string
}

// readLane reads one lane's stream. A line that is not an event is kept as it is: go test
// prints build errors of a package that does not compile as plain text.
func readLane(name string, r io.Reader) (*lane, error) {
	l := &lane{name: name}
	byPath := map[string]*pkg{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			l.junk = append(l.junk, sc.Text())
			continue
		}
		p := byPath[e.Package]
		if p == nil {
			p = &pkg{path: e.Package, tests: map[string]*test{}}
			byPath[e.Package] = p
			l.pkgs = append(l.pkgs, p)
		}
		if e.Test == "" {
			switch e.Action {
			case "output":
				p.output = append(p.output, e.Output)
			case "pass", "fail", "skip":
				p.action, p.elapsed = e.Action, e.Elapsed
			}
			continue
		}
		t := p.tests[e.Test]
		if t == nil {
			t = &test{name: e.Test}
			p.tests[e.Test] = t
			p.order = append(p.order, e.Test)
		}
		switch e.Action {
		case "output":
			t.output = append(t.output, e.Output)
		case "run", "cont":
			t.began = e.Time
		case "pass", "fail", "skip":
			t.action, t.elapsed, t.ended = e.Action, e.Elapsed, e.Time
		}
	}
	return l, sc.Err()
}

// timedOut says whether the package's test binary was ended by its -timeout.
func (p *pkg) timedOut() bool {
	for _, line := range p.output {
		if strings.HasPrefix(line, "panic: test timed out after") {
			return true
		}
	}
	return false
}

// outputOf is the output of a test and of its subtests, in the order the test's events came.
func (p *pkg) outputOf(name string) []string {
	var out []string
	for _, n := range p.order {
		if n == name || strings.HasPrefix(n, name+"/") {
			out = append(out, p.tests[n].output...)
		}
	}
	return out
}

// outputOfUnpassed is outputOf without the output of the subtests that passed: a failed
// test's report shows what failed, not pages of what went right beside it.
func (p *pkg) outputOfUnpassed(name string) []string {
	var out []string
	for _, n := range p.order {
		if (n == name || strings.HasPrefix(n, name+"/")) && p.tests[n].action != "pass" {
			out = append(out, p.tests[n].output...)
		}
	}
	return out
}

// failedLeaf says the test failed and none of its subtests did: the failure was asserted there.
func (p *pkg) failedLeaf(name string) bool {
	if p.tests[name].action != "fail" {
		return false
	}
	for _, n := range p.order {
		if strings.HasPrefix(n, name+"/") && p.tests[n].action == "fail" {
			return false
		}
	}
	return true
}

// writeFailures puts first, before the lanes' reports, each failed test where the failure was
// asserted, with the lines that say why (testify's block from its first "Error Trace:", else the
// test's last lines), so that a log cut short after its start (a CI excerpt) still shows them.
func writeFailures(w io.Writer, lanes []*lane) {
	for _, l := range lanes {
		for _, p := range l.pkgs {
			for _, n := range p.order {
				if !p.failedLeaf(n) {
					continue
				}
				t := p.tests[n]
				fmt.Fprintf(w, "=== make test: FAIL %s %s (step %s, %.1f s), why:\n", p.path, n, l.name, t.elapsed)
				for _, line := range whyLines(t.output, 30) {
					if len(line) > 300 {
						line = line[:300] + " ..."
					}
					fmt.Fprintf(w, "    %s\n", strings.TrimSpace(line))
				}
			}
		}
	}
}

// whyLines are at most n lines of a failed test's own output saying why: from its first
// assertion block ("Error Trace:") on, else its last lines.
func whyLines(output []string, n int) []string {
	for i, line := range output {
		if strings.Contains(line, "Error Trace:") {
			var lines []string
			for _, l := range output[i:] {
				for _, part := range strings.Split(strings.TrimRight(l, "\n"), "\n") {
					if strings.TrimSpace(part) != "" && len(lines) < n {
						lines = append(lines, part)
					}
				}
			}
			return lines
		}
	}
	return lastLines(output, n)
}

// running lists the top-level tests that started and never ended.
func (p *pkg) running() []string {
	var names []string
	for _, n := range p.order {
		if !strings.Contains(n, "/") && p.tests[n].action == "" {
			names = append(names, n)
		}
	}
	return names
}

// lastStep is the last line a test or one of its subtests logged that says something: the step
// it was in when it stopped.
func lastLines(lines []string, n int) []string {
	var kept []string
	for i := len(lines) - 1; i >= 0 && len(kept) < n; i-- {
		line := strings.TrimRight(lines[i], "\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "=== ") {
			continue
		}
		kept = append(kept, line)
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return kept
}

func (l *lane) report(w io.Writer) {
	for _, line := range l.junk {
		fmt.Fprintln(w, line)
	}
	for _, p := range l.pkgs {
		if len(p.tests) == 0 && p.action != "fail" {
			continue // a package with no test of this lane's selection
		}
		switch {
		case p.timedOut():
			running := p.running()
			fmt.Fprintf(w, "FAIL %s: its time limit ran out after %.0f s with %d test(s) still running: %s\n", p.path, p.elapsed, len(running), strings.Join(running, ", "))
			for _, n := range running {
				fmt.Fprintf(w, "--- %s was running; its last lines (the step it was in):\n", n)
				for _, line := range lastLines(p.outputOf(n), 20) {
					fmt.Fprintf(w, "    %s\n", line)
				}
			}
			for _, n := range p.order {
				if t := p.tests[n]; t.action == "fail" && !strings.Contains(n, "/") {
					fmt.Fprintf(w, "--- FAIL: %s (%.1f s)\n", n, t.elapsed)
					writeLines(w, p.outputOf(n))
				}
			}
		case p.action == "fail":
			failed := 0
			for _, n := range p.order {
				if t := p.tests[n]; t.action == "fail" && !strings.Contains(n, "/") {
					failed++
					writeLines(w, p.outputOfUnpassed(n))
				}
			}
			if failed == 0 { // a build failure or a crash outside any test: all it said
				writeLines(w, p.output)
				for _, n := range p.running() {
					writeLines(w, p.outputOf(n))
				}
			}
			fmt.Fprintf(w, "FAIL %s (%.1f s)\n", p.path, p.elapsed)
		default:
			fmt.Fprintf(w, "ok   %s (%.1f s, %d tests)\n", p.path, p.elapsed, topLevel(p))
		}
	}
}

func topLevel(p *pkg) int {
	n := 0
	for _, name := range p.order {
		if !strings.Contains(name, "/") {
			n++
		}
	}
	return n
}

func writeLines(w io.Writer, lines []string) {
	for _, line := range lines {
		io.WriteString(w, line)
		if !strings.HasSuffix(line, "\n") {
			io.WriteString(w, "\n")
		}
	}
}

// timing is one top-level test's time in one lane.
type timing struct {
	seconds             float64
	lane, pkg, test, at string
}

func timings(lanes []*lane) []timing {
	var all []timing
	for _, l := range lanes {
		for _, p := range l.pkgs {
			for _, n := range p.order {
				t := p.tests[n]
				if strings.Contains(n, "/") || t.action == "skip" {
					continue
				}
				all = append(all, timing{seconds: p.wallOf(n), lane: l.name, pkg: p.path, test: n, at: t.action})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].seconds > all[j].seconds })
	return all
}

// wallOf is how long a top-level test took: from when it last began (a parallel test pauses
// until the serial ones are done) to the end of the last of its subtests. A test whose subtests
// are parallel returns before they run, and go test reports only its own time (0.0 s), and the
// sum of its subtests' times counts those that ran at once twice. A stream without times (older
// records) falls back to the longest subtest, or half of all its subtests' time when that is
// more (they run two at a time on two cores).
func (p *pkg) wallOf(name string) float64 {
	top := p.tests[name]
	own := top.elapsed
	var longest, sum float64
	end := top.ended
	for _, n := range p.order {
		if rest, ok := strings.CutPrefix(n, name+"/"); ok {
			if sub := p.tests[n]; sub.ended.After(end) {
				end = sub.ended
			}
			if !strings.Contains(rest, "/") {
				longest = max(longest, p.tests[n].elapsed)
				sum += p.tests[n].elapsed
			}
		}
	}
	if !top.began.IsZero() && !top.ended.IsZero() {
		return max(own, end.Sub(top.began).Seconds())
	}
	return max(own, longest, sum/2)
}

func writeSlowest(w io.Writer, lanes []*lane, n int) {
	all := timings(lanes)
	if len(all) == 0 || n <= 0 {
		return
	}
	var sum float64
	for _, t := range all {
		sum += t.seconds
	}
	fmt.Fprintf(w, "=== make test: the %d slowest of %d tests (%.0f s of test time in all; parallel tests overlap)\n", min(n, len(all)), len(all), sum)
	for _, t := range all[:min(n, len(all))] {
		fmt.Fprintf(w, "%7.1f s  %-4s  %s %s  (lane %s)\n", t.seconds, t.at, t.pkg, t.test, t.lane)
	}
}

// writeLongestStep names the go test binary that ran longest and the share of its time limit it
// used: the headroom `make test` keeps on a slower or busier machine (the budget is 60 %).
func writeLongestStep(w io.Writer, lanes []*lane, limit float64) {
	var longest *pkg
	var in string
	for _, l := range lanes {
		for _, p := range l.pkgs {
			if len(p.tests) > 0 && (longest == nil || p.elapsed > longest.elapsed) {
				longest, in = p, l.name
			}
		}
	}
	if longest == nil {
		return
	}
	fmt.Fprintf(w, "=== make test: the longest go test binary: %s in step %s, %.0f s, %.0f %% of its %.0f s limit\n",
		longest.path, in, longest.elapsed, 100*longest.elapsed/limit, limit)
}

func writeTimes(path string, lanes []*lane) error {
	var b strings.Builder
	for _, t := range timings(lanes) {
		fmt.Fprintf(&b, "%.1f\t%s\t%s\t%s\n", t.seconds, t.lane, t.pkg, t.test)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
