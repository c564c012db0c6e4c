package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestTaskLaunchContextTensorBoard: the job file's per-type command
// (Commands) replaces the job's program for that type only; it reaches the
// launcher from the AM (TaskProgram), not in the launch context.
func TestTaskLaunchContextTensorBoard(t *testing.T) {
	jf := contract.JobFile{AppID: "application_1_0001", User: "alice",
		Job:      taskspec.Job{Command: "env/bin/python", Args: []string{"train.py"}},
		Commands: map[taskspec.TaskType][]string{taskspec.TensorBoard: {"sh", "-c", `exec "$0" -m tensorboard.main --logdir "$1"`, "env/bin/python", "/logs"}}}
	program := TaskProgram(jf, nil, nil)
	p, _ := program(taskspec.TaskID{Type: taskspec.TensorBoard})
	require.Equal(t, []string{"sh", "-c", `exec "$0" -m tensorboard.main --logdir "$1"`, "env/bin/python", "/logs"}, p.Argv)
	p, _ = program(taskspec.TaskID{Type: taskspec.Chief})
	require.Equal(t, []string{"env/bin/python", "train.py"}, p.Argv)
	clc := TaskLaunchContext(jf, core.Launch{Task: taskspec.TaskID{Type: taskspec.TensorBoard}}, "am:1", nil)
	require.Equal(t, []string{`./tfyarn task 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr`}, clc.Command)
}
