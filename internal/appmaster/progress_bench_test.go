package appmaster

import (
	"fmt"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// BenchmarkProgressReport200: what one launcher's progress report costs
// the AM's status page in a job of 200 workers (each report rebuilds the
// page's report). Every worker reporting once a second costs 200 of these
// a second.
func BenchmarkProgressReport200(b *testing.B) {
	workers, _ := taskspec.ParseSpec(taskspec.Worker, "200x1c,1g")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Command: "sh"}
	var p statusPage
	p.init("application_1_0001", "alice", job)
	var tasks []core.TaskStatus
	for i := range 200 {
		tasks = append(tasks, core.TaskStatus{Task: taskspec.TaskID{Type: taskspec.Worker, Index: i}, State: core.TaskRunning,
			Container: core.Container{ID: fmt.Sprintf("container_1_0001_01_%06d", i+2), NodeID: "node1:4545", NodeHTTPAddress: "node1:8042"}})
	}
	p.update(Snapshot{Tasks: tasks})
	start := time.Now()
	b.ResetTimer()
	for n := range b.N {
		i := n % 200
		step := int64(n/200 + 1)
		p.setProgress(tasks[i].Task, tasks[i].Container.ID, contract.Progress{Fraction: float64(step) / 1e9, Step: step, Total: 1e9}, start.Add(time.Duration(n)*time.Millisecond))
	}
}
