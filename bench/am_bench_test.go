//go:build bench

package bench

import (
	"bytes"
	"context"
	"debug/elf"
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
	// Build is the tfyarn build that ran it: "bin/tfyarn", or the baseline's
	// label.
	Build      string `json:"build"`
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
	// AnonKiB and FileKiB split the AM's RSS at exit into its heap and
	// stacks and the pages of mapped files (the tfyarn binary); 0 for a
	// build whose AM does not log them.
	AnonKiB int64 `json:"am_exit_anon_kib,omitempty"`
	FileKiB int64 `json:"am_exit_file_kib,omitempty"`
	// RMAllocated counts the RM audit log's "AM Allocated Container" entries
	// for the application: the AM's own container plus every task container.
	RMAllocated int `json:"rm_allocated_containers"`
}

// amBuild is one tfyarn binary the benchmark ran.
type amBuild struct {
	Label string `json:"label"`
	Path  string `json:"-"`
	// Bytes is the binary's size; MappedReadOnlyBytes its text and read-only
	// data (the loadable segments that are not writable), which a process
	// running it maps from the page cache.
	Bytes               int64 `json:"bytes"`
	MappedReadOnlyBytes int64 `json:"mapped_read_only_bytes"`
}

type amResult struct {
	machine
	Builds []amBuild `json:"builds"`
	Runs   []amRun   `json:"runs"`
}

var (
	amAllStarted = regexp.MustCompile(`all (\d+) tasks started ([0-9.]+)s after submission`)
	amPeakRSS    = regexp.MustCompile(`peak RSS (\d+) KiB`)
	amExitRSS    = regexp.MustCompile(`peak RSS \d+ KiB \(at exit (\d+) KiB anonymous, (\d+) KiB of mapped files`)
	auditAlloc   = regexp.MustCompile(`OPERATION=AM Allocated Container\tTARGET=SchedulerApp\tRESULT=SUCCESS\tAPPID=(\S+)\t`)
)

// TestBenchAM runs `bin/tfyarn run` with 3 and 30 containers of 128 MiB and
// 1 vcore that sleep 5 s, and reports the AM's peak RSS and how long it took
// until every task container was started. It runs on the scale benchmark's
// cluster (8 NodeManagers of 32 vcores), where 30 tasks run at once: on the
// main cluster's two unlabelled NodeManagers of 8 vcores the client refuses
// a job of 31 vcores, since it could never run whole. The scale benchmark,
// later in this package, stops that cluster.
//
// TFYARN_BENCH_AM_BASELINE=PATH runs another build of tfyarn (an older
// commit's, `CGO_ENABLED=0 go build -trimpath`) beside bin/tfyarn on the
// same cluster, each size TFYARN_BENCH_AM_ROUNDS times (default 2), the two
// builds interleaved and taking turns going first: the one way to tell what
// a change of the AM costs from what a change of the cluster or the machine
// does. TFYARN_BENCH_AM_BASELINE_LABEL names it in the results (default:
// the file's name).
func TestBenchAM(t *testing.T) {
	c := clustertest.RequireScale(t)
	builds := []amBuild{readAMBuild(t, "bin/tfyarn", tfyarnBin(t, c))}
	rounds := 1
	if base := os.Getenv("TFYARN_BENCH_AM_BASELINE"); base != "" {
		label := os.Getenv("TFYARN_BENCH_AM_BASELINE_LABEL")
		if label == "" {
			label = filepath.Base(base)
		}
		builds = append(builds, readAMBuild(t, label, base))
		rounds = 2
		if v := os.Getenv("TFYARN_BENCH_AM_ROUNDS"); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, "TFYARN_BENCH_AM_ROUNDS=%q: give a number of rounds", v)
			require.Positive(t, n, "TFYARN_BENCH_AM_ROUNDS")
			rounds = n
		}
	}
	r := amResult{machine: newMachine(t, c.Root, "am"), Builds: builds}
	for round := range rounds {
		for _, n := range []int{3, 30} {
			for i := range builds {
				b := builds[(i+round)%len(builds)]
				run := benchAMRun(t, c, b, n)
				t.Logf("%+v", run)
				r.Runs = append(r.Runs, run)
			}
		}
	}
	writeResults(t, c, "am", r, amMarkdown(r))
}

