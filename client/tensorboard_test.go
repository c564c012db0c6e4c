package client

import (
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
		`exec "$0" -m tensorboard.main --logdir "$1" --port "$TFYARN_TASK_PORT" --bind_all`, "env/bin/python", "hdfs:///logs/run 1"}},
		job.taskCommands())

	job.Success = taskspec.SuccessAll
	require.ErrorContains(t, job.checkTensorBoard(), "needs --success chief")
	job.Success, job.TensorBoardLogDir = "", ""
	require.ErrorContains(t, job.checkTensorBoard(), "--logdir PATH")
	job.Tasks, job.TensorBoardLogDir = job.Tasks[:1], "/logs"
	require.ErrorContains(t, job.checkTensorBoard(), "add --tensorboard")
	require.Nil(t, job.taskCommands())
}
