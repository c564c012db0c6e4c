package rendezvous

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Board is a ready-made Handler: it holds the job's registrations,
// publishes the cluster spec once every chief, worker and ps task has
// registered, and keeps the AM's stop orders and the tasks' exit reports.
//
// Evaluator and tensorboard tasks register too (the AM learns their
// address) and get the same spec, but never hold it back: TensorFlow keeps
// them out of "cluster", and a late evaluator container must not stall
// training.
//
// The AM loop learns what happened through Notify and Drain, in the
// Ready-loop style of package appmaster: handlers never block on the loop.
type Board struct {
	groups  []taskspec.TaskGroup
	known   map[taskspec.TaskID]bool // every task of the job → InCluster
	timeout time.Duration

	mu         sync.Mutex
	regs       map[taskspec.TaskID]Registration
	assigned   map[taskspec.TaskID]string // task → container the AM launched for it
	owner      map[string]taskspec.TaskID // container → the task it was launched for, every one ever assigned
	strict     bool                       // BoardConfig.RequireAssignment
	minWorkers int                        // BoardConfig.MinWorkers
	adopted    map[taskspec.TaskID]bool   // taken over from a previous AM attempt; its launcher has not registered here yet
	exits      map[taskspec.TaskID]ExitReport
	spec       taskspec.ClusterSpec
	failed     error
	settled    chan struct{} // closed once spec or failed is set, or by Reset
	gen        int           // rendezvous generation: one more per Reset
	waiting    int           // Spec calls waiting for the spec (tests wait for them)
	timer      *time.Timer
	stops      map[taskspec.TaskID]stopEntry
	stopAll    *StopOrder
	stopWake   chan struct{} // closed and replaced on every stop order
	events     []Event
	notify     chan struct{}
	closeOnce  sync.Once

	// The start order (BoardConfig.StartAfter, startorder.go).
	startAfter  taskspec.StartOrder
	started     map[taskspec.TaskID]bool // tasks whose program started (this generation)
	startWake   chan struct{}            // closed and replaced when a task starts
	startFailed error                    // a waited-for task did not start in time
	startTimer  *time.Timer

	creds    credsBox // the credentials handed to the launchers; its own lock
	warnings warnBox  // the AM's warnings to launchers (warning.go); its own lock
}

type stopEntry struct {
	order     StopOrder
	container string // the container the order is for; "" = any
}

// BoardConfig describes the job a Board gathers.
type BoardConfig struct {
	Groups []taskspec.TaskGroup
	// RegistrationTimeout bounds how long the other cluster tasks have to
	// register once the first one has. It starts with the first
	// registration, not with the Board, because waiting for YARN to
	// allocate containers is the AM's business, not the rendezvous'.
	// Zero waits forever.
	RegistrationTimeout time.Duration
	// RequireAssignment lets only containers given to a task (Assign,
	// Adopt) act as that task. Without it, a task no container was
	// assigned to yet may be spoken for by any container whose key the
	// server accepted (tests and tools without an AM).
	RequireAssignment bool
	// StartAfter holds the spec back from a task of a waiting type until
	// every task of the types it waits for has started its program (its
	// launcher waits for stop orders, or reported an exit). The wait is
	// bounded by RegistrationTimeout from the spec's publication.
	StartAfter taskspec.StartOrder
	// MinWorkers is an elastic job's --min-workers (0: not elastic). Its
	// members meet on the framework's job service in the
	// ApplicationMaster (elastic PyTorch's store), never at the spec's
	// addresses, which only count them; so the spec is out once
	// MinWorkers workers registered, the other workers' addresses empty,
	// and a worker that registers after it (a late container, a lost
	// worker's replacement at a new address) gets the spec with its own
	// address in it: the framework's rendezvous starts with the first
	// ones and takes the others in as they come.
	MinWorkers int
}

