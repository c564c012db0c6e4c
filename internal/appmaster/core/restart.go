package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Restarts: the job's taskspec.RestartPolicy, applied by the machine before
// it consults the Policy, so that a failure that restarts never reaches the
// success rule.
//
//   - YARN's exits that are not the program's fault (IsInfrastructureExit:
//     preempted, lost or decommissioned node, bad disks, killed by the RM)
//     restart without counting toward Max, up to
//     taskspec.MaxUncountedRestarts, also when Max is 0 (the default): a
//     job should not fail because the cluster took a container back.
//     RestartPolicy.NoInfraRestarts makes them failures like any other.
//   - Any other failure restarts, counting, up to Max (none by default), if
//     RetryExitCodes is empty or lists its exit code; past that it is the
//     job's, as the success rule says. So is a failure whose program said
//     a restart cannot help (ContainerCompleted.NoRestart), at once.
//   - An evaluator or TensorBoard task restarts alone; the cluster never
//     hears of it.
//   - A worker of a ParameterServerStrategy job (a chief and ps) that had
//     registered is replaced in place: a container on the same node
//     (asked with relaxed locality off), told to re-take the same port, so
//     the chief's ClusterCoordinator reconnects to the same address and
//     nothing else restarts. A lost node, bad disks or its node's exclusion
//     (badnodes.go) rule that out, and so
//     does no container on the node within taskspec.InPlaceWait: then the
//     whole cluster restarts.
//   - Any other chief, worker or ps failure restarts the whole cluster:
//     every live task is stopped (gracefully, escalating as any stop), and
//     once all have ended (or taskspec.RestartStopWait after the
//     escalation) every task goes back to pending with the next attempt,
//     the Ready carries a Restart (the driver starts a new rendezvous: new
//     addresses, a new TF_CONFIG) and new containers are asked for.
//     Failures in the same step are one restart.
//   - Nothing restarts once a SuccessChief job's decider has succeeded: what
//     is left is the success rule's business.
//
// Every failure that caused a restart is listed in the job's final
// diagnostics, numbered.

// Restart, in Ready: the cluster starts again. The driver starts a new
// rendezvous generation (registrations and the published cluster spec are
// forgotten) before any of this Ready's launches. Number is how many
// cluster restarts the job has had (TFYARN_RESTART of the new tasks).
type Restart struct {
	Number int
}

// Restarts reports how many restarts the job has had, counted or not
// (cluster restarts and tasks restarted alone).
func (m *Machine) Restarts() int { return m.counted + m.uncounted }

// ClusterRestarts reports how many times the whole cluster restarted.
func (m *Machine) ClusterRestarts() int { return m.generation }

// applyRestarts restarts what the failures of this step allow.
func (m *Machine) applyRestarts() {
	if m.restarting != nil {
		m.continueRestart()
		return
	}
	if m.restartsOver() {
		return
	}
	// The pass below acts only on a failure that may restart or on a
	// replacement waiting for its node; restarts off, there is neither.
	if m.restartPolicy.Off() || (m.inStates(TaskFailed) == m.unallocatedFailed && m.placedPending("") == 0) {
		return
	}
	var cluster []*TaskStatus
	for _, t := range m.tasks {
		switch {
		case t.State == TaskPending && t.placement != nil && t.placement.node != "" && m.now.Sub(t.RequestedAt) >= taskspec.InPlaceWait:
			// No container on its node: the address is gone, and with it
			// the in-place replacement. Its failure was counted already.
			t.placement = nil
			m.mayBeWanted(t)
			m.beginClusterRestart(nil, fmt.Sprintf("%s got no container on %s within %s", t.Task, t.PlaceOn, taskspec.InPlaceWait))
			return
		case t.State != TaskFailed || t.unallocated:
		case !t.Task.Type.InCluster():
			if counted, ok := m.mayRestart([]*TaskStatus{t}); ok {
				t.Failure += m.growMemory(t)
				m.count(counted, t.Failure)
				m.requeue(t)
			}
		default:
			cluster = append(cluster, t)
		}
	}
	if len(cluster) == 0 {
		return
	}
	counted, ok := m.mayRestart(cluster)
	if !ok {
		return // the success rule fails the job
	}
	for _, t := range cluster {
		t.Failure += m.growMemory(t)
	}
	if t := cluster[0]; len(cluster) == 1 && m.inPlace(t) {
		m.count(counted, t.Failure)
		node, port := hostOf(t.Container.NodeID), t.Port
		m.requeue(t)
		m.place(t, node, port)
		return
	}
	lines := make([]string, len(cluster))
	for i, t := range cluster {
		lines[i] = t.Failure
	}
	m.count(counted, lines...)
	m.beginClusterRestart(cluster, "")
}

// mayRestart reports whether failed may restart, and whether the restart
// counts toward RestartPolicy.Max.
func (m *Machine) mayRestart(failed []*TaskStatus) (counted, ok bool) {
	for _, t := range failed {
		if IsInfrastructureExit(t.ExitStatus) && !m.restartPolicy.NoInfraRestarts {
			continue
		}
		counted = true
		if t.noRestart {
			return true, false // the program said a restart cannot help
		}
		if t.ExitStatus > 0 && !m.restartPolicy.Retries(int(t.ExitStatus)) {
			return true, false
		}
		if t.ExitStatus < 0 && len(m.restartPolicy.RetryExitCodes) > 0 {
			return true, false // YARN's kill (memory, start failure) is not a listed exit code
		}
	}
	if counted {
		return true, m.counted < m.restartPolicy.Max // Max 0: every counted failure is the job's
	}
	return false, m.uncounted < taskspec.MaxUncountedRestarts
}

