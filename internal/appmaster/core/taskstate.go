package core

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Task states: where each task is, and the per-type counts and queues
// kept in step with them (setState), so that an event costs what it
// touches rather than a pass over every task.

// TaskState is where one task is (success.TaskState, which policies see).
// A task goes Pending → Launching → Running → Succeeded | Failed |
// Stopped; a restart takes an ended task back to Pending with the next
// Attempt.
type TaskState = success.TaskState

// The task states (success.TaskState's).
const (
	TaskPending   = success.TaskPending
	TaskLaunching = success.TaskLaunching
	TaskRunning   = success.TaskRunning
	TaskSucceeded = success.TaskSucceeded
	TaskFailed    = success.TaskFailed
	TaskStopped   = success.TaskStopped
)

// TaskStatus is one task as the machine knows it.
type TaskStatus struct {
	Task    taskspec.TaskID
	State   TaskState
	Attempt int // 0 for the first container, one more per restart
	// Container is the task's current (or last) container; zero while the
	// first attempt is pending.
	Container Container
	// Host and Port are what the task registered (TaskRegistered); empty
	// until it does, and cleared by a restart.
	Host string
	Port int
	// ExitStatus and Diagnostics are from ContainerCompleted; a start
	// failure gives ExitInvalid and the failure's reason.
	ExitStatus  int32
	Diagnostics string
	// Failure is one line naming the task, its container and node and why it
	// failed; set when State is TaskFailed.
	Failure string
	// Earlier are the task's ended attempts, oldest first: what each ran
	// with and how it ended (the history's attempts).
	Earlier []EndedAttempt
	// StopRequested: the machine asked for the task's container to end (no
	// longer needed, or the job ended); its end is then TaskStopped.
	// StopRequestedAt is when (the first, graceful, stop); HardStopped and
	// HardStopAt say whether and when the stop escalated to a hard one: see
	// Config.ContainerStopGrace.
	StopRequested, HardStopped  bool
	StopRequestedAt, HardStopAt time.Time
	// PlaceOn and WantPort are set while a worker replaced in place waits
	// for its container: the node it must run on and the port it re-takes.
	PlaceOn  string
	WantPort int
	// Times come from Tick; EndOrder counts task ends (1, 2, ...) so
	// policies can tell which failure came first within one instant.
	RequestedAt, LaunchedAt, StartedAt, EndedAt time.Time
	EndOrder                                    uint64

	// signalled holds the launcher's report of a program killed from
	// outside while YARN's reason is awaited (ProgramSignalled).
	signalled *ProgramSignalled
	// signalledAt is when it came.
	signalledAt time.Time
	// placement is the ask of an in-place replacement (PlaceOn).
	placement *group
	// unallocated: failed for never getting a container (allocDeadline),
	// which no restart would change.
	unallocated bool
	// noRestart: its program failed and said a restart cannot help
	// (ContainerCompleted.NoRestart).
	noRestart bool
	// overdue: an elastic job's worker still waiting for a container past
	// --alloc-timeout while the job holds --min-workers (elastic_alloc.go):
	// still asked for, no longer one of the workers that remain.
	overdue bool
	// PreemptionDeadline is set once the task was warned that YARN will
	// preempt its container (preemption.go): the earliest kill.
	PreemptionDeadline time.Time
}

// typeIndex is one task type's tasks: tasks[first:first+n] in job order.
type typeIndex struct {
	first, n int
	// cursor: no task of the type before it is pending without a
	// placement (firstPending starts there).
	cursor int
	counts [numTaskStates]int // tasks per TaskState
	// unstopped: live tasks the machine has not asked to stop.
	unstopped int
}

const numTaskStates = int(TaskStopped) + 1

// timedQueue holds tasks in the order of a time the machine gave them (its
// clock never goes back), to learn the earliest one still pending without
// a pass over every task.
type timedQueue []timedTask

type timedTask struct {
	t  *TaskStatus
	at time.Time
}

// earliest drops the entries no longer pending (stale, per pending, which
// must hold for every entry once it fails) and returns the first left.
func (q *timedQueue) earliest(pending func(timedTask) bool) (time.Time, bool) {
	for len(*q) > 0 && !pending((*q)[0]) {
		(*q)[0] = timedTask{}
		*q = (*q)[1:]
	}
	if len(*q) == 0 {
		return time.Time{}, false
	}
	return (*q)[0].at, true
}

// setState moves t to s, keeping the counts.
func (m *Machine) setState(t *TaskStatus, s TaskState) {
	ti := m.types[t.Task.Type]
	ti.counts[t.State]--
	ti.counts[s]++
	m.stateCounts[t.State]--
	m.stateCounts[s]++
	ti.unstopped -= unstopped(t)
	t.State = s
	ti.unstopped += unstopped(t)
}

func unstopped(t *TaskStatus) int {
	if t.State.Live() && !t.StopRequested {
		return 1
	}
	return 0
}

// live is how many tasks of typ hold a container.
func (m *Machine) live(typ taskspec.TaskType) int {
	if ti := m.types[typ]; ti != nil {
		return ti.counts[TaskLaunching] + ti.counts[TaskRunning]
	}
	return 0
}

// inStates is how many tasks are in one of states.
func (m *Machine) inStates(states ...TaskState) int {
	n := 0
	for _, s := range states {
		n += m.stateCounts[s]
	}
	return n
}

// Tasks returns every task's status, in job order.
func (m *Machine) Tasks() []TaskStatus {
	out := make([]TaskStatus, len(m.tasks))
	for i, t := range m.tasks {
		out[i] = *t
	}
	return out
}

// Task returns one task's status.
func (m *Machine) Task(id taskspec.TaskID) (TaskStatus, bool) {
	if t := m.byTask[id]; t != nil {
		return *t, true
	}
	return TaskStatus{}, false
}

// TaskOfContainer returns the task whose current (or last) container is
// id, without the copy of every task that Tasks makes.
func (m *Machine) TaskOfContainer(id string) (TaskStatus, bool) {
	if t := m.taskOf(id); t != nil {
		return *t, true
	}
	return TaskStatus{}, false
}

// Count reports how many tasks are in any of states, without the copy of
// every task that Tasks makes.
func (m *Machine) Count(states ...TaskState) int { return m.inStates(states...) }

// end records that t's container is over. why completes the Failure line
// when the end is a failure.
func (m *Machine) end(t *TaskStatus, exitStatus int32, diagnostics, why string) {
	t.ExitStatus = exitStatus
	t.Diagnostics = diagnostics
	t.EndedAt = m.now
	m.ends++
	t.EndOrder = m.ends
	switch {
	case t.StopRequested:
		m.setState(t, TaskStopped)
	case exitStatus == ExitSuccess:
		m.setState(t, TaskSucceeded)
	default:
		m.setState(t, TaskFailed)
		t.Failure = t.Task.String() + where(t.Container) + " " + why
		m.nodeFailed(t)
	}
}

// where names a task's container in its Failure line: " (container X on
// node:port)" on YARN, nothing for a local process (no node).
func where(c Container) string {
	if c.NodeID == "" {
		return ""
	}
	return fmt.Sprintf(" (container %s on %s)", c.ID, c.NodeID)
}

// EndedAttempt is one of a task's attempts that ended and was restarted:
// its container, node and memory, and its failure line (empty for a task
// a cluster restart stopped), which says when --oom-grow changed the memory
// of the next ("(worker:0 restarts with 512 MiB: --oom-grow 2)").
type EndedAttempt struct {
	Attempt     int
	ContainerID string
	Node        string
	MemoryMiB   int64
	Failure     string
}
