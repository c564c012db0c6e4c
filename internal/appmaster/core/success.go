package core

import "github.com/tfyarn/tfyarn/internal/success"

// Success: after every step the machine asks its Policy what the tasks'
// states mean, from its counts when the policy can answer from them
// (success.FastPolicy), and carries out the Verdict.

// consultPolicy judges the tasks' states and acts on the Verdict: the
// job's end, or the stops and restarts that apply.
func (m *Machine) consultPolicy() {
	v, ok := m.shortVerdict()
	if !ok {
		v = m.policy.Verdict(m.view())
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
// fast path (success.FastPolicy) answer; others are always consulted.
func (m *Machine) shortVerdict() (v Verdict, ok bool) {
	if p, fast := m.policy.(success.FastPolicy); fast {
		return p.FastVerdict((*counts)(m))
	}
	return Verdict{}, false
}

// restartsOver reports whether the policy says nothing restarts any more
// (success.SettlingPolicy: a SuccessChief job whose decider succeeded).
func (m *Machine) restartsOver() bool {
	p, ok := m.policy.(success.SettlingPolicy)
	return ok && p.RestartsOver((*counts)(m))
}