// Events the Board queues for the AM loop.
type (
	Event interface{ isBoardEvent() }
	// TaskRegistered: a task registered or changed its address.
	// Again is set when the launcher of a task the AM adopted from a
	// previous attempt found this one and registered again.
	TaskRegistered struct {
		Registration Registration
		Again        bool
	}
	// SpecPublished: every cluster task registered; launchers now get it.
	SpecPublished struct{ Cluster taskspec.ClusterSpec }
	// RendezvousFailed: the spec will never be published.
	RendezvousFailed struct{ Err error }
	// TaskExited: a task's launcher reported its program's end.
	TaskExited struct{ Report ExitReport }
)

func (TaskRegistered) isBoardEvent()   {}
func (SpecPublished) isBoardEvent()    {}
func (RendezvousFailed) isBoardEvent() {}
func (TaskExited) isBoardEvent()       {}

// NewBoard returns a Board for the job's groups.
func NewBoard(cfg BoardConfig) (*Board, error) {
	b := &Board{
		groups:     append([]taskspec.TaskGroup(nil), cfg.Groups...),
		known:      map[taskspec.TaskID]bool{},
		timeout:    cfg.RegistrationTimeout,
		regs:       map[taskspec.TaskID]Registration{},
		assigned:   map[taskspec.TaskID]string{},
		owner:      map[string]taskspec.TaskID{},
		strict:     cfg.RequireAssignment,
		minWorkers: cfg.MinWorkers,
		adopted:    map[taskspec.TaskID]bool{},
		exits:      map[taskspec.TaskID]ExitReport{},
		settled:    make(chan struct{}),
		stops:      map[taskspec.TaskID]stopEntry{},
		stopWake:   make(chan struct{}),
		notify:     make(chan struct{}, 1),

		startAfter: cfg.StartAfter,
		started:    map[taskspec.TaskID]bool{},
		startWake:  make(chan struct{}),
	}
	for _, g := range cfg.Groups {
		if !g.Type.Known() || g.Instances < 0 {
			return nil, fmt.Errorf("rendezvous: board: bad group %s with %d instances", g.Type, g.Instances)
		}
		for _, id := range g.TaskIDs() {
			b.known[id] = g.Type.InCluster()
		}
	}
	b.mu.Lock()
	b.maybePublish() // a job without cluster tasks has nothing to wait for
	b.mu.Unlock()
	return b, nil
}

// Notify is signalled (without blocking, coalesced) whenever Drain has
// something new.
func (b *Board) Notify() <-chan struct{} { return b.notify }

// Drain returns the events queued since the last call, oldest first.
func (b *Board) Drain() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	ev := b.events
	b.events = nil
	return ev
}

func (b *Board) emit(e Event) {
	b.events = append(b.events, e)
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// Assign tells the Board which container the AM launched for task; from
// then on, only that container may register as the task. Call it before
// starting the container. Assigning a new container (a restart) before the
// spec is out lets the new one replace the old registration.
func (b *Board) Assign(task taskspec.TaskID, containerID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.assignLocked(task, containerID)
}

func (b *Board) assignLocked(task taskspec.TaskID, containerID string) {
	b.assigned[task] = containerID
	if containerID != "" {
		b.owner[containerID] = task
	}
}

// Authorize implements Handler: a container acts only as the task it was
// assigned (a former container of the task still reports its own exit),
// and never as another.
func (b *Board) Authorize(task taskspec.TaskID, containerID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.known[task]; !ok {
		return fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, task)
	}
	if t, ok := b.owner[containerID]; ok {
		if t != task {
			return fmt.Errorf("%w: container %s runs %s, not %s", ErrForbidden, containerID, t, task)
		}
		return nil
	}
	if _, ok := b.assigned[task]; ok || b.strict {
		return fmt.Errorf("%w: container %s was never given %s", ErrForbidden, containerID, task)
	}
	return nil
}

