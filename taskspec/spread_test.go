package taskspec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpread(t *testing.T) {
	j := Job{Command: "true", Tasks: []TaskGroup{
		{Type: Chief, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: Worker, Instances: 2, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: Evaluator, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
	}}
	j.Spread = SpreadAll
	require.NoError(t, j.Validate(ClusterLimits{}))
	require.True(t, j.Spreads(Chief) && j.Spreads(Worker) && !j.Spreads(Evaluator))
	require.Equal(t, 3, j.SpreadCount())
	require.Equal(t, "tfyarn-cluster", j.SpreadTag())

	j.Spread = "worker"
	require.NoError(t, j.Validate(ClusterLimits{}))
	require.True(t, !j.Spreads(Chief) && j.Spreads(Worker))
	require.Equal(t, 2, j.SpreadCount())
	require.Equal(t, "tfyarn-worker", j.SpreadTag())

	j.Spread = "ps"
	require.EqualError(t, j.Validate(ClusterLimits{}), "--spread ps: the job has no ps tasks; give a type the job has, or all")
	j.Spread = "nodes"
	require.ErrorContains(t, j.Validate(ClusterLimits{}), `--spread "nodes": give a task type (`)
	j.Spread = ""
	require.False(t, j.Spreads(Worker))
	require.Empty(t, j.SpreadTag())
}
