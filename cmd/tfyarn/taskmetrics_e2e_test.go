//go:build e2e

package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// Per-task CPU and memory: each task's launcher samples its program's
// process tree and the AM shows it.
//
//	go test -tags e2e -run '^TestE2ETaskMetrics$' ./cmd/tfyarn/
func TestE2ETaskMetrics(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)

	// A task holding 150 MB and spinning (a process tree: sh, python3,
	// and the date commands sh starts) shows it in status --output json
	// while it runs, under the fixed field names; the history keeps the
	// peak; run tells of no memory limit.
	t.Run("busy", func(t *testing.T) {
		t.Parallel()
		// Two spinners, python3 holding the memory and a shell loop beside
		// it, so that the tree's share stays above one core's half on a
		// busy machine; three samples (1, 11 and 21 s) to see it in.
		program := "import time\nb = b'x' * 150_000_000\nt = time.time()\nwhile time.time() - t < 22: pass\n"
		shell := `python3 -c "$0" & end=$(($(date +%s) + 22)); while [ "$(date +%s)" -lt "$end" ]; do :; done; wait`
		run := startTfyarn(t, c, bin, 3*time.Minute, "run", "--name", "e2e-task-metrics", "--worker", "1c,512m", "--", "sh", "-c", shell, program)
		appID := run.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) submitted`), time.Minute)[1]
		var seen map[string]any
		require.Eventually(t, func() bool {
			out, _, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
			if code != exitOK {
				return false
			}
			var v struct {
				Live *struct {
					Tasks []map[string]any `json:"tasks"`
				} `json:"live"`
			}
			if json.Unmarshal([]byte(out), &v) != nil || v.Live == nil || len(v.Live.Tasks) != 1 {
				return false
			}
			seen = v.Live.Tasks[0]
			rss, _ := seen["rss_bytes"].(float64)
			cpu, _ := seen["cpu_percent"].(float64)
			peak, _ := seen["peak_rss_bytes"].(float64)
			return rss >= 150e6 && cpu > 50 && peak >= rss
		}, 40*time.Second, 500*time.Millisecond, "worker:0 with rss_bytes ≥ 150e6, cpu_percent > 50, peak_rss_bytes ≥ rss_bytes: last seen %v", &seen)
		t.Logf("live: %v", seen)
		require.Equal(t, false, seen["near_memory_limit"] == true)
		require.Equal(t, float64(512<<20), seen["memory_limit_bytes"])

		require.Equal(t, exitOK, run.wait(t, 2*time.Minute), run.stderr.String())
		require.NotContains(t, run.stderr.String(), "near its memory limit")
		out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.NotNil(t, v.History, out)
		require.NotNil(t, v.History.Tasks[0].ProcessSample, out)
		require.GreaterOrEqual(t, v.History.Tasks[0].PeakRSSBytes, int64(150e6), out)
	})

	// A task that takes 940 MiB of its 1 GiB container (over 90%) is told
	// once in run's output and flagged in status, before YARN kills
	// anything: it ends well.
	t.Run("near-limit", func(t *testing.T) {
		t.Parallel()
		program := "import time\nb = b'x' * (940 << 20)\ntime.sleep(14)\n"
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, nil, "run", "--name", "e2e-task-metrics-near", "--worker", "1c,1g", "--", "python3", "-c", program)
		t.Logf("stdout: %s\nstderr: %s", stdout, stderr)
		require.Equal(t, exitOK, code)
		lines := regexp.MustCompile(`(?m)^(application_\d+_\d+) worker:0 \(container \S+ on \S+\) is near its memory limit: peak RSS (\d+) MiB of the container's 1024 MiB; YARN kills the container beyond it \(give --worker more memory\)$`).FindAllStringSubmatch(stderr, -1)
		require.Len(t, lines, 1, "told once")
		require.Equal(t, 1, strings.Count(stderr, "near its memory limit"))
		out, errOut, code := execTfyarn(t, c, bin, nil, "status", lines[0][1], "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.NotNil(t, v.History, out)
		require.True(t, v.History.Tasks[0].NearMemoryLimit, out)
		require.GreaterOrEqual(t, v.History.Tasks[0].PeakRSSBytes, int64(940<<20), out)
	})
}
