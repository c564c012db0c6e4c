package core

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// fakeRM models what matters of the ResourceManager's scheduler: each ask
// sets an absolute outstanding count, allocation decrements it, and
// allocated containers reach the AM only on a later heartbeat (the window
// in which a stale count over-allocates, YARN-1902). It can also be told to
// over-allocate on its own.
type fakeRM struct {
	outstanding map[int64]int
	inFlight    []Container
	nextID      int
	allocated   int            // containers allocated against asks
	extra       int            // containers allocated beyond any ask
	starve      map[int64]bool // asks it never serves (no room for that shape)
}

// sim drives a Machine the way the I/O loop will, with random but seeded
// interleavings, and checks invariants after every step.
type sim struct {
	t      *testing.T
	rng    *rand.Rand
	m      *Machine
	rm     fakeRM
	buf    AskBuffer
	groups []taskspec.TaskGroup
	now    time.Time

	history      []Event
	nmPending    []string // launched, waiting for the NM's answer
	running      map[string]bool
	launched     map[string]bool
	warned       map[string]bool // containers warned of their preemption
	released     map[string]bool
	startFailed  map[string]bool
	delivered    map[string]bool
	liveByTask   map[taskspec.TaskID]string
	finishes     []Finish
	finishedAt   time.Time
	killed       bool
	launchCount  int
	restartLimit int // how many restarts the policy may grant in total
}

func newSim(t *testing.T, seed int64, policy Policy, restartLimit int, groups ...taskspec.TaskGroup) *sim {
	// Without the machine's own restarts (TestSimulatedMachineRestarts has
	// them): restartLimit is the policy's.
	m, err := New(Config{Job: taskspec.Job{Command: "true", Tasks: groups, Restarts: taskspec.RestartPolicy{NoInfraRestarts: true}}, Policy: policy})
	require.NoError(t, err)
	return &sim{
		t: t, rng: rand.New(rand.NewSource(seed)), m: m, groups: groups,
		rm:      fakeRM{outstanding: map[int64]int{}},
		now:     time.Unix(1_700_000_000, 0),
		running: map[string]bool{}, launched: map[string]bool{}, released: map[string]bool{}, warned: map[string]bool{},
		startFailed: map[string]bool{}, delivered: map[string]bool{}, liveByTask: map[taskspec.TaskID]string{},
		restartLimit: restartLimit,
	}
}

func (s *sim) taskCount() int {
	n := 0
	for _, g := range s.groups {
		n += g.Instances
	}
	return n
}

func (s *sim) step(ev Event) {
	s.history = append(s.history, ev)
	checkedStep(s.m, ev)
	s.drain()
}

// drain performs a Ready as the loop would and checks it.
func (s *sim) drain() {
	t := s.t
	finishedBefore := len(s.finishes) > 0
	rd := s.m.Ready()
	if finishedBefore {
		require.True(t, rd.Empty(), "actions after Finish: %+v", rd)
		return
	}
	if rd.Restart != nil {
		// A cluster restart gives up on containers that did not end within
		// RestartStopWait (here: launches the NM has not answered): their
		// tasks run again elsewhere.
		for task, id := range s.liveByTask {
			require.True(t, s.launched[id], "%s live in %s, never launched", task, id)
			delete(s.liveByTask, task)
		}
	}
	for _, a := range rd.Asks {
		require.GreaterOrEqual(t, a.Count, 0, "negative ask")
	}
	for _, a := range s.m.AskTable() {
		require.GreaterOrEqual(t, a.Count, 0, "negative outstanding")
	}
	s.buf.Add(rd)
	for _, l := range rd.Launch {
		require.False(t, s.launched[l.Container.ID], "container %s launched twice", l.Container.ID)
		require.True(t, s.delivered[l.Container.ID], "launch of a container the RM never gave")
		prev, busy := s.liveByTask[l.Task]
		require.False(t, busy, "%s launched in %s while %s is live", l.Task, l.Container.ID, prev)
		s.launched[l.Container.ID] = true
		s.liveByTask[l.Task] = l.Container.ID
		s.nmPending = append(s.nmPending, l.Container.ID)
		s.launchCount++
	}
	require.LessOrEqual(t, s.launchCount, s.taskCount()+s.restartLimit, "more launches than tasks")
	for _, w := range rd.Warn {
		require.Equal(t, s.liveByTask[w.Task], w.Container.ID, "%s warned for %s, not its live container", w.Task, w.Container.ID)
		require.False(t, s.warned[w.Container.ID], "container %s warned twice", w.Container.ID)
		s.warned[w.Container.ID] = true
	}
	for _, id := range rd.Release {
		require.False(t, s.released[id], "container %s released twice", id)
		require.True(t, !s.launched[id] || s.startFailed[id], "released %s, which was launched and started", id)
		s.released[id] = true
		s.forget(id)
	}
	for _, st := range rd.Stop {
		require.True(t, s.launched[st.Container.ID], "stop of a container never launched")
		if s.running[st.Container.ID] {
			s.complete(st.Container.ID, ExitKilledByAppMaster)
		}
	}
	if rd.Finish != nil {
		s.finishes = append(s.finishes, *rd.Finish)
		s.finishedAt = s.now
	}
}

