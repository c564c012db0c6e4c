package core

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Policy decides what the job's task states mean: whether the job has
// succeeded or failed, which tasks are no longer needed, which ended tasks
// deserve another container. The machine consults it after every event (its
// own policies only when its counts of task states cannot answer for them),
// so a Policy must be a pure function of the View: the same View, the same
// Verdict. The machine ignores Stop and Restart entries that do not apply
// (a task already stopping, a live task to restart), so a Policy may repeat
// itself.
//
// AllSucceed is the rule for generic commands (and PyTorch's and JAX's);
// ChiefPolicy (the chief decides, ps and evaluator are stopped after it)
// and ElasticPolicy are other Policies over the same View. Which one a job
// gets is PolicyFor's: its success rule, else its framework's.
type Policy interface {
	Verdict(View) Verdict
}

// fastPolicy is a Policy whose Verdict the machine's counts (tally) can
// often give without a View, which is a copy of every task's status: the
// machine asks it first after every event, and consults Verdict only when
// ok is false. When ok, the Verdict must do what Verdict's would (tests
// hold it to that: checkIndexes).
type fastPolicy interface {
	fastVerdict(tally) (v Verdict, ok bool)
}

// settlingPolicy is a Policy under which nothing restarts past a point
// the machine's counts show (a SuccessChief job whose decider succeeded):
// what is left is the success rule's business.
type settlingPolicy interface {
	restartsOver(tally) bool
}

// tally is the machine's counts of task states, kept in step with every
// event, as a policy's fast path reads them: answering costs what the
// question touches, not a pass over every task.
type tally interface {
	clock() time.Time              // the latest Tick
	total() int                    // tasks in the job
	jobTypes() []taskspec.TaskType // the job's task types, in job order
	inState(s TaskState) int       // not variadic: a slice passed through the interface is allocated on every step
	typeCount(typ taskspec.TaskType, s TaskState) int
	live(typ taskspec.TaskType) int        // tasks of typ holding a container
	unstoppedOf(typ taskspec.TaskType) int // live tasks of typ not asked to stop
	lastStop() time.Time                   // the latest stop's StopRequestedAt
	// ended is a task's state and when it ended, without copying its
	// TaskStatus (the fast path asks on every step).
	ended(id taskspec.TaskID) (state TaskState, endedAt time.Time, ok bool)
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(View) Verdict

// Verdict implements Policy.
func (f PolicyFunc) Verdict(v View) Verdict { return f(v) }

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
	// Restart lists ended tasks to run again in a new container: the machine
	// asks YARN for one more container of their group.
	Restart []taskspec.TaskID
	// Replace lists failed tasks to run again as Restart does, the loss
	// kept among the job's diagnostics (an elastic job's lost worker:
	// ElasticPolicy).
	Replace []taskspec.TaskID
}

// AllSucceed is the policy of generic commands: the job succeeds when every
// task exits 0 and fails as soon as one task fails, naming it.
type AllSucceed struct{}

// Verdict implements Policy.
func (AllSucceed) Verdict(v View) Verdict {
	if failed := Failures(v.Tasks); len(failed) > 0 {
		return Verdict{Outcome: JobFailed, Diagnostics: failed}
	}
	for _, t := range v.Tasks {
		if !t.State.Ended() {
			return Verdict{}
		}
	}
	return allSucceeded(len(v.Tasks))
}

// fastVerdict implements fastPolicy: AllSucceed's Verdict while no task
// has failed.
func (AllSucceed) fastVerdict(c tally) (Verdict, bool) {
	if c.inState(TaskFailed) > 0 {
		return Verdict{}, false
	}
	if c.inState(TaskSucceeded)+c.inState(TaskStopped) < c.total() {
		return Verdict{}, true
	}
	return allSucceeded(c.total()), true
}

func allSucceeded(tasks int) Verdict {
	return Verdict{Outcome: JobSucceeded, Diagnostics: fmt.Sprintf("all %d tasks succeeded", tasks)}
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
	sortByEnd(failed)
	parts := make([]string, len(failed))
	for i, t := range failed {
		parts[i] = t.Failure
	}
	return strings.Join(parts, "; ")
}

func sortByEnd(ts []TaskStatus) {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].EndOrder < ts[j].EndOrder })
}
