package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A spread ParameterServerStrategy worker is not replaced in place (its
// replacement could not keep the constraint): it restarts with the cluster.
func TestSpreadWorkerNotInPlace(t *testing.T) {
	job := func(spread string) taskspec.Job {
		return taskspec.Job{Spread: spread, Tasks: []taskspec.TaskGroup{
			{Type: taskspec.Chief, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
			{Type: taskspec.Worker, Instances: 2, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
			{Type: taskspec.PS, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
		}}
	}
	failed := &TaskStatus{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 1}, Port: 2222, ExitStatus: 1}
	for spread, want := range map[string]bool{"": true, "ps": true, "worker": false, "all": false} {
		m, err := New(Config{Job: job(spread)})
		require.NoError(t, err)
		require.Equal(t, want, m.inPlace(failed), "--spread %q", spread)
	}
}
