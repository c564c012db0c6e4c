package main

import (
	"strings"
	"testing"
)

// A lane's stream as go test -json writes it: one package passed, one whose limit ran out while
// a test waited for a job, one with a failed subtest, and a build error printed as plain text.
const stream = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestQuick"}
{"Action":"output","Package":"a","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}
{"Action":"pass","Package":"a","Test":"TestQuick","Elapsed":1.5}
{"Action":"pass","Package":"a","Elapsed":2}
{"Action":"run","Package":"b","Test":"TestSlow"}
{"Action":"output","Package":"b","Test":"TestSlow","Output":"    slow_test.go:10: submitted application_1_0001\n"}
{"Action":"output","Package":"b","Test":"TestSlow","Output":"    slow_test.go:12: waiting for worker:0 to run\n"}
{"Action":"run","Package":"b","Test":"TestDone"}
{"Action":"pass","Package":"b","Test":"TestDone","Elapsed":30}
{"Action":"output","Package":"b","Output":"panic: test timed out after 25m0s\n"}
{"Action":"fail","Package":"b","Elapsed":1500}
{"Action":"run","Package":"c","Test":"TestParent"}
{"Action":"run","Package":"c","Test":"TestParent/fine"}
{"Action":"output","Package":"c","Test":"TestParent/fine","Output":"    c_test.go:3: pages of a passing job's JSON\n"}
{"Action":"pass","Package":"c","Test":"TestParent/fine","Elapsed":1}
{"Action":"run","Package":"c","Test":"TestParent/child"}
{"Action":"output","Package":"c","Test":"TestParent/child","Output":"    c_test.go:4: step: tfyarn run\n"}
{"Action":"output","Package":"c","Test":"TestParent/child","Output":"        \tError Trace:\tc_test.go:5\n"}
{"Action":"output","Package":"c","Test":"TestParent/child","Output":"        \tError:      \texit 1, want 0\n"}
{"Action":"fail","Package":"c","Test":"TestParent/child","Elapsed":3}
{"Action":"fail","Package":"c","Test":"TestParent","Elapsed":4}
{"Action":"fail","Package":"c","Elapsed":5}
# d
d/d.go:3:1: syntax error
`

func TestReportSaysWhatFailedAndWhere(t *testing.T) {
	l, err := readLane("lane1", strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	writeFailures(&out, []*lane{l})
	l.report(&out)
	got := out.String()
	for _, want := range []string{
		"# d\nd/d.go:3:1: syntax error\n",
		"ok   a (2.0 s, 1 tests)",
		"FAIL b: its time limit ran out after 1500 s with 1 test(s) still running: TestSlow",
		"--- TestSlow was running; its last lines (the step it was in):\n        slow_test.go:10: submitted application_1_0001\n        slow_test.go:12: waiting for worker:0 to run\n",
		"exit 1, want 0",
		"FAIL c (5.0 s)",
		"=== make test: FAIL c TestParent/child (step lane1, 3.0 s), why:\n    Error Trace:\tc_test.go:5\n    Error:      \texit 1, want 0\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestDone") {
		t.Errorf("a passed test of a timed-out package is listed:\n%s", got)
	}
	if strings.Contains(got, "pages of a passing job's JSON") {
		t.Errorf("a passed subtest's output is in the report:\n%s", got)
	}
	if strings.Index(got, "=== make test: FAIL c TestParent/child") > strings.Index(got, "ok   a") {
		t.Errorf("the failures do not come first:\n%s", got)
	}
}

func TestSlowestOrdersByTime(t *testing.T) {
	l, err := readLane("lane1", strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	all := timings([]*lane{l})
	if len(all) != 4 || all[0].test != "TestDone" || all[1].test != "TestParent" || all[2].test != "TestQuick" {
		t.Fatalf("timings = %+v", all)
	}
	var out strings.Builder
	writeSlowest(&out, []*lane{l}, 2)
	if !strings.Contains(out.String(), "the 2 slowest of 4 tests") || strings.Contains(out.String(), "TestQuick") {
		t.Errorf("slowest:\n%s", out.String())
	}
}

func TestLastLinesSkipsBlankAndRunLines(t *testing.T) {
	got := lastLines([]string{"one\n", "=== RUN   TestX/y\n", "\n", "two\n"}, 5)
	if strings.Join(got, "|") != "one|two" {
		t.Errorf("lastLines = %q", got)
	}
}

// A parallel test's subtests run at once after it returned: its time is from when it went on
// after its pause to its last subtest's end, not the sum of its subtests' times.
func TestWallOfParallelSubtestsByTheClock(t *testing.T) {
	const timed = `{"Time":"2026-11-29T10:00:00Z","Action":"run","Package":"k","Test":"TestKerberos"}
{"Time":"2026-11-29T10:00:00Z","Action":"pause","Package":"k","Test":"TestKerberos"}
{"Time":"2026-11-29T10:01:00Z","Action":"cont","Package":"k","Test":"TestKerberos"}
{"Time":"2026-11-29T10:01:00Z","Action":"run","Package":"k","Test":"TestKerberos/a"}
{"Time":"2026-11-29T10:01:00Z","Action":"run","Package":"k","Test":"TestKerberos/b"}
{"Time":"2026-11-29T10:01:00Z","Action":"run","Package":"k","Test":"TestKerberos/c"}
{"Time":"2026-11-29T10:02:40Z","Action":"pass","Package":"k","Test":"TestKerberos/a","Elapsed":100}
{"Time":"2026-11-29T10:02:40Z","Action":"pass","Package":"k","Test":"TestKerberos/b","Elapsed":100}
{"Time":"2026-11-29T10:03:30Z","Action":"pass","Package":"k","Test":"TestKerberos/c","Elapsed":150}
{"Time":"2026-11-29T10:03:30Z","Action":"pass","Package":"k","Test":"TestKerberos","Elapsed":0}
`
	l, err := readLane("lane2", strings.NewReader(timed))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.pkgs[0].wallOf("TestKerberos"); got != 150 {
		t.Errorf("wall = %.1f s, want 150 (10:01:00 to 10:03:30; the subtests' sum / 2 is 175)", got)
	}
}
