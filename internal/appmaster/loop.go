package appmaster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/containerexit"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// RM is what the loop needs of the ResourceManager; *yarn.AMRMClient is one.
type RM interface {
	Register(ctx context.Context, host string, rpcPort int32, trackingURL string) (*yarn.Registration, error)
	Allocate(ctx context.Context, asks []*hadoopyarn.ResourceRequestProto, releases []*hadoopyarn.ContainerIdProto, progress float32) (*yarn.Allocation, error)
	Finish(ctx context.Context, status hadoopyarn.FinalApplicationStatusProto, diagnostics, trackingURL string) error
}

// NM is what the loop needs of the NodeManagers; *yarn.ContainerManager is one.
type NM interface {
	StartContainers(ctx context.Context, addr string, reqs []yarn.StartRequest) (*yarn.StartResult, error)
	StopContainers(ctx context.Context, addr string, ids []*hadoopyarn.ContainerIdProto) ([]*hadoopyarn.ContainerIdProto, []*yarn.ContainerError, error)
}

// LoopConfig is what Loop needs. Zero durations take the defaults below.
type LoopConfig struct {
	Job    taskspec.Job
	Policy core.Policy // nil: success.AllSucceed
	// AllocTimeout and ClusterOffers are the machine's (Config): how long a
	// task may wait for a container, and what the cluster offers the
	// queue, by node label.
	AllocTimeout  time.Duration
	ClusterOffers map[string]string
	// LargestNodeMiB is core.Config's: what --oom-grow grows to at most.
	LargestNodeMiB map[string]int64
	// QueueDefaultLabel is the queue's default node label (core.Config).
	QueueDefaultLabel string
	RM                RM
	NM                NM
	// Host, RPCPort and TrackingURL are what registerApplicationMaster
	// announces: the NM's host and the AM's HTTP port (rendezvous and
	// status page), which clients read from the application report.
	Host        string
	RPCPort     int32
	TrackingURL string
	// Launchers is the channel to the tasks' launchers (the rendezvous);
	// nil when the tasks run without one.
	Launchers Launchers
	// Progress, if set, is the job's training progress as its programs
	// report it (TaskRendezvous.JobProgress), which the loop reports to
	// YARN as the application's; false (or unset): the fraction of tasks
	// ended.
	Progress func() (float64, bool)
	// Observe, if set, gets the job's state after every change, for the
	// status page. It must not block.
	Observe func(Snapshot)
	// LaunchContext builds the ContainerLaunchContext of one task.
	LaunchContext func(core.Launch) *hadoopyarn.ContainerLaunchContextProto
	// BeforeUnregister runs once the job is decided, before unregistering
	// (the AM removes the staging directory there). Best effort: it logs
	// its own failures.
	BeforeUnregister func(context.Context, core.Finish)
	// Adopt returns the task table a previous AM attempt saved, for
	// adopting its tasks still running (core.PreviousAttempt); nil adopts
	// nothing (containers of a previous attempt are released).
	Adopt func(context.Context) []amattempt.Task
	// Attempt is this AM's attempt number (0 or 1: the first); a later
	// attempt that adopts nothing counts a cluster restart.
	Attempt int
	// Attempts is how many AM attempts the job allows (--am-attempts; 0 or
	// 1: one): a SIGTERM before the last hands the application over
	// (core.Finish.HandOver).
	Attempts int
	// Resume, if set, is the restarts a previous AM attempt recorded
	// (saved with its task table): --max-restarts holds per job.
	Resume *core.RestartRecord
	// NodeRacks, if set, asks the RM for every node's rack (getClusterNodes)
	// once, in the background after registering: in-place replacements
	// ask for their node's real rack (core.Ask.Localities). Allocate's
	// updated_nodes add to it either way.
	NodeRacks func(context.Context) (map[string]string, error)
	// RefusalReason, if set, explains a task's container that YARN ended
	// with exit status -1000 and no diagnostics (a NodeManager that refuses
	// the container's runtime says why only in its log), given the
	// container's NodeManager web address; "" when it has nothing to say.
	RefusalReason func(ctx context.Context, task taskspec.TaskID, nodeHTTP string) string
	// Logf logs one line; nil discards.
	Logf func(format string, args ...any)
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	Heartbeat     time.Duration // allocate interval when nothing is happening (1 s)
	FastHeartbeat time.Duration // while containers are wanted or just changed (150 ms)
	// EagerHeartbeat is the allocate interval for eagerWindow after an
	// allocate call carried new asks, while they are unmet (50 ms): the
	// scheduler places containers at the next NodeManager heartbeat, and
	// each interval here is time a started job waits for nothing.
	EagerHeartbeat time.Duration
	CallTimeout    time.Duration // per RM or NM call (30 s)
	FinishTimeout  time.Duration // for unregistering, retries included (60 s)
	// MaxRMFailures is how many allocate calls in a row may fail before the
	// loop gives up on the RM (10).
	MaxRMFailures int
	// PreemptionWait is how long YARN's scheduler waits between announcing
	// a preemption and the kill (PreemptionWait of the client's
	// configuration); 0 means taskspec.DefaultPreemptionWait.
	PreemptionWait time.Duration
	// Python is what the core knows of the job's Python environment
	// (core.Config.Python).
	Python core.PythonFacts
	// ContainerStopGrace is how long a task the job no longer needs has, once its
	// launcher was asked to end the program, before the AM stops its
	// container through the NodeManager (12 s: the launcher's own SIGTERM
	// to SIGKILL grace is 10 s). Without Launchers, containers are stopped
	// at once.
	ContainerStopGrace time.Duration
}

