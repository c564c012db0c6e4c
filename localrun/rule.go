package localrun

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// TaskState is what the success rules need to know about one task.
type TaskState struct {
	Task taskspec.TaskID
	// Ended is set once the task's program (or its launcher) is gone.
	Ended bool
	// ExitCode is the program's code, 128+N for signal N.
	ExitCode int
	// Stopped: the program ended because it was ordered to stop, which is
	// never a failure (ps and evaluators only ever end this way).
	Stopped bool
	// EndOrder counts task ends (1, 2, ...): a failure matters only if it
	// came before the decider's success.
	EndOrder uint64
	// Failure is the description of a failed task (its name, exit code and
	// last stderr lines), quoted in the diagnostics.
	Failure string
}

// Failed reports whether the task ended badly on its own.
func (t TaskState) Failed() bool { return t.Ended && !t.Stopped && t.ExitCode != 0 }

func (t TaskState) failure() string {
	if t.Failure != "" {
		return t.Failure
	}
	return fmt.Sprintf("%s exited with code %d", t.Task, t.ExitCode)
}

// Outcome is the job's state as a rule sees it.
type Outcome int

const (
	Undecided Outcome = iota
	Succeeded
	Failed
)

// Verdict is a rule's answer: the outcome, why, and what becomes of the
// live tasks once the outcome is decided: Stop lists those to stop at
// once, Linger those left the worker grace (Options.WorkerGrace) to end by
// themselves, to be stopped if still running after it.
type Verdict struct {
	Outcome     Outcome
	Diagnostics string
	Stop        []taskspec.TaskID
	Linger      []taskspec.TaskID
}

// ruleFor returns the judge of a success rule ("" = the job's
// taskspec.DefaultSuccessRule, the same choice the ApplicationMaster makes):
// Judge for taskspec.SuccessChief, JudgeAll for taskspec.SuccessAll.
func ruleFor(rule taskspec.SuccessRule, job taskspec.Job) (func([]TaskState) Verdict, error) {
	rule, err := taskspec.SuccessRuleOf(rule, job)
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	if rule == taskspec.SuccessAll {
		return JudgeAll, nil
	}
	return Judge, nil
}

// Decider is the task whose exit decides the job: the chief, else worker:0.
// TensorFlow's chief saves the model and writes the summaries; in TF1
// between-graph jobs without a chief, worker 0 plays that part
// (is_chief = task_index == 0).
func Decider(tasks []TaskState) (taskspec.TaskID, bool) {
	var worker0 bool
	for _, t := range tasks {
		if t.Task == (taskspec.TaskID{Type: taskspec.Chief}) {
			return t.Task, true
		}
		worker0 = worker0 || t.Task == taskspec.TaskID{Type: taskspec.Worker}
	}
	return taskspec.TaskID{Type: taskspec.Worker}, worker0
}

// isSideCar: evaluator and tensorboard failures never fail the job.
func isSideCar(t taskspec.TaskType) bool { return t == taskspec.Evaluator || t == taskspec.TensorBoard }

// Judge applies TensorFlow's success rule, the one the ApplicationMaster
// applies as appmaster.TensorFlowPolicy. It is a pure function of its
// input, so it can be called after every event:
//
//   - a chief, worker or ps task that fails (ends non-zero without being
//     stopped) before the decider has succeeded fails the job, naming it;
//   - the decider exiting 0 succeeds the job, whatever ends after it;
//   - the decider being stopped fails the job: training did not finish;
//   - evaluator and tensorboard failures are side-car failures: recorded in
//     the diagnostics, never fatal; so are failures after the decision
//     (a worker failing in its grace, say);
//   - a job without a decider (Validate forbids it) falls back to JudgeAll.
//
// Once the job failed, every task still running is listed in Stop. Once it
// succeeded, taskspec.SplitAfterDecider says which: ps, evaluator and
// tensorboard never end by themselves, nor do ParameterServerStrategy
// workers blocked in server.join(), and are listed in Stop; the workers of
// other jobs (MultiWorkerMirroredStrategy, TF1 between-graph), and a TF1
// job's ps while they run, are listed in Linger: the runner gives them the
// worker grace to end by themselves, and stops them after it.
func Judge(tasks []TaskState) Verdict {
	decider, ok := Decider(tasks)
	if !ok {
		return JudgeAll(tasks)
	}
	var dec TaskState
	for _, t := range tasks {
		if t.Task == decider {
			dec = t
		}
	}
	succeeded := dec.Ended && !dec.Stopped && dec.ExitCode == 0
	var fatal, ignored []TaskState
	for _, t := range tasks {
		switch {
		case !t.Failed():
		case isSideCar(t.Task.Type) || succeeded && t.EndOrder > dec.EndOrder:
			ignored = append(ignored, t)
		default:
			fatal = append(fatal, t)
		}
	}
	var v Verdict
	switch {
	case len(fatal) > 0:
		v = Verdict{Outcome: Failed, Diagnostics: describeAll(fatal, ""), Stop: live(tasks)}
	case succeeded:
		v = Verdict{Outcome: Succeeded, Diagnostics: decider.String() + " succeeded"}
		v.Stop, v.Linger = taskspec.SplitAfterDecider(types(tasks), live(tasks))
		if len(v.Stop) > 0 {
			v.Diagnostics += "; stopping " + joinIDs(v.Stop) + " after it"
		}
		if len(v.Linger) > 0 {
			v.Diagnostics += "; letting " + joinIDs(v.Linger) + " end by " + map[bool]string{true: "itself", false: "themselves"}[len(v.Linger) == 1]
		}
		stopped, afterGrace := stoppedAfter(tasks, dec)
		if len(stopped) > 0 {
			v.Diagnostics += "; stopped " + joinIDs(stopped) + " after it"
		}
		if len(afterGrace) > 0 {
			v.Diagnostics += "; stopped " + joinIDs(afterGrace) + " when the worker grace ran out"
		}
	case dec.Ended && dec.Stopped:
		v = Verdict{Outcome: Failed, Diagnostics: decider.String() + " was stopped before it succeeded", Stop: live(tasks)}
	default:
		return Verdict{}
	}
	if len(ignored) > 0 {
		v.Diagnostics += "; ignored: " + describeAll(ignored, decider.String())
	}
	return v
}