// Adopt records a task a previous AM attempt left running, as that attempt
// knew it (r: its address and container, no pid): the task counts as
// registered, so the spec goes out once every cluster task is, and its
// launcher, which locates the new attempt after losing the old, registers
// again (TaskRegistered with Again) where it would otherwise be a retry.
func (b *Board) Adopt(r Registration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.known[r.Task]; !ok {
		return
	}
	b.assignLocked(r.Task, r.ContainerID)
	b.regs[r.Task] = r
	b.adopted[r.Task] = true
	b.markStartedLocked(r.Task) // it runs
	b.maybePublish()
}

// Register implements Handler. The rules, in order:
//   - the task must be one of the job's, and from its assigned container;
//   - the same address again is a retry: accepted, nothing new happens;
//   - before the spec is out, a new address replaces the old one (a new
//     container, or a launcher that restarted and reserved another port);
//   - after the spec is out, a cluster task's address is fixed: TensorFlow
//     already dials it, so a different one is ErrConflict; except in an
//     elastic job (MinWorkers), whose late or replacing worker's address
//     goes into the spec.
func (b *Board) Register(_ context.Context, r Registration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	inCluster, ok := b.known[r.Task]
	if !ok {
		return fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, r.Task)
	}
	if want, ok := b.assigned[r.Task]; ok && want != r.ContainerID {
		return fmt.Errorf("%w: %s runs in container %s, not %q", ErrConflict, r.Task, want, r.ContainerID)
	}
	old, had := b.regs[r.Task]
	if had && old.Addr() == r.Addr() && old.ContainerID == r.ContainerID {
		b.regs[r.Task] = r // the pid may differ after a launcher restart
		if b.adopted[r.Task] {
			delete(b.adopted, r.Task)
			b.emit(TaskRegistered{Registration: r, Again: true})
		}
		return nil
	}
	if inCluster && b.spec != nil && had && old.Addr() != r.Addr() && b.minWorkers == 0 {
		return fmt.Errorf("%w: the cluster spec already has %s at %s, not %s", ErrConflict, r.Task, old.Addr(), r.Addr())
	}
	if inCluster && b.failed != nil {
		return fmt.Errorf("%w: %v", ErrRendezvousFailed, b.failed)
	}
	if had && old.ContainerID != r.ContainerID {
		// A stop order for the old container does not carry over.
		if s, ok := b.stops[r.Task]; ok && s.container != "" && s.container != r.ContainerID {
			delete(b.stops, r.Task)
		}
	}
	b.regs[r.Task] = r
	if inCluster && b.spec != nil && b.minWorkers > 0 {
		// An elastic job's late or replacing worker (above); launchers may
		// hold the old spec, and Spec's callers share it: a new one, never
		// a change to it.
		b.spec = copySpec(b.spec)
		b.spec[r.Task.Type][r.Task.Index] = r.Addr()
	}
	b.emit(TaskRegistered{Registration: r})
	if inCluster && b.timer == nil && b.timeout > 0 && b.spec == nil {
		b.timer = time.AfterFunc(b.timeout, b.expire)
	}
	b.maybePublish()
	return nil
}

// maybePublish publishes the spec once every cluster task has an address.
// Called with b.mu held.
func (b *Board) maybePublish() {
	if b.spec != nil || b.failed != nil {
		return
	}
	if b.minWorkers > 0 {
		b.maybePublishElastic()
		return
	}
	addrs := map[taskspec.TaskID]string{}
	for id, inCluster := range b.known {
		r, ok := b.regs[id]
		if inCluster && !ok {
			return
		}
		if inCluster {
			addrs[id] = r.Addr()
		}
	}
	spec, err := taskspec.ClusterSpecFromAddresses(b.groups, addrs)
	if err != nil {
		b.settle(nil, fmt.Errorf("building the cluster spec: %w", err))
		return
	}
	b.settle(spec, nil)
}

