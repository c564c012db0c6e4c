package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/appmaster/core"
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
