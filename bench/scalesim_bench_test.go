//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// The simulation cluster's fixed ports (clustertest's simProfile).
const (
	simTrackerAddr   = "localhost:20031"
	simSchedulerAddr = "localhost:20030"
	simRMWeb         = "http://localhost:20088"
	simNMPort        = 20041
	simNMWebPort     = 20042
)

// simResult is one job of the scale simulation. Times are seconds from the client's start.
type simResult struct {
	Tasks    int     `json:"tasks"`
	Nodes    int     `json:"nodes"`
	HoldS    float64 `json:"hold_s"`
	AMMemory string  `json:"am_memory,omitempty"` // --am-memory (default 256m)
	// SimCPUS is this process's CPU over the job: the simulated NodeManagers and launchers
	// (decoding every spec), which a cluster spreads over its nodes.
	SimCPUS      float64 `json:"simulation_cpu_s"`
	Final        string  `json:"final_status"`
	ClientWallS  float64 `json:"client_wall_s"`
	AMStartS     float64 `json:"am_process_started_s"`
	AllocatedS   float64 `json:"all_allocated_s"` // the AM's last "allocated" log line
	AllStartedS  float64 `json:"all_started_s"`   // the last task startContainers the nodes served
	RegisteredS  float64 `json:"all_registered_s"`
	SpecS        float64 `json:"every_launcher_has_spec_s"`
	AMStartedLog float64 `json:"am_log_all_started_after_submission_s"`
	AMCPUS       float64 `json:"am_cpu_s"`
	AMPeakMiB    float64 `json:"am_peak_rss_mib"`
	Allocates    int     `json:"am_allocate_calls"`
	AllocP50MS   float64 `json:"am_allocate_p50_ms"`
	AllocP90MS   float64 `json:"am_allocate_p90_ms"`
	AllocMaxMS   float64 `json:"am_allocate_max_ms"`
	NMBeats      int     `json:"nm_heartbeats"`
	NMBeatAvgMS  float64 `json:"nm_heartbeat_avg_ms"`
	NMBeatMaxMS  float64 `json:"nm_heartbeat_max_ms"`
	AMFDsMax     int     `json:"am_open_fds_max"` // sampled each second: its connections
	Unreported   int     `json:"exit_reports_not_answered_in_10s"`
	// ListenOverflows is the kernel's count (TcpExtListenOverflows) of connections dropped over
	// the job because a listening socket's backlog was full: the AM's, during a burst.
	ListenOverflows int64   `json:"listen_overflows"`
	LoadBefore      string  `json:"load_1m_before"`
	LoadMax         float64 `json:"load_1m_max"`
	Failures        []string
}

