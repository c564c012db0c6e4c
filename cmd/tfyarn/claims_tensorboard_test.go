package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

// TestClaimsTensorBoardDefaults: README "`--tensorboard[=SPEC] --logdir
// PATH` (default SPEC `1c,1g`)" and "`--tensorboard` implies `--success
// chief`", here for a plain command, whose own default is `--success all`.
func TestClaimsTensorBoardDefaults(t *testing.T) {
	job, err := parseRun(t, "--worker", "2x1c", "--", "true")
	require.NoError(t, err)
	require.Empty(t, job.Success, "a plain command: the client's default rule (all)")

	job, err = parseRun(t, "--worker", "2x1c", "--tensorboard", "--logdir", "/logs", "--", "true")
	require.NoError(t, err)
	require.Equal(t, taskspec.SuccessChief, job.Success)
	tb := job.Tasks[len(job.Tasks)-1]
	require.Equal(t, taskspec.TaskGroup{Type: taskspec.TensorBoard, Instances: 1,
		Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1024}}, tb)
}
