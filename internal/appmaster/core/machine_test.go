package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

var (
	small = taskspec.Resources{VCores: 1, MemoryMiB: 256}
	big   = taskspec.Resources{VCores: 4, MemoryMiB: 8192, GPUs: 1}
)

func grp(typ taskspec.TaskType, n int, r taskspec.Resources) taskspec.TaskGroup {
	return taskspec.TaskGroup{Type: typ, Instances: n, Resources: r}
}

func newMachine(t *testing.T, policy Policy, groups ...taskspec.TaskGroup) *Machine {
	t.Helper()
	m, err := New(Config{Job: taskspec.Job{Command: "true", Tasks: groups}, Policy: policy})
	require.NoError(t, err)
	return m
}

func cid(n int) string { return fmt.Sprintf("container_1700000000000_0001_01_%06d", n) }

// ctr is container n answering the ask with allocation_request_id reqID.
func ctr(n int, reqID int64) Container {
	return Container{
		ID:                  cid(n),
		NodeID:              fmt.Sprintf("node%d:8041", n%3),
		NodeHTTPAddress:     fmt.Sprintf("node%d:8042", n%3),
		Resource:            small,
		AllocationRequestID: reqID,
		Priority:            int32(reqID),
	}
}

func step(m *Machine, evs ...Event) Ready {
	for _, ev := range evs {
		checkedStep(m, ev)
	}
	return m.Ready()
}

func launchedTasks(rd Ready) map[string]taskspec.TaskID {
	out := map[string]taskspec.TaskID{}
	for _, l := range rd.Launch {
		out[l.Container.ID] = l.Task
	}
	return out
}

func stoppedIDs(rd Ready) []string {
	var ids []string
	for _, s := range rd.Stop {
		ids = append(ids, s.Container.ID)
	}
	return ids
}

func worker(i int) taskspec.TaskID { return taskspec.TaskID{Type: taskspec.Worker, Index: i} }

// runAll takes a 3-worker machine to three running containers 1..3.
func runAll(t *testing.T, m *Machine) {
	t.Helper()
	step(m, Registered{})
	rd := step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1), ctr(3, 1)}},
		ContainerStarted{ID: cid(1)}, ContainerStarted{ID: cid(2)}, ContainerStarted{ID: cid(3)})
	require.Len(t, rd.Launch, 3)
	for _, s := range m.Tasks() {
		require.Equal(t, TaskRunning, s.State, s.Task.String())
	}
}

func TestHappyPathThreeWorkers(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 3, small))
	require.Equal(t, PhaseUnregistered, m.Phase())
	require.True(t, m.Ready().Empty(), "nothing is asked before registration")

	rd := step(m, Registered{})
	want := Ask{TaskType: taskspec.Worker, AllocationRequestID: 1, Priority: 1, Resource: small, Count: 3}
	require.Equal(t, Ready{Asks: []Ask{want}}, rd)

	rd = step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1)}})
	require.Equal(t, map[string]taskspec.TaskID{cid(1): worker(0), cid(2): worker(1)}, launchedTasks(rd))
	require.Empty(t, rd.Asks, "the RM decremented its count itself: restating it could only be stale")
	want.Count = 1
	require.Equal(t, []Ask{want}, m.AskTable())

	rd = step(m, Allocated{Containers: []Container{ctr(3, 1)}})
	require.Equal(t, map[string]taskspec.TaskID{cid(3): worker(2)}, launchedTasks(rd))
	want.Count = 0
	require.Equal(t, []Ask{want}, m.AskTable())
	require.Empty(t, rd.Asks)

	rd = step(m, ContainerStarted{ID: cid(1)}, ContainerStarted{ID: cid(2)}, ContainerStarted{ID: cid(3)})
	require.True(t, rd.Empty())
	rd = step(m, ContainerCompleted{ID: cid(2)}, ContainerCompleted{ID: cid(1)})
	require.True(t, rd.Empty())
	rd = step(m, ContainerCompleted{ID: cid(3)})
	require.Equal(t, Ready{Finish: &Finish{Status: Succeeded, Diagnostics: "all 3 tasks succeeded"}}, rd)
	require.Equal(t, PhaseFinished, m.Phase())
	for _, s := range m.Tasks() {
		require.Equal(t, TaskSucceeded, s.State)
	}
}

