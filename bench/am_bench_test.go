//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// amRun is one application's figures.
type amRun struct {
	Containers int    `json:"containers"`
	Spec       string `json:"spec"`
	Command    string `json:"command"`
	AppID      string `json:"app_id"`
	FinalState string `json:"final_status"`
	// WallS is `tfyarn run` from start to exit (upload check, submission,
	// the whole job, cleanup).
	WallS float64 `json:"wall_s"`
	// AllStartedS is from the RM's submit time (APP_SUBMIT_TIME_ENV) to the
	// moment the AM had started the last task's container (startContainers
	// answered), as the AM logs it.
	AllStartedS float64 `json:"all_started_after_submission_s"`
	// PeakRSSKiB is the AM's VmHWM at exit, as the AM logs it.
	PeakRSSKiB int64 `json:"am_peak_rss_kib"`
	// RMAllocated counts the RM audit log's "AM Allocated Container" entries
	// for the application: the AM's own container plus every task container.
	RMAllocated int `json:"rm_allocated_containers"`
}

type amResult struct {
	machine
	Runs []amRun `json:"runs"`
}

var (
	amAllStarted = regexp.MustCompile(`all (\d+) tasks started ([0-9.]+)s after submission`)
	amPeakRSS    = regexp.MustCompile(`peak RSS (\d+) KiB`)
	auditAlloc   = regexp.MustCompile(`OPERATION=AM Allocated Container\tTARGET=SchedulerApp\tRESULT=SUCCESS\tAPPID=(\S+)\t`)
)

// TestBenchAM runs `bin/tfyarn run` with 3 and 30 containers of 128 MiB and
// 1 vcore that sleep 5 s, and reports the AM's peak RSS and how long it took
// until every task container was started. It runs on the scale benchmark's
// cluster (8 NodeManagers of 32 vcores), where 30 tasks run at once: on the
// main cluster's two unlabelled NodeManagers of 8 vcores the client refuses
// a job of 31 vcores, since it could never run whole. The scale benchmark,
// later in this package, stops that cluster.
func TestBenchAM(t *testing.T) {
	c := clustertest.RequireScale(t)
	bin := tfyarnBin(t, c)
	r := amResult{machine: newMachine(t, c.Root, "am")}
	for _, n := range []int{3, 30} {
		run := benchAMRun(t, c, bin, n)
		t.Logf("%+v", run)
		r.Runs = append(r.Runs, run)
	}
	writeResults(t, c, "am", r, amMarkdown(r))
}

func benchAMRun(t *testing.T, c *clustertest.Cluster, bin string, n int) amRun {
	spec := fmt.Sprintf("%dx1c,128m", n)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--worker", spec, "--name", "tfyarn-bench-am", "--output", "json", "--", "sleep", "5")
	cmd.Env = c.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	run := amRun{Containers: n, Spec: spec, Command: "sleep 5", WallS: round2(time.Since(start).Seconds())}
	var res struct {
		AppID       string `json:"app_id"`
		FinalStatus string `json:"final_status"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	run.AppID, run.FinalState = res.AppID, res.FinalStatus
	require.Equal(t, "SUCCEEDED", res.FinalStatus)

	amLog := aggregatedAMLog(t, c, res.AppID)
	m := amAllStarted.FindStringSubmatch(amLog)
	require.NotNil(t, m, "AM log:\n%s", amLog)
	require.Equal(t, strconv.Itoa(n), m[1])
	run.AllStartedS, _ = strconv.ParseFloat(m[2], 64)
	p := amPeakRSS.FindStringSubmatch(amLog)
	require.NotNil(t, p, "AM log:\n%s", amLog)
	run.PeakRSSKiB, _ = strconv.ParseInt(p[1], 10, 64)

	logData, err := os.ReadFile(filepath.Join(c.Dir, "logs", "cluster.log"))
	require.NoError(t, err)
	for _, a := range auditAlloc.FindAllStringSubmatch(string(logData), -1) {
		if a[1] == res.AppID {
			run.RMAllocated++
		}
	}
	require.Equal(t, n+1, run.RMAllocated, "no over-allocation")
	return run
}

// aggregatedAMLog reads the AM's stderr with Hadoop's `yarn logs`, waiting
// for the NodeManager to finish aggregating it.
func aggregatedAMLog(t *testing.T, c *clustertest.Cluster, appID string) string {
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, filepath.Join(c.Root, "testcluster", "hadoop.sh"), "yarn", "logs", "-applicationId", appID, "-log_files", "am.stderr")
		cmd.Env = c.Env()
		out, _ := cmd.Output()
		cancel()
		if amPeakRSS.Match(out) || time.Now().After(deadline) {
			return string(out)
		}
		time.Sleep(2 * time.Second)
	}
}

func amMarkdown(r amResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The Go ApplicationMaster: memory and time to start containers\n\n")
	fmt.Fprintf(&b, "`bin/tfyarn run --worker <N>x1c,128m -- sleep 5` on the plain test cluster, one run per size.\n"+
		"Produced by `make bench` (bench/run.sh → bench/am_bench_test.go).\n\n")
	fmt.Fprintf(&b, "%s\n", r.markdown(""))
	fmt.Fprintf(&b, "| task containers | application | AM peak RSS (MiB) | submission → all tasks started (s) | `tfyarn run` wall (s) | RM-allocated containers (AM + tasks) |\n|---:|---|---:|---:|---:|---:|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %d | %s | %.1f | %.2f | %.2f | %d |\n", run.Containers, run.AppID, float64(run.PeakRSSKiB)/1024, run.AllStartedS, run.WallS, run.RMAllocated)
	}
	fmt.Fprintf(&b, "\nWhat is measured:\n\n"+
		"- **AM peak RSS**: the AM process's VmHWM from /proc/self/status, which it logs as it exits\n"+
		"  (read back from the aggregated am.stderr with Hadoop's `yarn logs`).\n"+
		"- **submission → all tasks started**: from the RM's submission time (APP_SUBMIT_TIME_ENV in the AM's\n"+
		"  environment) to the moment startContainers had succeeded for the last task, as the AM logs it.\n"+
		"  It includes the AM container's own scheduling and localization (the tfyarn binary, from HDFS's cache).\n"+
		"  On the scale benchmark's cluster (8 NodeManagers of 32 vcores, each a process on a host of its own)\n"+
		"  all 30 one-vcore tasks run at once.\n"+
		"- **RM-allocated containers**: \"AM Allocated Container\" entries for the application in the RM's audit\n"+
		"  log: N + 1 means no surplus container was ever allocated.\n")
	return b.String()
}
