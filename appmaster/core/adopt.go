package core

import "fmt"

// AttemptRestarted records that this ApplicationMaster is a later attempt
// (YARN started it after the previous one died, --am-attempts) that could
// not adopt the previous attempt's TensorFlow cluster, so every task starts
// afresh. That is a cluster restart, not the program's fault: it is counted
// as such (Restarts, TFYARN_RESTART, the diagnostics), not against
// --max-restarts. The driver calls it right after stepping Registered,
// before any container; a method rather than an event so that it needs no
// case in Step.
func (m *Machine) AttemptRestarted(attempt int) {
	if m.phase != PhaseRunning || len(m.containers) > 0 {
		return
	}
	m.uncounted++
	m.causes = append(m.causes, fmt.Sprintf("restart %d after ApplicationMaster attempt %d ended and its tasks could not be adopted (not counted: not the program's fault)",
		m.counted+m.uncounted, attempt-1))
	m.generation++
}
