// Package core is the pure core of tfyarn's ApplicationMaster, shared by the
// AM's YARN loop (package appmaster) and `run --local` (package localrun).
// Machine is a deterministic state machine in the style of etcd's raft: the I/O loop
// feeds it Events (RM responses, NM replies, task registrations, ticks) with
// Step, and takes what it wants done from Ready (asks, launches, stops,
// releases, the final status). The machine does no I/O, reads no clock and
// starts no goroutine, so every scheduling rule is tested by feeding events.
//
// The package imports only the standard library's pure parts and taskspec
// (TestCoreImportsOnlyPureStdlibAndTaskspec holds it to that).
//
// A driver loop looks like:
//
//	m, err := core.New(core.Config{Job: job})
//	// after registerApplicationMaster:
//	m.Step(core.Registered{Limits: limits})
//	for {
//		rd := m.Ready()
//		buf.Add(rd)                  // asks and releases for the next allocate
//		launch(rd.Launch)            // → ContainerStarted / StartFailed
//		stop(rd.Stop)
//		if rd.Finish != nil { unregister(rd.Finish); return }
//		select {                     // allocate heartbeat, NM replies, kill, ticks
//		case ev := <-events:
//			m.Step(ev)
//		}
//	}
package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

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

// TaskState is where one task is. A task goes Pending → Launching →
// Running → Succeeded | Failed | Stopped; a restart takes an ended task back
// to Pending with the next Attempt.
type TaskState int

const (
	// TaskPending: waiting for a container.
	TaskPending TaskState = iota
	// TaskLaunching: has a container; startContainers is under way.
	TaskLaunching
	// TaskRunning: the NM started the container.
	TaskRunning
	// TaskSucceeded: the container exited 0.
	TaskSucceeded
	// TaskFailed: the container exited non-zero, was killed by YARN, or
	// failed to start.
	TaskFailed
	// TaskStopped: the AM stopped it (no longer needed, or the job ended).
	TaskStopped
)

func (s TaskState) String() string {
	if names := [...]string{"pending", "launching", "running", "succeeded", "failed", "stopped"}; s >= 0 && int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("TaskState(%d)", int(s))
}

// Live reports whether the task holds a container.
func (s TaskState) Live() bool { return s == TaskLaunching || s == TaskRunning }

// Ended reports whether the task's latest container is over.
func (s TaskState) Ended() bool { return s == TaskSucceeded || s == TaskFailed || s == TaskStopped }

// TaskStatus is one task as the machine knows it.
type TaskStatus struct {
	Task    taskspec.TaskID
	State   TaskState
	Attempt int // 0 for the first container, one more per restart
	// Container is the task's current (or last) container; zero while the
	// first attempt is pending.
	Container Container
	// Host and Port are what the task registered (TaskRegistered); empty
	// until it does, and cleared by a restart.
	Host string
	Port int
	// ExitStatus and Diagnostics are from ContainerCompleted; a start
	// failure gives ExitInvalid and the failure's reason.
	ExitStatus  int32
	Diagnostics string
	// Failure is one line naming the task, its container and node and why it
	// failed; set when State is TaskFailed.
	Failure string
	// StopRequested: the machine asked for the task's container to end (no
	// longer needed, or the job ended); its end is then TaskStopped.
	// StopRequestedAt is when (the first, graceful, stop); HardStopped and
	// HardStopAt say whether and when the stop escalated to a hard one: see
	// Config.StopGrace.
	StopRequested, HardStopped  bool
	StopRequestedAt, HardStopAt time.Time
	// PlaceOn and WantPort are set while a worker replaced in place waits
	// for its container: the node it must run on and the port it re-takes.
	PlaceOn  string
	WantPort int
	// Times come from Tick; EndOrder counts task ends (1, 2, ...) so
	// policies can tell which failure came first within one instant.
	RequestedAt, LaunchedAt, StartedAt, EndedAt time.Time
	EndOrder                                    uint64

	// signalled holds the launcher's report of a program killed from
	// outside while YARN's reason is awaited (ProgramSignalled).
	signalled *ProgramSignalled
	// signalledAt is when it came.
	signalledAt time.Time
	// placement is the ask of an in-place replacement (PlaceOn).
	placement *group
	// unallocated: failed for never getting a container (allocDeadline),
	// which no restart would change.
	unallocated bool
	// PreemptionDeadline is set once the task was warned that YARN will
	// preempt its container (preemption.go): the earliest kill.
	PreemptionDeadline time.Time
}

