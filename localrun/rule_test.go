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
		name   string
		tasks  []TaskState
		want   Outcome
		diag   string
		stop   []taskspec.TaskID
		linger []taskspec.TaskID
	}{
		{"all running", []TaskState{running(chief), running(w0), running(ps)}, Undecided, "", nil, nil},
		{"a worker exiting 0 decides nothing when there is a chief",
			[]TaskState{running(chief), exited(w0, 0, 1), running(ps)}, Undecided, "", nil, nil},
		{"chief success stops the rest",
			[]TaskState{exited(chief, 0, 1), running(w0), running(ps), running(ev)}, Succeeded, "chief:0 succeeded; stopping worker:0, ps:0, evaluator:0 after it", []taskspec.TaskID{w0, ps, ev}, nil},
		{"chief failure",
			[]TaskState{exited(chief, 2, 1), running(w0), running(ps)}, Failed, "chief:0 failed", []taskspec.TaskID{w0, ps}, nil},
		{"worker failure before the chief fails the job",
			[]TaskState{running(chief), exited(w1, 3, 1), running(ps)}, Failed, "worker:1 failed", []taskspec.TaskID{chief, ps}, nil},
		{"ps failure fails the job",
			[]TaskState{running(chief), running(w0), exited(ps, 1, 1)}, Failed, "ps:0 failed", []taskspec.TaskID{chief, w0}, nil},
		{"failures after the chief's success do not count",
			[]TaskState{exited(chief, 0, 1), exited(w0, 1, 2), stopped(exited(ps, 143, 3))}, Succeeded, "chief:0 succeeded; stopped ps:0 after it; ignored: worker:0 failed (after chief:0 succeeded)", nil, nil},
		{"a stopped ps is no failure",
			[]TaskState{running(chief), stopped(exited(ps, 143, 1))}, Undecided, "", nil, nil},
		{"failures are listed in the order they happened",
			[]TaskState{running(chief), exited(w0, 1, 2), exited(w1, 1, 1)}, Failed, "worker:1 failed; worker:0 failed", []taskspec.TaskID{chief}, nil},
		// Before: worker:1 and the ps were stopped at once, killing worker:1
		// mid-training; the ps stays up for it (its global step is there).
		{"TF1: without a chief, worker 0 decides, worker:1 may finish",
			[]TaskState{exited(w0, 0, 1), running(w1), running(ps)}, Succeeded, "worker:0 succeeded; letting worker:1, ps:0 end by themselves", nil, []taskspec.TaskID{w1, ps}},
		{"TF1: worker:1 done, the ps is stopped",
			[]TaskState{exited(w0, 0, 1), exited(w1, 0, 2), running(ps)}, Succeeded, "worker:0 succeeded; stopping ps:0 after it", []taskspec.TaskID{ps}, nil},
		{"TF1: all done",
			[]TaskState{exited(w0, 0, 1), exited(w1, 0, 2), stopped(exited(ps, 143, 3))}, Succeeded, "worker:0 succeeded; stopped ps:0 after it", nil, nil},
		{"TF1: worker:1 stopped with the ps when the grace ran out",
			[]TaskState{exited(w0, 0, 1), stopped(exited(w1, 143, 3)), stopped(exited(ps, 143, 2))}, Succeeded,
			"worker:0 succeeded; stopped ps:0 after it; stopped worker:1 when the worker grace ran out", nil, nil},
		{"MWMS: the chief exits 0 first, the workers get the grace",
			[]TaskState{exited(chief, 0, 1), running(w0), running(w1)}, Succeeded, "chief:0 succeeded; letting worker:0, worker:1 end by themselves", nil, []taskspec.TaskID{w0, w1}},
		{"MWMS: the workers exit 0 after the chief: all succeeded, nothing stopped",
			[]TaskState{exited(chief, 0, 1), exited(w0, 0, 2), exited(w1, 0, 3)}, Succeeded, "chief:0 succeeded", nil, nil},
		{"MWMS: the evaluator is stopped at once, the workers linger",
			[]TaskState{exited(chief, 0, 1), exited(w0, 0, 2), running(w1), running(ev)}, Succeeded,
			"chief:0 succeeded; stopping evaluator:0 after it; letting worker:1 end by itself", []taskspec.TaskID{ev}, []taskspec.TaskID{w1}},
		{"MWMS: a stuck worker stopped when the grace ran out",
			[]TaskState{exited(chief, 0, 1), exited(w0, 0, 2), stopped(exited(w1, 143, 3))}, Succeeded,
			"chief:0 succeeded; stopped worker:1 when the worker grace ran out", nil, nil},
		{"MWMS: a worker failing in the grace is named, the job is the chief's",
			[]TaskState{exited(chief, 0, 1), exited(w0, 1, 2), exited(w1, 0, 3)}, Succeeded,
			"chief:0 succeeded; ignored: worker:0 failed (after chief:0 succeeded)", nil, nil},
		{"without a chief, worker 1 finishing first decides nothing",
			[]TaskState{running(w0), exited(w1, 0, 1), running(ps)}, Undecided, "", nil, nil},
		{"an evaluator failure is a side-car's: it does not decide",
			[]TaskState{running(chief), exited(ev, 1, 1)}, Undecided, "", nil, nil},
		{"side-car failures are recorded once the job is decided",
			[]TaskState{exited(chief, 0, 2), exited(ev, 1, 1)}, Succeeded, "chief:0 succeeded; ignored: evaluator:0 failed (evaluator is a side-car)", nil, nil},
		{"a stopped decider is no success",
			[]TaskState{stopped(exited(chief, 143, 1)), running(w0)}, Failed, "chief:0 was stopped before it succeeded", []taskspec.TaskID{w0}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.tasks)
			require.Equal(t, c.want, v.Outcome)
			require.Equal(t, c.diag, v.Diagnostics)
			require.Equal(t, c.stop, v.Stop)
			require.Equal(t, c.linger, v.Linger)
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
