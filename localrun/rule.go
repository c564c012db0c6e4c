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

// Verdict is a rule's answer: the outcome, why, and which live tasks to
// stop (all of them once the outcome is decided).
type Verdict struct {
	Outcome     Outcome
	Diagnostics string
	Stop        []taskspec.TaskID
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
//     the diagnostics, never fatal; so are failures after the decision;
//   - a job without a decider (Validate forbids it) falls back to JudgeAll.
//
// Once decided, every task still running is listed in Stop: ps, evaluator
// and tensorboard never end by themselves, nor do ParameterServerStrategy
// workers blocked in server.join().
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
		v = Verdict{Outcome: Failed, Diagnostics: describeAll(fatal, "")}
	case succeeded:
		v = Verdict{Outcome: Succeeded, Diagnostics: decider.String() + " succeeded"}
	case dec.Ended && dec.Stopped:
		v = Verdict{Outcome: Failed, Diagnostics: decider.String() + " was stopped before it succeeded"}
	default:
		return Verdict{}
	}
	v.Stop = live(tasks)
	if v.Outcome == Succeeded {
		if len(v.Stop) > 0 {
			v.Diagnostics += "; stopping " + joinIDs(v.Stop) + " after it"
		}
		if stopped := stoppedAfter(tasks, dec); len(stopped) > 0 {
			v.Diagnostics += "; stopped " + joinIDs(stopped) + " after it"
		}
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

// stoppedAfter lists the tasks a stop order ended after the decider.
func stoppedAfter(tasks []TaskState, dec TaskState) []taskspec.TaskID {
	var out []taskspec.TaskID
	for _, t := range tasks {
		if t.Ended && t.Stopped && t.EndOrder > dec.EndOrder {
			out = append(out, t.Task)
		}
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
