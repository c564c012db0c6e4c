//go:build bench

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// runs is how many times each CLI answers `status`; TFYARN_BENCH_RUNS overrides.
const defaultRuns = 10

func benchRuns(t *testing.T) int {
	s := os.Getenv("TFYARN_BENCH_RUNS")
	if s == "" {
		return defaultRuns
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "TFYARN_BENCH_RUNS")
	return n
}

type stats struct {
	Runs     int       `json:"runs"`
	MedianMS float64   `json:"median_ms"`
	P90MS    float64   `json:"p90_ms"`
	MinMS    float64   `json:"min_ms"`
	MaxMS    float64   `json:"max_ms"`
	AllMS    []float64 `json:"all_ms"`
}

type result struct {
	machine
	Application   string `json:"application"`
	TfyarnCommand string `json:"tfyarn_command"`
	JavaCommand   string `json:"java_command"`
	Tfyarn        stats  `json:"tfyarn"`
	Java          stats  `json:"java"`
	// SpeedupMedian is Java's median over tfyarn's: how many times faster tfyarn is.
	SpeedupMedian float64 `json:"speedup_median"`
	SpeedupP90    float64 `json:"speedup_p90"`
}

// TestBenchStatus times `bin/tfyarn status ID` against Hadoop's
// `yarn application -status ID` (testcluster/hadoop.sh) on one running
// application, alternating the two so both see the same cluster load.
func TestBenchStatus(t *testing.T) {
	c := clustertest.Require(t)
	bin := tfyarnBin(t, c)
	runs := benchRuns(t)

	id := submitSleeper(t, c.ConfDir)
	idText := yarn.FormatApplicationID(id)

	tfyarn := []string{bin, "status", idText}
	java := javaAppStatusCmd(c.Root, idText)
	// One unmeasured run each: page cache, the JVM's class data, the RM's first-call paths.
	timeRun(t, c, tfyarn, "State")
	timeRun(t, c, java, "State")

	var tf, jv []float64
	for i := 0; i < runs; i++ {
		tf = append(tf, timeRun(t, c, tfyarn, "ACCEPTED"))
		jv = append(jv, timeRun(t, c, java, "ACCEPTED"))
	}
	r := result{
		machine:       newMachine(t, c.Root, "status"),
		Application:   idText,
		TfyarnCommand: "bin/tfyarn status " + idText,
		JavaCommand:   "testcluster/hadoop.sh yarn application -status " + idText,
		Tfyarn:        summarize(tf),
		Java:          summarize(jv),
	}
	r.SpeedupMedian = round2(r.Java.MedianMS / r.Tfyarn.MedianMS)
	r.SpeedupP90 = round2(r.Java.P90MS / r.Tfyarn.P90MS)
	writeResults(t, c, "status", r, statusMarkdown(r))
	t.Logf("tfyarn median %.1f ms p90 %.1f ms; Java median %.1f ms p90 %.1f ms; %.1fx faster (median)",
		r.Tfyarn.MedianMS, r.Tfyarn.P90MS, r.Java.MedianMS, r.Java.P90MS, r.SpeedupMedian)
}

func submitSleeper(t *testing.T, confDir string) *hadoopyarn.ApplicationIdProto {
	conf, err := hadoopconf.LoadDir(confDir)
	require.NoError(t, err)
	rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { rm.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	na, err := rm.GetNewApplication(ctx)
	require.NoError(t, err)
	id := na.GetApplicationId()
	require.NoError(t, rm.SubmitApplication(ctx, &hadoopyarn.ApplicationSubmissionContextProto{
		ApplicationId:   id,
		ApplicationName: proto.String("tfyarn-bench-status"),
		Queue:           proto.String("default"),
		ApplicationType: proto.String("TFYARN-TEST"),
		MaxAppAttempts:  proto.Int32(1),
		Resource:        yarn.NewResource(128, 1, nil),
		AmContainerSpec: &hadoopyarn.ContainerLaunchContextProto{Command: []string{"sleep 600"}},
	}))
	t.Cleanup(func() {
		kctx, kcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer kcancel()
		_, _ = rm.KillApplication(kctx, id, "bench done")
	})
	_, err = rm.WaitApplication(ctx, id, 0, func(r *hadoopyarn.ApplicationReportProto) bool {
		// An AM that never registers stays ACCEPTED; any state does for timing status.
		return r.GetYarnApplicationState() == hadoopyarn.YarnApplicationStateProto_ACCEPTED || yarn.IsTerminal(r.GetYarnApplicationState())
	})
	require.NoError(t, err)
	return id
}

// timeRun runs argv to completion and returns its wall time in ms; the
// output must contain want, so a failing command cannot look fast.
func timeRun(t *testing.T, c *clustertest.Cluster, argv []string, want string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = c.Env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	require.NoError(t, err, "%s\n%s", strings.Join(argv, " "), out.String())
	require.Contains(t, out.String(), want, strings.Join(argv, " "))
	return float64(took.Microseconds()) / 1000
}

func summarize(ms []float64) stats {
	s := sortedCopy(ms)
	return stats{
		Runs:     len(s),
		MedianMS: round2(quantile(s, 0.5)),
		P90MS:    round2(quantile(s, 0.9)),
		MinMS:    round2(s[0]),
		MaxMS:    round2(s[len(s)-1]),
		AllMS:    roundAll(ms),
	}
}

func statusMarkdown(r result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# `tfyarn status` vs `yarn application -status`\n\n")
	fmt.Fprintf(&b, "Wall time of one CLI invocation reporting one ACCEPTED application, %d runs each, alternating,\n", r.Tfyarn.Runs)
	fmt.Fprintf(&b, "after one unmeasured warm-up run each. Produced by `make bench` (bench/run.sh → bench/status_bench_test.go).\n\n")
	fmt.Fprintf(&b, "%s- Application: %s\n\n", r.markdown(""), r.Application)
	fmt.Fprintf(&b, "| command | median (ms) | p90 (ms) | min (ms) | max (ms) |\n|---|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| `%s` | %.1f | %.1f | %.1f | %.1f |\n", "bin/tfyarn status ID", r.Tfyarn.MedianMS, r.Tfyarn.P90MS, r.Tfyarn.MinMS, r.Tfyarn.MaxMS)
	fmt.Fprintf(&b, "| `%s` | %.1f | %.1f | %.1f | %.1f |\n\n", "testcluster/hadoop.sh yarn application -status ID (JVM)", r.Java.MedianMS, r.Java.P90MS, r.Java.MinMS, r.Java.MaxMS)
	fmt.Fprintf(&b, "Ratio Java / tfyarn: **%.1fx** at the median, %.1fx at p90.\n\n", r.SpeedupMedian, r.SpeedupP90)
	fmt.Fprintf(&b, "The Java side is Hadoop's own ApplicationCLI started by testcluster/hadoop.sh, the equivalent of\n"+
		"bin/yarn (a shell wrapper starting a fresh JVM with -Xmx512m). Both read the same HADOOP_CONF_DIR\n"+
		"and ask the same RM.\n")
	return b.String()
}

// javaAppStatusCmd is Hadoop's own `yarn application -status ID`, through testcluster/hadoop.sh
// (the equivalent of bin/yarn: a shell wrapper that starts ApplicationCLI in a fresh JVM).
func javaAppStatusCmd(root string, id string) []string {
	return []string{filepath.Join(root, "testcluster", "hadoop.sh"), "yarn", "application", "-status", id}
}
