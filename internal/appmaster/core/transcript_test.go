package core

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/transcript"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestTranscripts replays testdata/*.txt: events in, the machine's actions
// out (go test -run TestTranscripts -rewrite rewrites the outputs). The
// same files run against --local's driver in package localrun.
func TestTranscripts(t *testing.T) {
	for _, path := range transcript.Files(t, "testdata/*.txt") {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			h := &harness{}
			transcript.Run(t, path, h.do)
		})
	}
}

// harness plays the YARN side: a ResourceManager that allocates what is
// asked when told to (containers c1, c2, ... on node1), NodeManagers that
// start containers when told to, and a clock moved by tick.
type harness struct {
	m           *Machine
	now         time.Time
	outstanding map[int64]int // the RM's count per allocation_request_id
	asks        map[int64]Ask
	next        int
	excluded    map[string]bool // the application's blacklist, as the RM holds it
}

var transcriptEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (h *harness) do(t *testing.T, c transcript.Cmd) string {
	t.Helper()
	if c.Name == "new" {
		h.newMachine(t, c)
		return ""
	}
	if h.m == nil {
		t.Fatalf("%s: no machine yet (start with new)", c.Pos)
	}
	switch c.Name {
	case "register":
		checkedStep(h.m, Registered{})
	case "allocate":
		h.allocate(c)
	case "start":
		for _, task := range h.tasksOrLaunching(t, c) {
			checkedStep(h.m, ContainerStarted{ID: task.Container.ID})
		}
	case "fail-start":
		checkedStep(h.m, StartFailed{ID: h.task(t, c).Container.ID, Reason: strings.Join(c.Args[1:], " ")})
	case "registered":
		// Every live task (or the one named) registers at 2000 + its
		// position in the job, or the port it was told to re-take.
		for i, task := range h.m.Tasks() {
			if (len(c.Args) == 0 || c.Args[0] == task.Task.String()) && task.State.Live() {
				port := 2000 + i
				if task.WantPort != 0 {
					port = task.WantPort
				}
				checkedStep(h.m, TaskRegistered{Task: task.Task, Host: hostOf(task.Container.NodeID), Port: port})
			}
		}
	case "exit":
		task := h.task(t, c)
		code, err := strconv.Atoi(c.Args[1])
		if err != nil {
			t.Fatalf("%s: exit code: %v", c.Pos, err)
		}
		checkedStep(h.m, ContainerCompleted{ID: task.Container.ID, ExitStatus: int32(code), Diagnostics: strings.Join(c.Args[2:], " ")})
	case "logged":
		// logged worker:0 fail-on-log LINE...: the task's launcher ended its
		// program (exit code 143) for a stderr line matching the rule.
		task := h.task(t, c)
		checkedStep(h.m, ContainerCompleted{ID: task.Container.ID, ExitStatus: 143, Diagnostics: "the program exited with code 143", ByLauncher: true,
			LogRule: LogRule(c.Args[1]), LogLine: strings.Join(c.Args[2:], " ")})
	case "no-restart":
		// no-restart worker:0 2 REASON...: the task's program failed with
		// exit code 2 after writing REASON to its no-restart file.
		task := h.task(t, c)
		code, err := strconv.Atoi(c.Args[1])
		if err != nil {
			t.Fatalf("%s: exit code: %v", c.Pos, err)
		}
		checkedStep(h.m, ContainerCompleted{ID: task.Container.ID, ExitStatus: int32(code), Diagnostics: "the program exited with code " + c.Args[1], ByLauncher: true,
			NoRestart: strings.Join(c.Args[2:], " ")})
	case "gpus":
		// gpus worker:0 0,3.5: the task's launcher sampled its GPUs' utilisation.
		task := h.task(t, c)
		var util []float64
		for _, f := range strings.Split(c.Args[1], ",") {
			u, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("%s: gpus: %v", c.Pos, err)
			}
			util = append(util, u)
		}
		checkedStep(h.m, GPUsSampled{Task: task.Task, ContainerID: task.Container.ID, Utilization: util})
	case "gpu-warning":
		return h.m.GPUIdleWarning()
	case "tick":
		d, err := time.ParseDuration(strings.TrimPrefix(c.Args[0], "+"))
		if err != nil {
			t.Fatalf("%s: tick: %v", c.Pos, err)
		}
		h.now = h.now.Add(d)
		checkedStep(h.m, Tick{Now: h.now})
	case "racks":
		// racks node1=/rack-a ...: the RM's NodeReports.
		checkedStep(h.m, NodeRacks{Racks: c.KV})
	case "preempt-warning":
		h.preemptWarning(t, c)
	case "kill":
		later := len(c.Args) > 0 && c.Args[0] == "later-attempt"
		if later {
			c.Args = c.Args[1:]
		}
		checkedStep(h.m, KillRequested{Reason: strings.Join(c.Args, " "), LaterAttempt: later})
	case "shutdown":
		checkedStep(h.m, ShutdownRequested{Reason: strings.Join(c.Args, " ")})
	case "rendezvous-failed":
		checkedStep(h.m, RendezvousFailed{Reason: strings.Join(c.Args, " ")})
	case "previous-attempt":
		checkedStep(h.m, previousAttempt(t, c))
	case "completed":
		// completed c91 137 [diagnostics]: YARN reports a container by id.
		code, err := strconv.Atoi(c.Args[1])
		if err != nil {
			t.Fatalf("%s: exit code: %v", c.Pos, err)
		}
		checkedStep(h.m, ContainerCompleted{ID: c.Args[0], ExitStatus: int32(code), Diagnostics: strings.Join(c.Args[2:], " ")})
	case "tasks":
		return h.tasks()
	case "nodes":
		// Where each task's current container is, and the nodes excluded.
		var lines []string
		for _, task := range h.m.Tasks() {
			lines = append(lines, fmt.Sprintf("%s on %s", task.Task, hostOf(task.Container.NodeID)))
		}
		for _, x := range h.m.ExcludedNodes() {
			lines = append(lines, "excluded "+x.String())
		}
		return strings.Join(lines, "\n")
	case "waiting":
		// What status pages and run's live line say waits for a container.
		return strings.Join(h.m.Waiting(), "\n")
	case "restarts":
		out := fmt.Sprintf("restarts=%d cluster=%d", h.m.Restarts(), h.m.ClusterRestarts())
		if r := h.m.RestartRecord(); r.Replaced > 0 {
			out += fmt.Sprintf(" replaced=%d", r.Replaced)
		}
		return out
	default:
		t.Fatalf("%s: unknown command %q", c.Pos, c.Name)
	}
	return h.ready()
}

