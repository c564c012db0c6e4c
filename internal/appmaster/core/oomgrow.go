package core

import (
	"fmt"
	"math"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Memory growth (--oom-grow, taskspec.Job.OOMGrow): a task YARN killed
// for its memory (exit status -104 or -103) that restarts gets FACTOR
// times the memory it had, up to the largest node of its label (and the
// scheduler's largest container), said when capped. The restart itself is
// any restart's: counted toward --max-restarts like the memory kill always
// was. The grown task asks alone, under an allocation_request_id of its own
// (a container shape never mixes with its group's), and keeps its memory
// for the rest of the job.

// memoryKill reports whether YARN killed a container for its memory.
func memoryKill(status int32) bool {
	return status == ExitKilledExceededPMem || status == ExitKilledExceededVMem
}

// growMemory sets the memory of failed t's next attempt after YARN killed
// it for its memory, and returns what its failure line adds: the memory
// it restarts with, and what capped it.
func (m *Machine) growMemory(t *TaskStatus) string {
	if m.job.OOMGrow <= 1 || !memoryKill(t.ExitStatus) {
		return ""
	}
	cur := m.memoryOf(t.Task)
	want := int64(math.Ceil(float64(cur) * m.job.OOMGrow))
	limit, cap := m.memoryCap(t.Task.Type)
	switch {
	case limit > 0 && cur >= limit:
		return fmt.Sprintf(" (%s restarts with its %d MiB: %s is no larger)", t.Task, cur, cap)
	case limit > 0 && want > limit:
		m.memory[t.Task] = limit
		return fmt.Sprintf(" (%s restarts with %d MiB: --oom-grow %g, capped by %s)", t.Task, limit, m.job.OOMGrow, strings.TrimSuffix(cap, ","))
	}
	m.memory[t.Task] = want
	return fmt.Sprintf(" (%s restarts with %d MiB: --oom-grow %g)", t.Task, want, m.job.OOMGrow)
}

// memoryOf is the memory task's next container asks for: grown, or its
// group's.
func (m *Machine) memoryOf(task taskspec.TaskID) int64 {
	if mem, ok := m.memory[task]; ok {
		return mem
	}
	return m.baseGroup(task.Type).spec.Resources.MemoryMiB
}

// memoryCap is the most memory a task of typ may grow to, and what sets
// it, in words; 0 when nothing is known.
func (m *Machine) memoryCap(typ taskspec.TaskType) (int64, string) {
	label := orDefault(m.baseGroup(typ).nodeLabel, m.defaultLabel)
	limit, cap := m.largestNode[label], "the largest node without a label"
	if label != "" {
		cap = fmt.Sprintf("the largest node labelled %s", label)
	}
	cap = fmt.Sprintf("%s, %d MiB,", cap, limit)
	if m.maxMemoryMiB > 0 && (limit == 0 || m.maxMemoryMiB < limit) {
		limit, cap = m.maxMemoryMiB, fmt.Sprintf("the scheduler's largest container, %d MiB,", m.maxMemoryMiB)
	}
	return limit, cap
}

// baseGroup is typ's own group (not a task's ask of its own).
func (m *Machine) baseGroup(typ taskspec.TaskType) *group {
	for _, g := range m.groups {
		if g.spec.Type == typ && g.task == nil {
			return g
		}
	}
	return nil
}

// resize gives pending t, whose memory grew, an ask of its own with that
// memory (reused from an earlier attempt when it has one).
func (m *Machine) resize(t *TaskStatus) {
	mem, ok := m.memory[t.Task]
	if !ok || t.placement != nil {
		return
	}
	for _, g := range m.groups {
		if g.task == t && g.node == "" && g.spec.Resources.MemoryMiB == mem {
			t.placement = g
			return
		}
	}
	base := m.baseGroup(t.Task.Type)
	g := *base
	g.spec.Resources.MemoryMiB = mem
	m.nextRequestID++
	g.allocationRequestID, g.rmOutstanding, g.task = m.nextRequestID, 0, t
	m.groups = append(m.groups, &g)
	t.placement = &g
}