func (s *sim) forget(id string) {
	for task, live := range s.liveByTask {
		if live == id {
			delete(s.liveByTask, task)
		}
	}
}

// complete queues nothing: it delivers the completion now, as the next
// heartbeat would.
func (s *sim) complete(id string, status int32) {
	delete(s.running, id)
	s.forget(id)
	s.step(ContainerCompleted{ID: id, ExitStatus: status, Diagnostics: "simulated"})
}

func (s *sim) heartbeat() {
	asks, release := s.buf.Pending()
	if s.rng.Intn(10) == 0 {
		return // the allocate call failed; the buffer keeps everything
	}
	s.buf.Sent(asks, release)
	for _, a := range asks {
		s.rm.outstanding[a.AllocationRequestID] = a.Count
	}
	// The scheduler allocates some of what is outstanding (in id order, so
	// the run depends only on the seed), and now and then a container nobody
	// asked for.
	for id := int64(1); id <= int64(len(s.groups)); id++ {
		n := s.rm.outstanding[id]
		if n == 0 || s.rm.starve[id] {
			continue
		}
		k := s.rng.Intn(n + 1)
		s.rm.outstanding[id] -= k
		s.rm.allocated += k
		for i := 0; i < k; i++ {
			s.rm.inFlight = append(s.rm.inFlight, s.newContainer(id))
		}
	}
	if s.rng.Intn(15) == 0 {
		if id := 1 + s.rng.Int63n(int64(len(s.groups))); !s.rm.starve[id] {
			s.rm.extra++
			s.rm.inFlight = append(s.rm.inFlight, s.newContainer(id))
		}
	}
	// Part of what was allocated reaches the AM in this response.
	n := s.rng.Intn(len(s.rm.inFlight) + 1)
	batch := s.rm.inFlight[:n]
	s.rm.inFlight = append([]Container(nil), s.rm.inFlight[n:]...)
	for _, c := range batch {
		s.delivered[c.ID] = true
	}
	s.step(Allocated{Containers: batch})
}

func (s *sim) newContainer(reqID int64) Container {
	s.rm.nextID++
	return Container{ID: cid(s.rm.nextID), NodeID: "node:8041", AllocationRequestID: reqID, Priority: int32(reqID)}
}

func (s *sim) nmAnswers() {
	if len(s.nmPending) == 0 {
		return
	}
	i := s.rng.Intn(len(s.nmPending))
	id := s.nmPending[i]
	s.nmPending = append(s.nmPending[:i], s.nmPending[i+1:]...)
	if s.rng.Intn(20) == 0 {
		s.startFailed[id] = true
		s.forget(id)
		s.step(StartFailed{ID: id, Reason: "simulated"})
		return
	}
	s.running[id] = true
	s.step(ContainerStarted{ID: id})
}

