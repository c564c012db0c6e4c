package localrun

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

func id(t taskspec.TaskType, i int) taskspec.TaskID { return taskspec.TaskID{Type: t, Index: i} }

func running(id taskspec.TaskID) TaskState { return TaskState{Task: id} }

func exited(id taskspec.TaskID, code int, order uint64) TaskState {
	return TaskState{Task: id, Ended: true, ExitCode: code, EndOrder: order, Failure: id.String() + " failed"}
}

func TestJudge(t *testing.T) {
	chief, w0, w1, ps, ev := id(taskspec.Chief, 0), id(taskspec.Worker, 0), id(taskspec.Worker, 1), id(taskspec.PS, 0), id(taskspec.Evaluator, 0)
	stopped := func(s TaskState) TaskState { s.Stopped = true; return s }
	cases := []struct {
		name  string
		tasks []TaskState
		want  Outcome
		diag  string
		stop  []taskspec.TaskID
	}{
		{"all running", []TaskState{running(chief), running(w0), running(ps)}, Undecided, "", nil},
		{"a worker exiting 0 decides nothing when there is a chief",
			[]TaskState{running(chief), exited(w0, 0, 1), running(ps)}, Undecided, "", nil},
		{"chief success stops the rest",
			[]TaskState{exited(chief, 0, 1), running(w0), running(ps), running(ev)}, Succeeded, "chief:0 succeeded; stopping worker:0, ps:0, evaluator:0 after it", []taskspec.TaskID{w0, ps, ev}},
		{"chief failure",
			[]TaskState{exited(chief, 2, 1), running(w0), running(ps)}, Failed, "chief:0 failed", []taskspec.TaskID{w0, ps}},
		{"worker failure before the chief fails the job",
			[]TaskState{running(chief), exited(w1, 3, 1), running(ps)}, Failed, "worker:1 failed", []taskspec.TaskID{chief, ps}},
		{"ps failure fails the job",
			[]TaskState{running(chief), running(w0), exited(ps, 1, 1)}, Failed, "ps:0 failed", []taskspec.TaskID{chief, w0}},
		{"failures after the chief's success do not count",
			[]TaskState{exited(chief, 0, 1), exited(w0, 1, 2), stopped(exited(ps, 143, 3))}, Succeeded, "chief:0 succeeded; stopped ps:0 after it; ignored: worker:0 failed (after chief:0 succeeded)", nil},
		{"a stopped ps is no failure",
			[]TaskState{running(chief), stopped(exited(ps, 143, 1))}, Undecided, "", nil},
		{"failures are listed in the order they happened",
			[]TaskState{running(chief), exited(w0, 1, 2), exited(w1, 1, 1)}, Failed, "worker:1 failed; worker:0 failed", []taskspec.TaskID{chief}},
		{"without a chief, worker 0 decides",
			[]TaskState{exited(w0, 0, 1), running(w1), running(ps)}, Succeeded, "worker:0 succeeded; stopping worker:1, ps:0 after it", []taskspec.TaskID{w1, ps}},
		{"without a chief, worker 1 finishing first decides nothing",
			[]TaskState{running(w0), exited(w1, 0, 1), running(ps)}, Undecided, "", nil},
		{"an evaluator failure is a side-car's: it does not decide",
			[]TaskState{running(chief), exited(ev, 1, 1)}, Undecided, "", nil},
		{"side-car failures are recorded once the job is decided",
			[]TaskState{exited(chief, 0, 2), exited(ev, 1, 1)}, Succeeded, "chief:0 succeeded; ignored: evaluator:0 failed (evaluator is a side-car)", nil},
		{"a stopped decider is no success",
			[]TaskState{stopped(exited(chief, 143, 1)), running(w0)}, Failed, "chief:0 was stopped before it succeeded", []taskspec.TaskID{w0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.tasks)
			require.Equal(t, c.want, v.Outcome)
			require.Equal(t, c.diag, v.Diagnostics)
			require.Equal(t, c.stop, v.Stop)
		})
	}
}

func TestJudgeIsStableOnceDecided(t *testing.T) {
	// The runner calls Judge after every end; whatever ends after the
	// decision must not change the outcome, only add to the diagnostics.
	chief, w0, ps := id(taskspec.Chief, 0), id(taskspec.Worker, 0), id(taskspec.PS, 0)
	first := Judge([]TaskState{exited(chief, 0, 1), running(w0), running(ps)})
	require.Equal(t, "chief:0 succeeded; stopping worker:0, ps:0 after it", first.Diagnostics)
	stoppedPS := exited(ps, 143, 3)
	stoppedPS.Stopped = true
	final := Judge([]TaskState{exited(chief, 0, 1), exited(w0, 1, 2), stoppedPS})
	require.Equal(t, first.Outcome, final.Outcome)
	require.Equal(t, "chief:0 succeeded; stopped ps:0 after it; ignored: worker:0 failed (after chief:0 succeeded)", final.Diagnostics)
	require.Empty(t, final.Stop)
}

func TestJudgeAll(t *testing.T) {
	w0, w1 := id(taskspec.Worker, 0), id(taskspec.Worker, 1)
	v := JudgeAll([]TaskState{exited(w0, 0, 1), running(w1)})
	require.Equal(t, Undecided, v.Outcome, "worker:0 decides nothing under the generic rule")
	v = JudgeAll([]TaskState{exited(w0, 0, 1), exited(w1, 0, 2)})
	require.Equal(t, Verdict{Outcome: Succeeded, Diagnostics: "all 2 tasks succeeded"}, v)
	v = JudgeAll([]TaskState{running(w0), exited(w1, 2, 1)})
	require.Equal(t, Verdict{Outcome: Failed, Diagnostics: "worker:1 failed", Stop: []taskspec.TaskID{w0}}, v)
}

func TestRuleForFollowsTheJobsShape(t *testing.T) {
	// The judge's identity is not comparable: tell them apart by a verdict
	// on which they differ (worker:0 done, worker:1 still running).
	decidesEarly := func(judge func([]TaskState) Verdict) bool {
		return judge([]TaskState{exited(id(taskspec.Worker, 0), 0, 1), running(id(taskspec.Worker, 1))}).Outcome != Undecided
	}
	workers := taskspec.Job{Tasks: []taskspec.TaskGroup{group(taskspec.Worker, 2)}, Command: "sh"}
	withPS := workers
	withPS.Tasks = append(withPS.Tasks, group(taskspec.PS, 1))
	script := taskspec.Job{Tasks: workers.Tasks, Script: "train.py"}
	for _, c := range []struct {
		name string
		rule taskspec.SuccessRule
		job  taskspec.Job
		tf   bool
	}{
		{"plain workers default to all", "", workers, false},
		{"ps makes a TensorFlow job", "", withPS, true},
		{"a script is a TensorFlow job", "", script, true},
		{"explicit chief", taskspec.SuccessChief, workers, true},
		{"explicit all", taskspec.SuccessAll, script, false},
	} {
		judge, err := ruleFor(c.rule, c.job)
		require.NoError(t, err, c.name)
		require.Equal(t, c.tf, decidesEarly(judge), c.name)
	}
	_, err := ruleFor("most", workers)
	require.EqualError(t, err, `localrun: unknown success rule "most"; expected chief or all`)
}
