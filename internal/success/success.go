// Package success is the seam of success rules: what decides a job's
// outcome from its tasks' states. It holds the Policy interface, what a
// Policy sees (View) and answers (Verdict), the machine's counts a policy's
// fast path may read instead (Tally), and the rules that belong to no
// framework: every task must succeed (AllSucceed) and an elastic job's
// minimum of workers (Elastic). A framework's own rule (TensorFlow's chief
// rule) lives in its package; the frameworks' registry maps a --success
// name to its Policy, and the AM's core consults whichever it is given
// after every event. The package is pure: a Policy is a function of what it
// sees.
package success

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Policy decides what the job's task states mean: whether the job has
// succeeded or failed, which tasks are no longer needed, which ended tasks
// deserve another container. The AM's core consults it after every event
// (its FastVerdict first, for a FastPolicy), so a Policy must be a pure
// function of the View: the same View, the same Verdict. The core ignores
// Stop and Restart entries that do not apply (a task already stopping, a
// live task to restart), so a Policy may repeat itself.
type Policy interface {
	Verdict(View) Verdict
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(View) Verdict

// Verdict implements Policy.
func (f PolicyFunc) Verdict(v View) Verdict { return f(v) }

// FastPolicy is a Policy whose Verdict the core's counts (Tally) can
// often give without a View, which is a copy of every task's status: the
// core asks it first after every event, and consults Verdict only when ok
// is false. When ok, the Verdict must do what Verdict's would (the core's
// tests hold it to that after every step).
type FastPolicy interface {
	Policy
	FastVerdict(Tally) (v Verdict, ok bool)
}

// SettlingPolicy is a Policy under which nothing restarts past a point
// the core's counts show (a SuccessChief job whose decider succeeded):
// what is left is the success rule's business.
type SettlingPolicy interface {
	Policy
	RestartsOver(Tally) bool
}

// Tally is the core's counts of task states, kept in step with every
// event, as a policy's fast path reads them: answering costs what the
// question touches, not a pass over every task.
type Tally interface {
	Clock() time.Time              // the latest Tick
	Total() int                    // tasks in the job
	JobTypes() []taskspec.TaskType // the job's task types, in job order
	InState(s TaskState) int       // not variadic: a slice passed through the interface is allocated on every step
	TypeCount(typ taskspec.TaskType, s TaskState) int
	Live(typ taskspec.TaskType) int        // tasks of typ holding a container
	UnstoppedOf(typ taskspec.TaskType) int // live tasks of typ not asked to stop
	LastStop() time.Time                   // the latest stop's StopRequestedAt
	// Ended is a task's state and when it ended, without copying its
	// status (the fast path asks on every step).
	Ended(id taskspec.TaskID) (state TaskState, endedAt time.Time, ok bool)
}

// WorkerGracePolicy is a Policy that lets workers linger after the job is
// decided, and can be given how long (run --local shortens it).
type WorkerGracePolicy interface {
	Policy
	WithWorkerGrace(grace time.Duration) Policy
}

// WithWorkerGrace returns p with grace as the time its lingering workers
// have to end by themselves, for a WorkerGracePolicy; any other policy
// comes back as it is.
func WithWorkerGrace(p Policy, grace time.Duration) Policy {
	if g, ok := p.(WorkerGracePolicy); ok {
		return g.WithWorkerGrace(grace)
	}
	return p
}

// TaskState is where one task is. A task goes Pending → Launching →
// Running → Succeeded | Failed | Stopped; a restart takes an ended task back
// to Pending with the next Attempt.
type TaskState int

const (
	// TaskPending: waiting for a container.
	TaskPending TaskState = iota
	// TaskLaunching: has a container; its start is under way.
	TaskLaunching
	// TaskRunning: the NM started the container.
	TaskRunning
	// TaskSucceeded: the container exited 0.
	TaskSucceeded
	// TaskFailed: the container exited non-zero, was killed by YARN, or
	// failed to start.
	TaskFailed
	// TaskStopped: the AM stopped it (no longer needed, or the job ended).
	TaskStopped
)

func (s TaskState) String() string {
	if names := [...]string{"pending", "launching", "running", "succeeded", "failed", "stopped"}; s >= 0 && int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("TaskState(%d)", int(s))
}

// Live reports whether the task holds a container.
func (s TaskState) Live() bool { return s == TaskLaunching || s == TaskRunning }

// Ended reports whether the task's latest container is over.
func (s TaskState) Ended() bool { return s == TaskSucceeded || s == TaskFailed || s == TaskStopped }

// TaskStatus is what a Policy sees of one task.
type TaskStatus struct {
	Task    taskspec.TaskID
	State   TaskState
	Attempt int // 0 for the first container, one more per restart
	// ExitStatus is its container's; Failure is one line naming the task,
	// its container and node and why it failed, set when State is
	// TaskFailed.
	ExitStatus int32
	Failure    string
	// StopRequested: the AM asked for the task's container to end; its end
	// is then TaskStopped. StopRequestedAt is when.
	StopRequested   bool
	StopRequestedAt time.Time
	// PlaceOn is set while a worker replaced in place waits for its
	// container: the node it must run on.
	PlaceOn string
	// Times come from Tick; EndOrder counts task ends (1, 2, ...) so
	// policies can tell which failure came first within one instant.
	RequestedAt, EndedAt time.Time
	EndOrder             uint64
	// Unallocated: failed for never getting a container, which no restart
	// would change.
	Unallocated bool
	// Overdue: an elastic job's worker still waiting for a container past
	// --alloc-timeout while the job holds its minimum: still asked for, no
	// longer one of the workers that remain.
	Overdue bool
	// NoRestart: it failed, and its program said a restart cannot help
	// (the launcher's no-restart file): not replaced either.
	NoRestart bool
}

// View is what a Policy sees.
type View struct {
	Now   time.Time    // from the latest Tick
	Tasks []TaskStatus // every task, in job order
	// Replaced is how many lost tasks the job has had replaced alone
	// (Verdict.Replace) so far, by every ApplicationMaster attempt.
	Replaced int
}

// Task returns one task's status.
func (v View) Task(id taskspec.TaskID) (TaskStatus, bool) {
	for _, t := range v.Tasks {
		if t.Task == id {
			return t, true
		}
	}
	return TaskStatus{}, false
}

// OfType returns the statuses of one group's tasks, by index.
func (v View) OfType(typ taskspec.TaskType) []TaskStatus {
	var out []TaskStatus
	for _, t := range v.Tasks {
		if t.Task.Type == typ {
			out = append(out, t)
		}
	}
	return out
}

// Outcome is a Policy's judgement of the job.
type Outcome int

const (
	// Undecided: the job goes on.
	Undecided Outcome = iota
	// JobSucceeded: finish SUCCEEDED, stopping whatever still runs.
	JobSucceeded
	// JobFailed: finish FAILED, stopping whatever still runs.
	JobFailed
)

// Verdict is a Policy's answer. Diagnostics is what the application
// reports when Outcome is decided.
type Verdict struct {
	Outcome     Outcome
	Diagnostics string
	// Stop lists live tasks the job no longer needs (ps after the chief
	// finished). They end as TaskStopped, which is no failure.
	Stop []taskspec.TaskID
	// Restart lists ended tasks to run again in a new container: the core
	// asks YARN for one more container of their group.
	Restart []taskspec.TaskID
	// Replace lists failed tasks to run again as Restart does, the loss
	// kept among the job's diagnostics (an elastic job's lost worker:
	// Elastic).
	Replace []taskspec.TaskID
}

// Failures describes the failed tasks in the order they ended, joined by
// "; ", or returns "" when none failed.
func Failures(tasks []TaskStatus) string {
	var failed []TaskStatus
	for _, t := range tasks {
		if t.State == TaskFailed {
			failed = append(failed, t)
		}
	}
	SortByEnd(failed)
	parts := make([]string, len(failed))
	for i, t := range failed {
		parts[i] = t.Failure
	}
	return strings.Join(parts, "; ")
}

// SortByEnd sorts tasks in the order they ended.
func SortByEnd(ts []TaskStatus) {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].EndOrder < ts[j].EndOrder })
}

// JoinIDs names tasks, joined by ", ".
func JoinIDs(ids []taskspec.TaskID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return strings.Join(parts, ", ")
}

// WaitingLines say why each task in pending had no container when the job
// ended. A first attempt's wait is never's ("never got a container", or
// the caller's fuller sentence), the tasks joined in one line; a restarted
// task did run, so calling it unallocated would mislead: a worker replaced
// in place was waiting for a container on its node, any other for the
// container of its restart.
func WaitingLines(pending []TaskStatus, never string) []string {
	var first []taskspec.TaskID
	var lines []string
	for _, t := range pending {
		switch {
		case t.Attempt == 0:
			first = append(first, t.Task)
		case t.PlaceOn != "":
			lines = append(lines, fmt.Sprintf("%s was still being replaced on %s: its attempt %d had no container there yet", t.Task, t.PlaceOn, t.Attempt))
		default:
			lines = append(lines, fmt.Sprintf("%s was still restarting: its attempt %d had no container yet", t.Task, t.Attempt))
		}
	}
	if len(first) > 0 {
		lines = append([]string{JoinIDs(first) + " " + never}, lines...)
	}
	return lines
}