// Config is what New needs.
type Config struct {
	// Job's Tasks and NodeLabel are used: one ask per group, groups in job
	// order (the Tasks slice is sorted into it).
	Job taskspec.Job
	// Policy judges the tasks' states; nil means AllSucceed.
	Policy Policy
	// AllocTimeout bounds how long a task may wait for a container, from
	// the registration (or its restart): 0 means taskspec.DefaultAllocTimeout, a
	// negative value no deadline. See allocDeadline.
	AllocTimeout time.Duration
	// ClusterOffers say, per node label ("" for none), what the cluster
	// offers the job's queue, for the diagnostics of unallocated tasks.
	ClusterOffers map[string]string
	// QueueDefaultLabel is the label the RM gives an ask that names none
	// (the queue's default node label expression): the label messages about
	// waiting tasks name, and whose ClusterOffers they quote.
	QueueDefaultLabel string
	// StopGrace is how long a task asked to end gracefully (its launcher
	// sends the program SIGTERM, then SIGKILL after its own grace) has
	// before the machine escalates to a hard stop (the NodeManager's
	// stopContainers; locally, cancelling the launcher). 0 makes every stop
	// hard at once: the driver has no launchers to ask. Stops that come
	// with the job's end are hard at once whatever StopGrace says: the job
	// is decided.
	StopGrace time.Duration
	// PreemptionWait is how long YARN's scheduler waits between announcing
	// a preemption and the kill (preemption.go); 0 means
	// taskspec.DefaultPreemptionWait.
	PreemptionWait time.Duration
}

// Machine is the AM's state. It is not safe for concurrent use: the loop
// owns it.
type Machine struct {
	policy Policy
	phase  Phase
	now    time.Time
	ends   uint64

	groups     []*group
	tasks      []*TaskStatus // job order
	byTask     map[taskspec.TaskID]*TaskStatus
	containers map[string]*containerRecord // every container ever allocated to us

	allocTimeout  time.Duration
	clusterOffers map[string]string
	defaultLabel  string
	stopGrace     time.Duration
	// preemptionWait: Config.PreemptionWait.
	preemptionWait time.Duration
	// job is Config.Job, for its spread (--spread); spreadText says it
	// in words, "" when nothing is spread.
	job        taskspec.Job
	spreadText string

	restartPolicy      taskspec.RestartPolicy
	counted, uncounted int               // restarts, by whether they count toward the policy's Max
	generation         int               // cluster restarts: the rendezvous generation
	causes             []string          // every failure that caused a restart, for the diagnostics
	restarting         *restartState     // a cluster restart's stops are out
	unwatched          *unwatchedRestart // a later attempt's restart, its cause awaited
	nextRequestID      int64             // allocation_request_ids of in-place asks
	racks              map[string]string // host → rack, from NodeRacks

	// Indexes kept in step with the tasks, so that an event costs what it
	// touches rather than a pass over every task (bench/core_test.go: 10,000
	// tasks). Each scan they replace still runs, unchanged, whenever they
	// say it could act; checkStep (tests) holds them to the scans.
	types             map[taskspec.TaskType]*typeIndex
	typeOrder         []taskspec.TaskType // the groups' types, in job order
	unallocatedFailed int                 // tasks failed for never getting a container
	allocScan         bool                // a task's allocation wait (re)started since allocDeadline looked
	allocNext         time.Time           // the earliest allocation deadline it saw; zero: none
	softStopped       timedQueue          // asked to end gracefully: escalateStops' candidates
	lastStopAt        time.Time           // the latest StopRequestedAt
	signalled         timedQueue          // signalled: yarnReasonDeadline's candidates

	ready Ready
}

