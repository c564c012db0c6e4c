//go:build soak

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// The soak's defaults; SOAK_RUNS and SOAK_TIMEOUT (a Go duration) override
// them for a quick try.
const (
	soakDefaultRuns    = 20
	soakDefaultTimeout = 3 * time.Minute
	// soakInterruptGrace is how long a timed-out `tfyarn run` has, after
	// SIGINT, to kill its application itself before it is SIGKILLed (and
	// the application killed with `tfyarn kill`).
	soakInterruptGrace = 45 * time.Second
	// soakTasks is the MWMS job's task count: a chief and two workers.
	soakTasks = 3
)

// soakPortConflict matches what a lost port looks like in a task's log or
// the diagnostics: the OS's EADDRINUSE in its C, Python and Go wordings,
// and gRPC's and TensorFlow's reports of a server that could not bind.
var soakPortConflict = regexp.MustCompile(`(?i)address already in use|address in use|EADDRINUSE|errno 98\b|` +
	`failed to bind|bind failed|unable to bind|cannot bind|could not bind|` +
	`failed to add port|could not start grpc server`)

// soakRun is one run of the MWMS example.
type soakRun struct {
	Run         int      `json:"run"`
	AppID       string   `json:"app_id"`
	FinalStatus string   `json:"final_status"`
	ExitCode    int      `json:"exit_code"`
	WallS       float64  `json:"wall_s"`
	TimedOut    bool     `json:"timed_out"`
	Diagnostics string   `json:"diagnostics,omitempty"`
	Ports       []int    `json:"task_ports"`
	Conflicts   []string `json:"port_conflict_lines"`
	// Containers is how many containers' logs were aggregated (the AM's
	// and the tasks').
	Containers int    `json:"log_containers"`
	Failure    string `json:"failure,omitempty"`
}

type soakResult struct {
	Benchmark     string    `json:"benchmark"`
	Date          string    `json:"date"`
	Machine       string    `json:"machine"`
	NProc         int       `json:"nproc"`
	CPU           string    `json:"cpu"`
	GoVersion     string    `json:"go_version"`
	HadoopVersion string    `json:"hadoop_version"`
	Command       string    `json:"command"`
	Runs          int       `json:"runs"`
	TimeoutS      float64   `json:"per_run_timeout_s"`
	Succeeded     int       `json:"succeeded"`
	Failures      int       `json:"failures"`
	Hangs         int       `json:"hangs"`
	PortConflicts int       `json:"port_conflicts"`
	DistinctPorts int       `json:"distinct_task_ports"`
	WallMinS      float64   `json:"wall_min_s"`
	WallMedianS   float64   `json:"wall_median_s"`
	WallMaxS      float64   `json:"wall_max_s"`
	TotalS        float64   `json:"total_s"`
	Results       []soakRun `json:"results"`
}

