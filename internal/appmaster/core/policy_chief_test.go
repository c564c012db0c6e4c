package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

var (
	chief0 = taskspec.TaskID{Type: taskspec.Chief}
	eval0  = taskspec.TaskID{Type: taskspec.Evaluator}
	t0     = time.Unix(1_700_000_000, 0)
)

func psTask(i int) taskspec.TaskID { return taskspec.TaskID{Type: taskspec.PS, Index: i} }

// pssMachine runs a PSS job (chief, 2 workers, 2 ps, an evaluator) on the
// real Machine up to every container running: chief in container 1, workers
// in 2 and 3, ps in 4 and 5, the evaluator in 6.
func pssMachine(t *testing.T, policy Policy) *Machine {
	t.Helper()
	m := newMachine(t, policy, grp(taskspec.Evaluator, 1, small), grp(taskspec.PS, 2, small),
		grp(taskspec.Worker, 2, small), grp(taskspec.Chief, 1, small))
	step(m, Tick{Now: t0}, Registered{})
	// Groups are asked for in job order: chief 1, worker 2, ps 3, evaluator 4.
	rd := step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 2), ctr(3, 2), ctr(4, 3), ctr(5, 3), ctr(6, 4)}})
	require.Equal(t, map[string]taskspec.TaskID{
		cid(1): chief0, cid(2): worker(0), cid(3): worker(1), cid(4): psTask(0), cid(5): psTask(1), cid(6): eval0,
	}, launchedTasks(rd))
	for n := 1; n <= 6; n++ {
		step(m, ContainerStarted{ID: cid(n)})
	}
	for _, s := range m.Tasks() {
		require.Equal(t, TaskRunning, s.State, s.Task.String())
	}
	return m
}

func TestChiefPolicyDrivesAPSSJob(t *testing.T) {
	m := pssMachine(t, ChiefPolicy{})

	// The chief is done: everything else is stopped, the job not yet over.
	rd := step(m, Tick{Now: t0.Add(time.Minute)}, ContainerCompleted{ID: cid(1), ExitStatus: 0})
	require.Nil(t, rd.Finish)
	require.Equal(t, []string{cid(2), cid(3), cid(4), cid(5), cid(6)}, stoppedIDs(rd))
	for _, s := range rd.Stop {
		require.Equal(t, "no longer needed", s.Reason)
	}
	require.True(t, step(m, Tick{Now: t0.Add(time.Minute + time.Second)}).Empty(), "a repeated Stop verdict is not a second stop")

	// Their containers end, killed by the AM (a worker shot by SIGTERM).
	for _, n := range []int{4, 2, 6, 5} {
		require.True(t, step(m, ContainerCompleted{ID: cid(n), ExitStatus: ExitKilledByAppMaster}).Empty())
	}
	rd = step(m, ContainerCompleted{ID: cid(3), ExitStatus: 143})
	require.Equal(t, &Finish{Status: Succeeded,
		Diagnostics: "chief:0 succeeded; stopped worker:0, worker:1, ps:0, ps:1, evaluator:0 after it"}, rd.Finish)
	require.Empty(t, rd.Stop)
	require.Equal(t, PhaseFinished, m.Phase())

	for _, s := range m.Tasks() {
		want := TaskStopped
		if s.Task == chief0 {
			want = TaskSucceeded
		}
		require.Equal(t, want, s.State, s.Task.String())
		require.Empty(t, s.Failure, s.Task.String())
	}
}

// mwmsMachine runs a MultiWorkerMirroredStrategy job (chief, 2 workers, no
// ps) on the real Machine up to every container running: chief in
// container 1, workers in 2 and 3.
func mwmsMachine(t *testing.T, policy Policy) *Machine {
	t.Helper()
	m := newMachine(t, policy, grp(taskspec.Worker, 2, small), grp(taskspec.Chief, 1, small))
	step(m, Tick{Now: t0}, Registered{})
	rd := step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 2), ctr(3, 2)}})
	require.Equal(t, map[string]taskspec.TaskID{cid(1): chief0, cid(2): worker(0), cid(3): worker(1)}, launchedTasks(rd))
	for n := 1; n <= 3; n++ {
		step(m, ContainerStarted{ID: cid(n)})
	}
	return m
}

func TestChiefPolicyLetsMWMSWorkersEndByThemselves(t *testing.T) {
	m := mwmsMachine(t, ChiefPolicy{})

	// The chief is done; the workers, done training too, exit a second later.
	require.True(t, step(m, ContainerCompleted{ID: cid(1), ExitStatus: 0}).Empty(), "nothing stopped yet")
	require.True(t, step(m, Tick{Now: t0.Add(time.Second)}, ContainerCompleted{ID: cid(2), ExitStatus: 0}).Empty())
	rd := step(m, Tick{Now: t0.Add(1500 * time.Millisecond)}, ContainerCompleted{ID: cid(3), ExitStatus: 0})
	require.Equal(t, &Finish{Status: Succeeded, Diagnostics: "chief:0 succeeded"}, rd.Finish)
	require.Empty(t, rd.Stop)
	for _, s := range m.Tasks() {
		require.Equal(t, TaskSucceeded, s.State, s.Task.String())
	}
}

