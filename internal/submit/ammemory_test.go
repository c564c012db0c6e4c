package submit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/taskspec"
)

// docs/running-jobs.md: "The ApplicationMaster gets 256 MiB, and 64 MiB more per 1,000 tasks
// above 1,000: 640 MiB for 5,000 tasks. `--am-memory` sets it."
func TestClaimsAMMemoryGrowsWithTheJob(t *testing.T) {
	section := clustertest.DocSection(t, "## Task specs")
	require.Contains(t, strings.Join(strings.Fields(section), " "),
		"The ApplicationMaster gets 256 MiB, and 96 MiB more per 1,000 tasks above 1,000: 640 MiB for 5,000 tasks. `--am-memory` sets it.")
	for tasks, want := range map[int]int64{1: 256, 1000: 256, 1001: 257, 2000: 352, 5000: 640, 10000: 1120} {
		require.Equal(t, want, AMMemoryFor(tasks), "%d tasks", tasks)
	}
	workers := func(n int) Job {
		g, err := taskspec.ParseSpec(taskspec.Worker, "1c")
		require.NoError(t, err)
		g.Instances = n
		return Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}}, User: "alice"}
	}
	require.EqualValues(t, 640, workers(5000).WithDefaults().AMMemoryMiB)
	require.EqualValues(t, DefaultAMMemoryMiB, workers(3).WithDefaults().AMMemoryMiB)
	named := workers(5000)
	named.AMMemoryMiB = 1024
	require.EqualValues(t, 1024, named.WithDefaults().AMMemoryMiB, "--am-memory decides")
}
