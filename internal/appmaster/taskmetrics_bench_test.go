package appmaster

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// BenchmarkStatusPage200 feeds 200 running tasks' metrics through the AM's
// status page path (metricsBoard.ReportMetrics, the report rebuilt on each)
// and serves the JSON page: one op of "report" is one round, every task's
// launcher reporting once, as every 10 s. "gpu" is the existing GPU sample
// beside it, "cpu-memory" the process sample; "json" serves the page
// (GPU samples only, then both).
func BenchmarkStatusPage200(b *testing.B) {
	const n = 200
	g, err := taskspec.ParseSpec(taskspec.Worker, fmt.Sprintf("%dx1c,1g", n))
	if err != nil {
		b.Fatal(err)
	}
	var page statusPage
	page.init("application_1_0001", "alice", taskspec.Job{Tasks: []taskspec.TaskGroup{g}})
	var tasks []core.TaskStatus
	for i := 0; i < n; i++ {
		tasks = append(tasks, core.TaskStatus{Task: taskspec.TaskID{Type: taskspec.Worker, Index: i}, State: core.TaskRunning, Host: "node1", Port: 2000 + i,
			Container: core.Container{ID: fmt.Sprintf("container_1_0001_01_%06d", i+2), NodeID: "node1:4545", NodeHTTPAddress: "node1:8042", Resource: taskspec.Resources{VCores: 1, MemoryMiB: 1024}}})
	}
	page.update(Snapshot{Tasks: tasks})
	board := &metricsBoard{page: &page}
	ctx := context.Background()
	gpu := []contract.GPUSample{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 75, MemoryUsedMiB: 1011, MemoryTotalMiB: 81559}}
	proc := contract.ProcessSample{CPUPercent: 187.5, CPUSeconds: 1234.5, RSSBytes: 700 << 20, PeakRSSBytes: 800 << 20, Processes: 12}
	round := func(b *testing.B, m func(i int) rendezvous.MetricsReport) {
		for b.Loop() {
			for i := 0; i < n; i++ {
				if err := board.ReportMetrics(ctx, m(i)); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/report")
	}
	serve := func(name string) {
		b.Run(name, func(b *testing.B) {
			var size int
			for b.Loop() {
				w := httptest.NewRecorder()
				page.serveJSON(w, httptest.NewRequest("GET", contract.StatusPath, nil))
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
	b.Run("report/gpu", func(b *testing.B) {
		round(b, func(i int) rendezvous.MetricsReport {
			return rendezvous.MetricsReport{Task: tasks[i].Task, ContainerID: tasks[i].Container.ID, GPUs: gpu}
		})
	})
	serve("json/gpu")
	b.Run("report/cpu-memory", func(b *testing.B) {
		round(b, func(i int) rendezvous.MetricsReport {
			p := proc
			return rendezvous.MetricsReport{Task: tasks[i].Task, ContainerID: tasks[i].Container.ID, Process: &p}
		})
	})
	serve("json/gpu+cpu-memory")
}
