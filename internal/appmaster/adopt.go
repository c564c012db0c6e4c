package appmaster

import (
	"context"
	"strings"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Adoption (core/adopt.go): with --am-attempts, a later attempt takes over
// the tasks a dead one left running. What to adopt is the machine's
// decision (core.PreviousAttempt, core.Adoption); here the loop feeds it
// what registering handed over and what the previous attempt saved, and
// carries out its answer: the adopted tasks' launchers find the new
// attempt's address where it saves it (contract.EnvAMLocator) and register
// again, and from then on report to it and obey its stop orders as before.

// AdoptedTask is one running task as an attempt saved it for the next.
type AdoptedTask struct {
	Task        string `json:"task"` // worker:1
	ContainerID string `json:"container"`
	Host        string `json:"host"`
	Port        int    `json:"port"`
}

// AdoptFileName is the saved task table's name in the staging directory.
const AdoptFileName = "am-tasks.json"

// runningTable is core.AdoptionTable in the saved file's form.
func runningTable(tasks []core.TaskStatus) (table []AdoptedTask, ok bool) {
	saved, ok := core.AdoptionTable(tasks)
	for _, s := range saved {
		table = append(table, AdoptedTask(s))
	}
	return table, ok
}

// adopter is what Launchers implement to take in an adopted task: its
// launcher finds this attempt (contract.EnvAMLocator, or the previous
// attempt's address re-taken, reuseListen) and registers again, and until
// then the task counts as registered where the previous attempt saw it.
type adopter interface {
	Adopt(task taskspec.TaskID, containerID, host string, port int)
}

// Adopt implements adopter.
func (r *TaskRendezvous) Adopt(task taskspec.TaskID, containerID, host string, port int) {
	r.board.Adopt(rendezvous.Registration{Task: task, Host: host, Port: port, ContainerID: containerID})
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
			ev.Saved = append(ev.Saved, core.SavedTask(a))
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
