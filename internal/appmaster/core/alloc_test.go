package core

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

var at0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

const offerDefault = "the cluster offers queue default on nodes without a label: 2 nodes, at most 8192 MiB and 8 vcores free on one node after the ApplicationMaster's container"

func TestAllocDeadline(t *testing.T) {
	w8g := taskspec.Resources{VCores: 1, MemoryMiB: 8192}
	gpu2 := taskspec.Resources{VCores: 1, MemoryMiB: 1024, GPUs: 2}
	offers := map[string]string{"": offerDefault, "gpu": "the cluster offers queue ml-gpu on nodes labelled gpu: 1 node, 2 GPUs in all."}
	type want struct {
		status FinalStatus // 0: still running
		diag   string
	}
	tests := []struct {
		name    string
		job     taskspec.Job
		policy  Policy
		timeout time.Duration
		alloc   []Container // allocated (and started) right after registration
		at      time.Duration
		want    want
	}{
		{
			name: "nothing allocated, before the deadline",
			job:  taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 2, w8g)}},
			at:   taskspec.DefaultAllocTimeout - time.Millisecond,
		},
		{
			name: "nothing allocated, at the default deadline",
			job:  taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 2, w8g)}},
			at:   taskspec.DefaultAllocTimeout,
			want: want{Failed, `worker:0, worker:1 (1 vcores, 8192 MiB, label "") were not allocated within 5m0s: ` + offerDefault + `; ask for less or raise --alloc-timeout`},
		},
		{
			name:  "one of three allocated: the other two are named, not the running one",
			job:   taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 3, w8g)}},
			alloc: []Container{ctr(1, 1)},
			at:    taskspec.DefaultAllocTimeout + time.Second,
			want:  want{Failed, `worker:1, worker:2 (1 vcores, 8192 MiB, label "") were not allocated within 5m0s: ` + offerDefault + `; ask for less or raise --alloc-timeout`},
		},
		{
			name:  "everything allocated: no deadline applies",
			job:   taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 2, small)}},
			alloc: []Container{ctr(1, 1), ctr(2, 1)},
			at:    time.Hour,
		},
		{
			name:    "a short timeout, GPUs and a label, two groups, no offer for the label",
			job:     taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), labelled(grp(taskspec.Worker, 3, gpu2), "gpu")}, NodeLabel: "cpu"},
			timeout: 20 * time.Second,
			alloc:   []Container{ctr(2, 2)},
			at:      20 * time.Second,
			want: want{Failed, `chief:0 (1 vcores, 256 MiB, label "cpu") was not allocated within 20s; ` +
				`worker:1, worker:2 (1 vcores, 1024 MiB, 2 GPUs, label "gpu") were not allocated within 20s: the cluster offers queue ml-gpu on nodes labelled gpu: 1 node, 2 GPUs in all; ask for less or raise --alloc-timeout`},
		},
		{
			name:    "no deadline",
			job:     taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 1, w8g)}},
			timeout: -1,
			at:      24 * time.Hour,
		},
		{
			name:   "an unallocated evaluator is given up; the TensorFlow job runs on",
			job:    taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), grp(taskspec.Evaluator, 1, w8g)}},
			policy: ChiefPolicy{},
			alloc:  []Container{ctr(1, 1)},
			at:     taskspec.DefaultAllocTimeout,
		},
		{
			name:  "an unallocated evaluator fails a job where every task must succeed",
			job:   taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 1, small), grp(taskspec.Evaluator, 1, w8g)}},
			alloc: []Container{ctr(1, 1)},
			at:    taskspec.DefaultAllocTimeout,
			want:  want{Failed, `evaluator:0 (1 vcores, 8192 MiB, label "") was not allocated a container within 5m0s`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.job.Command = "true"
			m, err := New(Config{Job: tc.job, Policy: tc.policy, AllocTimeout: tc.timeout, ClusterOffers: offers})
			require.NoError(t, err)
			step(m, Tick{Now: at0}, Registered{})
			for _, c := range tc.alloc {
				rd := step(m, Allocated{Containers: []Container{c}}, ContainerStarted{ID: c.ID})
				require.Len(t, rd.Launch, 1)
			}
			step(m, Tick{Now: at0.Add(tc.at / 2)})
			rd := step(m, Tick{Now: at0.Add(tc.at)})
			if tc.want.status == 0 {
				require.Nil(t, rd.Finish, "%+v", rd.Finish)
				require.Equal(t, PhaseRunning, m.Phase())
				return
			}
			require.NotNil(t, rd.Finish)
			require.Equal(t, Finish{Status: tc.want.status, Diagnostics: tc.want.diag}, *rd.Finish)
			require.Len(t, rd.Stop, len(tc.alloc), "what was allocated is stopped")
		})
	}
}

