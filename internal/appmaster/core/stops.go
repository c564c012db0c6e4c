package core

// Stops: a task the job no longer needs is asked to end gracefully,
// then stopped hard if still live ContainerStopGrace later (escalateStops).

// stop ends t's container: gracefully first when the machine has a
// ContainerStopGrace (escalateStops follows up), else, or when hard, at once. A
// container whose Launch has not left the machine yet is never started: it
// goes back to the RM instead.
func (m *Machine) stop(t *TaskStatus, reason string, hard bool) {
	if !t.StopRequested {
		m.types[t.Task.Type].unstopped -= unstopped(t)
		t.StopRequested, t.StopRequestedAt = true, m.now
		m.lastStopAt = m.now
		if m.dropPendingLaunch(t.Container.ID) {
			m.ready.Release = append(m.ready.Release, t.Container.ID)
			m.released(t.Container.ID)
			m.end(t, ExitKilledByAppMaster, "stopped before launch: "+reason, "")
			return
		}
	}
	hard = hard || m.stopGrace == 0
	if hard {
		t.HardStopped, t.HardStopAt = true, m.now
	} else {
		m.softStopped = append(m.softStopped, timedTask{t, t.StopRequestedAt})
	}
	m.ready.Stop = append(m.ready.Stop, Stop{Task: t.Task, Container: t.Container, Reason: reason, Hard: hard})
}

// escalateStops hard-stops the tasks still live ContainerStopGrace after they were
// asked to end gracefully (a launcher still localizing, or hung).
func (m *Machine) escalateStops() {
	if first, ok := m.softStopped.earliest(gracefulStop); !ok || m.now.Sub(first) < m.stopGrace {
		return
	}
	for _, t := range m.tasks {
		if t.StopRequested && t.State.Live() && !t.HardStopped && m.now.Sub(t.StopRequestedAt) >= m.stopGrace {
			m.stop(t, "still running "+m.stopGrace.String()+" after it was asked to end", true)
		}
	}
}

// gracefulStop: the task is still live after a graceful stop, the one
// queued.
func gracefulStop(e timedTask) bool {
	return e.t.StopRequested && e.t.State.Live() && !e.t.HardStopped && e.t.StopRequestedAt.Equal(e.at)
}
