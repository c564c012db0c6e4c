package tensorflow

import (
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/containerexit"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// ChiefPolicy is the success rule taskspec.SuccessChief: one task, the
// decider, decides the job, and the others serve it. It is the convention of
// distributed TensorFlow (the framework's default for jobs with a chief, ps
// or evaluator, or a script: successRuleOf), written over tfyarn's task
// types so that any job of that shape may pick it (--success chief: the
// registry finds it in Framework.Rules).
//
// The decider is chief:0, or worker:0 when the job has no chief (TF1
// between-graph replication, where worker 0 is the chief). The job's outcome
// is the decider's:
//
//   - The decider exits 0: the job succeeds, once every task still live has
//     ended. What happens to those is splitAfterDecider's (shape.go): ps tasks,
//     the evaluator and TensorBoard never exit on their own (ps runs
//     server.join(), the evaluator loops over checkpoints) and are stopped
//     at once, and so are the workers of a ParameterServerStrategy job (a
//     chief and ps: its workers are servers in server.join() too). Other
//     workers (MultiWorkerMirroredStrategy: no ps; TF1 between-graph: no
//     chief) finish their training with the decider but take a moment
//     longer to exit: they get WorkerGrace to end by themselves (the ps of
//     a TF1 job stay up for them), and are stopped only if still running
//     after it. A worker that exits 0 in the grace has succeeded; one that
//     fails in it does not change the outcome (the decider's model is
//     saved) but is named in the diagnostics; one stopped after it is no
//     failure. Tasks still waiting for a container are dropped. The final
//     diagnostics name the tasks that were stopped.
//   - The decider fails (a non-zero exit, a kill by YARN, a failed start):
//     the job fails at once, naming it; the core stops everything else.
//   - A chief, worker or ps task fails before the decider has succeeded: the
//     job fails at once, naming it. A ps task exiting 0 is no failure
//     (some TF1 scripts end their ps tasks through a shared queue), nor is a
//     worker exiting 0 early: the job goes on.
//   - The evaluator and TensorBoard are side-cars: their failures never fail
//     the job, but the final diagnostics record them.
//   - Stopped tasks never count as failures.
//
// Timing, on the Tick clock: stops are issued at the decider's end, and for
// lingering tasks when the last worker ended or WorkerGrace ran out. Each
// stop is waited for at most StopTimeout after it was issued (the core
// escalates a graceful stop to a hard one Config.ContainerStopGrace, 12 s in the AM,
// after it, so a stop normally lands well within 15 s), so the policy
// finishes at most WorkerGrace + StopTimeout after the decider's end: 25 s
// with the defaults, leaving room for the heartbeat and unregistering
// within 30 s.
//
// Restarts are not this policy's: the core applies the job's
// RestartPolicy before consulting it (restart.go), so a failure it sees is
// one that did not restart.
//
// The policy is a pure function of the View, so it may be consulted any
// number of times; it repeats its Stop list until the stopped tasks have
// ended, which the core ignores (see success.Policy).
type ChiefPolicy struct {
	// StopTimeout bounds the wait for a stopped task, from its stop: 0
	// means taskspec.TFStopTimeout, a negative value finishes as soon as
	// nothing lingers (the core then stops whatever still runs as the
	// job ends).
	StopTimeout time.Duration
	// WorkerGrace is how long lingering workers (see above) have, after
	// the decider's end, to end by themselves: 0 means
	// taskspec.DefaultWorkerGrace, a negative value stops them at once.
	WorkerGrace time.Duration
}

// Verdict implements success.Policy.
func (p ChiefPolicy) Verdict(v success.View) success.Verdict {
	decider, ok := deciderIn(v)
	if !ok {
		// Validation requires a chief or a worker; without one there is
		// nothing to decide by.
		return success.AllSucceed{}.Verdict(v)
	}
	if fatal := fatalFailures(v, decider); len(fatal) > 0 {
		return success.Verdict{Outcome: success.JobFailed, Diagnostics: joinDiagnostics(failureLines(fatal), ignoredFailures(v, decider))}
	}
	switch decider.State {
	case success.TaskSucceeded:
		return p.afterSuccess(v, decider)
	case success.TaskStopped:
		// Nothing in this policy stops the decider; should anything else,
		// the job can no longer succeed and must not wait forever.
		return success.Verdict{Outcome: success.JobFailed, Diagnostics: joinDiagnostics(
			[]string{fmt.Sprintf("%s was stopped before it succeeded", decider.Task)}, ignoredFailures(v, decider))}
	}
	return success.Verdict{}
}

// deciderIn returns the task whose end decides a SuccessChief job: chief:0,
// or worker:0 when the job has no chief. tasks is a success.View.
func deciderIn(tasks interface {
	Task(taskspec.TaskID) (success.TaskStatus, bool)
}) (success.TaskStatus, bool) {
	if t, ok := tasks.Task(taskspec.TaskID{Type: taskspec.Chief}); ok {
		return t, true
	}
	return tasks.Task(taskspec.TaskID{Type: taskspec.Worker})
}

// afterSuccess stops what still runs, now or after the worker grace, and
// once nothing does (or the wait is over) declares the job succeeded. When
// each stop was issued is the core's record (StopRequestedAt).
func (p ChiefPolicy) afterSuccess(v success.View, decider success.TaskStatus) success.Verdict {
	grace, timeout := p.waits()
	types := make([]taskspec.TaskType, len(v.Tasks))
	all := make([]taskspec.TaskID, len(v.Tasks))
	var live []taskspec.TaskID
	var pending []success.TaskStatus
	for i, t := range v.Tasks {
		types[i], all[i] = t.Task.Type, t.Task
		switch {
		case t.State == success.TaskPending:
			pending = append(pending, t)
		case t.State.Live():
			live = append(live, t.Task)
		}
	}
	// Without a clock (no Tick ever) there is no grace to wait out.
	graceOver := grace < 0 || decider.EndedAt.IsZero() || !v.Now.Before(decider.EndedAt.Add(grace))
	stopNow, linger := splitAfterDecider(types, live)
	if graceOver {
		stopNow, linger = live, nil
	}
	if len(linger) > 0 {
		return success.Verdict{Stop: stopNow}
	}

	// The workers that may linger and were stopped were stopped when the
	// grace ran out; every other stop came at the decider's end (or, for
	// a TF1 job's ps, once the workers were gone).
	lingeringWorker := map[taskspec.TaskID]bool{}
	if grace > 0 {
		_, mayLinger := splitAfterDecider(types, all)
		for _, id := range mayLinger {
			lingeringWorker[id] = id.Type == taskspec.Worker
		}
	}
	stoppingNow := map[taskspec.TaskID]bool{}
	for _, id := range stopNow {
		stoppingNow[id] = true
	}
	lastStop := decider.EndedAt
	var stoppedAtOnce, stoppedAfterGrace []taskspec.TaskID
	for _, t := range v.Tasks {
		issued := t.StopRequestedAt
		switch {
		case t.StopRequested && (t.State.Live() || t.State == success.TaskStopped):
		case !t.StopRequested && stoppingNow[t.Task]:
			issued = v.Now
		default:
			continue
		}
		if issued.After(lastStop) {
			lastStop = issued
		}
		if lingeringWorker[t.Task] {
			stoppedAfterGrace = append(stoppedAfterGrace, t.Task)
		} else {
			stoppedAtOnce = append(stoppedAtOnce, t.Task)
		}
	}
	waitedOut := timeout < 0 || (!lastStop.IsZero() && v.Now.Sub(lastStop) >= timeout)
	if len(stopNow) > 0 && !waitedOut {
		// The whole live list every time: the core skips tasks already
		// stopping, and the same success.View gives the same success.Verdict.
		return success.Verdict{Stop: stopNow}
	}
	lines := []string{decider.Task.String() + " succeeded"}
	if len(stoppedAtOnce) > 0 {
		lines = append(lines, "stopped "+success.JoinIDs(stoppedAtOnce)+" after it")
	}
	if len(stoppedAfterGrace) > 0 {
		lines = append(lines, fmt.Sprintf("stopped %s when the %s worker grace ran out", success.JoinIDs(stoppedAfterGrace), grace))
	}
	if len(stopNow) > 0 && timeout > 0 {
		lines = append(lines, fmt.Sprintf("gave up after %s waiting for %s to end", timeout, success.JoinIDs(stopNow)))
	}
	lines = append(lines, success.WaitingLines(pending, "never got a container")...)
	return success.Verdict{Outcome: success.JobSucceeded, Diagnostics: joinDiagnostics(lines, ignoredFailures(v, decider))}
}

// waits are WorkerGrace and StopTimeout, their defaults in place of 0.
func (p ChiefPolicy) waits() (grace, timeout time.Duration) {
	grace, timeout = p.WorkerGrace, p.StopTimeout
	if grace == 0 {
		grace = taskspec.DefaultWorkerGrace
	}
	if timeout == 0 {
		timeout = taskspec.TFStopTimeout
	}
	return grace, timeout
}

// FastVerdict implements success.FastPolicy. While no chief, worker or ps has
// failed, the decider's state alone tells: undecided until it ends; once
// it succeeded, an empty success.Verdict while afterSuccess would only repeat a
// Stop list of tasks all stopping already (stopsUnderWay).
func (p ChiefPolicy) FastVerdict(c success.Tally) (success.Verdict, bool) {
	state, endedAt, ok := deciderEnded(c)
	if !ok {
		return success.AllSucceed{}.FastVerdict(c)
	}
	for _, typ := range c.JobTypes() {
		if !isSideCar(typ) && c.TypeCount(typ, success.TaskFailed) > 0 {
			return success.Verdict{}, false
		}
	}
	switch state {
	case success.TaskSucceeded:
		return success.Verdict{}, p.stopsUnderWay(c, endedAt)
	case success.TaskStopped:
		return success.Verdict{}, false
	}
	return success.Verdict{}, true // undecided until the decider ends or a failure is fatal
}

// stopsUnderWay reports whether afterSuccess would only repeat its Stop
// list, every task of which is stopping already: tasks still linger within
// the worker grace, or the stopped ones are still within StopTimeout.
func (p ChiefPolicy) stopsUnderWay(c success.Tally, deciderEndedAt time.Time) bool {
	grace, timeout := p.waits()
	now := c.Clock()
	graceOver := grace < 0 || deciderEndedAt.IsZero() || !now.Before(deciderEndedAt.Add(grace))
	types := c.JobTypes()
	lingers := map[taskspec.TaskType]bool{} // splitAfterDecider's rule, by type
	if !graceOver && !ParameterServerShaped(types) && c.Live(taskspec.Worker) > 0 {
		lingers[taskspec.Worker], lingers[taskspec.PS] = true, true
	}
	linger, stopNow := 0, 0
	for _, typ := range types {
		if lingers[typ] {
			linger += c.Live(typ)
			continue
		}
		stopNow += c.Live(typ)
		if c.UnstoppedOf(typ) > 0 {
			return false // stops to issue
		}
	}
	if linger > 0 {
		return true
	}
	if stopNow == 0 {
		return false // decided
	}
	// Every stop since the decider's end is on a task still live or
	// stopped: nothing restarts once a SuccessChief job's decider succeeded.
	lastStop := deciderEndedAt
	if c.LastStop().After(lastStop) {
		lastStop = c.LastStop()
	}
	return timeout >= 0 && (lastStop.IsZero() || now.Sub(lastStop) < timeout)
}

// RestartsOver implements success.SettlingPolicy: nothing restarts once the
// decider succeeded.
func (ChiefPolicy) RestartsOver(c success.Tally) bool {
	state, _, ok := deciderEnded(c)
	return ok && state == success.TaskSucceeded
}

// deciderEnded is deciderIn for the fast path: the decider's state and
// when it ended, read from the core's counts (success.Tally) without a status copy.
func deciderEnded(c success.Tally) (success.TaskState, time.Time, bool) {
	if state, endedAt, ok := c.Ended(taskspec.TaskID{Type: taskspec.Chief}); ok {
		return state, endedAt, true
	}
	return c.Ended(taskspec.TaskID{Type: taskspec.Worker})
}

// isSideCar reports whether a task's failure leaves the job alone.
func isSideCar(typ taskspec.TaskType) bool {
	return typ == taskspec.Evaluator || typ == taskspec.TensorBoard
}

// fatalFailures returns the failed chief, worker and ps tasks that fail the
// job, in the order they ended: all of them while the decider has not
// succeeded, else those that ended before it.
func fatalFailures(v success.View, decider success.TaskStatus) []success.TaskStatus {
	var out []success.TaskStatus
	for _, t := range v.Tasks {
		if t.State != success.TaskFailed || isSideCar(t.Task.Type) {
			continue
		}
		if decider.State == success.TaskSucceeded && t.EndOrder > decider.EndOrder {
			continue
		}
		out = append(out, t)
	}
	success.SortByEnd(out)
	return out
}

// ignoredFailures describes the failures that did not fail the job: side-cars
// and tasks that failed after the decider succeeded.
func ignoredFailures(v success.View, decider success.TaskStatus) []string {
	var failed []success.TaskStatus
	for _, t := range v.Tasks {
		if t.State != success.TaskFailed {
			continue
		}
		if isSideCar(t.Task.Type) || (decider.State == success.TaskSucceeded && t.EndOrder > decider.EndOrder) {
			failed = append(failed, t)
		}
	}
	success.SortByEnd(failed)
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
// exit status when the success.View carries none.
func failureLines(ts []success.TaskStatus) []string {
	lines := make([]string, len(ts))
	for i, t := range ts {
		lines[i] = t.Failure
		if lines[i] == "" {
			lines[i] = fmt.Sprintf("%s failed: %s", t.Task, containerexit.Describe(t.ExitStatus))
		}
	}
	return lines
}

func joinDiagnostics(first []string, rest []string) string {
	return strings.Join(append(append([]string(nil), first...), rest...), "; ")
}

// WithWorkerGrace implements success.WorkerGracePolicy.
func (p ChiefPolicy) WithWorkerGrace(grace time.Duration) success.Policy {
	p.WorkerGrace = grace
	return p
}
