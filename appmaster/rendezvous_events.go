package appmaster

// RendezvousFailed: the tasks' rendezvous cannot complete (a cluster task
// never registered within the registration timeout, or the cluster spec
// could not be built). No task can start its program, so the job fails at
// once; Reason names the missing tasks.
type RendezvousFailed struct {
	Reason string
}

func (RendezvousFailed) isEvent() {}