func TestSurplusContainersAreReleased(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Chief, 1, big), grp(taskspec.PS, 1, small))
	step(m, Registered{})
	tests := []struct {
		name        string
		container   Container
		wantLaunch  map[string]taskspec.TaskID
		wantRelease []string
	}{
		{"matched by allocation_request_id", ctr(1, 1), map[string]taskspec.TaskID{cid(1): {Type: taskspec.Chief}}, nil},
		{"more than asked", ctr(2, 1), map[string]taskspec.TaskID{}, []string{cid(2)}},
		{"unknown allocation_request_id", ctr(3, 7), map[string]taskspec.TaskID{}, []string{cid(3)}},
		{"no id: matched by priority", Container{ID: cid(4), Priority: 2}, map[string]taskspec.TaskID{cid(4): {Type: taskspec.PS}}, nil},
		{"no id, after the group is satisfied", Container{ID: cid(5), Priority: 2}, map[string]taskspec.TaskID{}, []string{cid(5)}},
		{"same container again", ctr(1, 1), map[string]taskspec.TaskID{}, nil},
	}
	for _, tt := range tests {
		rd := step(m, Allocated{Containers: []Container{tt.container}})
		require.Equal(t, tt.wantLaunch, launchedTasks(rd), tt.name)
		require.Equal(t, tt.wantRelease, rd.Release, tt.name)
		require.Empty(t, rd.Asks, tt.name)
	}
	for _, a := range m.AskTable() {
		require.Zero(t, a.Count)
	}
	// A released container completing later is none of our business.
	require.True(t, step(m, ContainerCompleted{ID: cid(2), ExitStatus: ExitAborted}).Empty())
}

func TestFailureEndsTheJob(t *testing.T) {
	tests := []struct {
		name      string
		event     Event
		wantDiags []string
		wantStops []string
		wantRel   []string
	}{
		{
			name:      "non-zero exit",
			event:     ContainerCompleted{ID: cid(2), ExitStatus: 3, Diagnostics: "Exception from container-launch.\nExit code: 3"},
			wantDiags: []string{"worker:1", cid(2), "node2:8041", "exit code 3"},
			wantStops: []string{cid(1), cid(3)},
		},
		{
			name: "physical memory",
			event: ContainerCompleted{ID: cid(2), ExitStatus: ExitKilledExceededPMem,
				Diagnostics: "Container [pid=42,containerID=c2] is running 300MB beyond the 'PHYSICAL' memory limit.\nDump of the process-tree"},
			wantDiags: []string{"worker:1", cid(2), "killed for exceeding its physical memory limit", "-104", "300MB beyond the 'PHYSICAL' memory limit"},
			wantStops: []string{cid(1), cid(3)},
		},
		{
			name:      "lost node",
			event:     ContainerCompleted{ID: cid(3), ExitStatus: ExitAborted},
			wantDiags: []string{"worker:2", "its node was lost", "-100"},
			wantStops: []string{cid(1), cid(2)},
		},
		{
			name:      "start failure",
			event:     StartFailed{ID: cid(1), Reason: "NM refused: token expired"},
			wantDiags: []string{"worker:0", cid(1), "failed to start: NM refused: token expired"},
			wantStops: []string{cid(2), cid(3)},
			wantRel:   []string{cid(1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Opted out of the restarts a lost node gets by default
			// (restart_test.go): here it fails the job like any failure.
			m, err := New(Config{Job: taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 3, small)}, Restarts: taskspec.RestartPolicy{NoInfraRestarts: true}}})
			require.NoError(t, err)
			step(m, Registered{})
			step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1), ctr(3, 1)}},
				ContainerStarted{ID: cid(2)}, ContainerStarted{ID: cid(3)})
			if _, ok := tt.event.(StartFailed); !ok {
				step(m, ContainerStarted{ID: cid(1)})
			}
			rd := step(m, tt.event)
			require.NotNil(t, rd.Finish)
			require.Equal(t, Failed, rd.Finish.Status)
			require.NotContains(t, rd.Finish.Diagnostics, "\n")
			for _, want := range tt.wantDiags {
				require.Contains(t, rd.Finish.Diagnostics, want)
			}
			require.Equal(t, tt.wantStops, stoppedIDs(rd))
			require.Equal(t, tt.wantRel, rd.Release)
			require.Empty(t, rd.Launch)
			require.Empty(t, rd.Asks)
		})
	}
}