// JudgeAll is the rule of generic commands (appmaster.AllSucceed): the job
// fails as soon as one task fails and succeeds once every task exited 0.
func JudgeAll(tasks []TaskState) Verdict {
	var failed []TaskState
	for _, t := range tasks {
		if t.Failed() {
			failed = append(failed, t)
		}
	}
	if len(failed) > 0 {
		return Verdict{Outcome: Failed, Diagnostics: describeAll(failed, ""), Stop: live(tasks)}
	}
	if len(live(tasks)) > 0 {
		return Verdict{}
	}
	return Verdict{Outcome: Succeeded, Diagnostics: fmt.Sprintf("all %d tasks succeeded", len(tasks))}
}

// describeAll joins failures in the order they happened; with a decider
// named, they are the ones that did not count, and each says why.
func describeAll(ts []TaskState, decider string) string {
	ts = append([]TaskState(nil), ts...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].EndOrder < ts[j].EndOrder })
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.failure()
		switch {
		case decider == "":
		case isSideCar(t.Task.Type):
			parts[i] += " (" + string(t.Task.Type) + " is a side-car)"
		default:
			parts[i] += " (after " + decider + " succeeded)"
		}
	}
	return strings.Join(parts, "; ")
}

// stoppedAfter lists the tasks a stop order ended after the decider: those
// stopped at once (or, for a TF1 job's ps, once the workers were gone),
// and the workers stopped when their grace ran out.
func stoppedAfter(tasks []TaskState, dec TaskState) (stopped, afterGrace []taskspec.TaskID) {
	var ids []taskspec.TaskID
	for _, t := range tasks {
		if t.Ended && t.Stopped && t.EndOrder > dec.EndOrder {
			ids = append(ids, t.Task)
		}
	}
	// Of the stopped tasks, the workers that could linger did: they were
	// stopped when the grace ran out.
	stopped, lingered := taskspec.SplitAfterDecider(types(tasks), ids)
	for _, id := range lingered {
		if id.Type == taskspec.Worker {
			afterGrace = append(afterGrace, id)
		} else {
			stopped = append(stopped, id)
		}
	}
	return inOrder(tasks, stopped), afterGrace
}

// inOrder sorts ids the way tasks lists them.
func inOrder(tasks []TaskState, ids []taskspec.TaskID) []taskspec.TaskID {
	in := map[taskspec.TaskID]bool{}
	for _, id := range ids {
		in[id] = true
	}
	var out []taskspec.TaskID
	for _, t := range tasks {
		if in[t.Task] {
			out = append(out, t.Task)
		}
	}
	return out
}

func types(tasks []TaskState) []taskspec.TaskType {
	out := make([]taskspec.TaskType, len(tasks))
	for i, t := range tasks {
		out[i] = t.Task.Type
	}
	return out
}

func live(tasks []TaskState) []taskspec.TaskID {
	var out []taskspec.TaskID
	for _, t := range tasks {
		if !t.Ended {
			out = append(out, t.Task)
		}
	}
	return out
}

func joinIDs(ids []taskspec.TaskID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return strings.Join(parts, ", ")
}

func (o Outcome) String() string {
	switch o {
	case Succeeded:
		return "SUCCEEDED"
	case Failed:
		return "FAILED"
	}
	return "UNDECIDED"
}
