package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A module in miniature: end-to-end tests on the side clusters (one through a helper), on the main
// cluster, a GPU holder, and unit tests that must not be planned.
func miniModule(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "kerb_e2e_test.go"), `//go:build e2e

package a

import "testing"

func kerberosCluster(t *testing.T) { clustertest.RequireKerberos(t) }

func TestE2EViaHelper(t *testing.T) { kerberosCluster(t) }
func TestE2EFaultsDirect(t *testing.T) { clustertest.RequireFaults(t) }
func TestE2EMain(t *testing.T) { clustertest.Require(t) }
func TestE2EAlloc(t *testing.T) { clustertest.Require(t) }
func TestE2EBoth(t *testing.T) { clustertest.EachCluster(t, nil) }
func helperNotATest(t *testing.T) {}
func Testify(t *testing.T) {}
`)
	writeFile(t, filepath.Join(root, "a", "unit_test.go"), `package a

import "testing"

func TestUnit(t *testing.T) { clustertest.RequireKerberos(t) }
`)
	writeFile(t, filepath.Join(root, "a", "both_test.go"), `//go:build e2e || linux

package a

import "testing"

func TestAlsoUnit(t *testing.T) {}
`)
	writeFile(t, filepath.Join(root, "b", "docker_e2e_test.go"), `//go:build e2e

package b_test

import "testing"

func TestE2EDocker(t *testing.T) { RequireDocker(t) }
func TestE2EOther(t *testing.T) {}
`)
	writeFile(t, filepath.Join(root, ".hidden", "x_e2e_test.go"), "//go:build e2e\n\npackage x\n\nfunc TestE2EHidden(t *testing.T) {}\n")
	return root
}

func TestFindE2ETestsFollowsHelpersAndSkipsUnitTests(t *testing.T) {
	tests, err := findE2ETests(miniModule(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tc := range tests {
		got[tc.dir+"."+tc.name] = tc.cluster
	}
	want := map[string]string{
		"a.TestE2EViaHelper":    "kerberos",
		"a.TestE2EFaultsDirect": "faults",
		"a.TestE2EMain":         "",
		"a.TestE2EAlloc":        "",
		"a.TestE2EBoth":         "privacy",
		"b.TestE2EDocker":       "docker",
		"b.TestE2EOther":        "",
	}
	if len(got) != len(want) {
		t.Errorf("found %v, want %v", got, want)
	}
	for k, v := range want {
		if c, ok := got[k]; !ok || c != v {
			t.Errorf("%s: cluster %q (found: %v), want %q", k, c, ok, v)
		}
	}
}

func TestPlanKeepsSideClustersTogetherAndStopsThem(t *testing.T) {
	tests := []e2eTest{
		{dir: "cmd", name: "TestK1", cluster: "kerberos", seconds: 100},
		{dir: "lib", name: "TestK2", cluster: "kerberos", seconds: 50},
		{dir: "cmd", name: "TestF1", cluster: "faults", seconds: 120},
		{dir: "cmd", name: "TestE2EAlloc", seconds: 30},
		{dir: "cmd", name: "TestE2EWebUIHistoryGPU", seconds: 30},
		{dir: "cmd", name: "TestA", seconds: 90},
		{dir: "cmd", name: "TestB", seconds: 80},
		{dir: "cmd", name: "TestC", seconds: 70},
		{dir: "cmd", name: "TestD", seconds: 10},
	}
	lanes := plan(tests, 2, 100)
	where := map[string]int{}
	totals := make([]float64, len(lanes))
	for i, steps := range lanes {
		ranAfterStop := false
		stopped := false
		for _, s := range steps {
			if s.stop != "" {
				stopped = true
				continue
			}
			if s.seconds > 100 && len(s.tests) > 1 {
				t.Errorf("lane %d: a step of %.0f s over the split of 100 s: %v", i+1, s.seconds, s.tests)
			}
			totals[i] += s.seconds
			for _, n := range s.tests {
				where[n] = i
				if stopped && strings.HasPrefix(n, "TestK") || stopped && strings.HasPrefix(n, "TestF") {
					ranAfterStop = true
				}
			}
		}
		if ranAfterStop {
			t.Errorf("lane %d runs a side cluster's test after stopping a cluster: %+v", i+1, steps)
		}
	}
	if where["TestK1"] != where["TestK2"] {
		t.Errorf("the Kerberos tests are in lanes %d and %d: they share one cluster, stopped after them", where["TestK1"]+1, where["TestK2"]+1)
	}
	if where["TestE2EAlloc"] != where["TestE2EWebUIHistoryGPU"] {
		t.Errorf("the GPU holders are in two lanes: they would wait for each other's GPUs")
	}
	if d := totals[0] - totals[1]; d > 100 || d < -100 {
		t.Errorf("lanes not balanced: %v", totals)
	}
	var stops []string
	for _, steps := range lanes {
		for _, s := range steps {
			if s.stop != "" {
				stops = append(stops, s.stop)
			}
		}
	}
	if strings.Join(stops, ",") != ".testcluster-kerberos,.testcluster-faults" && strings.Join(stops, ",") != ".testcluster-faults,.testcluster-kerberos" {
		t.Errorf("stops = %v", stops)
	}
}

func TestRunPatternSelectsExactlyTheTests(t *testing.T) {
	if got := runPattern([]string{"TestA", "TestA2"}); got != "^(TestA|TestA2)$" {
		t.Errorf("runPattern = %q", got)
	}
}

// TestPlanOfThisRepository: the real tree's side-cluster tests are found where they are.
func TestPlanOfThisRepository(t *testing.T) {
	tests, err := findE2ETests(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cluster := map[string]string{}
	for _, tc := range tests {
		cluster[tc.dir+"."+tc.name] = tc.cluster
	}
	for name, want := range map[string]string{
		"cmd/tfyarn.TestE2EFaults":                        "faults",
		"cmd/tfyarn.TestE2EPreemptionWarning":             "faults",
		"cmd/tfyarn.TestE2EAMAttemptAdoptsUnderKerberos":  "kerberos",
		"cmd/tfyarn.TestE2EDockerImage":                   "docker",
		"cmd/tfyarn.TestE2ERun":                           "privacy",
		"internal/clustertest.TestKerberosCluster":        "kerberos",
		"cmd/tfyarn.TestE2EAlloc":                         "",
		"internal/localrun.TestE2EMultiWorkerMirrored":    "",
		"internal/security.TestKerberosKeyringKinit":      "kerberos",
		"cmd/tfyarn.TestE2EAttackKerberosSniffRendezvous": "kerberos",
	} {
		got, ok := cluster[name]
		if !ok {
			t.Errorf("%s: not found among the end-to-end tests", name)
		} else if got != want {
			t.Errorf("%s: side cluster %q, want %q", name, got, want)
		}
	}
	if _, ok := cluster["internal/envpack.TestPackLayersEdgeCases"]; ok {
		t.Error("a unit test is planned among the end-to-end tests")
	}
}