// inPlace reports whether failed t can be replaced alone at its address.
// A placed task (--spread, --colocate, --apart) cannot: its replacement
// would have to ask for its old node by name, which a SchedulingRequest
// cannot, and a ResourceRequest's container would carry no allocation
// tag, so later constrained asks could land beside it or miss it. It
// restarts with the cluster instead, whose asks keep the constraints.
func (m *Machine) inPlace(t *TaskStatus) bool {
	spread := false
	for _, g := range m.groups {
		spread = spread || (g.spec.Type == t.Task.Type && g.placed())
	}
	return t.Task.Type == taskspec.Worker && !spread && m.workersInPlace &&
		t.Port != 0 && t.ExitStatus != ExitAborted && t.ExitStatus != ExitDisksFailed &&
		!m.isExcluded(hostOf(t.Container.NodeID))
}

// count records a restart and the failures that caused it.
func (m *Machine) count(counted bool, failures ...string) {
	if counted {
		m.counted++
	} else {
		m.uncounted++
	}
	n := m.counted + m.uncounted
	for _, f := range failures {
		if !counted {
			f += " (not counted: not the program's fault)"
		}
		m.causes = append(m.causes, fmt.Sprintf("restart %d after %s", n, f))
	}
}

// requeue sends an ended task back to pending with the next attempt.
func (m *Machine) requeue(t *TaskStatus) {
	m.setState(t, TaskPending)
	if t.unallocated {
		m.unallocatedFailed--
	}
	earlier := t.Earlier
	if t.Container.ID != "" {
		// A fresh slice: snapshots handed out share the old one.
		earlier = append(append([]EndedAttempt(nil), t.Earlier...), EndedAttempt{Attempt: t.Attempt, ContainerID: t.Container.ID,
			Node: t.Container.NodeID, MemoryMiB: t.Container.Resource.MemoryMiB, Failure: t.Failure})
	}
	*t = TaskStatus{Task: t.Task, Attempt: t.Attempt + 1, Container: t.Container, RequestedAt: m.now, Earlier: earlier}
	m.allocScan = true
	m.mayBeWanted(t)
	m.resize(t)
}

// place asks for t's next container on node only, for its old port.
func (m *Machine) place(t *TaskStatus, node string, port int) {
	base := m.baseGroup(t.Task.Type)
	spec := base.spec
	spec.Resources.MemoryMiB = m.memoryOf(t.Task)
	m.nextRequestID++
	// The rack is fixed with the ask: the RM must hear a changed rack
	// as a new key, which a later replacement's ask is.
	g := &group{spec: spec, nodeLabel: base.nodeLabel, allocationRequestID: m.nextRequestID, priority: base.priority, node: node, rack: m.racks[node], task: t}
	m.groups = append(m.groups, g)
	t.placement, t.PlaceOn, t.WantPort = g, node, port
}

// hostOf is a NodeManager's host, from its host:port NodeId.
func hostOf(nodeID string) string {
	if i := strings.LastIndex(nodeID, ":"); i >= 0 {
		return nodeID[:i]
	}
	return nodeID
}

// restartState is a cluster restart under way: its stops are out.
type restartState struct {
	since time.Time
}

// beginClusterRestart stops every live task; continueRestart starts them
// again once they have ended. why, when set, is a cause that counted
// already (an in-place replacement that could not be placed).
func (m *Machine) beginClusterRestart(failed []*TaskStatus, why string) {
	if why != "" {
		m.causes = append(m.causes, fmt.Sprintf("restart %d: %s", m.counted+m.uncounted, why))
	}
	reason := "restarting the cluster"
	if len(failed) > 0 {
		reason += " after " + failed[0].Task.String() + " failed"
	}
	m.restarting = &restartState{since: m.now}
	for _, t := range m.tasks {
		if t.State.Live() && !t.StopRequested {
			m.stop(t, reason, false)
		}
	}
	m.continueRestart()
}

// continueRestart starts the cluster again once no task is live, or once
// the stopped ones had RestartStopWait past their escalation. A job with
// placed tasks (--spread, --colocate, --apart) also waits, within the
// same bound, for the RM to report its tasks' containers complete: a
// launcher reports its program's exit first, and until the NodeManager
// tells the RM, the old container's allocation tag stays on its node, so
// a new --colocate ask could be placed beside an old task that is ending
// (and a --spread or --apart one kept off its node).
func (m *Machine) continueRestart() {
	if (m.inStates(TaskLaunching, TaskRunning) > 0 || m.tagsHeld()) && m.now.Sub(m.restarting.since) < m.stopGrace+taskspec.RestartStopWait {
		return
	}
	m.restarting = nil
	m.generation++
	for _, t := range m.tasks {
		// A task still live was stopped hard and never reported (a lost
		// node): its container is given up, and a late report of it is
		// ignored (the task is no longer live in it).
		m.requeue(t)
	}
	m.ready.Restart = &Restart{Number: m.generation}
}

// tagsHeld reports whether a placed job's task has a container the RM
// has not yet reported complete (nor we released).
func (m *Machine) tagsHeld() bool {
	placed := false
	for _, g := range m.groups {
		placed = placed || g.placed()
	}
	if !placed {
		return false
	}
	for _, t := range m.tasks {
		if rec := m.containers[t.Container.ID]; t.Container.ID != "" && rec != nil && !rec.gone {
			return true
		}
	}
	return false
}