// TestSoakMWMS runs the MWMS example (chief + 2 workers, one short epoch)
// SOAK_RUNS (20) times back to back on the test cluster with a freshly built
// tfyarn, each under a hard timeout: a run that does not end in time is a
// hang, a failure, and its application is killed. Every run must end
// SUCCEEDED, and no task's aggregated log nor any diagnostics may show a
// port conflict (EADDRINUSE, a gRPC server that could not bind). The logs are
// read after the last run, so the runs follow each other with no pause.
// Writes bench/results/soak.{md,json}.
//
//	bash bench/soak.sh    # = go test -tags soak -run '^TestSoak' ./bench/
func TestSoakMWMS(t *testing.T) {
	runs, timeout := soakDefaultRuns, soakDefaultTimeout
	if s := os.Getenv("SOAK_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "SOAK_RUNS")
		require.Positive(t, n, "SOAK_RUNS")
		runs = n
	}
	if s := os.Getenv("SOAK_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "SOAK_TIMEOUT")
		timeout = d
	}
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := soakPython(t, c)
	script := filepath.Join(c.Root, "examples", "mwms_keras.py")
	modelDir := clustertest.ContainerDir(t) // the tasks (alice under LinuxContainerExecutor) write it

	res := soakResult{
		Benchmark: "soak-mwms", Date: time.Now().UTC().Format(time.RFC3339),
		Machine: runtime.GOOS + "/" + runtime.GOARCH, NProc: runtime.NumCPU(), CPU: cpuModel(),
		GoVersion: runtime.Version(), HadoopVersion: hadoopVersion(t, c.Root),
		Command: "tfyarn run --chief 1c,1g --worker 2x1c,1g --python .venv/bin/python examples/mwms_keras.py" +
			" -- --epochs 1 --steps-per-epoch 5 --model-dir DIR",
		Runs: runs, TimeoutS: timeout.Seconds(),
	}
	start := time.Now()
	for i := 1; i <= runs; i++ {
		r := soakOnce(t, c, bin, timeout, i, "--name", fmt.Sprintf("soak-mwms-%02d", i),
			"--chief", "1c,1g", "--worker", "2x1c,1g", "--python", python, script, "--",
			"--epochs", "1", "--steps-per-epoch", "5", "--model-dir", filepath.Join(modelDir, strconv.Itoa(i)))
		t.Logf("run %2d: %s %s in %.1fs (exit %d) ports %v %s", i, r.AppID, r.FinalStatus, r.WallS, r.ExitCode, r.Ports, r.Failure)
		res.Results = append(res.Results, r)
	}
	res.TotalS = round2(time.Since(start).Seconds())

	// The logs, once every run is over.
	ports := map[int]bool{}
	for i := range res.Results {
		r := &res.Results[i]
		for _, p := range r.Ports {
			ports[p] = true
		}
		if r.AppID == "" {
			continue
		}
		logs, containers := soakLogs(t, c, r.AppID, soakTasks+1)
		r.Containers = containers
		for _, text := range []string{r.Diagnostics, logs} {
			for _, line := range strings.Split(text, "\n") {
				if soakPortConflict.MatchString(line) {
					r.Conflicts = append(r.Conflicts, strings.TrimSpace(line))
				}
			}
		}
		if containers < soakTasks+1 && r.Failure == "" {
			r.Failure = fmt.Sprintf("the logs of only %d of %d containers were aggregated", containers, soakTasks+1)
		}
	}
	walls := make([]float64, 0, len(res.Results))
	for _, r := range res.Results {
		walls = append(walls, r.WallS)
		if r.FinalStatus == "SUCCEEDED" && r.ExitCode == 0 && r.Failure == "" {
			res.Succeeded++
		} else {
			res.Failures++
		}
		if r.TimedOut {
			res.Hangs++
		}
		res.PortConflicts += len(r.Conflicts)
	}
	sort.Float64s(walls)
	res.WallMinS, res.WallMaxS = walls[0], walls[len(walls)-1]
	res.WallMedianS = round2(quantile(walls, 0.5))
	res.DistinctPorts = len(ports)
	soakWrite(t, c.Root, res)

	for _, r := range res.Results {
		require.Empty(t, r.Conflicts, "run %d (%s): port conflicts", r.Run, r.AppID)
		require.False(t, r.TimedOut, "run %d (%s) hung: no end within %s", r.Run, r.AppID, timeout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus, "run %d (%s): %s", r.Run, r.AppID, r.Diagnostics)
		require.Equal(t, 0, r.ExitCode, "run %d (%s)", r.Run, r.AppID)
		require.Empty(t, r.Failure, "run %d (%s)", r.Run, r.AppID)
	}
}

// The pattern catches the ways a lost port is reported, and not the
// launcher's own words about its reservation.
func TestSoakPortConflictPattern(t *testing.T) {
	for _, line := range []string{
		"OSError: [Errno 98] Address already in use",
		"listen tcp :2222: bind: address already in use",
		"E0000 tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc] UNKNOWN: Could not start gRPC server",
		"E0000 server_chttp2.cc:40] {\"created\":\"@1\",\"description\":\"No address added out of total 1 resolved\"}: Failed to add port to server",
		"bind(2) failed: EADDRINUSE",
	} {
		require.Regexp(t, soakPortConflict, line)
	}
	for _, line := range []string{
		"tfyarn task worker:0: the program listens on port 40293: released the reservation",
		"2026-11-21 15:34:33.431527: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:457] Started server with target: grpc://localhost:33333",
	} {
		require.NotRegexp(t, soakPortConflict, line)
	}
}

var soakSubmitted = regexp.MustCompile(`(?m)^(application_\d+_\d+) submitted`)

// soakOnce runs `tfyarn run --output json ARGS` once. Past the timeout
// the CLI gets SIGINT (it then kills its application), SIGKILL
// soakInterruptGrace later, and the application, if any, `tfyarn kill`.
func soakOnce(t *testing.T, c *clustertest.Cluster, bin string, timeout time.Duration, n int, args ...string) soakRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--output", "json"}, args...)...)
	cmd.Env = c.Env()
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = soakInterruptGrace
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := soakRun{Run: n, WallS: round2(time.Since(start).Seconds()), ExitCode: cmd.ProcessState.ExitCode()}
	r.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	var res client.Result
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr == nil {
		r.AppID, r.FinalStatus, r.Diagnostics = res.AppID, res.FinalStatus, res.Diagnostics
		for _, task := range res.Tasks {
			r.Ports = append(r.Ports, task.Port)
		}
	} else if m := soakSubmitted.FindStringSubmatch(stderr.String()); m != nil {
		r.AppID = m[1]
	}
	switch {
	case r.TimedOut:
		r.Failure = fmt.Sprintf("hung: no end within %s", timeout)
		if r.AppID != "" {
			kctx, kcancel := context.WithTimeout(context.Background(), time.Minute)
			out, kerr := exec.CommandContext(kctx, bin, "--conf-dir", c.ConfDir, "kill", r.AppID).CombinedOutput()
			kcancel()
			t.Logf("run %d: killed %s: %v %s", n, r.AppID, kerr, out)
		}
	case err != nil && r.ExitCode != 1:
		r.Failure = fmt.Sprintf("tfyarn run: %v", err)
	case r.FinalStatus != "SUCCEEDED":
		r.Failure = "ended " + r.FinalStatus
	}
	if r.Failure != "" {
		t.Logf("run %d failed (%s)\nstdout: %s\nstderr: %s", n, r.Failure, stdout.String(), stderr.String())
	}
	return r
}

