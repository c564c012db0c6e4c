package core

import (
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Preemption warnings. YARN's scheduler announces, in the AM's allocate
// response (its PreemptionMessage), which containers it is about to take
// back, and kills them a while later (the CapacityScheduler's
// max_wait_before_kill, the FairScheduler's waitTimeBeforeKill: 15 s by
// default). The machine warns each task whose container is named, once per
// container, with a deadline, so that its program can checkpoint; the
// kill then restarts the task like any preemption (exit status -102, not
// counted toward the restart policy's Max: restart.go).
//
// Who is warned: a task whose current container is named and live
// (launching: its launcher gets the warning as soon as it asks; running),
// and, when that task's end restarts the whole TensorFlow cluster (a
// chief, worker or ps that is not a ParameterServerStrategy worker
// replaced in place), every other live cluster task too, with the same
// deadline: they end with it, and one of them may be the one that
// checkpoints (a ParameterServerStrategy chief saves for the ps), or all
// must checkpoint together (MultiWorkerMirroredStrategy saves
// collectively). No task the machine already asked to stop (it is ending
// anyway) is warned, nor one warned before for its container (the
// CapacityScheduler repeats its announcement every monitoring round; the
// first one sets the deadline). Containers the machine does not know
// (surplus ones, the AM's own) are the driver's to log.

// PreemptionWarned: an allocate response carried a PreemptionMessage.
// Strict lists the containers of its strict contract (YARN will take them
// back; the FairScheduler's way), Negotiable those of its negotiable
// contract (YARN wants resources back and names the containers it takes
// unless the AM gives back as much otherwise; the CapacityScheduler's
// way). tfyarn gives nothing back in their place, so both are warned
// alike. Since is when the driver sent the allocate call before the one
// this answers: the scheduler decided after it (or its announcement would
// have come in that answer), so the kill comes no sooner than Since plus
// Config.PreemptionWait. Zero Since means the machine's now.
type PreemptionWarned struct {
	Strict, Negotiable []string
	Since              time.Time
}

func (PreemptionWarned) isEvent() {}

// Warning, in Ready: warn the task's launcher, which appends every warning
// to TFYARN_WARNINGS_FILE. Kind says of what: a preemption (YARN will take
// the container back: the launcher also writes TFYARN_PREEMPTION_FILE and
// signals the program; Deadline is the earliest moment YARN may kill the
// container) or idle GPUs (gpuidle.go; Deadline is when the job fails
// unless they work, zero when it does not). Reason says why in words.
type Warning struct {
	Kind      WarningKind
	Task      taskspec.TaskID
	Container Container
	Deadline  time.Time
	Reason    string
}

// WarningKind is what a Warning warns of.
type WarningKind int

const (
	WarnPreemption WarningKind = iota // YARN will preempt the task's container
	WarnGPUIdle                       // the job's GPUs are idle
)

// String is the kind as transcripts and the warnings file name it.
func (k WarningKind) String() string {
	if k == WarnGPUIdle {
		return "gpu-idle"
	}
	return "preemption"
}

func (m *Machine) preemptionWarned(e PreemptionWarned) {
	since := e.Since
	if since.IsZero() || since.After(m.now) {
		since = m.now
	}
	deadline := since.Add(m.preemptionWait)
	warn := func(id, contract string) {
		t := m.taskOf(id)
		if t == nil || !t.State.Live() {
			return
		}
		m.warnTask(t, deadline, "YARN's scheduler will preempt container "+id+" ("+contract+")")
		if !m.restartsCluster(t) {
			return
		}
		for _, o := range m.tasks {
			if o != t && o.Task.Type.InCluster() {
				m.warnTask(o, deadline, "YARN's scheduler will preempt "+t.Task.String()+"'s container "+id+" ("+contract+"); the cluster restarts with it")
			}
		}
	}
	for _, id := range e.Strict {
		warn(id, "strict contract")
	}
	for _, id := range e.Negotiable {
		warn(id, "negotiable contract: it wants resources back")
	}
}

// warnTask warns t, unless it is not live, is being stopped or was warned
// for its container already.
func (m *Machine) warnTask(t *TaskStatus, deadline time.Time, reason string) {
	if !t.State.Live() || t.StopRequested || !t.PreemptionDeadline.IsZero() {
		return
	}
	t.PreemptionDeadline = deadline
	m.ready.Warn = append(m.ready.Warn, Warning{Kind: WarnPreemption, Task: t.Task, Container: t.Container, Deadline: deadline, Reason: reason})
}

// restartsCluster reports whether t's end by preemption ends every cluster
// task (applyRestarts' rules): a chief, worker or ps, unless it is a
// ParameterServerStrategy worker replaced in place, or a TensorFlow job's
// decider has already succeeded (nothing restarts then).
func (m *Machine) restartsCluster(t *TaskStatus) bool {
	if !t.Task.Type.InCluster() || m.inPlace(t) {
		return false
	}
	return !m.restartsOver()
}