// Launchers is what the loop needs of the tasks' launchers (`tfyarn task`
// in each container, reached through the rendezvous server).
type Launchers interface {
	// Assign tells which container runs task; called before starting it,
	// so that only that container may register as the task.
	Assign(task taskspec.TaskID, containerID string)
	// Stop asks task's launcher to end its program gracefully.
	Stop(task taskspec.TaskID, reason string)
	// StopAll asks every launcher to end its program: the job is decided.
	StopAll(reason string)
	// Reset starts a new rendezvous generation: the cluster restarts
	// (core.Restart), so registrations and the cluster spec start over.
	Reset()
	// Notify is signalled when Drain has something.
	Notify() <-chan struct{}
	// Drain returns what the launchers reported since the last call, as
	// machine events (TaskRegistered, ContainerCompleted for a program's
	// exit, RendezvousFailed).
	Drain() []core.Event
	// Warn passes the machine's warning on to the launcher of w.Task in
	// w.Container (a preemption, idle GPUs: core.Warning).
	Warn(w core.Warning)
	// StderrTail returns the last lines a task's program wrote to stderr in
	// containerID, as its launcher reported them; nil when unknown.
	StderrTail(task taskspec.TaskID, containerID string) []string
}

// Snapshot is the job's state as the status page shows it.
type Snapshot struct {
	Tasks  []core.TaskStatus
	Finish *core.Finish // set once the job is decided
	// Restarts is how many restarts the job has had (core.Machine.Restarts).
	Restarts int
	// Record is the same restarts as a next AM attempt takes them over.
	Record core.RestartRecord
	// Waiting says what tasks wait for a container, and where
	// (core.Machine.Waiting).
	Waiting []string
	// GPUIdle warns that the job's GPUs are idle
	// (core.Machine.GPUIdleWarning); "" while they are not.
	GPUIdle string
}

// LoopResult is how the loop ended.
type LoopResult struct {
	Finish core.Finish
	Tasks  []core.TaskStatus
	// Allocated counts every container the RM handed out (surplus ones
	// included), Released those given back unused, Started the successful
	// startContainers.
	Allocated, Released, Started int
	// AllStartedAt is when the last of the job's tasks had been started
	// once (zero if that never happened).
	AllStartedAt time.Time
	// Restarts is how many restarts the job had (core.Machine.Restarts).
	Restarts     int
	Unregistered bool
}

// Loop drives a Machine against the RM and the NMs until the job is decided
// and the AM has unregistered. Every decision is the machine's; the loop
// only turns RPC answers into events and Ready into RPC calls. The error is
// about unregistering: a job that failed is a FinalStatus, not an error.
func Loop(ctx context.Context, cfg LoopConfig) (LoopResult, error) {
	l, err := newLoop(cfg)
	if err != nil {
		return LoopResult{}, err
	}
	return l.run(ctx)
}

// fastWindow keeps heartbeats fast this long after containers arrived,
// started or ended: more are likely to follow.
const fastWindow = 3 * time.Second

// eagerWindow bounds the eager heartbeats after new asks, so an unmet ask on
// a full cluster costs the ResourceManager 40 calls at most, then the fast rate.
const eagerWindow = 2 * time.Second

