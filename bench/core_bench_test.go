//go:build bench

package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

type coreRun struct {
	Tasks        int     `json:"tasks"`
	PerHeartbeat int     `json:"containers_per_heartbeat"`
	Heartbeats   int     `json:"heartbeats"`
	TotalMS      float64 `json:"job_ms"`
	MeanMS       float64 `json:"mean_ms_per_heartbeat"`
	LongestMS    float64 `json:"longest_heartbeat_ms"`
}

type coreResult struct {
	machine
	Runs []coreRun `json:"runs"`
}

// TestBenchCore times the AM's state machine alone (no I/O) through whole
// jobs of 1,000 to 10,000 tasks (coreJob), and writes results/core.*.
// The goal is < 5 ms per heartbeat's worth of events at 10,000 tasks.
func TestBenchCore(t *testing.T) {
	c := &clustertest.Cluster{Root: clustertest.RepoRoot()}
	r := coreResult{machine: newMachine(t, c.Root, "core")}
	for _, n := range []int{1000, 2000, coreTasks} {
		start := time.Now()
		hb, longest := coreJob(t, n, coreHeartbeat)
		total := time.Since(start)
		run := coreRun{Tasks: n, PerHeartbeat: coreHeartbeat, Heartbeats: hb, TotalMS: round2(float64(total.Microseconds()) / 1000),
			MeanMS: round2(float64(total.Microseconds()) / 1000 / float64(hb)), LongestMS: round2(float64(longest.Microseconds()) / 1000)}
		t.Logf("%+v", run)
		r.Runs = append(r.Runs, run)
	}
	writeResults(t, c, "core", r, coreMarkdown(r))
}

func coreMarkdown(r coreResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The AM's state machine alone at 1,000–10,000 tasks\n\n")
	fmt.Fprintf(&b, "appmaster/core driven through a whole job of N workers running `true`, %d containers per heartbeat\n"+
		"(bench/core_test.go coreJob: Allocated, then ContainerStarted and TaskRegistered per launch, ContainerCompleted\n"+
		"two heartbeats later, a Tick, Ready drained after each). No I/O: the figure is the machine's own CPU time.\n"+
		"Produced by `make bench` (bench/run.sh → bench/core_bench_test.go); the same as a Go benchmark:\n"+
		"`go test -run '^$' -bench CoreJob -benchtime 1x ./bench/`.\n\n", coreHeartbeat)
	fmt.Fprintf(&b, "%s\n", r.machine.markdown(""))
	fmt.Fprintf(&b, "| tasks | heartbeats | whole job (ms) | mean per heartbeat (ms) | longest heartbeat (ms) |\n|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %d | %d | %.2f | %.2f | %.2f |\n", run.Tasks, run.Heartbeats, run.TotalMS, run.MeanMS, run.LongestMS)
	}
	fmt.Fprintf(&b, "\nGoal: < 5 ms per heartbeat at 10,000 tasks.\n")
	return b.String()
}
