package core

import (
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// The application's life: unregistered until the RM takes the AM
// (registered), running, finished once the job is decided (finish), after
// which every event is ignored.

// Phase is where the machine is in the application's life.
type Phase int

const (
	// PhaseUnregistered: waiting for Registered; nothing is asked yet.
	PhaseUnregistered Phase = iota
	// PhaseRunning: asking for containers and running tasks.
	PhaseRunning
	// PhaseFinished: Finish has been emitted; every later event is ignored.
	PhaseFinished
)

func (p Phase) String() string {
	if names := [...]string{"unregistered", "running", "finished"}; p >= 0 && int(p) < len(names) {
		return names[p]
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Phase reports where the machine is.
func (m *Machine) Phase() Phase { return m.phase }

func (m *Machine) registered(e Registered) {
	if m.phase != PhaseUnregistered {
		return
	}
	m.phase = PhaseRunning
	if e.Limits.Known {
		m.maxMemoryMiB = e.Limits.MaxMemoryMiB
	}
	for _, g := range m.groups {
		if err := taskspec.CheckFits(g.spec, e.Limits); err != nil {
			m.finish(Failed, err.Error())
			return
		}
	}
	for _, t := range m.tasks {
		t.RequestedAt = m.now
	}
	m.allocScan = true
	m.excludeSubmitted()
}

// finish decides the job: whatever still runs is stopped hard (a graceful
// stop under way included), asks no longer matter (unregistering drops
// them), and nothing happens after.
func (m *Machine) finish(status FinalStatus, diagnostics string) {
	for _, t := range m.tasks {
		if t.State.Live() && !t.HardStopped {
			m.stop(t, "the job is "+status.String(), true)
		}
	}
	m.decide(&Finish{Status: status, Diagnostics: diagnostics})
}

// handOver ends this attempt without ending the job (Finish.HandOver): the tasks are left
// running for the next attempt to adopt, as a dead attempt's would be; after a user's kill YARN
// stops them itself.
func (m *Machine) handOver(diagnostics string) {
	m.decide(&Finish{Status: Killed, Diagnostics: diagnostics, HandOver: true})
}

// decide is what finish and handOver share: asks, warnings and exclusions no longer matter (a stop
// says more; no allocate call follows), the diagnostics gain the restarts' causes, and nothing
// happens after.
func (m *Machine) decide(f *Finish) {
	m.ready.Asks = nil
	m.ready.Warn = nil
	m.ready.Exclude = nil
	if len(m.causes) > 0 {
		f.Diagnostics += "; " + strings.Join(m.causes, "; ")
	}
	m.ready.Finish = f
	m.phase = PhaseFinished
}