func TestChiefPolicyStopsAStuckMWMSWorkerAfterTheGrace(t *testing.T) {
	m := mwmsMachine(t, ChiefPolicy{})
	require.True(t, step(m, ContainerCompleted{ID: cid(1), ExitStatus: 0}).Empty())
	require.True(t, step(m, Tick{Now: t0.Add(time.Second)}, ContainerCompleted{ID: cid(2), ExitStatus: 0}).Empty())
	require.True(t, step(m, Tick{Now: t0.Add(9 * time.Second)}).Empty(), "worker:1 is still in its grace")

	rd := step(m, Tick{Now: t0.Add(10 * time.Second)})
	require.Nil(t, rd.Finish)
	require.Equal(t, []string{cid(3)}, stoppedIDs(rd))
	require.True(t, step(m, Tick{Now: t0.Add(11 * time.Second)}).Empty(), "a repeated Stop verdict is not a second stop")

	rd = step(m, Tick{Now: t0.Add(12 * time.Second)}, ContainerCompleted{ID: cid(3), ExitStatus: ExitKilledByAppMaster})
	require.Equal(t, &Finish{Status: Succeeded, Diagnostics: "chief:0 succeeded; stopped worker:1 when the 10s worker grace ran out"}, rd.Finish)
	w1, _ := m.Task(worker(1))
	require.Equal(t, TaskStopped, w1.State)
	w0, _ := m.Task(worker(0))
	require.Equal(t, TaskSucceeded, w0.State)
}

func TestChiefPolicyOnTheMachineEndsWithin25sOfTheChief(t *testing.T) {
	// A stuck worker whose stop never lands: the policy gives up
	// WorkerGrace + StopTimeout after the chief's end, whatever happens.
	m := mwmsMachine(t, ChiefPolicy{})
	step(m, ContainerCompleted{ID: cid(1), ExitStatus: 0})
	require.Len(t, step(m, Tick{Now: t0.Add(10 * time.Second)}).Stop, 2)
	step(m, Tick{Now: t0.Add(12 * time.Second)}, ContainerCompleted{ID: cid(2), ExitStatus: ExitKilledByAppMaster})
	require.True(t, step(m, Tick{Now: t0.Add(24 * time.Second)}).Empty())
	rd := step(m, Tick{Now: t0.Add(25 * time.Second)})
	require.Equal(t, &Finish{Status: Succeeded, Diagnostics: "chief:0 succeeded; stopped worker:0, worker:1 when the 10s worker grace ran out; " +
		"gave up after 15s waiting for worker:1 to end"}, rd.Finish)
}

func TestChiefPolicyOnTheMachineGivesUpWaitingForStops(t *testing.T) {
	m := pssMachine(t, ChiefPolicy{StopTimeout: 10 * time.Second})
	require.Len(t, step(m, ContainerCompleted{ID: cid(1)}).Stop, 5)
	for _, n := range []int{2, 3, 5, 6} {
		step(m, ContainerCompleted{ID: cid(n), ExitStatus: ExitKilledByAppMaster})
	}
	require.True(t, step(m, Tick{Now: t0.Add(9 * time.Second)}).Empty(), "ps:0 is still being stopped")

	rd := step(m, Tick{Now: t0.Add(10 * time.Second)})
	require.Equal(t, &Finish{Status: Succeeded, Diagnostics: "chief:0 succeeded; " +
		"stopped worker:0, worker:1, ps:0, ps:1, evaluator:0 after it; gave up after 10s waiting for ps:0 to end"}, rd.Finish)
	require.Empty(t, rd.Stop, "ps:0's stop was already sent")
}

func TestChiefPolicyOnTheMachineFailsOnAKilledPS(t *testing.T) {
	m := pssMachine(t, ChiefPolicy{})

	// The evaluator's failure does not end the job.
	require.True(t, step(m, ContainerCompleted{ID: cid(6), ExitStatus: 1}).Empty())

	// A program's failure (a preemption would restart: restart_test.go).
	rd := step(m, ContainerCompleted{ID: cid(5), ExitStatus: 137})
	require.Equal(t, Failed, rd.Finish.Status)
	require.Equal(t, "ps:1 (container "+cid(5)+" on node2:8041) failed: exit code 137 (SIGKILL); evaluator:0 (container "+cid(6)+" on node0:8041) failed: exit code 1 "+
		"(ignored: evaluator is a side-car)", rd.Finish.Diagnostics)
	require.Equal(t, []string{cid(1), cid(2), cid(3), cid(4)}, stoppedIDs(rd), "the machine stops everything else")
}

func TestSimulatedInterleavingsWithChiefPolicy(t *testing.T) {
	groups := []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), grp(taskspec.Worker, 3, small),
		grp(taskspec.PS, 2, small), grp(taskspec.Evaluator, 1, small)}
	outcomes := map[FinalStatus]int{}
	for seed := int64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newSim(t, seed, ChiefPolicy{}, 0, groups...)
			s.run()
			require.Len(t, s.finishes, 1, "exactly one Finish")
			fin := s.finishes[0]
			outcomes[fin.Status]++
			chief, _ := s.m.Task(chief0)
			switch fin.Status {
			case Succeeded:
				require.Equal(t, TaskSucceeded, chief.State)
				require.Contains(t, fin.Diagnostics, "chief:0 succeeded")
				for _, ts := range s.m.Tasks() {
					if ts.State == TaskFailed {
						require.Contains(t, []taskspec.TaskType{taskspec.Evaluator}, ts.Task.Type, ts.Task.String())
						require.Contains(t, fin.Diagnostics, ts.Failure)
					}
				}
			case Failed:
				require.Contains(t, fin.Diagnostics, "container_")
				require.NotEqual(t, TaskSucceeded, chief.State)
			}
		})
	}
	t.Logf("outcomes over 300 seeds: %v", outcomes)
	require.NotZero(t, outcomes[Succeeded])
	require.NotZero(t, outcomes[Failed])
}
