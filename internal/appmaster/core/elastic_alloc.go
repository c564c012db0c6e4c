package core

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// An elastic job's allocation deadline (--min-workers with
// --alloc-timeout). An elastic job (its framework's rendezvous: elastic
// PyTorch's torchrun) trains with any number of workers from --min-workers
// up, so a worker that waits for a container
// longer than --alloc-timeout is the job's failure only when the job
// cannot train without it:
//
//   - At a worker's deadline (from the AM's start, or from its loss for a
//     replacement), the job fails when fewer than --min-workers workers
//     hold a container or have succeeded, naming the workers that got
//     none, their shape and what the cluster offers.
//   - Otherwise the job goes on: the worker stays asked for (overdue), and
//     when its container comes it joins the running job as a late worker
//     does. The AM log says so once (Ready.Notes) and Waiting says, for as
//     long as it waits, since when and what the cluster offers there.
//   - An overdue worker is not one of the workers that remain (as a
//     replacement without a container is not): should the job later drop
//     below --min-workers, it fails, naming the workers it lost and the
//     ones still waiting.
//   - Once a worker has succeeded the others are finishing and a newcomer
//     would find no round to join (worse: agents that see a node waiting
//     may restart their workers to admit it, as torchrun's do): every worker still
//     waiting for a container is given up, its ask withdrawn, and recorded
//     as failed for never getting one, which the job's diagnostics name.

// workersHeld counts the workers that hold a container or have succeeded:
// those an elastic job trains, or trained, with.
func (m *Machine) workersHeld() int {
	ti := m.types[taskspec.Worker]
	if ti == nil {
		return 0
	}
	return m.live(taskspec.Worker) + ti.counts[TaskSucceeded]
}

// elasticLate applies an elastic job's rule to the tasks whose wait has
// just passed --alloc-timeout: it returns those that fail the job (all of
// them while fewer than --min-workers workers are held) and lets the
// others wait on, overdue.
func (m *Machine) elasticLate(late []*TaskStatus) []*TaskStatus {
	held := m.workersHeld()
	if held < m.minWorkers {
		return late
	}
	var fatal []*TaskStatus
	shapes := m.groupSpecs()
	for _, t := range late {
		if t.Task.Type != taskspec.Worker {
			fatal = append(fatal, t)
			continue
		}
		t.overdue = true
		note := unallocatedSentence(shapes, []TaskStatus{*t}, fmt.Sprintf("was not allocated within %s (--alloc-timeout)", m.allocTimeout))
		if offer := m.offerFor(t.Task.Type); offer != "" {
			note += ": " + offer
		}
		m.ready.Notes = append(m.ready.Notes, note+fmt.Sprintf("; the job goes on with the %d of %d workers that have one (--min-workers %d) and keeps asking for it",
			held, m.types[taskspec.Worker].n, m.minWorkers))
	}
	return fatal
}

// elasticShort begins the diagnostics of an elastic job that fails at
// --alloc-timeout.
func (m *Machine) elasticShort() string {
	n := 0
	if ti := m.types[taskspec.Worker]; ti != nil {
		n = ti.n
	}
	return fmt.Sprintf("only %d of %d workers got a container within %s, fewer than --min-workers %d: ", m.workersHeld(), n, m.allocTimeout, m.minWorkers)
}

// offerFor is what the cluster offers the queue where typ's asks land, ""
// when the driver did not say.
func (m *Machine) offerFor(typ taskspec.TaskType) string {
	return trimOffer(m.clusterOffers[m.groupSpecs()[typ].NodeLabel])
}

// elasticFinishing gives up the workers still waiting for a container
// once a worker has succeeded.
func (m *Machine) elasticFinishing() {
	ti := m.types[taskspec.Worker]
	if ti == nil || ti.counts[TaskSucceeded] == 0 || ti.counts[TaskPending] == 0 {
		return
	}
	var done taskspec.TaskID
	for _, t := range m.tasks[ti.first : ti.first+ti.n] {
		if t.State == TaskSucceeded {
			done = t.Task
			break
		}
	}
	shapes := m.groupSpecs()
	for _, t := range m.tasks[ti.first : ti.first+ti.n] {
		if t.State != TaskPending {
			continue
		}
		waited := m.now.Sub(t.RequestedAt)
		if t.RequestedAt.IsZero() {
			waited = 0
		}
		m.setState(t, TaskFailed)
		t.unallocated, t.overdue = true, false
		m.unallocatedFailed++
		t.ExitStatus = ExitInvalid
		t.EndedAt = m.now
		m.ends++
		t.EndOrder = m.ends
		t.Failure = unallocatedSentence(shapes, []TaskStatus{*t}, fmt.Sprintf("got no container before %s succeeded (waited %s), not asked for since: the job was finishing", done, waited.Round(time.Second)))
		m.ready.Notes = append(m.ready.Notes, fmt.Sprintf("no longer asking for %s's container: %s succeeded, the job is finishing", t.Task, done))
	}
}

// overdueWaiting is Waiting's line for an overdue worker.
func (m *Machine) overdueWaiting(t *TaskStatus, sh groupShape) string {
	line := fmt.Sprintf("%s waiting for a container (%s) since %s, past --alloc-timeout %s", t.Task, Shape(sh.Resources, sh.NodeLabel), t.RequestedAt.UTC().Format("15:04:05 UTC"), m.allocTimeout)
	if offer := trimOffer(m.clusterOffers[sh.NodeLabel]); offer != "" {
		line += ": " + offer
	}
	return line + fmt.Sprintf("; the job goes on without it (--min-workers %d) and keeps asking", m.minWorkers)
}