// TestBenchScaleSim runs jobs of BENCH_SIM_TASKS (default "1000") tasks through the real
// client, ResourceManager and AM on BENCH_SIM_NODES (default 100) simulated NodeManagers of 64
// vcores and 128 GiB, each task held BENCH_SIM_HOLD (default 10s) once it has the spec. The
// cluster (clustertest.RequireSim) is stopped at the end unless BENCH_SIM_KEEP=1.
func TestBenchScaleSim(t *testing.T) {
	c := clustertest.RequireSim(t)
	if os.Getenv("BENCH_SIM_KEEP") != "1" {
		defer c.Control(t, "down")
	}
	bin := tfyarnBin(t, c)
	// Every simulated launcher's connections are this one process's files (on a cluster, each
	// launcher's own), and the AM inherits the limit: the Go runtime has raised the soft limit to
	// the hard one already; say what it is.
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	t.Logf("open files limit of the simulation and the AM: %d", lim.Cur)
	nodes := envInt(t, "BENCH_SIM_NODES", 100)
	hold, err := time.ParseDuration(envOr("BENCH_SIM_HOLD", "10s"))
	require.NoError(t, err)
	me, err := user.Current()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer, err := newCallTimer(simSchedulerAddr)
	require.NoError(t, err)
	defer timer.close()
	sim := &simCluster{
		ctx: ctx, tracker: simTrackerAddr, serverUser: me.Username, httpPort: simNMWebPort,
		nodeMemoryMiB: 128 << 10, nodeVCores: 64, hadoopVersion: c.Facts["hadoop.version"],
		bin: bin, workDir: t.TempDir(), confDir: c.ConfDir, hold: hold, schedulerVia: timer.addr(), logf: t.Logf,
	}
	require.NoError(t, sim.startNodes(nodes, 0, simNMPort))
	waitActiveNodes(t, nodes)
	var results []simResult
	for _, f := range strings.Fields(envOr("BENCH_SIM_TASKS", "1000")) {
		tasks, err := strconv.Atoi(f)
		require.NoError(t, err)
		r := runSimJob(t, c, sim, timer, bin, tasks)
		r.Nodes, r.HoldS = nodes, hold.Seconds()
		t.Logf("%+v", r)
		results = append(results, r)
	}
	out := filepath.Join(c.Root, "bench", "results", "scale-sim.json")
	js, err := json.MarshalIndent(struct {
		machine
		Runs []simResult `json:"runs"`
	}{newMachine(t, c.Root, "scale-sim"), results}, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(out, append(js, '\n'), 0o644))
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(t *testing.T, name string, def int) int {
	n, err := strconv.Atoi(envOr(name, strconv.Itoa(def)))
	require.NoError(t, err, name)
	return n
}

// waitActiveNodes waits until the ResourceManager counts want active NodeManagers.
func waitActiveNodes(t *testing.T, want int) {
	var got int
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		resp, err := http.Get(simRMWeb + "/ws/v1/cluster/metrics")
		if err != nil {
			continue
		}
		var m struct {
			ClusterMetrics struct {
				ActiveNodes int `json:"activeNodes"`
			} `json:"clusterMetrics"`
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if got = m.ClusterMetrics.ActiveNodes; err == nil && got >= want {
			return
		}
	}
	t.Fatalf("the ResourceManager counts %d active NodeManagers after 90 s, want %d", got, want)
}

var amAllocated = regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) tfyarn am: allocated `)

// runSimJob runs one job of tasks workers through the real client and measures it.
func runSimJob(t *testing.T, c *clustertest.Cluster, sim *simCluster, timer *callTimer, bin string, tasks int) simResult {
	sim.reset()
	timer.take("allocate")
	res := simResult{Tasks: tasks, LoadBefore: loadAvg()}
	overflowsBefore := listenOverflows()
	stopLoad := sampleLoad(sim, &res.LoadMax, &res.AMFDsMax)
	spec := fmt.Sprintf("%dx1c,128m", tasks)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	args := []string{"run", "--worker", spec, "--name", "bench-sim", "--output", "json"}
	if m := os.Getenv("BENCH_SIM_AM_MEMORY"); m != "" {
		args = append(args, "--am-memory", m)
		res.AMMemory = m
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "--", "true")...)
	simCPU := processCPU()
	cmd.Env = c.Env("HADOOP_USER_NAME=alice")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res.ClientWallS = round2(time.Since(start).Seconds())
	stopLoad()
	res.ListenOverflows = listenOverflows() - overflowsBefore
	res.SimCPUS = round2((processCPU() - simCPU).Seconds())
	am := sim.endedAM(60 * time.Second)
	amLog, _ := os.ReadFile(filepath.Join(am.Dir, "am.stderr"))
	// Kept for reading where the time went (bench/work is not committed).
	work := filepath.Join(c.Root, "bench", "work")
	if os.MkdirAll(work, 0o755) == nil {
		_ = os.WriteFile(filepath.Join(work, fmt.Sprintf("scalesim-%d-am.log", tasks)), amLog, 0o644)
	}
	sim.mu.Lock()
	failures := sim.failures
	sim.mu.Unlock()
	require.NoError(t, err, "client stderr: %s\nAM log: %s\nsimulated launchers' failures: %v", tail(stderr.String(), 3000), tail(string(amLog), 3000), failures)
	var out struct {
		FinalStatus string `json:"final_status"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
	res.Final = out.FinalStatus
	since := func(at time.Time) float64 { return round2(at.Sub(start).Seconds()) }
	sim.mu.Lock()
	res.AllStartedS, res.RegisteredS, res.SpecS = since(lastOf(sim.started)), since(lastOf(sim.registered)), since(lastOf(sim.specs))
	res.NMBeats, res.NMBeatMaxMS = sim.hbCount, ms(sim.hbMax)
	if sim.hbCount > 0 {
		res.NMBeatAvgMS = ms(sim.hbTotal / time.Duration(sim.hbCount))
	}
	res.Failures, res.Unreported = sim.failures, sim.unreported
	got := len(sim.specs)
	sim.mu.Unlock()
	require.Equal(t, tasks, got, "launchers that got the spec; failures: %v", res.Failures)
	res.AMStartS, res.AMCPUS, res.AMPeakMiB = since(am.Started), round2(am.CPU.Seconds()), round2(float64(am.PeakKiB)/1024)
	if m := amAllocated.FindAllSubmatch(amLog, -1); len(m) > 0 {
		if at, err := time.ParseInLocation("2006-01-02 15:04:05.000", string(m[len(m)-1][1]), time.Local); err == nil {
			res.AllocatedS = since(at)
		}
	}
	if m := amAllStarted.FindSubmatch(amLog); m != nil {
		res.AMStartedLog, _ = strconv.ParseFloat(string(m[2]), 64)
	}
	allocs := timer.take("allocate")
	res.Allocates = len(allocs)
	slices.Sort(allocs)
	if n := len(allocs); n > 0 {
		res.AllocP50MS, res.AllocP90MS, res.AllocMaxMS = ms(allocs[n/2]), ms(allocs[n*9/10]), ms(allocs[n-1])
	}
	return res
}

// listenOverflows is the kernel's TcpExtListenOverflows counter (this network namespace's).
func listenOverflows() int64 {
	b, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return 0
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		for j, n := range names {
			if n == "ListenOverflows" && j < len(values) {
				v, _ := strconv.ParseInt(values[j], 10, 64)
				return v
			}
		}
	}
	return 0
}

// processCPU is this process's user and system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }

func lastOf(ts []time.Time) time.Time {
	var last time.Time
	for _, t := range ts {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// sampleLoad keeps the highest 1-minute load average and the AM process's most open files seen
// until the returned func is called.
func sampleLoad(sim *simCluster, peak *float64, fds *int) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			if l, err := strconv.ParseFloat(loadAvg(), 64); err == nil {
				*peak = max(*peak, l)
			}
			sim.mu.Lock()
			pid := sim.am.PID
			sim.mu.Unlock()
			if pid > 0 {
				if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
					*fds = max(*fds, len(ents))
				}
			}
			select {
			case <-done:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// reset forgets the previous job's figures.
func (s *simCluster) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started, s.registered, s.specs, s.exits, s.unreported, s.failures = nil, nil, nil, 0, 0, nil
	s.hbCount, s.hbTotal, s.hbMax = 0, 0, 0
	s.am = simAM{}
}

// endedAM waits until the AM process has ended and returns what it was.
func (s *simCluster) endedAM(timeout time.Duration) simAM {
	for deadline := time.Now().Add(timeout); ; time.Sleep(200 * time.Millisecond) {
		s.mu.Lock()
		am := s.am
		s.mu.Unlock()
		if am.Finished || time.Now().After(deadline) {
			return am
		}
	}
}
