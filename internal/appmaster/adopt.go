package appmaster

import (
	"context"
	"strings"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Adoption (core/adopt.go): with --am-attempts, a later attempt takes over
// the tasks a dead one left running. What to adopt is the machine's
// decision (core.PreviousAttempt, core.Adoption); here the loop feeds it
// what registering handed over and what the previous attempt saved, and
// carries out its answer: the adopted tasks' launchers hear the new
// attempt's address on their control ports (package amattempt) and
// register again, and from then on report to it and obey its stop orders
// as before.

// runningTable is core.AdoptionTable in the saved file's form (without the
// launchers' control ports, which stateToSave adds).
func runningTable(tasks []core.TaskStatus) (table []amattempt.Task, ok bool) {
	saved, ok := core.AdoptionTable(tasks)
	for _, s := range saved {
		table = append(table, amattempt.Task{Task: s.Task, ContainerID: s.ContainerID, Host: s.Host, Port: s.Port})
	}
	return table, ok
}

// adopter is what Launchers implement to take in an adopted task: its
// launcher finds this attempt (told on its control port, or the previous
// attempt's address re-taken, amattempt.State.ReuseListen) and registers
// again, and until then the task counts as registered where the previous
// attempt saw it.
type adopter interface {
	Adopt(task taskspec.TaskID, containerID, host string, port int)
}

// Adopt implements adopter: the task counts as registered, with the
// control port the previous attempt saved for it, and its launcher is
// told where this attempt runs (AnnounceAdopted).
func (r *TaskRendezvous) Adopt(task taskspec.TaskID, containerID, host string, port int) {
	saved := r.adopting[containerID]
	r.board.Adopt(rendezvous.Registration{Task: task, Host: host, Port: port, ContainerID: containerID, ControlPort: saved.Control})
	if r.announce != nil {
		go r.announce(amattempt.Task{Task: task.String(), ContainerID: containerID, Host: host, Port: port, Control: saved.Control})
	}
}

// AnnounceAdopted makes Adopt call announce with each adopted task as the
// previous attempt saved it (previous). Called before the loop starts.
func (r *TaskRendezvous) AnnounceAdopted(previous []amattempt.Task, announce func(amattempt.Task)) {
	r.adopting = map[string]amattempt.Task{}
	for _, t := range previous {
		r.adopting[t.ContainerID] = t
	}
	r.announce = announce
}

// controlPorts are the launchers' control ports as they registered (or
// were adopted), by container.
func (r *TaskRendezvous) controlPorts() map[string]int {
	out := map[string]int{}
	for _, reg := range r.board.Registrations() {
		if reg.ControlPort > 0 {
			out[reg.ContainerID] = reg.ControlPort
		}
	}
	return out
}

// adopt steps the machine with what a previous attempt left (see above),
// right after registering, before the first allocate call; the machine
// ignores it for a first attempt. Its decision comes back in Ready
// (adopted).
func (l *loop) adopt(ctx context.Context, previous []*hadoopyarn.ContainerProto) {
	ev := core.PreviousAttempt{Attempt: l.cfg.Attempt, Restarts: l.cfg.Resume}
	for _, c := range previous {
		running := containerOf(c)
		l.containers[running.ID] = c
		ev.Running = append(ev.Running, running)
	}
	if l.cfg.Adopt != nil {
		for _, a := range l.cfg.Adopt(ctx) {
			ev.Saved = append(ev.Saved, core.SavedTask{Task: a.Task, ContainerID: a.ContainerID, Host: a.Host, Port: a.Port})
		}
	}
	if len(ev.Running) > 0 || len(ev.Saved) > 0 {
		l.cfg.Logf("the previous attempt left %d containers running and saved %d tasks", len(ev.Running), len(ev.Saved))
	}
	l.tick()
	l.m.Step(ev)
}

// adopted carries out the machine's adoption: the adopted tasks' containers
// are assigned to them on the launchers' channel, where they count as
// registered until their launchers register again; the released containers
// go with the next allocate call (Ready.Release).
func (l *loop) adopted(a core.Adoption) {
	if len(a.Released) > 0 {
		l.cfg.Logf("releasing %d containers of the previous attempt: %s", len(a.Released), strings.Join(a.Released, ", "))
	}
	if len(a.Adopted) == 0 {
		l.cfg.Logf("nothing adopted from the previous attempt: starting every task afresh")
		for _, u := range a.Unwatched {
			l.cfg.Logf("%s's container %s ended while no ApplicationMaster watched it; YARN's report of it decides whether this restart counts", u.Task, u.ContainerID)
		}
		return
	}
	for _, t := range a.Adopted {
		switch ls := l.cfg.Launchers.(type) {
		case adopter:
			ls.Adopt(t.Task, t.Container.ID, t.Host, t.Port)
		case nil:
		default:
			ls.Assign(t.Task, t.Container.ID)
		}
		l.cfg.Logf("adopted %s in %s at %s:%d from the previous attempt", t.Task, t.Container.ID, t.Host, t.Port)
	}
	l.fastUntil = l.cfg.Now().Add(fastWindow)
}
