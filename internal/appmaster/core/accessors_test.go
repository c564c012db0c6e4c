package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TaskOfContainer and Count say what a pass over Tasks says, through a
// task's life: launched, started, ended (its container kept as its last).
func TestTaskOfContainerAndCount(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 2, small))
	step(m, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1)}})
	agree := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			var want *TaskStatus
			for _, ts := range m.Tasks() {
				if ts.Container.ID == id {
					want = &ts
					break
				}
			}
			got, ok := m.TaskOfContainer(id)
			require.Equal(t, want != nil, ok, id)
			if want != nil {
				require.Equal(t, *want, got, id)
			}
		}
		for s := TaskPending; s <= TaskStopped; s++ {
			n := 0
			for _, ts := range m.Tasks() {
				if ts.State == s {
					n++
				}
			}
			require.Equal(t, n, m.Count(s), s.String())
		}
		require.Equal(t, len(m.Tasks()), m.Count(TaskPending, TaskLaunching, TaskRunning, TaskSucceeded, TaskFailed, TaskStopped))
	}
	agree(cid(1), cid(2), "container_unknown")
	require.Equal(t, 2, m.Count(TaskLaunching))
	step(m, ContainerStarted{ID: cid(1)})
	agree(cid(1), cid(2))
	require.Equal(t, 1, m.Count(TaskRunning))
	step(m, ContainerCompleted{ID: cid(1), ExitStatus: 0})
	agree(cid(1), cid(2))
	ts, ok := m.TaskOfContainer(cid(1))
	require.True(t, ok)
	require.Equal(t, TaskSucceeded, ts.State)
}