func TestKillRequested(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 3, small))
	step(m, Registered{})
	// Two containers launched, one of them already handed to the loop; the
	// third arrives in the same batch as the kill and is never started.
	step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1)}}, ContainerStarted{ID: cid(1)})
	rd := step(m, Allocated{Containers: []Container{ctr(3, 1)}}, KillRequested{Reason: "while starting containers"})
	require.Equal(t, &Finish{Status: Killed, Diagnostics: KilledDiagnostics + " while starting containers"}, rd.Finish)
	require.Equal(t, []string{cid(1), cid(2)}, stoppedIDs(rd))
	require.Empty(t, rd.Launch, "a container not yet launched is released, not launched then stopped")
	require.Equal(t, []string{cid(3)}, rd.Release)
	s, _ := m.Task(worker(2))
	require.Equal(t, TaskStopped, s.State)
}

// A kill ends the job KILLED at any moment: whatever the kill cut short
// (launches in flight, the rendezvous, completions of containers killed
// with the application) arrives after it and changes nothing.
func TestKillAtAnyMoment(t *testing.T) {
	tests := []struct {
		name   string
		before []Event // up to the kill
		after  []Event // what the interrupted calls returned, after it
		stops  []string
	}{
		{name: "before registering"},
		{name: "waiting for containers", before: []Event{Registered{}}},
		{
			name:   "startContainers in flight",
			before: []Event{Registered{}, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1), ctr(3, 1)}}},
			after: []Event{StartFailed{ID: cid(1), Reason: "context canceled"}, StartFailed{ID: cid(2), Reason: "context canceled"},
				ContainerStarted{ID: cid(3)}},
			stops: []string{cid(1), cid(2), cid(3)},
		},
		{
			name:   "some started, some in flight",
			before: []Event{Registered{}, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1)}}, ContainerStarted{ID: cid(1)}},
			after:  []Event{StartFailed{ID: cid(2), Reason: "context canceled"}},
			stops:  []string{cid(1), cid(2)},
		},
		{
			name: "waiting for the rendezvous",
			before: []Event{Registered{}, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1), ctr(3, 1)}},
				ContainerStarted{ID: cid(1)}, ContainerStarted{ID: cid(2)}, ContainerStarted{ID: cid(3)},
				TaskRegistered{Task: worker(0), Host: "h", Port: 1}},
			after: []Event{RendezvousFailed{Reason: "interrupted"},
				ContainerCompleted{ID: cid(1), ExitStatus: 143}, ContainerCompleted{ID: cid(2), ExitStatus: ExitKilledByResourceManager}},
			stops: []string{cid(1), cid(2), cid(3)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, nil, grp(taskspec.Worker, 3, small))
			for _, ev := range tt.before {
				checkedStep(m, ev)
			}
			m.Ready() // the loop took the launches
			rd := step(m, KillRequested{})
			require.Equal(t, &Finish{Status: Killed, Diagnostics: KilledDiagnostics}, rd.Finish)
			require.Equal(t, tt.stops, stoppedIDs(rd), "every container the job holds is stopped")
			require.Empty(t, rd.Launch)
			require.Empty(t, rd.Asks)
			for _, ev := range tt.after {
				require.True(t, step(m, ev).Empty(), "%T after the kill", ev)
			}
			for _, s := range m.Tasks() {
				require.NotEqual(t, TaskFailed, s.State, "%s", s.Task)
			}
		})
	}
}

func TestEndingEvents(t *testing.T) {
	tests := []struct {
		event Event
		want  Finish
	}{
		{KillRequested{}, Finish{Status: Killed, Diagnostics: "killed: the ApplicationMaster was stopped (YARN kill or SIGTERM)"}},
		{ShutdownRequested{Reason: "AM_SHUTDOWN"}, Finish{Status: Killed, Diagnostics: "the ApplicationMaster was told to shut down: AM_SHUTDOWN"}},
		{RMFailed{Reason: "InvalidToken"}, Finish{Status: Failed, Diagnostics: "lost the ResourceManager: InvalidToken"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%T", tt.event), func(t *testing.T) {
			m := newMachine(t, nil, grp(taskspec.Worker, 3, small))
			runAll(t, m)
			rd := step(m, tt.event)
			require.Equal(t, &tt.want, rd.Finish)
			require.Len(t, rd.Stop, 3)
		})
	}
}

