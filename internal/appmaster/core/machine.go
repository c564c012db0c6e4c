// Package core is the pure core of tfyarn's ApplicationMaster, shared by the
// AM's YARN loop (package appmaster) and `run --local` (package localrun).
// Machine is a deterministic state machine in the style of etcd's raft: the I/O loop
// feeds it Events (RM responses, NM replies, task registrations, ticks) with
// Step, and takes what it wants done from Ready (asks, launches, stops,
// releases, adoptions, the final status). The machine does no I/O, reads no clock and
// starts no goroutine, so every scheduling rule is tested by feeding events.
//
// The package imports only the standard library's pure parts, taskspec,
// internal/success (the Policy it consults, which its driver gets from the
// frameworks' registry) and internal/containerexit, pure too; no framework
// (internal/architecture's TestCoreIsPure holds it to that).
//
// A driver loop looks like:
//
//	m, err := core.New(core.Config{Job: job})
//	// after registerApplicationMaster:
//	m.Step(core.Registered{Limits: limits})
//	// what a previous attempt left (--am-attempts; ignored for a first one):
//	m.Step(core.PreviousAttempt{Attempt: n, Running: kept, Saved: table})
//	for {
//		rd := m.Ready()
//		adopt(rd.Adoption)           // tell the launchers' channel
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
	"time"

	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

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
	// ContainerStopGrace is how long a task asked to end gracefully (its launcher
	// sends the program SIGTERM, then SIGKILL after its own grace) has
	// before the machine escalates to a hard stop (the NodeManager's
	// stopContainers; locally, cancelling the launcher). 0 makes every stop
	// hard at once: the driver has no launchers to ask. Stops that come
	// with the job's end are hard at once whatever ContainerStopGrace says: the job
	// is decided.
	ContainerStopGrace time.Duration
	// PreemptionWait is how long YARN's scheduler waits between announcing
	// a preemption and the kill (preemption.go); 0 means
	// taskspec.DefaultPreemptionWait.
	PreemptionWait time.Duration
	// Python is what the machine knows of the job's Python environment,
	// for the words of a task whose container could not reach it.
	Python PythonFacts
	// WorkersInPlace: a failed worker is replaced alone at its address
	// (its node, its port) while the others wait for it, rather than with
	// the cluster (restart.go's inPlace): the job's framework's say, which
	// the driver asks the registry (frameworks.WorkersReplacedInPlace:
	// TensorFlow's ParameterServerStrategy workers).
	WorkersInPlace bool
	// TasksNeedJobService: the job's tasks met on its framework's job
	// service (framework.Framework.JobService: elastic PyTorch's store,
	// XGBoost's tracker), which the AM serves and which dies with its
	// attempt: a later attempt adopts none of them (adopt.go). The
	// driver asks the registry (frameworks.JobServiceOf).
	TasksNeedJobService bool
	// LargestNodeMiB is, per node label ("" for none), the memory of the
	// cluster's largest node at submission: what --oom-grow grows a task's
	// memory to at most (oomgrow.go). nil when unknown.
	LargestNodeMiB map[string]int64
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
	python         PythonFacts
	workersInPlace bool // Config.WorkersInPlace
	needJobService bool // Config.TasksNeedJobService
	// job is Config.Job, for its spread (--spread); spreadText says it
	// in words, "" when nothing is spread.
	job        taskspec.Job
	spreadText string

	restartPolicy      taskspec.RestartPolicy
	counted, uncounted int                       // restarts, by whether they count toward the policy's Max
	generation         int                       // cluster restarts: the rendezvous generation
	replaced           int                       // lost workers replaced alone (Verdict.Replace), in every attempt
	elastic            bool                      // --min-workers: no adoption by a later attempt (previousAttempt)
	minWorkers         int                       // --min-workers: what an elastic job must hold past --alloc-timeout (elastic_alloc.go)
	causes             []string                  // every failure that caused a restart, for the diagnostics
	restarting         *restartState             // a cluster restart's stops are out
	unwatched          *unwatchedRestart         // a later attempt's restart, its cause awaited
	nextRequestID      int64                     // allocation_request_ids of in-place asks
	racks              map[string]string         // host → rack, from NodeRacks
	nodeFailures       map[string]int            // host → the job's failed task attempts there (badnodes.go)
	excluded           []ExcludedNode            // nodes the job's containers stay off, in order
	memory             map[taskspec.TaskID]int64 // grown memory per task, MiB (oomgrow.go)
	largestNode        map[string]int64          // Config.LargestNodeMiB
	maxMemoryMiB       int64                     // the scheduler's largest container, once registered
	gpus               gpuState                  // --gpu-idle-timeout (gpuidle.go)

	// Indexes kept in step with the tasks, so that an event costs what it
	// touches rather than a pass over every task (bench/core_test.go: 10,000
	// tasks). Each scan they replace still runs, unchanged, whenever they
	// say it could act; the tests hold them to the scans after every Step
	// (checkedStep).
	types             map[taskspec.TaskType]*typeIndex
	stateCounts       [numTaskStates]int  // tasks per state, all types together (the types' counts summed)
	typeOrder         []taskspec.TaskType // the groups' types, in job order
	unallocatedFailed int                 // tasks failed for never getting a container
	allocScan         bool                // a task's allocation wait (re)started since allocDeadline looked
	allocNext         time.Time           // the earliest allocation deadline it saw; zero: none
	softStopped       timedQueue          // asked to end gracefully: escalateStops' candidates
	lastStopAt        time.Time           // the latest StopRequestedAt
	signalled         timedQueue          // signalled: yarnReasonDeadline's candidates

	ready Ready
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
		stopGrace:     max(cfg.ContainerStopGrace, 0),
		restartPolicy: cfg.Job.Restarts,
		job: taskspec.Job{Spread: cfg.Job.Spread, Tasks: cfg.Job.Tasks, StartAfter: cfg.Job.StartAfter, Affinities: cfg.Job.Affinities,
			ExcludeNodes: cfg.Job.ExcludeNodes, MaxNodeFailures: cfg.Job.MaxNodeFailures, OOMGrow: cfg.Job.OOMGrow, GPUIdle: cfg.Job.GPUIdle},
		memory:        map[taskspec.TaskID]int64{},
		largestNode:   cfg.LargestNodeMiB,
		spreadText:    cfg.Job.SpreadText(),
		python:        cfg.Python,
		nextRequestID: 1000, // above the groups' own
	}
	m.workersInPlace = cfg.WorkersInPlace
	m.needJobService = cfg.TasksNeedJobService
	if cfg.Job.MinWorkers > 0 {
		// An elastic job's lost worker is not restarted with the cluster:
		// its others go on without it (success.Elastic), whatever ended it.
		m.restartPolicy = taskspec.RestartPolicy{NoInfraRestarts: true}
		m.elastic = true
		m.minWorkers = cfg.Job.MinWorkers
	}
	if m.allocTimeout == 0 {
		m.allocTimeout = taskspec.DefaultAllocTimeout
	}
	if m.preemptionWait = cfg.PreemptionWait; m.preemptionWait <= 0 {
		m.preemptionWait = taskspec.DefaultPreemptionWait
	}
	if m.policy == nil {
		m.policy = success.AllSucceed{}
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
		m.stateCounts[TaskPending] += g.Instances
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
//
// The event itself is handled by one small method per event type (handle);
// what every event is followed by stays here: the deadlines, the restarts, the
// policy's verdict and the asks, in that order.
func (m *Machine) Step(ev Event) {
	if m.phase == PhaseFinished {
		return
	}
	m.handle(ev)
	if m.phase == PhaseRunning {
		m.allocDeadline()
		m.yarnReasonDeadline()
		m.escalateStops()
		m.gpuIdleDeadline()
	}
	if m.phase == PhaseRunning {
		m.applyRestarts()
	}
	if m.phase == PhaseRunning && m.elastic {
		m.elasticFinishing()
	}
	if m.phase == PhaseRunning && m.restarting == nil {
		m.consultPolicy()
	}
	if m.phase == PhaseRunning {
		m.syncAsks()
	}
}

// handle is the table of events: which method applies each.
func (m *Machine) handle(ev Event) {
	switch e := ev.(type) {
	case Registered:
		m.registered(e)
	case PreviousAttempt:
		m.previousAttempt(e)
	case Resynced:
		m.resynced()
	case Allocated:
		m.containersAllocated(e)
	case ContainerStarted:
		m.containerStarted(e)
	case StartFailed:
		m.startFailed(e)
	case ContainerCompleted:
		m.completed(e)
	case ProgramSignalled:
		m.programSignalled(e)
	case PreemptionWarned:
		m.preemptionWarnedWhileRunning(e)
	case TaskRegistered:
		m.taskRegistered(e)
	case Tick:
		m.tick(e)
	case KillRequested:
		m.killRequested(e)
	case ShutdownRequested:
		m.finish(Killed, "the ApplicationMaster was told to shut down: "+orDefault(e.Reason, "no reason given"))
	case RMFailed:
		m.finish(Failed, "lost the ResourceManager: "+orDefault(e.Reason, "no reason given"))
	case NodeRacks:
		m.nodeRacks(e)
	case RendezvousFailed:
		m.rendezvousFailed(e)
	case RequestRefused:
		m.requestRefused(e)
	case GPUsSampled:
		m.gpusSampled(e)
	}
}

// resynced: the new RM knows none of our asks, so each group's outstanding
// count is unknown and syncAsks states the full ask table again.
func (m *Machine) resynced() {
	for _, g := range m.groups {
		g.rmOutstanding = -1
	}
}

// containersAllocated takes the RM's new containers, while the job runs.
func (m *Machine) containersAllocated(e Allocated) {
	if m.phase == PhaseRunning {
		for _, c := range e.Containers {
			m.allocated(c)
		}
	}
}

// containerStarted: the NodeManager started a launching task's container.
func (m *Machine) containerStarted(e ContainerStarted) {
	if t := m.launchingTask(e.ID); t != nil {
		m.setState(t, TaskRunning)
		t.StartedAt = m.now
	}
}

// startFailed: the NodeManager refused to start a launching task's container.
func (m *Machine) startFailed(e StartFailed) {
	if t := m.launchingTask(e.ID); t != nil {
		m.end(t, ExitInvalid, e.Reason, "failed to start: "+firstLine(e.Reason))
		m.ready.Release = append(m.ready.Release, e.ID) // the RM still counts it as ours
		m.released(e.ID)
	}
}

// programSignalled records, once, that a live task's program was signalled.
func (m *Machine) programSignalled(e ProgramSignalled) {
	if t := m.taskOf(e.ID); t != nil && t.State.Live() && t.signalled == nil {
		t.signalled, t.signalledAt = &e, m.now
		m.signalled = append(m.signalled, timedTask{t, m.now})
	}
}

// preemptionWarnedWhileRunning: YARN's warnings count only while the job runs.
func (m *Machine) preemptionWarnedWhileRunning(e PreemptionWarned) {
	if m.phase == PhaseRunning {
		m.preemptionWarned(e)
	}
}

// taskRegistered records where a live task's program listens.
func (m *Machine) taskRegistered(e TaskRegistered) {
	if t := m.byTask[e.Task]; t != nil && t.State.Live() {
		t.Host, t.Port = e.Host, e.Port
	}
}

// tick moves the machine's clock forward (never back).
func (m *Machine) tick(e Tick) {
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
}

// killRequested ends the job as killed, or hands it over to a later attempt.
func (m *Machine) killRequested(e KillRequested) {
	diag := KilledDiagnostics
	if e.Reason != "" {
		diag += " " + e.Reason
	}
	if e.LaterAttempt {
		m.handOver(diag)
	} else {
		m.finish(Killed, diag)
	}
}

// nodeRacks learns the racks of hosts (an empty rack says nothing).
func (m *Machine) nodeRacks(e NodeRacks) {
	if m.racks == nil {
		m.racks = map[string]string{}
	}
	for host, rack := range e.Racks {
		if rack != "" {
			m.racks[host] = rack
		}
	}
}

// rendezvousFailed fails a running job whose tasks could not meet.
func (m *Machine) rendezvousFailed(e RendezvousFailed) {
	if m.phase == PhaseRunning {
		diag := "rendezvous failed: " + orDefault(e.Reason, "no reason given")
		if never := m.unallocatedAtRendezvous(); never != "" {
			diag += "; " + never
		}
		m.finish(Failed, diag)
	}
}

// requestRefused fails a running job whose request the RM refused.
func (m *Machine) requestRefused(e RequestRefused) {
	if m.phase == PhaseRunning {
		m.finish(Failed, RefusalDiagnostics(e))
	}
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
