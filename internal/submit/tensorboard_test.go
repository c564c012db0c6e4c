package submit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

func TestTensorBoardJob(t *testing.T) {
	tb, err := taskspec.ParseSpec(taskspec.TensorBoard, DefaultTensorBoardSpec)
	require.NoError(t, err)
	chief, err := taskspec.ParseSpec(taskspec.Chief, "1c")
	require.NoError(t, err)
	job := Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{chief, tb}, Script: "train.py"}, PythonEnv: "venv", TensorBoardLogDir: "hdfs:///logs/run 1"}
	require.NoError(t, job.checkTensorBoard())
	// The job's Python (inside --env), the log directory as an argument, never in the shell text.
	require.Equal(t, map[taskspec.TaskType][]string{taskspec.TensorBoard: {"sh", "-c",
		`exec "$0" -m tensorboard.main --logdir "$1" --port "$TFYARN_TASK_PORT" --host "${NM_HOST:-0.0.0.0}"`, "env/bin/python", "hdfs:///logs/run 1"}},
		job.taskCommands())

	job.Success = taskspec.SuccessAll
	require.ErrorContains(t, job.checkTensorBoard(), "needs --success chief")
	job.Success, job.TensorBoardLogDir = "", ""
	require.ErrorContains(t, job.checkTensorBoard(), "--logdir PATH")
	job.Tasks, job.TensorBoardLogDir = job.Tasks[:1], "/logs"
	require.ErrorContains(t, job.checkTensorBoard(), "add --tensorboard")
	require.Nil(t, job.taskCommands())
}

// TestTensorBoardBindsTheNodesHost runs the command's shell text with a
// stand-in Python that prints its arguments: TensorBoard is told to listen
// on the node's host (NM_HOST), not on every interface.
func TestTensorBoardBindsTheNodesHost(t *testing.T) {
	dir := t.TempDir()
	python := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(python, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\"\n"), 0o755))
	for _, tc := range []struct{ nmHost, want string }{{"node7.example", "node7.example"}, {"", "0.0.0.0"}} {
		argv := tensorBoardCommand(python, "/logs/run 1")
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{"TFYARN_TASK_PORT=6006", "NM_HOST=" + tc.nmHost, "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		require.NoError(t, err)
		require.Equal(t, []string{"-m", "tensorboard.main", "--logdir", "/logs/run 1", "--port", "6006", "--host", tc.want},
			strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), "NM_HOST=%q", tc.nmHost)
		require.NotContains(t, string(out), "--bind_all")
	}
}