func TestClusterTooSmallFailsAtRegistration(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 3, big))
	rd := step(m, Registered{Limits: taskspec.ClusterLimits{Known: true, MaxMemoryMiB: 16384, MaxVCores: 2, KnowsGPUs: true, MaxGPUs: 1}})
	require.Equal(t, Ready{Finish: &Finish{Status: Failed,
		Diagnostics: "worker asks 4 vcores per task but the cluster's maximum allocation is 2 vcores; ask for fewer"}}, rd)
}

func TestIgnoredEvents(t *testing.T) {
	tests := []struct {
		name  string
		event Event
	}{
		{"completion of an unknown container", ContainerCompleted{ID: cid(99), ExitStatus: 1}},
		{"start of an unknown container", ContainerStarted{ID: cid(99)}},
		{"start failure of an unknown container", StartFailed{ID: cid(99)}},
		{"start failure of a running container", StartFailed{ID: cid(1)}},
		{"repeated start", ContainerStarted{ID: cid(1)}},
		{"repeated allocation", Allocated{Containers: []Container{ctr(2, 1)}}},
		{"container without id", Allocated{Containers: []Container{{AllocationRequestID: 1}}}},
		{"repeated registration", Registered{Limits: taskspec.ClusterLimits{Known: true}}},
		{"registration of an unknown task", TaskRegistered{Task: worker(7), Host: "h", Port: 1}},
		{"nil event", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, nil, grp(taskspec.Worker, 3, small))
			runAll(t, m)
			before := m.Tasks()
			require.True(t, step(m, tt.event).Empty())
			require.Equal(t, before, m.Tasks())
		})
	}
}

func TestRepeatedCompletionIsIdempotent(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 3, small))
	runAll(t, m)
	done := ContainerCompleted{ID: cid(1)}
	require.True(t, step(m, done).Empty())
	before := m.Tasks()
	require.True(t, step(m, done, done).Empty())
	require.Equal(t, before, m.Tasks())
}

func TestNothingAfterFinish(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 1, small))
	step(m, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1)}})
	rd := step(m, ContainerCompleted{ID: cid(1), ExitStatus: 1})
	require.Equal(t, Failed, rd.Finish.Status)
	for _, ev := range []Event{
		Allocated{Containers: []Container{ctr(2, 1)}}, ContainerCompleted{ID: cid(1)}, KillRequested{},
		RMFailed{}, Resynced{}, Registered{}, Tick{Now: time.Unix(100, 0)},
	} {
		require.True(t, step(m, ev).Empty(), "%T", ev)
	}
	require.Equal(t, PhaseFinished, m.Phase())
}

func TestAsksPerGroup(t *testing.T) {
	gpuWorkers := grp(taskspec.Worker, 4, big)
	gpuWorkers.NodeLabel = "gpu"
	m, err := New(Config{Job: taskspec.Job{
		Script:    "train.py",
		NodeLabel: "cpu",
		Tasks:     []taskspec.TaskGroup{grp(taskspec.Evaluator, 1, small), grp(taskspec.PS, 2, small), gpuWorkers, grp(taskspec.Chief, 1, big)},
	}})
	require.NoError(t, err)
	rd := step(m, Registered{})
	require.Equal(t, []Ask{
		{TaskType: taskspec.Chief, AllocationRequestID: 1, Priority: 1, Resource: big, NodeLabel: "cpu", Count: 1},
		{TaskType: taskspec.Worker, AllocationRequestID: 2, Priority: 2, Resource: big, NodeLabel: "gpu", Count: 4},
		{TaskType: taskspec.PS, AllocationRequestID: 3, Priority: 3, Resource: small, NodeLabel: "cpu", Count: 2},
		{TaskType: taskspec.Evaluator, AllocationRequestID: 4, Priority: 4, Resource: small, NodeLabel: "cpu", Count: 1},
	}, rd.Asks)

	// After an RM restart the new RM knows nothing: the whole table again,
	// with what is still wanted.
	step(m, Allocated{Containers: []Container{ctr(1, 2), ctr(2, 3), ctr(3, 1)}})
	rd = step(m, Resynced{})
	var counts []int
	for _, a := range rd.Asks {
		counts = append(counts, a.Count)
	}
	require.Equal(t, []int{0, 3, 1, 1}, counts)
}

func TestNewRejectsBadGroups(t *testing.T) {
	for name, groups := range map[string][]taskspec.TaskGroup{
		"no groups":      nil,
		"zero instances": {grp(taskspec.Worker, 0, small)},
		"duplicate type": {grp(taskspec.Worker, 1, small), grp(taskspec.Worker, 1, small)},
		"unknown type":   {grp("master", 1, small)},
	} {
		_, err := New(Config{Job: taskspec.Job{Tasks: groups}})
		require.Error(t, err, name)
	}
}