// typeIndex is one task type's tasks: tasks[first:first+n] in job order.
type typeIndex struct {
	first, n int
	// cursor: no task of the type before it is pending without a
	// placement (firstPending starts there).
	cursor int
	counts [numTaskStates]int // tasks per TaskState
	// unstopped: live tasks the machine has not asked to stop.
	unstopped int
}

const numTaskStates = int(TaskStopped) + 1

// timedQueue holds tasks in the order of a time the machine gave them (its
// clock never goes back), to learn the earliest one still pending without
// a pass over every task.
type timedQueue []timedTask

type timedTask struct {
	t  *TaskStatus
	at time.Time
}

// earliest drops the entries no longer pending (stale, per pending, which
// must hold for every entry once it fails) and returns the first left.
func (q *timedQueue) earliest(pending func(timedTask) bool) (time.Time, bool) {
	for len(*q) > 0 && !pending((*q)[0]) {
		(*q)[0] = timedTask{}
		*q = (*q)[1:]
	}
	if len(*q) == 0 {
		return time.Time{}, false
	}
	return (*q)[0].at, true
}

// checkStep, set by tests, checks the machine before every consultation
// of the policy and after every Step.
var checkStep func(*Machine)

// group is one task group's ask bookkeeping. rmOutstanding is what the RM
// still counts for our ask: the last absolute count sent, minus containers
// allocated since (the RM decrements as it allocates). An Ask goes out only
// when the count we want differs, so the RM never hears a stale count.
type group struct {
	spec                taskspec.TaskGroup
	nodeLabel           string
	allocationRequestID int64
	priority            int32
	rmOutstanding       int // -1: unknown to the RM (after a resync)
	// node and task are set for an in-place replacement's ask: one
	// container on node, for task; rack is node's, when the RM said.
	node, rack string
	task       *TaskStatus
	// spreadTag is the group's allocation tag under --spread (Ask.SpreadTag).
	spreadTag string
	// affinityTag and affinity: Ask.AffinityTag and Ask.Affinity
	// (--colocate, --apart).
	affinityTag string
	affinity    taskspec.Affinity
}

type containerRecord struct {
	container Container
	task      *TaskStatus // nil for surplus containers
}

// New builds a machine for cfg.Job, in PhaseUnregistered.
func New(cfg Config) (*Machine, error) {
	groups := append([]taskspec.TaskGroup(nil), cfg.Job.Tasks...)
	taskspec.SortGroups(groups)
	if len(groups) == 0 {
		return nil, fmt.Errorf("appmaster: the job has no tasks")
	}
	m := &Machine{
		policy:        cfg.Policy,
		byTask:        map[taskspec.TaskID]*TaskStatus{},
		types:         map[taskspec.TaskType]*typeIndex{},
		containers:    map[string]*containerRecord{},
		allocTimeout:  cfg.AllocTimeout,
		clusterOffers: cfg.ClusterOffers,
		defaultLabel:  cfg.QueueDefaultLabel,
		stopGrace:     max(cfg.StopGrace, 0),
		restartPolicy: cfg.Job.Restarts,
		job:           taskspec.Job{Spread: cfg.Job.Spread, Tasks: cfg.Job.Tasks, StartAfter: cfg.Job.StartAfter, Affinities: cfg.Job.Affinities},
		spreadText:    cfg.Job.SpreadText(),
		nextRequestID: 1000, // above the groups' own
	}
	if cfg.Job.MinWorkers > 0 {
		// An elastic job's lost worker is not restarted with the cluster:
		// its others go on without it (ElasticPolicy), whatever ended it.
		m.restartPolicy = taskspec.RestartPolicy{NoInfraRestarts: true}
	}
	if m.allocTimeout == 0 {
		m.allocTimeout = taskspec.DefaultAllocTimeout
	}
	if m.preemptionWait = cfg.PreemptionWait; m.preemptionWait <= 0 {
		m.preemptionWait = taskspec.DefaultPreemptionWait
	}
	if m.policy == nil {
		m.policy = AllSucceed{}
	}
	seen := map[taskspec.TaskType]bool{}
	for i, g := range groups {
		if !g.Type.Known() || seen[g.Type] || g.Instances < 1 {
			return nil, fmt.Errorf("appmaster: bad task group %s %q: need a known type, once, with at least 1 instance", g.Type, g.Spec())
		}
		seen[g.Type] = true
		// Distinct ids and priorities keep shapes apart on every scheduler;
		// earlier groups (chief first) get the higher priority (lower number).
		m.groups = append(m.groups, &group{
			spec:                g,
			nodeLabel:           cfg.Job.NodeLabelFor(g),
			allocationRequestID: int64(i + 1),
			priority:            int32(i + 1),
		})
		if cfg.Job.Spreads(g.Type) {
			m.groups[len(m.groups)-1].spreadTag = cfg.Job.SpreadTag()
		}
		if a, ok := cfg.Job.AffinityOf(g.Type); ok {
			m.groups[len(m.groups)-1].affinity = a
			m.groups[len(m.groups)-1].affinityTag = taskspec.AffinityTag(g.Type)
		}
		if cfg.Job.AffinityTarget(g.Type) {
			m.groups[len(m.groups)-1].affinityTag = taskspec.AffinityTag(g.Type)
		}
		m.typeOrder = append(m.typeOrder, g.Type)
		ti := &typeIndex{first: len(m.tasks), n: g.Instances}
		ti.counts[TaskPending] = g.Instances
		m.types[g.Type] = ti
		for _, id := range g.TaskIDs() {
			t := &TaskStatus{Task: id}
			m.tasks = append(m.tasks, t)
			m.byTask[id] = t
		}
	}
	return m, nil
}