// previousAttempt: previous-attempt 2 worker:0=c90 worker:1=c91
// running=c90 [counted=1 uncounted=0 cluster=1 replaced=0]: this is attempt 2; the
// previous attempt saved worker:0 running in c90 and worker:1 in c91 (on
// node1, at ports 7001, 7002, ... in the order of their containers); YARN
// handed over the containers running (on node1); the restarts it recorded,
// if given, each cause "restart N (attempt 1)".
func previousAttempt(t *testing.T, c transcript.Cmd) PreviousAttempt {
	attempt, err := strconv.Atoi(c.Args[0])
	if err != nil {
		t.Fatalf("%s: attempt: %v", c.Pos, err)
	}
	ev := PreviousAttempt{Attempt: attempt}
	for _, id := range strings.Split(c.Get("running", ""), ",") {
		if id != "" {
			ev.Running = append(ev.Running, Container{ID: id, NodeID: "node1:8041", Resource: small})
		}
	}
	for task, id := range c.KV {
		if _, err := taskspec.ParseTaskID(task); err == nil {
			ev.Saved = append(ev.Saved, SavedTask{Task: task, ContainerID: id, Host: "node1"})
		}
	}
	sort.Slice(ev.Saved, func(i, j int) bool { return ev.Saved[i].ContainerID < ev.Saved[j].ContainerID })
	for i := range ev.Saved {
		ev.Saved[i].Port = 7001 + i
	}
	var r RestartRecord
	resumed := false
	for key, n := range map[string]*int{"counted": &r.Counted, "uncounted": &r.Uncounted, "cluster": &r.Cluster, "replaced": &r.Replaced} {
		v, err := strconv.Atoi(c.Get(key, "0"))
		if err != nil {
			t.Fatalf("%s: %s: %v", c.Pos, key, err)
		}
		*n, resumed = v, resumed || c.Get(key, "") != ""
	}
	for i := 1; i <= r.Counted+r.Uncounted; i++ {
		r.Causes = append(r.Causes, fmt.Sprintf("restart %d (attempt 1)", i))
	}
	// excluded=node1,node2 failures=node3:1: the nodes it had excluded,
	// and its failed attempts per node.
	for _, host := range strings.Split(c.Get("excluded", ""), ",") {
		if host != "" {
			r.Excluded, resumed = append(r.Excluded, ExcludedNode{Host: host, Reason: "excluded by attempt 1"}), true
		}
	}
	for _, hn := range strings.Split(c.Get("failures", ""), ",") {
		if host, n, ok := strings.Cut(hn, ":"); ok {
			count, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("%s: failures: %v", c.Pos, err)
			}
			if r.NodeFailures == nil {
				r.NodeFailures = map[string]int{}
			}
			r.NodeFailures[host], resumed = count, true
		}
	}
	if resumed {
		ev.Restarts = &r
	}
	return ev
}

