package appmaster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/syncbuf"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

func adoptTasks(t *testing.T, states map[string]core.TaskState, names ...string) []core.TaskStatus {
	t.Helper()
	var out []core.TaskStatus
	for i, n := range names {
		id, err := taskspec.ParseTaskID(n)
		require.NoError(t, err)
		st := core.TaskStatus{Task: id, State: core.TaskPending}
		if s, ok := states[n]; ok {
			st.State = s
			st.Container = core.Container{ID: "c" + n}
			st.Host, st.Port = "node", 1000+i
		}
		out = append(out, st)
	}
	return out
}

// The saved table lists running, registered tasks once every chief, worker
// and ps is; an evaluator that is not running is left out.
func TestRunningTable(t *testing.T) {
	names := []string{"chief:0", "worker:0", "evaluator:0"}
	run := map[string]core.TaskState{"chief:0": core.TaskRunning, "worker:0": core.TaskRunning, "evaluator:0": core.TaskRunning}
	table, ok := runningTable(adoptTasks(t, run, names...))
	require.True(t, ok)
	require.Equal(t, []amattempt.Task{
		{Task: "chief:0", ContainerID: "cchief:0", Host: "node", Port: 1000},
		{Task: "worker:0", ContainerID: "cworker:0", Host: "node", Port: 1001},
		{Task: "evaluator:0", ContainerID: "cevaluator:0", Host: "node", Port: 1002},
	}, table)

	run["evaluator:0"] = core.TaskFailed
	table, ok = runningTable(adoptTasks(t, run, names...))
	require.True(t, ok)
	require.Len(t, table, 2)

	run["worker:0"] = core.TaskLaunching
	_, ok = runningTable(adoptTasks(t, run, names...))
	require.False(t, ok, "a worker not running yet: nothing to save")
}

// adoptingCluster is fakeCluster as a second attempt sees it: two worker
// containers of the previous attempt still run, and end (exit 0) at the
// first allocate call.
type adoptingCluster struct {
	fakeCluster
	previous []*hadoopyarn.ContainerProto
	ended    bool
}

func (a *adoptingCluster) Register(ctx context.Context, host string, port int32, url string) (*yarn.Registration, error) {
	r, err := a.fakeCluster.Register(ctx, host, port, url)
	r.ContainersFromPreviousAttempts = a.previous
	return r, err
}

func (a *adoptingCluster) Allocate(ctx context.Context, asks []*hadoopyarn.ResourceRequestProto, rel []*hadoopyarn.ContainerIdProto, p float32) (*yarn.Allocation, error) {
	resp, err := a.fakeCluster.Allocate(ctx, asks, rel, p)
	if err == nil && !a.ended {
		a.ended = true
		for _, c := range a.previous {
			resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, &hadoopyarn.ContainerStatusProto{ContainerId: c.GetId(), ExitStatus: proto.Int32(0)})
		}
	}
	return resp, err
}

// The loop adopts what the previous attempt saved: no container asked for,
// none started, the adopted tasks' ends decide the job.
func TestLoopAdoptsThePreviousAttemptsTasks(t *testing.T) {
	f := &adoptingCluster{}
	var saved []amattempt.Task
	for i := int64(1); i <= 2; i++ {
		c := &hadoopyarn.ContainerProto{
			Id:                  &hadoopyarn.ContainerIdProto{Id: proto.Int64(100 + i)},
			NodeId:              &hadoopyarn.NodeIdProto{Host: proto.String("nm"), Port: proto.Int32(1)},
			Resource:            yarn.NewResource(256, 1, nil),
			AllocationRequestId: proto.Int64(1),
			Priority:            &hadoopyarn.PriorityProto{Priority: proto.Int32(1)},
		}
		f.previous = append(f.previous, c)
		// Saved in another order than the machine's: the plan sorts.
		saved = append([]amattempt.Task{{Task: fmt.Sprintf("worker:%d", i-1), ContainerID: yarn.FormatContainerID(c.GetId()), Host: "nm", Port: int(7000 + i)}}, saved...)
	}
	g, err := taskspec.ParseSpec(taskspec.Worker, "2x1c,256m")
	require.NoError(t, err)
	res, err := Loop(context.Background(), LoopConfig{
		Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
		RM:  f, NM: f,
		Adopt: func(context.Context) []amattempt.Task { return saved },
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			t.Fatal("an adopted task was launched again")
			return nil
		},
		Heartbeat: time.Millisecond, FastHeartbeat: time.Millisecond,
	})
	require.NoError(t, err)
	require.Equal(t, core.Succeeded, res.Finish.Status, res.Finish.Diagnostics)
	require.Empty(t, f.started)
	for _, n := range f.asks {
		require.Zero(t, n, "asked for containers: %v", f.asks)
	}
	for i, task := range res.Tasks {
		require.Equal(t, yarn.FormatContainerID(f.previous[i].GetId()), task.Container.ID, task.Task)
		require.Equal(t, int(7001+i), task.Port, task.Task)
	}
}