// Step applies one event. Events that do not apply (an unknown or repeated
// container, anything after Finish) change nothing.
func (m *Machine) Step(ev Event) {
	if m.phase == PhaseFinished {
		return
	}
	switch e := ev.(type) {
	case Registered:
		m.registered(e)
	case PreviousAttempt:
		m.previousAttempt(e)
	case Resynced:
		for _, g := range m.groups {
			g.rmOutstanding = -1
		}
	case Allocated:
		if m.phase == PhaseRunning {
			for _, c := range e.Containers {
				m.allocated(c)
			}
		}
	case ContainerStarted:
		if t := m.launchingTask(e.ID); t != nil {
			m.setState(t, TaskRunning)
			t.StartedAt = m.now
		}
	case StartFailed:
		if t := m.launchingTask(e.ID); t != nil {
			m.end(t, ExitInvalid, e.Reason, "failed to start: "+firstLine(e.Reason))
			m.ready.Release = append(m.ready.Release, e.ID) // the RM still counts it as ours
		}
	case ContainerCompleted:
		m.completed(e)
	case ProgramSignalled:
		if t := m.taskOf(e.ID); t != nil && t.State.Live() && t.signalled == nil {
			t.signalled, t.signalledAt = &e, m.now
			m.signalled = append(m.signalled, timedTask{t, m.now})
		}
	case PreemptionWarned:
		if m.phase == PhaseRunning {
			m.preemptionWarned(e)
		}
	case TaskRegistered:
		if t := m.byTask[e.Task]; t != nil && t.State.Live() {
			t.Host, t.Port = e.Host, e.Port
		}
	case Tick:
		if e.Now.After(m.now) {
			if m.now.IsZero() {
				// Waits that began before the first Tick begin now.
				for _, t := range m.tasks {
					if t.State == TaskPending && t.RequestedAt.IsZero() && m.phase == PhaseRunning {
						t.RequestedAt = e.Now
						m.allocScan = true
					}
				}
			}
			m.now = e.Now
		}
	case KillRequested:
		diag := KilledDiagnostics
		if e.Reason != "" {
			diag += " " + e.Reason
		}
		m.finish(Killed, diag)
	case ShutdownRequested:
		m.finish(Killed, "the ApplicationMaster was told to shut down: "+orDefault(e.Reason, "no reason given"))
	case RMFailed:
		m.finish(Failed, "lost the ResourceManager: "+orDefault(e.Reason, "no reason given"))
	case NodeRacks:
		if m.racks == nil {
			m.racks = map[string]string{}
		}
		for host, rack := range e.Racks {
			if rack != "" {
				m.racks[host] = rack
			}
		}
	case RendezvousFailed:
		if m.phase == PhaseRunning {
			diag := "rendezvous failed: " + orDefault(e.Reason, "no reason given")
			if never := m.unallocatedAtRendezvous(); never != "" {
				diag += "; " + never
			}
			m.finish(Failed, diag)
		}
	case RequestRefused:
		if m.phase == PhaseRunning {
			m.finish(Failed, RefusalDiagnostics(e))
		}
	}
	if m.phase == PhaseRunning {
		m.allocDeadline()
		m.yarnReasonDeadline()
		m.escalateStops()
	}
	if m.phase == PhaseRunning {
		m.applyRestarts()
	}
	if m.phase == PhaseRunning && m.restarting == nil {
		m.consultPolicy()
	}
	if m.phase == PhaseRunning {
		m.syncAsks()
	}
	if checkStep != nil {
		checkStep(m)
	}
}

