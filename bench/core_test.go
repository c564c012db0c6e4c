package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/taskspec"
)

// coreTasks is the job size of the AM core benchmark, coreHeartbeat the
// containers one allocate response carries.
const (
	coreTasks     = 10_000
	coreHeartbeat = 100
)

// coreJob drives the AM's state machine through a whole job of n workers
// running `true`, as the I/O loop would, the RM handing out perHeartbeat
// containers per allocate response. One heartbeat's worth of events is what
// the loop steps for one allocate round trip: Allocated with perHeartbeat
// containers, then ContainerStarted and TaskRegistered for each container
// launched, ContainerCompleted (exit 0) for each container started two
// heartbeats earlier, and a Tick; each followed by draining Ready, as the
// loop does. It returns the heartbeats and the longest one.
func coreJob(tb testing.TB, n, perHeartbeat int) (heartbeats int, longest time.Duration) {
	// Built directly: the CLI's spec grammar caps a group at 1,000 instances.
	g := taskspec.TaskGroup{Type: taskspec.Worker, Instances: n, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 128}}
	m, err := core.New(core.Config{Job: taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{g}}, AllocTimeout: -1})
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	m.Step(core.Tick{Now: now})
	m.Step(core.Registered{Limits: taskspec.ClusterLimits{Known: true, MaxMemoryMiB: 8192, MaxVCores: 8}})
	rd := m.Ready()
	if len(rd.Asks) != 1 || rd.Asks[0].Count != n {
		tb.Fatalf("asks %+v, want one for %d containers", rd.Asks, n)
	}
	ask := rd.Asks[0]
	next, launched := 0, 0
	var started [][]string // container ids started per heartbeat, completed two later
	for {
		t0 := time.Now()
		var batch []core.Container
		for i := 0; i < perHeartbeat && next < n; i++ {
			batch = append(batch, core.Container{
				ID:     fmt.Sprintf("container_1700000000000_0001_01_%06d", next+2),
				NodeID: fmt.Sprintf("node%d:45454", next%200), NodeHTTPAddress: "node:8042",
				Resource:            ask.Resource,
				AllocationRequestID: ask.AllocationRequestID, Priority: ask.Priority,
			})
			next++
		}
		if len(batch) > 0 {
			m.Step(core.Allocated{Containers: batch})
		}
		rd := m.Ready()
		var ids []string
		for _, l := range rd.Launch {
			m.Step(core.ContainerStarted{ID: l.Container.ID})
			m.Step(core.TaskRegistered{Task: l.Task, Host: l.Container.NodeID[:len(l.Container.NodeID)-6], Port: 20000 + l.Task.Index%40000})
			ids = append(ids, l.Container.ID)
			launched++
		}
		started = append(started, ids)
		if k := len(started) - 3; k >= 0 {
			for _, id := range started[k] {
				m.Step(core.ContainerCompleted{ID: id, ExitStatus: 0})
			}
			started[k] = nil
		}
		now = now.Add(time.Second)
		m.Step(core.Tick{Now: now})
		rd = m.Ready()
		heartbeats++
		longest = max(longest, time.Since(t0))
		if rd.Finish != nil {
			if rd.Finish.Status != core.Succeeded || launched != n {
				tb.Fatalf("finished %s after %d launches: %s", rd.Finish.Status, launched, rd.Finish.Diagnostics)
			}
			return heartbeats, longest
		}
		if heartbeats > 10*n {
			tb.Fatalf("no finish after %d heartbeats (%d launched)", heartbeats, launched)
		}
	}
}

// BenchmarkCoreJob: one op is a whole job of N tasks, 100 containers per
// heartbeat; ns/heartbeat is the figure the issue bounds (< 5 ms at
// 10,000 tasks). Run with
//
//	go test -run '^$' -bench CoreJob -benchtime 1x ./bench/
func BenchmarkCoreJob(b *testing.B) {
	for _, n := range []int{1000, 2000, coreTasks} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			var hb int
			var longest time.Duration
			for i := 0; i < b.N; i++ {
				h, l := coreJob(b, n, coreHeartbeat)
				hb += h
				longest = max(longest, l)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(hb)/1e6, "ms/heartbeat")
			b.ReportMetric(float64(longest.Nanoseconds())/1e6, "ms/longest-heartbeat")
			b.ReportMetric(float64(hb)/float64(b.N), "heartbeats/job")
		})
	}
}

// The driver itself is right: a small job runs to SUCCEEDED (this runs in
// `make test`; the timing only under -bench).
func TestCoreJobDriver(t *testing.T) {
	hb, _ := coreJob(t, 50, 7)
	if hb < 50/7 {
		t.Fatalf("%d heartbeats for 50 tasks at 7 per heartbeat", hb)
	}
}

