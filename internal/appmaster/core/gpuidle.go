package core

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Idle GPUs (taskspec.Job.GPUIdle: --gpu-idle-timeout,
// --gpu-idle-threshold, --gpu-idle-action): from the GPU samples the
// tasks' launchers send (GPUsSampled), the job is idle while every GPU
// sampled in every live task's current container is under the threshold.
// Once it has been idle for half the timeout the machine warns (a Note for
// the AM's log, GPUIdleWarning for the status report, a Warning of kind
// WarnGPUIdle for each live task's launcher, which appends it to its
// program's warnings file); at the timeout it
// ends the job FAILED saying "GPUs idle for 30m0s (0 % utilisation)", or,
// with --gpu-idle-action warn, warns that it did. A sample at or above the
// threshold, or a restart, starts the count again. Tasks without GPU
// samples do not count; a job with none is never idle.

// GPUsSampled: a task's launcher sampled the GPUs of its container.
type GPUsSampled struct {
	Task        taskspec.TaskID
	ContainerID string
	Utilization []float64 // percent, one per GPU
}

func (GPUsSampled) isEvent() {}

// gpuState is what the machine knows of the job's GPUs.
type gpuState struct {
	peak      map[taskspec.TaskID]float64 // the latest sample's busiest GPU, per task, in its current container
	container map[taskspec.TaskID]string  // the container that sample is from
	idleSince time.Time                   // zero: not idle
	maxIdle   float64                     // the busiest GPU sample since idleSince
	warned    string                      // the warning given, once per idle period
}

// gpusSampled records t's sample and moves the idle period on.
func (m *Machine) gpusSampled(e GPUsSampled) {
	t := m.byTask[e.Task]
	if m.job.GPUIdle.Timeout <= 0 || t == nil || !t.State.Live() || t.Container.ID != e.ContainerID || len(e.Utilization) == 0 {
		return
	}
	g := &m.gpus
	if g.peak == nil {
		g.peak, g.container = map[taskspec.TaskID]float64{}, map[taskspec.TaskID]string{}
	}
	peak := 0.0
	for _, u := range e.Utilization {
		peak = max(peak, u)
	}
	g.peak[e.Task], g.container[e.Task] = peak, e.ContainerID
	if !m.gpusIdle() {
		g.idleSince, g.warned, g.maxIdle = time.Time{}, "", 0
		return
	}
	if g.idleSince.IsZero() {
		g.idleSince, g.maxIdle = m.now, peak
	}
	g.maxIdle = max(g.maxIdle, peak)
}

// gpusIdle reports whether every live task's latest sample in its current
// container is under the threshold, and at least one task has one.
func (m *Machine) gpusIdle() bool {
	threshold := m.job.GPUIdle.Threshold
	if threshold <= 0 {
		threshold = taskspec.DefaultGPUIdleThreshold
	}
	seen := false
	for task, peak := range m.gpus.peak {
		t := m.byTask[task]
		if t == nil || !t.State.Live() || m.gpus.container[task] != t.Container.ID {
			continue
		}
		if peak >= threshold {
			return false
		}
		seen = true
	}
	return seen
}

// gpuIdleDeadline warns at half the timeout and acts at the timeout.
func (m *Machine) gpuIdleDeadline() {
	g := &m.gpus
	timeout := m.job.GPUIdle.Timeout
	if timeout <= 0 || g.idleSince.IsZero() {
		return
	}
	if m.restarting != nil || !m.gpusIdle() {
		g.idleSince, g.warned = time.Time{}, ""
		return
	}
	idle := m.now.Sub(g.idleSince)
	what := fmt.Sprintf("GPUs idle for %s (%g %% utilisation)", idle.Round(time.Second), g.maxIdle)
	switch {
	case idle >= timeout && !m.job.GPUIdle.Warn:
		m.finish(Failed, fmt.Sprintf("GPUs idle for %s (%g %% utilisation, --gpu-idle-timeout %s)", timeout, g.maxIdle, timeout))
	case idle >= timeout && g.warned != "timeout":
		g.warned = "timeout"
		m.warnGPUIdle(what+": past --gpu-idle-timeout "+timeout.String()+" (--gpu-idle-action warn)", time.Time{})
	case idle >= timeout/2 && g.warned == "" && m.job.GPUIdle.Warn:
		g.warned = "half"
		m.warnGPUIdle(fmt.Sprintf("%s: --gpu-idle-timeout %s warns again then", what, timeout), time.Time{})
	case idle >= timeout/2 && g.warned == "":
		g.warned = "half"
		m.warnGPUIdle(fmt.Sprintf("%s: the job fails at --gpu-idle-timeout %s unless they work", what, timeout), g.idleSince.Add(timeout))
	}
}

// warnGPUIdle says what for the AM's log and warns every live task's
// launcher, for its program's warnings file: the job is every task's, and
// any of them may be the one that would put the GPUs to work. ends is when
// the job fails unless they work, zero when it does not. A task being
// stopped is not warned: it is ending anyway.
func (m *Machine) warnGPUIdle(what string, ends time.Time) {
	m.ready.Notes = append(m.ready.Notes, what)
	for _, t := range m.tasks {
		if t.State.Live() && !t.StopRequested && t.Container.ID != "" {
			m.ready.Warn = append(m.ready.Warn, Warning{Kind: WarnGPUIdle, Task: t.Task, Container: t.Container, Deadline: ends, Reason: what})
		}
	}
}

// GPUIdleWarning says, while the job's GPUs have been idle half its
// --gpu-idle-timeout or longer, for how long and what follows; "" while
// they are not.
func (m *Machine) GPUIdleWarning() string {
	g := m.gpus
	if g.warned == "" || g.idleSince.IsZero() {
		return ""
	}
	timeout := m.job.GPUIdle.Timeout
	w := fmt.Sprintf("GPUs idle for %s (%g %% utilisation)", m.now.Sub(g.idleSince).Round(time.Second), g.maxIdle)
	if m.job.GPUIdle.Warn {
		return w + fmt.Sprintf(", --gpu-idle-timeout %s (--gpu-idle-action warn)", timeout)
	}
	return w + fmt.Sprintf(": the job fails at --gpu-idle-timeout %s unless they work", timeout)
}