func labelled(g taskspec.TaskGroup, label string) taskspec.TaskGroup {
	g.NodeLabel = label
	return g
}

// What the machine does with a side-car it gave up on.
func TestAllocDeadlineGivesUpSideCars(t *testing.T) {
	m, err := New(Config{Job: taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), grp(taskspec.Evaluator, 1, big)}}, Policy: ChiefPolicy{WorkerGrace: -1}})
	require.NoError(t, err)
	step(m, Tick{Now: at0}, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)})
	rd := step(m, Tick{Now: at0.Add(taskspec.DefaultAllocTimeout)})
	require.Nil(t, rd.Finish)
	require.Equal(t, []Ask{{TaskType: taskspec.Evaluator, AllocationRequestID: 2, Priority: 2, Resource: big, Count: 0}}, rd.Asks, "the evaluator's ask is withdrawn")
	ev, _ := m.Task(taskspec.TaskID{Type: taskspec.Evaluator})
	require.Equal(t, TaskFailed, ev.State)
	require.Equal(t, `evaluator:0 (4 vcores, 8192 MiB, 1 GPUs, label "") was not allocated a container within 5m0s`, ev.Failure)
	// A container that comes late is given back.
	rd = step(m, Allocated{Containers: []Container{ctr(2, 2)}})
	require.Equal(t, []string{cid(2)}, rd.Release)
	rd = step(m, ContainerCompleted{ID: cid(1)})
	require.Equal(t, Succeeded, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "evaluator:0 (4 vcores, 8192 MiB, 1 GPUs, label \"\") was not allocated a container within 5m0s (ignored: evaluator is a side-car)")
}

func TestAllocDeadlineClockStartsAtTheFirstTick(t *testing.T) {
	// Registered before any Tick: the wait starts with the first one, not
	// at the zero time (which would be decades late).
	m := newMachine(t, nil, grp(taskspec.Worker, 1, small))
	step(m, Registered{})
	rd := step(m, Tick{Now: at0})
	require.Nil(t, rd.Finish)
	rd = step(m, Tick{Now: at0.Add(taskspec.DefaultAllocTimeout - time.Second)})
	require.Nil(t, rd.Finish)
	rd = step(m, Tick{Now: at0.Add(taskspec.DefaultAllocTimeout)})
	require.NotNil(t, rd.Finish)
	require.Equal(t, Failed, rd.Finish.Status)
}

func TestAllocDeadlineCountsFromARestart(t *testing.T) {
	m, err := New(Config{Job: taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 1, small)}}, Policy: restartOnce, AllocTimeout: time.Minute})
	require.NoError(t, err)
	step(m, Tick{Now: at0}, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)})
	rd := step(m, Tick{Now: at0.Add(10 * time.Minute)}, ContainerCompleted{ID: cid(1), ExitStatus: 1})
	require.Nil(t, rd.Finish, "restarted")
	rd = step(m, Tick{Now: at0.Add(10*time.Minute + 59*time.Second)})
	require.Nil(t, rd.Finish)
	rd = step(m, Tick{Now: at0.Add(11 * time.Minute)})
	require.NotNil(t, rd.Finish)
	require.Equal(t, `worker:0 (1 vcores, 256 MiB, label "") was not allocated within 1m0s; ask for less or raise --alloc-timeout`, rd.Finish.Diagnostics)
}

func TestRendezvousFailureNamesTheUnallocated(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 2, small))
	step(m, Tick{Now: at0}, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)})
	rd := step(m, RendezvousFailed{Reason: "not every task registered within 10m0s: missing worker:1"})
	require.Equal(t, `rendezvous failed: not every task registered within 10m0s: missing worker:1; worker:1 (1 vcores, 256 MiB, label "") never got a container`, rd.Finish.Diagnostics)
}

func TestRequestRefused(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 1, small))
	rd := step(m, Registered{})
	rd = step(m, RequestRefused{Asks: rd.Asks, Exception: "org.apache.hadoop.yarn.exceptions.InvalidLabelResourceRequestException", Message: "Invalid label resource request, cluster do not contain , label= nosuchlabel"})
	require.Equal(t, &Finish{Status: Failed, Diagnostics: `the ResourceManager refused the worker request: label "nosuchlabel" does not exist on the cluster (InvalidLabelResourceRequestException)`}, rd.Finish)
}