// readAMBuild sizes the binary at path.
func readAMBuild(t *testing.T, label, path string) amBuild {
	st, err := os.Stat(path)
	require.NoError(t, err, "the tfyarn build %s", label)
	f, err := elf.Open(path)
	require.NoError(t, err, "the tfyarn build %s: not an ELF binary", label)
	defer f.Close()
	b := amBuild{Label: label, Path: path, Bytes: st.Size()}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_W == 0 {
			b.MappedReadOnlyBytes += int64(p.Filesz)
		}
	}
	return b
}

func benchAMRun(t *testing.T, c *clustertest.Cluster, build amBuild, n int) amRun {
	spec := fmt.Sprintf("%dx1c,128m", n)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, build.Path, "run", "--worker", spec, "--name", "tfyarn-bench-am", "--output", "json", "--", "sleep", "5")
	cmd.Env = c.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	run := amRun{Build: build.Label, Containers: n, Spec: spec, Command: "sleep 5", WallS: round2(time.Since(start).Seconds())}
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
	if e := amExitRSS.FindStringSubmatch(amLog); e != nil {
		run.AnonKiB, _ = strconv.ParseInt(e[1], 10, 64)
		run.FileKiB, _ = strconv.ParseInt(e[2], 10, 64)
	}

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
	fmt.Fprintf(&b, "`bin/tfyarn run --worker <N>x1c,128m -- sleep 5` on the scale benchmark's test cluster, one run per size and build and round.\n"+
		"Produced by `make bench` (bench/run.sh → bench/am_bench_test.go).\n\n")
	fmt.Fprintf(&b, "%s\n", r.markdown(""))
	fmt.Fprintf(&b, "| build | binary (MiB) | text and read-only data (MiB) |\n|---|---:|---:|\n")
	for _, bl := range r.Builds {
		fmt.Fprintf(&b, "| %s | %.1f | %.1f |\n", bl.Label, mib(bl.Bytes), mib(bl.MappedReadOnlyBytes))
	}
	fmt.Fprintf(&b, "\n| build | task containers | application | AM peak RSS (MiB) | AM RSS at exit: anonymous + mapped files (MiB) | submission → all tasks started (s) | `tfyarn run` wall (s) | RM-allocated containers (AM + tasks) |\n|---|---:|---|---:|---|---:|---:|---:|\n")
	for _, run := range r.Runs {
		exit := "not logged"
		if run.AnonKiB > 0 {
			exit = fmt.Sprintf("%.1f + %.1f", float64(run.AnonKiB)/1024, float64(run.FileKiB)/1024)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %s | %.2f | %.2f | %d |\n", run.Build, run.Containers, run.AppID, float64(run.PeakRSSKiB)/1024, exit, run.AllStartedS, run.WallS, run.RMAllocated)
	}
	fmt.Fprintf(&b, "\nWhat is measured:\n\n"+
		"- **AM peak RSS**: the AM process's VmHWM from /proc/self/status, which it logs as it exits\n"+
		"  (read back from the aggregated am.stderr with Hadoop's `yarn logs`).\n"+
		"- **AM RSS at exit**: RssAnon (heap, stacks) and RssFile (pages of mapped files: the tfyarn binary)\n"+
		"  as it exits, logged beside the peak. The kernel maps the page cache's folios of the binary whole,\n"+
		"  so nearly all of its text and read-only data is resident however little of it the AM runs: the\n"+
		"  second figure follows the binary's size.\n"+
		"- **submission → all tasks started**: from the RM's submission time (APP_SUBMIT_TIME_ENV in the AM's\n"+
		"  environment) to the moment startContainers had succeeded for the last task, as the AM logs it.\n"+
		"  It includes the AM container's own scheduling and localization (the tfyarn binary, from HDFS's cache).\n"+
		"  On the scale benchmark's cluster (8 NodeManagers of 32 vcores, each a process on a host of its own)\n"+
		"  all 30 one-vcore tasks run at once.\n"+
		"- **RM-allocated containers**: \"AM Allocated Container\" entries for the application in the RM's audit\n"+
		"  log: N + 1 means no surplus container was ever allocated.\n"+
		"- **build**: bin/tfyarn, and with TFYARN_BENCH_AM_BASELINE another build run on the same cluster,\n"+
		"  interleaved with it (the two take turns going first).\n")
	return b.String()
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