// setState moves t to s, keeping the counts.
func (m *Machine) setState(t *TaskStatus, s TaskState) {
	ti := m.types[t.Task.Type]
	ti.counts[t.State]--
	ti.counts[s]++
	ti.unstopped -= unstopped(t)
	t.State = s
	ti.unstopped += unstopped(t)
}

func unstopped(t *TaskStatus) int {
	if t.State.Live() && !t.StopRequested {
		return 1
	}
	return 0
}

// live is how many tasks of typ hold a container.
func (m *Machine) live(typ taskspec.TaskType) int {
	if ti := m.types[typ]; ti != nil {
		return ti.counts[TaskLaunching] + ti.counts[TaskRunning]
	}
	return 0
}

// inStates is how many tasks are in one of states.
func (m *Machine) inStates(states ...TaskState) int {
	n := 0
	for _, ti := range m.types {
		for _, s := range states {
			n += ti.counts[s]
		}
	}
	return n
}

// Ready returns what the machine wants done since the last call and
// forgets it; see Ready for the order to do it in.
func (m *Machine) Ready() Ready {
	rd := m.ready
	m.ready = Ready{}
	return rd
}

// HasReady reports whether Ready would return anything.
func (m *Machine) HasReady() bool { return !m.ready.Empty() }

// Phase reports where the machine is.
func (m *Machine) Phase() Phase { return m.phase }

// Tasks returns every task's status, in job order.
func (m *Machine) Tasks() []TaskStatus {
	out := make([]TaskStatus, len(m.tasks))
	for i, t := range m.tasks {
		out[i] = *t
	}
	return out
}

// Task returns one task's status.
func (m *Machine) Task(id taskspec.TaskID) (TaskStatus, bool) {
	if t := m.byTask[id]; t != nil {
		return *t, true
	}
	return TaskStatus{}, false
}

// TaskOfContainer returns the task whose current (or last) container is
// id, without the copy of every task that Tasks makes.
func (m *Machine) TaskOfContainer(id string) (TaskStatus, bool) {
	if t := m.taskOf(id); t != nil {
		return *t, true
	}
	return TaskStatus{}, false
}

// Rack reports the rack the RM reported for host (NodeRacks), "" when it
// has not.
func (m *Machine) Rack(host string) string { return m.racks[host] }

// Count reports how many tasks are in any of states, without the copy of
// every task that Tasks makes.
func (m *Machine) Count(states ...TaskState) int { return m.inStates(states...) }

// AskTable is the full ask table: per group, the containers still wanted,
// for status pages and tests. What goes to the RM is Ready's Asks, which
// holds only changes.
func (m *Machine) AskTable() []Ask {
	out := make([]Ask, len(m.groups))
	for i, g := range m.groups {
		out[i] = m.ask(g)
	}
	return out
}

