package core

// RendezvousFailed: the tasks' rendezvous cannot complete (a cluster task
// never registered within the registration timeout, or the cluster spec
// could not be built). No task can start its program, so the job fails at
// once; Reason names the missing tasks.
type RendezvousFailed struct {
	Reason string
}

func (RendezvousFailed) isEvent() {}

// ProgramSignalled: a task's program ended after its launcher received a
// signal from outside (its NodeManager killing the container). YARN's
// report of the container, which says why (memory limit, preemption, lost
// node), is waited for up to taskspec.YarnReasonWait; then ExitStatus (the
// program's exit code) stands.
type ProgramSignalled struct {
	ID          string // the container
	ExitStatus  int32
	Diagnostics string
}

func (ProgramSignalled) isEvent() {}