// newMachine: new chief=1 worker=2 ps=1 evaluator=1 rule=chief
// stop-grace=12s alloc-timeout=5m worker-grace=10s stop-timeout=15s
func (h *harness) newMachine(t *testing.T, c transcript.Cmd) {
	job, err := transcript.Job(c)
	if err != nil {
		t.Fatal(err)
	}
	dur := func(key string) time.Duration {
		d, err := time.ParseDuration(c.Get(key, "0s"))
		if err != nil {
			t.Fatalf("%s: %s: %v", c.Pos, key, err)
		}
		return d
	}
	policy, err := PolicyFor(taskspec.SuccessRule(c.Get("rule", "")), job)
	if err != nil {
		t.Fatalf("%s: %v", c.Pos, err)
	}
	if tf, ok := policy.(ChiefPolicy); ok {
		tf.WorkerGrace, tf.StopTimeout = dur("worker-grace"), dur("stop-timeout")
		policy = tf
	}
	// python-links=env,env.layer00 python-base=/x/python3 user=alice:
	// the job's Python environment (PythonFacts).
	var py PythonFacts
	if links := c.Get("python-links", ""); links != "" {
		py = PythonFacts{Links: strings.Split(links, ","), Base: c.Get("python-base", ""), User: c.Get("user", "")}
	}
	cfg := Config{Job: job, Policy: policy, WorkersInPlace: frameworks.WorkersReplacedInPlace(job), TasksNeedJobService: frameworks.JobServiceOf(job, nil) != nil, AllocTimeout: dur("alloc-timeout"), ContainerStopGrace: dur("stop-grace"), PreemptionWait: dur("preemption-wait"), Python: py}
	// largest-node=1024: the memory of the cluster's largest unlabelled node.
	if mib := c.Get("largest-node", ""); mib != "" {
		n, err := strconv.ParseInt(mib, 10, 64)
		if err != nil {
			t.Fatalf("%s: largest-node: %v", c.Pos, err)
		}
		cfg.LargestNodeMiB = map[string]int64{"": n}
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", c.Pos, err)
	}
	*h = harness{m: m, now: transcriptEpoch, outstanding: map[int64]int{}, asks: map[int64]Ask{}, excluded: map[string]bool{}}
	checkedStep(m, Tick{Now: h.now})
}

// allocate answers every outstanding ask (or, with type=n, n containers of
// that type's ask), in ask order.
func (h *harness) allocate(c transcript.Cmd) {
	ids := make([]int64, 0, len(h.outstanding))
	for id := range h.outstanding {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var got []Container
	for _, id := range ids {
		n := h.outstanding[id]
		if lim := c.Get(string(h.asks[id].TaskType), ""); lim != "" {
			n, _ = strconv.Atoi(lim)
			n = min(n, h.outstanding[id])
		} else if len(c.KV) > 0 && c.Get("on", "") == "" {
			n = 0
		}
		node := c.Get("on", h.firstAllowedNode())
		if h.asks[id].Node != "" {
			node = h.asks[id].Node // the scheduler honours relaxed locality off
		}
		for range n {
			h.next++
			got = append(got, Container{ID: fmt.Sprintf("c%d", h.next), NodeID: node + ":8041", Resource: small, AllocationRequestID: id, Priority: h.asks[id].Priority})
		}
		h.outstanding[id] -= n
	}
	if len(got) > 0 {
		checkedStep(h.m, Allocated{Containers: got})
	}
}

// firstAllowedNode is where the RM places a container that may go
// anywhere: node1, else the first of node2, node3, ... the application has
// not excluded.
func (h *harness) firstAllowedNode() string {
	for i := 1; ; i++ {
		if node := fmt.Sprintf("node%d", i); !h.excluded[node] {
			return node
		}
	}
}

func (h *harness) task(t *testing.T, c transcript.Cmd) TaskStatus {
	if len(c.Args) == 0 {
		t.Fatalf("%s: which task?", c.Pos)
	}
	id, err := taskspec.ParseTaskID(c.Args[0])
	if err != nil {
		t.Fatalf("%s: %v", c.Pos, err)
	}
	task, ok := h.m.Task(id)
	if !ok {
		t.Fatalf("%s: no task %s", c.Pos, id)
	}
	return task
}

// tasksOrLaunching is the tasks named, or every launching one.
func (h *harness) tasksOrLaunching(t *testing.T, c transcript.Cmd) []TaskStatus {
	if len(c.Args) > 0 {
		return []TaskStatus{h.task(t, c)}
	}
	var out []TaskStatus
	for _, task := range h.m.Tasks() {
		if task.State == TaskLaunching {
			out = append(out, task)
		}
	}
	return out
}

// preemptWarning: preempt-warning TASK... [negotiable] [since=-1s]: an
// allocate response announces the preemption of the tasks' current
// containers (or of the container named, e.g. c9), under the strict
// contract unless negotiable; since is when the allocate call before it
// went out, relative to now.
func (h *harness) preemptWarning(t *testing.T, c transcript.Cmd) {
	var ids []string
	negotiable := false
	for _, a := range c.Args {
		switch {
		case a == "negotiable":
			negotiable = true
		case containerName.MatchString(a):
			ids = append(ids, a)
		default:
			ids = append(ids, h.task(t, transcript.Cmd{Pos: c.Pos, Args: []string{a}}).Container.ID)
		}
	}
	ev := PreemptionWarned{Strict: ids}
	if negotiable {
		ev = PreemptionWarned{Negotiable: ids}
	}
	if s := c.Get("since", ""); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s: since: %v", c.Pos, err)
		}
		ev.Since = h.now.Add(d)
	}
	checkedStep(h.m, ev)
}

