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
	"github.com/tfyarn/tfyarn/jobreport"
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
		// it; three samples (1, 11 and 21 s) to see it in.
		program := "import time\nb = b'x' * 150_000_000\nt = time.time()\nwhile time.time() - t < 22: pass\n"
		shell := `python3 -c "$0" & end=$(($(date +%s) + 22)); while [ "$(date +%s)" -lt "$end" ]; do :; done; wait`
		run := startTfyarn(t, c, bin, 3*time.Minute, "run", "--name", "e2e-task-metrics", "--worker", "1c,512m", "--", "sh", "-c", shell, program)
		appID := run.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) submitted`), time.Minute)[1]
		// On a loaded machine (CI runs three end-to-end lanes on 2 cores)
		// the spinners may get only a few percent of a core, so the test
		// does not ask for a share of a core: it collects the live samples
		// until two come one interval (10 s) apart, with the memory held
		// and the spinners' CPU time showing in between, and checks the
		// later's percentage against the CPU seconds that interval added.
		type sample struct {
			at time.Time
			jobreport.Task
		}
		var samples []sample
		var prev, last *sample
		require.Eventually(t, func() bool {
			out, _, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
			var v statusView
			if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v.Live == nil || len(v.Live.Tasks) != 1 {
				return false
			}
			task := v.Live.Tasks[0]
			if task.ProcessSample == nil || task.ProcessSampled == nil {
				return false
			}
			if n := len(samples); n > 0 && samples[n-1].at.Equal(*task.ProcessSampled) {
				return false
			}
			samples = append(samples, sample{*task.ProcessSampled, task})
			if len(samples) < 2 {
				return false
			}
			p, l := &samples[len(samples)-2], &samples[len(samples)-1]
			gap := l.at.Sub(p.at)
			if gap < 8*time.Second || gap > 12*time.Second || l.RSSBytes < 150e6 || l.PeakRSSBytes < l.RSSBytes ||
				l.CPUSeconds-p.CPUSeconds < 0.5 {
				return false
			}
			prev, last = p, l
			return true
		}, 40*time.Second, 500*time.Millisecond, "two samples of worker:0 10 s apart with rss_bytes ≥ 150e6, peak_rss_bytes ≥ rss_bytes and the later's cpu_seconds 0.5 more: seen %+v", &samples)
		for _, s := range samples {
			t.Logf("live at %s: %+v", s.at.Format(time.RFC3339Nano), *s.ProcessSample)
		}
		// The percentage is the CPU time the tree used over the interval
		// since the last sample (the times are the AM's, when each sample
		// came: within a tenth of the launcher's interval, plus rounding).
		added := (last.CPUSeconds - prev.CPUSeconds) / last.at.Sub(prev.at).Seconds() * 100
		require.InDelta(t, added, last.CPUPercent, 2+0.1*added,
			"cpu_percent %.1f against the CPU seconds the interval added (%.2f → %.2f over %s: %.1f%%)",
			last.CPUPercent, prev.CPUSeconds, last.CPUSeconds, last.at.Sub(prev.at), added)
		require.Less(t, last.CPUPercent, 210.0, "two spinners")
		require.False(t, last.NearMemoryLimit)
		require.Equal(t, int64(512<<20), last.MemoryLimitBytes)

		require.Equal(t, exitOK, run.wait(t, 2*time.Minute), run.stderr.String())
		require.NotContains(t, run.stderr.String(), "near its memory limit")
		out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.NotNil(t, v.History, out)
		require.NotNil(t, v.History.Tasks[0].ProcessSample, out)
		require.GreaterOrEqual(t, v.History.Tasks[0].PeakRSSBytes, int64(150e6), out)
		require.GreaterOrEqual(t, v.History.Tasks[0].CPUSeconds, last.CPUSeconds, out)
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
