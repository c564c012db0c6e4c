//go:build e2e

package main

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// resultJob: worker:0 imports tfyarn's Python package with the system's python3, no environment
// shipped (the launcher's copy, from a directory of its working directory), and leaves binary
// bytes as its result; worker:1 leaves a result file over 64 MiB (sparse: nothing is read).
const resultJob = `if [ "$TFYARN_TASK_INDEX" = 0 ]; then
python3 -c "import os, tfyarn; assert tfyarn.__file__.startswith(os.getcwd() + '/'), tfyarn.__file__" || exit 9
printf 'result\000\377 of %s' "$TFYARN_TASK" > "$TFYARN_RESULT_FILE"
else truncate -s 67108865 "$TFYARN_RESULT_FILE"; fi`

// TestE2EResults: on YARN, every task imports tfyarn with no change to its environment; a task's
// result file comes back through `tfyarn result` byte for byte; one over 64 MiB is not saved and
// run says so; --output json lists what was saved; --delete removes it. Another user can neither
// read nor list them (attack).
func TestE2EResults(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "2x1c,256m", "--name", "e2e-results", "--output", "json", "--", "sh", "-c", resultJob)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	r := runJSON(t, stdout)
	require.Contains(t, stderr, r.AppID+" warning: worker:1's result file is 67108865 bytes, over the limit of 67108864 (64 MiB): not saved")
	t.Logf("run: %.1fs", time.Since(start).Seconds())

	conf := []string{"--conf-dir", c.ConfDir}
	out, errOut, code := execTfyarn(t, c, bin, nil, append(conf, "result", r.AppID, "--task", "worker:0")...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "result\x00\xff of worker:0", out)

	file := filepath.Join(t.TempDir(), "r.bin")
	_, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "result", r.AppID, "--task", "worker:0", "--out", file)...)
	require.Equal(t, exitOK, code, errOut)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "result\x00\xff of worker:0", string(got))

	out, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "result", r.AppID, "--output", "json")...)
	require.Equal(t, exitOK, code, errOut)
	var list []client.ResultInfo
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Equal(t, []client.ResultInfo{{Task: "worker:0", Bytes: int64(len("result\x00\xff of worker:0"))}}, list)

	// The results are the owner's alone: another user of the cluster can neither list nor read them.
	st, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", r.AppID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v statusView
	require.NoError(t, json.Unmarshal([]byte(st), &v), st)
	owner := v.User
	require.Equal(t, int64(len("result\x00\xff of worker:0")), *v.History.Tasks[0].ResultBytes)
	require.Contains(t, v.History.Tasks[1].ResultNotSaved, "over the limit")
	mallory := simpleHDFSClient(t, c, c.User(t, "tfyarn-e2e-"+randomHex(t)))
	_, err = mallory.ReadFile(path.Join(hdfs.AppResultsDir(owner, r.AppID), "worker-0"))
	require.ErrorIs(t, err, os.ErrPermission)
	_, err = mallory.ReadDir(hdfs.ResultsDir(owner))
	require.ErrorIs(t, err, os.ErrPermission)

	out, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "result", r.AppID, "--task", "worker:1")...)
	require.Equal(t, exitJobFailed, code)
	require.Empty(t, out)
	require.Equal(t, "tfyarn: worker:1 of "+r.AppID+" saved no result\n", errOut)

	_, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "result", r.AppID, "--task", "worker")...)
	require.Equal(t, exitUsage, code)
	require.Equal(t, "tfyarn: --task \"worker\": expected a task like worker:0\n", errOut)

	_, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "result", r.AppID, "--delete")...)
	require.Equal(t, exitOK, code, errOut)
	out, _, code = execTfyarn(t, c, bin, nil, append(conf, "result", r.AppID, "--output", "json")...)
	require.Equal(t, exitOK, code)
	require.Equal(t, "[]\n", out)
}

