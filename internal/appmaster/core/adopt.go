package core

import (
	"sort"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Adoption: with --am-attempts, YARN keeps a dead attempt's containers
// running (keep_containers_across_application_attempts) and hands them to
// the next attempt in registerApplicationMaster's answer. The attempts
// share what the tasks registered through a small table the driver saves
// (AdoptionTable), once every chief, worker and ps runs and has
// registered. The next attempt adopts the tasks whose containers are still
// running, a whole task group at a time: their programs go on undisturbed,
// their launchers find the new attempt and register again, and from then
// on report to it and obey its stop orders as before. When a chief, worker
// or ps cannot be adopted, the TensorFlow cluster cannot go on as it is:
// every previous container is released and the job starts afresh
// (attempt_restarts.go says how that restart is counted).

// SavedTask is one running task as an attempt saved it for the next.
type SavedTask struct {
	Task        string // as saved, e.g. worker:1; matched to the job's task names as it is
	ContainerID string
	Host        string // where the task registered
	Port        int
}

// AdoptionTable is the table to save for a next attempt from the tasks'
// states: every task running and registered, and not asked to stop, in job
// order; ok is false while a chief, worker or ps is not (nothing worth
// saving yet, a restart under way, or the job ending): a program that then
// ends while no ApplicationMaster watches was stopped, and must not be
// taken for a failure (Unwatched).
func AdoptionTable(tasks []TaskStatus) (table []SavedTask, ok bool) {
	for _, t := range tasks {
		running := t.State == TaskRunning && t.Host != "" && t.Container.ID != "" && !t.StopRequested
		if !running {
			if t.Task.Type.InCluster() {
				return nil, false
			}
			continue
		}
		table = append(table, SavedTask{Task: t.Task.String(), ContainerID: t.Container.ID, Host: t.Host, Port: t.Port})
	}
	return table, len(table) > 0
}

// PreviousAttempt: this ApplicationMaster registered, and may be a later
// attempt of the application (--am-attempts). The driver steps it right
// after Registered, before any allocate call, with what registering and the
// previous attempt's saved state told it. The machine adopts what it can
// (Ready.Adoption) and asks only for what is missing; it ignores the event
// for a first attempt that YARN handed no container, and once any
// container is known.
type PreviousAttempt struct {
	// Attempt is this ApplicationMaster's attempt number (0 or 1: the
	// first).
	Attempt int
	// Running are the previous attempts' containers YARN kept running and
	// handed over (containers_from_previous_attempts).
	Running []Container
	// Saved is the task table the previous attempt saved (AdoptionTable);
	// nil when there was none or it could not be read.
	Saved []SavedTask
	// Restarts, if set, is the restarts the previous attempt recorded
	// (Machine.RestartRecord): --max-restarts holds per job.
	Restarts *RestartRecord
}

func (PreviousAttempt) isEvent() {}

// Adoption, in Ready: what became of the previous attempt's tasks
// (PreviousAttempt).
type Adoption struct {
	// Adopted are the tasks taken over, in job order: they run in their
	// containers and count as registered where the previous attempt saw
	// them. Tell the launchers' channel which container runs each, so that
	// it takes its launcher's registration again; start nothing.
	Adopted []Adopted
	// Released are the previous attempt's containers given back, sorted;
	// Ready.Release carries them too. They are here for the log.
	Released []string
	// Unwatched are the chief, worker and ps tasks whose programs ended
	// while no ApplicationMaster watched, when nothing was adopted.
	Unwatched []Unwatched
}

// Adopted is one task taken over from the previous attempt.
type Adopted struct {
	Task      taskspec.TaskID
	Container Container
	Host      string
	Port      int
}

// previousAttempt handles PreviousAttempt: the restarts resumed, then the
// adoption decided (adoptionPlan) and carried out.
func (m *Machine) previousAttempt(e PreviousAttempt) {
	if m.phase != PhaseRunning || len(m.containers) > 0 || (e.Attempt <= 1 && len(e.Running) == 0) {
		return
	}
	if e.Restarts != nil {
		m.resumeRestarts(*e.Restarts)
	}
	running := map[string]Container{}
	for _, c := range e.Running {
		running[c.ID] = c
	}
	adopt, release := m.adoptionPlan(e.Saved, running)
	if (m.elastic || m.needJobService) && len(adopt) > 0 {
		// The workers met on the framework's job service the previous
		// attempt served (elastic PyTorch's rendezvous store, XGBoost's
		// tracker), which died with it: they cannot go on (XGBoost's
		// report their shutdown to it), nor meet on this attempt's new
		// one. The job starts afresh, every worker in a new container.
		adopt, release = nil, sortedIDs(running)
	}
	m.ready.Release = append(m.ready.Release, release...)
	ad := &Adoption{Released: release}
	m.ready.Adoption = ad
	if !adoptsCluster(adopt) && m.hasCluster() && e.Attempt > 1 {
		// No chief, worker or ps was adopted: the cluster starts afresh,
		// also when a task outside it (the evaluator, TensorBoard) runs
		// on. That is a cluster restart like any other: recorded, its
		// tasks launched with the next TFYARN_RESTART, and counted
		// against --max-restarts once YARN shows a program behind it
		// failed. Were it left out because the evaluator was adopted, a
		// job that keeps losing its ApplicationMaster and its cluster
		// would start again and again with no restart on record and no
		// failure ever judged.
		if !m.elastic {
			// An elastic job's worker ending unwatched is a lost
			// worker, not a failure that could count as a restart.
			ad.Unwatched = unwatchedTasks(e.Saved, running)
		}
		m.attemptRestarted(e.Attempt, adoptedNames(adopt), ad.Unwatched...)
	}
	if len(adopt) == 0 {
		return
	}
	for _, a := range adopt {
		t, s, c := a.task, a.saved, running[a.saved.ContainerID]
		m.containers[c.ID] = &containerRecord{container: c, task: t}
		m.setState(t, TaskRunning)
		t.Container, t.LaunchedAt, t.StartedAt = c, m.now, m.now
		t.Host, t.Port = s.Host, s.Port
		ad.Adopted = append(ad.Adopted, Adopted{Task: t.Task, Container: c, Host: s.Host, Port: s.Port})
	}
	// The asks stated at registration never reached the RM, and the
	// adopted tasks no longer want theirs: state every group afresh.
	for _, g := range m.groups {
		g.rmOutstanding = -1
	}
}

// adoptsCluster reports whether adopt holds the cluster's tasks (the
// chief, worker and ps groups go all together, or none of them).
func adoptsCluster(adopt []adoptee) bool {
	for _, a := range adopt {
		if a.task.Task.Type.InCluster() {
			return true
		}
	}
	return false
}

// hasCluster reports whether the job has chief, worker or ps tasks.
func (m *Machine) hasCluster() bool {
	for _, typ := range m.typeOrder {
		if typ.InCluster() {
			return true
		}
	}
	return false
}

// adoptedNames are the adopted tasks' names, for the restart's cause.
func adoptedNames(adopt []adoptee) []taskspec.TaskID {
	ids := make([]taskspec.TaskID, len(adopt))
	for i, a := range adopt {
		ids[i] = a.task.Task
	}
	return ids
}

// adoptee is a task adoptionPlan takes over, and what was saved of it.
type adoptee struct {
	task  *TaskStatus
	saved SavedTask
}

// adoptionPlan decides which saved tasks this attempt takes over: a group
// is adopted when every task of it was saved and its container is among
// running; the chief, worker and ps groups only all together. adopt is in
// job order; release is every running container not adopted, sorted.
func (m *Machine) adoptionPlan(saved []SavedTask, running map[string]Container) (adopt []adoptee, release []string) {
	byTask := map[string]SavedTask{}
	for _, s := range saved {
		byTask[s.Task] = s
	}
	groups := map[taskspec.TaskType][]adoptee{}
	whole := map[taskspec.TaskType]bool{}
	claimed := map[string]bool{}
	var order []taskspec.TaskType
	for _, t := range m.tasks {
		typ := t.Task.Type
		if _, seen := whole[typ]; !seen {
			whole[typ] = true
			order = append(order, typ)
		}
		s, ok := byTask[t.Task.String()]
		if _, kept := running[s.ContainerID]; !ok || !kept || claimed[s.ContainerID] {
			// Not saved, no longer running, or saved for another task too:
			// one container never runs two adopted tasks.
			whole[typ] = false
			continue
		}
		claimed[s.ContainerID] = true
		groups[typ] = append(groups[typ], adoptee{task: t, saved: s})
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
		for _, a := range groups[typ] {
			adopt = append(adopt, a)
			kept[a.saved.ContainerID] = true
		}
	}
	for id := range running {
		if !kept[id] {
			release = append(release, id)
		}
	}
	sort.Strings(release)
	return adopt, release
}

// sortedIDs are the ids of running, sorted.
func sortedIDs(running map[string]Container) []string {
	ids := make([]string, 0, len(running))
	for id := range running {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// unwatchedTasks are the saved chief, worker and ps tasks whose containers
// YARN no longer had running when this attempt registered: their programs
// ended while no ApplicationMaster watched (Unwatched).
func unwatchedTasks(saved []SavedTask, running map[string]Container) []Unwatched {
	var out []Unwatched
	for _, s := range saved {
		id, err := taskspec.ParseTaskID(s.Task)
		if _, kept := running[s.ContainerID]; err != nil || !id.Type.InCluster() || s.ContainerID == "" || kept {
			continue
		}
		out = append(out, Unwatched{Task: id, ContainerID: s.ContainerID, Host: s.Host})
	}
	return out
}
