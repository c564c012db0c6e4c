package appmaster

import (
	"context"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Adoption: with --am-attempts, YARN keeps a dead attempt's containers
// running (keep_containers_across_application_attempts) and hands them to
// the next attempt in registerApplicationMaster's answer. The attempts
// share what the tasks registered through a small table in the staging
// directory (AdoptFileName), saved once every chief, worker and ps runs and
// has registered. The next attempt adopts the tasks whose containers are
// still running, a whole task group at a time: their programs go on
// undisturbed, their launchers find the new attempt's address where it
// saves it (contract.EnvAMLocator) and register again, and from then on
// report to it and obey its stop orders as before. When a chief,
// worker or ps cannot be adopted, the TensorFlow cluster cannot go on as
// it is: every previous container is released and the job starts afresh.

// AdoptedTask is one running task as an attempt saved it for the next.
type AdoptedTask struct {
	Task        string `json:"task"` // worker:1
	ContainerID string `json:"container"`
	Host        string `json:"host"`
	Port        int    `json:"port"`
}

// AdoptFileName is the saved task table's name in the staging directory.
const AdoptFileName = "am-tasks.json"

// runningTable is the table to save from the tasks' states: every task
// running and registered, and not asked to stop, in job order; ok is false
// while a chief, worker or ps is not (nothing worth saving yet, a restart
// under way, or the job ending): a program that then ends while no AM
// watches was stopped, and must not be taken for a failure (unwatched).
func runningTable(tasks []core.TaskStatus) (table []AdoptedTask, ok bool) {
	for _, t := range tasks {
		running := t.State == core.TaskRunning && t.Host != "" && t.Container.ID != "" && !t.StopRequested
		if !running {
			if t.Task.Type.InCluster() {
				return nil, false
			}
			continue
		}
		table = append(table, AdoptedTask{Task: t.Task.String(), ContainerID: t.Container.ID, Host: t.Host, Port: t.Port})
	}
	return table, len(table) > 0
}

// adoptionPlan decides which saved tasks the new attempt takes over: a
// group is adopted when every task of it was saved and its container is
// among previous; the chief, worker and ps groups only all together.
// adopt is in the order the machine hands out containers (job order, task
// index); release is every previous container not adopted, sorted.
func adoptionPlan(tasks []core.TaskStatus, saved []AdoptedTask, previous map[string]bool) (adopt []AdoptedTask, release []string) {
	byTask := map[string]AdoptedTask{}
	for _, s := range saved {
		byTask[s.Task] = s
	}
	groups := map[taskspec.TaskType][]AdoptedTask{}
	whole := map[taskspec.TaskType]bool{}
	var order []taskspec.TaskType
	for _, t := range tasks {
		typ := t.Task.Type
		if _, seen := whole[typ]; !seen {
			whole[typ] = true
			order = append(order, typ)
		}
		s, ok := byTask[t.Task.String()]
		if !ok || !previous[s.ContainerID] {
			whole[typ] = false
			continue
		}
		groups[typ] = append(groups[typ], s)
	}
	cluster := true
	for _, typ := range order {
		if typ.InCluster() && !whole[typ] {
			cluster = false
		}
	}
	kept := map[string]bool{}
	for _, typ := range order {
		if !whole[typ] || (typ.InCluster() && !cluster) {
			continue
		}
		for _, s := range groups[typ] {
			adopt = append(adopt, s)
			kept[s.ContainerID] = true
		}
	}
	for id := range previous {
		if !kept[id] {
			release = append(release, id)
		}
	}
	sort.Strings(release)
	return adopt, release
}

// unwatchedTasks are the saved chief, worker and ps tasks whose
// containers YARN no longer had running when this attempt registered:
// their programs ended while no AM watched (core.Unwatched).
func unwatchedTasks(saved []AdoptedTask, previous map[string]bool) []core.Unwatched {
	var out []core.Unwatched
	for _, s := range saved {
		id, err := taskspec.ParseTaskID(s.Task)
		if err != nil || !id.Type.InCluster() || s.ContainerID == "" || previous[s.ContainerID] {
			continue
		}
		out = append(out, core.Unwatched{Task: id, ContainerID: s.ContainerID, Host: s.Host})
	}
	return out
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

// adopt takes over what a previous attempt left running (see above), right
// after registering, before the first allocate call: the machine sees the
// adopted containers allocated, started and registered, so it asks only
// for what is missing.
func (l *loop) adopt(ctx context.Context, previous []*hadoopyarn.ContainerProto) {
	ids := map[string]bool{}
	for _, c := range previous {
		id := yarn.FormatContainerID(c.GetId())
		ids[id] = true
		l.containers[id] = c
	}
	var saved []AdoptedTask
	if l.cfg.Adopt != nil {
		saved = l.cfg.Adopt(ctx)
	}
	if l.cfg.Resume != nil {
		l.m.ResumeRestarts(*l.cfg.Resume)
	}
	adopt, release := adoptionPlan(l.m.Tasks(), saved, ids)
	if len(release) > 0 {
		l.cfg.Logf("releasing %d containers of the previous attempt: %s", len(release), strings.Join(release, ", "))
		l.buf.Add(core.Ready{Release: release})
	}
	if len(adopt) == 0 {
		l.cfg.Logf("nothing adopted from the previous attempt (%d of its containers running, %d tasks saved): starting every task afresh", len(previous), len(saved))
		if l.cfg.Attempt > 1 {
			unwatched := unwatchedTasks(saved, ids)
			for _, u := range unwatched {
				l.cfg.Logf("%s's container %s ended while no ApplicationMaster watched it; YARN's report of it decides whether this restart counts", u.Task, u.ContainerID)
			}
			l.m.AttemptRestarted(l.cfg.Attempt, unwatched...)
		}
		return
	}
	l.tick()
	byID := map[string]AdoptedTask{}
	cs := make([]core.Container, len(adopt))
	for i, a := range adopt {
		byID[a.ContainerID] = a
		for _, c := range previous {
			if yarn.FormatContainerID(c.GetId()) == a.ContainerID {
				cs[i] = containerOf(c)
			}
		}
	}
	l.m.Step(core.Allocated{Containers: cs})
	rd := l.m.Ready()
	l.buf.Add(rd)
	for _, ln := range rd.Launch {
		a, ok := byID[ln.Container.ID]
		if !ok || a.Task != ln.Task.String() {
			// The machine matched a container to another task than the one
			// running in it: never start a second program there.
			l.cfg.Logf("adoption: %s went to %s instead of %s; stopping it", ln.Container.ID, ln.Task, a.Task)
			l.m.Step(core.StartFailed{ID: ln.Container.ID, Reason: "adopted container matched to the wrong task"})
			continue
		}
		l.m.Step(core.ContainerStarted{ID: ln.Container.ID})
		id, err := taskspec.ParseTaskID(a.Task)
		if err != nil {
			continue
		}
		switch ls := l.cfg.Launchers.(type) {
		case adopter:
			ls.Adopt(id, a.ContainerID, a.Host, a.Port)
		case nil:
		default:
			ls.Assign(id, a.ContainerID)
		}
		l.m.Step(core.TaskRegistered{Task: id, Host: a.Host, Port: a.Port})
		l.cfg.Logf("adopted %s in %s at %s:%d from the previous attempt", a.Task, a.ContainerID, a.Host, a.Port)
	}
	// The asks stated at registration never reached the RM, and the machine
	// counted the adopted containers against them: state them afresh.
	l.m.Step(core.Resynced{})
	l.fastUntil = l.cfg.Now().Add(fastWindow)
}