func TestRefusalDiagnostics(t *testing.T) {
	const label = "org.apache.hadoop.yarn.exceptions.InvalidLabelResourceRequestException"
	const res = "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"
	ask := func(typ taskspec.TaskType, label string, n int) Ask {
		return Ask{TaskType: typ, NodeLabel: label, Count: n, Resource: small}
	}
	tests := []struct {
		name string
		ev   RequestRefused
		want string
	}{
		{
			name: "a label the cluster lacks, on one group",
			ev: RequestRefused{Asks: []Ask{ask(taskspec.Chief, "", 1), ask(taskspec.Worker, "nosuchlabel", 2)}, Exception: label,
				Message: "Invalid label resource request, cluster do not contain , label= nosuchlabel"},
			want: `the ResourceManager refused the worker request: label "nosuchlabel" does not exist on the cluster (InvalidLabelResourceRequestException)`,
		},
		{
			name: "a label the queue may not use, on two groups",
			ev: RequestRefused{Asks: []Ask{ask(taskspec.Chief, "gpu", 1), ask(taskspec.Worker, "gpu", 2), ask(taskspec.PS, "", 1)}, Exception: label,
				Message: "Invalid resource request, queue=default doesn't have permission to access all labels in resource request. labelExpression of resource request=gpu. Queue labels="},
			want: `the ResourceManager refused the chief and worker requests: queue default may not use label "gpu" (labels it may use: none) (InvalidLabelResourceRequestException)`,
		},
		{
			name: "an unknown message is kept, whitespace collapsed; the groups asking are named",
			ev: RequestRefused{Asks: []Ask{ask(taskspec.Worker, "", 2), ask(taskspec.PS, "", 0)}, Exception: res,
				Message: "Invalid resource request! Cannot allocate containers as requested resource is greater than\n  maximum allowed allocation."},
			want: `the ResourceManager refused the worker request: Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed allocation. (InvalidResourceRequestException)`,
		},
		{
			name: "no asks, no message",
			ev:   RequestRefused{Exception: "InvalidResourceBlacklistRequestException"},
			want: `the ResourceManager refused the resource request: no reason given (InvalidResourceBlacklistRequestException)`,
		},
		{
			name: "three groups",
			ev:   RequestRefused{Asks: []Ask{ask(taskspec.Chief, "", 1), ask(taskspec.Worker, "", 2), ask(taskspec.PS, "", 1)}, Exception: res, Message: strings.Repeat("x", 600)},
			want: `the ResourceManager refused the chief, worker and ps requests: ` + strings.Repeat("x", 500) + `… (InvalidResourceRequestException)`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, RefusalDiagnostics(tc.ev))
		})
	}
}

func TestShape(t *testing.T) {
	require.Equal(t, `1 vcores, 8192 MiB, label ""`, Shape(taskspec.Resources{VCores: 1, MemoryMiB: 8192}, ""))
	require.Equal(t, `4 vcores, 2048 MiB, 2 GPUs, label "gpu"`, Shape(taskspec.Resources{VCores: 4, MemoryMiB: 2048, GPUs: 2}, "gpu"))
}

// A task whose queue has a default node label (ml-gpu: gpu) and asks none
// waits on that label's nodes: what it waits for is said after WaitNotice,
// naming that label and its offer, and the deadline's diagnostics name it
// too, not the nodes without a label.
func TestWaitingNamesTheQueuesDefaultLabel(t *testing.T) {
	gpu1 := taskspec.Resources{VCores: 1, MemoryMiB: 1024, GPUs: 1}
	offers := map[string]string{"": "queue ml-gpu on nodes without a label: 1 node, the largest with 8 vcores, 8192 MiB, 2 GPUs",
		"gpu": "queue ml-gpu on nodes labelled gpu: 1 node, the largest with 8 vcores, 8192 MiB, 2 GPUs"}
	m, err := New(Config{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 1, gpu1)}}, ClusterOffers: offers, QueueDefaultLabel: "gpu", AllocTimeout: time.Minute})
	require.NoError(t, err)
	checkedStep(m, Tick{Now: at0})
	checkedStep(m, Registered{})
	require.Empty(t, m.Waiting(), "not yet: a healthy cluster allocates at once")
	checkedStep(m, Tick{Now: at0.Add(WaitNotice)})
	require.Equal(t, []string{`waiting for 1 worker container (1 vcores, 1024 MiB, 1 GPUs, label "gpu"): ` + offers["gpu"] + `; the job fails if it is not allocated within 1m0s (--alloc-timeout)`}, m.Waiting())
	checkedStep(m, Tick{Now: at0.Add(time.Minute)})
	rd := m.Ready()
	require.NotNil(t, rd.Finish)
	require.Equal(t, `worker:0 (1 vcores, 1024 MiB, 1 GPUs, label "gpu") was not allocated within 1m0s: `+offers["gpu"]+`; ask for less or raise --alloc-timeout`, rd.Finish.Diagnostics)
	require.NotContains(t, rd.Finish.Diagnostics, "without a label")
	require.Empty(t, m.Waiting(), "decided: nothing waits")
}