func (m *Machine) registered(e Registered) {
	if m.phase != PhaseUnregistered {
		return
	}
	m.phase = PhaseRunning
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
}

func (m *Machine) allocated(c Container) {
	if c.ID == "" || m.containers[c.ID] != nil {
		return
	}
	rec := &containerRecord{container: c}
	m.containers[c.ID] = rec
	g := m.groupFor(c)
	if g == nil {
		m.ready.Release = append(m.ready.Release, c.ID)
		return
	}
	if g.rmOutstanding > 0 {
		g.rmOutstanding--
	}
	t := m.firstPending(g)
	if t == nil || m.restarting != nil {
		m.ready.Release = append(m.ready.Release, c.ID)
		return
	}
	rec.task = t
	m.setState(t, TaskLaunching)
	t.Container = c
	t.LaunchedAt = m.now
	m.ready.Launch = append(m.ready.Launch, Launch{Task: t.Task, Attempt: t.Attempt, Restart: m.generation, Port: t.WantPort, Container: c})
}

// groupFor matches a container to the ask it answers: by
// allocation_request_id, or by priority when the RM echoes no id.
func (m *Machine) groupFor(c Container) *group {
	for _, g := range m.groups {
		if c.AllocationRequestID == g.allocationRequestID {
			return g
		}
	}
	if c.AllocationRequestID != 0 {
		return nil
	}
	for _, g := range m.groups {
		if c.Priority == g.priority {
			return g
		}
	}
	return nil
}

// firstPending is the task a container of g's ask is for: the first in job
// order that g wants.
func (m *Machine) firstPending(g *group) *TaskStatus {
	if g.task != nil {
		if m.wants(g, g.task) {
			return g.task
		}
		return nil
	}
	ti := m.types[g.spec.Type]
	for ; ti.cursor < ti.n; ti.cursor++ {
		if t := m.tasks[ti.first+ti.cursor]; m.wants(g, t) {
			return t
		}
	}
	return nil
}

// mayBeWanted keeps firstPending's cursor behind t, which may have just
// become pending without a placement.
func (m *Machine) mayBeWanted(t *TaskStatus) {
	ti := m.types[t.Task.Type]
	ti.cursor = min(ti.cursor, t.Task.Index)
}

// placedPending counts the pending tasks of typ ("": of any type) waiting
// for an in-place replacement's container.
func (m *Machine) placedPending(typ taskspec.TaskType) int {
	n := 0
	for _, g := range m.groups {
		if g.task != nil && (typ == "" || g.spec.Type == typ) && m.wants(g, g.task) {
			n++
		}
	}
	return n
}

// wants reports whether g's ask is for t: a pending task of its type, and
// of its node when it is an in-place replacement's.
func (m *Machine) wants(g *group, t *TaskStatus) bool {
	if t.State != TaskPending || t.Task.Type != g.spec.Type {
		return false
	}
	if g.task != nil {
		return t == g.task && t.placement == g
	}
	return t.placement == nil
}

// taskOf returns the task whose current container is id, or nil for
// unknown, surplus and superseded containers.
func (m *Machine) taskOf(id string) *TaskStatus {
	rec := m.containers[id]
	if rec == nil || rec.task == nil || rec.task.Container.ID != id {
		return nil
	}
	return rec.task
}

func (m *Machine) launchingTask(id string) *TaskStatus {
	if t := m.taskOf(id); t != nil && t.State == TaskLaunching {
		return t
	}
	return nil
}

func (m *Machine) completed(e ContainerCompleted) {
	t := m.taskOf(e.ID)
	if t == nil && m.unwatchedEnded(e) {
		return
	}
	if t == nil || !t.State.Live() {
		return
	}
	m.dropPendingLaunch(e.ID) // over before the loop got to start it
	why := "failed: " + DescribeExit(e.ExitStatus)
	if e.ExitStatus < 0 || (e.ExitStatus != ExitSuccess && t.Host == "") {
		// YARN's own kills carry the useful detail (the memory figures, the
		// lost node, the localization failure); for process exits it is
		// mostly launch boilerplate, unless the task's launcher never
		// registered: then the NodeManager's own reason (its helper's
		// refusal, an image it could not run) is all there is.
		if reason := ContainerDiagnostics(e.Diagnostics); reason != "" {
			why += ": " + reason
		}
	}
	m.end(t, e.ExitStatus, e.Diagnostics, why)
}

