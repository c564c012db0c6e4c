package tensorflow

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/containerexit"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

func worker(i int) taskspec.TaskID { return taskspec.TaskID{Type: taskspec.Worker, Index: i} }

// cid and node name container n as the AM's core tests do.
func cid(n int) string  { return fmt.Sprintf("container_1700000000000_0001_01_%06d", n) }
func node(n int) string { return fmt.Sprintf("node%d:8041", n%3) }

var (
	chief0 = taskspec.TaskID{Type: taskspec.Chief}
	eval0  = taskspec.TaskID{Type: taskspec.Evaluator}
	tb0    = taskspec.TaskID{Type: taskspec.TensorBoard}
	t0     = time.Unix(1_700_000_000, 0)
)

func psTask(i int) taskspec.TaskID { return taskspec.TaskID{Type: taskspec.PS, Index: i} }

// viewBuilder builds Views the way the machine would: every task starts
// running in container n (its position, from 1), and ends record the same
// Failure line the machine writes.
type viewBuilder struct {
	v         success.View
	ends      uint64
	container map[taskspec.TaskID]int // the container each task started in
}

func tfView(ids ...taskspec.TaskID) *viewBuilder {
	b := &viewBuilder{v: success.View{Now: t0}, container: map[taskspec.TaskID]int{}}
	for i, id := range ids {
		b.v.Tasks = append(b.v.Tasks, success.TaskStatus{Task: id, State: success.TaskRunning})
		b.container[id] = i + 1
	}
	return b
}

func (b *viewBuilder) task(id taskspec.TaskID) *success.TaskStatus {
	for i := range b.v.Tasks {
		if b.v.Tasks[i].Task == id {
			return &b.v.Tasks[i]
		}
	}
	panic("no task " + id.String())
}

// at moves the clock.
func (b *viewBuilder) at(d time.Duration) *viewBuilder {
	b.v.Now = t0.Add(d)
	return b
}

// exit ends a task's container with status (and YARN's diagnostics).
func (b *viewBuilder) exit(id taskspec.TaskID, status int32, diagnostics ...string) *viewBuilder {
	t := b.task(id)
	diag := ""
	if len(diagnostics) > 0 {
		diag = diagnostics[0]
	}
	b.ends++
	t.ExitStatus, t.EndedAt, t.EndOrder = status, b.v.Now, b.ends
	switch {
	case t.StopRequested:
		t.State = success.TaskStopped
	case status == containerexit.Success:
		t.State = success.TaskSucceeded
	default:
		t.State = success.TaskFailed
		why := "failed: " + containerexit.Describe(status)
		if line, _, _ := strings.Cut(diag, "\n"); status < 0 && line != "" {
			why += ": " + line
		}
		t.Failure = fmt.Sprintf("%s (container %s on %s) %s", t.Task, cid(b.container[id]), node(b.container[id]), why)
	}
	return b
}

// stopping marks tasks as being stopped by the AM.
func (b *viewBuilder) stopping(ids ...taskspec.TaskID) *viewBuilder {
	for _, id := range ids {
		t := b.task(id)
		t.StopRequested, t.StopRequestedAt = true, b.v.Now
	}
	return b
}

// stopped stops tasks and reports their containers killed by the AM.
func (b *viewBuilder) stopped(ids ...taskspec.TaskID) *viewBuilder {
	for _, id := range ids {
		b.stopping(id).exit(id, containerexit.KilledByAppMaster)
	}
	return b
}

// pending puts tasks back to waiting for a container.
func (b *viewBuilder) pending(ids ...taskspec.TaskID) *viewBuilder {
	for _, id := range ids {
		*b.task(id) = success.TaskStatus{Task: id}
	}
	return b
}

// restarting puts tasks back to waiting for the container of their first
// restart: on node only (an in-place replacement), or anywhere ("").
func (b *viewBuilder) restarting(node string, ids ...taskspec.TaskID) *viewBuilder {
	for _, id := range ids {
		*b.task(id) = success.TaskStatus{Task: id, Attempt: 1, PlaceOn: node}
	}
	return b
}

func (b *viewBuilder) view() success.View {
	return success.View{Now: b.v.Now, Tasks: append([]success.TaskStatus(nil), b.v.Tasks...)}
}

