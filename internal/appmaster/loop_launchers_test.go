package appmaster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// fakeLaunchers stands for the rendezvous: react runs as the loop assigns
// each container, and may queue what the launchers would report.
type fakeLaunchers struct {
	mu       sync.Mutex
	assigned map[taskspec.TaskID]string
	stops    []taskspec.TaskID
	stopAll  bool
	resets   int
	events   []core.Event
	notify   chan struct{}
	tails    map[string][]string
	warnings []string // "task container deadline reason"
	onWarn   func(f *fakeLaunchers)
	react    func(f *fakeLaunchers, task taskspec.TaskID)
}

func newFakeLaunchers(react func(*fakeLaunchers, taskspec.TaskID)) *fakeLaunchers {
	return &fakeLaunchers{assigned: map[taskspec.TaskID]string{}, notify: make(chan struct{}, 1), tails: map[string][]string{}, react: react}
}

func (f *fakeLaunchers) Assign(task taskspec.TaskID, id string) {
	f.mu.Lock()
	f.assigned[task] = id
	f.mu.Unlock()
	if f.react != nil {
		f.react(f, task)
	}
}

func (f *fakeLaunchers) container(task taskspec.TaskID) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.assigned[task]
}

func (f *fakeLaunchers) push(evs ...core.Event) {
	f.mu.Lock()
	f.events = append(f.events, evs...)
	f.mu.Unlock()
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

func (f *fakeLaunchers) Stop(task taskspec.TaskID, _ string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops = append(f.stops, task)
}

func (f *fakeLaunchers) StopAll(string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopAll = true
}

func (f *fakeLaunchers) Warn(w core.Warning) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.warnings = append(f.warnings, fmt.Sprintf("%s %s %d %s", w.Task, w.Container.ID, w.Deadline.UnixMilli(), w.Reason))
	if f.onWarn != nil {
		go f.onWarn(f)
	}
}

func (f *fakeLaunchers) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets++
}

func (f *fakeLaunchers) Notify() <-chan struct{} { return f.notify }

func (f *fakeLaunchers) Drain() []core.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := f.events
	f.events = nil
	return ev
}

func (f *fakeLaunchers) StderrTail(task taskspec.TaskID, id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tails[tailKey(task, id)]
}

func runLaunchersLoop(t *testing.T, f *fakeCluster, l *fakeLaunchers, policy core.Policy, workers int) (LoopResult, []Snapshot) {
	t.Helper()
	g, err := taskspec.ParseSpec(taskspec.Worker, "1c,256m")
	require.NoError(t, err)
	g.Instances = workers
	var mu sync.Mutex
	var snaps []Snapshot
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := Loop(ctx, LoopConfig{
		Job:       taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
		Policy:    policy,
		RM:        f,
		NM:        f,
		Launchers: l,
		Observe:   func(s Snapshot) { mu.Lock(); snaps = append(snaps, s); mu.Unlock() },
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			return &hadoopyarn.ContainerLaunchContextProto{}
		},
		Heartbeat:          5 * time.Millisecond,
		FastHeartbeat:      time.Millisecond,
		ContainerStopGrace: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	require.True(t, res.Unregistered)
	return res, snaps
}

var worker0, worker1 = taskspec.TaskID{Type: taskspec.Worker}, taskspec.TaskID{Type: taskspec.Worker, Index: 1}

// The decider's exit, as its launcher reports it, decides the job; the
// other worker is asked to end through its launcher first, and its
// container is stopped through the NodeManager only when it outlives
// ContainerStopGrace.
func TestLoopStopsGracefullyThenHard(t *testing.T) {
	f := &fakeCluster{hold: true}
	l := newFakeLaunchers(func(l *fakeLaunchers, task taskspec.TaskID) {
		l.push(core.TaskRegistered{Task: task, Host: "node", Port: 2222 + task.Index})
		if task == worker1 {
			l.push(core.ContainerCompleted{ID: l.container(worker0), ExitStatus: 0})
		}
	})
	res, snaps := runLaunchersLoop(t, f, l, tensorflow.ChiefPolicy{StopTimeout: 5 * time.Second, WorkerGrace: -1}, 2)
	require.Equal(t, core.Succeeded, res.Finish.Status)
	require.Equal(t, "worker:0 succeeded; stopped worker:1 after it", res.Finish.Diagnostics)
	require.Equal(t, []taskspec.TaskID{worker1}, l.stops, "asked through the launcher first")
	require.Equal(t, 1, f.stopped, "then stopped through the NodeManager")
	require.True(t, l.stopAll)
	last := snaps[len(snaps)-1]
	require.NotNil(t, last.Finish)
	require.Equal(t, "node", last.Tasks[0].Host)
	require.Equal(t, 2222, last.Tasks[0].Port)
}

func TestLoopQuotesTheFailedTasksStderr(t *testing.T) {
	f := &fakeCluster{hold: true}
	l := newFakeLaunchers(func(l *fakeLaunchers, task taskspec.TaskID) {
		if task == worker1 {
			id := l.container(worker0)
			l.mu.Lock()
			l.tails[tailKey(worker0, id)] = []string{"Traceback (most recent call last):", `  File "train.py", line 3, in <module>`, "ValueError: boom", "  "}
			l.mu.Unlock()
			l.push(core.ContainerCompleted{ID: id, ExitStatus: 1})
		}
	})
	res, _ := runLaunchersLoop(t, f, l, success.AllSucceed{}, 2)
	require.Equal(t, core.Failed, res.Finish.Status)
	require.Regexp(t, `^worker:0 \(container \S+ on nm:1\) failed: exit code 1; `+
		`last stderr of worker:0: Traceback \(most recent call last\): \| File "train.py", line 3, in <module> \| ValueError: boom$`, res.Finish.Diagnostics)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_FAILED, f.finished.GetFinalApplicationStatus())
	require.Equal(t, res.Finish.Diagnostics, f.finished.GetDiagnostics())
}