// TestE2ESubmitWait: submit prints the application id and returns; wait follows it to its end
// with run's exit codes and JSON (0 for a success, 1 for a failure), and gives an application that
// ended already its result at once, its tasks from its history.
func TestE2ESubmitWait(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	conf := []string{"--conf-dir", c.ConfDir}
	start := time.Now()
	ok, errOut, code := execTfyarn(t, c, bin, nil, append(conf, "submit", "--worker", "1c,256m", "--name", "e2e-submit-ok", "--", "sh", "-c", "sleep 1")...)
	require.Equal(t, exitOK, code, errOut)
	okID := strings.TrimSpace(ok)
	require.Regexp(t, `^application_\d+_\d+$`, okID)
	failJSON, errOut, code := execTfyarn(t, c, bin, nil, append(conf, "submit", "--worker", "1c,256m", "--name", "e2e-submit-fail", "--output", "json", "--", "sh", "-c", "exit 3")...)
	require.Equal(t, exitOK, code, errOut)
	var sub struct {
		AppID string `json:"app_id"`
		Name  string `json:"name"`
		Queue string `json:"queue"`
		User  string `json:"user"`
	}
	require.NoError(t, json.Unmarshal([]byte(failJSON), &sub), failJSON)
	require.Equal(t, "e2e-submit-fail", sub.Name)
	require.Equal(t, "default", sub.Queue)
	require.NotEmpty(t, sub.User)
	t.Logf("both submitted in %.1fs", time.Since(start).Seconds())

	out, errOut, code := execTfyarn(t, c, bin, nil, append(conf, "wait", okID, "--output", "json")...)
	require.Equal(t, exitOK, code, errOut)
	r := runJSON(t, out)
	require.Equal(t, okID, r.AppID)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Len(t, r.Tasks, 1)

	out, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "wait", sub.AppID, "--output", "json")...)
	require.Equal(t, exitJobFailed, code, errOut)
	require.Equal(t, "FAILED", runJSON(t, out).FinalStatus)

	// Ended already: at once, tasks from the history.
	before := time.Now()
	out, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "wait", sub.AppID, "--output", "json")...)
	require.Equal(t, exitJobFailed, code, errOut)
	r = runJSON(t, out)
	require.Len(t, r.Tasks, 1)
	require.Equal(t, int32(3), *r.Tasks[0].ExitCode)
	require.Less(t, time.Since(before), 10*time.Second)

	_, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "submit", "--local", "--worker", "1c", "--", "true")...)
	require.Equal(t, exitUsage, code)
	require.Equal(t, "tfyarn: submit --local: a local run ends with its process; use tfyarn run --local\n", errOut)
	_, errOut, code = execTfyarn(t, c, bin, nil, append(conf, "wait", "app_1")...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "tfyarn: ")
	t.Logf("%.1fs", time.Since(start).Seconds())
}

// eventsJob: worker:0 reports progress and prints; worker:1 leaves a result over 64 MiB (a
// warning).
const eventsJob = `if [ "$TFYARN_TASK_INDEX" = 0 ]; then echo 1/2 > "$TFYARN_PROGRESS_FILE"; echo "line of $TFYARN_TASK"; sleep 3; echo 2/2 > "$TFYARN_PROGRESS_FILE"
else truncate -s 67108865 "$TFYARN_RESULT_FILE"; fi`

// TestE2EEvents: run --output events of a 2-task job: JSON Lines, every object with v 1, a type
// and an RFC 3339 time; submitted first, every type of docs/events.md on the way, result last.
// wait --output events of the ended job ends with the same result.
func TestE2EEvents(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "2x1c,256m", "--name", "e2e-events", "--logs", "all", "--output", "events", "--", "sh", "-c", eventsJob)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	t.Logf("run: %.1fs", time.Since(start).Seconds())
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var types []string
	var last map[string]any
	for _, l := range lines {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		require.Equal(t, float64(1), ev["v"], l)
		_, err := time.Parse(time.RFC3339Nano, ev["time"].(string))
		require.NoError(t, err, l)
		types = append(types, ev["type"].(string))
		switch ev["type"] {
		case "log":
			if ev["line"] == "line of worker:0" {
				require.Equal(t, "worker:0", ev["task"])
				require.Equal(t, "stdout", ev["stream"])
			}
		case "progress":
			require.Equal(t, "worker:0", ev["task"])
		case "warning":
			require.Contains(t, ev["text"], "worker:1's result file is 67108865 bytes")
		}
		last = ev
	}
	require.Equal(t, "submitted", types[0])
	for _, typ := range []string{"state", "task", "progress", "log", "warning"} {
		require.Contains(t, types, typ, "%v", types)
	}
	require.Equal(t, "result", types[len(types)-1])
	require.Equal(t, 1, strings.Count(strings.Join(types, " "), "result"))
	require.Equal(t, true, last["succeeded"])
	require.Equal(t, float64(0), last["exit_code"])
	require.Len(t, last["tasks"], 2)
	appID := last["app_id"].(string)

	out, errOut, code := execTfyarn(t, c, bin, nil, "--conf-dir", c.ConfDir, "wait", appID, "--output", "events")
	require.Equal(t, exitOK, code, errOut)
	wl := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(wl[len(wl)-1]), &res))
	require.Equal(t, "result", res["type"])
	require.Equal(t, appID, res["app_id"])
	require.Len(t, res["tasks"], 2)
}