// maybePublishElastic publishes an elastic job's spec once MinWorkers
// workers have an address, the others' empty (BoardConfig.MinWorkers).
// Called with b.mu held.
func (b *Board) maybePublishElastic() {
	spec := taskspec.ClusterSpec{}
	registered := 0
	for _, g := range b.groups {
		if !g.Type.InCluster() {
			continue
		}
		addrs := make([]string, g.Instances)
		for i := range addrs {
			if r, ok := b.regs[taskspec.TaskID{Type: g.Type, Index: i}]; ok {
				addrs[i] = r.Addr()
				registered++
			}
		}
		spec[g.Type] = addrs
	}
	if registered >= b.minWorkers {
		b.settle(spec, nil)
	}
}

// settle records the rendezvous' outcome once. Called with b.mu held.
func (b *Board) settle(spec taskspec.ClusterSpec, err error) {
	if b.timer != nil {
		b.timer.Stop()
	}
	if err != nil {
		b.failed = err
		b.emit(RendezvousFailed{Err: err})
	} else {
		b.spec = spec
		b.emit(SpecPublished{Cluster: copySpec(spec)})
		b.armStartTimerLocked()
	}
	close(b.settled)
}

func (b *Board) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spec != nil || b.failed != nil {
		return
	}
	err := fmt.Errorf("not every task registered within %s: missing %s", b.timeout, strings.Join(b.missingLocked(), ", "))
	if note := b.startWaitsLocked(); note != "" {
		err = fmt.Errorf("%w; %s", err, note)
	}
	b.settle(nil, err)
}

// Fail ends the rendezvous without a spec (the job is ending, or the AM
// gave up on a task); launchers still waiting get ErrRendezvousFailed.
// It does nothing once the spec is out.
func (b *Board) Fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spec == nil && b.failed == nil {
		b.settle(nil, err)
	}
}

// Reset starts a new rendezvous generation for a cluster that restarts
// (the AM's core decided it): the registrations, the published spec or
// failure, the registration timer and the stop orders are forgotten, so
// the new containers meet afresh and get a new cluster spec. A launcher
// of the previous generation still waiting for the spec gets
// ErrRendezvousFailed. Exit reports and container assignments stay (the
// next Assign replaces each).
func (b *Board) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.startTimer != nil {
		b.startTimer.Stop()
		b.startTimer = nil
	}
	select {
	case <-b.settled:
	default:
		close(b.settled)
	}
	b.gen++
	b.settled = make(chan struct{})
	b.regs = map[taskspec.TaskID]Registration{}
	b.adopted = map[taskspec.TaskID]bool{}
	b.spec, b.failed = nil, nil
	b.resetStartsLocked()
	b.stops = map[taskspec.TaskID]stopEntry{}
	b.stopAll = nil
	b.maybePublish()
}

// Missing lists the cluster tasks that have not registered, in job order.
func (b *Board) Missing() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.missingLocked()
}

func (b *Board) missingLocked() []string {
	var ids []taskspec.TaskID
	for id, inCluster := range b.known {
		if _, ok := b.regs[id]; inCluster && !ok {
			ids = append(ids, id)
		}
	}
	sortTaskIDs(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// Spec implements Handler.
func (b *Board) Spec(ctx context.Context, task taskspec.TaskID) (taskspec.ClusterSpec, error) {
	if _, ok := b.known[task]; !ok {
		return nil, fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, task)
	}
	b.mu.Lock()
	settled, gen := b.settled, b.gen
	b.waiting++
	b.mu.Unlock()
	select {
	case <-settled:
	case <-ctx.Done():
		b.mu.Lock()
		b.waiting--
		b.mu.Unlock()
		return nil, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting--
	if b.gen != gen {
		return nil, fmt.Errorf("%w: the cluster restarted", ErrRendezvousFailed)
	}
	if b.failed != nil {
		return nil, fmt.Errorf("%w: %v", ErrRendezvousFailed, b.failed)
	}
	return b.waitStartLocked(ctx, task, gen)
}

// Published returns the spec once it is out.
func (b *Board) Published() (taskspec.ClusterSpec, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return copySpec(b.spec), b.spec != nil
}

// Registrations returns every task's current registration, in job order.
func (b *Board) Registrations() []Registration {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Registration, 0, len(b.regs))
	for _, r := range b.regs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return lessTask(out[i].Task, out[j].Task) })
	return out
}