func (s *sim) someoneExits() {
	if len(s.running) == 0 {
		return
	}
	ids := make([]string, 0, len(s.running))
	for id := range s.running {
		ids = append(ids, id)
	}
	// Map order is random; sort for a seed-determined pick.
	sort.Strings(ids)
	id := ids[s.rng.Intn(len(ids))]
	status := int32(0)
	switch s.rng.Intn(25) {
	case 0:
		status = 1
	case 1:
		status = ExitKilledExceededPMem
	case 2:
		// Announced first, as YARN does (possibly more than once).
		for range 1 + s.rng.Intn(2) {
			s.step(PreemptionWarned{Negotiable: []string{id}})
		}
		status = ExitPreempted
	}
	s.complete(id, status)
}

func (s *sim) run() {
	s.step(Registered{})
	for i := 0; i < 20000 && len(s.finishes) == 0; i++ {
		switch r := s.rng.Intn(100); {
		case r < 35:
			s.heartbeat()
		case r < 60:
			s.nmAnswers()
		case r < 85:
			s.someoneExits()
		case r < 92:
			s.now = s.now.Add(time.Duration(s.rng.Intn(5000)) * time.Millisecond)
			s.step(Tick{Now: s.now})
		case r < 97 && len(s.history) > 0:
			s.step(s.history[s.rng.Intn(len(s.history))]) // a duplicate
		case r < 99:
			s.step(ContainerCompleted{ID: cid(100000 + s.rng.Intn(100)), ExitStatus: 1}) // unknown
		default:
			if s.rng.Intn(10) == 0 {
				s.killed = true
				s.step(KillRequested{Reason: "simulated"})
			}
		}
	}
	// Whatever comes after the end must do nothing.
	s.step(Allocated{Containers: []Container{s.newContainer(1)}})
	s.step(KillRequested{})
}

func TestSimulatedInterleavings(t *testing.T) {
	groups := []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), grp(taskspec.Worker, 4, small), grp(taskspec.PS, 2, small)}
	outcomes := map[FinalStatus]int{}
	for seed := int64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newSim(t, seed, nil, 0, groups...)
			s.run()
			require.Len(t, s.finishes, 1, "exactly one Finish")
			fin := s.finishes[0]
			outcomes[fin.Status]++
			// With no restarts, only a stale count could make the RM
			// allocate more than the tasks: the machine never sends one.
			require.LessOrEqual(t, s.rm.allocated, s.taskCount())
			for id := range s.delivered {
				require.True(t, s.launched[id] || s.released[id], "container %s neither launched nor released", id)
			}
			tasks := s.m.Tasks()
			switch fin.Status {
			case Succeeded:
				for _, ts := range tasks {
					require.Equal(t, TaskSucceeded, ts.State, ts.Task.String())
				}
			case Failed:
				require.NotEmpty(t, fin.Diagnostics)
				require.Contains(t, fin.Diagnostics, "container_")
			case Killed:
				require.True(t, s.killed)
			}
		})
	}
	t.Logf("outcomes over 300 seeds: %v", outcomes)
	require.NotZero(t, outcomes[Succeeded])
	require.NotZero(t, outcomes[Failed])
}

func TestSimulatedInterleavingsWithRestarts(t *testing.T) {
	groups := []taskspec.TaskGroup{grp(taskspec.Worker, 5, small), grp(taskspec.Evaluator, 1, small)}
	outcomes := map[FinalStatus]int{}
	for seed := int64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newSim(t, seed, restartOnce, 6, groups...)
			s.run()
			require.Len(t, s.finishes, 1, "exactly one Finish")
			outcomes[s.finishes[0].Status]++
			for id := range s.delivered {
				require.True(t, s.launched[id] || s.released[id], "container %s neither launched nor released", id)
			}
			for _, ts := range s.m.Tasks() {
				require.LessOrEqual(t, ts.Attempt, 1)
			}
		})
	}
	t.Logf("outcomes over 300 seeds: %v", outcomes)
}

