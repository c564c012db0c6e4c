//go:build bench

package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// pytorchInitRun is one launch of 2x2 processes: from the launching
// command's start to the last rank inside init_process_group.
type pytorchInitRun struct {
	System string  `json:"system"`
	Round  int     `json:"round"`
	InitS  float64 `json:"every_rank_initialized_s"`
	WallS  float64 `json:"wall_s"`
}

type pytorchInitResult struct {
	machine
	LoadBefore string           `json:"load_avg_1min_before"`
	LoadAfter  string           `json:"load_avg_1min_after"`
	Runs       []pytorchInitRun `json:"runs"`
}

var initDone = regexp.MustCompile(`tfyarn-bench init_done rank (\d+) of (\d+) at ([0-9.]+)`)

// TestBenchPyTorchInit times submit → every rank inside init_process_group
// for 2 containers of 2 processes (--framework pytorch, on the plain test
// cluster), beside the same 4 processes under tfyarn --local and under
// plain torchrun on this machine (--standalone, the floor).
func TestBenchPyTorchInit(t *testing.T) {
	c := clustertest.Require(t)
	bin := tfyarnBin(t, c)
	out, err := exec.Command("bash", filepath.Join(c.Root, "scripts", "tfenv.sh"), "pytorch").CombinedOutput()
	require.NoError(t, err, "%s", out)
	python := filepath.Join(c.Root, ".venv-pytorch", "bin", "python")
	probe := filepath.Join(c.Root, "bench", "pytorch_init.py")
	systems := []struct {
		name string
		argv []string
		logs bool // the ranks' output is in the application's logs
	}{
		{"tfyarn (YARN, 2 containers x 2)", []string{bin, "run", "--framework", "pytorch", "--worker", "2x1c,2560m", "--nproc-per-node", "2", "--python", python, "--name", "bench-pytorch-init", "--output", "json", probe}, true},
		{"tfyarn --local (2 x 2)", []string{bin, "run", "--local", "--framework", "pytorch", "--worker", "2x1c", "--nproc-per-node", "2", "--python", python, probe}, false},
		{"torchrun --standalone (4)", []string{python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4", probe}, false},
	}
	res := pytorchInitResult{machine: newMachine(t, c.Root, "pytorch-init"), LoadBefore: loadAvg()}
	for round := 0; round < 3; round++ {
		for _, s := range systems {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
			cmd.Env = c.Env()
			start := time.Now()
			combined, err := cmd.CombinedOutput()
			wall := time.Since(start)
			cancel()
			require.NoError(t, err, "%s: %s", s.name, combined)
			text := string(combined)
			if s.logs {
				appID := regexp.MustCompile(`"app_id": *"(application_\d+_\d+)"`).FindStringSubmatch(text)
				require.NotNil(t, appID, text)
				text = appLogsText(t, c, bin, appID[1])
			}
			last := lastInit(t, text, 4)
			run := pytorchInitRun{System: s.name, Round: round, InitS: last.Sub(start).Seconds(), WallS: wall.Seconds()}
			t.Logf("%+v", run)
			res.Runs = append(res.Runs, run)
		}
	}
	res.LoadAfter = loadAvg()
	writeResults(t, c, "pytorch-init", res, pytorchInitMarkdown(res, systems[0].argv, systems[2].argv))
}

func lastInit(t *testing.T, text string, world int) time.Time {
	t.Helper()
	ranks := map[string]float64{}
	for _, m := range initDone.FindAllStringSubmatch(text, -1) {
		require.Equal(t, strconv.Itoa(world), m[2])
		at, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err)
		ranks[m[1]] = at
	}
	require.Len(t, ranks, world, "every rank's init_done:\n%s", text)
	var last float64
	for _, at := range ranks {
		last = max(last, at)
	}
	return time.Unix(0, int64(last*1e9))
}

func appLogsText(t *testing.T, c *clustertest.Cluster, bin, appID string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cmd := exec.Command(bin, "logs", appID)
		cmd.Env = c.Env()
		out, err := cmd.CombinedOutput()
		if err == nil && !strings.Contains(string(out), "still running") {
			return string(out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the logs of %s were not aggregated within 2 minutes: %s", appID, out)
		}
		time.Sleep(2 * time.Second)
	}
}

func pytorchInitMarkdown(r pytorchInitResult, yarnArgv, floorArgv []string) string {
	by := map[string][]float64{}
	var order []string
	for _, run := range r.Runs {
		if _, ok := by[run.System]; !ok {
			order = append(order, run.System)
		}
		by[run.System] = append(by[run.System], run.InitS)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# PyTorch: start → every rank inside init_process_group (2x2 processes)\n\n"+
		"Produced by `make bench` (bench/pytorch_bench_test.go; alone: `go test -tags bench -run '^TestBenchPyTorchInit$' -v ./bench/`).\n"+
		"From the launching command's start to the latest `time.time()` a rank printed right after `init_process_group(\"gloo\")`\n"+
		"(bench/pytorch_init.py; one machine, one clock), %d rounds, the systems interleaved; torch from .venv-pytorch.\n\n", len(r.Runs)/len(order))
	fmt.Fprintf(&b, "- Date: %s\n- Machine: %s, %d CPUs, %s\n- Go: %s\n- Hadoop: %s\n- Load average (1 min) before / after: %s / %s (shared machine)\n\n",
		r.Date, r.Machine, r.NProc, r.CPU, r.GoVersion, r.HadoopVersion, r.LoadBefore, r.LoadAfter)
	b.WriteString("| system | median (s) | min (s) | max (s) |\n|---|---:|---:|---:|\n")
	for _, s := range order {
		v := append([]float64(nil), by[s]...)
		sort.Float64s(v)
		fmt.Fprintf(&b, "| %s | %.2f | %.2f | %.2f |\n", s, v[len(v)/2], v[0], v[len(v)-1])
	}
	fmt.Fprintf(&b, "\nCommands:\n\n- `%s`\n- `%s`\n\nThe floor imports torch in 4 processes on one machine; the YARN run adds submission, the AM, two\n"+
		"containers, tfyarn's rendezvous, then torchrun's c10d rendezvous on worker:0's store in every container.\n",
		strings.Join(yarnArgv[1:], " "), strings.Join(floorArgv[1:], " "))
	return b.String()
}
