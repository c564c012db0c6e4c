package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The report lists a task's attempts, the ended ones then the current one,
// each with its memory (docs/bad-nodes.md, "Memory after an out-of-memory
// kill"); the public view leaves them out: failure lines are the owner's.
func TestStatusReportAttempts(t *testing.T) {
	grown := "worker:0 (container c1 on nm0:8041) failed: killed (worker:0 restarts with 512 MiB: --oom-grow 2)"
	task := core.TaskStatus{
		Task: taskspec.TaskID{Type: "worker", Index: 0}, State: core.TaskRunning, Attempt: 1,
		Container: core.Container{ID: "c2", NodeID: "nm1:8041", Resource: taskspec.Resources{MemoryMiB: 512}},
		Earlier:   []core.EndedAttempt{{Attempt: 0, ContainerID: "c1", Node: "nm0:8041", MemoryMiB: 256, Failure: grown}},
	}
	r := NewStatusReport("application_1_0001", Snapshot{Tasks: []core.TaskStatus{task}})
	require.Equal(t, []contract.TaskAttempt{
		{Attempt: 0, ContainerID: "c1", Node: "nm0:8041", MemoryMiB: 256, Failure: grown},
		{Attempt: 1, ContainerID: "c2", Node: "nm1:8041", MemoryMiB: 512},
	}, r.Tasks[0].Attempts)
	require.Empty(t, publicReport(r).Tasks[0].Attempts)

	task.State, task.Attempt, task.Earlier = core.TaskPending, 0, nil
	task.Container = core.Container{}
	require.Empty(t, NewStatusReport("application_1_0001", Snapshot{Tasks: []core.TaskStatus{task}}).Tasks[0].Attempts, "no container yet")
}
