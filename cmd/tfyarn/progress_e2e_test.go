//go:build e2e

package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/jobreport"
)

// progressJob writes i/20 to its progress file every half second (echo
// truncates, then writes: the launcher may read it in between).
const progressJob = `for i in $(seq 1 20); do echo "$i/20" > "$TFYARN_PROGRESS_FILE"; sleep 0.5; done`

// TestE2EProgress: a program's progress file reaches YARN as the
// application's progress (the RM's own report, in status --output json's
// "progress"), between 0 and 1 and growing while the job runs, and the
// AM's live status with step, total, a rate in steps/s and an ETA.
func TestE2EProgress(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	run := startTfyarn(t, c, bin, 2*time.Minute, "run", "--name", "e2e-progress", "--worker", "1c,256m", "--", "sh", "-c", progressJob)
	appID := run.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) submitted`), time.Minute)[1]

	var rmSeen []float64 // the RM's progress, while RUNNING, strictly between 0 and 1
	var live *jobreport.JobProgress
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		if v.State == "FINISHED" || v.State == "FAILED" || v.State == "KILLED" {
			break
		}
		if v.State == "RUNNING" && v.Progress > 0 && v.Progress < 1 && (len(rmSeen) == 0 || v.Progress != rmSeen[len(rmSeen)-1]) {
			rmSeen = append(rmSeen, v.Progress)
		}
		if v.Live != nil && v.Live.Progress != nil && v.Live.Progress.StepsPerSecond != nil && v.Live.Progress.ETASeconds != nil {
			live = v.Live.Progress
		}
		if len(rmSeen) >= 3 && live != nil {
			break
		}
		time.Sleep(700 * time.Millisecond)
	}
	t.Logf("RM progress seen: %v; live: %+v", rmSeen, live)
	require.GreaterOrEqual(t, len(rmSeen), 2, "the RM's application progress moved between 0 and 1 while running")
	for i := 1; i < len(rmSeen); i++ {
		require.Greater(t, rmSeen[i], rmSeen[i-1], "the application's progress grows: %v", rmSeen)
	}
	require.NotNil(t, live, "status --output json's live progress with a rate and an ETA")
	require.Equal(t, "worker:0", live.Task)
	require.Equal(t, int64(20), live.Total)
	require.InDelta(t, float64(live.Step)/20, live.Fraction, 1e-9)
	require.InDelta(t, 2, *live.StepsPerSecond, 1.2, "two steps a second")
	require.Greater(t, *live.ETASeconds, 0.0)
	require.Less(t, *live.ETASeconds, 15.0)
	// status's table says the same in one line.
	table, errTable, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID)
	require.Equal(t, exitOK, code, errTable)
	require.Regexp(t, `(?m)^Training +: \d+\.\d% \(\d+/20, worker:0\) · [0-9.]+ steps/s · ETA \d+s$`, table)
	// The AM says which tfyarn it runs: the binary the job shipped (issue 34).
	version := builtInfo(t, c, bin).Label()
	require.Regexp(t, `(?m)^Tfyarn-Version +: `+regexp.QuoteMeta(version)+`$`, table)
	require.NotContains(t, errTable, "ApplicationMaster is tfyarn", "the test binary is devel without a commit: it cannot tell")

	require.Equal(t, exitOK, run.wait(t, time.Minute), "stderr: %s", &run.stderr)
	// The last value, written just before the program ended, is in the history.
	h := endedStatus(t, c, appID)
	require.NotNil(t, h.History, h.HistoryError)
	require.NotNil(t, h.History.Progress)
	require.Equal(t, jobreport.Progress{Fraction: 1, Step: 20, Total: 20}, h.History.Progress.Progress)
	require.Equal(t, version, h.History.TfyarnVersion, "the history records the AM's tfyarn")
}

// builtInfo is what the tfyarn binary bin says of its build (tfyarn
// version --output json).
func builtInfo(t *testing.T, c *clustertest.Cluster, bin string) buildinfo.Info {
	t.Helper()
	out, errOut, code := execTfyarn(t, c, bin, nil, "version", "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var info buildinfo.Info
	require.NoError(t, json.Unmarshal([]byte(out), &info), out)
	require.NotEmpty(t, info.Version)
	return info
}

// endedStatus is status --output json of an ended application.
func endedStatus(t *testing.T, c *clustertest.Cluster, appID string) statusView {
	t.Helper()
	out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v statusView
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	return v
}

// TestE2EProgressKeras: examples/tfyarn_progress.py's Keras callback
// reports every batch of model.fit: the job's history ends at epochs *
// steps_per_epoch of the same.
func TestE2EProgressKeras(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := tfPython(t, c)
	res, stderr, code := execTF(t, c, bin, "--name", "e2e-progress-keras", "--worker", "1c,1g", "--python", python,
		filepath.Join(c.Root, "examples", "tfyarn_progress.py"), "--", "--epochs", "2", "--steps-per-epoch", "30")
	require.Equal(t, exitOK, code, stderr)
	h := endedStatus(t, c, res.AppID)
	require.NotNil(t, h.History, h.HistoryError)
	require.NotNil(t, h.History.Progress, "the callback's progress reached the AM")
	require.Equal(t, jobreport.Progress{Fraction: 1, Step: 60, Total: 60}, h.History.Progress.Progress)
	require.Equal(t, "worker:0", h.History.Progress.Task)
}