type loop struct {
	cfg        LoopConfig
	m          *core.Machine
	buf        core.AskBuffer
	containers map[string]*hadoopyarn.ContainerProto // allocated, by id
	out        LoopResult
	started    map[taskspec.TaskID]bool
	fastUntil  time.Time
	eagerUntil time.Time // new asks went out: allocate every EagerHeartbeat until then
	rmFailures int
	killed     bool // core.KillRequested was stepped
	// unsent are containers whose startContainers was never sent, because
	// the AM was killed first: nothing to stop on their NodeManagers.
	unsent map[string]bool
	// racks brings NodeRacks' answer, once; nil when none is awaited.
	racks chan racksAnswer
	// lastSent is when the last allocate call (or the registration) went
	// out: a preemption announced in the next answer was decided after it.
	lastSent time.Time
}

type racksAnswer struct {
	racks map[string]string
	err   error
}

func newLoop(cfg LoopConfig) (*loop, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Heartbeat = orDuration(cfg.Heartbeat, time.Second)
	cfg.FastHeartbeat = orDuration(cfg.FastHeartbeat, 150*time.Millisecond)
	cfg.EagerHeartbeat = min(orDuration(cfg.EagerHeartbeat, 50*time.Millisecond), cfg.FastHeartbeat)
	cfg.CallTimeout = orDuration(cfg.CallTimeout, 30*time.Second)
	cfg.FinishTimeout = orDuration(cfg.FinishTimeout, 60*time.Second)
	cfg.ContainerStopGrace = orDuration(cfg.ContainerStopGrace, taskspec.ContainerStopGrace)
	if cfg.MaxRMFailures <= 0 {
		cfg.MaxRMFailures = 10
	}
	mcfg := core.Config{Job: cfg.Job, Policy: cfg.Policy, WorkersInPlace: frameworks.WorkersReplacedInPlace(cfg.Job), TasksNeedJobService: frameworks.JobServiceOf(cfg.Job, nil) != nil, AllocTimeout: cfg.AllocTimeout, ClusterOffers: cfg.ClusterOffers, QueueDefaultLabel: cfg.QueueDefaultLabel, PreemptionWait: cfg.PreemptionWait, Python: cfg.Python, LargestNodeMiB: cfg.LargestNodeMiB}
	if cfg.Launchers != nil {
		mcfg.ContainerStopGrace = cfg.ContainerStopGrace
	}
	m, err := core.New(mcfg)
	if err != nil {
		return nil, err
	}
	return &loop{cfg: cfg, m: m, containers: map[string]*hadoopyarn.ContainerProto{}, started: map[taskspec.TaskID]bool{}, unsent: map[string]bool{}}, nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (l *loop) run(ctx context.Context) (LoopResult, error) {
	l.tick()
	l.lastSent = l.cfg.Now()
	cctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
	reg, err := l.cfg.RM.Register(cctx, l.cfg.Host, l.cfg.RPCPort, l.cfg.TrackingURL)
	cancel()
	if err != nil {
		// Unregistered, the RM will not take a final status: nothing to
		// finish, the attempt fails when this process exits.
		return l.out, fmt.Errorf("appmaster: registering with the ResourceManager: %w", err)
	}
	limits := yarn.LimitsFrom(reg.MaxCapability, reg.ResourceTypes)
	deadline := "tasks without a container after %s fail the job"
	if n := l.cfg.Job.MinWorkers; n > 0 {
		deadline = fmt.Sprintf("fewer than --min-workers %d workers with a container after %%s fail the job", n)
	}
	l.cfg.Logf("registered in queue %s (max container %d MiB, %d vcores); "+deadline, reg.Queue, limits.MaxMemoryMiB, limits.MaxVCores, orDuration(l.cfg.AllocTimeout, taskspec.DefaultAllocTimeout))
	l.m.Step(core.Registered{Limits: limits})
	l.adopt(ctx, reg.ContainersFromPreviousAttempts)
	l.fetchRacks(ctx)

	for {
		rd := l.m.Ready()
		if rd.Restart != nil {
			l.cfg.Logf("restarting the cluster (restart %d): new containers and a new rendezvous", rd.Restart.Number)
			if l.cfg.Launchers != nil {
				l.cfg.Launchers.Reset()
			}
		}
		if rd.Adoption != nil {
			l.adopted(*rd.Adoption)
		}
		for _, n := range rd.Notes {
			l.cfg.Logf("%s", n)
		}
		l.exclude(rd.Exclude)
		l.buf.Add(rd)
		l.logAsks(rd.Asks)
		l.launch(ctx, rd.Launch)
		l.warn(rd.Warn)
		// A hand-over ends this attempt, not the job: the launchers keep their programs running
		// for the next attempt to adopt.
		l.stop(ctx, rd.Stop, rd.Finish != nil && !rd.Finish.HandOver)
		if rd.Finish != nil {
			return l.finish(ctx, *rd.Finish)
		}
		if l.m.HasReady() {
			continue // launching produced events
		}
		l.observe(nil)
		l.wait(ctx)
		if l.m.HasReady() {
			continue // a kill or a program's exit decided something
		}
		l.takeRacks()
		l.heartbeat(ctx)
	}
}

// fetchRacks starts NodeRacks in the background: no job waits for it, and
// an in-place replacement comes long after the tasks registered.
func (l *loop) fetchRacks(ctx context.Context) {
	if l.cfg.NodeRacks == nil {
		return
	}
	l.racks = make(chan racksAnswer, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
		defer cancel()
		racks, err := l.cfg.NodeRacks(cctx)
		l.racks <- racksAnswer{racks, err}
	}()
}

// takeRacks steps the machine with NodeRacks' answer once it has come.
func (l *loop) takeRacks() {
	select {
	case a := <-l.racks:
		l.racks = nil
		if a.err != nil {
			l.cfg.Logf("node racks unknown (%v): in-place replacements ask for %s unless allocate reports their node", a.err, core.DefaultRack)
			return
		}
		l.cfg.Logf("racks of %d hosts known, for in-place replacements", len(a.racks))
		l.m.Step(core.NodeRacks{Racks: a.racks})
	default:
	}
}

func (l *loop) tick() { l.m.Step(core.Tick{Now: l.cfg.Now()}) }

// interrupted is the loop's one translation of a cancelled ctx: the AM
// process got SIGTERM (YARN's kill, preemption of the AM, its NodeManager
// shutting down), stepped as KillRequested, once. Every blocking call is
// followed by it, before its result is stepped: what the cancellation cut
// short (an allocate, startContainers in flight) must not read as the
// job's failure. doing, if set, says what the AM was doing, for the
// diagnostics.
func (l *loop) interrupted(ctx context.Context, doing string) bool {
	if ctx.Err() == nil {
		return false
	}
	if !l.killed {
		l.killed = true
		l.cfg.Logf("terminating: %v", ctx.Err())
		l.tick()
		l.m.Step(core.KillRequested{Reason: doing, LaterAttempt: max(l.cfg.Attempt, 1) < l.cfg.Attempts})
	}
	return true
}

// wait sleeps until the next heartbeat, or less when told to shut down or
// when what the launchers reported needs acting on.
func (l *loop) wait(ctx context.Context) {
	d := l.cfg.Heartbeat
	switch now, wants := l.cfg.Now(), l.wantsContainers(); {
	case wants && now.Before(l.eagerUntil):
		d = l.cfg.EagerHeartbeat
	case wants || now.Before(l.fastUntil):
		d = l.cfg.FastHeartbeat
	}
	t := time.NewTimer(d)
	defer t.Stop()
	var notify <-chan struct{}
	if l.cfg.Launchers != nil {
		notify = l.cfg.Launchers.Notify()
	}
	for {
		// Checked first: a kill wins over what the launchers report at the
		// same moment (programs dying of the same kill).
		if l.interrupted(ctx, "") {
			return
		}
		select {
		case <-t.C:
			return
		case <-notify:
			if l.interrupted(ctx, "") {
				return
			}
			l.drainLaunchers()
			if l.m.HasReady() {
				return // a program's exit decided something: act now
			}
			// Registrations alone need no allocate call: keep waiting.
			l.observe(nil)
		case <-ctx.Done():
			// The AM's context ends on SIGTERM/SIGINT: the NodeManager's way of
			// stopping the AM container.
			l.interrupted(ctx, "")
			return
		}
	}
}

// drainLaunchers steps the machine with what the launchers reported.
func (l *loop) drainLaunchers() {
	evs := l.cfg.Launchers.Drain()
	if len(evs) == 0 {
		return
	}
	l.tick()
	for _, ev := range evs {
		if c, ok := ev.(core.ContainerCompleted); ok {
			// A program's end as its launcher reported it: the container
			// ends a moment later, and the RM's word on it is then ignored.
			l.fastUntil = l.cfg.Now().Add(fastWindow)
			l.m.Step(c)
			l.logCompleted(c.ID, c.ExitStatus)
			continue
		}
		l.m.Step(ev)
	}
}

// ExcludingRM is an RM that keeps the application's containers off nodes
// (its blacklist, sent with the next allocate call); *yarn.AMRMClient is
// one.
type ExcludingRM interface {
	Exclude(hosts ...string)
}

// exclude carries out the machine's exclusions of nodes (core.ExcludedNode).
func (l *loop) exclude(nodes []core.ExcludedNode) {
	for _, x := range nodes {
		l.cfg.Logf("excluding node %s", x)
		if rm, ok := l.cfg.RM.(ExcludingRM); ok {
			rm.Exclude(x.Host)
		} else {
			// The machine releases a container it is allocated there all
			// the same.
			l.cfg.Logf("this ResourceManager client cannot exclude nodes: containers allocated on %s are given back", x.Host)
		}
	}
}

// SchedulingRM is an RM that also takes SchedulingRequests (--spread);
// *yarn.AMRMClient is one.
type SchedulingRM interface {
	AllocateScheduling(ctx context.Context, asks []*hadoopyarn.ResourceRequestProto, scheduling []*hadoopyarn.SchedulingRequestProto, releases []*hadoopyarn.ContainerIdProto, progress float32) (*yarn.Allocation, error)
}

// errNoSchedulingRequests: the loop's RM cannot carry SchedulingRequests.
var errNoSchedulingRequests = errors.New("this ResourceManager client cannot send SchedulingRequests (--spread)")

// allocate is one allocate call; SchedulingRequests need a SchedulingRM.
func (l *loop) allocate(ctx context.Context, reqs []*hadoopyarn.ResourceRequestProto, sreqs []*hadoopyarn.SchedulingRequestProto, release []*hadoopyarn.ContainerIdProto) (*yarn.Allocation, error) {
	if len(sreqs) == 0 {
		return l.cfg.RM.Allocate(ctx, reqs, release, l.progress())
	}
	s, ok := l.cfg.RM.(SchedulingRM)
	if !ok {
		return nil, &yarn.RequestRefusedError{Class: "SchedulingRequestsUnsupported", Message: errNoSchedulingRequests.Error(), Err: errNoSchedulingRequests}
	}
	return s.AllocateScheduling(ctx, reqs, sreqs, release, l.progress())
}

func (l *loop) wantsContainers() bool {
	return l.m.Count(core.TaskPending, core.TaskLaunching) > 0
}

// heartbeat is one allocate call carrying the buffered asks and releases;
// its answer becomes events, allocations before completions.
func (l *loop) heartbeat(ctx context.Context) {
	asks, release := l.buf.Pending()
	if len(asks) > 0 {
		l.eagerUntil = l.cfg.Now().Add(eagerWindow)
	}
	var reqs []*hadoopyarn.ResourceRequestProto
	var sreqs []*hadoopyarn.SchedulingRequestProto
	for _, a := range asks {
		if a.Scheduling() {
			sreqs = append(sreqs, schedulingRequestProto(a))
			continue
		}
		reqs = append(reqs, askProtos(a)...)
	}
	var releaseProtos []*hadoopyarn.ContainerIdProto
	for _, id := range release {
		if c := l.containers[id]; c != nil {
			releaseProtos = append(releaseProtos, c.GetId())
		}
	}
	sent := l.cfg.Now()
	cctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
	resp, err := l.allocate(cctx, reqs, sreqs, releaseProtos)
	cancel()
	if l.interrupted(ctx, "") {
		// What the call returned, if anything, may already be the kill's
		// doing (containers killed with the application): not the job's.
		return
	}
	l.tick()
	if err != nil {
		l.rmFailures++
		l.cfg.Logf("allocate failed (%d in a row): %v", l.rmFailures, err)
		var refused *yarn.RequestRefusedError
		switch {
		case errors.As(err, &refused):
			// Retrying would send the same asks: no use.
			l.m.Step(core.RequestRefused{Asks: asks, Exception: refused.Class, Message: refused.Message})
		case errors.Is(err, yarn.ErrResponseIDMismatch) || l.rmFailures >= l.cfg.MaxRMFailures:
			l.m.Step(core.RMFailed{Reason: err.Error()})
		}
		return
	}
	l.rmFailures = 0
	since := l.lastSent
	l.lastSent = sent
	l.buf.Sent(asks, release)
	l.out.Released += len(releaseProtos)
	if resp.Reregistered {
		l.cfg.Logf("the ResourceManager had forgotten this attempt; registered again")
		l.m.Step(core.Resynced{})
	}
	if nodes := resp.GetUpdatedNodes(); len(nodes) > 0 {
		l.m.Step(core.NodeRacks{Racks: nodeRacks(nodes)})
	}
	if got := resp.GetAllocatedContainers(); len(got) > 0 {
		l.fastUntil = l.cfg.Now().Add(fastWindow)
		cs := make([]core.Container, len(got))
		for i, c := range got {
			cs[i] = containerOf(c)
			l.containers[cs[i].ID] = c
			l.cfg.Logf("allocated %s on %s (%s)", cs[i].ID, cs[i].NodeID, cs[i].Resource)
		}
		l.out.Allocated += len(got)
		l.m.Step(core.Allocated{Containers: cs})
	}
	for _, st := range resp.GetCompletedContainerStatuses() {
		l.fastUntil = l.cfg.Now().Add(fastWindow)
		id := yarn.FormatContainerID(st.GetContainerId())
		reported := l.endedContainer(id) // its launcher already told
		l.m.Step(core.ContainerCompleted{ID: id, ExitStatus: st.GetExitStatus(), Diagnostics: l.diagnostics(ctx, id, st)})
		if !reported {
			l.logCompleted(id, st.GetExitStatus())
		}
	}
	// After the completions: a container over already warns nobody.
	if ev, ok := preemptionEvent(resp.GetPreempt(), since); ok {
		l.logPreemption(ev)
		l.m.Step(ev)
	}
	if resp.GetAMCommand() == hadoopyarn.AMCommandProto_AM_SHUTDOWN {
		l.m.Step(core.ShutdownRequested{Reason: "the ResourceManager sent AM_SHUTDOWN"})
	}
}

// progress is the programs' own when they report it; else the fraction of
// tasks ended. That, like the others below, asks the machine's counts and index:
// copying every task per heartbeat or per completed container would make
// the loop's cost grow with the job (the core's own is flat, bench/results/core.md).
func (l *loop) progress() float32 {
	if l.cfg.Progress != nil {
		if f, ok := l.cfg.Progress(); ok {
			return float32(min(max(f, 0), 1))
		}
	}
	all := []core.TaskState{core.TaskPending, core.TaskLaunching, core.TaskRunning, core.TaskSucceeded, core.TaskFailed, core.TaskStopped}
	ended := l.m.Count(core.TaskSucceeded, core.TaskFailed, core.TaskStopped)
	return float32(ended) / float32(max(l.m.Count(all...), 1))
}

func (l *loop) logAsks(asks []core.Ask) {
	for _, a := range asks {
		l.cfg.Logf("asking for %d %s containers (%s)", a.Count, a.TaskType, a.Resource)
	}
}

// diagnostics are YARN's of a completed container or, when YARN gave none
// for a container it ended with exit status -1000, RefusalReason's.
func (l *loop) diagnostics(ctx context.Context, id string, st *hadoopyarn.ContainerStatusProto) string {
	if d := st.GetDiagnostics(); d != "" || st.GetExitStatus() != containerexit.Invalid || l.cfg.RefusalReason == nil {
		return d
	}
	t, ok := l.m.TaskOfContainer(id)
	c := l.containers[id]
	if !ok || c == nil {
		return ""
	}
	return l.cfg.RefusalReason(ctx, t.Task, c.GetNodeHttpAddress())
}

// endedContainer reports whether id is a task's container that already
// ended in the machine's eyes.
func (l *loop) endedContainer(id string) bool {
	t, ok := l.m.TaskOfContainer(id)
	return ok && t.State.Ended()
}

func (l *loop) logCompleted(id string, exit int32) {
	if t, ok := l.m.TaskOfContainer(id); ok && t.State.Ended() {
		l.cfg.Logf("%s %s in %s: %s", t.Task, t.State, id, containerexit.FromFailure(t.Failure, exit))
		return
	}
	l.cfg.Logf("container %s completed: %s", id, containerexit.Describe(exit))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
