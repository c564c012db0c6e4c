package core

import (
	"fmt"

	"github.com/tfyarn/tfyarn/internal/containerexit"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Containers: which task a container the RM allocated goes to, and what
// its start, failure to start or end means for that task.

// containerRecord is a container the RM allocated us, and the task it went
// to.
type containerRecord struct {
	container Container
	task      *TaskStatus // nil for surplus containers
	// gone: the RM reported it complete, or we released it; until then
	// the RM counts its allocation tags on its node.
	gone bool
}

// allocated gives a new container to the first task its ask is for
// (firstPending), or releases it when no task wants it.
func (m *Machine) allocated(c Container) {
	if c.ID == "" || m.containers[c.ID] != nil {
		return
	}
	rec := &containerRecord{container: c}
	m.containers[c.ID] = rec
	g := m.groupFor(c)
	if g == nil {
		m.ready.Release = append(m.ready.Release, c.ID)
		rec.gone = true
		return
	}
	if g.rmOutstanding > 0 {
		g.rmOutstanding--
	}
	if m.isExcluded(hostOf(c.NodeID)) {
		// Allocated before the RM heard of the exclusion: given back, and
		// asked for again (syncAsks sees the count the RM holds fall).
		m.ready.Release = append(m.ready.Release, c.ID)
		rec.gone = true
		return
	}
	t := m.firstPending(g)
	if t == nil || m.restarting != nil {
		m.ready.Release = append(m.ready.Release, c.ID)
		rec.gone = true
		return
	}
	rec.task = t
	m.setState(t, TaskLaunching)
	t.overdue = false
	t.Container = c
	t.LaunchedAt = m.now
	m.ready.Launch = append(m.ready.Launch, Launch{Task: t.Task, Attempt: t.Attempt, Restart: m.generation, Port: t.WantPort, Container: c})
}

// groupFor matches a container to the ask it answers: by
// allocation_request_id, or by priority when the RM echoes no id.
func (m *Machine) groupFor(c Container) *group {
	for _, g := range m.groups {
		if c.AllocationRequestID == g.allocationRequestID {
			return g
		}
	}
	if c.AllocationRequestID != 0 {
		return nil
	}
	for _, g := range m.groups {
		if c.Priority == g.priority {
			return g
		}
	}
	return nil
}

// firstPending is the task a container of g's ask is for: the first in job
// order that g wants.
func (m *Machine) firstPending(g *group) *TaskStatus {
	if g.task != nil {
		if m.wants(g, g.task) {
			return g.task
		}
		return nil
	}
	ti := m.types[g.spec.Type]
	for ; ti.cursor < ti.n; ti.cursor++ {
		if t := m.tasks[ti.first+ti.cursor]; m.wants(g, t) {
			return t
		}
	}
	return nil
}

// mayBeWanted keeps firstPending's cursor behind t, which may have just
// become pending without a placement.
func (m *Machine) mayBeWanted(t *TaskStatus) {
	ti := m.types[t.Task.Type]
	ti.cursor = min(ti.cursor, t.Task.Index)
}

// placedPending counts the pending tasks of typ ("": of any type) waiting
// for an in-place replacement's container.
func (m *Machine) placedPending(typ taskspec.TaskType) int {
	n := 0
	for _, g := range m.groups {
		if g.task != nil && (typ == "" || g.spec.Type == typ) && m.wants(g, g.task) {
			n++
		}
	}
	return n
}

// wants reports whether g's ask is for t: a pending task of its type, and
// of its node when it is an in-place replacement's.
func (m *Machine) wants(g *group, t *TaskStatus) bool {
	if t.State != TaskPending || t.Task.Type != g.spec.Type {
		return false
	}
	if g.task != nil {
		return t == g.task && t.placement == g
	}
	return t.placement == nil
}

// taskOf returns the task whose current container is id, or nil for
// unknown, surplus and superseded containers.
func (m *Machine) taskOf(id string) *TaskStatus {
	rec := m.containers[id]
	if rec == nil || rec.task == nil || rec.task.Container.ID != id {
		return nil
	}
	return rec.task
}

func (m *Machine) launchingTask(id string) *TaskStatus {
	if t := m.taskOf(id); t != nil && t.State == TaskLaunching {
		return t
	}
	return nil
}

func (m *Machine) completed(e ContainerCompleted) {
	if rec := m.containers[e.ID]; rec != nil && !e.ByLauncher {
		rec.gone = true
	}
	t := m.taskOf(e.ID)
	if t == nil && m.unwatchedEnded(e) {
		return
	}
	if t == nil || !t.State.Live() {
		return
	}
	m.dropPendingLaunch(e.ID) // over before the loop got to start it
	why := "failed: " + containerexit.Describe(e.ExitStatus)
	if e.ExitStatus < 0 || (e.ExitStatus != ExitSuccess && t.Host == "") {
		// YARN's own kills carry the useful detail (the memory figures, the
		// lost node, the localization failure); for process exits it is
		// mostly launch boilerplate, unless the task's launcher never
		// registered: then the NodeManager's own reason (its helper's
		// refusal, an image it could not run) is all there is.
		if reason, ok := m.python.unreachable(e.Diagnostics, t.Container.NodeID); ok {
			why += ": " + reason
		} else if reason := ContainerDiagnostics(e.Diagnostics); reason != "" {
			why += ": " + reason
		}
	}
	if e.LogRule != "" {
		m.logRuleMatched(t, e)
		return
	}
	if t.noRestart = e.NoRestart != "" && e.ExitStatus > 0; t.noRestart {
		why += "; " + noRestartSaid + firstLine(e.NoRestart)
	}
	m.end(t, e.ExitStatus, e.Diagnostics, why)
}

// awaitingYarn: the task is still live after the signal queued.
func awaitingYarn(e timedTask) bool {
	return e.t.signalled != nil && e.t.State.Live() && e.t.signalledAt.Equal(e.at)
}

// dropPendingLaunch takes back a Launch the loop has not taken yet.
func (m *Machine) dropPendingLaunch(id string) bool {
	for i, l := range m.ready.Launch {
		if l.Container.ID == id {
			m.ready.Launch = append(m.ready.Launch[:i], m.ready.Launch[i+1:]...)
			return true
		}
	}
	return false
}

// yarnReasonDeadline ends the tasks whose program was killed from outside
// and whose container YARN has not reported within taskspec.YarnReasonWait:
// the launcher's exit code stands.
func (m *Machine) yarnReasonDeadline() {
	if first, ok := m.signalled.earliest(awaitingYarn); !ok || m.now.Sub(first) < taskspec.YarnReasonWait {
		return
	}
	for _, t := range m.tasks {
		if t.signalled == nil || !t.State.Live() || m.now.Sub(t.signalledAt) < taskspec.YarnReasonWait {
			continue
		}
		e := *t.signalled
		e.Diagnostics += fmt.Sprintf(" (no report from YARN within %s)", taskspec.YarnReasonWait)
		m.completed(ContainerCompleted{ID: e.ID, ExitStatus: e.ExitStatus, Diagnostics: e.Diagnostics, ByLauncher: true})
	}
}

// released marks a container we give back: the allocate call that
// carries the release takes its allocation tags off its node.
func (m *Machine) released(id string) {
	if rec := m.containers[id]; rec != nil {
		rec.gone = true
	}
}