var soakContainer = regexp.MustCompile(`(?m)^Container: (container_\S+) on `)

// soakLogs reads an application's aggregated logs with Hadoop's own CLI,
// waiting up to 90 s for the logs of want containers; it returns them and
// how many containers they cover.
func soakLogs(t *testing.T, c *clustertest.Cluster, appID string, want int) (string, int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(c.Root, "testcluster", "hadoop.sh"), "yarn", "logs", "-applicationId", appID)
		cmd.Env = c.Env()
		out, _ := cmd.Output()
		cancel()
		seen := map[string]bool{}
		for _, m := range soakContainer.FindAllStringSubmatch(string(out), -1) {
			seen[m[1]] = true
		}
		if len(seen) >= want || time.Now().After(deadline) {
			return string(out), len(seen)
		}
		time.Sleep(3 * time.Second)
	}
}

func soakWrite(t *testing.T, root string, res soakResult) {
	dir := filepath.Join(root, "bench", "results")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	js, err := json.MarshalIndent(res, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "soak.json"), append(js, '\n'), 0o644))

	var b strings.Builder
	fmt.Fprintf(&b, "# Soak: %d back-to-back MultiWorkerMirroredStrategy runs on YARN\n\n", res.Runs)
	fmt.Fprintf(&b, "`bash bench/soak.sh` (`go test -tags soak -run '^TestSoak' ./bench/`): `examples/mwms_keras.py`, a chief and\n"+
		"two workers (1 vcore, 1 GiB each), one epoch of 5 steps, run %d times one after the other with\n"+
		"the `tfyarn` binary built from this tree, each under a hard %s timeout (past it the run counts as a\n"+
		"hang and its application is killed). Every run must end SUCCEEDED, and no task's aggregated log\n"+
		"(`yarn logs`) nor any diagnostics may show a port conflict (`Address already in use`, EADDRINUSE,\n"+
		"a gRPC server that could not bind; the pattern: `%s`).\n\n", res.Runs, time.Duration(res.TimeoutS*float64(time.Second)), soakPortConflict)
	fmt.Fprintf(&b, "- Date: %s\n- Machine: %s, %d CPUs, %s\n- Go: %s\n- Hadoop: %s (testcluster/, single-machine cluster)\n"+
		"- TensorFlow: tensorflow-cpu 2.15.1 (`.venv`, scripts/tfenv.sh)\n\n",
		res.Date, res.Machine, res.NProc, res.CPU, res.GoVersion, res.HadoopVersion)
	fmt.Fprintf(&b, "| runs | succeeded | failures | hangs | port conflicts | distinct task ports | wall min / median / max | total |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d of %d | %.1f s / %.1f s / %.1f s | %.0f s |\n\n",
		res.Runs, res.Succeeded, res.Failures, res.Hangs, res.PortConflicts, res.DistinctPorts, res.Runs*soakTasks,
		res.WallMinS, res.WallMedianS, res.WallMaxS, res.TotalS)
	fmt.Fprintf(&b, "Wall time is `tfyarn run` from start to exit: the cache check, submission, the AM's start,\n"+
		"three containers, TensorFlow's imports and training, the end of the application and cleanup.\n\n")
	fmt.Fprintf(&b, "| run | application | final status | wall (s) | task ports | port conflicts |\n|---|---|---|---|---|---|\n")
	for _, r := range res.Results {
		status := r.FinalStatus
		if r.Failure != "" {
			status += " (" + r.Failure + ")"
		}
		ports := make([]string, len(r.Ports))
		for i, p := range r.Ports {
			ports[i] = strconv.Itoa(p)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %.1f | %s | %d |\n", r.Run, r.AppID, status, r.WallS, strings.Join(ports, ", "), len(r.Conflicts))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "soak.md"), []byte(b.String()), 0o644))
}

// soakPython makes sure .venv has the pinned TensorFlow (a no-op once it
// has) and returns its interpreter: the test cluster's tasks run on this
// machine.
func soakPython(t *testing.T, c *clustertest.Cluster) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(c.Root, "scripts", "tfenv.sh")).CombinedOutput()
	require.NoError(t, err, "scripts/tfenv.sh: %s", out)
	return filepath.Join(c.Root, ".venv", "bin", "python")
}