// end records that t's container is over. why completes the Failure line
// when the end is a failure.
func (m *Machine) end(t *TaskStatus, exitStatus int32, diagnostics, why string) {
	t.ExitStatus = exitStatus
	t.Diagnostics = diagnostics
	t.EndedAt = m.now
	m.ends++
	t.EndOrder = m.ends
	switch {
	case t.StopRequested:
		m.setState(t, TaskStopped)
	case exitStatus == ExitSuccess:
		m.setState(t, TaskSucceeded)
	default:
		m.setState(t, TaskFailed)
		t.Failure = t.Task.String() + where(t.Container) + " " + why
	}
}

// where names a task's container in its Failure line: " (container X on
// node:port)" on YARN, nothing for a local process (no node).
func where(c Container) string {
	if c.NodeID == "" {
		return ""
	}
	return fmt.Sprintf(" (container %s on %s)", c.ID, c.NodeID)
}

func (m *Machine) consultPolicy() {
	if checkStep != nil {
		checkStep(m)
	}
	v, ok := m.shortVerdict()
	if !ok {
		v = m.policy.Verdict(View{Now: m.now, Tasks: m.Tasks()})
	}
	switch v.Outcome {
	case JobSucceeded:
		m.finish(Succeeded, v.Diagnostics)
		return
	case JobFailed:
		m.finish(Failed, v.Diagnostics)
		return
	}
	for _, id := range v.Stop {
		if t := m.byTask[id]; t != nil && t.State.Live() && !t.StopRequested {
			m.stop(t, "no longer needed", false)
		}
	}
	for _, id := range v.Restart {
		if t := m.byTask[id]; t != nil && t.State.Ended() {
			m.requeue(t)
		}
	}
}

// shortVerdict is, when the machine's counts alone decide it (ok), the
// Verdict of the policy or one that does the same (an empty one for a Stop
// list of tasks all stopping already), which spares consulting it on a
// copy of every task's status after every event. Only the policies with a
// fast path (fastPolicy) answer; others are always consulted.
func (m *Machine) shortVerdict() (v Verdict, ok bool) {
	if p, fast := m.policy.(fastPolicy); fast {
		return p.fastVerdict(m)
	}
	return Verdict{}, false
}

// restartsOver reports whether the policy says nothing restarts any more
// (settlingPolicy: a TensorFlow job whose decider succeeded).
func (m *Machine) restartsOver() bool {
	p, ok := m.policy.(settlingPolicy)
	return ok && p.restartsOver(m)
}

// The machine's counts, as a policy's fast path reads them (tally).

func (m *Machine) clock() time.Time { return m.now }

func (m *Machine) total() int { return len(m.tasks) }

func (m *Machine) jobTypes() []taskspec.TaskType { return m.typeOrder }

func (m *Machine) typeCount(typ taskspec.TaskType, s TaskState) int {
	if ti := m.types[typ]; ti != nil {
		return ti.counts[s]
	}
	return 0
}

func (m *Machine) unstoppedOf(typ taskspec.TaskType) int {
	if ti := m.types[typ]; ti != nil {
		return ti.unstopped
	}
	return 0
}

func (m *Machine) lastStop() time.Time { return m.lastStopAt }

