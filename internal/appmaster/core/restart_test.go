package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// restartMachine is a chief and a worker with restarts on. Its containers
// all land on one node, which no failure excludes (bad nodes are
// badnodes_test.go's).
func restartMachine(t *testing.T, policy taskspec.RestartPolicy) *Machine {
	t.Helper()
	job := taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), grp(taskspec.Worker, 1, small)}, Restarts: policy, MaxNodeFailures: taskspec.NoNodeExclusion}
	m, err := New(Config{Job: job, Policy: ChiefPolicy{}})
	require.NoError(t, err)
	step(m, Registered{})
	return m
}

// runOnce gives both tasks containers n, n+1 and starts them.
func runOnce(t *testing.T, m *Machine, n int) {
	t.Helper()
	rd := step(m, Allocated{Containers: []Container{ctr(n, 1), ctr(n+1, 2)}}, ContainerStarted{ID: cid(n)}, ContainerStarted{ID: cid(n + 1)})
	require.Len(t, rd.Launch, 2)
}

// The worker ends with status on every run; the chief is stopped for the
// restart. It returns the Ready of the worker's end and of the chief's.
func failWorker(m *Machine, n int, status int32) (Ready, Ready) {
	return step(m, ContainerCompleted{ID: cid(n + 1), ExitStatus: status}), step(m, ContainerCompleted{ID: cid(n), ExitStatus: 143})
}

func TestRestartDecisions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy taskspec.RestartPolicy
		exits  []int32 // the worker's, run after run
		// restarts is how many restarts happen; the run after the last
		// fails the job (or, when len(exits) runs all restarted, none does).
		restarts int
		diag     string // the failed job's diagnostics start with it
	}{
		{"program failures off by default", taskspec.RestartPolicy{}, []int32{1}, 0, "worker:0 (container"},
		{"YARN's exits restart by default, uncounted", taskspec.RestartPolicy{}, []int32{ExitPreempted, ExitAborted, ExitDisksFailed, ExitKilledByResourceManager, ExitKilledByContainerScheduler, 137}, 5, "worker:0 (container"},
		{"opted out: preemption fails", taskspec.RestartPolicy{NoInfraRestarts: true}, []int32{ExitPreempted}, 0, "worker:0 (container"},
		{"opted out: a lost node counts", taskspec.RestartPolicy{Max: 1, NoInfraRestarts: true}, []int32{ExitAborted, ExitAborted}, 1, "worker:0 (container"},
		{"opted out with retry codes: YARN's exits are not listed", taskspec.RestartPolicy{Max: 3, RetryExitCodes: []int{137}, NoInfraRestarts: true}, []int32{137, ExitPreempted}, 1, "worker:0 (container"},
		{"counted up to max", taskspec.RestartPolicy{Max: 2}, []int32{1, 1, 1}, 2, "worker:0 (container"},
		{"uncounted do not use max", taskspec.RestartPolicy{Max: 1}, []int32{ExitPreempted, ExitAborted, ExitDisksFailed, ExitKilledByResourceManager, 1, 1}, 5, "worker:0 (container"},
		{"memory kill counts", taskspec.RestartPolicy{Max: 1}, []int32{ExitKilledExceededPMem, ExitKilledExceededPMem}, 1, "worker:0 (container"},
		{"retry codes", taskspec.RestartPolicy{Max: 5, RetryExitCodes: []int{137}}, []int32{137, 3}, 1, "worker:0 (container"},
		{"retry codes keep YARN's uncounted", taskspec.RestartPolicy{Max: 1, RetryExitCodes: []int{137}}, []int32{ExitPreempted, 137, ExitKilledExceededPMem}, 2, "worker:0 (container"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := restartMachine(t, tc.policy)
			n := 1
			for i, status := range tc.exits {
				runOnce(t, m, n)
				wrd, crd := failWorker(m, n, status)
				n += 2
				if i < tc.restarts {
					require.Nil(t, wrd.Finish, "run %d", i)
					require.NotNil(t, crd.Restart, "run %d restarts once the chief has ended", i)
					require.Equal(t, i+1, crd.Restart.Number)
					continue
				}
				require.NotNil(t, wrd.Finish, "run %d", i)
				require.Equal(t, Failed, wrd.Finish.Status)
				require.True(t, strings.HasPrefix(wrd.Finish.Diagnostics, tc.diag), wrd.Finish.Diagnostics)
				require.Equal(t, tc.restarts, strings.Count(wrd.Finish.Diagnostics, "; restart "), "every restart's failure is listed: %s", wrd.Finish.Diagnostics)
				break
			}
			require.Equal(t, tc.restarts, m.Restarts())
		})
	}
}

// A cluster losing node after node still ends: restarts that do not count
// are bounded too (here with the default policy, Max 0).
func TestUncountedRestartsAreBounded(t *testing.T) {
	m := restartMachine(t, taskspec.RestartPolicy{})
	n := 1
	for i := 0; i < taskspec.MaxUncountedRestarts; i++ {
		runOnce(t, m, n)
		_, crd := failWorker(m, n, ExitAborted)
		require.NotNil(t, crd.Restart, "restart %d", i+1)
		n += 2
	}
	runOnce(t, m, n)
	wrd, _ := failWorker(m, n, ExitAborted)
	require.NotNil(t, wrd.Finish)
	require.Equal(t, Failed, wrd.Finish.Status)
	require.Contains(t, wrd.Finish.Diagnostics, fmt.Sprintf("restart %d after", taskspec.MaxUncountedRestarts))
}

// With the default policy a container that ends on a lost node before its
// launch restarts the cluster (TestCompletionBeforeLaunchDropsTheLaunch
// has the opt-out): the launch is dropped, the other container released,
// and new ones asked for.
func TestLostBeforeLaunchRestartsByDefault(t *testing.T) {
	m := restartMachine(t, taskspec.RestartPolicy{})
	checkedStep(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 2)}})
	checkedStep(m, ContainerCompleted{ID: cid(2), ExitStatus: ExitAborted, Diagnostics: "Container released on a *lost* node"})
	rd := m.Ready()
	require.Nil(t, rd.Finish)
	require.Empty(t, rd.Launch, "neither the dead container nor the one about to be stopped is launched")
	require.Equal(t, []string{cid(1)}, rd.Release)
	require.NotNil(t, rd.Restart)
	require.Len(t, rd.Asks, 2, "a container for each task again: %+v", rd.Asks)
	require.Equal(t, 1, m.Restarts())

	runOnce(t, m, 3)
	wrd, _ := failWorker(m, 3, 1)
	require.NotNil(t, wrd.Finish)
	require.Equal(t, Failed, wrd.Finish.Status)
	require.Contains(t, wrd.Finish.Diagnostics, "; restart 1 after worker:0 (container "+cid(2)+" on node2:8041) failed: aborted by YARN")
}