// Stop orders task's program stopped. The order is for the container
// registered as the task now (any container if none is yet).
func (b *Board) Stop(task taskspec.TaskID, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stops[task] = stopEntry{order: StopOrder{Reason: clip(reason)}, container: b.regs[task].ContainerID}
	b.wakeStoppers()
}

// StopAll orders every task stopped, including those yet to register.
func (b *Board) StopAll(reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopAll = &StopOrder{Reason: clip(reason)}
	b.wakeStoppers()
}

func (b *Board) wakeStoppers() {
	close(b.stopWake)
	b.stopWake = make(chan struct{})
}

// WaitStop implements Handler.
func (b *Board) WaitStop(ctx context.Context, task taskspec.TaskID, containerID string) (StopOrder, error) {
	if _, ok := b.known[task]; !ok {
		return StopOrder{}, fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, task)
	}
	// A launcher waits for stop orders once its program runs.
	b.mu.Lock()
	if r, ok := b.regs[task]; ok && r.ContainerID == containerID {
		b.markStartedLocked(task)
	}
	b.mu.Unlock()
	for {
		b.mu.Lock()
		if b.stopAll != nil {
			o := *b.stopAll
			b.mu.Unlock()
			return o, nil
		}
		if s, ok := b.stops[task]; ok && (s.container == "" || s.container == containerID) {
			b.mu.Unlock()
			return s.order, nil
		}
		wake := b.stopWake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return StopOrder{}, ctx.Err()
		}
	}
}

// ReportExit implements Handler. A report repeated by a retrying launcher
// is accepted once.
func (b *Board) ReportExit(_ context.Context, e ExitReport) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.known[e.Task]; !ok {
		return fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, e.Task)
	}
	if old, ok := b.exits[e.Task]; ok && old.ContainerID == e.ContainerID {
		return nil
	}
	b.exits[e.Task] = e
	if r, ok := b.regs[e.Task]; ok && r.ContainerID == e.ContainerID {
		b.markStartedLocked(e.Task) // its program ran, or never will: waiting for it is over
	}
	b.emit(TaskExited{Report: e})
	return nil
}

// Exit returns the last exit report of task.
func (b *Board) Exit(task taskspec.TaskID) (ExitReport, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.exits[task]
	return e, ok
}

// Close stops the registration timer.
func (b *Board) Close() {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.timer != nil {
			b.timer.Stop()
		}
		if b.startTimer != nil {
			b.startTimer.Stop()
		}
	})
}

func copySpec(s taskspec.ClusterSpec) taskspec.ClusterSpec {
	if s == nil {
		return nil
	}
	out := make(taskspec.ClusterSpec, len(s))
	for t, hosts := range s {
		out[t] = append([]string(nil), hosts...)
	}
	return out
}

func clip(s string) string {
	if len(s) > maxReasonLen {
		return strings.ToValidUTF8(s[:maxReasonLen], "")
	}
	return s
}

func sortTaskIDs(ids []taskspec.TaskID) {
	sort.Slice(ids, func(i, j int) bool { return lessTask(ids[i], ids[j]) })
}

var typeRank = func() map[taskspec.TaskType]int {
	m := map[taskspec.TaskType]int{}
	for i, t := range taskspec.TaskTypes() {
		m[t] = i
	}
	return m
}()

func lessTask(a, b taskspec.TaskID) bool {
	if a.Type != b.Type {
		return typeRank[a.Type] < typeRank[b.Type]
	}
	return a.Index < b.Index
}