func TestLoopFailsWhenTheRendezvousFails(t *testing.T) {
	f := &fakeCluster{hold: true}
	l := newFakeLaunchers(func(l *fakeLaunchers, task taskspec.TaskID) {
		l.push(core.RendezvousFailed{Reason: "not every task registered within 10m0s: missing worker:1"})
	})
	res, _ := runLaunchersLoop(t, f, l, success.AllSucceed{}, 2)
	require.Equal(t, core.Failed, res.Finish.Status)
	// worker:1 was still waiting for its container: the diagnostics say so.
	require.Equal(t, `rendezvous failed: not every task registered within 10m0s: missing worker:1; `+
		`worker:1 (1 vcores, 256 MiB, label "") never got a container`, res.Finish.Diagnostics)
}

// A PreemptionMessage naming worker:0's container reaches its launcher as
// a warning whose deadline is the scheduler's wait after the allocate call
// before the one it answered; worker:1's too, as the cluster restarts with
// worker:0.
func TestLoopPassesPreemptionWarnings(t *testing.T) {
	f := &fakeCluster{hold: true}
	var preempted string
	l := newFakeLaunchers(func(l *fakeLaunchers, task taskspec.TaskID) {
		if task == worker1 {
			preempted = l.container(worker0)
			f.mu.Lock()
			f.preempt = f.started[0]
			f.mu.Unlock()
		}
	})
	l.onWarn = func(l *fakeLaunchers) {
		l.push(core.ContainerCompleted{ID: l.container(worker0)}, core.ContainerCompleted{ID: l.container(worker1)})
	}
	g, err := taskspec.ParseSpec(taskspec.Worker, "1c,256m")
	require.NoError(t, err)
	g.Instances = 2
	var logs []string
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := Loop(ctx, LoopConfig{
		Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
		RM:  f, NM: f, Launchers: l,
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			return &hadoopyarn.ContainerLaunchContextProto{}
		},
		PreemptionWait: 40 * time.Second,
		Heartbeat:      5 * time.Millisecond, FastHeartbeat: time.Millisecond, ContainerStopGrace: 50 * time.Millisecond,
		Logf: func(format string, args ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			mu.Unlock()
		},
	})
	require.NoError(t, err)
	require.Equal(t, core.Succeeded, res.Finish.Status)
	require.Len(t, l.warnings, 2, "%v", logs)
	require.True(t, strings.HasPrefix(l.warnings[1], "worker:1 "), l.warnings[1])
	require.True(t, strings.HasSuffix(l.warnings[1], "YARN's scheduler will preempt worker:0's container "+preempted+" (negotiable contract: it wants resources back); the cluster restarts with it"), l.warnings[1])
	var task, id, reason string
	var deadlineMS int64
	_, err = fmt.Sscanf(l.warnings[0], "%s %s %d", &task, &id, &deadlineMS)
	require.NoError(t, err)
	require.Equal(t, "worker:0", task)
	require.Equal(t, preempted, id)
	reason = strings.SplitN(l.warnings[0], " ", 4)[3]
	require.Equal(t, "YARN's scheduler will preempt container "+preempted+" (negotiable contract: it wants resources back)", reason)
	// The deadline counts from the allocate call before the one whose
	// answer announced it.
	require.Greater(t, f.preemptedIn, 0)
	// (The fake notes the call's time a moment after the loop did.)
	// Not before the call ahead of that one (under load the two times were 6 ms apart).
	require.LessOrEqual(t, deadlineMS, f.allocateSent[f.preemptedIn-1].Add(40*time.Second).UnixMilli())
	if f.preemptedIn >= 2 {
		require.Greater(t, deadlineMS, f.allocateSent[f.preemptedIn-2].Add(40*time.Second).UnixMilli())
	}
	require.Contains(t, strings.Join(logs, "\n"), "the ResourceManager will preempt "+preempted+" (worker:0, running; negotiable contract)")
}

func TestPreemptionWaitFromTheConfiguration(t *testing.T) {
	conf := func(kv ...string) *hadoopconf.Config {
		c := hadoopconf.New(nil)
		for i := 0; i < len(kv); i += 2 {
			c.Set(kv[i], kv[i+1])
		}
		return c
	}
	require.Equal(t, 15*time.Second, PreemptionWait(conf()), "Hadoop's default")
	require.Equal(t, 5*time.Second, PreemptionWait(conf(ConfCapacityPreemptionWait, "5000")))
	require.Equal(t, 15*time.Second, PreemptionWait(conf(ConfCapacityPreemptionWait, "soon")))
	require.Equal(t, 15*time.Second, PreemptionWait(conf(ConfCapacityPreemptionWait, "-1")))
	fair := "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
	require.Equal(t, 15*time.Second, PreemptionWait(conf(ConfSchedulerClass, fair, ConfCapacityPreemptionWait, "5000")))
	require.Equal(t, 7*time.Second, PreemptionWait(conf(ConfSchedulerClass, fair, ConfFairPreemptionWait, "7000")))
}