func TestTaskTimesAndAddresses(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 1, small))
	t0 := time.Unix(1_700_000_000, 0)
	step(m, Tick{Now: t0}, Registered{})
	step(m, Tick{Now: t0.Add(time.Second)}, Allocated{Containers: []Container{ctr(1, 1)}})
	step(m, Tick{Now: t0.Add(2 * time.Second)}, ContainerStarted{ID: cid(1)}, TaskRegistered{Task: worker(0), Host: "node1", Port: 2222})
	step(m, Tick{Now: t0}) // time never goes back
	s, ok := m.Task(worker(0))
	require.True(t, ok)
	require.Equal(t, t0, s.RequestedAt)
	require.Equal(t, t0.Add(time.Second), s.LaunchedAt)
	require.Equal(t, t0.Add(2*time.Second), s.StartedAt)
	require.Equal(t, "node1", s.Host)
	require.Equal(t, 2222, s.Port)
	require.Equal(t, cid(1), s.Container.ID)
}

// TestIsInfrastructureExit (containerexit's TestDescribe words the statuses).
func TestIsInfrastructureExit(t *testing.T) {
	require.True(t, IsInfrastructureExit(ExitPreempted))
	require.False(t, IsInfrastructureExit(ExitKilledExceededPMem))
	require.False(t, IsInfrastructureExit(1))
}

func TestAskBuffer(t *testing.T) {
	var b AskBuffer
	b.Add(Ready{Asks: []Ask{{AllocationRequestID: 2, Count: 3}, {AllocationRequestID: 1, Count: 1}}, Release: []string{"c1"}})
	asks, rel := b.Pending()
	require.Equal(t, []Ask{{AllocationRequestID: 1, Count: 1}, {AllocationRequestID: 2, Count: 3}}, asks)
	require.Equal(t, []string{"c1"}, rel)

	// The allocate call failed: nothing is forgotten, newer counts win.
	b.Add(Ready{Asks: []Ask{{AllocationRequestID: 2, Count: 4}}, Release: []string{"c2"}})
	asks, rel = b.Pending()
	require.Equal(t, []Ask{{AllocationRequestID: 1, Count: 1}, {AllocationRequestID: 2, Count: 4}}, asks)
	require.Equal(t, []string{"c1", "c2"}, rel)

	// A change that arrives while the call is in flight survives Sent.
	b.Add(Ready{Asks: []Ask{{AllocationRequestID: 1, Count: 0}}, Release: []string{"c3"}})
	b.Sent(asks, rel)
	asks, rel = b.Pending()
	require.Equal(t, []Ask{{AllocationRequestID: 1, Count: 0}}, asks)
	require.Equal(t, []string{"c3"}, rel)
	b.Sent(asks, rel)
	asks, rel = b.Pending()
	require.Empty(t, asks)
	require.Empty(t, rel)
}

func TestCompletionBeforeLaunchDropsTheLaunch(t *testing.T) {
	// Opted out of restarts: the lost node fails the job (restart_test.go
	// has the default, a restart).
	m, err := New(Config{Job: taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 2, small)}, Restarts: taskspec.RestartPolicy{NoInfraRestarts: true}}})
	require.NoError(t, err)
	step(m, Registered{})
	checkedStep(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1)}})
	checkedStep(m, ContainerCompleted{ID: cid(1), ExitStatus: ExitAborted, Diagnostics: "Container released on a *lost* node"})
	rd := m.Ready()
	require.Empty(t, rd.Launch, "neither the dead container nor the one the job no longer needs is launched")
	require.Equal(t, []string{cid(2)}, rd.Release)
	require.Equal(t, Failed, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "worker:0 (container "+cid(1)+" on node1:8041) failed: aborted by YARN")
	require.Contains(t, rd.Finish.Diagnostics, "Container released on a *lost* node")
}

func TestStateNames(t *testing.T) {
	require.Equal(t, "running", TaskRunning.String())
	require.Equal(t, "TaskState(42)", TaskState(42).String())
	require.Equal(t, "finished", PhaseFinished.String())
	require.Equal(t, "FAILED", Failed.String())
	require.Equal(t, "UNDEFINED", FinalStatus(0).String())
}
