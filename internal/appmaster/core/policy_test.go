package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// chiefDecides is a sketch of the TensorFlow rule the next version ships:
// the job's outcome is the chief's; once the chief succeeded, ps tasks
// (which never exit on their own) are stopped.
var chiefDecides = PolicyFunc(func(v View) Verdict {
	chief, _ := v.Task(taskspec.TaskID{Type: taskspec.Chief})
	switch chief.State {
	case TaskFailed:
		return Verdict{Outcome: JobFailed, Diagnostics: chief.Failure}
	case TaskSucceeded:
		var stop []taskspec.TaskID
		for _, t := range v.OfType(taskspec.PS) {
			if t.State.Live() {
				stop = append(stop, t.Task)
			}
		}
		if len(stop) > 0 {
			return Verdict{Stop: stop}
		}
		return Verdict{Outcome: JobSucceeded, Diagnostics: "the chief succeeded"}
	}
	return Verdict{}
})

func TestPolicyStopsTasksItNoLongerNeeds(t *testing.T) {
	m := newMachine(t, chiefDecides, grp(taskspec.Chief, 1, small), grp(taskspec.PS, 2, small))
	step(m, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 2), ctr(3, 2)}},
		ContainerStarted{ID: cid(1)}, ContainerStarted{ID: cid(2)}, ContainerStarted{ID: cid(3)})

	rd := step(m, ContainerCompleted{ID: cid(1)})
	require.Nil(t, rd.Finish)
	require.Equal(t, []string{cid(2), cid(3)}, stoppedIDs(rd))
	require.True(t, step(m, Tick{}).Empty(), "a repeated Stop verdict is not a second stop")

	// Stopped tasks end as stopped, whatever their exit status says.
	require.True(t, step(m, ContainerCompleted{ID: cid(2), ExitStatus: ExitKilledByAppMaster}).Empty())
	rd = step(m, ContainerCompleted{ID: cid(3), ExitStatus: 143})
	require.Equal(t, &Finish{Status: Succeeded, Diagnostics: "the chief succeeded"}, rd.Finish)
	for _, s := range m.Tasks()[1:] {
		require.Equal(t, TaskStopped, s.State)
		require.Empty(t, s.Failure)
	}
}

// restartOnce gives each failed task one more container, then fails the job.
var restartOnce = PolicyFunc(func(v View) Verdict {
	var restart []taskspec.TaskID
	for _, t := range v.Tasks {
		if t.State == TaskFailed {
			if t.Attempt >= 1 {
				return Verdict{Outcome: JobFailed, Diagnostics: t.Failure}
			}
			restart = append(restart, t.Task)
		}
	}
	if restart != nil {
		return Verdict{Restart: restart}
	}
	return AllSucceed{}.Verdict(v)
})

func TestPolicyRestartsAskForOneMoreContainer(t *testing.T) {
	m := newMachine(t, restartOnce, grp(taskspec.Worker, 3, small))
	runAll(t, m)

	rd := step(m, ContainerCompleted{ID: cid(2), ExitStatus: 3}) // the machine restarts no program failure by default
	require.Equal(t, []Ask{{TaskType: taskspec.Worker, AllocationRequestID: 1, Priority: 1, Resource: small, Count: 1}}, rd.Asks,
		"an absolute count: the one container now wanted")
	s, _ := m.Task(worker(1))
	require.Equal(t, TaskPending, s.State)
	require.Equal(t, 1, s.Attempt)

	// The old container's late news changes nothing.
	require.True(t, step(m, ContainerCompleted{ID: cid(2), ExitStatus: 0}, ContainerStarted{ID: cid(2)}).Empty())

	rd = step(m, Allocated{Containers: []Container{ctr(4, 1)}})
	require.Equal(t, []Launch{{Task: worker(1), Attempt: 1, Container: ctr(4, 1)}}, rd.Launch)
	require.Empty(t, rd.Asks)

	rd = step(m, ContainerStarted{ID: cid(4)}, ContainerCompleted{ID: cid(4), ExitStatus: 7})
	require.Equal(t, Failed, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "worker:1 (container "+cid(4))
	require.Contains(t, rd.Finish.Diagnostics, "exit code 7")
}