// failure is the Failure line the builder (and the machine) write for the
// task in container n.
func failure(id taskspec.TaskID, n int, why string) string {
	return fmt.Sprintf("%s (container %s on %s) failed: %s", id, cid(n), node(n), why)
}

func pss() *viewBuilder {
	return tfView(chief0, worker(0), worker(1), psTask(0), psTask(1), eval0)
}

func TestChiefPolicy(t *testing.T) {
	allButChief := []taskspec.TaskID{worker(0), worker(1), psTask(0), psTask(1), eval0}
	for _, tc := range []struct {
		name   string
		policy ChiefPolicy
		view   success.View
		want   success.Verdict
	}{
		{
			name: "MWMS: the workers and the chief exit 0",
			view: tfView(chief0, worker(0), worker(1)).exit(worker(1), 0).exit(worker(0), 0).exit(chief0, 0).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded"},
		},
		{
			// Before: the workers were stopped at once, and reported
			// "stopped" although they were about to exit 0.
			name: "MWMS: the chief exits 0 first, the workers get the worker grace",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).view(),
			want: success.Verdict{},
		},
		{
			name: "MWMS: the workers exit 0 a second after the chief: all succeeded, nothing stopped",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).at(time.Second).exit(worker(0), 0).exit(worker(1), 0).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded"},
		},
		{
			name: "MWMS: one worker done, one still running just before the grace ends",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).at(time.Second).exit(worker(0), 0).
				at(taskspec.DefaultWorkerGrace - time.Millisecond).view(),
			want: success.Verdict{},
		},
		{
			name: "MWMS: a stuck worker is stopped when the grace runs out",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).at(time.Second).exit(worker(0), 0).
				at(taskspec.DefaultWorkerGrace).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{worker(1)}},
		},
		{
			name: "MWMS: once the stuck worker's stop landed, the job succeeded",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).at(time.Second).exit(worker(0), 0).
				at(11 * time.Second).stopped(worker(1)).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded; stopped worker:1 when the 10s worker grace ran out"},
		},
		{
			name: "MWMS: the stuck worker's stop is waited for StopTimeout from the grace's end",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).stopping(worker(1)).
				at(taskspec.DefaultWorkerGrace + taskspec.TFStopTimeout - time.Second).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{worker(0), worker(1)}},
		},
		{
			name: "MWMS: and no longer, 25 s after the chief's end",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).at(3*time.Second).exit(worker(0), 0).stopping(worker(1)).
				at(taskspec.DefaultWorkerGrace + taskspec.TFStopTimeout).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded; stopped worker:1 when the 10s worker grace ran out; " +
				"gave up after 15s waiting for worker:1 to end"},
		},
		{
			name: "MWMS: a worker failing in the grace is named, the job is still the chief's",
			view: tfView(chief0, worker(0), worker(1)).exit(chief0, 0).at(time.Second).exit(worker(0), 1).exit(worker(1), 0).view(),
			want: success.Verdict{Outcome: success.JobSucceeded,
				Diagnostics: "chief:0 succeeded; " + failure(worker(0), 2, "exit code 1") + " (ignored: after chief:0 succeeded)"},
		},
		{
			name: "MWMS: the evaluator is stopped at once, the workers are not",
			view: tfView(chief0, worker(0), worker(1), eval0).exit(chief0, 0).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{eval0}},
		},
		{
			name: "MWMS: the evaluator stopped, the workers done in the grace",
			view: tfView(chief0, worker(0), worker(1), eval0).exit(chief0, 0).stopped(eval0).at(2*time.Second).exit(worker(1), 0).exit(worker(0), 0).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded; stopped evaluator:0 after it"},
		},
		{
			name:   "MWMS: a negative WorkerGrace stops the workers at once, as before",
			policy: ChiefPolicy{WorkerGrace: -1},
			view:   tfView(chief0, worker(0), worker(1)).exit(chief0, 0).view(),
			want:   success.Verdict{Stop: []taskspec.TaskID{worker(0), worker(1)}},
		},
		{
			name:   "MWMS: without a grace, the stopped workers are no grace's",
			policy: ChiefPolicy{WorkerGrace: -1},
			view:   tfView(chief0, worker(0), worker(1)).exit(chief0, 0).stopped(worker(0), worker(1)).view(),
			want:   success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded; stopped worker:0, worker:1 after it"},
		},
		{
			name:   "MWMS: a shorter WorkerGrace",
			policy: ChiefPolicy{WorkerGrace: 2 * time.Second},
			view:   tfView(chief0, worker(0), worker(1)).exit(chief0, 0).at(2 * time.Second).view(),
			want:   success.Verdict{Stop: []taskspec.TaskID{worker(0), worker(1)}},
		},
		{
			name: "workers only: worker:0 decides, the others get the grace",
			view: tfView(worker(0), worker(1)).exit(worker(0), 0).view(),
			want: success.Verdict{},
		},
		{
			name: "PSS: the chief exits 0, everything still running is stopped",
			view: pss().exit(chief0, 0).view(),
			want: success.Verdict{Stop: allButChief},
		},
		{
			name: "PSS: while the stops land, the live rest is listed again",
			view: pss().exit(chief0, 0).stopping(allButChief...).stopped(worker(1), psTask(0)).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{worker(0), psTask(1), eval0}},
		},
		{
			name: "PSS: once the stopped tasks ended, the job succeeded",
			view: pss().exit(chief0, 0).stopped(allButChief...).view(),
			want: success.Verdict{Outcome: success.JobSucceeded,
				Diagnostics: "chief:0 succeeded; stopped worker:0, worker:1, ps:0, ps:1, evaluator:0 after it"},
		},
		{
			name: "PSS: a worker that ended by itself is not in the stop list",
			view: pss().exit(worker(1), 0).exit(chief0, 0).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{worker(0), psTask(0), psTask(1), eval0}},
		},
		{
			name: "PSS: a stop that never lands is waited for at most StopTimeout",
			view: pss().exit(chief0, 0).stopping(allButChief...).stopped(worker(0), worker(1), psTask(1), eval0).
				at(taskspec.TFStopTimeout).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded; " +
				"stopped worker:0, worker:1, ps:0, ps:1, evaluator:0 after it; gave up after 15s waiting for ps:0 to end"},
		},
		{
			name: "PSS: just before StopTimeout it still waits",
			view: pss().exit(chief0, 0).stopping(allButChief...).stopped(worker(0), worker(1), psTask(1), eval0).
				at(taskspec.TFStopTimeout - time.Second).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{psTask(0)}},
		},
		{
			name:   "PSS: a shorter StopTimeout",
			policy: ChiefPolicy{StopTimeout: 5 * time.Second},
			view:   tfView(chief0, psTask(0)).exit(chief0, 0).stopping(psTask(0)).at(5 * time.Second).view(),
			want: success.Verdict{Outcome: success.JobSucceeded,
				Diagnostics: "chief:0 succeeded; stopped ps:0 after it; gave up after 5s waiting for ps:0 to end"},
		},
		{
			name:   "PSS: a negative StopTimeout finishes at once, the machine stops the rest",
			policy: ChiefPolicy{StopTimeout: -1},
			view:   tfView(chief0, worker(0), psTask(0)).exit(chief0, 0).view(),
			want:   success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded; stopped worker:0, ps:0 after it"},
		},
		{
			name: "PSS: tasks still waiting for a container are dropped",
			view: tfView(chief0, worker(0), worker(1), psTask(0)).pending(worker(1)).exit(chief0, 0).stopped(worker(0), psTask(0)).view(),
			want: success.Verdict{Outcome: success.JobSucceeded,
				Diagnostics: "chief:0 succeeded; stopped worker:0, ps:0 after it; worker:1 never got a container"},
		},
		{
			// They ran before: "never got a container" would mislead.
			name: "PSS: tasks waiting for a restart's container are named as restarting, in place or not",
			view: tfView(chief0, worker(0), worker(1), worker(2), psTask(0), eval0, tb0).pending(worker(2)).
				restarting("node1", worker(1)).restarting("", eval0, tb0).exit(chief0, 0).stopped(worker(0), psTask(0)).view(),
			want: success.Verdict{Outcome: success.JobSucceeded,
				Diagnostics: "chief:0 succeeded; stopped worker:0, ps:0 after it; worker:2 never got a container; " +
					"worker:1 was still being replaced on node1: its attempt 1 had no container there yet; " +
					"evaluator:0 was still restarting: its attempt 1 had no container yet; " +
					"tensorboard:0 was still restarting: its attempt 1 had no container yet"},
		},
		{
			// Before: worker:1 and the ps were stopped at once, killing
			// worker:1 mid-training. The ps stays up with it: worker:1
			// reads the global step that tells it to stop there.
			name: "TF1 between-graph: worker:0 decides, worker:1 may finish, the ps stays up for it",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).view(),
			want: success.Verdict{},
		},
		{
			name: "TF1 between-graph: worker:1 ends in the grace, the ps is stopped",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).at(3*time.Second).exit(worker(1), 0).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{psTask(0)}},
		},
		{
			name: "TF1 between-graph: then it succeeds, worker:1 succeeded",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).at(3*time.Second).exit(worker(1), 0).stopped(psTask(0)).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "worker:0 succeeded; stopped ps:0 after it"},
		},
		{
			name: "TF1 between-graph: the ps stop is waited for StopTimeout from the workers' end",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).at(3*time.Second).exit(worker(1), 0).stopping(psTask(0)).
				at(3*time.Second + taskspec.TFStopTimeout - time.Millisecond).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{psTask(0)}},
		},
		{
			name: "TF1 between-graph: and no longer",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).at(3*time.Second).exit(worker(1), 0).stopping(psTask(0)).
				at(3*time.Second + taskspec.TFStopTimeout).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "worker:0 succeeded; stopped ps:0 after it; gave up after 15s waiting for ps:0 to end"},
		},
		{
			name: "TF1 between-graph: worker:1 still training when the grace runs out is stopped with the ps",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).at(taskspec.DefaultWorkerGrace).view(),
			want: success.Verdict{Stop: []taskspec.TaskID{worker(1), psTask(0)}},
		},
		{
			name: "TF1 between-graph: then it succeeds",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).at(taskspec.DefaultWorkerGrace).stopped(worker(1), psTask(0)).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "worker:0 succeeded; stopped ps:0 after it; stopped worker:1 when the 10s worker grace ran out"},
		},
		{
			name: "TF1 between-graph: worker:1 failing without its ps is named, the job is worker:0's",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(0), 0).at(time.Second).exit(worker(1), 1).stopped(psTask(0)).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "worker:0 succeeded; stopped ps:0 after it; " +
				failure(worker(1), 2, "exit code 1") + " (ignored: after worker:0 succeeded)"},
		},
		{
			name: "TF1 between-graph: another worker exiting 0 decides nothing",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(1), 0).view(),
			want: success.Verdict{},
		},
		{
			name: "the chief fails",
			view: pss().exit(chief0, 1).view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(chief0, 1, "exit code 1")},
		},
		{
			name: "the chief is killed by YARN",
			view: pss().exit(chief0, containerexit.KilledExceededPMem, "Container is running beyond physical memory limits.\n\tat java...").view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(chief0, 1,
				"killed for exceeding its physical memory limit; ask for more memory (exit status -104): Container is running beyond physical memory limits.")},
		},
		{
			name: "worker:0 decides without a chief, and fails",
			view: tfView(worker(0), worker(1), psTask(0)).exit(worker(1), 0).exit(worker(0), 137).view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(worker(0), 1, "exit code 137 (SIGKILL)")},
		},
		{
			name: "a worker fails before the chief is done",
			view: pss().exit(worker(1), 2).view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(worker(1), 3, "exit code 2")},
		},
		{
			name: "failures are named in the order they happened",
			view: pss().exit(worker(1), 2).exit(chief0, 1).view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(worker(1), 3, "exit code 2") + "; " + failure(chief0, 1, "exit code 1")},
		},
		{
			name: "a worker that failed before the chief succeeded still fails the job",
			view: pss().exit(worker(1), 2).exit(chief0, 0).view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(worker(1), 3, "exit code 2")},
		},
		{
			name: "a worker failing after the chief succeeded is ignored",
			view: tfView(chief0, worker(0)).exit(chief0, 0).exit(worker(0), 1).view(),
			want: success.Verdict{Outcome: success.JobSucceeded,
				Diagnostics: "chief:0 succeeded; " + failure(worker(0), 2, "exit code 1") + " (ignored: after chief:0 succeeded)"},
		},
		{
			name: "a ps lost with its node",
			view: pss().exit(psTask(1), containerexit.Aborted, "Container released on a *lost* node").view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(psTask(1), 5,
				"aborted by YARN: the container was released or its node was lost (exit status -100): Container released on a *lost* node")},
		},
		{
			name: "a ps preempted",
			view: pss().exit(psTask(0), containerexit.Preempted, "Container preempted by scheduler").view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(psTask(0), 4,
				"preempted by the scheduler (exit status -102): Container preempted by scheduler")},
		},
		{
			name: "a ps exiting 0 is no failure",
			view: pss().exit(psTask(0), 0).view(),
			want: success.Verdict{},
		},
		{
			name: "the evaluator fails: the job goes on",
			view: pss().exit(eval0, 1).view(),
			want: success.Verdict{},
		},
		{
			name: "the evaluator's failure is recorded when the chief succeeds",
			view: pss().exit(eval0, 1).exit(chief0, 0).stopped(worker(0), worker(1), psTask(0), psTask(1)).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "chief:0 succeeded; stopped worker:0, worker:1, ps:0, ps:1 after it; " +
				failure(eval0, 6, "exit code 1") + " (ignored: evaluator is a side-car)"},
		},
		{
			name: "the evaluator's failure is recorded when the chief fails",
			view: pss().exit(eval0, 1).exit(chief0, 3).view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: failure(chief0, 1, "exit code 3") + "; " +
				failure(eval0, 6, "exit code 1") + " (ignored: evaluator is a side-car)"},
		},
		{
			name: "tensorboard fails: the job goes on",
			view: tfView(chief0, worker(0), tb0).exit(tb0, containerexit.KilledExceededPMem).view(),
			want: success.Verdict{},
		},
		{
			name: "stopped tasks are no failures, whatever their exit status",
			view: pss().stopping(psTask(0), eval0).exit(psTask(0), 143).exit(eval0, containerexit.KilledByAppMaster).view(),
			want: success.Verdict{},
		},
		{
			name: "a stopped decider can no longer succeed",
			view: tfView(chief0, worker(0)).stopped(chief0).view(),
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: "chief:0 was stopped before it succeeded"},
		},
		{
			name: "a decider waiting for a container decides nothing",
			view: tfView(chief0, worker(0)).pending(chief0).exit(worker(0), 0).view(),
			want: success.Verdict{},
		},
		{
			name: "without chief or worker, every task must succeed",
			view: tfView(eval0, tb0).exit(eval0, 0).exit(tb0, 0).view(),
			want: success.Verdict{Outcome: success.JobSucceeded, Diagnostics: "all 2 tasks succeeded"},
		},
		{
			name: "a failure without a Failure line is still named",
			view: success.View{Tasks: []success.TaskStatus{{Task: chief0, State: success.TaskFailed, ExitStatus: containerexit.Preempted}}},
			want: success.Verdict{Outcome: success.JobFailed, Diagnostics: "chief:0 failed: preempted by the scheduler (exit status -102)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := success.View{Now: tc.view.Now, Tasks: append([]success.TaskStatus(nil), tc.view.Tasks...)}
			got := tc.policy.Verdict(tc.view)
			require.Equal(t, tc.want, got)
			require.Equal(t, got, tc.policy.Verdict(tc.view), "the same success.View, the same success.Verdict")
			require.Equal(t, before, tc.view, "the success.View is left alone")
		})
	}
}

func TestDecider(t *testing.T) {
	d, ok := deciderIn(tfView(worker(0), chief0).view())
	require.True(t, ok)
	require.Equal(t, chief0, d.Task)
	d, ok = deciderIn(tfView(psTask(0), worker(1), worker(0)).view())
	require.True(t, ok)
	require.Equal(t, worker(0), d.Task)
	_, ok = deciderIn(tfView(eval0).view())
	require.False(t, ok)
}