// stop ends t's container: gracefully first when the machine has a
// StopGrace (escalateStops follows up), else, or when hard, at once. A
// container whose Launch has not left the machine yet is never started: it
// goes back to the RM instead.
func (m *Machine) stop(t *TaskStatus, reason string, hard bool) {
	if !t.StopRequested {
		m.types[t.Task.Type].unstopped -= unstopped(t)
		t.StopRequested, t.StopRequestedAt = true, m.now
		m.lastStopAt = m.now
		if m.dropPendingLaunch(t.Container.ID) {
			m.ready.Release = append(m.ready.Release, t.Container.ID)
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

// escalateStops hard-stops the tasks still live StopGrace after they were
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

// awaitingYarn: the task is still live after the signal queued.
func awaitingYarn(e timedTask) bool {
	return e.t.signalled != nil && e.t.State.Live() && e.t.signalledAt.Equal(e.at)
}

// dropPendingLaunch takes back a Launch the loop has not taken yet.
func (m *Machine) dropPendingLaunch(id string) bool {
	for i, l := range m.ready.Launch {
		if l.Container.ID == id {
			m.ready.Launch = append(m.ready.Launch[:i], m.ready.Launch[i+1:]...)
			return true
		}
	}
	return false
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
	m.ready.Asks = nil
	m.ready.Warn = nil // the stops above say more
	if len(m.causes) > 0 {
		diagnostics += "; " + strings.Join(m.causes, "; ")
	}
	m.ready.Finish = &Finish{Status: status, Diagnostics: diagnostics}
	m.phase = PhaseFinished
}

// syncAsks emits an Ask for each group whose wanted count differs from what
// the RM holds, replacing an unsent Ask for the same group.
func (m *Machine) syncAsks() {
	for _, g := range m.groups {
		a := m.ask(g)
		if a.Count == g.rmOutstanding {
			continue
		}
		g.rmOutstanding = a.Count
		replaced := false
		for i := range m.ready.Asks {
			if m.ready.Asks[i].AllocationRequestID == a.AllocationRequestID {
				m.ready.Asks[i], replaced = a, true
			}
		}
		if !replaced {
			m.ready.Asks = append(m.ready.Asks, a)
		}
	}
}

func (m *Machine) ask(g *group) Ask {
	wanted := 0
	switch {
	case m.restarting != nil:
	case g.task != nil:
		if m.wants(g, g.task) {
			wanted = 1
		}
	default:
		wanted = m.types[g.spec.Type].counts[TaskPending] - m.placedPending(g.spec.Type)
	}
	return Ask{
		TaskType:            g.spec.Type,
		AllocationRequestID: g.allocationRequestID,
		Priority:            g.priority,
		Resource:            g.spec.Resources,
		NodeLabel:           g.nodeLabel,
		Node:                g.node,
		Rack:                g.rack,
		Count:               wanted,
		SpreadTag:           g.spreadTag,
		Partition:           m.partition(g),
		AffinityTag:         g.affinityTag,
		Affinity:            g.affinity,
	}
}

// partition is the node partition a placed group's SchedulingRequest
// names (--spread, --colocate, --apart): its label, else the queue's
// default; "" for other groups (their ResourceRequests get the queue's
// default from the RM).
func (m *Machine) partition(g *group) string {
	if !g.placed() {
		return ""
	}
	return orDefault(g.nodeLabel, m.defaultLabel)
}

// placed reports whether g asks with SchedulingRequests: it is spread,
// or placed by or for another type (--colocate, --apart).
func (g *group) placed() bool {
	return g.spreadTag != "" || g.affinityTag != "" || g.affinity.Type != ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// yarnReasonDeadline ends the tasks whose program was killed from outside
// and whose container YARN has not reported within taskspec.YarnReasonWait:
// the launcher's exit code stands.
func (m *Machine) yarnReasonDeadline() {
	if first, ok := m.signalled.earliest(awaitingYarn); !ok || m.now.Sub(first) < taskspec.YarnReasonWait {
		return
	}
	for _, t := range m.tasks {
		if t.signalled == nil || !t.State.Live() || m.now.Sub(t.signalledAt) < taskspec.YarnReasonWait {
			continue
		}
		e := *t.signalled
		e.Diagnostics += fmt.Sprintf(" (no report from YARN within %s)", taskspec.YarnReasonWait)
		m.completed(ContainerCompleted{ID: e.ID, ExitStatus: e.ExitStatus, Diagnostics: e.Diagnostics})
	}
}
