package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A later AM attempt that adopted nothing starts the tasks as a restart:
// Launch.Restart (TFYARN_RESTART) is 1, Restarts counts it, and the
// diagnostics say why, not counted against --max-restarts.
func TestAttemptRestartedCountsARestart(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 1, small))
	step(m, Registered{})
	step(m, PreviousAttempt{Attempt: 2})
	rd := step(m, Allocated{Containers: []Container{ctr(1, 1)}})
	require.Len(t, rd.Launch, 1)
	require.Equal(t, 1, rd.Launch[0].Restart, "TFYARN_RESTART")
	require.Equal(t, 1, m.Restarts())
	rd = step(m, ContainerStarted{ID: cid(1)}, ContainerCompleted{ID: cid(1), ExitStatus: 0})
	require.NotNil(t, rd.Finish)
	require.Equal(t, Succeeded, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "restart 1 after ApplicationMaster attempt 1 ended and its tasks could not be adopted (not counted: not the program's fault)")
}

// adoptionOf steps a later attempt's machine for chief:0, worker:0,
// worker:1 and evaluator:0 with what the previous attempt saved and the
// containers YARN kept, and returns the adopted tasks' names (in the order
// the machine took them over) and the containers released.
func adoptionOf(t *testing.T, saved []SavedTask, running ...string) (adopt, release []string) {
	t.Helper()
	m := newMachine(t, nil, grp(taskspec.Chief, 1, small), grp(taskspec.Worker, 2, small), grp(taskspec.Evaluator, 1, small))
	step(m, Registered{})
	ev := PreviousAttempt{Attempt: 2, Saved: saved}
	for _, id := range running {
		ev.Running = append(ev.Running, Container{ID: id})
	}
	rd := step(m, ev)
	require.NotNil(t, rd.Adoption)
	for _, a := range rd.Adoption.Adopted {
		adopt = append(adopt, a.Task.String())
	}
	require.Equal(t, rd.Adoption.Released, rd.Release)
	return adopt, rd.Adoption.Released
}

func TestAdoptionPlan(t *testing.T) {
	saved := []SavedTask{
		{Task: "worker:1", ContainerID: "c3"}, {Task: "chief:0", ContainerID: "c1"},
		{Task: "worker:0", ContainerID: "c2"}, {Task: "evaluator:0", ContainerID: "c4"},
	}
	for _, tc := range []struct {
		name    string
		saved   []SavedTask
		running []string
		adopt   []string // task names, in job order
		release []string
	}{
		{"all running: all adopted, in job order", saved, []string{"c1", "c2", "c3", "c4"},
			[]string{"chief:0", "worker:0", "worker:1", "evaluator:0"}, nil},
		{"a worker gone: the TensorFlow cluster cannot be adopted; the evaluator can", saved, []string{"c1", "c3", "c4"},
			[]string{"evaluator:0"}, []string{"c1", "c3"}},
		{"the evaluator gone: the cluster is adopted, the evaluator starts afresh", saved, []string{"c1", "c2", "c3"},
			[]string{"chief:0", "worker:0", "worker:1"}, nil},
		{"no saved table: nothing adopted, everything released", nil, []string{"c1", "c2"},
			nil, []string{"c1", "c2"}},
		{"a container nobody saved is released", saved, []string{"c1", "c2", "c3", "c4", "c9"},
			[]string{"chief:0", "worker:0", "worker:1", "evaluator:0"}, []string{"c9"}},
		{"one container saved for two tasks: neither is adopted in it", []SavedTask{
			{Task: "chief:0", ContainerID: "c1"}, {Task: "worker:0", ContainerID: "c2"}, {Task: "worker:1", ContainerID: "c2"},
			{Task: "evaluator:0", ContainerID: "c4"}}, []string{"c1", "c2", "c4"},
			[]string{"evaluator:0"}, []string{"c1", "c2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adopt, release := adoptionOf(t, tc.saved, tc.running...)
			require.Equal(t, tc.adopt, adopt)
			require.Equal(t, tc.release, release)
		})
	}
}

// The table saved for a next attempt lists running, registered tasks once
// every chief, worker and ps is; an evaluator that is not running is left
// out.
func TestAdoptionTable(t *testing.T) {
	tasks := func(states ...TaskState) []TaskStatus {
		var out []TaskStatus
		for i, n := range []string{"chief:0", "worker:0", "evaluator:0"} {
			id, err := taskspec.ParseTaskID(n)
			require.NoError(t, err)
			out = append(out, TaskStatus{Task: id, State: states[i], Container: Container{ID: "c" + n}, Host: "node", Port: 1000 + i})
		}
		return out
	}
	table, ok := AdoptionTable(tasks(TaskRunning, TaskRunning, TaskRunning))
	require.True(t, ok)
	require.Equal(t, []SavedTask{
		{Task: "chief:0", ContainerID: "cchief:0", Host: "node", Port: 1000},
		{Task: "worker:0", ContainerID: "cworker:0", Host: "node", Port: 1001},
		{Task: "evaluator:0", ContainerID: "cevaluator:0", Host: "node", Port: 1002},
	}, table)

	table, ok = AdoptionTable(tasks(TaskRunning, TaskRunning, TaskFailed))
	require.True(t, ok)
	require.Len(t, table, 2)

	_, ok = AdoptionTable(tasks(TaskRunning, TaskLaunching, TaskRunning))
	require.False(t, ok, "a worker not running yet: nothing to save")
}
