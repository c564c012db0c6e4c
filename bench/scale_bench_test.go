//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// scaleTasks is the scale benchmark's job: that many one-vcore workers
// running `true`, all placed at once on the scale cluster.
const scaleTasks = 200

type scaleResult struct {
	machine
	Cluster string  `json:"cluster"`
	Command string  `json:"command"`
	AppID   string  `json:"app_id"`
	Final   string  `json:"final_status"`
	WallS   float64 `json:"client_wall_s"`
	// AllStartedS is the AM's own figure: RM submit time to the last
	// startContainers answered ("all N tasks started" in its log).
	AllStartedS float64 `json:"am_all_started_after_submission_s"`
	// Timeline is the RM's and NMs' view (their logs), from the client's start.
	Timeline timeline `json:"timeline"`
	// AMPeakRSSMiB is the AM's own VmHWM (its log); AMCPUS the AM
	// container's processes' utime+stime, sampled from /proc.
	AMPeakRSSMiB float64 `json:"am_peak_rss_mib"`
	AMCPUS       float64 `json:"am_cpu_s"`
	// Heartbeats is the RM's count of allocate calls on the scheduler port
	// over the job (RpcDetailedActivity OverallAllocateNumOps delta): this
	// application's only, as nothing else runs on the scale cluster.
	Heartbeats int64     `json:"am_allocate_calls"`
	LoadAvg    [2]string `json:"loadavg_1m_before_after"`
}

// TestBenchScale runs 200 tasks of `true` on a cluster of its own (8
// NodeManagers of 32 vcores, clustertest.RequireScale), then stops it.
func TestBenchScale(t *testing.T) {
	c := clustertest.RequireScale(t)
	defer c.Control(t, "down")
	bin := tfyarnBin(t, c)
	spec := fmt.Sprintf("%dx1c,128m", scaleTasks)
	argv := []string{bin, "run", "--worker", spec, "--name", "bench-scale", "--output", "json", "--", "true"}
	res := scaleResult{machine: newMachine(t, c.Root, "scale"), Cluster: "8 NodeManagers × 32 vcores (NodeManager 0 exclusive to label gpu), ports +6000",
		Command: "bin/tfyarn run --worker " + spec + " --name bench-scale --output json -- true"}
	res.LoadAvg[0] = loadAvg()
	before := allocateCalls(t, "http://localhost:14088", 14030)
	sampler := startRSSSampler()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = c.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Run(), "stderr: %s", tail(stderr.String(), 4000))
	res.WallS = round2(time.Since(start).Seconds())
	sampler.stop()
	res.Heartbeats = allocateCalls(t, "http://localhost:14088", 14030) - before
	res.LoadAvg[1] = loadAvg()
	var out struct {
		AppID       string `json:"app_id"`
		FinalStatus string `json:"final_status"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
	res.AppID, res.Final = out.AppID, out.FinalStatus
	require.Equal(t, "SUCCEEDED", res.Final)
	res.AMCPUS = round2(sampler.cpuSeconds(amContainerID(res.AppID)))

	logs := logsOf(t, c)
	var ok bool
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if res.Timeline, ok = readTimeline(t, logs, res.AppID, start); ok || time.Now().After(deadline) {
			break
		}
	}
	require.True(t, ok, "no timeline for %s", res.AppID)
	res.Timeline.YARNFloor = round2(floorOf(res.Timeline))
	res.Timeline.Overhead = round2(res.WallS - res.Timeline.YARNFloor)
	amLog := aggregatedAMLog(t, c, res.AppID)
	if m := amAllStarted.FindStringSubmatch(amLog); m != nil {
		res.AllStartedS, _ = strconv.ParseFloat(m[2], 64)
	}
	if m := amPeakRSS.FindStringSubmatch(amLog); m != nil {
		kib, _ := strconv.ParseInt(m[1], 10, 64)
		res.AMPeakRSSMiB = round2(float64(kib) / 1024)
	}
	require.Positive(t, res.AMPeakRSSMiB, "AM log:\n%s", amLog)
	t.Logf("%+v", res)
	writeResults(t, c, "scale", res, scaleMarkdown(res))
}

// allocateCalls is the RM's count of allocate calls served on its
// scheduler port so far (JMX).
func allocateCalls(t *testing.T, web string, port int) int64 {
	resp, err := http.Get(web + "/jmx")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var jmx struct {
		Beans []map[string]any `json:"beans"`
	}
	require.NoError(t, json.Unmarshal(body, &jmx))
	suffix := fmt.Sprintf("name=RpcDetailedActivityForPort%d", port)
	for _, b := range jmx.Beans {
		if name, _ := b["name"].(string); strings.HasSuffix(name, suffix) {
			if v, ok := b["OverallAllocateNumOps"].(float64); ok {
				return int64(v)
			}
			return 0 // no allocate call yet
		}
	}
	t.Fatalf("no %s bean in the RM's JMX", suffix)
	return 0
}

func scaleMarkdown(r scaleResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# 200 tasks: the Go ApplicationMaster at scale\n\n")
	fmt.Fprintf(&b, "`%s` on a cluster of its own: %s.\n"+
		"Produced by `make bench` (bench/run.sh → bench/scale_bench_test.go; alone:\n"+
		"`go test -tags bench -run TestBenchScale -v ./bench/`, which starts and stops that cluster).\n\n", r.Command, r.Cluster)
	fmt.Fprintf(&b, "%s- Load average (1 min) before / after: %s / %s (shared machine)\n\n", r.machine.markdown(""), r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(&b, "| figure | value |\n|---|---:|\n")
	fmt.Fprintf(&b, "| client wall to final status (s) | %.2f |\n", r.WallS)
	fmt.Fprintf(&b, "| submission → all %d task containers started (AM's log, s) | %.2f |\n", scaleTasks, r.AllStartedS)
	fmt.Fprintf(&b, "| client start → all task containers running (NodeManagers' log, s) | %.2f |\n", r.Timeline.TasksRunning)
	fmt.Fprintf(&b, "| AM registered → last task container allocated (RM, s) | %.2f |\n", r.Timeline.TasksAllocated-r.Timeline.Registered)
	fmt.Fprintf(&b, "| last allocated → last start request on a NodeManager (AM, s) | %.2f |\n", r.Timeline.TasksStartReq-r.Timeline.TasksAllocated)
	fmt.Fprintf(&b, "| AM peak RSS (MiB) | %.1f |\n", r.AMPeakRSSMiB)
	fmt.Fprintf(&b, "| AM CPU, user + system (s) | %.2f |\n", r.AMCPUS)
	fmt.Fprintf(&b, "| allocate calls (heartbeats) | %d |\n", r.Heartbeats)
	fmt.Fprintf(&b, "| YARN floor (s) / tfyarn's own time (s) | %.2f / %.2f |\n", r.Timeline.YARNFloor, r.Timeline.Overhead)
	fmt.Fprintf(&b, "\nAM CPU: the sum of utime+stime over the processes with the AM's CONTAINER_ID, sampled every 100 ms\n"+
		"(the last sample before exit). Allocate calls: the RM's RpcDetailedActivity OverallAllocateNumOps on the\n"+
		"scheduler port, before and after (nothing else runs there). YARN floor as in peers.md.\n")
	return b.String()
}
