package core

import (
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Bad nodes: a node where taskspec.Job.MaxNodeFailures of the job's task
// attempts failed gets none of its containers for the rest of the job
// (YARN's blacklist, sent by the AM with its allocate calls), across its
// restarts and, through RestartRecord, its ApplicationMaster attempts. So
// does every node of taskspec.Job.ExcludeNodes from the start. A node with
// a failing GPU or disk would otherwise take every retry of the job.
//
// Only failures a node can cause count: a program's exit, a start that
// failed (localization, the container's launch), a lost node, bad disks.
// Preemption, a kill by the RM, the AM or the NodeManager's scheduler, and
// a memory kill (the program's size, not the node's fault) do not.

// ExcludedNode is a node the job's containers stay off, and why.
type ExcludedNode struct {
	Host   string
	Reason string
}

// String is the exclusion as logs and transcripts show it: "node1: 2
// task attempts failed there ...".
func (x ExcludedNode) String() string { return x.Host + ": " + x.Reason }

// SubmittedExclusion is the reason of a node named by --exclude-nodes.
const SubmittedExclusion = "excluded at submission (--exclude-nodes)"

// nodeFault reports whether a task attempt that failed with status may be
// its node's fault.
func nodeFault(status int32) bool {
	switch status {
	case ExitPreempted, ExitKilledByResourceManager, ExitKilledByContainerScheduler, ExitKilledAfterAppCompletion,
		ExitKilledByAppMaster, ExitKilledExceededPMem, ExitKilledExceededVMem:
		return false
	}
	return true
}

// maxNodeFailures is the job's threshold; 0 for never.
func (m *Machine) maxNodeFailures() int {
	switch n := m.job.MaxNodeFailures; {
	case n == 0:
		return taskspec.DefaultMaxNodeFailures
	case n < 0:
		return 0
	default:
		return n
	}
}

// excludeSubmitted excludes the nodes the job names, once registered.
func (m *Machine) excludeSubmitted() {
	for _, host := range m.job.ExcludeNodes {
		m.exclude(host, SubmittedExclusion)
	}
}

// nodeFailed counts t's failure against its node, and excludes the node
// once the failures reach the job's threshold.
func (m *Machine) nodeFailed(t *TaskStatus) {
	host := hostOf(t.Container.NodeID)
	limit := m.maxNodeFailures()
	// A program that said a restart cannot help named a fault of its own
	// (its input, its configuration), not of the node.
	if host == "" || limit == 0 || !nodeFault(t.ExitStatus) || t.noRestart || m.isExcluded(host) {
		return
	}
	if m.nodeFailures == nil {
		m.nodeFailures = map[string]int{}
	}
	m.nodeFailures[host]++
	if n := m.nodeFailures[host]; n >= limit {
		attempts := "task attempts"
		if n == 1 {
			attempts = "task attempt"
		}
		m.exclude(host, fmt.Sprintf("%d %s failed there (--max-node-failures %d), the last: %s", n, attempts, limit, t.Failure))
	}
}

// exclude puts host off limits for the job's containers: a Ready.Exclude
// for the driver to send and log (unless the job is decided in the same
// Step: finish drops it, no allocate call follows).
func (m *Machine) exclude(host, reason string) {
	host = strings.TrimSpace(host)
	if host == "" || m.isExcluded(host) {
		return
	}
	x := ExcludedNode{Host: host, Reason: reason}
	m.excluded = append(m.excluded, x)
	m.ready.Exclude = append(m.ready.Exclude, x)
}

// isExcluded reports whether host is excluded.
func (m *Machine) isExcluded(host string) bool {
	for _, x := range m.excluded {
		if x.Host == host {
			return true
		}
	}
	return false
}

// ExcludedNodes returns the nodes excluded so far, in the order they were.
func (m *Machine) ExcludedNodes() []ExcludedNode {
	return append([]ExcludedNode(nil), m.excluded...)
}

// resumeNodes takes over what a previous attempt recorded of the nodes:
// its failure counts and exclusions, which this attempt's RM must hear
// again (a blacklist belongs to an application attempt).
func (m *Machine) resumeNodes(r RestartRecord) {
	for host, n := range r.NodeFailures {
		if m.nodeFailures == nil {
			m.nodeFailures = map[string]int{}
		}
		m.nodeFailures[host] = max(m.nodeFailures[host], n)
	}
	for _, x := range r.Excluded {
		m.exclude(x.Host, x.Reason)
	}
}

// excludedNote adds the excluded nodes to the diagnostics of tasks that
// got no container: the cluster may have no node left for them.
func (m *Machine) excludedNote(diagnostics string) string {
	if len(m.excluded) == 0 {
		return diagnostics
	}
	hosts := make([]string, len(m.excluded))
	for i, x := range m.excluded {
		hosts[i] = x.Host
	}
	return diagnostics + fmt.Sprintf("; excluded nodes: %s", strings.Join(hosts, ", "))
}

// nodeFailureCounts copies the failure counts, for RestartRecord.
func (m *Machine) nodeFailureCounts() map[string]int {
	if len(m.nodeFailures) == 0 {
		return nil
	}
	out := make(map[string]int, len(m.nodeFailures))
	for h, n := range m.nodeFailures {
		out[h] = n
	}
	return out
}