var containerName = regexp.MustCompile(`^c\d+$`)

// ready renders what the machine wants done, one action a line, and lets
// the RM hear the asks.
func (h *harness) ready() string {
	rd := h.m.Ready()
	var lines []string
	if rd.Restart != nil {
		lines = append(lines, fmt.Sprintf("restart %d: new rendezvous", rd.Restart.Number))
	}
	for _, a := range rd.Asks {
		h.outstanding[a.AllocationRequestID] = a.Count
		h.asks[a.AllocationRequestID] = a
		line := fmt.Sprintf("ask %s %d", a.TaskType, a.Count)
		if a.Resource.MemoryMiB != 256 { // the transcripts' groups' own
			line += fmt.Sprintf(" with %d MiB", a.Resource.MemoryMiB)
		}
		if a.Node != "" {
			line += " on " + a.Node + " only"
		}
		if a.Rack != "" {
			line += " in " + a.Rack
		}
		lines = append(lines, line)
	}
	if a := rd.Adoption; a != nil {
		for _, t := range a.Adopted {
			lines = append(lines, fmt.Sprintf("adopt %s in %s at %s:%d", t.Task, t.Container.ID, t.Host, t.Port))
		}
		for _, u := range a.Unwatched {
			lines = append(lines, fmt.Sprintf("unwatched %s in %s", u.Task, u.ContainerID))
		}
	}
	for _, id := range rd.Release {
		lines = append(lines, "release "+id)
	}
	for _, l := range rd.Launch {
		line := fmt.Sprintf("launch %s attempt=%d in %s", l.Task, l.Attempt, l.Container.ID)
		if l.Restart > 0 {
			line += fmt.Sprintf(" restart=%d", l.Restart)
		}
		if l.Port > 0 {
			line += fmt.Sprintf(" port=%d", l.Port)
		}
		lines = append(lines, line)
	}
	for _, w := range rd.Warn {
		lines = append(lines, warnLine(w))
	}
	for _, s := range rd.Stop {
		lines = append(lines, s.String())
	}
	for _, n := range rd.Notes {
		lines = append(lines, "note "+n)
	}
	for _, x := range rd.Exclude {
		lines = append(lines, "exclude "+x.String())
		h.excluded[x.Host] = true
	}
	if rd.Finish != nil {
		lines = append(lines, rd.Finish.String())
	}
	return strings.Join(lines, "\n")
}

func (h *harness) tasks() string {
	var lines []string
	for _, t := range h.m.Tasks() {
		line := fmt.Sprintf("%s %s attempt=%d", t.Task, t.State, t.Attempt)
		if t.Container.ID != "" {
			line += " in " + t.Container.ID
		}
		if t.State.Ended() {
			line += fmt.Sprintf(" exit=%d", t.ExitStatus)
		}
		if t.StopRequested {
			line += " stop@" + t.StopRequestedAt.Sub(transcriptEpoch).String()
		}
		if t.HardStopped {
			line += " hard@" + t.HardStopAt.Sub(transcriptEpoch).String()
		}
		if t.PlaceOn != "" {
			line += fmt.Sprintf(" on %s port=%d", t.PlaceOn, t.WantPort)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// warnLine is a warning as transcripts show it: "warn worker:1 in c3 by
// +24s: ..." for a preemption, "warn gpu-idle worker:0 in c1 ends +1m0s:
// ..." for idle GPUs (no "ends" when the job does not end for them).
func warnLine(w Warning) string {
	if w.Kind == WarnPreemption {
		return fmt.Sprintf("warn %s in %s by +%s: %s", w.Task, w.Container.ID, w.Deadline.Sub(transcriptEpoch), w.Reason)
	}
	ends := ""
	if !w.Deadline.IsZero() {
		ends = " ends +" + w.Deadline.Sub(transcriptEpoch).String()
	}
	return fmt.Sprintf("warn %s %s in %s%s: %s", w.Kind, w.Task, w.Container.ID, ends, w.Reason)
}