// Whatever a saved table holds, the plan adopts only containers YARN kept,
// each once, and releases every other one.
func FuzzAdoptionPlan(f *testing.F) {
	f.Add([]byte(`{"am":"h:1","tasks":[{"task":"worker:0","container":"c1","host":"h","port":1},{"task":"worker:1","container":"c2"}]}`), "c1,c2,c3")
	f.Add([]byte(`{"tasks":[{"task":"worker:0","container":"c1"},{"task":"worker:0","container":"c2"}]}`), "c1,c2")
	f.Add([]byte(`{"tasks":[{"task":"ps:9","container":""}]}`), "")
	f.Add([]byte(`{`), "c1")
	f.Fuzz(func(t *testing.T, data []byte, prev string) {
		st, err := amattempt.Decode(data)
		if err != nil {
			return
		}
		table := st.Tasks
		previous := map[string]bool{}
		for _, id := range strings.Split(prev, ",") {
			if id != "" {
				previous[id] = true
			}
		}
		m, err := core.New(core.Config{Job: taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{
			{Type: taskspec.Worker, Instances: 2}, {Type: taskspec.Evaluator, Instances: 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		m.Step(core.Registered{})
		ev := core.PreviousAttempt{Attempt: 2}
		for id := range previous {
			ev.Running = append(ev.Running, core.Container{ID: id})
		}
		for _, s := range table {
			ev.Saved = append(ev.Saved, core.SavedTask{Task: s.Task, ContainerID: s.ContainerID, Host: s.Host, Port: s.Port})
		}
		m.Step(ev)
		rd := m.Ready()
		if rd.Adoption == nil {
			t.Fatal("no adoption decided")
		}
		adopt, release := rd.Adoption.Adopted, rd.Adoption.Released
		seen := map[string]bool{}
		for _, a := range adopt {
			if !previous[a.Container.ID] || seen[a.Container.ID] {
				t.Fatalf("adopted %q: not kept by YARN, or twice: %+v", a.Container.ID, adopt)
			}
			seen[a.Container.ID] = true
		}
		for _, id := range release {
			if !previous[id] || seen[id] {
				t.Fatalf("released %q: not kept by YARN, or also adopted", id)
			}
			seen[id] = true
		}
		if len(seen) != len(previous) {
			t.Fatalf("%d of %d previous containers accounted for", len(seen), len(previous))
		}
	})
}

// A task adopted from the previous attempt counts as registered where that
// attempt saw it (the spec is out at once); its launcher, having found this
// attempt, registers again, which the AM logs and passes on.
func TestRendezvousAdoptsAndHearsTheLauncherAgain(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	var log syncbuf.Buffer
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"},
		Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0", Logf: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }})
	require.NoError(t, err)
	defer rv.Close(0)
	w0 := taskspec.TaskID{Type: taskspec.Worker}
	var l Launchers = rv
	l.(adopter).Adopt(w0, "container_1_0001_01_000002", "127.0.0.1", 2222)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := launcherClient(t, rv, secret, "container_1_0001_01_000002")
	spec, err := c.WaitSpec(ctx, w0)
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:2222"}, spec[taskspec.Worker])
	require.Error(t, launcherClient(t, rv, secret, "container_1_0001_01_000009").Register(ctx, rendezvous.Registration{Task: w0, Host: "127.0.0.1", Port: 2222, ContainerID: "container_1_0001_01_000009", PID: 7}),
		"only the adopted container may register as the task")
	require.NoError(t, c.Register(ctx, rendezvous.Registration{Task: w0, Host: "127.0.0.1", Port: 2222, ContainerID: "container_1_0001_01_000002", PID: 7}))
	require.Equal(t, []core.Event{core.TaskRegistered{Task: w0, Host: "127.0.0.1", Port: 2222}}, rv.Drain())
	require.Contains(t, log.String(), "worker:0 registered again at 127.0.0.1:2222 (container container_1_0001_01_000002, launcher pid 7): its launcher found this attempt")
}

// unwatchedCluster is fakeCluster as a second attempt sees it when one
// task's program ended between the attempts: worker:0's container still
// runs; worker:1's is gone, and YARN hands the new attempt its end (exit
// 137) with the first allocate call.
type unwatchedCluster struct {
	fakeCluster
	running, gone *hadoopyarn.ContainerProto
	told          bool
}

func (u *unwatchedCluster) Register(ctx context.Context, host string, port int32, url string) (*yarn.Registration, error) {
	r, err := u.fakeCluster.Register(ctx, host, port, url)
	r.ContainersFromPreviousAttempts = []*hadoopyarn.ContainerProto{u.running}
	return r, err
}

func (u *unwatchedCluster) Allocate(ctx context.Context, asks []*hadoopyarn.ResourceRequestProto, rel []*hadoopyarn.ContainerIdProto, p float32) (*yarn.Allocation, error) {
	resp, err := u.fakeCluster.Allocate(ctx, asks, rel, p)
	if err == nil && !u.told {
		u.told = true
		resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, &hadoopyarn.ContainerStatusProto{ContainerId: u.gone.GetId(), ExitStatus: proto.Int32(137)})
	}
	return resp, err
}

// A program that failed while no ApplicationMaster watched is the
// program's failure: the second attempt, which could not adopt the
// cluster, fails the job naming it and its exit code (without
// --max-restarts), instead of restarting as if the cluster were at fault;
// and a budget the first attempt used up stays used.
func TestLoopCountsAFailureBetweenAttempts(t *testing.T) {
	container := func(n int64) *hadoopyarn.ContainerProto {
		return &hadoopyarn.ContainerProto{
			Id:       &hadoopyarn.ContainerIdProto{Id: proto.Int64(100 + n)},
			NodeId:   &hadoopyarn.NodeIdProto{Host: proto.String("nm"), Port: proto.Int32(1)},
			Resource: yarn.NewResource(256, 1, nil), AllocationRequestId: proto.Int64(1),
			Priority: &hadoopyarn.PriorityProto{Priority: proto.Int32(1)},
		}
	}
	g, err := taskspec.ParseSpec(taskspec.Worker, "2x1c,256m")
	require.NoError(t, err)
	for _, tc := range []struct {
		name       string
		maxRestart int
		resume     *core.RestartRecord
		status     hadoopyarn.FinalApplicationStatusProto
		diag       string
	}{
		{"no --max-restarts: the job fails", 0, nil, hadoopyarn.FinalApplicationStatusProto_APP_FAILED,
			"worker:1 (container " + yarn.FormatContainerID(container(2).GetId()) + " on nm) failed while no ApplicationMaster watched it (attempt 1 had ended): exit code 137 (SIGKILL)"},
		{"--max-restarts 1: a counted restart", 1, nil, hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED,
			"restart 1 after worker:1 (container " + yarn.FormatContainerID(container(2).GetId()) + " on nm) failed while no ApplicationMaster watched it (attempt 1 had ended): exit code 137 (SIGKILL)"},
		{"--max-restarts 1 used by attempt 1: the job fails", 1, &core.RestartRecord{Counted: 1, Cluster: 1, Causes: []string{"restart 1 after worker:0 failed: exit code 1"}}, hadoopyarn.FinalApplicationStatusProto_APP_FAILED,
			"failed while no ApplicationMaster watched it (attempt 1 had ended): exit code 137 (SIGKILL); restart 1 after worker:0 failed: exit code 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &unwatchedCluster{running: container(1), gone: container(2)}
			f.exit = func(int64) int32 { return 0 }
			saved := []amattempt.Task{
				{Task: "worker:0", ContainerID: yarn.FormatContainerID(f.running.GetId()), Host: "nm", Port: 7001},
				{Task: "worker:1", ContainerID: yarn.FormatContainerID(f.gone.GetId()), Host: "nm", Port: 7002},
			}
			job := taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true", Restarts: taskspec.RestartPolicy{Max: tc.maxRestart}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := Loop(ctx, LoopConfig{
				Job: job, RM: f, NM: f, Attempt: 2, Resume: tc.resume,
				Adopt: func(context.Context) []amattempt.Task { return saved },
				LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
					return &hadoopyarn.ContainerLaunchContextProto{}
				},
				Heartbeat: time.Millisecond, FastHeartbeat: time.Millisecond,
			})
			require.NoError(t, err)
			require.Equal(t, tc.status, f.finished.GetFinalApplicationStatus(), f.finished.GetDiagnostics())
			require.Contains(t, f.finished.GetDiagnostics(), tc.diag)
			require.NotContains(t, f.finished.GetDiagnostics(), "not the program's fault")
			_ = res
		})
	}
}

