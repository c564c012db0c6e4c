//go:build e2e

package localrun

// Real TensorFlow: the examples in examples/ run locally to their end, in the
// Python environment scripts/tfenv.sh builds. Importing TensorFlow takes a few
// seconds per process, and up to five processes share the machine's CPUs.

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// repoRoot is the repository, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// venvPython is the environment's interpreter; its absence is a failure,
// not a skip: these tests are how we know the examples work.
func venvPython(t *testing.T) string {
	t.Helper()
	py := filepath.Join(repoRoot(t), ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("%s is missing: run bash scripts/tfenv.sh (it installs the pinned TensorFlow from examples/requirements.txt)", py)
	}
	return py
}

// runTF runs a Python script of examples/ (or an absolute path) under the
// venv's Python, like `tfyarn run --local ... -- .venv/bin/python SCRIPT ARGS`.
func runTF(t *testing.T, script string, args []string, groups ...taskspec.TaskGroup) (*Result, string) {
	t.Helper()
	return runTFJob(t, taskspec.Job{Name: "e2e", Tasks: groups}, script, args)
}

// runTFJob is runTF for a job with more than tasks (restarts).
func runTFJob(t *testing.T, job taskspec.Job, script string, args []string) (*Result, string) {
	t.Helper()
	py := venvPython(t)
	if !filepath.IsAbs(script) {
		script = filepath.Join(repoRoot(t), "examples", script)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	job.Command, job.Args = py, append([]string{script}, args...)
	// Quiet TensorFlow's C++ info lines; keep its warnings and errors.
	res, out := runLocal(t, ctx, job, Options{Env: append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=1"), ProgramStopGrace: 5 * time.Second, RegistrationTimeout: time.Minute})
	for _, tr := range res.Tasks {
		t.Logf("%s: exit %d stopped=%v at %s", tr.Task, tr.ExitCode, tr.Stopped, tr.Ended.Round(100*time.Millisecond))
	}
	return res, out.String()
}

// MultiWorkerMirroredStrategy to its end, through a restart: worker 0
// fails once after the first epoch (--max-restarts 1), and Keras'
// BackupAndRestore resumes every task at the second.
func TestE2EMultiWorkerMirrored(t *testing.T) {
	modelDir := filepath.Join(t.TempDir(), "model")
	job := taskspec.Job{Name: "e2e", Tasks: []taskspec.TaskGroup{group(taskspec.Chief, 1), group(taskspec.Worker, 2)}}
	job.Restarts.Max = 1
	res, out := runTFJob(t, job, "mwms_keras.py", []string{"--model-dir", modelDir,
		"--backup-dir", filepath.Join(t.TempDir(), "backup"), "--fail-once-after-epoch", "1"})
	require.Equal(t, StatusSucceeded, res.Status, res.Diagnostics)
	require.Equal(t, 1, res.Restarts)
	requireFullTFConfig(t, res, out)
	require.Contains(t, out, "[chief:0] chief:0: saved the model to "+modelDir)
	require.FileExists(t, filepath.Join(modelDir, "saved_model.pb"))
	for _, tr := range res.Tasks {
		require.Zero(t, tr.ExitCode, "%s", tr.Task)
		require.Contains(t, out, "["+tr.Task.String()+"] "+tr.Task.String()+": training from epoch 2 of 2 (restart 1)\n")
	}
}

func TestE2EParameterServerStrategy(t *testing.T) {
	res, out := runTF(t, "ps_strategy.py", []string{"--model-dir", filepath.Join(t.TempDir(), "model")},
		group(taskspec.Chief, 1), group(taskspec.Worker, 2), group(taskspec.PS, 1), group(taskspec.Evaluator, 1))
	require.Equal(t, StatusSucceeded, res.Status, res.Diagnostics)
	requireFullTFConfig(t, res, out)
	chief := taskResult(t, res, id(taskspec.Chief, 0))
	require.Zero(t, chief.ExitCode)
	require.False(t, chief.Stopped)
	for _, other := range []taskspec.TaskID{id(taskspec.Worker, 0), id(taskspec.Worker, 1), id(taskspec.PS, 0), id(taskspec.Evaluator, 0)} {
		tr := taskResult(t, res, other)
		require.True(t, tr.Stopped, "%s must be stopped after the chief", other)
		require.Less(t, tr.Ended-chief.Ended, 30*time.Second, "%s ended too long after the chief", other)
	}
	require.Less(t, res.Duration-chief.Ended, 30*time.Second, "the run must end within 30 s of the chief's exit")
	require.Contains(t, out, "[evaluator:0] evaluator: ")
}

func TestE2ETF1BetweenGraph(t *testing.T) {
	res, out := runTF(t, "tf1_between_graph.py",
		[]string{"--ps_hosts", "{ps_hosts}", "--worker_hosts", "{worker_hosts}", "--job_name", "{job_name}", "--task_index", "{task_index}"},
		group(taskspec.Worker, 2), group(taskspec.PS, 1))
	require.Equal(t, StatusSucceeded, res.Status, res.Diagnostics)
	require.True(t, strings.HasPrefix(res.Diagnostics, "worker:0 succeeded"), res.Diagnostics)
	requireFullTFConfig(t, res, out)
	require.True(t, taskResult(t, res, id(taskspec.PS, 0)).Stopped)
	require.Contains(t, out, "[worker:0] worker:0: done at global step")
}

func TestE2EScriptThatRaisesFailsTheJob(t *testing.T) {
	script := filepath.Join(t.TempDir(), "raises.py")
	require.NoError(t, os.WriteFile(script, []byte(`import json, os, time
print("TF_CONFIG=" + os.environ["TF_CONFIG"], flush=True)
import tensorflow as tf
task = json.loads(os.environ["TF_CONFIG"])["task"]
if task["type"] == "worker" and task["index"] == 1:
    raise RuntimeError("worker 1 cannot go on: bad input shard")
time.sleep(120)
`), 0o644))
	res, out := runTF(t, script, nil, group(taskspec.Chief, 1), group(taskspec.Worker, 2))
	require.Equal(t, StatusFailed, res.Status)
	require.True(t, strings.HasPrefix(res.Diagnostics, "worker:1 failed: exit code 1; last stderr of worker:1: "), res.Diagnostics)
	require.True(t, strings.HasSuffix(res.Diagnostics, "RuntimeError: worker 1 cannot go on: bad input shard"), res.Diagnostics)
	require.True(t, strings.Contains(out, "[worker:1] Traceback (most recent call last):"))
	requireFullTFConfig(t, res, out)
}
