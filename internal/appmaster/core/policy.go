package core

import (
	"time"

	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The success rule is the seam's (package success): the machine consults
// the Policy it is given (Config.Policy, which the AM and run --local get
// from the frameworks' registry: frameworks.PolicyFor) and carries out its
// Verdict; it knows no rule but AllSucceed, the one of a Config that names
// none. The seam's types go by the names the machine has always used.
type (
	// Policy decides what the job's task states mean (success.Policy).
	Policy = success.Policy
	// View is what a Policy sees (success.View).
	View = success.View
	// Verdict is a Policy's answer (success.Verdict).
	Verdict = success.Verdict
)

// A Verdict's Outcome (success.Outcome).
const (
	Undecided    = success.Undecided
	JobSucceeded = success.JobSucceeded
	JobFailed    = success.JobFailed
)

// view is what the policy sees of the machine's tasks, in job order.
func (m *Machine) view() View {
	tasks := make([]success.TaskStatus, len(m.tasks))
	for i, t := range m.tasks {
		tasks[i] = policyStatus(t)
	}
	return View{Now: m.now, Tasks: tasks, Replaced: m.replaced}
}

// policyStatus is what a Policy sees of t.
func policyStatus(t *TaskStatus) success.TaskStatus {
	return success.TaskStatus{
		Task: t.Task, State: t.State, Attempt: t.Attempt,
		ExitStatus: t.ExitStatus, Failure: t.Failure,
		StopRequested: t.StopRequested, StopRequestedAt: t.StopRequestedAt,
		PlaceOn:     t.PlaceOn,
		RequestedAt: t.RequestedAt, EndedAt: t.EndedAt, EndOrder: t.EndOrder,
		Unallocated: t.unallocated, Overdue: t.overdue, NoRestart: t.noRestart,
	}
}

// counts is the machine as a policy's fast path reads it (success.Tally):
// a conversion of the pointer, so that asking costs no allocation.
type counts Machine

func (c *counts) Clock() time.Time { return c.now }

func (c *counts) Total() int { return len(c.tasks) }

func (c *counts) JobTypes() []taskspec.TaskType { return c.typeOrder }

// InState is how many tasks are in state s: the policy's fast path asks
// on every step, so the machine keeps the totals (stateCounts) rather than
// walking its types.
func (c *counts) InState(s TaskState) int { return c.stateCounts[s] }

func (c *counts) TypeCount(typ taskspec.TaskType, s TaskState) int {
	if ti := c.types[typ]; ti != nil {
		return ti.counts[s]
	}
	return 0
}

func (c *counts) Live(typ taskspec.TaskType) int { return (*Machine)(c).live(typ) }

func (c *counts) UnstoppedOf(typ taskspec.TaskType) int {
	if ti := c.types[typ]; ti != nil {
		return ti.unstopped
	}
	return 0
}

func (c *counts) LastStop() time.Time { return c.lastStopAt }

func (c *counts) Ended(id taskspec.TaskID) (TaskState, time.Time, bool) {
	if t := c.byTask[id]; t != nil {
		return t.State, t.EndedAt, true
	}
	return 0, time.Time{}, false
}