// The saved state carries the restarts and each launcher's control port; a
// table whose tasks are being stopped (a restart, the job's end) is taken
// back, so that a program stopped on purpose is never taken for one that
// failed unwatched; nothing is saved once the job is decided.
func TestStateToSaveCarriesRestartsAndDropsAStoppingTable(t *testing.T) {
	run := map[string]core.TaskState{"worker:0": core.TaskRunning, "worker:1": core.TaskRunning}
	tasks := adoptTasks(t, run, "worker:0", "worker:1")
	st, ok := stateToSave(Snapshot{Tasks: adoptTasks(t, nil, "worker:0", "worker:1")}, "h:1", nil)
	require.True(t, ok)
	require.Empty(t, st.Tasks, "nothing to save yet")
	st, ok = stateToSave(Snapshot{Tasks: tasks}, "h:1", map[string]int{"cworker:1": 4242})
	require.True(t, ok)
	require.Equal(t, "h:1", st.AM)
	require.Len(t, st.Tasks, 2)
	require.Equal(t, []int{0, 4242}, []int{st.Tasks[0].Control, st.Tasks[1].Control}, "each launcher's control port as it registered")

	tasks[1].StopRequested = true
	rec := core.RestartRecord{Counted: 1, Replaced: 2, Causes: []string{"restart 1 after worker:1 failed: exit code 1"},
		NodeFailures: map[string]int{"nm1": 2, "nm2": 1}, Excluded: []core.ExcludedNode{{Host: "nm1", Reason: "2 task attempts failed there"}}}
	st, ok = stateToSave(Snapshot{Tasks: tasks, Record: rec}, "h:1", nil)
	require.True(t, ok)
	require.Empty(t, st.Tasks, "a stopping task: the table goes")
	require.Equal(t, &amattempt.Restarts{Counted: 1, Replaced: 2, Causes: rec.Causes, NodeFailures: rec.NodeFailures,
		Excluded: []amattempt.ExcludedNode{{Host: "nm1", Reason: "2 task attempts failed there"}}}, st.Restarts, "an elastic job's replacements and the bad nodes carry over too")
	require.Equal(t, &rec, resumedRecord(&st))
	require.Nil(t, resumedRecord(nil))
	_, ok = stateToSave(Snapshot{Tasks: tasks, Finish: &core.Finish{}}, "h:1", nil)
	require.False(t, ok, "the job is decided: nothing more to save")
}

// An adopted task keeps the control port the previous attempt saved for
// its launcher: the board holds it (so this attempt saves it again) and
// the launcher is told where this attempt runs, on that port.
func TestRendezvousAnnouncesToAdoptedLaunchers(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "2x1c")
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"},
		Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer rv.Close(0)
	told := make(chan amattempt.Task, 2)
	rv.AnnounceAdopted([]amattempt.Task{
		{Task: "worker:0", ContainerID: "container_1_0001_01_000002", Host: "node1", Port: 2222, Control: 4242},
		{Task: "worker:1", ContainerID: "container_1_0001_01_000003", Host: "node2", Port: 2223},
	}, func(t amattempt.Task) { told <- t })
	rv.Adopt(taskspec.TaskID{Type: taskspec.Worker}, "container_1_0001_01_000002", "node1", 2222)
	require.Equal(t, amattempt.Task{Task: "worker:0", ContainerID: "container_1_0001_01_000002", Host: "node1", Port: 2222, Control: 4242}, <-told)
	require.Equal(t, map[string]int{"container_1_0001_01_000002": 4242}, rv.controlPorts())
}
