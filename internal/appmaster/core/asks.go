package core

import (
	"github.com/tfyarn/tfyarn/taskspec"
)

// Asks: per task group, the containers still wanted, stated to the RM
// only when the count changes (syncAsks).

// group is one task group's ask bookkeeping. rmOutstanding is what the RM
// still counts for our ask: the last absolute count sent, minus containers
// allocated since (the RM decrements as it allocates). An Ask goes out only
// when the count we want differs, so the RM never hears a stale count.
type group struct {
	spec                taskspec.TaskGroup
	nodeLabel           string
	allocationRequestID int64
	priority            int32
	rmOutstanding       int // -1: unknown to the RM (after a resync)
	// node and task are set for an in-place replacement's ask: one
	// container on node, for task; rack is node's, when the RM said.
	node, rack string
	task       *TaskStatus
	// spreadTag is the group's allocation tag under --spread (Ask.SpreadTag).
	spreadTag string
	// affinityTag and affinity: Ask.AffinityTag and Ask.Affinity
	// (--colocate, --apart).
	affinityTag string
	affinity    taskspec.Affinity
}

// Rack reports the rack the RM reported for host (NodeRacks), "" when it
// has not.
func (m *Machine) Rack(host string) string { return m.racks[host] }

// AskTable is the full ask table: per group, the containers still wanted,
// for status pages and tests. What goes to the RM is Ready's Asks, which
// holds only changes.
func (m *Machine) AskTable() []Ask {
	out := make([]Ask, len(m.groups))
	for i, g := range m.groups {
		out[i] = m.ask(g)
	}
	return out
}

// syncAsks emits an Ask for each group whose wanted count differs from what
// the RM holds, replacing an unsent Ask for the same group.
func (m *Machine) syncAsks() {
	for _, g := range m.groups {
		a := m.ask(g)
		if a.Count == g.rmOutstanding {
			continue
		}
		g.rmOutstanding = a.Count
		replaced := false
		for i := range m.ready.Asks {
			if m.ready.Asks[i].AllocationRequestID == a.AllocationRequestID {
				m.ready.Asks[i], replaced = a, true
			}
		}
		if !replaced {
			m.ready.Asks = append(m.ready.Asks, a)
		}
	}
}

func (m *Machine) ask(g *group) Ask {
	wanted := 0
	switch {
	case m.restarting != nil:
	case g.task != nil:
		if m.wants(g, g.task) {
			wanted = 1
		}
	default:
		wanted = m.types[g.spec.Type].counts[TaskPending] - m.placedPending(g.spec.Type)
	}
	return Ask{
		TaskType:            g.spec.Type,
		AllocationRequestID: g.allocationRequestID,
		Priority:            g.priority,
		Resource:            g.spec.Resources,
		NodeLabel:           g.nodeLabel,
		Node:                g.node,
		Rack:                g.rack,
		Count:               wanted,
		SpreadTag:           g.spreadTag,
		Partition:           m.partition(g),
		AffinityTag:         g.affinityTag,
		Affinity:            g.affinity,
	}
}

// partition is the node partition a placed group's SchedulingRequest
// names (--spread, --colocate, --apart): its label, else the queue's
// default; "" for other groups (their ResourceRequests get the queue's
// default from the RM).
func (m *Machine) partition(g *group) string {
	if !g.placed() {
		return ""
	}
	return orDefault(g.nodeLabel, m.defaultLabel)
}

// placed reports whether g asks with SchedulingRequests: it is spread,
// or placed by or for another type (--colocate, --apart).
func (g *group) placed() bool {
	return g.spreadTag != "" || g.affinityTag != "" || g.affinity.Type != ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
