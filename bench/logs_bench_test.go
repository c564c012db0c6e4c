//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

type logsResult struct {
	machine
	Application   string  `json:"application"`
	OutputBytes   int     `json:"output_bytes"`
	Identical     bool    `json:"identical"`
	TfyarnCommand string  `json:"tfyarn_command"`
	JavaCommand   string  `json:"java_command"`
	Tfyarn        stats   `json:"tfyarn"`
	Java          stats   `json:"java"`
	SpeedupMedian float64 `json:"speedup_median"`
	SpeedupP90    float64 `json:"speedup_p90"`
}

// TestBenchLogs times `bin/tfyarn logs ID` against Hadoop's
// `yarn logs -applicationId ID` (testcluster/hadoop.sh) on one ended
// application whose logs are aggregated (TFile on HDFS), alternating the
// two, after checking that both print the same bytes.
func TestBenchLogs(t *testing.T) {
	c := clustertest.Require(t)
	bin := tfyarnBin(t, c)
	runs := benchRuns(t)
	// A job of three tasks, each writing 1,000 lines.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--worker", "3x1c,128m", "--name", "tfyarn-bench-logs", "--output", "json", "--",
		"sh", "-c", "i=0; while [ $i -lt 1000 ]; do echo $TFYARN_TASK line $i; i=$((i+1)); done")
	cmd.Env = c.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	var res struct {
		AppID string `json:"app_id"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	id := res.AppID

	tfyarn := []string{bin, "logs", id}
	java := []string{filepath.Join(c.Root, "testcluster", "hadoop.sh"), "yarn", "logs", "-applicationId", id}
	// Aggregation done: tfyarn logs exits 0 without a note that it still runs.
	var mine string
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Second) {
		out, errOut, err := runOut(c, tfyarn)
		if err == nil && !strings.Contains(errOut, "still running") {
			mine = out
			break
		}
		require.True(t, time.Now().Before(deadline), "logs of %s not aggregated within 2m: %s", id, errOut)
	}
	theirs, _, err := runOut(c, java)
	require.NoError(t, err)
	require.Equal(t, theirs, mine, "both print the same")

	want := "worker:2 line 999"
	timeRun(t, c, tfyarn, want) // unmeasured warm-up each
	timeRun(t, c, java, want)
	var tf, jv []float64
	for i := 0; i < runs; i++ {
		tf = append(tf, timeRun(t, c, tfyarn, want))
		jv = append(jv, timeRun(t, c, java, want))
	}
	r := logsResult{
		machine:       newMachine(t, c.Root, "logs"),
		Application:   id,
		OutputBytes:   len(mine),
		Identical:     true,
		TfyarnCommand: "bin/tfyarn logs " + id,
		JavaCommand:   "testcluster/hadoop.sh yarn logs -applicationId " + id,
		Tfyarn:        summarize(tf),
		Java:          summarize(jv),
	}
	r.SpeedupMedian = round2(r.Java.MedianMS / r.Tfyarn.MedianMS)
	r.SpeedupP90 = round2(r.Java.P90MS / r.Tfyarn.P90MS)
	writeResults(t, c, "logs", r, logsMarkdown(r))
	t.Logf("tfyarn median %.1f ms; Java median %.1f ms; %.1fx (median)", r.Tfyarn.MedianMS, r.Java.MedianMS, r.SpeedupMedian)
}

func runOut(c *clustertest.Cluster, argv []string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = c.Env()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func logsMarkdown(r logsResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# `tfyarn logs` vs `yarn logs -applicationId`\n\n")
	fmt.Fprintf(&b, "Wall time of one CLI invocation printing every aggregated log (TFile on HDFS) of one ended application\n"+
		"(the AM and 3 tasks of 1,000 lines each: %d bytes of output, identical from both), %d runs each, alternating,\n"+
		"after one unmeasured warm-up run each. Produced by `make bench` (bench/run.sh → bench/logs_bench_test.go).\n\n", r.OutputBytes, r.Tfyarn.Runs)
	fmt.Fprintf(&b, "%s- Application: %s\n\n", r.markdown(""), r.Application)
	fmt.Fprintf(&b, "| command | median (ms) | p90 (ms) | min (ms) | max (ms) |\n|---|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| `bin/tfyarn logs ID` | %.1f | %.1f | %.1f | %.1f |\n", r.Tfyarn.MedianMS, r.Tfyarn.P90MS, r.Tfyarn.MinMS, r.Tfyarn.MaxMS)
	fmt.Fprintf(&b, "| `testcluster/hadoop.sh yarn logs -applicationId ID` (JVM) | %.1f | %.1f | %.1f | %.1f |\n\n", r.Java.MedianMS, r.Java.P90MS, r.Java.MinMS, r.Java.MaxMS)
	fmt.Fprintf(&b, "Ratio Java / tfyarn: **%.1fx** at the median, %.1fx at p90.\n\n", r.SpeedupMedian, r.SpeedupP90)
	fmt.Fprintf(&b, "The Java side is Hadoop's own LogsCLI in a fresh JVM (testcluster/hadoop.sh, the equivalent of bin/yarn,\n"+
		"-Xmx512m). Both read the same HADOOP_CONF_DIR, ask the same RM and read the same files from HDFS.\n")
	return b.String()
}