// coreTFEndgame drives the end of a TensorFlow job of n tasks under
// TensorFlow's chief rule: every task running, chief:0 exits 0, and the tasks it
// stops (ParameterServerStrategy: workers and ps; pss false: a chief and
// MultiWorkerMirroredStrategy workers, which linger) report their ends
// perHeartbeat at a time, a Tick 100 ms apart, Ready drained after each
// heartbeat. It returns the heartbeats and their total time.
func coreTFEndgame(tb testing.TB, n, perHeartbeat int, pss bool) (heartbeats int, total time.Duration) {
	res := taskspec.Resources{VCores: 1, MemoryMiB: 128}
	groups := []taskspec.TaskGroup{{Type: taskspec.Chief, Instances: 1, Resources: res}, {Type: taskspec.Worker, Instances: n - 1, Resources: res}}
	if pss {
		groups[1].Instances = n - 2
		groups = append(groups, taskspec.TaskGroup{Type: taskspec.PS, Instances: 1, Resources: res})
	}
	job := taskspec.Job{Command: "true", Tasks: groups}
	policy, err := frameworks.PolicyFor(taskspec.SuccessChief, job) // TensorFlow's, with its stop timeout
	if err != nil {
		tb.Fatal(err)
	}
	m, err := core.New(core.Config{Job: job, Policy: policy, AllocTimeout: -1, ContainerStopGrace: 12 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	m.Step(core.Tick{Now: now})
	m.Step(core.Registered{Limits: taskspec.ClusterLimits{Known: true, MaxMemoryMiB: 8192, MaxVCores: 8}})
	var cs []core.Container
	for _, a := range m.Ready().Asks {
		for i := 0; i < a.Count; i++ {
			cs = append(cs, core.Container{ID: fmt.Sprintf("container_%d_%06d", a.AllocationRequestID, i), NodeID: "node:45454",
				Resource: a.Resource, AllocationRequestID: a.AllocationRequestID, Priority: a.Priority})
		}
	}
	m.Step(core.Allocated{Containers: cs})
	var chief string
	var others []string
	for _, l := range m.Ready().Launch {
		m.Step(core.ContainerStarted{ID: l.Container.ID})
		if l.Task.Type == taskspec.Chief {
			chief = l.Container.ID
		} else {
			others = append(others, l.Container.ID)
		}
	}
	m.Ready()
	if len(others) != n-1 {
		tb.Fatalf("%d tasks started besides the chief, want %d", len(others), n-1)
	}
	t0 := time.Now()
	m.Step(core.ContainerCompleted{ID: chief, ExitStatus: 0})
	rd := m.Ready()
	for rd.Finish == nil {
		for i := 0; i < perHeartbeat && len(others) > 0; i++ {
			m.Step(core.ContainerCompleted{ID: others[0], ExitStatus: 0})
			others = others[1:]
		}
		now = now.Add(100 * time.Millisecond)
		m.Step(core.Tick{Now: now})
		rd = m.Ready()
		heartbeats++
		if heartbeats > n {
			tb.Fatalf("no finish after %d heartbeats", heartbeats)
		}
	}
	if rd.Finish.Status != core.Succeeded || len(others) > 0 {
		tb.Fatalf("finished %s with %d tasks unreported", rd.Finish.Status, len(others))
	}
	return heartbeats, time.Since(t0)
}

// BenchmarkCoreTFEndgame: one op is the end of a TensorFlow job of 10,000
// tasks, from the chief's exit to the finish, 100 ends per heartbeat. Run
// with
//
//	go test -run '^$' -bench CoreTFEndgame -benchtime 1x ./bench/
func BenchmarkCoreTFEndgame(b *testing.B) {
	for _, pss := range []bool{false, true} {
		b.Run(fmt.Sprintf("ps=%v", pss), func(b *testing.B) {
			var hb int
			var total time.Duration
			for i := 0; i < b.N; i++ {
				h, d := coreTFEndgame(b, coreTasks, coreHeartbeat, pss)
				hb += h
				total += d
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(hb)/1e6, "ms/heartbeat")
			b.ReportMetric(float64(hb)/float64(b.N), "heartbeats/job")
		})
	}
}

// The endgame driver is right on a small job (this runs in `make test`).
func TestCoreTFEndgameDriver(t *testing.T) {
	for _, pss := range []bool{false, true} {
		if hb, _ := coreTFEndgame(t, 30, 7, pss); hb < 29/7 {
			t.Fatalf("ps=%v: %d heartbeats for 29 ends at 7 per heartbeat", pss, hb)
		}
	}
}