// A group the scheduler never serves ends the job at the allocation
// deadline, whatever the interleaving, naming only tasks that never got a
// container; nothing else waits for ever.
func TestSimulatedStarvedGroupMeetsTheDeadline(t *testing.T) {
	groups := []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), grp(taskspec.Worker, 3, big), grp(taskspec.PS, 1, small)}
	outcomes := map[string]int{}
	for seed := int64(1); seed <= 200; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newSim(t, seed, nil, 0, groups...)
			s.rm.starve = map[int64]bool{2: true} // the workers
			start := s.now
			s.step(Tick{Now: s.now})
			s.run()
			require.Len(t, s.finishes, 1, "exactly one Finish")
			fin := s.finishes[0]
			switch {
			case fin.Status == Failed && strings.Contains(fin.Diagnostics, "not allocated within"):
				outcomes["deadline"]++
				require.Regexp(t, `^worker:0, worker:1, worker:2 \(4 vcores, 8192 MiB, 1 GPUs, label ""\) were not allocated within 5m0s; ask for less or raise --alloc-timeout$`, fin.Diagnostics)
				// Ticks come at most 5 s apart in the simulation.
				require.False(t, s.finishedAt.Before(start.Add(taskspec.DefaultAllocTimeout)), "failed before the deadline")
				require.True(t, s.finishedAt.Before(start.Add(taskspec.DefaultAllocTimeout+5*time.Second)), "failed %s after the deadline", s.finishedAt.Sub(start.Add(taskspec.DefaultAllocTimeout)))
				for _, ts := range s.m.Tasks() {
					require.False(t, ts.State.Live() && !ts.StopRequested, "%s still runs", ts.Task)
				}
			case fin.Status == Failed:
				outcomes["task failure"]++
				require.Contains(t, fin.Diagnostics, "container_")
			case fin.Status == Killed:
				outcomes["killed"]++
				require.True(t, s.killed)
			default:
				t.Fatalf("a job whose workers never get containers ended %s: %s", fin.Status, fin.Diagnostics)
			}
		})
	}
	t.Logf("outcomes over 200 seeds: %v", outcomes)
	require.NotZero(t, outcomes["deadline"])
}

// The machine's own restarts (RestartPolicy) under random interleavings:
// preemptions and failures restart the cluster or, for the evaluator and
// ParameterServerStrategy workers, one task; in-place asks are never
// served here, so those fall back to cluster restarts after InPlaceWait.
// Whatever happens, the job ends once, restarts stay within their bounds,
// and the diagnostics list every restart.
func TestSimulatedMachineRestarts(t *testing.T) {
	groups := []taskspec.TaskGroup{grp(taskspec.Chief, 1, small), grp(taskspec.Worker, 3, small), grp(taskspec.PS, 1, small), grp(taskspec.Evaluator, 1, small)}
	policy := taskspec.RestartPolicy{Max: 2}
	bound := policy.Max + taskspec.MaxUncountedRestarts
	outcomes := map[string]int{}
	for seed := int64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := newSim(t, seed, nil, 0, groups...)
			m, err := New(Config{Job: taskspec.Job{Command: "true", Tasks: groups, Restarts: policy}, Policy: ChiefPolicy{}, ContainerStopGrace: 12 * time.Second})
			require.NoError(t, err)
			s.m = m
			// Every task may run once per restart, each restart relaunching
			// at most every task.
			s.restartLimit = s.taskCount() * bound
			s.run()
			require.Len(t, s.finishes, 1, "exactly one Finish")
			fin := s.finishes[0]
			require.LessOrEqual(t, m.Restarts(), bound)
			require.Equal(t, m.Restarts(), countRestartCauses(fin.Diagnostics), "every restart is listed: %s", fin.Diagnostics)
			for _, ts := range m.Tasks() {
				require.LessOrEqual(t, ts.Attempt, bound, ts.Task.String())
			}
			for id := range s.delivered {
				require.True(t, s.launched[id] || s.released[id], "container %s neither launched nor released", id)
			}
			key := fin.Status.String()
			if m.Restarts() > 0 {
				key += " after restarts"
			}
			outcomes[key]++
		})
	}
	t.Logf("outcomes over 300 seeds: %v", outcomes)
	require.NotZero(t, outcomes["SUCCEEDED after restarts"], "some jobs survive failures")
}

// countRestartCauses counts the distinct restarts a job's diagnostics list.
func countRestartCauses(diag string) int {
	seen := map[string]bool{}
	for _, part := range strings.Split(diag, "; ") {
		if n, _, ok := strings.Cut(strings.TrimPrefix(part, "restart "), " "); ok && strings.HasPrefix(part, "restart ") {
			seen[strings.TrimSuffix(n, ":")] = true
		}
	}
	return len(seen)
}
