package core

import (
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Success: after every step the machine asks its Policy what the tasks'
// states mean, from its counts when the policy can answer from them
// (fastPolicy), and carries out the Verdict.

// consultPolicy judges the tasks' states and acts on the Verdict: the
// job's end, or the stops and restarts that apply.
func (m *Machine) consultPolicy() {
	v, ok := m.shortVerdict()
	if !ok {
		v = m.policy.Verdict(View{Now: m.now, Tasks: m.Tasks(), Replaced: m.replaced})
	}
	switch v.Outcome {
	case JobSucceeded:
		m.finish(Succeeded, v.Diagnostics)
		return
	case JobFailed:
		m.finish(Failed, v.Diagnostics)
		return
	}
	for _, id := range v.Stop {
		if t := m.byTask[id]; t != nil && t.State.Live() && !t.StopRequested {
			m.stop(t, "no longer needed", false)
		}
	}
	for _, id := range v.Restart {
		if t := m.byTask[id]; t != nil && t.State.Ended() {
			m.requeue(t)
		}
	}
	for _, id := range v.Replace {
		if t := m.byTask[id]; t != nil && t.State == TaskFailed {
			// The failure leaves the task's status with the requeue: the
			// job's diagnostics keep it.
			m.causes = append(m.causes, "replaced after "+t.Failure)
			m.replaced++
			m.requeue(t)
		}
	}
}

// shortVerdict is, when the machine's counts alone decide it (ok), the
// Verdict of the policy or one that does the same (an empty one for a Stop
// list of tasks all stopping already), which spares consulting it on a
// copy of every task's status after every event. Only the policies with a
// fast path (fastPolicy) answer; others are always consulted.
func (m *Machine) shortVerdict() (v Verdict, ok bool) {
	if p, fast := m.policy.(fastPolicy); fast {
		return p.fastVerdict(m)
	}
	return Verdict{}, false
}

// restartsOver reports whether the policy says nothing restarts any more
// (settlingPolicy: a SuccessChief job whose decider succeeded).
func (m *Machine) restartsOver() bool {
	p, ok := m.policy.(settlingPolicy)
	return ok && p.restartsOver(m)
}

// The machine's counts, as a policy's fast path reads them (tally).

func (m *Machine) clock() time.Time { return m.now }

func (m *Machine) total() int { return len(m.tasks) }

func (m *Machine) jobTypes() []taskspec.TaskType { return m.typeOrder }

func (m *Machine) typeCount(typ taskspec.TaskType, s TaskState) int {
	if ti := m.types[typ]; ti != nil {
		return ti.counts[s]
	}
	return 0
}

func (m *Machine) unstoppedOf(typ taskspec.TaskType) int {
	if ti := m.types[typ]; ti != nil {
		return ti.unstopped
	}
	return 0
}

func (m *Machine) lastStop() time.Time { return m.lastStopAt }

func (m *Machine) ended(id taskspec.TaskID) (TaskState, time.Time, bool) {
	if t := m.byTask[id]; t != nil {
		return t.State, t.EndedAt, true
	}
	return 0, time.Time{}, false
}
