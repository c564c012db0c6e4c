package appmaster

import (
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// DefaultStopTimeout is how long TensorFlowPolicy waits, once the decider
// has succeeded, for the tasks it stopped to end before finishing anyway.
const DefaultStopTimeout = 30 * time.Second

// TensorFlowPolicy is the rule of distributed TensorFlow jobs.
//
// The decider is chief:0, or worker:0 when the job has no chief (TF1
// between-graph replication, where worker 0 is the chief). The job's outcome
// is the decider's:
//
//   - The decider exits 0: the job succeeds. Every task still live is
//     stopped first: ps tasks and the evaluator never exit on their own (ps
//     runs server.join(), the evaluator loops over checkpoints), nor do
//     TensorBoard or, under ParameterServerStrategy, workers; under
//     MultiWorkerMirroredStrategy the other workers end with the chief
//     anyway, so stopping the stragglers loses nothing. Tasks still waiting
//     for a container are dropped. The policy waits for the stopped tasks'
//     containers to end (at most StopTimeout, measured from the decider's
//     end on the Tick clock) so the job ends with its containers, and the
//     final diagnostics name the tasks that were stopped.
//   - The decider fails (a non-zero exit, a kill by YARN, a failed start):
//     the job fails at once, naming it; the machine stops everything else.
//   - A chief, worker or ps task fails before the decider has succeeded: the
//     job fails at once, naming it. A ps task exiting 0 is no failure
//     (some TF1 scripts end their ps tasks through a shared queue), nor is a
//     worker exiting 0 early: the job goes on.
//   - The evaluator and TensorBoard are side-cars: their failures never fail
//     the job, but the final diagnostics record them.
//   - Stopped tasks never count as failures.
//
// Restarts: none yet; a fatal failure ends the job. A restart rule belongs
// in fatalFailures, which would then answer Restart (say for
// IsInfrastructureExit ends, up to a MaxRestarts) instead of failing. Mind
// that under ParameterServerStrategy a restarted ps or chief gets a new
// address, so every other task's TF_CONFIG goes stale with it.
//
// The policy is a pure function of the View, so it may be consulted any
// number of times; it repeats its Stop list until the stopped tasks have
// ended, which the machine ignores (see Policy).
type TensorFlowPolicy struct {
	// StopTimeout bounds the wait for stopped tasks after the decider
	// succeeded: 0 means DefaultStopTimeout, a negative value finishes at
	// once (the machine then stops whatever still runs as the job ends).
	StopTimeout time.Duration
}

// Verdict implements Policy.
func (p TensorFlowPolicy) Verdict(v View) Verdict {
	decider, ok := Decider(v)
	if !ok {
		// Validation requires a chief or a worker; without one there is
		// nothing to decide by.
		return AllSucceed{}.Verdict(v)
	}
	if fatal := fatalFailures(v, decider); len(fatal) > 0 {
		return Verdict{Outcome: JobFailed, Diagnostics: joinDiagnostics(failureLines(fatal), ignoredFailures(v, decider))}
	}
	switch decider.State {
	case TaskSucceeded:
		return p.afterSuccess(v, decider)
	case TaskStopped:
		// Nothing in this policy stops the decider; should anything else,
		// the job can no longer succeed and must not wait forever.
		return Verdict{Outcome: JobFailed, Diagnostics: joinDiagnostics(
			[]string{fmt.Sprintf("%s was stopped before it succeeded", decider.Task)}, ignoredFailures(v, decider))}
	}
	return Verdict{}
}

// Decider returns the task whose end decides a TensorFlow job: chief:0, or
// worker:0 when the job has no chief.
func Decider(v View) (TaskStatus, bool) {
	if t, ok := v.Task(taskspec.TaskID{Type: taskspec.Chief}); ok {
		return t, true
	}
	return v.Task(taskspec.TaskID{Type: taskspec.Worker})
}

// afterSuccess stops what still runs and, once nothing does (or the wait is
// over), declares the job succeeded.
func (p TensorFlowPolicy) afterSuccess(v View, decider TaskStatus) Verdict {
	// stopping: live tasks (being stopped, or about to be); stopped: both
	// those and the ones already ended by a stop, in job order.
	var stopping, stopped, pending []taskspec.TaskID
	for _, t := range v.Tasks {
		switch {
		case t.State == TaskPending:
			pending = append(pending, t.Task)
		case t.State.Live():
			stopping = append(stopping, t.Task)
			stopped = append(stopped, t.Task)
		case t.State == TaskStopped:
			stopped = append(stopped, t.Task)
		}
	}
	timeout := p.StopTimeout
	if timeout == 0 {
		timeout = DefaultStopTimeout
	}
	waitedOut := timeout < 0 ||
		(!decider.EndedAt.IsZero() && v.Now.Sub(decider.EndedAt) >= timeout)
	if len(stopping) > 0 && !waitedOut {
		// The whole live list every time: the machine skips tasks already
		// stopping, and the same View gives the same Verdict.
		return Verdict{Stop: stopping}
	}
	lines := []string{decider.Task.String() + " succeeded"}
	if len(stopped) > 0 {
		lines = append(lines, "stopped "+joinIDs(stopped)+" after it")
	}
	if len(stopping) > 0 && timeout > 0 {
		lines = append(lines, fmt.Sprintf("gave up after %s waiting for %s to end", timeout, joinIDs(stopping)))
	}
	if len(pending) > 0 {
		lines = append(lines, joinIDs(pending)+" never got a container")
	}
	return Verdict{Outcome: JobSucceeded, Diagnostics: joinDiagnostics(lines, ignoredFailures(v, decider))}
}

// isSideCar reports whether a task's failure leaves the job alone.
func isSideCar(typ taskspec.TaskType) bool {
	return typ == taskspec.Evaluator || typ == taskspec.TensorBoard
}

// fatalFailures returns the failed chief, worker and ps tasks that fail the
// job, in the order they ended: all of them while the decider has not
// succeeded, else those that ended before it.
func fatalFailures(v View, decider TaskStatus) []TaskStatus {
	var out []TaskStatus
	for _, t := range v.Tasks {
		if t.State != TaskFailed || isSideCar(t.Task.Type) {
			continue
		}
		if decider.State == TaskSucceeded && t.EndOrder > decider.EndOrder {
			continue
		}
		out = append(out, t)
	}
	sortByEnd(out)
	return out
}

// ignoredFailures describes the failures that did not fail the job: side-cars
// and tasks that failed after the decider succeeded.
func ignoredFailures(v View, decider TaskStatus) []string {
	var failed []TaskStatus
	for _, t := range v.Tasks {
		if t.State != TaskFailed {
			continue
		}
		if isSideCar(t.Task.Type) || (decider.State == TaskSucceeded && t.EndOrder > decider.EndOrder) {
			failed = append(failed, t)
		}
	}
	sortByEnd(failed)
	lines := failureLines(failed)
	for i, t := range failed {
		if isSideCar(t.Task.Type) {
			lines[i] += " (ignored: " + string(t.Task.Type) + " is a side-car)"
		} else {
			lines[i] += " (ignored: after " + decider.Task.String() + " succeeded)"
		}
	}
	return lines
}

// failureLines gives each failed task's Failure line, or one built from its
// exit status when the View carries none.
func failureLines(ts []TaskStatus) []string {
	lines := make([]string, len(ts))
	for i, t := range ts {
		lines[i] = t.Failure
		if lines[i] == "" {
			lines[i] = fmt.Sprintf("%s failed: %s", t.Task, DescribeExit(t.ExitStatus))
		}
	}
	return lines
}

func joinDiagnostics(first []string, rest []string) string {
	return strings.Join(append(append([]string(nil), first...), rest...), "; ")
}

func joinIDs(ids []taskspec.TaskID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return strings.Join(parts, ", ")
}
